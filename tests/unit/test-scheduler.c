/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The queue/scheduler formats kernels print (block/elevator.c): 6.x (none first), 5.15 (none
 * last), legacy single-queue, a queue without elevator support, and what is not a list at all. */
#include <check.h>
#include <string.h>

#include "scheduler.h"
#include "testutil.h"

static void assert_list(const char *text, size_t n, const char *active, const char *offered) {
        struct hvt_sched_list l;
        char buf[128];

        ck_assert_int_eq(hvt_sched_parse(text, &l), 0);
        ck_assert_uint_eq(l.n, n);
        ck_assert_str_eq(hvt_sched_active(&l), active);
        hvt_sched_format(&l, buf, sizeof(buf));
        ck_assert_str_eq(buf, offered);
}

START_TEST(test_kernel_formats) {
        assert_list("[none] mq-deadline kyber bfq \n", 4, "none", "none mq-deadline kyber bfq");
        assert_list("none [mq-deadline] kyber bfq \n", 4, "mq-deadline", "none mq-deadline kyber bfq");
        assert_list("mq-deadline kyber [none] \n", 3, "none", "mq-deadline kyber none");
        assert_list("[mq-deadline] kyber bfq none\n", 4, "mq-deadline", "mq-deadline kyber bfq none");
        assert_list("noop [deadline] cfq \n", 3, "deadline", "noop deadline cfq");
        assert_list("none\n", 1, "none", "none");
        /* What a plain-file testbed holds after a write. */
        assert_list("bfq", 1, "bfq", "bfq");
}
END_TEST

START_TEST(test_malformed) {
        static const char *const bad[] = {
                "", " \n", "[none", "none]", "[none] [bfq]", "none bfq", "[none]bfq", "[]",
                "[no ne]", "none [bf/q]", "a-very-long-elevator-name-here",
        };
        struct hvt_sched_list l;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                ck_assert_msg(hvt_sched_parse(bad[i], &l) == -EBADMSG, "accepted \"%s\"", bad[i]);
}
END_TEST

START_TEST(test_resolve) {
        struct hvt_sched_list l;

        ck_assert_int_eq(hvt_sched_parse("[none] mq-deadline kyber \n", &l), 0);
        ck_assert_str_eq(hvt_sched_resolve(&l, "none"), "none");
        ck_assert_str_eq(hvt_sched_resolve(&l, "kyber"), "kyber");
        ck_assert_ptr_null(hvt_sched_resolve(&l, "bfq"));
        ck_assert_ptr_null(hvt_sched_resolve(&l, "noop"));

        /* Legacy: "none" means noop there; nothing else is renamed. */
        ck_assert_int_eq(hvt_sched_parse("noop [deadline] cfq \n", &l), 0);
        ck_assert_str_eq(hvt_sched_resolve(&l, "none"), "noop");
        ck_assert_ptr_null(hvt_sched_resolve(&l, "mq-deadline"));
}
END_TEST

START_TEST(test_name_valid) {
        ck_assert(hvt_sched_name_valid("mq-deadline"));
        ck_assert(hvt_sched_name_valid("bfq"));
        ck_assert(hvt_sched_name_valid("none"));
        ck_assert(!hvt_sched_name_valid(""));
        ck_assert(!hvt_sched_name_valid("-none"));
        ck_assert(!hvt_sched_name_valid("none\n"));
        ck_assert(!hvt_sched_name_valid("mq deadline"));
        ck_assert(!hvt_sched_name_valid("../bfq"));
        ck_assert(!hvt_sched_name_valid("0123456789abcdef"));  /* 16 > ELV_NAME_MAX - 1 */
        ck_assert(hvt_sched_name_valid("0123456789abcde"));
}
END_TEST

int main(void) {
        Suite *s = suite_create("scheduler");
        TCase *tc = tcase_create("parse");

        tcase_add_test(tc, test_kernel_formats);
        tcase_add_test(tc, test_malformed);
        tcase_add_test(tc, test_resolve);
        tcase_add_test(tc, test_name_valid);
        suite_add_tcase(s, tc);
        return test_run(s);
}
