/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the reload handshake behind the unit's ExecReload= (on every systemd: Type=notify-reload
 * cannot fail a reload). The daemon keeps "<pid> <started> <finished> <result>" in
 * $RUNTIME_DIRECTORY/.reload, and `hvtuned --reload PID` sends SIGHUP and returns only when a
 * reload that began after its signal has finished, so that `systemctl reload` means "applied",
 * and fails when the file was refused. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "log.h"

/* The record after a reload started (finished < started) or finished, with where the
 * configuration was wrong ("" when it loaded). */
int hvt_reload_mark(int dir_fd, unsigned started, unsigned finished, const char *config_error);

/* Signals pid and waits for its next reload to finish: 0 when it loaded the new
 * configuration, -EINVAL (logged) when that was refused, -ETIMEDOUT, or -errno. pid must be
 * the hvtuned that holds rundir's lock (rundir.h: exclusive, root's or ours): any other process
 * is not signalled (-EPERM, -ESRCH, or -errno when that cannot be told, each said). Where the
 * holder keeps no reload record in rundir (it refused the directory), it is still signalled,
 * and the result, unknown, is an error that says why. */
int hvt_reload_request(const struct hvt_log *log, const char *rundir, pid_t pid);
