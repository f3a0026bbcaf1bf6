/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the runtime directory of rundir.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fs-util.h"
#include "macro.h"
#include "messages.h"
#include "rundir.h"
#include "state.h"

#define RUNDIR_DEFAULT "/run/hvtuned"

void hvt_rundir_path(char *buf, size_t size) {
        const char *dir = getenv("RUNTIME_DIRECTORY");

        /* systemd passes a colon-separated list when a unit has several; ours is the first. */
        (void) hvt_strscpy(buf, size, dir && *dir ? dir : RUNDIR_DEFAULT);
        buf[strcspn(buf, ":")] = '\0';
}

int hvt_rundir_open_dir(const char *path, bool create) {
        struct stat st;
        int fd;

        /* As the unit's RuntimeDirectoryMode=: a directory others can open, they can lock. */
        if (create && mkdir(path, 0700) < 0 && errno != EEXIST)
                return negative_errno();
        fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0)
                return fd;
        /* O_NOFOLLOW with O_DIRECTORY says ENOTDIR for a link, as for a file. */
        if (errno == ENOTDIR && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
                return -ELOOP;
        return negative_errno();
}

int hvt_rundir_check(int fd, char *why, size_t size) {
        struct stat st;

        if (fstat(fd, &st) < 0) {
                int r = negative_errno();

                snprintf(why, size, "it cannot be checked: %s", strerror(-r));
                return r;
        }
        /* Not even sticky: whoever may write there could plant a record of a disk not yet
         * recorded. */
        return hvt_check_owner(&st, 0, "it", why, size);
}

static void refused(struct hvt_daemon *d, const char *path, int error, const char *why) {
        (void) hvt_log_struct(&d->log, LOG_WARNING, error, HVT_MESSAGE_STATE_ERROR, NULL,
                              "%s: refused for the records of original values, %s: they are kept in memory "
                              "only, and a restart forgets them", path, why);
}

/* Opens the directory into d->state_fd when it may hold records, or, when it is refused
 * (said why), into d->lock_fd alone: still the one place where two hvtuned meet. */
static int open_held(struct hvt_daemon *d, const char *path) {
        char why[160];
        int fd, r;

        fd = hvt_rundir_open_dir(path, true);
        if (fd == -ELOOP) {
                refused(d, path, fd, "it is a symbolic link");
                /* Followed for the lock alone, which reads and writes nothing there (a link to
                 * nowhere: nothing to meet at). */
                d->lock_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                return 0;
        }
        if (fd < 0)
                return fd;
        r = hvt_rundir_check(fd, why, sizeof(why));
        if (r < 0) {
                refused(d, path, r, why);
                d->lock_fd = fd;
                return 0;
        }
        d->state_fd = fd;
        d->state_write_flags = hvt_fs_volatile(fd) ? HVT_WRITE_VOLATILE : 0;
        return 0;
}

/* flock(LOCK_EX|LOCK_NB), tried again for a moment: hvtuned --status takes a shared lock for
 * an instant to see whether a daemon runs, and a start that met it must not fail for it. */
static int lock_patiently(int fd) {
        for (unsigned i = 0;; i++) {
                if (flock(fd, LOCK_EX | LOCK_NB) >= 0)
                        return 0;
                if (errno != EWOULDBLOCK || i >= 10)
                        return negative_errno();
                (void) usleep(20 * 1000);
        }
}

/* A state file left by a daemon killed before its stop is no one's now: --status must not
 * take it for the holder's. */
static void drop_stale_state(int fd) {
        (void) unlinkat(fd, HVT_STATE_FILE, 0);
}

int hvt_rundir_open(struct hvt_daemon *d) {
        char path[4096];
        int held, r;

        hvt_rundir_path(path, sizeof(path));

        r = open_held(d, path);
        if (r < 0) {
                (void) hvt_log_struct(&d->log, LOG_WARNING, r, HVT_MESSAGE_STATE_ERROR, NULL,
                                      "Cannot use %s for the records of original values (%m): they "
                                      "are kept in memory only, and a restart forgets them", path);
                return 0;
        }
        /* One hvtuned at a time owns the records: a --once beside the service would take the
         * service's values for originals, or restore what the service still manages. That
         * holds where the records are refused too: the values in memory are the service's. */
        held = d->state_fd >= 0 ? d->state_fd : d->lock_fd;
        if (held >= 0 && (r = lock_patiently(held)) < 0) {
                close(held);
                d->state_fd = d->lock_fd = -EBADF;
                if (r == -EWOULDBLOCK)
                        return hvt_log_errno(&d->log, LOG_ERR, r, "Another hvtuned is running (it holds %s): "
                                             "reload it (systemctl reload hvtuned) instead", path);
                return hvt_log_errno(&d->log, LOG_ERR, r, "Cannot lock %s: %m", path);
        }
        if (d->state_fd >= 0)
                drop_stale_state(d->state_fd);
        return 0;
}

/* Who holds a lock on the file fd is open on, as /proc/locks says ("1: FLOCK  ADVISORY  WRITE
 * 1234 00:1a:5678 0 EOF", the device in hex; a waiter's line has "->" and is no holder): its
 * pid, or 0 when that cannot be told (no /proc, or a holder in another pid namespace, which
 * the kernel shows as 0). */
static pid_t lock_holder(int fd) {
        struct stat st;
        char line[256];
        pid_t holder = 0;
        FILE *f;

        if (fstat(fd, &st) < 0 || !(f = fopen("/proc/locks", "re")))
                return 0;
        while (holder == 0 && fgets(line, sizeof(line), f)) {
                unsigned maj, min;
                unsigned long ino;
                int pid;

                if (sscanf(line, "%*d: FLOCK %*s %*s %d %x:%x:%lu", &pid, &maj, &min, &ino) == 4 &&
                    maj == major(st.st_dev) && min == minor(st.st_dev) && ino == (unsigned long) st.st_ino &&
                    pid > 0 && pid != (int) getpid())
                        holder = (pid_t) pid;
        }
        fclose(f);
        return holder;
}

int hvt_rundir_lock(int fd, bool dry_run, pid_t *ret_holder) {
        int r = lock_patiently(fd);

        *ret_holder = 0;
        /* A dry run says "nothing written": a stale state file is left to the next real run. */
        if (r >= 0 && !dry_run)
                drop_stale_state(fd);
        else if (r == -EWOULDBLOCK)
                *ret_holder = lock_holder(fd);
        return r;
}
