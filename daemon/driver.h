/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the hv_storvsc driver's one attribute hvtuned writes, storvsc_max_hw_queues: the cap
 * written at start and at each reload, its original recorded before the first write (a
 * record like a disk's, originals.h), and put back when no cap applies or at stop. */
#pragma once

#include "context.h"

/* At start and after a reload: the cap on the parameter, or the original back when no cap
 * applies any more. */
void hvt_driver_set_cap(struct hvt_daemon *d);

/* Without a cap to set (--restore): the record of the parameter's original into
 * d->driver.orig, and whether the kernel has the parameter. 0, or -errno when the record
 * exists but cannot be read (said). */
int hvt_driver_load(struct hvt_daemon *d);

/* Puts the parameter's original back; the record goes once that worked. */
void hvt_driver_restore(struct hvt_daemon *d);

/* 1 when this kernel's storvsc has storvsc_max_hw_queues, 0 when it predates it (5.13),
 * -errno when unknown (no storvsc seen). */
int hvt_driver_cap_supported(const struct hvt_daemon *d);

/* Whether hv_storvsc is loaded (built in or a module, its parameters are in sysfs), as the
 * last look found it. Without it there is no parameter to cap: udev loads the module to probe
 * the first storvsc controller, which a cap written after the load comes too late for, and
 * setting it before is modprobe.d's or the command line's (the boot advice). */
bool hvt_driver_loaded(const struct hvt_daemon *d);
