/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: asking the service manager whether the whole system is going down. */
#pragma once

#include <stdbool.h>

#include "log.h"

/* True when systemd says the system is stopping (shutdown or reboot under way): then there
 * is no point restoring originals, and it would only slow the shutdown. False when it cannot
 * tell (no systemd, no libsystemd to ask it with: said at debug level; no answer within 2 s,
 * connecting included: at info level): restoring is the safe side. Returns within about 2 s,
 * whatever the bus does. */
bool hvt_system_is_stopping(const struct hvt_log *log);
