/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: what one preallocated request of a storvsc controller costs on the running kernel,
 * and where that figure comes from: the kernel's own BTF, a table of upstream-numbered
 * kernels, the nearest of those rows assumed (an estimate with its error band, said as one),
 * or nowhere ("unknown layout": no estimate is made). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "btf.h"

enum hvt_layout_source {
        HVT_LAYOUT_UNKNOWN,
        HVT_LAYOUT_BTF,     /* every size from /sys/kernel/btf */
        HVT_LAYOUT_TABLE,   /* an upstream-numbered kernel's row (any size BTF has agrees) */
        HVT_LAYOUT_ASSUMED, /* the nearest row by version fills in what BTF lacks: an estimate */
};

/* The structs a request is made of (blk_mq_alloc_rqs(), scsi_mq_setup_tags()): sizeof each,
 * 0 when not known. */
struct hvt_layout_sizes {
        uint32_t request;        /* struct request (vmlinux) */
        uint32_t scsi_cmnd;      /* struct scsi_cmnd (vmlinux, or the scsi_mod module) */
        uint32_t storvsc_cmd;    /* struct storvsc_cmd_request (vmlinux, or hv_storvsc) */
        uint32_t scatterlist;    /* struct scatterlist (vmlinux): 2 inline entries a command */
};

#define HVT_LAYOUT_ROWS_MAX 8

struct hvt_layout {
        enum hvt_layout_source source;
        unsigned request_bytes;             /* round_up(the four, 64); 0 when unknown */
        struct hvt_layout_sizes sizes;      /* what request_bytes was made of */
        char table_row[16];                 /* HVT_LAYOUT_TABLE, _ASSUMED: "5.10" */
        /* HVT_LAYOUT_ASSUMED: what request_bytes would be with each row's sizes where BTF has
         * none, one a row (request_bytes is the assumed row's), their lowest and highest, and
         * the rows they span ("5.10-7.3"). An estimate made at each of row_bytes says how far
         * the one made at request_bytes may be off (hvt_layout_band_pct()). */
        unsigned row_bytes[HVT_LAYOUT_ROWS_MAX];
        size_t n_rows;
        unsigned request_lo, request_hi;
        char band_rows[24];
};

/* How far figure may be off, in percent rounded up, when any of the n others may be the true
 * one: the largest distance between figure and one of them. 0 when figure is 0. */
unsigned hvt_layout_band_pct(uint64_t figure, const uint64_t *others, size_t n);

/* round_up(request + scsi_cmnd + storvsc_cmd + 2 x scatterlist, 64) into *ret: the bytes of
 * one preallocated request on x86-64. -ERANGE when a size is 0 or the sum is past a page
 * (no kernel's is: a hostile or foreign BTF). */
int hvt_layout_request_bytes(const struct hvt_layout_sizes *s, unsigned *ret);

/* Reads the four sizes from BTF: vmlinux's blob (required) and the split BTF of scsi_mod and
 * hv_storvsc (either may be NULL, as when SCSI or storvsc is built in, or before 5.11's module
 * BTF). The first BTF that has a struct gives its size. -EBADMSG / -ENOTUNIQ as btf.h says. */
int hvt_layout_sizes_from_btf(const void *vmlinux, size_t vmlinux_size, const void *scsi_mod, size_t scsi_mod_size,
                              const void *storvsc, size_t storvsc_size, struct hvt_layout_sizes *ret);

/* The table's row for a kernel release ("5.10.0-46-amd64", "6.12.118+deb13-amd64"), or NULL:
 * only for upstream-numbered releases (Debian's and Ubuntu's "X.Y.0-N-flavour", Debian's
 * "X.Y.Z+debN-flavour", a kernel.org "X.Y[.Z][-rcN]"), never for a distribution's own
 * numbering (RHEL's "4.18.0-553.el8_10.x86_64", SLES's "5.14.21-150500.55.65-azure", Azure
 * Linux's "6.6.57.1-2.azl3"), whose structs follow no upstream version. */
const struct hvt_layout_sizes *hvt_layout_table(const char *release, const char **ret_row);

/* "X.Y" at the start of a release ("7.3.4+deb13-amd64") as X * 1000 + Y (readahead-rule.h's
 * HVT_KERNEL_VERSION()); 0 when it has none. */
unsigned hvt_release_version(const char *release);

/* The row assumed for a release whose layout no row is known to be: the newest row not newer
 * than its major.minor, whatever numbering follows ("6.18.44-fc" -> "6.12", "5.14.0-427.el9"
 * -> "5.10"); NULL for a release older than every row (RHEL 8's 4.18: no row says anything
 * about a kernel before 5.10) or no release at all. */
const char *hvt_layout_nearest_row(const char *release);

/* The layout from what BTF gave (btf: sizes found, any of them 0) and the release (NULL when
 * unknown): BTF when it has all four; else the table's row when the release is that row's
 * and every size BTF has agrees with it; else assumed: BTF's sizes where it has them, the
 * nearest row's (hvt_layout_nearest_row()) for the rest, with the band every row's sizes
 * would give; else unknown. */
void hvt_layout_decide(const struct hvt_layout_sizes *btf, const char *release, struct hvt_layout *ret);

/* The running kernel's layout: dir's vmlinux, scsi_mod and hv_storvsc ("/sys/kernel/btf"),
 * each read whole up to 64 MiB, and the release in osrelease ("/proc/sys/kernel/osrelease").
 * What cannot be read counts as absent. */
void hvt_layout_read(const char *dir, const char *osrelease, struct hvt_layout *ret);

/* The file dir/name ("/sys/kernel/btf", "vmlinux"), whole, up to 64 MiB, malloc'd, its
 * length in *ret_size: NULL when absent, unreadable or larger. */
void *hvt_layout_read_btf(const char *dir, const char *name, size_t *ret_size);

/* "BTF", "table 5.10", "assumed 6.1 (1024 to 1152 bytes across 5.10-7.3)", "unknown layout":
 * for the journal. */
void hvt_layout_describe(const struct hvt_layout *l, char *buf, size_t size);
