/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Drift on the Azure testbed, with a NOTIFY_SOCKET the test owns and writes counted with
 * inotify: change floods that cost only reads, a value the kernel clamps that is not written
 * again, the repair budget and the pause it ends in, verify_interval (a minute by default, no
 * wakeup at all at 0), and the re-check of a controller's disks after its events. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "track.h"
#include "harness.h"
#include "uevent.h"
#include "testutil.h"

START_TEST(test_change_flood_costs_reads) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *sdb, *err;
        unsigned statuses = 0;
        int w;

        /* -v: every pass logs its unchanged attributes, which shows each event was handled. */
        /* verify_interval = 0: every pass counted below is an event's. */
        azure_start_with(&run, &tb, &config, "queue = { scheduler = \"none\"; nr_requests = 128; };\n"
                                       "device = { timeout = 300; };\nverify_interval = 0;\n", "-v");
        sdb = testbed_syspath("sdb");
        w = watch_writes();
        /* 60-block.rules' watch makes a change event of every close after a write. */
        uevent_send_blocking(sdb, "change", 10000);
        testbed_sentinel(tb, "sda");
        /* The sentinel's repair is the only write, with what it costs: the switch resets
         * nr_requests (the kernel's write, here the shim's) and hvtuned puts 128 back, after
         * the scheduler the sentinel waits for. */
        testbed_wait_value("sda", "queue/nr_requests", "128");
        watched_writes_expect(w, "nr_requests\nnr_requests\nscheduler");
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

START_TEST(test_clamped_not_rewritten) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *err;
        int w;

        /* The kernel keeps read_ahead_kb in whole pages: 1001 becomes 1000, and stays. */
        azure_start_with(&run, &tb, &config, "queue = { read_ahead_kb = 1001; };\nrestore_on_stop = false;\n"
                                             "verify_interval = 0;\n", "-v");
        ck_assert_str_eq(testbed_value("sda", "queue/read_ahead_kb"), "1000");
        w = watch_writes();
        uevent_send_blocking(testbed_syspath("sda"), "change", 5);
        testbed_sentinel_value(tb, "sdb", "queue/read_ahead_kb", "8\n", "1000");
        watched_writes_expect(w, "read_ahead_kb");  /* the sentinel's repair, nothing for sda */
        err = hvtuned_stop_with(&run, SIGTERM);
        assert_contains(err, "sda queue/read_ahead_kb: 128 -> 1001 (clamped: the kernel kept 1000)\n");
        ck_assert_ptr_null(strstr(err, "sda queue/read_ahead_kb: 1000 -> 1001"));
        ck_assert_uint_eq(hv_count(err, "sda queue/read_ahead_kb: 1000 (unchanged: the kernel keeps it for 1001)\n"), 5);
        g_object_unref(tb);
}
END_TEST

/* sysname's scheduler reverted to bfq, and the n-th repair of it over: its report is the end
 * of the pass. Waiting for the value alone would let the next revert land inside the pass
 * (between hvtuned's write and its read-back), where it is no revert of a repaired disk. */
static void revert_repaired(const struct hv_run *run, UMockdevTestbed *tb, const char *sysname, unsigned n) {
        char *needle = g_strdup_printf("%s queue/scheduler: bfq -> none (drift repaired)\n", sysname);

        testbed_sentinel(tb, sysname);
        hvtuned_wait_stderr(run, needle, n);
        g_free(needle);
}

/* Fought over, the scheduler is repaired on, pausing at the budget (track.h). */
#define INSIST_SCHEDULER "contested = { queue = { scheduler = \"insist\"; }; };\n"

START_TEST(test_repair_budget) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *err;

        /* insist: the default would yield the scheduler of sdc for good (test-neighbours). */
        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\n" INSIST_SCHEDULER);
        /* Ten repairs in a minute are drift; the eleventh is a fight, and hvtuned stops. */
        for (unsigned i = 1; i <= HVT_REPAIR_BURST + 1; i++)
                revert_repaired(&run, tb, "sdc", i);
        hvtuned_wait_notify(&run, "STATUS=4 storvsc disks on 2 controllers: 4 tuned, 0 failed; "
                                  "1 disk reverted too often, repairs paused");
        testbed_drift(tb, "sdc", "queue/scheduler", "none mq-deadline kyber [bfq] \n");
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

        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\n" INSIST_SCHEDULER);
        /* sda's scheduler is changed by something that sends no event: the periodic check, a
         * minute by default, puts it back while this test waits out the window. */
        testbed_drift(tb, "sda", "queue/scheduler", "none [mq-deadline] kyber bfq \n");
        for (unsigned i = 1; i <= HVT_REPAIR_BURST + 1; i++) {
                revert_repaired(&run, tb, "sdc", i);
                revert_repaired(&run, tb, "sdd", i);
        }
        hvtuned_wait_notify(&run, "2 disks reverted too often, repairs paused");

        /* sdd goes while paused: its pause goes with it (no timer left to fire on it). */
        testbed_remove(tb, testbed_syspath("sdd"));
        hvtuned_wait_notify(&run, "STATUS=3 storvsc disks on 2 controllers: 3 tuned, 0 failed; "
                                  "1 disk reverted too often, repairs paused");

        /* sdc drifts once more while paused; no event will come, yet at the end of the
         * window hvtuned checks it and repairs it on its own. */
        testbed_drift(tb, "sdc", "queue/scheduler", "none mq-deadline kyber [bfq] \n");
        do
                hvtuned_wait_notify_timeout(&run, "STATUS=", (HVT_REPAIR_WINDOW_S + 10) * 1000);
        while (strcmp(run.status, "3 storvsc disks on 2 controllers: 3 tuned, 0 failed" AZURE_HWQ) != 0);
        ck_assert_str_eq(testbed_value("sdc", "queue/scheduler"), "none");
        testbed_wait_value_for("sda", "queue/scheduler", "none", 5000);
        err = hvtuned_stop(&run);
        ck_assert_uint_eq(hv_count(err, "sdc queue/scheduler: bfq -> none (drift repaired)\n"),
                          HVT_REPAIR_BURST + 2);
        assert_contains(err, "sda queue/scheduler: mq-deadline -> none (drift repaired)\n");
        g_object_unref(tb);
}
END_TEST

/* The syspath levels up from sysname's disk: 2 the LUN, 4 its SCSI host. */
static char *disk_up(const char *sysname, unsigned levels) {
        char *path = g_strdup(testbed_syspath(sysname));

        for (unsigned i = 0; i < levels; i++)
                *strrchr(path, '/') = '\0';
        return hv_keep(path);
}

/* A write with no event of the disk's own: read-ahead 8192 (no kernel's rule on storvsc gives
 * it, so its repair is another writer's) and the scheduler switched, as the kernel's
 * re-application of the limits may leave it. What puts it back is a sibling's or the
 * controller's event, whoever wrote it. */
static void silent_write(UMockdevTestbed *tb, const char *sysname) {
        testbed_drift(tb, sysname, "queue/read_ahead_kb", "8192\n");
        testbed_drift(tb, sysname, "queue/scheduler", "none [mq-deadline] kyber bfq \n");
}

static void assert_put_back(const char *sysname) {
        testbed_wait_value(sysname, "queue/read_ahead_kb", "4096");
        testbed_wait_value(sysname, "queue/scheduler", "none");
}

/* settle.h's HVT_SETTLE_USEC: a burst's last re-check comes this long after its last event. */
#define HVT_SETTLE_MS 1000

/* No periodic check: what puts a disk back is the event of its neighbour or controller. */
#define SIBLINGS_CONFIG "queue = { scheduler = \"none\"; read_ahead_kb = 4096; };\nverify_interval = 0;\n"

/* A LUN's add, remove or change, and its SCSI host's event, can mean the kernel re-applied
 * the limits of every disk of that controller: sdd, which gets no event, is put back after
 * sdc's LUN's, and after host1's. sda, on host0, is not touched. */
START_TEST(test_scsi_siblings) {
        static const char *const actions[] = { "change", "add", "remove" };
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *err;

        azure_start(&run, &tb, &config, SIBLINGS_CONFIG);
        for (size_t i = 0; i <= G_N_ELEMENTS(actions); i++) {
                silent_write(tb, "sdd");
                if (i < G_N_ELEMENTS(actions))
                        uevent_send_blocking(disk_up("sdc", 2), actions[i], 1);
                else
                        uevent_send_blocking(hv_keep(g_strconcat(disk_up("sdc", 4), "/scsi_host/host1", NULL)),
                                             "change", 1);
                assert_put_back("sdd");
                /* The burst's last re-check is over: the next event alone puts sdd back. */
                usleep((HVT_SETTLE_MS + 300) * 1000);
        }
        silent_write(tb, "sda");
        err = hvtuned_stop(&run);
        ck_assert_uint_eq(hv_count(err, "sdd queue/read_ahead_kb: 8192 -> 4096 (drift repaired)\n"), 4);
        ck_assert_uint_eq(hv_count(err, "sdd queue/scheduler: mq-deadline -> none (drift repaired)\n"), 4);
        ck_assert_ptr_null(strstr(err, "sdc queue/read_ahead_kb: 8192"));
        ck_assert_ptr_null(strstr(err, "sda queue/read_ahead_kb: 8192 -> 4096"));
        g_object_unref(tb);
}
END_TEST

/* The kernel's re-application can land after the event (a scan runs asynchronously): the
 * re-check once the burst has settled, a second after its last event, puts it back too. */
START_TEST(test_scsi_settle) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config;

        azure_start(&run, &tb, &config, SIBLINGS_CONFIG);
        uevent_send_blocking(disk_up("sdc", 2), "change", 1);
        usleep(300 * 1000);
        silent_write(tb, "sdd");
        assert_put_back("sdd");
        assert_contains(hvtuned_stop(&run), "sdd queue/read_ahead_kb: 8192 -> 4096 (drift repaired)\n");
        g_object_unref(tb);
}
END_TEST

START_TEST(test_verify_interval) {
        struct hv_run run;
        UMockdevTestbed *tb;
        unsigned long before;
        char *config;

        /* verify_interval = 0: no timer, so no wakeup at all while idle. */
        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\nverify_interval = 0;\n");
        usleep(200 * 1000);  /* READY=1 is sent just before the loop first blocks */
        before = context_switches(run.pid);
        usleep(1500 * 1000);
        ck_assert_uint_eq(context_switches(run.pid), before);

        /* verify_interval = 1: a drift without any event is found within a couple of
         * seconds, and a reload turns the timer on without a restart. */
        config_rewrite(config, "queue = { scheduler = \"none\"; };\nverify_interval = 1;\n");
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "READY=1");
        testbed_drift(tb, "sdb", "queue/scheduler", "none [mq-deadline] kyber bfq \n");
        testbed_wait_value("sdb", "queue/scheduler", "none");
        assert_contains(hvtuned_stop(&run), "sdb queue/scheduler: mq-deadline -> none (drift repaired)\n");
        g_object_unref(tb);
}
END_TEST

int main(void) {
        Suite *s = suite_create("drift");
        TCase *tc = tcase_create("azure");

        tcase_set_timeout(tc, 240);
        tcase_add_test(tc, test_change_flood_costs_reads);
        tcase_add_test(tc, test_repair_budget);
        tcase_add_test(tc, test_pause_ends);
        tcase_add_test(tc, test_verify_interval);
        tcase_add_test(tc, test_clamped_not_rewritten);
        tcase_add_test(tc, test_scsi_siblings);
        tcase_add_test(tc, test_scsi_settle);
        suite_add_tcase(s, tc);
        return test_run(s);
}
