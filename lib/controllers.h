/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the list of storvsc controllers of this VM, as the kernel shows them now: read
 * whole (a controller comes or goes with a hot-add or a re-probe), searched by name. */
#pragma once

#include <stddef.h>

#include "controller.h"

struct hvt_controllers {
        struct hvt_controller *v;
        size_t n;
};

/* Told about a storvsc controller whose queue figures cannot be read: error is -EOPNOTSUPP
 * when the kernel has no nr_hw_queues to show (before 5.10), else what the read gave. */
typedef void (*hvt_controller_unreadable_t)(const char *sysname, int error, void *userdata);

/* Reads every storvsc controller (/sys/class/scsi_host) into ret, replacing what it held;
 * ret is left as it was on error (-ENOMEM, or what listing the SCSI hosts gave). */
int hvt_controllers_scan(struct hvt_controllers *ret, hvt_controller_unreadable_t unreadable, void *userdata);

/* The controller of that name ("{guid}"), or NULL. The pointer is into c: the next scan
 * frees it. */
const struct hvt_controller *hvt_controllers_find(const struct hvt_controllers *c, const char *controller);

void hvt_controllers_done(struct hvt_controllers *c);
