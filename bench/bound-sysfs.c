/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: making a testbed tree bound over /sys (bench/launch -r) pass for sysfs. libudev
 * (systemd 252 on) makes a device only of a directory whose fstatfs() says SYSFS_MAGIC; the
 * bound tree is tmpfs. This LD_PRELOAD shim answers SYSFS_MAGIC for a tmpfs directory below
 * /sys and leaves every other answer alone: one readlink() per fstatfs() of a tmpfs file,
 * the only cost it adds.
 *
 * It also hands open() and open64() to openat(): the test suite's sysfs-kernel shim, built
 * into the same object (bench/meson.build), plays the kernel's part on writes (brackets
 * moved) in openat() and openat64() only, and a Python program (TuneD) opens files with
 * open(). glibc's open() is an openat system call already: no call is added. Bench code
 * only. */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

/* The f_type of a struct statfs or statfs64. */
static void as_sysfs(int fd, __fsword_t *f_type) {
        char link[64], path[16];
        ssize_t n;

        if (*f_type != TMPFS_MAGIC)
                return;
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, path, sizeof(path));
        if (n >= 4 && memcmp(path, "/sys", 4) == 0 && (n == 4 || path[4] == '/'))
                *f_type = SYSFS_MAGIC;
}

/* With _FILE_OFFSET_BITS=64 callers reach fstatfs64. */
#define DEFINE_FSTATFS(fn, type)                                                \
        int fn(int fd, type *buf) {                                             \
                static int (*real)(int, type *);                                \
                int r;                                                          \
                                                                                \
                if (!real)                                                      \
                        real = (int (*)(int, type *)) dlsym(RTLD_NEXT, #fn);    \
                r = real(fd, buf);                                              \
                if (r == 0)                                                     \
                        as_sysfs(fd, &buf->f_type);                             \
                return r;                                                       \
        }

DEFINE_FSTATFS(fstatfs, struct statfs)
DEFINE_FSTATFS(fstatfs64, struct statfs64)

/* openat() as the first object in the lookup order defines it: sysfs-kernel's, in this
 * object. */
#define DEFINE_OPEN(fn, at)                                                     \
        int fn(const char *path, int flags, ...) {                              \
                mode_t mode = 0;                                                \
                                                                                \
                if (flags & (O_CREAT | O_TMPFILE)) {                            \
                        va_list ap;                                             \
                        va_start(ap, flags);                                    \
                        mode = (mode_t) va_arg(ap, int);                        \
                        va_end(ap);                                             \
                }                                                               \
                return at(AT_FDCWD, path, flags, mode);                         \
        }

DEFINE_OPEN(open, openat)
DEFINE_OPEN(open64, openat64)
