/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the runtime directory (/run/hvtuned), where the records of originals, the reload
 * record and a pending re-probe are kept: where it is, whether it may hold them, and holding
 * it as the one hvtuned that may. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "context.h"

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

/* Opens and locks it into d->state_fd. Without it, or when it is refused (a symbolic link,
 * neither root's nor ours, writable by group or others: only d->lock_fd then holds it), hvtuned keeps
 * originals in memory only (logged, 0); -EWOULDBLOCK (logged) when another hvtuned holds it. */
int hvt_rundir_open(struct hvt_daemon *d);

/* Takes the lock two hvtuned meet at on the directory fd, without waiting, for a process that
 * is not the daemon (--restore), and drops a stale state file unless dry_run (which touches
 * nothing there): 0; -EWOULDBLOCK when another process holds it, with *ret_holder its pid (0
 * when that cannot be told: /proc/locks); or -errno. */
int hvt_rundir_lock(int fd, bool dry_run, pid_t *ret_holder);
