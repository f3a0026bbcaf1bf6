/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: making one file slow to open, so that a test can act while a reload is under way.
 *
 * With HVTUNED_TEST_SLOW_OPEN=PATH in the environment, fopen() of PATH (libconfig reads the
 * configuration that way) sleeps half a second first. Without it, nothing changes. Test code
 * only, preloaded into the daemon under test. */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DELAY_USEC (500 * 1000)

typedef FILE *(*fopen_fn)(const char *, const char *);

static void maybe_wait(const char *path) {
        const char *slow = getenv("HVTUNED_TEST_SLOW_OPEN");

        if (slow && strcmp(slow, path) == 0)
                usleep(DELAY_USEC);
}

FILE *fopen(const char *path, const char *mode) {
        static fopen_fn real;

        if (!real)
                real = (fopen_fn) dlsym(RTLD_NEXT, "fopen");
        maybe_wait(path);
        return real(path, mode);
}

FILE *fopen64(const char *path, const char *mode) {
        static fopen_fn real;

        if (!real)
                real = (fopen_fn) dlsym(RTLD_NEXT, "fopen64");
        maybe_wait(path);
        return real(path, mode);
}
