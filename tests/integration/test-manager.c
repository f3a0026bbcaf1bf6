/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The daemon beside a service manager that fails it, on the Azure testbed: sends to the
 * notification socket that fail now and then (ENOBUFS, ENOMEM, EINTR, EAGAIN) lose nothing,
 * a manager that does not read its socket does not stop the loop, and one that binds its
 * socket anew is found again. */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "uevent.h"
#include "testutil.h"

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
        ck_assert_str_eq(run.status, "4 storvsc disks on 2 controllers: 4 tuned, 0 failed" AZURE_HWQ);

        config_rewrite(config, "queue = { scheduler = \"none\"; read_ahead_kb = 1024; };\n");
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

/* The hvtuned of a test that must not outlive it: killed when the test exits, failed or not. */
static pid_t stray;

static void kill_stray(void) {
        if (stray > 0)
                (void) kill(stray, SIGKILL);
}

/* Receives the datagrams waiting on fd for up to timeout_ms, until one holding want comes after
 * one holding before (any, with before NULL): true when it did. */
static bool drain_until(int fd, const char *before, const char *want, int timeout_ms) {
        bool seen_before = !before;

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
                if (before && strstr(buf, before))
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

        config_rewrite(config, "queue = { scheduler = \"none\"; read_ahead_kb = 1024; };\n");
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
        return drain_until(fd, NULL, want, timeout_ms);
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
        Suite *s = suite_create("manager");
        TCase *tc = tcase_create("azure");

        tcase_set_timeout(tc, 120);
        tcase_add_loop_test(tc, test_notify_send_fails, 0, G_N_ELEMENTS(notify_faults));
        tcase_add_test(tc, test_manager_not_reading);
        tcase_add_test(tc, test_manager_rebinds);
        suite_add_tcase(s, tc);
        return test_run(s);
}
