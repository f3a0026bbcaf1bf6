/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the hv_storvsc driver as a whole: the hw queue cap (the module parameter and its
 * original), and the report of every controller's queues, what they hold, and the boot-time
 * setting that would cap them. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "context.h"
#include "metrics.h"

void hvt_host_done(struct hvt_host *h);

/* At start and after a reload: the cap on the parameter (its original recorded before the
 * first write), or the original back when no cap applies any more. */
void hvt_host_set_cap(struct hvt_daemon *d);

/* 1 when this kernel's storvsc has storvsc_max_hw_queues, 0 when it predates it (5.13),
 * -errno when unknown (no storvsc seen). */
int hvt_host_cap_supported(const struct hvt_daemon *d);

/* The estimate of what a controller with these queues holds on this kernel; 0 when its
 * request layout is unknown. */
uint64_t hvt_host_estimate(const struct hvt_daemon *d, unsigned nr_hw_queues, unsigned can_queue);

/* Reads every storvsc controller into d->host.controllers. */
int hvt_host_scan(struct hvt_daemon *d);

/* A report of every controller, and the boot-time advice for those over the cap. */
void hvt_host_report(struct hvt_daemon *d);

/* A SCSI host came or went (hot-add, re-probe): the controllers are read again and a new
 * one is reported. */
void hvt_host_handle_device(struct hvt_daemon *d, const char *syspath, const char *action);

/* Puts the parameter's original back, and drops its record. */
void hvt_host_restore(struct hvt_daemon *d);

/* "hw queues: 1 controller over cap 4, ~69 MiB reclaimable at next boot", or "" when no cap
 * applies. */
void hvt_host_format_status(const struct hvt_daemon *d, char *buf, size_t size);

/* The figures of every controller (d->host.controllers.n of them) for the metrics file; the
 * strings point into d->host.controllers. */
void hvt_host_metrics(const struct hvt_daemon *d, struct hvt_metrics_controller *ret);
