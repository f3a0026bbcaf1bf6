/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the kernel's read-ahead rule of readahead-rule.h. */
#include <errno.h>

#include "parse.h"
#include "readahead-rule.h"

/* The kernel counts read-ahead in pages: 2 x io_opt is cut to whole ones. 4 KiB, as on
 * x86-64 and Azure's arm64 images; VM_READAHEAD_PAGES is 128 KiB whatever the page. */
#define PAGE_KB 4u

static uint64_t whole_pages_kb(uint64_t kb) {
        return kb / PAGE_KB * PAGE_KB;
}

int hvt_ra_queue_parse(bool nvme, const char *io_opt, const char *rotational, const char *max_sectors_kb,
                       struct hvt_ra_queue *ret) {
        uint64_t rot;

        *ret = (struct hvt_ra_queue) { .nvme = nvme };
        if (hvt_parse_u64(io_opt, UINT64_MAX, &ret->io_opt_bytes) < 0 || hvt_parse_u64(rotational, 1, &rot) < 0 ||
            hvt_parse_u64(max_sectors_kb, UINT64_MAX, &ret->max_sectors_kb) < 0)
                return -EINVAL;
        ret->rotational = rot == 1;
        return 0;
}

static enum hvt_ra_higher higher_of(unsigned version) {
        if (version >= HVT_KERNEL_VERSION(6, 15))
                return HVT_RA_KEEPS;
        if (version == HVT_KERNEL_VERSION(6, 12) || version == HVT_KERNEL_VERSION(6, 14))
                return HVT_RA_EITHER;
        return HVT_RA_LOWERS;
}

void hvt_readahead_rule(unsigned version, const struct hvt_ra_queue *q, struct hvt_ra_rule *ret) {
        uint64_t twice_kb = 0;

        if (version == 0)
                version = UINT32_MAX;
        *ret = (struct hvt_ra_rule) { .higher = higher_of(version) };
        /* Before 6.9 only the NVMe driver's revalidation sets it (blk_queue_io_opt()): sd never
         * did. From 6.9 a max_sectors_kb store commits any disk's limits, and from 6.11 sd's
         * own revalidation does (804e498e0496). */
        if (version < HVT_KERNEL_VERSION(6, 9) && !q->nvme) {
                ret->source = HVT_RA_NONE;
                return;
        }
        if (q->io_opt_bytes > 0) {
                twice_kb = whole_pages_kb(q->io_opt_bytes * 2 / 1024);
                ret->source = HVT_RA_IO_OPT;
        } else if (q->rotational && version >= HVT_KERNEL_VERSION(6, 17)) {
                twice_kb = whole_pages_kb(q->max_sectors_kb * 2);
                ret->source = HVT_RA_MAX_SECTORS;
        }
        /* The floor wins a tie: the value then does not depend on the device's figures. */
        if (twice_kb <= HVT_READAHEAD_FLOOR_KB) {
                ret->source = HVT_RA_FLOOR;
                twice_kb = HVT_READAHEAD_FLOOR_KB;
        }
        ret->kb = twice_kb;
}

uint64_t hvt_readahead_after(const struct hvt_ra_rule *r, uint64_t current_kb) {
        if (r->source == HVT_RA_NONE || (r->higher != HVT_RA_LOWERS && current_kb >= r->kb))
                return current_kb;
        return r->kb;
}
