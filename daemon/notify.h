/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the service manager protocol (sd_notify): READY, RELOADING, STATUS, STOPPING.
 * Each is a no-op when NOTIFY_SOCKET is not set. */
#pragma once

void hvt_notify_ready(const char *status);
void hvt_notify_reloading(void);
void hvt_notify_status(const char *status);
void hvt_notify_stopping(void);
void hvt_notify_watchdog(void);
