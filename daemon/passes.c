/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the passes of passes.h. */
#include <string.h>

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

void hvt_pass_restore(struct hvt_daemon *d) {
        for (size_t i = 0; i < d->disks.n; i++)
                hvt_tune_restore(d, d->disks.v[i]);
        hvt_host_restore(d);
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
        hvt_reprobe_resume(d);
        hvt_host_set_cap(d);
        if (hvt_host_scan(d) < 0)
                return;
        /* Re-probes first: the report and the advice are about what stays over the cap. */
        if (d->config->host.reprobe_idle_controllers) {
                _cleanup_(hvt_unbound_done) struct hvt_unbound u = {};

                if (hvt_reprobe_idle(d, &u) >= 0)
                        forget_unbound(d, &u);
        }
        hvt_host_report(d);
}
