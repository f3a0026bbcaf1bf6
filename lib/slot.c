/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the slots of slot.h: a small array sorted by attribute id, searched linearly (a disk
 * has a handful). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "slot.h"

struct hvt_slot *hvt_slot_get(const struct hvt_slots *s, enum hvt_attr_id id) {
        for (size_t i = 0; i < s->n; i++)
                if (s->slot[i].id == id)
                        return &s->slot[i];
        return NULL;
}

struct hvt_slot *hvt_slot_make(struct hvt_slots *s, enum hvt_attr_id id) {
        struct hvt_slot *found = hvt_slot_get(s, id), *more;
        size_t at = 0;

        if (found)
                return found;
        more = reallocarray(s->slot, s->n + 1u, sizeof(*more));
        if (!more)
                return NULL;
        s->slot = more;
        while (at < s->n && s->slot[at].id < id)
                at++;
        memmove(&s->slot[at + 1], &s->slot[at], (s->n - at) * sizeof(*more));
        s->slot[at] = (struct hvt_slot) { .id = id };
        s->n++;
        return &s->slot[at];
}

void hvt_slots_compact(struct hvt_slots *s) {
        size_t n = 0;

        for (size_t i = 0; i < s->n; i++)
                if (s->slot[i].want.set || s->slot[i].orig.set)
                        s->slot[n++] = s->slot[i];
        s->n = (uint8_t) n;
        if (n == 0)
                hvt_slots_done(s);
        /* A shorter array is not given back: the next pass will likely want it again. */
}

void hvt_slots_done(struct hvt_slots *s) {
        free(s->slot);
        *s = (struct hvt_slots) {};
}

void hvt_slots_originals(const struct hvt_slots *s, struct hvt_originals *ret) {
        *ret = (struct hvt_originals) {};
        for (size_t i = 0; i < s->n; i++)
                ret->value[s->slot[i].id] = s->slot[i].orig;
}

/* Sets the slots' originals, or their wants, from values[]: a slot is made for a value that
 * is set, and a slot's is unset where values[] has none. Only a disk's attributes: a record
 * is read whole-allowlist, and a damaged one could name the driver's (parameters/...,
 * hv_storvsc/bind), which no disk pass may ever write. */
static int set_all(struct hvt_slots *s, const struct hvt_setting values[static _HVT_ATTR_DISK_MAX], bool orig) {
        for (size_t i = 0; i < _HVT_ATTR_DISK_MAX; i++) {
                struct hvt_slot *slot = values[i].set ? hvt_slot_make(s, (enum hvt_attr_id) i) :
                                        hvt_slot_get(s, (enum hvt_attr_id) i);

                if (!slot) {
                        if (values[i].set)
                                return -ENOMEM;
                        continue;
                }
                *(orig ? &slot->orig : &slot->want) = values[i];
        }
        return 0;
}

int hvt_slots_set_wants(struct hvt_slots *s, const struct hvt_plan *p) {
        return set_all(s, p->want, false);
}

int hvt_slots_set_originals(struct hvt_slots *s, const struct hvt_originals *o) {
        return set_all(s, o->value, true);
}
