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
#include "testutil.h"

/* A distro rule puts bfq back on sysname; the change event that follows must undo it. This
 * is also how a test knows that events sent before it were handled: in order. */
static void drift_and_wait(UMockdevTestbed *tb, const char *sysname) {
        char *syspath = testbed_syspath(sysname);

        umockdev_testbed_set_attribute(tb, syspath, "queue/scheduler", "none mq-deadline kyber [bfq] \n");
        umockdev_testbed_uevent(tb, syspath, "change");
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
        umockdev_testbed_uevent(tb, vda, "change");
        umockdev_testbed_uevent(tb, vda, "add");
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
        umockdev_testbed_uevent(tb, sdd, "change");
        hvtuned_wait_notify(&run, "STATUS=3 Hyper-V disks on 2 controllers: 3 tuned, 0 failed");

        umockdev_testbed_set_attribute(tb, sdd, "queue/scheduler", "none mq-deadline kyber [bfq] \n");
        umockdev_testbed_uevent(tb, sdd, "change");
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
        umockdev_testbed_uevent(tb, sdc, "change");
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
        umockdev_testbed_uevent(tb, lun, "change");
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

/* hvtuned --reload=PID, the unit's ExecReload= before systemd 253: returns once the new
 * values are written, and fails (exit 1) for a file the daemon refuses. */
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

/* Waits until the metrics file holds needle. */
static char *wait_metrics(const char *path, const char *needle) {
        int limit_ms = hvtuned_under_valgrind() ? 200000 : 20000;

        for (int waited = 0;; waited += 10) {
                char *text = NULL;

                if (g_file_get_contents(path, &text, NULL, NULL) && strstr(text, needle))
                        return hv_keep(text);
                ck_assert_msg(waited < limit_ms, "\"%s\" not in %s after %d ms:\n%s", needle, path, limit_ms,
                              text ? text : "(no file)");
                g_free(text);
                usleep(10 * 1000);
        }
}

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
        m = wait_metrics(prom, "hvtuned_disks{result=\"tuned\"} 4\n");
        assert_contains(m, "hvtuned_disks{result=\"failed\"} 0\n");
        assert_contains(m, "hvtuned_attributes{result=\"applied\"} 2\n");
        assert_contains(m, "hvtuned_attributes{result=\"unchanged\"} 2\n");
        assert_contains(m, "hvtuned_attributes{result=\"failed\"} 0\n");
        assert_contains(m, "hvtuned_hw_queue_cap 4\n");
        assert_contains(m, "hvtuned_controller_hw_queues{host=\"host0\",controller=\"{f8b3781a-1e82-4818-a1c3-63d806ec15bb}\",kind=\"scsi\"} 32\n");
        assert_contains(m, "hvtuned_controller_can_queue{host=\"host1\",controller=\"{f8b3781b-1e82-4818-a1c3-63d806ec15bb}\",kind=\"scsi\"} 2534\n");
        assert_contains(m, "hvtuned_controller_preallocated_bytes{host=\"host0\",controller=\"{f8b3781a-1e82-4818-a1c3-63d806ec15bb}\",kind=\"scsi\"} 10");
        assert_contains(m, "# TYPE hvtuned_drift_repairs_total counter\nhvtuned_drift_repairs_total 0\n");
        ck_assert_ptr_null(strstr(m, "hvtuned_config_last_reload_success"));
        ck_assert_int_eq(stat(prom, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0644);

        drift_and_wait(tb, "sdc");
        wait_metrics(prom, "hvtuned_drift_repairs_total 1\n");

        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "RELOADING=1");
        hvtuned_wait_notify(&run, "READY=1");
        m = wait_metrics(prom, "hvtuned_config_reloads_total 1\n");
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
        umockdev_testbed_uevent(tb, sdb, "change");
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

/* Waits until the file at path holds needle; what it holds then. */
static char *wait_file(const char *path, const char *needle, int timeout_ms) {
        for (int waited = 0;; waited += 10) {
                char *text = NULL;

                if (g_file_get_contents(path, &text, NULL, NULL) && strstr(text, needle))
                        return hv_keep(text);
                ck_assert_msg(waited < timeout_ms, "\"%s\" not in %s after %d ms:\n%s", needle, path, timeout_ms,
                              text ? text : "(no file)");
                g_free(text);
                usleep(10 * 1000);
        }
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
        wait_file(err_path, "Cannot reach the service manager at NOTIFY_SOCKET=", timeout_ms);
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
        tcase_add_test(tc, test_hotplug_add_change_remove);
        tcase_add_test(tc, test_stops_matching);
        tcase_add_test(tc, test_reprobed_is_new);
        tcase_add_loop_test(tc, test_vm_as_daemon, 0, G_N_ELEMENTS(vms));
        tcase_add_test(tc, test_reload);
        tcase_add_test(tc, test_reload_waits);
        tcase_add_test(tc, test_sigint);
        tcase_add_test(tc, test_bad_start);
        tcase_add_test(tc, test_manager_not_reading);
        tcase_add_test(tc, test_manager_rebinds);
        suite_add_tcase(s, tc);
        return test_run(s);
}
