/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the metrics file (see metrics-file.h), its directory held open, and the temporaries
 * hvtuned leaves there.
 *
 * A reader must never see half a file: the text goes to a temporary file beside it, made with
 * O_EXCL|O_NOFOLLOW (nothing in the directory is followed or overwritten in place) and named so
 * that the collector, which reads only *.prom, skips it, then is renamed over the file, both in
 * the directory reached and checked once, by its descriptor. It is made readable by all:
 * node_exporter runs as its own user, and the unit's UMask= is 0077. Named temporaries, not
 * O_TMPFILE: linking one in takes CAP_DAC_READ_SEARCH before Linux 6.10, which the unit does
 * not have. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "context.h"
#include "driver.h"
#include "fs-util.h"
#include "host.h"
#include "hvtuned-config.h"
#include "macro.h"
#include "metrics.h"
#include "metrics-file.h"

static void gather(const struct hvt_daemon *d, struct hvt_metrics *m, struct hvt_metrics_controller *ctrl,
                   struct hvt_metrics_nvme *nvme) {
        *m = (struct hvt_metrics) {
                .version = HVTUNED_VERSION,
                .repairs = d->counters.repairs,
                .kernel_repairs = d->counters.kernel_repairs,
                .busy_retries = d->counters.busy_retries,
                .reloads = d->counters.reloads,
                .reload_failures = d->counters.reload_failures,
                .last_reload_usec = d->counters.last_reload_usec,
                .last_reload_ok = d->counters.last_reload_ok,
                /* A kernel without the parameter is asked no cap. */
                .cap = hvt_driver_cap_supported(d) == 0 ? 0 : d->driver.target,
                .cap_support = hvt_driver_cap_supported(d) > 0 ? HVT_CAP_SUPPORTED :
                               hvt_driver_cap_supported(d) == 0 ? HVT_CAP_UNSUPPORTED : HVT_CAP_UNKNOWN,
                .controllers = ctrl,
                .n_controllers = d->host.controllers.n,
        };
        for (size_t i = 0; i < d->disks.n; i++) {
                const struct hvt_tracked *t = d->disks.v[i];

                if (t->n_failed > 0)
                        m->disks_failed++;
                else
                        m->disks_tuned++;
                m->disks_paused += t->resume != NULL;
                if ((unsigned) t->disk.kind < _HVT_KIND_MAX && (unsigned) t->disk.role < _HVT_ROLE_MAX)
                        m->disks_by[t->disk.kind][t->disk.role]++;
                for (size_t j = 0; j < t->slots.n; j++) {
                        const struct hvt_slot *s = &t->slots.slot[j];

                        if (s->yielded)
                                m->contested[s->id][HVT_CONTEST_YIELD]++;
                        else if (s->contested)
                                m->contested[s->id][HVT_CONTEST_INSIST]++;
                        if (s->want_set && !s->yielded && (unsigned) s->last.outcome < _HVT_OUTCOME_MAX)
                                m->attributes[s->last.outcome]++;
                }
        }
        memcpy(m->contests, d->counters.contests, sizeof(m->contests));
        hvt_host_metrics(d, ctrl);
        hvt_host_metrics_layout(d, m);
        m->nvme = nvme;
        m->n_nvme = hvt_host_nvme_metrics(d, nvme);
        hvt_host_metrics_nvme_layout(d, m);
}

/* The directory of path, walked a name at a time from the root without following a symlink:
 * a symlink on the way could be swapped by whoever may write the directory it is in (on
 * Debian, /var/lib/prometheus is prometheus's), so it is refused, not checked. The
 * directories on the way may be anyone's: what one of their owners can do is rename a
 * directory of root's that is already beside it into the path, never one of their own nor a
 * link (see docs/security.md, "A metrics directory below another user's"). The last one
 * must be root's (or ours) and not even sticky (/tmp): anyone could put a *.prom there for
 * the collector, hold the file's name, or make a file of hvtuned's temporaries' name that the
 * clean-up below would take for hvtuned's. A refusal says why in why. */
static int open_dir(const char *path, char *why, size_t size) {
        return hvt_walk(path, HVT_WALK_PARENT, NULL, why, size);
}

/* A kill between a temporary's creation and its rename leaves it behind; nothing else would
 * ever remove it. Only one hvtuned writes the file at a time (the runtime directory's lock;
 * --once and --dry-run never write it) and the directory is nobody else's to write (see
 * open_dir()), so a temporary's name there is one a dead hvtuned left. */
static void remove_stale(struct hvt_daemon *d, int dir_fd, const char *path) {
        int n = hvt_prune_temporaries(dir_fd, 0, NULL);

        if (n > 0)
                hvt_log_info(&d->log, "Removed %d temporary file%s an earlier hvtuned left beside %s", n,
                             n == 1 ? "" : "s", path);
}

static const char *file_name(const char *path) {
        return strrchr(path, '/') + 1;
}

static void forget_file(struct hvt_daemon *d) {
        struct hvt_metrics_file *m = &d->metrics;

        if (m->path && m->dir_fd >= 0)
                close(m->dir_fd);
        free(m->path);
        free(m->written);
        *m = (struct hvt_metrics_file) { .dir_fd = -EBADF };
}

/* Only the file hvtuned renamed there: one it could never write is somebody else's, and so is
 * one put in its place since. Looked at and removed in the directory held since the write;
 * only root (or this user) may change its names in between (open_dir()). */
void hvt_metrics_remove(struct hvt_daemon *d) {
        struct hvt_metrics_file *m = &d->metrics;
        struct stat st;

        if (m->path && m->dir_fd >= 0 && m->made) {
                const char *name = file_name(m->path);

                if (fstatat(m->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        if (errno != ENOENT)
                                (void) hvt_log_errno(&d->log, LOG_WARNING, errno,
                                                     "Cannot remove the metrics file %s: %m", m->path);
                } else if (st.st_dev != m->dev || st.st_ino != m->ino)
                        hvt_log_info(&d->log, "Leaving %s: it is no longer the file hvtuned wrote", m->path);
                else if (unlinkat(m->dir_fd, name, 0) < 0 && errno != ENOENT)
                        (void) hvt_log_errno(&d->log, LOG_WARNING, errno, "Cannot remove the metrics file %s: %m",
                                             m->path);
        }
        forget_file(d);
}

/* The directory held from its first use, so that a directory swapped on the path later (by
 * the owner of one above it) redirects no write and no removal: the file goes on where it
 * was, unlike a walk before every write, which would refuse from then on. One removed
 * (ENOENT on a create in it) is walked again, so that a reinstalled node_exporter's is
 * found. */
static int write_file(struct hvt_daemon *d, const char *text, char *why, size_t size) {
        struct hvt_metrics_file *m = &d->metrics;
        struct stat st;
        int r;

        for (unsigned attempt = 0;; attempt++) {
                if (m->dir_fd < 0) {
                        m->dir_fd = open_dir(m->path, why, size);
                        if (m->dir_fd < 0)
                                return m->dir_fd;
                        m->made = false;
                        remove_stale(d, m->dir_fd, m->path);
                }
                /* Readable by all: node_exporter runs as its own user, and the unit's UMask= is
                 * 0077. */
                r = hvt_write_atomic(m->dir_fd, file_name(m->path), text, strlen(text), HVT_WRITE_READABLE, &st);
                if (r != -ENOENT || attempt > 0)
                        break;
                close(m->dir_fd);
                m->dir_fd = -EBADF;
        }
        if (r < 0)
                return r;
        m->made = true;
        m->dev = st.st_dev;
        m->ino = st.st_ino;
        return 0;
}

/* The same text is written again once twice the watchdog period (WatchdogSec=, 30 s in the
 * unit) has passed since the last write: the file's mtime (node_exporter's
 * node_textfile_mtime_seconds) then tells a fleet that the daemon still runs, where a file a
 * killed daemon left behind would go on showing its last figures (the alert
 * HvtunedNotReporting). The watchdog's pings wake the loop at half the period, and the status
 * after each wakeup comes here; without a watchdog nothing wakes it, and the file is written
 * only when a figure changes. */
static bool refresh_due(const struct hvt_daemon *d) {
        uint64_t period = 2 * d->notify.watchdog_usec;

        return period > 0 && hvt_now_usec(CLOCK_MONOTONIC) - d->metrics.written_usec >= period;
}

void hvt_metrics_update(struct hvt_daemon *d) {
        const char *path = d->config ? d->config->metrics_file : NULL;
        _cleanup_free_ struct hvt_metrics_controller *ctrl = NULL;
        _cleanup_free_ struct hvt_metrics_nvme *nvme = NULL;
        _cleanup_free_ char *text = NULL;
        struct hvt_metrics m;
        char why[PATH_MAX + 128] = "";
        int r;

        if (d->once || (d->apply_flags & HVT_APPLY_DRY_RUN))
                return;
        /* Another file named, or none: the old one would go on showing stale figures. */
        if (d->metrics.path && (!path || strcmp(path, d->metrics.path) != 0))
                hvt_metrics_remove(d);
        if (!path)
                return;
        if (!d->metrics.path) {
                d->metrics = (struct hvt_metrics_file) { .path = strdup(path), .dir_fd = -EBADF };
                if (!d->metrics.path)
                        return;
        }

        ctrl = calloc(d->host.controllers.n + 1, sizeof(*ctrl));
        nvme = calloc(d->host.nvme.n + 1, sizeof(*nvme));
        if (!ctrl || !nvme)
                return;
        gather(d, &m, ctrl, nvme);
        if (hvt_metrics_render(&m, &text) < 0)
                return;
        if (d->metrics.written && strcmp(text, d->metrics.written) == 0 && !refresh_due(d))
                return;

        r = write_file(d, text, why, sizeof(why));
        if (r < 0) {
                if (r != d->metrics.error && *why)
                        (void) hvt_log_errno(&d->log, LOG_WARNING, r, "Cannot write the metrics file %s: refused, %s",
                                             path, why);
                else if (r != d->metrics.error)
                        (void) hvt_log_errno(&d->log, LOG_WARNING, r, "Cannot write the metrics file %s: %m", path);
                d->metrics.error = r;
                return;
        }
        if (d->metrics.error < 0)
                hvt_log_info(&d->log, "The metrics file %s is written again", path);
        d->metrics.error = 0;
        d->metrics.written_usec = hvt_now_usec(CLOCK_MONOTONIC);
        free(d->metrics.written);
        d->metrics.written = TAKE_PTR(text);
}
