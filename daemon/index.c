/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the index of index.h: linear probing, at most half full, removal by shifting
 * the entries after the gap back (no tombstones, so lookups stay short after churn). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "index.h"

/* FNV-1a: syspaths share long prefixes, and every byte counts. */
static size_t hash(const char *s) {
        uint64_t h = 0xcbf29ce484222325ULL;

        for (; *s; s++)
                h = (h ^ (unsigned char) *s) * 0x100000001b3ULL;
        return (size_t) h;
}

static void insert(struct hvt_index *x, void *item) {
        size_t i = hash(x->key(item)) & (x->size - 1);

        while (x->slot[i])
                i = (i + 1) & (x->size - 1);
        x->slot[i] = item;
        x->n++;
}

static int grow(struct hvt_index *x) {
        size_t size = x->size ? 2 * x->size : 64;
        struct hvt_index bigger = { .slot = calloc(size, sizeof(*x->slot)), .size = size, .key = x->key };

        if (!bigger.slot)
                return -ENOMEM;
        for (size_t i = 0; i < x->size; i++)
                if (x->slot[i])
                        insert(&bigger, x->slot[i]);
        free(x->slot);
        *x = bigger;
        return 0;
}

int hvt_index_add(struct hvt_index *x, void *item) {
        int r;

        if (2 * (x->n + 1) > x->size) {
                r = grow(x);
                if (r < 0)
                        return r;
        }
        insert(x, item);
        return 0;
}

/* Where item is, or with item NULL the item of key. */
static size_t position(const struct hvt_index *x, const char *key, const void *item) {
        for (size_t i = hash(key) & (x->size - 1); x->slot[i]; i = (i + 1) & (x->size - 1))
                if (item ? x->slot[i] == item : strcmp(x->key(x->slot[i]), key) == 0)
                        return i;
        return SIZE_MAX;
}

void *hvt_index_find(const struct hvt_index *x, const char *key) {
        size_t i = x->size ? position(x, key, NULL) : SIZE_MAX;

        return i == SIZE_MAX ? NULL : x->slot[i];
}

void hvt_index_remove(struct hvt_index *x, const void *item) {
        size_t mask = x->size - 1, gap = x->size ? position(x, x->key(item), item) : SIZE_MAX;

        if (gap == SIZE_MAX)
                return;
        x->slot[gap] = NULL;
        x->n--;
        /* An entry after the gap whose home is not in (gap, its slot] moves into it. */
        for (size_t i = (gap + 1) & mask; x->slot[i]; i = (i + 1) & mask) {
                size_t home = hash(x->key(x->slot[i])) & mask;

                if (((i - home) & mask) >= ((i - gap) & mask)) {
                        x->slot[gap] = x->slot[i];
                        x->slot[i] = NULL;
                        gap = i;
                }
        }
}

void hvt_index_done(struct hvt_index *x) {
        free(x->slot);
        *x = (struct hvt_index) { .key = x->key };
}
