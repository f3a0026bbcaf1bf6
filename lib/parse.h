/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: reading an unsigned number from text hvtuned does not write itself (sysfs, its own
 * state file), the one way: digits only, as the kernel prints an unsigned attribute. */
#pragma once

#include <stdint.h>

/* s as a number of at most max: -EINVAL for an empty text, anything but digits (no sign, no
 * blank, which strtoull() would take) or a value beyond max. */
int hvt_parse_u64(const char *s, uint64_t max, uint64_t *ret);
