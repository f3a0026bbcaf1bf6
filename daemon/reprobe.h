/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: re-probing idle controllers over the cap (host.reprobe_idle_controllers): the
 * checks that they are unused, the unbind and bind, and the proof that it worked. */
#pragma once

#include <stddef.h>

#include "context.h"

/* The names ("{guid}") of the controllers a re-probe unbound: their disks are gone, and come
 * back as new devices. */
struct hvt_unbound {
        char (*controller)[HVT_GUID_STR_MAX];
        size_t n;
};

void hvt_unbound_done(struct hvt_unbound *u);

/* Every SCSI controller over the cap whose disks are all unused is unbound from hv_storvsc
 * and bound again, so that it is probed with the cap; any other is left alone, with the
 * reason logged. The caller forgets the disks of the controllers in ret. */
int hvt_reprobe_idle(struct hvt_daemon *d, struct hvt_unbound *ret);

/* Binds the controller an interrupted re-probe (a crash between unbind and bind) left
 * unbound, as recorded in the runtime directory. */
void hvt_reprobe_resume(struct hvt_daemon *d);
