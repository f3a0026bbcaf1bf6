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
        /* Not managed by the pass, only watched: */
        HVT_KNOCKED_ON,   /* changed by the pass's write of .cause: to is what it shows now */
        HVT_LEFT,         /* a knock-on to put back that someone changed since: not written */
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
        /* The bound the kernel states that to breaks (bounds.h): a write refused with EINVAL,
         * or one a dry run would make: "over the tag depth 2534"; "" when none is broken or
         * it could not be read. */
        char bound[64];
        bool knock_on;                /* written because the scheduler was, in the same pass */
        bool not_recorded;            /* failed: not written, as its original could not be recorded */
        bool watched;                 /* not planned: told only when a write of the pass changed it */
        bool held;                    /* failed: not written, as .cause's write, which it depends on, failed */
        bool unread;                  /* failed: not written, as .cause, which its write changes, could not be read */
        enum hvt_attr_id cause;       /* knocked on or held: the write that did it */
};

/* Of a disk's plan, or of hvt_apply_attr()'s one attribute. */
struct hvt_apply {
        size_t n;
        struct hvt_result results[_HVT_ATTR_DISK_MAX];
};

enum {
        HVT_APPLY_DRY_RUN = 1 << 0,
        /* Putting originals back: what a write of the pass changes that the plan does not
         * have goes back to what it showed before the pass, so that a restore leaves nothing
         * of hvtuned's behind (on 6.9+ restoring max_sectors_kb raises read_ahead_kb again). */
        HVT_APPLY_RESTORE = 1 << 1,
        /* A re-check of a disk expected to be as planned (the periodic one): the planned
         * attributes are read by their paths, three system calls each, and no directory is
         * opened. Only a pass with something to write, or a read that failed, opens its
         * directories and runs as any other, its reads made again through them. */
        HVT_APPLY_CHECK = 1 << 2,
};

/* A scheduler or nr_requests write that gets EBUSY (7.3 and 6.18.y take a trylock) is tried
 * this many times in all, at once: the pass's order is kept and nothing sleeps. A pass still
 * busy is the daemon's to run again later (daemon/tune.c). */
#define HVT_APPLY_BUSY_TRIES 4

/* Called before the first write of a pass with every planned attribute as first read, and
 * the attributes the plan does not manage that a planned write can change (lib/attr.c
 * hvt_attr_write_may_change(): a scheduler switch resets nr_requests, a limits update
 * read_ahead_kb, ...), in table order: those for which hvt_apply_may_write() is true have
 * their value found in .from. A negative return skips every write and fails the attributes that would have
 * been written with that error. This is where originals are recorded: all before the first
 * write, because a write changes other attributes (a scheduler switch resets nr_requests,
 * managed or not), and at once, so that they survive a crash right after it. Called again,
 * with just that one, only for an attribute a write changed that nothing said it would. */
typedef int (*hvt_before_write_t)(const struct hvt_apply *found, void *userdata);

/* The result of id, or NULL when the pass had none. */
const struct hvt_result *hvt_apply_find(const struct hvt_apply *a, enum hvt_attr_id id);

/* Whether the pass may change found->results[i]: it differs, or an attribute whose write can
 * change it differs. */
bool hvt_apply_may_write(const struct hvt_apply *found, size_t i);

/* One result per planned attribute, and one per watched attribute a write changed
 * (HVT_KNOCKED_ON; put back under HVT_APPLY_RESTORE), in table order. A planned attribute
 * with p->left set is a knock-on to put back: found other than both left and its original,
 * someone changed it since, and it is not written (HVT_LEFT). A scheduler whose write stays
 * busy (EBUSY) holds what depends on it (nr_requests, wbt_lat_usec): failed, .held. Every attribute is read before the
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
