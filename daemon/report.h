/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: telling the operator what a pass did: one journal entry (or stderr line) per
 * attribute result, and one per disk found or gone. */
#pragma once

#include "apply.h"
#include "disk.h"
#include "log.h"

/* Unchanged results are logged at info when verbose_unchanged (--once), else at debug. */
void hvt_report_results(const struct hvt_log *log, const struct hvt_disk *disk,
                        const struct hvt_apply *a, bool verbose_unchanged);

void hvt_report_disk_found(const struct hvt_log *log, const struct hvt_disk *disk);
void hvt_report_disk_removed(const struct hvt_log *log, const struct hvt_disk *disk);
/* A managed disk that is no longer a Hyper-V disk: forgotten, left as it is. */
void hvt_report_disk_released(const struct hvt_log *log, const struct hvt_disk *disk);
/* A Hyper-V disk whose identity cannot be read; returns -abs(error). */
int hvt_report_disk_unreadable(const struct hvt_log *log, const char *sysname, int error);
