/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: re-probing idle controllers over the cap (host.reprobe_idle_controllers): the
 * checks that they are unused, the unbind and bind, and the proof that it worked. */
#pragma once

struct hvt_daemon;

/* Every SCSI controller over the cap whose disks are all unused is unbound from hv_storvsc
 * and bound again, so that it is probed with the cap; any other is left alone, with the
 * reason logged. */
void hvt_reprobe_idle(struct hvt_daemon *d);

/* Binds the controller an interrupted re-probe (a crash between unbind and bind) left
 * unbound, as recorded in the runtime directory. */
void hvt_reprobe_resume(struct hvt_daemon *d);
