/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the state dump on SIGUSR1. */
#pragma once

#include "context.h"

/* One entry per managed disk with, per attribute, its original, desired and current value
 * and last result; then a summary entry. */
void hvt_dump_state(struct hvt_daemon *d);
