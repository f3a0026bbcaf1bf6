/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the reload handshake for ExecReload= on systemd before 253 (which has no
 * Type=notify-reload): the daemon keeps "<started> <finished> <result>" in
 * $RUNTIME_DIRECTORY/.reload, and `hvtuned --reload PID` sends SIGHUP and returns only when a
 * reload that began after its signal has finished, so that `systemctl reload` means "applied". */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "log.h"

/* The record after a reload started (finished < started) or finished, with where the
 * configuration was wrong ("" when it loaded). */
int hvt_reload_mark(int state_fd, unsigned started, unsigned finished, const char *config_error);

/* Signals pid and waits for its next reload to finish: 0 when it loaded the new
 * configuration, -EINVAL (logged) when that was refused, -ETIMEDOUT, or -errno. */
int hvt_reload_request(const struct hvt_log *log, const char *state_dir, pid_t pid);
