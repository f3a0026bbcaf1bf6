/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the storvsc controllers as a whole: their queues, what they hold on this kernel (its
 * request layout), how much the cap (driver.h) would give back, the report of each, and the
 * boot-time setting that would cap them; and the report of Azure's NVMe controllers, with what
 * their queues hold (nvme.h). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "context.h"
#include "metrics.h"

void hvt_host_done(struct hvt_host *h);

/* Once: what a request costs on this kernel, and from where, said; without it, every estimate
 * is said to be unknown; with an assumed one (layout.h), every estimate says so. */
void hvt_host_read_layout(struct hvt_daemon *d);

/* How far an estimate may be off with an assumed layout, in percent rounded up: what the
 * estimate of qa queues of cqa requests (less qb of cqb, when qb > 0: a difference) makes at
 * every row's request size (layout.h). 0 from BTF or the release's own row. */
unsigned hvt_host_band(const struct hvt_daemon *d, unsigned qa, unsigned cqa, unsigned qb, unsigned cqb);

/* What goes after an estimate with that band: "" from BTF or the release's own row;
 * " (assumed 6.1's layout, +/-8% across 5.10-7.3)" (full) or " (assumed 6.1's layout, +/-8%)"
 * from an assumed one. */
void hvt_host_layout_note(const struct hvt_daemon *d, unsigned band, bool full, char *buf, size_t size);

/* The estimate of what a controller with these queues holds on this kernel; 0 when its
 * request layout is unknown. */
uint64_t hvt_host_estimate(const struct hvt_daemon *d, unsigned nr_hw_queues, unsigned can_queue);

/* Reads every storvsc controller into d->host.controllers. */
int hvt_host_scan(struct hvt_daemon *d);

/* Whether the last scan found a storvsc controller: the cap and its figures are about those
 * alone, and a VM without one (NVMe only, with hv_storvsc built in or loaded by an initramfs)
 * hears nothing of them. */
bool hvt_host_has_storvsc(const struct hvt_daemon *d);

/* A report of every controller, and the boot-time advice for those over the cap. */
void hvt_host_report(struct hvt_daemon *d);

/* A SCSI host came or went (hot-add, re-probe): the controllers are read again and a new
 * one is reported. */
void hvt_host_handle_device(struct hvt_daemon *d, const char *syspath, const char *action);

/* "hw queues: 1 controller over cap 4, ~69 MiB reclaimable at next boot", or "" when no cap
 * applies or no storvsc controller is there. */
void hvt_host_format_status(const struct hvt_daemon *d, char *buf, size_t size);

/* The figures of every controller (d->host.controllers.n of them) for the metrics file; the
 * strings point into d->host.controllers. */
void hvt_host_metrics(const struct hvt_daemon *d, struct hvt_metrics_controller *ret);

/* Where those figures come from (the request layout), into m; nothing before it is read. */
void hvt_host_metrics_layout(const struct hvt_daemon *d, struct hvt_metrics *m);

/* The same for the NVMe estimates (hvt_host_nvme_metrics()). */
void hvt_host_metrics_nvme_layout(const struct hvt_daemon *d, struct hvt_metrics *m);

/* An NVMe controller came, went or changed (class nvme): the NVMe controllers are read again
 * and each that is live and was not reported as it is now, is. */
void hvt_host_handle_nvme(struct hvt_daemon *d);

/* "NVMe: 2 Azure controllers, ~8.7 MiB preallocated", or "" when there is none. */
void hvt_host_format_nvme_status(const struct hvt_daemon *d, char *buf, size_t size);

/* The figures of the Azure NVMe controllers whose queues could be read, at most
 * d->host.nvme.n of them, into ret; their count. The strings point into d->host.nvme. */
size_t hvt_host_nvme_metrics(const struct hvt_daemon *d, struct hvt_metrics_nvme *ret);
