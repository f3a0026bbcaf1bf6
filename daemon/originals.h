/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: a subject's record of originals as the daemon keeps it, for a disk and the driver
 * alike: saved and loaded through the runtime directory (lib/records.h), each failure said in
 * the same words for both. */
#pragma once

#include "context.h"
#include "subject.h"

/* Replaces s's record with o: 0 (also when no records are kept: the runtime directory was
 * refused), or -errno, said; the caller then does not write what has no original on record. */
int hvt_originals_save(struct hvt_daemon *d, const struct hvt_subject *s, const struct hvt_originals *o);

/* s's record into o: 0; -ENOENT when there is none (or no records are kept); -EBADMSG when it
 * was damaged, and is gone (said); another -errno when it cannot be read (said): it may hold
 * the true originals, so nothing without one on record is to be written. quiet: a try again,
 * whose failure was said already. A dry run (HVT_APPLY_DRY_RUN) neither saves nor deletes a
 * record. */
int hvt_originals_load(struct hvt_daemon *d, const struct hvt_subject *s, struct hvt_originals *o, bool quiet);
