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

/* A child holding the directory with how (LOCK_EX or LOCK_SH), as uid (0: ours): its pid, once
 * it holds it. */
static pid_t hold_as(int fd, int how, uid_t uid) {
        struct hvt_rundir_holder h;
        pid_t child = fork();

        ck_assert_int_ge(child, 0);
        if (child == 0) {
                int other = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

                if (other < 0 || (uid && (setgid(uid) < 0 || setuid(uid) < 0)) || flock(other, how) < 0)
                        _exit(1);
                pause();
                _exit(0);
        }
        /* Until the child holds it. */
        for (int i = 0; i < 500; i++) {
                if (hvt_rundir_lock(fd, false, &h) == -EWOULDBLOCK)
                        break;
                ck_assert_int_eq(flock(fd, LOCK_UN), 0);
                usleep(10000);
        }
        return child;
}

/* "PID N (COMM, ...)": the name of the command (test-rundir, or valgrind's tool) is not the
 * point. */
static void assert_holder_name(const struct hvt_rundir_holder *h, pid_t child, const char *tail) {
        char head[32];
        size_t n = strlen(h->name);

        snprintf(head, sizeof(head), "PID %d (", (int) child);
        ck_assert_msg(strncmp(h->name, head, strlen(head)) == 0 && n > strlen(tail) &&
                      strcmp(h->name + n - strlen(tail), tail) == 0, "holder named \"%s\"", h->name);
}

static void end(pid_t child) {
        int status;

        ck_assert_int_eq(kill(child, SIGKILL), 0);
        ck_assert_int_eq(waitpid(child, &status, 0), child);
}

/* --restore's lock: taken when free; refused while another process holds it, naming that
 * process as /proc/locks does: "hvtuned" only for an exclusive lock of root's (or ours). */
START_TEST(test_lock_holder) {
        struct hvt_rundir_holder holder;
        char want[160];
        pid_t child;
        int fd;

        free(test_write_file(dir, ".keep-dir", ""));
        fd = hvt_rundir_open_dir(dir, false);
        ck_assert_int_ge(fd, 0);
        child = hold_as(fd, LOCK_EX, 0);
        ck_assert_int_eq(hvt_rundir_lock(fd, false, &holder), -EWOULDBLOCK);
        /* The child is of this test's pid namespace, so /proc/locks names it (a holder of
         * another namespace would show as 0). */
        ck_assert_int_eq(holder.pid, child);
        ck_assert(holder.exclusive && holder.hvtuned);
        snprintf(want, sizeof(want), "hvtuned (pid %d)", (int) child);
        ck_assert_str_eq(holder.name, want);
        ck_assert_int_eq(hvt_rundir_holder(fd, child, &holder), 1);
        ck_assert_int_eq(hvt_rundir_holder(fd, child + 1, &holder), 0);
        end(child);
        ck_assert_int_eq(hvt_rundir_lock(fd, false, &holder), 0);
        ck_assert_int_eq(holder.pid, 0);
        ck_assert_int_eq(flock(fd, LOCK_UN), 0);

        /* Shared, or another user's: whatever it is, not called hvtuned. */
        child = hold_as(fd, LOCK_SH, 0);
        ck_assert_int_eq(hvt_rundir_lock(fd, false, &holder), -EWOULDBLOCK);
        ck_assert_int_eq(holder.pid, child);
        ck_assert(!holder.exclusive && !holder.hvtuned);
        snprintf(want, sizeof(want), ", uid %u, a shared lock)", (unsigned) geteuid());
        assert_holder_name(&holder, child, want);
        end(child);
        if (geteuid() == 0) {
                child = hold_as(fd, LOCK_EX, 65534);
                ck_assert_int_eq(hvt_rundir_lock(fd, false, &holder), -EWOULDBLOCK);
                ck_assert_int_eq(holder.pid, child);
                ck_assert(holder.exclusive && !holder.hvtuned);
                assert_holder_name(&holder, child, ", uid 65534, an exclusive lock)");
                end(child);
        }
        close(fd);

        ck_assert_int_eq(hvt_rundir_open_dir("/nonexistent/hvtuned", false), -ENOENT);
}
END_TEST

/* A directory others may open is made 0700 where hvtuned may, and said; not without fix, and
 * not where it is refused for records anyway. */
START_TEST(test_made_private) {
        struct hvt_log log;
        struct stat st;
        int fd;

        free(test_write_file(dir, ".keep-dir", ""));
        hvt_log_init(&log, LOG_INFO, false);
        fd = hvt_rundir_open_dir(dir, false);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(chmod(dir, 0755), 0);
        ck_assert_int_eq(hvt_rundir_private(&log, fd, dir, false), 0);
        ck_assert_int_eq(fstat(fd, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0755);
        ck_assert_int_eq(hvt_rundir_private(&log, fd, dir, true), 0);
        ck_assert_int_eq(fstat(fd, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0700);
        ck_assert_int_eq(chmod(dir, 0775), 0);
        ck_assert_int_eq(hvt_rundir_private(&log, fd, dir, true), 0);
        ck_assert_int_eq(fstat(fd, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0775);
        ck_assert_int_eq(chmod(dir, 0700), 0);
        hvt_log_done(&log);
        close(fd);
}
END_TEST

/* A state file no daemon holds is dropped with the lock taken, but not by a dry run. */
START_TEST(test_dry_run_keeps_stale_state) {
        struct hvt_rundir_holder holder;
        char *state;
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
        tcase_add_test(tc, test_made_private);
        suite_add_tcase(s, tc);
        return test_run(s);
}
