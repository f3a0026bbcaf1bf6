/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Neighbours on the Azure testbed: the test plays another program that writes an attribute
 * hvtuned manages, an image builder's udev rule on every change event or WALinuxAgent on a
 * timer (a write without a uevent, which only the periodic check sees). hvtuned finds the
 * contest, names the likely writer from a made-up root (tests/emulate/host-files.c stands
 * its directories in for the system's), yields by default and writes no more, or insists
 * when configured and pauses; the metrics and the journal's fields tell it, and the restore at
 * stop leaves the neighbour's value. The kernel is no neighbour: its own read-ahead, put back
 * at a limits commit or a namespace revalidation (tests/emulate/sysfs-kernel.c plays the kernel
 * $HVTUNED_TEST_KERNEL names, uname(2) included), is repaired as the kernel's, however often. */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "journal.h"
#include "messages.h"
#include "testutil.h"
#include "track.h"
#include "uevent.h"

/* The host's files, with what the test puts among them: rel made with its directories. */
static void host_put(const char *rel, const char *text, gssize len) {
        g_autofree char *path = NULL, *dir = NULL;

        host_files(AZURE_CMDLINE, MOUNTINFO_AZURE, SWAPS_HEADER, NULL);
        path = g_build_filename(getenv("HVTUNED_TEST_HOST"), rel, NULL);
        dir = g_path_get_dirname(path);
        ck_assert_int_eq(g_mkdir_with_parents(dir, 0755), 0);
        ck_assert(g_file_set_contents(path, text, len, NULL));
}

/* The neighbour writes sdc's attr as a program does, open(2) and write(2) on /sys; a SCSI
 * timeout also shows in io_timeout, one kernel value (tests/emulate/sysfs-kernel.c plays that
 * for hvtuned's writes, this one does it by hand). */
static void neighbour_write(const char *attr, const char *value) {
        g_autofree char *disk = g_strdup(testbed_syspath("sdc")), *path = NULL, *line = NULL;
        int fd;

        /* device/...: the LUN's own directory, .../H:C:T:L/block/sdc up two. */
        if (g_str_has_prefix(attr, "device/")) {
                *strrchr(disk, '/') = '\0';
                *strrchr(disk, '/') = '\0';
                attr += strlen("device/");
        }
        path = g_build_filename(disk, attr, NULL);
        /* O_TRUNC: a testbed file is a regular one (sysfs takes each write whole). */
        fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
        line = g_strdup_printf("%s\n", value);
        ck_assert_msg(fd >= 0, "cannot open %s: %m", path);
        ck_assert_int_eq(write(fd, line, strlen(line)), (ssize_t) strlen(line));
        ck_assert_int_eq(close(fd), 0);
        if (strcmp(attr, "timeout") == 0) {
                g_autofree char *ms = g_strdup_printf("%s000", value);

                neighbour_write("queue/io_timeout", ms);
        }
}

/* The neighbour's write, then (with an event) the change event its rule runs on; n-th time:
 * waits until hvtuned's repair of it is over (its report ends the pass). */
static void neighbour_round(const struct hv_run *run, const char *attr, const char *theirs, const char *ours,
                            bool event, unsigned n) {
        g_autofree char *needle = g_strdup_printf("sdc %s: %s -> %s (drift repaired)\n", attr, theirs, ours);

        neighbour_write(attr, theirs);
        if (event)
                uevent_send_blocking(testbed_syspath("sdc"), "change", 1);
        hvtuned_wait_stderr(run, needle, n);
}

#define READAHEAD_RULE \
        "# the image's pin (runner-images #13938)\n" \
        "ACTION==\"add|change\", SUBSYSTEM==\"block\", KERNEL==\"sd*\", ATTR{queue/read_ahead_kb}=\"256\"\n"

/* Yield, the default: the eleventh repair within a minute is a contest; hvtuned says who,
 * leaves 256 to the rule, and writes it no more however often the rule runs. */
START_TEST(test_udev_neighbour_yielded) {
        char dir[] = "/tmp/hvtuned-metrics.XXXXXX";
        g_autofree char *prom = NULL, *text = NULL;
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *err, *m;

        host_put("rules-etc/60-readahead.rules", READAHEAD_RULE, -1);
        ck_assert_ptr_nonnull(mkdtemp(dir));
        prom = g_build_filename(dir, "hvtuned.prom", NULL);
        setenv("HVTUNED_TEST_METRICS_DIR", dir, 1);
        text = g_strdup_printf("queue = { scheduler = \"none\"; read_ahead_kb = 4096; };\nmetrics_file = \"%s\";\n",
                               prom);
        azure_start(&run, &tb, &config, text);
        ck_assert_str_eq(testbed_value("sdc", "queue/read_ahead_kb"), "4096");

        for (unsigned i = 1; i <= HVT_REPAIR_BURST + 1; i++)
                neighbour_round(&run, "queue/read_ahead_kb", "256", "4096", true, i);
        hvtuned_wait_notify(&run, "STATUS=4 storvsc disks on 2 controllers: 4 tuned, 0 failed; "
                                  "1 setting left to another writer" AZURE_HWQ);
        m = hvtuned_wait_metrics(prom, "hvtuned_attributes_contested{attribute=\"queue/read_ahead_kb\","
                                       "decision=\"yield\"} 1\n");
        assert_contains(m, "hvtuned_contests_total{attribute=\"queue/read_ahead_kb\",decision=\"yield\"} 1\n");
        assert_contains(m, "hvtuned_contests_total{attribute=\"queue/read_ahead_kb\",decision=\"insist\"} 0\n");
        assert_contains(m, "hvtuned_disks_repairs_paused 0\n");

        /* The rule goes on, on every change event: hvtuned no longer writes sdc's read-ahead,
         * and still repairs what it manages (the sentinel's scheduler on sdc and sdd). */
        for (unsigned i = 0; i < 20; i++) {
                neighbour_write("queue/read_ahead_kb", "256");
                uevent_send_blocking(testbed_syspath("sdc"), "change", 1);
        }
        testbed_sentinel(tb, "sdc");
        testbed_sentinel(tb, "sdd");
        ck_assert_str_eq(testbed_value("sdc", "queue/read_ahead_kb"), "256");
        /* The state dump says what is yielded, with what hvtuned wanted and the original. */
        ck_assert_int_eq(kill(run.pid, SIGUSR1), 0);
        hvtuned_wait_stderr(&run, "\nState: ", 1);

        err = hvtuned_stop(&run);
        assert_contains(err, "queue/read_ahead_kb original=128 desired=4096 current=256 last=yielded to another "
                             "writer\n");
        assert_contains(err, "State: 4 storvsc disks on 2 controllers: 4 tuned, 0 failed; 1 setting left to another "
                             "writer");
        assert_contains(err, "sdc queue/read_ahead_kb: set back to 256 11 times, each within 120 s of the last: "
                             "another program keeps writing it (suspect: udev rule "
                             "/etc/udev/rules.d/60-readahead.rules:2); hvtuned yields: it leaves the attribute to "
                             "that program on this disk, and at stop puts the original back only where its own "
                             "value is still found (the default; contested.queue.read_ahead_kb = \"insist\" keeps "
                             "it)\n");
        ck_assert_uint_eq(hv_count(err, "sdc queue/read_ahead_kb: 256 -> 4096 (drift repaired)\n"), HVT_REPAIR_BURST + 1);
        ck_assert_uint_eq(hv_count(err, "another program keeps writing it"), 1);
        ck_assert_ptr_null(strstr(err, "reverted"));
        /* At stop the rule's value stays: the original under it is not put back. */
        assert_contains(err, "sdc queue/read_ahead_kb: 256 (left: changed since hvtuned's write left 4096; the "
                             "original 128 is not put back)\n");
        ck_assert_str_eq(testbed_value("sdc", "queue/read_ahead_kb"), "256");
        /* Every other disk's read-ahead went back. */
        assert_contains(err, "sdd queue/read_ahead_kb: 4096 -> 128 (restored)\n");
        unsetenv("HVTUNED_TEST_METRICS_DIR");
        ck_assert_int_eq(rmdir(dir), 0);  /* the metrics file went at stop */
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* A yield lasts while the configuration says the same of it: a reload of the same file leaves
 * it to the rule, one that asks for another value takes it back (a tune, not a repair). */
START_TEST(test_yield_ends_on_reload) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *err;

        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; read_ahead_kb = 4096; };\n");
        for (unsigned i = 1; i <= HVT_REPAIR_BURST + 1; i++)
                neighbour_round(&run, "queue/read_ahead_kb", "256", "4096", true, i);
        hvtuned_wait_notify(&run, "1 setting left to another writer");
        /* hvtuned's last repair is there until the rule runs again. */
        ck_assert_str_eq(testbed_value("sdc", "queue/read_ahead_kb"), "4096");
        neighbour_write("queue/read_ahead_kb", "256");
        uevent_send_blocking(testbed_syspath("sdc"), "change", 1);

        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "READY=1");
        testbed_sentinel(tb, "sdc");
        ck_assert_str_eq(testbed_value("sdc", "queue/read_ahead_kb"), "256");

        config_rewrite(config, "queue = { scheduler = \"none\"; read_ahead_kb = 8192; };\n");
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "READY=1");
        /* READY=1 ends the reload's passes, with their STATUS= in the same message. */
        ck_assert_ptr_null(strstr(run.status, "left to another writer"));
        testbed_wait_value("sdc", "queue/read_ahead_kb", "8192");

        err = hvtuned_stop(&run);
        assert_contains(err, "sdc queue/read_ahead_kb: 256 -> 8192 (applied)\n");
        ck_assert_uint_eq(hv_count(err, "sdc queue/read_ahead_kb: 256 -> 4096 (drift repaired)\n"), HVT_REPAIR_BURST + 1);
        /* Managed again: its original goes back. */
        assert_contains(err, "sdc queue/read_ahead_kb: 8192 -> 128 (restored)\n");
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* insist: the contest is told as well, and the disk pauses as before; the eleventh repair
 * is the last until the window ends. */
START_TEST(test_udev_neighbour_insisted) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *err;

        host_put("rules-usr-lib/README", "no rules here\n", -1);
        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; read_ahead_kb = 4096; };\n"
                                        "contested = { queue = { read_ahead_kb = \"insist\"; }; };\n");
        for (unsigned i = 1; i <= HVT_REPAIR_BURST + 1; i++)
                neighbour_round(&run, "queue/read_ahead_kb", "256", "4096", true, i);
        hvtuned_wait_notify(&run, "STATUS=4 storvsc disks on 2 controllers: 4 tuned, 0 failed; "
                                  "1 disk reverted too often, repairs paused" AZURE_HWQ);
        neighbour_write("queue/read_ahead_kb", "256");
        uevent_send_blocking(testbed_syspath("sdc"), "change", 1);
        testbed_sentinel(tb, "sdd");
        ck_assert_str_eq(testbed_value("sdc", "queue/read_ahead_kb"), "256");

        err = hvtuned_stop(&run);
        assert_contains(err, "sdc queue/read_ahead_kb: set back to 256 11 times, each within 120 s of the last: "
                             "another program keeps writing it (no suspect found); hvtuned insists: it goes on "
                             "repairing, pausing while the disk is past its repair budget "
                             "(contested.queue.read_ahead_kb = \"insist\")\n");
        assert_contains(err, "sdc: reverted 11 times within 60 s: something keeps changing it back; not repairing it for ");
        ck_assert_uint_eq(hv_count(err, "sdc queue/read_ahead_kb: 256 -> 4096 (drift repaired)\n"), HVT_REPAIR_BURST + 1);
        /* Still hvtuned's: its original goes back at stop. */
        assert_contains(err, "sdc queue/read_ahead_kb: 256 -> 128 (restored)\n");
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* WALinuxAgent's way: a write to the SCSI timeout without a uevent, found by the periodic
 * check (verify_interval = 1). The agent is a process of the made-up /proc. */
START_TEST(test_timer_neighbour_yielded) {
        static const char waagent[] = "python3\0-u\0/usr/sbin/waagent\0-daemon\0";
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *err;

        host_put("proc/1/cmdline", "/sbin/init\0", 11);
        host_put("proc/4242/cmdline", waagent, sizeof(waagent) - 1);
        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\ndevice = { timeout = 300; };\n"
                                        "verify_interval = 1;\n");
        for (unsigned i = 1; i <= HVT_REPAIR_BURST + 1; i++)
                neighbour_round(&run, "device/timeout", "240", "300", false, i);
        hvtuned_wait_notify(&run, "1 setting left to another writer");

        /* The agent writes on: three checks later nothing more was written. */
        neighbour_write("device/timeout", "240");
        usleep(3500 * 1000);
        ck_assert_str_eq(testbed_value("sdc", "device/timeout"), "240");

        err = hvtuned_stop(&run);
        assert_contains(err, "sdc device/timeout: set back to 240 11 times, each within 60 s of the last: another "
                             "program keeps writing it (suspect: WALinuxAgent (pid 4242)); hvtuned yields");
        ck_assert_uint_eq(hv_count(err, "sdc device/timeout: 240 -> 300 (drift repaired)\n"), HVT_REPAIR_BURST + 1);
        assert_contains(err, "sdc device/timeout: 240 (left: changed since hvtuned's write left 300; the original 180 "
                             "is not put back)\n");
        assert_contains(err, "sdc queue/io_timeout: 240000 (left: changed since hvtuned's write left 300000; the "
                             "original 180000 is not put back)\n");
        ck_assert_str_eq(testbed_value("sdc", "device/timeout"), "240");
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* The kernel as a writer (hvtuned(8), "The kernel as a writer"): what it puts back itself
 * when it re-applies a disk's limits is repaired under its own MESSAGE_ID, however often,
 * and never makes a contest or a pause. More rounds than a neighbour needs to be yielded. */
#define KERNEL_ROUNDS (HVT_REPAIR_BURST + 5)

static const char *metrics_dir(char dir[static 32]) {
        strcpy(dir, "/tmp/hvtuned-metrics.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dir));
        setenv("HVTUNED_TEST_METRICS_DIR", dir, 1);
        return dir;
}

static void metrics_dir_done(const char *dir) {
        unsetenv("HVTUNED_TEST_METRICS_DIR");
        ck_assert_int_eq(rmdir(dir), 0);
}

/* An accelerator namespace revalidated (a namespace attached beside it, a controller reset):
 * 6.1's NVMe driver sets twice its 32 MiB optimal I/O size again, 65536, with no uevent for
 * it; the test sends one so that hvtuned looks. */
START_TEST(test_kernel_nvme_revalidated) {
        char dir[32];
        g_autofree char *prom = g_build_filename(metrics_dir(dir), "hvtuned.prom", NULL);
        g_autofree char *text = g_strdup_printf("queue = { read_ahead_kb = 128; };\nmetrics_file = \"%s\";\n", prom);
        UMockdevTestbed *tb = testbed_load("azure-v6");
        g_autofree char *counted = g_strdup_printf("hvtuned_drift_repairs_by_writer_total{writer=\"kernel\"} %u\n",
                                                   KERNEL_ROUNDS);
        char *config = config_write(text), *err, *m;
        struct hv_run run;

        ck_assert_str_eq(testbed_read("nvme0n2", "queue/optimal_io_size"), "33554432\n");
        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });
        testbed_wait_value("nvme0n2", "queue/read_ahead_kb", "128");
        for (unsigned i = 1; i <= KERNEL_ROUNDS; i++) {
                testbed_drift(tb, "nvme0n2", "queue/read_ahead_kb", "65536\n");
                uevent_send_blocking(testbed_syspath("nvme0n2"), "change", 1);
                hvtuned_wait_stderr(&run, "nvme0n2 queue/read_ahead_kb: 65536 -> 128 (drift repaired: the kernel "
                                          "re-applied its own value)\n", i);
        }
        m = hvtuned_wait_metrics(prom, counted);
        assert_contains(m, "hvtuned_drift_repairs_by_writer_total{writer=\"other\"} 0\n");
        assert_contains(m, "hvtuned_disks_repairs_paused 0\n");
        ck_assert_ptr_null(strstr(m, "hvtuned_contests_total"));
        /* Not paused: the next one is repaired at once too. */
        testbed_sentinel_value(tb, "nvme0n2", "queue/read_ahead_kb", "65536\n", "128");
        err = hvtuned_stop(&run);
        ck_assert_ptr_null(strstr(err, "another program keeps writing it"));
        ck_assert_ptr_null(strstr(err, "reverted"));
        ck_assert_ptr_null(strstr(err, "65536 -> 128 (drift repaired)\n"));
        assert_contains(err, "nvme0n2 queue/read_ahead_kb: 128 -> 65536 (restored)\n");
        metrics_dir_done(dir);
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* A store of sdc's max_sectors_kb through the kernel's emulation (tests/emulate/sysfs-kernel.c
 * takes openat(2), as hvtuned opens; neighbour_write()'s open(2) is a plain file's): the
 * limits are committed as $HVTUNED_TEST_KERNEL does it, read-ahead with them. */
static void commit_limits(const char *max_sectors_kb) {
        g_autofree char *path = g_build_filename(testbed_syspath("sdc"), "queue/max_sectors_kb", NULL);
        int fd = openat(AT_FDCWD, path, O_WRONLY | O_CLOEXEC);

        ck_assert_msg(fd >= 0, "cannot open %s: %m", path);
        ck_assert_int_eq(write(fd, max_sectors_kb, strlen(max_sectors_kb)), (ssize_t) strlen(max_sectors_kb));
        ck_assert_int_eq(close(fd), 0);
}

/* A storvsc disk's limits committed (a SCSI rescan, here a max_sectors_kb write: the same
 * blk_apply_bdi_limits()), no neighbour anywhere: 6.12 raises read-ahead to its 128 KiB floor
 * (hvtuned wants 64), 7.3 to twice max_sectors_kb (rotational, no optimal size). */
static const struct {
        const char *kernel, *want, *reapplied;
} limits_cases[] = {
        { "6.12", "64", "128" },
        { "7.3", "128", "4096" },
};

START_TEST(test_kernel_limits_commit) {
        char dir[32];
        g_autofree char *prom = g_build_filename(metrics_dir(dir), "hvtuned.prom", NULL);
        g_autofree char *text = g_strdup_printf("queue = { read_ahead_kb = %s; };\nmetrics_file = \"%s\";\n",
                                                limits_cases[_i].want, prom);
        g_autofree char *needle = g_strdup_printf("sdc queue/read_ahead_kb: %s -> %s (drift repaired: the kernel "
                                                  "re-applied its own value)\n", limits_cases[_i].reapplied,
                                                  limits_cases[_i].want);
        g_autofree char *counted = g_strdup_printf("hvtuned_drift_repairs_by_writer_total{writer=\"kernel\"} %u\n",
                                                   KERNEL_ROUNDS);
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *err, *m;

        ck_assert_int_eq(setenv("HVTUNED_TEST_KERNEL", limits_cases[_i].kernel, 1), 0);
        host_put("rules-usr-lib/README", "no rules here\n", -1);
        azure_start(&run, &tb, &config, text);
        testbed_wait_value("sdc", "queue/read_ahead_kb", limits_cases[_i].want);
        for (unsigned i = 1; i <= KERNEL_ROUNDS; i++) {
                /* Through the emulation, which commits the limits as that kernel does. */
                commit_limits("2048");
                ck_assert_str_eq(testbed_value("sdc", "queue/read_ahead_kb"), limits_cases[_i].reapplied);
                uevent_send_blocking(testbed_syspath("sdc"), "change", 1);
                hvtuned_wait_stderr(&run, needle, i);
        }
        m = hvtuned_wait_metrics(prom, counted);
        assert_contains(m, "hvtuned_drift_repairs_by_writer_total{writer=\"other\"} 0\n");
        assert_contains(m, "hvtuned_disks_repairs_paused 0\n");
        ck_assert_ptr_null(strstr(m, "hvtuned_contests_total"));
        err = hvtuned_stop(&run);
        ck_assert_ptr_null(strstr(err, "another program keeps writing it"));
        ck_assert_ptr_null(strstr(err, "reverted"));
        metrics_dir_done(dir);
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* 7.3's rule and TuneD's readahead=>4096 give one value on a rotational disk whose
 * max_sectors_kb is 2048; with no event that could have re-applied the limits, a live tuned
 * makes it TuneD's, a drift like any (contested as any, in the end); without one, or with one
 * on hvtuned's own profile (whose disk plugin is off), it is the kernel's. */
START_TEST(test_kernel_or_tuned) {
        static const char tuned[] = "/usr/bin/python3\0-Es\0/usr/sbin/tuned\0-l\0-P\0";
        char dir[32];
        g_autofree char *prom = g_build_filename(metrics_dir(dir), "hvtuned.prom", NULL);
        g_autofree char *text = g_strdup_printf("queue = { read_ahead_kb = 128; };\nmetrics_file = \"%s\";\n", prom);
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *err, *m;

        ck_assert_int_eq(setenv("HVTUNED_TEST_KERNEL", "7.3", 1), 0);
        host_put("run-tuned/tuned.pid", "812\n", -1);
        host_put("proc/812/cmdline", tuned, sizeof(tuned) - 1);
        tb = testbed_load("azure-gen2");
        testbed_drift(tb, "sdc", "queue/max_sectors_kb", "2048\n");
        config = config_write(text);
        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });
        testbed_wait_value("sdc", "queue/read_ahead_kb", "128");

        /* TuneD alive: its write. */
        testbed_sentinel_value(tb, "sdc", "queue/read_ahead_kb", "4096\n", "128");
        hvtuned_wait_stderr(&run, "sdc queue/read_ahead_kb: 4096 -> 128 (drift repaired)\n", 1);
        m = hvtuned_wait_metrics(prom, "hvtuned_drift_repairs_by_writer_total{writer=\"other\"} 1\n");
        assert_contains(m, "hvtuned_drift_repairs_by_writer_total{writer=\"kernel\"} 0\n");

        /* TuneD gone (its pid file with it): the kernel's. */
        host_put("run-tuned/tuned.pid", "", 0);
        testbed_sentinel_value(tb, "sdc", "queue/read_ahead_kb", "4096\n", "128");
        hvtuned_wait_stderr(&run, "sdc queue/read_ahead_kb: 4096 -> 128 (drift repaired: the kernel re-applied its "
                                  "own value)\n", 1);
        m = hvtuned_wait_metrics(prom, "hvtuned_drift_repairs_by_writer_total{writer=\"kernel\"} 1\n");
        assert_contains(m, "hvtuned_drift_repairs_by_writer_total{writer=\"other\"} 1\n");
        assert_contains(m, "hvtuned_drift_repairs_total 2\n");

        /* TuneD back, on hvtuned's own profile (its disk plugin off): a silent value the rule
         * gives, as a rescan's, is the kernel's. */
        host_put("run-tuned/tuned.pid", "812\n", -1);
        host_put("etc-tuned/active_profile", "hvtuned-virtual-guest\n", -1);
        testbed_sentinel_value(tb, "sdc", "queue/read_ahead_kb", "4096\n", "128");
        m = hvtuned_wait_metrics(prom, "hvtuned_drift_repairs_by_writer_total{writer=\"kernel\"} 2\n");
        assert_contains(m, "hvtuned_drift_repairs_by_writer_total{writer=\"other\"} 1\n");

        /* A value no rule gives is another writer's, kernel or not. */
        testbed_sentinel_value(tb, "sdc", "queue/read_ahead_kb", "8192\n", "128");
        hvtuned_wait_metrics(prom, "hvtuned_drift_repairs_by_writer_total{writer=\"other\"} 2\n");
        err = hvtuned_stop(&run);
        assert_contains(err, "sdc queue/read_ahead_kb: 8192 -> 128 (drift repaired)\n");
        metrics_dir_done(dir);
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* A silent rescan on 7.3 puts back both the device's max_sectors_kb and the read-ahead its rule
 * gives from it (2 x 2048): the pass repairs both, and the read-ahead is the kernel's by the
 * max_sectors_kb the pass found, not by hvtuned's 1024 it left. */
START_TEST(test_rescan_max_sectors) {
        char dir[32];
        g_autofree char *prom = g_build_filename(metrics_dir(dir), "hvtuned.prom", NULL);
        g_autofree char *text = g_strdup_printf("queue = { read_ahead_kb = 128; max_sectors_kb = 1024; };\n"
                                                "metrics_file = \"%s\";\n", prom);
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *m;

        ck_assert_int_eq(setenv("HVTUNED_TEST_KERNEL", "7.3", 1), 0);
        host_put("proc/1/cmdline", "/sbin/init", -1);
        tb = testbed_load("azure-gen2");
        testbed_drift(tb, "sdc", "queue/max_sectors_kb", "2048\n");
        config = config_write(text);
        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });
        testbed_wait_value("sdc", "queue/max_sectors_kb", "1024");
        testbed_wait_value("sdc", "queue/read_ahead_kb", "128");

        testbed_drift(tb, "sdc", "queue/max_sectors_kb", "2048\n");
        testbed_sentinel_value(tb, "sdc", "queue/read_ahead_kb", "4096\n", "128");
        testbed_wait_value("sdc", "queue/max_sectors_kb", "1024");
        m = hvtuned_wait_metrics(prom, "hvtuned_drift_repairs_by_writer_total{writer=\"kernel\"} 1\n");
        assert_contains(m, "hvtuned_drift_repairs_by_writer_total{writer=\"other\"} 1\n");
        (void) hvtuned_stop(&run);
        metrics_dir_done(dir);
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* Until n entries with MESSAGE_ID id are in the journal (20 s at most). */
static GPtrArray *journal_wait(const char *id, unsigned n) {
        for (int waited = 0;; waited += 50) {
                GPtrArray *found = journal_find(0, "MESSAGE_ID", id);

                if (found->len >= n)
                        return found;
                g_ptr_array_unref(found);
                ck_assert_msg(waited < 20000, "fewer than %u entries %s in the journal", n, id);
                usleep(50 * 1000);
        }
}

/* As journald stores it: the contest's entry names the disk, the attribute, both values, the
 * decision and the suspect, under its MESSAGE_ID (the catalog's). */
START_TEST(test_contest_journal) {
        GPtrArray *found;
        struct hv_run run;
        UMockdevTestbed *tb;
        GHashTable *e;
        char *config;

        host_put("rules-usr-lib/80-azure-disk.rules", READAHEAD_RULE, -1);
        journal_start();
        azure_start(&run, &tb, &config, "queue = { read_ahead_kb = 4096; };\n");
        for (unsigned i = 1; i <= HVT_REPAIR_BURST + 1; i++) {
                neighbour_write("queue/read_ahead_kb", "256");
                uevent_send_blocking(testbed_syspath("sdc"), "change", 1);
                found = journal_wait(HVT_MESSAGE_DRIFT_REPAIRED, i);
                ck_assert_str_eq(journal_field(found->pdata[i - 1], "HVTUNED_WRITER"), "other");
                g_ptr_array_unref(found);
        }
        found = journal_wait(HVT_MESSAGE_CONTESTED, 1);
        ck_assert_uint_eq(found->len, 1);
        e = found->pdata[0];
        ck_assert_str_eq(journal_field(e, "HVTUNED_DEVICE"), "sdc");
        ck_assert_str_eq(journal_field(e, "HVTUNED_CONTROLLER"), "{f8b3781b-1e82-4818-a1c3-63d806ec15bb}");
        ck_assert_str_eq(journal_field(e, "HVTUNED_ATTR"), "queue/read_ahead_kb");
        ck_assert_str_eq(journal_field(e, "HVTUNED_FROM"), "256");
        ck_assert_str_eq(journal_field(e, "HVTUNED_TO"), "4096");
        ck_assert_str_eq(journal_field(e, "HVTUNED_REPAIRS"), "11");
        ck_assert_str_eq(journal_field(e, "HVTUNED_DECISION"), "yield");
        ck_assert_str_eq(journal_field(e, "HVTUNED_SUSPECT"), "udev rule /usr/lib/udev/rules.d/80-azure-disk.rules:2");
        ck_assert_str_eq(journal_field(e, "PRIORITY"), "4");
        g_ptr_array_unref(found);
        hvtuned_stop(&run);
        journal_stop();
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* The kernel's repair as journald stores it: its own MESSAGE_ID (the catalog's), a repair
 * whose writer is the kernel, at info level. */
START_TEST(test_kernel_journal) {
        GPtrArray *found;
        struct hv_run run;
        UMockdevTestbed *tb;
        GHashTable *e;
        char *config;

        ck_assert_int_eq(setenv("HVTUNED_TEST_KERNEL", "7.3", 1), 0);
        host_put("rules-usr-lib/README", "no rules here\n", -1);
        journal_start();
        azure_start(&run, &tb, &config, "queue = { read_ahead_kb = 128; };\n");
        commit_limits("2048");
        uevent_send_blocking(testbed_syspath("sdc"), "change", 1);
        found = journal_wait(HVT_MESSAGE_KERNEL_REAPPLIED, 1);
        ck_assert_uint_eq(found->len, 1);
        e = found->pdata[0];
        ck_assert_str_eq(journal_field(e, "HVTUNED_DEVICE"), "sdc");
        ck_assert_str_eq(journal_field(e, "HVTUNED_ATTR"), "queue/read_ahead_kb");
        ck_assert_str_eq(journal_field(e, "HVTUNED_FROM"), "4096");
        ck_assert_str_eq(journal_field(e, "HVTUNED_TO"), "128");
        ck_assert_str_eq(journal_field(e, "HVTUNED_ACTION"), "repair");
        ck_assert_str_eq(journal_field(e, "HVTUNED_WRITER"), "kernel");
        ck_assert_str_eq(journal_field(e, "PRIORITY"), "6");
        g_ptr_array_unref(found);
        found = journal_find(0, "MESSAGE_ID", HVT_MESSAGE_DRIFT_REPAIRED);
        ck_assert_uint_eq(found->len, 0);
        g_ptr_array_unref(found);
        hvtuned_stop(&run);
        journal_stop();
        unlink(config);
        g_object_unref(tb);
}
END_TEST

int main(void) {
        Suite *s = suite_create("neighbours");
        TCase *tc = tcase_create("azure");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_udev_neighbour_yielded);
        tcase_add_test(tc, test_udev_neighbour_insisted);
        tcase_add_test(tc, test_yield_ends_on_reload);
        tcase_add_test(tc, test_timer_neighbour_yielded);
        tcase_add_test(tc, test_kernel_nvme_revalidated);
        tcase_add_loop_test(tc, test_kernel_limits_commit, 0, sizeof(limits_cases) / sizeof(limits_cases[0]));
        tcase_add_test(tc, test_kernel_or_tuned);
        tcase_add_test(tc, test_rescan_max_sectors);
        /* The journal's namespace needs root (test-faults skips without it too). */
        if (geteuid() == 0) {
                tcase_add_test(tc, test_contest_journal);
                tcase_add_test(tc, test_kernel_journal);
        } else
                printf("SKIP: test_contest_journal and test_kernel_journal need root for a private mount namespace\n");
        suite_add_tcase(s, tc);
        return test_run(s);
}
