/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: what hvtuned says of Azure's NVMe I/O timeout beyond each write's line: the boot-time
 * step, once a run, and the timeouts a stop or hvtuned --restore left as hvtuned set them. */
#pragma once

#include "context.h"

/* disk ran with an I/O timeout of from ms, under the host's retry window, until this pass
 * raised it: the boot-time step that sets it before hvtuned starts, said once a run (a
 * reload does not say it again). */
void hvt_nvme_timeout_advise(struct hvt_daemon *d, const struct hvt_disk *disk, const char *from);

/* After a restore pass: one line naming the disks whose timeout it left (hvt_tracked's
 * timeout_held), why, and the boot-time step. Returns how many. */
unsigned hvt_nvme_timeout_said_held(struct hvt_daemon *d);
