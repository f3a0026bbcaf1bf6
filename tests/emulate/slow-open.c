/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: making one file slow to open, so that a test can act while a reload or the start-up
 * pass is under way.
 *
 * With HVTUNED_TEST_SLOW_OPEN=PATH in the environment, fopen() of PATH (libconfig reads the
 * configuration that way) sleeps half a second first, having created the file
 * $HVTUNED_TEST_SLOW_MARK if that is set (so that a test knows the daemon is in there: a raw
 * system call, which the write-log shim before this one does not see and umockdev does not
 * redirect); with HVTUNED_TEST_SLOW_ATTR=SUFFIX, so
 * does every openat() of a path ending in /SUFFIX ("sdc/queue/nr_requests": hvtuned opens
 * attributes relative to the device's directory). Without them, nothing changes. Test code
 * only, preloaded into the daemon under test. */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim.h"

#define DELAY_USEC (500 * 1000)

typedef FILE *(*fopen_fn)(const char *, const char *);

static void maybe_wait(const char *path) {
        const char *slow = getenv("HVTUNED_TEST_SLOW_OPEN"), *mark = getenv("HVTUNED_TEST_SLOW_MARK");
        long fd;

        if (!slow || strcmp(slow, path) != 0)
                return;
        if (mark) {
                fd = syscall(SYS_openat, AT_FDCWD, mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                if (fd >= 0)
                        (void) syscall(SYS_close, fd);
        }
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

/* dirfd/name ends in /suffix. */
static bool attr_matches(int dirfd, const char *name, const char *suffix) {
        char link[64], path[4096];
        size_t n, ls = strlen(suffix);
        ssize_t len;

        snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
        len = readlink(link, path, sizeof(path) - 1);
        if (len < 0)
                return false;
        path[len] = '\0';
        n = strlen(path);
        snprintf(path + n, sizeof(path) - n, "/%s", name);
        n = strlen(path);
        return n > ls && path[n - ls - 1] == '/' && strcmp(path + n - ls, suffix) == 0;
}

typedef int (*openat_fn)(int, const char *, int, ...);

static int slow_openat(const char *symbol, int dirfd, const char *name, int flags, mode_t mode) {
        const char *slow = getenv("HVTUNED_TEST_SLOW_ATTR");

        if (slow && dirfd >= 0 && attr_matches(dirfd, name, slow))
                usleep(DELAY_USEC);
        return ((openat_fn) dlsym(RTLD_NEXT, symbol))(dirfd, name, flags, mode);
}

int openat(int dirfd, const char *name, int flags, ...) {
        return slow_openat("openat", dirfd, name, flags, SHIM_OPEN_MODE(flags, flags));
}

int openat64(int dirfd, const char *name, int flags, ...) {
        return slow_openat("openat64", dirfd, name, flags, SHIM_OPEN_MODE(flags, flags));
}
