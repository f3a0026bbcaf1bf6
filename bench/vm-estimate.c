/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench/vm's window on hvtuned's memory model: prints hvt_hwq_estimate_bytes() (lib/
 * hwqueues.c, linked as it is) with requests of REQUEST_BYTES (the first argument: the booted
 * kernel's layout) for each "NR_HW_QUEUES CAN_QUEUE" pair after it, one "q cq bytes" line
 * each. Built by bench/vm at run time, not by meson. */
#include <stdio.h>
#include <stdlib.h>

#include "hwqueues.h"

int main(int argc, char **argv) {
        unsigned request_bytes = argc > 1 ? (unsigned) strtoul(argv[1], NULL, 10) : 0;

        for (int i = 2; i + 1 < argc; i += 2) {
                unsigned q = (unsigned) strtoul(argv[i], NULL, 10);
                unsigned cq = (unsigned) strtoul(argv[i + 1], NULL, 10);

                printf("%u %u %llu\n", q, cq, (unsigned long long) hvt_hwq_estimate_bytes(request_bytes, q, cq));
        }
        return argc % 2 == 0 && request_bytes > 0 ? 0 : 2;
}
