/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the context's lifetime: the end of a run, in the order its parts depend on. */
#pragma once

#include "context.h"

/* Frees everything d holds, removing the metrics file (figures left behind would be read
 * as a running hvtuned's). */
void hvt_daemon_done(struct hvt_daemon *d);
