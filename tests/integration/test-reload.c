/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reloads of the daemon on the Azure testbed, with a NOTIFY_SOCKET the test owns and writes
 * counted with inotify: the reload protocol (RELOADING=1, MONOTONIC_USEC, READY=1) and its
 * difference applied, a refused file that keeps the old configuration running and says so
 * in STATUS whole and on one line, SIGHUP bursts that cost one reload, the reload
 * handshake past a FIFO planted at an older version's temporary, and a reload that leaves
 * the read-ahead ceiling where a restart does. */
#include <check.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "uevent.h"
#include "testutil.h"

START_TEST(test_reload_protocol_and_difference) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config;
        const char *msg;
        struct timespec ts;
        uint64_t usec, now;
        int w;

        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; read_ahead_kb = 1024; nr_requests = 128; };\n");
        ck_assert_str_eq(testbed_value("sdb", "queue/read_ahead_kb"), "1024");

        /* read_ahead_kb is no longer managed, nr_requests changes, the scheduler stays. */
        config_rewrite(config, "queue = { scheduler = \"none\"; nr_requests = 64; };\n");
        w = watch_writes();
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        msg = hvtuned_wait_notify(&run, "RELOADING=1");
        assert_contains(msg, "MONOTONIC_USEC=");
        ck_assert_int_eq(sscanf(strstr(msg, "MONOTONIC_USEC=") + 15, "%" SCNu64, &usec), 1);
        clock_gettime(CLOCK_MONOTONIC, &ts);
        now = (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
        ck_assert_msg(usec <= now && now - usec < 10000000, "MONOTONIC_USEC=%" PRIu64 " is not now (%" PRIu64 ")", usec, now);
        hvtuned_wait_notify(&run, "READY=1");

        for (size_t i = 0; i < G_N_ELEMENTS(azure_disks); i++) {
                ck_assert_str_eq(testbed_value(azure_disks[i], "queue/read_ahead_kb"), "128");
                ck_assert_str_eq(testbed_value(azure_disks[i], "queue/nr_requests"), "64");
        }
        /* Two writes a disk: read_ahead_kb back to its original, nr_requests to 64; none to
         * the scheduler, which already had its value. */
        watched_writes_expect(w, "nr_requests\nnr_requests\nnr_requests\nnr_requests\n"
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

        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; read_ahead_kb = 1024; };\n");
        config_rewrite(config, "queue = { scheduler = \"none\"; };\n\noverride = ( { match = { lun = \"0\"; }; queue = { nomerges = 1; }; } );\n");
        w = watch_writes();
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "READY=1");
        ck_assert_str_eq(watched_writes(w), "");
        ck_assert_str_eq(testbed_value("sda", "queue/read_ahead_kb"), "1024");
        assert_contains(run.status, "; config error at ");
        assert_contains(run.status, ":3, keeping previous");

        /* Still running on the old configuration: drift is repaired to its values. */
        testbed_drift(tb, "sdc", "queue/read_ahead_kb", "128\n");
        uevent_send_blocking(testbed_syspath("sdc"), "change", 1);
        testbed_wait_value("sdc", "queue/read_ahead_kb", "1024");

        /* The error stays in STATUS until a good reload. */
        config_rewrite(config, "queue = { scheduler = \"none\"; read_ahead_kb = 1024; };\n");
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "READY=1");
        ck_assert_str_eq(run.status, "4 storvsc disks on 2 controllers: 4 tuned, 0 failed" AZURE_HWQ);
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
        config_rewrite(config, "queue = { scheduler = \"none\"; };\n");
        ck_assert_int_eq(chmod(config, 0644), 0);
        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });
        config_rewrite(config, "queue = { scheduler = \"none\"; };\n\nqueue = 1;\n");
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "READY=1");
        notice = g_strdup_printf("; config error at %s:3, keeping previous", config);
        ck_assert_msg(g_str_has_suffix(run.status, notice), "STATUS \"%s\" does not end with \"%s\"", run.status,
                      notice);
        ck_assert_ptr_eq(strstr(run.status, "4 storvsc disks on 2 controllers: 4 tuned, 0 failed"), run.status);
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
        config_rewrite(config, "queue = { scheduler = \"none\"; };\n");
        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });

        config_rewrite(part, "queue = ;\n");
        /* libconfig reads the newlines inside the quotes as part of the name. */
        main_text = g_strdup_printf("@include \"%s\"\n", name);
        config_rewrite(config, main_text);
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

        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\n");
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
        config_rewrite(config, "queue = { scheduler = \"none\"; nomerges = 1; };\n");
        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });
        for (int i = 0; i < 200; i++)
                ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        testbed_sentinel(tb, "sdc");
        ck_assert_str_eq(testbed_read("sdc", "queue/nomerges"), "1");
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

/* Drop-ins (the config path + ".d"): a reload reads the directory as it is now, a drop-in
 * added or removed since counts, and one that is refused names its file:line in STATUS and to
 * hvtuned --reload, the running configuration kept. --check-config says what it read. */
START_TEST(test_reload_dropins) {
        struct hv_run run;
        UMockdevTestbed *tb;
        g_autofree char *dir = NULL, *fleet = NULL, *bad = NULL, *pid = NULL, *where = NULL, *valid = NULL;
        char *config, *err;
        int w;

        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; nr_requests = 128; };\n");
        ck_assert_str_eq(testbed_value("sdb", "queue/nr_requests"), "128");
        dir = g_strconcat(config, ".d", NULL);
        fleet = g_build_filename(dir, "50-fleet.conf", NULL);
        bad = g_build_filename(dir, "60-bad.conf", NULL);
        pid = g_strdup_printf("--reload=%d", (int) run.pid);
        umask(022);
        ck_assert_int_eq(mkdir(dir, 0755), 0);

        /* Added: over the main file, attribute by attribute. */
        ck_assert(g_file_set_contents(fleet, "queue = { nr_requests = 64; read_ahead_kb = 1024; };\n", -1, NULL));
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "READY=1");
        for (size_t i = 0; i < G_N_ELEMENTS(azure_disks); i++) {
                ck_assert_str_eq(testbed_value(azure_disks[i], "queue/nr_requests"), "64");
                ck_assert_str_eq(testbed_value(azure_disks[i], "queue/read_ahead_kb"), "1024");
                ck_assert_str_eq(testbed_value(azure_disks[i], "queue/scheduler"), "none");
        }
        valid = g_strdup_printf("%s (+1 drop-in): valid\n", config);
        ck_assert_int_eq(hvtuned_run((const char *const[]) { "--check-config", "-c", config, NULL }, &err), 0);
        assert_contains(err, valid);

        /* Refused: the reload says where, and what runs stays. */
        ck_assert(g_file_set_contents(bad, "# from the fleet\n\nqueue = { nr_requests = 1; };\n", -1, NULL));
        w = watch_writes();
        ck_assert_int_eq(hvtuned_run((const char *const[]) { pid, NULL }, &err), 1);
        where = g_strdup_printf("error at %s:3", bad);
        assert_contains(err, where);
        ck_assert_str_eq(watched_writes(w), "");
        hvtuned_wait_notify(&run, "READY=1");
        assert_contains(run.status, hv_keep(g_strdup_printf("; config error at %s:3, keeping previous", bad)));
        ck_assert_str_eq(testbed_value("sdb", "queue/nr_requests"), "64");
        ck_assert_int_eq(hvtuned_run((const char *const[]) { "--check-config", "-c", config, NULL }, &err), 1);
        assert_contains(err, hv_keep(g_strdup_printf("%s:3: queue.nr_requests: ", bad)));

        /* Removed, both: the main file alone again, read_ahead_kb back to its original. */
        ck_assert_int_eq(unlink(bad), 0);
        ck_assert_int_eq(unlink(fleet), 0);
        ck_assert_int_eq(hvtuned_run((const char *const[]) { pid, NULL }, &err), 0);
        for (size_t i = 0; i < G_N_ELEMENTS(azure_disks); i++) {
                ck_assert_str_eq(testbed_value(azure_disks[i], "queue/nr_requests"), "128");
                ck_assert_str_eq(testbed_value(azure_disks[i], "queue/read_ahead_kb"), "128");
        }
        hvtuned_wait_notify(&run, "READY=1");
        ck_assert_str_eq(run.status, "4 storvsc disks on 2 controllers: 4 tuned, 0 failed" AZURE_HWQ);
        assert_contains(hvtuned_stop(&run), hv_keep(g_strdup_printf("%s:3: queue.nr_requests: ", bad)));
        ck_assert_int_eq(rmdir(dir), 0);
        g_object_unref(tb);
}
END_TEST

/* The platform's read-ahead ceiling once a drop-in that raised a disk's read-ahead is gone: a
 * reload leaves what a restart with the same files leaves. A restart's stop puts the
 * original back (64 on sdc, its operator's) and its start finds it under the ceiling; a
 * reload that judged the ceiling against what it found, hvtuned's own 512, left 128. After
 * a crash the new start has only the record of that original, and must agree too. */
#define DATA_READ_AHEAD_512 "override = ( { match = { role = \"data\"; }; queue = { read_ahead_kb = 512; }; } );\n"

static void ceiling_values(const char *after) {
        const char *sdc = testbed_value("sdc", "queue/read_ahead_kb"), *sdd = testbed_value("sdd", "queue/read_ahead_kb");

        ck_assert_msg(strcmp(sdc, "64") == 0 && strcmp(sdd, "128") == 0,
                      "after %s: sdc read_ahead_kb %s (not 64), sdd %s (not 128)", after, sdc, sdd);
}

/* Then someone sets 100, under the ceiling: it stays, as after a fresh start, and not under a
 * ceiling of the original's (64). sdd's repair shows sdc's change was handled: events are
 * handled in order. Back to 64 for what follows. */
static void later_change_stays(UMockdevTestbed *tb, const char *after) {
        const char *sdc;

        testbed_drift(tb, "sdc", "queue/read_ahead_kb", "100\n");
        uevent_send_blocking(testbed_syspath("sdc"), "change", 1);
        testbed_sentinel_value(tb, "sdd", "queue/read_ahead_kb", "4096\n", "128");
        sdc = testbed_value("sdc", "queue/read_ahead_kb");
        ck_assert_msg(strcmp(sdc, "100") == 0, "a 100 set after %s: sdc read_ahead_kb %s (not 100)", after, sdc);
}

START_TEST(test_reload_restart_agree_on_ceiling) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        g_autofree char *dir = NULL, *dropin = NULL, *pid = NULL;
        const char *const *args;
        struct hv_run run;
        char *config, *err;

        testbed_drift(tb, "sdc", "queue/read_ahead_kb", "64\n");
        config = config_write("platform_defaults = true;\n");
        args = (const char *const[]) { "-c", config, NULL };
        dir = g_strconcat(config, ".d", NULL);
        dropin = g_build_filename(dir, "50-data.conf", NULL);
        umask(022);
        ck_assert_int_eq(mkdir(dir, 0755), 0);

        /* Reload. */
        ck_assert(g_file_set_contents(dropin, DATA_READ_AHEAD_512, -1, NULL));
        hvtuned_start(&run, args);
        ck_assert_str_eq(testbed_value("sdc", "queue/read_ahead_kb"), "512");
        ck_assert_str_eq(testbed_value("sdd", "queue/read_ahead_kb"), "512");
        ck_assert_int_eq(unlink(dropin), 0);
        pid = g_strdup_printf("--reload=%d", (int) run.pid);
        ck_assert_int_eq(hvtuned_run((const char *const[]) { pid, NULL }, &err), 0);
        hvtuned_wait_notify(&run, "READY=1");
        ceiling_values("the reload");
        later_change_stays(tb, "the reload");
        hvtuned_stop(&run);
        ck_assert_str_eq(testbed_value("sdc", "queue/read_ahead_kb"), "100");
        testbed_drift(tb, "sdc", "queue/read_ahead_kb", "64\n");

        /* Restart, from the same start: the stop puts 64 back before the new start. */
        ck_assert(g_file_set_contents(dropin, DATA_READ_AHEAD_512, -1, NULL));
        hvtuned_start(&run, args);
        ck_assert_str_eq(testbed_value("sdc", "queue/read_ahead_kb"), "512");
        ck_assert_int_eq(unlink(dropin), 0);
        hvtuned_stop(&run);
        hvtuned_start(&run, args);
        ceiling_values("the restart");
        later_change_stays(tb, "the restart");
        hvtuned_stop(&run);
        testbed_drift(tb, "sdc", "queue/read_ahead_kb", "64\n");

        /* A start after a crash: 512 still there, 64 in the record. */
        ck_assert(g_file_set_contents(dropin, DATA_READ_AHEAD_512, -1, NULL));
        hvtuned_start(&run, args);
        ck_assert_str_eq(testbed_value("sdc", "queue/read_ahead_kb"), "512");
        hvtuned_kill(&run, SIGKILL);
        ck_assert_int_eq(unlink(dropin), 0);
        ck_assert(record_exists("sdc"));
        hvtuned_start(&run, args);
        ceiling_values("the start after a crash");
        later_change_stays(tb, "the start after a crash");
        hvtuned_stop(&run);

        ck_assert_int_eq(rmdir(dir), 0);
        g_object_unref(tb);
}
END_TEST

/* A configuration past what one load may read (2 MiB: the main file, the drop-ins and every
 * include together) is refused like any other error: hvtuned --reload fails naming the
 * @include that crossed the bound, and the running configuration stays. */
START_TEST(test_reload_over_total_bound) {
        struct hv_run run;
        UMockdevTestbed *tb;
        g_autofree char *dir = NULL, *big = NULL, *dropin = NULL, *pid = NULL, *filler = NULL, *where = NULL;
        char *config, *err;
        int w;

        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; nr_requests = 128; };\n");
        dir = g_strconcat(config, ".d", NULL);
        big = g_build_filename(dir, "big.inc", NULL);
        dropin = g_build_filename(dir, "50-big.conf", NULL);
        pid = g_strdup_printf("--reload=%d", (int) run.pid);
        umask(022);
        ck_assert_int_eq(mkdir(dir, 0755), 0);
        /* Each file within its own cap of 1 MiB; the second include is past 2 MiB in all. */
        filler = g_strnfill(1024 * 1024, ' ');
        ck_assert(g_file_set_contents(big, filler, -1, NULL));
        ck_assert(g_file_set_contents(dropin, "queue = { nr_requests = 64; };\n@include \"big.inc\"\n"
                                      "@include \"big.inc\"\n", -1, NULL));

        w = watch_writes();
        ck_assert_int_eq(hvtuned_run((const char *const[]) { pid, NULL }, &err), 1);
        where = g_strdup_printf("error at %s:3", dropin);
        assert_contains(err, where);
        hvtuned_wait_notify(&run, "READY=1");
        ck_assert_str_eq(watched_writes(w), "");
        ck_assert_str_eq(testbed_value("sdb", "queue/nr_requests"), "128");
        assert_contains(hvtuned_stop(&run),
                        hv_keep(g_strdup_printf("%s:3: refused, this @include would take the configuration past "
                                                "2048 KiB", dropin)));
        ck_assert_int_eq(unlink(dropin), 0);
        ck_assert_int_eq(unlink(big), 0);
        ck_assert_int_eq(rmdir(dir), 0);
        g_object_unref(tb);
}
END_TEST

/* hvtuned --reload=PID signals only the hvtuned that holds the runtime directory: a PID
 * given by mistake (a sleeping process) is left alone, and the command fails saying why. */
START_TEST(test_reload_refuses_a_stranger) {
        const char *sleep_argv[] = { "sleep", "60", NULL };
        g_autofree char *arg = NULL, *want = NULL;
        UMockdevTestbed *tb;
        struct hv_run run;
        char *config, *err;
        GPid sleeper;
        int status = 0;

        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\n");
        ck_assert(g_spawn_async(NULL, (char **) sleep_argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD,
                                NULL, NULL, &sleeper, NULL));
        arg = g_strdup_printf("--reload=%d", (int) sleeper);
        ck_assert_int_eq(hvtuned_run((const char *const[]) { arg, NULL }, &err), 1);
        /* A signal sent is delivered at once, but its death may take the sleep a moment. */
        for (int i = 0; i < 20; i++) {
                ck_assert_msg(waitpid(sleeper, &status, WNOHANG) == 0,
                              "the sleeping process was signalled (wait status 0x%x)", status);
                usleep(10 * 1000);
        }
        want = g_strdup_printf("Not signalling PID %d to reload: it holds no lock on %s, so it is not the hvtuned "
                               "that runs there (hvtuned (pid %d) holds it)", (int) sleeper, runtime_dir(),
                               (int) run.pid);
        assert_contains(err, want);
        ck_assert_int_eq(kill(sleeper, SIGKILL), 0);
        ck_assert_int_eq(waitpid(sleeper, NULL, 0), sleeper);
        g_spawn_close_pid(sleeper);
        (void) hvtuned_stop(&run);
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* A --once holds the runtime directory as the daemon does while its pass runs (made slow:
 * every nr_requests opened waits half a second), and a SIGHUP, from --reload or sent by hand,
 * or a SIGUSR1, must not end the pass: it tunes every disk and exits 0; --reload, finding no
 * reload record of its, fails saying so. */
static bool any_record(void) {
        g_autoptr(GDir) dir = g_dir_open(runtime_dir(), 0, NULL);
        const char *name;

        while (dir && (name = g_dir_read_name(dir)))
                if (name[0] != '.')
                        return true;
        return false;
}

START_TEST(test_reload_refuses_a_one_shot) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *config = config_write("queue = { scheduler = \"none\"; nr_requests = 64; };\n"), *err;
        g_autofree char *arg = NULL, *want = NULL;
        struct hv_run run;

        setenv("HVTUNED_TEST_SLOW_ATTR", "queue/nr_requests", 1);
        hvtuned_launch(&run, (const char *const[]) { "--once", "-c", config, NULL });
        /* Its first record is written under the lock, before the pass's first write. */
        for (int waited = 0; !any_record(); waited += 10) {
                ck_assert_msg(waited < 120000, "hvtuned --once wrote no record");
                usleep(10 * 1000);
        }
        arg = g_strdup_printf("--reload=%d", (int) run.pid);
        ck_assert_int_eq(hvtuned_run((const char *const[]) { arg, NULL }, &err), 1);
        want = g_strdup_printf("hvtuned (PID %d) was signalled to reload, but whether it took the file cannot be "
                               "told: %s/.reload cannot be read: No such file or directory; its journal says whether "
                               "it did (journalctl -u hvtuned), and a hvtuned --once or --restore ignores it",
                               (int) run.pid, runtime_dir());
        assert_contains(err, want);
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        ck_assert_int_eq(kill(run.pid, SIGUSR1), 0);
        (void) hvtuned_stop_wait(&run);
        unsetenv("HVTUNED_TEST_SLOW_ATTR");
        for (const char *const *disk = (const char *const[]) { "sda", "sdb", "sdc", "sdd", NULL }; *disk; disk++)
                ck_assert_str_eq(testbed_value(*disk, "queue/nr_requests"), "64");
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* Nor another hvtuned, one of another runtime directory: the daemon is not signalled (its
 * one reload is the one asked of it with its own directory). */
START_TEST(test_reload_refuses_another_directory) {
        char other[] = "/tmp/hvtuned-other.XXXXXX", *config, *err;
        g_autofree char *arg = NULL, *want = NULL;
        UMockdevTestbed *tb;
        struct hv_run run;
        unsigned reloads = 0;

        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\n");
        arg = g_strdup_printf("--reload=%d", (int) run.pid);
        /* The daemon's writes so far checked against its own directory, before the other. */
        ck_assert_int_eq(hvtuned_run((const char *const[]) { "--check-config", "-c", config, NULL }, &err), 0);
        ck_assert_ptr_nonnull(mkdtemp(other));
        runtime_dir_use(other);
        ck_assert_int_eq(hvtuned_run((const char *const[]) { arg, NULL }, &err), 1);
        runtime_dir_use(NULL);
        want = g_strdup_printf("Not signalling PID %d to reload: it holds no lock on %s, so it is not the hvtuned "
                               "that runs there\n", (int) run.pid, other);
        assert_contains(err, want);
        ck_assert_int_eq(rmdir(other), 0);

        /* The holder, asked with its own directory: reloaded, once. */
        config_rewrite(config, "queue = { scheduler = \"none\"; read_ahead_kb = 1024; };\n");
        ck_assert_int_eq(hvtuned_run((const char *const[]) { arg, NULL }, &err), 0);
        ck_assert_str_eq(testbed_value("sdb", "queue/read_ahead_kb"), "1024");
        ck_assert_int_eq(kill(run.pid, SIGTERM), 0);
        hvtuned_wait_notify_counting(&run, "STOPPING=1", "RELOADING=1", &reloads);
        ck_assert_uint_eq(reloads, 1);
        (void) hvtuned_stop_wait(&run);
        unlink(config);
        g_object_unref(tb);
}
END_TEST

int main(void) {
        Suite *s = suite_create("reload");
        TCase *tc = tcase_create("azure");

        tcase_set_timeout(tc, 240);
        tcase_add_test(tc, test_reload_protocol_and_difference);
        tcase_add_test(tc, test_bad_reload_keeps_running);
        tcase_add_test(tc, test_sighup_burst);
        tcase_add_test(tc, test_config_error_notice_whole);
        tcase_add_test(tc, test_config_error_name_adds_no_line);
        tcase_add_test(tc, test_fifo_at_reload_temporary);
        tcase_add_test(tc, test_reload_dropins);
        tcase_add_test(tc, test_reload_restart_agree_on_ceiling);
        tcase_add_test(tc, test_reload_refuses_a_stranger);
        tcase_add_test(tc, test_reload_refuses_a_one_shot);
        tcase_add_test(tc, test_reload_refuses_another_directory);
        tcase_add_test(tc, test_reload_over_total_bound);
        suite_add_tcase(s, tc);
        return test_run(s);
}
