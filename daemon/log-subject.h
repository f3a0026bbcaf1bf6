/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: entries about one thing: a disk, the driver, or a controller. Each carries the fields
 * that say which (HVTUNED_DEVICE and HVTUNED_CONTROLLER, or HVTUNED_CONTROLLER and
 * HVTUNED_HOST), so that `journalctl HVTUNED_DEVICE=sdc` finds every entry about sdc. */
#pragma once

#include "controller.h"
#include "disk.h"
#include "log.h"
#include "subject.h"

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
