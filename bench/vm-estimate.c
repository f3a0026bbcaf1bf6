/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench/vm's window on hvtuned's memory models: the booted kernel's request layouts as the
 * daemon takes them (hvt_layout_read() and hvt_nvme_layout_read() on BTF_DIR, that kernel's
 * /sys/kernel/btf files, and OSRELEASE, its release in a file), then for each
 * "NR_HW_QUEUES CAN_QUEUE" pair after them hvt_hwq_estimate_bytes(), one "q cq bytes" line
 * each, and for each "nvme NR_IO_QUEUES Q_DEPTH" triple hvt_nvme_estimate_bytes(), one
 * "nvme q depth bytes" line each. The first two lines say where the layouts came from:
 * "layout SOURCE BYTES" and "nvme-layout SOURCE BYTES". Exit 2 on an unknown layout that a
 * figure needs. Built by bench/vm at run time, not by meson. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwqueues.h"
#include "layout.h"
#include "nvme.h"

int main(int argc, char **argv) {
        struct hvt_nvme_layout nl;
        struct hvt_layout l;
        char from[32], nfrom[32];
        int rc = 0;

        if (argc < 3) {
                fprintf(stderr, "usage: vm-estimate BTF_DIR OSRELEASE [NR_HW_QUEUES CAN_QUEUE | nvme NR_IO_QUEUES Q_DEPTH]...\n");
                return 2;
        }
        hvt_layout_read(argv[1], argv[2], &l);
        hvt_layout_describe(&l, from, sizeof(from));
        hvt_nvme_layout_read(argv[1], argv[2], &nl);
        hvt_nvme_layout_describe(&nl, nfrom, sizeof(nfrom));
        printf("layout %s %u\nnvme-layout %s %u\n", from, l.request_bytes, nfrom, nl.request_bytes);
        for (int i = 3; i < argc;) {
                if (strcmp(argv[i], "nvme") == 0 && i + 2 < argc) {
                        unsigned q = (unsigned) strtoul(argv[i + 1], NULL, 10);
                        unsigned depth = (unsigned) strtoul(argv[i + 2], NULL, 10);

                        if (nl.request_bytes == 0)
                                rc = 2;
                        printf("nvme %u %u %llu\n", q, depth,
                               (unsigned long long) hvt_nvme_estimate_bytes(nl.request_bytes, q, depth));
                        i += 3;
                } else if (i + 1 < argc) {
                        unsigned q = (unsigned) strtoul(argv[i], NULL, 10);
                        unsigned cq = (unsigned) strtoul(argv[i + 1], NULL, 10);

                        if (l.request_bytes == 0)
                                rc = 2;
                        printf("%u %u %llu\n", q, cq,
                               (unsigned long long) hvt_hwq_estimate_bytes(l.request_bytes, q, cq));
                        i += 2;
                } else {
                        fprintf(stderr, "vm-estimate: %s: an odd argument out\n", argv[i]);
                        return 2;
                }
        }
        return rc;
}
