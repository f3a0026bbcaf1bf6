/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The apply step on a plain directory laid out like a disk's queue/ and its LUN: one result
 * per managed attribute, and a write only where the value differs (counted with inotify
 * IN_CLOSE_WRITE, so an "unchanged" that secretly writes fails). */
#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/inotify.h>
#include <sys/stat.h>

#include "apply.h"
#include "sysfs.h"
#include "testutil.h"

struct fixture {
        char dir[PATH_MAX];
        char disk[PATH_MAX + 8], queue[PATH_MAX + 16], lun[PATH_MAX + 16];
        struct hvt_disk d;
        int inotify;
};

static void put(struct fixture *f, const char *rel, const char *text) {
        free(test_write_file(f->dir, rel, text));
}

static char *get(struct fixture *f, const char *rel) {
        static char buf[256];
        char path[PATH_MAX * 2];
        FILE *fp;
        size_t n;

        snprintf(path, sizeof(path), "%s/%s", f->dir, rel);
        fp = fopen(path, "re");
        ck_assert_ptr_nonnull(fp);
        n = fread(buf, 1, sizeof(buf) - 1, fp);
        buf[n] = '\0';
        fclose(fp);
        return buf;
}

static void setup_disk(struct fixture *f) {
        *f = (struct fixture) {};
        put(f, "keep", "");
        snprintf(f->disk, sizeof(f->disk), "%s/sda", f->dir);
        snprintf(f->queue, sizeof(f->queue), "%s/queue", f->disk);
        snprintf(f->lun, sizeof(f->lun), "%s/0:0:0:0", f->dir);
        ck_assert_int_eq(mkdir(f->disk, 0755), 0);
        ck_assert_int_eq(mkdir(f->queue, 0755), 0);
        ck_assert_int_eq(mkdir(f->lun, 0755), 0);

        put(f, "sda/queue/scheduler", "none [mq-deadline] kyber bfq \n");
        put(f, "sda/queue/nr_requests", "256\n");
        put(f, "sda/queue/read_ahead_kb", "128\n");
        put(f, "0:0:0:0/timeout", "180\n");
        put(f, "0:0:0:0/queue_depth", "2048\n");

        f->d = (struct hvt_disk) { .syspath = f->disk, .device_syspath = f->lun };
        f->d.sysname = "sda";

        f->inotify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        ck_assert_int_ge(f->inotify, 0);
        ck_assert_int_ge(inotify_add_watch(f->inotify, f->lun, IN_CLOSE_WRITE), 0);
        ck_assert_int_ge(inotify_add_watch(f->inotify, f->queue, IN_CLOSE_WRITE), 0);
}

static unsigned count_writes(struct fixture *f) {
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        unsigned n = 0;
        ssize_t len;

        while ((len = read(f->inotify, buf, sizeof(buf))) > 0)
                for (char *p = buf; p < buf + len; p += sizeof(struct inotify_event) + ((struct inotify_event *) p)->len)
                        n++;
        return n;
}

static void want_int(struct hvt_plan *p, enum hvt_attr_id id, int64_t v) {
        ck_assert_int_eq(hvt_setting_set_int(&p->want[id], id, v), 0);
}

static void want_sched(struct hvt_plan *p, const char *name) {
        ck_assert_int_eq(hvt_setting_set_sched(&p->want[HVT_ATTR_SCHEDULER], name), 0);
}

static const struct hvt_result *find(const struct hvt_apply *a, enum hvt_attr_id id) {
        const struct hvt_result *r = hvt_apply_find(a, id);

        ck_assert_msg(r, "no result for attribute %d", id);
        return r;
}

START_TEST(test_each_outcome) {
        struct fixture f;
        struct hvt_plan p = {};
        struct hvt_apply a;
        const struct hvt_result *r;

        setup_disk(&f);
        put(&f, "0:0:0:0/queue_depth", "lots\n");
        want_sched(&p, "none");
        want_int(&p, HVT_ATTR_NR_REQUESTS, 256);
        want_int(&p, HVT_ATTR_READ_AHEAD_KB, 4096);
        want_int(&p, HVT_ATTR_WBT_LAT_USEC, 0);
        want_int(&p, HVT_ATTR_TIMEOUT, 300);
        want_int(&p, HVT_ATTR_QUEUE_DEPTH, 254);
        count_writes(&f);

        hvt_apply_disk(&f.d, &p, 0, NULL, NULL, &a);
        ck_assert_uint_eq(a.n, 6);

        r = find(&a, HVT_ATTR_SCHEDULER);
        ck_assert_int_eq(r->outcome, HVT_APPLIED);
        ck_assert_str_eq(r->from, "mq-deadline");
        ck_assert_str_eq(r->to, "none");
        ck_assert_str_eq(get(&f, "sda/queue/scheduler"), "none");

        r = find(&a, HVT_ATTR_NR_REQUESTS);
        ck_assert_int_eq(r->outcome, HVT_UNCHANGED);
        ck_assert_str_eq(r->from, "256");

        r = find(&a, HVT_ATTR_READ_AHEAD_KB);
        ck_assert_int_eq(r->outcome, HVT_APPLIED);
        ck_assert_str_eq(r->from, "128");
        ck_assert_str_eq(get(&f, "sda/queue/read_ahead_kb"), "4096");

        r = find(&a, HVT_ATTR_WBT_LAT_USEC);
        ck_assert_int_eq(r->outcome, HVT_UNSUPPORTED);
        ck_assert_int_eq(r->error, ENOENT);

        r = find(&a, HVT_ATTR_TIMEOUT);
        ck_assert_int_eq(r->outcome, HVT_APPLIED);
        ck_assert_str_eq(get(&f, "0:0:0:0/timeout"), "300");

        r = find(&a, HVT_ATTR_QUEUE_DEPTH);
        ck_assert_int_eq(r->outcome, HVT_FAILED);
        ck_assert_int_eq(r->error, EBADMSG);
        ck_assert_str_eq(get(&f, "0:0:0:0/queue_depth"), "lots\n");

        /* scheduler, read_ahead_kb, timeout: nothing else was opened for writing. */
        ck_assert_uint_eq(count_writes(&f), 3);

        /* A second pass finds everything in place and writes nothing. */
        hvt_apply_disk(&f.d, &p, 0, NULL, NULL, &a);
        ck_assert_int_eq(find(&a, HVT_ATTR_SCHEDULER)->outcome, HVT_UNCHANGED);
        ck_assert_int_eq(find(&a, HVT_ATTR_READ_AHEAD_KB)->outcome, HVT_UNCHANGED);
        ck_assert_int_eq(find(&a, HVT_ATTR_TIMEOUT)->outcome, HVT_UNCHANGED);
        ck_assert_uint_eq(count_writes(&f), 0);
}
END_TEST

START_TEST(test_scheduler_not_offered) {
        struct fixture f;
        struct hvt_plan p = {};
        struct hvt_apply a;

        setup_disk(&f);
        put(&f, "sda/queue/scheduler", "[none] mq-deadline \n");
        want_sched(&p, "bfq");
        count_writes(&f);
        hvt_apply_disk(&f.d, &p, 0, NULL, NULL, &a);
        ck_assert_int_eq(a.results[0].outcome, HVT_UNSUPPORTED);
        ck_assert_str_eq(a.results[0].from, "none");
        ck_assert_str_eq(a.results[0].to, "bfq");
        ck_assert_str_eq(a.results[0].offered, "none mq-deadline");
        ck_assert_uint_eq(count_writes(&f), 0);
}
END_TEST

START_TEST(test_legacy_noop) {
        struct fixture f;
        struct hvt_plan p = {};
        struct hvt_apply a;

        setup_disk(&f);
        put(&f, "sda/queue/scheduler", "noop [deadline] cfq \n");
        want_sched(&p, "none");
        hvt_apply_disk(&f.d, &p, 0, NULL, NULL, &a);
        ck_assert_int_eq(a.results[0].outcome, HVT_APPLIED);
        ck_assert_str_eq(a.results[0].from, "deadline");
        ck_assert_str_eq(a.results[0].to, "noop");
        ck_assert_str_eq(get(&f, "sda/queue/scheduler"), "noop");
}
END_TEST

START_TEST(test_garbage_scheduler) {
        struct fixture f;
        struct hvt_plan p = {};
        struct hvt_apply a;

        setup_disk(&f);
        put(&f, "sda/queue/scheduler", "[none] [bfq]\n");
        want_sched(&p, "none");
        want_int(&p, HVT_ATTR_READ_AHEAD_KB, 256);
        hvt_apply_disk(&f.d, &p, 0, NULL, NULL, &a);
        ck_assert_int_eq(find(&a, HVT_ATTR_SCHEDULER)->outcome, HVT_FAILED);
        ck_assert_int_eq(find(&a, HVT_ATTR_SCHEDULER)->error, EBADMSG);
        ck_assert_str_eq(get(&f, "sda/queue/scheduler"), "[none] [bfq]\n");
        /* One attribute's failure does not stop the next. */
        ck_assert_int_eq(find(&a, HVT_ATTR_READ_AHEAD_KB)->outcome, HVT_APPLIED);
}
END_TEST

/* A FIFO where an attribute should be (a testbed, a path from the state file) is not waited
 * on: the open does not wait for a writer, and the read fails. */
START_TEST(test_fifo_not_waited_on) {
        char path[PATH_MAX * 2];
        struct fixture f;
        struct hvt_plan p = {};
        struct hvt_apply a;

        setup_disk(&f);
        snprintf(path, sizeof(path), "%s/scheduler", f.queue);
        ck_assert_int_eq(unlink(path), 0);
        ck_assert_int_eq(mkfifo(path, 0600), 0);
        want_sched(&p, "none");
        hvt_apply_disk(&f.d, &p, HVT_APPLY_DRY_RUN, NULL, NULL, &a);
        ck_assert_int_eq(find(&a, HVT_ATTR_SCHEDULER)->outcome, HVT_FAILED);
        ck_assert_int_eq(find(&a, HVT_ATTR_SCHEDULER)->error, ESPIPE);
}
END_TEST

/* Below top, names only: nothing that climbs out of it. */
START_TEST(test_path_below) {
        ck_assert(hvt_sysfs_path_below("/sys/devices", "/sys/devices/vmbus/block/sda"));
        ck_assert(hvt_sysfs_path_below("/sys/devices", "/sys/devices/.hidden/..x"));
        ck_assert(!hvt_sysfs_path_below("/sys/devices", "/sys/devices"));
        ck_assert(!hvt_sysfs_path_below("/sys/devices", "/sys/devices/"));
        ck_assert(!hvt_sysfs_path_below("/sys/devices", "/sys/devicesx/sda"));
        ck_assert(!hvt_sysfs_path_below("/sys/devices", "/sys/devices/a/../../../tmp"));
        ck_assert(!hvt_sysfs_path_below("/sys/devices", "/sys/devices/./a"));
        ck_assert(!hvt_sysfs_path_below("/sys/devices", "/sys/devices//a"));
        ck_assert(!hvt_sysfs_path_below("/sys/devices", "/sys/devices/a/"));
        ck_assert(!hvt_sysfs_path_below("/sys/devices", "/tmp/fifo"));
        ck_assert(!hvt_sysfs_path_below("/sys/devices", ""));
}
END_TEST

/* Bytes as they are, NUL included (put() writes a C string). */
static void put_bytes(struct fixture *f, const char *rel, const char *bytes, size_t len) {
        char path[PATH_MAX * 2];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", f->dir, rel);
        fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, bytes, len), (ssize_t) len);
        close(fd);
}

START_TEST(test_nul_is_no_value) {
        static const char value[] = "4096\0junk\n", sched[] = "[none]\0 [bfq]\n";
        struct fixture f;
        struct hvt_plan p = {};
        struct hvt_apply a;
        char buf[64];
        int fd;

        setup_disk(&f);
        put_bytes(&f, "sda/queue/read_ahead_kb", value, sizeof(value) - 1);
        put_bytes(&f, "sda/queue/scheduler", sched, sizeof(sched) - 1);
        fd = hvt_sysfs_open_dir(f.queue);
        ck_assert_int_eq(hvt_sysfs_read(fd, "read_ahead_kb", buf, sizeof(buf)), -EBADMSG);
        close(fd);

        /* Not "unchanged" for what comes before the NUL: the kernel never shows one. */
        want_int(&p, HVT_ATTR_READ_AHEAD_KB, 4096);
        want_sched(&p, "none");
        count_writes(&f);
        hvt_apply_disk(&f.d, &p, 0, NULL, NULL, &a);
        ck_assert_int_eq(find(&a, HVT_ATTR_READ_AHEAD_KB)->outcome, HVT_FAILED);
        ck_assert_int_eq(find(&a, HVT_ATTR_READ_AHEAD_KB)->error, EBADMSG);
        ck_assert_int_eq(find(&a, HVT_ATTR_SCHEDULER)->outcome, HVT_FAILED);
        ck_assert_int_eq(find(&a, HVT_ATTR_SCHEDULER)->error, EBADMSG);
        ck_assert_uint_eq(count_writes(&f), 0);
}
END_TEST

/* Text that is no value is kept as it was read, for the report, cut to fit: the sinks escape
 * it where it is shown (lib/escape.h, test-escape), and escaping it here as well would show
 * a backslash doubled. */
START_TEST(test_garbage_kept_as_read) {
        struct fixture f;
        struct hvt_plan p = {};
        struct hvt_apply a;
        const struct hvt_result *r;

        setup_disk(&f);
        put(&f, "sda/queue/nr_requests", "\033[2J128\n256\n");
        put(&f, "0:0:0:0/timeout", "\\x41 \001\177\033ab\033[31m\n");
        put(&f, "sda/queue/read_ahead_kb", "\033[31m0123456789abcdefghijklmnopqrstuvwxyz\n");
        want_int(&p, HVT_ATTR_NR_REQUESTS, 128);
        want_int(&p, HVT_ATTR_TIMEOUT, 300);
        want_int(&p, HVT_ATTR_READ_AHEAD_KB, 4096);
        hvt_apply_disk(&f.d, &p, 0, NULL, NULL, &a);

        r = find(&a, HVT_ATTR_NR_REQUESTS);
        ck_assert_int_eq(r->outcome, HVT_FAILED);
        ck_assert_int_eq(r->error, EBADMSG);
        ck_assert_str_eq(r->from, "\033[2J128\n256");
        r = find(&a, HVT_ATTR_TIMEOUT);
        ck_assert_int_eq(r->outcome, HVT_FAILED);
        ck_assert_str_eq(r->from, "\\x41 \001\177\033ab\033[31m");
        r = find(&a, HVT_ATTR_READ_AHEAD_KB);
        ck_assert_int_eq(r->outcome, HVT_FAILED);
        ck_assert_str_eq(r->from, "\033[31m0123456789abcdefgh");
        ck_assert_uint_eq(strlen(r->from), HVT_VALUE_MAX - 1);
}
END_TEST

START_TEST(test_dry_run_writes_nothing) {
        struct fixture f;
        struct hvt_plan p = {};
        struct hvt_apply a;

        setup_disk(&f);
        want_sched(&p, "none");
        want_int(&p, HVT_ATTR_TIMEOUT, 300);
        want_int(&p, HVT_ATTR_NR_REQUESTS, 256);
        count_writes(&f);
        hvt_apply_disk(&f.d, &p, HVT_APPLY_DRY_RUN, NULL, NULL, &a);
        ck_assert_int_eq(find(&a, HVT_ATTR_SCHEDULER)->outcome, HVT_WOULD_APPLY);
        ck_assert_int_eq(find(&a, HVT_ATTR_TIMEOUT)->outcome, HVT_WOULD_APPLY);
        ck_assert_int_eq(find(&a, HVT_ATTR_NR_REQUESTS)->outcome, HVT_UNCHANGED);
        ck_assert_uint_eq(count_writes(&f), 0);
        ck_assert_str_eq(get(&f, "sda/queue/scheduler"), "none [mq-deadline] kyber bfq \n");
}
END_TEST

START_TEST(test_gone_queue_dir) {
        struct fixture f;
        struct hvt_plan p = {};
        struct hvt_apply a;
        char gone[PATH_MAX * 2];

        setup_disk(&f);
        snprintf(gone, sizeof(gone), "%s/elsewhere", f.dir);
        f.d.syspath = gone;
        want_sched(&p, "none");
        want_int(&p, HVT_ATTR_NR_REQUESTS, 64);
        want_int(&p, HVT_ATTR_TIMEOUT, 300);
        hvt_apply_disk(&f.d, &p, 0, NULL, NULL, &a);
        ck_assert_int_eq(find(&a, HVT_ATTR_SCHEDULER)->outcome, HVT_FAILED);
        ck_assert_int_eq(find(&a, HVT_ATTR_SCHEDULER)->error, ENOENT);
        ck_assert_int_eq(find(&a, HVT_ATTR_NR_REQUESTS)->outcome, HVT_FAILED);
        ck_assert_int_eq(find(&a, HVT_ATTR_TIMEOUT)->outcome, HVT_APPLIED);
}
END_TEST

START_TEST(test_write_allowlist_and_tokens) {
        struct fixture f;
        int fd;

        setup_disk(&f);
        fd = hvt_sysfs_open_dir(f.lun);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(hvt_sysfs_write(fd, HVT_ATTR_TIMEOUT, "300\n"), -EINVAL);
        ck_assert_int_eq(hvt_sysfs_write(fd, HVT_ATTR_TIMEOUT, "30 0"), -EINVAL);
        ck_assert_int_eq(hvt_sysfs_write(fd, HVT_ATTR_TIMEOUT, "../x"), -EINVAL);
        ck_assert_int_eq(hvt_sysfs_write(fd, HVT_ATTR_TIMEOUT, ""), -EINVAL);
        ck_assert_int_eq(hvt_sysfs_write(fd, _HVT_ATTR_MAX, "1"), -EINVAL);
        ck_assert_str_eq(get(&f, "0:0:0:0/timeout"), "180\n");
        ck_assert_int_eq(hvt_sysfs_write(fd, HVT_ATTR_TIMEOUT, "300"), 0);
        ck_assert_str_eq(get(&f, "0:0:0:0/timeout"), "300");
        close(fd);
}
END_TEST

START_TEST(test_no_symlink_followed) {
        struct fixture f;
        char target[PATH_MAX * 2], link[PATH_MAX * 2];
        char buf[64];
        int fd;

        setup_disk(&f);
        snprintf(target, sizeof(target), "%s/keep", f.dir);
        snprintf(link, sizeof(link), "%s/eh_timeout", f.lun);
        ck_assert_int_eq(symlink(target, link), 0);
        fd = hvt_sysfs_open_dir(f.lun);
        ck_assert_int_eq(hvt_sysfs_write(fd, HVT_ATTR_EH_TIMEOUT, "10"), -ELOOP);
        ck_assert_int_eq(hvt_sysfs_read(fd, "eh_timeout", buf, sizeof(buf)), -ELOOP);
        ck_assert_str_eq(get(&f, "keep"), "");
        close(fd);
}
END_TEST

/* What the hook saw: called how often, with which attributes, before how many writes. */
struct seen {
        unsigned calls, writes_before;
        struct fixture *f;
        char attrs[128];
};

static int note_hook(const struct hvt_apply *found, void *userdata) {
        struct seen *s = userdata;
        size_t off = strlen(s->attrs);

        s->calls++;
        s->writes_before += count_writes(s->f);
        for (size_t i = 0; i < found->n; i++)
                if (hvt_apply_may_write(found, i))
                        off += (size_t) snprintf(s->attrs + off, sizeof(s->attrs) - off, "%s=%s ",
                                                 hvt_attr_get(found->results[i].attr)->name, found->results[i].from);
        return 0;
}

/* One hook call before any write, with every original the pass may change: nr_requests too,
 * managed or not, since the scheduler's switch resets it. */
START_TEST(test_hook_once_before_writes) {
        struct fixture f;
        struct hvt_plan p = {};
        struct hvt_apply a;
        struct seen s = { .f = &f };

        setup_disk(&f);
        want_sched(&p, "none");
        want_int(&p, HVT_ATTR_READ_AHEAD_KB, 4096);
        count_writes(&f);
        hvt_apply_disk(&f.d, &p, 0, note_hook, &s, &a);
        ck_assert_uint_eq(s.calls, 1);
        ck_assert_uint_eq(s.writes_before, 0);
        ck_assert_str_eq(s.attrs, "scheduler=mq-deadline nr_requests=256 read_ahead_kb=128 ");
        /* Only the planned attributes have results; the watched one is not written. */
        ck_assert_uint_eq(a.n, 2);
        ck_assert_str_eq(get(&f, "sda/queue/nr_requests"), "256\n");
        ck_assert_uint_eq(count_writes(&f), 2);

        /* Nothing to switch: nr_requests is nobody's business, and no write, no hook. */
        s = (struct seen) { .f = &f };
        hvt_apply_disk(&f.d, &p, 0, note_hook, &s, &a);
        ck_assert_uint_eq(s.calls, 0);
        ck_assert_uint_eq(count_writes(&f), 0);
}
END_TEST

/* The scheduler is not switched while nr_requests, which the switch would reset, cannot be
 * read: its original would be lost. */
START_TEST(test_unreadable_nr_requests_holds_scheduler) {
        struct fixture f;
        struct hvt_plan p = {};
        struct hvt_apply a;
        const struct hvt_result *r;
        char nr_requests[PATH_MAX + 32];

        setup_disk(&f);
        put(&f, "sda/queue/nr_requests", "many\n");
        want_sched(&p, "none");
        count_writes(&f);
        hvt_apply_disk(&f.d, &p, 0, NULL, NULL, &a);
        ck_assert_uint_eq(a.n, 1);
        r = find(&a, HVT_ATTR_SCHEDULER);
        ck_assert_int_eq(r->outcome, HVT_FAILED);
        ck_assert_int_eq(r->error, EBADMSG);
        ck_assert_uint_eq(count_writes(&f), 0);
        ck_assert_ptr_nonnull(strstr(get(&f, "sda/queue/scheduler"), "[mq-deadline]"));

        /* A kernel without nr_requests loses nothing: the switch goes ahead. */
        snprintf(nr_requests, sizeof(nr_requests), "%s/nr_requests", f.queue);
        ck_assert_int_eq(unlink(nr_requests), 0);
        hvt_apply_disk(&f.d, &p, 0, NULL, NULL, &a);
        ck_assert_int_eq(find(&a, HVT_ATTR_SCHEDULER)->outcome, HVT_APPLIED);
}
END_TEST

/* The same for any write and what it changes: device/timeout waits while io_timeout, which the
 * kernel moves with it, cannot be read. Written anyway, the knock-on would go unseen, and the
 * restore would take hvtuned's own value for the operator's and put it back (the sweep of
 * tests/faults found it). The report names why. A restore is not held. */
START_TEST(test_unreadable_knock_on_holds_its_cause) {
        struct fixture f;
        struct hvt_plan p = {};
        struct hvt_apply a;
        const struct hvt_result *r;

        setup_disk(&f);
        put(&f, "sda/queue/io_timeout", "many\n");
        want_int(&p, HVT_ATTR_TIMEOUT, 300);
        count_writes(&f);
        hvt_apply_disk(&f.d, &p, 0, NULL, NULL, &a);
        r = find(&a, HVT_ATTR_TIMEOUT);
        ck_assert_int_eq(r->outcome, HVT_FAILED);
        ck_assert_int_eq(r->error, EBADMSG);
        ck_assert(r->unread);
        ck_assert_int_eq(r->cause, HVT_ATTR_IO_TIMEOUT);
        ck_assert_uint_eq(count_writes(&f), 0);
        ck_assert_str_eq(get(&f, "0:0:0:0/timeout"), "180\n");

        /* A restore goes ahead: held, it would leave hvtuned's value in place of the original. */
        hvt_apply_disk(&f.d, &p, HVT_APPLY_RESTORE, NULL, NULL, &a);
        ck_assert_int_eq(find(&a, HVT_ATTR_TIMEOUT)->outcome, HVT_APPLIED);
        ck_assert_str_eq(get(&f, "0:0:0:0/timeout"), "300");

        put(&f, "0:0:0:0/timeout", "180\n");
        put(&f, "sda/queue/io_timeout", "180000\n");
        hvt_apply_disk(&f.d, &p, 0, NULL, NULL, &a);
        ck_assert_int_eq(find(&a, HVT_ATTR_TIMEOUT)->outcome, HVT_APPLIED);
}
END_TEST

/* A number is compared as "%lld" prints it: what sysfs shows ("128") as it is, anything else
 * ("0128", "+4096") made canonical first, never taken for a value that differs. */
START_TEST(test_values_compared_canonical) {
        struct fixture f;
        struct hvt_plan p = {};
        struct hvt_apply a;

        setup_disk(&f);
        want_int(&p, HVT_ATTR_NR_REQUESTS, 128);
        want_int(&p, HVT_ATTR_READ_AHEAD_KB, 4096);
        want_int(&p, HVT_ATTR_TIMEOUT, 300);
        put(&f, "sda/queue/nr_requests", "0128\n");
        put(&f, "sda/queue/read_ahead_kb", "+4096\n");
        put(&f, "0:0:0:0/timeout", "300\n");
        count_writes(&f);
        hvt_apply_disk(&f.d, &p, 0, NULL, NULL, &a);
        ck_assert_int_eq(find(&a, HVT_ATTR_NR_REQUESTS)->outcome, HVT_UNCHANGED);
        ck_assert_str_eq(find(&a, HVT_ATTR_NR_REQUESTS)->from, "128");
        ck_assert_int_eq(find(&a, HVT_ATTR_READ_AHEAD_KB)->outcome, HVT_UNCHANGED);
        ck_assert_str_eq(find(&a, HVT_ATTR_READ_AHEAD_KB)->from, "4096");
        ck_assert_int_eq(find(&a, HVT_ATTR_TIMEOUT)->outcome, HVT_UNCHANGED);
        ck_assert_str_eq(find(&a, HVT_ATTR_TIMEOUT)->from, "300");
        ck_assert_uint_eq(count_writes(&f), 0);

        put(&f, "sda/queue/nr_requests", "-0\n");
        hvt_apply_disk(&f.d, &p, HVT_APPLY_DRY_RUN, NULL, NULL, &a);
        ck_assert_int_eq(find(&a, HVT_ATTR_NR_REQUESTS)->outcome, HVT_WOULD_APPLY);
        ck_assert_str_eq(find(&a, HVT_ATTR_NR_REQUESTS)->from, "0");
}
END_TEST

/* A ceiling (the platform's read-ahead default): what is at or below it stays, what is above
 * comes down to it. */
START_TEST(test_at_most) {
        struct fixture f;
        struct hvt_plan p = {};
        struct hvt_apply a;

        setup_disk(&f);
        want_int(&p, HVT_ATTR_READ_AHEAD_KB, 128);
        p.want[HVT_ATTR_READ_AHEAD_KB].at_most = true;
        put(&f, "sda/queue/read_ahead_kb", "64\n");
        count_writes(&f);
        hvt_apply_disk(&f.d, &p, 0, NULL, NULL, &a);
        ck_assert_int_eq(find(&a, HVT_ATTR_READ_AHEAD_KB)->outcome, HVT_UNCHANGED);
        ck_assert_str_eq(get(&f, "sda/queue/read_ahead_kb"), "64\n");
        ck_assert_uint_eq(count_writes(&f), 0);

        put(&f, "sda/queue/read_ahead_kb", "65536\n");
        count_writes(&f);
        hvt_apply_disk(&f.d, &p, 0, NULL, NULL, &a);
        ck_assert_int_eq(find(&a, HVT_ATTR_READ_AHEAD_KB)->outcome, HVT_APPLIED);
        ck_assert_str_eq(find(&a, HVT_ATTR_READ_AHEAD_KB)->from, "65536");
        ck_assert_str_eq(get(&f, "sda/queue/read_ahead_kb"), "128");
        ck_assert_uint_eq(count_writes(&f), 1);
}
END_TEST

/* Reads of each file of the queue/ and LUN directories since the last call (IN_ACCESS: one a
 * read(2) or pread(2) that returned bytes), and its opens for reading (IN_CLOSE_NOWRITE).
 * Opens and writes are watched too, only so that two reads in a row are two events: inotify
 * merges an event with the same one queued just before it. */
struct reads {
        int fd;
};

static void reads_watch(struct fixture *f, struct reads *o) {
        o->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        ck_assert_int_ge(o->fd, 0);
        ck_assert_int_ge(inotify_add_watch(o->fd, f->queue, IN_ACCESS | IN_MODIFY | IN_OPEN | IN_CLOSE), 0);
        ck_assert_int_ge(inotify_add_watch(o->fd, f->lun, IN_ACCESS | IN_MODIFY | IN_OPEN | IN_CLOSE), 0);
}

static void reads_of(struct reads *o, const char *name, unsigned *reads, unsigned *opens) {
        char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
        ssize_t len;

        *reads = *opens = 0;
        while ((len = read(o->fd, buf, sizeof(buf))) > 0)
                for (char *p = buf; p < buf + len; p += sizeof(struct inotify_event) + ((struct inotify_event *) p)->len) {
                        const struct inotify_event *e = (const struct inotify_event *) p;

                        /* e->len 0: the directory itself, opened as the pass's dirfd */
                        if (e->len == 0 || strcmp(e->name, name) != 0)
                                continue;
                        *reads += !!(e->mask & IN_ACCESS);
                        *opens += !!(e->mask & IN_CLOSE_NOWRITE);
                }
}

/* One attribute's reads in a pass: read; read again only after a write that can change it
 * (lib/attr.c); read back after its own write. All on one fd, opened once a pass (at most:
 * one read at all is the only open). */
static void assert_reads(struct fixture *f, const struct hvt_plan *p, const char *name, unsigned want) {
        struct reads o;
        struct hvt_apply a;
        unsigned n, opens;

        reads_watch(f, &o);
        hvt_apply_disk(&f->d, p, 0, NULL, NULL, &a);
        reads_of(&o, name, &n, &opens);

        ck_assert_msg(n == want, "%s: read %u times, not %u", name, n, want);
        ck_assert_msg(opens == (want > 0), "%s: opened for reading %u times, not %u", name, opens, want > 0);
        close(o.fd);
}

/* Opens of the queue/ and LUN directories themselves (the pass's directory fds), and of
 * each planned attribute for reading, with its reads, since reads_watch(). */
static void opens_of(struct reads *o, unsigned *dirs, unsigned *files, unsigned *reads) {
        char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
        ssize_t len;

        *dirs = *files = *reads = 0;
        while ((len = read(o->fd, buf, sizeof(buf))) > 0)
                for (char *p = buf; p < buf + len; p += sizeof(struct inotify_event) + ((struct inotify_event *) p)->len) {
                        const struct inotify_event *e = (const struct inotify_event *) p;

                        if (e->len == 0)
                                *dirs += !!(e->mask & IN_OPEN);
                        else {
                                *files += !!(e->mask & IN_CLOSE_NOWRITE);
                                *reads += !!(e->mask & IN_ACCESS);
                        }
                }
        close(o->fd);
}

/* The periodic check (HVT_APPLY_CHECK) of a disk as planned opens each attribute once, by its
 * path, reads it once and opens no directory: three system calls an attribute. A value to
 * write makes it a pass like any other, through the directories, the write and its result
 * as without the flag. */
START_TEST(test_check_opens_no_directory) {
        struct fixture f;
        struct hvt_plan p = {};
        struct hvt_apply a;
        struct reads o;
        unsigned dirs, files, reads;

        setup_disk(&f);
        put(&f, "sda/queue/scheduler", "[none] mq-deadline kyber bfq \n");
        put(&f, "sda/queue/nr_requests", "100\n");
        put(&f, "sda/queue/read_ahead_kb", "4096\n");
        put(&f, "0:0:0:0/timeout", "300\n");
        want_sched(&p, "none");
        want_int(&p, HVT_ATTR_NR_REQUESTS, 100);
        want_int(&p, HVT_ATTR_READ_AHEAD_KB, 4096);
        want_int(&p, HVT_ATTR_TIMEOUT, 300);
        count_writes(&f);

        reads_watch(&f, &o);
        hvt_apply_disk(&f.d, &p, HVT_APPLY_CHECK, NULL, NULL, &a);
        opens_of(&o, &dirs, &files, &reads);
        ck_assert_uint_eq(dirs, 0);
        ck_assert_uint_eq(files, 4);
        ck_assert_uint_eq(reads, 4);
        ck_assert_uint_eq(a.n, 4);
        for (size_t i = 0; i < a.n; i++)
                ck_assert_int_eq(a.results[i].outcome, HVT_UNCHANGED);
        ck_assert_str_eq(find(&a, HVT_ATTR_SCHEDULER)->from, "none");
        ck_assert_str_eq(find(&a, HVT_ATTR_TIMEOUT)->from, "300");
        ck_assert_uint_eq(count_writes(&f), 0);

        /* Drifted: written through the LUN's directory, read back, as any pass does. */
        put(&f, "0:0:0:0/timeout", "180\n");
        count_writes(&f);
        reads_watch(&f, &o);
        hvt_apply_disk(&f.d, &p, HVT_APPLY_CHECK, NULL, NULL, &a);
        opens_of(&o, &dirs, &files, &reads);
        ck_assert_uint_ge(dirs, 1);
        ck_assert_int_eq(find(&a, HVT_ATTR_TIMEOUT)->outcome, HVT_APPLIED);
        ck_assert_str_eq(find(&a, HVT_ATTR_TIMEOUT)->from, "180");
        ck_assert_int_eq(find(&a, HVT_ATTR_NR_REQUESTS)->outcome, HVT_UNCHANGED);
        ck_assert_uint_eq(count_writes(&f), 1);
        ck_assert_str_eq(get(&f, "0:0:0:0/timeout"), "300");

        /* An attribute this kernel lacks keeps the check's path: unsupported, as a pass
         * tells it, and no directory opened. */
        want_int(&p, HVT_ATTR_NOMERGES, 2);
        reads_watch(&f, &o);
        hvt_apply_disk(&f.d, &p, HVT_APPLY_CHECK, NULL, NULL, &a);
        opens_of(&o, &dirs, &files, &reads);
        ck_assert_uint_eq(dirs, 0);
        ck_assert_uint_eq(a.n, 5);
        ck_assert_int_eq(find(&a, HVT_ATTR_NOMERGES)->outcome, HVT_UNSUPPORTED);
        ck_assert_int_eq(find(&a, HVT_ATTR_NOMERGES)->error, ENOENT);
        ck_assert_int_eq(find(&a, HVT_ATTR_TIMEOUT)->outcome, HVT_UNCHANGED);

        /* A read that fails is told as a pass tells it: the directory gone, failed. */
        f.d.syspath = "/nonexistent/sda";
        hvt_apply_disk(&f.d, &p, HVT_APPLY_CHECK, NULL, NULL, &a);
        ck_assert_int_eq(find(&a, HVT_ATTR_SCHEDULER)->outcome, HVT_FAILED);
        ck_assert_int_eq(find(&a, HVT_ATTR_SCHEDULER)->error, ENOENT);
}
END_TEST

/* An NVMe namespace's device/ is its controller: io_timeout's write watches no device/timeout
 * there (it would be four calls a namespace for an absence). */
START_TEST(test_nvme_watches_no_scsi_timeout) {
        struct fixture f;
        struct hvt_plan p = {};

        setup_disk(&f);
        put(&f, "sda/queue/io_timeout", "30000\n");
        want_int(&p, HVT_ATTR_IO_TIMEOUT, 240000);
        f.d.kind = HVT_KIND_SCSI;
        assert_reads(&f, &p, "timeout", 1);
        put(&f, "sda/queue/io_timeout", "30000\n");
        f.d.kind = HVT_KIND_NVME_ACCELERATOR;
        assert_reads(&f, &p, "timeout", 0);
        ck_assert_str_eq(get(&f, "sda/queue/io_timeout"), "240000");
}
END_TEST

/* After a write, a pass reads again only what that write can change: nr_requests and
 * wbt_lat_usec after the scheduler's switch, read_ahead_kb after max_sectors_kb or iostats;
 * the rest not at all. */
START_TEST(test_reads_again_only_what_a_write_changes) {
        static const struct {
                const char *name;
                unsigned reads;
        } want[] = {
                { "scheduler", 2 }, { "nr_requests", 3 }, { "wbt_lat_usec", 3 },
                { "max_sectors_kb", 2 }, { "read_ahead_kb", 3 }, { "timeout", 2 }, { "iostats", 2 },
        };
        struct fixture f;
        struct hvt_plan p = {};

        setup_disk(&f);
        put(&f, "sda/queue/wbt_lat_usec", "2000\n");
        put(&f, "sda/queue/max_sectors_kb", "512\n");
        put(&f, "sda/queue/iostats", "1\n");
        want_sched(&p, "none");
        want_int(&p, HVT_ATTR_NR_REQUESTS, 100);
        want_int(&p, HVT_ATTR_WBT_LAT_USEC, 0);
        want_int(&p, HVT_ATTR_MAX_SECTORS_KB, 256);
        want_int(&p, HVT_ATTR_READ_AHEAD_KB, 4096);
        want_int(&p, HVT_ATTR_IOSTATS, 0);
        want_int(&p, HVT_ATTR_TIMEOUT, 300);
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
                /* Each round from the same originals, every attribute to be written. */
                put(&f, "sda/queue/scheduler", "none [mq-deadline] kyber bfq \n");
                put(&f, "sda/queue/nr_requests", "256\n");
                put(&f, "sda/queue/wbt_lat_usec", "2000\n");
                put(&f, "sda/queue/max_sectors_kb", "512\n");
                put(&f, "sda/queue/read_ahead_kb", "128\n");
                put(&f, "sda/queue/iostats", "1\n");
                put(&f, "0:0:0:0/timeout", "180\n");
                assert_reads(&f, &p, want[i].name, want[i].reads);
        }

        /* max_sectors_kb already right: what wbt's and nr_requests' writes cannot change is
         * read once, and what iostats' write can (a limits update on 6.11+) twice. */
        put(&f, "sda/queue/max_sectors_kb", "256\n");
        put(&f, "sda/queue/iostats", "1\n");
        put(&f, "sda/queue/read_ahead_kb", "128\n");
        assert_reads(&f, &p, "read_ahead_kb", 3);
        put(&f, "sda/queue/iostats", "0\n");
        put(&f, "sda/queue/read_ahead_kb", "128\n");
        put(&f, "sda/queue/scheduler", "none [mq-deadline] kyber bfq \n");
        put(&f, "sda/queue/wbt_lat_usec", "2000\n");
        assert_reads(&f, &p, "read_ahead_kb", 2);
}
END_TEST

/* A watched attribute is read only when a write of the pass can reach it: wbt_lat_usec not
 * at all while the scheduler is the one wanted already, before and after the switch when it
 * is not; io_timeout likewise with device/timeout. */
START_TEST(test_watched_read_only_when_reached) {
        struct fixture f;
        struct hvt_plan p = {};

        setup_disk(&f);
        put(&f, "sda/queue/wbt_lat_usec", "2000\n");
        put(&f, "sda/queue/io_timeout", "180000\n");
        want_sched(&p, "none");
        want_int(&p, HVT_ATTR_NR_REQUESTS, 100);
        put(&f, "sda/queue/scheduler", "[none] mq-deadline kyber bfq \n");
        assert_reads(&f, &p, "wbt_lat_usec", 0);
        put(&f, "sda/queue/scheduler", "none [mq-deadline] kyber bfq \n");
        assert_reads(&f, &p, "wbt_lat_usec", 2);

        want_int(&p, HVT_ATTR_TIMEOUT, 300);
        put(&f, "0:0:0:0/timeout", "300\n");
        assert_reads(&f, &p, "io_timeout", 0);
        put(&f, "0:0:0:0/timeout", "180\n");
        assert_reads(&f, &p, "io_timeout", 2);
}
END_TEST

/* The kernel played by a hard link: read_ahead_kb is max_sectors_kb's file, so a write of
 * max_sectors_kb changes what read_ahead_kb shows, as a limits update does on 6.9+. The pass
 * hands read_ahead_kb's original to the hook before the first write, and tells the change
 * as a knock-on of max_sectors_kb, without writing read_ahead_kb. */
START_TEST(test_knock_on_told_and_recorded) {
        struct fixture f;
        struct hvt_plan p = {};
        struct hvt_apply a;
        struct seen s = { .f = &f };
        char ms[PATH_MAX * 2], ra[PATH_MAX * 2];
        const struct hvt_result *r;

        setup_disk(&f);
        put(&f, "sda/queue/max_sectors_kb", "1280\n");
        snprintf(ms, sizeof(ms), "%s/max_sectors_kb", f.queue);
        snprintf(ra, sizeof(ra), "%s/read_ahead_kb", f.queue);
        ck_assert_int_eq(unlink(ra), 0);
        ck_assert_int_eq(link(ms, ra), 0);
        count_writes(&f);
        want_int(&p, HVT_ATTR_MAX_SECTORS_KB, 256);
        hvt_apply_disk(&f.d, &p, 0, note_hook, &s, &a);
        ck_assert_uint_eq(s.calls, 1);
        ck_assert_str_eq(s.attrs, "max_sectors_kb=1280 read_ahead_kb=1280 ");
        ck_assert_int_eq(find(&a, HVT_ATTR_MAX_SECTORS_KB)->outcome, HVT_APPLIED);
        r = find(&a, HVT_ATTR_READ_AHEAD_KB);
        ck_assert_int_eq(r->outcome, HVT_KNOCKED_ON);
        ck_assert_int_eq(r->cause, HVT_ATTR_MAX_SECTORS_KB);
        ck_assert_str_eq(r->from, "1280");
        ck_assert_str_eq(r->to, "256");
        ck_assert(r->watched);
        ck_assert_uint_eq(count_writes(&f), 1);

        /* Unchanged: nothing knocked on, nothing told of read_ahead_kb. */
        hvt_apply_disk(&f.d, &p, 0, note_hook, &s, &a);
        ck_assert_uint_eq(a.n, 1);
}
END_TEST

/* A knock-on's restore: found as hvtuned's write left it, it is put back; found otherwise,
 * someone set it since, and it stays. */
START_TEST(test_knock_on_restore_only_as_left) {
        struct fixture f;
        struct hvt_plan p = {};
        struct hvt_apply a;

        setup_disk(&f);
        want_int(&p, HVT_ATTR_READ_AHEAD_KB, 64);
        snprintf(p.left[HVT_ATTR_READ_AHEAD_KB], HVT_VALUE_MAX, "512");
        put(&f, "sda/queue/read_ahead_kb", "2048\n");
        count_writes(&f);
        hvt_apply_disk(&f.d, &p, HVT_APPLY_RESTORE, NULL, NULL, &a);
        ck_assert_int_eq(find(&a, HVT_ATTR_READ_AHEAD_KB)->outcome, HVT_LEFT);
        ck_assert_str_eq(find(&a, HVT_ATTR_READ_AHEAD_KB)->from, "2048");
        ck_assert_str_eq(find(&a, HVT_ATTR_READ_AHEAD_KB)->kept, "512");
        ck_assert_uint_eq(count_writes(&f), 0);
        ck_assert_str_eq(get(&f, "sda/queue/read_ahead_kb"), "2048\n");

        put(&f, "sda/queue/read_ahead_kb", "512\n");
        count_writes(&f);
        hvt_apply_disk(&f.d, &p, HVT_APPLY_RESTORE, NULL, NULL, &a);
        ck_assert_int_eq(find(&a, HVT_ATTR_READ_AHEAD_KB)->outcome, HVT_APPLIED);
        ck_assert_str_eq(get(&f, "sda/queue/read_ahead_kb"), "64");
}
END_TEST

/* device/timeout (s) before queue/io_timeout (ms), the same request timeout: the finer one
 * last, or a restore of 30500 ms would end at 30000. */
START_TEST(test_finer_timeout_last) {
        ck_assert_int_lt(HVT_ATTR_TIMEOUT, HVT_ATTR_IO_TIMEOUT);
        ck_assert(hvt_attr_write_may_change(HVT_ATTR_TIMEOUT, HVT_ATTR_IO_TIMEOUT));
        for (int i = HVT_ATTR_MAX_SECTORS_KB; i < HVT_ATTR_READ_AHEAD_KB; i++)
                ck_assert(!hvt_attr_write_may_change(HVT_ATTR_READ_AHEAD_KB, (enum hvt_attr_id) i));
}
END_TEST

int main(void) {
        Suite *s = suite_create("apply");
        TCase *tc = tcase_create("plain-directory");

        tcase_add_test(tc, test_each_outcome);
        tcase_add_test(tc, test_scheduler_not_offered);
        tcase_add_test(tc, test_legacy_noop);
        tcase_add_test(tc, test_garbage_scheduler);
        tcase_add_test(tc, test_nul_is_no_value);
        tcase_add_test(tc, test_garbage_kept_as_read);
        tcase_add_test(tc, test_dry_run_writes_nothing);
        tcase_add_test(tc, test_gone_queue_dir);
        tcase_add_test(tc, test_write_allowlist_and_tokens);
        tcase_add_test(tc, test_no_symlink_followed);
        tcase_add_test(tc, test_hook_once_before_writes);
        tcase_add_test(tc, test_unreadable_nr_requests_holds_scheduler);
        tcase_add_test(tc, test_unreadable_knock_on_holds_its_cause);
        tcase_add_test(tc, test_values_compared_canonical);
        tcase_add_test(tc, test_at_most);
        tcase_add_test(tc, test_nvme_watches_no_scsi_timeout);
        tcase_add_test(tc, test_check_opens_no_directory);
        tcase_add_test(tc, test_reads_again_only_what_a_write_changes);
        tcase_add_test(tc, test_watched_read_only_when_reached);
        tcase_add_test(tc, test_knock_on_told_and_recorded);
        tcase_add_test(tc, test_knock_on_restore_only_as_left);
        tcase_add_test(tc, test_finer_timeout_last);
        tcase_add_test(tc, test_fifo_not_waited_on);
        tcase_add_test(tc, test_path_below);
        suite_add_tcase(s, tc);
        return test_run(s);
}
