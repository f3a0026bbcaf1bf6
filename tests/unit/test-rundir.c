/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The runtime directory: opened never through a link, and trusted with records only when it
 * is root's (or ours) and writable by neither group nor others, each refusal worded whole. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rundir.h"
#include "testutil.h"

static char dir[PATH_MAX];

/* The runtime directory holds records only when nobody else could plant one there: never
 * through a link, root's (or the running user's), writable by neither group nor others. */
START_TEST(test_dir_checked) {
        char link[PATH_MAX * 2], why[160];
        int fd, lfd;

        free(test_write_file(dir, ".keep-dir", ""));
        fd = hvt_rundir_open_dir(dir, true);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(chmod(dir, 0755), 0);
        ck_assert_int_eq(hvt_rundir_check(fd, why, sizeof(why)), 0);
        ck_assert_int_eq(chmod(dir, 0775), 0);
        ck_assert_int_eq(hvt_rundir_check(fd, why, sizeof(why)), -EACCES);
        ck_assert_str_eq(why, "it is writable by group or others (mode 0775)");
        ck_assert_int_eq(chmod(dir, 0757), 0);
        ck_assert_int_eq(hvt_rundir_check(fd, why, sizeof(why)), -EACCES);
        ck_assert_str_eq(why, "it is writable by group or others (mode 0757)");
        ck_assert_int_eq(chmod(dir, 0700), 0);
        ck_assert_int_eq(chown(dir, 65534, 65534), 0);
        ck_assert_int_eq(hvt_rundir_check(fd, why, sizeof(why)), -EPERM);
        ck_assert_str_eq(why, "it is owned by uid 65534, neither root's nor ours");
        /* Both at once: one message says all. */
        ck_assert_int_eq(chmod(dir, 0777), 0);
        ck_assert_int_eq(hvt_rundir_check(fd, why, sizeof(why)), -EPERM);
        ck_assert_str_eq(why, "it is owned by uid 65534, neither root's nor ours, and writable by group or others "
                             "(mode 0777)");
        ck_assert_int_eq(chmod(dir, 0700), 0);
        ck_assert_int_eq(chown(dir, 0, 0), 0);

        snprintf(link, sizeof(link), "%s.link", dir);
        ck_assert_int_eq(symlink(dir, link), 0);
        lfd = hvt_rundir_open_dir(link, true);
        ck_assert_int_eq(lfd, -ELOOP);
        ck_assert_int_eq(unlink(link), 0);
        close(fd);
}
END_TEST

/* --restore's lock: taken when free; refused while another process holds it, naming that
 * process as /proc/locks does. */
START_TEST(test_lock_holder) {
        int fd, other, status;
        pid_t child, holder = -1;

        free(test_write_file(dir, ".keep-dir", ""));
        fd = hvt_rundir_open_dir(dir, false);
        ck_assert_int_ge(fd, 0);
        child = fork();
        ck_assert_int_ge(child, 0);
        if (child == 0) {
                other = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (other < 0 || flock(other, LOCK_EX) < 0)
                        _exit(1);
                pause();
                _exit(0);
        }
        /* Until the child holds it. */
        for (int i = 0; i < 500; i++) {
                if (hvt_rundir_lock(fd, false, &holder) == -EWOULDBLOCK)
                        break;
                ck_assert_int_eq(flock(fd, LOCK_UN), 0);
                usleep(10000);
        }
        ck_assert_int_eq(hvt_rundir_lock(fd, false, &holder), -EWOULDBLOCK);
        /* 0 where /proc/locks cannot tell (another pid namespace's view). */
        ck_assert(holder == child || holder == 0);
        ck_assert_int_eq(kill(child, SIGKILL), 0);
        ck_assert_int_eq(waitpid(child, &status, 0), child);
        ck_assert_int_eq(hvt_rundir_lock(fd, false, &holder), 0);
        ck_assert_int_eq(holder, 0);
        close(fd);

        ck_assert_int_eq(hvt_rundir_open_dir("/nonexistent/hvtuned", false), -ENOENT);
}
END_TEST

/* A state file no daemon holds is dropped with the lock taken, but not by a dry run. */
START_TEST(test_dry_run_keeps_stale_state) {
        char *state;
        pid_t holder;
        int fd;

        state = test_write_file(dir, ".state", "hvtuned-state\t1\n");
        fd = hvt_rundir_open_dir(dir, false);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(hvt_rundir_lock(fd, true, &holder), 0);
        ck_assert_int_eq(access(state, F_OK), 0);
        ck_assert_int_eq(flock(fd, LOCK_UN), 0);
        ck_assert_int_eq(hvt_rundir_lock(fd, false, &holder), 0);
        ck_assert_int_eq(access(state, F_OK), -1);
        close(fd);
        free(state);
}
END_TEST

int main(void) {
        Suite *s = suite_create("rundir");
        TCase *tc = tcase_create("rundir");

        tcase_add_test(tc, test_dir_checked);
        tcase_add_test(tc, test_lock_holder);
        tcase_add_test(tc, test_dry_run_keeps_stale_state);
        suite_add_tcase(s, tc);
        return test_run(s);
}
