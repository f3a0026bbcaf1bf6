/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel's read-ahead rule of lib/readahead-rule.h, per kernel and per queue: what each
 * version sets at a limits commit or a namespace revalidation, where the value comes from,
 * and what a disk shows after it from a value lower or higher. The Azure cases are the
 * issue's measurements: an accelerator namespace with a 32 MiB optimal I/O size reads 65536
 * on every kernel; a storvsc disk (rotational, no optimal size, max_sectors_kb 2048) gets
 * nothing on 5.10 and 6.1, 128 on 6.12, 4096 from 6.17 (459779d04ae8).
 *
 * Whether a higher value stays: blk_apply_bdi_limits() of the atomic limits API (hch's 2024
 * series, 6.9) set max(2 x io_opt, 128 KiB) at every commit, lowering a higher value, for sd
 * too from 804e498e0496 ("sd: convert to the atomic queue limits API", 6.11).
 * 7b720c720253 ("block: never reduce ra_pages in blk_apply_bdi_limits", 6.15) made it raise
 * only; it reached 6.12.y (6.12.26) and 6.14.y by the stable backports of 29 Apr 2025, never
 * 6.11.y or 6.13.y. So 6.12 and 6.14 lower or not by their stable release, which the
 * version X.Y cannot tell: HVT_RA_EITHER. */
#include <check.h>

#include "readahead-rule.h"
#include "testutil.h"

#define V(major, minor) HVT_KERNEL_VERSION(major, minor)
#define MIB (UINT64_C(1024) * 1024)

static const struct hvt_ra_queue accelerator = { .nvme = true, .io_opt_bytes = 32 * MIB, .max_sectors_kb = 512 };
static const struct hvt_ra_queue storvsc = { .rotational = true, .max_sectors_kb = 2048 };

static const struct {
        unsigned version;
        const struct hvt_ra_queue *q;
        enum hvt_ra_source source;
        uint64_t kb;
        enum hvt_ra_higher higher;
} cases[] = {
        { V(5, 10), &accelerator, HVT_RA_IO_OPT, 65536, HVT_RA_LOWERS },
        { V(6, 1), &accelerator, HVT_RA_IO_OPT, 65536, HVT_RA_LOWERS },
        { V(6, 9), &accelerator, HVT_RA_IO_OPT, 65536, HVT_RA_LOWERS },
        { V(6, 11), &accelerator, HVT_RA_IO_OPT, 65536, HVT_RA_LOWERS },
        { V(6, 12), &accelerator, HVT_RA_IO_OPT, 65536, HVT_RA_EITHER },
        { V(6, 13), &accelerator, HVT_RA_IO_OPT, 65536, HVT_RA_LOWERS },
        { V(6, 14), &accelerator, HVT_RA_IO_OPT, 65536, HVT_RA_EITHER },
        { V(6, 15), &accelerator, HVT_RA_IO_OPT, 65536, HVT_RA_KEEPS },
        { V(7, 3), &accelerator, HVT_RA_IO_OPT, 65536, HVT_RA_KEEPS },
        { V(5, 10), &storvsc, HVT_RA_NONE, 0, HVT_RA_LOWERS },
        { V(6, 1), &storvsc, HVT_RA_NONE, 0, HVT_RA_LOWERS },
        /* From 6.9 a max_sectors_kb store commits sd's limits; its rescan from 804e498e0496 (6.11). */
        { V(6, 8), &storvsc, HVT_RA_NONE, 0, HVT_RA_LOWERS },
        { V(6, 9), &storvsc, HVT_RA_FLOOR, 128, HVT_RA_LOWERS },
        { V(6, 11), &storvsc, HVT_RA_FLOOR, 128, HVT_RA_LOWERS },
        { V(6, 12), &storvsc, HVT_RA_FLOOR, 128, HVT_RA_EITHER },
        { V(6, 13), &storvsc, HVT_RA_FLOOR, 128, HVT_RA_LOWERS },
        { V(6, 14), &storvsc, HVT_RA_FLOOR, 128, HVT_RA_EITHER },
        { V(6, 16), &storvsc, HVT_RA_FLOOR, 128, HVT_RA_KEEPS },
        { V(6, 17), &storvsc, HVT_RA_MAX_SECTORS, 4096, HVT_RA_KEEPS },
        { V(7, 3), &storvsc, HVT_RA_MAX_SECTORS, 4096, HVT_RA_KEEPS },
        /* Unknown: the newest rule. */
        { 0, &storvsc, HVT_RA_MAX_SECTORS, 4096, HVT_RA_KEEPS },
};

START_TEST(test_rule_per_kernel) {
        struct hvt_ra_rule r;

        hvt_readahead_rule(cases[_i].version, cases[_i].q, &r);
        ck_assert_int_eq(r.source, cases[_i].source);
        ck_assert_uint_eq(r.kb, cases[_i].kb);
        ck_assert_int_eq(r.higher, cases[_i].higher);
}
END_TEST

/* 5.10's and 6.1's revalidation sets it, lower or higher; 6.15 and on only raise it; 6.12
 * plays its stable release with the backport (6.12.26 and on), as the emulated 6.12 does. */
START_TEST(test_after) {
        struct hvt_ra_rule r;

        hvt_readahead_rule(V(6, 1), &accelerator, &r);
        ck_assert_uint_eq(hvt_readahead_after(&r, 128), 65536);
        ck_assert_uint_eq(hvt_readahead_after(&r, 131072), 65536);
        hvt_readahead_rule(V(7, 3), &accelerator, &r);
        ck_assert_uint_eq(hvt_readahead_after(&r, 128), 65536);
        ck_assert_uint_eq(hvt_readahead_after(&r, 131072), 131072);
        hvt_readahead_rule(V(6, 12), &accelerator, &r);
        ck_assert_uint_eq(hvt_readahead_after(&r, 131072), 131072);
        hvt_readahead_rule(V(6, 13), &accelerator, &r);
        ck_assert_uint_eq(hvt_readahead_after(&r, 131072), 65536);
        hvt_readahead_rule(V(6, 1), &storvsc, &r);
        ck_assert_uint_eq(hvt_readahead_after(&r, 64), 64);
}
END_TEST

/* Whole pages of 2 x io_opt, and the floor for anything up to 128 KiB: a tie is the floor's. */
START_TEST(test_pages_and_floor) {
        struct hvt_ra_queue q = { .io_opt_bytes = 262144 + 1024 };
        struct hvt_ra_rule r;

        hvt_readahead_rule(V(6, 12), &q, &r);
        ck_assert_uint_eq(r.kb, 512);
        q = (struct hvt_ra_queue) { .io_opt_bytes = 65536 };
        hvt_readahead_rule(V(6, 12), &q, &r);
        ck_assert_int_eq(r.source, HVT_RA_FLOOR);
        ck_assert_uint_eq(r.kb, 128);
        q = (struct hvt_ra_queue) { .rotational = true, .max_sectors_kb = 64 };
        hvt_readahead_rule(V(7, 3), &q, &r);
        ck_assert_int_eq(r.source, HVT_RA_FLOOR);
        /* Not rotational: max_sectors_kb is never taken. */
        q = (struct hvt_ra_queue) { .max_sectors_kb = 2048 };
        hvt_readahead_rule(V(7, 3), &q, &r);
        ck_assert_int_eq(r.source, HVT_RA_FLOOR);
}
END_TEST

START_TEST(test_parse) {
        struct hvt_ra_queue q;

        ck_assert_int_eq(hvt_ra_queue_parse(true, "33554432", "0", "512", &q), 0);
        ck_assert(q.nvme && !q.rotational);
        ck_assert_uint_eq(q.io_opt_bytes, 32 * MIB);
        ck_assert_uint_eq(q.max_sectors_kb, 512);
        ck_assert_int_eq(hvt_ra_queue_parse(false, "0", "1", "2048", &q), 0);
        ck_assert(q.rotational);
        ck_assert_int_eq(hvt_ra_queue_parse(false, "-1", "1", "2048", &q), -EINVAL);
        ck_assert_int_eq(hvt_ra_queue_parse(false, "0", "2", "2048", &q), -EINVAL);
        ck_assert_int_eq(hvt_ra_queue_parse(false, "0", "1", " 2048", &q), -EINVAL);
        ck_assert_int_eq(hvt_ra_queue_parse(false, "", "1", "2048", &q), -EINVAL);
        ck_assert_int_eq(hvt_ra_queue_parse(false, "99999999999999999999", "1", "2048", &q), -EINVAL);
}
END_TEST

int main(void) {
        Suite *s = suite_create("readahead-rule");
        TCase *tc = tcase_create("rule");

        tcase_add_loop_test(tc, test_rule_per_kernel, 0, sizeof(cases) / sizeof(cases[0]));
        tcase_add_test(tc, test_after);
        tcase_add_test(tc, test_pages_and_floor);
        tcase_add_test(tc, test_parse);
        suite_add_tcase(s, tc);
        return test_run(s);
}
