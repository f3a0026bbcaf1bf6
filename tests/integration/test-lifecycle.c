/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The daemon's lifecycle on the Azure testbed, with a NOTIFY_SOCKET the test owns and
 * writes counted with inotify IN_CLOSE_WRITE: the reload protocol and its difference
 * apply, SIGHUP bursts, change floods that cost only reads, the drift repair budget,
 * verify_interval, originals that survive kill -9, restore on SIGTERM, the SIGUSR1 dump. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "track.h"
#include "harness.h"
#include "uevent.h"
#include "testutil.h"

static const char *const hv_disks[] = { "sda", "sdb", "sdc", "sdd" };

static void rewrite(const char *config, const char *text) {
        ck_assert(g_file_set_contents(config, text, -1, NULL));
}

/* Watches every queue/ and LUN directory of the Hyper-V disks for writes. */
static int watch_writes(void) {
        int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

        ck_assert_int_ge(fd, 0);
        for (size_t i = 0; i < G_N_ELEMENTS(hv_disks); i++) {
                char *sys = g_build_filename(getenv("UMOCKDEV_DIR"), "sys", "block", hv_disks[i], NULL);
                char real[4096], *queue, *lun;

                ck_assert_ptr_nonnull(realpath(sys, real));
                queue = g_build_filename(real, "queue", NULL);
                lun = g_build_filename(real, "..", "..", NULL);
                ck_assert_int_ge(inotify_add_watch(fd, queue, IN_CLOSE_WRITE), 0);
                ck_assert_int_ge(inotify_add_watch(fd, lun, IN_CLOSE_WRITE), 0);
                g_free(queue);
                g_free(lun);
                g_free(sys);
        }
        return fd;
}

static int compare_names(gconstpointer a, gconstpointer b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The names of the files written since the last call, sorted, one a line. */
static char *writes(int fd) {
        char buf[65536] __attribute__((aligned(__alignof__(struct inotify_event))));
        GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
        ssize_t len;
        char *joined;

        while ((len = read(fd, buf, sizeof(buf))) > 0)
                for (char *p = buf; p < buf + len; p += sizeof(struct inotify_event) + ((struct inotify_event *) p)->len) {
                        const struct inotify_event *e = (const struct inotify_event *) p;
                        /* umockdev_testbed_set_attribute() writes a temporary file and renames
                         * it: that is the test's drift, not the daemon's write. */
                        if (e->len && !strchr(e->name, '.'))
                                g_ptr_array_add(names, g_strdup(e->name));
                }
        g_ptr_array_sort(names, compare_names);
        g_ptr_array_add(names, NULL);
        joined = g_strjoinv("\n", (char **) names->pdata);
        g_ptr_array_free(names, TRUE);
        return hv_keep(joined);
}

/* Asserts that the writes since the last call are want, sorted, one a line. The shim stores
 * a value at write(), and inotify tells of it at close(): a test that saw the value may read
 * the events before the close that makes the last one. So what arrives is gathered until it
 * is want, or for 10 s: a write too many or too few still fails. */
static void writes_expect(int fd, const char *want) {
        GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
        char *joined = NULL;

        for (int waited = 0;; waited += 10) {
                g_auto(GStrv) more = g_strsplit(writes(fd), "\n", -1);

                for (char **m = more; *m; m++)
                        if (**m)
                                g_ptr_array_add(names, g_strdup(*m));
                g_ptr_array_sort(names, compare_names);
                g_free(joined);
                g_ptr_array_add(names, NULL);
                joined = g_strjoinv("\n", (char **) names->pdata);
                g_ptr_array_remove_index(names, names->len - 1);
                if (strcmp(joined, want) == 0 || waited >= 10000)
                        break;
                usleep(10 * 1000);
        }
        ck_assert_str_eq(joined, want);
        g_free(joined);
        g_ptr_array_free(names, TRUE);
}

static bool record_exists(const char *sysname) {
        char *path = g_build_filename(runtime_dir(), sysname, NULL);
        bool r = g_file_test(path, G_FILE_TEST_EXISTS);

        g_free(path);
        return r;
}

static void drift(UMockdevTestbed *tb, const char *sysname, const char *attr, const char *value) {
        umockdev_testbed_set_attribute(tb, testbed_syspath(sysname), attr, value);
}


/* The same with another attribute: drift it to value, wait until it is want again. */
static void sentinel_value(UMockdevTestbed *tb, const char *sysname, const char *attr, const char *value,
                           const char *want) {
        drift(tb, sysname, attr, value);
        uevent_send_blocking(testbed_syspath(sysname), "change", 1);
        testbed_wait_value(sysname, attr, want);
}

/* sysname's scheduler reverted to bfq, and the n-th repair of it over: its report is the end
 * of the pass. Waiting for the value alone would let the next revert land inside the pass
 * (between hvtuned's write and its read-back), where it is no revert of a repaired disk. */
static void revert_repaired(const struct hv_run *run, UMockdevTestbed *tb, const char *sysname, unsigned n) {
        char *needle = g_strdup_printf("%s queue/scheduler: bfq -> none (drift repaired)\n", sysname);

        testbed_sentinel(tb, sysname);
        hvtuned_wait_stderr(run, needle, n);
        g_free(needle);
}

static void start_with(struct hv_run *run, UMockdevTestbed **tb, char **config, const char *text,
                       const char *option) {
        *tb = testbed_load("azure-gen2");
        *config = config_write(text);
        hvtuned_start(run, (const char *const[]) { "-c", *config, option, NULL });
}

static void start(struct hv_run *run, UMockdevTestbed **tb, char **config, const char *text) {
        start_with(run, tb, config, text, NULL);
}

START_TEST(test_reload_protocol_and_difference) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config;
        const char *msg;
        struct timespec ts;
        uint64_t usec, now;
        int w;

        start(&run, &tb, &config, "queue = { scheduler = \"none\"; read_ahead_kb = 1024; nr_requests = 128; };\n");
        ck_assert_str_eq(testbed_value("sdb", "queue/read_ahead_kb"), "1024");

        /* read_ahead_kb is no longer managed, nr_requests changes, the scheduler stays. */
        rewrite(config, "queue = { scheduler = \"none\"; nr_requests = 64; };\n");
        w = watch_writes();
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        msg = hvtuned_wait_notify(&run, "RELOADING=1");
        assert_contains(msg, "MONOTONIC_USEC=");
        ck_assert_int_eq(sscanf(strstr(msg, "MONOTONIC_USEC=") + 15, "%" SCNu64, &usec), 1);
        clock_gettime(CLOCK_MONOTONIC, &ts);
        now = (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
        ck_assert_msg(usec <= now && now - usec < 10000000, "MONOTONIC_USEC=%" PRIu64 " is not now (%" PRIu64 ")", usec, now);
        hvtuned_wait_notify(&run, "READY=1");

        for (size_t i = 0; i < G_N_ELEMENTS(hv_disks); i++) {
                ck_assert_str_eq(testbed_value(hv_disks[i], "queue/read_ahead_kb"), "128");
                ck_assert_str_eq(testbed_value(hv_disks[i], "queue/nr_requests"), "64");
        }
        /* Two writes a disk: read_ahead_kb back to its original, nr_requests to 64; none to
         * the scheduler, which already had its value. */
        writes_expect(w, "nr_requests\nnr_requests\nnr_requests\nnr_requests\n"
                         "read_ahead_kb\nread_ahead_kb\nread_ahead_kb\nread_ahead_kb");
        assert_contains(hvtuned_stop(&run), "sdb queue/read_ahead_kb: 1024 -> 128 (restored)\n");
        g_object_unref(tb);
}
END_TEST

START_TEST(test_bad_reload_keeps_running) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config;
        int w;

        start(&run, &tb, &config, "queue = { scheduler = \"none\"; read_ahead_kb = 1024; };\n");
        rewrite(config, "queue = { scheduler = \"none\"; };\n\noverride = ( { match = { lun = \"0\"; }; queue = { nomerges = 1; }; } );\n");
        w = watch_writes();
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "READY=1");
        ck_assert_str_eq(writes(w), "");
        ck_assert_str_eq(testbed_value("sda", "queue/read_ahead_kb"), "1024");
        assert_contains(run.status, "; config error at ");
        assert_contains(run.status, ":3, keeping previous");

        /* Still running on the old configuration: drift is repaired to its values. */
        drift(tb, "sdc", "queue/read_ahead_kb", "128\n");
        uevent_send_blocking(testbed_syspath("sdc"), "change", 1);
        testbed_wait_value("sdc", "queue/read_ahead_kb", "1024");

        /* The error stays in STATUS until a good reload. */
        rewrite(config, "queue = { scheduler = \"none\"; read_ahead_kb = 1024; };\n");
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "READY=1");
        ck_assert_str_eq(run.status, "4 Hyper-V disks on 2 controllers: 4 tuned, 0 failed" AZURE_HWQ);
        assert_contains(hvtuned_stop(&run), ":3: override[0].match.lun: expected an integer, got a string\n");
        g_object_unref(tb);
}
END_TEST

/* The notice of a refused configuration survives whole in STATUS, however long its path:
 * it is what tells the operator that what runs is not what the file says. */
START_TEST(test_config_error_notice_whole) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char name[201], *dir, *config, *notice;
        struct hv_run run;

        memset(name, 'd', sizeof(name) - 1);
        name[sizeof(name) - 1] = '\0';
        dir = g_build_filename(g_get_tmp_dir(), name, NULL);
        ck_assert_int_eq(g_mkdir_with_parents(dir, 0755), 0);
        ck_assert_int_eq(chmod(dir, 0755), 0);
        config = g_build_filename(dir, "hvtuned.conf", NULL);
        rewrite(config, "queue = { scheduler = \"none\"; };\n");
        ck_assert_int_eq(chmod(config, 0644), 0);
        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });
        rewrite(config, "queue = { scheduler = \"none\"; };\n\nqueue = 1;\n");
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "READY=1");
        notice = g_strdup_printf("; config error at %s:3, keeping previous", config);
        ck_assert_msg(g_str_has_suffix(run.status, notice), "STATUS \"%s\" does not end with \"%s\"", run.status,
                      notice);
        ck_assert_ptr_eq(strstr(run.status, "4 Hyper-V disks on 2 controllers: 4 tuned, 0 failed"), run.status);
        hvtuned_stop(&run);
        unlink(config);
        rmdir(dir);
        g_free(notice);
        g_free(config);
        g_free(dir);
        g_object_unref(tb);
}
END_TEST

/* A file name is text hvtuned does not control. An included file named with newlines and a
 * key of the protocol, and with a syntax error, is named in STATUS: escaped, it cannot add a
 * line to the notification, nor a second STATUS. */
START_TEST(test_config_error_name_adds_no_line) {
        static const char name[] = "x\nWATCHDOG=trigger\nSTATUS=owned";
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char dir[] = "/tmp/hvtuned-names.XXXXXX", *config, *part, *main_text, *notice;
        GHashTable *keys = g_hash_table_new(g_str_hash, g_str_equal);
        const char *note;
        struct hv_run run;
        char **lines;

        umask(022);
        ck_assert_ptr_nonnull(mkdtemp(dir));
        config = g_build_filename(dir, "hvtuned.conf", NULL);
        part = g_build_filename(dir, name, NULL);
        rewrite(config, "queue = { scheduler = \"none\"; };\n");
        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });

        rewrite(part, "queue = ;\n");
        /* libconfig reads the newlines inside the quotes as part of the name. */
        main_text = g_strdup_printf("@include \"%s\"\n", name);
        rewrite(config, main_text);
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        note = hvtuned_wait_notify(&run, "READY=1");

        lines = g_strsplit(note, "\n", -1);
        ck_assert_msg(g_strv_length(lines) == 2, "not two lines: \"%s\"", note);
        for (char **l = lines; *l; l++) {
                char *key = g_strndup(*l, strcspn(*l, "="));

                ck_assert_msg(strchr(*l, '=') && !g_hash_table_contains(keys, key), "line \"%s\" of \"%s\"", *l,
                              note);
                ck_assert_str_ne(key, "WATCHDOG");
                g_hash_table_add(keys, hv_keep(key));
        }
        notice = g_strdup_printf("; config error at %s/x\\nWATCHDOG=trigger\\nSTATUS=owned:1, keeping previous", dir);
        ck_assert_msg(g_str_has_suffix(note, notice), "\"%s\" does not end with \"%s\"", note, notice);

        hvtuned_stop(&run);
        g_strfreev(lines);
        g_hash_table_unref(keys);
        unlink(part);
        unlink(config);
        rmdir(dir);
        g_free(notice);
        g_free(main_text);
        g_free(part);
        g_free(config);
        g_object_unref(tb);
}
END_TEST

START_TEST(test_sighup_burst) {
        struct hv_run run;
        UMockdevTestbed *tb;
        unsigned reloads = 0;
        char *config;

        start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\n");
        /* Fifty SIGHUPs while the daemon is busy (stopped here, so that none is handled in
         * between): one reload, not fifty. */
        ck_assert_int_eq(kill(run.pid, SIGSTOP), 0);
        for (int i = 0; i < 50; i++)
                ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        ck_assert_int_eq(kill(run.pid, SIGCONT), 0);
        hvtuned_wait_notify_counting(&run, "READY=1", "RELOADING=1", &reloads);
        /* Anything still queued comes before the repair of a drift sent now. */
        testbed_sentinel(tb, "sdd");
        ck_assert_int_eq(kill(run.pid, SIGUSR1), 0);
        ck_assert_int_eq(kill(run.pid, SIGTERM), 0);
        hvtuned_wait_notify_counting(&run, "STOPPING=1", "RELOADING=1", &reloads);
        ck_assert_uint_eq(reloads, 1);
        hvtuned_stop_wait(&run);

        /* Fifty SIGHUPs while a reload is reading the file (made slow to open): one more
         * reload, not fifty. */
        setenv("HVTUNED_TEST_SLOW_OPEN", config, 1);
        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });
        reloads = 0;
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify_counting(&run, "RELOADING=1", "RELOADING=1", &reloads);
        for (int i = 0; i < 50; i++)
                ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify_counting(&run, "READY=1", "RELOADING=1", &reloads);
        hvtuned_wait_notify_counting(&run, "READY=1", "RELOADING=1", &reloads);
        unsetenv("HVTUNED_TEST_SLOW_OPEN");
        testbed_sentinel(tb, "sdb");
        ck_assert_int_eq(kill(run.pid, SIGTERM), 0);
        hvtuned_wait_notify_counting(&run, "STOPPING=1", "RELOADING=1", &reloads);
        ck_assert_uint_eq(reloads, 2);
        hvtuned_stop_wait(&run);

        /* And a burst while it runs: it survives, and ends on the file's configuration. */
        rewrite(config, "queue = { scheduler = \"none\"; nomerges = 1; };\n");
        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });
        for (int i = 0; i < 200; i++)
                ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        testbed_sentinel(tb, "sdc");
        ck_assert_str_eq(testbed_read("sdc", "queue/nomerges"), "1");
        hvtuned_stop(&run);
        g_object_unref(tb);
}
END_TEST

START_TEST(test_change_flood_costs_reads) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *sdb, *err;
        unsigned statuses = 0;
        int w;

        /* -v: every pass logs its unchanged attributes, which shows each event was handled. */
        start_with(&run, &tb, &config, "queue = { scheduler = \"none\"; nr_requests = 128; };\n"
                                       "device = { timeout = 300; };\n", "-v");
        sdb = testbed_syspath("sdb");
        w = watch_writes();
        /* 60-block.rules' watch makes a change event of every close after a write. */
        uevent_send_blocking(sdb, "change", 10000);
        testbed_sentinel(tb, "sda");
        /* The sentinel's repair is the only write, with what it costs: the switch resets
         * nr_requests (the kernel's write, here the shim's) and hvtuned puts 128 back, after
         * the scheduler the sentinel waits for. */
        testbed_wait_value("sda", "queue/nr_requests", "128");
        writes_expect(w, "nr_requests\nnr_requests\nscheduler");
        /* Nothing changed, so no STATUS= was sent either. */
        ck_assert_int_eq(kill(run.pid, SIGTERM), 0);
        hvtuned_wait_notify_counting(&run, "STOPPING=1", "STATUS=4 Hyper-V", &statuses);
        ck_assert_uint_eq(statuses, 0);
        err = hvtuned_stop_wait(&run);
        /* Each event re-read the three attributes, and found them in place. */
        ck_assert_uint_eq(hv_count(err, "sdb queue/scheduler: none (unchanged)\n"), 1 + 10000);
        ck_assert_uint_eq(hv_count(err, "sdb queue/nr_requests: 128 (unchanged)\n"), 10000);
        ck_assert_uint_eq(hv_count(err, "sdb device/timeout: 300 (unchanged)\n"), 10000);
        /* sdb was tuned at start and restored at stop, and nothing in between. */
        ck_assert_ptr_null(strstr(err, "sdb queue/nr_requests: 2534 -> 128 (drift repaired)"));
        ck_assert_ptr_null(strstr(err, "(failed"));
        assert_contains(err, "sdb queue/nr_requests: 2534 -> 128 (applied)\n");
        assert_contains(err, "sdb queue/nr_requests: 128 -> 2534 (restored)\n");
        ck_assert_ptr_eq(strstr(err, "sdb queue/nr_requests"), g_strrstr(err, "sdb queue/nr_requests: 2534 -> 128"));
        g_object_unref(tb);
}
END_TEST

START_TEST(test_repair_budget) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *err;

        start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\n");
        /* Ten repairs in a minute are drift; the eleventh is a fight, and hvtuned stops. */
        for (unsigned i = 1; i <= HVT_REPAIR_BURST + 1; i++)
                revert_repaired(&run, tb, "sdc", i);
        hvtuned_wait_notify(&run, "STATUS=4 Hyper-V disks on 2 controllers: 4 tuned, 0 failed; "
                                  "1 disk reverted too often, repairs paused");
        drift(tb, "sdc", "queue/scheduler", "none mq-deadline kyber [bfq] \n");
        uevent_send_blocking(testbed_syspath("sdc"), "change", 1);
        testbed_sentinel(tb, "sdd");  /* other disks are still repaired */
        ck_assert_str_eq(testbed_value("sdc", "queue/scheduler"), "bfq");

        err = hvtuned_stop(&run);
        assert_contains(err, "sdc: reverted 11 times within 60 s: something keeps changing it back; not repairing it for ");
        assert_contains(err, "sdc queue/scheduler: bfq -> none (drift repaired)\n");
        g_object_unref(tb);
}
END_TEST

static unsigned long context_switches(pid_t pid) {
        char *path = g_strdup_printf("/proc/%d/status", pid), *text = NULL, *p;
        unsigned long vol = 0, invol = 0;

        ck_assert(g_file_get_contents(path, &text, NULL, NULL));
        p = strstr(text, "voluntary_ctxt_switches:");
        ck_assert_ptr_nonnull(p);
        ck_assert_int_eq(sscanf(p, "voluntary_ctxt_switches: %lu", &vol), 1);
        p = strstr(text, "nonvoluntary_ctxt_switches:");
        ck_assert_int_eq(sscanf(p, "nonvoluntary_ctxt_switches: %lu", &invol), 1);
        g_free(text);
        g_free(path);
        return vol + invol;
}

START_TEST(test_pause_ends) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *err;

        start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\n");
        for (unsigned i = 1; i <= HVT_REPAIR_BURST + 1; i++) {
                revert_repaired(&run, tb, "sdc", i);
                revert_repaired(&run, tb, "sdd", i);
        }
        hvtuned_wait_notify(&run, "2 disks reverted too often, repairs paused");

        /* sdd goes while paused: its pause goes with it (no timer left to fire on it). */
        testbed_remove(tb, testbed_syspath("sdd"));
        hvtuned_wait_notify(&run, "STATUS=3 Hyper-V disks on 2 controllers: 3 tuned, 0 failed; "
                                  "1 disk reverted too often, repairs paused");

        /* sdc drifts once more while paused; no event will come, yet at the end of the
         * window hvtuned checks it and repairs it on its own. */
        drift(tb, "sdc", "queue/scheduler", "none mq-deadline kyber [bfq] \n");
        do
                hvtuned_wait_notify_timeout(&run, "STATUS=", (HVT_REPAIR_WINDOW_S + 10) * 1000);
        while (strcmp(run.status, "3 Hyper-V disks on 2 controllers: 3 tuned, 0 failed" AZURE_HWQ) != 0);
        ck_assert_str_eq(testbed_value("sdc", "queue/scheduler"), "none");
        err = hvtuned_stop(&run);
        ck_assert_uint_eq(hv_count(err, "sdc queue/scheduler: bfq -> none (drift repaired)\n"),
                          HVT_REPAIR_BURST + 2);
        g_object_unref(tb);
}
END_TEST

START_TEST(test_verify_interval) {
        struct hv_run run;
        UMockdevTestbed *tb;
        unsigned long before;
        char *config;

        /* verify_interval = 0 (the default): no timer, so no wakeup at all while idle. */
        start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\n");
        usleep(200 * 1000);  /* READY=1 is sent just before the loop first blocks */
        before = context_switches(run.pid);
        usleep(1500 * 1000);
        ck_assert_uint_eq(context_switches(run.pid), before);

        /* verify_interval = 1: a drift without any event is found within a couple of
         * seconds, and a reload turns the timer on without a restart. */
        rewrite(config, "queue = { scheduler = \"none\"; };\nverify_interval = 1;\n");
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "READY=1");
        drift(tb, "sdb", "queue/scheduler", "none [mq-deadline] kyber bfq \n");
        testbed_wait_value("sdb", "queue/scheduler", "none");
        assert_contains(hvtuned_stop(&run), "sdb queue/scheduler: mq-deadline -> none (drift repaired)\n");
        g_object_unref(tb);
}
END_TEST

START_TEST(test_kill9_keeps_true_originals) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *record, *path;

        start(&run, &tb, &config, "queue = { scheduler = \"none\"; read_ahead_kb = 1024; };\n");
        ck_assert_str_eq(testbed_value("sdc", "queue/read_ahead_kb"), "1024");
        path = g_build_filename(runtime_dir(), "sdc", NULL);
        ck_assert(g_file_get_contents(path, &record, NULL, NULL));
        g_free(path);
        hv_keep(record);
        assert_contains(record, "queue/read_ahead_kb=128\n");
        assert_contains(record, "queue/scheduler=bfq\n");

        /* No chance to restore anything, and the disks keep hvtuned's values. */
        hvtuned_kill(&run, SIGKILL);
        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });
        /* The restarted daemon finds its own values in place, but knows the true originals. */
        hvtuned_stop(&run);
        ck_assert_str_eq(testbed_value("sdc", "queue/read_ahead_kb"), "128");
        ck_assert_str_eq(testbed_value("sdc", "queue/scheduler"), "bfq");
        ck_assert_str_eq(testbed_value("sda", "queue/scheduler"), "mq-deadline");
        /* Everything restored: no record left. */
        ck_assert(!record_exists("sdc"));
        g_object_unref(tb);
}
END_TEST

/* The kernel resets nr_requests on every scheduler switch (tests/kernel/kernel-answers.h): the
 * originals are all read before the first write, so a disk left at mq-deadline with
 * nr_requests 200 gets 200 back, not the tag depth the switch to none set, even when hvtuned
 * is killed between the two writes and restarted. */
START_TEST(test_kill9_between_scheduler_and_nr_requests) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        const char *sda = testbed_syspath("sda");
        char *config = config_write("queue = { scheduler = \"none\"; nr_requests = 128; read_ahead_kb = 1024; };\n");
        char *record, *path = g_build_filename(runtime_dir(), "sda", NULL);
        struct hv_run run;

        umockdev_testbed_set_attribute(tb, sda, "queue/nr_requests", "200");
        umockdev_testbed_set_attribute(tb, sda, "queue/read_ahead_kb", "256");
        setenv("HVTUNED_TEST_SLOW_ATTR", "sda/queue/nr_requests", 1);
        hvtuned_launch(&run, (const char *const[]) { "-c", config, NULL });
        testbed_wait_value_for("sda", "queue/scheduler", "none", hvtuned_under_valgrind() ? 600000 : 120000);
        /* Between the switch and the nr_requests write (its open is slow): the kernel's
         * reset is all the disk has, and the record already holds every original. */
        ck_assert_str_eq(testbed_value("sda", "queue/nr_requests"), "2534");
        ck_assert(g_file_get_contents(path, &record, NULL, NULL));
        hv_keep(record);
        assert_contains(record, "queue/scheduler=mq-deadline\n");
        assert_contains(record, "queue/nr_requests=200\n");
        assert_contains(record, "queue/read_ahead_kb=256\n");
        hvtuned_kill(&run, SIGKILL);
        unsetenv("HVTUNED_TEST_SLOW_ATTR");

        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });
        ck_assert_str_eq(testbed_value("sda", "queue/nr_requests"), "128");
        /* Restored in table order: mq-deadline first (which resets nr_requests), then 200. */
        assert_contains(hvtuned_stop(&run), "sda queue/nr_requests: 128 -> 200 (restored)\n");
        ck_assert_str_eq(testbed_value("sda", "queue/scheduler"), "mq-deadline");
        ck_assert_str_eq(testbed_value("sda", "queue/nr_requests"), "200");
        ck_assert_str_eq(testbed_value("sda", "queue/read_ahead_kb"), "256");
        ck_assert(!record_exists("sda"));
        g_free(path);
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* nr_requests set under mq-deadline belongs to it: when hvtuned switches the scheduler it
 * records nr_requests too, managed or not, and puts it back after the scheduler. Dropped
 * from the configuration while the scheduler is still hvtuned's, it waits for it. */
START_TEST(test_nr_requests_goes_back_with_the_scheduler) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *config = config_write("queue = { scheduler = \"none\"; };\n");
        struct hv_run run;

        umockdev_testbed_set_attribute(tb, testbed_syspath("sda"), "queue/nr_requests", "200");
        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });
        ck_assert_str_eq(testbed_value("sda", "queue/nr_requests"), "2534");  /* the switch's reset */
        assert_contains(hvtuned_stop(&run), "sda queue/nr_requests: 2534 -> 200 (restored)\n");
        ck_assert_str_eq(testbed_value("sda", "queue/scheduler"), "mq-deadline");
        ck_assert_str_eq(testbed_value("sda", "queue/nr_requests"), "200");

        rewrite(config, "queue = { scheduler = \"none\"; nr_requests = 128; };\n");
        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });
        ck_assert_str_eq(testbed_value("sda", "queue/nr_requests"), "128");
        rewrite(config, "queue = { scheduler = \"none\"; };\n");
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "READY=1");
        /* 200 is mq-deadline's: under none it waits. */
        ck_assert_str_eq(testbed_value("sda", "queue/nr_requests"), "128");
        hvtuned_stop(&run);
        ck_assert_str_eq(testbed_value("sda", "queue/scheduler"), "mq-deadline");
        ck_assert_str_eq(testbed_value("sda", "queue/nr_requests"), "200");
        ck_assert(!record_exists("sda"));
        unlink(config);
        g_object_unref(tb);
}
END_TEST

START_TEST(test_restart_with_smaller_config) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config;

        start(&run, &tb, &config, "queue = { scheduler = \"none\"; read_ahead_kb = 1024; };\n");
        hvtuned_kill(&run, SIGKILL);

        /* Restarted with a configuration that no longer manages read_ahead_kb: its recorded
         * originals go back in the first pass, not only at stop. */
        rewrite(config, "queue = { scheduler = \"none\"; };\n");
        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });
        for (size_t i = 0; i < G_N_ELEMENTS(hv_disks); i++)
                ck_assert_str_eq(testbed_value(hv_disks[i], "queue/read_ahead_kb"), "128");
        assert_contains(hvtuned_stop(&run), "sdd queue/read_ahead_kb: 1024 -> 128 (restored)\n");
        g_object_unref(tb);
}
END_TEST

START_TEST(test_clamped_not_rewritten) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *err;
        int w;

        /* The kernel keeps read_ahead_kb in whole pages: 1001 becomes 1000, and stays. */
        start_with(&run, &tb, &config, "queue = { read_ahead_kb = 1001; };\nrestore_on_stop = false;\n", "-v");
        ck_assert_str_eq(testbed_value("sda", "queue/read_ahead_kb"), "1000");
        w = watch_writes();
        uevent_send_blocking(testbed_syspath("sda"), "change", 5);
        sentinel_value(tb, "sdb", "queue/read_ahead_kb", "8\n", "1000");
        writes_expect(w, "read_ahead_kb");  /* the sentinel's repair, nothing for sda */
        err = hvtuned_stop_with(&run, SIGTERM);
        assert_contains(err, "sda queue/read_ahead_kb: 128 -> 1001 (clamped: the kernel kept 1000)\n");
        ck_assert_ptr_null(strstr(err, "sda queue/read_ahead_kb: 1000 -> 1001"));
        ck_assert_uint_eq(hv_count(err, "sda queue/read_ahead_kb: 1000 (unchanged: the kernel keeps it for 1001)\n"), 5);
        g_object_unref(tb);
}
END_TEST

START_TEST(test_sigterm_restores) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *err;
        GHashTable *before;

        tb = testbed_load("azure-gen2");
        before = snapshot_take();
        g_object_unref(tb);

        start(&run, &tb, &config, "queue = { scheduler = \"none\"; nr_requests = 128; read_ahead_kb = 2048; };\n"
                                  "device = { timeout = 300; queue_depth = 254; };\n");
        ck_assert_str_ne(snapshot_diff_values(before, snapshot_take()), "");
        err = hvtuned_stop(&run);
        /* Every value is back to what it was (as values: the testbed keeps "256" where the
         * file had "256\n"). */
        ck_assert_str_eq(snapshot_diff_values(before, snapshot_take()), "");
        ck_assert_str_eq(testbed_value("sda", "queue/nr_requests"), "256");
        ck_assert_str_eq(testbed_value("sdb", "queue/nr_requests"), "2534");
        ck_assert_str_eq(testbed_value("sdd", "device/timeout"), "180");
        ck_assert_str_eq(testbed_value("sdd", "device/queue_depth"), "2048");
        ck_assert_str_eq(testbed_value("sdc", "queue/scheduler"), "bfq");
        assert_contains(err, "sdd device/timeout: 300 -> 180 (restored)\n");
        assert_contains(err, "sda queue/scheduler: none -> mq-deadline (restored)\n");
        g_object_unref(tb);
}
END_TEST

/* A remove event for a disk that is still there (udevadm trigger --action=remove, then add)
 * is no removal: its originals stay its true ones, not the values hvtuned gave it, and a stop
 * puts them back. */
START_TEST(test_spurious_remove_keeps_originals) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *err;

        start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\n");
        ck_assert_str_eq(testbed_value("sda", "queue/scheduler"), "none");
        uevent_send_blocking(testbed_syspath("sda"), "remove", 1);
        uevent_send_blocking(testbed_syspath("sda"), "add", 1);
        /* Events are handled in order: once sdb's drift is repaired, both were. */
        testbed_sentinel(tb, "sdb");
        ck_assert(record_exists("sda"));
        err = hvtuned_stop(&run);
        assert_contains(err, "sda: a remove event, but the disk is still there: kept as it was");
        ck_assert_ptr_null(strstr(err, "sda: removed"));
        assert_contains(err, "sda queue/scheduler: none -> mq-deadline (restored)\n");
        ck_assert_str_eq(testbed_value("sda", "queue/scheduler"), "mq-deadline");
        g_object_unref(tb);
}
END_TEST

/* The hot-added data disk sdf at 1:0:0:2 as a kernel without diskseq (before 5.15) shows it,
 * left by its operator at the scheduler in sched; hvtuned stopped meanwhile (when running),
 * so that it sees the disk only once it is complete. */
static char *add_sdf_without_diskseq(UMockdevTestbed *tb, const struct hv_run *run, const char *sched) {
        char *sdf, *seq;

        if (run)
                ck_assert_int_eq(kill(run->pid, SIGSTOP), 0);
        testbed_add(tb, "azure-gen2-sdf.umockdev");
        sdf = testbed_syspath("sdf");
        seq = g_build_filename(getenv("UMOCKDEV_DIR"), sdf, "diskseq", NULL);
        ck_assert_int_eq(unlink(seq), 0);
        g_free(seq);
        drift(tb, "sdf", "queue/scheduler", sched);
        if (run)
                ck_assert_int_eq(kill(run->pid, SIGCONT), 0);
        return sdf;
}

/* Removes sdf from the testbed and adds it again at the same path: same syspath, same dev, no
 * diskseq, a new directory. kernfs never hands a removed node's inode number straight to a new
 * one; a plain directory's could be reused, so the old one is held open (as a deleted inode)
 * until the end, and the new one is checked to be another. Returns the fd holding it. */
static int readd_sdf_without_diskseq(UMockdevTestbed *tb, const struct hv_run *run, const char *sched) {
        char *sdf = testbed_syspath("sdf"), *real = g_build_filename(getenv("UMOCKDEV_DIR"), sdf, NULL);
        struct stat old, new;
        int fd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(fstat(fd, &old), 0);
        if (run)
                ck_assert_int_eq(kill(run->pid, SIGSTOP), 0);
        /* The disk, then the rest of the LUN the fragment adds back, deepest first. The
         * remove event reaches only a running hvtuned's monitor. */
        if (run)
                testbed_remove(tb, sdf);
        else
                umockdev_testbed_remove_device(tb, sdf);
        for (const char *const *rel = (const char *const[]) { "../../scsi_disk/1:0:0:2", "../../scsi_device/1:0:0:2",
                                                              "../..", NULL }; *rel; rel++) {
                char *dev = g_build_filename(sdf, *rel, NULL), *canon = g_canonicalize_filename(dev, "/");

                umockdev_testbed_remove_device(tb, canon);
                g_free(canon);
                g_free(dev);
        }
        /* What umockdev leaves of the disk: the links the add makes again. */
        for (const char *const *link = (const char *const[]) { "sys/block/sdf", "sys/dev/block/8:80", NULL }; *link;
             link++) {
                char *path = g_build_filename(getenv("UMOCKDEV_DIR"), *link, NULL);

                ck_assert(unlink(path) == 0 || errno == ENOENT);
                g_free(path);
        }
        ck_assert_str_eq(add_sdf_without_diskseq(tb, NULL, sched), sdf);
        ck_assert_int_eq(stat(real, &new), 0);
        ck_assert_uint_ne(new.st_ino, old.st_ino);
        if (run)
                ck_assert_int_eq(kill(run->pid, SIGCONT), 0);
        g_free(real);
        return fd;
}

/* No diskseq (5.10, RHEL 8's 4.18): the LUN is hot-removed and added again while hvtuned is
 * busy, so that the remove event comes after the new disk's directory appeared, at the same
 * path with the same dev. The new disk is another instance: its originals are its own. */
START_TEST(test_readded_without_diskseq) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *record, *path, *err;
        int held;

        start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\n");
        add_sdf_without_diskseq(tb, &run, "none [mq-deadline] kyber bfq \n");
        testbed_wait_value("sdf", "queue/scheduler", "none");
        path = g_build_filename(runtime_dir(), "sdf", NULL);
        ck_assert(g_file_get_contents(path, &record, NULL, NULL));
        hv_keep(record);
        assert_contains(record, "\ndiskseq=0\n");
        assert_contains(record, "queue/scheduler=mq-deadline\n");

        held = readd_sdf_without_diskseq(tb, &run, "none mq-deadline kyber [bfq] \n");
        testbed_wait_value("sdf", "queue/scheduler", "none");
        ck_assert(g_file_get_contents(path, &record, NULL, NULL));
        hv_keep(record);
        assert_contains(record, "queue/scheduler=bfq\n");
        err = hvtuned_stop(&run);
        assert_contains(err, "sdf: removed Hyper-V scsi disk 1:0:0:2");
        assert_contains(err, "sdf queue/scheduler: none -> bfq (restored)\n");
        ck_assert_str_eq(testbed_value("sdf", "queue/scheduler"), "bfq");
        close(held);
        g_free(path);
        g_object_unref(tb);
}
END_TEST

/* The same across a restart: hvtuned killed, the LUN removed and added again before it
 * starts. The record left by the old disk is another instance's: deleted, not loaded. */
START_TEST(test_readded_without_diskseq_restart) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *record, *path;
        int held;

        start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\n");
        add_sdf_without_diskseq(tb, &run, "none [mq-deadline] kyber bfq \n");
        testbed_wait_value("sdf", "queue/scheduler", "none");
        ck_assert(record_exists("sdf"));
        hvtuned_kill(&run, SIGKILL);

        held = readd_sdf_without_diskseq(tb, NULL, "none mq-deadline kyber [bfq] \n");
        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });
        ck_assert_str_eq(testbed_value("sdf", "queue/scheduler"), "none");
        path = g_build_filename(runtime_dir(), "sdf", NULL);
        ck_assert(g_file_get_contents(path, &record, NULL, NULL));
        hv_keep(record);
        assert_contains(record, "queue/scheduler=bfq\n");
        assert_contains(hvtuned_stop(&run), "sdf queue/scheduler: none -> bfq (restored)\n");
        ck_assert_str_eq(testbed_value("sdf", "queue/scheduler"), "bfq");
        close(held);
        g_free(path);
        g_object_unref(tb);
}
END_TEST

START_TEST(test_no_restore_and_removed_records) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *sdf;

        start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\nrestore_on_stop = false;\n");
        ck_assert(record_exists("sda"));

        /* A hot-added disk gets a record when first written; removed, the record goes. */
        testbed_add(tb, "azure-gen2-sdf.umockdev");
        hvtuned_wait_notify(&run, "STATUS=5 Hyper-V disks");
        sdf = testbed_syspath("sdf");
        drift(tb, "sdf", "queue/scheduler", "none [mq-deadline] kyber bfq \n");
        uevent_send_blocking(sdf, "change", 1);
        testbed_wait_value("sdf", "queue/scheduler", "none");
        ck_assert(record_exists("sdf"));
        testbed_remove(tb, sdf);
        hvtuned_wait_notify(&run, "STATUS=4 Hyper-V disks");
        ck_assert(!record_exists("sdf"));

        /* restore_on_stop = false: the tuned values stay, and so do the records, for the
         * next start to know the originals. */
        hvtuned_stop(&run);
        ck_assert_str_eq(testbed_value("sda", "queue/scheduler"), "none");
        ck_assert(record_exists("sda"));
        g_object_unref(tb);
}
END_TEST

/* Only a record with hvtuned's header is hvtuned's: a remove event for a disk it never
 * managed (vda, virtio; sde, a USB stick) leaves the operator's file of that name as it was. */
START_TEST(test_remove_leaves_files_not_hvtuneds) {
        g_autofree char *vda = g_build_filename(runtime_dir(), "vda", NULL);
        g_autofree char *sde = g_build_filename(runtime_dir(), "sde", NULL);
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *text;

        ck_assert(g_file_set_contents(vda, "my notes on vda\n", -1, NULL));
        ck_assert(g_file_set_contents(sde, "syspath=/sys/devices/pci0000:00/usb/block/sde\n", -1, NULL));
        start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\n");
        testbed_remove(tb, testbed_syspath("vda"));
        testbed_remove(tb, testbed_syspath("sde"));
        testbed_sentinel(tb, "sdc");  /* events in order: both removes were handled */
        ck_assert(g_file_get_contents(vda, &text, NULL, NULL));
        ck_assert_str_eq(hv_keep(text), "my notes on vda\n");
        ck_assert(g_file_get_contents(sde, &text, NULL, NULL));
        ck_assert_str_eq(hv_keep(text), "syspath=/sys/devices/pci0000:00/usb/block/sde\n");
        hvtuned_stop(&run);
        g_object_unref(tb);
}
END_TEST

/* READY=1 within timeout_ms, or hvtuned is killed (a hang must not outlive the test) and the
 * test fails. */
static void ready_or_kill(struct hv_run *run, int timeout_ms) {
        gint64 deadline = g_get_monotonic_time() + (gint64) timeout_ms * 1000;

        for (;;) {
                g_autofree char *note = g_async_queue_timeout_pop(run->notes, MAX(deadline - g_get_monotonic_time(), 0));

                if (!note) {
                        (void) kill(run->pid, SIGKILL);
                        ck_abort_msg("no READY=1 in %d ms: hvtuned hangs", timeout_ms);
                }
                if (strstr(note, "READY=1"))
                        return;
        }
}

/* A FIFO at an older version's fixed temporary of the reload record (.#.reload), written just
 * before READY=1: the daemon blocked in its open, before READY=1 and deaf to SIGTERM. Now the
 * temporary is one it creates, and the reload handshake works. */
START_TEST(test_fifo_at_reload_temporary) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        g_autofree char *fifo = g_build_filename(runtime_dir(), ".#.reload", NULL);
        g_autofree char *pid = NULL;
        struct hv_run run;
        char *config, *err;

        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        config = config_write("queue = { scheduler = \"none\"; };\n");
        hvtuned_launch(&run, (const char *const[]) { "-c", config, NULL });
        ready_or_kill(&run, hvtuned_under_valgrind() ? 90000 : 20000);
        ck_assert_str_eq(testbed_value("sda", "queue/scheduler"), "none");
        pid = g_strdup_printf("--reload=%d", (int) run.pid);
        ck_assert_int_eq(hvtuned_run((const char *const[]) { pid, NULL }, &err), 0);
        err = hvtuned_stop(&run);
        ck_assert_str_eq(testbed_value("sda", "queue/scheduler"), "mq-deadline");
        unlink(fifo);
        g_object_unref(tb);
}
END_TEST

START_TEST(test_records_pruned_and_guarded) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *path, *err;
        const char *once[4];

        /* Left by an earlier run: a disk that is gone (sdz), a disk that is there but not
         * Hyper-V's (vda: kept, a disk may be unclassifiable for a while), and a record that
         * cannot be read (sda's is a directory). */
        ck_assert(g_file_set_contents(path = g_build_filename(runtime_dir(), "sdz", NULL),
                                      "# hvtuned: values before hvtuned first wrote them\n"
                                      "syspath=/sys/devices/gone/block/sdz\ndev=8:400\ndiskseq=9\n"
                                      "queue/scheduler=bfq\n", -1, NULL));
        g_free(path);
        ck_assert(g_file_set_contents(path = g_build_filename(runtime_dir(), "vda", NULL), "x", -1, NULL));
        g_free(path);
        ck_assert_int_eq(g_mkdir_with_parents(path = g_build_filename(runtime_dir(), "sda", "x", NULL), 0755), 0);
        g_free(path);

        start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\n");
        ck_assert(!record_exists("sdz"));
        ck_assert(record_exists("vda"));
        /* sda's true originals may be in that record: hvtuned does not write sda rather than
         * record its current values over them. The other disks are tuned. */
        ck_assert_str_eq(run.status, "4 Hyper-V disks on 2 controllers: 3 tuned, 1 failed" AZURE_HWQ);
        ck_assert_str_eq(testbed_value("sda", "queue/scheduler"), "mq-deadline");
        ck_assert_str_eq(testbed_value("sdc", "queue/scheduler"), "none");

        /* One hvtuned at a time owns the records. */
        once[0] = "--once", once[1] = "-c", once[2] = config, once[3] = NULL;
        ck_assert_int_eq(hvtuned_run(once, &err), 1);
        assert_contains(err, "Another hvtuned is running (it holds ");

        /* Once the record can be read (here: it is gone), the next pass writes again. */
        path = g_strdup_printf("rm -rf '%s/sda'", runtime_dir());
        ck_assert_int_eq(system(path), 0);
        g_free(path);
        uevent_send_blocking(testbed_syspath("sda"), "change", 1);
        hvtuned_wait_notify(&run, "STATUS=4 Hyper-V disks on 2 controllers: 4 tuned, 0 failed");
        ck_assert_str_eq(testbed_value("sda", "queue/scheduler"), "none");
        ck_assert(record_exists("sda"));

        err = hvtuned_stop(&run);
        assert_contains(err, "sda: cannot read the record of its original values (Is a directory): "
                             "not writing attributes that have none recorded\n");
        assert_contains(err, "sda queue/scheduler: mq-deadline -> none (not written: the record of its original "
                             "failed: Is a directory)\n");
        g_object_unref(tb);
}
END_TEST

START_TEST(test_failed_restore_kept_and_quiet) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *err, *file;

        start(&run, &tb, &config, "queue = { scheduler = \"none\"; nomerges = 1; };\n");
        /* sda's nomerges becomes unreadable; then a reload stops managing it. */
        file = g_build_filename(getenv("UMOCKDEV_DIR"), testbed_syspath("sda"), "queue", "nomerges", NULL);
        ck_assert_int_eq(unlink(file), 0);
        ck_assert_int_eq(mkdir(file, 0755), 0);
        g_free(file);
        rewrite(config, "queue = { scheduler = \"none\"; };\n");
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "READY=1");
        ck_assert_str_eq(run.status, "4 Hyper-V disks on 2 controllers: 3 tuned, 1 failed" AZURE_HWQ);
        ck_assert_str_eq(testbed_value("sdb", "queue/nomerges"), "0");  /* the others are restored */
        ck_assert(record_exists("sda"));

        /* Every event tries again, but says it only once. */
        uevent_send_blocking(testbed_syspath("sda"), "change", 3);
        testbed_sentinel(tb, "sdc");
        err = hvtuned_stop(&run);
        ck_assert_uint_eq(hv_count(err, "sda queue/nomerges: 0 (restore failed: Is a directory)\n"), 1);
        ck_assert(record_exists("sda"));  /* the original is still there for a later try */
        g_object_unref(tb);
}
END_TEST

START_TEST(test_state_dump) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *err;

        start(&run, &tb, &config, "queue = { scheduler = \"none\"; read_ahead_kb = 1024; };\n"
                                  "override = ( { match = { lun = 1; host = 1; }; device = { timeout = 300; }; } );\n");
        drift(tb, "sdc", "queue/read_ahead_kb", "512\n");  /* no event: the dump reads afresh */
        ck_assert_int_eq(kill(run.pid, SIGUSR1), 0);
        /* Until the dump is out, a drift would show in it: no sentinel, the summary ends it. */
        hvtuned_wait_stderr(&run, "\nState: ", 1);
        err = hvtuned_stop(&run);
        /* nr_requests is not managed, but the switch to none reset it: its original is kept,
         * to go back with the scheduler's; io_timeout, which the write of device/timeout
         * changed, the same way. wbt_lat_usec, which a switch can change but these did not,
         * is no knock-on: nothing of it is kept. */
        assert_contains(err, "sda: queue/scheduler original=mq-deadline desired=none current=none last=applied; "
                             "queue/nr_requests original=256 desired=- current=2534 last=reset by the scheduler; "
                             "queue/read_ahead_kb original=128 desired=1024 current=1024 last=applied\n");
        assert_contains(err, "sdb: queue/scheduler original=- desired=none current=none last=unchanged; "
                             "queue/read_ahead_kb original=128 desired=1024 current=1024 last=applied\n");
        assert_contains(err, "sdc: queue/scheduler original=bfq desired=none current=none last=applied; "
                             "queue/nr_requests original=256 desired=- current=2534 last=reset by the scheduler; "
                             "queue/read_ahead_kb original=128 desired=1024 current=512 last=applied\n");
        assert_contains(err, "sdd: queue/scheduler original=- desired=none current=none last=unchanged; "
                             "queue/read_ahead_kb original=128 desired=1024 current=1024 last=applied; "
                             "device/timeout original=180 desired=300 current=300 last=applied; "
                             "queue/io_timeout original=180000 desired=- current=300000 "
                             "last=watched, goes back with its cause\n");
        assert_contains(err, "State: 4 Hyper-V disks on 2 controllers: 4 tuned, 0 failed" AZURE_HWQ "\n");
        g_object_unref(tb);
}
END_TEST

int main(void) {
        Suite *s = suite_create("lifecycle");
        TCase *tc = tcase_create("azure");

        tcase_set_timeout(tc, 240);
        tcase_add_test(tc, test_reload_protocol_and_difference);
        tcase_add_test(tc, test_bad_reload_keeps_running);
        tcase_add_test(tc, test_sighup_burst);
        tcase_add_test(tc, test_change_flood_costs_reads);
        tcase_add_test(tc, test_kill9_between_scheduler_and_nr_requests);
        tcase_add_test(tc, test_nr_requests_goes_back_with_the_scheduler);
        tcase_add_test(tc, test_config_error_notice_whole);
        tcase_add_test(tc, test_config_error_name_adds_no_line);
        tcase_add_test(tc, test_repair_budget);
        tcase_add_test(tc, test_pause_ends);
        tcase_add_test(tc, test_verify_interval);
        tcase_add_test(tc, test_kill9_keeps_true_originals);
        tcase_add_test(tc, test_restart_with_smaller_config);
        tcase_add_test(tc, test_clamped_not_rewritten);
        tcase_add_test(tc, test_sigterm_restores);
        tcase_add_test(tc, test_no_restore_and_removed_records);
        tcase_add_test(tc, test_spurious_remove_keeps_originals);
        tcase_add_test(tc, test_records_pruned_and_guarded);
        tcase_add_test(tc, test_remove_leaves_files_not_hvtuneds);
        tcase_add_test(tc, test_fifo_at_reload_temporary);
        tcase_add_test(tc, test_failed_restore_kept_and_quiet);
        tcase_add_test(tc, test_state_dump);
        suite_add_tcase(s, tc);
        /* A kernel without diskseq (tests/testbeds gives every 5.15+ disk one). */
        tc = tcase_create("no-diskseq");
        tcase_set_timeout(tc, 240);
        tcase_add_test(tc, test_readded_without_diskseq);
        tcase_add_test(tc, test_readded_without_diskseq_restart);
        suite_add_tcase(s, tc);
        return test_run(s);
}
