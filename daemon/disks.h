/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the table of managed disks, each with what hvtuned keeps of it, found by the syspath
 * of its block device or of its SCSI LUN. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "disk.h"
#include "event.h"
#include "index.h"
#include "track.h"

struct hvt_daemon;

/* A Hyper-V disk hvtuned manages. */
struct hvt_tracked {
        struct hvt_daemon *daemon;
        struct hvt_disk disk;
        struct hvt_slots slots;         /* per attribute: wanted, original, history */
        int orig_error;                 /* < 0: the record exists but could not be read */
        unsigned n_failed, n_unsupported, n_would_apply;  /* of the last pass */
        bool seen;                      /* found by the enumeration under way */
        /* For `hvtuned --status`, in the padding after seen (the struct stays the same size):
         * the attribute of the last drift repair (its slot has when: repaired_s), and how many
         * repairs since the disk was found (saturates); of other writers' values only: the
         * kernel's re-application (writer.h) is the metrics' alone. */
        uint8_t last_repair_id;
        /* The last restore left its Azure NVMe I/O timeout as hvtuned set it (tune.c). */
        bool timeout_held;
        uint32_t n_repairs;
        struct hvt_repair_window window; /* CLOCK_MONOTONIC: drift rate limit */
        struct hvt_event_source *resume; /* set while repairs are paused */
        struct hvt_event_source *busy_retry; /* set while a pass waits out an EBUSY */
        unsigned busy_passes;           /* passes run again for EBUSY in a row */
        unsigned n_yielded;             /* attributes left to a neighbour (track.h) */
        /* CLOCK_MONOTONIC: the last event that can have made the kernel re-apply this disk's
         * queue limits (its own, a sibling's on the same controller, the controller's); 0:
         * none yet. Within HVT_REAPPLY_WINDOW_USEC of it, a value the kernel's rule gives is
         * taken for the kernel's re-application. */
        uint64_t reapply_usec;
};

/* How long after such an event its re-application is looked for: the event's re-check and
 * the one after the burst has settled (1 s after its last event) both fall within it. */
#define HVT_REAPPLY_WINDOW_USEC (5 * UINT64_C(1000000))

struct hvt_disks {
        struct hvt_tracked **v;
        size_t n, allocated;
        struct hvt_index index;         /* the disks by syspath */
};

/* A new entry for disk, which it takes over (*disk is emptied); NULL when out of memory,
 * with *disk left as it was. */
struct hvt_tracked *hvt_disks_add(struct hvt_disks *x, struct hvt_disk *disk);

/* Takes t out of the table and frees it, ending a repair pause. */
void hvt_disks_remove(struct hvt_disks *x, struct hvt_tracked *t);

struct hvt_tracked *hvt_disks_find(const struct hvt_disks *x, const char *syspath);

/* Whether t's syspath still holds the disk instance t tracks: 1 when its directory shows the
 * device number and diskseq tracked and is the same directory (without diskseq, a disk
 * re-added at the same LUN has the same path and dev, and only its new kernfs node tells it
 * apart); 0 for another instance or none; -errno when it cannot be read. Asked where an
 * event's word is not enough (a remove of a disk that stays), and before a write to a disk
 * classified in an earlier pass: a disk removed and added again, whose events are not read
 * yet, is another instance, with originals of its own. */
int hvt_tracked_instance(const struct hvt_tracked *t);

/* The managed disk of a SCSI LUN, by the LUN's syspath: a scan, as LUN events are rare. */
struct hvt_tracked *hvt_disks_find_lun(const struct hvt_disks *x, const char *syspath);

void hvt_disks_done(struct hvt_disks *x);
