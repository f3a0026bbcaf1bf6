/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: loading the configuration into the context: a file that is refused is journaled
 * with its file:line, and the running configuration stays. */
#pragma once

#include "context.h"

/* Loads the configuration into d->config; on error logs it (file:line), keeps the old and
 * sets d->config_error. */
int hvt_load_config(struct hvt_daemon *d);
