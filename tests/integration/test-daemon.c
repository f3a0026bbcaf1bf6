/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The real hvtuned daemon on a umockdev testbed with a NOTIFY_SOCKET the test owns: READY=1
 * after the start-up pass, STATUS kept current, hotplug add / change / remove handled after
 * READY, SIGHUP reload, and a clean SIGTERM with STOPPING=1. */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "uevent.h"
#include "testutil.h"

/* A distro rule puts bfq back on sysname; the change event that follows must undo it. This
 * is also how a test knows that events sent before it were handled: in order. */
static void drift_and_wait(UMockdevTestbed *tb, const char *sysname) {
        char *syspath = testbed_syspath(sysname);

        umockdev_testbed_set_attribute(tb, syspath, "queue/scheduler", "none mq-deadline kyber [bfq] \n");
        uevent_send_blocking(syspath, "change", 1);
        testbed_wait_value(sysname, "queue/scheduler", "none");
}

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
        ck_assert_str_eq(run.status, "4 Hyper-V disks on 2 controllers: 4 tuned, 0 failed" AZURE_HWQ);
        ck_assert_str_eq(testbed_value("sda", "queue/scheduler"), "none");
        ck_assert_str_eq(testbed_value("sdc", "queue/scheduler"), "none");
        err = hvtuned_stop(&run);
        assert_contains(err, "sda queue/scheduler: mq-deadline -> none (applied)\n");
        assert_contains(err, "Started: 4 Hyper-V disks on 2 controllers: 4 tuned, 0 failed" AZURE_HWQ "\n");
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
        hvtuned_wait_notify(&run, "STATUS=5 Hyper-V disks on 2 controllers: 5 tuned, 0 failed");
        sdf = testbed_syspath("sdf");
        ck_assert_str_eq(testbed_value("sdf", "queue/nr_requests"), "128");

        /* change: a distro rule put bfq back on sdc; the change event restores none. */
        drift_and_wait(tb, "sdc");

        /* Events on a disk that is not Hyper-V's change nothing: once sdd's drift, sent after
         * them, is repaired, they were handled, and only the test's own write to vda shows. */
        before = snapshot_take();
        vda = testbed_syspath("vda");
        umockdev_testbed_set_attribute(tb, vda, "queue/scheduler", "none [mq-deadline] kyber bfq \n");
        uevent_send_blocking(vda, "change", 1);
        uevent_send_blocking(vda, "add", 1);
        drift_and_wait(tb, "sdd");
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()), "vda/queue/scheduler");
        ck_assert_str_eq(testbed_read("vda", "queue/scheduler"), "none [mq-deadline] kyber bfq \n");

        /* remove: the disk is forgotten. */
        testbed_remove(tb, sdf);
        hvtuned_wait_notify(&run, "STATUS=4 Hyper-V disks on 2 controllers: 4 tuned, 0 failed");

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
        hvtuned_wait_notify(&run, "STATUS=3 Hyper-V disks on 2 controllers: 3 tuned, 0 failed");

        umockdev_testbed_set_attribute(tb, sdd, "queue/scheduler", "none mq-deadline kyber [bfq] \n");
        uevent_send_blocking(sdd, "change", 1);
        drift_and_wait(tb, "sda");  /* handled after sdd's event */
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
          "4 Hyper-V disks on 3 controllers: 4 tuned, 0 failed" GEN1_HWQ,
          "5 Hyper-V disks on 3 controllers: 5 tuned, 0 failed" GEN1_HWQ },
        { "wsl2", "sde", "wsl2-sde.umockdev", "sda",
          "4 Hyper-V disks on 1 controller: 4 tuned, 0 failed" WSL_HWQ,
          "5 Hyper-V disks on 1 controller: 5 tuned, 0 failed" WSL_HWQ },
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
        ck_assert(g_file_set_contents(config, "queue = {\n  read_ahead_kb = \"big\";\n};\n", -1, NULL));
        before = snapshot_take();
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "RELOADING=1");
        hvtuned_wait_notify(&run, "READY=1");
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()), "");
        assert_contains(run.status, "; config error at ");
        assert_contains(run.status, ":2, keeping previous");

        /* A good one is applied. */
        ck_assert(g_file_set_contents(config, "queue = { scheduler = \"none\"; read_ahead_kb = 1024; };\n", -1, NULL));
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "RELOADING=1");
        hvtuned_wait_notify(&run, "READY=1");
        ck_assert_str_eq(run.status, "4 Hyper-V disks on 2 controllers: 4 tuned, 0 failed" AZURE_HWQ);
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

                ck_assert(g_file_set_contents(config, "queue = { scheduler = \"none\"; read_ahead_kb = 2048; };\n",
                                              -1, NULL));
                ck_assert_int_eq(hvtuned_run(reload, &err), 0);
                /* No waiting for a notification: when it returned, the values were written. */
                ck_assert_str_eq(testbed_value("sdc", "queue/read_ahead_kb"), "2048");
                ck_assert_str_eq(testbed_value("sda", "queue/read_ahead_kb"), "2048");

                ck_assert(g_file_set_contents(config, "queue = { read_ahead_kb = -1; };\n", -1, NULL));
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

                ck_assert(g_file_set_contents(config, "queue = { scheduler = \"none\"; read_ahead_kb = 2048; };\n",
                                              -1, NULL));
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
                ck_assert(g_file_set_contents(config, "queue = { scheduler = \"none\"; read_ahead_kb = 1024; };\n",
                                              -1, NULL));
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

/* A send to the service manager that fails once or twice, as a kernel short of memory
 * (ENOBUFS, ENOMEM) or an interrupted call fail it, loses nothing: READY=1, a reload's
 * RELOADING=1 and READY=1, and STOPPING=1 all reach the manager (tests/emulate/notify-faults.c;
 * systemd waits for READY=1 until its start timeout, then kills the service). */
static const char *const notify_faults[] = {
        "ENOBUFS:2:READY=1,ENOBUFS:1:RELOADING=1,ENOBUFS:1:STOPPING=1",
        "ENOMEM:1:READY=1,ENOMEM:1:RELOADING=1,ENOMEM:1:STOPPING=1",
        "EINTR:1:READY=1,EINTR:1:RELOADING=1,EINTR:1:STOPPING=1",
        "EAGAIN:1:READY=1,EAGAIN:1:RELOADING=1,EAGAIN:1:STOPPING=1",
};

START_TEST(test_notify_send_fails) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *config = config_write("queue = { scheduler = \"none\"; };\n");
        const char *args[] = { "-c", config, NULL };
        struct hv_run run;

        ck_assert_int_eq(setenv("HVTUNED_TEST_NOTIFY_FAULTS", notify_faults[_i], 1), 0);
        hvtuned_start(&run, args);
        ck_assert_str_eq(run.status, "4 Hyper-V disks on 2 controllers: 4 tuned, 0 failed" AZURE_HWQ);

        ck_assert(g_file_set_contents(config, "queue = { scheduler = \"none\"; read_ahead_kb = 1024; };\n", -1, NULL));
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "RELOADING=1");
        hvtuned_wait_notify(&run, "READY=1");
        ck_assert_str_eq(testbed_value("sdc", "queue/read_ahead_kb"), "1024");

        /* STOPPING=1 is checked by the stop. */
        (void) hvtuned_stop(&run);
        ck_assert_str_eq(testbed_value("sdc", "queue/scheduler"), "bfq");
        ck_assert_int_eq(unsetenv("HVTUNED_TEST_NOTIFY_FAULTS"), 0);
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
        ck_assert_str_eq(run.status, "1 Hyper-V disk on 1 controller: 1 tuned, 0 failed");
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

        drift_and_wait(tb, "sdc");
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
        drift_and_wait(tb, "sdc");
        ck_assert_msg(wait_metrics_either(moved_prom, victim_prom, "hvtuned_drift_repairs_total 1\n") == 0,
                      "the rewrite went through the symlink into %s", victim);
        assert_planted(victim_prom, "precious\n", &planted, "by the rewrite");

        /* A reload naming another file in the swapped directory: the old file goes from where
         * it is, the new one is refused. */
        renamed = g_build_filename(textfile, "renamed.prom", NULL);
        g_free(text);
        text = g_strdup_printf("queue = { scheduler = \"none\"; };\nmetrics_file = \"%s\";\n", renamed);
        ck_assert(g_file_set_contents(config, text, -1, NULL));
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "READY=1");
        drift_and_wait(tb, "sdc");
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
        drift_and_wait(tb, "sdc");
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
                ck_assert(g_file_set_contents(config, text, -1, NULL));
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

/* The hvtuned of a test that must not outlive it: killed when the test exits, failed or not. */
static pid_t stray;

static void kill_stray(void) {
        if (stray > 0)
                (void) kill(stray, SIGKILL);
}

/* Receives the datagrams waiting on fd for up to timeout_ms, until one holding want comes after
 * one holding before: true when it did. */
static bool drain_until(int fd, const char *before, const char *want, int timeout_ms) {
        bool seen_before = false;

        for (int waited = 0; waited < timeout_ms; ) {
                char buf[4096];
                ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

                if (n < 0) {
                        usleep(10 * 1000);
                        waited += 10;
                        continue;
                }
                buf[n] = '\0';
                if (seen_before && strstr(buf, want))
                        return true;
                if (strstr(buf, before))
                        seen_before = true;
        }
        return false;
}

/* A service manager that does not read its notification socket, as PID 1 busy elsewhere: past
 * net.unix.max_dgram_qlen datagrams the socket is full, and libsystemd's sd_notify() blocks
 * on it. With a watchdog pinging every 10 ms, hvtuned serves its loop all the same: a drift
 * is repaired, a reload applied, SIGTERM ends it. RELOADING=1 and READY=1 are not lost: they
 * wait, in order, until the manager reads. That it waits is said once, not per ping. */
START_TEST(test_manager_not_reading) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *config = config_write("queue = { scheduler = \"none\"; };\n"), *err = NULL;
        char err_path[] = "/tmp/hvtuned-err.XXXXXX", *sdb = testbed_syspath("sdb");
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd, probe, status, told = 0, timeout_ms = hvtuned_under_valgrind() ? 100000 : 10000;

        snprintf(sa.sun_path, sizeof(sa.sun_path), "/tmp/hvtuned-stuck.%d", getpid());
        unlink(sa.sun_path);
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        probe = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_ge(probe, 0);
        ck_assert_int_eq(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        ck_assert_int_ge(status = mkstemp(err_path), 0);
        close(status);

        ck_assert_int_eq(setenv("WATCHDOG_USEC", "20000", 1), 0);
        atexit(kill_stray);
        stray = hvtuned_spawn_notify((const char *const[]) { "-v", "-c", config, NULL }, sa.sun_path, err_path);

        /* The start-up pass is over (READY=1 follows it), the pings fill the socket, and
         * the test's own datagrams whatever room is left: from here every send would block. */
        testbed_wait_value("sda", "queue/scheduler", "none");
        usleep(300 * 1000);
        while (sendto(probe, "X=1", 3, MSG_DONTWAIT, (struct sockaddr *) &sa, sizeof(sa)) == 3)
                ;
        ck_assert_int_eq(errno, EAGAIN);

        umockdev_testbed_set_attribute(tb, sdb, "queue/scheduler", "none mq-deadline kyber [bfq] \n");
        uevent_send_blocking(sdb, "change", 1);
        testbed_wait_value_for("sdb", "queue/scheduler", "none", timeout_ms);

        ck_assert(g_file_set_contents(config, "queue = { scheduler = \"none\"; read_ahead_kb = 1024; };\n", -1, NULL));
        ck_assert_int_eq(kill(stray, SIGHUP), 0);
        testbed_wait_value_for("sdb", "queue/read_ahead_kb", "1024", timeout_ms);
        ck_assert_msg(drain_until(fd, "RELOADING=1", "READY=1", timeout_ms),
                      "no RELOADING=1, then READY=1, once the manager reads");

        ck_assert_int_eq(kill(stray, SIGTERM), 0);
        status = hvtuned_wait_exit(stray, timeout_ms);
        ck_assert_msg(status != -1, "hvtuned did not exit within %d ms of SIGTERM", timeout_ms);
        stray = 0;
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        ck_assert(g_file_get_contents(err_path, &err, NULL, NULL));
        for (const char *p = err; (p = strstr(p, "is not reading")); p++)
                told++;
        ck_assert_msg(told >= 1 && told <= 3, "told %d times that the manager is not reading:\n%s", told, err);

        g_free(err);
        close(probe);
        close(fd);
        unlink(sa.sun_path);
        unlink(err_path);
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* Receives the datagrams waiting on fd for up to timeout_ms, until one holds want. */
static bool receive_until(int fd, const char *want, int timeout_ms) {
        for (int waited = 0; waited < timeout_ms; ) {
                char buf[4096];
                ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

                if (n < 0) {
                        usleep(10 * 1000);
                        waited += 10;
                        continue;
                }
                buf[n] = '\0';
                if (strstr(buf, want))
                        return true;
        }
        return false;
}

static int bind_notify(const struct sockaddr_un *sa) {
        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(bind(fd, (const struct sockaddr *) sa, sizeof(*sa)), 0);
        return fd;
}


/* A service manager that binds its notification socket anew at the same path (systemd
 * re-executed, a container's manager restarted): the socket hvtuned was connected to is gone
 * (ECONNREFUSED, then ENOENT while nothing is bound there). hvtuned says once, as a warning,
 * that the manager cannot be reached, and the next notification after the new bind finds it:
 * the watchdog's pings go on, and a reload's RELOADING=1 and READY=1 arrive there. */
START_TEST(test_manager_rebinds) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *config = config_write("queue = { scheduler = \"none\"; };\n"), *err = NULL;
        char err_path[] = "/tmp/hvtuned-err.XXXXXX";
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd, status, told = 0, timeout_ms = hvtuned_under_valgrind() ? 100000 : 10000;

        snprintf(sa.sun_path, sizeof(sa.sun_path), "/tmp/hvtuned-rebind.%d", getpid());
        unlink(sa.sun_path);
        fd = bind_notify(&sa);
        ck_assert_int_ge(status = mkstemp(err_path), 0);
        close(status);

        /* A ping every 100 ms. */
        ck_assert_int_eq(setenv("WATCHDOG_USEC", "200000", 1), 0);
        atexit(kill_stray);
        stray = hvtuned_spawn_notify((const char *const[]) { "-c", config, NULL }, sa.sun_path, err_path);
        ck_assert_msg(receive_until(fd, "READY=1", timeout_ms), "no READY=1");
        ck_assert_msg(receive_until(fd, "WATCHDOG=1", timeout_ms), "no ping");

        /* The manager's socket goes, and nothing is bound at its path for a while. */
        close(fd);
        ck_assert_int_eq(unlink(sa.sun_path), 0);
        hvtuned_wait_file(err_path, "Cannot reach the service manager at NOTIFY_SOCKET=", timeout_ms);
        usleep(500 * 1000);  /* some pings meet nobody */

        /* Bound anew at the same path: the pings come back, and a reload is announced there. */
        fd = bind_notify(&sa);
        ck_assert_msg(receive_until(fd, "WATCHDOG=1", timeout_ms), "no ping on the socket bound anew");
        ck_assert_int_eq(kill(stray, SIGHUP), 0);
        ck_assert_msg(drain_until(fd, "RELOADING=1", "READY=1", timeout_ms),
                      "no RELOADING=1, then READY=1, on the socket bound anew");

        ck_assert_int_eq(kill(stray, SIGTERM), 0);
        ck_assert_msg(receive_until(fd, "STOPPING=1", timeout_ms), "no STOPPING=1 on the socket bound anew");
        status = hvtuned_wait_exit(stray, timeout_ms);
        ck_assert_msg(status != -1, "hvtuned did not exit within %d ms of SIGTERM", timeout_ms);
        stray = 0;
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        ck_assert(g_file_get_contents(err_path, &err, NULL, NULL));
        for (const char *p = err; (p = strstr(p, "Cannot reach the service manager")); p++)
                told++;
        ck_assert_msg(told == 1, "told %d times that the manager cannot be reached:\n%s", told, err);
        assert_contains(err, "is reached again\n");

        g_free(err);
        ck_assert_int_eq(unsetenv("WATCHDOG_USEC"), 0);
        close(fd);
        unlink(sa.sun_path);
        unlink(err_path);
        unlink(config);
        g_object_unref(tb);
}
END_TEST

int main(void) {
        Suite *s = suite_create("daemon");
        TCase *tc = tcase_create("notify");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_ready_and_status);
        tcase_add_test(tc, test_metrics_file);
        tcase_add_test(tc, test_metrics_dir_swapped);
        tcase_add_loop_test(tc, test_metrics_file_not_ours, 0, 4);
        tcase_add_test(tc, test_metrics_stale_temporaries);
        tcase_add_test(tc, test_hotplug_add_change_remove);
        tcase_add_test(tc, test_stops_matching);
        tcase_add_test(tc, test_reprobed_is_new);
        tcase_add_loop_test(tc, test_vm_as_daemon, 0, G_N_ELEMENTS(vms));
        tcase_add_test(tc, test_reload);
        tcase_add_test(tc, test_reload_waits);
        tcase_add_test(tc, test_reload_without_record);
        tcase_add_loop_test(tc, test_notify_send_fails, 0, G_N_ELEMENTS(notify_faults));
        tcase_add_test(tc, test_sigint);
        tcase_add_test(tc, test_bad_start);
        tcase_add_test(tc, test_manager_not_reading);
        tcase_add_test(tc, test_manager_rebinds);
        suite_add_tcase(s, tc);
        return test_run(s);
}
