/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the NVMe I/O timeout's lines (see nvme-timeout.h).
 *
 * hvtuned starts after the root disk has been in use, and a stop is not the end of the
 * machine: only a boot-time setting covers the whole of its life. azure-vm-utils 0.7 and
 * later sets it per disk from udev, in the initramfs too; nvme_core.io_timeout=240 sets it
 * for every NVMe disk. Where azure-vm-utils' rule is installed and the timeout was short all
 * the same, the package is older than the rule's io_timeout line. */
#include <stdio.h>
#include <string.h>

#include "bootadvice.h"
#include "messages.h"
#include "nvme-timeout.h"
#include "report.h"

static void nvme_fix(char *buf, size_t size, bool *ret_rule, const char **ret_boot) {
        struct hvt_boot_facts facts;

        hvt_boot_facts_read("", false, &facts);
        *ret_rule = hvt_boot_azure_rule("");
        *ret_boot = hvt_boot_kind_to_string(hvt_boot_choose(&facts));
        hvt_boot_nvme_advice(&facts, *ret_rule, buf, size);
}

void hvt_nvme_timeout_advise(struct hvt_daemon *d, const struct hvt_disk *disk, const char *from) {
        const char *boot;
        char fix[512];
        bool rule;

        if (d->nvme_advice_told)
                return;
        d->nvme_advice_told = true;
        nvme_fix(fix, sizeof(fix), &rule, &boot);
        (void) hvt_log_disk(&d->log, disk, LOG_NOTICE, 0, HVT_MESSAGE_NVME_ADVICE,
                            HVT_FIELDS(HVT_FIELD("HVTUNED_FIX=%s", "nvme_core.io_timeout=240"),
                                       HVT_FIELD("HVTUNED_AZURE_RULE=%s", rule ? "yes" : "no"),
                                       HVT_FIELD("HVTUNED_BOOT=%s", boot)),
                            "%s ran with an I/O timeout of %s ms until hvtuned started (it starts after the root disk "
                            "is in use), under the 120 s for which Azure's host retries I/O. To set 240 s from boot: %s",
                            disk->sysname, from, fix);
}

unsigned hvt_nvme_timeout_said_held(struct hvt_daemon *d) {
        char names[256] = "", fix[512];
        const char *boot;
        unsigned n = 0;
        size_t off = 0;
        bool rule;

        for (size_t i = 0; i < d->disks.n; i++) {
                const struct hvt_tracked *t = d->disks.v[i];
                int k;

                if (!t->timeout_held)
                        continue;
                n++;
                if (off >= sizeof(names))
                        continue;
                k = snprintf(names + off, sizeof(names) - off, "%s%s", off ? ", " : "", t->disk.sysname);
                off = k < 0 ? sizeof(names) : off + (size_t) k;
        }
        if (n == 0)
                return 0;
        nvme_fix(fix, sizeof(fix), &rule, &boot);
        (void) hvt_log_struct(&d->log, LOG_NOTICE, 0, HVT_MESSAGE_NVME_TIMEOUT_KEPT,
                              HVT_FIELDS(HVT_FIELD("HVTUNED_DEVICES=%s", names), HVT_FIELD("HVTUNED_COUNT=%u", n),
                                         HVT_FIELD("HVTUNED_FIX=%s", "nvme_core.io_timeout=240"),
                                         HVT_FIELD("HVTUNED_BOOT=%s", boot)),
                              "%s: queue/io_timeout left as hvtuned set it, not put back to %s under 120000 ms: "
                              "Azure's host retries I/O for up to 120 s, and a shorter timeout fails I/O the host "
                              "still completes. %s To set it from boot: %s",
                              names, n == 1 ? "its original," : "their originals,",
                              d->undo ? (n == 1 ? "Its record is deleted; to put the original back, write it to "
                                                  "queue/io_timeout." :
                                                  "Their records are deleted; to put an original back, write it to "
                                                  "queue/io_timeout.") :
                                        (n == 1 ? "Its record stays: hvtuned --status shows it, the next start adopts "
                                                  "it, hvtuned --restore deletes it." :
                                                  "Their records stay: hvtuned --status shows them, the next start "
                                                  "adopts them, hvtuned --restore deletes them."),
                              fix);
        return n;
}
