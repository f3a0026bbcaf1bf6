/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: finding a managed disk by its syspath in constant time. Every uevent and every disk
 * of a walk asks; a scan of the table made a walk quadratic in disks. */
#pragma once

#include <stddef.h>

struct hvt_tracked;

/* Open addressing over the disks' syspaths (the table does not own the disks). */
struct hvt_index {
        struct hvt_tracked **slot;
        size_t size, n;   /* size: a power of two, or 0 */
};

int hvt_index_add(struct hvt_index *x, struct hvt_tracked *t);
void hvt_index_remove(struct hvt_index *x, const struct hvt_tracked *t);
struct hvt_tracked *hvt_index_find(const struct hvt_index *x, const char *syspath);
void hvt_index_done(struct hvt_index *x);
