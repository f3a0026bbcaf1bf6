/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the integer-literal guard run before libconfig parses a file. */
#pragma once

#include "config.h"

/* libconfig 1.5 stores an integer literal without the L suffix in an int and silently keeps
 * the low 32 bits: "read_ahead_kb = 4294967296;" would load as 0. Later versions promote
 * decimal literals to 64 bits but still truncate hexadecimal ones (0x100000000 is 0), so the
 * guard is needed with every libconfig. This scans path (and the files it @includes,
 * relative to include_dir as libconfig resolves them) for such literals.
 * Returns 0, or -EINVAL with err naming the file, line and literal. */
int hvt_config_scan_literals(const char *path, const char *include_dir, struct hvt_config_error *err);
