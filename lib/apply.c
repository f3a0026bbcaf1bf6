/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the read-compare-write-readback step for each attribute of a plan.
 *
 * A value that already matches is never written: a write to a sysfs attribute is not free
 * (a scheduler switch freezes the queue), and writes are what an operator audits. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apply.h"
#include "macro.h"
#include "scheduler.h"
#include "sysfs.h"

/* Big enough for any attribute we read; sysfs values are at most a page. */
#define READ_MAX 4096

static const char *const outcome_names[_HVT_OUTCOME_MAX] = {
        [HVT_UNCHANGED] = "unchanged",
        [HVT_APPLIED] = "applied",
        [HVT_CLAMPED] = "clamped",
        [HVT_FAILED] = "failed",
        [HVT_UNSUPPORTED] = "unsupported",
        [HVT_WOULD_APPLY] = "would apply",
};

const char *hvt_outcome_to_string(enum hvt_outcome o) {
        return (unsigned) o < _HVT_OUTCOME_MAX ? outcome_names[o] : NULL;
}

static void copy_value(char dst[static HVT_VALUE_MAX], const char *src) {
        (void) hvt_strscpy(dst, HVT_VALUE_MAX, src);
}

/* A read that fails: a missing attribute is a kernel that lacks it, anything else a failure. */
static void result_read_error(struct hvt_result *res, int r) {
        res->error = -r;
        res->outcome = r == -ENOENT ? HVT_UNSUPPORTED : HVT_FAILED;
}

static void result_error(struct hvt_result *res, int r) {
        res->error = -r;
        res->outcome = HVT_FAILED;
}

/* What the attribute holds, in the form compared with the desired value: the active name of
 * a scheduler list (the list itself in *list), the canonical decimal of an integer. */
static int parse_current(const struct hvt_attr *a, const char *text, char now[static HVT_VALUE_MAX],
                         struct hvt_sched_list *list) {
        char *end;
        long long v;

        if (a->kind == HVT_VALUE_SCHEDULER) {
                if (hvt_sched_parse(text, list) < 0)
                        return -EBADMSG;
                copy_value(now, hvt_sched_active(list));
                return 0;
        }
        errno = 0;
        v = strtoll(text, &end, 10);
        if (errno != 0 || end == text || *end != '\0')
                return -EBADMSG;
        snprintf(now, HVT_VALUE_MAX, "%lld", v);
        return 0;
}

/* Reads and compares: the outcome is unchanged, would apply (res->to holds the value to
 * write), failed or unsupported; res->from what was found. */
static void decide(int dirfd, enum hvt_attr_id id, const struct hvt_setting *want, const char *kept,
                   struct hvt_result *res) {
        const struct hvt_attr *a = hvt_attr_get(id);
        struct hvt_sched_list list;
        char buf[READ_MAX], now[HVT_VALUE_MAX];
        int r;

        r = hvt_sysfs_read(dirfd, a->name, buf, sizeof(buf));
        if (r < 0)
                return result_read_error(res, r);
        r = parse_current(a, buf, now, &list);
        if (r < 0) {
                copy_value(res->from, buf);  /* as read: the sinks escape it */
                return result_error(res, r);
        }
        copy_value(res->from, now);

        if (a->kind == HVT_VALUE_SCHEDULER) {
                const char *target = hvt_sched_resolve(&list, want->text);

                if (!target) {
                        hvt_sched_format(&list, res->offered, sizeof(res->offered));
                        res->outcome = HVT_UNSUPPORTED;
                        return;
                }
                copy_value(res->to, target);
        }

        if (strcmp(now, res->to) == 0) {
                res->outcome = HVT_UNCHANGED;
                return;
        }
        if (*kept && strcmp(now, kept) == 0) {
                copy_value(res->kept, kept);  /* still the kernel's answer to this value */
                res->outcome = HVT_UNCHANGED;
                return;
        }
        res->outcome = HVT_WOULD_APPLY;
}

/* Writes res->to and reads it back. */
static void write_one(int dirfd, enum hvt_attr_id id, struct hvt_result *res) {
        const struct hvt_attr *a = hvt_attr_get(id);
        struct hvt_sched_list list;
        char buf[READ_MAX], now[HVT_VALUE_MAX];
        int r;

        r = hvt_sysfs_write(dirfd, id, res->to);
        if (r >= 0)
                r = hvt_sysfs_read(dirfd, a->name, buf, sizeof(buf));
        if (r >= 0)
                r = parse_current(a, buf, now, &list);
        if (r < 0)
                return result_error(res, r);

        if (strcmp(now, res->to) == 0)
                res->outcome = HVT_APPLIED;
        else {
                copy_value(res->kept, now);
                res->outcome = HVT_CLAMPED;
        }
}

/* One attribute of a pass: where it lives and what is wanted of it. Without a want it is
 * only watched: read for its original, never written (an attribute the scheduler resets). */
struct item {
        int dirfd;   /* negative: its directory could not be opened */
        const struct hvt_setting *want;
        const char *kept;
};

/* Reads what a watched attribute holds, into res->from. */
static void watch(int dirfd, struct hvt_result *res) {
        const struct hvt_attr *a = hvt_attr_get(res->attr);
        struct hvt_sched_list list;
        char buf[READ_MAX];
        int r;

        r = hvt_sysfs_read(dirfd, a->name, buf, sizeof(buf));
        if (r < 0)
                return result_read_error(res, r);
        r = parse_current(a, buf, res->from, &list);
        if (r < 0) {
                copy_value(res->from, buf);  /* as read: the sinks escape it */
                return result_error(res, r);
        }
        res->outcome = HVT_UNCHANGED;
}

const struct hvt_result *hvt_apply_find(const struct hvt_apply *a, enum hvt_attr_id id) {
        for (size_t i = 0; i < a->n; i++)
                if (a->results[i].attr == id)
                        return &a->results[i];
        return NULL;
}

bool hvt_apply_may_write(const struct hvt_apply *found, size_t i) {
        const struct hvt_result *res = &found->results[i], *sched;

        if (res->outcome == HVT_WOULD_APPLY)
                return true;
        if (res->outcome != HVT_UNCHANGED || !hvt_attr_reset_by_scheduler(res->attr))
                return false;
        sched = hvt_apply_find(found, HVT_ATTR_SCHEDULER);
        return sched && sched->outcome == HVT_WOULD_APPLY;
}

/* The scheduler waits while an attribute its switch resets could not be read: the switch
 * would lose that value for good. One the kernel does not have (unsupported) loses nothing. */
static void hold_scheduler(struct hvt_apply *a) {
        /* The scheduler comes first (table order), when planned. */
        struct hvt_result *sched = a->n > 0 && a->results[0].attr == HVT_ATTR_SCHEDULER ? &a->results[0] : NULL;

        if (!sched || sched->outcome != HVT_WOULD_APPLY)
                return;
        for (size_t i = 1; i < a->n; i++)
                if (hvt_attr_reset_by_scheduler(a->results[i].attr) && a->results[i].outcome == HVT_FAILED)
                        return result_error(sched, -a->results[i].error);
}

/* A write changed res, which was not expected to be written: the hook sees it alone, with
 * the value first found, before it is. */
static int before_late_write(const struct hvt_result *res, const char *first, hvt_before_write_t before_write,
                             void *userdata) {
        struct hvt_apply one = { .n = 1 };

        if (!before_write)
                return 0;
        one.results[0] = *res;
        copy_value(one.results[0].from, first);
        return before_write(&one, userdata);
}

/* Reads res again after an earlier write of the pass that may have changed it (lib/attr.c
 * hvt_attr_write_may_change()): a scheduler switch resets nr_requests, a limits update
 * read_ahead_kb. What was found first stays
 * the report's "from" where it differed already. A change nothing expected goes through the
 * hook first. */
static void redecide(const struct item *item, hvt_before_write_t before_write, void *userdata, bool covered,
                     struct hvt_result *res) {
        char first[HVT_VALUE_MAX];
        bool differed = res->outcome == HVT_WOULD_APPLY;
        int r;

        copy_value(first, res->from);
        res->kept[0] = '\0';
        decide(item->dirfd, res->attr, item->want, item->kept, res);
        if (differed && res->outcome == HVT_WOULD_APPLY)
                copy_value(res->from, first);
        if (!covered && res->outcome == HVT_WOULD_APPLY) {
                r = before_late_write(res, first, before_write, userdata);
                if (r < 0) {
                        result_error(res, r);
                        res->not_recorded = true;
                }
        }
}

/* After a write of `written`, marks what it may have changed (lib/attr.c) to be read again. */
static void mark_stale(enum hvt_attr_id written, bool stale[static _HVT_ATTR_MAX]) {
        for (size_t id = 0; id < _HVT_ATTR_MAX; id++)
                stale[id] = stale[id] || hvt_attr_write_may_change(written, (enum hvt_attr_id) id);
}

/* The pass over items[], one result each in a: all read first, the hook, then the writes. */
static void apply_items(const struct item *items, unsigned flags, hvt_before_write_t before_write, void *userdata,
                        struct hvt_apply *a) {
        bool any = false, sched_written = false, covered[_HVT_ATTR_DISK_MAX], stale[_HVT_ATTR_MAX] = {};
        int r;

        for (size_t i = 0; i < a->n; i++) {
                struct hvt_result *res = &a->results[i];

                if (items[i].dirfd < 0)
                        result_error(res, items[i].dirfd);
                else if (!items[i].want)
                        watch(items[i].dirfd, res);
                else
                        decide(items[i].dirfd, res->attr, items[i].want, items[i].kept, res);
        }
        hold_scheduler(a);
        for (size_t i = 0; i < a->n; i++)
                any = any || a->results[i].outcome == HVT_WOULD_APPLY;
        if (!any || (flags & HVT_APPLY_DRY_RUN))
                return;

        for (size_t i = 0; i < a->n; i++)
                covered[i] = hvt_apply_may_write(a, i);
        r = before_write ? before_write(a, userdata) : 0;
        for (size_t i = 0; i < a->n; i++) {
                struct hvt_result *res = &a->results[i];

                if (!items[i].want)
                        continue;
                if (r < 0) {
                        if (res->outcome == HVT_WOULD_APPLY) {
                                result_error(res, r);
                                res->not_recorded = true;
                        }
                        continue;
                }
                if (stale[res->attr] && (res->outcome == HVT_UNCHANGED || res->outcome == HVT_WOULD_APPLY))
                        redecide(&items[i], before_write, userdata, covered[i], res);
                if (res->outcome != HVT_WOULD_APPLY)
                        continue;
                res->knock_on = sched_written && hvt_attr_reset_by_scheduler(res->attr);
                write_one(items[i].dirfd, res->attr, res);
                /* Failed too: a write the kernel refused may still have been half done. */
                mark_stale(res->attr, stale);
                sched_written = sched_written ||
                        (res->attr == HVT_ATTR_SCHEDULER && (res->outcome == HVT_APPLIED || res->outcome == HVT_CLAMPED));
        }
}

/* The two directories a plan writes into, each opened on first use. */
struct dirs {
        bool tried[_HVT_GROUP_MAX];
        int fd[_HVT_GROUP_MAX];
};

static void dirs_close(struct dirs *dirs) {
        for (size_t g = 0; g < _HVT_GROUP_MAX; g++)
                if (dirs->tried[g] && dirs->fd[g] >= 0)
                        close(dirs->fd[g]);
}

static int dirs_get(struct dirs *dirs, const struct hvt_disk *d, enum hvt_group g) {
        char path[4096];

        if (!dirs->tried[g]) {
                dirs->tried[g] = true;
                if (g == HVT_GROUP_DEVICE)
                        (void) hvt_strscpy(path, sizeof(path), d->device_syspath);
                else
                        snprintf(path, sizeof(path), "%s/queue", d->syspath);
                dirs->fd[g] = hvt_sysfs_open_dir(path);
        }
        return dirs->fd[g];
}

/* One more item and its result; want NULL: watched. A directory that cannot be opened (the
 * disk is going away) fails its attributes; the other group may still work. */
static void add_item(struct hvt_apply *all, struct item items[static _HVT_ATTR_DISK_MAX], struct dirs *dirs,
                     const struct hvt_disk *d, const struct hvt_plan *p, enum hvt_attr_id id,
                     const struct hvt_setting *want) {
        struct hvt_result *res = &all->results[all->n];

        *res = (struct hvt_result) { .attr = id };
        if (want)
                copy_value(res->to, want->text);
        items[all->n++] = (struct item) {
                .dirfd = dirs_get(dirs, d, hvt_attr_get(id)->group),
                .want = want,
                .kept = p->kept[id],
        };
}

void hvt_apply_disk(const struct hvt_disk *d, const struct hvt_plan *p, unsigned flags,
                    hvt_before_write_t before_write, void *userdata, struct hvt_apply *ret) {
        _cleanup_(dirs_close) struct dirs dirs = {};
        struct item items[_HVT_ATTR_DISK_MAX];
        struct hvt_apply all = {};
        size_t planned;

        /* The planned attributes in table order, then, when the plan has the scheduler, what
         * its switch resets that the plan leaves alone: only watched. */
        for (size_t i = 0; i < _HVT_ATTR_DISK_MAX; i++)
                if (p->want[i].set)
                        add_item(&all, items, &dirs, d, p, (enum hvt_attr_id) i, &p->want[i]);
        planned = all.n;
        for (size_t i = 0; p->want[HVT_ATTR_SCHEDULER].set && i < _HVT_ATTR_DISK_MAX; i++)
                if (!p->want[i].set && hvt_attr_reset_by_scheduler((enum hvt_attr_id) i))
                        add_item(&all, items, &dirs, d, p, (enum hvt_attr_id) i, NULL);
        apply_items(items, flags, before_write, userdata, &all);
        ret->n = planned;
        memcpy(ret->results, all.results, planned * sizeof(all.results[0]));
}

void hvt_apply_attr(int dirfd, enum hvt_attr_id id, const struct hvt_setting *want, unsigned flags,
                    hvt_before_write_t before_write, void *userdata, struct hvt_result *ret) {
        const struct item item = { .dirfd = dirfd, .want = want, .kept = "" };
        struct hvt_apply a = { .n = 1 };

        a.results[0] = (struct hvt_result) { .attr = id };
        copy_value(a.results[0].to, want->text);
        apply_items(&item, flags, before_write, userdata, &a);
        *ret = a.results[0];
}
