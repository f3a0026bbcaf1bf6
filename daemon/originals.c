/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the daemon's records of originals (see originals.h). */
#include <errno.h>

#include "messages.h"
#include "originals.h"
#include "report.h"

/* "values" for a disk's attributes, "value" for the driver's one parameter. */
static const char *plural(const struct hvt_subject *s) {
        return s->driver ? "" : "s";
}

int hvt_originals_save(struct hvt_daemon *d, const struct hvt_subject *s, const struct hvt_originals *o) {
        int r;

        /* A dry run writes no record: --restore --dry-run reads them and leaves them. */
        if (d->state_fd < 0 || (d->apply_flags & HVT_APPLY_DRY_RUN))
                return 0;
        r = hvt_records_save(d->state_fd, s, o, d->state_write_flags);
        if (r < 0)
                (void) hvt_log_subject(&d->log, s, LOG_ERR, r, HVT_MESSAGE_STATE_ERROR, NULL,
                                       "%s: cannot write the record of its original value%s: %m", s->name, plural(s));
        return r;
}

int hvt_originals_load(struct hvt_daemon *d, const struct hvt_subject *s, struct hvt_originals *o, bool quiet) {
        int r;

        bool dry = d->apply_flags & HVT_APPLY_DRY_RUN;

        if (d->state_fd < 0)
                return -ENOENT;
        /* A dry run deletes nothing: another instance's record, or a damaged one, stays. */
        r = dry ? hvt_records_read(d->state_fd, s, o) : hvt_records_load(d->state_fd, s, o);
        if (r == -ESTALE)
                r = -ENOENT;
        if (quiet || r == -ENOENT)
                return r;
        if (r == -EBADMSG)
                (void) hvt_log_subject(&d->log, s, LOG_WARNING, r, HVT_MESSAGE_STATE_ERROR, NULL,
                                       "%s: the record of its original value%s is damaged and %s dropped", s->name,
                                       plural(s), dry ? "would be" : "was");
        else if (r < 0)
                (void) hvt_log_subject(&d->log, s, LOG_ERR, r, HVT_MESSAGE_STATE_ERROR, NULL,
                                       "%s: cannot read the record of its original value%s (%m): not writing "
                                       "attributes that have none recorded", s->name, plural(s));
        else
                hvt_log_debug(&d->log, "%s: originals recorded by an earlier run loaded", s->name);
        return r;
}
