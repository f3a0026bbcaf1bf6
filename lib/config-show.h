/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the listing of a configuration's effective settings and their origins. */
#pragma once

#include <stdio.h>

#include "config.h"

/* To f, a line a setting, "key = value;  # origin": the top-level groups attribute by
 * attribute (the built-in policy's too), the platform values no file's top-level group
 * replaces, the other keys that a file sets (top-level, host, contested), then each override
 * with its match and its settings, in the order they apply. */
void hvt_config_show(const struct hvt_config *c, FILE *f);
