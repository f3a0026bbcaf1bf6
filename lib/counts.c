/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the count phrase of counts.h. */
#include <stdio.h>

#include "counts.h"

const char *hvt_disk_count_key(const struct hvt_disk *disk) {
        return hvt_kind_is_nvme(disk->kind) ? disk->device_syspath : disk->controller;
}

static int kind_phrase(char *buf, size_t size, size_t disks, const char *kind, size_t controllers) {
        return snprintf(buf, size, "%zu %s disk%s on %zu controller%s", disks, kind, disks == 1 ? "" : "s",
                        controllers, controllers == 1 ? "" : "s");
}

void hvt_disk_counts_format(const struct hvt_disk_counts *c, char *buf, size_t size) {
        int off = 0;

        if (size == 0)
                return;
        buf[0] = '\0';
        if (c->storvsc == 0 && c->nvme == 0) {
                snprintf(buf, size, "0 disks");
                return;
        }
        if (c->storvsc > 0)
                off = kind_phrase(buf, size, c->storvsc, "storvsc", c->storvsc_controllers);
        if (c->nvme == 0 || off < 0 || (size_t) off >= size)
                return;
        off += snprintf(buf + off, size - (size_t) off, "%s", off > 0 ? ", " : "");
        if ((size_t) off >= size)
                return;
        off += kind_phrase(buf + off, size - (size_t) off, c->nvme, "Azure NVMe", c->nvme_controllers);
        /* On a VM of NVMe alone, the 0 says storvsc was looked for, not overlooked. */
        if (c->storvsc == 0 && off > 0 && (size_t) off < size)
                snprintf(buf + off, size - (size_t) off, ", 0 storvsc");
}
