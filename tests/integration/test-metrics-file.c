/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The daemon's metrics file (metrics_file, node_exporter's textfile collector) on the Azure
 * testbed: written whole after the start-up pass and rewritten on a repair and a reload,
 * gone at stop; written only in a directory nobody else can change, through the descriptor
 * of the directory it checked (a swap for a symlink moves nothing), never over or in place
 * of a file that is not hvtuned's, and its stale temporaries removed. (tests/prometheus
 * reads it with the real node_exporter and Prometheus.) */
#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "testutil.h"

/* metrics_file: node_exporter's textfile, written whole after the start-up pass with what
 * STATUS says and more, rewritten on a repair and a reload, readable by node_exporter's
 * user, gone when hvtuned stops. (tests/prometheus checks the format with promtool and real
 * Prometheus.) */
START_TEST(test_metrics_file) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char dir[] = "/tmp/hvtuned-metrics.XXXXXX";
        g_autofree char *prom = NULL, *text = NULL;
        const char *args[3] = { "-c", NULL, NULL };
        struct hv_run run;
        struct stat st;
        char *config, *m;
        GDir *left;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        prom = g_build_filename(dir, "hvtuned.prom", NULL);
        text = g_strdup_printf("queue = { scheduler = \"none\"; };\nmetrics_file = \"%s\";\n", prom);
        args[1] = config = config_write(text);
        setenv("HVTUNED_TEST_METRICS_DIR", dir, 1);

        hvtuned_start(&run, args);
        m = hvtuned_wait_metrics(prom, "hvtuned_disks{result=\"tuned\"} 4\n");
        assert_contains(m, "hvtuned_disks{result=\"failed\"} 0\n");
        assert_contains(m, "hvtuned_attributes{result=\"applied\"} 2\n");
        assert_contains(m, "hvtuned_attributes{result=\"unchanged\"} 2\n");
        assert_contains(m, "hvtuned_attributes{result=\"failed\"} 0\n");
        assert_contains(m, "hvtuned_hw_queue_cap 4\n");
        assert_contains(m, "hvtuned_controller_hw_queues{host=\"host0\",controller=\"{f8b3781a-1e82-4818-a1c3-63d806ec15bb}\",kind=\"scsi\"} 32\n");
        assert_contains(m, "hvtuned_controller_can_queue{host=\"host1\",controller=\"{f8b3781b-1e82-4818-a1c3-63d806ec15bb}\",kind=\"scsi\"} 2534\n");
        assert_contains(m, "hvtuned_controller_preallocated_bytes{host=\"host0\",controller=\"{f8b3781a-1e82-4818-a1c3-63d806ec15bb}\",kind=\"scsi\"} 10");
        assert_contains(m, "# TYPE hvtuned_drift_repairs_total counter\nhvtuned_drift_repairs_total 0\n");
        assert_contains(m, "# TYPE hvtuned_busy_retries_total counter\nhvtuned_busy_retries_total 0\n");
        ck_assert_ptr_null(strstr(m, "hvtuned_config_last_reload_success"));
        ck_assert_int_eq(stat(prom, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0644);

        testbed_sentinel(tb, "sdc");
        hvtuned_wait_metrics(prom, "hvtuned_drift_repairs_total 1\n");

        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "RELOADING=1");
        hvtuned_wait_notify(&run, "READY=1");
        m = hvtuned_wait_metrics(prom, "hvtuned_config_reloads_total 1\n");
        assert_contains(m, "hvtuned_config_reload_failures_total 0\n");
        assert_contains(m, "hvtuned_config_last_reload_success 1\n");
        assert_contains(m, "hvtuned_config_last_reload_timestamp_seconds 1");

        hvtuned_stop(&run);
        ck_assert_msg(!g_file_test(prom, G_FILE_TEST_EXISTS), "%s is left after stop", prom);
        left = g_dir_open(dir, 0, NULL);
        ck_assert_ptr_null(g_dir_read_name(left));  /* no temporary file either */
        g_dir_close(left);
        unsetenv("HVTUNED_TEST_METRICS_DIR");
        ck_assert_int_eq(rmdir(dir), 0);
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* The user who owns a directory on the metrics file's path (prometheus on Debian). */
#define OTHER_UID 65534

/* Swaps the directory dir for a symlink to target, as OTHER_UID (it owns the directory dir
 * is in), keeping the directory under dir.moved. Through setpriv(1): a forked test process
 * under memcheck would report the threads it left behind. */
static void swap_for_symlink(const char *dir, const char *target) {
        g_autofree char *uid = g_strdup_printf("--reuid=%d", OTHER_UID);
        g_autofree char *gid = g_strdup_printf("--regid=%d", OTHER_UID);
        const char *argv[] = { "setpriv", uid, gid, "--clear-groups", "--", "sh", "-ec",
                               "mv -- \"$1\" \"$1.moved\"; ln -s -- \"$2\" \"$1\"", "sh", dir, target, NULL };
        g_autoptr(GError) error = NULL;
        g_autofree char *out = NULL, *err = NULL;
        int status;

        ck_assert_msg(g_spawn_sync(NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err, &status,
                                   &error), "setpriv: %s", error ? error->message : "?");
        /* The wait status checked by hand: g_spawn_check_wait_status() is glib 2.70's. */
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "as uid %d: %s", OTHER_UID, err);
}

/* The file put where a file of hvtuned's may go: its inode, to tell it is still the same. */
static void plant(const char *path, const char *text, struct stat *ret) {
        ck_assert(g_file_set_contents(path, text, -1, NULL));
        ck_assert_int_eq(lchown(path, OTHER_UID, OTHER_UID), 0);
        ck_assert_int_eq(stat(path, ret), 0);
}

/* path is still the file plant() put there, as it was, when. */
static void assert_planted(const char *path, const char *text, const struct stat *was, const char *when) {
        g_autofree char *now = NULL;
        struct stat st;

        ck_assert_msg(lstat(path, &st) == 0, "%s was removed %s", path, when);
        ck_assert_msg(st.st_ino == was->st_ino, "%s was replaced %s", path, when);
        ck_assert(g_file_get_contents(path, &now, NULL, NULL));
        ck_assert_msg(strcmp(now, text) == 0, "%s was rewritten %s:\n%s", path, when, now);
}

static gint compare_names(gconstpointer a, gconstpointer b) {
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* The names in dir, sorted, one a line. */
static char *dir_names(const char *dir) {
        g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
        GDir *d = g_dir_open(dir, 0, NULL);
        const char *name;

        ck_assert_ptr_nonnull(d);
        while ((name = g_dir_read_name(d)))
                g_ptr_array_add(names, g_strdup(name));
        g_dir_close(d);
        g_ptr_array_sort(names, compare_names);
        g_ptr_array_add(names, NULL);
        return hv_keep(g_strjoinv("\n", (char **) names->pdata));
}

/* Waits until the file at one of the paths holds needle; returns which. */
static int wait_metrics_either(const char *a, const char *b, const char *needle) {
        int limit_ms = hvtuned_under_valgrind() ? 200000 : 20000;

        for (int waited = 0;; waited += 10) {
                const char *paths[] = { a, b };

                for (int i = 0; i < 2; i++) {
                        g_autofree char *text = NULL;

                        if (g_file_get_contents(paths[i], &text, NULL, NULL) && strstr(text, needle))
                                return i;
                }
                ck_assert_msg(waited < limit_ms, "\"%s\" in neither %s nor %s after %d ms", needle, a, b, limit_ms);
                usleep(10 * 1000);
        }
}

/* The textfile directory under a parent of another user's (Debian's /var/lib/prometheus is
 * prometheus's), who swaps it for a symlink to another directory of root's after the first
 * write. The rewrite after a repair goes on in the directory hvtuned holds, a reload naming
 * another file through the symlink is refused, and the other directory's hvtuned.prom is
 * neither replaced nor removed, then or at stop; hvtuned's own file is removed where it is. */
START_TEST(test_metrics_dir_swapped) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char parent[] = "/tmp/hvtuned-parent.XXXXXX", victim[] = "/tmp/hvtuned-victim.XXXXXX";
        g_autofree char *textfile = NULL, *moved = NULL, *prom = NULL, *moved_prom = NULL, *victim_prom = NULL,
                        *text = NULL, *renamed = NULL, *dirs = NULL;
        const char *args[3] = { "-c", NULL, NULL };
        struct stat planted;
        struct hv_run run;
        char *config, *err;

        ck_assert_ptr_nonnull(mkdtemp(parent));
        ck_assert_ptr_nonnull(mkdtemp(victim));
        ck_assert_int_eq(chmod(parent, 0755), 0);
        ck_assert_int_eq(chown(parent, OTHER_UID, OTHER_UID), 0);
        textfile = g_build_filename(parent, "textfile", NULL);
        moved = g_strconcat(textfile, ".moved", NULL);
        ck_assert_int_eq(mkdir(textfile, 0755), 0);
        prom = g_build_filename(textfile, "hvtuned.prom", NULL);
        moved_prom = g_build_filename(moved, "hvtuned.prom", NULL);
        victim_prom = g_build_filename(victim, "hvtuned.prom", NULL);
        plant(victim_prom, "precious\n", &planted);
        text = g_strdup_printf("queue = { scheduler = \"none\"; };\nmetrics_file = \"%s\";\n", prom);
        args[1] = config = config_write(text);
        dirs = g_strdup_printf("%s:%s", textfile, moved);
        setenv("HVTUNED_TEST_METRICS_DIR", dirs, 1);

        hvtuned_start(&run, args);
        hvtuned_wait_metrics(prom, "hvtuned_disks{result=\"tuned\"} 4\n");
        swap_for_symlink(textfile, victim);

        /* A rewrite: where hvtuned wrote before, not through the symlink. */
        testbed_sentinel(tb, "sdc");
        ck_assert_msg(wait_metrics_either(moved_prom, victim_prom, "hvtuned_drift_repairs_total 1\n") == 0,
                      "the rewrite went through the symlink into %s", victim);
        assert_planted(victim_prom, "precious\n", &planted, "by the rewrite");

        /* A reload naming another file in the swapped directory: the old file goes from where
         * it is, the new one is refused. */
        renamed = g_build_filename(textfile, "renamed.prom", NULL);
        g_free(text);
        text = g_strdup_printf("queue = { scheduler = \"none\"; };\nmetrics_file = \"%s\";\n", renamed);
        config_rewrite(config, text);
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "READY=1");
        testbed_sentinel(tb, "sdc");
        assert_planted(victim_prom, "precious\n", &planted, "at the reload");
        ck_assert_str_eq(dir_names(victim), "hvtuned.prom");
        ck_assert_str_eq(dir_names(moved), "");

        err = hvtuned_stop(&run);
        assert_contains(err, hv_keep(g_strdup_printf("Cannot write the metrics file %s: refused, %s on its path "
                                                     "is a symbolic link: name the real directory\n",
                                                     renamed, textfile)));
        assert_planted(victim_prom, "precious\n", &planted, "at stop");
        ck_assert_str_eq(dir_names(victim), "hvtuned.prom");

        unsetenv("HVTUNED_TEST_METRICS_DIR");
        ck_assert_int_eq(unlink(textfile), 0);
        ck_assert_int_eq(rmdir(moved), 0);
        ck_assert_int_eq(rmdir(parent), 0);
        ck_assert_int_eq(unlink(victim_prom), 0);
        ck_assert_int_eq(rmdir(victim), 0);
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* Files hvtuned never wrote under the metrics file's name: it leaves them, at stop and at a
 * reload that names another file. 0: its directory is another user's (the write refused),
 * stop; 1: the same, reload; 2: hvtuned wrote it but an operator put their own file in its
 * place since, stop; 3: the directory is sticky and world-writable (/tmp's mode) and the
 * file another user's (the write refused, not the file replaced), stop. */
START_TEST(test_metrics_file_not_ours) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char dir[] = "/tmp/hvtuned-metrics.XXXXXX", other[] = "/tmp/hvtuned-metrics.XXXXXX";
        g_autofree char *prom = NULL, *other_prom = NULL, *text = NULL, *dirs = NULL;
        const char *args[3] = { "-c", NULL, NULL };
        const char *theirs = "theirs 1\n";
        struct stat planted;
        struct hv_run run;
        char *config, *err;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_ptr_nonnull(mkdtemp(other));
        prom = g_build_filename(dir, "hvtuned.prom", NULL);
        other_prom = g_build_filename(other, "hvtuned.prom", NULL);
        if (_i == 0 || _i == 1) {
                ck_assert_int_eq(chmod(dir, 0755), 0);
                ck_assert_int_eq(chown(dir, OTHER_UID, OTHER_UID), 0);
        } else if (_i == 3)
                ck_assert_int_eq(chmod(dir, 01777), 0);
        if (_i != 2)
                plant(prom, theirs, &planted);
        text = g_strdup_printf("queue = { scheduler = \"none\"; };\nmetrics_file = \"%s\";\n", prom);
        args[1] = config = config_write(text);
        dirs = g_strdup_printf("%s:%s", dir, other);
        setenv("HVTUNED_TEST_METRICS_DIR", dirs, 1);

        hvtuned_start(&run, args);
        /* The write after the start-up pass was tried by the time a repair is done. */
        testbed_sentinel(tb, "sdc");
        if (_i == 2) {
                g_autofree char *mine = g_build_filename(dir, "theirs.tmp", NULL);

                /* After hvtuned's last write: the name is hvtuned's to write while it runs. */
                hvtuned_wait_metrics(prom, "hvtuned_drift_repairs_total 1\n");
                plant(mine, theirs, &planted);
                ck_assert_int_eq(rename(mine, prom), 0);
        }
        assert_planted(prom, theirs, &planted, "while hvtuned ran");
        if (_i == 1) {
                g_free(text);
                text = g_strdup_printf("queue = { scheduler = \"none\"; };\nmetrics_file = \"%s\";\n", other_prom);
                config_rewrite(config, text);
                ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
                hvtuned_wait_metrics(other_prom, "hvtuned_config_reloads_total 1\n");
                assert_planted(prom, theirs, &planted, "at the reload");
        }
        err = hvtuned_stop(&run);
        assert_planted(prom, theirs, &planted, "at stop");
        ck_assert_str_eq(dir_names(dir), "hvtuned.prom");
        ck_assert_str_eq(dir_names(other), "");
        if (_i == 0 || _i == 1)
                assert_contains(err, hv_keep(g_strdup_printf("Cannot write the metrics file %s: refused, the "
                                                             "directory %s on its path is owned by uid %d, "
                                                             "neither root's nor ours\n",
                                                             prom, dir, OTHER_UID)));
        else if (_i == 2)
                assert_contains(err, hv_keep(g_strdup_printf("Leaving %s: it is no longer the file hvtuned "
                                                             "wrote\n", prom)));
        else
                assert_contains(err, hv_keep(g_strdup_printf("Cannot write the metrics file %s: refused, the "
                                                             "directory %s on its path is writable by group or "
                                                             "others (mode 1777)\n", prom, dir)));

        unsetenv("HVTUNED_TEST_METRICS_DIR");
        ck_assert_int_eq(unlink(prom), 0);
        ck_assert_int_eq(rmdir(dir), 0);
        ck_assert_int_eq(rmdir(other), 0);
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* Temporaries a kill left (a regular file, and a FIFO nothing may open) go when the
 * directory is first used; files of other names stay, .hvtuned-notes too. */
START_TEST(test_metrics_stale_temporaries) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char dir[] = "/tmp/hvtuned-metrics.XXXXXX";
        g_autofree char *prom = NULL, *text = NULL, *stale = NULL, *fifo = NULL, *notes = NULL, *other = NULL;
        const char *args[3] = { "-c", NULL, NULL };
        struct hv_run run;
        char *config, *err;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        prom = g_build_filename(dir, "hvtuned.prom", NULL);
        stale = g_build_filename(dir, ".hvtuned.4242.1f2e3d.tmp", NULL);
        fifo = g_build_filename(dir, ".hvtuned.4243.a0.tmp", NULL);
        notes = g_build_filename(dir, ".hvtuned-notes", NULL);
        other = g_build_filename(dir, "other.prom", NULL);
        ck_assert(g_file_set_contents(stale, "hvtuned_disks{result=\"tu", -1, NULL));
        ck_assert_int_eq(mkfifo(fifo, 0644), 0);
        ck_assert(g_file_set_contents(notes, "notes\n", -1, NULL));
        ck_assert(g_file_set_contents(other, "other 1\n", -1, NULL));
        text = g_strdup_printf("queue = { scheduler = \"none\"; };\nmetrics_file = \"%s\";\n", prom);
        args[1] = config = config_write(text);
        setenv("HVTUNED_TEST_METRICS_DIR", dir, 1);

        hvtuned_start(&run, args);
        hvtuned_wait_metrics(prom, "hvtuned_disks{result=\"tuned\"} 4\n");
        ck_assert_str_eq(dir_names(dir), ".hvtuned-notes\nhvtuned.prom\nother.prom");
        err = hvtuned_stop(&run);
        assert_contains(err, hv_keep(g_strdup_printf("Removed 2 temporary files an earlier hvtuned left "
                                                     "beside %s\n", prom)));
        ck_assert_str_eq(dir_names(dir), ".hvtuned-notes\nother.prom");

        unsetenv("HVTUNED_TEST_METRICS_DIR");
        ck_assert_int_eq(unlink(notes), 0);
        ck_assert_int_eq(unlink(other), 0);
        ck_assert_int_eq(rmdir(dir), 0);
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* Under a watchdog (WatchdogSec=, here 0.2 s), the same figures are written again once twice
 * its period has passed: a new file, so that its mtime (node_textfile_mtime_seconds) says
 * the daemon still runs (the alert HvtunedNotReporting). */
START_TEST(test_metrics_refreshed) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char dir[] = "/tmp/hvtuned-metrics.XXXXXX";
        g_autofree char *prom = NULL, *text = NULL, *first = NULL, *again = NULL;
        const char *args[3] = { "-c", NULL, NULL };
        struct hv_run run;
        struct stat st;
        ino_t ino;
        char *config;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        prom = g_build_filename(dir, "hvtuned.prom", NULL);
        text = g_strdup_printf("queue = { scheduler = \"none\"; };\nmetrics_file = \"%s\";\n", prom);
        args[1] = config = config_write(text);
        setenv("HVTUNED_TEST_METRICS_DIR", dir, 1);
        ck_assert_int_eq(setenv("WATCHDOG_USEC", "200000", 1), 0);

        hvtuned_start(&run, args);
        first = g_strdup(hvtuned_wait_metrics(prom, "hvtuned_disks{result=\"tuned\"} 4\n"));
        ck_assert_int_eq(stat(prom, &st), 0);
        ino = st.st_ino;
        for (int i = 0; i < 100 && st.st_ino == ino; i++) {
                usleep(50 * 1000);
                ck_assert_int_eq(stat(prom, &st), 0);
        }
        ck_assert_msg(st.st_ino != ino, "%s was not written again in 5 s", prom);
        ck_assert(g_file_get_contents(prom, &again, NULL, NULL));
        ck_assert_str_eq(again, first);

        hvtuned_stop(&run);
        ck_assert_int_eq(unsetenv("WATCHDOG_USEC"), 0);
        unsetenv("HVTUNED_TEST_METRICS_DIR");
        ck_assert_int_eq(rmdir(dir), 0);
        unlink(config);
        g_object_unref(tb);
}
END_TEST

int main(void) {
        Suite *s = suite_create("metrics-file");
        TCase *tc = tcase_create("azure");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_metrics_file);
        tcase_add_test(tc, test_metrics_dir_swapped);
        tcase_add_loop_test(tc, test_metrics_file_not_ours, 0, 4);
        tcase_add_test(tc, test_metrics_stale_temporaries);
        tcase_add_test(tc, test_metrics_refreshed);
        suite_add_tcase(s, tc);
        return test_run(s);
}
