/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the runtime directory (/run/hvtuned), where the records of originals, the reload
 * record and a pending re-probe are kept: where it is, whether it may hold them, and holding
 * it as the one hvtuned that may. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "context.h"
#include "log.h"

/* $RUNTIME_DIRECTORY (set by systemd's RuntimeDirectory=) or /run/hvtuned. */
void hvt_rundir_path(char *buf, size_t size);

/* Creates the directory path if needed (and create); returns an fd on it, -ELOOP when its last
 * component is a symbolic link (never followed: whoever made the link chose the directory), or
 * -errno (-ENOENT: not there, without create). */
int hvt_rundir_open_dir(const char *path, bool create);

/* Whether the directory may hold records: hvt_check_owner() (fs-util.h) of it, not even sticky,
 * with all that is wrong in why ("it is owned by uid 65534, neither root's nor ours", so that one
 * fix is enough): whoever could plant a record there could choose the values a stop restores.
 * 0, -EPERM (another owner), -EACCES (writable by group or others) or -errno. */
int hvt_rundir_check(int fd, char *why, size_t size);

/* Where others may open the directory fd (mode 0755: made outside systemd, whose unit has
 * RuntimeDirectoryMode=0700), they may flock() it, and a lock of theirs keeps every hvtuned out.
 * A directory root's or ours, not refused (hvt_rundir_check()), is then made 0700 with fix and
 * a warning that names its old mode, or without fix (a dry run, --status, --reload) the warning
 * says so. 0, or -errno (said when fchmod() failed). */
int hvt_rundir_private(const struct hvt_log *log, int fd, const char *path, bool fix);

/* Opens and locks it into d->state_fd. Without it, or when it is refused (a symbolic link,
 * neither root's nor ours, writable by group or others: only d->lock_fd then holds it), hvtuned keeps
 * originals in memory only (logged, 0); -EWOULDBLOCK (logged) when another hvtuned holds it. */
int hvt_rundir_open(struct hvt_daemon *d);

/* A process that holds a lock on the directory, as /proc/locks and /proc/PID/status tell. */
struct hvt_rundir_holder {
        pid_t pid;        /* 0: none, or not told (no /proc/locks, or one of another pid namespace) */
        bool exclusive;   /* LOCK_EX, as hvtuned takes it */
        bool hvtuned;     /* established: exclusive, and root's or ours */
        char name[160];   /* "hvtuned (pid 1234)", else "PID 1234 (perl, uid 65534, a shared lock)" */
};

/* The lock pid holds on the directory fd (pid 0: anyone's but ours), described: 1, 0 when it
 * holds none, or -errno when /proc/locks cannot be read. */
int hvt_rundir_holder(int fd, pid_t pid, struct hvt_rundir_holder *ret);

/* Says that a command (option: "--status", "--restore") run by another user met what root's
 * daemon keeps to itself (what: a path): "hvtuned --restore needs root: /run/hvtuned is root's
 * alone". Returns -EACCES. */
int hvt_rundir_needs_root(const struct hvt_log *log, const char *option, const char *what);

/* Says that h, which is not hvtuned (or not told), keeps path locked: "Cannot lock PATH: PID
 * 1234 (...) holds it, and is not hvtuned: WHAT". Returns error. */
int hvt_rundir_said_held(const struct hvt_log *log, int error, const char *path, const struct hvt_rundir_holder *h,
                         const char *what);

/* Takes the lock two hvtuned meet at on the directory fd, without waiting, for a process that
 * is not the daemon (--restore), and drops a stale state file unless dry_run (which touches
 * nothing there): 0; -EWOULDBLOCK when another process holds it, with *ret_holder who (its pid
 * 0 when that cannot be told); or -errno. */
int hvt_rundir_lock(int fd, bool dry_run, struct hvt_rundir_holder *ret_holder);
