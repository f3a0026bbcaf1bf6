/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: a managed disk's attributes as hvtuned tracks them: their slots, and what each pass
 * means for them: what goes back to its original, which write is a tune and which a repair of
 * drift, what the kernel kept, which failure was said already, and how many repairs a disk
 * may need before hvtuned stops fighting whoever reverts it. Pure: the caller reads and writes sysfs, the
 * record and the clock, and reports.
 *
 * A pass is: hvt_track_plan(), the restore it returns applied and given to
 * hvt_track_restored(); the plan applied, with hvt_track_originals() in the hook before its
 * first write; its results given to hvt_track_applied(); the repairs counted by
 * hvt_repair_window_add(). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "apply.h"
#include "policy.h"
#include "records.h"

/* The slots: a managed disk's state per attribute, kept only for the attributes it has any
 * of (a configuration manages a few of the allowlist, and a table with a row for every
 * attribute made three quarters of each disk's memory). The library takes whole-allowlist
 * structs (struct hvt_plan, struct hvt_originals); the slot functions fill them from the slots
 * and back. */

/* Of an attribute's last result, what later passes compare with: not the whole hvt_result
 * (the scheduler list offered is only reported). Its from and to only ever answer whether a
 * failure is the one said already: hashed, they are 8 bytes where they were 48, 200 a disk
 * of the bench's (docs/performance.md). Two different pairs would share a hash once in 2^64,
 * and a new failure would then be said at debug level instead. */
struct hvt_last {
        uint64_t values;           /* hvt_last_values(from, to) */
        char kept[HVT_VALUE_MAX];
        int16_t error;             /* a positive errno: Linux's are below 200 */
        uint8_t outcome;           /* enum hvt_outcome */
        bool to_set : 1;           /* it had a value to write or restore */
};

/* FNV-1a of from and to, each with its NUL. */
uint64_t hvt_last_values(const char *from, const char *to);

/* What hvtuned knows of one attribute of a managed disk. A slot lives while the attribute is
 * managed or has an original recorded (a restore still to do). Narrow fields, packed: a disk
 * holds a slot for each attribute it manages and each knock-on it keeps (five on the bench's
 * configuration). The wanted value and the original are kept as text only, as a disk's
 * attributes are compared and written as text: hvt_slot_want() and hvt_slot_orig() make
 * the struct hvt_setting a plan or the record takes from it. */
struct hvt_slot {
        union {
                char want[HVT_VALUE_MAX];  /* want_set: what the last pass wanted */
                /* Not managed (!want_set), a knock-on: what hvtuned's write left in it, which
                 * its restore expects to find ("": not one, or not known since a restart: put
                 * back as it is). A managed attribute has none, which frees the room for the
                 * want: read it with hvt_slot_left(). */
                char left[HVT_VALUE_MAX];
        };
        char orig[HVT_VALUE_MAX];  /* orig_set: before hvtuned's first write, as recorded */
        struct hvt_last last;
        bool want_set : 1;         /* false: not managed */
        bool orig_set : 1;
        /* Its original was taken because a write of the pass may change it (read_ahead_kb
         * before max_sectors_kb), not managed: unless that write did, nothing of hvtuned's is
         * there to put back, and the original is forgotten after the pass. */
        bool watch_only : 1;
        bool settled : 1;          /* has had its desired value: a later write repairs drift */
        bool acted : 1;            /* a pass wrote it or failed: last_action says how */
        /* Something else keeps writing it (hvt_track_repairs()): told once, until its run of
         * repairs ends. */
        bool contested : 1;
        /* Left to that writer: not managed while the plan wants the same of it under "yield";
         * want keeps what hvtuned wanted, for its restore at stop (hvt_slot_yield_left()). */
        bool yielded : 1;
        /* want is a ceiling (hvt_setting.at_most): a value at or below it is as configured.
         * For the state file, which `hvtuned --verify` judges by (the last bit of the byte). */
        bool want_at_most : 1;
        uint8_t id;                /* enum hvt_attr_id */
        uint8_t last_action;       /* enum hvt_outcome */
        /* Its repairs in a row, each within the horizon of hvt_track_repairs() of the one
         * before (saturates), and when the last was: whole seconds of the repair window's
         * clock, plus one (0: none). In the four bytes the slot had left. */
        uint8_t repairs;
        uint32_t repaired_s;
};

/* Why a byte here counts: at 1,000 disks the service holds 5,000 slots, a part of its peak
 * RSS measured (docs/performance.md). Two whole struct hvt_setting, enums, an int and padding
 * made a slot 200 bytes, 184 narrowed; with the settings as text and left in the want's room,
 * 128; with the last values hashed, 96; a neighbour's contest (repairs, repaired_s and two bits)
 * fitted in its padding. */
_Static_assert(sizeof(struct hvt_slot) <= 96, "a slot is a disk's memory, times each attribute it keeps");

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

/* The slot's want, or its original, as the setting plans and records hold; unset when it
 * has none. */
void hvt_slot_want(const struct hvt_slot *slot, struct hvt_setting *ret);
void hvt_slot_orig(const struct hvt_slot *slot, struct hvt_setting *ret);
/* The slot's want becomes v, or it is not managed with v unset; so does its original. */
void hvt_slot_set_want(struct hvt_slot *slot, const struct hvt_setting *v);
void hvt_slot_set_orig(struct hvt_slot *slot, const struct hvt_setting *v);

/* What hvtuned's write left in a knock-on not managed; "" for a managed attribute. */
static inline const char *hvt_slot_left(const struct hvt_slot *slot) {
        return slot->want_set ? "" : slot->left;
}

/* The slots want what p wants: a slot for each attribute it manages. -ENOMEM, with what
 * fitted taken. */
int hvt_slots_set_wants(struct hvt_slots *s, const struct hvt_plan *p);

void hvt_slots_originals(const struct hvt_slots *s, struct hvt_originals *ret);
/* The originals become those of o (a record loaded), the driver's attributes a damaged record
 * may hold left out; -ENOMEM, with what fitted taken. Slots left empty stay until
 * hvt_slots_compact(). */
int hvt_slots_set_originals(struct hvt_slots *s, const struct hvt_originals *o);

/* A disk reverted more than this many times within the window is not fought: repairs pause
 * until the window is over. A distro rule that re-applies its scheduler on every change
 * event would otherwise make hvtuned and udev write in turns forever. */
#define HVT_REPAIR_BURST 10
#define HVT_REPAIR_WINDOW_S 60

/* Why an attribute was written (or looked at); it picks the report's wording. */
enum hvt_action {
        HVT_ACTION_TUNE,     /* bringing it to the configured value */
        HVT_ACTION_REPAIR,   /* it had the configured value, something changed it back */
        HVT_ACTION_RESTORE,  /* no longer managed, or stopping: back to its original */
};

/* Who wrote the value a repair found: the kernel, re-applying its own rule (read-ahead at a
 * limits commit, readahead-rule.h), or anyone else. The caller decides (it reads sysfs and
 * knows the events); a repair is another writer's until it says so. */
enum hvt_writer {
        HVT_WRITER_NONE,     /* not a repair */
        HVT_WRITER_OTHER,
        HVT_WRITER_KERNEL,
};

/* What one result of a pass was, for its report. */
struct hvt_verdict {
        enum hvt_action action;
        bool repeated;  /* the same failure as the attribute's last result: said already */
        enum hvt_writer writer;
};

/* What a pass did, in counts. */
struct hvt_tally {
        unsigned failed, unsupported, would_apply;
        unsigned repairs;  /* writes that repaired another writer's drift, for the repair window */
        uint32_t repaired; /* which: bit 1 << id */
        unsigned kernel_repairs;  /* repairs of the kernel's re-application: no window, no contest */
        unsigned forgotten;  /* watched originals no write changed, dropped: the record to save again */
};

/* The new plan, against what the slots knew: plan->kept filled where the wanted value is the
 * same as last time, history forgotten where it changed; the slots then want what the plan
 * wants. *ret_restore gets the originals to put back: of the attributes the plan no longer
 * manages, but for a knock-on (one a scheduler switch resets, one a write of hvtuned's
 * changed) while what changed it is still managed and written (it goes back with that one's);
 * a knock-on's with the value its restore expects to find in ->left. -ENOMEM, with the slots
 * part done: no pass. */
int hvt_track_plan(struct hvt_slots *s, struct hvt_plan *plan, struct hvt_plan *ret_restore);

/* Every recorded original, to put back (when hvtuned stops), knock-ons with ->left. */
void hvt_track_restore_all(const struct hvt_slots *s, struct hvt_plan *ret);

/* The results of a restore: ret[i] for a->results[i]. A restore that worked, or a knock-on
 * left to whoever changed it since (HVT_LEFT), drops the original and the history; one that
 * failed keeps them, for a later try, and its result, so that the same failure is said once.
 * Returns how many failed. */
unsigned hvt_track_restored(struct hvt_slots *s, const struct hvt_apply *a,
                            struct hvt_verdict ret[static _HVT_ATTR_DISK_MAX]);

/* Before the first write of a pass: the original of each attribute of found the pass may
 * change and that has none yet, as found, into its slot; taken[id] says which. Returns
 * whether any was taken, or -errno with none taken. */
int hvt_track_originals(struct hvt_slots *s, const struct hvt_apply *found,
                        bool taken[static _HVT_ATTR_DISK_MAX]);

/* Drops the originals taken[] says were taken: the record of them could not be saved, and
 * the writes they were for are not made. */
void hvt_track_drop_originals(struct hvt_slots *s, const bool taken[static _HVT_ATTR_DISK_MAX]);

/* The results of a pass of the plan: ret[i] for a->results[i], with what the slots learn
 * from them and the counts; the originals of watched attributes that no write of the pass
 * changed are forgotten (on a kernel without that coupling, a later value of the operator's
 * is theirs), and slots left with nothing in them are dropped. */
void hvt_track_applied(struct hvt_slots *s, const struct hvt_apply *a,
                       struct hvt_verdict ret[static _HVT_ATTR_DISK_MAX], struct hvt_tally *ret_tally);

/* The repair of result i of a pass was of the kernel's re-application: its verdict says so,
 * and it leaves the repairs the window and the contests count (hvt_track_repairs()). */
void hvt_track_kernel_repair(struct hvt_tally *t, struct hvt_verdict v[static _HVT_ATTR_DISK_MAX],
                             const struct hvt_apply *a, size_t i);

/* A disk's repairs within a fixed window of HVT_REPAIR_WINDOW_S. Times in µs of one
 * monotonic clock. */
struct hvt_repair_window {
        uint64_t start;    /* 0: none yet */
        unsigned repairs;
};

/* Counts n repairs made at now, in a new window when the last one is over. Returns whether
 * they are past the budget: the disk pauses until hvt_repair_window_end(). */
bool hvt_repair_window_add(struct hvt_repair_window *w, unsigned n, uint64_t now);

/* When the window, and a pause in it, ends. */
uint64_t hvt_repair_window_end(const struct hvt_repair_window *w);

/* A pause is over at now: a new window begins, with no repairs in it. */
void hvt_repair_window_restart(struct hvt_repair_window *w, uint64_t now);

/* Neighbours: another program that writes an attribute hvtuned manages (a udev rule on every
 * change event, a daemon on a timer). Each undoes the other: the same attribute of the same
 * disk repaired again and again. The repair window above is per disk; a slot also counts its
 * own repairs in a row, so that the pause can name what is fought over, and so that a slow
 * neighbour (one write in 30 s, seen by the periodic check) that never fills the window is
 * found too.
 *
 * An attribute is contested when its run of repairs, each within the horizon of the one
 * before, goes past HVT_REPAIR_BURST, or when the disk goes past its budget with at least
 * HVT_CONTEST_MIN repairs of it in its run. The horizon is the window, or twice the periodic
 * check's interval when that is longer: a rewrite found only by the check is seen that far
 * apart. A repair further from the one before begins a new run: drift now and then is not a
 * contest. */
#define HVT_CONTEST_MIN 3
_Static_assert(_HVT_ATTR_DISK_MAX <= 32, "an attribute is a bit of a uint32_t mask");

/* What hvtuned does about a contested attribute (hvtuned.conf: contested). */
enum hvt_contest_policy {
        HVT_CONTEST_YIELD,   /* the default: leave it to the neighbour, on that disk */
        HVT_CONTEST_INSIST,  /* go on repairing it, pausing as the window says */
};

/* The horizon of a run of repairs, in µs, for a periodic check every verify_interval s (0:
 * none). */
uint64_t hvt_contest_horizon(unsigned verify_interval);

/* What the repairs of a pass amount to. */
struct hvt_contest {
        bool pause;          /* the disk is past its budget for an attribute still managed */
        uint32_t contested;  /* attributes found contested by this pass (bit 1 << id): to tell */
        uint32_t yielded;    /* of those, the ones left to the neighbour from now on */
};

/* Counts the repairs of t (made at now) in the disk's window and in each repaired slot's run,
 * and decides: insist (bit 1 << id) names the attributes hvtuned goes on repairing when
 * contested, the others are yielded. A yielded slot stays, with what hvtuned wanted; the
 * plan leaves it alone from then on (hvt_track_plan()). The disk pauses only for what it
 * still repairs: once everything fought over is yielded, the fight is over, and a new window
 * begins. */
void hvt_track_repairs(struct hvt_slots *s, struct hvt_repair_window *w, const struct hvt_tally *t,
                       uint64_t now, uint64_t horizon, uint32_t insist, struct hvt_contest *ret);

/* A contested attribute hvtuned insists on that has not been repaired within the horizon:
 * its neighbour has stopped, and it is no longer contested. Returns whether any changed. */
bool hvt_track_contest_over(struct hvt_slots *s, uint64_t now, uint64_t horizon);

/* The plan as the yields leave it: an attribute yielded stays yielded (out of the plan) while
 * the plan wants the same value of it and insist does not name it; otherwise the yield ends
 * and the slot is an ordinary one again (a new value or insist: managed, its first write a
 * tune; no longer in the plan: its original goes back as hvt_track_plan() says). Call before
 * hvt_track_plan(). */
void hvt_track_yields(struct hvt_slots *s, struct hvt_plan *plan, uint32_t insist);

/* What a yielded slot's restore expects to find: hvtuned's value as the kernel kept it. Found
 * so, the neighbour has not written since, and the original goes back; found otherwise, the
 * neighbour's value stays (HVT_LEFT), as a value put back over it would be written again. */
const char *hvt_slot_yield_left(const struct hvt_slot *slot);
