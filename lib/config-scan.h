/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the checks run on a configuration file and its includes before libconfig parses them. */
#pragma once

#include "config.h"

/* Scans path and the files it @includes (their names unescaped and resolved against
 * include_dir as libconfig does), before libconfig reads any of them:
 * - each must be a regular file owned by root, not writable by group or others, in a
 *   directory nobody else can change (as sshd's StrictModes): else -EPERM;
 * - libconfig 1.5 stores an integer literal without the L suffix in an int and silently keeps
 *   the low 32 bits: "read_ahead_kb = 4294967296;" would load as 0. Later versions promote
 *   decimal literals to 64 bits but still truncate hexadecimal ones (0x100000000 is 0), so
 *   such a literal is -EINVAL with every libconfig.
 * Returns 0, or the error with err naming the file (and line and literal). A file that cannot
 * be opened is left to libconfig to report. */
int hvt_config_scan(const char *path, const char *include_dir, struct hvt_config_error *err);
