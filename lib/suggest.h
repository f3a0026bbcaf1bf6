/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the known word a misspelt one most likely meant, for "unknown key" messages. */
#pragma once

#include <stddef.h>

/* The word of known[0..n) nearest to word by edit distance (insertions, deletions,
 * substitutions and swaps of two neighbours), when it is at most 2 edits away and fewer than
 * word's own length; NULL when none is. */
const char *hvt_suggest(const char *word, const char *const *known, size_t n);
