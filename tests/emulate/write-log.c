/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: recording every place the process opens for writing, and what it writes there.
 *
 * For the test that proves hvtuned writes only allowlisted attributes and its own records:
 * every open(2) family call, fopen(3), creat(2), rename and unlink with a path is appended as
 * one line to $HVTUNED_TEST_WRITE_LOG ("open <path>", "rename <from> <to>", "unlink <path>"),
 * the path made absolute through the directory fd, and every write(2) on a recorded fd as
 * "write <path> <bytes, escaped>". Loaded first in LD_PRELOAD, so it sees the calls hvtuned
 * makes, and only those: a call made while one is being handled (the shims behind it opening
 * testbed files of their own) is not hvtuned's. Test code only. */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim.h"

#define FDS_MAX 1024

static __thread int depth;
/* fd -> the absolute path it was opened for writing with; empty when not recorded. */
static char *written[FDS_MAX];

#define REAL(name, type) ((type) dlsym(RTLD_NEXT, name))

static void append(const char *line, size_t len) {
        const char *log = getenv("HVTUNED_TEST_WRITE_LOG");
        int fd;

        if (!log)
                return;
        fd = REAL("open", int (*)(const char *, int, ...))(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0)
                return;
        /* One write(2) a line, O_APPEND: whole lines even with several processes. */
        (void) REAL("write", ssize_t (*)(int, const void *, size_t))(fd, line, len);
        REAL("close", int (*)(int))(fd);
}

__attribute__((format(printf, 1, 2)))
static void record(const char *fmt, ...) {
        char line[8192];
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(line, sizeof(line), fmt, ap);
        va_end(ap);
        if (n > 0)
                append(line, (size_t) n < sizeof(line) ? (size_t) n : sizeof(line) - 1);
}

static void absolute(int dirfd, const char *name, char out[static 4096]) {
        char link[64], dir[4096];
        ssize_t n;

        if (name[0] == '/') {
                snprintf(out, 4096, "%s", name);
                return;
        }
        if (dirfd == AT_FDCWD)
                snprintf(link, sizeof(link), "/proc/self/cwd");
        else
                snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
        n = readlink(link, dir, sizeof(dir) - 1);
        dir[n < 0 ? 0 : n] = '\0';
        snprintf(out, 4096, "%.2000s/%.2000s", n < 0 ? "?" : dir, name);
}

static bool for_writing(int flags) {
        return (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC));
}

static void opened(int fd, int dirfd, const char *name, int flags) {
        char path[4096];

        if (fd < 0 || !for_writing(flags))
                return;
        absolute(dirfd, name, path);
        record("open %s\n", path);
        if (fd < FDS_MAX) {
                free(written[fd]);
                written[fd] = strdup(path);
        }
}


#define OPENAT(name)                                                                    \
        int name(int dirfd, const char *path, int flags, ...) {                         \
                mode_t mode;                                                            \
                int fd;                                                                 \
                                                                                        \
                mode = SHIM_OPEN_MODE(flags, flags);                                    \
                depth++;                                                                \
                fd = REAL(#name, int (*)(int, const char *, int, ...))(dirfd, path, flags, mode); \
                if (depth == 1)                                                         \
                        opened(fd, dirfd, path, flags);                                 \
                depth--;                                                                \
                return fd;                                                              \
        }

#define OPEN(name)                                                                      \
        int name(const char *path, int flags, ...) {                                    \
                mode_t mode;                                                            \
                int fd;                                                                 \
                                                                                        \
                mode = SHIM_OPEN_MODE(flags, flags);                                    \
                depth++;                                                                \
                fd = REAL(#name, int (*)(const char *, int, ...))(path, flags, mode);   \
                if (depth == 1)                                                         \
                        opened(fd, AT_FDCWD, path, flags);                              \
                depth--;                                                                \
                return fd;                                                              \
        }

OPENAT(openat)
OPENAT(openat64)
OPEN(open)
OPEN(open64)

int creat(const char *path, mode_t mode) {
        return open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
}

FILE *fopen(const char *path, const char *how) {
        FILE *f;

        depth++;
        f = REAL("fopen", FILE *(*)(const char *, const char *))(path, how);
        if (depth == 1 && f && strpbrk(how, "wa+"))
                opened(fileno(f), AT_FDCWD, path, O_WRONLY);
        depth--;
        return f;
}

ssize_t write(int fd, const void *buf, size_t len) {
        ssize_t n;

        depth++;
        n = REAL("write", ssize_t (*)(int, const void *, size_t))(fd, buf, len);
        if (depth == 1 && fd >= 0 && fd < FDS_MAX && written[fd]) {
                char esc[1024], *e = esc;
                const unsigned char *p = buf;

                for (size_t i = 0; i < len && e < esc + sizeof(esc) - 5; i++)
                        e += p[i] > ' ' && p[i] < 0x7f && p[i] != '\\' ? sprintf(e, "%c", p[i])
                                                                       : sprintf(e, "\\x%02x", p[i]);
                *e = '\0';
                record("write %s %s\n", written[fd], esc);
        }
        depth--;
        return n;
}

int close(int fd) {
        if (depth == 0 && fd >= 0 && fd < FDS_MAX) {
                free(written[fd]);
                written[fd] = NULL;
        }
        return REAL("close", int (*)(int))(fd);
}

int renameat(int olddirfd, const char *from, int newdirfd, const char *to) {
        char a[4096], b[4096];
        int r;

        depth++;
        r = REAL("renameat", int (*)(int, const char *, int, const char *))(olddirfd, from, newdirfd, to);
        if (depth == 1 && r == 0) {
                absolute(olddirfd, from, a);
                absolute(newdirfd, to, b);
                record("rename %s %s\n", a, b);
        }
        depth--;
        return r;
}

int rename(const char *from, const char *to) {
        return renameat(AT_FDCWD, from, AT_FDCWD, to);
}

int unlinkat(int dirfd, const char *name, int flags) {
        char path[4096];
        int r;

        absolute(dirfd, name, path);
        depth++;
        r = REAL("unlinkat", int (*)(int, const char *, int))(dirfd, name, flags);
        if (depth == 1 && r == 0)
                record("unlink %s\n", path);
        depth--;
        return r;
}

int unlink(const char *name) {
        return unlinkat(AT_FDCWD, name, 0);
}
