/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the re-check of a controller's managed disks after an event that can mean the kernel
 * re-applied their queue limits (it puts its own read-ahead back then, and sends no event for
 * the disks it does it to): a full pass over each at the event, and once more when the burst
 * has settled, one timer a controller; and the event's time on each of its disks
 * (reapply_usec, disks.h).
 *
 * A controller is named by a syspath: a storvsc disk's is its SCSI host (.../host1, two levels
 * above the LUN), a namespace's the NVMe controller it is a child of (.../nvme/nvme0) or, under
 * native multipath, its subsystem (/sys/devices/virtual/nvme-subsystem/nvme-subsys0): what
 * struct hvt_disk's device_syspath is, less the LUN's two levels for SCSI. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "context.h"

/* When a burst has settled: this long after its last event. While events keep coming, two
 * re-checks are at most HVT_SETTLE_MAX_USEC apart: what a long burst re-applied is back
 * within it. */
#define HVT_SETTLE_USEC (1000 * UINT64_C(1000))
#define HVT_SETTLE_MAX_USEC (2 * HVT_SETTLE_USEC)

/* An event of the controller named by the first len bytes of controller: every managed disk of
 * it gets the event's time, a pass at the burst's first event (after the events read with it)
 * and one HVT_SETTLE_USEC after its last, and while events keep coming one every
 * HVT_SETTLE_MAX_USEC. A paused disk stays paused (hvt_tune()). Nothing for a controller
 * without a managed disk, nor outside the daemon's loop. */
void hvt_settle_event(struct hvt_daemon *d, const char *controller, size_t len);

/* The same for an event of a SCSI device at syspath: a LUN (H:C:T:L) or its host's scsi_host
 * class device (hostN/scsi_host/hostN), both two levels below the SCSI host. */
void hvt_settle_scsi_event(struct hvt_daemon *d, const char *syspath);

/* The same for an event of a managed disk: its controller's (an NVMe namespace's; a storvsc
 * disk's own event is its own: its LUN's tells of its controller). */
void hvt_settle_disk_event(struct hvt_daemon *d, const struct hvt_disk *disk);

/* The same for an event of the NVMe controller at syspath: its own namespaces, and the
 * native-multipath heads of the subsystem it is a path of. */
void hvt_settle_nvme_event(struct hvt_daemon *d, const char *syspath);

void hvt_settle_done(struct hvt_settles *x);
