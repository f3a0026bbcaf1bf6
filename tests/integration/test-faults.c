/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The real hvtuned daemon on the Azure testbed with one attribute made to fail through the
 * sysfs layer (tests/emulate/sysfs-faults.c): EINVAL, EACCES, EROFS, EBUSY, ENOENT (before
 * and after the attribute was read), ENODEV, a short write, reads that fail, return garbage
 * or nothing, and garbage only once written. Each case: that attribute's result and ERRNO in
 * its journal entry, every other attribute of every disk tuned, STATUS counting it, and the
 * daemon still answering reloads, one with the fault still there and one after it is gone,
 * which tunes the attribute.
 *
 * The journal is the socket hvtuned sends to, bound at journald's path in a private mount
 * namespace, with JOURNAL_STREAM naming hvtuned's stderr as systemd does: the test reads the
 * very fields journald would store. Needs root for the namespace: exits 77 (skip) without. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "journal.h"
#include "kernel-answers.h"
#include "messages.h"
#include "testutil.h"

#define SKIP 77

#define CONFIG \
        "queue  = { scheduler = \"none\"; nr_requests = 128; read_ahead_kb = 4096; };\n" \
        "device = { queue_depth = 254; timeout = 300; };\n"

static const char *const disks[] = { "sda", "sdb", "sdc", "sdd" };

/* What CONFIG gives every Hyper-V disk. */
static const struct {
        const char *attr, *value;
} tuned[] = {
        { "queue/scheduler", "none" },
        { "queue/nr_requests", "128" },
        { "queue/read_ahead_kb", "4096" },
        { "device/queue_depth", "254" },
        { "device/timeout", "300" },
};

#define STATUS_FAILED "4 storvsc disks on 2 controllers: 3 tuned, 1 failed" AZURE_HWQ
#define STATUS_UNSUPPORTED "4 storvsc disks on 2 controllers: 4 tuned, 0 failed, 1 setting unsupported" AZURE_HWQ
#define STATUS_TUNED "4 storvsc disks on 2 controllers: 4 tuned, 0 failed" AZURE_HWQ

enum next {
        SAME,  /* fails the same way: not told again */
        KEPT,  /* the kernel kept the value all the same: found, unchanged */
        TOLD,  /* fails another way (the read, not the read-back): told */
};

static const struct fault_case {
        const char *name;
        const char *spec;        /* HVTUNED_TEST_FAULTS */
        const char *disk, *attr;
        const char *result;      /* HVTUNED_RESULT of its entry */
        int error;               /* ERRNO of its entry */
        const char *message;
        const char *value;       /* what the attribute holds afterwards */
        const char *status;
        enum next next;          /* what the next pass, with the fault still there, does */
} cases[] = {
        /* The store function refuses the value (a limit only the kernel knows). */
        { "EINVAL", "sdb/queue/nr_requests=write:EINVAL", "sdb", "queue/nr_requests", "failed", EINVAL,
          "sdb queue/nr_requests: 2534 -> 128 (failed: Invalid argument)", "2534", STATUS_FAILED, SAME },
        /* No write bit: kernfs refuses the open, even to root. */
        { "EACCES", "sdc/queue/read_ahead_kb=open-write:EACCES", "sdc", "queue/read_ahead_kb", "failed", EACCES,
          "sdc queue/read_ahead_kb: 128 -> 4096 (failed: Permission denied)", "128", STATUS_FAILED, SAME },
        /* /sys mounted read-only (a container). */
        { "EROFS", "sda/queue/scheduler=open-write:EROFS", "sda", "queue/scheduler", "failed", EROFS,
          "sda queue/scheduler: mq-deadline -> none (failed: Read-only file system)", "mq-deadline",
          STATUS_FAILED, SAME },
        /* The LUN is busy (a queue depth change during error handling). */
        { "EBUSY", "0:0:0:1/queue_depth=write:EBUSY", "sdb", "device/queue_depth", "failed", EBUSY,
          "sdb device/queue_depth: 2048 -> 254 (failed: Device or resource busy)", "2048", STATUS_FAILED, SAME },
        /* Not there to read: this kernel lacks it, which is not a failure of the disk. */
        { "ENOENT", "sdd/queue/nr_requests=open:ENOENT", "sdd", "queue/nr_requests", "unsupported", ENOENT,
          "sdd queue/nr_requests: 128 (unsupported: no such attribute on this kernel)", "2534",
          STATUS_UNSUPPORTED, SAME },
        /* An open of io_timeout that raced a remove and an add: ENOENT, yet the attribute is
         * there. Not a kernel without it: device/timeout, which moves it, waits for a pass that
         * can see it, and the next one writes both. */
        { "ENOENT-raced", "sdb/queue/io_timeout=open-once:ENOENT", "sdb", "device/timeout", "failed", ENOENT,
          "sdb device/timeout: 180 -> 300 (not written: queue/io_timeout, which the write changes, cannot be read: "
          "No such file or directory)", "180", STATUS_FAILED, KEPT },
        /* Read a moment ago, gone for the write: the disk is going away, not a kernel without it.
         * The switch to none just before reset it to the tag depth, which it keeps. */
        { "ENOENT-after-read", "sda/queue/nr_requests=open-write:ENOENT", "sda", "queue/nr_requests", "failed",
          ENOENT, "sda queue/nr_requests: 256 -> 128 (failed: No such file or directory)", "2534",
          STATUS_FAILED, TOLD },
        /* The disk is removed between enumeration and the write: kernfs says ENODEV to a
         * write on a node deactivated while open. */
        { "ENODEV", "1:0:0:0/timeout=write:ENODEV", "sdc", "device/timeout", "failed", ENODEV,
          "sdc device/timeout: 180 -> 300 (failed: No such device)", "180", STATUS_FAILED, SAME },
        /* The store took the value and said it took less: never write "the rest". */
        { "short-write", "sdd/queue/read_ahead_kb=short", "sdd", "queue/read_ahead_kb", "failed", EIO,
          "sdd queue/read_ahead_kb: 128 -> 4096 (failed: Input/output error)", "4096", STATUS_FAILED, KEPT },
        { "read-EIO", "sdb/queue/read_ahead_kb=read:EIO", "sdb", "queue/read_ahead_kb", "failed", EIO,
          "sdb queue/read_ahead_kb: 4096 (failed: Input/output error)", "128", STATUS_FAILED, SAME },
        /* Garbage starting with "4096\0": not a value, whatever a C string of it says. */
        { "read-garbage", "sdc/queue/scheduler=read:garbage", "sdc", "queue/scheduler", "failed", EBADMSG,
          "sdc queue/scheduler: none (failed: Bad message)", "bfq", STATUS_FAILED, SAME },
        { "read-garbage-int", "sda/queue/read_ahead_kb=read:garbage", "sda", "queue/read_ahead_kb", "failed",
          EBADMSG, "sda queue/read_ahead_kb: 4096 (failed: Bad message)", "128", STATUS_FAILED, SAME },
        /* Shown escaped: no escape sequence or newline gets into a line or a field. */
        { "read-escapes", "sdb/queue/nr_requests=read:escapes", "sdb", "queue/nr_requests", "failed", EBADMSG,
          "sdb queue/nr_requests: \\x1b[2J128\\n256 -> 128 (failed: Bad message)", "2534", STATUS_FAILED, SAME },
        { "read-empty", "1:0:0:1/timeout=read:empty", "sdd", "device/timeout", "failed", EBADMSG,
          "sdd device/timeout: 300 (failed: Bad message)", "180", STATUS_FAILED, SAME },
        /* Written, then reads back garbage: what the kernel holds is unknown, so failed. */
        { "readback-garbage", "0:0:0:0/queue_depth=readback:garbage", "sda", "device/queue_depth", "failed",
          EBADMSG, "sda device/queue_depth: 2048 -> 254 (failed: Bad message)", "254", STATUS_FAILED, TOLD },
        { "readback-empty", "sdb/queue/nr_requests=readback:empty", "sdb", "queue/nr_requests", "failed",
          EBADMSG, "sdb queue/nr_requests: 2534 -> 128 (failed: Bad message)", "128", STATUS_FAILED, TOLD },
};

/* Every attribute result that is neither applied nor unchanged since entry from, as
 * "sdb queue/nr_requests failed", one a line. */
static char *journal_problems(size_t from) {
        GPtrArray *entries = journal_find(from, NULL, NULL);
        GString *s = g_string_new(NULL);

        for (size_t i = 0; i < entries->len; i++) {
                GHashTable *e = entries->pdata[i];
                const char *result = g_hash_table_lookup(e, "HVTUNED_RESULT");

                /* A knock-on (io_timeout after device/timeout) is told, not a problem. */
                if (result && strcmp(result, "applied") != 0 && strcmp(result, "unchanged") != 0 &&
                    strcmp(result, "knocked on") != 0)
                        g_string_append_printf(s, "%s %s %s\n", journal_field(e, "HVTUNED_DEVICE"),
                                               journal_field(e, "HVTUNED_ATTR"), result);
        }
        g_ptr_array_unref(entries);
        return hv_keep(g_string_free(s, FALSE));
}

/* The one entry of found (entries of one attribute) about disk: there must be one only. */
static GHashTable *entry_of(GPtrArray *found, const char *disk, const char *attr) {
        GHashTable *e = NULL;

        for (size_t i = 0; i < found->len; i++)
                if (strcmp(journal_field(found->pdata[i], "HVTUNED_DEVICE"), disk) == 0) {
                        ck_assert_msg(!e, "more than one entry for %s %s", disk, attr);
                        e = found->pdata[i];
                }
        ck_assert_msg(e, "no journal entry for %s %s", disk, attr);
        return e;
}

static void assert_result_entry(const struct fault_case *c) {
        GPtrArray *found = journal_find(0, "HVTUNED_ATTR", c->attr);
        GHashTable *e = entry_of(found, c->disk, c->attr);
        char errno_text[16];

        snprintf(errno_text, sizeof(errno_text), "%d", c->error);
        ck_assert_str_eq(journal_field(e, "MESSAGE"), c->message);
        ck_assert_str_eq(journal_field(e, "HVTUNED_RESULT"), c->result);
        ck_assert_str_eq(journal_field(e, "ERRNO"), errno_text);
        ck_assert_str_eq(journal_field(e, "HVTUNED_ACTION"), "tune");
        /* failed is an error, unsupported a warning (syslog 3 and 4). */
        ck_assert_str_eq(journal_field(e, "PRIORITY"), strcmp(c->result, "failed") == 0 ? "3" : "4");
        g_ptr_array_unref(found);
}

/* Every managed attribute of every Hyper-V disk has its tuned value, but skip's. */
static void assert_tuned_but(const char *skip_disk, const char *skip_attr) {
        for (size_t i = 0; i < G_N_ELEMENTS(disks); i++)
                for (size_t j = 0; j < G_N_ELEMENTS(tuned); j++) {
                        if (skip_disk && strcmp(disks[i], skip_disk) == 0 && strcmp(tuned[j].attr, skip_attr) == 0)
                                continue;
                        ck_assert_msg(strcmp(testbed_value(disks[i], tuned[j].attr), tuned[j].value) == 0,
                                      "%s %s is %s, not %s", disks[i], tuned[j].attr,
                                      testbed_value(disks[i], tuned[j].attr), tuned[j].value);
                }
}

static void reload(struct hv_run *run) {
        ck_assert_int_eq(kill(run->pid, SIGHUP), 0);
        hvtuned_wait_notify(run, "RELOADING=1");
        hvtuned_wait_notify(run, "READY=1");
}

static void write_spec(const char *path, const char *spec) {
        ck_assert(g_file_set_contents(path, spec, -1, NULL));
}

START_TEST(test_fault) {
        const struct fault_case *c = &cases[_i];
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *config = config_write(CONFIG), *spec_file = g_strdup_printf("%s.faults", config);
        char *spec_env = g_strdup_printf("@%s", spec_file), wanted[64];
        struct hv_run run;
        size_t mark;

        journal_start();
        write_spec(spec_file, c->spec);
        ck_assert_int_eq(setenv("HVTUNED_TEST_FAULTS", spec_env, 1), 0);
        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });

        /* (a), (b): that attribute's result, in words and fields. */
        assert_result_entry(c);
        snprintf(wanted, sizeof(wanted), "%s %s %s\n", c->disk, c->attr, c->result);
        ck_assert_str_eq(journal_problems(0), wanted);
        ck_assert_str_eq(testbed_value(c->disk, c->attr), c->value);
        /* (c): the others, on that disk and the rest, as usual. */
        assert_tuned_but(c->disk, c->attr);
        ck_assert_str_eq(run.status, c->status);

        /* (d): still running, and a reload with the fault still there is answered. A failure
         * that repeats is not told again. */
        mark = journal_count();
        reload(&run);
        ck_assert_str_eq(run.status, c->next == KEPT ? STATUS_TUNED : c->status);
        ck_assert_str_eq(journal_problems(mark), c->next == TOLD ? wanted : "");
        assert_tuned_but(c->disk, c->attr);

        /* The fault is gone: the next reload tunes it like the others. */
        write_spec(spec_file, "");
        reload(&run);
        assert_tuned_but(NULL, NULL);
        ck_assert_str_eq(run.status, STATUS_TUNED);

        hvtuned_stop(&run);
        journal_stop();
        unlink(spec_file);
        unlink(config);
        g_free(spec_env);
        g_free(spec_file);
        g_object_unref(tb);
}
END_TEST

/* A write the kernel refuses over a bound it states: its failed entry names the bound in a
 * field of its own, as in MESSAGE (the tag depth is azure-gen2's can_queue, 2534). */
START_TEST(test_bound_field) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *config = config_write("queue = { scheduler = \"none\"; nr_requests = 4000; };\n");
        GPtrArray *found;
        GHashTable *e;
        struct hv_run run;

        journal_start();
        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });
        found = journal_find(0, "HVTUNED_ATTR", "queue/nr_requests");
        e = entry_of(found, "sdb", "queue/nr_requests");
        ck_assert_str_eq(journal_field(e, "MESSAGE"),
                         "sdb queue/nr_requests: 2534 -> 4000 (failed: Invalid argument: over the tag depth 2534)");
        ck_assert_str_eq(journal_field(e, "HVTUNED_RESULT"), "failed");
        ck_assert_str_eq(journal_field(e, "HVTUNED_BOUND"), "over the tag depth 2534");
        g_ptr_array_unref(found);
        /* An entry without a bound has no such field. */
        found = journal_find(0, "HVTUNED_ATTR", "queue/scheduler");
        ck_assert_uint_gt(found->len, 0);
        for (size_t i = 0; i < found->len; i++)
                ck_assert_ptr_null(g_hash_table_lookup(found->pdata[i], "HVTUNED_BOUND"));
        g_ptr_array_unref(found);
        hvtuned_stop(&run);
        journal_stop();
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* The module parameter through the same layer: refused, or absent (a kernel before 5.13).
 * The disks are tuned all the same, and the controller reports stop promising that a
 * re-probe caps them. */
static const struct param_case {
        const char *spec, *result, *message, *controller_tail, *advice, *status;
        int error;
} param_cases[] = {
        { "parameters/storvsc_max_hw_queues=write:EBUSY", "failed",
          "hv_storvsc parameters/storvsc_max_hw_queues: 0 -> 4 (failed: Device or resource busy)",
          "over the cap of 4: ~12.1 MiB with 4 queues, once capped at boot (the module parameter does not hold it)",
          "2 controllers probed before the cap keep their queues even re-probed, as the module parameter does "
          "not hold the cap (~169.1 MiB reclaimable)",
          "4 storvsc disks on 2 controllers: 4 tuned, 0 failed; hw queues: 2 controllers over cap 4, ~169 MiB "
          "reclaimable at next boot, cap not set (Device or resource busy)", EBUSY },
        { "parameters/storvsc_max_hw_queues=open:ENOENT", "unsupported",
          "hv_storvsc parameters/storvsc_max_hw_queues: 4 (unsupported: this kernel predates storvsc_max_hw_queues, "
          "which came in 5.13: every SCSI controller has one hw queue per present CPU, and only a kernel update can "
          "cap them (no module option or kernel command line does))",
          "over the cap of 4, which this kernel's storvsc cannot apply", NULL,
          "4 storvsc disks on 2 controllers: 4 tuned, 0 failed; hw queues: 2 controllers over cap 4, which this "
          "kernel cannot apply", ENOENT },
};

START_TEST(test_param_fault) {
        const struct param_case *c = &param_cases[_i];
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *config = config_write(CONFIG), *spec_file = g_strdup_printf("%s.faults", config);
        char *spec_env = g_strdup_printf("@%s", spec_file), errno_text[16], wanted[96];
        GPtrArray *found;
        struct hv_run run;
        GHashTable *e;
        size_t mark;

        journal_start();
        write_spec(spec_file, c->spec);
        ck_assert_int_eq(setenv("HVTUNED_TEST_FAULTS", spec_env, 1), 0);
        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });

        found = journal_find(0, "HVTUNED_DEVICE", "hv_storvsc");
        ck_assert_uint_eq(found->len, 1);
        e = found->pdata[0];
        snprintf(errno_text, sizeof(errno_text), "%d", c->error);
        ck_assert_str_eq(journal_field(e, "MESSAGE"), c->message);
        ck_assert_str_eq(journal_field(e, "HVTUNED_RESULT"), c->result);
        ck_assert_str_eq(journal_field(e, "ERRNO"), errno_text);
        g_ptr_array_unref(found);

        found = journal_find(0, "MESSAGE_ID", HVT_MESSAGE_CONTROLLER);
        ck_assert_uint_eq(found->len, 2);
        for (size_t i = 0; i < found->len; i++)
                ck_assert(g_str_has_suffix(journal_field(found->pdata[i], "MESSAGE"), c->controller_tail));
        g_ptr_array_unref(found);
        found = journal_find(0, "MESSAGE_ID", HVT_MESSAGE_HWQ_ADVICE);
        ck_assert_uint_eq(found->len, c->advice ? 1 : 0);
        if (c->advice)
                assert_contains(journal_field(found->pdata[0], "MESSAGE"), c->advice);
        g_ptr_array_unref(found);

        snprintf(wanted, sizeof(wanted), "hv_storvsc parameters/storvsc_max_hw_queues %s\n", c->result);
        ck_assert_str_eq(journal_problems(0), wanted);
        assert_tuned_but(NULL, NULL);
        ck_assert_str_eq(run.status, c->status);

        mark = journal_count();
        reload(&run);
        ck_assert_str_eq(run.status, c->status);
        found = journal_find(mark, "HVTUNED_DEVICE", "hv_storvsc");
        ck_assert_uint_eq(found->len, 0);  /* the same failure, not told again */
        g_ptr_array_unref(found);

        write_spec(spec_file, "");
        reload(&run);
        ck_assert_str_eq(run.status, STATUS_TUNED);
        hvtuned_stop(&run);
        journal_stop();
        unlink(spec_file);
        unlink(config);
        g_free(spec_env);
        g_free(spec_file);
        g_object_unref(tb);
}
END_TEST

/* --once talks to a person: the same line on stderr, and exit status 2 for the failure. */
START_TEST(test_once_exit_status) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *config = config_write(CONFIG), *err;

        ck_assert_int_eq(setenv("HVTUNED_TEST_FAULTS", "0:0:0:1/queue_depth=write:EBUSY", 1), 0);
        ck_assert_int_eq(hvtuned_run((const char *const[]) { "--once", "-c", config, NULL }, &err), 2);
        assert_contains(err, "sdb device/queue_depth: 2048 -> 254 (failed: Device or resource busy)\n");
        assert_contains(err, STATUS_FAILED "\n");
        assert_tuned_but("sdb", "device/queue_depth");
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* `hvtuned --once 2>&1 | head -3`: the reader of stdout and stderr goes away after three
 * lines. hvtuned (SIGPIPE at its default, as from a shell) still tunes every disk, and its
 * exit status is the tuning's: it died of SIGPIPE after 3 of 6 disks' lines. */
START_TEST(test_stderr_reader_gone) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *config = config_write(CONFIG), *err_path;
        int p[2], status, lines = 0;
        char c;
        pid_t pid;

        /* Both ends close at exec: the harness opens the write end again by its /proc path for
         * the child's stdout and stderr, and only this process holds the read end. */
        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        err_path = g_strdup_printf("/proc/self/fd/%d", p[1]);
        ck_assert(signal(SIGPIPE, SIG_DFL) != SIG_ERR);
        pid = hvtuned_spawn_out((const char *const[]) { "--once", "-c", config, NULL }, err_path, err_path);
        close(p[1]);
        while (lines < 3 && read(p[0], &c, 1) == 1)
                lines += c == '\n';
        ck_assert_int_eq(lines, 3);
        close(p[0]);

        status = hvtuned_wait_exit(pid, 30000);
        ck_assert_msg(status >= 0, "hvtuned --once did not exit");
        ck_assert_msg(WIFEXITED(status), "hvtuned died of signal %d", WTERMSIG(status));
        ck_assert_int_eq(WEXITSTATUS(status), 0);
        assert_tuned_but(NULL, NULL);
        g_free(err_path);
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* What a disk reports is text hvtuned does not control: a vendor and a model with ESC, CR and
 * BEL reach the stderr line, the journal's MESSAGE and its fields escaped, never raw. */
#define HOSTILE_VENDOR "Msft\033[2J"
#define HOSTILE_MODEL "Virtual\rDisk\a"
#define HOSTILE_SHOWN "(Msft\\x1b[2J Virtual\\x0dDisk\\x07)"

static void assert_no_control(const char *what, const char *text) {
        for (const unsigned char *p = (const unsigned char *) text; *p; p++)
                ck_assert_msg(*p >= 0x20 && *p != 0x7f, "%s holds the raw byte 0x%02x: \"%s\"", what, *p, text);
}

START_TEST(test_hostile_identity_escaped) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *config = config_write(CONFIG), *err, **lines;
        const char *args[] = { "-c", config, NULL };
        struct hv_run run;
        GPtrArray *found;

        umockdev_testbed_set_attribute(tb, testbed_syspath("sda"), "device/vendor", HOSTILE_VENDOR "\n");
        umockdev_testbed_set_attribute(tb, testbed_syspath("sda"), "device/model", HOSTILE_MODEL "\n");

        ck_assert_int_eq(hvtuned_run((const char *const[]) { "--once", "-c", config, NULL }, &err), 0);
        assert_contains(err, "sda: found Hyper-V scsi disk 0:0:0:0 on controller "
                        "{f8b3781a-1e82-4818-a1c3-63d806ec15bb} " HOSTILE_SHOWN ", role os\n");
        lines = g_strsplit(err, "\n", -1);
        for (char **l = lines; *l; l++)
                assert_no_control("a line on stderr", *l);
        g_strfreev(lines);

        journal_start();
        hvtuned_start(&run, args);
        found = journal_find(0, "MESSAGE_ID", HVT_MESSAGE_DISK_FOUND);
        ck_assert_uint_eq(found->len, 4);
        for (size_t i = 0; i < found->len; i++)
                if (strcmp(journal_field(found->pdata[i], "HVTUNED_DEVICE"), "sda") == 0)
                        assert_contains(journal_field(found->pdata[i], "MESSAGE"), HOSTILE_SHOWN);
        g_ptr_array_unref(found);
        hvtuned_stop(&run);
        found = journal_find(0, NULL, NULL);
        for (size_t i = 0; i < found->len; i++) {
                GHashTableIter it;
                gpointer name, value;

                g_hash_table_iter_init(&it, found->pdata[i]);
                while (g_hash_table_iter_next(&it, &name, &value))
                        assert_no_control(name, value);
        }
        g_ptr_array_unref(found);
        journal_stop();
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* journald not listening yet: no socket at all, or the socket file of a journald that is
 * gone (connection refused). Every entry lands on stderr, which is journald's stream, with
 * the syslog prefix its stream protocol reads the priority from. */
static const char *const unreachable[] = { "absent", "stale" };

START_TEST(test_journal_unreachable) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *config = config_write(CONFIG), *err, **lines;
        struct hv_run run;

        /* A private /run: the host's journal socket out of reach. */
        ck_assert_int_eq(unshare(CLONE_NEWNS), 0);
        ck_assert_int_eq(mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL), 0);
        ck_assert_int_eq(mount("tmpfs", "/run", "tmpfs", 0, "mode=0755"), 0);
        ck_assert_int_eq(mkdir("/run/systemd", 0755), 0);
        ck_assert_int_eq(mkdir(JOURNAL_DIR, 0755), 0);
        if (strcmp(unreachable[_i], "stale") == 0) {
                struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = JOURNAL_SOCKET };
                int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

                ck_assert_int_ge(fd, 0);
                ck_assert_int_eq(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
                close(fd);
        }
        hvtuned_log_to_journal(true);
        ck_assert_int_eq(setenv("HVTUNED_TEST_FAULTS", "0:0:0:1/queue_depth=write:EBUSY", 1), 0);
        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });
        err = hvtuned_stop(&run);

        assert_contains(err, "<6>sda: found Hyper-V scsi disk 0:0:0:0 on controller "
                        "{f8b3781a-1e82-4818-a1c3-63d806ec15bb} (Msft Virtual Disk), role os\n");
        assert_contains(err, "<6>sda queue/scheduler: mq-deadline -> none (applied)\n");
        assert_contains(err, "<3>sdb device/queue_depth: 2048 -> 254 (failed: Device or resource busy)\n");
        assert_contains(err, "<6>Started: " STATUS_FAILED "\n");
        assert_contains(err, "<6>sda queue/scheduler: none -> mq-deadline (restored)\n");
        lines = g_strsplit(err, "\n", -1);
        for (char **l = lines; *l && (**l || l[1]); l++)
                ck_assert_msg(g_regex_match_simple("^<[0-7]>", *l, 0, 0), "no priority prefix: \"%s\"", *l);
        g_strfreev(lines);
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* The testbed answers single writes as the kernel does: the table test-loop.c checks on a
 * real loop device (tests/kernel/kernel-answers.h), on sdb's queue (none, on a storvsc host whose
 * can_queue is the tag depth). Nothing above counts if the emulation drifts. */
START_TEST(test_testbed_answers_like_the_kernel) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *queue = g_strdup_printf("%s/queue", testbed_syspath("sdb"));

        kernel_answers_check(queue);
        g_free(queue);
        g_object_unref(tb);
}
END_TEST

/* The couplings of tests/kernel/kernel-answers.h, in each kernel's column, on the testbed playing
 * that kernel: the emulation answers as the kernel a test names. */
START_TEST(test_testbed_couplings_like_each_kernel) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *queue = g_strdup_printf("%s/queue", testbed_syspath("sdb"));

        ck_assert_int_eq(setenv("HVTUNED_TEST_KERNEL", kernel_names[_i], 1), 0);
        kernel_couplings_check(queue, kernel_names[_i]);
        g_free(queue);
        g_object_unref(tb);
}
END_TEST

/* device/timeout and io_timeout, one setting, on sdb (a SCSI disk). */
START_TEST(test_testbed_timeouts_like_the_kernel) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");

        kernel_timeouts_check(testbed_syspath("sdb"));
        g_object_unref(tb);
}
END_TEST

int main(void) {
        Suite *s = suite_create("faults");
        TCase *tc = tcase_create("azure"), *emulated = tcase_create("emulated-kernel");

        if (geteuid() != 0) {
                printf("SKIP: needs root for a private mount namespace holding the journal's socket\n");
                return SKIP;
        }
        tcase_set_timeout(tc, 120);
        tcase_add_loop_test(tc, test_fault, 0, G_N_ELEMENTS(cases));
        tcase_add_loop_test(tc, test_param_fault, 0, G_N_ELEMENTS(param_cases));
        tcase_add_test(tc, test_bound_field);
        tcase_add_test(tc, test_once_exit_status);
        tcase_add_test(tc, test_stderr_reader_gone);
        tcase_add_test(tc, test_hostile_identity_escaped);
        tcase_add_loop_test(tc, test_journal_unreachable, 0, G_N_ELEMENTS(unreachable));
        tcase_set_timeout(emulated, 60);
        tcase_add_test(emulated, test_testbed_answers_like_the_kernel);
        tcase_add_loop_test(emulated, test_testbed_couplings_like_each_kernel, 0, _KERNEL_MAX);
        tcase_add_test(emulated, test_testbed_timeouts_like_the_kernel);
        suite_add_tcase(s, tc);
        suite_add_tcase(s, emulated);
        return test_run(s);
}
