/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The originals on the Azure testbed: the records of the values hvtuned found, kept true
 * across kill -9 (even between a scheduler switch and the nr_requests write the switch
 * reset), across a restart with a smaller configuration and a spurious remove event, put back
 * on SIGTERM in order (nr_requests with its scheduler); records pruned when their disk is
 * gone, guarded when unreadable, never another's file, a new record for a LUN added again
 * without diskseq; a restore that fails kept and said once; and the SIGUSR1 dump of each
 * attribute's original, desired and current value. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "uevent.h"
#include "testutil.h"

START_TEST(test_kill9_keeps_true_originals) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *record, *path;

        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; read_ahead_kb = 1024; };\n");
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

        config_rewrite(config, "queue = { scheduler = \"none\"; nr_requests = 128; };\n");
        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });
        ck_assert_str_eq(testbed_value("sda", "queue/nr_requests"), "128");
        config_rewrite(config, "queue = { scheduler = \"none\"; };\n");
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

        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; read_ahead_kb = 1024; };\n");
        hvtuned_kill(&run, SIGKILL);

        /* Restarted with a configuration that no longer manages read_ahead_kb: its recorded
         * originals go back in the first pass, not only at stop. */
        config_rewrite(config, "queue = { scheduler = \"none\"; };\n");
        hvtuned_start(&run, (const char *const[]) { "-c", config, NULL });
        for (size_t i = 0; i < G_N_ELEMENTS(azure_disks); i++)
                ck_assert_str_eq(testbed_value(azure_disks[i], "queue/read_ahead_kb"), "128");
        assert_contains(hvtuned_stop(&run), "sdd queue/read_ahead_kb: 1024 -> 128 (restored)\n");
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

        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; nr_requests = 128; read_ahead_kb = 2048; };\n"
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

        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\n");
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
        testbed_drift(tb, "sdf", "queue/scheduler", sched);
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

        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\n");
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

/* sdf's directory swapped for a copy of itself at the same path, with no event: a new node,
 * another instance to hvtuned, as a disk removed and added again whose events are not read
 * yet. sched is the copy's scheduler. The old directory stays, beside it (its inode is not
 * handed on). The swap is one renameat2(): the path is never missing, which a pass running
 * meanwhile would report. */
static void swap_sdf_by_hand(const char *sdf, const char *sched) {
        g_autofree char *real = g_build_filename(getenv("UMOCKDEV_DIR"), sdf, NULL);
        g_autofree char *copy = g_strconcat(real, ".new", NULL);
        g_autofree char *sched_path = g_build_filename(copy, "queue", "scheduler", NULL);
        const char *cp[] = { "cp", "-a", real, copy, NULL };
        int code = 0;

        ck_assert(g_spawn_sync(NULL, (char **) cp, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, &code, NULL));
        ck_assert_msg(WIFEXITED(code) && WEXITSTATUS(code) == 0, "cp -a %s: %d", real, code);
        ck_assert(g_file_set_contents(sched_path, sched, -1, NULL));
        ck_assert_msg(renameat2(AT_FDCWD, copy, AT_FDCWD, real, RENAME_EXCHANGE) == 0, "renameat2 %s: %m", real);
}

/* A pass on a disk classified earlier (here the periodic check; as well a controller's
 * re-check or a reload; a change event classifies the disk again) that comes before the
 * events of a disk removed and added again are read: the directory at the tracked path is
 * another instance, and is not written: a repair would take its values for drift and keep
 * the old disk's originals for it. Its events, once read, make it a disk of its own, whose
 * originals go back at stop. */
START_TEST(test_readded_events_late) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *sdf, *record, *path, *err;

        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\nverify_interval = 1;\n");
        sdf = add_sdf_without_diskseq(tb, &run, "none [mq-deadline] kyber bfq \n");
        testbed_wait_value("sdf", "queue/scheduler", "none");
        swap_sdf_by_hand(sdf, "none mq-deadline kyber [bfq] \n");

        hvtuned_wait_stderr(&run, "sdf: no longer the disk at its path (removed, perhaps added again): nothing written", 1);
        ck_assert_str_eq(testbed_value("sdf", "queue/scheduler"), "bfq");
        path = g_build_filename(runtime_dir(), "sdf", NULL);
        ck_assert(g_file_get_contents(path, &record, NULL, NULL));
        hv_keep(record);
        assert_contains(record, "queue/scheduler=mq-deadline\n");

        uevent_send_blocking(sdf, "remove", 1);
        uevent_send_blocking(sdf, "add", 1);
        testbed_wait_value("sdf", "queue/scheduler", "none");
        ck_assert(g_file_get_contents(path, &record, NULL, NULL));
        hv_keep(record);
        assert_contains(record, "queue/scheduler=bfq\n");
        err = hvtuned_stop(&run);
        ck_assert_ptr_null(strstr(err, "sdf queue/scheduler: bfq -> none (drift"));
        assert_contains(err, "sdf queue/scheduler: none -> bfq (restored)\n");
        ck_assert_str_eq(testbed_value("sdf", "queue/scheduler"), "bfq");
        g_free(path);
        g_object_unref(tb);
}
END_TEST

/* The same at stop: the old disk's original is not put on the disk now at its path, whose
 * events were never read; the record stays (the next start drops it as another instance's). */
START_TEST(test_readded_at_stop) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *sdf, *err;

        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\n");
        sdf = add_sdf_without_diskseq(tb, &run, "none [mq-deadline] kyber bfq \n");
        testbed_wait_value("sdf", "queue/scheduler", "none");
        swap_sdf_by_hand(sdf, "none mq-deadline kyber [bfq] \n");

        err = hvtuned_stop(&run);
        assert_contains(err, "sdf: no longer the disk at its path (removed, perhaps added again): nothing written");
        ck_assert_ptr_null(strstr(err, "sdf queue/scheduler: bfq -> mq-deadline"));
        ck_assert_str_eq(testbed_value("sdf", "queue/scheduler"), "bfq");
        ck_assert(record_exists("sdf"));
        /* The disks that stayed are put back as ever. */
        assert_contains(err, "sda queue/scheduler: none -> mq-deadline (restored)\n");
        g_object_unref(tb);
}
END_TEST

/* A disk whose identity cannot be read (its dev a directory: EISDIR) is taken for the one
 * tracked: a reload and the stop write it as before the question was asked. */
START_TEST(test_instance_unreadable_written) {
        struct hv_run run;
        UMockdevTestbed *tb;
        char *config, *err, *dev;

        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\n");
        dev = hv_keep(g_build_filename(getenv("UMOCKDEV_DIR"), testbed_syspath("sdb"), "dev", NULL));
        ck_assert_int_eq(unlink(dev), 0);
        ck_assert_int_eq(mkdir(dev, 0755), 0);
        config_rewrite(config, "queue = { scheduler = \"none\"; read_ahead_kb = 4096; };\n");
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "RELOADING=1");
        hvtuned_wait_notify(&run, "READY=1");
        ck_assert_str_eq(testbed_value("sdb", "queue/read_ahead_kb"), "4096");
        err = hvtuned_stop(&run);
        ck_assert_ptr_null(strstr(err, "no longer the disk at its path"));
        assert_contains(err, "sdb queue/read_ahead_kb: 4096 -> 128 (restored)\n");
        ck_assert_str_eq(testbed_value("sdb", "queue/read_ahead_kb"), "128");
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

        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\n");
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

        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\nrestore_on_stop = false;\n");
        ck_assert(record_exists("sda"));

        /* A hot-added disk gets a record when first written; removed, the record goes. */
        testbed_add(tb, "azure-gen2-sdf.umockdev");
        hvtuned_wait_notify(&run, "STATUS=5 storvsc disks");
        sdf = testbed_syspath("sdf");
        testbed_drift(tb, "sdf", "queue/scheduler", "none [mq-deadline] kyber bfq \n");
        uevent_send_blocking(sdf, "change", 1);
        testbed_wait_value("sdf", "queue/scheduler", "none");
        ck_assert(record_exists("sdf"));
        testbed_remove(tb, sdf);
        hvtuned_wait_notify(&run, "STATUS=4 storvsc disks");
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
        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\n");
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

        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; };\n");
        ck_assert(!record_exists("sdz"));
        ck_assert(record_exists("vda"));
        /* sda's true originals may be in that record: hvtuned does not write sda rather than
         * record its current values over them. The other disks are tuned. */
        ck_assert_str_eq(run.status, "4 storvsc disks on 2 controllers: 3 tuned, 1 failed" AZURE_HWQ);
        ck_assert_str_eq(testbed_value("sda", "queue/scheduler"), "mq-deadline");
        ck_assert_str_eq(testbed_value("sdc", "queue/scheduler"), "none");

        /* One hvtuned at a time owns the records. */
        once[0] = "--once", once[1] = "-c", once[2] = config, once[3] = NULL;
        ck_assert_int_eq(hvtuned_run(once, &err), 1);
        /* Named as --restore names it: the pid of the daemon that holds the directory. */
        assert_contains(err, hv_keep(g_strdup_printf("hvtuned (pid %d) is running (it holds ", (int) run.pid)));

        /* Once the record can be read (here: it is gone), the next pass writes again. */
        path = g_strdup_printf("rm -rf '%s/sda'", runtime_dir());
        ck_assert_int_eq(system(path), 0);
        g_free(path);
        uevent_send_blocking(testbed_syspath("sda"), "change", 1);
        hvtuned_wait_notify(&run, "STATUS=4 storvsc disks on 2 controllers: 4 tuned, 0 failed");
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

        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; nomerges = 1; };\n");
        /* sda's nomerges becomes unreadable; then a reload stops managing it. */
        file = g_build_filename(getenv("UMOCKDEV_DIR"), testbed_syspath("sda"), "queue", "nomerges", NULL);
        ck_assert_int_eq(unlink(file), 0);
        ck_assert_int_eq(mkdir(file, 0755), 0);
        g_free(file);
        config_rewrite(config, "queue = { scheduler = \"none\"; };\n");
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "READY=1");
        ck_assert_str_eq(run.status, "4 storvsc disks on 2 controllers: 3 tuned, 1 failed" AZURE_HWQ);
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

        azure_start(&run, &tb, &config, "queue = { scheduler = \"none\"; read_ahead_kb = 1024; };\n"
                                  "override = ( { match = { lun = 1; host = 1; }; device = { timeout = 300; }; } );\n");
        testbed_drift(tb, "sdc", "queue/read_ahead_kb", "512\n");  /* no event: the dump reads afresh */
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
        assert_contains(err, "State: 4 storvsc disks on 2 controllers: 4 tuned, 0 failed" AZURE_HWQ "\n");
        g_object_unref(tb);
}
END_TEST

int main(void) {
        Suite *s = suite_create("originals");
        TCase *tc = tcase_create("azure");

        tcase_set_timeout(tc, 240);
        tcase_add_test(tc, test_kill9_between_scheduler_and_nr_requests);
        tcase_add_test(tc, test_nr_requests_goes_back_with_the_scheduler);
        tcase_add_test(tc, test_kill9_keeps_true_originals);
        tcase_add_test(tc, test_restart_with_smaller_config);
        tcase_add_test(tc, test_sigterm_restores);
        tcase_add_test(tc, test_no_restore_and_removed_records);
        tcase_add_test(tc, test_spurious_remove_keeps_originals);
        tcase_add_test(tc, test_records_pruned_and_guarded);
        tcase_add_test(tc, test_remove_leaves_files_not_hvtuneds);
        tcase_add_test(tc, test_failed_restore_kept_and_quiet);
        tcase_add_test(tc, test_state_dump);
        suite_add_tcase(s, tc);
        /* A kernel without diskseq (tests/testbeds gives every 5.15+ disk one). */
        tc = tcase_create("no-diskseq");
        tcase_set_timeout(tc, 240);
        tcase_add_test(tc, test_readded_without_diskseq);
        tcase_add_test(tc, test_readded_without_diskseq_restart);
        tcase_add_test(tc, test_readded_events_late);
        tcase_add_test(tc, test_readded_at_stop);
        tcase_add_test(tc, test_instance_unreadable_written);
        suite_add_tcase(s, tc);
        return test_run(s);
}
