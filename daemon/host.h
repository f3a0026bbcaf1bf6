/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the hv_storvsc driver as a whole: the hw queue cap (the module parameter and its
 * original), the report of every controller's queues and what they hold, the advice that
 * makes the cap apply at boot, and the opt-in re-probe of idle controllers (reprobe.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "apply.h"
#include "metrics.h"
#include "controller.h"
#include "state.h"

/* The record of the parameter's original sits beside the disks', under this name. */
#define HVT_HOST_RECORD "hv_storvsc"

struct hvt_daemon;

struct hvt_host {
        bool loaded;                     /* the record of the original was looked for */
        unsigned present;                /* CPUs present; 0 when unknown */
        unsigned target;                 /* the cap asked of the parameter; 0: left alone */
        struct hvt_result param_last;    /* the parameter's last result */
        struct hvt_originals orig;       /* the parameter before hvtuned first wrote it */
        struct hvt_controller *controllers;
        size_t n_controllers;
        char module_syspath[32];         /* what the parameter's reports call its device */
        bool no_figures_told;            /* a kernel without nr_hw_queues: said once */
};

void hvt_host_done(struct hvt_host *h);

/* At start and after a reload: the cap on the parameter, a report of every controller and,
 * when asked for and allowed (reprobe), the re-probe of idle controllers over the cap. */
void hvt_host_pass(struct hvt_daemon *d, bool reprobe);

/* A SCSI host came or went (hot-add, re-probe): the controllers are read again and a new
 * one is reported. */
void hvt_host_handle_device(struct hvt_daemon *d, const char *syspath, const char *action);

/* Puts the parameter's original back, and drops its record. */
void hvt_host_restore(struct hvt_daemon *d);

/* "hw queues: 1 controller over cap 4, ~69 MiB reclaimable at next boot", or "" when no cap
 * applies. */
void hvt_host_format_status(const struct hvt_daemon *d, char *buf, size_t size);

/* The figures of every controller (d->host.n_controllers of them) for the metrics file; the
 * strings point into d->host.controllers. */
void hvt_host_metrics(const struct hvt_daemon *d, struct hvt_metrics_controller *ret);

/* Reads every storvsc controller into d->host.controllers. */
int hvt_host_scan(struct hvt_daemon *d);

/* Bytes as "96.6 MiB". */
void hvt_format_bytes(uint64_t bytes, char *buf, size_t size);

/* The controller of that name, or NULL. The pointer is into d->host.controllers: the next
 * hvt_host_scan() frees it. */
const struct hvt_controller *hvt_host_find(const struct hvt_daemon *d, const char *controller);
