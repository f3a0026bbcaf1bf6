/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: turning the configuration and one disk into the plan for that disk: which
 * attributes to manage and the value each should have. */
#pragma once

#include <stdbool.h>

#include "attr.h"
#include "config.h"
#include "disk.h"
#include "records.h"

/* A disk's: the driver's attributes (_HVT_ATTR_DISK_MAX and on) have no place in it. */
struct hvt_plan {
        struct hvt_setting want[_HVT_ATTR_DISK_MAX];  /* .set = false: leave alone */
        /* What the kernel kept the last time want was written (clamped); found again, it is
         * the kernel's answer, not drift, and is not written again. "" when none. Filled by
         * the caller, which knows the history; hvt_policy_plan() leaves it empty. */
        char kept[_HVT_ATTR_DISK_MAX][HVT_VALUE_MAX];
        /* A restore of a knock-on: what hvtuned's write left in it. Found other than that
         * (and than the original), someone changed it since: their value stays. "" when
         * none: put back whatever it shows. */
        char left[_HVT_ATTR_DISK_MAX][HVT_VALUE_MAX];
        /* Where each want came from; a file's names the configuration's copy of its name,
         * valid while that configuration is. */
        struct hvt_origin origin[_HVT_ATTR_DISK_MAX];
};

/* The platform defaults, for every disk hvtuned manages (storvsc on Hyper-V, Azure and WSL2,
 * Azure's NVMe) unless a file sets the attribute or says platform_defaults = false:
 * - read_ahead_kb at most 128 (KiB): the kernel's own default (VM_READAHEAD_PAGES) for a disk
 *   that random I/O reads. The Azure NVMe accelerator comes up with 65536, and kernels with
 *   commit 459779d04ae8 give a rotational disk without io_opt its max_sectors, 4096 on
 *   storvsc's Standard HDD and SSD disks. A ceiling, so that whoever lowered it keeps theirs.
 * - io_timeout 240000 (ms) on Azure's NVMe disks, as Azure's own rule sets it: the host
 *   retries remote I/O for 120 s before it gives up, and a guest that times out first fails
 *   I/O that would have completed. */
#define HVT_PLATFORM_READ_AHEAD_KB 128
#define HVT_PLATFORM_NVME_IO_TIMEOUT_MS 240000
/* How long Azure's host retries a remote disk's I/O (azure-vm-utils PR #82): an Azure NVMe
 * disk's I/O timeout under it fails I/O the host would still complete. A stop does not put
 * such an original back over hvtuned's value (tune.c). */
#define HVT_PLATFORM_NVME_RETRY_MS 120000
void hvt_platform_defaults(const struct hvt_disk *d, struct hvt_setting ret[static _HVT_ATTR_DISK_MAX]);

bool hvt_match_disk(const struct hvt_match *m, const struct hvt_disk *d);

/* Whether attribute id is one of d's at all: not SCSI's device/ on NVMe, not a request
 * queue's on an NVMe multipath head. A plan never manages the others. */
bool hvt_policy_applies(const struct hvt_disk *d, enum hvt_attr_id id);

/* The platform defaults, the top-level groups (the built-in policy's among them, see
 * hvt_config_load()), then every matching override in order: a later one wins per attribute,
 * and an attribute no layer sets is not managed. orig holds the originals hvtuned recorded
 * for d (NULL: none): a ceiling (at_most) over an attribute whose original is under it is left
 * out, so that the original goes back and its record goes, as a restart would do; otherwise
 * apply judges the ceiling against what the disk shows. */
void hvt_policy_plan(const struct hvt_config *c, const struct hvt_disk *d, const struct hvt_originals *orig,
                     struct hvt_plan *ret);

size_t hvt_plan_count(const struct hvt_plan *p);
