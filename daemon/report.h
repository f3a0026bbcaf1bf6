/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: telling the operator about one thing, a disk, the driver or a controller: what a pass
 * did (one journal entry or stderr line per attribute result, one per disk found or gone), and
 * any other entry about it, with the fields that say which. */
#pragma once

#include "apply.h"
#include "controller.h"
#include "disk.h"
#include "log.h"
#include "subject.h"
#include "track.h"

enum {
        HVT_REPORT_UNCHANGED_INFO = 1 << 0,  /* --once: unchanged at info with -v, else debug */
        HVT_REPORT_REPEATED       = 1 << 1,  /* the same failure as last time: debug only */
        /* A repair: who wrote the value it undid (track.h's enum hvt_writer). */
        HVT_REPORT_BY_KERNEL      = 1 << 2,
        HVT_REPORT_BY_OTHER       = 1 << 3,
        HVT_REPORT_DEBUG          = 1 << 4,  /* about nothing the machine has (no storvsc controller): debug only */
};

/* One attribute's result, of a disk or of the driver; the action (track.h) picks the wording
 * and the MESSAGE_ID. */
void hvt_report_result(const struct hvt_log *log, const struct hvt_subject *subject, const struct hvt_result *r,
                       enum hvt_action action, unsigned flags);

/* The same, with why an unsupported attribute is missing, in place of "no such attribute on
 * this kernel". */
void hvt_report_result_because(const struct hvt_log *log, const struct hvt_subject *subject,
                               const struct hvt_result *r, enum hvt_action action, unsigned flags,
                               const char *because);

/* A restore that put an Azure NVMe disk's io_timeout back below what Azure needs. */
void hvt_report_nvme_timeout_short(const struct hvt_log *log, const struct hvt_disk *disk, const char *ms);
void hvt_report_disk_found(const struct hvt_log *log, const struct hvt_disk *disk);
void hvt_report_disk_removed(const struct hvt_log *log, const struct hvt_disk *disk);
/* A managed disk that is no longer a Hyper-V disk: forgotten, left as it is. */
void hvt_report_disk_released(const struct hvt_log *log, const struct hvt_disk *disk);
/* A Hyper-V disk whose identity cannot be read; returns -abs(error). */
int hvt_report_disk_unreadable(const struct hvt_log *log, const char *sysname, int error);
/* A disk reverted so often that repairs pause for seconds. */
void hvt_report_drift_paused(const struct hvt_log *log, const struct hvt_disk *disk, unsigned repairs,
                             unsigned window_s, unsigned pause_s);
/* Something else keeps writing attribute id of disk (track.h): set back to theirs (hvtuned
 * wanted ours) repairs times in a row, each within horizon_s of the last; suspects names who
 * is likely writing ("" when none is found); hvtuned yields or insists, per policy. */
void hvt_report_contested(const struct hvt_log *log, const struct hvt_disk *disk, enum hvt_attr_id id,
                          const char *theirs, const char *ours, unsigned repairs, unsigned horizon_s,
                          enum hvt_contest_policy policy, const char *suspects);
/* A pass that met EBUSY (7.3's trylock: another change of the controller's queues under way)
 * runs again in delay_ms: try of tries. */
void hvt_report_busy_retry(const struct hvt_log *log, const struct hvt_disk *disk, unsigned delay_ms,
                           unsigned try, unsigned tries);
/* Still busy after every try: left failed until the next event, reload or check. */
void hvt_report_busy_gave_up(const struct hvt_log *log, const struct hvt_disk *disk, unsigned tries,
                             unsigned total_ms);

/* Entries about one thing: a disk, the driver, or a controller. Each carries the fields that
 * say which (HVTUNED_DEVICE and HVTUNED_CONTROLLER, or HVTUNED_CONTROLLER and HVTUNED_HOST),
 * so that `journalctl HVTUNED_DEVICE=sdc` finds every entry about sdc. */

/* As hvt_log_struct(), with the subject's fields before fields (which may be NULL). */
int hvt_log_subject(const struct hvt_log *log, const struct hvt_subject *s, int prio, int error,
                    const char *message_id, const char *const *fields, const char *fmt, ...)
        __attribute__((format(printf, 7, 8)));

int hvt_log_disk(const struct hvt_log *log, const struct hvt_disk *disk, int prio, int error,
                 const char *message_id, const char *const *fields, const char *fmt, ...)
        __attribute__((format(printf, 7, 8)));

int hvt_log_controller(const struct hvt_log *log, const struct hvt_controller *c, int prio, int error,
                       const char *message_id, const char *const *fields, const char *fmt, ...)
        __attribute__((format(printf, 7, 8)));
