/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the state file (see state-file.h). */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"
#include "event.h"
#include "fs-util.h"
#include "host.h"
#include "macro.h"
#include "state-file.h"

static uint64_t now_usec(clockid_t clock) {
        struct timespec ts;

        if (clock_gettime(clock, &ts) < 0)
                return 0;
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

static enum hvt_state_role role_of(const struct hvt_slot *slot) {
        return slot->yielded ? HVT_STATE_YIELDED : slot->want_set ? HVT_STATE_MANAGED : HVT_STATE_KNOCK_ON;
}

/* The slot's repair clock (the event loop's, CLOCK_MONOTONIC seconds plus one) as
 * CLOCK_REALTIME, to the second: the offset between the clocks is rounded, so that the file is
 * not rewritten for a microsecond between two readings of it. */
static uint64_t repair_realtime(const struct hvt_slot *slot) {
        uint64_t mono = now_usec(CLOCK_MONOTONIC), real = now_usec(CLOCK_REALTIME), offset_s;

        if (!slot || slot->repaired_s == 0 || real < mono)
                return 0;
        offset_s = (real - mono + 500000) / 1000000;
        return (offset_s + slot->repaired_s - 1) * 1000000;
}

static int gather_disk(const struct hvt_tracked *t, struct hvt_state *s) {
        struct hvt_state_disk *sd = hvt_state_add_disk(s, t->disk.sysname, t->disk.syspath, t->disk.device_syspath);

        if (!sd)
                return -ENOMEM;
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
                if (slot->want_set || slot->yielded)
                        (void) hvt_strscpy(a->want, sizeof(a->want), slot->want);
                else
                        (void) hvt_strscpy(a->left, sizeof(a->left), hvt_slot_left(slot));
                if (slot->orig_set)
                        (void) hvt_strscpy(a->orig, sizeof(a->orig), slot->orig);
        }
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

int hvt_state_gather(const struct hvt_daemon *d, const char *status, struct hvt_state *ret) {
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
        for (size_t i = 0; i < d->disks.n && r >= 0; i++)
                r = gather_disk(d->disks.v[i], &s);
        if (r >= 0)
                r = gather_host(d, &s);
        if (r < 0)
                hvt_state_done(&s);  /* *ret empty too: a caller may free it either way */
        *ret = s;
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
        _cleanup_free_ char *same = NULL, *text = NULL;
        struct hvt_state s = {};
        int r;

        if (d->once || (d->apply_flags & HVT_APPLY_DRY_RUN) || d->state_fd < 0 || !gather_now(d))
                return;
        r = hvt_state_gather(d, status, &s);
        /* Compared without its time: an unchanged state is not written again. */
        if (r >= 0)
                r = hvt_state_format(&s, &same);
        if (r >= 0 && d->state_written && strcmp(same, d->state_written) == 0) {
                hvt_state_done(&s);
                return;
        }
        s.written_usec = now_usec(CLOCK_REALTIME);
        if (r >= 0)
                r = hvt_state_format(&s, &text);
        hvt_state_done(&s);
        if (r >= 0)
                r = hvt_write_atomic(d->state_fd, HVT_STATE_FILE, text, strlen(text),
                                     d->state_write_flags | HVT_WRITE_PRIVATE, NULL);
        if (r < 0) {
                /* Said once: the next try is after the next pass, and a full /run fails them all. */
                if (d->state_written || !d->state_error_told)
                        (void) hvt_log_errno(&d->log, LOG_WARNING, r, "Cannot write the state file for hvtuned --status: %m");
                d->state_error_told = true;
                free(d->state_written);
                d->state_written = NULL;
                return;
        }
        free(d->state_written);
        d->state_written = TAKE_PTR(same);
}

void hvt_state_file_remove(struct hvt_daemon *d) {
        d->state_later = hvt_event_source_free(d->state_later);
        if (d->state_fd >= 0 && !d->once && unlinkat(d->state_fd, HVT_STATE_FILE, 0) < 0 && errno != ENOENT)
                (void) hvt_log_errno(&d->log, LOG_WARNING, errno, "Cannot remove the state file: %m");
        free(d->state_written);
        d->state_written = NULL;
}
