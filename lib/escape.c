/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the escaping described in escape.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

/* One byte's form: its length, written into out[4]. */
static size_t escape_byte(unsigned char c, char out[static 4]) {
        static const char hex[] = "0123456789abcdef";

        switch (c) {
        case '\\':
                memcpy(out, "\\\\", 2);
                return 2;
        case '\n':
                memcpy(out, "\\n", 2);
                return 2;
        case '\t':
                memcpy(out, "\\t", 2);
                return 2;
        default:
                if (c >= 0x20 && c < 0x7f) {
                        out[0] = (char) c;
                        return 1;
                }
                out[0] = '\\';
                out[1] = 'x';
                out[2] = hex[c >> 4];
                out[3] = hex[c & 0xf];
                return 4;
        }
}

size_t hvt_escape(char *dst, size_t size, const char *src) {
        size_t n = 0, written = 0;

        for (const unsigned char *p = (const unsigned char *) src; *p; p++) {
                char e[4];
                size_t len = escape_byte(*p, e);

                /* Once one escape does not fit, no later one is written either. */
                if (written == n && n + len < size) {
                        memcpy(dst + n, e, len);
                        written += len;
                }
                n += len;
        }
        if (size > 0)
                dst[written] = '\0';
        return n;
}

char *hvt_escape_dup(const char *src) {
        size_t n = hvt_escape(NULL, 0, src);
        char *s = malloc(n + 1);

        if (s)
                (void) hvt_escape(s, n + 1, src);
        return s;
}

static int hex_digit(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -EINVAL;
}

int hvt_unescape(char *s) {
        char *out = s;

        for (const char *p = s; *p; p++) {
                int hi, lo;

                if (*p != '\\') {
                        *out++ = *p;
                        continue;
                }
                switch (*++p) {
                case '\\':
                        *out++ = '\\';
                        break;
                case 'n':
                        *out++ = '\n';
                        break;
                case 't':
                        *out++ = '\t';
                        break;
                case 'x':
                        /* p[1] is checked before p[2] is read: a text that ends after \x stops there. */
                        hi = hex_digit(p[1]);
                        lo = hi < 0 ? -EINVAL : hex_digit(p[2]);
                        if (lo < 0 || (hi | lo) == 0)
                                return -EINVAL;
                        *out++ = (char) (hi << 4 | lo);
                        p += 2;
                        break;
                default:  /* another letter, or the end of the text */
                        return -EINVAL;
                }
        }
        *out = '\0';
        return 0;
}
