/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The hw queue arithmetic: CPU lists as the kernel prints them, the cap hvtuned asks for,
 * what storvsc_probe makes of a parameter value, the memory estimate against figures
 * computed by hand from storvsc.md, and the kernel command line as parse_args() reads it. */
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

/* can_queue = 352 x ((cpus - 1) / 4 + 1) x 90 / 100; bytes = queues x can_queue x 1024. */
START_TEST(test_estimate) {
        ck_assert_uint_eq(HVT_REQUEST_BYTES, 1024);
        /* 4 vCPUs: 4 x 316 x 1024 */
        ck_assert_uint_eq(hvt_hwq_estimate_bytes(4, 316), 1294336);
        /* IDE: 1 x 316 x 1024 */
        ck_assert_uint_eq(hvt_hwq_estimate_bytes(1, 316), 323584);
        /* 16 vCPUs: 16 x 1267 x 1024, capped 4 x 1267 x 1024 */
        ck_assert_uint_eq(hvt_hwq_estimate_bytes(16, 1267), 20758528);
        ck_assert_uint_eq(hvt_hwq_estimate_bytes(4, 1267), 5189632);
        /* 32 vCPUs: ~79 MiB, capped ~9.9 MiB (storvsc.md) */
        ck_assert_uint_eq(hvt_hwq_estimate_bytes(32, 2534), 83034112);
        ck_assert_uint_eq(hvt_hwq_estimate_bytes(4, 2534), 10379264);
        ck_assert_uint_eq(hvt_hwq_estimate_bytes(32, 2534) / 1024 / 1024, 79);
        /* 64 vCPUs: ~317 MiB vs ~20 MiB */
        ck_assert_uint_eq(hvt_hwq_estimate_bytes(64, 5068), 332136448);
        ck_assert_uint_eq(hvt_hwq_estimate_bytes(4, 5068), 20758528);
        /* 64-bit arithmetic: beyond what 32 bits hold (8192 CPUs x 10240 tags x 1 KiB). */
        ck_assert_uint_eq(hvt_hwq_estimate_bytes(8192, 10240), 85899345920ULL);
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
        tcase_add_test(tc, test_cmdline);
        suite_add_tcase(s, tc);
        return test_run(s);
}
