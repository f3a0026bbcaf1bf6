/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the bounds the kernel states on a disk's attributes, so that a value over one is
 * named with the bound it breaks: the failed write's report, --dry-run's plan, --check-config.
 *
 * nr_requests (block/blk-sysfs.c queue_requests_store(), block/blk-mq.c
 * blk_mq_update_nr_requests() and blk-mq-tag.c blk_mq_tag_update_depth(), the same bounds
 * 5.10 to 6.12, moved into queue_requests_store() in 6.18): with no scheduler it cannot exceed
 * the tag set's queue_depth, which every hw queue shows as mq/<n>/nr_tags (storvsc: the SCSI
 * host's can_queue, 2534 at 32 vCPUs on 6.1; Azure NVMe: the controller's sqsize, 1023); with
 * a scheduler it cannot exceed MAX_SCHED_RQ (block/blk-mq-sched.h, 16 x 128 = 2048, on every
 * kernel from 5.10 on). Either way EINVAL.
 *
 * max_sectors_kb (block/blk-sysfs.c queue_max_sectors_store()): before 6.10, EINVAL above
 * min_not_zero(max_hw_sectors_kb, max_dev_sectors / 2), max_dev_sectors being the device's own
 * limit in 512-byte sectors (a SCSI disk's Block Limits VPD page), which sysfs does not show;
 * from 6.10, clamped to the same limits. The bound named here is max_hw_sectors_kb, the one
 * sysfs shows: a lower max_dev_sectors refuses a write that it lets pass. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attr.h"

/* MAX_SCHED_RQ: the most nr_requests a scheduler takes. */
#define HVT_SCHED_MAX_REQUESTS 2048

/* Whether the kernel states a bound on id that hvtuned can name. */
bool hvt_bound_known(enum hvt_attr_id id);

/* Whether value breaks the bound on attribute id of the disk whose queue/ directory is
 * queuefd, under scheduler ("none", a scheduler's name, or NULL: the one it has now): 1 with
 * buf saying which ("over the tag depth 2534"), 0 when it does not, or when the kernel states
 * no bound on id, -errno when the bound cannot be read. */
int hvt_bound_broken(int queuefd, enum hvt_attr_id id, const char *scheduler, const char *value, char *buf,
                     size_t size);

/* What a configuration's nr_requests breaks on any machine, read from the file alone: over
 * the 2048 a scheduler takes (the one it names beside it, or none named: the disk's own). 1
 * with buf saying so, 0 when it breaks nothing a file can tell. The tag depth that bounds it
 * under none is each disk's (a VM size's): only --dry-run, which reads the disks, can say. */
int hvt_bound_setting(const struct hvt_setting *nr_requests, const struct hvt_setting *scheduler, char *buf,
                      size_t size);
