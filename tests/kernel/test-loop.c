/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The apply step against real kernel sysfs, on a loop device: the bracketed scheduler list,
 * read_ahead_kb kept in whole pages (clamped), EINVAL for nr_requests beyond the tag depth
 * under "none", a scheduler the queue does not offer. And the kernel's answers to single
 * writes through lib/sysfs.c, which tests/emulate/sysfs-kernel.c gives the testbeds: the
 * nr_requests floor and ceilings, read_ahead_kb in pages, the EINVAL paths, the names the
 * scheduler takes. What a plain-file testbed cannot show. Needs root and /dev/loop-control:
 * exits 77 (skip) without them. */
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

/* One write through the lib's sysfs layer, as apply makes it: 0 or -errno. */
static int write_queue(enum hvt_attr_id id, const char *value) {
        int fd = hvt_sysfs_open_dir(queue_dir), r;

        ck_assert_int_ge(fd, 0);
        r = hvt_sysfs_write(fd, id, value);
        close(fd);
        return r;
}

/* Writes value, which the kernel must take, and checks what it reads back. */
static void write_reads_back(enum hvt_attr_id id, const char *value, const char *want) {
        char buf[128];

        ck_assert_msg(write_queue(id, value) == 0, "%s = %s: %s", hvt_attr_get(id)->name, value,
                      strerror(-write_queue(id, value)));
        read_queue(hvt_attr_get(id)->name, buf, sizeof(buf));
        ck_assert_msg(strcmp(buf, want) == 0, "%s = %s reads back \"%s\", not \"%s\"",
                      hvt_attr_get(id)->name, value, buf, want);
}

/* Writes value, which the kernel must refuse with EINVAL, leaving what it had. */
static void write_refused(enum hvt_attr_id id, const char *value) {
        char before[128], after[128];

        read_queue(hvt_attr_get(id)->name, before, sizeof(before));
        ck_assert_msg(write_queue(id, value) == -EINVAL, "%s = %s: not EINVAL", hvt_attr_get(id)->name, value);
        read_queue(hvt_attr_get(id)->name, after, sizeof(after));
        ck_assert_str_eq(before, after);
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

/* Writes a scheduler name the kernel must take; the list then shows active in brackets, and
 * only it: "[none] mq-deadline kyber bfq ", "none [mq-deadline] kyber bfq ". */
static void write_scheduler(const char *name, const char *active) {
        char buf[128], bracketed[HVT_SCHED_NAME_MAX + 2];
        const char *open;

        ck_assert_msg(write_queue(HVT_ATTR_SCHEDULER, name) == 0, "scheduler = %s refused", name);
        read_queue("scheduler", buf, sizeof(buf));
        snprintf(bracketed, sizeof(bracketed), "[%s]", active);
        open = strchr(buf, '[');
        ck_assert_msg(open && strncmp(open, bracketed, strlen(bracketed)) == 0 && !strchr(open + 1, '[') &&
                      strchr(buf, ']') == open + strlen(active) + 1,
                      "scheduler = %s reads back \"%s\", not %s alone bracketed", name, buf, bracketed);
        ck_assert_str_eq(active_scheduler(), active);
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

/* queue_requests_store(): below BLKDEV_MIN_RQ (4) is raised to 4; above the tag depth
 * without an elevator, or above MAX_SCHED_RQ (2048) with one, EINVAL. */
START_TEST(test_nr_requests_limits) {
        char depth[32], over[32];

        loop_attach();
        write_scheduler("none", "none");
        /* Under none the default is the whole tag depth. */
        read_queue("nr_requests", depth, sizeof(depth));
        snprintf(over, sizeof(over), "%ld", strtol(depth, NULL, 10) + 1);
        write_reads_back(HVT_ATTR_NR_REQUESTS, "1", "4");
        write_reads_back(HVT_ATTR_NR_REQUESTS, "7", "7");
        write_reads_back(HVT_ATTR_NR_REQUESTS, "3", "4");
        write_reads_back(HVT_ATTR_NR_REQUESTS, "0", "4");
        write_reads_back(HVT_ATTR_NR_REQUESTS, "5", "5");
        write_reads_back(HVT_ATTR_NR_REQUESTS, depth, depth);
        write_refused(HVT_ATTR_NR_REQUESTS, over);

        write_scheduler("mq-deadline", "mq-deadline");
        write_reads_back(HVT_ATTR_NR_REQUESTS, "2", "4");
        write_reads_back(HVT_ATTR_NR_REQUESTS, "2048", "2048");
        write_refused(HVT_ATTR_NR_REQUESTS, "2049");
        loop_detach();
}
END_TEST

/* queue_ra_store(): kept in whole pages, rounded down; the number as queue_var_store() takes
 * it, a decimal up to UINT_MAX. */
START_TEST(test_read_ahead_pages) {
        const long page_kb = sysconf(_SC_PAGESIZE) / 1024;
        static const char *const values[] = { "5", "1", "4095", "8", "0", "4294967295", "128" };

        loop_attach();
        for (size_t i = 0; i < ELEMENTSOF(values); i++) {
                long long v = strtoll(values[i], NULL, 10);
                char want[32];

                snprintf(want, sizeof(want), "%lld", v / page_kb * page_kb);
                write_reads_back(HVT_ATTR_READ_AHEAD_KB, values[i], want);
        }
        /* 4 KiB pages: 5 reads back as 4, 1 as 0. */
        if (page_kb == 4)
                write_reads_back(HVT_ATTR_READ_AHEAD_KB, "5", "4");
        write_refused(HVT_ATTR_READ_AHEAD_KB, "4294967296");
        write_refused(HVT_ATTR_READ_AHEAD_KB, "-1");
        write_refused(HVT_ATTR_READ_AHEAD_KB, "abc");
        loop_detach();
}
END_TEST

/* What the kernel refuses: numbers kstrtoul() does not take, names no elevator has. */
START_TEST(test_einval) {
        loop_attach();
        write_refused(HVT_ATTR_NR_REQUESTS, "abc");
        write_refused(HVT_ATTR_NR_REQUESTS, "-1");
        write_refused(HVT_ATTR_NR_REQUESTS, "0x10");
        write_refused(HVT_ATTR_NR_REQUESTS, "4294967296");
        write_refused(HVT_ATTR_SCHEDULER, "hvtunedtest");
        write_refused(HVT_ATTR_SCHEDULER, "NONE");
        write_refused(HVT_ATTR_SCHEDULER, "mq-deadline-and-more");
        loop_detach();
}
END_TEST

/* The list keeps its names and moves the brackets. Two things the kernel takes that are not
 * in the list: any name that starts with "none" (elevator_change() compares 4 characters:
 * "nonexistent" is none) and mq-deadline's alias "deadline". apply never writes a name the
 * list does not show, so neither can surprise it. */
START_TEST(test_scheduler_names) {
        struct hvt_plan p = {};
        struct hvt_apply a;
        const struct hvt_result *r;

        loop_attach();
        write_scheduler("mq-deadline", "mq-deadline");
        write_scheduler("nonexistent", "none");
        write_scheduler("deadline", "mq-deadline");
        write_scheduler("none", "none");
        write_scheduler("mq-deadline", "mq-deadline");

        ck_assert_int_eq(hvt_setting_set_sched(&p.want[HVT_ATTR_SCHEDULER], "nonexistent"), 0);
        r = run(&p, &a, HVT_ATTR_SCHEDULER);
        ck_assert_int_eq(r->outcome, HVT_UNSUPPORTED);
        ck_assert_str_eq(active_scheduler(), "mq-deadline");
        ck_assert_int_eq(hvt_setting_set_sched(&p.want[HVT_ATTR_SCHEDULER], "deadline"), 0);
        ck_assert_int_eq(run(&p, &a, HVT_ATTR_SCHEDULER)->outcome, HVT_UNSUPPORTED);
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
        tcase_add_test(tc, test_nr_requests_limits);
        tcase_add_test(tc, test_read_ahead_pages);
        tcase_add_test(tc, test_einval);
        tcase_add_test(tc, test_scheduler_names);
        suite_add_tcase(s, tc);
        return test_run(s);
}
