/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The index of managed disks by syspath against a plain scan: after any sequence of adds and
 * removes, every disk in the table is found, and no disk that left it is. Syspaths share
 * long prefixes, and the churn forces collisions and removals inside probe runs. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disks.h"
#include "index.h"
#include "testutil.h"

#define N 3000

static struct hvt_tracked disks[N];
static bool present[N];

static void check_all(const struct hvt_index *x) {
        size_t n = 0;

        for (size_t i = 0; i < N; i++) {
                ck_assert_ptr_eq(hvt_index_find(x, disks[i].disk.syspath), present[i] ? &disks[i] : NULL);
                n += present[i];
        }
        ck_assert_uint_eq(x->n, n);
        ck_assert_uint_le(2 * x->n, x->size);
}

static const char *syspath_of(const void *item) {
        const struct hvt_tracked *t = item;

        return t->disk.syspath;
}

START_TEST(test_churn) {
        struct hvt_index x = { .key = syspath_of };

        for (size_t i = 0; i < N; i++) {
                char path[256];

                snprintf(path, sizeof(path), "/sys/devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00/"
                         "f8b3781a-1e82-4818-a1c3-63d806ec15bb/host0/target0:0:0/0:0:0:%zu/block/sd%zu", i, i);
                disks[i].disk.syspath = strdup(path);
        }
        ck_assert_ptr_null(hvt_index_find(&x, disks[0].disk.syspath));
        srand(7);
        for (unsigned round = 0; round < 20000; round++) {
                size_t i = (size_t) rand() % N;

                if (present[i])
                        hvt_index_remove(&x, &disks[i]);
                else
                        ck_assert_int_eq(hvt_index_add(&x, &disks[i]), 0);
                present[i] = !present[i];
                if (round % 2000 == 0)
                        check_all(&x);
        }
        check_all(&x);
        /* Removing what is not there changes nothing. */
        for (size_t i = 0; i < N; i++)
                if (!present[i])
                        hvt_index_remove(&x, &disks[i]);
        check_all(&x);
        for (size_t i = 0; i < N; i++)
                if (present[i]) {
                        hvt_index_remove(&x, &disks[i]);
                        present[i] = false;
                }
        check_all(&x);
        hvt_index_done(&x);
        for (size_t i = 0; i < N; i++)
                free(disks[i].disk.syspath);
}
END_TEST

int main(void) {
        Suite *s = suite_create("index");
        TCase *tc = tcase_create("churn");

        tcase_add_test(tc, test_churn);
        suite_add_tcase(s, tc);
        return test_run(s);
}
