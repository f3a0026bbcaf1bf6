/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: carrying out a plan on one disk: read, compare, write, read back, and one result
 * per managed attribute. Never logs: the caller reports. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "attr.h"
#include "disk.h"
#include "policy.h"

enum hvt_outcome {
        HVT_UNCHANGED,    /* already had the desired value: nothing written */
        HVT_APPLIED,      /* written and read back as written */
        HVT_CLAMPED,      /* written, but the kernel kept another value */
        HVT_FAILED,       /* the read or the write failed: error says why */
        HVT_UNSUPPORTED,  /* this kernel or disk does not have it (attribute, scheduler) */
        HVT_WOULD_APPLY,  /* dry run: differs, would be written */
        _HVT_OUTCOME_MAX,
};

struct hvt_result {
        enum hvt_attr_id attr;
        enum hvt_outcome outcome;
        int error;                    /* positive errno for failed and unsupported, else 0 */
        char from[HVT_VALUE_MAX];     /* found before: the active name for the scheduler; what
                                       * was read, as it is and cut, when it was no value */
        char to[HVT_VALUE_MAX];       /* desired, as written */
        char kept[HVT_VALUE_MAX];     /* clamped, or unchanged as clamped before: what the kernel keeps */
        char offered[96];             /* scheduler unsupported: "none mq-deadline kyber" */
        bool knock_on;                /* written because the scheduler was, in the same pass */
        bool not_recorded;            /* failed: not written, as its original could not be recorded */
};

/* Of a disk's plan, or of hvt_apply_attr()'s one attribute. */
struct hvt_apply {
        size_t n;
        struct hvt_result results[_HVT_ATTR_DISK_MAX];
};

enum {
        HVT_APPLY_DRY_RUN = 1 << 0,
};

/* Called before the first write of a pass with every planned attribute as first read, and
 * after them the attributes the plan does not manage that a scheduler switch resets (when it
 * has the scheduler): those for which hvt_apply_may_write() is true have their value found
 * in .from. A negative return skips every write and fails the attributes that would have
 * been written with that error. This is where originals are recorded: all before the first
 * write, because a write changes other attributes (a scheduler switch resets nr_requests,
 * managed or not), and at once, so that they survive a crash right after it. Called again,
 * with just that one, only for an attribute a write changed that nothing said it would. */
typedef int (*hvt_before_write_t)(const struct hvt_apply *found, void *userdata);

/* The result of id, or NULL when the pass had none. */
const struct hvt_result *hvt_apply_find(const struct hvt_apply *a, enum hvt_attr_id id);

/* Whether the pass may change found->results[i]: it differs, or the scheduler differs and
 * resets it when written. */
bool hvt_apply_may_write(const struct hvt_apply *found, size_t i);

/* One result per planned attribute, in table order. Every attribute is read before the
 * first write; after a write, each later one is read again before it is compared, since the
 * kernel may have changed it. A failure of one attribute never stops the others, but for
 * one: the scheduler is not switched while an attribute the switch resets cannot be read
 * (its original would be lost). The results say what happened. before_write may be NULL. */
void hvt_apply_disk(const struct hvt_disk *d, const struct hvt_plan *p, unsigned flags,
                    hvt_before_write_t before_write, void *userdata, struct hvt_apply *ret);

/* The same step for one attribute below dirfd, outside any disk (the module parameter). */
void hvt_apply_attr(int dirfd, enum hvt_attr_id id, const struct hvt_setting *want, unsigned flags,
                    hvt_before_write_t before_write, void *userdata, struct hvt_result *ret);

const char *hvt_outcome_to_string(enum hvt_outcome o);
