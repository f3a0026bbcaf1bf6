/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the table of disks.h: an array in no order (removal moves the last entry into the
 * gap) beside the syspath index; and whether a tracked disk is still the instance at its path. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "disks.h"

static const char *syspath_of(const void *item) {
        const struct hvt_tracked *t = item;

        return t->disk.syspath;
}

static void tracked_free(struct hvt_tracked *t) {
        hvt_event_source_free(t->resume);
        hvt_event_source_free(t->busy_retry);
        hvt_slots_done(&t->slots);
        hvt_disk_done(&t->disk);
        free(t);
}

struct hvt_tracked *hvt_disks_add(struct hvt_disks *x, struct hvt_disk *disk) {
        struct hvt_tracked *t;

        if (x->n == x->allocated) {
                size_t n = x->allocated ? x->allocated * 2 : 16;
                struct hvt_tracked **p = reallocarray(x->v, n, sizeof(*p));

                if (!p)
                        return NULL;
                x->v = p;
                x->allocated = n;
        }
        t = calloc(1, sizeof(*t));
        if (!t)
                return NULL;
        t->disk = *disk;
        x->index.key = syspath_of;
        if (hvt_index_add(&x->index, t) < 0) {
                free(t);
                return NULL;
        }
        *disk = (struct hvt_disk) {};
        x->v[x->n++] = t;
        return t;
}

void hvt_disks_remove(struct hvt_disks *x, struct hvt_tracked *t) {
        hvt_index_remove(&x->index, t);
        for (size_t i = 0; i < x->n; i++)
                if (x->v[i] == t) {
                        x->v[i] = x->v[--x->n];
                        break;
                }
        tracked_free(t);
}

struct hvt_tracked *hvt_disks_find(const struct hvt_disks *x, const char *syspath) {
        return hvt_index_find(&x->index, syspath);
}

struct hvt_tracked *hvt_disks_find_lun(const struct hvt_disks *x, const char *syspath) {
        for (size_t i = 0; i < x->n; i++)
                if (strcmp(x->v[i]->disk.device_syspath, syspath) == 0)
                        return x->v[i];
        return NULL;
}

void hvt_disks_done(struct hvt_disks *x) {
        for (size_t i = 0; i < x->n; i++)
                tracked_free(x->v[i]);
        free(x->v);
        hvt_index_done(&x->index);
        *x = (struct hvt_disks) {};
}

int hvt_tracked_instance(const struct hvt_tracked *t) {
        struct hvt_disk now = {};
        int r;

        /* Read as the tracked identity was, by path: a directory gone reads as device 0:0. */
        r = hvt_disk_read_instance(t->disk.syspath, 0, &now);
        if (r < 0)
                return r;
        if (strcmp(now.dev, t->disk.dev) != 0 || now.diskseq != t->disk.diskseq)
                return 0;
        return now.ino == 0 || t->disk.ino == 0 || now.ino == t->disk.ino;
}
