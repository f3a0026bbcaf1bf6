/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: what the running daemon's loop waits for: udev monitor, signals, timers. */
#pragma once

#include "context.h"

/* Blocks the signals the loop handles, so that one sent before the loop runs (while the
 * configuration loads) waits for it instead of killing the daemon. 0 or -errno. */
int hvt_loop_block_signals(void);

/* Start-up pass, READY=1, then events until SIGTERM/SIGINT. Returns 0 or -errno. */
int hvt_loop_run(struct hvt_daemon *d);
