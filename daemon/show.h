/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: `hvtuned --status`: what hvtuned manages, from the running daemon's state file or,
 * with no daemon, from the records of originals and a dry run of the configuration, with each
 * attribute's value read from sysfs now; shown as a table or as JSON (lib/state-show.h). */
#pragma once

#include <stdbool.h>

#include "context.h"

/* Prints the status on stdout (errors on stderr, through d->log); 0, or -errno when it could
 * not report. d is a fresh context with d->log set up. */
int hvt_show_status(struct hvt_daemon *d, bool json);

/* The running daemon's state, as --status reads it, with what sysfs shows now (and how each
 * attribute compares with its want) read into *ret: 1, or 0 when no hvtuned runs (*ret empty),
 * or -errno, said through d->log with command ("--verify") named where root is needed. */
struct hvt_state;
int hvt_show_running_state(struct hvt_daemon *d, const char *command, struct hvt_state *ret);
