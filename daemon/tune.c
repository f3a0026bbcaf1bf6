/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the per-disk pass, originals, drift repairs and their rate limit.
 *
 * A pass only ever writes what differs, so a change event where nothing drifted costs the
 * reads of the managed attributes and nothing else. An attribute that had its desired value
 * once and needs a write again has drifted: that write is a repair, told apart in the
 * journal, and counted against the disk's repair budget. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "log-subject.h"
#include "messages.h"
#include "report.h"
#include "tune.h"

struct hook {
        struct hvt_daemon *d;
        struct hvt_tracked *t;
};

static void report_state_error(struct hvt_daemon *d, struct hvt_tracked *t, int error, const char *what) {
        (void) hvt_log_disk(&d->log, &t->disk, LOG_ERR, error, HVT_MESSAGE_STATE_ERROR, NULL,
                            "%s: cannot %s the record of its original values: %m", t->disk.sysname, what);
}

static int save_record(struct hvt_daemon *d, struct hvt_tracked *t) {
        struct hvt_subject s = hvt_subject_disk(&t->disk);
        struct hvt_originals o;
        int r;

        if (d->state_fd < 0)
                return 0;
        hvt_slots_originals(&t->slots, &o);
        r = hvt_state_save(d->state_fd, &s, &o);
        if (r < 0)
                report_state_error(d, t, r, "write");
        return r;
}

/* Loads a record that exists but could not be read before: it may hold the true originals,
 * and writing now would overwrite it with whatever is there, perhaps hvtuned's own earlier
 * values. Each pass that writes tries again. */
static int reload_record(struct hvt_daemon *d, struct hvt_tracked *t) {
        struct hvt_subject s = hvt_subject_disk(&t->disk);
        struct hvt_originals o;
        int r;

        if (t->orig_error >= 0)
                return 0;
        r = hvt_state_load(d->state_fd, &s, &o);
        if (r >= 0)
                r = hvt_slots_set_originals(&t->slots, &o);
        if (r < 0 && r != -ENOENT && r != -EBADMSG) {
                t->orig_error = r;
                return r;
        }
        t->orig_error = 0;
        return 0;
}

/* Before the first write of a pass: the original of every attribute the pass may change that
 * has none yet, as found before that write, goes on disk in one record, or no write. That
 * includes what the scheduler's switch resets when the plan leaves it alone: its slot holds
 * just the original, put back with the scheduler's. */
static int record_originals(const struct hvt_apply *found, void *userdata) {
        struct hook *h = userdata;
        bool taken[_HVT_ATTR_MAX] = {}, any = false;
        int r;

        r = reload_record(h->d, h->t);
        for (size_t i = 0; r >= 0 && i < found->n; i++) {
                const struct hvt_result *res = &found->results[i];
                struct hvt_slot *slot;

                if (!hvt_apply_may_write(found, i))
                        continue;
                slot = hvt_slot_make(&h->t->slots, res->attr);
                if (!slot) {
                        r = -ENOMEM;
                        break;
                }
                if (slot->orig.set)
                        continue;
                /* from is a value the pass read and parsed. */
                r = hvt_setting_from_kernel(&slot->orig, res->attr, res->from);
                taken[res->attr] = r >= 0;
                any = any || taken[res->attr];
        }
        if (r >= 0 && any)
                r = save_record(h->d, h->t);
        if (r < 0)
                for (size_t i = 0; i < h->t->slots.n; i++)
                        if (taken[h->t->slots.slot[i].id])
                                h->t->slots.slot[i].orig.set = false;
        return r;
}

static bool same_failure(const struct hvt_result *a, const struct hvt_last *b) {
        return a->outcome == b->outcome && a->error == b->error && strcmp(a->from, b->from) == 0 &&
               strcmp(a->to, b->to) == 0;
}

static void keep_last(struct hvt_last *l, const struct hvt_result *r) {
        l->outcome = r->outcome;
        l->error = r->error;
        memcpy(l->from, r->from, HVT_VALUE_MAX);
        memcpy(l->to, r->to, HVT_VALUE_MAX);
        memcpy(l->kept, r->kept, HVT_VALUE_MAX);
}

static unsigned report_flags(const struct hvt_daemon *d, const struct hvt_result *r,
                             const struct hvt_slot *s) {
        unsigned flags = d->once ? HVT_REPORT_UNCHANGED_INFO : 0;
        bool wrote = r->outcome == HVT_APPLIED || r->outcome == HVT_CLAMPED;

        if (!wrote && r->outcome != HVT_UNCHANGED && same_failure(r, &s->last))
                flags |= HVT_REPORT_REPEATED;
        return flags;
}

/* What passes learnt of an attribute, gone when what it is compared with changes. */
static void forget_history(struct hvt_slot *s) {
        s->last = (struct hvt_last) {};
        s->settled = s->acted = false;
        s->last_action = HVT_UNCHANGED;
}

/* Puts back the originals of the attributes in which[]. A restore that fails keeps its
 * record (and its result, so that the same failure is not logged on every event), for a
 * later pass or a restart to do it. Returns how many failed. */
static unsigned restore(struct hvt_daemon *d, struct hvt_tracked *t, const bool which[static _HVT_ATTR_MAX]) {
        struct hvt_plan p = {};
        struct hvt_apply a;
        unsigned failed = 0;
        const struct hvt_result *sched;
        struct hvt_subject subject = hvt_subject_disk(&t->disk);
        bool any = false, sched_failed;

        for (size_t i = 0; i < t->slots.n; i++) {
                const struct hvt_slot *slot = &t->slots.slot[i];

                if (which[slot->id] && slot->orig.set) {
                        p.want[slot->id] = slot->orig;
                        any = true;
                }
        }
        if (!any)
                return 0;

        hvt_apply_disk(&t->disk, &p, d->apply_flags, NULL, NULL, &a);
        sched = hvt_apply_find(&a, HVT_ATTR_SCHEDULER);
        sched_failed = sched && sched->outcome == HVT_FAILED;
        for (size_t i = 0; i < a.n; i++) {
                const struct hvt_result *r = &a.results[i];
                struct hvt_slot *s = hvt_slot_get(&t->slots, r->attr);

                hvt_report_result(&d->log, &subject, r, HVT_REPORT_RESTORE, report_flags(d, r, s));
                if (r->outcome == HVT_FAILED) {
                        keep_last(&s->last, r);
                        failed++;
                        continue;
                }
                /* Its original belongs to the scheduler's: the next try of that resets it. */
                if (sched_failed && hvt_attr_reset_by_scheduler(r->attr))
                        continue;
                s->orig.set = false;
                forget_history(s);
        }
        (void) save_record(d, t);
        return failed;
}

void hvt_tune_restore(struct hvt_daemon *d, struct hvt_tracked *t) {
        bool all[_HVT_ATTR_MAX];

        memset(all, true, sizeof(all));
        (void) restore(d, t, all);
}

void hvt_tune_forget(struct hvt_tracked *t) {
        t->resume = sd_event_source_unref(t->resume);
}

static int on_resume(sd_event_source *s, uint64_t usec, void *userdata) {
        struct hvt_tracked *t = userdata;

        (void) s;
        hvt_tune_forget(t);  /* no longer paused: the pass below is not skipped */
        t->window_start = usec;
        t->repairs = 0;
        hvt_tune(t->daemon, t, HVT_TUNE_VERIFY);
        return 0;
}

/* Counts repairs in a fixed window; past the budget, pauses the disk until the window ends. */
static void count_repairs(struct hvt_daemon *d, struct hvt_tracked *t, unsigned repairs) {
        const uint64_t window = (uint64_t) HVT_REPAIR_WINDOW_S * 1000000;
        uint64_t now;
        int r;

        d->counters.repairs += repairs;
        if (!d->event || sd_event_now(d->event, CLOCK_MONOTONIC, &now) < 0)
                return;
        if (t->window_start == 0 || now - t->window_start >= window) {
                t->window_start = now;
                t->repairs = 0;
        }
        t->repairs += repairs;
        if (t->repairs <= HVT_REPAIR_BURST || t->resume)
                return;

        r = sd_event_add_time(d->event, &t->resume, CLOCK_MONOTONIC, t->window_start + window,
                              1000000, on_resume, t);
        if (r < 0) {
                (void) hvt_log_errno(&d->log, LOG_ERR, r, "%s: cannot pause repairs: %m", t->disk.sysname);
                return;
        }
        hvt_report_drift_paused(&d->log, &t->disk, t->repairs, HVT_REPAIR_WINDOW_S,
                                (unsigned) ((t->window_start + window - now + 999999) / 1000000));
}

/* An original that a scheduler switch resets (nr_requests) belongs to the scheduler it was
 * found under: while hvtuned still holds the scheduler at another, writing it back would not
 * restore anything, and the scheduler's own restore would reset it again. It goes back with
 * the scheduler's. */
static bool waits_for_scheduler(const struct hvt_tracked *t, const struct hvt_plan *plan, enum hvt_attr_id id) {
        const struct hvt_slot *sched = hvt_slot_get(&t->slots, HVT_ATTR_SCHEDULER);

        return hvt_attr_reset_by_scheduler(id) && sched && sched->orig.set && plan->want[HVT_ATTR_SCHEDULER].set;
}

/* The new plan, against the last one: what stays the same keeps its history (settled, what
 * the kernel kept). An original recorded for an attribute the plan does not manage goes back
 * (but see waits_for_scheduler()): after a reload that dropped it, and after a restart with a
 * configuration that did. Then the slots want what the plan wants, each planned attribute
 * with a slot of its own. */
static int carry_over(struct hvt_tracked *t, struct hvt_plan *plan, bool unmanaged[static _HVT_ATTR_MAX]) {
        for (size_t i = 0; i < _HVT_ATTR_MAX; i++) {
                const struct hvt_setting *now = &plan->want[i];
                struct hvt_slot *s = hvt_slot_get(&t->slots, (enum hvt_attr_id) i);
                bool was = s && s->want.set;

                unmanaged[i] = !now->set && s && s->orig.set && !waits_for_scheduler(t, plan, (enum hvt_attr_id) i);
                if (was && now->set && strcmp(s->want.text, now->text) == 0)
                        memcpy(plan->kept[i], s->last.kept, HVT_VALUE_MAX);
                else if (s && (!unmanaged[i] || was))
                        forget_history(s);
                /* else: a restore still to do keeps the result of its last try. */
        }
        return hvt_slots_set_wants(&t->slots, plan);
}

void hvt_tune(struct hvt_daemon *d, struct hvt_tracked *t, enum hvt_tune_reason why) {
        struct hook hook = { d, t };
        struct hvt_subject subject = hvt_subject_disk(&t->disk);
        bool unmanaged[_HVT_ATTR_MAX];
        struct hvt_plan plan;
        struct hvt_apply a;
        unsigned repairs = 0, restore_failed;
        enum hvt_report_kind sched_kind = HVT_REPORT_TUNE;

        /* Paused: events and periodic checks wait for the end of the pause, which re-checks;
         * a new configuration is the operator's word and applies at once. */
        if (t->resume && (why == HVT_TUNE_EVENT || why == HVT_TUNE_VERIFY))
                return;

        hvt_policy_plan(d->config, &t->disk, &plan);
        if (carry_over(t, &plan, unmanaged) < 0) {
                (void) hvt_log_errno(&d->log, LOG_ERR, -ENOMEM, "%s: out of memory, not tuned", t->disk.sysname);
                t->n_failed = 1;
                d->any_failed = true;
                return;
        }
        restore_failed = restore(d, t, unmanaged);
        hvt_apply_disk(&t->disk, &plan, d->apply_flags, record_originals, &hook, &a);

        t->n_failed = restore_failed;
        t->n_unsupported = t->n_would_apply = 0;
        for (size_t i = 0; i < a.n; i++) {
                struct hvt_result r = a.results[i];
                struct hvt_slot *s = hvt_slot_get(&t->slots, r.attr);
                bool wrote = r.outcome == HVT_APPLIED || r.outcome == HVT_CLAMPED;
                enum hvt_report_kind kind = HVT_REPORT_TUNE;

                /* Put back after the scheduler's switch reset it: part of that write, a repair
                 * only if the switch was one, and never counted twice. */
                if (r.knock_on)
                        kind = sched_kind;
                else if (wrote && s->settled) {
                        kind = HVT_REPORT_REPAIR;
                        repairs++;
                }
                if (r.attr == HVT_ATTR_SCHEDULER)
                        sched_kind = kind;
                hvt_report_result(&d->log, &subject, &r, kind, report_flags(d, &r, s));

                keep_last(&s->last, &r);
                s->settled = s->settled || wrote || r.outcome == HVT_UNCHANGED;
                if (r.outcome != HVT_UNCHANGED) {
                        s->acted = true;
                        s->last_action = r.outcome;
                }

                t->n_failed += r.outcome == HVT_FAILED;
                t->n_unsupported += r.outcome == HVT_UNSUPPORTED;
                t->n_would_apply += r.outcome == HVT_WOULD_APPLY;
        }
        hvt_slots_compact(&t->slots);
        if (t->n_failed > 0)
                d->any_failed = true;
        if (repairs > 0)
                count_repairs(d, t, repairs);
}
