/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the re-checks of settle.h: the controllers with one to come, their timers, and which
 * managed disks are a controller's.
 *
 * Why twice: the event can come before the kernel's re-application. nvme_start_ctrl() queues
 * the namespace scan before it sends NVME_EVENT=connected, and scans run asynchronously; a
 * namespace attach revalidates the others during the same scan that adds it. So the pass at
 * the event finds what came before it, the one after the burst what came after.
 *
 * Why coalesced: a 64-LUN controller's burst is 64 events, and a re-check of 64 disks for each
 * would be 4096 passes. The first event of a burst has its controller's disks re-checked after
 * the events read with it; the later ones only move the last re-check, which comes
 * HVT_SETTLE_USEC after the last event: 2 x 64 passes for a burst shorter than that. While
 * events keep coming, one is made HVT_SETTLE_MAX_USEC after the one before, so that a long
 * burst does not hold back the repair of what it re-applied. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "settle.h"
#include "tune.h"

/* How long path is without its last n components ("/a/b/c", 2: "/a"); 0 when it has fewer. */
static size_t up(const char *path, size_t len, unsigned n) {
        for (; n > 0; n--) {
                while (len > 0 && path[len - 1] != '/')
                        len--;
                if (len <= 1)
                        return 0;
                len--;
        }
        return len;
}

/* The controller of disk: a prefix of its device_syspath (settle.h), its length returned. */
static size_t disk_controller(const struct hvt_disk *disk) {
        size_t len = strlen(disk->device_syspath);

        return hvt_kind_is_nvme(disk->kind) ? len : up(disk->device_syspath, len, 2);
}

static bool of_controller(const struct hvt_disk *disk, const char *controller, size_t len) {
        return len > 0 && disk_controller(disk) == len && memcmp(disk->device_syspath, controller, len) == 0;
}

static struct hvt_settle *settle_find(const struct hvt_settles *x, const char *controller, size_t len) {
        for (size_t i = 0; i < x->n; i++)
                if (strlen(x->v[i]->controller) == len && memcmp(x->v[i]->controller, controller, len) == 0)
                        return x->v[i];
        return NULL;
}

static void settle_free(struct hvt_settle *s) {
        hvt_event_source_free(s->timer);
        free(s->controller);
        free(s);
}
DEFINE_TRIVIAL_CLEANUP_FUNC(struct hvt_settle *, settle_free);

/* A burst is over: its entry goes (from its own timer's handler too: event.h allows it). */
static void settle_remove(struct hvt_settles *x, struct hvt_settle *s) {
        for (size_t i = 0; i < x->n; i++)
                if (x->v[i] == s) {
                        x->v[i] = x->v[--x->n];
                        break;
                }
        settle_free(s);
}

static int on_settle(struct hvt_event_source *src, uint64_t usec, void *userdata);

static struct hvt_settle *settle_add(struct hvt_daemon *d, const char *controller, size_t len) {
        struct hvt_settles *x = &d->settles;
        _cleanup_(settle_freep) struct hvt_settle *s = NULL;

        if (x->n == x->allocated) {
                size_t n = x->allocated ? x->allocated * 2 : 4;
                struct hvt_settle **v = reallocarray(x->v, n, sizeof(*v));

                if (!v)
                        return NULL;
                x->v = v;
                x->allocated = n;
        }
        s = calloc(1, sizeof(*s));
        if (!s)
                return NULL;
        s->daemon = d;
        s->controller = strndup(controller, len);
        if (!s->controller)
                return NULL;
        if (hvt_event_add_time_relative(d->event, &s->timer, 0, 0, on_settle, s) < 0 ||
            hvt_event_source_set_enabled(s->timer, false) < 0)
                return NULL;
        x->v[x->n++] = s;
        return TAKE_PTR(s);
}

static void recheck(struct hvt_daemon *d, const char *controller) {
        size_t len = strlen(controller);

        for (size_t i = 0; i < d->disks.n; i++)
                if (of_controller(&d->disks.v[i]->disk, controller, len))
                        hvt_tune(d, d->disks.v[i], HVT_TUNE_EVENT);
}

static int on_settle(struct hvt_event_source *src, uint64_t usec, void *userdata) {
        struct hvt_settle *s = userdata;
        struct hvt_daemon *d = s->daemon;
        uint64_t now = hvt_event_now(d->event);

        (void) usec;
        recheck(d, s->controller);
        s->check_usec = now;
        /* Events came after the ones this pass was for: one more once they have settled. */
        if (s->event_usec + HVT_SETTLE_USEC > now)
                return hvt_event_source_set_time_relative(src, s->event_usec + HVT_SETTLE_USEC - now);
        settle_remove(&d->settles, s);
        return 0;
}

void hvt_settle_event(struct hvt_daemon *d, const char *controller, size_t len) {
        struct hvt_settle *s;
        uint64_t now, at;
        bool any = false;
        int r;

        if (!d->event || len == 0)
                return;
        now = hvt_event_now(d->event);
        for (size_t i = 0; i < d->disks.n; i++)
                if (of_controller(&d->disks.v[i]->disk, controller, len)) {
                        d->disks.v[i]->reapply_usec = now;
                        any = true;
                }
        if (!any)
                return;

        s = settle_find(&d->settles, controller, len) ?: settle_add(d, controller, len);
        if (!s) {
                (void) hvt_log_errno(&d->log, LOG_ERR, -ENOMEM, "%.*s: out of memory, its disks not re-checked",
                                     (int) len, controller);
                return;
        }
        s->event_usec = now;
        if (s->check_usec == 0) {
                /* The burst's first event: its pass comes after the events read with it. */
                if (hvt_event_source_get_enabled(s->timer))
                        return;
                at = now;
        } else {
                /* A later one: a second after it, and no later than the bound after the last. */
                uint64_t bound = s->check_usec + HVT_SETTLE_MAX_USEC;

                at = now + HVT_SETTLE_USEC;
                if (bound < at)
                        at = bound > now ? bound : now;
        }
        r = hvt_event_source_set_time_relative(s->timer, at - now);
        if (r < 0)
                (void) hvt_log_errno(&d->log, LOG_ERR, r, "%s: cannot set up the re-check of its disks: %m",
                                     s->controller);
}

void hvt_settle_scsi_event(struct hvt_daemon *d, const char *syspath) {
        if (syspath)
                hvt_settle_event(d, syspath, up(syspath, strlen(syspath), 2));
}

void hvt_settle_disk_event(struct hvt_daemon *d, const struct hvt_disk *disk) {
        if (hvt_kind_is_nvme(disk->kind))
                hvt_settle_event(d, disk->device_syspath, strlen(disk->device_syspath));
}

/* The heads of every subsystem the controller at syspath is a path of: the kernel links each
 * of its controllers into the subsystem's directory, under the controller's name. */
static void settle_heads(struct hvt_daemon *d, const char *syspath) {
        const char *name = strrchr(syspath, '/'), *seen = NULL;

        if (!name || !name[1])
                return;
        for (size_t i = 0; i < d->disks.n; i++) {
                const struct hvt_disk *disk = &d->disks.v[i]->disk;
                char path[PATH_MAX];

                /* A subsystem's heads are usually found one after the other: one look each. */
                if (!disk->multipath_head || (seen && strcmp(seen, disk->device_syspath) == 0))
                        continue;
                seen = disk->device_syspath;
                if (snprintf(path, sizeof(path), "%s%s", disk->device_syspath, name) >= (int) sizeof(path) ||
                    access(path, F_OK) < 0)
                        continue;
                hvt_settle_event(d, disk->device_syspath, strlen(disk->device_syspath));
        }
}

void hvt_settle_nvme_event(struct hvt_daemon *d, const char *syspath) {
        if (!syspath)
                return;
        hvt_settle_event(d, syspath, strlen(syspath));
        settle_heads(d, syspath);
}

void hvt_settle_done(struct hvt_settles *x) {
        for (size_t i = 0; i < x->n; i++)
                settle_free(x->v[i]);
        free(x->v);
        *x = (struct hvt_settles) {};
}
