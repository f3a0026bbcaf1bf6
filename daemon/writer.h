/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: who wrote the value a pass repairs: the kernel, re-applying its own read-ahead rule
 * (lib/readahead-rule.h) at a limits commit or a namespace revalidation, or another writer;
 * and the kernel version that rule is of, learnt once at start.
 *
 * The value alone cannot always tell. On 6.17 and later a rotational disk without an optimal
 * I/O size gets 2 x max_sectors_kb: 4096 where max_sectors_kb is 2048, which is also TuneD's
 * `readahead=>4096`. A value the rule gives is the kernel's when
 *   (a) an event that can re-apply the disk's limits came within HVT_REAPPLY_WINDOW_USEC
 *       (disks.h, reapply_usec), or
 *   (b) the rule's value comes from the device's optimal I/O size or the 128 KiB floor, which
 *       no neighbour hvtuned knows writes, or
 *   (c) no neighbour that writes read-ahead is found (neighbours.h: tuned alive on a profile
 *       other than hvtuned's, a udev rule assigning it), looked for only then, never on a
 *       pass's ordinary path;
 * and never where the kernel would have kept what hvtuned left (6.15 and later only raise; on
 * 6.12 and 6.14 that depends on the stable release, so there it may be either). */
#pragma once

#include "context.h"
#include "track.h"

/* The running kernel's version (readahead-rule.h's HVT_KERNEL_VERSION()) from uname(2)'s
 * release; 0 when it cannot be told, which the rule takes for the newest. */
unsigned hvt_writer_kernel_version(void);

/* Among the repairs of a pass on t (a, v and tally as hvt_track_applied() left them), marks
 * the kernel's re-application (hvt_track_kernel_repair()). Reads the disk's queue, and maybe
 * the neighbours, only when read_ahead_kb was repaired. */
void hvt_writer_classify(const struct hvt_daemon *d, const struct hvt_tracked *t, const struct hvt_apply *a,
                         struct hvt_verdict v[static _HVT_ATTR_DISK_MAX], struct hvt_tally *tally);
