/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the allowlist of sysfs attributes hvtuned may write, with the range the kernel
 * accepts for each. Config validation, plan building and the write path all read this one
 * table, so adding a tunable is one row. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The sysfs directory an attribute lives in; also the config group that sets it. */
enum hvt_group {
        HVT_GROUP_QUEUE,   /* <disk syspath>/queue/ */
        HVT_GROUP_DEVICE,  /* the disk's SCSI LUN: <disk syspath>/device/ */
        HVT_GROUP_MODULE,  /* /sys/module/hv_storvsc/parameters/: the driver, not a disk */
        HVT_GROUP_DRIVER,  /* /sys/bus/vmbus/drivers/hv_storvsc/: re-probing a controller */
        _HVT_GROUP_MAX,
};

/* Table order is apply order, and restore order. The scheduler goes first: the nr_requests
 * limit depends on it and switching resets nr_requests. read_ahead_kb comes after every
 * limits update (max_sectors_kb, add_random, iostats): on 6.9+ each recomputes ra_pages and
 * would undo it, written or put back. io_timeout (ms) comes after device/timeout (s), the
 * same request timeout: the finer one last, or its precision is lost. */
enum hvt_attr_id {
        HVT_ATTR_SCHEDULER,
        HVT_ATTR_NR_REQUESTS,
        HVT_ATTR_MAX_SECTORS_KB,
        HVT_ATTR_RQ_AFFINITY,
        HVT_ATTR_NOMERGES,
        HVT_ATTR_ADD_RANDOM,
        HVT_ATTR_IOSTATS,
        HVT_ATTR_WBT_LAT_USEC,
        HVT_ATTR_READ_AHEAD_KB,
        HVT_ATTR_QUEUE_DEPTH,
        HVT_ATTR_TIMEOUT,
        HVT_ATTR_IO_TIMEOUT,
        HVT_ATTR_EH_TIMEOUT,
        /* Attributes of disks end here; the driver's follow. */
        HVT_ATTR_MAX_HW_QUEUES,   /* read at every controller probe */
        HVT_ATTR_DRIVER_UNBIND,
        HVT_ATTR_DRIVER_BIND,
        _HVT_ATTR_MAX,
        _HVT_ATTR_DISK_MAX = HVT_ATTR_MAX_HW_QUEUES,
};

enum hvt_value_kind {
        HVT_VALUE_SCHEDULER,  /* an elevator name, shown by the kernel as a bracketed list */
        HVT_VALUE_INT,        /* a decimal integer in [min, max] */
        HVT_VALUE_DEVICE,     /* a device name (a VMBus instance GUID): written, never read */
};

struct hvt_attr {
        enum hvt_group group;
        const char *name;
        enum hvt_value_kind kind;
        int64_t min, max;
};

/* Long enough for any int64 and for an elevator name (the kernel's ELV_NAME_MAX is 16). */
#define HVT_VALUE_MAX 24
#define HVT_SCHED_NAME_MAX 16

/* One desired (or found) value: the text that is written, and its number for ints. */
struct hvt_setting {
        bool set;
        /* An integer's ceiling rather than its value: a value at or below num is left as it is
         * (a platform default: lower what is too high, never raise what someone lowered). */
        bool at_most;
        int64_t num;
        char text[HVT_VALUE_MAX];
};

const struct hvt_attr *hvt_attr_get(enum hvt_attr_id id);
/* Whether a scheduler switch puts the kernel's default back into id. */
bool hvt_attr_reset_by_scheduler(enum hvt_attr_id id);
/* Whether a write of one attribute may change what another shows. */
bool hvt_attr_write_may_change(enum hvt_attr_id written, enum hvt_attr_id other);
int hvt_attr_lookup(enum hvt_group group, const char *name);
const char *hvt_group_name(enum hvt_group group);

/* "queue/scheduler": the name used in reports, the journal and the docs. */
int hvt_attr_format_path(enum hvt_attr_id id, char *buf, size_t size);

bool hvt_token_valid(const char *s);
bool hvt_sched_name_valid(const char *name);
int hvt_setting_set_int(struct hvt_setting *s, enum hvt_attr_id id, int64_t v);
int hvt_setting_set_sched(struct hvt_setting *s, const char *name);
/* A value as the kernel showed it (an original to restore): any integer for an integer
 * attribute, not just the configurable range. -EINVAL if it is not one. */
int hvt_setting_from_kernel(struct hvt_setting *s, enum hvt_attr_id id, const char *text);
