/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: a managed disk's state per attribute, kept only for the attributes it has any of: a
 * configuration manages a few of the allowlist, and a table with a row for every attribute
 * made three quarters of each disk's memory. The library takes whole-table structs (struct
 * hvt_plan, struct hvt_originals); these functions fill them from the slots and back. Only
 * a disk's attributes (below _HVT_ATTR_DISK_MAX) ever get a slot from them. What a slot
 * learns from pass to pass is track.h's. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "apply.h"
#include "policy.h"
#include "state.h"

/* Of an attribute's last result, what later passes compare with: not the whole hvt_result
 * (the scheduler list offered is only reported). */
struct hvt_last {
        enum hvt_outcome outcome;
        int error;
        char from[HVT_VALUE_MAX];
        char to[HVT_VALUE_MAX];
        char kept[HVT_VALUE_MAX];
};

/* What hvtuned knows of one attribute of a managed disk. A slot lives while the attribute is
 * managed or has an original recorded (a restore still to do). */
struct hvt_slot {
        enum hvt_attr_id id;
        struct hvt_setting want;   /* what the last pass wanted; .set false: not managed */
        struct hvt_setting orig;   /* before hvtuned's first write, as recorded */
        struct hvt_last last;
        bool settled;              /* has had its desired value: a later write repairs drift */
        bool acted;                /* a pass wrote it or failed: last_action says how */
        enum hvt_outcome last_action;
};

/* Sorted by id, which is apply order. */
struct hvt_slots {
        struct hvt_slot *slot;
        uint8_t n;
};

struct hvt_slot *hvt_slot_get(const struct hvt_slots *s, enum hvt_attr_id id);
/* The slot of id, made (everything unset) if there is none; NULL when out of memory. */
struct hvt_slot *hvt_slot_make(struct hvt_slots *s, enum hvt_attr_id id);
/* Drops the slots with nothing left in them: not managed, no original. */
void hvt_slots_compact(struct hvt_slots *s);
void hvt_slots_done(struct hvt_slots *s);

/* The slots want what p wants: a slot for each attribute it manages. -ENOMEM, with what
 * fitted taken. */
int hvt_slots_set_wants(struct hvt_slots *s, const struct hvt_plan *p);

void hvt_slots_originals(const struct hvt_slots *s, struct hvt_originals *ret);
/* The originals become those of o (a record loaded), the driver's attributes a damaged record
 * may hold left out; -ENOMEM, with what fitted taken. Slots left empty stay until
 * hvt_slots_compact(). */
int hvt_slots_set_originals(struct hvt_slots *s, const struct hvt_originals *o);
