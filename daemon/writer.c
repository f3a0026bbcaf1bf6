/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: telling the kernel's re-application from another writer's, as writer.h says. */
#include <limits.h>
#include <stdio.h>
#include <sys/utsname.h>

#include "layout.h"
#include "macro.h"
#include "neighbours.h"
#include "readahead-rule.h"
#include "sysfs.h"
#include "writer.h"

unsigned hvt_writer_kernel_version(void) {
        struct utsname u;

        if (uname(&u) < 0)
                return 0;
        return hvt_release_version(u.release);
}

/* What the pass found of max_sectors_kb when it wrote it (the kernel's re-application, if any,
 * used that one, not hvtuned's), else NULL. */
static const char *max_sectors_found(const struct hvt_apply *a) {
        for (size_t i = 0; i < a->n; i++)
                if (a->results[i].attr == HVT_ATTR_MAX_SECTORS_KB &&
                    (a->results[i].outcome == HVT_APPLIED || a->results[i].outcome == HVT_CLAMPED) && *a->results[i].from)
                        return a->results[i].from;
        return NULL;
}

/* The rule's value for the disk's queue as it shows now, with max_sectors_kb as the pass found
 * it; false when it cannot be read. */
static bool rule_now(const struct hvt_daemon *d, const struct hvt_tracked *t, const struct hvt_apply *a,
                     struct hvt_ra_rule *ret) {
        char path[PATH_MAX], io_opt[32], rotational[32], max_sectors_kb[32];
        _cleanup_close_ int fd = -EBADF;
        struct hvt_ra_queue q;

        if ((size_t) snprintf(path, sizeof(path), "%s/queue", t->disk.syspath) >= sizeof(path))
                return false;
        fd = hvt_sysfs_open_dir(path);
        if (fd < 0 || hvt_sysfs_read(fd, "optimal_io_size", io_opt, sizeof(io_opt)) < 0 ||
            hvt_sysfs_read(fd, "rotational", rotational, sizeof(rotational)) < 0 ||
            hvt_sysfs_read(fd, "max_sectors_kb", max_sectors_kb, sizeof(max_sectors_kb)) < 0 ||
            hvt_ra_queue_parse(hvt_kind_is_nvme(t->disk.kind), io_opt, rotational,
                               max_sectors_found(a) ?: max_sectors_kb, &q) < 0)
                return false;
        hvt_readahead_rule(d->kernel_version, &q, ret);
        return true;
}

/* Whether a neighbour that writes read-ahead is there (neighbours.h); none when the look
 * fails. */
static bool neighbour_found(void) {
        struct hvt_suspects s;

        return hvt_suspects_find("/", HVT_ATTR_READ_AHEAD_KB, &s) >= 0 && (s.tuned > 0 || *s.rule);
}

static bool value_is_kernels(const struct hvt_daemon *d, const struct hvt_tracked *t, const struct hvt_apply *a,
                             const struct hvt_result *r) {
        struct hvt_setting found, ours;
        struct hvt_ra_rule rule;
        uint64_t now;

        if (hvt_setting_from_kernel(&found, HVT_ATTR_READ_AHEAD_KB, r->from) < 0 ||
            hvt_setting_from_kernel(&ours, HVT_ATTR_READ_AHEAD_KB, *r->kept ? r->kept : r->to) < 0 ||
            !rule_now(d, t, a, &rule) || rule.source == HVT_RA_NONE || (uint64_t) found.num != rule.kb)
                return false;
        /* 6.15 and later only raise it: what hvtuned left at or above the rule's stays. On 6.12
         * and 6.14 that depends on the stable release: the rule's value is the kernel's either way. */
        if (rule.higher == HVT_RA_KEEPS && (uint64_t) ours.num >= rule.kb)
                return false;
        now = d->event ? hvt_event_now(d->event) : 0;
        if (t->reapply_usec != 0 && now >= t->reapply_usec && now - t->reapply_usec <= HVT_REAPPLY_WINDOW_USEC)
                return true;
        if (rule.source != HVT_RA_MAX_SECTORS)
                return true;
        return !neighbour_found();
}

void hvt_writer_classify(const struct hvt_daemon *d, const struct hvt_tracked *t, const struct hvt_apply *a,
                         struct hvt_verdict v[static _HVT_ATTR_DISK_MAX], struct hvt_tally *tally) {
        if (!(tally->repaired & (UINT32_C(1) << HVT_ATTR_READ_AHEAD_KB)))
                return;
        for (size_t i = 0; i < a->n; i++)
                if (a->results[i].attr == HVT_ATTR_READ_AHEAD_KB && v[i].writer == HVT_WRITER_OTHER &&
                    value_is_kernels(d, t, a, &a->results[i]))
                        hvt_track_kernel_repair(tally, v, a, i);
}
