/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: writing the full state to the journal (or stderr) on demand.
 *
 * The current values are read afresh (a dry-run pass: reads only), so the dump says what
 * the disk has now, not what hvtuned last saw. Each attribute is one HVTUNED_STATE field of
 * the disk's entry; journald keeps repeated fields, and `journalctl -o json` shows them as
 * an array. */
#include <stdio.h>
#include <string.h>

#include "dump.h"
#include "messages.h"
#include "report.h"
#include "status.h"

#define STATE_FIELDS (_HVT_ATTR_DISK_MAX + 1)

static const char *value_or(bool set, const char *text, const char *none) {
        return set ? text : none;
}

static void dump_disk(struct hvt_daemon *d, const struct hvt_tracked *t) {
        char state[_HVT_ATTR_DISK_MAX][200], message[1024];
        const char *fields[STATE_FIELDS] = {};
        struct hvt_apply now;
        struct hvt_plan plan = {};
        size_t n = 0, off;

        /* Also read what only has an original left (a restore that failed). */
        for (size_t i = 0; i < t->slots.n; i++) {
                const struct hvt_slot *s = &t->slots.slot[i];

                if (s->want_set)
                        hvt_slot_want(s, &plan.want[s->id]);
                else
                        hvt_slot_orig(s, &plan.want[s->id]);
        }
        hvt_apply_disk(&t->disk, &plan, HVT_APPLY_DRY_RUN, NULL, NULL, &now);

        off = (size_t) snprintf(message, sizeof(message), "%s:", t->disk.sysname);

        for (size_t i = 0; i < now.n; i++) {
                const struct hvt_result *r = &now.results[i];
                enum hvt_attr_id id = r->attr;
                const struct hvt_slot *s = hvt_slot_get(&t->slots, id);
                char attr[48];
                /* What hvtuned last did to it; "unchanged" if it never had to. An original
                 * that only a scheduler switch touched goes back with the scheduler's, and
                 * any other unmanaged one (a knock-on) with the write that can change it. */
                const char *last = s->yielded ? "yielded to another writer" :
                                   s->acted ? hvt_outcome_to_string(s->last_action) :
                                   s->last.to_set ? "unchanged" :
                                   !s->want_set && hvt_attr_reset_by_scheduler(id) ? "reset by the scheduler" :
                                   !s->want_set ? "watched, goes back with its cause" : "none yet";

                (void) hvt_attr_format_path(id, attr, sizeof(attr));
                snprintf(state[i], sizeof(state[i]),
                         "HVTUNED_STATE=%s original=%s desired=%s current=%s last=%s", attr,
                         value_or(s->orig_set, s->orig, "-"), value_or(s->want_set, s->want, "-"),
                         *r->from ? r->from : "?", last);
                fields[n++] = state[i];
                if (off < sizeof(message))
                        off += (size_t) snprintf(message + off, sizeof(message) - off, "%s %s",
                                                 i ? ";" : "", state[i] + strlen("HVTUNED_STATE="));
        }
        if (now.n == 0)
                snprintf(message + off, sizeof(message) - off, " nothing managed");
        (void) hvt_log_disk(&d->log, &t->disk, LOG_INFO, 0, HVT_MESSAGE_STATE_DISK, fields, "%s", message);
}

void hvt_dump_state(struct hvt_daemon *d) {
        char status[sizeof(d->status_sent)];

        for (size_t i = 0; i < d->disks.n; i++)
                dump_disk(d, d->disks.v[i]);
        hvt_status_format(d, status, sizeof(status));
        (void) hvt_log_struct(&d->log, LOG_INFO, 0, HVT_MESSAGE_STATE_SUMMARY,
                              HVT_FIELDS(HVT_FIELD("HVTUNED_DISKS=%zu", d->disks.n)), "State: %s", status);
}
