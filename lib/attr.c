/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the attribute allowlist and the validation of one value against it.
 * Ranges come from the store functions in block/blk-sysfs.c and drivers/scsi/scsi_sysfs.c;
 * a dynamic limit (queue_depth <= can_queue, nr_requests <= tag depth under "none") is left
 * to the kernel, whose EINVAL is reported as a failed result. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "macro.h"

/* BLK_MQ_MAX_DEPTH: no tag set goes beyond it, so neither does nr_requests under "none"
 * (with a scheduler the kernel's limit is MAX_SCHED_RQ, 2048: its EINVAL is reported). */
#define BLK_MQ_MAX_DEPTH 10240
/* scsi_change_queue_depth() never goes beyond 4096, whatever can_queue says. */
#define SCSI_MAX_QUEUE_DEPTH 4096
/* device/timeout and eh_timeout are seconds multiplied by HZ in a 32-bit int / uint:
 * bounded for HZ up to 1000, the largest any distro ships. */
#define TIMEOUT_MAX_S (INT32_MAX / 1000)
#define EH_TIMEOUT_MAX_S (UINT32_MAX / 1000)

static const struct hvt_attr attrs[_HVT_ATTR_MAX] = {
        [HVT_ATTR_SCHEDULER]      = { HVT_GROUP_QUEUE,  "scheduler",      HVT_VALUE_SCHEDULER, 0, 0 },
        /* Below BLKDEV_MIN_RQ (4) the kernel raises the value to 4. */
        [HVT_ATTR_NR_REQUESTS]    = { HVT_GROUP_QUEUE,  "nr_requests",    HVT_VALUE_INT, 4, BLK_MQ_MAX_DEPTH },
        /* EINVAL below one page (4 KiB on x86-64); clamped or EINVAL above max_hw_sectors_kb. */
        [HVT_ATTR_MAX_SECTORS_KB] = { HVT_GROUP_QUEUE,  "max_sectors_kb", HVT_VALUE_INT, 4, UINT32_MAX },
        [HVT_ATTR_RQ_AFFINITY]    = { HVT_GROUP_QUEUE,  "rq_affinity",    HVT_VALUE_INT, 0, 2 },
        [HVT_ATTR_NOMERGES]       = { HVT_GROUP_QUEUE,  "nomerges",       HVT_VALUE_INT, 0, 2 },
        [HVT_ATTR_ADD_RANDOM]     = { HVT_GROUP_QUEUE,  "add_random",     HVT_VALUE_INT, 0, 1 },
        [HVT_ATTR_IOSTATS]        = { HVT_GROUP_QUEUE,  "iostats",        HVT_VALUE_INT, 0, 1 },
        /* Milliseconds, 0 is EINVAL, rounded up to a jiffy. The same request timeout as
         * device/timeout (rq_timeout). */
        [HVT_ATTR_IO_TIMEOUT]     = { HVT_GROUP_QUEUE,  "io_timeout",     HVT_VALUE_INT, 1, UINT32_MAX },
        /* -1 ("back to the default") is accepted by the kernel but reads back as 2000 or 75000,
         * never as -1: it cannot be a steady state, so it is not accepted here. 0 = off.
         * Stored in ns as a s64. */
        [HVT_ATTR_WBT_LAT_USEC]   = { HVT_GROUP_QUEUE,  "wbt_lat_usec",   HVT_VALUE_INT, 0, INT64_MAX / 1000 },
        /* queue_var_store(): EINVAL above UINT_MAX; stored in whole pages, rounded down. */
        [HVT_ATTR_READ_AHEAD_KB]  = { HVT_GROUP_QUEUE,  "read_ahead_kb",  HVT_VALUE_INT, 0, UINT32_MAX },
        /* EINVAL above the host's can_queue, a limit only the kernel knows. */
        [HVT_ATTR_QUEUE_DEPTH]    = { HVT_GROUP_DEVICE, "queue_depth",    HVT_VALUE_INT, 1, SCSI_MAX_QUEUE_DEPTH },
        [HVT_ATTR_TIMEOUT]        = { HVT_GROUP_DEVICE, "timeout",        HVT_VALUE_INT, 1, TIMEOUT_MAX_S },
        [HVT_ATTR_EH_TIMEOUT]     = { HVT_GROUP_DEVICE, "eh_timeout",     HVT_VALUE_INT, 1, EH_TIMEOUT_MAX_S },
        /* module_param(storvsc_max_hw_queues, uint, 0644): 0 is "one per present CPU". */
        [HVT_ATTR_MAX_HW_QUEUES]  = { HVT_GROUP_MODULE, "storvsc_max_hw_queues", HVT_VALUE_INT, 0, UINT32_MAX },
        [HVT_ATTR_DRIVER_UNBIND]  = { HVT_GROUP_DRIVER, "unbind",         HVT_VALUE_DEVICE, 0, 0 },
        [HVT_ATTR_DRIVER_BIND]    = { HVT_GROUP_DRIVER, "bind",           HVT_VALUE_DEVICE, 0, 0 },
};

static const char *const group_names[_HVT_GROUP_MAX] = {
        [HVT_GROUP_QUEUE] = "queue",
        [HVT_GROUP_DEVICE] = "device",
        [HVT_GROUP_MODULE] = "parameters",
        [HVT_GROUP_DRIVER] = "hv_storvsc",
};

const struct hvt_attr *hvt_attr_get(enum hvt_attr_id id) {
        if ((unsigned) id >= _HVT_ATTR_MAX)
                return NULL;
        return &attrs[id];
}

int hvt_attr_lookup(enum hvt_group group, const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(attrs); i++)
                if (attrs[i].group == group && strcmp(attrs[i].name, name) == 0)
                        return (int) i;
        return -ENOENT;
}

/* blk_mq_init_sched() (block/blk-mq-sched.c) sets nr_requests on every switch: to 2 x min(tag
 * depth, 128) for a scheduler, to the tag depth for none (seen on 6.1 and 6.18). */
bool hvt_attr_reset_by_scheduler(enum hvt_attr_id id) {
        return id == HVT_ATTR_NR_REQUESTS;
}

/* The kernel's couplings between the attributes of one disk, so that a pass reads again,
 * after a write, only what that write can have changed, and nothing else a second time:
 * - a scheduler switch resets nr_requests (above), and turns writeback throttling off and on
 *   again: bfq_init_queue() calls wbt_disable_default(), bfq_exit_queue() wbt_enable_default();
 * - a limits update (queue_limits_commit_update(): max_sectors_kb's store on 6.9+, add_random's
 *   and iostats' since they became limits features on 6.11) recomputes the read-ahead;
 * - device/timeout and queue/io_timeout show one value, the queue's rq_timeout.
 * Every other attribute here stores only itself. */
bool hvt_attr_write_may_change(enum hvt_attr_id written, enum hvt_attr_id other) {
        if (written == other)
                return false;
        switch (written) {
        case HVT_ATTR_SCHEDULER:
                return hvt_attr_reset_by_scheduler(other) || other == HVT_ATTR_WBT_LAT_USEC;
        case HVT_ATTR_MAX_SECTORS_KB:
        case HVT_ATTR_ADD_RANDOM:
        case HVT_ATTR_IOSTATS:
                return other == HVT_ATTR_READ_AHEAD_KB;
        case HVT_ATTR_TIMEOUT:
                return other == HVT_ATTR_IO_TIMEOUT;
        case HVT_ATTR_IO_TIMEOUT:
                return other == HVT_ATTR_TIMEOUT;
        default:
                return false;
        }
}

const char *hvt_group_name(enum hvt_group group) {
        if ((unsigned) group >= _HVT_GROUP_MAX)
                return NULL;
        return group_names[group];
}

int hvt_attr_format_path(enum hvt_attr_id id, char *buf, size_t size) {
        const struct hvt_attr *a = hvt_attr_get(id);
        size_t g, n;

        if (!a)
                return -EINVAL;
        /* Copied, not snprintf()ed: every result told makes one (6% of a coldplug's
         * instructions as snprintf()). */
        g = strlen(group_names[a->group]);
        n = strlen(a->name);
        if (g + 1 + n >= size)
                return -ENOBUFS;
        memcpy(buf, group_names[a->group], g);
        buf[g] = '/';
        memcpy(buf + g + 1, a->name, n + 1);
        return 0;
}

/* Letters, digits, '_' and '-': every value hvtuned writes, and nothing a newline, a second
 * sysfs token or a path could hide in. */
bool hvt_token_valid(const char *s) {
        if (!*s)
                return false;
        for (; *s; s++)
                if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
                        return false;
        return true;
}

/* A token that could be an elevator name: what elevator_find() could ever match. */
bool hvt_sched_name_valid(const char *name) {
        return hvt_token_valid(name) && strlen(name) < HVT_SCHED_NAME_MAX && name[0] != '-';
}

int hvt_setting_set_int(struct hvt_setting *s, enum hvt_attr_id id, int64_t v) {
        const struct hvt_attr *a = hvt_attr_get(id);

        if (!a || a->kind != HVT_VALUE_INT)
                return -EINVAL;
        if (v < a->min || v > a->max)
                return -ERANGE;
        *s = (struct hvt_setting) { .set = true, .num = v };
        snprintf(s->text, sizeof(s->text), "%" PRId64, v);
        return 0;
}

int hvt_setting_set_sched(struct hvt_setting *s, const char *name) {
        if (!hvt_sched_name_valid(name))
                return -EINVAL;
        *s = (struct hvt_setting) { .set = true };
        strcpy(s->text, name);  /* fits: checked above against HVT_SCHED_NAME_MAX */
        return 0;
}

int hvt_setting_from_kernel(struct hvt_setting *s, enum hvt_attr_id id, const char *text) {
        const struct hvt_attr *a = hvt_attr_get(id);
        long long v;
        char *end;

        if (!a)
                return -EINVAL;
        if (a->kind == HVT_VALUE_SCHEDULER)
                return hvt_setting_set_sched(s, text);
        errno = 0;
        v = strtoll(text, &end, 10);
        if (errno != 0 || end == text || *end != '\0')
                return -EINVAL;
        *s = (struct hvt_setting) { .set = true, .num = v };
        snprintf(s->text, sizeof(s->text), "%lld", v);
        return 0;
}
