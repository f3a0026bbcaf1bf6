/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the controller model: one storvsc SCSI host (a VMBus device bound to hv_storvsc)
 * with the queue figures the kernel gave it at probe, and how a scsi_host class device is
 * recognised as one (classify.c). */
#pragma once

#include <stdint.h>

#include "disk.h"

/* A VMBus device name: the instance GUID without braces, as unbind and bind take it. */
#define HVT_VMBUS_NAME_MAX 37

struct hvt_controller {
        char controller[HVT_GUID_STR_MAX];  /* "{f8b3781b-...}", as disks name their controller */
        char name[HVT_VMBUS_NAME_MAX];      /* the VMBus device's sysname */
        char *syspath;                      /* the VMBus device */
        unsigned host;                      /* N of hostN */
        enum hvt_kind kind;
        unsigned nr_hw_queues, can_queue;   /* from /sys/class/scsi_host/hostN/ */
};

/* 1 and fills ret when syspath (a scsi_host class device, below top) is the SCSI host of a
 * VMBus device bound to hv_storvsc; 0 when it is any other SCSI host; -errno when it is
 * storvsc's but its figures cannot be read: -ENOENT for a missing one, -EBADMSG for one that
 * is not a number. Walked as hvt_classify_syspath() walks a disk's. */
int hvt_classify_controller_syspath(const char *top, const char *syspath, struct hvt_controller *ret);

void hvt_controller_done(struct hvt_controller *c);
