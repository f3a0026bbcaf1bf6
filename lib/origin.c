/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the text of a setting's origin (see origin.h). */
#include <stdio.h>
#include <string.h>

#include "origin.h"

/* "FILE:LINE"; where it does not fit, the path is cut at the front (".../50-fleet.conf:12"):
 * the line and the file's own name are what a reader needs. */
static void format_file(const char *file, unsigned line, char *buf, size_t size) {
        char at[16];
        size_t n = strlen(file), m = (size_t) snprintf(at, sizeof(at), ":%u", line);

        if (n + m < size || size < m + sizeof("...")) {
                snprintf(buf, size, "%s%s", file, at);
                return;
        }
        /* "..." + the last (size - 1 - 3 - m) bytes of file + at, and the NUL. */
        snprintf(buf, size, "...%s%s", file + n - (size - 1 - 3 - m), at);
}

void hvt_origin_format(const struct hvt_origin *o, char *buf, size_t size) {
        switch (o->kind) {
        case HVT_ORIGIN_PLATFORM:
                snprintf(buf, size, "built-in platform value");
                break;
        case HVT_ORIGIN_POLICY:
                snprintf(buf, size, "built-in policy");
                break;
        case HVT_ORIGIN_FILE:
                format_file(o->file ? o->file : "?", o->line, buf, size);
                break;
        default:
                if (size > 0)
                        buf[0] = '\0';
                break;
        }
}
