/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A reload of a hostile configuration with a SIGTERM right behind it. hvtuned reads its
 * configuration synchronously, so what one load may read is how long a stop can wait: 8
 * drop-ins of 63 @includes of one 1 MiB file, each file within its own caps, read 504 MiB and
 * held SIGTERM for 10-21 s, and the 256 drop-ins allowed would pass systemd's stop timeout.
 * Suite heavy besides integration: a bound on time means nothing under a sanitizer or
 * memcheck, which CI runs without that suite. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "testutil.h"

#define DROPINS 8
#define INCLUDES 63
#define INCLUDED_SIZE (1024 * 1024)

/* From SIGTERM to the exit: the reload under way reads at most 2 MiB now (0.1 s here, 1 s of
 * CPU at worst, lib/config-scan.h) and the stop puts 4 disks back, so 5 s is a wide margin on
 * a loaded 2-core machine; the 10-23 s of the unbounded load fail it two to four times over.
 * systemd's own limits are further: WatchdogSec=30s, and a stop timeout of 90 s. */
#define STOP_BOUND_MS 5000
/* Past this the test gives up on it (and kills it): long enough to measure the old load. */
#define STOP_GIVE_UP_MS 120000

START_TEST(test_hostile_reload_then_stop) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char dir[] = "/tmp/hvtuned-hostile.XXXXXX";
        g_autofree char *config = NULL, *dropins = NULL, *big = NULL, *first = NULL, *where = NULL;
        GString *text = g_string_sized_new(INCLUDED_SIZE);
        struct hv_run run;
        gint64 start;
        int status, ms;
        char *err;

        umask(022);
        ck_assert_ptr_nonnull(mkdtemp(dir));
        config = g_build_filename(dir, "hvtuned.conf", NULL);
        dropins = g_build_filename(dir, "hvtuned.conf.d", NULL);
        big = g_build_filename(dropins, "big.inc", NULL);
        config_rewrite(config, "queue = { scheduler = \"none\"; };\n");
        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });
        ck_assert_str_eq(testbed_value("sda", "queue/scheduler"), "none");

        /* Comment lines: cheap for libconfig, all the cost is in reading them. The same file,
         * included 63 times a drop-in, is read 63 times. */
        ck_assert_int_eq(mkdir(dropins, 0755), 0);
        while (text->len < INCLUDED_SIZE)
                g_string_append(text, "# a comment line, of 64 bytes with its newline, again and again\n");
        g_string_truncate(text, INCLUDED_SIZE);
        ck_assert(g_file_set_contents(big, text->str, (gssize) text->len, NULL));
        g_string_truncate(text, 0);
        for (int i = 0; i < INCLUDES; i++)
                g_string_append(text, "@include \"big.inc\"\n");
        for (int i = 0; i < DROPINS; i++) {
                g_autofree char *name = g_strdup_printf("%s/%02d-hostile.conf", dropins, i);

                ck_assert(g_file_set_contents(name, text->str, (gssize) text->len, NULL));
        }

        /* SIGTERM once the reload has begun: sent with the SIGHUP, it would be handled first
         * and the reload never run. */
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "RELOADING=1");
        start = g_get_monotonic_time();
        ck_assert_int_eq(kill(run.pid, SIGTERM), 0);
        status = hvtuned_wait_exit(run.pid, STOP_GIVE_UP_MS);
        ms = (int) ((g_get_monotonic_time() - start) / 1000);
        if (status == -1) {
                (void) kill(run.pid, SIGKILL);
                (void) waitpid(run.pid, NULL, 0);
        }
        ck_assert_msg(status != -1 && ms <= STOP_BOUND_MS,
                      "hvtuned took %d ms%s to exit on a SIGTERM sent during the reload, not at most %d ms",
                      ms, status == -1 ? " (and was killed)" : "", STOP_BOUND_MS);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "wait status %d", status);
        fprintf(stderr, "hvtuned exited %d ms after SIGTERM (bound %d ms)\n", ms, STOP_BOUND_MS);

        /* The reload was refused where the bound was crossed, the second @include of the first
         * drop-in, and said so before the stop. */
        first = g_strdup_printf("%s/00-hostile.conf", dropins);
        where = g_strdup_printf("; config error at %s:2, keeping previous", first);
        hvtuned_wait_notify(&run, "READY=1");
        assert_contains(run.status, where);
        hvtuned_wait_notify(&run, "STOPPING=1");
        err = hvtuned_reaped(&run);
        assert_contains(err, hv_keep(g_strdup_printf("%s:2: refused, this @include would take the configuration "
                                                     "past 2048 KiB", first)));
        ck_assert_str_eq(testbed_value("sda", "queue/scheduler"), "mq-deadline");

        for (int i = 0; i < DROPINS; i++) {
                g_autofree char *name = g_strdup_printf("%s/%02d-hostile.conf", dropins, i);

                ck_assert_int_eq(unlink(name), 0);
        }
        ck_assert_int_eq(unlink(big), 0);
        ck_assert_int_eq(rmdir(dropins), 0);
        ck_assert_int_eq(unlink(config), 0);
        ck_assert_int_eq(rmdir(dir), 0);
        g_string_free(text, TRUE);
        g_object_unref(tb);
}
END_TEST

int main(void) {
        Suite *s = suite_create("reload-hostile");
        TCase *tc = tcase_create("azure");

        if (hvtuned_under_valgrind()) {
                fprintf(stderr, "skipped: a bound on time means nothing under memcheck\n");
                return 77;
        }
        tcase_set_timeout(tc, 240);
        tcase_add_test(tc, test_hostile_reload_then_stop);
        suite_add_tcase(s, tc);
        return test_run(s);
}
