/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: `hvtuned --verify`: whether every attribute the running hvtuned manages is as
 * configured now, said by the exit status (as `tuned-adm verify` and LSB's status action do),
 * a line on stdout for each attribute that is not and a verdict, or one JSON object. */
#pragma once

#include <stdbool.h>

#include "context.h"

/* The exit statuses, documented in hvtuned(8) and --help. */
enum {
        HVT_VERIFY_OK = 0,           /* every managed attribute as configured */
        HVT_VERIFY_DIFFERS = 1,      /* one found otherwise now, yielded to another writer, or paused */
        HVT_VERIFY_FAILED = 2,       /* a write the kernel refused, a disk not tuned: wins over 1 */
        HVT_VERIFY_NOT_RUNNING = 3,  /* no hvtuned runs (LSB's "program is not running") */
        HVT_VERIFY_UNKNOWN = 4,      /* cannot be told: not root, a state file not believed, none yet */
};

/* Asks the running daemon's state (show.h) and sysfs now; prints every attribute when
 * verbose, else only those not as configured. d is a fresh context with d->log set up
 * (errors on stderr). Returns the exit status. */
int hvt_verify(struct hvt_daemon *d, bool json, bool verbose);
