/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: where an effective setting came from: a built-in layer, or a file and line. */
#pragma once

#include <stddef.h>

enum hvt_origin_kind {
        HVT_ORIGIN_NONE,      /* not set by any layer */
        HVT_ORIGIN_PLATFORM,  /* a platform value (hvt_platform_defaults()) */
        HVT_ORIGIN_POLICY,    /* the built-in policy, in place of a missing main file */
        HVT_ORIGIN_FILE,      /* file:line */
};

struct hvt_origin {
        enum hvt_origin_kind kind;
        unsigned line;
        const char *file;  /* HVT_ORIGIN_FILE: the configuration's (struct hvt_config) own copy */
};

/* "built-in platform value", "built-in policy", "FILE:LINE", or "" for none. A FILE:LINE
 * longer than size keeps its line and loses the front of the path (".../50-fleet.conf:12"). */
void hvt_origin_format(const struct hvt_origin *o, char *buf, size_t size);
