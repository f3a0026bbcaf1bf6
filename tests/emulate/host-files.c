/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the host files umockdev does not fake, for a daemon under test: what the kernel
 * command line, the mount table and the swap areas say, and who holds a disk exclusively.
 *
 * With HVTUNED_TEST_HOST=DIR, opening /proc/cmdline, /proc/self/mountinfo or /proc/swaps
 * opens DIR/cmdline, DIR/mountinfo or DIR/swaps when the test wrote one, and an O_EXCL open
 * of /dev/NAME fails with EBUSY, as the kernel's bd_prepare_to_claim() answers, when NAME is a
 * line of DIR/busy (a disk someone else has claimed: mounted in another namespace, a mkfs
 * under way); the files the boot advice looks at are DIR's (boot_files below) or absent, and so are
 * the places a contest's suspects are looked for (neighbour_files).
 * Without it, or for any other path, nothing changes. Covers open(2) and
 * openat(2) and their 64-bit names, which is how hvtuned opens them; not fopen(). Test code
 * only, preloaded into the daemon under test before umockdev's preload. */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);

static const char *const replaced[][2] = {
        { "/proc/cmdline", "cmdline" },
        { "/proc/self/mountinfo", "mountinfo" },
        { "/proc/swaps", "swaps" },
};

/* What decides the boot advice (lib/bootadvice.c): under HVTUNED_TEST_HOST the machine has
 * exactly the ones the test wrote, the others are absent, whatever this machine has. */
static const char *const boot_files[][2] = {
        { "/proc/sys/kernel/osrelease", "osrelease" },
        { "/etc/kernel/cmdline", "kernel-cmdline" },
        { "/usr/sbin/grubby", "grubby" },
        { "/etc/default/grub", "default-grub" },
        { "/usr/sbin/update-grub", "update-grub" },
        { "/usr/sbin/update-initramfs", "update-initramfs" },
        { "/usr/bin/dracut", "dracut" },
};

/* Where the neighbours of a contest are looked for (lib/neighbours.c): under
 * HVTUNED_TEST_HOST the rules directories, tuned's run and configuration directories and
 * /proc are DIR's when the test made them, absent otherwise, whatever this machine has. */
static const char *const neighbour_files[][2] = {
        { "/etc/udev/rules.d", "rules-etc" },
        { "/run/udev/rules.d", "rules-run" },
        { "/usr/lib/udev/rules.d", "rules-usr-lib" },
        { "/lib/udev/rules.d", "rules-lib" },
        { "/run/tuned", "run-tuned" },
        { "/etc/tuned", "etc-tuned" },
        { "/proc", "proc" },
};

static bool busy(const char *dir, const char *name) {
        char path[4096], line[256];
        bool found = false;
        FILE *f;

        snprintf(path, sizeof(path), "%s/busy", dir);
        f = fopen(path, "re");
        if (!f)
                return false;
        while (!found && fgets(line, sizeof(line), f)) {
                line[strcspn(line, "\n")] = '\0';
                found = strcmp(line, name) == 0;
        }
        fclose(f);
        return found;
}

/* The path to open instead, or NULL; -1 with errno when the open must fail. */
static int redirect(const char *path, int flags, char out[static 4096]) {
        const char *dir = getenv("HVTUNED_TEST_HOST");

        if (!dir)
                return 0;
        for (size_t i = 0; i < sizeof(replaced) / sizeof(replaced[0]); i++)
                if (strcmp(path, replaced[i][0]) == 0) {
                        snprintf(out, 4096, "%s/%s", dir, replaced[i][1]);
                        return access(out, F_OK) == 0;
                }
        for (size_t i = 0; i < sizeof(boot_files) / sizeof(boot_files[0]); i++)
                if (strcmp(path, boot_files[i][0]) == 0) {
                        snprintf(out, 4096, "%s/%s", dir, boot_files[i][1]);
                        if (access(out, F_OK) == 0)
                                return 1;
                        errno = ENOENT;
                        return -1;
                }
        for (size_t i = 0; i < sizeof(neighbour_files) / sizeof(neighbour_files[0]); i++)
                if (strcmp(path, neighbour_files[i][0]) == 0) {
                        snprintf(out, 4096, "%s/%s", dir, neighbour_files[i][1]);
                        if (access(out, F_OK) == 0)
                                return 1;
                        errno = ENOENT;
                        return -1;
                }
        if ((flags & O_EXCL) && !(flags & O_CREAT) && strncmp(path, "/dev/", 5) == 0 && busy(dir, path + 5)) {
                errno = EBUSY;
                return -1;
        }
        return 0;
}


#define DEFINE_OPEN(fn)                                                         \
        int fn(const char *path, int flags, ...) {                              \
                static open_fn real;                                            \
                char other[4096];                                               \
                mode_t mode;                                                    \
                int r;                                                          \
                                                                                \
                if (!real)                                                      \
                        real = (open_fn) dlsym(RTLD_NEXT, #fn);                 \
                mode = SHIM_OPEN_MODE(flags, flags);                            \
                r = redirect(path, flags, other);                               \
                if (r < 0)                                                      \
                        return -1;                                              \
                return real(r > 0 ? other : path, flags, mode);                 \
        }

#define DEFINE_OPENAT(fn)                                                       \
        int fn(int dirfd, const char *path, int flags, ...) {                   \
                static openat_fn real;                                          \
                char other[4096];                                               \
                mode_t mode;                                                    \
                int r;                                                          \
                                                                                \
                if (!real)                                                      \
                        real = (openat_fn) dlsym(RTLD_NEXT, #fn);               \
                mode = SHIM_OPEN_MODE(flags, flags);                            \
                r = path[0] == '/' ? redirect(path, flags, other) : 0;          \
                if (r < 0)                                                      \
                        return -1;                                              \
                return real(dirfd, r > 0 ? other : path, flags, mode);          \
        }

DEFINE_OPEN(open)
DEFINE_OPEN(open64)
DEFINE_OPENAT(openat)
DEFINE_OPENAT(openat64)
