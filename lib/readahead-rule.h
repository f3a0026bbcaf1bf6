/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the kernel's own read-ahead rule: what read_ahead_kb a kernel puts on a disk when it
 * re-applies the disk's limits, from what the disk's queue shows. One rule for its two users:
 * the daemon, which tells the kernel's re-application from a neighbour's write (daemon/tune.c),
 * and the testbed shim that plays the kernel (tests/emulate/sysfs-kernel.c). Pure.
 *
 * From the kernels' sources:
 * - 5.10 and 6.1: the NVMe driver's nvme_update_disk_info() calls blk_queue_io_opt() at every
 *   namespace revalidation (a scan, a reset, a rescan), which sets ra_pages to
 *   max(2 x io_opt, VM_READAHEAD_PAGES), lowering a higher value too (block/blk-settings.c).
 *   sd sets q->limits.io_opt directly and never touches read-ahead after the disk's add.
 * - 6.9 and on: every limits commit (queue_limits_commit_update(): a rescan, a namespace
 *   revalidation, a max_sectors_kb, add_random or iostats store) runs blk_apply_bdi_limits(),
 *   which set max(2 x io_opt, VM_READAHEAD_PAGES), lowering a higher value: for any disk at
 *   a max_sectors_kb store, and at sd's own revalidation (a rescan) from 6.11 (804e498e0496).
 * - 6.15 and on (7b720c720253, "block: never reduce ra_pages in blk_apply_bdi_limits"): it
 *   sets max3(ra_pages, 2 x io_opt, VM_READAHEAD_PAGES): it raises, never lowers. The stable
 *   backports of 29 Apr 2025 brought it to 6.12.26 and a 6.14.y, so 6.12 and 6.14 lower or
 *   not by their stable release, which X.Y cannot tell (HVT_RA_EITHER).
 * - 6.17 and on (459779d04ae8, merged for 6.17-rc1): a rotational disk without io_opt takes
 *   max_sectors in its place. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* VM_READAHEAD_PAGES in KiB: 128 KiB whatever the page size. */
#define HVT_READAHEAD_FLOOR_KB 128

/* Where the rule's value comes from. */
enum hvt_ra_source {
        HVT_RA_NONE,          /* the kernel sets nothing at such a commit (sd before 6.12) */
        HVT_RA_FLOOR,         /* VM_READAHEAD_PAGES */
        HVT_RA_IO_OPT,        /* twice the optimal I/O size */
        HVT_RA_MAX_SECTORS,   /* twice max_sectors_kb, for a rotational disk without one (6.17+) */
};

/* What the queue shows, as its sysfs attributes say it. */
struct hvt_ra_queue {
        bool nvme;                /* an NVMe namespace (its driver revalidates) */
        bool rotational;          /* queue/rotational */
        uint64_t io_opt_bytes;    /* queue/optimal_io_size */
        uint64_t max_sectors_kb;  /* queue/max_sectors_kb */
};

/* What becomes of a value higher than the rule's. */
enum hvt_ra_higher {
        HVT_RA_LOWERS,   /* it is set to the rule's, lower or not (before 6.15) */
        HVT_RA_KEEPS,    /* it stays: the kernel only raises (6.15 and on) */
        HVT_RA_EITHER,   /* by the stable release (6.12, 6.14): the later ones keep it */
};

struct hvt_ra_rule {
        enum hvt_ra_source source;
        uint64_t kb;                 /* what the kernel sets (0 with HVT_RA_NONE) */
        enum hvt_ra_higher higher;
};

/* The queue from its attributes' texts as sysfs shows them, newline stripped: -EINVAL for
 * one that is not a number (rotational: 0 or 1). */
int hvt_ra_queue_parse(bool nvme, const char *io_opt, const char *rotational, const char *max_sectors_kb,
                       struct hvt_ra_queue *ret);

/* "X.Y" of a kernel as X * 1000 + Y (7.3: 7003). */
#define HVT_KERNEL_VERSION(major, minor) ((major) * 1000u + (minor))

/* The rule of the kernel version (HVT_KERNEL_VERSION(); 0: unknown, taken as the newest,
 * whose rule covers the others' values) for the queue q. */
void hvt_readahead_rule(unsigned version, const struct hvt_ra_queue *q, struct hvt_ra_rule *ret);

/* What read_ahead_kb shows after such a commit, from current_kb; with HVT_RA_EITHER, as the
 * later stable releases do (they keep a higher one): the 6.12 the emulation plays is 6.12.118. */
uint64_t hvt_readahead_after(const struct hvt_ra_rule *r, uint64_t current_kb);
