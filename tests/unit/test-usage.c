/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The in-use checks before a controller is re-probed, on a directory laid out as sysfs lays
 * out a disk (dev, partitions with a partition file, holders/) and on mountinfo and swaps
 * text as the kernel prints them: each kind of use is found and named, an unreadable part
 * is doubt, and an unused disk passes. */
#include <check.h>
#include <limits.h>
#include <sys/stat.h>

#include "testutil.h"
#include "usage.h"

#define MOUNTINFO_BASE \
        "22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n" \
        "25 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n" \
        "30 25 8:15 / /boot/efi rw,relatime shared:3 - vfat /dev/sda15 rw\n"
#define SWAPS_EMPTY "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"

static char dir[PATH_MAX];

/* dir/sdc with dev 8:32, partition sdc1 (8:33), both with empty holders/. */
static char *make_disk(void) {
        char path[PATH_MAX + 64];

        free(test_write_file(dir, ".keep", ""));
        snprintf(path, sizeof(path), "%s/sdc", dir);
        if (access(path, F_OK) == 0)
                return strdup(path);
        ck_assert_int_eq(mkdir(path, 0755), 0);
        free(test_write_file(dir, "sdc/dev", "8:32\n"));
        snprintf(path, sizeof(path), "%s/sdc/holders", dir);
        ck_assert_int_eq(mkdir(path, 0755), 0);
        snprintf(path, sizeof(path), "%s/sdc/sdc1", dir);
        ck_assert_int_eq(mkdir(path, 0755), 0);
        free(test_write_file(dir, "sdc/sdc1/dev", "8:33\n"));
        free(test_write_file(dir, "sdc/sdc1/partition", "1\n"));
        snprintf(path, sizeof(path), "%s/sdc/sdc1/holders", dir);
        ck_assert_int_eq(mkdir(path, 0755), 0);
        /* Not a partition: a directory of the disk without a partition file. */
        snprintf(path, sizeof(path), "%s/sdc/sdcx", dir);
        ck_assert_int_eq(mkdir(path, 0755), 0);
        snprintf(path, sizeof(path), "%s/sdc", dir);
        return strdup(path);
}

static int check(const char *mountinfo, const char *swaps, char *why, size_t size) {
        struct hvt_usage u = { .mountinfo = (char *) mountinfo, .swaps = (char *) swaps };
        char *disk = make_disk();
        int r;

        why[0] = '\0';
        r = hvt_usage_check_disk(&u, disk, why, size);
        free(disk);
        return r;
}

START_TEST(test_unused) {
        char why[256];

        ck_assert_int_eq(check(MOUNTINFO_BASE, SWAPS_EMPTY, why, sizeof(why)), 0);
}
END_TEST

START_TEST(test_mounted) {
        char why[256];

        /* The partition, by device number. */
        ck_assert_int_eq(check(MOUNTINFO_BASE "40 25 8:33 / /data rw - xfs /dev/sdc1 rw\n", SWAPS_EMPTY,
                               why, sizeof(why)), 1);
        ck_assert_str_eq(why, "sdc1 is mounted on /data");
        /* The whole disk, by the source's name (btrfs shows an anonymous device number). */
        ck_assert_int_eq(check(MOUNTINFO_BASE "41 25 0:45 / /srv rw - btrfs /dev/sdc rw\n", SWAPS_EMPTY,
                               why, sizeof(why)), 1);
        ck_assert_str_eq(why, "sdc is mounted on /srv");
        /* The root filesystem is named as such. */
        ck_assert_int_eq(check("25 1 8:33 / / rw - ext4 /dev/root rw\n", SWAPS_EMPTY, why, sizeof(why)), 1);
        ck_assert_str_eq(why, "sdc1 holds the root filesystem");
        /* /dev/sdc10 is not /dev/sdc1, 8:330 is not 8:33. */
        ck_assert_int_eq(check(MOUNTINFO_BASE "42 25 8:330 / /x rw - ext4 /dev/sdc10 rw\n", SWAPS_EMPTY,
                               why, sizeof(why)), 0);
}
END_TEST

START_TEST(test_swap) {
        char why[256];

        ck_assert_int_eq(check(MOUNTINFO_BASE, SWAPS_EMPTY "/dev/sdc                                partition\t4194300\t\t0\t\t-2\n",
                               why, sizeof(why)), 1);
        ck_assert_str_eq(why, "sdc is in use as swap");
        ck_assert_int_eq(check(MOUNTINFO_BASE, SWAPS_EMPTY "/swapfile file 1048572 0 -2\n", why, sizeof(why)), 0);
}
END_TEST

START_TEST(test_holders) {
        char why[256], *disk = make_disk(), link[PATH_MAX + 64];

        snprintf(link, sizeof(link), "%s/sdc1/holders/dm-0", disk);
        ck_assert_int_eq(symlink("../../../dm-0", link), 0);
        ck_assert_int_eq(check(MOUNTINFO_BASE, SWAPS_EMPTY, why, sizeof(why)), 1);
        ck_assert_str_eq(why, "sdc1 is held by dm-0");
        ck_assert_int_eq(unlink(link), 0);

        /* No holders/ at all: cannot tell, so in doubt. */
        snprintf(link, sizeof(link), "%s/holders", disk);
        ck_assert_int_eq(rmdir(link), 0);
        ck_assert_int_eq(check(MOUNTINFO_BASE, SWAPS_EMPTY, why, sizeof(why)), -ENOENT);
        ck_assert_str_eq(why, "cannot read the holders of sdc");
        ck_assert_int_eq(mkdir(link, 0755), 0);
        free(disk);
}
END_TEST

START_TEST(test_claim) {
        ck_assert_int_eq(hvt_usage_claim("../etc/passwd"), -EINVAL);
        ck_assert_int_eq(hvt_usage_claim("hvtuned-no-such-disk"), -ENOENT);
}
END_TEST

int main(void) {
        Suite *s = suite_create("usage");
        TCase *tc = tcase_create("in use");

        tcase_add_test(tc, test_unused);
        tcase_add_test(tc, test_mounted);
        tcase_add_test(tc, test_swap);
        tcase_add_test(tc, test_holders);
        tcase_add_test(tc, test_claim);
        suite_add_tcase(s, tc);
        return test_run(s);
}
