/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the status of status.h, made from the context each time (a figure kept up to date by
 * every pass would be one more thing to get wrong). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counts.h"
#include "host.h"
#include "macro.h"
#include "metrics-file.h"
#include "state-file.h"
#include "status.h"

/* Controllers with a managed disk of one class (NVMe or storvsc). A controller holds up to 64
 * LUNs: the disks are compared with the few controllers found so far, not with each other
 * (quadratic in disks, and the status is made after every batch of events). */
static size_t count_controllers(const struct hvt_disks *x, bool nvme) {
        _cleanup_free_ const char **seen = NULL;
        size_t n = 0;

        seen = malloc(x->n * sizeof(*seen));
        for (size_t i = 0; i < x->n; i++) {
                const char *c = hvt_disk_count_key(&x->v[i]->disk);
                size_t j = seen ? n : i;

                if (hvt_kind_is_nvme(x->v[i]->disk.kind) != nvme)
                        continue;
                /* Disks of a controller mostly come one after another: newest first. Out of
                 * memory, with each earlier disk instead. */
                while (j > 0 && (seen ? strcmp(seen[j - 1], c) != 0 :
                                 hvt_kind_is_nvme(x->v[j - 1]->disk.kind) != nvme ||
                                 strcmp(hvt_disk_count_key(&x->v[j - 1]->disk), c) != 0))
                        j--;
                if (j == 0 && seen)
                        seen[n] = c;
                n += j == 0;
        }
        return n;
}

static void count_disks(const struct hvt_disks *x, struct hvt_disk_counts *ret) {
        size_t nvme = 0;

        for (size_t i = 0; i < x->n; i++)
                nvme += hvt_kind_is_nvme(x->v[i]->disk.kind);
        *ret = (struct hvt_disk_counts) {
                .storvsc = x->n - nvme,
                .storvsc_controllers = count_controllers(x, false),
                .nvme = nvme,
                .nvme_controllers = count_controllers(x, true),
        };
}

void hvt_status_format(const struct hvt_daemon *d, char *buf, size_t size) {
        const struct hvt_disks *x = &d->disks;
        size_t n_failed = 0, n_unsupported = 0, n_would = 0, n_paused = 0, n_yielded = 0, full = size;
        char notice[sizeof(d->config_error) + 48] = "", counted[160];
        struct hvt_disk_counts counts;
        int off;

        /* The notice of a refused configuration says that what runs is not what the file
         * says: it survives whole, the figures before it give way if anything must. */
        if (*d->config_error)
                snprintf(notice, sizeof(notice), "; config error at %s, keeping previous", d->config_error);
        if (strlen(notice) < size)
                size -= strlen(notice);

        for (size_t i = 0; i < x->n; i++) {
                const struct hvt_tracked *t = x->v[i];

                n_failed += t->n_failed > 0;
                n_unsupported += t->n_unsupported;
                n_would += t->n_would_apply > 0;
                n_paused += t->resume != NULL;
                n_yielded += t->n_yielded;
        }

        /* "tuned": every managed attribute has its value, or this kernel lacks it (counted
         * apart as unsupported). A dry run tunes nothing: it says what would change. */
        count_disks(x, &counts);
        hvt_disk_counts_format(&counts, counted, sizeof(counted));
        if (d->apply_flags & HVT_APPLY_DRY_RUN)
                off = snprintf(buf, size, "%s: %zu would change, %zu failed", counted, n_would, n_failed);
        else
                off = snprintf(buf, size, "%s: %zu tuned, %zu failed", counted, x->n - n_failed, n_failed);
        if (n_unsupported > 0 && off > 0 && (size_t) off < size)
                off += snprintf(buf + off, size - (size_t) off, ", %zu setting%s unsupported",
                                n_unsupported, n_unsupported == 1 ? "" : "s");
        if (n_paused > 0 && off > 0 && (size_t) off < size)
                off += snprintf(buf + off, size - (size_t) off, "; %zu disk%s reverted too often, repairs paused",
                                n_paused, n_paused == 1 ? "" : "s");
        if (n_yielded > 0 && off > 0 && (size_t) off < size)
                off += snprintf(buf + off, size - (size_t) off, "; %zu setting%s left to another writer",
                                n_yielded, n_yielded == 1 ? "" : "s");
        if (off > 0 && (size_t) off < size) {
                char hwq[256];

                hvt_host_format_status(d, hwq, sizeof(hwq));
                if (*hwq)
                        off += snprintf(buf + off, size - (size_t) off, "; %s", hwq);
        }
        if (*notice && size < full)
                (void) strncat(buf, notice, full - strlen(buf) - 1);
}

void hvt_status_update(struct hvt_daemon *d) {
        char status[sizeof(d->status_sent)];

        hvt_metrics_update(d);
        hvt_status_format(d, status, sizeof(status));
        /* Also when STATUS= is the same: a repair changes the state file, not the line. */
        hvt_state_file_update(d, status);
        if (strcmp(status, d->status_sent) == 0)
                return;
        memcpy(d->status_sent, status, sizeof(status));
        hvt_notify_status(&d->notify, status);
}

void hvt_status_ready(struct hvt_daemon *d) {
        hvt_status_format(d, d->status_sent, sizeof(d->status_sent));
        hvt_metrics_update(d);
        /* Before READY=1, on which systemctl start and reload return: a --verify or --status
         * right after reads this pass, not the state of the second before. */
        hvt_state_file_update_now(d, d->status_sent);
        hvt_notify_ready(&d->notify, d->status_sent);
}
