/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: routing one udev device to what it is about: a disk's pass, a disk forgotten, a
 * controller read again. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <libudev.h>

#include "context.h"

/* A block disk for "add" and "change" (or none, from enumeration) is tuned, forgotten on
 * "remove"; a SCSI LUN's change re-checks its disk; a SCSI host's event reads the controllers
 * again. An NVMe namespace's event, an NVMe controller's change, a LUN's or a SCSI host's
 * event also re-check every managed disk of that controller (settle.h). Devices that are not
 * Hyper-V disks are ignored; a managed disk that stops being one is forgotten and left as it
 * is. */
int hvt_route_device(struct hvt_daemon *d, struct udev_device *dev, const char *action);

/* A whole disk the walk over /sys/class/block found (as hvt_classify_block_name() reads it),
 * classified with the walk's cache: tuned when it is a Hyper-V disk, as for an "add" event. */
int hvt_route_found(struct hvt_daemon *d, const char *syspath, const char *sysname, dev_t devnum,
                    struct hvt_classify_cache *cache);

/* Forgets a managed disk: removed (gone, its record with it) or released (no longer a
 * Hyper-V disk: left as it is). */
void hvt_route_forget(struct hvt_daemon *d, struct hvt_tracked *t, bool removed);
