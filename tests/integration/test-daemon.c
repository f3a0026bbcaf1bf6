/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The real hvtuned daemon on a umockdev testbed with a NOTIFY_SOCKET the test owns: READY=1
 * after the start-up pass, STATUS kept current, hotplug add / change / remove handled after
 * READY on every VM, SIGHUP reload and hvtuned --reload, and a clean SIGTERM (or SIGINT) with
 * STOPPING=1. (Its metrics file: test-metrics-file.c; a service manager that fails it:
 * test-manager.c.) */
#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "uevent.h"
#include "testutil.h"

START_TEST(test_ready_and_status) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *config = config_write("queue = { scheduler = \"none\"; };\n");
        const char *args[] = { "-c", config, NULL };
        struct hv_run run;
        char *err;

        GHashTable *before = snapshot_take();

        hvtuned_start(&run, args);
        /* READY=1 comes after the start-up pass: everything is tuned by then, and nothing
         * but the Hyper-V disks with another scheduler was touched (and their nr_requests, by
         * the kernel's reset on a switch). */
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()),
                         "sda/queue/nr_requests\nsda/queue/scheduler\nsdc/queue/nr_requests\nsdc/queue/scheduler");
        ck_assert_str_eq(run.status, "4 storvsc disks on 2 controllers: 4 tuned, 0 failed" AZURE_HWQ);
        ck_assert_str_eq(testbed_value("sda", "queue/scheduler"), "none");
        ck_assert_str_eq(testbed_value("sdc", "queue/scheduler"), "none");
        err = hvtuned_stop(&run);
        assert_contains(err, "sda queue/scheduler: mq-deadline -> none (applied)\n");
        assert_contains(err, "Started: 4 storvsc disks on 2 controllers: 4 tuned, 0 failed" AZURE_HWQ "\n");
        /* Unchanged attributes are not reported by the daemon unless -v. */
        ck_assert_ptr_null(strstr(err, "(unchanged)"));
        unlink(config);
        g_object_unref(tb);
}
END_TEST

START_TEST(test_hotplug_add_change_remove) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *config = config_write("queue = { scheduler = \"none\"; nr_requests = 128; };\n");
        const char *args[] = { "-c", config, NULL };
        char *sdf, *vda, *err;
        GHashTable *before;
        struct hv_run run;

        hvtuned_start(&run, args);

        /* add: a data disk hot-added on LUN 2 of the data controller (umockdev sends the
         * "add" uevents of the new devices itself). */
        testbed_add(tb, "azure-gen2-sdf.umockdev");
        hvtuned_wait_notify(&run, "STATUS=5 storvsc disks on 2 controllers: 5 tuned, 0 failed");
        sdf = testbed_syspath("sdf");
        ck_assert_str_eq(testbed_value("sdf", "queue/nr_requests"), "128");

        /* change: a distro rule put bfq back on sdc; the change event restores none. */
        testbed_sentinel(tb, "sdc");

        /* Events on a disk that is not Hyper-V's change nothing: once sdd's drift, sent after
         * them, is repaired, they were handled, and only the test's own write to vda shows. */
        before = snapshot_take();
        vda = testbed_syspath("vda");
        umockdev_testbed_set_attribute(tb, vda, "queue/scheduler", "none [mq-deadline] kyber bfq \n");
        uevent_send_blocking(vda, "change", 1);
        uevent_send_blocking(vda, "add", 1);
        testbed_sentinel(tb, "sdd");
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()), "vda/queue/scheduler");
        ck_assert_str_eq(testbed_read("vda", "queue/scheduler"), "none [mq-deadline] kyber bfq \n");

        /* remove: the disk is forgotten. */
        testbed_remove(tb, sdf);
        hvtuned_wait_notify(&run, "STATUS=4 storvsc disks on 2 controllers: 4 tuned, 0 failed");

        err = hvtuned_stop(&run);
        assert_contains(err, "sdf: found Hyper-V scsi disk 1:0:0:2 on controller {f8b3781b-1e82-4818-a1c3-63d806ec15bb}");
        assert_contains(err, "sdf queue/nr_requests: 2534 -> 128 (applied)\n");
        assert_contains(err, "sdc queue/scheduler: bfq -> none (drift repaired)\n");
        assert_contains(err, "sdd queue/scheduler: bfq -> none (drift repaired)\n");
        assert_contains(err, "sdf: removed Hyper-V scsi disk 1:0:0:2");
        ck_assert_ptr_null(strstr(err, "vda"));
        unlink(config);
        g_object_unref(tb);
}
END_TEST

START_TEST(test_stops_matching) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *config = config_write("queue = { scheduler = \"none\"; };\n");
        const char *args[] = { "-c", config, NULL };
        char *driver, *sdd;
        struct hv_run run;

        hvtuned_start(&run, args);

        /* The data controller is unbound from hv_storvsc: on sdd's next event hvtuned
         * forgets it, and from then on leaves it as it is. */
        driver = g_build_filename(getenv("UMOCKDEV_DIR"), "sys/devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/"
                                  "VMBUS:00/f8b3781b-1e82-4818-a1c3-63d806ec15bb/driver", NULL);
        ck_assert_int_eq(unlink(driver), 0);
        g_free(driver);
        sdd = testbed_syspath("sdd");
        uevent_send_blocking(sdd, "change", 1);
        hvtuned_wait_notify(&run, "STATUS=3 storvsc disks on 2 controllers: 3 tuned, 0 failed");

        umockdev_testbed_set_attribute(tb, sdd, "queue/scheduler", "none mq-deadline kyber [bfq] \n");
        uevent_send_blocking(sdd, "change", 1);
        testbed_sentinel(tb, "sda");  /* handled after sdd's event */
        ck_assert_str_eq(testbed_value("sdd", "queue/scheduler"), "bfq");

        assert_contains(hvtuned_stop(&run), "sdd: left alone, no longer a Hyper-V scsi disk 1:0:0:1");
        unlink(config);
        g_object_unref(tb);
}
END_TEST

START_TEST(test_reprobed_is_new) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *config = config_write("queue = { scheduler = \"none\"; };\n"), *sdc, *err;
        const char *args[] = { "-c", config, NULL };
        struct hv_run run;

        hvtuned_start(&run, args);
        /* The LUN was removed and probed again between two events hvtuned saw: same name,
         * same path, a new diskseq. It is a new disk, whose original is what it has now. */
        sdc = testbed_syspath("sdc");
        umockdev_testbed_set_attribute(tb, sdc, "diskseq", "9999\n");
        umockdev_testbed_set_attribute(tb, sdc, "queue/scheduler", "none [mq-deadline] kyber bfq \n");
        uevent_send_blocking(sdc, "change", 1);
        testbed_wait_value("sdc", "queue/scheduler", "none");
        err = hvtuned_stop(&run);
        assert_contains(err, "sdc: removed Hyper-V scsi disk 1:0:0:0");
        assert_contains(err, "sdc queue/scheduler: mq-deadline -> none (applied)\n");
        /* Restored to what the new disk had, not to the old one's bfq. */
        assert_contains(err, "sdc queue/scheduler: none -> mq-deadline (restored)\n");
        ck_assert_str_eq(testbed_value("sdc", "queue/scheduler"), "mq-deadline");
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* Every VM as a daemon: start-up, hot-add, drift on a LUN's device/ attribute (its SCSI
 * device's change event), remove; the disks that are not Hyper-V's never touched. */
static const struct {
        const char *profile, *added, *fragment, *lun_disk, *status_before, *status_added;
} vms[] = {
        { "gen1", "sdf", "gen1-sdf.umockdev", "sdc",
          "4 storvsc disks on 3 controllers: 4 tuned, 0 failed" GEN1_HWQ,
          "5 storvsc disks on 3 controllers: 5 tuned, 0 failed" GEN1_HWQ },
        { "wsl2", "sde", "wsl2-sde.umockdev", "sda",
          "4 storvsc disks on 1 controller: 4 tuned, 0 failed" WSL_HWQ,
          "5 storvsc disks on 1 controller: 5 tuned, 0 failed" WSL_HWQ },
};

static GHashTable *without_hyperv(GHashTable *snapshot) {
        GHashTable *h = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        GHashTableIter it;
        gpointer key, value;

        g_hash_table_iter_init(&it, snapshot);
        while (g_hash_table_iter_next(&it, &key, &value))
                if (!strstr(key, "/VMBUS:"))
                        g_hash_table_insert(h, g_strdup(key), g_strdup(value));
        return h;
}

START_TEST(test_vm_as_daemon) {
        UMockdevTestbed *tb = testbed_load(vms[_i].profile);
        char *config = config_write("queue = { scheduler = \"none\"; };\ndevice = { timeout = 300; };\n");
        const char *args[] = { "-c", config, NULL };
        GHashTable *others = without_hyperv(snapshot_take()), *now;
        char *added, *lun, *err;
        struct hv_run run;

        hvtuned_start(&run, args);
        ck_assert_str_eq(run.status, vms[_i].status_before);

        testbed_add(tb, vms[_i].fragment);
        hvtuned_wait_notify(&run, vms[_i].status_added);
        ck_assert_str_eq(testbed_value(vms[_i].added, "queue/scheduler"), "none");
        ck_assert_str_eq(testbed_value(vms[_i].added, "device/timeout"), "300");

        /* The LUN's timeout drifts; the change event comes from the SCSI device. */
        lun = g_path_get_dirname(testbed_syspath(vms[_i].lun_disk));  /* .../H:C:T:L/block */
        hv_keep(lun);
        *strrchr(lun, '/') = '\0';
        umockdev_testbed_set_attribute(tb, lun, "timeout", "180\n");
        uevent_send_blocking(lun, "change", 1);
        testbed_wait_value(vms[_i].lun_disk, "device/timeout", "300");

        added = testbed_syspath(vms[_i].added);
        testbed_remove(tb, added);
        hvtuned_wait_notify(&run, vms[_i].status_before);

        now = without_hyperv(snapshot_take());
        ck_assert_str_eq(snapshot_diff(others, now), "");
        err = hvtuned_stop(&run);
        assert_contains(err, "device/timeout: 180 -> 300 (drift repaired)\n");
        g_hash_table_unref(others);
        g_hash_table_unref(now);
        unlink(config);
        g_object_unref(tb);
}
END_TEST

START_TEST(test_reload) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *config = config_write("queue = { scheduler = \"none\"; };\n");
        const char *args[] = { "-c", config, NULL };
        struct hv_run run;
        GHashTable *before;

        hvtuned_start(&run, args);

        /* A bad file keeps the running configuration and says where the error is. */
        config_rewrite(config, "queue = {\n  read_ahead_kb = \"big\";\n};\n");
        before = snapshot_take();
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "RELOADING=1");
        hvtuned_wait_notify(&run, "READY=1");
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()), "");
        assert_contains(run.status, "; config error at ");
        assert_contains(run.status, ":2, keeping previous");

        /* A good one is applied. */
        config_rewrite(config, "queue = { scheduler = \"none\"; read_ahead_kb = 1024; };\n");
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "RELOADING=1");
        hvtuned_wait_notify(&run, "READY=1");
        ck_assert_str_eq(run.status, "4 storvsc disks on 2 controllers: 4 tuned, 0 failed" AZURE_HWQ);
        ck_assert_str_eq(testbed_value("sdd", "queue/read_ahead_kb"), "1024");

        assert_contains(hvtuned_stop(&run), ":2: queue.read_ahead_kb: expected an integer, got a string\n");
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* hvtuned --reload=PID, the unit's ExecReload=: returns once the new values are written, and
 * fails (exit 1) for a file the daemon refuses. */
START_TEST(test_reload_waits) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *config = config_write("queue = { scheduler = \"none\"; };\n");
        const char *args[] = { "-c", config, NULL };
        char pid[16], *err;
        struct hv_run run;

        hvtuned_start(&run, args);
        snprintf(pid, sizeof(pid), "%d", (int) run.pid);
        {
                const char *reload[] = { "--reload", pid, NULL };

                config_rewrite(config, "queue = { scheduler = \"none\"; read_ahead_kb = 2048; };\n");
                ck_assert_int_eq(hvtuned_run(reload, &err), 0);
                /* No waiting for a notification: when it returned, the values were written. */
                ck_assert_str_eq(testbed_value("sdc", "queue/read_ahead_kb"), "2048");
                ck_assert_str_eq(testbed_value("sda", "queue/read_ahead_kb"), "2048");

                config_rewrite(config, "queue = { read_ahead_kb = -1; };\n");
                ck_assert_int_eq(hvtuned_run(reload, &err), 1);
                assert_contains(err, "The new configuration was refused (error at ");
                ck_assert_str_eq(testbed_value("sdc", "queue/read_ahead_kb"), "2048");
        }
        {
                const char *bad[] = { "--reload", "x1", NULL };

                ck_assert_int_eq(hvtuned_run(bad, &err), 1);
                assert_contains(err, "--reload: 'x1' is not a process id");
        }
        (void) hvtuned_stop(&run);
        {
                const char *gone[] = { "--reload", pid, NULL };

                /* Nobody there any more: no wait, an error. */
                ck_assert_int_eq(hvtuned_run(gone, &err), 1);
                assert_contains(err, "Cannot signal hvtuned");
        }
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* A runtime directory the daemon refused (group-writable) holds no record of its reloads, and
 * one found there is nobody's word: --reload still has the daemon reload, and fails saying why
 * the result is unknown. A record of another PID (an earlier daemon's) is not waited on. */
START_TEST(test_reload_without_record) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *config = config_write("queue = { scheduler = \"none\"; };\n");
        const char *args[] = { "-c", config, NULL };
        char base[] = "/tmp/hvtuned-reload.XXXXXX", pid[16], *err, *forged, *record, *want;
        g_autofree char *dir = NULL, *clean = NULL;
        struct hv_run run;

        ck_assert_ptr_nonnull(mkdtemp(base));
        dir = g_build_filename(base, "run", NULL);
        ck_assert_int_eq(mkdir(dir, 0755), 0);
        ck_assert_int_eq(chmod(dir, 0775), 0);
        runtime_dir_use(dir);
        hvtuned_start(&run, args);
        snprintf(pid, sizeof(pid), "%d", (int) run.pid);
        record = g_build_filename(dir, ".reload", NULL);
        ck_assert(!g_file_test(record, G_FILE_TEST_EXISTS));
        /* What anyone who can write there could leave: "reloaded, and it was fine". */
        forged = g_strdup_printf("%d 9 9 ok\n", (int) run.pid);
        ck_assert(g_file_set_contents(record, forged, -1, NULL));
        {
                const char *reload[] = { "--reload", pid, NULL };

                config_rewrite(config, "queue = { scheduler = \"none\"; read_ahead_kb = 2048; };\n");
                ck_assert_int_eq(hvtuned_run(reload, &err), 1);
                want = g_strdup_printf("hvtuned (PID %d) was signalled to reload, but whether it took the file "
                                       "cannot be told: %s is refused for hvtuned's records (it is writable by "
                                       "group or others (mode 0775))", (int) run.pid, dir);
                assert_contains(err, want);
                g_free(want);
                /* Signalled all the same: the daemon reloads. */
                hvtuned_wait_notify(&run, "RELOADING=1");
                hvtuned_wait_notify(&run, "READY=1");
                ck_assert_str_eq(testbed_value("sdc", "queue/read_ahead_kb"), "2048");

                /* The directory fixed: the record there is still not this daemon's. */
                ck_assert_int_eq(chmod(dir, 0755), 0);
                g_free(forged);
                forged = g_strdup_printf("%d 0 0 ok\n", (int) run.pid + 1);
                ck_assert(g_file_set_contents(record, forged, -1, NULL));
                config_rewrite(config, "queue = { scheduler = \"none\"; read_ahead_kb = 1024; };\n");
                ck_assert_int_eq(hvtuned_run(reload, &err), 1);
                want = g_strdup_printf("cannot be told: %s/.reload is another process's, not PID %d's", dir,
                                       (int) run.pid);
                assert_contains(err, want);
                g_free(want);
                hvtuned_wait_notify(&run, "READY=1");
                ck_assert_str_eq(testbed_value("sdc", "queue/read_ahead_kb"), "1024");
        }
        (void) hvtuned_stop(&run);
        runtime_dir_use(NULL);
        clean = g_strdup_printf("rm -rf '%s'", base);
        ck_assert_int_eq(system(clean), 0);
        g_free(forged);
        g_free(record);
        unlink(config);
        g_object_unref(tb);
}
END_TEST

START_TEST(test_sigint) {
        UMockdevTestbed *tb = testbed_load("legacy");
        char *config = config_write("queue = { scheduler = \"none\"; };\n");
        const char *args[] = { "-c", config, NULL };
        struct hv_run run;

        hvtuned_start(&run, args);
        ck_assert_str_eq(run.status, "1 storvsc disk on 1 controller: 1 tuned, 0 failed");
        assert_contains(hvtuned_stop_with(&run, SIGINT), "sda queue/scheduler: deadline -> noop (applied)\n");
        unlink(config);
        g_object_unref(tb);
}
END_TEST

START_TEST(test_bad_start) {
        UMockdevTestbed *tb = testbed_load("legacy");
        char *config = config_write("queue = { scheduler = 7; };\n"), *err;
        const char *args[] = { "-c", config, NULL };

        /* A daemon with a bad configuration does not start, and touches nothing. */
        GHashTable *before = snapshot_take();
        ck_assert_int_eq(hvtuned_run(args, &err), 1);
        assert_contains(err, ":1: queue.scheduler: expected a string, got an integer\n");
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()), "");
        unlink(config);
        g_object_unref(tb);
}
END_TEST

int main(void) {
        Suite *s = suite_create("daemon");
        TCase *tc = tcase_create("daemon");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_ready_and_status);
        tcase_add_test(tc, test_hotplug_add_change_remove);
        tcase_add_test(tc, test_stops_matching);
        tcase_add_test(tc, test_reprobed_is_new);
        tcase_add_loop_test(tc, test_vm_as_daemon, 0, G_N_ELEMENTS(vms));
        tcase_add_test(tc, test_reload);
        tcase_add_test(tc, test_reload_waits);
        tcase_add_test(tc, test_reload_without_record);
        tcase_add_test(tc, test_sigint);
        tcase_add_test(tc, test_bad_start);
        suite_add_tcase(s, tc);
        return test_run(s);
}
