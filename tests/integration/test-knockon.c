/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the tests of the real hvtuned on a testbed playing a named kernel
 * ($HVTUNED_TEST_KERNEL, tests/emulate/sysfs-kernel.c; its couplings are
 * tests/kernel/kernel-answers.h): what a write of hvtuned's changes elsewhere (a knock-on) is
 * put back with its cause, on stop and on a reload that drops it, unless someone changed it
 * since; 7.3's EBUSY from a trylock retried, then reported with what depends on it held; and
 * the active scheduler's name never written again (on 6.18 and 7.3 "none" again resets
 * nr_requests). */
#include <check.h>
#include <glib.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "testutil.h"
#include "writes.h"

/* The run: max_sectors_kb managed, read_ahead_kb not; the operator left 64. */
#define MAX_SECTORS "queue = { max_sectors_kb = 256; };\n"

static UMockdevTestbed *testbed_as(const char *kernel) {
        UMockdevTestbed *tb;

        ck_assert_int_eq(setenv("HVTUNED_TEST_KERNEL", kernel, 1), 0);
        tb = testbed_load("azure-gen2");
        /* A rotational disk without an optimal I/O size, as the storvsc stand-in is. */
        umockdev_testbed_set_attribute(tb, testbed_syspath("sda"), "queue/rotational", "1");
        umockdev_testbed_set_attribute(tb, testbed_syspath("sda"), "queue/optimal_io_size", "0");
        umockdev_testbed_set_attribute(tb, testbed_syspath("sda"), "queue/read_ahead_kb", "64");
        return tb;
}

/* The attribute writes to path's attribute in the write log so far (emptied when hvtuned is
 * reaped): "write <path> <bytes>" lines. */
static unsigned writes_to(const char *sysname, const char *rel) {
        char *log = NULL, **lines, *needle = g_strdup_printf("/%s/%s ", sysname, rel);
        unsigned n = 0;

        if (!g_file_get_contents(writes_log(), &log, NULL, NULL))
                log = g_strdup("");
        lines = g_strsplit(log, "\n", -1);
        for (char **l = lines; *l; l++)
                if (g_str_has_prefix(*l, "write ") && strstr(*l, needle))
                        n++;
        g_strfreev(lines);
        g_free(needle);
        g_free(log);
        return n;
}

/* What the write of max_sectors_kb 256 does to read-ahead 64 on each kernel. */
static const struct {
        const char *kernel;
        const char *read_ahead;
} raised[] = { { "6.12", "128" }, { "7.3", "512" } };

/* Told as a knock-on, recorded, and put back on stop: every attribute as the operator left it
 * (on 7.3 the restore of max_sectors_kb raises read-ahead again, to 2560). */
START_TEST(test_knock_on_restored_on_stop) {
        UMockdevTestbed *tb = testbed_as(raised[_i].kernel);
        char *config = config_write(MAX_SECTORS), *err, *line;
        GHashTable *before = snapshot_take();
        struct hv_run run;

        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });
        ck_assert_str_eq(testbed_value("sda", "queue/max_sectors_kb"), "256");
        ck_assert_str_eq(testbed_value("sda", "queue/read_ahead_kb"), raised[_i].read_ahead);
        err = hvtuned_stop(&run);
        line = g_strdup_printf("sda queue/read_ahead_kb: 64 -> %s (knock-on: changed by the write of "
                               "queue/max_sectors_kb; the original goes back with it)\n", raised[_i].read_ahead);
        assert_contains(err, hv_keep(line));
        ck_assert_str_eq(testbed_value("sda", "queue/max_sectors_kb"), "1280");
        ck_assert_str_eq(testbed_value("sda", "queue/read_ahead_kb"), "64");
        ck_assert_str_eq(snapshot_diff_values(before, snapshot_take()), "");
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* A reload that drops max_sectors_kb puts read-ahead back with it, at once. */
START_TEST(test_knock_on_restored_on_reload) {
        UMockdevTestbed *tb = testbed_as("7.3");
        char *config = config_write(MAX_SECTORS);
        GHashTable *before = snapshot_take();
        struct hv_run run;

        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });
        ck_assert_str_eq(testbed_value("sda", "queue/read_ahead_kb"), "512");
        config_rewrite(config, "queue = { rq_affinity = 1; };\n");
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "READY=1");
        ck_assert_str_eq(testbed_value("sda", "queue/max_sectors_kb"), "1280");
        ck_assert_str_eq(testbed_value("sda", "queue/read_ahead_kb"), "64");
        ck_assert_str_eq(snapshot_diff_values(before, snapshot_take()), "");
        hvtuned_stop(&run);
        ck_assert_str_eq(testbed_value("sda", "queue/read_ahead_kb"), "64");
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* The operator set read-ahead after hvtuned's write: theirs stays, and hvtuned says why it
 * did not put 64 back. */
START_TEST(test_knock_on_changed_since_left) {
        UMockdevTestbed *tb = testbed_as("6.12");
        char *config = config_write(MAX_SECTORS), *err;
        struct hv_run run;

        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });
        ck_assert_str_eq(testbed_value("sda", "queue/read_ahead_kb"), "128");
        umockdev_testbed_set_attribute(tb, testbed_syspath("sda"), "queue/read_ahead_kb", "300");
        err = hvtuned_stop(&run);
        assert_contains(err, "sda queue/read_ahead_kb: 300 (left: changed since hvtuned's write left 128; "
                        "the original 64 is not put back)\n");
        ck_assert_str_eq(testbed_value("sda", "queue/max_sectors_kb"), "1280");
        ck_assert_str_eq(testbed_value("sda", "queue/read_ahead_kb"), "300");
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* 7.3's trylock, by how many of sdb's scheduler writes are busy: 3, retried at once within
 * the pass, lands; 4 (every try of the pass) is reported, and nr_requests, which would land
 * under whichever elevator wins, is held, and the pass runs again 250 ms later, where both
 * land; busy for good, the pass runs 6 more times (4 tries each, nothing else written to sdb),
 * then hvtuned says it gave up. */
static const struct {
        const char *busy;
        unsigned scheduler_writes, retries;
        bool failed, lands;
} busy_cases[] = {
        { "sdb:3", 4, 0, false, true },
        { "sdb:4", 5, 1, true, true },
        { "sdb:1000", 4 * 7, 6, true, false },
};

START_TEST(test_busy_retried_then_held) {
        UMockdevTestbed *tb = testbed_as("7.3");
        char dir[] = "/tmp/hvtuned-metrics.XXXXXX", *config, *err;
        g_autofree char *prom = NULL, *text = NULL, *retries = NULL;
        struct hv_run run;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        prom = g_build_filename(dir, "hvtuned.prom", NULL);
        text = g_strdup_printf("queue = { scheduler = \"mq-deadline\"; nr_requests = 64; };\nmetrics_file = \"%s\";\n",
                               prom);
        config = config_write(text);
        setenv("HVTUNED_TEST_METRICS_DIR", dir, 1);
        ck_assert_int_eq(setenv("HVTUNED_TEST_KERNEL_BUSY", busy_cases[_i].busy, 1), 0);
        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });
        unsetenv("HVTUNED_TEST_KERNEL_BUSY");
        if (busy_cases[_i].lands)
                hvtuned_wait_stderr(&run, "sdb queue/nr_requests: ", busy_cases[_i].failed ? 2 : 1);
        else
                hvtuned_wait_stderr_timeout(&run, "sdb: still busy after 6 more passes over 15750 ms", 1, 40000);
        ck_assert_uint_eq(writes_to("sdb", "queue/scheduler"), busy_cases[_i].scheduler_writes);
        ck_assert_str_eq(testbed_value("sdb", "queue/scheduler"), busy_cases[_i].lands ? "mq-deadline" : "none");
        ck_assert_uint_eq(writes_to("sdb", "queue/nr_requests"), busy_cases[_i].lands ? 1 : 0);
        if (busy_cases[_i].lands)
                ck_assert_str_eq(testbed_value("sdb", "queue/nr_requests"), "64");
        /* Each pass run again is counted for Prometheus. */
        retries = g_strdup_printf("hvtuned_busy_retries_total %u\n", busy_cases[_i].retries);
        hvtuned_wait_metrics(prom, retries);
        err = hvtuned_stop(&run);
        unsetenv("HVTUNED_TEST_METRICS_DIR");
        ck_assert_int_eq(rmdir(dir), 0);
        if (busy_cases[_i].failed) {
                assert_contains(err, "sdb queue/scheduler: none -> mq-deadline (failed: Device or resource busy)\n");
                assert_contains(err, "sdb queue/nr_requests: 2534 -> 64 (not written: the write of queue/scheduler "
                                "it depends on failed: Device or resource busy)\n");
                assert_contains(err, "sdb: busy, another change of its controller's queues is under way: "
                                "the pass runs again in 250 ms (try 1 of 6)\n");
        } else
                ck_assert_ptr_null(strstr(err, "busy"));
        if (busy_cases[_i].lands)
                assert_contains(err, "sdb queue/scheduler: none -> mq-deadline (applied)\n");
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* Busy at stop (the tune pass's two writes to sdb let through): no later pass will come, so
 * the stop restores sdb again after 50 ms, doubling, 5 times. Busy 4 times (the first
 * round), the second round puts it back; busy for good, sdb stays, and so does its record,
 * for a later run. */
START_TEST(test_busy_at_stop) {
        UMockdevTestbed *tb = testbed_as("7.3");
        char *config = config_write("queue = { scheduler = \"mq-deadline\"; nr_requests = 64; };\n"), *err, *record;
        bool for_good = _i == 1;
        struct hv_run run;

        ck_assert_int_eq(setenv("HVTUNED_TEST_KERNEL_BUSY", for_good ? "sdb:1000+2" : "sdb:4+2", 1), 0);
        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });
        unsetenv("HVTUNED_TEST_KERNEL_BUSY");
        ck_assert_str_eq(testbed_value("sdb", "queue/nr_requests"), "64");
        err = hvtuned_stop(&run);
        assert_contains(err, "sdb queue/scheduler: mq-deadline -> none (restore failed: Device or resource busy)\n");
        record = g_build_filename(runtime_dir(), "sdb", NULL);
        if (for_good) {
                ck_assert_str_eq(testbed_value("sdb", "queue/scheduler"), "mq-deadline");
                ck_assert_msg(g_file_test(record, G_FILE_TEST_EXISTS), "no record of sdb's originals kept");
        } else {
                assert_contains(err, "sdb queue/scheduler: mq-deadline -> none (restored)\n");
                ck_assert_str_eq(testbed_value("sdb", "queue/scheduler"), "none");
                ck_assert_str_eq(testbed_value("sdb", "queue/nr_requests"), "2534");
                ck_assert_msg(!g_file_test(record, G_FILE_TEST_EXISTS), "sdb's record left after its restore");
        }
        g_free(record);
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* On 7.3 (and 6.18) "none" while none is active switches again and resets nr_requests: a
 * scheduler already what the configuration says is never written. */
START_TEST(test_active_scheduler_not_written) {
        UMockdevTestbed *tb = testbed_as("7.3");
        char *config = config_write("queue = { scheduler = \"none\"; };\n");
        struct hv_run run;

        umockdev_testbed_set_attribute(tb, testbed_syspath("sdb"), "queue/nr_requests", "100");
        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });
        testbed_sentinel(tb, "sdd");
        ck_assert_uint_eq(writes_to("sdb", "queue/scheduler"), 0);
        ck_assert_str_eq(testbed_value("sdb", "queue/nr_requests"), "100");
        hvtuned_stop(&run);
        ck_assert_str_eq(testbed_value("sdb", "queue/nr_requests"), "100");
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* The scheduler's restore resets nr_requests, which the operator changed since hvtuned's
 * switch: theirs is left, so it goes back after the reset, and is reported as left. */
START_TEST(test_left_survives_the_scheduler_restore) {
        UMockdevTestbed *tb = testbed_as("7.3");
        char *config = config_write("queue = { scheduler = \"none\"; };\n"), *err;
        struct hv_run run;

        umockdev_testbed_set_attribute(tb, testbed_syspath("sda"), "queue/nr_requests", "200");
        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });
        ck_assert_str_eq(testbed_value("sda", "queue/nr_requests"), "2534");
        umockdev_testbed_set_attribute(tb, testbed_syspath("sda"), "queue/nr_requests", "500");
        err = hvtuned_stop(&run);
        assert_contains(err, "sda queue/nr_requests: 500 (left: changed since hvtuned's write left 2534; "
                        "the original 200 is not put back)\n");
        ck_assert_str_eq(testbed_value("sda", "queue/scheduler"), "mq-deadline");
        ck_assert_str_eq(testbed_value("sda", "queue/nr_requests"), "500");
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* read_ahead_kb dropped from the configuration while max_sectors_kb stays: its original goes
 * back at once (the operator's value, not what max_sectors_kb's write would have left), and
 * stays when max_sectors_kb is restored on stop, although that restore raises read-ahead. */
START_TEST(test_managed_knock_on_dropped) {
        UMockdevTestbed *tb = testbed_as("7.3");
        char *config = config_write("queue = { max_sectors_kb = 256; read_ahead_kb = 1024; };\n");
        GHashTable *before = snapshot_take();
        struct hv_run run;

        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });
        ck_assert_str_eq(testbed_value("sda", "queue/read_ahead_kb"), "1024");
        config_rewrite(config, MAX_SECTORS);
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "READY=1");
        ck_assert_str_eq(testbed_value("sda", "queue/max_sectors_kb"), "256");
        ck_assert_str_eq(testbed_value("sda", "queue/read_ahead_kb"), "64");
        hvtuned_stop(&run);
        ck_assert_str_eq(testbed_value("sda", "queue/read_ahead_kb"), "64");
        ck_assert_str_eq(snapshot_diff_values(before, snapshot_take()), "");
        unlink(config);
        g_object_unref(tb);
}
END_TEST

int main(void) {
        Suite *s = suite_create("knockon");
        TCase *tc = tcase_create("emulated-kernel");

        tcase_set_timeout(tc, 240);
        tcase_add_loop_test(tc, test_knock_on_restored_on_stop, 0, G_N_ELEMENTS(raised));
        tcase_add_test(tc, test_knock_on_restored_on_reload);
        tcase_add_test(tc, test_knock_on_changed_since_left);
        tcase_add_loop_test(tc, test_busy_retried_then_held, 0, G_N_ELEMENTS(busy_cases));
        tcase_add_loop_test(tc, test_busy_at_stop, 0, 2);
        tcase_add_test(tc, test_active_scheduler_not_written);
        tcase_add_test(tc, test_left_survives_the_scheduler_restore);
        tcase_add_test(tc, test_managed_knock_on_dropped);
        suite_add_tcase(s, tc);
        return test_run(s);
}
