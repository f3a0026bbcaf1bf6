/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the transitions of track.h, from a disk's slots and a pass's plan or results to the
 * slots after it.
 *
 * An attribute that had its desired value once and needs a write again has drifted: that
 * write is a repair, told apart in the journal, and counted against the disk's repair
 * budget. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "track.h"

/* The slots: a small array sorted by attribute id, searched linearly (a disk has a handful). */

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
        size_t n = 0, had = s->n;
        struct hvt_slot *fewer;

        for (size_t i = 0; i < s->n; i++)
                if (s->slot[i].want_set || s->slot[i].orig_set)
                        s->slot[n++] = s->slot[i];
        s->n = (uint8_t) n;
        if (n == 0) {
                hvt_slots_done(s);
                return;
        }
        /* A shorter array is given back: what drops out is mostly a watched original no
         * write changed (wbt_lat_usec under a switch to none), which the next pass, finding the
         * scheduler at none, does not take again. Kept, it was 200 bytes on two disks in three
         * at the bench's coldplug (~130 KiB of peak RSS at 1,000 disks). Shrinking in place
         * cannot fail in glibc; where it does, the longer array stays. */
        if (n < had && (fewer = reallocarray(s->slot, n, sizeof(*fewer))))
                s->slot = fewer;
}

void hvt_slots_done(struct hvt_slots *s) {
        free(s->slot);
        *s = (struct hvt_slots) {};
}

/* The text of a slot's setting was made by a constructor of attr.h, from the kernel's or the
 * configuration's value: canonical, so its number is what strtoll() reads of it (a
 * scheduler's is 0, as hvt_setting_set_sched() leaves it). Not made again through the
 * constructor: its snprintf() was a tenth of a coldplug's instructions, once for every
 * record saved. */
static void setting_of(const struct hvt_slot *slot, bool set, const char *text, struct hvt_setting *ret) {
        *ret = (struct hvt_setting) { .set = set };
        if (!set)
                return;
        memcpy(ret->text, text, HVT_VALUE_MAX);
        if (hvt_attr_get((enum hvt_attr_id) slot->id)->kind != HVT_VALUE_SCHEDULER)
                ret->num = strtoll(text, NULL, 10);
}

void hvt_slot_want(const struct hvt_slot *slot, struct hvt_setting *ret) {
        setting_of(slot, slot->want_set, slot->want, ret);
}

void hvt_slot_orig(const struct hvt_slot *slot, struct hvt_setting *ret) {
        setting_of(slot, slot->orig_set, slot->orig, ret);
}

void hvt_slot_set_want(struct hvt_slot *slot, const struct hvt_setting *v) {
        if (v->set)
                memcpy(slot->want, v->text, HVT_VALUE_MAX);
        /* No longer managed: the room is left's, and a managed attribute had none. */
        else if (slot->want_set)
                slot->left[0] = '\0';
        slot->want_set = v->set;
        slot->want_at_most = v->set && v->at_most;
}

void hvt_slot_set_orig(struct hvt_slot *slot, const struct hvt_setting *v) {
        if (v->set)
                memcpy(slot->orig, v->text, HVT_VALUE_MAX);
        else
                slot->orig[0] = '\0';
        slot->orig_set = v->set;
}

/* What hvtuned's write left in a knock-on is forgotten; a managed attribute has none, and its
 * room is the want's. */
static void forget_left(struct hvt_slot *slot) {
        if (!slot->want_set)
                slot->left[0] = '\0';
}

void hvt_slots_originals(const struct hvt_slots *s, struct hvt_originals *ret) {
        *ret = (struct hvt_originals) {};
        for (size_t i = 0; i < s->n; i++)
                hvt_slot_orig(&s->slot[i], &ret->value[s->slot[i].id]);
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
                /* Out of the plan while yielded: what hvtuned wanted stays, for its restore. */
                if (!orig && slot->yielded)
                        continue;
                if (orig)
                        hvt_slot_set_orig(slot, &values[i]);
                else
                        hvt_slot_set_want(slot, &values[i]);
        }
        return 0;
}

int hvt_slots_set_wants(struct hvt_slots *s, const struct hvt_plan *p) {
        return set_all(s, p->want, false);
}

int hvt_slots_set_originals(struct hvt_slots *s, const struct hvt_originals *o) {
        return set_all(s, o->value, true);
}

static bool wrote(const struct hvt_result *r) {
        return r->outcome == HVT_APPLIED || r->outcome == HVT_CLAMPED;
}

uint64_t hvt_last_values(const char *from, const char *to) {
        uint64_t h = UINT64_C(0xcbf29ce484222325);

        for (const char *s = from;; s++) {
                h = (h ^ (unsigned char) *s) * UINT64_C(0x100000001b3);
                if (!*s)
                        break;
        }
        for (const char *s = to;; s++) {
                h = (h ^ (unsigned char) *s) * UINT64_C(0x100000001b3);
                if (!*s)
                        break;
        }
        return h;
}

static bool same_failure(const struct hvt_result *a, const struct hvt_last *b) {
        return a->outcome == b->outcome && a->error == b->error && hvt_last_values(a->from, a->to) == b->values;
}

/* Said already: the same failure (or the same missing attribute) on every event would
 * flood the journal. */
static bool repeated(const struct hvt_result *r, const struct hvt_slot *s) {
        return s && !wrote(r) && r->outcome != HVT_UNCHANGED && same_failure(r, &s->last);
}

static void keep_last(struct hvt_last *l, const struct hvt_result *r) {
        l->outcome = r->outcome;
        l->error = r->error;
        l->values = hvt_last_values(r->from, r->to);
        l->to_set = *r->to != '\0';
        memcpy(l->kept, r->kept, HVT_VALUE_MAX);
}

/* What passes learnt of an attribute, gone when what it is compared with changes. */
static void forget_history(struct hvt_slot *s) {
        s->last = (struct hvt_last) {};
        s->settled = s->acted = false;
        s->last_action = HVT_UNCHANGED;
}

/* An original that a scheduler switch resets (nr_requests) belongs to the scheduler it was
 * found under: while hvtuned still holds the scheduler at another, writing it back would not
 * restore anything, and the scheduler's own restore would reset it again. A knock-on of
 * another write (read_ahead_kb after max_sectors_kb) is the kernel's answer to that write
 * while it holds. Either goes back with what changed it. */
static bool waits_for_cause(const struct hvt_slots *s, const struct hvt_plan *plan, const struct hvt_slot *slot) {
        if (!hvt_attr_reset_by_scheduler(slot->id) && !*hvt_slot_left(slot))
                return false;
        for (size_t i = 0; i < _HVT_ATTR_DISK_MAX; i++) {
                const struct hvt_slot *cause = hvt_slot_get(s, (enum hvt_attr_id) i);

                /* A yielded cause still holds hvtuned's value until stop (or its neighbour's,
                 * which a restore of this one would undo: timeout and io_timeout). */
                if (cause && (plan->want[i].set || cause->yielded) && cause->orig_set &&
                    hvt_attr_write_may_change((enum hvt_attr_id) i, slot->id))
                        return true;
        }
        return false;
}

/* What stays the same keeps its history (settled, what the kernel kept). An original
 * recorded for an attribute the plan does not manage goes back: after a reload that dropped
 * it, and after a restart with a configuration that did. */
int hvt_track_plan(struct hvt_slots *s, struct hvt_plan *plan, struct hvt_plan *ret_restore) {
        *ret_restore = (struct hvt_plan) {};
        for (size_t i = 0; i < _HVT_ATTR_DISK_MAX; i++) {
                enum hvt_attr_id id = (enum hvt_attr_id) i;
                const struct hvt_setting *now = &plan->want[i];
                struct hvt_slot *slot = hvt_slot_get(s, id);
                bool was, unmanaged;

                /* Yielded (hvt_track_yields()): nothing to plan, nothing to restore until stop. */
                if (slot && slot->yielded)
                        continue;
                was = slot && slot->want_set;
                unmanaged = !now->set && slot && slot->orig_set && !waits_for_cause(s, plan, slot);

                /* Managed now: its original is put back as any managed one's. */
                if (now->set && slot) {
                        forget_left(slot);
                        slot->watch_only = false;
                }
                if (was && now->set && strcmp(slot->want, now->text) == 0)
                        memcpy(plan->kept[i], slot->last.kept, HVT_VALUE_MAX);
                else if (slot && (!unmanaged || was))
                        forget_history(slot);
                /* else: a restore still to do keeps the result of its last try. */
                if (unmanaged) {
                        hvt_slot_orig(slot, &ret_restore->want[i]);
                        (void) hvt_strscpy(ret_restore->left[i], HVT_VALUE_MAX, hvt_slot_left(slot));
                }
        }
        return hvt_slots_set_wants(s, plan);
}

void hvt_track_restore_all(const struct hvt_slots *s, struct hvt_plan *ret) {
        *ret = (struct hvt_plan) {};
        for (size_t i = 0; i < s->n; i++) {
                const struct hvt_slot *slot = &s->slot[i];

                if (slot->orig_set && (unsigned) slot->id < _HVT_ATTR_DISK_MAX) {
                        hvt_slot_orig(slot, &ret->want[slot->id]);
                        (void) hvt_strscpy(ret->left[slot->id], HVT_VALUE_MAX,
                                           slot->yielded ? hvt_slot_yield_left(slot) : hvt_slot_left(slot));
                }
        }
}

unsigned hvt_track_restored(struct hvt_slots *s, const struct hvt_apply *a,
                            struct hvt_verdict ret[static _HVT_ATTR_DISK_MAX]) {
        const struct hvt_result *sched = hvt_apply_find(a, HVT_ATTR_SCHEDULER);
        bool sched_failed = sched && sched->outcome == HVT_FAILED;
        unsigned failed = 0;

        for (size_t i = 0; i < a->n; i++) {
                const struct hvt_result *r = &a->results[i];
                struct hvt_slot *slot = hvt_slot_get(s, r->attr);

                ret[i] = (struct hvt_verdict) { HVT_ACTION_RESTORE, repeated(r, slot), HVT_WRITER_NONE };
                if (r->outcome == HVT_FAILED) {
                        failed++;
                        if (slot && !r->watched)
                                keep_last(&slot->last, r);
                        continue;
                }
                /* Its original belongs to the scheduler's: the next try of that resets it. */
                if (!slot || (sched_failed && hvt_attr_reset_by_scheduler(r->attr)))
                        continue;
                /* A knock-on of the restore itself, put back: not this slot's original. */
                if (r->watched)
                        continue;
                slot->orig_set = false;
                forget_left(slot);
                forget_history(slot);
        }
        return failed;
}

/* That includes what the scheduler's switch resets when the plan leaves it alone: its slot
 * holds just the original, put back with the scheduler's. */
int hvt_track_originals(struct hvt_slots *s, const struct hvt_apply *found,
                        bool taken[static _HVT_ATTR_DISK_MAX]) {
        bool any = false;
        int r = 0;

        memset(taken, 0, _HVT_ATTR_DISK_MAX * sizeof(taken[0]));
        for (size_t i = 0; i < found->n; i++) {
                const struct hvt_result *res = &found->results[i];
                struct hvt_setting orig;
                struct hvt_slot *slot;

                if (!hvt_apply_may_write(found, i))
                        continue;
                /* No disk pass writes the driver's: nothing to take, and no write either. */
                if ((unsigned) res->attr >= _HVT_ATTR_DISK_MAX) {
                        r = -EINVAL;
                        break;
                }
                slot = hvt_slot_make(s, res->attr);
                if (!slot) {
                        r = -ENOMEM;
                        break;
                }
                if (slot->orig_set)
                        continue;
                /* from is a value the pass read and parsed. */
                r = hvt_setting_from_kernel(&orig, res->attr, res->from);
                if (r < 0)
                        break;
                hvt_slot_set_orig(slot, &orig);
                /* One a scheduler switch resets goes back with the scheduler, switch or not. */
                slot->watch_only = res->watched && !hvt_attr_reset_by_scheduler(res->attr);
                taken[res->attr] = any = true;
        }
        if (r < 0) {
                hvt_track_drop_originals(s, taken);
                return r;
        }
        return any;
}

void hvt_track_drop_originals(struct hvt_slots *s, const bool taken[static _HVT_ATTR_DISK_MAX]) {
        for (size_t i = 0; i < s->n; i++)
                if ((unsigned) s->slot[i].id < _HVT_ATTR_DISK_MAX && taken[s->slot[i].id])
                        s->slot[i].orig_set = false;
}

void hvt_track_applied(struct hvt_slots *s, const struct hvt_apply *a,
                       struct hvt_verdict ret[static _HVT_ATTR_DISK_MAX], struct hvt_tally *ret_tally) {
        enum hvt_action sched_action = HVT_ACTION_TUNE;

        *ret_tally = (struct hvt_tally) {};
        for (size_t i = 0; i < a->n; i++) {
                const struct hvt_result *r = &a->results[i];
                struct hvt_slot *slot = hvt_slot_get(s, r->attr);
                enum hvt_action action = HVT_ACTION_TUNE;

                /* Put back after the scheduler's switch reset it: part of that write, a repair
                 * only if the switch was one, and never counted twice. */
                if (r->knock_on)
                        action = sched_action;
                else if (wrote(r) && slot && slot->settled) {
                        action = HVT_ACTION_REPAIR;
                        ret_tally->repairs++;
                        ret_tally->repaired |= UINT32_C(1) << r->attr;
                }
                if (r->attr == HVT_ATTR_SCHEDULER)
                        sched_action = action;
                ret[i] = (struct hvt_verdict) { action, repeated(r, slot),
                                                action == HVT_ACTION_REPAIR && !r->knock_on ? HVT_WRITER_OTHER :
                                                HVT_WRITER_NONE };

                ret_tally->failed += r->outcome == HVT_FAILED;
                ret_tally->unsupported += r->outcome == HVT_UNSUPPORTED;
                ret_tally->would_apply += r->outcome == HVT_WOULD_APPLY;
                /* Yielded, read only as a scheduler switch's knock-on: its want and history
                 * are for its restore at stop. */
                if (!slot || slot->yielded)
                        continue;
                /* Changed by a write of hvtuned's, not managed: only its original and what
                 * the write left, for its restore. */
                if (r->outcome == HVT_KNOCKED_ON) {
                        if (!slot->want_set && slot->orig_set)
                                memcpy(slot->left, r->to, HVT_VALUE_MAX);
                        continue;
                }
                keep_last(&slot->last, r);
                slot->settled = slot->settled || wrote(r) || r->outcome == HVT_UNCHANGED;
                if (r->outcome != HVT_UNCHANGED) {
                        slot->acted = true;
                        slot->last_action = r->outcome;
                }
        }
        for (size_t i = 0; i < s->n; i++) {
                struct hvt_slot *slot = &s->slot[i];

                if (slot->watch_only && slot->orig_set && !slot->want_set && !*hvt_slot_left(slot)) {
                        slot->orig_set = false;
                        ret_tally->forgotten++;
                }
                slot->watch_only = false;
        }
        hvt_slots_compact(s);
}

void hvt_track_kernel_repair(struct hvt_tally *t, struct hvt_verdict v[static _HVT_ATTR_DISK_MAX],
                             const struct hvt_apply *a, size_t i) {
        uint32_t bit = UINT32_C(1) << a->results[i].attr;

        if (v[i].writer != HVT_WRITER_OTHER || !(t->repaired & bit))
                return;
        v[i].writer = HVT_WRITER_KERNEL;
        t->repaired &= ~bit;
        t->repairs--;
        t->kernel_repairs++;
}

bool hvt_repair_window_add(struct hvt_repair_window *w, unsigned n, uint64_t now) {
        const uint64_t window = (uint64_t) HVT_REPAIR_WINDOW_S * 1000000;

        if (w->start == 0 || now - w->start >= window)
                hvt_repair_window_restart(w, now);
        w->repairs += n;
        return w->repairs > HVT_REPAIR_BURST;
}

uint64_t hvt_repair_window_end(const struct hvt_repair_window *w) {
        return w->start + (uint64_t) HVT_REPAIR_WINDOW_S * 1000000;
}

void hvt_repair_window_restart(struct hvt_repair_window *w, uint64_t now) {
        *w = (struct hvt_repair_window) { .start = now };
}

/* Neighbours (track.h): a run of repairs per attribute, the contest it amounts to, and the
 * yield. */

uint64_t hvt_contest_horizon(unsigned verify_interval) {
        uint64_t s = 2 * (uint64_t) verify_interval;

        return (s > HVT_REPAIR_WINDOW_S ? s : HVT_REPAIR_WINDOW_S) * 1000000;
}

static uint32_t seconds(uint64_t usec) {
        return (uint32_t) (usec / 1000000);
}

/* Whether the last repair of slot was within horizon of now. */
static bool run_alive(const struct hvt_slot *slot, uint64_t now, uint64_t horizon) {
        return slot->repaired_s != 0 && now / 1000000 - (slot->repaired_s - 1) <= horizon / 1000000;
}

void hvt_track_repairs(struct hvt_slots *s, struct hvt_repair_window *w, const struct hvt_tally *t,
                       uint64_t now, uint64_t horizon, uint32_t insist, struct hvt_contest *ret) {
        bool over = hvt_repair_window_add(w, t->repairs, now);

        *ret = (struct hvt_contest) {};
        for (size_t i = 0; i < s->n; i++) {
                struct hvt_slot *slot = &s->slot[i];
                uint32_t bit = UINT32_C(1) << slot->id;

                if (!(t->repaired & bit))
                        continue;
                if (run_alive(slot, now, horizon))
                        slot->repairs += slot->repairs < UINT8_MAX;
                else {
                        slot->repairs = 1;
                        slot->contested = false;  /* a new run: a new contest, told anew */
                }
                slot->repaired_s = seconds(now) + 1;
                if (!slot->want_set ||
                    !(slot->contested || slot->repairs > HVT_REPAIR_BURST || (over && slot->repairs >= HVT_CONTEST_MIN)))
                        continue;
                /* Insisted on and told already: the fight goes on. One insisted on before a
                 * reload that says yield is yielded at its next repair, and told so. */
                if ((insist & bit) && slot->contested)
                        continue;
                slot->contested = true;
                ret->contested |= bit;
                if (insist & bit)
                        continue;
                slot->yielded = true;
                ret->yielded |= bit;
        }
        /* Past the budget, the disk pauses for what it still repairs; a pass whose every
         * repair was of an attribute now yielded ends the fight instead, and with it the
         * window it filled: another attribute's repair next is no part of it. */
        ret->pause = over && (t->repaired & ~ret->yielded) != 0;
        if (ret->yielded && !ret->pause)
                hvt_repair_window_restart(w, now);
}

bool hvt_track_contest_over(struct hvt_slots *s, uint64_t now, uint64_t horizon) {
        bool any = false;

        for (size_t i = 0; i < s->n; i++) {
                struct hvt_slot *slot = &s->slot[i];

                if (slot->contested && !slot->yielded && !run_alive(slot, now, horizon)) {
                        slot->contested = false;
                        slot->repairs = 0;
                        any = true;
                }
        }
        return any;
}

const char *hvt_slot_yield_left(const struct hvt_slot *slot) {
        return *slot->last.kept ? slot->last.kept : slot->want;
}

static void end_yield(struct hvt_slot *slot) {
        slot->yielded = slot->contested = false;
        slot->repairs = 0;
        slot->repaired_s = 0;
}

void hvt_track_yields(struct hvt_slots *s, struct hvt_plan *plan, uint32_t insist) {
        for (size_t i = 0; i < s->n; i++) {
                struct hvt_slot *slot = &s->slot[i];
                const struct hvt_setting *now;
                char left[HVT_VALUE_MAX];

                if (!slot->yielded || (unsigned) slot->id >= _HVT_ATTR_DISK_MAX)
                        continue;
                now = &plan->want[slot->id];
                if (now->set && !(insist & (UINT32_C(1) << slot->id)) && strcmp(now->text, slot->want) == 0) {
                        plan->want[slot->id] = (struct hvt_setting) {};
                        continue;
                }
                end_yield(slot);
                if (now->set)
                        continue;
                /* No longer wanted at all: an unmanaged slot with what hvtuned left in it, so
                 * that its restore leaves the neighbour's value where it finds one. want and
                 * left share their room. */
                memcpy(left, hvt_slot_yield_left(slot), HVT_VALUE_MAX);
                slot->want_set = false;
                memcpy(slot->left, left, HVT_VALUE_MAX);
        }
}
