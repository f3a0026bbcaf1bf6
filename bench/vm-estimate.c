/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench/vm's window on hvtuned's memory model: prints hvt_hwq_estimate_bytes() (lib/
 * hwqueues.c, linked as it is) for each "NR_HW_QUEUES CAN_QUEUE" pair on the command line,
 * one "q cq bytes" line each. Built by bench/vm at run time, not by meson. */
#include <stdio.h>
#include <stdlib.h>

#include "hwqueues.h"

int main(int argc, char **argv) {
        for (int i = 1; i + 1 < argc; i += 2) {
                unsigned q = (unsigned) strtoul(argv[i], NULL, 10);
                unsigned cq = (unsigned) strtoul(argv[i + 1], NULL, 10);

                printf("%u %u %llu\n", q, cq, (unsigned long long) hvt_hwq_estimate_bytes(q, cq));
        }
        return argc % 2 == 1 ? 0 : 2;
}
