/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The hw queue arithmetic: CPU lists as the kernel prints them, the cap hvtuned asks for,
 * what storvsc_probe makes of a parameter value, the memory estimate against figures
 * computed by hand from the model lib/hwqueues.h describes, and the kernel command line as
 * parse_args() reads it. */
#include <check.h>
#include <stdint.h>

#include "hwqueues.h"
#include "testutil.h"

START_TEST(test_cpulist) {
        unsigned n = 0;

        ck_assert_int_eq(hvt_cpulist_count("0-31\n", &n), 0);
        ck_assert_uint_eq(n, 32);
        ck_assert_int_eq(hvt_cpulist_count("0", &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_int_eq(hvt_cpulist_count("0,2-5,7", &n), 0);
        ck_assert_uint_eq(n, 6);
        ck_assert_int_eq(hvt_cpulist_count("", &n), -EINVAL);
        ck_assert_int_eq(hvt_cpulist_count("5-3", &n), -EINVAL);
        ck_assert_int_eq(hvt_cpulist_count("0-", &n), -EINVAL);
        ck_assert_int_eq(hvt_cpulist_count("0,,1", &n), -EINVAL);
        ck_assert_int_eq(hvt_cpulist_count("0-3 ", &n), -EINVAL);
        ck_assert_int_eq(hvt_cpulist_count("x", &n), -EINVAL);
}
END_TEST

START_TEST(test_target) {
        struct hvt_host_config absent = {}, four = { true, 4, false }, zero = { true, 0, false },
                               eight = { true, 8, false };

        /* Absent: 4 on a VM with more than 4 CPUs, else the parameter is left alone. */
        ck_assert_uint_eq(hvt_hwq_target(&absent, 32), 4);
        ck_assert_uint_eq(hvt_hwq_target(&absent, 5), 4);
        ck_assert_uint_eq(hvt_hwq_target(&absent, 4), 0);
        ck_assert_uint_eq(hvt_hwq_target(&absent, 1), 0);
        ck_assert_uint_eq(hvt_hwq_target(&absent, 0), 0);
        /* 0: never touch. */
        ck_assert_uint_eq(hvt_hwq_target(&zero, 64), 0);
        /* Set: never above the present CPUs. */
        ck_assert_uint_eq(hvt_hwq_target(&four, 2), 2);
        ck_assert_uint_eq(hvt_hwq_target(&eight, 64), 8);
        ck_assert_uint_eq(hvt_hwq_target(&eight, 6), 6);
}
END_TEST

START_TEST(test_effective) {
        ck_assert_uint_eq(hvt_hwq_effective(0, 32), 32);   /* 0: one per present CPU */
        ck_assert_uint_eq(hvt_hwq_effective(4, 32), 4);
        ck_assert_uint_eq(hvt_hwq_effective(32, 32), 32);
        ck_assert_uint_eq(hvt_hwq_effective(33, 32), 32);  /* reset to 0 at probe */
}
END_TEST

/* can_queue = 352 x ((cpus - 1) / 4 + 1) x 90 / 100; per hw queue, hwqueues.h's model. */
START_TEST(test_estimate) {
        /* 6.1: round_up(272 + 296 + 416 + 64, 64) */
        const unsigned rq = 1088;

        /* One queue of 316 (IDE, or 1-4 vCPUs), by hand: five 64 KiB blocks of 60 requests
         * and a 32 KiB one for the last 16 (17,408 bytes: more than half of 32 KiB); 316
         * sense buffers of 128; two 2,528-byte pointer arrays in 4 KiB slabs; an sbitmap of
         * 5 cache lines; 4 KiB of context. */
        ck_assert_uint_eq(hvt_hwq_estimate_bytes(rq, 1, 316), 5 * 65536 + 32768 + 316 * 128 + 2 * 4096 + 5 * 64 + 4096);
        ck_assert_uint_eq(hvt_hwq_estimate_bytes(rq, 4, 316), 4 * hvt_hwq_estimate_bytes(rq, 1, 316));
        /* 16 vCPUs and capped at 4 */
        ck_assert_uint_eq(hvt_hwq_estimate_bytes(rq, 16, 1267), 25356288);
        ck_assert_uint_eq(hvt_hwq_estimate_bytes(rq, 4, 1267), 6339072);
        /* 32 vCPUs: ~97 MiB, capped ~12 MiB (what bench/vm measured on 6.1: docs/performance.md,
         * "The payoff on a real kernel"); 1.21-1.25 KiB
         * a request. Pointer arrays of 20,272 bytes come as 32 KiB of whole pages. */
        ck_assert_uint_eq(hvt_hwq_estimate_bytes(rq, 32, 2534), 101294080);
        ck_assert_uint_eq(hvt_hwq_estimate_bytes(rq, 32, 2534) / 1024 / 1024, 96);
        ck_assert_uint_eq(hvt_hwq_estimate_bytes(rq, 4, 2534), 12661760);
        /* 64 vCPUs: ~386 MiB vs ~24 MiB */
        ck_assert_uint_eq(hvt_hwq_estimate_bytes(rq, 64, 5068), 404914176);
        ck_assert_uint_eq(hvt_hwq_estimate_bytes(rq, 4, 5068), 25307136);
        /* 64-bit arithmetic: beyond what 32 bits hold. */
        ck_assert_uint_eq(hvt_hwq_estimate_bytes(rq, 8192, 10240), 104807268352ULL);
}
END_TEST

/* The same model on the other kernels' layouts (layout.c's table): the request size is a
 * run-time value, and the packing into 64 KiB blocks follows it. */
START_TEST(test_estimate_per_layout) {
        /* 6.12: 1024 bytes, 64 a block: 316 requests in five full blocks (the last for 60). */
        ck_assert_uint_eq(hvt_hwq_estimate_bytes(1024, 1, 316), 5 * 65536 + 316 * 128 + 2 * 4096 + 5 * 64 + 4096);
        /* 5.10: 1152 bytes, 56 a block; 332 requests a queue at 1-4 vCPUs (369 a channel):
         * five full blocks for 280, a sixth for the last 52 (59,904 bytes, more than half). */
        ck_assert_uint_eq(hvt_hwq_estimate_bytes(1152, 1, 332), 6 * 65536 + 332 * 128 + 2 * 4096 + 6 * 64 + 4096);
        /* 5.10 at 8 vCPUs (can_queue 664), 8 queues: more than 6.1 at the same figures. */
        ck_assert_uint_gt(hvt_hwq_estimate_bytes(1152, 8, 664), hvt_hwq_estimate_bytes(1088, 8, 664));
        ck_assert_uint_lt(hvt_hwq_estimate_bytes(1024, 8, 664), hvt_hwq_estimate_bytes(1088, 8, 664));
        /* An unknown layout (0) or a request past a page estimates nothing, never loops. */
        ck_assert_uint_eq(hvt_hwq_estimate_bytes(0, 8, 664), 0);
        ck_assert_uint_eq(hvt_hwq_estimate_bytes(4097, 8, 664), 0);
        /* A page a request: 16 in a 64 KiB block, the 17th in an 8 KiB one (a page is not
         * less than half of 8 KiB). */
        ck_assert_uint_eq(hvt_hwq_estimate_bytes(4096, 1, 17), 65536 + 8192 + 17 * 128 + 2 * 256 + 64 + 4096);
}
END_TEST

START_TEST(test_cmdline) {
        unsigned v = 99;

        ck_assert_int_eq(hvt_cmdline_max_hw_queues("BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro quiet\n", &v), 0);
        ck_assert_uint_eq(v, 99);
        ck_assert_int_eq(hvt_cmdline_max_hw_queues("initrd=\\initrd.img WSL_ROOT_INIT=1 panic=-1 nr_cpus=16 "
                                                   "hv_storvsc.storvsc_max_hw_queues=4 console=hvc0\n", &v), 1);
        ck_assert_uint_eq(v, 4);
        /* The last one counts; '-' and '_' are the same in names; quotes and 0x as the kernel. */
        ck_assert_int_eq(hvt_cmdline_max_hw_queues("hv_storvsc.storvsc_max_hw_queues=8 "
                                                   "hv-storvsc.storvsc-max-hw-queues=2", &v), 1);
        ck_assert_uint_eq(v, 2);
        ck_assert_int_eq(hvt_cmdline_max_hw_queues("hv_storvsc.storvsc_max_hw_queues=\"6\"", &v), 1);
        ck_assert_uint_eq(v, 6);
        ck_assert_int_eq(hvt_cmdline_max_hw_queues("hv_storvsc.storvsc_max_hw_queues=0x10", &v), 1);
        ck_assert_uint_eq(v, 16);
        /* After "--" the words are init's. */
        ck_assert_int_eq(hvt_cmdline_max_hw_queues("ro -- hv_storvsc.storvsc_max_hw_queues=4", &v), 0);
        /* A quoted word with blanks is one word. */
        ck_assert_int_eq(hvt_cmdline_max_hw_queues("x=\"a hv_storvsc.storvsc_max_hw_queues=4\"", &v), 0);
        /* Other parameters and prefixes of the name are not it. */
        ck_assert_int_eq(hvt_cmdline_max_hw_queues("hv_storvsc.storvsc_max_hw_queues_x=4 "
                                                   "xhv_storvsc.storvsc_max_hw_queues=4", &v), 0);
        /* A word quoted whole, as next_arg() takes it. */
        ck_assert_int_eq(hvt_cmdline_max_hw_queues("\"hv_storvsc.storvsc_max_hw_queues=3\"", &v), 1);
        ck_assert_uint_eq(v, 3);
        /* The kernel ignores a bad value and goes on: a later good one counts. */
        ck_assert_int_eq(hvt_cmdline_max_hw_queues("hv_storvsc.storvsc_max_hw_queues=x "
                                                   "hv_storvsc.storvsc_max_hw_queues=5", &v), 1);
        ck_assert_uint_eq(v, 5);
        ck_assert_int_eq(hvt_cmdline_max_hw_queues("hv_storvsc.storvsc_max_hw_queues=four", &v), -EINVAL);
        ck_assert_int_eq(hvt_cmdline_max_hw_queues("hv_storvsc.storvsc_max_hw_queues=-1", &v), -EINVAL);
        ck_assert_int_eq(hvt_cmdline_max_hw_queues("hv_storvsc.storvsc_max_hw_queues=", &v), -EINVAL);
}
END_TEST

int main(void) {
        Suite *s = suite_create("hwqueues");
        TCase *tc = tcase_create("arithmetic");

        tcase_add_test(tc, test_cpulist);
        tcase_add_test(tc, test_target);
        tcase_add_test(tc, test_effective);
        tcase_add_test(tc, test_estimate);
        tcase_add_test(tc, test_estimate_per_layout);
        tcase_add_test(tc, test_cmdline);
        suite_add_tcase(s, tc);
        return test_run(s);
}
