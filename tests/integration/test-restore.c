/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hvtuned --restore on the testbeds: after --once and after kill -9 every attribute and the
 * driver's parameter are back and the runtime directory holds no record; --dry-run says what
 * and touches nothing; while a daemon runs it refuses and changes nothing; a record whose
 * original cannot be put back is kept (exit 2) and the next --restore finishes; records of a
 * disk that is gone or of an earlier disk of that name are dropped and said. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "testutil.h"

#define PARAM "module/hv_storvsc/parameters/storvsc_max_hw_queues"
#define RESTORE ((const char *const[]) { "--restore", NULL })
#define DRY_RUN ((const char *const[]) { "--restore", "--dry-run", NULL })

/* Each testbed with a configuration that changes something of every kind: the scheduler
 * (and with it nr_requests), the read-ahead, a LUN's timeout (and with it io_timeout), and
 * the cap on the driver's parameter; on azure-v6 the platform defaults for NVMe too. */
/* held: what --restore leaves as hvtuned set it, the NVMe timeouts under Azure's retry window. */
static const struct {
        const char *testbed, *config, *held;
} beds[] = {
        { "azure-gen2", "queue = { scheduler = \"none\"; read_ahead_kb = 1024; };\n"
                        "device = { timeout = 300; };\n", "" },
        { "azure-v6", "platform_defaults = true;\nqueue = { scheduler = \"none\"; nr_requests = 128; };\n",
          "nvme0n1/queue/io_timeout\nnvme0n2/queue/io_timeout\nnvme0n3/queue/io_timeout\nnvme1n1/queue/io_timeout" },
};

static gint by_name(gconstpointer a, gconstpointer b) {
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* The names in the runtime directory that are not dot files (the records), sorted. */
static char *records(void) {
        GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
        GString *out = g_string_new("");
        DIR *dir = opendir(runtime_dir());
        struct dirent *de;

        ck_assert_ptr_nonnull(dir);
        while ((de = readdir(dir)))
                if (de->d_name[0] != '.')
                        g_ptr_array_add(names, g_strdup(de->d_name));
        closedir(dir);
        g_ptr_array_sort(names, by_name);
        for (guint i = 0; i < names->len; i++)
                g_string_append_printf(out, "%s ", (const char *) names->pdata[i]);
        g_ptr_array_free(names, TRUE);
        return hv_keep(g_string_free(out, FALSE));
}

/* The driver's parameter, or NULL where the testbed has no storvsc (azure-v6). */
static char *param_read(void) {
        return g_file_test(testbed_sys_path(PARAM), G_FILE_TEST_EXISTS) ? testbed_sys_read(PARAM) : NULL;
}

/* Everything the testbed had before hvtuned but held (the attributes --restore leaves as hvtuned
 * set them): every sysfs value and the driver's parameter. */
static void assert_back_but(GHashTable *before, const char *param, const char *held) {
        ck_assert_str_eq(snapshot_diff_values(before, snapshot_take()), held);
        if (param)
                ck_assert_str_eq(testbed_sys_read(PARAM), param);
        ck_assert_str_eq(records(), "");
}

static void assert_back(GHashTable *before, const char *param) {
        assert_back_but(before, param, "");
}

static char *restore(int want_exit) {
        char *err;

        ck_assert_int_eq(hvtuned_run(RESTORE, &err), want_exit);
        return err;
}

/* (a) --once, then --restore. */
START_TEST(test_after_once) {
        UMockdevTestbed *tb = testbed_load(beds[_i].testbed);
        GHashTable *before = snapshot_take();
        char *param = param_read(), *err;

        ck_assert_int_eq(hvtuned_run_once(beds[_i].config, &err), 0);
        ck_assert_str_ne(snapshot_diff_values(before, snapshot_take()), "");
        if (param)
                ck_assert_str_ne(testbed_sys_read(PARAM), param);
        ck_assert_str_ne(records(), "");

        err = restore(0);
        assert_contains(err, " (restored)\n");
        if (param) {
                assert_contains(err, "hv_storvsc parameters/storvsc_max_hw_queues: 4 -> 0 (restored)\n");
                assert_contains(err, "storvsc reads storvsc_max_hw_queues only when it probes a controller");
        }
        assert_contains(err, " dropped, 0 kept\n");
        assert_back_but(before, param, beds[_i].held);

        /* Nothing left: said, and still 0. */
        assert_contains(restore(0), "Nothing to restore: ");
        g_object_unref(tb);
}
END_TEST

/* (b) The daemon killed: no stop, no restore; then --restore, first as a dry run. */
START_TEST(test_after_kill9) {
        GHashTable *before, *tuned;
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *err, *param, *kept;

        tb = testbed_load("azure-gen2");
        before = snapshot_take();
        param = param_read();
        g_object_unref(tb);
        azure_start(&run, &tb, &config, beds[0].config);
        hvtuned_kill(&run, SIGKILL);
        tuned = snapshot_take();
        kept = records();
        ck_assert_str_eq(kept, "hv_storvsc sda sdb sdc sdd ");

        ck_assert_int_eq(hvtuned_run(DRY_RUN, &err), 0);
        assert_contains(err, "sda queue/scheduler: none -> mq-deadline (would restore)\n");
        assert_contains(err, "sdd device/timeout: 300 -> 180 (would restore)\n");
        assert_contains(err, "Dry run, nothing written: 5 records to put back, 0 to drop, 0 to keep\n");
        ck_assert_str_eq(snapshot_diff_values(tuned, snapshot_take()), "");
        ck_assert_str_eq(records(), kept);

        err = restore(0);
        assert_contains(err, "sda queue/scheduler: none -> mq-deadline (restored)\n");
        assert_contains(err, "sdd device/timeout: 300 -> 180 (restored)\n");
        assert_contains(err, "5 records put back and deleted, 0 dropped, 0 kept\n");
        assert_back(before, param);
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* The same with restore_on_stop = false: the stop leaves everything to --restore, and says
 * so in its one line. */
START_TEST(test_after_stop_without_restore) {
        GHashTable *before;
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *param, *err;

        tb = testbed_load("azure-gen2");
        before = snapshot_take();
        param = param_read();
        g_object_unref(tb);
        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\nrestore_on_stop = false;\n");
        err = hvtuned_stop(&run);
        assert_contains(err, "Stopped (restore_on_stop = false): 0 attributes restored, 0 kept, 5 left as tuned, "
                        "on 2 disks and the storvsc driver\n");
        ck_assert_str_eq(testbed_value("sda", "queue/scheduler"), "none");
        restore(0);
        assert_back(before, param);
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* A plain stop's one line: what went back, on how many disks. */
START_TEST(test_stop_summary) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *err;

        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\n");
        err = hvtuned_stop(&run);
        assert_contains(err, "Stopped (stop): 5 attributes restored, 0 kept, 0 left as tuned, on 2 disks and the "
                        "storvsc driver\n");
        ck_assert_str_eq(records(), "");
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* (c) A daemon holds the runtime directory: refused, nothing changed, nothing deleted. */
START_TEST(test_refused_while_running) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *err, *want, *kept;
        GHashTable *tuned;

        azure_start(&run, &tb, &config, beds[0].config);
        tuned = snapshot_take();
        kept = records();
        err = restore(1);
        want = g_strdup_printf("hvtuned (pid %d) is running: `systemctl stop hvtuned` puts the originals back",
                               (int) run.pid);
        assert_contains(err, want);
        g_free(want);
        ck_assert_int_eq(hvtuned_run(DRY_RUN, &err), 1);
        assert_contains(err, "is running: `systemctl stop hvtuned` puts the originals back");
        ck_assert_str_eq(snapshot_diff_values(tuned, snapshot_take()), "");
        ck_assert_str_eq(records(), kept);
        hvtuned_stop(&run);
        ck_assert_str_eq(records(), "");
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* (d) An original that cannot be written: its record stays, exit 2; the others go back. The
 * next --restore, the fault gone, finishes. */
START_TEST(test_failed_original_kept) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        GHashTable *before = snapshot_take();
        char *param = param_read(), *err;

        ck_assert_int_eq(hvtuned_run_once(beds[0].config, &err), 0);
        ck_assert_int_eq(setenv("HVTUNED_TEST_FAULTS", "sdc/queue/scheduler=open-write:EACCES", 1), 0);
        err = restore(2);
        unsetenv("HVTUNED_TEST_FAULTS");
        assert_contains(err, "sdc queue/scheduler: none -> bfq (restore failed: Permission denied)\n");
        /* Its nr_requests goes with it: one line says it is not put back, and why, and it is
         * not written under the scheduler that stayed. */
        assert_contains(err, "sdc queue/nr_requests: 2534 -> 256 (not put back: it goes with queue/scheduler, "
                             "whose restore failed: Permission denied)\n");
        ck_assert_ptr_null(strstr(err, "sdc queue/nr_requests: 2534 -> 256 (restored)"));
        ck_assert_str_eq(testbed_value("sdc", "queue/nr_requests"), "2534");
        assert_contains(err, "sdc: its record is kept, for another hvtuned --restore or the daemon's next stop: "
                             "not put back: queue/scheduler (Permission denied), queue/nr_requests (goes with "
                             "queue/scheduler)\n");
        assert_contains(err, "4 records put back and deleted, 0 dropped, 1 kept\n");
        ck_assert_str_eq(records(), "sdc ");
        ck_assert_str_eq(testbed_value("sdc", "queue/scheduler"), "none");
        /* What it could put back of sdc is back too: the record holds what is not. */
        ck_assert_str_eq(testbed_value("sdc", "queue/read_ahead_kb"), "128");
        ck_assert_str_eq(testbed_value("sda", "queue/scheduler"), "mq-deadline");

        err = restore(0);
        assert_contains(err, "sdc queue/scheduler: none -> bfq (restored)\n");
        assert_back(before, param);
        g_object_unref(tb);
}
END_TEST

/* Records of a disk that is gone, and of an earlier disk of a name a disk has now, are
 * dropped and said; a file that is not hvtuned's is left alone. */
START_TEST(test_gone_and_other_instance_dropped) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        GHashTable *before = snapshot_take();
        char *path, *err;

        ck_assert(g_file_set_contents(path = g_build_filename(runtime_dir(), "sdz", NULL),
                                      "# hvtuned: values before hvtuned first wrote them\n"
                                      "syspath=/sys/devices/gone/block/sdz\ndev=8:400\ndiskseq=9\n"
                                      "queue/scheduler=bfq\n", -1, NULL));
        g_free(path);
        path = g_strdup_printf("# hvtuned: values before hvtuned first wrote them\nsyspath=%s\ndev=8:16\n"
                               "diskseq=999\nqueue/scheduler=bfq\n", testbed_syspath("sdb"));
        ck_assert(g_file_set_contents(hv_keep(g_build_filename(runtime_dir(), "sdb", NULL)), path, -1, NULL));
        g_free(path);
        ck_assert(g_file_set_contents(path = g_build_filename(runtime_dir(), "notes", NULL), "mine\n", -1, NULL));

        ck_assert_int_eq(hvtuned_run(DRY_RUN, &err), 0);
        assert_contains(err, "sdz: no such disk any more: its record would be dropped\n");
        ck_assert_str_eq(records(), "notes sdb sdz ");

        err = restore(0);
        assert_contains(err, "sdz: no such disk any more: its record is dropped\n");
        assert_contains(err, "sdb: its record is of an earlier disk of that name (another device number, diskseq "
                             "or sysfs directory): is dropped\n");
        assert_contains(err, "0 records put back and deleted, 2 dropped, 0 kept\n");
        ck_assert_str_eq(records(), "notes ");
        ck_assert_int_eq(unlink(path), 0);
        g_free(path);
        ck_assert_str_eq(snapshot_diff_values(before, snapshot_take()), "");
        g_object_unref(tb);
}
END_TEST

/* Every name in the runtime directory with what stat() says of it: "name ino size mtime mode". */
static char *listing(void) {
        GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
        GString *out = g_string_new("");
        DIR *dir = opendir(runtime_dir());
        struct dirent *de;
        struct stat st;

        ck_assert_ptr_nonnull(dir);
        while ((de = readdir(dir)))
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        g_ptr_array_add(names, g_strdup(de->d_name));
        closedir(dir);
        g_ptr_array_sort(names, by_name);
        ck_assert_int_eq(stat(runtime_dir(), &st), 0);
        g_string_append_printf(out, ". %04o\n", (unsigned) (st.st_mode & 07777));
        for (guint i = 0; i < names->len; i++) {
                g_autofree char *path = g_build_filename(runtime_dir(), names->pdata[i], NULL);

                ck_assert_int_eq(lstat(path, &st), 0);
                g_string_append_printf(out, "%s %lu %lld %lld.%09ld %04o\n", (const char *) names->pdata[i],
                                       (unsigned long) st.st_ino, (long long) st.st_size, (long long) st.st_mtim.tv_sec,
                                       st.st_mtim.tv_nsec, (unsigned) (st.st_mode & 07777));
        }
        g_ptr_array_free(names, TRUE);
        return hv_keep(g_string_free(out, FALSE));
}

/* --dry-run writes and unlinks nothing: not the records, not a state file a killed daemon
 * left, not a damaged record, and the directory's mode stays what it is. */
START_TEST(test_dry_run_touches_nothing) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        g_autofree char *state = g_build_filename(runtime_dir(), ".state", NULL);
        g_autofree char *damaged = g_build_filename(runtime_dir(), "sdz", NULL);
        char *err, *before;

        ck_assert_int_eq(hvtuned_run_once(beds[0].config, &err), 0);
        ck_assert(g_file_set_contents(state, "hvtuned-state\t1\n", -1, NULL));
        ck_assert(g_file_set_contents(damaged, "not a record\n", -1, NULL));
        ck_assert_int_eq(chmod(runtime_dir(), 0755), 0);
        before = listing();
        ck_assert_int_eq(hvtuned_run(DRY_RUN, &err), 0);
        assert_contains(err, "Dry run, nothing written: ");
        ck_assert_str_eq(listing(), before);
        ck_assert_int_eq(chmod(runtime_dir(), 0700), 0);
        ck_assert_int_eq(unlink(damaged), 0);
        (void) restore(0);
        g_object_unref(tb);
}
END_TEST

/* Holds a shared lock on dir as uid 65534 until killed: perl, as nobody may run it. */
static GPid lock_as_nobody(const char *dir) {
        const char *argv[] = { "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "perl", "-e",
                               "use Fcntl ':flock'; open(my $d, '<', $ARGV[0]) or die \"$!\"; "
                               "flock($d, LOCK_SH) or die \"$!\"; sleep 600", dir, NULL };
        const char *envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };
        GError *error = NULL;
        GPid pid;
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        ck_assert_int_ge(fd, 0);
        ck_assert_msg(g_spawn_async(NULL, (char **) argv, (char **) envp, G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD,
                                    NULL, NULL, &pid, &error), "setpriv: %s", error ? error->message : "?");
        /* Taken once an exclusive lock of ours is refused. */
        for (int waited = 0;; waited += 10) {
                if (flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK)
                        break;
                (void) flock(fd, LOCK_UN);
                ck_assert_msg(waited < 10000, "uid 65534 took no lock on %s", dir);
                usleep(10 * 1000);
        }
        close(fd);
        return pid;
}

/* A runtime directory made outside systemd, others allowed in (0755), where another user's
 * process took a shared lock: hvtuned makes it 0700 and says what it was, and the process
 * that keeps it out is named for what it is, never "hvtuned". */
START_TEST(test_loose_dir_locked_by_another_user) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char base[] = "/tmp/hvtuned-loose.XXXXXX", *err, *clean, *config;
        g_autofree char *dir = NULL, *holder = NULL, *want = NULL;
        struct stat st;
        GPid nobody;

        ck_assert_ptr_nonnull(mkdtemp(base));
        ck_assert_int_eq(chmod(base, 0755), 0);
        dir = g_build_filename(base, "run", NULL);
        ck_assert_int_eq(mkdir(dir, 0755), 0);
        ck_assert_int_eq(chmod(dir, 0755), 0);
        runtime_dir_use(dir);
        nobody = lock_as_nobody(dir);
        holder = g_strdup_printf("PID %d (perl, uid 65534, a shared lock)", (int) nobody);

        /* --status says so, and leaves it. */
        ck_assert_int_eq(hvtuned_run((const char *const[]) { "--status", NULL }, &err), 0);
        want = g_strdup_printf("%s is mode 0755: other users may open it, and a lock of theirs on it keeps hvtuned out "
                               "(the next hvtuned to hold it makes it 0700)\n", dir);
        assert_contains(err, want);
        g_free(want);
        ck_assert_int_eq(stat(dir, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0755);

        err = restore(1);
        want = g_strdup_printf("%s was mode 0755: other users could open it, and a lock of theirs on it keeps hvtuned "
                               "out; it is now 0700, as the unit's RuntimeDirectoryMode= makes it\n", dir);
        assert_contains(err, want);
        g_free(want);
        want = g_strdup_printf("Cannot lock %s: %s holds it, and is not hvtuned", dir, holder);
        assert_contains(err, want);
        ck_assert_msg(!strstr(err, hv_keep(g_strdup_printf("hvtuned (pid %d)", (int) nobody))), "called hvtuned:\n%s",
                      err);
        ck_assert_int_eq(stat(dir, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0700);

        /* --once is kept out the same way, and says by whom. */
        config = config_write("queue = { scheduler = \"none\"; };\n");
        ck_assert_int_eq(hvtuned_run((const char *const[]) { "--once", "-c", config, NULL }, &err), 1);
        assert_contains(err, want);
        ck_assert_str_eq(testbed_value("sda", "queue/scheduler"), "mq-deadline");

        ck_assert_int_eq(kill(nobody, SIGKILL), 0);
        ck_assert_int_eq(waitpid(nobody, NULL, 0), nobody);
        g_spawn_close_pid(nobody);
        assert_contains(restore(0), "Nothing to restore: ");
        runtime_dir_use(NULL);
        unlink(config);
        clean = g_strdup_printf("rm -rf '%s'", base);
        ck_assert_int_eq(system(clean), 0);
        g_free(clean);
        g_object_unref(tb);
}
END_TEST

/* (h) As another user: the runtime directory is root's alone (the unit's 0700). Refused as
 * --status refuses it, on stderr, and stdout, the report, is empty. */
START_TEST(test_needs_root) {
        g_autofree char *want = g_strdup_printf("hvtuned --restore needs root: %s is root's alone\n", runtime_dir());
        char *out, *err;

        if (geteuid() != 0) {
                printf("SKIP: needs root, to run hvtuned as another user\n");
                return;
        }
        ck_assert_int_eq(hvtuned_run_as_nobody(RESTORE, &out, &err), 1);
        ck_assert_str_eq(err, want);
        ck_assert_str_eq(out, "");
        ck_assert_int_eq(hvtuned_run_as_nobody(DRY_RUN, &out, &err), 1);
        ck_assert_str_eq(err, want);
}
END_TEST

int main(void) {
        Suite *s = suite_create("restore");
        TCase *tc = tcase_create("restore");

        tcase_set_timeout(tc, 240);
        tcase_add_loop_test(tc, test_after_once, 0, G_N_ELEMENTS(beds));
        tcase_add_test(tc, test_after_kill9);
        tcase_add_test(tc, test_after_stop_without_restore);
        tcase_add_test(tc, test_stop_summary);
        tcase_add_test(tc, test_refused_while_running);
        tcase_add_test(tc, test_failed_original_kept);
        tcase_add_test(tc, test_gone_and_other_instance_dropped);
        tcase_add_test(tc, test_dry_run_touches_nothing);
        tcase_add_test(tc, test_loose_dir_locked_by_another_user);
        tcase_add_test(tc, test_needs_root);
        suite_add_tcase(s, tc);
        return test_run(s);
}
