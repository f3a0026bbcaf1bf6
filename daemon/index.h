/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: finding an item by a string key in constant time. Every uevent and every disk of a
 * walk asks for its disk by syspath; a scan of the table made a walk quadratic in disks. */
#pragma once

#include <stddef.h>

/* Open addressing over items that carry their own key, which key() reads: the table owns
 * neither, and an item's key may be a new string of the same text at any time. */
struct hvt_index {
        void **slot;
        size_t size, n;   /* size: a power of two, or 0 */
        const char *(*key)(const void *item);
};

int hvt_index_add(struct hvt_index *x, void *item);
void hvt_index_remove(struct hvt_index *x, const void *item);
void *hvt_index_find(const struct hvt_index *x, const char *key);
void hvt_index_done(struct hvt_index *x);
