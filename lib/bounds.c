/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the kernel's stated bounds of bounds.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bounds.h"
#include "macro.h"
#include "parse.h"
#include "scheduler.h"
#include "sysfs.h"

bool hvt_bound_known(enum hvt_attr_id id) {
        return id == HVT_ATTR_NR_REQUESTS || id == HVT_ATTR_MAX_SECTORS_KB;
}

static int read_u64(int dirfd, const char *name, uint64_t *ret) {
        char buf[32];
        int r = hvt_sysfs_read(dirfd, name, buf, sizeof(buf));

        return r < 0 ? r : hvt_parse_u64(buf, UINT64_MAX, ret);
}

/* Whether the disk runs under a scheduler: the one named, or the one it has now. */
static int under_scheduler(int queuefd, const char *scheduler) {
        struct hvt_sched_list list;
        char buf[256];
        const char *active;
        int r;

        if (scheduler)
                return strcmp(scheduler, "none") != 0;
        r = hvt_sysfs_read(queuefd, "scheduler", buf, sizeof(buf));
        if (r < 0)
                return r;
        r = hvt_sched_parse(buf, &list);
        if (r < 0)
                return r;
        active = hvt_sched_active(&list);
        return active && strcmp(active, "none") != 0;
}

/* The tag set's depth, as its first hw queue shows it: every hw queue of a disk has the same
 * (blk_mq_alloc_map_and_rqs() makes each with the set's queue_depth). */
static int tag_depth(int queuefd, uint64_t *ret) {
        _cleanup_close_ int mq = openat(queuefd, "../mq/0", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (mq < 0)
                return negative_errno();
        return read_u64(mq, "nr_tags", ret);
}

int hvt_bound_broken(int queuefd, enum hvt_attr_id id, const char *scheduler, const char *value, char *buf,
                     size_t size) {
        uint64_t want, bound;
        int r;

        if (!hvt_bound_known(id) || hvt_parse_u64(value, UINT64_MAX, &want) < 0)
                return 0;
        if (id == HVT_ATTR_MAX_SECTORS_KB) {
                r = read_u64(queuefd, "max_hw_sectors_kb", &bound);
                if (r < 0)
                        return r;
                if (want <= bound)
                        return 0;
                snprintf(buf, size, "over queue/max_hw_sectors_kb %" PRIu64, bound);
                return 1;
        }
        r = under_scheduler(queuefd, scheduler);
        if (r < 0)
                return r;
        if (r > 0) {
                if (want <= HVT_SCHED_MAX_REQUESTS)
                        return 0;
                snprintf(buf, size, "over the %u a scheduler takes", HVT_SCHED_MAX_REQUESTS);
                return 1;
        }
        r = tag_depth(queuefd, &bound);
        if (r < 0)
                return r;
        if (want <= bound)
                return 0;
        snprintf(buf, size, "over the tag depth %" PRIu64, bound);
        return 1;
}

int hvt_bound_setting(const struct hvt_setting *nr_requests, const struct hvt_setting *scheduler, char *buf,
                      size_t size) {
        bool none = scheduler && scheduler->set && strcmp(scheduler->text, "none") == 0;

        if (!nr_requests->set || nr_requests->at_most || nr_requests->num <= HVT_SCHED_MAX_REQUESTS)
                return 0;
        if (none)
                snprintf(buf, size, "queue.nr_requests = %" PRId64 " is over the %u a scheduler takes: with "
                         "scheduler none it is bounded by each disk's tag depth instead (storvsc's can_queue, "
                         "2534 at 32 vCPUs; 1023 on Azure's NVMe), which `hvtuned --dry-run` reads",
                         nr_requests->num, HVT_SCHED_MAX_REQUESTS);
        else if (scheduler && scheduler->set)
                snprintf(buf, size, "queue.nr_requests = %" PRId64 " is over the %u a scheduler takes: the "
                         "kernel refuses it under %s", nr_requests->num, HVT_SCHED_MAX_REQUESTS, scheduler->text);
        else
                snprintf(buf, size, "queue.nr_requests = %" PRId64 " is over the %u a scheduler takes: the "
                         "kernel refuses it on a disk with a scheduler, and with none where the disk's tag depth "
                         "is lower, which `hvtuned --dry-run` reads", nr_requests->num, HVT_SCHED_MAX_REQUESTS);
        return 1;
}
