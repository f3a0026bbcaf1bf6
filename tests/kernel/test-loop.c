/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The apply step against real kernel sysfs, on a loop device: the bracketed scheduler list,
 * read_ahead_kb kept in whole pages (clamped), EINVAL for nr_requests beyond the tag depth
 * under "none", a scheduler the queue does not offer. And the kernel's answers to single
 * writes through lib/sysfs.c (tests/kernel/kernel-answers.h, which the testbed shim must give too):
 * the nr_requests floor and ceilings, read_ahead_kb in pages, the EINVAL paths, the names
 * the scheduler takes. What a plain-file testbed cannot show. Needs root and
 * /dev/loop-control: exits 77 (skip) without them. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <linux/loop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apply.h"
#include "kernel-answers.h"
#include "macro.h"
#include "scheduler.h"
#include "sysfs.h"
#include "testutil.h"
#include "track.h"

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

/* The running kernel's release ($HVTUNED_TEST_KERNEL names another), and its column of
 * tests/kernel/kernel-answers.h (a vm tier guest's own, by uname). */
static const char *running_kernel(void) {
        static struct utsname u;
        const char *kernel = getenv("HVTUNED_TEST_KERNEL");

        if (kernel)
                return kernel;
        ck_assert_int_eq(uname(&u), 0);
        return u.release;
}

static int running_column(void) {
        return kernel_column(running_kernel());
}

/* 5.10's loop driver gives its queues no elevator at all: "[none]" is the whole list, and
 * elv_iosched_store() takes an elevator's name and does nothing with it (no error: only the
 * read-back tells). There, a test of what an elevator does checks that instead. Any later
 * kernel must offer one. */
static bool loop_without_elevators(void) {
        struct hvt_sched_list list;
        char buf[128];
        int fd, r;

        read_queue("scheduler", buf, sizeof(buf));
        ck_assert_int_eq(hvt_sched_parse(buf, &list), 0);
        if (list.n > 1 || running_column() != KERNEL_5_10)
                return false;
        ck_assert_str_eq(active_scheduler(), "none");
        fd = hvt_sysfs_open_dir(queue_dir);
        ck_assert_int_ge(fd, 0);
        r = hvt_sysfs_write(fd, HVT_ATTR_SCHEDULER, "mq-deadline");
        close(fd);
        ck_assert_int_eq(r, 0);
        ck_assert_str_eq(active_scheduler(), "none");
        return true;
}

START_TEST(test_scheduler_brackets) {
        struct hvt_plan p = {};
        struct hvt_apply a;
        const struct hvt_result *r;
        char buf[128];

        struct hvt_sched_list list;
        char other[HVT_SCHED_NAME_MAX] = "", bracketed[HVT_SCHED_NAME_MAX + 2];

        loop_attach();
        if (loop_without_elevators()) {
                loop_detach();
                return;
        }
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

/* The table of tests/kernel/kernel-answers.h, which the testbed shim is checked against too. */
START_TEST(test_kernel_answers) {
        loop_attach();
        if (loop_without_elevators()) {
                loop_detach();
                return;
        }
        kernel_answers_check(queue_dir);
        loop_detach();
}
END_TEST

/* The couplings of tests/kernel/kernel-answers.h, in the running kernel's column (a guest of the vm
 * tier names its own with $HVTUNED_TEST_KERNEL). */
START_TEST(test_kernel_couplings) {
        loop_attach();
        kernel_couplings_check(queue_dir, running_kernel());
        loop_detach();
}
END_TEST

/* tests/kernel/kernel-answers.h's kernel_trylock, in the running kernel's column: scheduler writes
 * while a child writes nr_requests of the same queue without pause (the same tag set's lock)
 * get EBUSY where the kernel takes a trylock, and never where it waits. */
START_TEST(test_trylock_busy) {
        static const char *const names[] = { "mq-deadline", "none" };
        unsigned busy = 0, tries = 40;
        int col = running_column(), fd;
        pid_t child;

        ck_assert_int_ge(col, 0);
        loop_attach();
        fd = hvt_sysfs_open_dir(queue_dir);
        ck_assert_int_ge(fd, 0);
        child = fork();
        ck_assert_int_ge(child, 0);
        if (child == 0)
                for (unsigned i = 0; ; i++)
                        (void) hvt_sysfs_write(fd, HVT_ATTR_NR_REQUESTS, i % 2 ? "32" : "33");
        usleep(100 * 1000);
        for (unsigned i = 0; i < tries; i++) {
                int r = hvt_sysfs_write(fd, HVT_ATTR_SCHEDULER, names[i % 2]);

                ck_assert_msg(r == 0 || r == -EBUSY, "scheduler write %u: %s", i, strerror(-r));
                busy += r == -EBUSY;
        }
        ck_assert_int_eq(kill(child, SIGKILL), 0);
        ck_assert_int_eq(waitpid(child, NULL, 0), child);
        close(fd);
        if (kernel_trylock[col])
                ck_assert_msg(busy > 0, "no scheduler write of %u was busy", tries);
        else
                ck_assert_msg(busy == 0, "%u scheduler writes of %u were busy on a kernel that waits", busy, tries);
        printf("test_trylock_busy: %u of %u scheduler writes busy\n", busy, tries);
        loop_detach();
}
END_TEST

/* Every writable attribute of queue/, "name=value" a line, the scheduler as its active name:
 * what a restore must leave exactly as it was. */
static void snapshot_queue(char *buf, size_t size) {
        struct dirent **names;
        size_t off = 0;
        int n, fd = hvt_sysfs_open_dir(queue_dir);

        ck_assert_int_ge(fd, 0);
        n = scandir(queue_dir, &names, NULL, alphasort);
        ck_assert_int_ge(n, 0);
        buf[0] = '\0';
        for (int i = 0; i < n; i++) {
                char value[512];
                struct stat st;

                if (fstatat(fd, names[i]->d_name, &st, 0) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0200) &&
                    hvt_sysfs_read(fd, names[i]->d_name, value, sizeof(value)) >= 0)
                        off += (size_t) snprintf(buf + off, size - off, "%s=%s\n", names[i]->d_name, value);
                free(names[i]);
        }
        free(names);
        close(fd);
}

static void write_queue(const char *name, const char *value) {
        char path[128];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", queue_dir, name);
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_ge(fputs(value, f), 0);
        ck_assert_int_eq(fclose(f), 0);
}

static int take_originals(const struct hvt_apply *found, void *userdata) {
        bool taken[_HVT_ATTR_DISK_MAX];

        return hvt_track_originals(userdata, found, taken) < 0 ? -EIO : 0;
}

/* A tune pass as daemon/tune.c runs one: the restore the plan gives back, then the plan. */
static void tune_pass(struct hvt_slots *s, const struct hvt_plan *config, struct hvt_apply *a) {
        struct hvt_verdict v[_HVT_ATTR_DISK_MAX];
        struct hvt_plan plan = *config, back;
        struct hvt_tally tally;
        struct hvt_disk d = loop_disk();

        ck_assert_int_eq(hvt_track_plan(s, &plan, &back), 0);
        if (hvt_plan_count(&back) > 0) {
                hvt_apply_disk(&d, &back, HVT_APPLY_RESTORE, NULL, NULL, a);
                ck_assert_uint_eq(hvt_track_restored(s, a, v), 0);
        }
        hvt_apply_disk(&d, &plan, 0, take_originals, s, a);
        hvt_track_applied(s, a, v, &tally);
        ck_assert_uint_eq(tally.failed, 0);
}

static void stop(struct hvt_slots *s, struct hvt_apply *a) {
        struct hvt_verdict v[_HVT_ATTR_DISK_MAX];
        struct hvt_plan all;
        struct hvt_disk d = loop_disk();

        hvt_track_restore_all(s, &all);
        hvt_apply_disk(&d, &all, HVT_APPLY_RESTORE, NULL, NULL, a);
        ck_assert_uint_eq(hvt_track_restored(s, a, v), 0);
}

/* Whether a write of cause raises read_ahead_kb on the running kernel, as its column of
 * tests/kernel/kernel-answers.h's couplings says: the row of cause watching read_ahead_kb shows
 * something else than the read_ahead_kb row before it wrote (5.10 and 6.1: never). */
static bool knocks_on_read_ahead(enum hvt_attr_id cause) {
        const char *ra = NULL;
        int col = running_column();

        ck_assert_int_ge(col, 0);
        for (size_t i = 0; i < ELEMENTSOF(kernel_couplings); i++) {
                const struct kernel_coupling *c = &kernel_couplings[i];

                if (c->attr == HVT_ATTR_READ_AHEAD_KB)
                        ra = c->value;
                else if (c->attr == cause && c->watch == HVT_ATTR_READ_AHEAD_KB && ra)
                        return strcmp(c->shows[col], ra) != 0;
        }
        ck_abort_msg("no coupling row of %s with read_ahead_kb", hvt_attr_get(cause)->name);
        return false;
}

/* The run, on this kernel's limits updates (6.9+: a write of max_sectors_kb, and from
 * 6.11 of add_random or iostats, recomputes read-ahead; on 6.15+ a rotational disk's to twice
 * max_sectors_kb): max_sectors_kb (or add_random) managed, read_ahead_kb not, its original 0
 * or 64. The knock-on is told, recorded, and after the stop every writable attribute of
 * queue/ shows what the operator left. */
static void knock_on_run(const char *cause, const char *value, const char *ra) {
        enum hvt_attr_id id = (enum hvt_attr_id) hvt_attr_lookup(HVT_GROUP_QUEUE, cause);
        char before[8192], after[8192];
        struct hvt_slots s = {};
        struct hvt_plan config = {};
        struct hvt_apply a;
        const struct hvt_result *r;

        loop_attach();
        write_queue("rotational", "1");
        write_queue("max_sectors_kb", "128");
        write_queue("add_random", "0");
        write_queue("read_ahead_kb", ra);
        snapshot_queue(before, sizeof(before));

        ck_assert_int_eq(hvt_setting_from_kernel(&config.want[id], id, value), 0);
        tune_pass(&s, &config, &a);
        r = hvt_apply_find(&a, HVT_ATTR_READ_AHEAD_KB);
        if (!knocks_on_read_ahead(id)) {
                /* This kernel leaves read-ahead alone: watched, no knock-on told. */
                ck_assert_msg(!r || r->outcome != HVT_KNOCKED_ON,
                              "%s = %s: a knock-on on read_ahead_kb told on a kernel without the coupling", cause, value);
                goto stop;
        }
        ck_assert_msg(r, "%s = %s: no result for read_ahead_kb (%s)", cause, value, before);
        ck_assert_int_eq(r->outcome, HVT_KNOCKED_ON);
        ck_assert_int_eq(r->cause, id);
        ck_assert_str_eq(r->from, ra);
        ck_assert_ptr_nonnull(hvt_slot_get(&s, HVT_ATTR_READ_AHEAD_KB));
        ck_assert_str_eq(hvt_slot_get(&s, HVT_ATTR_READ_AHEAD_KB)->orig, ra);
        /* A second pass: nothing written, nothing knocked on, and no restore of it yet. */
        tune_pass(&s, &config, &a);
        ck_assert_ptr_null(hvt_apply_find(&a, HVT_ATTR_READ_AHEAD_KB));
        ck_assert_int_eq(hvt_apply_find(&a, id)->outcome, HVT_UNCHANGED);

stop:
        stop(&s, &a);
        snapshot_queue(after, sizeof(after));
        ck_assert_msg(strcmp(before, after) == 0, "%s = %s, read_ahead_kb %s: before the run\n%s\nafter the stop\n%s",
                      cause, value, ra, before, after);
        hvt_slots_done(&s);
        loop_detach();
}

START_TEST(test_knock_on_read_ahead_restored) {
        knock_on_run("max_sectors_kb", "256", "64");
        knock_on_run("max_sectors_kb", "256", "0");
        knock_on_run("add_random", "1", "0");
        knock_on_run("add_random", "1", "64");
}
END_TEST

/* The knock-on changed by the operator after hvtuned's write: their value stays, told. */
START_TEST(test_knock_on_changed_since_left) {
        struct hvt_slots s = {};
        struct hvt_plan config = {};
        struct hvt_apply a;
        const struct hvt_result *r;
        char buf[32];

        loop_attach();
        write_queue("rotational", "1");
        write_queue("max_sectors_kb", "128");
        write_queue("read_ahead_kb", "64");
        ck_assert_int_eq(hvt_setting_set_int(&config.want[HVT_ATTR_MAX_SECTORS_KB], HVT_ATTR_MAX_SECTORS_KB, 256), 0);
        tune_pass(&s, &config, &a);
        if (!knocks_on_read_ahead(HVT_ATTR_MAX_SECTORS_KB)) {
                /* No knock-on to have been changed since: the operator's later value is theirs,
                 * never "put back". */
                r = hvt_apply_find(&a, HVT_ATTR_READ_AHEAD_KB);
                ck_assert(!r || r->outcome != HVT_KNOCKED_ON);
                write_queue("read_ahead_kb", "4096");
                stop(&s, &a);
                r = hvt_apply_find(&a, HVT_ATTR_READ_AHEAD_KB);
                ck_assert_msg(!r || r->outcome != HVT_APPLIED, "read_ahead_kb put back at stop: %s -> %s",
                              r ? r->from : "", r ? r->to : "");
                read_queue("read_ahead_kb", buf, sizeof(buf));
                ck_assert_str_eq(buf, "4096");
                hvt_slots_done(&s);
                loop_detach();
                return;
        }
        ck_assert_int_eq(hvt_apply_find(&a, HVT_ATTR_READ_AHEAD_KB)->outcome, HVT_KNOCKED_ON);
        write_queue("read_ahead_kb", "4096");
        stop(&s, &a);
        r = hvt_apply_find(&a, HVT_ATTR_READ_AHEAD_KB);
        ck_assert_ptr_nonnull(r);
        ck_assert_int_eq(r->outcome, HVT_LEFT);
        ck_assert_str_eq(r->from, "4096");
        ck_assert_str_eq(r->to, "64");
        read_queue("read_ahead_kb", buf, sizeof(buf));
        ck_assert_str_eq(buf, "4096");
        read_queue("max_sectors_kb", buf, sizeof(buf));
        ck_assert_str_eq(buf, "128");
        ck_assert(!hvt_slot_get(&s, HVT_ATTR_READ_AHEAD_KB)->orig_set);  /* not put back later either */
        hvt_slots_done(&s);
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
        if (loop_without_elevators()) {
                loop_detach();
                return;
        }
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
        tcase_add_test(tc, test_kernel_couplings);
        tcase_add_test(tc, test_trylock_busy);
        tcase_add_test(tc, test_apply_names_beyond_the_list);
        tcase_add_test(tc, test_knock_on_read_ahead_restored);
        tcase_add_test(tc, test_knock_on_changed_since_left);
        suite_add_tcase(s, tc);
        return test_run(s);
}
