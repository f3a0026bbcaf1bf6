/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The request layout from real kernels' BTF: Debian's 5.10, 6.1, 6.12 and 7.3 as the vm tier
 * caches them ($HVTUNED_VM_CACHE, /var/cache/hvtuned-vm), the .BTF sections of vmlinux,
 * scsi_mod.ko, hv_storvsc.ko and nvme.ko taken out with objcopy at test time (no blob is kept
 * in the tree). Each gives its storvsc and its NVMe request size, and the tables' rows for
 * that release agree with every size its BTF has; without its modules' BTF and under a foreign
 * release, the assumed layout's band holds its own figure. Without the cache: exit 77, saying
 * so. */
#include <glob.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwqueues.h"
#include "layout.h"
#include "macro.h"
#include "nvme.h"

/* The .BTF section of an ELF file, read whole; NULL when it has none. */
static void *section(const char *elf, size_t *len) {
        char out[] = "/tmp/hvtuned-btf.XXXXXX", cmd[8192], *data = NULL;
        int fd = mkstemp(out);
        FILE *f;
        long n;

        if (fd < 0)
                return NULL;
        close(fd);
        snprintf(cmd, sizeof(cmd), "objcopy --dump-section .BTF='%s' '%s' /dev/null 2>/dev/null", out, elf);
        if (system(cmd) == 0 && (f = fopen(out, "re"))) {
                fseek(f, 0, SEEK_END);
                n = ftell(f);
                rewind(f);
                data = n > 0 ? malloc((size_t) n) : NULL;
                if (data && fread(data, 1, (size_t) n, f) != (size_t) n) {
                        free(data);
                        data = NULL;
                }
                *len = data ? (size_t) n : 0;
                fclose(f);
        }
        unlink(out);
        return data;
}

static void *module(const char *dir, const char *name, size_t *len) {
        char pattern[4096];
        glob_t g;
        void *data = NULL;
        int n;

        /* nvme.ko is the NVMe PCI driver (drivers/nvme/host/), the rest are SCSI's. */
        n = snprintf(pattern, sizeof(pattern), "%s/{,usr/}lib/modules/*/kernel/drivers/%s/%s.ko", dir,
                     strcmp(name, "nvme") == 0 ? "nvme/host" : "scsi", name);
        if (n < 0 || (size_t) n >= sizeof(pattern))
                return NULL;
        if (glob(pattern, GLOB_BRACE, NULL, &g) == 0 && g.gl_pathc > 0)
                data = section(g.gl_pathv[0], len);
        globfree(&g);
        return data;
}

int main(void) {
        /* nvme: round_up(struct request + struct nvme_iod, 64), nvme.h's NVMe layout. */
        static const struct { const char *kernel; unsigned bytes, nvme; bool complete; } kernels[] = {
                { "5.10", 1152, 448, false },   /* no module BTF before 5.11: the tables fill in */
                { "6.1", 1088, 448, true },
                { "6.12", 1024, 512, true },    /* nvme_iod 208: 248 + 208 = 456 */
                { "7.3", 1088, 512, true },     /* struct request grew back to 272 */
        };
        const char *cache = getenv("HVTUNED_VM_CACHE") ?: "/var/cache/hvtuned-vm";
        unsigned found = 0, failed = 0;

        for (size_t i = 0; i < ELEMENTSOF(kernels); i++) {
                char dir[4096], vmlinux[4200], target[256], release[256];
                size_t n_v = 0, n_s = 0, n_h = 0;
                void *v, *s, *h;
                struct hvt_layout_sizes sizes;
                struct hvt_layout l;
                ssize_t len;
                int r;

                snprintf(dir, sizeof(dir), "%s/%s", cache, kernels[i].kernel);
                snprintf(vmlinux, sizeof(vmlinux), "%s/vmlinux", dir);
                if (access(vmlinux, R_OK) < 0)
                        continue;
                /* "5.10" -> "5.10.0-46-amd64": the release the cache names. */
                len = readlink(dir, target, sizeof(target) - 1);
                target[len > 0 ? len : 0] = '\0';
                snprintf(release, sizeof(release), "%s", strrchr(target, '/') ? strrchr(target, '/') + 1 : target);
                v = section(vmlinux, &n_v);
                s = module(dir, "scsi_mod", &n_s);
                h = module(dir, "hv_storvsc", &n_h);
                r = v ? hvt_layout_sizes_from_btf(v, n_v, s, n_s, h, n_h, &sizes) : -1;
                found++;
                if (r < 0) {
                        printf("FAIL %s (%s): its BTF cannot be read (%d)\n", kernels[i].kernel, release, r);
                        failed++;
                        continue;
                }
                hvt_layout_decide(&sizes, release, &l);
                printf("%s %s: BTF request %u scsi_cmnd %u storvsc_cmd_request %u scatterlist %u -> %u bytes (%s)\n",
                       kernels[i].kernel, release, sizes.request, sizes.scsi_cmnd, sizes.storvsc_cmd,
                       sizes.scatterlist, l.request_bytes, l.source == HVT_LAYOUT_BTF ? "BTF" :
                       l.source == HVT_LAYOUT_TABLE ? "table" : "unknown");
                if (l.request_bytes != kernels[i].bytes ||
                    (l.source == HVT_LAYOUT_BTF) != kernels[i].complete) {
                        printf("FAIL %s: want %u bytes from %s\n", kernels[i].kernel, kernels[i].bytes,
                               kernels[i].complete ? "BTF" : "the table");
                        failed++;
                }
                /* The table's row is this kernel's: every size the BTF has agrees. */
                if (kernels[i].complete) {
                        const struct hvt_layout_sizes *row = hvt_layout_table(release, NULL);

                        if (!row || memcmp(row, &sizes, sizeof(sizes)) != 0) {
                                printf("FAIL %s: the table's row differs from its BTF\n", kernels[i].kernel);
                                failed++;
                        }
                }
                /* The same kernel without its modules' BTF and under a release no row is for (a
                 * distribution's numbering): the nearest row is assumed for what vmlinux lacks,
                 * and the band said with a controller's figure (32 queues x 2534) holds the
                 * figure this kernel's real layout makes. */
                {
                        struct hvt_layout_sizes only_vmlinux = { sizes.request, 0, 0, sizes.scatterlist };
                        uint64_t others[HVT_LAYOUT_ROWS_MAX], fig, real;
                        char foreign[64];
                        struct hvt_layout al;
                        unsigned band;

                        snprintf(foreign, sizeof(foreign), "%s.1-1.foreign", kernels[i].kernel);
                        hvt_layout_decide(&only_vmlinux, foreign, &al);
                        for (size_t k = 0; k < al.n_rows; k++)
                                others[k] = hvt_hwq_estimate_bytes(al.row_bytes[k], 32, 2534);
                        fig = hvt_hwq_estimate_bytes(al.request_bytes, 32, 2534);
                        real = hvt_hwq_estimate_bytes(kernels[i].bytes, 32, 2534);
                        band = hvt_layout_band_pct(fig, others, al.n_rows);
                        printf("%s as %s: assumed %s, %u bytes (%u to %u), a controller %" PRIu64 " +/-%u%%, "
                               "its own %" PRIu64 "\n", kernels[i].kernel, foreign, al.table_row, al.request_bytes,
                               al.request_lo, al.request_hi, fig, band, real);
                        if (al.source != HVT_LAYOUT_ASSUMED || kernels[i].bytes < al.request_lo ||
                            kernels[i].bytes > al.request_hi ||
                            (real > fig ? real - fig : fig - real) * 100 > (uint64_t) band * fig) {
                                printf("FAIL %s: the assumed band misses its own figure\n", kernels[i].kernel);
                                failed++;
                        }
                }
                /* The NVMe layout: BTF where the kernel has nvme.ko's, else the table's row, whose
                 * request agrees with vmlinux's. */
                {
                        size_t n_n = 0;
                        void *nv = module(dir, "nvme", &n_n);
                        struct hvt_nvme_layout_sizes ns;
                        struct hvt_nvme_layout nl;

                        r = hvt_nvme_sizes_from_btf(v, n_v, nv, n_n, &ns);
                        if (r < 0) {
                                printf("FAIL %s: its NVMe BTF cannot be read (%d)\n", kernels[i].kernel, r);
                                failed++;
                        } else {
                                hvt_nvme_layout_decide(&ns, release, &nl);
                                printf("%s %s: BTF request %u nvme_iod %u -> %u bytes an NVMe request (%s)\n",
                                       kernels[i].kernel, release, ns.request, ns.nvme_iod, nl.request_bytes,
                                       nl.source == HVT_LAYOUT_BTF ? "BTF" :
                                       nl.source == HVT_LAYOUT_TABLE ? "table" : "unknown");
                                if (nl.request_bytes != kernels[i].nvme ||
                                    (nl.source == HVT_LAYOUT_BTF) != kernels[i].complete) {
                                        printf("FAIL %s: want %u bytes an NVMe request from %s\n", kernels[i].kernel,
                                               kernels[i].nvme, kernels[i].complete ? "BTF" : "the table");
                                        failed++;
                                }
                                /* The table's row agrees with the BTF: decided without the
                                 * module's BTF, the row gives the same. */
                                ns.nvme_iod = 0;
                                hvt_nvme_layout_decide(&ns, release, &nl);
                                if (nl.source != HVT_LAYOUT_TABLE || nl.request_bytes != kernels[i].nvme) {
                                        printf("FAIL %s: the NVMe table's row differs from its BTF\n", kernels[i].kernel);
                                        failed++;
                                }
                        }
                        free(nv);
                }
                free(v);
                free(s);
                free(h);
        }
        if (found == 0) {
                printf("SKIP: no kernel in %s (tools/fetch-vm-kernel puts them there; CI has them)\n", cache);
                return 77;
        }
        return failed ? 1 : 0;
}
