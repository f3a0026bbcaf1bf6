/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the walk over every block disk, at start and after lost events, and the pruning of
 * records whose disk is gone. */
#pragma once

#include <stdbool.h>

#include "context.h"

/* Whether the walk should end early (a stop was asked for). */
typedef bool (*hvt_stop_t)(void *userdata);

/* Routes every block disk; a managed disk it does not find any more is forgotten as removed,
 * and so are records of disks that are not there. Returns 1, having walked only part, when
 * stop (may be NULL) says so. */
int hvt_enumerate(struct hvt_daemon *d, hvt_stop_t stop, void *userdata);
