/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: hvtuned --restore: every original in the records of the runtime directory put back
 * without a daemon (after --once, after a crash or kill -9, or with restore_on_stop = false),
 * through the daemon's own restore at stop. */
#pragma once

#include "context.h"

/* Holds the runtime directory (refused, said, while a daemon holds it), loads every record
 * into d as the daemon would, and puts the originals back (with HVT_APPLY_DRY_RUN in
 * d->apply_flags: says what it would do, and writes and deletes nothing). A record of a disk
 * that is gone, or that is another instance now, is dropped; one put back is deleted; one
 * that was not is kept, and said. 0 when every record went (or there was none), 1 when one
 * is kept, -errno when nothing could be done (said). */
int hvt_undo(struct hvt_daemon *d);
