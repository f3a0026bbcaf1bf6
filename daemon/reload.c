/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the reload handshake (see reload.h).
 *
 * Why two counters: a SIGHUP that arrives while a reload runs is folded into one pending
 * signal, and the reload under way may have read the file before the operator changed it. A
 * requester that saw "started S" before its signal waits for "finished >= S + 1", a reload
 * that began after the signal was sent. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fs-util.h"
#include "macro.h"
#include "reload.h"
#include "rundir.h"

#define RECORD ".reload"
#define POLL_NS (20 * 1000 * 1000)
/* Longer than any pass over a VM's disks; systemd's own reload timeout comes first. */
#define WAIT_S 120

int hvt_reload_mark(int dir_fd, unsigned started, unsigned finished, const char *config_error) {
        char buf[400];
        int n;

        if (dir_fd < 0)
                return -EBADF;
        /* Whose record: one that a daemon before this one left must not answer for this one. */
        n = snprintf(buf, sizeof(buf), "%d %u %u %s\n", (int) hvt_getpid(), started, finished,
                     *config_error ? config_error : "ok");
        if (n < 0 || (size_t) n >= sizeof(buf))
                return -ENOBUFS;
        return hvt_write_atomic(dir_fd, RECORD, buf, (size_t) n, 0, NULL);
}

/* -ESRCH when the record is another process's. */
static int read_mark(int dirfd, pid_t pid, unsigned *started, unsigned *finished, char *result, size_t size) {
        char buf[400];
        int consumed = 0, owner, r;

        r = hvt_read_small(dirfd, RECORD, buf, sizeof(buf));
        if (r < 0)
                return r;
        if (sscanf(buf, "%d %u %u %n", &owner, started, finished, &consumed) != 3 || consumed == 0)
                return -EBADMSG;
        if (owner != (int) pid)
                return -ESRCH;
        snprintf(result, size, "%.*s", (int) strcspn(buf + consumed, "\n"), buf + consumed);
        return 0;
}

/* Whether pid's record in rundir (dirfd, or -errno where it did not open) can be trusted
 * and read: 0 with where its reloads stand, or -errno with why not. */
static int check_record(int dirfd, const char *rundir, pid_t pid, unsigned *started, char *why, size_t size) {
        char refusal[160], result[320];
        unsigned finished;
        int r;

        if (dirfd < 0) {
                snprintf(why, size, "%s cannot be opened: %s", rundir, strerror(-dirfd));
                return dirfd;
        }
        /* The daemon writes no record where it would not keep originals: whoever could write
         * there could answer for it. */
        r = hvt_rundir_check(dirfd, refusal, sizeof(refusal));
        if (r < 0) {
                snprintf(why, size, "%s is refused for hvtuned's records (%s)", rundir, refusal);
                return r;
        }
        r = read_mark(dirfd, pid, started, &finished, result, sizeof(result));
        if (r == -ESRCH)
                snprintf(why, size, "%s/%s is another process's, not PID %d's", rundir, RECORD, (int) pid);
        else if (r < 0)
                snprintf(why, size, "%s/%s cannot be read: %s", rundir, RECORD, strerror(-r));
        return r;
}

/* Whether pid is the hvtuned that holds rundir (fd on it, or -errno), the one process a SIGHUP
 * is meant for: to most others it is the end (a sleep, a shell, a PID mistyped), and to
 * another hvtuned, of another runtime directory, a reload nobody asked of it. 0, or -errno,
 * said. */
static int check_holder(const struct hvt_log *log, int fd, const char *rundir, pid_t pid) {
        struct hvt_rundir_holder h, other;
        int r;

        if (fd < 0)
                return hvt_log_errno(log, LOG_ERR, fd, "Not signalling PID %d to reload: whether it is the hvtuned "
                                     "that holds %s cannot be told, as that cannot be opened: %m", (int) pid, rundir);
        r = hvt_rundir_holder(fd, pid, &h);
        if (r < 0)
                return hvt_log_errno(log, LOG_ERR, r, "Not signalling PID %d to reload: whether it is the hvtuned "
                                     "that holds %s cannot be told (/proc/locks: %m)", (int) pid, rundir);
        if (r > 0 && h.hvtuned)
                return 0;
        if (r > 0)
                return hvt_log_errno(log, LOG_ERR, -EPERM, "Not signalling PID %d to reload: it holds %s, but is not "
                                     "hvtuned: %s", (int) pid, rundir, h.name);
        if (kill(pid, 0) < 0 && errno == ESRCH)
                return hvt_log_errno(log, LOG_ERR, -ESRCH, "Cannot signal hvtuned (PID %d): %m", (int) pid);
        if (hvt_rundir_holder(fd, 0, &other) > 0)
                return hvt_log_errno(log, LOG_ERR, -EPERM, "Not signalling PID %d to reload: it holds no lock on %s, "
                                     "so it is not the hvtuned that runs there (%s holds it)", (int) pid, rundir,
                                     other.name);
        return hvt_log_errno(log, LOG_ERR, -EPERM, "Not signalling PID %d to reload: it holds no lock on %s, so it is "
                             "not the hvtuned that runs there", (int) pid, rundir);
}

int hvt_reload_request(const struct hvt_log *log, const char *rundir, pid_t pid) {
        _cleanup_close_ int dirfd = open(rundir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_close_ int linked = -EBADF;
        unsigned started = 0, finished;
        char why[4096 + 160], result[320];
        int r;

        if (dirfd < 0) {
                dirfd = negative_errno();
                /* A symbolic link the daemon locked through, for want of a directory it trusts
                 * (rundir.c): only its lock is looked at there, nothing read. */
                linked = open(rundir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (linked < 0)
                        linked = negative_errno();
        } else
                (void) hvt_rundir_private(log, dirfd, rundir, false);
        r = check_holder(log, dirfd >= 0 ? dirfd : linked, rundir, pid);
        if (r < 0)
                return r;
        r = check_record(dirfd, rundir, pid, &started, why, sizeof(why));
        /* The holder is signalled whatever the record: the reload happens even where its
         * result cannot be known here, and then this fails, as "applied" would be a guess. A
         * holder without a record is a daemon that refused the directory, or a --once or a
         * --restore, which ignores the signal (main.c) and runs its pass to the end. */
        if (kill(pid, SIGHUP) < 0)
                return hvt_log_errno(log, LOG_ERR, negative_errno(), "Cannot signal hvtuned (PID %d): %m", (int) pid);
        if (r < 0)
                return hvt_log_errno(log, LOG_ERR, r, "hvtuned (PID %d) was signalled to reload, but whether it "
                                     "took the file cannot be told: %s; its journal says whether it did (journalctl -u hvtuned), "
                                     "and a hvtuned --once or --restore ignores it", (int) pid, why);

        for (long waited = 0; waited < (long) WAIT_S * 1000000000L; waited += POLL_NS) {
                const struct timespec tick = { 0, POLL_NS };
                unsigned s;

                (void) nanosleep(&tick, NULL);
                if (read_mark(dirfd, pid, &s, &finished, result, sizeof(result)) < 0 || finished < started + 1)
                        continue;
                if (strcmp(result, "ok") == 0)
                        return 0;
                return hvt_log_errno(log, LOG_ERR, -EINVAL, "The new configuration was refused (error at %s): "
                                     "hvtuned keeps running on the previous one", result);
        }
        return hvt_log_errno(log, LOG_ERR, -ETIMEDOUT, "hvtuned (PID %d) did not finish reloading within %d s",
                             (int) pid, WAIT_S);
}
