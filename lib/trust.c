/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the ownership and mode checks of a configuration file and of its directory.
 *
 * libconfig opens the files again by name after this check. That is safe because the
 * directories are checked too: only root (or the sticky bit's owner rule) can put another
 * file under the name in between. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"
#include "trust.h"

static bool owner_trusted(uid_t uid) {
        return uid == 0 || uid == geteuid();
}

__attribute__((format(printf, 3, 4)))
static int refuse(char *why, size_t size, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(why, size, fmt, ap);
        va_end(ap);
        return -EPERM;
}

static int dir_trusted(const char *path, char *why, size_t size) {
        _cleanup_free_ char *copy = strdup(path);
        const char *dir;
        struct stat st;

        if (!copy)
                return -ENOMEM;
        dir = dirname(copy);
        if (stat(dir, &st) < 0)
                return negative_errno();
        if (!owner_trusted(st.st_uid))
                return refuse(why, size, "its directory %s is owned by uid %lu, not root", dir,
                              (unsigned long) st.st_uid);
        if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
                return refuse(why, size, "its directory %s is writable by group or others (mode %04lo)",
                              dir, (unsigned long) (st.st_mode & 07777));
        return 0;
}

int hvt_file_trusted(int fd, const char *path, char *why, size_t size) {
        char resolved[PATH_MAX];
        struct stat st;
        int r;

        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return refuse(why, size, "not a regular file");
        if (!owner_trusted(st.st_uid))
                return refuse(why, size, "owned by uid %lu, not root", (unsigned long) st.st_uid);
        if (st.st_mode & (S_IWGRP | S_IWOTH))
                return refuse(why, size, "writable by group or others (mode %04lo)",
                              (unsigned long) (st.st_mode & 07777));

        /* The directory the name is in, and the one a symlink leads to: either could swap it. */
        r = dir_trusted(path, why, size);
        if (r < 0)
                return r;
        if (realpath(path, resolved) && strcmp(resolved, path) != 0)
                return dir_trusted(resolved, why, size);
        return 0;
}
