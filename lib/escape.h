/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: how text hvtuned does not control is shown. File names, what sysfs holds, strings of
 * the configuration reach a terminal, the journal and the service manager's notification
 * protocol only through here, so that none of them can start a line or a field, move a
 * cursor or pass for other text. The sinks (daemon/log.c, daemon/notify.c) escape every value
 * they send; nothing before them escapes, so nothing is escaped twice. */
#pragma once

#include <stddef.h>

/* The room the escaped form of n bytes can take, its NUL included: every byte may become four. */
#define HVT_ESCAPED_SIZE(n) (4 * (n) + 1)

/* Copies src into dst[size] C-style escaped: a backslash as \\, newline and tab as \n and \t,
 * any other byte below 0x20, DEL and every byte from 0x80 (so UTF-8 too: the reader cannot
 * tell a name's bytes from their look-alikes) as \xNN in lower-case hex; the rest as it is.
 * What does not fit is cut before a whole escape, never inside one. Returns the length the
 * whole escaped text has, as snprintf() does: dst holds all of it when that is below size. */
size_t hvt_escape(char *dst, size_t size, const char *src);

/* The same into a new string (free() it); NULL when out of memory. */
char *hvt_escape_dup(const char *src);

/* The reverse of hvt_escape(), in place: \\, \n, \t and \xNN (either case) become their byte.
 * -EINVAL for what hvt_escape() never makes: a backslash before anything else or at the end,
 * \x without two hex digits, \x00 (a NUL would cut the text). s is then left part done. */
int hvt_unescape(char *s);
