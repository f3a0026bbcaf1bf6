/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the passes over the whole VM: every managed disk (a new configuration, the periodic
 * check, the restore at stop) and the driver (cap, re-probe, report). */
#pragma once

#include "context.h"

/* The configuration changed: every managed disk gets the new plan. */
void hvt_pass_retune(struct hvt_daemon *d);

/* The periodic re-check of every managed disk (verify_interval). */
void hvt_pass_verify(struct hvt_daemon *d);

/* Puts every recorded original back, the disks' and the driver's, and drops the records. */
void hvt_pass_restore(struct hvt_daemon *d);

/* At start and after a reload: binds what an interrupted re-probe left unbound, sets the cap,
 * reads the controllers, re-probes idle ones over the cap when the configuration asks for it,
 * forgets the disks that went with them, and reports what stays. */
void hvt_pass_driver(struct hvt_daemon *d);
