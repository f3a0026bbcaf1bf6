/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the sd_notify messages hvtuned sends. Failures to notify are not errors of the
 * daemon: systemd may not be listening (a terminal, a container without it).
 *
 * STATUS holds text hvtuned does not control (a configuration file's name): escaped here
 * (lib/escape.h), it can never start a line, which would be a key of its own. */
#include <inttypes.h>
#include <stdlib.h>
#include <time.h>
#include <systemd/sd-daemon.h>

#include "escape.h"
#include "macro.h"
#include "notify.h"

/* state, then STATUS=status escaped. Out of memory, state alone. */
static void notify_with_status(const char *state, const char *status) {
        _cleanup_free_ char *shown = hvt_escape_dup(status);

        if (shown)
                (void) sd_notifyf(0, "%s\nSTATUS=%s", state, shown);
        else
                (void) sd_notify(0, state);
}

void hvt_notify_ready(const char *status) {
        notify_with_status("READY=1", status);
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
        _cleanup_free_ char *shown = hvt_escape_dup(status);

        if (shown)
                (void) sd_notifyf(0, "STATUS=%s", shown);
}

/* Outside the event loop's own pings: before a step that may take long. */
void hvt_notify_watchdog(void) {
        (void) sd_notify(0, "WATCHDOG=1");
}

void hvt_notify_stopping(void) {
        (void) sd_notify(0, "STOPPING=1\nSTATUS=Stopping");
}
