/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The apply step against real kernel sysfs, on a loop device: the bracketed scheduler list,
 * read_ahead_kb kept in whole pages (clamped), EINVAL for nr_requests beyond the tag depth
 * under "none", a scheduler the queue does not offer. And the kernel's answers to single
 * writes through lib/sysfs.c (tests/kernel-answers.h, which the testbed shim must give too):
 * the nr_requests floor and ceilings, read_ahead_kb in pages, the EINVAL paths, the names
 * the scheduler takes. What a plain-file testbed cannot show. Needs root and
 * /dev/loop-control: exits 77 (skip) without them. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "apply.h"
#include "kernel-answers.h"
#include "macro.h"
#include "scheduler.h"
#include "sysfs.h"
#include "testutil.h"

#define SKIP 77

static int loop_nr = -1, loop_fd = -1;
static char queue_dir[64];

static void loop_attach(void) {
        char backing[] = "/tmp/hvtuned-loop.XXXXXX", dev[32];
        int ctl, fd;

        ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
        ck_assert_int_ge(ctl, 0);
        loop_nr = ioctl(ctl, LOOP_CTL_GET_FREE);
        ck_assert_int_ge(loop_nr, 0);
        close(ctl);

        fd = mkstemp(backing);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(ftruncate(fd, 16 << 20), 0);
        unlink(backing);
        snprintf(dev, sizeof(dev), "/dev/loop%d", loop_nr);
        loop_fd = open(dev, O_RDWR | O_CLOEXEC);
        ck_assert_int_ge(loop_fd, 0);
        ck_assert_int_eq(ioctl(loop_fd, LOOP_SET_FD, fd), 0);
        close(fd);
        snprintf(queue_dir, sizeof(queue_dir), "/sys/block/loop%d/queue", loop_nr);

        /* The queue outlives LOOP_CLR_FD: each test starts from what a new loop device has
         * (switching to none also sets nr_requests to the tag depth), whatever ran before. */
        fd = hvt_sysfs_open_dir(queue_dir);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(hvt_sysfs_write(fd, HVT_ATTR_SCHEDULER, "none"), 0);
        ck_assert_int_eq(hvt_sysfs_write(fd, HVT_ATTR_READ_AHEAD_KB, "128"), 0);
        close(fd);
}

static void loop_detach(void) {
        if (loop_fd >= 0) {
                ioctl(loop_fd, LOOP_CLR_FD, 0);
                close(loop_fd);
        }
}

static void read_queue(const char *name, char *buf, size_t size) {
        int fd = hvt_sysfs_open_dir(queue_dir);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_ge(hvt_sysfs_read(fd, name, buf, size), 0);
        close(fd);
}

static const char *active_scheduler(void) {
        static char active[HVT_SCHED_NAME_MAX];
        struct hvt_sched_list list;
        char buf[128];

        read_queue("scheduler", buf, sizeof(buf));
        ck_assert_int_eq(hvt_sched_parse(buf, &list), 0);
        snprintf(active, sizeof(active), "%s", hvt_sched_active(&list));
        return active;
}

static struct hvt_disk loop_disk(void) {
        static char syspath[64];

        snprintf(syspath, sizeof(syspath), "/sys/block/loop%d", loop_nr);
        /* No SCSI LUN: these tests plan queue attributes only. */
        return (struct hvt_disk) { .syspath = syspath, .sysname = syspath + 11, .device_syspath = "/nonexistent" };
}

static const struct hvt_result *run(struct hvt_plan *p, struct hvt_apply *a, enum hvt_attr_id id) {
        struct hvt_disk d = loop_disk();

        hvt_apply_disk(&d, p, 0, NULL, NULL, a);
        for (size_t i = 0; i < a->n; i++)
                if (a->results[i].attr == id)
                        return &a->results[i];
        ck_abort_msg("no result for %d", id);
        return NULL;
}

START_TEST(test_scheduler_brackets) {
        struct hvt_plan p = {};
        struct hvt_apply a;
        const struct hvt_result *r;
        char buf[128];

        struct hvt_sched_list list;
        char other[HVT_SCHED_NAME_MAX] = "", bracketed[HVT_SCHED_NAME_MAX + 2];

        loop_attach();
        /* Any elevator this kernel has besides none (mq-deadline on every distro kernel). */
        read_queue("scheduler", buf, sizeof(buf));
        ck_assert_int_eq(hvt_sched_parse(buf, &list), 0);
        for (size_t i = 0; i < list.n && !*other; i++)
                if (strcmp(list.names[i], "none") != 0)
                        strcpy(other, list.names[i]);
        ck_assert_msg(*other, "the kernel offers no elevator but none: %s", buf);

        ck_assert_int_eq(hvt_setting_set_sched(&p.want[HVT_ATTR_SCHEDULER], other), 0);
        r = run(&p, &a, HVT_ATTR_SCHEDULER);
        ck_assert_int_eq(r->outcome, HVT_APPLIED);
        read_queue("scheduler", buf, sizeof(buf));
        snprintf(bracketed, sizeof(bracketed), "[%s]", other);
        ck_assert_ptr_nonnull(strstr(buf, bracketed));

        ck_assert_int_eq(run(&p, &a, HVT_ATTR_SCHEDULER)->outcome, HVT_UNCHANGED);

        ck_assert_int_eq(hvt_setting_set_sched(&p.want[HVT_ATTR_SCHEDULER], "none"), 0);
        r = run(&p, &a, HVT_ATTR_SCHEDULER);
        ck_assert_int_eq(r->outcome, HVT_APPLIED);
        ck_assert_str_eq(r->from, other);
        read_queue("scheduler", buf, sizeof(buf));
        ck_assert_ptr_nonnull(strstr(buf, "[none]"));
        loop_detach();
}
END_TEST

START_TEST(test_read_ahead_clamped) {
        struct hvt_plan p = {};
        struct hvt_apply a;
        const struct hvt_result *r;

        loop_attach();
        ck_assert_int_eq(hvt_setting_set_int(&p.want[HVT_ATTR_READ_AHEAD_KB], HVT_ATTR_READ_AHEAD_KB, 4095), 0);
        r = run(&p, &a, HVT_ATTR_READ_AHEAD_KB);
        /* Kept in whole pages: 4095 KiB becomes 4092 on 4 KiB pages. */
        if (sysconf(_SC_PAGESIZE) == 4096) {
                ck_assert_int_eq(r->outcome, HVT_CLAMPED);
                ck_assert_str_eq(r->kept, "4092");
        }
        ck_assert_str_eq(r->to, "4095");

        ck_assert_int_eq(hvt_setting_set_int(&p.want[HVT_ATTR_READ_AHEAD_KB], HVT_ATTR_READ_AHEAD_KB, 1024), 0);
        ck_assert_int_eq(run(&p, &a, HVT_ATTR_READ_AHEAD_KB)->outcome, HVT_APPLIED);
        ck_assert_int_eq(run(&p, &a, HVT_ATTR_READ_AHEAD_KB)->outcome, HVT_UNCHANGED);
        loop_detach();
}
END_TEST

START_TEST(test_kernel_rejects) {
        struct hvt_plan p = {};
        struct hvt_apply a;
        const struct hvt_result *r;
        char before[32], after[32];

        loop_attach();
        read_queue("nr_requests", before, sizeof(before));
        ck_assert_int_eq(hvt_setting_set_sched(&p.want[HVT_ATTR_SCHEDULER], "none"), 0);
        /* Beyond the tag depth under "none": the kernel says EINVAL, and keeps its value. */
        ck_assert_int_eq(hvt_setting_set_int(&p.want[HVT_ATTR_NR_REQUESTS], HVT_ATTR_NR_REQUESTS, 10240), 0);
        ck_assert_int_eq(hvt_setting_set_int(&p.want[HVT_ATTR_NOMERGES], HVT_ATTR_NOMERGES, 1), 0);
        r = run(&p, &a, HVT_ATTR_NR_REQUESTS);
        ck_assert_int_eq(r->outcome, HVT_FAILED);
        ck_assert_int_eq(r->error, EINVAL);
        read_queue("nr_requests", after, sizeof(after));
        ck_assert_str_eq(before, after);
        /* The next attribute of the same pass is still applied. */
        ck_assert_int_eq(a.results[a.n - 1].attr, HVT_ATTR_NOMERGES);
        ck_assert_int_eq(a.results[a.n - 1].outcome, HVT_APPLIED);
        ck_assert_int_eq(run(&p, &a, HVT_ATTR_NOMERGES)->outcome, HVT_UNCHANGED);
        ck_assert_int_eq(hvt_setting_set_int(&p.want[HVT_ATTR_NOMERGES], HVT_ATTR_NOMERGES, 0), 0);
        ck_assert_int_eq(run(&p, &a, HVT_ATTR_NOMERGES)->outcome, HVT_APPLIED);

        /* A scheduler this kernel does not have is never written. */
        ck_assert_int_eq(hvt_setting_set_sched(&p.want[HVT_ATTR_SCHEDULER], "hvtunedtest"), 0);
        r = run(&p, &a, HVT_ATTR_SCHEDULER);
        ck_assert_int_eq(r->outcome, HVT_UNSUPPORTED);
        ck_assert_ptr_nonnull(strstr(r->offered, "none"));
        loop_detach();
}
END_TEST

/* The table of tests/kernel-answers.h, which the testbed shim is checked against too. */
START_TEST(test_kernel_answers) {
        loop_attach();
        kernel_answers_check(queue_dir);
        loop_detach();
}
END_TEST

/* Two names the kernel takes beyond its list, "nonexistent" (none) and "deadline"
 * (mq-deadline): apply never writes a name the list does not show, so neither can surprise
 * it. */
START_TEST(test_apply_names_beyond_the_list) {
        static const char *const names[] = { "nonexistent", "deadline" };
        struct hvt_sched_list list;
        struct hvt_plan p = {};
        struct hvt_apply a;
        char buf[128], other[HVT_SCHED_NAME_MAX] = "";
        int fd;

        loop_attach();
        /* An elevator that either name, written, would replace: kyber or bfq. */
        read_queue("scheduler", buf, sizeof(buf));
        ck_assert_int_eq(hvt_sched_parse(buf, &list), 0);
        for (size_t i = 0; i < list.n && !*other; i++)
                if (strcmp(list.names[i], "none") != 0 && strcmp(list.names[i], "mq-deadline") != 0)
                        strcpy(other, list.names[i]);
        ck_assert_msg(*other, "the kernel offers no elevator but none and mq-deadline: %s", buf);
        fd = hvt_sysfs_open_dir(queue_dir);
        ck_assert_int_eq(hvt_sysfs_write(fd, HVT_ATTR_SCHEDULER, other), 0);
        close(fd);
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                ck_assert_int_eq(hvt_setting_set_sched(&p.want[HVT_ATTR_SCHEDULER], names[i]), 0);
                ck_assert_int_eq(run(&p, &a, HVT_ATTR_SCHEDULER)->outcome, HVT_UNSUPPORTED);
                ck_assert_str_eq(active_scheduler(), other);
        }
        loop_detach();
}
END_TEST

int main(void) {
        Suite *s = suite_create("kernel");
        TCase *tc = tcase_create("loop");

        if (geteuid() != 0 || access("/dev/loop-control", W_OK) < 0) {
                printf("SKIP: needs root and /dev/loop-control for a real loop device\n");
                return SKIP;
        }
        tcase_add_test(tc, test_scheduler_brackets);
        tcase_add_test(tc, test_read_ahead_clamped);
        tcase_add_test(tc, test_kernel_rejects);
        tcase_add_test(tc, test_kernel_answers);
        tcase_add_test(tc, test_apply_names_beyond_the_list);
        suite_add_tcase(s, tc);
        return test_run(s);
}
