/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the routing of route.h, and telling a disk that is gone from one that is not. What an
 * event re-checks beyond its own device is settle.h's. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "messages.h"
#include "report.h"
#include "route.h"
#include "settle.h"
#include "tune.h"

/* Takes ownership of disk, and loads the originals a previous run recorded for it. */
static struct hvt_tracked *track(struct hvt_daemon *d, struct hvt_disk *disk) {
        struct hvt_tracked *t = hvt_disks_add(&d->disks, disk);

        if (!t)
                return NULL;
        t->daemon = d;
        hvt_tune_load_record(d, t);
        return t;
}

/* A disk that is gone takes its record with it: a disk added again is a new disk. */
void hvt_route_forget(struct hvt_daemon *d, struct hvt_tracked *t, bool removed) {
        if (removed) {
                struct hvt_subject s = hvt_subject_disk(&t->disk);

                hvt_report_disk_removed(&d->log, &t->disk);
                if (d->state_fd >= 0)
                        (void) hvt_records_remove(d->state_fd, &s);
        } else
                hvt_report_disk_released(&d->log, &t->disk);
        hvt_disks_remove(&d->disks, t);
}

static void route_remove(struct hvt_daemon *d, struct udev_device *dev, struct hvt_tracked *t) {
        /* `udevadm trigger --action=remove` sends a remove for a disk that stays, and an add
         * after it: taken for a removal, it would cost the disk its record, and the add would
         * record the tuned values as its originals. (A real removal's event reaches hvtuned
         * through udevd, after its rules, long after the kernel removed the directory.) Where
         * the kernel cannot say the disk is there, the event's word stands. */
        if (t && hvt_tracked_instance(t) > 0)
                hvt_log_info(&d->log, "%s: a remove event, but the disk is still there: kept as it was",
                             t->disk.sysname);
        else if (t)
                hvt_route_forget(d, t, true);
        else if (d->state_fd >= 0) {
                /* A disk hvtuned had let go of (no longer Hyper-V's) may have a record. */
                struct hvt_subject gone = { .name = udev_device_get_sysname(dev),
                                            .syspath = udev_device_get_syspath(dev) };

                (void) hvt_records_remove(d->state_fd, &gone);
        }
}

/* A disk as classified (r of hvt_classify(): 1 with *disk, which this takes over). */
static int route_classified(struct hvt_daemon *d, struct hvt_tracked *t, const char *sysname, int r,
                            struct hvt_disk *disk) {
        if (t)
                t->seen = true;
        if (r < 0) {
                /* A Hyper-V disk left untuned is a failure, as much as a failed attribute. */
                d->any_failed = true;
                return hvt_report_disk_unreadable(&d->log, sysname, r);
        }
        if (r == 0) {
                if (t)
                        hvt_route_forget(d, t, false);
                return 0;
        }

        /* Another disk at the same path (a LUN re-probed): a new disk, with no history. */
        if (t && (strcmp(t->disk.dev, disk->dev) != 0 || t->disk.diskseq != disk->diskseq ||
                  (t->disk.ino != 0 && disk->ino != 0 && t->disk.ino != disk->ino))) {
                hvt_route_forget(d, t, true);
                t = NULL;
        }
        if (t) {
                /* Same instance: vendor or model may read differently after a rescan. */
                hvt_disk_done(&t->disk);
                t->disk = *disk;
                hvt_tune(d, t, HVT_TUNE_EVENT);
                return 0;
        }

        t = track(d, disk);
        if (!t) {
                hvt_disk_done(disk);
                return hvt_log_errno(&d->log, LOG_ERR, -ENOMEM, "Out of memory");
        }
        t->seen = true;
        /* Found and tuned, said together. */
        hvt_log_hold(&d->log);
        hvt_report_disk_found(&d->log, &t->disk);
        hvt_tune(d, t, HVT_TUNE_FOUND);
        hvt_log_release(&d->log);
        return 0;
}

int hvt_route_found(struct hvt_daemon *d, const char *syspath, const char *sysname, dev_t devnum,
                    struct hvt_classify_cache *cache) {
        struct hvt_disk disk;
        int r = hvt_classify_syspath_cached("/sys/devices", syspath, devnum, cache, &disk);

        return route_classified(d, hvt_disks_find(&d->disks, syspath), sysname, r, &disk);
}

static int route_disk(struct hvt_daemon *d, struct udev_device *dev, const char *action) {
        const char *syspath = udev_device_get_syspath(dev);
        struct hvt_tracked *t = hvt_disks_find(&d->disks, syspath);
        struct hvt_disk disk;
        int r;

        if (action && strcmp(action, "remove") == 0) {
                /* Its controller's other namespaces, before the disk (and its path) may go. */
                if (t)
                        hvt_settle_disk_event(d, &t->disk);
                route_remove(d, dev, t);
                return 0;
        }
        r = route_classified(d, t, udev_device_get_sysname(dev), hvt_classify(dev, &disk), &disk);
        t = hvt_disks_find(&d->disks, syspath);
        if (t)
                hvt_settle_disk_event(d, &t->disk);
        return r;
}

int hvt_route_device(struct hvt_daemon *d, struct udev_device *dev, const char *action) {
        const char *subsystem = udev_device_get_subsystem(dev);

        /* A change on a SCSI LUN (device/ attributes) is a change of its disk; any event of a
         * LUN or of its host can mean the kernel re-applied the limits of every disk there. */
        if (subsystem && strcmp(subsystem, "scsi") == 0) {
                struct hvt_tracked *t = hvt_disks_find_lun(&d->disks, udev_device_get_syspath(dev));

                if (t && action && strcmp(action, "change") == 0)
                        hvt_tune(d, t, HVT_TUNE_EVENT);
                hvt_settle_scsi_event(d, udev_device_get_syspath(dev));
                return 0;
        }
        if (subsystem && strcmp(subsystem, "scsi_host") == 0) {
                hvt_host_handle_device(d, udev_device_get_syspath(dev), action);
                hvt_settle_scsi_event(d, udev_device_get_syspath(dev));
                return 0;
        }
        /* An NVMe controller: reported once it is live, as the storvsc ones are once probed. Its
         * change (a reset's NVME_EVENT=connected) re-applies its namespaces' limits. */
        if (subsystem && strcmp(subsystem, "nvme") == 0) {
                hvt_host_handle_nvme(d);
                if (action && strcmp(action, "change") == 0)
                        hvt_settle_nvme_event(d, udev_device_get_syspath(dev));
                return 0;
        }
        /* A controller's add comes before it is live; its namespaces come after, and with them
         * its queues (not every kernel tells when a controller goes live). */
        if (action && strcmp(action, "add") == 0 && strncmp(udev_device_get_sysname(dev) ?: "", "nvme", 4) == 0)
                hvt_host_handle_nvme(d);
        return route_disk(d, dev, action);
}
