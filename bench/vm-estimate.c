/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench/vm's window on hvtuned's memory model: the booted kernel's request layout as the
 * daemon takes it (hvt_layout_read() on BTF_DIR, that kernel's /sys/kernel/btf files, and
 * OSRELEASE, its release in a file), then hvt_hwq_estimate_bytes() for each
 * "NR_HW_QUEUES CAN_QUEUE" pair after them, one "q cq bytes" line each. The first line says
 * where the layout came from: "layout SOURCE BYTES". Exit 2 on an unknown layout. Built by
 * bench/vm at run time, not by meson. */
#include <stdio.h>
#include <stdlib.h>

#include "hwqueues.h"
#include "layout.h"

int main(int argc, char **argv) {
        struct hvt_layout l;
        char from[32];

        if (argc < 3 || argc % 2 != 1) {
                fprintf(stderr, "usage: vm-estimate BTF_DIR OSRELEASE [NR_HW_QUEUES CAN_QUEUE]...\n");
                return 2;
        }
        hvt_layout_read(argv[1], argv[2], &l);
        hvt_layout_describe(&l, from, sizeof(from));
        printf("layout %s %u\n", from, l.request_bytes);
        if (l.request_bytes == 0)
                return 2;
        for (int i = 3; i + 1 < argc; i += 2) {
                unsigned q = (unsigned) strtoul(argv[i], NULL, 10);
                unsigned cq = (unsigned) strtoul(argv[i + 1], NULL, 10);

                printf("%u %u %llu\n", q, cq, (unsigned long long) hvt_hwq_estimate_bytes(l.request_bytes, q, cq));
        }
        return 0;
}
