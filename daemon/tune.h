/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: one managed disk's pass through the data path: plan -> (restore what is no longer
 * managed) -> apply, recording originals before the first write -> report, with drift
 * repairs told apart and rate-limited. */
#pragma once

#include "context.h"

enum hvt_tune_reason {
        HVT_TUNE_FOUND,   /* new disk: first pass */
        HVT_TUNE_EVENT,   /* a change event: re-check, repair drift */
        HVT_TUNE_CONFIG,  /* the configuration changed */
        HVT_TUNE_VERIFY,  /* the periodic re-check, or the end of a repair pause */
        HVT_TUNE_BUSY,    /* again, after a pass that met EBUSY */
};

void hvt_tune(struct hvt_daemon *d, struct hvt_tracked *t, enum hvt_tune_reason why);

/* Every recorded original of t back in place; the record goes once nothing is left in it.
 * Returns whether a write stayed busy (EBUSY) through its tries: that original is still
 * recorded, for another call. */
bool hvt_tune_restore(struct hvt_daemon *d, struct hvt_tracked *t);

/* A disk hvtuned starts to manage: the originals an earlier run recorded for it. A damaged
 * record is dropped, one that cannot be read holds back every write that would need it. 0, or
 * -ENOENT (none, or another instance's, deleted), -EBADMSG (damaged, deleted, said), another
 * -errno (said). */
int hvt_tune_load_record(struct hvt_daemon *d, struct hvt_tracked *t);
