/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the sd_notify messages hvtuned sends. Failures to notify are not errors of the
 * daemon: systemd may not be listening (a terminal, a container without it). */
#include <inttypes.h>
#include <time.h>
#include <systemd/sd-daemon.h>

#include "notify.h"

void hvt_notify_ready(const char *status) {
        (void) sd_notifyf(0, "READY=1\nSTATUS=%s", status);
}

/* Type=notify-reload (systemd 253 and later) needs MONOTONIC_USEC with RELOADING=1 to tell
 * this reload from an earlier one; Type=notify shows it as "reloading" in the meantime. */
void hvt_notify_reloading(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        (void) sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64 "\nSTATUS=Reloading configuration",
                          (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u);
}

void hvt_notify_status(const char *status) {
        (void) sd_notifyf(0, "STATUS=%s", status);
}

/* Outside the event loop's own pings: before a step that may take long. */
void hvt_notify_watchdog(void) {
        (void) sd_notify(0, "WATCHDOG=1");
}

void hvt_notify_stopping(void) {
        (void) sd_notify(0, "STOPPING=1\nSTATUS=Stopping");
}
