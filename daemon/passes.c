/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the passes of passes.h. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver.h"
#include "host.h"
#include "macro.h"
#include "passes.h"
#include "reprobe.h"
#include "route.h"
#include "tune.h"

void hvt_pass_retune(struct hvt_daemon *d) {
        for (size_t i = 0; i < d->disks.n; i++)
                hvt_tune(d, d->disks.v[i], HVT_TUNE_CONFIG);
}

void hvt_pass_verify(struct hvt_daemon *d) {
        for (size_t i = 0; i < d->disks.n; i++)
                hvt_tune(d, d->disks.v[i], HVT_TUNE_VERIFY);
}

/* Restores the disks of busy[] again (all of them when busy is NULL), marking those still
 * busy; returns how many are. */
static size_t restore_disks(struct hvt_daemon *d, bool *busy) {
        size_t n = 0;

        for (size_t i = 0; i < d->disks.n; i++) {
                if (busy && !busy[i])
                        continue;
                bool b = hvt_tune_restore(d, d->disks.v[i]);

                if (busy)
                        busy[i] = b;
                n += b;
        }
        return n;
}

/* The daemon is going away, so no later pass will restore what a busy kernel refused (the
 * trylock of 7.3 and 6.18.y, while another disk of the controller changes its queues): the
 * busy disks are restored again after 50 ms, doubling, HVT_RESTORE_BUSY_ROUNDS times (1.55 s
 * in all), a sleep the stop can afford and the watchdog (30 s) does not notice. */
#define HVT_RESTORE_BUSY_FIRST_MS 50
#define HVT_RESTORE_BUSY_ROUNDS 5

void hvt_pass_restore(struct hvt_daemon *d) {
        _cleanup_free_ bool *busy = calloc(d->disks.n ?: 1, sizeof(bool));
        size_t n;

        if (!busy) {
                (void) restore_disks(d, NULL);
                hvt_driver_restore(d);
                return;
        }
        for (size_t i = 0; i < d->disks.n; i++)
                busy[i] = true;
        n = restore_disks(d, busy);
        for (unsigned round = 0; n > 0 && round < HVT_RESTORE_BUSY_ROUNDS; round++) {
                unsigned ms = HVT_RESTORE_BUSY_FIRST_MS << round;

                hvt_log_debug(&d->log, "%zu disk%s busy at stop: restoring again in %u ms", n, n == 1 ? "" : "s", ms);
                (void) nanosleep(&(struct timespec) { ms / 1000, (long) (ms % 1000) * 1000000L }, NULL);
                n = restore_disks(d, busy);
        }
        hvt_driver_restore(d);
}

/* Disks of an unbound controller are gone with it, their records too. Backwards, since a
 * removal moves the last entry into the freed slot. */
static void forget_unbound(struct hvt_daemon *d, const struct hvt_unbound *u) {
        for (size_t i = d->disks.n; i > 0; i--)
                for (size_t j = 0; j < u->n; j++)
                        if (strcmp(d->disks.v[i - 1]->disk.controller, u->controller[j]) == 0) {
                                hvt_route_forget(d, d->disks.v[i - 1], true);
                                break;
                        }
}

void hvt_pass_driver(struct hvt_daemon *d) {
        int r;

        hvt_reprobe_resume(d);
        /* The scan first: the cap's lines are said only where a storvsc controller is. */
        r = hvt_host_scan(d);
        hvt_driver_set_cap(d);
        if (r < 0)
                return;
        /* Re-probes first: the report and the advice are about what stays over the cap. */
        if (d->config->host.reprobe_idle_controllers) {
                _cleanup_(hvt_unbound_done) struct hvt_unbound u = {};

                if (hvt_reprobe_idle(d, &u) >= 0)
                        forget_unbound(d, &u);
        }
        hvt_host_report(d);
}
