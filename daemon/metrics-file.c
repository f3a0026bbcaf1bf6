/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the metrics file (see metrics-file.h).
 *
 * A reader must never see half a file: the text goes to a temporary file beside it, made with
 * O_EXCL (nothing in the directory is followed or overwritten in place) and named so that the
 * collector, which reads only *.prom, skips it, then is renamed over the file. It is made
 * readable by all: node_exporter runs as its own user, and the unit's UMask= is 0077. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "hvtuned-config.h"
#include "macro.h"
#include "metrics.h"
#include "metrics-file.h"

static void gather(const struct hvt_daemon *d, struct hvt_metrics *m, struct hvt_metrics_controller *ctrl) {
        *m = (struct hvt_metrics) {
                .version = HVTUNED_VERSION,
                .repairs = d->counters.repairs,
                .reloads = d->counters.reloads,
                .reload_failures = d->counters.reload_failures,
                .last_reload_usec = d->counters.last_reload_usec,
                .last_reload_ok = d->counters.last_reload_ok,
                .cap = d->host.target,
                .controllers = ctrl,
                .n_controllers = d->host.n_controllers,
        };
        for (size_t i = 0; i < d->n_disks; i++) {
                const struct hvt_tracked *t = d->disks[i];

                if (t->n_failed > 0)
                        m->disks_failed++;
                else
                        m->disks_tuned++;
                m->disks_paused += t->resume != NULL;
                for (size_t j = 0; j < t->slots.n; j++) {
                        const struct hvt_slot *s = &t->slots.slot[j];

                        if (s->want.set && (unsigned) s->last.outcome < _HVT_OUTCOME_MAX)
                                m->attributes[s->last.outcome]++;
                }
        }
        hvt_host_metrics(d, ctrl);
}

static int write_whole(const char *path, const char *text) {
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = -EBADF;
        size_t len = strlen(text), done = 0;
        int r = 0;

        if (asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0) {
                tmp = NULL;
                return -ENOMEM;
        }
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        while (r == 0 && done < len) {
                ssize_t n = write(fd, text + done, len - done);

                if (n < 0 && errno != EINTR)
                        r = negative_errno();
                done += n > 0 ? (size_t) n : 0;
        }
        if (r == 0 && fchmod(fd, 0644) < 0)
                r = negative_errno();
        if (r == 0 && rename(tmp, path) < 0)
                r = negative_errno();
        if (r < 0)
                (void) unlink(tmp);
        return r;
}

static void forget_file(struct hvt_daemon *d) {
        free(d->metrics.path);
        free(d->metrics.written);
        d->metrics.path = d->metrics.written = NULL;
        d->metrics.error = 0;
}

void hvt_metrics_remove(struct hvt_daemon *d) {
        if (d->metrics.path && unlink(d->metrics.path) < 0 && errno != ENOENT)
                (void) hvt_log_errno(&d->log, LOG_WARNING, errno, "Cannot remove the metrics file %s: %m",
                                     d->metrics.path);
        forget_file(d);
}

void hvt_metrics_update(struct hvt_daemon *d) {
        const char *path = d->config ? d->config->metrics_file : NULL;
        _cleanup_free_ struct hvt_metrics_controller *ctrl = NULL;
        _cleanup_free_ char *text = NULL;
        struct hvt_metrics m;
        int r;

        if (d->once || (d->apply_flags & HVT_APPLY_DRY_RUN))
                return;
        /* Another file named, or none: the old one would go on showing stale figures. */
        if (d->metrics.path && (!path || strcmp(path, d->metrics.path) != 0))
                hvt_metrics_remove(d);
        if (!path)
                return;
        if (!d->metrics.path) {
                d->metrics.path = strdup(path);
                if (!d->metrics.path)
                        return;
        }

        ctrl = calloc(d->host.n_controllers + 1, sizeof(*ctrl));
        if (!ctrl)
                return;
        gather(d, &m, ctrl);
        if (hvt_metrics_render(&m, &text) < 0)
                return;
        if (d->metrics.written && strcmp(text, d->metrics.written) == 0)
                return;

        r = write_whole(path, text);
        if (r < 0) {
                if (r != d->metrics.error)
                        (void) hvt_log_errno(&d->log, LOG_WARNING, r, "Cannot write the metrics file %s: %m", path);
                d->metrics.error = r;
                return;
        }
        if (d->metrics.error < 0)
                hvt_log_info(&d->log, "The metrics file %s is written again", path);
        d->metrics.error = 0;
        free(d->metrics.written);
        d->metrics.written = text;
        text = NULL;
}
