/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: opening a file that may steer a daemon which writes kernel tunables as root, only when
 * nobody but root (or the running user) could have put it there: the walk of fs-util.h with the
 * rule of trust.h. */
#include <stdio.h>

#include "fs-util.h"
#include "trust.h"

int hvt_open_trusted(const char *path, char *why, size_t size) {
        /* A refusal says why; an error that is EPERM of itself (an LSM, a seccomp filter) has
         * no why of hvtuned's to print. */
        if (size > 0)
                snprintf(why, size, "not allowed to look at it");
        /* Every directory, as a file can be replaced by whoever may write any directory above
         * it; a sticky one (/tmp) lets them replace only what they own, and every step taken
         * from it is checked. */
        return hvt_walk(path, HVT_WALK_FOLLOW | HVT_WALK_CHECK_EVERY | HVT_WALK_REGULAR | HVT_OWNER_STICKY_OK, NULL,
                        why, size);
}
