/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the metrics file (see metrics-file.h).
 *
 * A reader must never see half a file: the text goes to a temporary file beside it, made with
 * O_EXCL|O_NOFOLLOW (nothing in the directory is followed or overwritten in place) and named so
 * that the collector, which reads only *.prom, skips it, then is renamed over the file, both in
 * the one directory opened and checked for the write. It is made readable by all:
 * node_exporter runs as its own user, and the unit's UMask= is 0077. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "context.h"
#include "host.h"
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
                .n_controllers = d->host.controllers.n,
        };
        for (size_t i = 0; i < d->disks.n; i++) {
                const struct hvt_tracked *t = d->disks.v[i];

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

/* The directory of path, opened once: the temporary file and the rename are both made in it,
 * so nobody can point them elsewhere between the two by renaming a directory on the way. It
 * must be root's (or ours) and not writable by others unless sticky, or anyone could put
 * their own file under the name. */
static int open_dir(const char *path, const char **ret_name) {
        _cleanup_free_ char *dir = strdup(path);
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        char *slash;
        int r;

        if (!dir)
                return -ENOMEM;
        slash = strrchr(dir, '/');
        *slash = '\0';
        *ret_name = path + (slash - dir) + 1;
        fd = open(*dir ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if ((st.st_uid != 0 && st.st_uid != geteuid()) ||
            ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)))
                return -EPERM;
        r = fd;
        fd = -EBADF;
        return r;
}

static int write_all(int fd, const char *text) {
        size_t len = strlen(text), done = 0;

        while (done < len) {
                ssize_t n = write(fd, text + done, len - done);

                if (n < 0 && errno != EINTR)
                        return negative_errno();
                done += n > 0 ? (size_t) n : 0;
        }
        return 0;
}

static int write_whole(const char *path, const char *text) {
        _cleanup_close_ int dir_fd = -EBADF, fd = -EBADF;
        char tmp[64];
        const char *name;
        int r;

        dir_fd = open_dir(path, &name);
        if (dir_fd < 0)
                return dir_fd;
        /* Not a .prom name: the collector must not read it half written. */
        for (unsigned i = 0;; i++) {
                struct timespec ts;

                (void) clock_gettime(CLOCK_MONOTONIC, &ts);
                snprintf(tmp, sizeof(tmp), ".hvtuned.%d.%lx.tmp", (int) getpid(), (unsigned long) ts.tv_nsec + i);
                fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
                if (fd >= 0 || errno != EEXIST || i >= 16)
                        break;
        }
        if (fd < 0)
                return negative_errno();
        r = write_all(fd, text);
        /* The unit's UMask=0077 would hide it from node_exporter, another user. */
        if (r == 0 && fchmod(fd, 0644) < 0)
                r = negative_errno();
        /* After a crash, the old figures or the new, never an empty file. */
        if (r == 0 && fsync(fd) < 0)
                r = negative_errno();
        if (r == 0 && renameat(dir_fd, tmp, dir_fd, name) < 0)
                r = negative_errno();
        if (r < 0)
                (void) unlinkat(dir_fd, tmp, 0);
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

        ctrl = calloc(d->host.controllers.n + 1, sizeof(*ctrl));
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
