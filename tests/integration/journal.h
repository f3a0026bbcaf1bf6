/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: a journald of the test's own: hvtuned's entries as journald would store them, read
 * from the native protocol's socket, bound at journald's path in a private mount namespace
 * (root only) so that the host's journal never sees them. */
#pragma once

#include <glib.h>
#include <stddef.h>

#define JOURNAL_DIR "/run/systemd/journal"
#define JOURNAL_SOCKET JOURNAL_DIR "/socket"

/* The namespace, the socket and its reader; every hvtuned started from then on sends its
 * entries there (hvtuned_log_to_journal()). */
void journal_start(void);
void journal_stop(void);

/* How many entries were sent so far. */
size_t journal_count(void);

/* The entries since entry from (all of them with name NULL) whose field name has value, once
 * every entry sent so far is read: a GPtrArray (g_ptr_array_unref()) of entries (GHashTable:
 * field -> first value) that stay until journal_stop(). */
GPtrArray *journal_find(size_t from, const char *name, const char *value);

/* An entry's field, "(none)" when it has none. */
const char *journal_field(GHashTable *e, const char *name);
