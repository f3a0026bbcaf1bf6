/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the stop (see stop.h).
 *
 * A restart restores nothing: its stop would put the originals back and its start write
 * hvtuned's values again, a window with the values hvtuned is there to avoid (an Azure NVMe
 * disk's 30 s timeout) for no reason. The start that follows finds the records, loads them as
 * the originals (route.c), writes only what differs from the new configuration, and puts back
 * the originals of the attributes it no longer manages (track.h): the records are not
 * rewritten when nothing changed, and the true originals stay in them. */
#include <stdio.h>
#include <stdlib.h>

#include "driver.h"
#include "macro.h"
#include "messages.h"
#include "nvme-timeout.h"
#include "passes.h"
#include "stop.h"
#include "system.h"

struct recorded {
        unsigned attrs;   /* originals recorded, the driver's included */
        unsigned disks;   /* disks with any */
        bool driver;
};

static void count_recorded(const struct hvt_daemon *d, struct recorded *ret) {
        *ret = (struct recorded) {};
        ret->driver = d->driver.orig.value[HVT_ATTR_MAX_HW_QUEUES].set;
        ret->attrs = ret->driver;
        for (size_t i = 0; i < d->disks.n; i++) {
                const struct hvt_slots *s = &d->disks.v[i]->slots;
                unsigned n = 0;

                for (size_t j = 0; j < s->n; j++)
                        n += s->slot[j].orig_set;
                ret->attrs += n;
                ret->disks += n > 0;
        }
}

/* The record files in the runtime directory, as a restart leaves them; when they cannot be
 * listed, the disks (and driver) with originals. */
static unsigned count_records(const struct hvt_daemon *d, const struct recorded *rec) {
        char **names = NULL;
        size_t n = 0;

        if (d->state_fd < 0 || hvt_records_list(d->state_fd, &names, &n) < 0)
                return rec->disks + rec->driver;
        hvt_strv_free(names, n);
        return (unsigned) n;
}

static const char *stop_name(enum hvt_stop_kind kind, bool restore) {
        if (!restore)
                return "restore_on_stop = false";
        switch (kind) {
        case HVT_STOP_SHUTDOWN:
                return "shutdown";
        case HVT_STOP_RESTART:
                return "restart";
        default:
                return "stop";
        }
}

static void summary(struct hvt_daemon *d, const char *what, unsigned restored, unsigned kept, unsigned held,
                    unsigned left, const struct recorded *rec) {
        char s_held[64] = "";

        if (held > 0)
                snprintf(s_held, sizeof(s_held), " (%u Azure NVMe I/O timeout%s)", held, held == 1 ? "" : "s");
        (void) hvt_log_struct(&d->log, LOG_INFO, 0, HVT_MESSAGE_STOPPED,
                              HVT_FIELDS(HVT_FIELD("HVTUNED_STOP=%s", what), HVT_FIELD("HVTUNED_N_RESTORED=%u", restored),
                                         HVT_FIELD("HVTUNED_N_KEPT=%u", kept), HVT_FIELD("HVTUNED_N_LEFT=%u", left),
                                         HVT_FIELD("HVTUNED_N_DISKS=%u", rec->disks)),
                              "Stopped (%s): %u attribute%s restored, %u kept%s, %u left as tuned, on %u disk%s%s",
                              what, restored, restored == 1 ? "" : "s", kept, s_held, left, rec->disks,
                              rec->disks == 1 ? "" : "s", rec->driver ? " and the storvsc driver" : "");
}

void hvt_stop(struct hvt_daemon *d) {
        bool restore = d->config->restore_on_stop;
        enum hvt_stop_kind kind = restore ? hvt_system_stop_kind(&d->log) : HVT_STOP_PLAIN;
        struct recorded before, after;
        unsigned held;

        count_recorded(d, &before);
        if (!restore)
                hvt_log_debug(&d->log, "restore_on_stop = false: leaving the tuned values in place");
        else if (kind == HVT_STOP_SHUTDOWN)
                (void) hvt_log_struct(&d->log, LOG_INFO, 0, HVT_MESSAGE_RESTORE_SKIPPED, NULL,
                                      "The system is shutting down: not restoring original values");
        else if (kind == HVT_STOP_RESTART) {
                unsigned n = count_records(d, &before);

                (void) hvt_log_struct(&d->log, LOG_INFO, 0, HVT_MESSAGE_RESTART_KEPT,
                                      HVT_FIELDS(HVT_FIELD("HVTUNED_RECORDS=%u", n)),
                                      "restart: restoring nothing; %u record%s kept for the next start", n,
                                      n == 1 ? "" : "s");
        }
        if (!restore || kind != HVT_STOP_PLAIN) {
                summary(d, stop_name(kind, restore), 0, 0, 0, before.attrs, &before);
                return;
        }

        hvt_pass_restore(d);
        held = hvt_nvme_timeout_said_held(d);
        count_recorded(d, &after);
        summary(d, stop_name(kind, restore), before.attrs - after.attrs, after.attrs, held, 0, &before);
}
