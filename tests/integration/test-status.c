/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hvtuned --status against the real daemon on the testbeds: while it runs, from its state
 * file (a drift repair counted and named, a knock-on shown, the values now read from sysfs,
 * the JSON form parsed by Python's json), and once it has stopped or after --once, from the
 * records and sysfs, saying so. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "state.h"
#include "testutil.h"

/* What Python's json makes of the object, one line a disk: every key a tool relies on. */
static const char *const summary_py =
        "import json, sys\n"
        "d = json.load(open(sys.argv[1]))\n"
        "assert d['format'] == 1, d['format']\n"
        "print('running', d['running'], d['pid'] is not None, d['driver']['parameter'])\n"
        "for disk in d['disks']:\n"
        "    attrs = ' '.join('%s=%s/%s/%s/%s' % (a['name'], a['role'], a['current'], a['wanted'], a['original'])\n"
        "                     for a in disk['attributes'])\n"
        "    last = disk['last_repair']['attribute'] if disk['last_repair'] else None\n"
        "    print(disk['name'], disk['kind'], disk['role'], disk['drift_repairs'], last, ','.join(disk['knock_ons']), attrs)\n"
        "for c in d['controllers']:\n"
        "    print(c['host'], c['kind'], c['hw_queues'], c['can_queue'], c['over_cap'], c['estimate_bytes'] is not None)\n"
        "for n in d['nvme_controllers']:\n"
        "    print(n['name'], n['kind'], n['io_queues'], n['queue_depth'])\n"
        "print('reclaimable', d['controllers_over_cap'], d['reclaimable_bytes'] is not None)\n";

/* --status (and json) on stdout; its exit code must be 0 and stderr empty. */
static char *status(bool json) {
        const char *args[] = { "--status", json ? "--json" : NULL, NULL };
        char *out, *err;
        int r = hvtuned_run_out(args, &out, &err);

        ck_assert_msg(r == 0, "--status exited %d: %s", r, err);
        ck_assert_msg(*err == '\0', "--status said on stderr: %s", err);
        return out;
}

/* The JSON form, through Python's parser, as summary_py prints it. */
static char *json_summary(void) {
        return python_on_text(summary_py, status(true));
}

/* --status as a user who may not read what root's daemon keeps: exit 1, saying so. */
static void assert_needs_root(void) {
        char *out = NULL, *err = NULL;
        /* Without the test's shims, which keep logs nobody may write: the directory is refused
         * before anything else is read. */
        int code = hvtuned_run_as_nobody((const char *const[]) { "--status", NULL }, &out, &err);

        if (code < 0)
                return;  /* not root: no other user to be */
        ck_assert_msg(code == 1, "as nobody: status %d: %s", code, err);
        assert_contains(err, "hvtuned --status needs root: ");
        ck_assert_str_eq(out, "");
}

static char *state_path(void) {
        return hv_keep(g_build_filename(runtime_dir(), ".state", NULL));
}

START_TEST(test_gen2_running_then_stopped) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *text, *summary, *was;
        struct stat st;

        tb = testbed_load("azure-gen2");
        was = testbed_value("sda", "queue/scheduler");
        g_object_unref(tb);
        /* Only the scheduler: the switch resets nr_requests, a knock-on hvtuned puts back. */
        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\n");
        testbed_sentinel(tb, "sda");
        /* The repair is in the file once the loop iteration after it ends. */
        (void) hvtuned_wait_file(state_path(), "\tscsi\tos\t1\t", 10000);
        /* A second repair at once: within the second that holds the next gathering back, so
         * written when it is over. */
        testbed_sentinel(tb, "sdc");
        (void) hvtuned_wait_file(state_path(), "\tscsi\tdata\t1\t", 10000);
        ck_assert_int_eq(stat(state_path(), &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0600);

        text = status(false);
        assert_contains(text, "hvtuned is running (pid ");
        assert_contains(text, "drift repairs: 1, last ");
        assert_contains(text, "(queue/scheduler)");
        assert_contains(text, "knock-on");
        /* Where the wanted value comes from: the running daemon's file and line. */
        assert_contains(text, hv_keep(g_strdup_printf("from %s:1\n", config)));
        summary = json_summary();
        assert_contains(summary, "running True True hv_storvsc.storvsc_max_hw_queues\n");
        assert_contains(summary, "sda scsi os 1 queue/scheduler queue/nr_requests ");
        assert_contains(summary, hv_keep(g_strdup_printf(" queue/scheduler=managed/none/none/%s ", was)));
        assert_contains(summary, " queue/nr_requests=knock-on/");
        assert_contains(summary, "sdb scsi resource 0 None");
        assert_contains(summary, "sdc scsi data 1 queue/scheduler ");
        assert_contains(summary, "host0 scsi ");
        assert_contains(summary, "reclaimable ");
        assert_needs_root();

        (void) hvtuned_stop(&run);
        ck_assert_int_eq(access(state_path(), F_OK), -1);
        /* Stopped: everything went back, so no original is left, and there is no history. */
        text = status(false);
        assert_contains(text, "hvtuned is not running: from its records and sysfs (no repair history)\n");
        ck_assert_ptr_null(strstr(text, "drift repairs"));
        /* No -c: the default path, which does not exist here, so the built-in policy. */
        assert_contains(text, "from built-in policy\n");
        summary = json_summary();
        assert_contains(summary, "running False False");
        assert_contains(summary, hv_keep(g_strdup_printf("sda scsi os None None  queue/scheduler=managed/%s/none/None ",
                                                         was)));
        g_object_unref(tb);
        unlink(config);
}
END_TEST

START_TEST(test_gen2_after_once) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *err, *text, *summary, *was = testbed_value("sda", "queue/scheduler");
        char *was_nr = testbed_value("sda", "queue/nr_requests");

        ck_assert_int_eq(hvtuned_run_once("queue = { scheduler = \"none\"; };\n", &err), 0);
        ck_assert(record_exists("sda"));
        /* The records hold what --once found; sysfs what it left; the configuration what is
         * wanted. The config is the one --status finds: none here, so the built-in policy, the
         * same scheduler. */
        text = status(false);
        assert_contains(text, "hvtuned is not running: from its records and sysfs (no repair history)\n");
        summary = json_summary();
        assert_contains(summary, "sda scsi os None None queue/nr_requests ");
        assert_contains(summary, hv_keep(g_strdup_printf(" queue/scheduler=managed/none/none/%s ", was)));
        /* What --once found before its switch reset it. */
        assert_contains(summary, hv_keep(g_strdup_printf(" queue/nr_requests=knock-on/%s/None/%s",
                                                         testbed_value("sda", "queue/nr_requests"), was_nr)));
        g_object_unref(tb);
}
END_TEST

START_TEST(test_v6_running) {
        const char *args[] = { "-c", NULL, NULL };
        struct hv_run run;
        UMockdevTestbed *tb = testbed_load("azure-v6");
        char *summary, *config = config_write("queue = { scheduler = \"none\"; };\n");

        args[1] = config;
        hvtuned_start(&run, args);
        testbed_sentinel(tb, "nvme0n3");
        (void) hvtuned_wait_file(state_path(), "\tnvme-accelerator\tdata\t1\t", 10000);
        summary = json_summary();
        assert_contains(summary, "nvme0n3 nvme-accelerator data 1 queue/scheduler ");
        assert_contains(summary, "queue/scheduler=managed/none/none/mq-deadline");
        assert_contains(summary, "nvme1n1 nvme-direct-v2 local 0 None");
        assert_contains(summary, "nvme0 nvme-accelerator ");
        assert_contains(status(false), "NVME ");
        (void) hvtuned_stop(&run);
        g_object_unref(tb);
        unlink(config);
}
END_TEST

/* A reader that went away (`hvtuned --status | true`, `| head -1`): no error, exit 0. */
START_TEST(test_reader_gone) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        int p[2];

        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        ck_assert_int_eq(close(p[0]), 0);
        for (int json = 0; json <= 1; json++) {
                const char *args[] = { "--status", json ? "--json" : NULL, NULL };
                char *err;

                ck_assert_int_eq(hvtuned_run_fd(args, p[1], &err), 0);
                ck_assert_str_eq(err, "");
        }
        close(p[1]);
        g_object_unref(tb);
}
END_TEST

/* A disk of a state file whose paths lead out of /sys, or to a FIFO in it: nothing is opened
 * there, nothing waits, and the rest of the report is there. The test holds the runtime
 * directory as a daemon would, with a state file of its making. */
static void state_disk(struct hvt_state *s, const char *name, const char *syspath, const char *device_syspath) {
        struct hvt_state_disk *d = hvt_state_add_disk(s, name, syspath, device_syspath);

        ck_assert_ptr_nonnull(d);
        d->kind = HVT_KIND_SCSI;
        d->role = HVT_ROLE_DATA;
        d->last_repair_attr = -1;
        d->attr[0] = (struct hvt_state_attr) { .id = HVT_ATTR_SCHEDULER, .role = HVT_STATE_MANAGED, .want = "none",
                                               .last = -1 };
        d->attr[1] = (struct hvt_state_attr) { .id = HVT_ATTR_TIMEOUT, .role = HVT_STATE_MANAGED, .want = "300",
                                               .last = -1 };
        d->n_attr = 2;
}

static void fifo_disk(const char *dir) {
        g_autofree char *queue = g_build_filename(dir, "queue", NULL);
        g_autofree char *sched = g_build_filename(queue, "scheduler", NULL);
        g_autofree char *timeout = g_build_filename(dir, "timeout", NULL);

        ck_assert_int_eq(g_mkdir_with_parents(queue, 0755), 0);
        ck_assert_int_eq(mkfifo(sched, 0600), 0);
        ck_assert_int_eq(mkfifo(timeout, 0600), 0);
}

/* Regular attributes, with values nothing else holds: shown, they would have been read. */
static void outsider_disk(const char *dir) {
        g_autofree char *queue = g_build_filename(dir, "queue", NULL);
        g_autofree char *sched = g_build_filename(queue, "scheduler", NULL);
        g_autofree char *timeout = g_build_filename(dir, "timeout", NULL);

        ck_assert_int_eq(g_mkdir_with_parents(queue, 0755), 0);
        ck_assert(g_file_set_contents(sched, "[outsider] none\n", -1, NULL));
        ck_assert(g_file_set_contents(timeout, "31337\n", -1, NULL));
}

START_TEST(test_state_file_paths_refused) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        g_autofree char *sda = g_strdup(testbed_syspath("sda")), *lun = g_path_get_dirname(sda), *text = NULL;
        g_autofree char *outside = NULL, *regular = NULL, *want = NULL;
        char base[] = "/var/tmp/hvtuned-outside.XXXXXX", *out, *err, *clean;
        struct hvt_state s = { .pid = getpid(), .status = (char *) "4 Hyper-V disks", .driver.cap_support = -1 };
        int lock;

        *strrchr(lun, '/') = '\0';  /* .../0:0:0:0/block/sda -> .../0:0:0:0 */
        /* A FIFO where a disk's attributes would be, in the testbed's /sys, and one outside. */
        fifo_disk(testbed_sys_path("devices/fifo/block/sdx"));
        ck_assert_ptr_nonnull(mkdtemp(base));
        outside = g_build_filename(base, "sdy", NULL);
        fifo_disk(outside);
        regular = g_build_filename(base, "sdw", NULL);
        outsider_disk(regular);
        state_disk(&s, "sda", sda, lun);
        state_disk(&s, "sdw", regular, regular);
        state_disk(&s, "sdx", "/sys/devices/fifo/block/sdx", "/sys/devices/fifo/block/sdx");
        state_disk(&s, "sdy", outside, outside);
        state_disk(&s, "sdz", "/sys/devices/fifo/block/../../../..", "/sys/../dev");
        ck_assert_int_eq(hvt_state_format(&s, &text), 0);
        s.status = NULL;
        hvt_state_done(&s);
        ck_assert(g_file_set_contents(state_path(), text, -1, NULL));
        ck_assert_int_eq(chmod(state_path(), 0600), 0);
        lock = open(runtime_dir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(lock, 0);
        ck_assert_int_eq(flock(lock, LOCK_EX | LOCK_NB), 0);

        /* Waiting in an open of a FIFO, --status would be killed after 20 s (the harness's bound). */
        ck_assert_int_eq(hvtuned_run_out((const char *const[]) { "--status", NULL }, &out, &err), 0);
        assert_contains(out, "sda ");
        assert_contains(out, "sdx ");
        assert_contains(out, "sdz ");
        want = g_strdup_printf("sdy: the state file puts it at %s, not below /sys/devices: not read\n", outside);
        assert_contains(err, want);
        assert_contains(err, "sdz: the state file puts it at /sys/devices/fifo/block/../../../..");
        /* A regular file outside /sys is not read either: the path check keeps it out, where
         * O_NONBLOCK alone would have kept only the FIFO from blocking. */
        g_free(want);
        want = g_strdup_printf("sdw: the state file puts it at %s, not below /sys/devices: not read\n", regular);
        assert_contains(err, want);
        ck_assert_msg(!strstr(out, "outsider") && !strstr(out, "31337"), "a file outside /sys was read:\n%s", out);
        /* The FIFO in /sys opens without waiting, and is no attribute: its read fails. */
        assert_contains(out, "(Illegal seek)");
        /* What sda's attributes hold now is still read. */
        assert_contains(out, hv_keep(g_strdup_printf("queue/scheduler  %s", testbed_value("sda", "queue/scheduler"))));
        ck_assert_int_eq(close(lock), 0);
        unlink(state_path());
        clean = g_strdup_printf("rm -rf '%s'", base);
        ck_assert_int_eq(system(clean), 0);
        g_free(clean);
        g_object_unref(tb);
}
END_TEST

START_TEST(test_refusals) {
        const char *args[] = { "--json", NULL };
        char *out, *err;

        /* --json alone is a usage error. */
        ck_assert_int_eq(hvtuned_run_out(args, &out, &err), 1);
        assert_contains(err, "--json goes with --status");
}
END_TEST

int main(void) {
        Suite *s = suite_create("status");
        TCase *tc = tcase_create("status");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_gen2_running_then_stopped);
        tcase_add_test(tc, test_gen2_after_once);
        tcase_add_test(tc, test_v6_running);
        tcase_add_test(tc, test_refusals);
        tcase_add_test(tc, test_reader_gone);
        tcase_add_test(tc, test_state_file_paths_refused);
        suite_add_tcase(s, tc);
        return test_run(s);
}
