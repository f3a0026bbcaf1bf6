/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: what a stop does with the originals hvtuned recorded, and the line that says so. */
#pragma once

#include "context.h"

/* At SIGTERM or SIGINT: puts the originals back, unless restore_on_stop = false, the system is
 * shutting down, or systemd restarts hvtuned (then the records stay as they are, the same
 * files, for the next start to adopt); an Azure NVMe timeout under the host's retry window
 * is kept in any case (tune.c). Then one line: how many attributes went back, were kept, or
 * were left as tuned, on how many disks. */
void hvt_stop(struct hvt_daemon *d);
