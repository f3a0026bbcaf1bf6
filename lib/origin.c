/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the text of a setting's origin (see origin.h). */
#include <stdio.h>

#include "origin.h"

void hvt_origin_format(const struct hvt_origin *o, char *buf, size_t size) {
        switch (o->kind) {
        case HVT_ORIGIN_PLATFORM:
                snprintf(buf, size, "built-in platform value");
                break;
        case HVT_ORIGIN_POLICY:
                snprintf(buf, size, "built-in policy");
                break;
        case HVT_ORIGIN_FILE:
                snprintf(buf, size, "%s:%u", o->file ? o->file : "?", o->line);
                break;
        default:
                if (size > 0)
                        buf[0] = '\0';
                break;
        }
}
