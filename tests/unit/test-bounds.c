/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel's bounds (lib/bounds.c), on a disk directory made here: nr_requests over the tag
 * depth under none, over 2048 under a scheduler (the one named, or the disk's), max_sectors_kb
 * over max_hw_sectors_kb; none said where none is broken; and what a file alone shows. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bounds.h"
#include "testutil.h"

static char dir[] = "/tmp/hvtuned-bounds.XXXXXX";

static void put(const char *name, const char *text) {
        char path[256];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        fputs(text, f);
        ck_assert_int_eq(fclose(f), 0);
}

static int queue_dir(void) {
        char path[256];
        int fd;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/queue", dir);
        ck_assert_int_eq(mkdir(path, 0700), 0);
        snprintf(path, sizeof(path), "%s/mq", dir);
        ck_assert_int_eq(mkdir(path, 0700), 0);
        snprintf(path, sizeof(path), "%s/mq/0", dir);
        ck_assert_int_eq(mkdir(path, 0700), 0);
        put("mq/0/nr_tags", "2534\n");
        put("queue/max_hw_sectors_kb", "2048\n");
        put("queue/scheduler", "[none] mq-deadline\n");
        snprintf(path, sizeof(path), "%s/queue", dir);
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        return fd;
}

static void cleanup(int fd) {
        char cmd[300];

        close(fd);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        ck_assert_int_eq(system(cmd), 0);
        strcpy(dir, "/tmp/hvtuned-bounds.XXXXXX");
}

START_TEST(test_broken) {
        int fd = queue_dir();
        char why[64] = "";

        ck_assert_int_eq(hvt_bound_broken(fd, HVT_ATTR_NR_REQUESTS, NULL, "4000", why, sizeof(why)), 1);
        ck_assert_str_eq(why, "over the tag depth 2534");
        ck_assert_int_eq(hvt_bound_broken(fd, HVT_ATTR_NR_REQUESTS, NULL, "2534", why, sizeof(why)), 0);
        /* under a scheduler, named or the disk's own, the tag depth is no bound: 2048 is */
        ck_assert_int_eq(hvt_bound_broken(fd, HVT_ATTR_NR_REQUESTS, "mq-deadline", "2500", why, sizeof(why)), 1);
        ck_assert_str_eq(why, "over the 2048 a scheduler takes");
        put("queue/scheduler", "none [mq-deadline]\n");
        ck_assert_int_eq(hvt_bound_broken(fd, HVT_ATTR_NR_REQUESTS, NULL, "2048", why, sizeof(why)), 0);
        ck_assert_int_eq(hvt_bound_broken(fd, HVT_ATTR_NR_REQUESTS, NULL, "2049", why, sizeof(why)), 1);
        ck_assert_int_eq(hvt_bound_broken(fd, HVT_ATTR_NR_REQUESTS, "none", "2535", why, sizeof(why)), 1);
        ck_assert_str_eq(why, "over the tag depth 2534");
        ck_assert_int_eq(hvt_bound_broken(fd, HVT_ATTR_MAX_SECTORS_KB, NULL, "4096", why, sizeof(why)), 1);
        ck_assert_str_eq(why, "over queue/max_hw_sectors_kb 2048");
        ck_assert_int_eq(hvt_bound_broken(fd, HVT_ATTR_MAX_SECTORS_KB, NULL, "2048", why, sizeof(why)), 0);
        /* no bound the kernel states */
        ck_assert_int_eq(hvt_bound_broken(fd, HVT_ATTR_READ_AHEAD_KB, NULL, "999999", why, sizeof(why)), 0);
        /* a bound that cannot be read is no bound said */
        put("mq/0/nr_tags", "many\n");
        ck_assert_int_eq(hvt_bound_broken(fd, HVT_ATTR_NR_REQUESTS, "none", "4000", why, sizeof(why)), -EINVAL);
        cleanup(fd);
}
END_TEST

START_TEST(test_setting) {
        struct hvt_setting nr = { .set = true, .num = 4000 }, sched = { .set = true, .text = "bfq" };
        char why[384];

        ck_assert_int_eq(hvt_bound_setting(&nr, &sched, why, sizeof(why)), 1);
        ck_assert_str_eq(why, "queue.nr_requests = 4000 is over the 2048 a scheduler takes: the kernel refuses it "
                              "under bfq");
        sched.set = false;
        ck_assert_int_eq(hvt_bound_setting(&nr, &sched, why, sizeof(why)), 1);
        ck_assert_ptr_nonnull(strstr(why, "with none where the disk's tag depth is lower"));
        nr.num = 2048;
        ck_assert_int_eq(hvt_bound_setting(&nr, &sched, why, sizeof(why)), 0);
        nr = (struct hvt_setting) { .set = true, .at_most = true, .num = 4000 };
        ck_assert_int_eq(hvt_bound_setting(&nr, NULL, why, sizeof(why)), 0);
}
END_TEST

int main(void) {
        Suite *s = suite_create("bounds");
        TCase *tc = tcase_create("bounds");

        tcase_add_test(tc, test_broken);
        tcase_add_test(tc, test_setting);
        suite_add_tcase(s, tc);
        return test_run(s);
}
