/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hvtuned --verify against the real daemon on the testbeds, one test an exit status: 0 with a
 * value the kernel kept and one under a ceiling, 1 with a scheduler changed behind the
 * daemon's back (and its JSON, parsed by Python's json) and with a disk whose repairs are
 * paused, 2 with a write the kernel refused
 * (winning over a 1), 3 with no daemon, 4 as a user who may not read the state, with a
 * daemon that has published nothing yet, and for a usage error. */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "testutil.h"
#include "track.h"
#include "uevent.h"

/* The daemon's state file, once published: a daemon that has not published it yet (it
 * gathers at most once a second) is "cannot be told", 4. */
static void wait_state(void) {
        g_autofree char *path = g_build_filename(runtime_dir(), ".state", NULL);

        (void) hvtuned_wait_file(path, "\nend\t", 10000);
}

/* hvtuned --verify with one more option (or none): its exit status, stdout in *out. */
static int verify(const char *option, char **out, char **err) {
        const char *args[] = { "--verify", option, NULL };

        return hvtuned_run_out(args, out, err);
}

/* What Python's json makes of --verify --json, one fact a line. */
static const char *const summary_py =
        "import json, sys\n"
        "d = json.load(open(sys.argv[1]))\n"
        "assert d['format'] == 1, d['format']\n"
        "print('verdict', d['verdict'], d['exit_status'], d['disks'], d['attributes'], d['pid'] is not None)\n"
        "print('counts', ' '.join('%s=%d' % kv for kv in sorted(d['counts'].items())))\n"
        "for a in d['not_as_configured']:\n"
        "    print('entry', a['disk'], a['attribute'], a['reason'], a['wanted'], a['found'], a['error'], a['daemon_last'])\n";

static char *json_summary(const char *text) {
        return python_on_text(summary_py, text);
}

/* As a user who may not read root's runtime directory: 4, saying why. */
static void assert_unknown_as_nobody(void) {
        char *out = NULL, *err = NULL;
        int code = hvtuned_run_as_nobody((const char *const[]) { "--verify", NULL }, &out, &err);

        if (code < 0)
                return;  /* not root: no other user to be */
        ck_assert_msg(code == 4, "as nobody: status %d: %s", code, err);
        assert_contains(err, "hvtuned --verify needs root: ");
        assert_contains(out, "verify: cannot be told: Permission denied\n");
}

/* 0: every managed attribute as configured, a value the kernel kept (read_ahead_kb 10, kept
 * in whole pages as 8) and one under the platform's read-ahead ceiling (64 under 128)
 * included. */
START_TEST(test_as_configured) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *out, *err;

        azure_start(&run, &tb, &config, "platform_defaults = true;\nqueue = { scheduler = \"none\"; };\n"
                    "override = ( { match = { role = \"os\"; }; queue = { read_ahead_kb = 10; }; } );\n");
        wait_state();
        ck_assert_str_eq(testbed_value("sda", "queue/read_ahead_kb"), "8");
        /* Lowered by someone else, under the ceiling: left as it is, as configured. */
        testbed_drift(tb, "sdb", "queue/read_ahead_kb", "64");
        ck_assert_int_eq(verify(NULL, &out, &err), 0);
        ck_assert_str_eq(out, "verify: 8 attributes on 4 disks as configured\n");
        ck_assert_str_eq(err, "");
        ck_assert_int_eq(verify("-v", &out, &err), 0);
        assert_contains(out, "sda queue/scheduler: none (as configured)\n");
        assert_contains(out, "sda queue/read_ahead_kb: 8 (kept by the kernel for 10)\n");
        assert_contains(out, "sdb queue/read_ahead_kb: 64 (as configured, at most that)\n");
        assert_contains(out, "verify: 8 attributes on 4 disks as configured\n");
        /* --status judges by the same path: neither is "differs" there either. */
        ck_assert_int_eq(hvtuned_run_out((const char *const[]) { "--status", NULL }, &out, &err), 0);
        ck_assert_msg(!strstr(out, "differs"), "--status says differs:\n%s", out);
        (void) hvtuned_stop(&run);
        g_object_unref(tb);
        unlink(config);
}
END_TEST

/* READY=1, on which systemctl start and reload return, comes after the state of its pass is
 * published: a --verify right after a reload judges the new configuration, although the
 * reload comes within the second the daemon gathers its state at most once in. */
START_TEST(test_right_after_reload) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *out, *err;

        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\n");
        config_rewrite(config, "queue = { scheduler = \"none\"; read_ahead_kb = 256; };\n");
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "READY=1");
        ck_assert_int_eq(verify("-v", &out, &err), 0);
        assert_contains(out, "sda queue/read_ahead_kb: 256 (as configured)\n");
        (void) hvtuned_stop(&run);
        g_object_unref(tb);
        unlink(config);
}
END_TEST

/* 1: a scheduler changed without an event, which the daemon has not seen yet: sysfs now is
 * what --verify answers about. The JSON says the same, the daemon's view beside it. */
START_TEST(test_differs) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *out, *err, *summary;

        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\n");
        wait_state();
        testbed_drift(tb, "sdc", "queue/scheduler", "none mq-deadline [kyber] bfq");
        ck_assert_int_eq(verify(NULL, &out, &err), 1);
        ck_assert_str_eq(out, "sdc queue/scheduler: wanted none, found kyber (differs)\n"
                              "verify: 1 of 4 attributes on 4 disks differs\n");
        ck_assert_int_eq(verify("--json", &out, &err), 1);
        summary = json_summary(out);
        assert_contains(summary, "verdict differs 1 4 4 True\n");
        assert_contains(summary, "counts as-configured=3 differs=1 failed=0 kept-by-kernel=0 paused=0 unreadable=0 "
                                 "unsupported=0 yielded=0\n");
        assert_contains(summary, "entry sdc queue/scheduler differs none kyber None applied\n");
        /* --status's note comes from the same judgement. */
        ck_assert_int_eq(hvtuned_run_out((const char *const[]) { "--status", NULL }, &out, &err), 0);
        assert_contains(out, "differs; last applied; from ");
        assert_unknown_as_nobody();
        (void) hvtuned_stop(&run);
        g_object_unref(tb);
        unlink(config);
}
END_TEST

/* 1: a disk reverted too often, whose repairs are paused (the scheduler fought over, as
 * test-drift does it): whoever reverts it is left alone meanwhile. Each revert lands after
 * the report of the repair before it, so that none falls inside a pass. */
START_TEST(test_paused) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *out = NULL, *err;
        int code = -1;

        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\n"
                    "contested = { queue = { scheduler = \"insist\"; }; };\n");
        wait_state();
        for (unsigned i = 1; i <= HVT_REPAIR_BURST + 1; i++) {
                testbed_sentinel(tb, "sdc");
                hvtuned_wait_stderr(&run, "sdc queue/scheduler: bfq -> none (drift repaired)\n", i);
        }
        testbed_drift(tb, "sdc", "queue/scheduler", "none mq-deadline kyber [bfq] \n");
        uevent_send_blocking(testbed_syspath("sdc"), "change", 1);
        hvtuned_wait_notify(&run, "1 disk reverted too often, repairs paused");
        /* The state file follows within a second: until then, the bfq found is "differs". */
        for (unsigned i = 0; i < 100 && !(out && strstr(out, "paused")); i++) {
                if (i > 0)
                        g_usleep(50 * 1000);
                code = verify(NULL, &out, &err);
        }
        ck_assert_int_eq(code, 1);
        ck_assert_str_eq(out, "sdc queue/scheduler: wanted none, found bfq (repairs paused, reverted too often)\n"
                              "verify: 1 of 4 attributes on 4 disks differs\n");
        (void) hvtuned_stop(&run);
        g_object_unref(tb);
        unlink(config);
}
END_TEST

/* 2: a write the kernel refused; it wins over another attribute that differs. */
START_TEST(test_failed) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *out, *err, *summary;

        ck_assert_int_eq(setenv("HVTUNED_TEST_FAULTS", "sdb/queue/nr_requests=write:EINVAL", 1), 0);
        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; nr_requests = 64; };\n");
        wait_state();
        ck_assert_int_eq(unsetenv("HVTUNED_TEST_FAULTS"), 0);
        testbed_drift(tb, "sdc", "queue/scheduler", "none mq-deadline [kyber] bfq");
        ck_assert_int_eq(verify(NULL, &out, &err), 2);
        assert_contains(out, "sdb queue/nr_requests: wanted 64, found 2534 (failed: Invalid argument)\n");
        assert_contains(out, "sdc queue/scheduler: wanted none, found kyber (differs)\n");
        assert_contains(out, "verify: 2 of 8 attributes on 4 disks failed or differ: 1 failed, 1 differs\n");
        ck_assert_int_eq(verify("--json", &out, &err), 2);
        summary = json_summary(out);
        assert_contains(summary, "verdict failed 2 4 8 True\n");
        assert_contains(summary, "entry sdb queue/nr_requests failed 64 2534 Invalid argument failed\n");
        (void) hvtuned_stop(&run);
        g_object_unref(tb);
        unlink(config);
}
END_TEST

/* 3: no hvtuned runs, whether its runtime directory is there or not. */
START_TEST(test_not_running) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *out, *err;

        ck_assert_int_eq(verify(NULL, &out, &err), 3);
        ck_assert_str_eq(out, "verify: hvtuned is not running\n");
        ck_assert_int_eq(verify("--json", &out, &err), 3);
        assert_contains(json_summary(out), "verdict not-running 3 0 0 False\n");
        runtime_dir_use("/var/tmp/hvtuned-testbeds/no-such-runtime-dir");
        ck_assert_int_eq(verify(NULL, &out, &err), 3);
        g_object_unref(tb);
}
END_TEST

/* 4: a daemon that holds its directory but has published no state yet (starting), and usage
 * errors beside --verify, which a monitor must not read as "differs". */
START_TEST(test_unknown) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *out, *err;
        int lock;

        lock = open(runtime_dir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(lock, 0);
        ck_assert_int_eq(flock(lock, LOCK_EX | LOCK_NB), 0);
        ck_assert_int_eq(verify(NULL, &out, &err), 4);
        assert_contains(err, "has published no state");
        ck_assert_str_eq(out, "verify: cannot be told: No such file or directory\n");
        ck_assert_int_eq(verify("--json", &out, &err), 4);
        assert_contains(json_summary(out), "verdict unknown 4 0 0 False\n");
        ck_assert_int_eq(close(lock), 0);

        ck_assert_int_eq(verify("--once", &out, &err), 4);
        assert_contains(err, "--verify and --once cannot be given together");
        ck_assert_int_eq(verify("--dry-run", &out, &err), 4);
        ck_assert_int_eq(verify("--no-such-option", &out, &err), 4);
        /* getopt takes an abbreviation of --verify as --verify: so does the usage error's exit. */
        ck_assert_int_eq(hvtuned_run_out((const char *const[]) { "--veri", "--no-such-option", NULL }, &out, &err), 4);
        ck_assert_int_eq(hvtuned_run_out((const char *const[]) { "--verif", "--once", NULL }, &out, &err), 4);
        ck_assert_int_eq(hvtuned_run_out((const char *const[]) { "--ver", "--no-such-option", NULL }, &out, &err), 1);
        g_object_unref(tb);
}
END_TEST

int main(void) {
        Suite *s = suite_create("verify");
        TCase *tc = tcase_create("verify");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_as_configured);
        tcase_add_test(tc, test_differs);
        tcase_add_test(tc, test_right_after_reload);
        tcase_add_test(tc, test_paused);
        tcase_add_test(tc, test_failed);
        tcase_add_test(tc, test_not_running);
        tcase_add_test(tc, test_unknown);
        suite_add_tcase(s, tc);
        return test_run(s);
}
