/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The count phrase of every summary (lib/counts.c): the disks by kind, each kind on its own
 * controllers, "0 storvsc" on a VM of NVMe alone, and what a short buffer keeps. */
#include <check.h>
#include <string.h>

#include "counts.h"
#include "testutil.h"

static const char *phrase(size_t storvsc, size_t sc, size_t nvme, size_t nc) {
        static char buf[160];
        struct hvt_disk_counts c = { .storvsc = storvsc, .storvsc_controllers = sc, .nvme = nvme,
                                     .nvme_controllers = nc };

        hvt_disk_counts_format(&c, buf, sizeof(buf));
        return buf;
}

START_TEST(test_phrases) {
        ck_assert_str_eq(phrase(6, 3, 0, 0), "6 storvsc disks on 3 controllers");
        ck_assert_str_eq(phrase(1, 1, 0, 0), "1 storvsc disk on 1 controller");
        ck_assert_str_eq(phrase(0, 0, 4, 2), "4 Azure NVMe disks on 2 controllers, 0 storvsc");
        ck_assert_str_eq(phrase(4, 2, 2, 2), "4 storvsc disks on 2 controllers, 2 Azure NVMe disks on 2 controllers");
        ck_assert_str_eq(phrase(0, 0, 0, 0), "0 disks");
}
END_TEST

START_TEST(test_short_buffer) {
        struct hvt_disk_counts c = { .storvsc = 4, .storvsc_controllers = 2, .nvme = 2, .nvme_controllers = 2 };
        char buf[20];

        hvt_disk_counts_format(&c, buf, sizeof(buf));
        ck_assert_str_eq(buf, "4 storvsc disks on ");
        hvt_disk_counts_format(&c, buf, 1);
        ck_assert_str_eq(buf, "");
}
END_TEST

/* An NVMe disk counts under its controller (or its multipath head's subsystem), a storvsc
 * disk under its VMBus device. */
START_TEST(test_keys) {
        struct hvt_disk nvme = { .kind = HVT_KIND_NVME_ACCELERATOR, .controller = "{0d5b1c3e}",
                                 .device_syspath = (char *) "/sys/devices/x/nvme/nvme0" };
        struct hvt_disk scsi = { .kind = HVT_KIND_SCSI, .controller = "{f8b3781a}",
                                 .device_syspath = (char *) "/sys/devices/x/host0/target0:0:0/0:0:0:0" };

        ck_assert_str_eq(hvt_disk_count_key(&nvme), "/sys/devices/x/nvme/nvme0");
        ck_assert_str_eq(hvt_disk_count_key(&scsi), "{f8b3781a}");
}
END_TEST

int main(void) {
        Suite *s = suite_create("counts");
        TCase *tc = tcase_create("counts");

        tcase_add_test(tc, test_phrases);
        tcase_add_test(tc, test_short_buffer);
        tcase_add_test(tc, test_keys);
        suite_add_tcase(s, tc);
        return test_run(s);
}
