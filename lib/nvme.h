/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: what an NVMe controller bound to the kernel's PCI driver (nvme.ko) preallocates: the
 * request layout it takes that from (struct request and the driver's struct nvme_iod, from
 * BTF or a table of upstream-numbered kernels) and the estimate. Pure functions;
 * nvme-controllers.h reads the figures from sysfs. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "layout.h"

/* The two structs of a preallocated request (blk_mq_alloc_rqs(): struct request then the tag
 * set's cmd_size, which the PCI driver sets to sizeof(struct nvme_iod) for the admin and the
 * I/O tag sets alike); 0 when not known. */
struct hvt_nvme_layout_sizes {
        uint32_t request;     /* struct request (vmlinux) */
        uint32_t nvme_iod;    /* struct nvme_iod (vmlinux when built in, else the nvme module) */
};

struct hvt_nvme_layout {
        enum hvt_layout_source source;
        unsigned request_bytes;               /* round_up(the two, 64); 0 when unknown */
        struct hvt_nvme_layout_sizes sizes;
        char table_row[16];                   /* HVT_LAYOUT_TABLE, _ASSUMED: "5.10" */
        /* HVT_LAYOUT_ASSUMED, as in struct hvt_layout: the request size each row would give
         * with BTF's own sizes, their lowest and highest, and the rows they span. */
        unsigned row_bytes[HVT_LAYOUT_ROWS_MAX];
        size_t n_rows;
        unsigned request_lo, request_hi;
        char band_rows[24];
};

/* round_up(request + nvme_iod, 64) into *ret. -ERANGE when a size is 0 or the sum is past a
 * page (no kernel's is: a hostile or foreign BTF). */
int hvt_nvme_request_bytes(const struct hvt_nvme_layout_sizes *s, unsigned *ret);

/* The two sizes from vmlinux's BTF (required) and the nvme module's split BTF (NULL when the
 * driver is built in, or before 5.11's module BTF). -EBADMSG / -ENOTUNIQ as btf.h says. */
int hvt_nvme_sizes_from_btf(const void *vmlinux, size_t vmlinux_size, const void *nvme, size_t nvme_size,
                            struct hvt_nvme_layout_sizes *ret);

/* As hvt_layout_decide(): BTF when it has both sizes; else the table's row for the release
 * (layout.h's rule of which releases have one) when every size BTF has agrees; else assumed,
 * the nearest row (hvt_layout_nearest_row()) filling in what BTF lacks; else unknown. */
void hvt_nvme_layout_decide(const struct hvt_nvme_layout_sizes *btf, const char *release, struct hvt_nvme_layout *ret);

/* The running kernel's: dir's vmlinux and nvme ("/sys/kernel/btf"), the release in osrelease. */
void hvt_nvme_layout_read(const char *dir, const char *osrelease, struct hvt_nvme_layout *ret);

/* "BTF", "table 5.10", "assumed 6.12 (448 to 512 bytes across 5.10-7.3)", "unknown layout". */
void hvt_nvme_layout_describe(const struct hvt_nvme_layout *l, char *buf, size_t size);

/* The bytes a controller bound to the PCI driver holds for its queues, with nr_io_queues I/O
 * queues of q_depth entries each (the rings' size: the I/O tag set's depth is one less):
 *   - the I/O tag set: nr_io_queues x hvt_tags_bytes(request_bytes, q_depth - 1) (no tags
 *     shared between hw queues: every hw queue has its own requests);
 *   - each I/O queue's rings, DMA-coherent pages: q_depth x 64 bytes of submission queue
 *     (NVM command set: 2^6-byte entries) and q_depth x 16 of completion queue;
 *   - the admin queue: its tag set (1 hw queue, 30 tags: NVME_AQ_MQ_TAG_DEPTH), its rings of
 *     32 entries (NVME_AQ_DEPTH), its request queue's hw context;
 *   - what the rest of a bound controller holds (its nvme_dev, queue array, I/O descriptor
 *     mempool, interrupts, sysfs and character device), measured.
 * 0 when request_bytes is 0 (an unknown layout) or more than a page, or q_depth < 2. The
 * model, its sources in the kernel and its measurement: docs/performance.md. */
uint64_t hvt_nvme_estimate_bytes(unsigned request_bytes, unsigned nr_io_queues, unsigned q_depth);
