/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: making one file slow to open, so that a test can act while a reload or the start-up
 * pass is under way.
 *
 * With HVTUNED_TEST_SLOW_OPEN=PATH in the environment, opening PATH for reading (hvtuned opens
 * its configuration with openat() relative to the directory it checked, see lib/trust.c)
 * sleeps half a second first, having created the file
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

/* The path of dirfd/name, false when dirfd has none. */
static bool full_path(int dirfd, const char *name, char path[static 4096]) {
        char link[64];
        size_t n;
        ssize_t len;

        snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
        len = readlink(link, path, 4095);
        if (len < 0)
                return false;
        path[len] = '\0';
        n = strlen(path);
        snprintf(path + n, 4096 - n, "%s%s", n > 1 ? "/" : "", name);
        return true;
}

/* dirfd/name ends in /suffix. */
static bool attr_matches(const char *path, const char *suffix) {
        size_t n = strlen(path), ls = strlen(suffix);

        return n > ls && path[n - ls - 1] == '/' && strcmp(path + n - ls, suffix) == 0;
}

typedef int (*openat_fn)(int, const char *, int, ...);

static int slow_openat(const char *symbol, int dirfd, const char *name, int flags, mode_t mode) {
        const char *slow = getenv("HVTUNED_TEST_SLOW_ATTR");
        char path[4096];

        /* O_PATH: the walk looking at a name, not opening it. */
        if (dirfd >= 0 && !(flags & O_PATH) && full_path(dirfd, name, path)) {
                maybe_wait(path);
                if (slow && attr_matches(path, slow))
                        usleep(DELAY_USEC);
        }
        return ((openat_fn) dlsym(RTLD_NEXT, symbol))(dirfd, name, flags, mode);
}

int openat(int dirfd, const char *name, int flags, ...) {
        return slow_openat("openat", dirfd, name, flags, SHIM_OPEN_MODE(flags, flags));
}

int openat64(int dirfd, const char *name, int flags, ...) {
        return slow_openat("openat64", dirfd, name, flags, SHIM_OPEN_MODE(flags, flags));
}
