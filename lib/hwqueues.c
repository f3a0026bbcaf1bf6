/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: hw queue arithmetic (see hwqueues.h). Facts from drivers/scsi/storvsc_drv.c
 * (storvsc_probe), lib/bitmap.c (cpulist format) and kernel/params.c (parse_args). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwqueues.h"

static int parse_cpu(const char **p, unsigned long *ret) {
        char *end;

        if (!isdigit((unsigned char) **p))
                return -EINVAL;
        errno = 0;
        *ret = strtoul(*p, &end, 10);
        if (errno != 0 || *ret > UINT32_MAX)
                return -EINVAL;
        *p = end;
        return 0;
}

int hvt_cpulist_count(const char *text, unsigned *ret) {
        const char *p = text;
        unsigned long n = 0;

        for (;;) {
                unsigned long lo, hi;

                if (parse_cpu(&p, &lo) < 0)
                        return -EINVAL;
                hi = lo;
                if (*p == '-') {
                        p++;
                        if (parse_cpu(&p, &hi) < 0 || hi < lo)
                                return -EINVAL;
                }
                n += hi - lo + 1;
                if (n > UINT32_MAX)
                        return -EINVAL;
                if (*p != ',')
                        break;
                p++;
        }
        while (*p == '\n')
                p++;
        if (*p != '\0')
                return -EINVAL;
        *ret = (unsigned) n;
        return 0;
}

unsigned hvt_hwq_target(const struct hvt_host_config *h, unsigned present) {
        unsigned cap = h->max_hw_queues_set ? h->max_hw_queues : HVT_DEFAULT_MAX_HW_QUEUES;

        if (cap == 0 || present == 0)
                return 0;
        if (!h->max_hw_queues_set && present <= HVT_DEFAULT_MAX_HW_QUEUES)
                return 0;
        return cap < present ? cap : present;
}

unsigned hvt_hwq_effective(unsigned param, unsigned present) {
        return param == 0 || param > present ? present : param;
}

#define PAGE_BYTES 4096u
/* blk_mq_alloc_rqs(): blocks of at most order 4. */
#define RQ_BLOCK_MAX_ORDER 4
/* struct blk_mq_hw_ctx, its cpu maps, the tags struct and the flush request (a request of
 * its own), per hw queue: measured as what is left once the rest is counted. */
#define HCTX_BYTES 4096u


/* What kmalloc(n) takes: a power-of-two slab object up to 8 KiB, whole pages (a power of two
 * of them) beyond; the 96- and 192-byte caches only matter below 12 tags. */
static uint64_t kmalloc_bytes(uint64_t n) {
        uint64_t size = 8;

        while (size < n)
                size <<= 1;
        return size;
}

/* blk_mq_alloc_rqs(): a block of the largest order first, and a smaller one while what is
 * left fits in half of it; as many whole requests as fit in each. The full blocks at once,
 * then at most RQ_BLOCK_MAX_ORDER + 1 smaller ones. */
static uint64_t request_blocks_bytes(unsigned rq, unsigned depth) {
        const uint64_t max_block = (uint64_t) PAGE_BYTES << RQ_BLOCK_MAX_ORDER;
        const unsigned per_max = (unsigned) (max_block / rq);
        uint64_t left, bytes = 0;
        unsigned done = 0;

        /* While at least half a largest block is left, the largest is what it takes. */
        if ((uint64_t) depth * rq >= max_block / 2 + (uint64_t) per_max * rq) {
                unsigned full = (unsigned) (((uint64_t) depth * rq - max_block / 2) /
                                            ((uint64_t) per_max * rq));

                done = full * per_max;
                bytes = (uint64_t) full * max_block;
        }
        left = (uint64_t) (depth - done) * rq;
        while (done < depth) {
                unsigned order = RQ_BLOCK_MAX_ORDER;
                uint64_t block, fit;

                while (order > 0 && left < ((uint64_t) PAGE_BYTES << (order - 1)))
                        order--;
                block = (uint64_t) PAGE_BYTES << order;
                fit = block / rq;
                if (fit > depth - done)
                        fit = depth - done;
                done += (unsigned) fit;
                left -= fit * rq;
                bytes += block;
        }
        return bytes;
}

uint64_t hvt_tags_bytes(unsigned request_bytes, unsigned depth) {
        /* Every block must hold a request, or the packing below never moves on. */
        if (request_bytes == 0 || request_bytes > PAGE_BYTES)
                return 0;
        return request_blocks_bytes(request_bytes, depth) +
               2 * kmalloc_bytes((uint64_t) depth * sizeof(void *)) +
               ((uint64_t) depth + 63) / 64 * 64;  /* sbitmap: a cache line a word */
}

uint64_t hvt_hwq_estimate_bytes(unsigned request_bytes, unsigned nr_hw_queues, unsigned can_queue) {
        uint64_t tags = hvt_tags_bytes(request_bytes, can_queue);

        if (tags == 0)
                return 0;
        return nr_hw_queues * (tags + (uint64_t) can_queue * HVT_SENSE_BYTES + HCTX_BYTES);
}

/* parameq(): '-' and '_' are the same in parameter names. */
static bool param_name_is(const char *name, size_t len, const char *want) {
        if (len != strlen(want))
                return false;
        for (size_t i = 0; i < len; i++) {
                char a = name[i] == '-' ? '_' : name[i], b = want[i] == '-' ? '_' : want[i];

                if (a != b)
                        return false;
        }
        return true;
}

static int parse_param_value(const char *v, size_t len, unsigned *ret) {
        char num[16], *end;
        unsigned long n;

        if (len >= 2 && v[0] == '"' && v[len - 1] == '"') {
                v++;
                len -= 2;
        }
        if (len == 0 || len >= sizeof(num) || v[0] == '-')
                return -EINVAL;
        memcpy(num, v, len);
        num[len] = '\0';
        errno = 0;
        n = strtoul(num, &end, 0);  /* kstrtouint(val, 0, ...) */
        if (errno != 0 || *end || n > UINT32_MAX)
                return -EINVAL;
        *ret = (unsigned) n;
        return 0;
}

int hvt_cmdline_max_hw_queues(const char *cmdline, unsigned *ret) {
        const char *p = cmdline;
        bool bad = false;
        unsigned value;
        int found = 0;

        /* Words are blank-separated; a quoted word keeps its blanks (parse_args()). Module
         * parameters are only recognised before "--", which starts init's arguments. */
        while (*p) {
                const char *w, *end, *eq = NULL;
                bool quoted = false;

                while (isspace((unsigned char) *p))
                        p++;
                if (!*p)
                        break;
                w = p;
                for (; *p && (quoted || !isspace((unsigned char) *p)); p++) {
                        if (*p == '"')
                                quoted = !quoted;
                        else if (*p == '=' && !eq)
                                eq = p;
                }
                if (p - w == 2 && strncmp(w, "--", 2) == 0)
                        break;
                end = p;
                if (*w == '"') {  /* next_arg(): a word quoted whole loses its quotes */
                        w++;
                        if (end > w && end[-1] == '"')
                                end--;
                }
                if (!eq || !param_name_is(w, (size_t) (eq - w), "hv_storvsc.storvsc_max_hw_queues"))
                        continue;
                /* parse_args() reports a bad value and goes on with the next word. */
                if (parse_param_value(eq + 1, (size_t) (end - eq - 1), &value) < 0)
                        bad = true;
                else {
                        *ret = value;
                        found = 1;
                }
        }
        return found ? 1 : bad ? -EINVAL : 0;
}

void hvt_format_bytes(uint64_t bytes, char *buf, size_t size) {
        if (bytes >= 1024ull * 1024 * 1024)
                snprintf(buf, size, "%.1f GiB", (double) bytes / (1024.0 * 1024 * 1024));
        else
                snprintf(buf, size, "%.1f MiB", (double) bytes / (1024.0 * 1024));
}
