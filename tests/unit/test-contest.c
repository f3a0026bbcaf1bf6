/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Neighbours in lib/track.c, without a disk: passes made up, the slots and the decision
 * checked after each. The same attribute repaired again and again is contested, on a change
 * event a second (the disk's window) or on a periodic check a minute (the run), and nothing
 * else is; the default yields and ends the fight, insist pauses as before; a yield leaves the
 * plan while it wants the same, comes back when it does not, and its restore expects
 * hvtuned's own value. */
#include <check.h>
#include <string.h>

#include "config.h"
#include "testutil.h"
#include "track.h"

#define S UINT64_C(1000000)
#define T0 (1000 * S)
#define BIT(id) (UINT32_C(1) << (id))

static void want(struct hvt_plan *p, enum hvt_attr_id id, const char *text) {
        ck_assert_int_eq(hvt_setting_from_kernel(&p->want[id], id, text), 0);
}

static struct hvt_slot *slot(struct hvt_slots *s, enum hvt_attr_id id) {
        struct hvt_slot *found = hvt_slot_get(s, id);

        ck_assert_ptr_nonnull(found);
        return found;
}

/* What every pass here wants: read_ahead_kb 128, and io_timeout 30000 when both. */
static void plan_of(struct hvt_plan *p, bool both) {
        *p = (struct hvt_plan) {};
        want(p, HVT_ATTR_READ_AHEAD_KB, "128");
        if (both)
                want(p, HVT_ATTR_IO_TIMEOUT, "30000");
}

/* One pass at now: the plan (yields first, as tune.c runs them), each planned attribute
 * found as outcome says (a neighbour's value and hvtuned's write back: applied), the
 * repairs counted. Returns the plan the pass ran. */
static struct hvt_plan pass(struct hvt_slots *s, struct hvt_repair_window *w, bool both, enum hvt_outcome outcome,
                            uint64_t now, uint64_t horizon, uint32_t insist, struct hvt_contest *ret) {
        struct hvt_verdict v[_HVT_ATTR_DISK_MAX];
        struct hvt_plan p, back;
        struct hvt_apply a = {};
        struct hvt_tally t;

        plan_of(&p, both);
        hvt_track_yields(s, &p, insist);
        ck_assert_int_eq(hvt_track_plan(s, &p, &back), 0);
        ck_assert_uint_eq(hvt_plan_count(&back), 0);
        for (size_t i = 0; i < _HVT_ATTR_DISK_MAX; i++) {
                struct hvt_result *r;

                if (!p.want[i].set)
                        continue;
                r = &a.results[a.n++];
                *r = (struct hvt_result) { .attr = (enum hvt_attr_id) i, .outcome = outcome };
                strcpy(r->from, outcome == HVT_UNCHANGED ? p.want[i].text : "240000");
                strcpy(r->to, p.want[i].text);
        }
        hvt_track_applied(s, &a, v, &t);
        *ret = (struct hvt_contest) {};
        if (t.repairs > 0)
                hvt_track_repairs(s, w, &t, now, horizon, insist, ret);
        return p;
}

/* A disk whose read_ahead_kb (and io_timeout) had its value once, with an original. */
static void settled(struct hvt_slots *s, struct hvt_repair_window *w, bool both) {
        struct hvt_setting o;
        struct hvt_contest c;

        pass(s, w, both, HVT_APPLIED, T0, hvt_contest_horizon(0), 0, &c);
        ck_assert_int_eq(hvt_setting_from_kernel(&o, HVT_ATTR_READ_AHEAD_KB, "65536"), 0);
        hvt_slot_set_orig(slot(s, HVT_ATTR_READ_AHEAD_KB), &o);
        if (both) {
                ck_assert_int_eq(hvt_setting_from_kernel(&o, HVT_ATTR_IO_TIMEOUT, "240000"), 0);
                hvt_slot_set_orig(slot(s, HVT_ATTR_IO_TIMEOUT), &o);
        }
        ck_assert(slot(s, HVT_ATTR_READ_AHEAD_KB)->settled);
}

/* The kernel re-applying its read-ahead on every controller reset, fifty times a minute:
 * each repair says so in its verdict and leaves the counts the window and the runs take
 * (tune.c counts a pass's repairs only when another writer's are among them; each round here
 * hands them to hvt_track_repairs() regardless). Nothing is contested, nothing yielded, the
 * disk never pauses; a neighbour's repairs after that are counted from none. */
START_TEST(test_kernel_never_contested) {
        struct hvt_slots s = {};
        struct hvt_repair_window w = {};
        struct hvt_contest c;

        settled(&s, &w, false);
        for (unsigned i = 1; i <= 50; i++) {
                struct hvt_verdict v[_HVT_ATTR_DISK_MAX];
                struct hvt_apply a = { .n = 1 };
                struct hvt_plan p, back;
                struct hvt_tally t;

                plan_of(&p, false);
                hvt_track_yields(&s, &p, 0);
                ck_assert_int_eq(hvt_track_plan(&s, &p, &back), 0);
                ck_assert(p.want[HVT_ATTR_READ_AHEAD_KB].set);
                a.results[0] = (struct hvt_result) { .attr = HVT_ATTR_READ_AHEAD_KB, .outcome = HVT_APPLIED };
                strcpy(a.results[0].from, "65536");
                strcpy(a.results[0].to, "128");
                hvt_track_applied(&s, &a, v, &t);
                ck_assert_int_eq(v[0].action, HVT_ACTION_REPAIR);
                ck_assert_int_eq(v[0].writer, HVT_WRITER_OTHER);
                hvt_track_kernel_repair(&t, v, &a, 0);
                ck_assert_int_eq(v[0].writer, HVT_WRITER_KERNEL);
                ck_assert_uint_eq(t.repairs, 0);
                ck_assert_uint_eq(t.repaired, 0);
                ck_assert_uint_eq(t.kernel_repairs, 1);
                /* Twice is once. */
                hvt_track_kernel_repair(&t, v, &a, 0);
                ck_assert_uint_eq(t.kernel_repairs, 1);
                /* What tune.c's count_repairs() hands the window and the runs, every round: none
                 * of it counts (tune.c skips the call then; called anyway, it must not count). */
                hvt_track_repairs(&s, &w, &t, T0 + i * 1200 * 1000, hvt_contest_horizon(0), 0, &c);
                ck_assert_uint_eq(c.contested, 0);
                ck_assert_uint_eq(c.yielded, 0);
                ck_assert(!c.pause);
        }
        ck_assert(!slot(&s, HVT_ATTR_READ_AHEAD_KB)->contested);
        ck_assert(!slot(&s, HVT_ATTR_READ_AHEAD_KB)->yielded);
        ck_assert_uint_eq(slot(&s, HVT_ATTR_READ_AHEAD_KB)->repairs, 0);
        ck_assert_uint_eq(w.repairs, 0);
        /* A neighbour now: its first repair begins a run of one. */
        pass(&s, &w, false, HVT_APPLIED, T0 + 60 * S, hvt_contest_horizon(0), 0, &c);
        ck_assert_uint_eq(slot(&s, HVT_ATTR_READ_AHEAD_KB)->repairs, 1);
        ck_assert_uint_eq(w.repairs, 1);
        ck_assert_uint_eq(c.contested, 0);
        hvt_slots_done(&s);
}
END_TEST

START_TEST(test_slot_size) {
        /* The contest fits in what the slot had left: 1,000 disks cost no more. */
        ck_assert_uint_le(sizeof(struct hvt_slot), 96);
}
END_TEST

START_TEST(test_horizon) {
        ck_assert_uint_eq(hvt_contest_horizon(0), HVT_REPAIR_WINDOW_S * S);
        ck_assert_uint_eq(hvt_contest_horizon(1), HVT_REPAIR_WINDOW_S * S);
        ck_assert_uint_eq(hvt_contest_horizon(30), HVT_REPAIR_WINDOW_S * S);
        ck_assert_uint_eq(hvt_contest_horizon(300), 600 * S);
}
END_TEST

/* A udev rule on every change event, a second apart: the eleventh repair is past the disk's
 * budget, and the attribute is the one fought over. The default yields: no pause, and the
 * attribute leaves the plan. */
START_TEST(test_fast_neighbour_yielded) {
        struct hvt_slots s = {};
        struct hvt_repair_window w = {};
        struct hvt_contest c;
        struct hvt_plan p;

        settled(&s, &w, false);
        for (unsigned i = 1; i <= HVT_REPAIR_BURST; i++) {
                pass(&s, &w, false, HVT_APPLIED, T0 + i * S, hvt_contest_horizon(0), 0, &c);
                ck_assert_uint_eq(c.contested, 0);
                ck_assert(!c.pause);
                ck_assert_uint_eq(slot(&s, HVT_ATTR_READ_AHEAD_KB)->repairs, i);
        }
        pass(&s, &w, false, HVT_APPLIED, T0 + 11 * S, hvt_contest_horizon(0), 0, &c);
        ck_assert_uint_eq(c.contested, BIT(HVT_ATTR_READ_AHEAD_KB));
        ck_assert_uint_eq(c.yielded, BIT(HVT_ATTR_READ_AHEAD_KB));
        ck_assert(!c.pause);
        ck_assert(slot(&s, HVT_ATTR_READ_AHEAD_KB)->yielded);
        /* The fight is over: the window it filled with it. */
        ck_assert_uint_eq(w.repairs, 0);
        ck_assert_uint_eq(w.start, T0 + 11 * S);

        /* From then on it is not planned, nor restored, and its slot keeps what hvtuned
         * wanted and the original. */
        for (unsigned i = 12; i < 40; i++) {
                p = pass(&s, &w, false, HVT_APPLIED, T0 + i * S, hvt_contest_horizon(0), 0, &c);
                ck_assert(!p.want[HVT_ATTR_READ_AHEAD_KB].set);
                ck_assert_uint_eq(c.contested | c.yielded, 0);
        }
        ck_assert(slot(&s, HVT_ATTR_READ_AHEAD_KB)->want_set);
        ck_assert_str_eq(slot(&s, HVT_ATTR_READ_AHEAD_KB)->want, "128");
        ck_assert_str_eq(slot(&s, HVT_ATTR_READ_AHEAD_KB)->orig, "65536");
        hvt_slots_done(&s);
}
END_TEST

/* insist: today's pause, told once for the run; the next window pauses again. */
START_TEST(test_fast_neighbour_insisted) {
        struct hvt_slots s = {};
        struct hvt_repair_window w = {};
        const uint32_t insist = BIT(HVT_ATTR_READ_AHEAD_KB);
        struct hvt_contest c;
        struct hvt_plan p;

        settled(&s, &w, false);
        for (unsigned i = 1; i <= HVT_REPAIR_BURST; i++)
                pass(&s, &w, false, HVT_APPLIED, T0 + i * S, hvt_contest_horizon(0), insist, &c);
        pass(&s, &w, false, HVT_APPLIED, T0 + 11 * S, hvt_contest_horizon(0), insist, &c);
        ck_assert_uint_eq(c.contested, BIT(HVT_ATTR_READ_AHEAD_KB));
        ck_assert_uint_eq(c.yielded, 0);
        ck_assert(c.pause);
        ck_assert(!slot(&s, HVT_ATTR_READ_AHEAD_KB)->yielded);

        /* After the pause (a new window, when the last ends), repaired again: the same run,
         * not told again, and paused again at the budget. */
        hvt_repair_window_restart(&w, T0 + 61 * S);
        for (unsigned i = 0; i <= HVT_REPAIR_BURST; i++) {
                p = pass(&s, &w, false, HVT_APPLIED, T0 + (61 + i) * S, hvt_contest_horizon(0), insist, &c);
                ck_assert(p.want[HVT_ATTR_READ_AHEAD_KB].set);
                ck_assert_uint_eq(c.contested, 0);
                ck_assert(c.pause == (i == HVT_REPAIR_BURST));
        }

        /* A reload says yield: the next repair yields it, told anew, and ends the pause. */
        hvt_repair_window_restart(&w, T0 + 131 * S);
        pass(&s, &w, false, HVT_APPLIED, T0 + 131 * S, hvt_contest_horizon(0), 0, &c);
        ck_assert_uint_eq(c.contested, BIT(HVT_ATTR_READ_AHEAD_KB));
        ck_assert_uint_eq(c.yielded, BIT(HVT_ATTR_READ_AHEAD_KB));
        ck_assert(!c.pause);
        hvt_slots_done(&s);
}
END_TEST

/* WALinuxAgent every 30 s, found by the periodic check at its default interval (a minute):
 * one repair a minute never fills the window, yet the run does, and the default yields.
 * Without the periodic check's horizon it would never end. */
START_TEST(test_slow_neighbour) {
        struct hvt_slots s = {};
        struct hvt_repair_window w = {};
        struct hvt_contest c;

        settled(&s, &w, false);
        for (unsigned i = 1; i <= HVT_REPAIR_BURST; i++) {
                pass(&s, &w, false, HVT_APPLIED, T0 + i * HVT_VERIFY_INTERVAL_DEFAULT * S,
                     hvt_contest_horizon(HVT_VERIFY_INTERVAL_DEFAULT), 0, &c);
                ck_assert_uint_eq(c.contested, 0);
                ck_assert(!c.pause);
        }
        pass(&s, &w, false, HVT_APPLIED, T0 + 11 * HVT_VERIFY_INTERVAL_DEFAULT * S,
             hvt_contest_horizon(HVT_VERIFY_INTERVAL_DEFAULT), 0, &c);
        ck_assert_uint_eq(c.yielded, BIT(HVT_ATTR_READ_AHEAD_KB));
        ck_assert(!c.pause);
        hvt_slots_done(&s);
}
END_TEST

/* Drift now and then, further apart than the horizon, is no contest: each repair begins a
 * run of its own. */
START_TEST(test_drift_now_and_then) {
        struct hvt_slots s = {};
        struct hvt_repair_window w = {};
        struct hvt_contest c;

        settled(&s, &w, false);
        for (unsigned i = 1; i <= 3 * HVT_REPAIR_BURST; i++) {
                pass(&s, &w, false, HVT_APPLIED, T0 + i * 61 * S, hvt_contest_horizon(0), 0, &c);
                ck_assert_uint_eq(c.contested, 0);
                ck_assert_uint_eq(slot(&s, HVT_ATTR_READ_AHEAD_KB)->repairs, 1);
        }
        /* Unchanged passes in between count nothing. */
        for (unsigned i = 0; i < 100; i++)
                pass(&s, &w, false, HVT_UNCHANGED, T0 + 2000 * S + i * S, hvt_contest_horizon(0), 0, &c);
        ck_assert_uint_eq(slot(&s, HVT_ATTR_READ_AHEAD_KB)->repairs, 1);
        hvt_slots_done(&s);
}
END_TEST

/* Two attributes rewritten on every event fill the window in six passes: each has six
 * repairs in its run, at least HVT_CONTEST_MIN, and both are named. */
START_TEST(test_two_contested) {
        struct hvt_slots s = {};
        struct hvt_repair_window w = {};
        struct hvt_contest c;

        settled(&s, &w, true);
        for (unsigned i = 1; i <= 5; i++) {
                pass(&s, &w, true, HVT_APPLIED, T0 + i * S, hvt_contest_horizon(0), 0, &c);
                ck_assert_uint_eq(c.contested, 0);
        }
        pass(&s, &w, true, HVT_APPLIED, T0 + 6 * S, hvt_contest_horizon(0), BIT(HVT_ATTR_IO_TIMEOUT), &c);
        ck_assert_uint_eq(c.contested, BIT(HVT_ATTR_READ_AHEAD_KB) | BIT(HVT_ATTR_IO_TIMEOUT));
        ck_assert_uint_eq(c.yielded, BIT(HVT_ATTR_READ_AHEAD_KB));
        /* io_timeout is insisted on: the disk pauses for it. */
        ck_assert(c.pause);
        hvt_slots_done(&s);
}
END_TEST

/* A disk past its budget with no attribute repaired HVT_CONTEST_MIN times (several set back
 * once each, as a profile switched twice) pauses as before, naming nothing. */
START_TEST(test_spread_drift_pauses) {
        struct hvt_slots s = {};
        struct hvt_repair_window w = {};
        struct hvt_contest c;

        settled(&s, &w, true);
        hvt_repair_window_add(&w, HVT_REPAIR_BURST - 1, T0 + S);  /* other attributes' repairs */
        pass(&s, &w, true, HVT_APPLIED, T0 + 2 * S, hvt_contest_horizon(0), 0, &c);
        ck_assert(c.pause);
        ck_assert_uint_eq(c.contested, 0);
        ck_assert(!slot(&s, HVT_ATTR_READ_AHEAD_KB)->yielded);
        hvt_slots_done(&s);
}
END_TEST

static void contest(struct hvt_slots *s, struct hvt_repair_window *w, uint32_t insist) {
        struct hvt_contest c;

        settled(s, w, false);
        for (unsigned i = 1; i <= HVT_REPAIR_BURST + 1; i++)
                pass(s, w, false, HVT_APPLIED, T0 + i * S, hvt_contest_horizon(0), insist, &c);
        ck_assert_uint_eq(c.contested, BIT(HVT_ATTR_READ_AHEAD_KB));
}

/* At stop, a yielded attribute's original goes back only where hvtuned's value is still
 * found: the restore's left is it, or what the kernel kept of it. */
START_TEST(test_yield_restore_expects_own_value) {
        struct hvt_slots s = {};
        struct hvt_repair_window w = {};
        struct hvt_plan all;

        contest(&s, &w, 0);
        hvt_track_restore_all(&s, &all);
        ck_assert_str_eq(all.want[HVT_ATTR_READ_AHEAD_KB].text, "65536");
        ck_assert_str_eq(all.left[HVT_ATTR_READ_AHEAD_KB], "128");

        strcpy(slot(&s, HVT_ATTR_READ_AHEAD_KB)->last.kept, "124");
        hvt_track_restore_all(&s, &all);
        ck_assert_str_eq(all.left[HVT_ATTR_READ_AHEAD_KB], "124");
        hvt_slots_done(&s);
}
END_TEST

/* The yield ends with the operator's word: another value (a tune again, not a repair),
 * insist (a repair, the fight on), or no longer managed (its original back, expecting
 * hvtuned's value). */
START_TEST(test_yield_ends) {
        struct hvt_verdict v[_HVT_ATTR_DISK_MAX];
        struct hvt_slots s = {};
        struct hvt_repair_window w = {};
        struct hvt_plan p, back;
        struct hvt_apply a = {};
        struct hvt_tally t;
        struct hvt_contest c;

        contest(&s, &w, 0);
        p = (struct hvt_plan) {};
        want(&p, HVT_ATTR_READ_AHEAD_KB, "256");
        hvt_track_yields(&s, &p, 0);
        ck_assert(p.want[HVT_ATTR_READ_AHEAD_KB].set);
        ck_assert(!slot(&s, HVT_ATTR_READ_AHEAD_KB)->yielded);
        ck_assert(!slot(&s, HVT_ATTR_READ_AHEAD_KB)->contested);
        ck_assert_uint_eq(slot(&s, HVT_ATTR_READ_AHEAD_KB)->repairs, 0);
        ck_assert_int_eq(hvt_track_plan(&s, &p, &back), 0);
        ck_assert_uint_eq(hvt_plan_count(&back), 0);
        a.results[a.n++] = (struct hvt_result) { .attr = HVT_ATTR_READ_AHEAD_KB, .outcome = HVT_APPLIED,
                                                 .from = "240000", .to = "256" };
        hvt_track_applied(&s, &a, v, &t);
        ck_assert_int_eq(v[0].action, HVT_ACTION_TUNE);
        ck_assert_str_eq(slot(&s, HVT_ATTR_READ_AHEAD_KB)->orig, "65536");  /* the original kept */
        hvt_slots_done(&s);

        s = (struct hvt_slots) {};
        w = (struct hvt_repair_window) {};
        contest(&s, &w, 0);
        p = pass(&s, &w, false, HVT_APPLIED, T0 + 100 * S, hvt_contest_horizon(0), BIT(HVT_ATTR_READ_AHEAD_KB), &c);
        ck_assert(p.want[HVT_ATTR_READ_AHEAD_KB].set);
        ck_assert_uint_eq(slot(&s, HVT_ATTR_READ_AHEAD_KB)->repairs, 1);  /* a repair: a new run */
        hvt_slots_done(&s);

        s = (struct hvt_slots) {};
        w = (struct hvt_repair_window) {};
        contest(&s, &w, 0);
        p = (struct hvt_plan) {};
        hvt_track_yields(&s, &p, 0);
        ck_assert_int_eq(hvt_track_plan(&s, &p, &back), 0);
        ck_assert_str_eq(back.want[HVT_ATTR_READ_AHEAD_KB].text, "65536");
        ck_assert_str_eq(back.left[HVT_ATTR_READ_AHEAD_KB], "128");
        ck_assert(!slot(&s, HVT_ATTR_READ_AHEAD_KB)->want_set);
        hvt_slots_done(&s);
}
END_TEST

/* A knock-on of a yielded attribute (io_timeout, one kernel value with the SCSI timeout)
 * waits for it, until stop: put back now, it would undo the neighbour's value. */
START_TEST(test_knock_on_waits_for_yielded_cause) {
        struct hvt_slots s = {};
        struct hvt_repair_window w = {};
        struct hvt_contest c;
        struct hvt_setting o;
        struct hvt_slot *k;
        struct hvt_plan p, back;

        /* timeout settled at 300, its io_timeout knocked on from 180000 to 300000. */
        for (unsigned i = 0; i <= HVT_REPAIR_BURST + 1; i++) {
                struct hvt_verdict v[_HVT_ATTR_DISK_MAX];
                struct hvt_apply a = {};
                struct hvt_tally t;

                p = (struct hvt_plan) {};
                want(&p, HVT_ATTR_TIMEOUT, "300");
                hvt_track_yields(&s, &p, 0);
                ck_assert_int_eq(hvt_track_plan(&s, &p, &back), 0);
                ck_assert_uint_eq(hvt_plan_count(&back), 0);
                a.results[a.n++] = (struct hvt_result) { .attr = HVT_ATTR_TIMEOUT, .outcome = HVT_APPLIED,
                                                         .from = "240", .to = "300" };
                a.results[a.n++] = (struct hvt_result) { .attr = HVT_ATTR_IO_TIMEOUT, .outcome = HVT_KNOCKED_ON,
                                                         .from = "240000", .to = "300000", .watched = true,
                                                         .cause = HVT_ATTR_TIMEOUT };
                if (i == 0) {
                        ck_assert_int_eq(hvt_setting_from_kernel(&o, HVT_ATTR_TIMEOUT, "180"), 0);
                        hvt_slot_set_orig(hvt_slot_make(&s, HVT_ATTR_TIMEOUT), &o);
                        ck_assert_int_eq(hvt_setting_from_kernel(&o, HVT_ATTR_IO_TIMEOUT, "180000"), 0);
                        hvt_slot_set_orig(hvt_slot_make(&s, HVT_ATTR_IO_TIMEOUT), &o);
                }
                hvt_track_applied(&s, &a, v, &t);
                if (t.repairs)
                        hvt_track_repairs(&s, &w, &t, T0 + i * S, hvt_contest_horizon(1), 0, &c);
        }
        ck_assert_uint_eq(c.yielded, BIT(HVT_ATTR_TIMEOUT));
        k = slot(&s, HVT_ATTR_IO_TIMEOUT);
        ck_assert_str_eq(hvt_slot_left(k), "300000");

        /* The next pass: timeout out of the plan, io_timeout not put back. */
        p = (struct hvt_plan) {};
        want(&p, HVT_ATTR_TIMEOUT, "300");
        hvt_track_yields(&s, &p, 0);
        ck_assert_int_eq(hvt_track_plan(&s, &p, &back), 0);
        ck_assert_uint_eq(hvt_plan_count(&p), 0);
        ck_assert_uint_eq(hvt_plan_count(&back), 0);

        /* At stop both go back, each expecting hvtuned's value. */
        hvt_track_restore_all(&s, &back);
        ck_assert_str_eq(back.left[HVT_ATTR_TIMEOUT], "300");
        ck_assert_str_eq(back.left[HVT_ATTR_IO_TIMEOUT], "300000");
        hvt_slots_done(&s);
}
END_TEST

/* An insisted contest is over once the horizon passes without a repair; a yield is not: it
 * has no repairs to go by. */
START_TEST(test_contest_over) {
        struct hvt_slots s = {};
        struct hvt_repair_window w = {};

        contest(&s, &w, BIT(HVT_ATTR_READ_AHEAD_KB));
        ck_assert(!hvt_track_contest_over(&s, T0 + 11 * S + hvt_contest_horizon(0), hvt_contest_horizon(0)));
        ck_assert(slot(&s, HVT_ATTR_READ_AHEAD_KB)->contested);
        ck_assert(hvt_track_contest_over(&s, T0 + 13 * S + hvt_contest_horizon(0), hvt_contest_horizon(0)));
        ck_assert(!slot(&s, HVT_ATTR_READ_AHEAD_KB)->contested);
        hvt_slots_done(&s);

        s = (struct hvt_slots) {};
        w = (struct hvt_repair_window) {};
        contest(&s, &w, 0);
        ck_assert(!hvt_track_contest_over(&s, T0 + 1000 * S, hvt_contest_horizon(0)));
        ck_assert(slot(&s, HVT_ATTR_READ_AHEAD_KB)->yielded);
        hvt_slots_done(&s);
}
END_TEST

int main(void) {
        Suite *s = suite_create("contest");
        TCase *tc = tcase_create("track");

        tcase_add_test(tc, test_slot_size);
        tcase_add_test(tc, test_horizon);
        tcase_add_test(tc, test_fast_neighbour_yielded);
        tcase_add_test(tc, test_fast_neighbour_insisted);
        tcase_add_test(tc, test_slow_neighbour);
        tcase_add_test(tc, test_drift_now_and_then);
        tcase_add_test(tc, test_two_contested);
        tcase_add_test(tc, test_spread_drift_pauses);
        tcase_add_test(tc, test_yield_restore_expects_own_value);
        tcase_add_test(tc, test_yield_ends);
        tcase_add_test(tc, test_contest_over);
        tcase_add_test(tc, test_knock_on_waits_for_yielded_cause);
        tcase_add_test(tc, test_kernel_never_contested);
        suite_add_tcase(s, tc);
        return test_run(s);
}
