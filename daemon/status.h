/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the one-line status of the whole daemon (STATUS=, --once's last line, the state
 * dump's summary), and sending it when it changed. */
#pragma once

#include <stddef.h>

#include "context.h"

/* "6 storvsc disks on 3 controllers: 6 tuned, 0 failed", with counts.h's phrase */
void hvt_status_format(const struct hvt_daemon *d, char *buf, size_t size);

/* Sends STATUS= when its text changed, and writes the metrics file when its figures did: a
 * change-event flood must not become a notification flood. Once per loop iteration. */
void hvt_status_update(struct hvt_daemon *d);

/* STATUS= with READY=1, at the end of the start or of a reload. */
void hvt_status_ready(struct hvt_daemon *d);
