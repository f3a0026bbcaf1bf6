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

bool hvt_outcome_is_change(enum hvt_outcome o) {
        return o == HVT_APPLIED || o == HVT_CLAMPED || o == HVT_WOULD_APPLY;
}

static void copy_value(char dst[static HVT_VALUE_MAX], const char *src) {
        snprintf(dst, HVT_VALUE_MAX, "%s", src);
}

/* A read that fails: a missing attribute is a kernel that lacks it, anything else a failure. */
static void result_read_error(struct hvt_result *res, int r) {
        res->error = -r;
        res->outcome = r == -ENOENT ? HVT_UNSUPPORTED : HVT_FAILED;
}

static int parse_int(const char *s, int64_t *ret) {
        char *end;
        long long v;

        errno = 0;
        v = strtoll(s, &end, 10);
        if (errno != 0 || end == s || *end != '\0')
                return -EBADMSG;
        *ret = v;
        return 0;
}

static void apply_scheduler(int dirfd, const struct hvt_setting *want, unsigned flags,
                            struct hvt_result *res) {
        struct hvt_sched_list list;
        char buf[READ_MAX], target[HVT_SCHED_NAME_MAX];
        const char *resolved;
        int r;

        r = hvt_sysfs_read(dirfd, "scheduler", buf, sizeof(buf));
        if (r < 0)
                return result_read_error(res, r);
        if (hvt_sched_parse(buf, &list) < 0) {
                copy_value(res->from, buf);
                res->error = EBADMSG;
                res->outcome = HVT_FAILED;
                return;
        }
        copy_value(res->from, hvt_sched_active(&list));

        /* Copied: the read-back below parses into the same list. */
        resolved = hvt_sched_resolve(&list, want->text);
        if (!resolved) {
                hvt_sched_format(&list, res->offered, sizeof(res->offered));
                res->outcome = HVT_UNSUPPORTED;
                return;
        }
        snprintf(target, sizeof(target), "%s", resolved);
        copy_value(res->to, target);
        if (strcmp(hvt_sched_active(&list), target) == 0) {
                res->outcome = HVT_UNCHANGED;
                return;
        }
        if (flags & HVT_APPLY_DRY_RUN) {
                res->outcome = HVT_WOULD_APPLY;
                return;
        }

        r = hvt_sysfs_write(dirfd, HVT_ATTR_SCHEDULER, target);
        if (r < 0) {
                res->error = -r;
                res->outcome = HVT_FAILED;
                return;
        }
        r = hvt_sysfs_read(dirfd, "scheduler", buf, sizeof(buf));
        if (r < 0 || hvt_sched_parse(buf, &list) < 0) {
                res->error = r < 0 ? -r : EBADMSG;
                res->outcome = HVT_FAILED;
                return;
        }
        if (strcmp(hvt_sched_active(&list), target) == 0)
                res->outcome = HVT_APPLIED;
        else {
                copy_value(res->kept, hvt_sched_active(&list));
                res->outcome = HVT_CLAMPED;
        }
}

static void apply_int(int dirfd, const struct hvt_attr *a, const struct hvt_setting *want,
                      unsigned flags, struct hvt_result *res) {
        char buf[READ_MAX];
        int64_t cur;
        int r;

        r = hvt_sysfs_read(dirfd, a->name, buf, sizeof(buf));
        if (r < 0)
                return result_read_error(res, r);
        copy_value(res->from, buf);
        if (parse_int(buf, &cur) < 0) {
                res->error = EBADMSG;
                res->outcome = HVT_FAILED;
                return;
        }
        if (cur == want->num) {
                res->outcome = HVT_UNCHANGED;
                return;
        }
        if (flags & HVT_APPLY_DRY_RUN) {
                res->outcome = HVT_WOULD_APPLY;
                return;
        }

        r = hvt_sysfs_write(dirfd, res->attr, want->text);
        if (r < 0) {
                res->error = -r;
                res->outcome = HVT_FAILED;
                return;
        }
        r = hvt_sysfs_read(dirfd, a->name, buf, sizeof(buf));
        if (r < 0 || parse_int(buf, &cur) < 0) {
                res->error = r < 0 ? -r : EBADMSG;
                res->outcome = HVT_FAILED;
                return;
        }
        if (cur == want->num)
                res->outcome = HVT_APPLIED;
        else {
                copy_value(res->kept, buf);
                res->outcome = HVT_CLAMPED;
        }
}

/* The two directories a plan writes into, each opened on first use. */
struct dirs {
        bool tried[_HVT_GROUP_MAX];
        int fd[_HVT_GROUP_MAX];
};

static int dirs_get(struct dirs *dirs, const struct hvt_disk *d, enum hvt_group g) {
        char path[4096];

        if (!dirs->tried[g]) {
                dirs->tried[g] = true;
                if (g == HVT_GROUP_DEVICE)
                        snprintf(path, sizeof(path), "%s", d->device_syspath);
                else
                        snprintf(path, sizeof(path), "%s/queue", d->syspath);
                dirs->fd[g] = hvt_sysfs_open_dir(path);
        }
        return dirs->fd[g];
}

int hvt_apply_disk(const struct hvt_disk *d, const struct hvt_plan *p, unsigned flags,
                   struct hvt_apply *ret) {
        struct dirs dirs = {};

        ret->n = 0;
        for (size_t i = 0; i < _HVT_ATTR_MAX; i++) {
                const struct hvt_setting *want = &p->want[i];
                const struct hvt_attr *a = hvt_attr_get((enum hvt_attr_id) i);
                struct hvt_result *res;
                int fd;

                if (!want->set)
                        continue;
                res = &ret->results[ret->n++];
                *res = (struct hvt_result) { .attr = (enum hvt_attr_id) i };
                copy_value(res->to, want->text);

                /* A directory that cannot be opened (the disk is going away) fails its
                 * attributes; the other group may still work. */
                fd = dirs_get(&dirs, d, a->group);
                if (fd < 0) {
                        res->error = -fd;
                        res->outcome = HVT_FAILED;
                        continue;
                }

                if (a->kind == HVT_VALUE_SCHEDULER)
                        apply_scheduler(fd, want, flags, res);
                else
                        apply_int(fd, a, want, flags, res);
        }

        for (size_t g = 0; g < _HVT_GROUP_MAX; g++)
                if (dirs.tried[g] && dirs.fd[g] >= 0)
                        close(dirs.fd[g]);
        return 0;
}
