/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: asking the service manager whether the whole system is going down. */
#pragma once

#include <stdbool.h>

#include "log.h"

/* True when systemd says the system is stopping (shutdown or reboot under way): then there
 * is no point restoring originals, and it would only slow the shutdown. False when it cannot
 * tell (no systemd, no libsystemd to ask it with: said at debug level): restoring is the safe
 * side. */
bool hvt_system_is_stopping(const struct hvt_log *log);
