/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: asking the service manager what kind of stop this is. */
#pragma once

#include "log.h"

enum hvt_stop_kind {
        /* Nothing follows, or it cannot be told (no systemd, no libsystemd to ask it with:
         * said at debug level; no answer within 2 s, connecting included: at info level):
         * restoring is the safe side. */
        HVT_STOP_PLAIN,
        /* systemd says the system is stopping (shutdown or reboot under way): there is no
         * point restoring originals, and it would only slow the shutdown. */
        HVT_STOP_SHUTDOWN,
        /* This unit has a job of type restart: systemd starts hvtuned again once the stop is
         * done, and that start would write back what the restore took away. */
        HVT_STOP_RESTART,
};

/* Returns within about 2 s, whatever the bus does. */
enum hvt_stop_kind hvt_system_stop_kind(const struct hvt_log *log);
