/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the kernel's answers to single writes of queue attributes through lib/sysfs.c, as
 * one table: tests/kernel/test-loop.c checks them on a real loop device, and
 * tests/integration/test-faults.c checks that the testbed shim (tests/emulate/sysfs-kernel.c)
 * gives the same, so that the emulation cannot drift from the kernel unnoticed.
 *
 * From block/blk-sysfs.c and block/elevator.c (6.18), and what a 6.18 kernel answered:
 * queue_var_store() takes kstrtoul(base 10) up to UINT_MAX, else EINVAL; nr_requests is
 * raised to BLKDEV_MIN_RQ (4), and refused beyond the tag depth without an elevator or beyond
 * MAX_SCHED_RQ (2048) with one; read_ahead_kb is kept in whole pages, rounded down;
 * elv_iosched_store() takes a name the list shows, mq-deadline's alias "deadline", and any
 * name that starts with "none" as none (elevator_change() compares four characters).
 * blk_mq_init_sched() (block/blk-mq-sched.c) resets nr_requests on every switch to another
 * elevator, to the tag depth for none and to 2 x min(tag depth, BLKDEV_DEFAULT_RQ 128) for a
 * scheduler; writing the active elevator's name again is no switch (6.1 in the VM tier, 6.18
 * here). "none" again is one on 6.18 (it resets) and none on 6.1: no row, hvtuned never writes
 * the active name. */
#pragma once

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attr.h"
#include "scheduler.h"
#include "sysfs.h"

/* A value "=depth" is the queue's tag depth (mq/0/nr_tags), "=depth+1" one more, "=sched"
 * a scheduler's default nr_requests, 2 x min(depth, 128). */
struct kernel_answer {
        enum hvt_attr_id attr;
        const char *value;
        int error;          /* what the write gets; the attribute keeps what it had */
        const char *shows;  /* after a write taken: the number, or the scheduler bracketed */
        const char *nr_requests;  /* after a scheduler row, when given: what nr_requests shows */
};

static const struct kernel_answer kernel_answers[] = {
        { HVT_ATTR_SCHEDULER, "none", 0, "none", NULL },
        /* Every switch resets nr_requests: what was set under the last elevator is gone. */
        { HVT_ATTR_SCHEDULER, "mq-deadline", 0, "mq-deadline", "=sched" },
        { HVT_ATTR_NR_REQUESTS, "100", 0, "100", NULL },
        { HVT_ATTR_SCHEDULER, "mq-deadline", 0, "mq-deadline", "100" },
        { HVT_ATTR_SCHEDULER, "none", 0, "none", "=depth" },
        { HVT_ATTR_NR_REQUESTS, "1", 0, "4", NULL },
        { HVT_ATTR_NR_REQUESTS, "7", 0, "7", NULL },
        { HVT_ATTR_NR_REQUESTS, "3", 0, "4", NULL },
        { HVT_ATTR_NR_REQUESTS, "0", 0, "4", NULL },
        { HVT_ATTR_NR_REQUESTS, "010", 0, "10", NULL },
        { HVT_ATTR_NR_REQUESTS, "=depth", 0, "=depth", NULL },
        { HVT_ATTR_NR_REQUESTS, "=depth+1", EINVAL, NULL, NULL },
        { HVT_ATTR_NR_REQUESTS, "abc", EINVAL, NULL, NULL },
        { HVT_ATTR_NR_REQUESTS, "-1", EINVAL, NULL, NULL },
        { HVT_ATTR_NR_REQUESTS, "0x10", EINVAL, NULL, NULL },
        { HVT_ATTR_NR_REQUESTS, "4294967296", EINVAL, NULL, NULL },
        { HVT_ATTR_SCHEDULER, "mq-deadline", 0, "mq-deadline", NULL },
        { HVT_ATTR_NR_REQUESTS, "2", 0, "4", NULL },
        { HVT_ATTR_NR_REQUESTS, "2048", 0, "2048", NULL },
        { HVT_ATTR_NR_REQUESTS, "2049", EINVAL, NULL, NULL },
        { HVT_ATTR_SCHEDULER, "nonexistent", 0, "none", NULL },
        { HVT_ATTR_SCHEDULER, "deadline", 0, "mq-deadline", NULL },
        { HVT_ATTR_SCHEDULER, "noneatall", 0, "none", NULL },
        { HVT_ATTR_SCHEDULER, "hvtunedtest", EINVAL, NULL, NULL },
        { HVT_ATTR_SCHEDULER, "NONE", EINVAL, NULL, NULL },
        { HVT_ATTR_SCHEDULER, "mq-deadline-and-more", EINVAL, NULL, NULL },
        /* 4 KiB pages. */
        { HVT_ATTR_READ_AHEAD_KB, "5", 0, "4", NULL },
        { HVT_ATTR_READ_AHEAD_KB, "1", 0, "0", NULL },
        { HVT_ATTR_READ_AHEAD_KB, "4095", 0, "4092", NULL },
        { HVT_ATTR_READ_AHEAD_KB, "4294967295", 0, "4294967292", NULL },
        { HVT_ATTR_READ_AHEAD_KB, "4294967296", EINVAL, NULL, NULL },
        { HVT_ATTR_READ_AHEAD_KB, "-1", EINVAL, NULL, NULL },
        { HVT_ATTR_READ_AHEAD_KB, "abc", EINVAL, NULL, NULL },
        { HVT_ATTR_READ_AHEAD_KB, "128", 0, "128", NULL },
};

static inline void kernel_answer_read(int dirfd, enum hvt_attr_id id, char *buf, size_t size) {
        ck_assert_msg(hvt_sysfs_read(dirfd, hvt_attr_get(id)->name, buf, size) >= 0, "cannot read %s",
                      hvt_attr_get(id)->name);
}

/* "none [mq-deadline] kyber bfq ": active, and only it, in brackets. */
static inline void kernel_answer_check_scheduler(const char *shown, const char *active, const char *what) {
        const char *open = strchr(shown, '[');
        size_t n = strlen(active);
        struct hvt_sched_list list;

        ck_assert_msg(open && strncmp(open + 1, active, n) == 0 && open[n + 1] == ']' &&
                      !strchr(open + 1, '[') && strchr(shown, ']') == open + n + 1,
                      "%s: shows \"%s\", not [%s] alone bracketed", what, shown, active);
        ck_assert_int_eq(hvt_sched_parse(shown, &list), 0);
        ck_assert_str_eq(hvt_sched_active(&list), active);
}

/* A row's "=depth", "=depth+1" or "=sched", or the text as it is. */
static inline const char *kernel_answer_value(const char *v, const char *depth, const char *depth1, const char *sched) {
        if (!v || v[0] != '=')
                return v;
        return strcmp(v, "=depth") == 0 ? depth : strcmp(v, "=depth+1") == 0 ? depth1 : sched;
}

/* Every row of the table, in order, on the queue directory queue_dir. */
static inline void kernel_answers_check(const char *queue_dir) {
        char depth[32] = "", depth1[32] = "", sched[32] = "", tags_path[4200];
        int fd = hvt_sysfs_open_dir(queue_dir);
        long tags;
        FILE *f;

        ck_assert_msg(fd >= 0, "%s: %s", queue_dir, strerror(-fd));
        snprintf(tags_path, sizeof(tags_path), "%s/../mq/0/nr_tags", queue_dir);
        f = fopen(tags_path, "re");
        ck_assert_msg(f && fscanf(f, "%ld", &tags) == 1 && tags > 0, "cannot read %s", tags_path);
        fclose(f);
        snprintf(depth, sizeof(depth), "%ld", tags);
        snprintf(depth1, sizeof(depth1), "%ld", tags + 1);
        snprintf(sched, sizeof(sched), "%ld", 2 * (tags < 128 ? tags : 128));
        ck_assert_int_eq(getpagesize(), 4096);
        for (size_t i = 0; i < sizeof(kernel_answers) / sizeof(kernel_answers[0]); i++) {
                const struct kernel_answer *k = &kernel_answers[i];
                const char *name = hvt_attr_get(k->attr)->name;
                const char *value = kernel_answer_value(k->value, depth, depth1, sched);
                const char *shows = kernel_answer_value(k->shows, depth, depth1, sched);
                const char *nr_requests = kernel_answer_value(k->nr_requests, depth, depth1, sched);
                char before[128], after[128], what[96];
                int r;

                snprintf(what, sizeof(what), "row %zu, %s = %s", i, name, value);
                kernel_answer_read(fd, k->attr, before, sizeof(before));
                r = hvt_sysfs_write(fd, k->attr, value);
                ck_assert_msg(r == -k->error, "%s: %s, not %s", what, r < 0 ? strerror(-r) : "taken",
                              k->error ? strerror(k->error) : "taken");
                kernel_answer_read(fd, k->attr, after, sizeof(after));
                if (k->error)
                        ck_assert_msg(strcmp(before, after) == 0, "%s: refused, but \"%s\" became \"%s\"", what,
                                      before, after);
                else if (k->attr == HVT_ATTR_SCHEDULER)
                        kernel_answer_check_scheduler(after, shows, what);
                else
                        ck_assert_msg(strcmp(after, shows) == 0, "%s: shows \"%s\", not \"%s\"", what, after, shows);
                if (nr_requests) {
                        kernel_answer_read(fd, HVT_ATTR_NR_REQUESTS, after, sizeof(after));
                        ck_assert_msg(strcmp(after, nr_requests) == 0, "%s: nr_requests shows \"%s\", not \"%s\"",
                                      what, after, nr_requests);
                }
        }
        close(fd);
}

/* The couplings per kernel: what a write of one attribute does to another, on each kernel
 * hvtuned is tested on, each from that version's sources (Debian's linux-source-5.10, -6.12,
 * -7.3; 6.1 and 6.18 as the vm tier and this host's loop device answered). Run in order on a
 * rotational queue without an optimal I/O size, starting under none, whose max_hw_sectors_kb
 * is at least 256: kernel_couplings_check() on a real loop device (tests/kernel/test-loop.c,
 * the vm tier's guests too) and on the emulation (tests/integration/test-faults.c, with
 * $HVTUNED_TEST_KERNEL naming the column). "=depth" is the tag depth, as above.
 * device/timeout <-> queue/io_timeout is the table after, on a SCSI disk. Not here: bfq's
 * wbt_disable_default() (a loop device may lack wbt; hvtuned watches wbt_lat_usec anyway). */
enum { KERNEL_5_10, KERNEL_6_1, KERNEL_6_12, KERNEL_6_18, KERNEL_7_3, _KERNEL_MAX };

static const char *const kernel_names[_KERNEL_MAX] = { "5.10", "6.1", "6.12", "6.18", "7.3" };

struct kernel_coupling {
        enum hvt_attr_id attr;    /* written */
        const char *value;
        enum hvt_attr_id watch;   /* read after: what it shows on each kernel */
        const char *shows[_KERNEL_MAX];
};

#define ON_ALL(v) { v, v, v, v, v }

static const struct kernel_coupling kernel_couplings[] = {
        { HVT_ATTR_SCHEDULER, "none", HVT_ATTR_SCHEDULER, ON_ALL("none") },
        { HVT_ATTR_NR_REQUESTS, "7", HVT_ATTR_NR_REQUESTS, ON_ALL("7") },
        /* elevator_change(): 5.10 (__elevator_change()), 6.1 and 6.12 return at once for none
         * while none is active; 7.3 switches unless an elevator is active and matches, and
         * elevator_switch() puts nr_requests at the tag depth. */
        { HVT_ATTR_SCHEDULER, "none", HVT_ATTR_NR_REQUESTS, { "7", "7", "7", "=depth", "=depth" } },
        { HVT_ATTR_READ_AHEAD_KB, "64", HVT_ATTR_READ_AHEAD_KB, ON_ALL("64") },
        /* queue_max_sectors_store(): 5.10 and 6.1 set bdi->io_pages only; 6.12 commits the
         * limits, and blk_apply_bdi_limits() raises ra_pages to max(ra, 2 x io_opt, 128 KiB);
         * 6.17 (459779d04ae8) and later take max_sectors for io_opt on a rotational disk without
         * one (lib/readahead-rule.h). */
        { HVT_ATTR_MAX_SECTORS_KB, "256", HVT_ATTR_READ_AHEAD_KB, { "64", "64", "128", "512", "512" } },
        { HVT_ATTR_READ_AHEAD_KB, "0", HVT_ATTR_READ_AHEAD_KB, ON_ALL("0") },
        /* queue_feature_store() (QUEUE_SYSFS_FEATURE, 6.11+) commits the limits too; 5.10 and
         * 6.1's queue_store_random() and queue_store_iostats() set a queue flag. */
        { HVT_ATTR_ADD_RANDOM, "0", HVT_ATTR_READ_AHEAD_KB, { "0", "0", "128", "512", "512" } },
        { HVT_ATTR_READ_AHEAD_KB, "0", HVT_ATTR_READ_AHEAD_KB, ON_ALL("0") },
        { HVT_ATTR_IOSTATS, "1", HVT_ATTR_READ_AHEAD_KB, { "0", "0", "128", "512", "512" } },
        /* blk_apply_bdi_limits(): "don't ever decrease it" (6.12 and later). */
        { HVT_ATTR_READ_AHEAD_KB, "1024", HVT_ATTR_READ_AHEAD_KB, ON_ALL("1024") },
        { HVT_ATTR_MAX_SECTORS_KB, "128", HVT_ATTR_READ_AHEAD_KB, ON_ALL("1024") },
};

/* Whether a scheduler or nr_requests write takes the tag set's update_nr_hwq_lock with a
 * trylock, and so is answered EBUSY while another write of the same tag set holds it: another
 * LUN of the controller switching its scheduler or writing nr_requests, or the same queue's.
 * 5.10, 6.1 and 6.12 wait for the lock. 7.3 (Debian's 7.3.4, the storvsc stand-in) answered a
 * scheduler write 29 times in 40 with EBUSY beside another LUN's switches, 40 in 40 beside its
 * nr_requests writes; this host's 6.18.44 has it too (a stable backport, which 6.18.0 may
 * lack). test-loop's test_trylock_busy checks each column on a real loop device, the vm tier's
 * stage 9 (tests/vm/daemon-inside.sh) through hvtuned on the stand-in, and the emulation
 * (tests/emulate/sysfs-kernel.c, $HVTUNED_TEST_KERNEL_BUSY) plays it from 6.18. */
static const bool kernel_trylock[_KERNEL_MAX] = { false, false, false, true, true };

/* The column for kernel ("7.3", "6.18.1+deb13-amd64"): the newest one not newer; -1 before
 * 5.10. The test chooses which rows it expects; hvtuned itself never looks at the version. */
static inline int kernel_column(const char *kernel) {
        unsigned major = 0, minor = 0, v;
        int col = -1;

        if (sscanf(kernel, "%u.%u", &major, &minor) != 2)
                return -1;
        v = major * 1000 + minor;
        for (int i = 0; i < _KERNEL_MAX; i++) {
                unsigned kmaj = 0, kmin = 0;

                (void) sscanf(kernel_names[i], "%u.%u", &kmaj, &kmin);
                if (kmaj * 1000 + kmin <= v)
                        col = i;
        }
        return col;
}

static inline void kernel_queue_write(const char *queue_dir, const char *name, const char *value) {
        char path[4200];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", queue_dir, name);
        f = fopen(path, "we");
        ck_assert_msg(f && fputs(value, f) >= 0 && fclose(f) == 0, "cannot write %s to %s", value, path);
}

/* Every row, in order, on queue_dir, expecting the column of kernel. */
static inline void kernel_couplings_check(const char *queue_dir, const char *kernel) {
        char depth[32], tags_path[4200];
        int col = kernel_column(kernel), fd;
        long tags;
        FILE *f;

        ck_assert_msg(col >= 0, "no column for kernel %s", kernel);
        snprintf(tags_path, sizeof(tags_path), "%s/../mq/0/nr_tags", queue_dir);
        f = fopen(tags_path, "re");
        ck_assert_msg(f && fscanf(f, "%ld", &tags) == 1 && tags > 0, "cannot read %s", tags_path);
        fclose(f);
        snprintf(depth, sizeof(depth), "%ld", tags);
        kernel_queue_write(queue_dir, "rotational", "1");
        fd = hvt_sysfs_open_dir(queue_dir);
        ck_assert_msg(fd >= 0, "%s: %s", queue_dir, strerror(-fd));
        for (size_t i = 0; i < sizeof(kernel_couplings) / sizeof(kernel_couplings[0]); i++) {
                const struct kernel_coupling *k = &kernel_couplings[i];
                const char *want = strcmp(k->shows[col], "=depth") == 0 ? depth : k->shows[col];
                char shown[128];
                int r = hvt_sysfs_write(fd, k->attr, k->value);

                ck_assert_msg(r >= 0, "%s: row %zu, %s = %s: %s", kernel_names[col], i, hvt_attr_get(k->attr)->name,
                              k->value, strerror(-r));
                kernel_answer_read(fd, k->watch, shown, sizeof(shown));
                if (k->watch == HVT_ATTR_SCHEDULER)
                        kernel_answer_check_scheduler(shown, want, hvt_attr_get(k->attr)->name);
                else
                        ck_assert_msg(strcmp(shown, want) == 0, "%s: row %zu, %s = %s: %s shows \"%s\", not \"%s\"",
                                      kernel_names[col], i, hvt_attr_get(k->attr)->name, k->value,
                                      hvt_attr_get(k->watch)->name, shown, want);
        }
        close(fd);
}

/* device/timeout and queue/io_timeout are one rq_timeout, in jiffies, on every version:
 * sdev_store_timeout() sets seconds x HZ and sdev_show_timeout() shows it divided by HZ
 * (drivers/scsi/scsi_sysfs.c); queue_io_timeout_store() sets msecs_to_jiffies(), and
 * queue_io_timeout_show() shows jiffies_to_msecs() (block/blk-sysfs.c, 5.10 to 7.3). Whole
 * for any HZ that divides 1000 x 1.5 (100, 250, 300, 1000): writing seconds after ms loses
 * the ms, so io_timeout is restored last. Run in order on a SCSI disk's directory. */
static const struct kernel_coupling kernel_timeout_couplings[] = {
        { HVT_ATTR_TIMEOUT, "30", HVT_ATTR_IO_TIMEOUT, ON_ALL("30000") },
        { HVT_ATTR_IO_TIMEOUT, "1500", HVT_ATTR_TIMEOUT, ON_ALL("1") },
        { HVT_ATTR_IO_TIMEOUT, "1500", HVT_ATTR_IO_TIMEOUT, ON_ALL("1500") },
        { HVT_ATTR_TIMEOUT, "1", HVT_ATTR_IO_TIMEOUT, ON_ALL("1000") },
};

static inline void kernel_timeouts_check(const char *disk_dir) {
        char path[4200];
        int fd[_HVT_GROUP_MAX] = { -1, -1, -1, -1 };

        for (enum hvt_group g = HVT_GROUP_QUEUE; g <= HVT_GROUP_DEVICE; g++) {
                snprintf(path, sizeof(path), "%s/%s", disk_dir, hvt_group_name(g));
                fd[g] = hvt_sysfs_open_dir(path);
                ck_assert_msg(fd[g] >= 0, "%s: %s", path, strerror(-fd[g]));
        }
        for (size_t i = 0; i < sizeof(kernel_timeout_couplings) / sizeof(kernel_timeout_couplings[0]); i++) {
                const struct kernel_coupling *k = &kernel_timeout_couplings[i];
                int r = hvt_sysfs_write(fd[hvt_attr_get(k->attr)->group], k->attr, k->value);
                char shown[128];

                ck_assert_msg(r >= 0, "row %zu, %s = %s: %s", i, hvt_attr_get(k->attr)->name, k->value, strerror(-r));
                kernel_answer_read(fd[hvt_attr_get(k->watch)->group], k->watch, shown, sizeof(shown));
                ck_assert_msg(strcmp(shown, k->shows[0]) == 0, "row %zu, %s = %s: %s shows \"%s\", not \"%s\"", i,
                              hvt_attr_get(k->attr)->name, k->value, hvt_attr_get(k->watch)->name, shown, k->shows[0]);
        }
        close(fd[HVT_GROUP_QUEUE]);
        close(fd[HVT_GROUP_DEVICE]);
}
