/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the state file of lib/state.h in the runtime directory, for `hvtuned --status`:
 * gathered from the context after a pass (at the metrics file's cadence), written whole when
 * it changed, root's alone (0600: the unit's UMask= says the same), removed when hvtuned
 * stops. */
#pragma once

#include "context.h"
#include "state.h"

/* What the context holds, as the state file says it, with status (status.h's line, which is
 * made above this file): running unless --once or a dry run. -ENOMEM. */
int hvt_state_gather(const struct hvt_daemon *d, const char *status, struct hvt_state *ret);

/* Writes the file when its content changed, gathering at most once a second (a later one by a
 * timer). Nothing in --once or a dry run, or without a runtime directory for records. A
 * failure is logged once, until a write works again. */
void hvt_state_file_update(struct hvt_daemon *d, const char *status);

/* The same, gathering now whenever the last gathering was: at READY=1. */
void hvt_state_file_update_now(struct hvt_daemon *d, const char *status);

/* Removes it (at stop). */
void hvt_state_file_remove(struct hvt_daemon *d);
