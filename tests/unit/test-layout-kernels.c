/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The request layout from real kernels' BTF: Debian's 5.10, 6.1, 6.12 and 7.3 as the vm tier
 * caches them ($HVTUNED_VM_CACHE, /var/cache/hvtuned-vm), the .BTF sections of vmlinux,
 * scsi_mod.ko and hv_storvsc.ko taken out with objcopy at test time (no blob is kept in the
 * tree). Each gives its request size, and the table's row for that release agrees with every
 * size its BTF has. Without the cache: exit 77, saying so. */
#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "layout.h"
#include "macro.h"

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

        n = snprintf(pattern, sizeof(pattern), "%s/{,usr/}lib/modules/*/kernel/drivers/scsi/%s.ko", dir, name);
        if (n < 0 || (size_t) n >= sizeof(pattern))
                return NULL;
        if (glob(pattern, GLOB_BRACE, NULL, &g) == 0 && g.gl_pathc > 0)
                data = section(g.gl_pathv[0], len);
        globfree(&g);
        return data;
}

int main(void) {
        static const struct { const char *kernel; unsigned bytes; bool complete; } kernels[] = {
                { "5.10", 1152, false },   /* no module BTF before 5.11: the table fills in */
                { "6.1", 1088, true },
                { "6.12", 1024, true },
                { "7.3", 1088, true },     /* struct request grew back to 272 */
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
