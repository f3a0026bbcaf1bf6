/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the read-compare-write-readback step for each attribute of a plan.
 *
 * A value that already matches is never written: a write to a sysfs attribute is not free
 * (a scheduler switch freezes the queue), and writes are what an operator audits. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apply.h"
#include "bounds.h"
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
        [HVT_KNOCKED_ON] = "knocked on",
        [HVT_LEFT] = "left",
};

const char *hvt_outcome_to_string(enum hvt_outcome o) {
        return (unsigned) o < _HVT_OUTCOME_MAX ? outcome_names[o] : NULL;
}

static void copy_value(char dst[static HVT_VALUE_MAX], const char *src) {
        (void) hvt_strscpy(dst, HVT_VALUE_MAX, src);
}

static void result_error(struct hvt_result *res, int r) {
        res->error = -r;
        res->outcome = HVT_FAILED;
}

/* Whether text[0..n) is a decimal as "%lld" prints one: an optional '-', then digits without a
 * leading zero (or "0" alone). */
static bool canonical_decimal(const char *text, size_t n) {
        size_t i = text[0] == '-';

        if (i >= n || (text[i] == '0' && (n - i > 1 || i > 0)))
                return false;
        for (; i < n; i++)
                if (text[i] < '0' || text[i] > '9')
                        return false;
        return true;
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
        /* sysfs shows the canonical decimal already ("128", "-1"): copied, where an snprintf()
         * of every value read was 5% of a coldplug's instructions; anything else ("0128",
         * " 7", "+7") is made canonical. */
        if (canonical_decimal(text, (size_t) (end - text)) && (size_t) (end - text) < HVT_VALUE_MAX)
                memcpy(now, text, (size_t) (end - text) + 1);
        else
                snprintf(now, HVT_VALUE_MAX, "%lld", v);
        return 0;
}

/* One attribute of a pass: where it lives and what is wanted of it. Without a want it is
 * only watched: read for its original, never written (an attribute the scheduler resets). */
struct item {
        int dirfd;   /* negative: its directory could not be opened */
        const char *dir;  /* a check's (check_only()): read by its path, no directory opened */
        const struct hvt_setting *want;
        const char *kept;
        const char *left;
        /* Open for reading from its first read to the end of the pass: what a write of the
         * pass left is then one pread(2), not an open, a read and a close. */
        int fd;
};

static int open_by_path(const char *dir, const char *name) {
        char path[PATH_MAX];

        if ((size_t) snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
                return -ENAMETOOLONG;
        return hvt_sysfs_open(AT_FDCWD, path);
}

/* What the item's attribute shows now, as hvt_sysfs_read() gives it. An open that failed is
 * tried again at the next read, as before the fd was kept. */
static int item_read(struct item *item, enum hvt_attr_id id, char buf[static READ_MAX]) {
        if (!item->dir && item->dirfd < 0)
                return item->dirfd;
        if (item->fd < 0) {
                item->fd = item->dir ? open_by_path(item->dir, hvt_attr_get(id)->name) :
                                       hvt_sysfs_open(item->dirfd, hvt_attr_get(id)->name);
                if (item->fd < 0)
                        return item->fd;
        }
        return hvt_sysfs_read_fd(item->fd, buf, READ_MAX);
}

/* A read that fails: a missing attribute is a kernel that lacks it, anything else a failure.
 * So is an ENOENT from an attribute that is there after all (an open that raced a remove and
 * an add, a fault injected): taken for a kernel that lacks it, a write that changes it would
 * go ahead unseen (device/timeout moving io_timeout), and its restore would take hvtuned's own
 * value for the operator's. One faccessat(), on that error only. */
static void result_read_error(const struct item *item, struct hvt_result *res, int r) {
        res->error = -r;
        res->outcome = r == -ENOENT &&
                (item->dirfd < 0 || (faccessat(item->dirfd, hvt_attr_get(res->attr)->name, F_OK, 0) < 0 && errno == ENOENT))
                ? HVT_UNSUPPORTED : HVT_FAILED;
}

static void items_close(struct item *items, size_t n) {
        for (size_t i = 0; i < n; i++)
                closep(&items[i].fd);
}

/* Whether now, a value parse_current() read as an integer, is at or below want's ceiling. */
static bool under_ceiling(enum hvt_attr_id id, const struct hvt_setting *want, const char *now) {
        struct hvt_setting found;

        return want->at_most && hvt_setting_from_kernel(&found, id, now) >= 0 && found.num <= want->num;
}

/* Reads and compares: the outcome is unchanged, would apply (res->to holds the value to
 * write), failed or unsupported; res->from what was found. */
static void decide(struct item *item, const char *left, struct hvt_result *res) {
        const struct hvt_attr *a = hvt_attr_get(res->attr);
        const struct hvt_setting *want = item->want;
        const char *kept = item->kept;
        struct hvt_sched_list list;
        char buf[READ_MAX], now[HVT_VALUE_MAX];
        int r;

        r = item_read(item, res->attr, buf);
        if (r < 0)
                return result_read_error(item, res, r);
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
        /* What the disk keeps is what the journal and the records are told, not the ceiling
         * it is under: "64 (unchanged)", never "128 (unchanged)" of a disk at 64. */
        if (under_ceiling(res->attr, want, now)) {
                copy_value(res->to, now);
                res->outcome = HVT_UNCHANGED;
                return;
        }
        if (*kept && strcmp(now, kept) == 0) {
                copy_value(res->kept, kept);  /* still the kernel's answer to this value */
                res->outcome = HVT_UNCHANGED;
                return;
        }
        if (*left && strcmp(now, left) != 0) {
                copy_value(res->kept, left);  /* what hvtuned's write had left */
                res->outcome = HVT_LEFT;
                return;
        }
        res->outcome = HVT_WOULD_APPLY;
}

/* The writes that take a trylock on 7.3 and 6.18.y (elv_iosched_store(),
 * queue_requests_store()): EBUSY there means another change of the tag set is under way, not
 * that the value is wrong. */
static bool busy_retried(enum hvt_attr_id id) {
        return id == HVT_ATTR_SCHEDULER || id == HVT_ATTR_NR_REQUESTS;
}

/* Writes res->to and reads it back. */
static void write_one(struct item *item, struct hvt_result *res) {
        enum hvt_attr_id id = res->attr;
        const struct hvt_attr *a = hvt_attr_get(id);
        struct hvt_sched_list list;
        char buf[READ_MAX], now[HVT_VALUE_MAX];
        int r, tries = 0;

        do
                r = item->dirfd < 0 ? item->dirfd : hvt_sysfs_write(item->dirfd, id, res->to);
        while (r == -EBUSY && busy_retried(id) && ++tries < HVT_APPLY_BUSY_TRIES);
        /* Refused: the bound it broke, where the kernel states one, as the scheduler now is. */
        if (r == -EINVAL && item->dirfd >= 0)
                (void) hvt_bound_broken(item->dirfd, id, NULL, res->to, res->bound, sizeof(res->bound));
        if (r >= 0)
                r = item_read(item, id, buf);
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

/* Reads what a watched attribute holds, into res->from. */
static void watch(struct item *item, struct hvt_result *res) {
        const struct hvt_attr *a = hvt_attr_get(res->attr);
        struct hvt_sched_list list;
        char buf[READ_MAX];
        int r;

        r = item_read(item, res->attr, buf);
        if (r < 0)
                return result_read_error(item, res, r);
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
        const struct hvt_result *res = &found->results[i];

        if (res->outcome == HVT_WOULD_APPLY)
                return true;
        if (res->outcome != HVT_UNCHANGED)
                return false;
        for (size_t j = 0; j < found->n; j++)
                if (found->results[j].outcome == HVT_WOULD_APPLY &&
                    hvt_attr_write_may_change(found->results[j].attr, res->attr))
                        return true;
        return false;
}

/* A write waits while an attribute it may change could not be read: a scheduler switch
 * would lose nr_requests' value for good, and a knock-on hvtuned did not see (device/timeout
 * moves io_timeout) would be taken at the restore for a value of the operator's, and put
 * back. One the kernel does not have (unsupported, or not there) loses nothing. Not under a
 * restore (below). */
static void hold_writes(const struct item *items, struct hvt_apply *a) {
        for (size_t i = 0; i < a->n; i++) {
                struct hvt_result *w = &a->results[i];

                for (size_t j = 0; j < a->n && w->outcome == HVT_WOULD_APPLY; j++) {
                        const struct hvt_result *other = &a->results[j];

                        /* Its directory gone with the disk: nothing there to lose. */
                        if (other->outcome == HVT_FAILED && items[j].dirfd != -ENOENT &&
                            hvt_attr_write_may_change(w->attr, other->attr)) {
                                result_error(w, -other->error);
                                w->unread = true;
                                w->cause = other->attr;
                        }
                }
        }
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
static void redecide(struct item *item, hvt_before_write_t before_write, void *userdata, bool covered,
                     struct hvt_result *res) {
        char first[HVT_VALUE_MAX];
        bool differed = res->outcome == HVT_WOULD_APPLY;
        int r;

        copy_value(first, res->from);
        res->kept[0] = '\0';
        /* Found as hvtuned's write left it, or not, was settled by the first read. */
        decide(item, "", res);
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

/* A watched attribute after the writes that may have changed it: changed, it was knocked on
 * by the last of them, and the hook records its original if nothing said it would change;
 * under a restore it goes back to what it showed before the pass. */
static void recheck_watched(struct item *item, unsigned flags, hvt_before_write_t before_write,
                            void *userdata, bool covered, enum hvt_attr_id cause, struct hvt_result *res) {
        struct hvt_setting back;
        char first[HVT_VALUE_MAX];

        if (res->outcome != HVT_UNCHANGED)
                return;
        copy_value(first, res->from);
        watch(item, res);
        if (res->outcome != HVT_UNCHANGED || strcmp(res->from, first) == 0) {
                copy_value(res->from, first);
                return;
        }
        copy_value(res->to, res->from);
        copy_value(res->from, first);
        res->cause = cause;
        res->outcome = HVT_KNOCKED_ON;
        if (!(flags & HVT_APPLY_RESTORE)) {
                if (!covered) {
                        struct hvt_result was = *res;

                        was.outcome = HVT_WOULD_APPLY;
                        if (before_late_write(&was, first, before_write, userdata) < 0)
                                res->not_recorded = true;
                }
                return;
        }
        /* A restore's knock-on: put back what was there. */
        if (hvt_setting_from_kernel(&back, res->attr, first) < 0)
                return;
        copy_value(res->from, res->to);
        copy_value(res->to, back.text);
        write_one(item, res);
}

/* A restore left res at the operator's newer value, and a restore write of this pass changed
 * it again (the scheduler's resets nr_requests): leaving theirs is the point, so it goes back
 * as it was. Failing that, the report says so instead of "left". */
static void keep_left(struct item *item, struct hvt_result *res) {
        struct hvt_result now = *res;
        struct hvt_setting back;

        watch(item, &now);
        if (now.outcome != HVT_UNCHANGED || strcmp(now.from, res->from) == 0 ||
            hvt_setting_from_kernel(&back, res->attr, res->from) < 0)
                return;
        copy_value(now.to, back.text);
        write_one(item, &now);
        if (now.outcome == HVT_FAILED)
                *res = now;
}

/* The watched attributes are read once the planned ones are, and only those a write of this
 * pass can reach: a write that differs, or one of the attributes such a write may change (a
 * scheduler switch resets nr_requests, which then may be written again; a restore puts a
 * knock-on back), to a fixpoint. Reading every watched attribute up front cost a disk whose
 * scheduler is none already its wbt_lat_usec (3 system calls, 1 a disk at coldplug on the
 * bench's testbeds), and every pass that writes nothing all of them. One left unread keeps
 * the result it was made with (unchanged, no "from", no "to"): hvt_apply_may_write() is false
 * for it, as no differing write reaches it, so no original is taken from it, recheck_watched()
 * never sees it (no write made it stale) and no sink is told of it. */
static void watch_needed(struct item *items, struct hvt_apply *a) {
        bool reached[_HVT_ATTR_DISK_MAX] = {}, more = true;

        for (size_t i = 0; i < a->n; i++)
                reached[i] = items[i].want && a->results[i].outcome == HVT_WOULD_APPLY;
        while (more) {
                more = false;
                for (size_t i = 0; i < a->n; i++)
                        for (size_t j = 0; j < a->n && !reached[i]; j++)
                                if (reached[j] && hvt_attr_write_may_change(a->results[j].attr, a->results[i].attr))
                                        reached[i] = more = true;
        }
        for (size_t i = 0; i < a->n; i++)
                if (!items[i].want && items[i].dirfd >= 0 && reached[i])
                        watch(&items[i], &a->results[i]);
}

/* A dry run reads the bounds its writes would meet, under the scheduler they would be made
 * under: the plan's when it would switch it, else the disk's. */
static void dry_run_bounds(const struct item *items, struct hvt_apply *a) {
        const struct hvt_result *sched = hvt_apply_find(a, HVT_ATTR_SCHEDULER);
        const char *scheduler = NULL;

        if (sched && sched->outcome == HVT_WOULD_APPLY)
                scheduler = sched->to;
        else if (sched && sched->outcome == HVT_UNCHANGED && *sched->from)
                scheduler = sched->from;
        for (size_t i = 0; i < a->n; i++) {
                struct hvt_result *res = &a->results[i];

                if (items[i].want && items[i].dirfd >= 0 && res->outcome == HVT_WOULD_APPLY)
                        (void) hvt_bound_broken(items[i].dirfd, res->attr, scheduler, res->to, res->bound,
                                                sizeof(res->bound));
        }
}

/* The pass over items[], one result each in a, in table order: all read first, the hook,
 * then the writes, then what they knocked on. */
static void apply_items(struct item *items, unsigned flags, hvt_before_write_t before_write, void *userdata,
                        struct hvt_apply *a) {
        bool any = false, sched_written = false, covered[_HVT_ATTR_DISK_MAX], stale[_HVT_ATTR_MAX] = {};
        enum hvt_attr_id cause[_HVT_ATTR_MAX];
        const struct hvt_result *sched_failed = NULL;
        int r;

        for (size_t i = 0; i < a->n; i++) {
                struct hvt_result *res = &a->results[i];

                if (items[i].dirfd < 0)
                        result_error(res, items[i].dirfd);
                else if (items[i].want)
                        decide(&items[i], items[i].left, res);
        }
        watch_needed(items, a);
        /* A restore goes ahead: what it changes besides takes the kernel's coupled value, and
         * holding it would leave hvtuned's own value in place of the original. */
        if (!(flags & HVT_APPLY_RESTORE))
                hold_writes(items, a);
        for (size_t i = 0; i < a->n; i++)
                any = any || a->results[i].outcome == HVT_WOULD_APPLY;
        if (any && (flags & HVT_APPLY_DRY_RUN))
                dry_run_bounds(items, a);
        if (!any || (flags & HVT_APPLY_DRY_RUN))
                return;

        for (size_t i = 0; i < a->n; i++)
                covered[i] = hvt_apply_may_write(a, i);
        r = before_write ? before_write(a, userdata) : 0;
        for (size_t i = 0; i < a->n; i++) {
                struct hvt_result *res = &a->results[i];

                if (r < 0) {
                        if (items[i].want && res->outcome == HVT_WOULD_APPLY) {
                                result_error(res, r);
                                res->not_recorded = true;
                        }
                        continue;
                }
                if (!items[i].want) {
                        if (stale[res->attr])
                                recheck_watched(&items[i], flags, before_write, userdata, covered[i],
                                                cause[res->attr], res);
                        continue;
                }
                /* Written under the scheduler that could not come, it could be the wrong
                 * elevator's value; the next pass tries both again. */
                if (sched_failed && hvt_attr_write_may_change(HVT_ATTR_SCHEDULER, res->attr) &&
                    res->outcome == HVT_WOULD_APPLY) {
                        result_error(res, -sched_failed->error);
                        res->held = true;
                        res->cause = HVT_ATTR_SCHEDULER;
                        continue;
                }
                if (stale[res->attr] && (res->outcome == HVT_UNCHANGED || res->outcome == HVT_WOULD_APPLY))
                        redecide(&items[i], before_write, userdata, covered[i], res);
                if (stale[res->attr] && res->outcome == HVT_LEFT && (flags & HVT_APPLY_RESTORE))
                        keep_left(&items[i], res);
                if (res->outcome != HVT_WOULD_APPLY)
                        continue;
                res->knock_on = sched_written && hvt_attr_reset_by_scheduler(res->attr);
                write_one(&items[i], res);
                /* Failed too: a write the kernel refused may still have been half done. */
                for (size_t id = 0; id < _HVT_ATTR_MAX; id++)
                        if (hvt_attr_write_may_change(res->attr, (enum hvt_attr_id) id)) {
                                stale[id] = true;
                                cause[id] = res->attr;
                        }
                /* Busy still after the tries: another switch is under way, and what is
                 * written next would land under whichever elevator wins. A restore whose
                 * scheduler did not go back holds what goes with it, whatever the error: the
                 * record keeps both, for a restore that puts them back in order. */
                if (res->attr == HVT_ATTR_SCHEDULER && res->outcome == HVT_FAILED &&
                    (res->error == EBUSY || (flags & HVT_APPLY_RESTORE)))
                        sched_failed = res;
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

/* The directory of group g's attributes on d. */
static void group_path(const struct hvt_disk *d, enum hvt_group g, char path[static PATH_MAX]) {
        if (g == HVT_GROUP_DEVICE)
                (void) hvt_strscpy(path, PATH_MAX, d->device_syspath);
        else
                snprintf(path, PATH_MAX, "%s/queue", d->syspath);
}

static int dirs_get(struct dirs *dirs, const struct hvt_disk *d, enum hvt_group g) {
        char path[PATH_MAX];

        if (!dirs->tried[g]) {
                dirs->tried[g] = true;
                group_path(d, g, path);
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

        *res = (struct hvt_result) { .attr = id, .watched = !want };
        if (want)
                copy_value(res->to, want->text);
        items[all->n++] = (struct item) {
                .dirfd = dirs_get(dirs, d, hvt_attr_get(id)->group),
                .want = want,
                .kept = p->kept[id],
                .left = p->left[id],
                .fd = -EBADF,
        };
}

static bool changed_by_plan(const struct hvt_plan *p, enum hvt_attr_id id) {
        for (size_t i = 0; i < _HVT_ATTR_DISK_MAX; i++)
                if (p->want[i].set && hvt_attr_write_may_change((enum hvt_attr_id) i, id))
                        return true;
        return false;
}

/* An attribute the check found missing (read by its path: no faccessat() in its directory, as
 * result_read_error() does for a pass) is one this kernel lacks, as a pass would tell it, when
 * its directory is there: one access(2), so that such a disk keeps the check's few calls. A
 * directory gone is the disk going away, which the pass tells as a failure. */
static bool unsupported_here(const struct hvt_result *res, const char *dir) {
        return res->outcome == HVT_UNSUPPORTED && res->error == ENOENT && access(dir, F_OK) == 0;
}

/* A check of a disk expected to be as planned: each planned attribute read by its path, an
 * open, a pread and a close, and no directory opened. It stands for the pass only when it
 * settles it: nothing to write, and every read good or of an attribute this kernel lacks
 * (unsupported_here()); what decide() makes of a value is the same whichever way it was
 * opened. Else the pass runs as any other, through its directories, so that a write is
 * decided on what was read in the directory it goes into, and a failed read is told as a
 * pass tells it. Watched attributes are read only for a write: none here. */
static bool check_only(const struct hvt_disk *d, const struct hvt_plan *p, struct hvt_apply *ret) {
        char dir[_HVT_GROUP_MAX][PATH_MAX];
        bool have[_HVT_GROUP_MAX] = {}, settled = true;
        struct item items[_HVT_ATTR_DISK_MAX];
        struct hvt_apply all = {};

        for (size_t i = 0; i < _HVT_ATTR_DISK_MAX && settled; i++) {
                enum hvt_group g = hvt_attr_get((enum hvt_attr_id) i)->group;
                struct hvt_result *res = &all.results[all.n];
                struct item *item = &items[all.n];

                if (!p->want[i].set)
                        continue;
                if (!have[g]) {
                        group_path(d, g, dir[g]);
                        have[g] = true;
                }
                *res = (struct hvt_result) { .attr = (enum hvt_attr_id) i };
                copy_value(res->to, p->want[i].text);
                *item = (struct item) {
                        .dirfd = -EBADF,
                        .dir = dir[g],
                        .want = &p->want[i],
                        .kept = p->kept[i],
                        .left = p->left[i],
                        .fd = -EBADF,
                };
                all.n++;
                decide(item, item->left, res);
                settled = res->outcome != HVT_WOULD_APPLY && res->outcome != HVT_FAILED &&
                          (res->error == 0 || unsupported_here(res, dir[g]));
        }
        items_close(items, all.n);
        if (settled)
                *ret = all;
        return settled;
}

void hvt_apply_disk(const struct hvt_disk *d, const struct hvt_plan *p, unsigned flags,
                    hvt_before_write_t before_write, void *userdata, struct hvt_apply *ret) {
        _cleanup_(dirs_close) struct dirs dirs = {};
        struct item items[_HVT_ATTR_DISK_MAX];
        struct hvt_apply all = {};

        if ((flags & HVT_APPLY_CHECK) && !(flags & HVT_APPLY_RESTORE) && check_only(d, p, ret))
                return;

        /* In table order, the planned attributes and, only watched, those the plan leaves
         * alone that a planned write can change and the disk has (an NVMe namespace's
         * io_timeout moves no device/timeout: it has none). */
        for (size_t i = 0; i < _HVT_ATTR_DISK_MAX; i++)
                if (p->want[i].set)
                        add_item(&all, items, &dirs, d, p, (enum hvt_attr_id) i, &p->want[i]);
                else if (changed_by_plan(p, (enum hvt_attr_id) i) && hvt_policy_applies(d, (enum hvt_attr_id) i))
                        add_item(&all, items, &dirs, d, p, (enum hvt_attr_id) i, NULL);
        apply_items(items, flags, before_write, userdata, &all);
        items_close(items, all.n);
        /* A watched attribute is told only when a write changed it: then it has a "to". */
        ret->n = 0;
        for (size_t i = 0; i < all.n; i++)
                if (items[i].want || *all.results[i].to)
                        ret->results[ret->n++] = all.results[i];
}

void hvt_apply_attr(int dirfd, enum hvt_attr_id id, const struct hvt_setting *want, unsigned flags,
                    hvt_before_write_t before_write, void *userdata, struct hvt_result *ret) {
        struct item item = { .dirfd = dirfd, .want = want, .kept = "", .left = "", .fd = -EBADF };
        struct hvt_apply a = { .n = 1 };

        a.results[0] = (struct hvt_result) { .attr = id };
        copy_value(a.results[0].to, want->text);
        apply_items(&item, flags, before_write, userdata, &a);
        items_close(&item, 1);
        *ret = a.results[0];
}
