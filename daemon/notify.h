/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the service manager protocol (sd_notify): READY, RELOADING, STATUS, STOPPING and the
 * watchdog's keep-alive, sent without ever blocking the event loop, and their values escaped.
 * Each is a no-op when NOTIFY_SOCKET is not set. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "dgram.h"
#include "event.h"
#include "log.h"

/* State changes and a STATUS the manager's socket had no room for yet. A manager that reads
 * nothing at all while this many pile up (four reloads) loses the oldest. */
#define HVT_NOTIFY_QUEUE_MAX 8

struct hvt_notify {
        const struct hvt_log *log;
        struct hvt_dgram manager;          /* NOTIFY_SOCKET's; fd -EBADF: none */
        char address[sizeof(((struct sockaddr_un *) NULL)->sun_path) + 1];  /* as NOTIFY_SOCKET says it */
        struct hvt_event_source *watchdog; /* the keep-alive timer; NULL without WatchdogSec= */
        uint64_t watchdog_usec;
        bool told_full;                 /* "not reading" said, until the manager reads again */
        bool told_unreachable;          /* "cannot reach" said, until a notification goes through */
        int told_error;                 /* the last other failure to send said, so each is said once */
};

#define HVT_NOTIFY_NULL { .manager = HVT_DGRAM_NULL }

/* Connects to the socket NOTIFY_SOCKET names, if any, and, with WatchdogSec= (WATCHDOG_USEC),
 * pings it from a timer on e. A manager that cannot be reached is a warning, not an error, and
 * is looked for again at each notification: 0, or -errno when the loop cannot take the sources
 * or WATCHDOG_USEC is invalid. */
int hvt_notify_open(struct hvt_notify *n, struct hvt_event *e, const struct hvt_log *log);
void hvt_notify_done(struct hvt_notify *n);

void hvt_notify_ready(struct hvt_notify *n, const char *status);
void hvt_notify_reloading(struct hvt_notify *n);
void hvt_notify_status(struct hvt_notify *n, const char *status);
void hvt_notify_stopping(struct hvt_notify *n);
/* Outside the timer's own pings: before a step that may take long. */
void hvt_notify_watchdog(struct hvt_notify *n);
