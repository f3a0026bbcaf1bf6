/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A disk's attributes from pass to pass, without a disk: plans and results made up, the
 * slots checked after each step. Each transition of track.h, including those only a
 * daemon under umockdev reached before: a write after the desired value was had is a
 * repair, counted once with what a scheduler switch knocked on; what the kernel kept is not
 * drift; a failure is said once; an original goes back when it stops being managed, and
 * nr_requests's with the scheduler's; the repair budget. */
#include <check.h>
#include <string.h>

#include "testutil.h"
#include "track.h"

static void set(struct hvt_setting *s, enum hvt_attr_id id, const char *text) {
        ck_assert_int_eq(hvt_setting_from_kernel(s, id, text), 0);
}

static void want(struct hvt_plan *p, enum hvt_attr_id id, const char *text) {
        set(&p->want[id], id, text);
}

/* One more result, as hvt_apply_disk() gives them: in table order. */
static struct hvt_result *add(struct hvt_apply *a, enum hvt_attr_id id, enum hvt_outcome outcome,
                              const char *from, const char *to) {
        struct hvt_result *r = &a->results[a->n++];

        ck_assert(a->n == 1 || a->results[a->n - 2].attr < id);
        *r = (struct hvt_result) { .attr = id, .outcome = outcome };
        strcpy(r->from, from);
        strcpy(r->to, to);
        return r;
}

static struct hvt_slot *slot(struct hvt_slots *s, enum hvt_attr_id id) {
        struct hvt_slot *found = hvt_slot_get(s, id);

        ck_assert_ptr_nonnull(found);
        return found;
}

/* A pass's plan step, which restores nothing. */
static void plan(struct hvt_slots *s, struct hvt_plan *p) {
        struct hvt_plan back;

        ck_assert_int_eq(hvt_track_plan(s, p, &back), 0);
        ck_assert_uint_eq(hvt_plan_count(&back), 0);
}

/* A pass of the plan that wants read_ahead_kb 4096 and finds one result. */
static struct hvt_verdict pass_ra(struct hvt_slots *s, enum hvt_outcome outcome, struct hvt_tally *ret_tally) {
        struct hvt_plan p = {};
        struct hvt_apply a = {};
        struct hvt_verdict v[_HVT_ATTR_DISK_MAX];

        want(&p, HVT_ATTR_READ_AHEAD_KB, "4096");
        plan(s, &p);
        add(&a, HVT_ATTR_READ_AHEAD_KB, outcome, outcome == HVT_UNCHANGED ? "4096" : "128", "4096");
        hvt_track_applied(s, &a, v, ret_tally);
        return v[0];
}

START_TEST(test_first_pass_takes_originals) {
        struct hvt_slots s = {};
        struct hvt_plan p = {};
        struct hvt_apply found = {};
        bool taken[_HVT_ATTR_DISK_MAX];

        want(&p, HVT_ATTR_SCHEDULER, "none");
        want(&p, HVT_ATTR_READ_AHEAD_KB, "4096");
        want(&p, HVT_ATTR_TIMEOUT, "300");
        plan(&s, &p);
        add(&found, HVT_ATTR_SCHEDULER, HVT_WOULD_APPLY, "mq-deadline", "none");
        /* Not planned, but the switch resets it: watched. */
        add(&found, HVT_ATTR_NR_REQUESTS, HVT_UNCHANGED, "256", "");
        add(&found, HVT_ATTR_READ_AHEAD_KB, HVT_WOULD_APPLY, "128", "4096");
        add(&found, HVT_ATTR_TIMEOUT, HVT_UNCHANGED, "300", "300");

        ck_assert_int_eq(hvt_track_originals(&s, &found, taken), 1);
        ck_assert(taken[HVT_ATTR_SCHEDULER] && taken[HVT_ATTR_NR_REQUESTS] && taken[HVT_ATTR_READ_AHEAD_KB]);
        ck_assert(!taken[HVT_ATTR_TIMEOUT]);
        ck_assert_str_eq(slot(&s, HVT_ATTR_SCHEDULER)->orig, "mq-deadline");
        ck_assert_str_eq(slot(&s, HVT_ATTR_NR_REQUESTS)->orig, "256");
        ck_assert(!slot(&s, HVT_ATTR_NR_REQUESTS)->want_set);
        ck_assert_str_eq(slot(&s, HVT_ATTR_READ_AHEAD_KB)->orig, "128");
        ck_assert(!slot(&s, HVT_ATTR_TIMEOUT)->orig_set);   /* nothing written: nothing to put back */

        /* A later write of the same pass (after the scheduler's) finds them taken. */
        ck_assert_int_eq(hvt_track_originals(&s, &found, taken), 0);
        for (size_t i = 0; i < _HVT_ATTR_DISK_MAX; i++)
                ck_assert(!taken[i]);
        ck_assert_str_eq(slot(&s, HVT_ATTR_SCHEDULER)->orig, "mq-deadline");

        /* Nothing differs: nothing to take. */
        found.results[0].outcome = HVT_UNCHANGED;
        found.results[2].outcome = HVT_UNCHANGED;
        hvt_slots_done(&s);
        plan(&s, &p);
        ck_assert_int_eq(hvt_track_originals(&s, &found, taken), 0);
        ck_assert(!slot(&s, HVT_ATTR_SCHEDULER)->orig_set);
        hvt_slots_done(&s);
}
END_TEST

START_TEST(test_originals_dropped_when_save_fails) {
        struct hvt_slots s = {};
        struct hvt_plan p = {};
        struct hvt_apply found = {};
        struct hvt_setting earlier;
        bool taken[_HVT_ATTR_DISK_MAX];

        want(&p, HVT_ATTR_NOMERGES, "2");
        want(&p, HVT_ATTR_READ_AHEAD_KB, "4096");
        plan(&s, &p);
        set(&earlier, HVT_ATTR_NOMERGES, "0");
        hvt_slot_set_orig(slot(&s, HVT_ATTR_NOMERGES), &earlier);   /* from an earlier pass */
        add(&found, HVT_ATTR_NOMERGES, HVT_WOULD_APPLY, "1", "2");
        add(&found, HVT_ATTR_READ_AHEAD_KB, HVT_WOULD_APPLY, "128", "4096");

        ck_assert_int_eq(hvt_track_originals(&s, &found, taken), 1);
        hvt_track_drop_originals(&s, taken);
        ck_assert(!slot(&s, HVT_ATTR_READ_AHEAD_KB)->orig_set);
        ck_assert_str_eq(slot(&s, HVT_ATTR_NOMERGES)->orig, "0");   /* not this pass's to drop */

        /* A value that is none fails the step, and what it took before goes again. */
        found = (struct hvt_apply) {};
        add(&found, HVT_ATTR_READ_AHEAD_KB, HVT_WOULD_APPLY, "128", "4096");
        add(&found, HVT_ATTR_TIMEOUT, HVT_WOULD_APPLY, "x", "300");
        ck_assert_int_eq(hvt_track_originals(&s, &found, taken), -EINVAL);
        ck_assert(!slot(&s, HVT_ATTR_READ_AHEAD_KB)->orig_set);
        ck_assert_str_eq(slot(&s, HVT_ATTR_NOMERGES)->orig, "0");
        hvt_slots_done(&s);
}
END_TEST

START_TEST(test_unchanged_settles) {
        struct hvt_slots s = {};
        struct hvt_tally t;
        struct hvt_verdict v;

        v = pass_ra(&s, HVT_UNCHANGED, &t);
        ck_assert_int_eq(v.action, HVT_ACTION_TUNE);
        ck_assert(!v.repeated);
        ck_assert(slot(&s, HVT_ATTR_READ_AHEAD_KB)->settled);
        ck_assert(!slot(&s, HVT_ATTR_READ_AHEAD_KB)->acted);
        ck_assert_uint_eq(t.repairs + t.failed + t.unsupported + t.would_apply, 0);

        /* Settled without a write, so the first write is already a repair. */
        v = pass_ra(&s, HVT_APPLIED, &t);
        ck_assert_int_eq(v.action, HVT_ACTION_REPAIR);
        ck_assert_uint_eq(t.repairs, 1);
        hvt_slots_done(&s);
}
END_TEST

START_TEST(test_later_write_is_repair) {
        struct hvt_slots s = {};
        struct hvt_tally t;
        struct hvt_verdict v;

        /* Failing or dry, it never had the value: no repair yet. */
        v = pass_ra(&s, HVT_FAILED, &t);
        ck_assert_int_eq(v.action, HVT_ACTION_TUNE);
        ck_assert_uint_eq(t.failed, 1);
        ck_assert(!slot(&s, HVT_ATTR_READ_AHEAD_KB)->settled);
        v = pass_ra(&s, HVT_WOULD_APPLY, &t);
        ck_assert_int_eq(v.action, HVT_ACTION_TUNE);
        ck_assert_uint_eq(t.would_apply, 1);
        ck_assert_uint_eq(t.failed, 0);
        ck_assert(!slot(&s, HVT_ATTR_READ_AHEAD_KB)->settled);

        v = pass_ra(&s, HVT_APPLIED, &t);
        ck_assert_int_eq(v.action, HVT_ACTION_TUNE);
        ck_assert_uint_eq(t.repairs, 0);
        ck_assert(slot(&s, HVT_ATTR_READ_AHEAD_KB)->settled);

        v = pass_ra(&s, HVT_APPLIED, &t);
        ck_assert_int_eq(v.action, HVT_ACTION_REPAIR);
        ck_assert_uint_eq(t.repairs, 1);
        ck_assert(slot(&s, HVT_ATTR_READ_AHEAD_KB)->acted);
        ck_assert_int_eq(slot(&s, HVT_ATTR_READ_AHEAD_KB)->last_action, HVT_APPLIED);

        v = pass_ra(&s, HVT_UNSUPPORTED, &t);
        ck_assert_int_eq(v.action, HVT_ACTION_TUNE);
        ck_assert_uint_eq(t.unsupported, 1);
        ck_assert_uint_eq(t.repairs, 0);
        ck_assert_int_eq(slot(&s, HVT_ATTR_READ_AHEAD_KB)->last_action, HVT_UNSUPPORTED);
        hvt_slots_done(&s);
}
END_TEST

/* A pass wanting the scheduler sched and nr_requests 64, where both are written. */
static void pass_switch(struct hvt_slots *s, const char *sched, struct hvt_verdict v[static _HVT_ATTR_DISK_MAX],
                        struct hvt_tally *ret_tally) {
        struct hvt_plan p = {};
        struct hvt_apply a = {};

        want(&p, HVT_ATTR_SCHEDULER, sched);
        want(&p, HVT_ATTR_NR_REQUESTS, "64");
        plan(s, &p);
        add(&a, HVT_ATTR_SCHEDULER, HVT_APPLIED, "mq-deadline", sched);
        add(&a, HVT_ATTR_NR_REQUESTS, HVT_APPLIED, "256", "64")->knock_on = true;
        hvt_track_applied(s, &a, v, ret_tally);
}

START_TEST(test_knock_on) {
        struct hvt_slots s = {};
        struct hvt_verdict v[_HVT_ATTR_DISK_MAX];
        struct hvt_tally t;

        pass_switch(&s, "none", v, &t);
        ck_assert_int_eq(v[0].action, HVT_ACTION_TUNE);
        ck_assert_int_eq(v[1].action, HVT_ACTION_TUNE);
        ck_assert_uint_eq(t.repairs, 0);

        /* Something switched the scheduler back: one repair, nr_requests's write part of it. */
        pass_switch(&s, "none", v, &t);
        ck_assert_int_eq(v[0].action, HVT_ACTION_REPAIR);
        ck_assert_int_eq(v[1].action, HVT_ACTION_REPAIR);
        ck_assert_uint_eq(t.repairs, 1);

        /* A new scheduler is a tune, and so is what it knocks on, settled as that is. */
        ck_assert(slot(&s, HVT_ATTR_NR_REQUESTS)->settled);
        pass_switch(&s, "kyber", v, &t);
        ck_assert_int_eq(v[0].action, HVT_ACTION_TUNE);
        ck_assert_int_eq(v[1].action, HVT_ACTION_TUNE);
        ck_assert_uint_eq(t.repairs, 0);
        hvt_slots_done(&s);
}
END_TEST

START_TEST(test_clamped_kept_is_no_drift) {
        struct hvt_slots s = {};
        struct hvt_plan p = {};
        struct hvt_apply a = {};
        struct hvt_verdict v[_HVT_ATTR_DISK_MAX];
        struct hvt_tally t;

        want(&p, HVT_ATTR_READ_AHEAD_KB, "4095");
        plan(&s, &p);
        ck_assert_str_eq(p.kept[HVT_ATTR_READ_AHEAD_KB], "");
        strcpy(add(&a, HVT_ATTR_READ_AHEAD_KB, HVT_CLAMPED, "128", "4095")->kept, "4092");
        hvt_track_applied(&s, &a, v, &t);
        ck_assert_int_eq(v[0].action, HVT_ACTION_TUNE);

        /* The next plan tells apply what the kernel kept: found again, it is unchanged. */
        p = (struct hvt_plan) {};
        want(&p, HVT_ATTR_READ_AHEAD_KB, "4095");
        plan(&s, &p);
        ck_assert_str_eq(p.kept[HVT_ATTR_READ_AHEAD_KB], "4092");
        a = (struct hvt_apply) {};
        strcpy(add(&a, HVT_ATTR_READ_AHEAD_KB, HVT_UNCHANGED, "4092", "4095")->kept, "4092");
        hvt_track_applied(&s, &a, v, &t);
        ck_assert_int_eq(v[0].action, HVT_ACTION_TUNE);
        ck_assert_uint_eq(t.repairs, 0);
        ck_assert_str_eq(slot(&s, HVT_ATTR_READ_AHEAD_KB)->last.kept, "4092");

        /* And still on the one after. */
        p = (struct hvt_plan) {};
        want(&p, HVT_ATTR_READ_AHEAD_KB, "4095");
        plan(&s, &p);
        ck_assert_str_eq(p.kept[HVT_ATTR_READ_AHEAD_KB], "4092");

        /* Drift away from it is repaired, clamped again. */
        a = (struct hvt_apply) {};
        strcpy(add(&a, HVT_ATTR_READ_AHEAD_KB, HVT_CLAMPED, "128", "4095")->kept, "4092");
        hvt_track_applied(&s, &a, v, &t);
        ck_assert_int_eq(v[0].action, HVT_ACTION_REPAIR);
        ck_assert_uint_eq(t.repairs, 1);
        hvt_slots_done(&s);
}
END_TEST

START_TEST(test_repeated_failure) {
        struct hvt_slots s = {};
        struct hvt_plan p = {};
        struct hvt_apply a = {};
        struct hvt_verdict v[_HVT_ATTR_DISK_MAX];
        struct hvt_tally t;

        want(&p, HVT_ATTR_SCHEDULER, "bfq");
        want(&p, HVT_ATTR_READ_AHEAD_KB, "4096");
        for (int i = 0; i < 2; i++) {
                plan(&s, &p);
                a = (struct hvt_apply) {};
                add(&a, HVT_ATTR_SCHEDULER, HVT_UNSUPPORTED, "none", "bfq");
                add(&a, HVT_ATTR_READ_AHEAD_KB, HVT_FAILED, "128", "4096")->error = EACCES;
                hvt_track_applied(&s, &a, v, &t);
                ck_assert(v[0].repeated == (i > 0));
                ck_assert(v[1].repeated == (i > 0));
        }

        /* Another error, or another value found, is news. */
        plan(&s, &p);
        a.results[1].error = EIO;
        strcpy(a.results[0].from, "mq-deadline");
        hvt_track_applied(&s, &a, v, &t);
        ck_assert(!v[0].repeated);
        ck_assert(!v[1].repeated);

        /* A write or an unchanged value never is, whatever came before. */
        plan(&s, &p);
        a = (struct hvt_apply) {};
        add(&a, HVT_ATTR_SCHEDULER, HVT_APPLIED, "mq-deadline", "bfq");
        add(&a, HVT_ATTR_READ_AHEAD_KB, HVT_UNCHANGED, "4096", "4096");
        hvt_track_applied(&s, &a, v, &t);
        plan(&s, &p);
        hvt_track_applied(&s, &a, v, &t);
        ck_assert(!v[0].repeated);
        ck_assert(!v[1].repeated);
        hvt_slots_done(&s);
}
END_TEST

/* Slots of a disk tuned once: scheduler none (was mq-deadline), nr_requests 64 (was 256),
 * read_ahead_kb 4096 (was 128), each settled. */
static void tuned(struct hvt_slots *s) {
        struct hvt_plan p = {};
        struct hvt_apply a = {};
        struct hvt_verdict v[_HVT_ATTR_DISK_MAX];
        struct hvt_tally t;
        bool taken[_HVT_ATTR_DISK_MAX];

        want(&p, HVT_ATTR_SCHEDULER, "none");
        want(&p, HVT_ATTR_NR_REQUESTS, "64");
        want(&p, HVT_ATTR_READ_AHEAD_KB, "4096");
        plan(s, &p);
        add(&a, HVT_ATTR_SCHEDULER, HVT_WOULD_APPLY, "mq-deadline", "none");
        add(&a, HVT_ATTR_NR_REQUESTS, HVT_WOULD_APPLY, "256", "64");
        add(&a, HVT_ATTR_READ_AHEAD_KB, HVT_WOULD_APPLY, "128", "4096");
        ck_assert_int_eq(hvt_track_originals(s, &a, taken), 1);
        for (size_t i = 0; i < a.n; i++)
                a.results[i].outcome = HVT_APPLIED;
        hvt_track_applied(s, &a, v, &t);
        ck_assert_uint_eq(s->n, 3);
}

START_TEST(test_restore_success) {
        struct hvt_slots s = {};
        struct hvt_plan p = {}, back;
        struct hvt_apply a = {};
        struct hvt_verdict v[_HVT_ATTR_DISK_MAX];
        struct hvt_tally t;

        tuned(&s);
        want(&p, HVT_ATTR_SCHEDULER, "none");
        want(&p, HVT_ATTR_NR_REQUESTS, "64");
        ck_assert_int_eq(hvt_track_plan(&s, &p, &back), 0);
        ck_assert_uint_eq(hvt_plan_count(&back), 1);
        ck_assert_str_eq(back.want[HVT_ATTR_READ_AHEAD_KB].text, "128");

        add(&a, HVT_ATTR_READ_AHEAD_KB, HVT_APPLIED, "4096", "128");
        ck_assert_uint_eq(hvt_track_restored(&s, &a, v), 0);
        ck_assert_int_eq(v[0].action, HVT_ACTION_RESTORE);
        ck_assert(!slot(&s, HVT_ATTR_READ_AHEAD_KB)->orig_set);
        ck_assert(!slot(&s, HVT_ATTR_READ_AHEAD_KB)->settled);
        ck_assert(!slot(&s, HVT_ATTR_READ_AHEAD_KB)->last.to_set);

        /* Nothing left in it: gone after the pass. */
        a = (struct hvt_apply) {};
        add(&a, HVT_ATTR_SCHEDULER, HVT_UNCHANGED, "none", "none");
        add(&a, HVT_ATTR_NR_REQUESTS, HVT_UNCHANGED, "64", "64");
        hvt_track_applied(&s, &a, v, &t);
        ck_assert_ptr_null(hvt_slot_get(&s, HVT_ATTR_READ_AHEAD_KB));
        ck_assert_uint_eq(s.n, 2);
        hvt_slots_done(&s);
}
END_TEST

START_TEST(test_restore_failure) {
        struct hvt_slots s = {};
        struct hvt_plan p = {}, back;
        struct hvt_apply a = {};
        struct hvt_verdict v[_HVT_ATTR_DISK_MAX];
        struct hvt_tally t;

        tuned(&s);
        want(&p, HVT_ATTR_SCHEDULER, "none");
        want(&p, HVT_ATTR_NR_REQUESTS, "64");
        for (int i = 0; i < 2; i++) {
                ck_assert_int_eq(hvt_track_plan(&s, &p, &back), 0);
                ck_assert_str_eq(back.want[HVT_ATTR_READ_AHEAD_KB].text, "128");
                a = (struct hvt_apply) {};
                add(&a, HVT_ATTR_READ_AHEAD_KB, HVT_FAILED, "4096", "128")->error = EBUSY;
                ck_assert_uint_eq(hvt_track_restored(&s, &a, v), 1);
                ck_assert_int_eq(v[0].action, HVT_ACTION_RESTORE);
                /* Said once: the next try remembers this one's. */
                ck_assert(v[0].repeated == (i > 0));
                ck_assert_str_eq(slot(&s, HVT_ATTR_READ_AHEAD_KB)->orig, "128");
                ck_assert_int_eq(slot(&s, HVT_ATTR_READ_AHEAD_KB)->last.outcome, HVT_FAILED);

                a = (struct hvt_apply) {};
                add(&a, HVT_ATTR_SCHEDULER, HVT_UNCHANGED, "none", "none");
                add(&a, HVT_ATTR_NR_REQUESTS, HVT_UNCHANGED, "64", "64");
                hvt_track_applied(&s, &a, v, &t);
                ck_assert_ptr_nonnull(hvt_slot_get(&s, HVT_ATTR_READ_AHEAD_KB));  /* kept by compaction */
        }

        /* Done at last: the failures it remembered go with the original. */
        ck_assert_int_eq(hvt_track_plan(&s, &p, &back), 0);
        a = (struct hvt_apply) {};
        add(&a, HVT_ATTR_READ_AHEAD_KB, HVT_APPLIED, "4096", "128");
        ck_assert_uint_eq(hvt_track_restored(&s, &a, v), 0);
        ck_assert(!slot(&s, HVT_ATTR_READ_AHEAD_KB)->orig_set);
        ck_assert_int_eq(slot(&s, HVT_ATTR_READ_AHEAD_KB)->last.outcome, HVT_UNCHANGED);
        ck_assert(!slot(&s, HVT_ATTR_READ_AHEAD_KB)->last.to_set);
        hvt_slots_done(&s);
}
END_TEST

/* At stop: the scheduler's restore failed, so nr_requests, which the next try of it resets,
 * keeps its original for that try. */
START_TEST(test_restore_waits_for_failed_scheduler) {
        struct hvt_slots s = {};
        struct hvt_plan all;
        struct hvt_apply a = {};
        struct hvt_verdict v[_HVT_ATTR_DISK_MAX];

        tuned(&s);
        hvt_track_restore_all(&s, &all);
        ck_assert_uint_eq(hvt_plan_count(&all), 3);
        ck_assert_str_eq(all.want[HVT_ATTR_SCHEDULER].text, "mq-deadline");
        ck_assert_str_eq(all.want[HVT_ATTR_NR_REQUESTS].text, "256");
        add(&a, HVT_ATTR_SCHEDULER, HVT_FAILED, "none", "mq-deadline")->error = EBUSY;
        add(&a, HVT_ATTR_NR_REQUESTS, HVT_APPLIED, "64", "256");
        add(&a, HVT_ATTR_READ_AHEAD_KB, HVT_APPLIED, "4096", "128");
        ck_assert_uint_eq(hvt_track_restored(&s, &a, v), 1);
        ck_assert_str_eq(slot(&s, HVT_ATTR_SCHEDULER)->orig, "mq-deadline");
        ck_assert_str_eq(slot(&s, HVT_ATTR_NR_REQUESTS)->orig, "256");
        ck_assert(slot(&s, HVT_ATTR_NR_REQUESTS)->settled);
        ck_assert(!slot(&s, HVT_ATTR_READ_AHEAD_KB)->orig_set);
        ck_assert(!slot(&s, HVT_ATTR_READ_AHEAD_KB)->settled);   /* its history went with it */

        /* With the scheduler's back, both go. */
        hvt_track_restore_all(&s, &all);
        ck_assert_uint_eq(hvt_plan_count(&all), 2);
        a = (struct hvt_apply) {};
        add(&a, HVT_ATTR_SCHEDULER, HVT_APPLIED, "none", "mq-deadline");
        add(&a, HVT_ATTR_NR_REQUESTS, HVT_UNCHANGED, "256", "256");
        ck_assert_uint_eq(hvt_track_restored(&s, &a, v), 0);
        ck_assert(!slot(&s, HVT_ATTR_SCHEDULER)->orig_set);
        ck_assert(!slot(&s, HVT_ATTR_NR_REQUESTS)->orig_set);
        hvt_slots_done(&s);
}
END_TEST

/* nr_requests no longer managed while the scheduler still is: its original was found under
 * the original scheduler, and goes back with it, not now. */
START_TEST(test_waits_for_scheduler) {
        struct hvt_slots s = {};
        struct hvt_plan p = {}, back;

        tuned(&s);
        want(&p, HVT_ATTR_SCHEDULER, "none");
        want(&p, HVT_ATTR_READ_AHEAD_KB, "4096");
        ck_assert_int_eq(hvt_track_plan(&s, &p, &back), 0);
        ck_assert_uint_eq(hvt_plan_count(&back), 0);
        ck_assert_str_eq(slot(&s, HVT_ATTR_NR_REQUESTS)->orig, "256");
        ck_assert(!slot(&s, HVT_ATTR_NR_REQUESTS)->want_set);

        /* The scheduler dropped too: both go back. */
        p = (struct hvt_plan) {};
        want(&p, HVT_ATTR_READ_AHEAD_KB, "4096");
        ck_assert_int_eq(hvt_track_plan(&s, &p, &back), 0);
        ck_assert_uint_eq(hvt_plan_count(&back), 2);
        ck_assert_str_eq(back.want[HVT_ATTR_SCHEDULER].text, "mq-deadline");
        ck_assert_str_eq(back.want[HVT_ATTR_NR_REQUESTS].text, "256");
        hvt_slots_done(&s);
}
END_TEST

/* Dropped by a reload, or by the configuration of a restart (the slots then hold only the
 * record's originals): restored. */
START_TEST(test_dropped_attribute_restored) {
        struct hvt_slots s = {};
        struct hvt_plan p = {}, back;
        struct hvt_originals record = {};

        tuned(&s);
        want(&p, HVT_ATTR_SCHEDULER, "none");
        want(&p, HVT_ATTR_NR_REQUESTS, "64");
        ck_assert_int_eq(hvt_track_plan(&s, &p, &back), 0);
        ck_assert_uint_eq(hvt_plan_count(&back), 1);
        ck_assert_str_eq(back.want[HVT_ATTR_READ_AHEAD_KB].text, "128");
        ck_assert(!slot(&s, HVT_ATTR_READ_AHEAD_KB)->want_set);
        ck_assert(!slot(&s, HVT_ATTR_READ_AHEAD_KB)->settled);   /* was managed: history gone */
        hvt_slots_done(&s);

        set(&record.value[HVT_ATTR_TIMEOUT], HVT_ATTR_TIMEOUT, "30");
        ck_assert_int_eq(hvt_slots_set_originals(&s, &record), 0);
        ck_assert_int_eq(hvt_track_plan(&s, &p, &back), 0);
        ck_assert_uint_eq(hvt_plan_count(&back), 1);
        ck_assert_str_eq(back.want[HVT_ATTR_TIMEOUT].text, "30");
        hvt_slots_done(&s);
}
END_TEST

START_TEST(test_history_kept_or_forgotten) {
        struct hvt_slots s = {};
        struct hvt_plan p = {};
        struct hvt_apply a = {};
        struct hvt_verdict v[_HVT_ATTR_DISK_MAX];
        struct hvt_tally t;

        want(&p, HVT_ATTR_READ_AHEAD_KB, "4095");
        plan(&s, &p);
        strcpy(add(&a, HVT_ATTR_READ_AHEAD_KB, HVT_CLAMPED, "128", "4095")->kept, "4092");
        hvt_track_applied(&s, &a, v, &t);

        /* The same value wanted: what was learnt of it holds. */
        p = (struct hvt_plan) {};
        want(&p, HVT_ATTR_READ_AHEAD_KB, "4095");
        plan(&s, &p);
        ck_assert(slot(&s, HVT_ATTR_READ_AHEAD_KB)->settled);
        ck_assert(slot(&s, HVT_ATTR_READ_AHEAD_KB)->acted);
        ck_assert_str_eq(p.kept[HVT_ATTR_READ_AHEAD_KB], "4092");

        /* Another value: none of it does, and its first write is a tune. */
        p = (struct hvt_plan) {};
        want(&p, HVT_ATTR_READ_AHEAD_KB, "1024");
        plan(&s, &p);
        ck_assert(!slot(&s, HVT_ATTR_READ_AHEAD_KB)->settled);
        ck_assert(!slot(&s, HVT_ATTR_READ_AHEAD_KB)->acted);
        ck_assert_str_eq(slot(&s, HVT_ATTR_READ_AHEAD_KB)->last.kept, "");
        ck_assert_str_eq(p.kept[HVT_ATTR_READ_AHEAD_KB], "");
        ck_assert_str_eq(slot(&s, HVT_ATTR_READ_AHEAD_KB)->want, "1024");
        a = (struct hvt_apply) {};
        add(&a, HVT_ATTR_READ_AHEAD_KB, HVT_APPLIED, "4092", "1024");
        hvt_track_applied(&s, &a, v, &t);
        ck_assert_int_eq(v[0].action, HVT_ACTION_TUNE);
        hvt_slots_done(&s);
}
END_TEST

/* A damaged record naming the driver's attributes: nothing of them to restore on a disk. */
START_TEST(test_record_driver_attribute_ignored) {
        struct hvt_slots s = {};
        struct hvt_originals record = {};
        struct hvt_plan all;

        set(&record.value[HVT_ATTR_READ_AHEAD_KB], HVT_ATTR_READ_AHEAD_KB, "128");
        set(&record.value[HVT_ATTR_MAX_HW_QUEUES], HVT_ATTR_MAX_HW_QUEUES, "0");
        set(&record.value[HVT_ATTR_DRIVER_BIND], HVT_ATTR_DRIVER_BIND, "1");
        ck_assert_int_eq(hvt_slots_set_originals(&s, &record), 0);
        hvt_track_restore_all(&s, &all);
        ck_assert_uint_eq(hvt_plan_count(&all), 1);
        ck_assert_str_eq(all.want[HVT_ATTR_READ_AHEAD_KB].text, "128");
        hvt_slots_done(&s);
}
END_TEST

START_TEST(test_repair_window) {
        const uint64_t s = 1000000, t0 = 5 * s;
        struct hvt_repair_window w = {};

        /* Under the budget, over it by one. */
        ck_assert(!hvt_repair_window_add(&w, HVT_REPAIR_BURST - 1, t0));
        ck_assert(!hvt_repair_window_add(&w, 1, t0 + 10 * s));
        ck_assert(hvt_repair_window_add(&w, 1, t0 + 20 * s));
        ck_assert_uint_eq(w.repairs, HVT_REPAIR_BURST + 1);
        ck_assert_uint_eq(hvt_repair_window_end(&w), t0 + HVT_REPAIR_WINDOW_S * s);

        /* The window over, the count starts again: from then. */
        ck_assert(!hvt_repair_window_add(&w, 2, t0 + HVT_REPAIR_WINDOW_S * s));
        ck_assert_uint_eq(w.repairs, 2);
        ck_assert_uint_eq(hvt_repair_window_end(&w), t0 + 2 * HVT_REPAIR_WINDOW_S * s);
        ck_assert(hvt_repair_window_add(&w, HVT_REPAIR_BURST, t0 + (2 * HVT_REPAIR_WINDOW_S - 1) * s));

        /* The end of a pause is a new window. */
        hvt_repair_window_restart(&w, t0 + 200 * s);
        ck_assert_uint_eq(w.repairs, 0);
        ck_assert(!hvt_repair_window_add(&w, HVT_REPAIR_BURST, t0 + 201 * s));
        ck_assert_uint_eq(hvt_repair_window_end(&w), t0 + (200 + HVT_REPAIR_WINDOW_S) * s);
}
END_TEST

/* A failure is the one said already only with the same from and to: the hash keeps them
 * apart, the NUL after from included ("ab" then "c" is not "a" then "bc"). */
START_TEST(test_last_values_apart) {
        ck_assert(hvt_last_values("ab", "c") != hvt_last_values("a", "bc"));
        ck_assert(hvt_last_values("128", "4096") != hvt_last_values("4096", "128"));
        ck_assert(hvt_last_values("", "none") != hvt_last_values("none", ""));
        ck_assert(hvt_last_values("mq-deadline", "none") == hvt_last_values("mq-deadline", "none"));
}
END_TEST

/* max_sectors_kb managed and written (128 -> 256), read_ahead_kb not, its knock-on (64 ->
 * 512): the pass through the slots, its original taken before the write. */
static void tune_with_knock_on(struct hvt_slots *s, struct hvt_plan *p) {
        struct hvt_apply found = {}, a = {};
        struct hvt_verdict v[_HVT_ATTR_DISK_MAX];
        struct hvt_tally t;
        struct hvt_result *r;
        bool taken[_HVT_ATTR_DISK_MAX];

        want(p, HVT_ATTR_MAX_SECTORS_KB, "256");
        plan(s, p);
        add(&found, HVT_ATTR_MAX_SECTORS_KB, HVT_WOULD_APPLY, "128", "256");
        add(&found, HVT_ATTR_READ_AHEAD_KB, HVT_UNCHANGED, "64", "")->watched = true;
        ck_assert_int_eq(hvt_track_originals(s, &found, taken), 1);
        ck_assert(taken[HVT_ATTR_READ_AHEAD_KB]);
        ck_assert_str_eq(slot(s, HVT_ATTR_READ_AHEAD_KB)->orig, "64");

        add(&a, HVT_ATTR_MAX_SECTORS_KB, HVT_APPLIED, "128", "256");
        r = add(&a, HVT_ATTR_READ_AHEAD_KB, HVT_KNOCKED_ON, "64", "512");
        r->watched = true;
        r->cause = HVT_ATTR_MAX_SECTORS_KB;
        hvt_track_applied(s, &a, v, &t);
        ck_assert_uint_eq(t.failed + t.repairs, 0);
        ck_assert_str_eq(hvt_slot_left(slot(s, HVT_ATTR_READ_AHEAD_KB)), "512");
}

/* A knock-on not managed (read_ahead_kb after max_sectors_kb's write): its original taken
 * before the write, what the write left kept, no restore while max_sectors_kb is managed,
 * and on the reload that drops max_sectors_kb both go back, read_ahead_kb expecting what the
 * write left. */
START_TEST(test_knock_on_goes_back_with_its_cause) {
        struct hvt_slots s = {};
        struct hvt_plan p = {}, back;
        struct hvt_apply a = {};
        struct hvt_verdict v[_HVT_ATTR_DISK_MAX];

        tune_with_knock_on(&s, &p);

        /* The next pass, same plan: read_ahead_kb waits for max_sectors_kb. */
        plan(&s, &p);
        ck_assert_str_eq(hvt_slot_left(slot(&s, HVT_ATTR_READ_AHEAD_KB)), "512");

        /* Stopping: both, the knock-on with what the write left. */
        hvt_track_restore_all(&s, &back);
        ck_assert_str_eq(back.want[HVT_ATTR_READ_AHEAD_KB].text, "64");
        ck_assert_str_eq(back.left[HVT_ATTR_READ_AHEAD_KB], "512");
        ck_assert_str_eq(back.left[HVT_ATTR_MAX_SECTORS_KB], "");

        /* A reload that drops max_sectors_kb: both go back. */
        p = (struct hvt_plan) {};
        ck_assert_int_eq(hvt_track_plan(&s, &p, &back), 0);
        ck_assert_str_eq(back.want[HVT_ATTR_MAX_SECTORS_KB].text, "128");
        ck_assert_str_eq(back.want[HVT_ATTR_READ_AHEAD_KB].text, "64");
        ck_assert_str_eq(back.left[HVT_ATTR_READ_AHEAD_KB], "512");

        /* Left to whoever changed it: the original is gone, not tried again. */
        a = (struct hvt_apply) {};
        add(&a, HVT_ATTR_MAX_SECTORS_KB, HVT_APPLIED, "256", "128");
        add(&a, HVT_ATTR_READ_AHEAD_KB, HVT_LEFT, "4096", "64");
        ck_assert_uint_eq(hvt_track_restored(&s, &a, v), 0);
        ck_assert(!slot(&s, HVT_ATTR_READ_AHEAD_KB)->orig_set);
        ck_assert(!slot(&s, HVT_ATTR_MAX_SECTORS_KB)->orig_set);
        hvt_slots_done(&s);
}
END_TEST

/* A slot keeps a knock-on's left in the room of the want, which only a managed attribute
 * has: managed, the knock-on has none, and its want never reads as one, neither in a restore
 * at stop nor once it is dropped again. */
START_TEST(test_knock_on_managed_then_dropped) {
        struct hvt_slots s = {};
        struct hvt_plan p = {}, back;
        struct hvt_apply found = {}, a = {};
        struct hvt_verdict v[_HVT_ATTR_DISK_MAX];
        bool taken[_HVT_ATTR_DISK_MAX];

        tune_with_knock_on(&s, &p);

        /* Managed now: its original stays, what the write left does not. */
        want(&p, HVT_ATTR_READ_AHEAD_KB, "1024");
        plan(&s, &p);
        ck_assert_str_eq(slot(&s, HVT_ATTR_READ_AHEAD_KB)->want, "1024");
        ck_assert_str_eq(hvt_slot_left(slot(&s, HVT_ATTR_READ_AHEAD_KB)), "");
        ck_assert_str_eq(slot(&s, HVT_ATTR_READ_AHEAD_KB)->orig, "64");

        /* Stopping: put back as any managed one, and still wanted after. */
        hvt_track_restore_all(&s, &back);
        ck_assert_str_eq(back.want[HVT_ATTR_READ_AHEAD_KB].text, "64");
        ck_assert_str_eq(back.left[HVT_ATTR_READ_AHEAD_KB], "");
        a = (struct hvt_apply) {};
        add(&a, HVT_ATTR_MAX_SECTORS_KB, HVT_FAILED, "256", "128")->error = EIO;
        add(&a, HVT_ATTR_READ_AHEAD_KB, HVT_APPLIED, "1024", "64");
        ck_assert_uint_eq(hvt_track_restored(&s, &a, v), 1);
        ck_assert(!slot(&s, HVT_ATTR_READ_AHEAD_KB)->orig_set);
        ck_assert(slot(&s, HVT_ATTR_READ_AHEAD_KB)->want_set);
        ck_assert_str_eq(slot(&s, HVT_ATTR_READ_AHEAD_KB)->want, "1024");

        /* Dropped again while its cause is managed, with an original taken since: the want
         * is not what a write left, and it goes back whatever it shows. */
        found = (struct hvt_apply) {};
        add(&found, HVT_ATTR_READ_AHEAD_KB, HVT_WOULD_APPLY, "64", "1024");
        ck_assert_int_eq(hvt_track_originals(&s, &found, taken), 1);
        p = (struct hvt_plan) {};
        want(&p, HVT_ATTR_MAX_SECTORS_KB, "256");
        ck_assert_int_eq(hvt_track_plan(&s, &p, &back), 0);
        ck_assert_str_eq(back.want[HVT_ATTR_READ_AHEAD_KB].text, "64");
        ck_assert_str_eq(back.left[HVT_ATTR_READ_AHEAD_KB], "");
        ck_assert(!slot(&s, HVT_ATTR_READ_AHEAD_KB)->want_set);
        ck_assert_str_eq(hvt_slot_left(slot(&s, HVT_ATTR_READ_AHEAD_KB)), "");
        hvt_slots_done(&s);
}
END_TEST

/* The same write on a kernel where it leaves read_ahead_kb alone (5.10, 6.1): the original
 * taken before the write is forgotten after it, so that neither a stop nor a reload puts the
 * operator's later value back to it; the record is to be saved again. The scheduler's
 * nr_requests, which goes back with the scheduler whatever the switch did, stays. */
START_TEST(test_watch_without_knock_on_forgotten) {
        struct hvt_slots s = {};
        struct hvt_plan p = {}, back;
        struct hvt_apply found = {}, a = {};
        struct hvt_verdict v[_HVT_ATTR_DISK_MAX];
        struct hvt_tally t;
        bool taken[_HVT_ATTR_DISK_MAX];

        want(&p, HVT_ATTR_SCHEDULER, "none");
        want(&p, HVT_ATTR_MAX_SECTORS_KB, "256");
        plan(&s, &p);
        add(&found, HVT_ATTR_SCHEDULER, HVT_WOULD_APPLY, "mq-deadline", "none");
        add(&found, HVT_ATTR_NR_REQUESTS, HVT_UNCHANGED, "200", "")->watched = true;
        add(&found, HVT_ATTR_MAX_SECTORS_KB, HVT_WOULD_APPLY, "128", "256");
        add(&found, HVT_ATTR_READ_AHEAD_KB, HVT_UNCHANGED, "64", "")->watched = true;
        ck_assert_int_eq(hvt_track_originals(&s, &found, taken), 1);
        ck_assert(taken[HVT_ATTR_READ_AHEAD_KB] && taken[HVT_ATTR_NR_REQUESTS]);

        add(&a, HVT_ATTR_SCHEDULER, HVT_APPLIED, "mq-deadline", "none");
        add(&a, HVT_ATTR_MAX_SECTORS_KB, HVT_APPLIED, "128", "256");
        hvt_track_applied(&s, &a, v, &t);
        ck_assert_uint_eq(t.forgotten, 1);
        ck_assert_ptr_null(hvt_slot_get(&s, HVT_ATTR_READ_AHEAD_KB));
        ck_assert_str_eq(slot(&s, HVT_ATTR_NR_REQUESTS)->orig, "200");

        hvt_track_restore_all(&s, &back);
        ck_assert(!back.want[HVT_ATTR_READ_AHEAD_KB].set);
        ck_assert_str_eq(back.want[HVT_ATTR_MAX_SECTORS_KB].text, "128");
        ck_assert_str_eq(back.want[HVT_ATTR_NR_REQUESTS].text, "200");

        /* The next pass takes nothing: its writes are made. */
        plan(&s, &p);
        a = (struct hvt_apply) {};
        add(&a, HVT_ATTR_SCHEDULER, HVT_UNCHANGED, "none", "none");
        add(&a, HVT_ATTR_MAX_SECTORS_KB, HVT_UNCHANGED, "256", "256");
        hvt_track_applied(&s, &a, v, &t);
        ck_assert_uint_eq(t.forgotten, 0);
        hvt_slots_done(&s);
}
END_TEST

int main(void) {
        Suite *s = suite_create("track");
        TCase *tc = tcase_create("track");

        tcase_add_test(tc, test_first_pass_takes_originals);
        tcase_add_test(tc, test_last_values_apart);
        tcase_add_test(tc, test_originals_dropped_when_save_fails);
        tcase_add_test(tc, test_unchanged_settles);
        tcase_add_test(tc, test_later_write_is_repair);
        tcase_add_test(tc, test_knock_on);
        tcase_add_test(tc, test_knock_on_goes_back_with_its_cause);
        tcase_add_test(tc, test_knock_on_managed_then_dropped);
        tcase_add_test(tc, test_watch_without_knock_on_forgotten);
        tcase_add_test(tc, test_clamped_kept_is_no_drift);
        tcase_add_test(tc, test_repeated_failure);
        tcase_add_test(tc, test_restore_success);
        tcase_add_test(tc, test_restore_failure);
        tcase_add_test(tc, test_restore_waits_for_failed_scheduler);
        tcase_add_test(tc, test_waits_for_scheduler);
        tcase_add_test(tc, test_dropped_attribute_restored);
        tcase_add_test(tc, test_history_kept_or_forgotten);
        tcase_add_test(tc, test_record_driver_attribute_ignored);
        tcase_add_test(tc, test_repair_window);
        suite_add_tcase(s, tc);
        return test_run(s);
}
