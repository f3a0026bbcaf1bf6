/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the parser of parse.h. */
#include <errno.h>

#include "parse.h"

int hvt_parse_u64(const char *s, uint64_t max, uint64_t *ret) {
        uint64_t v = 0;

        if (!*s)
                return -EINVAL;
        for (; *s; s++) {
                uint64_t digit = (uint64_t) (*s - '0');

                /* digit > max first: max - digit must not wrap (a max under 9). */
                if (*s < '0' || *s > '9' || digit > max || v > (max - digit) / 10)
                        return -EINVAL;
                v = v * 10 + digit;
        }
        *ret = v;
        return 0;
}
