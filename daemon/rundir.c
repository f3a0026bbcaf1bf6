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
#include "log.h"
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

int hvt_rundir_private(const struct hvt_log *log, int fd, const char *path, bool fix) {
        struct stat st;
        mode_t mode;

        if (fstat(fd, &st) < 0)
                return negative_errno();  /* hvt_rundir_check() says so */
        /* One that is refused for records stays as it is: a chmod would make what others may
         * have planted there look like hvtuned's own. */
        mode = st.st_mode & 07777;
        if (hvt_check_owner(&st, 0, NULL, NULL, 0) < 0 || !(mode & 0077))
                return 0;
        if (!fix)
                return hvt_log_errno(log, LOG_WARNING, 0, "%s is mode %04o: other users may open it, and a lock of "
                                     "theirs on it keeps hvtuned out (the next hvtuned to hold it makes it %04o)",
                                     path, (unsigned) mode, (unsigned) (mode & ~0077));
        if (fchmod(fd, mode & ~0077) < 0)
                return hvt_log_errno(log, LOG_WARNING, negative_errno(), "%s is mode %04o: other users may open it, and "
                                     "a lock of theirs on it keeps hvtuned out; it cannot be made %04o: %m", path,
                                     (unsigned) mode, (unsigned) (mode & ~0077));
        (void) hvt_log_errno(log, LOG_WARNING, 0, "%s was mode %04o: other users could open it, and a lock of theirs "
                             "on it keeps hvtuned out; it is now %04o, as the unit's RuntimeDirectoryMode= makes it",
                             path, (unsigned) mode, (unsigned) (mode & ~0077));
        return 0;
}

static void refused(struct hvt_daemon *d, const char *path, int error, const char *why) {
        (void) hvt_log_struct(&d->log, LOG_WARNING, error, HVT_MESSAGE_STATE_ERROR, NULL,
                              "%s: refused for the records of original values, %s: they are kept in memory "
                              "only, and a restart forgets them", path, why);
}

int hvt_rundir_needs_root(const struct hvt_log *log, const char *option, const char *what) {
        return hvt_log_errno(log, LOG_ERR, -EACCES, "hvtuned %s needs root: %s is root's alone", option, what);
}

int hvt_rundir_said_held(const struct hvt_log *log, int error, const char *path, const struct hvt_rundir_holder *h,
                         const char *what) {
        if (h->pid > 0)
                return hvt_log_errno(log, LOG_ERR, error, "Cannot lock %s: %s holds it, and is not hvtuned: %s", path,
                                     h->name, what);
        return hvt_log_errno(log, LOG_ERR, error, "Cannot lock %s: another process holds it, which /proc/locks does not "
                             "name (one of another pid namespace): %s", path, what);
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
        (void) hvt_rundir_private(&d->log, fd, path, true);
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
                struct hvt_rundir_holder h = {};

                if (r == -EWOULDBLOCK)
                        (void) hvt_rundir_holder(held, 0, &h);
                close(held);
                d->state_fd = d->lock_fd = -EBADF;
                /* Named as --restore names it (undo.c): the pid the operator may look for. */
                if (r == -EWOULDBLOCK && h.hvtuned)
                        return hvt_log_errno(&d->log, LOG_ERR, r, "%s is running (it holds %s): "
                                             "reload it (systemctl reload hvtuned) instead", h.name, path);
                if (r == -EWOULDBLOCK)
                        return hvt_rundir_said_held(&d->log, r, path, &h, "hvtuned does not run while it does");
                return hvt_log_errno(&d->log, LOG_ERR, r, "Cannot lock %s: %m", path);
        }
        if (d->state_fd >= 0)
                drop_stale_state(d->state_fd);
        return 0;
}

/* A lock on the file fd is open on, as /proc/locks says ("1: FLOCK  ADVISORY  WRITE 1234
 * 00:1a:5678 0 EOF", the device in hex; a waiter's line has "->" and is no holder): pid's, or
 * with pid 0 the first of another process's. 1 with its pid and kind in *ret, 0 when there is
 * none (or its holder is in another pid namespace, which the kernel shows as pid 0), -errno
 * when /proc/locks cannot be read. */
static int find_lock(int fd, pid_t pid, struct hvt_rundir_holder *ret) {
        struct stat st;
        char line[256];
        int r = 0;
        FILE *f;

        *ret = (struct hvt_rundir_holder) {};
        if (fstat(fd, &st) < 0 || !(f = fopen("/proc/locks", "re")))
                return negative_errno();
        while (r == 0 && fgets(line, sizeof(line), f)) {
                char kind[16];
                unsigned maj, min;
                unsigned long ino;
                int p;

                if (sscanf(line, "%*d: FLOCK %*s %15s %d %x:%x:%lu", kind, &p, &maj, &min, &ino) == 5 &&
                    maj == major(st.st_dev) && min == minor(st.st_dev) && ino == (unsigned long) st.st_ino &&
                    p > 0 && (pid > 0 ? p == (int) pid : p != (int) getpid())) {
                        ret->pid = (pid_t) p;
                        ret->exclusive = strcmp(kind, "WRITE") == 0;
                        r = 1;
                }
        }
        if (r == 0 && ferror(f))
                r = -EIO;
        fclose(f);
        return r;
}

/* Who the holder is, from /proc/PID/status: a running hvtuned only when that is established,
 * that is when it holds the lock as hvtuned takes it (exclusive: a shared one is --status's
 * moment, or not hvtuned's) and is root's or ours, as the directory is. Its name is what the
 * process calls itself, which anyone can choose: it says who, it proves nothing (and under
 * valgrind it is the tool's). */
static void describe_holder(struct hvt_rundir_holder *h) {
        char path[64], status[8192], comm[64] = "", uid_text[32] = "";
        const char *line;
        unsigned ruid, euid;
        bool uid_known = false;

        snprintf(path, sizeof(path), "/proc/%d/status", (int) h->pid);
        if (hvt_read_small(AT_FDCWD, path, status, sizeof(status)) >= 0) {
                if ((line = strstr(status, "\nUid:")) && sscanf(line, "\nUid: %u %u", &ruid, &euid) == 2)
                        uid_known = true;
                if (strncmp(status, "Name:", 5) == 0)
                        snprintf(comm, sizeof(comm), "%.*s", (int) strcspn(status + 5 + strspn(status + 5, " \t"), "\n"),
                                 status + 5 + strspn(status + 5, " \t"));
        }
        h->hvtuned = h->exclusive && uid_known && (euid == 0 || euid == geteuid());
        if (h->hvtuned) {
                snprintf(h->name, sizeof(h->name), "hvtuned (pid %d)", (int) h->pid);
                return;
        }
        if (uid_known)
                snprintf(uid_text, sizeof(uid_text), "uid %u", euid);
        snprintf(h->name, sizeof(h->name), "PID %d (%s%s%s%s%s)", (int) h->pid, comm, *comm && *uid_text ? ", " : "",
                 uid_text, *comm || *uid_text ? ", " : "", h->exclusive ? "an exclusive lock" : "a shared lock");
}

int hvt_rundir_holder(int fd, pid_t pid, struct hvt_rundir_holder *ret) {
        int r = find_lock(fd, pid, ret);

        if (r > 0)
                describe_holder(ret);
        return r;
}

int hvt_rundir_lock(int fd, bool dry_run, struct hvt_rundir_holder *ret_holder) {
        int r = lock_patiently(fd);

        *ret_holder = (struct hvt_rundir_holder) {};
        /* A dry run says "nothing written": a stale state file is left to the next real run. */
        if (r >= 0 && !dry_run)
                drop_stale_state(fd);
        else if (r == -EWOULDBLOCK)
                (void) hvt_rundir_holder(fd, 0, ret_holder);
        return r;
}
