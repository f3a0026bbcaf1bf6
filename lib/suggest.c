/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the nearest known word (see suggest.h). */
#include <string.h>

#include "suggest.h"

#define WORD_MAX 64

static size_t min3(size_t a, size_t b, size_t c) {
        size_t m = a < b ? a : b;

        return m < c ? m : c;
}

/* The optimal string alignment distance: a swap of two neighbours ("shceduler") is one edit,
 * as a person's typing makes it. Words longer than WORD_MAX are never near. */
static size_t distance(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b), d[WORD_MAX + 1][WORD_MAX + 1];

        if (la > WORD_MAX || lb > WORD_MAX)
                return (size_t) -1;
        for (size_t i = 0; i <= la; i++)
                d[i][0] = i;
        for (size_t j = 0; j <= lb; j++)
                d[0][j] = j;
        for (size_t i = 1; i <= la; i++)
                for (size_t j = 1; j <= lb; j++) {
                        size_t cost = a[i - 1] != b[j - 1];

                        d[i][j] = min3(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
                        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < d[i][j])
                                d[i][j] = d[i - 2][j - 2] + 1;
                }
        return d[la][lb];
}

const char *hvt_suggest(const char *word, const char *const *known, size_t n) {
        const char *best = NULL;
        size_t best_d = 3, len = strlen(word);

        for (size_t i = 0; i < n; i++) {
                size_t d = distance(word, known[i]);

                if (d < best_d && d < len) {
                        best = known[i];
                        best_d = d;
                }
        }
        return best;
}
