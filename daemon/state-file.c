/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the state file (see state-file.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"
#include "event.h"
#include "fs-util.h"
#include "host.h"
#include "macro.h"
#include "policy.h"
#include "state-file.h"

static enum hvt_state_role role_of(const struct hvt_slot *slot) {
        return slot->yielded ? HVT_STATE_YIELDED : slot->want_set ? HVT_STATE_MANAGED : HVT_STATE_KNOCK_ON;
}

/* The slot's repair clock (the event loop's, CLOCK_MONOTONIC seconds plus one) as
 * CLOCK_REALTIME, to the second: the offset between the clocks is rounded, so that the file is
 * not rewritten for a microsecond between two readings of it. */
static uint64_t repair_realtime(const struct hvt_slot *slot) {
        uint64_t mono = hvt_now_usec(CLOCK_MONOTONIC), real = hvt_now_usec(CLOCK_REALTIME), offset_s;

        if (!slot || slot->repaired_s == 0 || real < mono)
                return 0;
        offset_s = (real - mono + 500000) / 1000000;
        return (offset_s + slot->repaired_s - 1) * 1000000;
}

/* All of sd but its strings, which are the caller's. Each wanted value's origin is the
 * configuration's now (a pass takes its wants from it). */
static void fill_disk(const struct hvt_tracked *t, struct hvt_state_disk *sd) {
        const struct hvt_config *c = t->daemon->config;
        struct hvt_plan plan = {};

        (void) hvt_strscpy(sd->controller, sizeof(sd->controller), t->disk.controller);
        sd->kind = t->disk.kind;
        sd->role = t->disk.role;
        sd->repairs = t->n_repairs;
        sd->paused = t->resume != NULL;
        sd->failed = t->n_failed;
        if (t->n_repairs > 0) {
                sd->last_repair_attr = t->last_repair_id;
                sd->last_repair_usec = repair_realtime(hvt_slot_get(&t->slots, (enum hvt_attr_id) t->last_repair_id));
        }
        if (c)
                hvt_policy_plan(c, &t->disk, NULL, &plan);
        for (size_t i = 0; i < t->slots.n && sd->n_attr < ELEMENTSOF(sd->attr); i++) {
                const struct hvt_slot *slot = &t->slots.slot[i];
                struct hvt_state_attr *a = &sd->attr[sd->n_attr++];

                *a = (struct hvt_state_attr) {
                        .id = (enum hvt_attr_id) slot->id,
                        .role = role_of(slot),
                        .last = slot->acted ? slot->last_action : slot->last.to_set ? HVT_UNCHANGED : -1,
                        .error = slot->last.error,
                };
                /* A yielded slot's want is hvtuned's value, kept for its restore. */
                if (slot->want_set || slot->yielded) {
                        (void) hvt_strscpy(a->want, sizeof(a->want), slot->want);
                        /* What --verify takes for as configured besides the want itself. */
                        (void) hvt_strscpy(a->kept, sizeof(a->kept), slot->last.kept);
                        a->ceiling = slot->want_at_most;
                        if (slot->id < _HVT_ATTR_DISK_MAX)
                                hvt_origin_format(&plan.origin[slot->id], a->origin, sizeof(a->origin));
                } else
                        (void) hvt_strscpy(a->left, sizeof(a->left), hvt_slot_left(slot));
                if (slot->orig_set)
                        (void) hvt_strscpy(a->orig, sizeof(a->orig), slot->orig);
        }
}

static int gather_disk(const struct hvt_tracked *t, struct hvt_state *s) {
        struct hvt_state_disk *sd = hvt_state_add_disk(s, t->disk.sysname, t->disk.syspath, t->disk.device_syspath);

        if (!sd)
                return -ENOMEM;
        fill_disk(t, sd);
        return 0;
}

static int gather_host(const struct hvt_daemon *d, struct hvt_state *s) {
        _cleanup_free_ struct hvt_metrics_controller *ctrl = calloc(d->host.controllers.n + 1, sizeof(*ctrl));
        _cleanup_free_ struct hvt_metrics_nvme *nvme = calloc(d->host.nvme.n + 1, sizeof(*nvme));
        size_t n_nvme;

        s->controller = calloc(d->host.controllers.n + 1, sizeof(*s->controller));
        s->nvme = calloc(d->host.nvme.n + 1, sizeof(*s->nvme));
        if (!ctrl || !nvme || !s->controller || !s->nvme)
                return -ENOMEM;
        hvt_host_metrics(d, ctrl);
        for (size_t i = 0; i < d->host.controllers.n; i++) {
                const struct hvt_metrics_controller *c = &ctrl[i];
                struct hvt_state_controller *sc = &s->controller[s->n_controller++];

                *sc = (struct hvt_state_controller) {
                        .host = c->host,
                        .kind = c->kind,
                        .nr_hw_queues = c->nr_hw_queues,
                        .can_queue = c->can_queue,
                        .capped_queues = c->capped_queues,
                        .over_cap = c->over_cap,
                        .bytes = c->bytes,
                        .capped_bytes = c->capped_bytes,
                        .band_pct = c->band_pct,
                };
                (void) hvt_strscpy(sc->controller, sizeof(sc->controller), c->controller);
        }
        n_nvme = hvt_host_nvme_metrics(d, nvme);
        for (size_t i = 0; i < n_nvme; i++) {
                struct hvt_state_nvme *sn = &s->nvme[s->n_nvme++];

                *sn = (struct hvt_state_nvme) {
                        .kind = nvme[i].kind,
                        .nr_io_queues = nvme[i].nr_io_queues,
                        .q_depth = nvme[i].q_depth,
                        .bytes = nvme[i].bytes,
                        .band_pct = nvme[i].band_pct,
                };
                (void) hvt_strscpy(sn->name, sizeof(sn->name), nvme[i].controller);
        }
        return 0;
}

/* Everything but the disks: the head and the tail of the file. */
static int gather_head(const struct hvt_daemon *d, const char *status, struct hvt_state *ret) {
        struct hvt_state s = { .running = !d->once, .pid = getpid() };
        int support = hvt_driver_cap_supported(d), r;

        s.status = strdup(status);
        s.driver = (struct hvt_state_driver) {
                .cap = support == 0 ? 0 : d->driver.target,
                .present_cpus = d->driver.present,
                .cap_support = support > 0 ? 1 : support == 0 ? 0 : -1,
        };
        if (d->driver.orig.value[HVT_ATTR_MAX_HW_QUEUES].set)
                (void) hvt_strscpy(s.driver.orig, sizeof(s.driver.orig), d->driver.orig.value[HVT_ATTR_MAX_HW_QUEUES].text);
        r = s.status ? 0 : -ENOMEM;
        if (r >= 0)
                r = gather_host(d, &s);
        if (r < 0)
                hvt_state_done(&s);  /* *ret empty too: a caller may free it either way */
        *ret = s;
        return r;
}

int hvt_state_gather(const struct hvt_daemon *d, const char *status, struct hvt_state *ret) {
        int r = gather_head(d, status, ret);

        for (size_t i = 0; i < d->disks.n && r >= 0; i++)
                r = gather_disk(d->disks.v[i], ret);
        if (r < 0)
                hvt_state_done(ret);
        return r;
}

struct emit {
        const struct hvt_daemon *d;
        const struct hvt_state *head;
};

/* The file, a disk at a time: a disk's record is some 3 KiB in memory, and at 1,000 disks the
 * whole state was 4 MiB on top of the daemon's 3.5 (docs/performance.md). */
static int emit(FILE *f, void *userdata) {
        const struct emit *e = userdata;
        struct hvt_state_out o = { .f = f };

        hvt_state_write_head(&o, e->head);
        for (size_t i = 0; i < e->d->disks.n; i++) {
                const struct hvt_tracked *t = e->d->disks.v[i];
                struct hvt_state_disk sd = {
                        .name = (char *) t->disk.sysname,
                        .syspath = t->disk.syspath,
                        .device_syspath = t->disk.device_syspath ? t->disk.device_syspath : (char *) "",
                        .last_repair_attr = -1,
                };

                fill_disk(t, &sd);
                hvt_state_write_disk(&o, &sd);
        }
        return hvt_state_write_tail(&o, e->head);
}

/* FNV-1a over what is written: whether the state changed, without keeping the last text. */
static ssize_t hash_write(void *cookie, const char *buf, size_t size) {
        uint64_t *h = cookie;

        for (size_t i = 0; i < size; i++)
                *h = (*h ^ (unsigned char) buf[i]) * UINT64_C(0x100000001b3);
        return (ssize_t) size;
}

static int hash_state(const struct emit *e, uint64_t *ret) {
        uint64_t h = UINT64_C(0xcbf29ce484222325);
        FILE *f = fopencookie(&h, "w", (cookie_io_functions_t) { .write = hash_write });
        int r;

        if (!f)
                return -ENOMEM;
        r = emit(f, (void *) e);
        if (fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        *ret = h;
        return r;
}

/* At most one gathering a second: it is a walk over every disk, and an iteration of the loop
 * may be one event of a flood of thousands. One that comes too soon is made once the second is
 * over (the timer's iteration ends with the status update, which calls here again). */
#define GATHER_INTERVAL_USEC 1000000

static int on_later(struct hvt_event_source *src, uint64_t usec, void *userdata) {
        struct hvt_daemon *d = userdata;

        (void) src;
        (void) usec;
        d->state_later = hvt_event_source_free(d->state_later);
        return 0;
}

/* Whether to gather now; if not, a gathering is due when the interval ends. */
static bool gather_now(struct hvt_daemon *d) {
        uint64_t now;

        if (!d->event)
                return true;
        now = hvt_event_now(d->event);
        if (d->state_gathered_usec == 0 || now - d->state_gathered_usec >= GATHER_INTERVAL_USEC) {
                d->state_gathered_usec = now;
                return true;
        }
        /* Out of memory for the timer: the next iteration's update gathers. */
        if (!d->state_later)
                (void) hvt_event_add_time(d->event, &d->state_later, d->state_gathered_usec + GATHER_INTERVAL_USEC,
                                          GATHER_INTERVAL_USEC / 10, on_later, d);
        return false;
}

void hvt_state_file_update(struct hvt_daemon *d, const char *status) {
        struct hvt_state head = {};
        struct emit e = { .d = d, .head = &head };
        uint64_t hash = 0;
        int r;

        if (d->once || (d->apply_flags & HVT_APPLY_DRY_RUN) || d->state_fd < 0 || !gather_now(d))
                return;
        r = gather_head(d, status, &head);
        /* Compared without its time: an unchanged state is not written again. A change that
         * hashes as the last text did (1 in 2^64) is written with the next one. */
        if (r >= 0)
                r = hash_state(&e, &hash);
        if (r >= 0 && d->state_hash_set && hash == d->state_hash) {
                hvt_state_done(&head);
                return;
        }
        head.written_usec = hvt_now_usec(CLOCK_REALTIME);
        if (r >= 0)
                r = hvt_write_atomic_stream(d->state_fd, HVT_STATE_FILE, emit, &e,
                                            d->state_write_flags | HVT_WRITE_PRIVATE, NULL);
        hvt_state_done(&head);
        if (r < 0) {
                /* Said once: the next try is after the next pass, and a full /run fails them all. */
                if (d->state_hash_set || !d->state_error_told)
                        (void) hvt_log_errno(&d->log, LOG_WARNING, r, "Cannot write the state file for hvtuned --status: %m");
                d->state_error_told = true;
                d->state_hash_set = false;
                return;
        }
        d->state_hash = hash;
        d->state_hash_set = true;
}

void hvt_state_file_update_now(struct hvt_daemon *d, const char *status) {
        d->state_gathered_usec = 0;
        hvt_state_file_update(d, status);
}

void hvt_state_file_remove(struct hvt_daemon *d) {
        d->state_later = hvt_event_source_free(d->state_later);
        if (d->state_fd >= 0 && !d->once && unlinkat(d->state_fd, HVT_STATE_FILE, 0) < 0 && errno != ENOENT)
                (void) hvt_log_errno(&d->log, LOG_WARNING, errno, "Cannot remove the state file: %m");
        d->state_hash_set = false;
}
