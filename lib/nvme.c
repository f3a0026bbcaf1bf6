/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the NVMe estimate of nvme.h. Facts from drivers/nvme/host/pci.c and nvme.h of the
 * kernels bench/vm boots (5.10 to 7.3): nvme_alloc_queue() allocates each queue's completion
 * ring (q_depth x sizeof(struct nvme_completion), 16 bytes) and nvme_alloc_sq_cmds() its
 * submission ring (q_depth << sqes, sqes 6 for the NVM command set and for the admin queue)
 * with dma_alloc_coherent(): whole pages, a power of two of them, from the page allocator
 * (dma-direct: no IOMMU in an Azure guest or in QEMU's, and Debian builds no DMA CMA). A
 * controller memory buffer can hold the submission rings instead (use_cmb_sqes): Azure's and
 * QEMU's controllers offer none. q_depth is min(CAP.MQES + 1, nvme.io_queue_depth) when the
 * controller is enabled (nvme_pci_enable()); the I/O tag set's depth is min(q_depth, 10240)
 * - 1 (BLK_MQ_MAX_DEPTH; one slot of the ring stays empty), one hw queue per I/O queue,
 * cmd_size sizeof(struct nvme_iod), no shared tags; the admin tag set has 1 hw queue of 30
 * tags (NVME_AQ_MQ_TAG_DEPTH) of the same cmd_size. No scheduler tags: an I/O scheduler is a
 * namespace's (a disk's), and a multi-queue disk starts with none. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btf.h"
#include "hwqueues.h"
#include "macro.h"
#include "nvme.h"

#define CACHE_LINE 64u
#define PAGE_BYTES 4096u
#define SQ_ENTRY_BYTES 64u      /* 1 << NVME_NVM_IOSQES (and NVME_ADM_SQES) */
#define CQ_ENTRY_BYTES 16u      /* sizeof(struct nvme_completion) */
#define ADMIN_DEPTH 32u         /* NVME_AQ_DEPTH: the admin rings' entries */
#define ADMIN_TAGS 30u          /* NVME_AQ_MQ_TAG_DEPTH */
#define BLK_MQ_MAX_DEPTH 10240u
/* The admin request queue's one hw context (struct blk_mq_hw_ctx, its CPU maps, its flush
 * request), as hwqueues.c counts a hw context. */
#define ADMIN_HCTX_BYTES 4096u
/* What a bound controller holds besides its queues and tags (struct nvme_dev with its
 * nvme_ctrl, the queue array, the I/O descriptor mempool's reserved element, MSI-X vectors,
 * the character device, sysfs and hwmon): measured, not derived. On 6.1 at -smp 8 the line
 * through a controller's figures at depths 64 and 1024 meets depth 0 at 122 KiB, of which the
 * model's admin queue and its blocks' rounding are ~86 (docs/performance.md). */
#define CONTROLLER_BYTES (32u << 10)

/* Debian's x86-64 kernels, each row checked against that kernel's BTF (vmlinux and nvme.ko)
 * where it has it. 5.10's modules carry no BTF: its nvme_iod is the cmd_size its nvme.ko
 * stores into both tag sets (nvme_reset_work(), 0x98), the 5.10 layout with the command
 * embedded (struct nvme_request 32 + struct nvme_command 64 + 56); a 5.10 built before that
 * change came to its stable series would be 88, and is not this row's kernel. */
static const struct {
        const char *version;
        struct hvt_nvme_layout_sizes sizes;
} table[] = {
        { "5.10", { 280, 152 } },
        { "6.1",  { 272, 136 } },
        { "6.12", { 248, 208 } },
        { "7.3",  { 272, 232 } },
};

int hvt_nvme_request_bytes(const struct hvt_nvme_layout_sizes *s, unsigned *ret) {
        uint64_t sum;

        if (s->request == 0 || s->nvme_iod == 0)
                return -ERANGE;
        sum = ((uint64_t) s->request + s->nvme_iod + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE;
        if (sum > PAGE_BYTES)
                return -ERANGE;
        *ret = (unsigned) sum;
        return 0;
}

int hvt_nvme_sizes_from_btf(const void *vmlinux, size_t vmlinux_size, const void *nvme, size_t nvme_size,
                            struct hvt_nvme_layout_sizes *ret) {
        static const char *const wanted[] = { "request", "nvme_iod" };
        struct hvt_nvme_layout_sizes s = {};
        struct hvt_btf base, mod;
        uint32_t sizes[ELEMENTSOF(wanted)];
        int r;

        r = hvt_btf_open(vmlinux, vmlinux_size, NULL, &base);
        if (r >= 0)
                r = hvt_btf_struct_sizes(&base, wanted, sizes, ELEMENTSOF(wanted));
        if (r < 0)
                return r;
        s = (struct hvt_nvme_layout_sizes) { sizes[0], sizes[1] };
        if (nvme) {
                r = hvt_btf_open(nvme, nvme_size, &base, &mod);
                if (r >= 0)
                        r = hvt_btf_struct_sizes(&mod, wanted, sizes, ELEMENTSOF(wanted));
                if (r < 0)
                        return r;
                if (s.request == 0)
                        s.request = sizes[0];
                if (s.nvme_iod == 0)
                        s.nvme_iod = sizes[1];
        }
        *ret = s;
        return 0;
}

static bool agrees(uint32_t btf, uint32_t row) {
        return btf == 0 || btf == row;
}

_Static_assert(ELEMENTSOF(table) <= HVT_LAYOUT_ROWS_MAX, "an assumed layout keeps a request size a row");

/* The nearest row (layout.c's rule) for what BTF lacks, with what every row would give. */
static void assume(const struct hvt_nvme_layout_sizes *btf, const char *release, struct hvt_nvme_layout *ret) {
        const char *name = hvt_layout_nearest_row(release);
        unsigned lo = UINT32_MAX, hi = 0;

        if (!name)
                return;
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                struct hvt_nvme_layout_sizes t = {
                        btf && btf->request ? btf->request : table[i].sizes.request,
                        btf && btf->nvme_iod ? btf->nvme_iod : table[i].sizes.nvme_iod,
                };
                unsigned bytes;

                if (hvt_nvme_request_bytes(&t, &bytes) < 0) {
                        *ret = (struct hvt_nvme_layout) {};
                        return;  /* a size from BTF no kernel has: nothing to assume */
                }
                ret->row_bytes[i] = bytes;
                lo = bytes < lo ? bytes : lo;
                hi = bytes > hi ? bytes : hi;
                if (strcmp(table[i].version, name) == 0) {
                        ret->sizes = t;
                        ret->request_bytes = bytes;
                }
        }
        ret->n_rows = ELEMENTSOF(table);
        ret->source = HVT_LAYOUT_ASSUMED;
        ret->request_lo = lo;
        ret->request_hi = hi;
        snprintf(ret->table_row, sizeof(ret->table_row), "%s", name);
        snprintf(ret->band_rows, sizeof(ret->band_rows), "%s-%s", table[0].version,
                 table[ELEMENTSOF(table) - 1].version);
}

void hvt_nvme_layout_decide(const struct hvt_nvme_layout_sizes *btf, const char *release, struct hvt_nvme_layout *ret) {
        const char *row = NULL;

        *ret = (struct hvt_nvme_layout) {};
        if (btf && hvt_nvme_request_bytes(btf, &ret->request_bytes) >= 0) {
                ret->source = HVT_LAYOUT_BTF;
                ret->sizes = *btf;
                return;
        }
        /* layout.c's table says which releases follow an upstream version, and names the row;
         * the kernel's own BTF saying otherwise makes it not that row's kernel: at most an
         * assumption, as for any kernel without a row. */
        if (release && hvt_layout_table(release, &row))
                for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                        if (strcmp(table[i].version, row) != 0)
                                continue;
                        if (btf && !(agrees(btf->request, table[i].sizes.request) &&
                                     agrees(btf->nvme_iod, table[i].sizes.nvme_iod)))
                                break;
                        if (hvt_nvme_request_bytes(&table[i].sizes, &ret->request_bytes) < 0)
                                break;
                        ret->source = HVT_LAYOUT_TABLE;
                        ret->sizes = table[i].sizes;
                        snprintf(ret->table_row, sizeof(ret->table_row), "%s", row);
                        return;
                }
        *ret = (struct hvt_nvme_layout) {};
        assume(btf, release, ret);
}

void hvt_nvme_layout_read(const char *dir, const char *osrelease, struct hvt_nvme_layout *ret) {
        size_t n_vmlinux = 0, n_nvme = 0;
        _cleanup_free_ void *vmlinux = hvt_layout_read_btf(dir, "vmlinux", &n_vmlinux);
        _cleanup_free_ void *nvme = vmlinux ? hvt_layout_read_btf(dir, "nvme", &n_nvme) : NULL;
        struct hvt_nvme_layout_sizes sizes = {};
        char release[128] = "";
        bool have_btf = false;
        FILE *f;

        if (vmlinux)
                have_btf = hvt_nvme_sizes_from_btf(vmlinux, n_vmlinux, nvme, n_nvme, &sizes) >= 0;
        f = fopen(osrelease, "re");
        if (f) {
                if (!fgets(release, sizeof(release), f))
                        release[0] = '\0';
                release[strcspn(release, "\n")] = '\0';
                fclose(f);
        }
        /* A BTF that cannot be read decides nothing, either way (layout.c). */
        hvt_nvme_layout_decide(have_btf ? &sizes : NULL, *release ? release : NULL, ret);
}

void hvt_nvme_layout_describe(const struct hvt_nvme_layout *l, char *buf, size_t size) {
        if (l->source == HVT_LAYOUT_BTF)
                snprintf(buf, size, "BTF");
        else if (l->source == HVT_LAYOUT_TABLE)
                snprintf(buf, size, "table %s", l->table_row);
        else if (l->source == HVT_LAYOUT_ASSUMED)
                snprintf(buf, size, "assumed %s (%u to %u bytes across %s)", l->table_row, l->request_lo,
                         l->request_hi, l->band_rows);
        else
                snprintf(buf, size, "unknown layout");
}

/* dma_alloc_coherent(n) through dma-direct: 2^order pages, the smallest that hold n. */
static uint64_t coherent_bytes(uint64_t n) {
        uint64_t bytes = PAGE_BYTES;

        while (bytes < n)
                bytes <<= 1;
        return bytes;
}

static uint64_t rings_bytes(unsigned depth) {
        return coherent_bytes((uint64_t) depth * SQ_ENTRY_BYTES) + coherent_bytes((uint64_t) depth * CQ_ENTRY_BYTES);
}

uint64_t hvt_nvme_estimate_bytes(unsigned request_bytes, unsigned nr_io_queues, unsigned q_depth) {
        unsigned io_tags = (q_depth < BLK_MQ_MAX_DEPTH ? q_depth : BLK_MQ_MAX_DEPTH) - 1;
        uint64_t io, admin;

        if (q_depth < 2)
                return 0;
        io = hvt_tags_bytes(request_bytes, io_tags);
        admin = hvt_tags_bytes(request_bytes, ADMIN_TAGS);
        if (io == 0 || admin == 0)
                return 0;
        return (uint64_t) nr_io_queues * (io + rings_bytes(q_depth)) +
               admin + rings_bytes(ADMIN_DEPTH) + ADMIN_HCTX_BYTES + CONTROLLER_BYTES;
}
