/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: what every LD_PRELOAD shim here repeats when it interposes open(2) and openat(2). */
#pragma once

#include <fcntl.h>
#include <stdarg.h>
#include <sys/types.h>

/* open()'s mode argument, which is there only when flags create a file; expanded inside the
 * variadic function, after its last named parameter last. */
#define SHIM_OPEN_MODE(flags, last)                                             \
        __extension__({                                                         \
                mode_t _mode = 0;                                               \
                if ((flags) & (O_CREAT | O_TMPFILE)) {                          \
                        va_list _ap;                                            \
                        va_start(_ap, last);                                    \
                        _mode = (mode_t) va_arg(_ap, int);                      \
                        va_end(_ap);                                            \
                }                                                               \
                _mode;                                                          \
        })
