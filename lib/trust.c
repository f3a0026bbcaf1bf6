/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: opening a file that may steer a daemon which writes kernel tunables as root, only when
 * nobody but root (or the running user) could have put it there.
 *
 * The path is walked one name at a time from the root, every lookup relative to the directory
 * already checked and none following a symlink by itself, so the file opened is the one the
 * checks were made on: nobody can swap a name between the check and the open. */
#include <errno.h>
#include <fcntl.h>
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

/* The kernel's own limit of symlinks in one lookup. */
#define HOPS_MAX 40

struct walk {
        int dir_fd;              /* the directory the next name is looked up in, checked */
        char at[PATH_MAX];       /* its path, for the messages */
        char *why;
        size_t size;
};

static bool owner_trusted(uid_t uid) {
        return uid == 0 || uid == geteuid();
}

__attribute__((format(printf, 2, 3)))
static int refuse(struct walk *w, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(w->why, w->size, fmt, ap);
        va_end(ap);
        return -EPERM;
}

/* Whoever may write a directory may put another file under any name in it; a sticky one
 * (/tmp) lets them replace only what they own, and every step taken from it is checked. */
static int check_dir(struct walk *w, const struct stat *st) {
        if (!owner_trusted(st->st_uid))
                return refuse(w, "the directory %s on its path is owned by uid %lu, not root", w->at,
                              (unsigned long) st->st_uid);
        if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX))
                return refuse(w, "the directory %s on its path is writable by group or others (mode %04lo)",
                              w->at, (unsigned long) (st->st_mode & 07777));
        return 0;
}

static void at_push(struct walk *w, const char *name) {
        size_t n = strlen(w->at);

        if (strcmp(name, "..") == 0) {
                char *slash = strrchr(w->at, '/');

                if (slash)
                        slash[slash == w->at] = '\0';
                return;
        }
        snprintf(w->at + n, sizeof(w->at) - n, "%s%s", n > 1 ? "/" : "", name);
}

static int enter_root(struct walk *w) {
        struct stat st;
        int fd;

        fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (w->dir_fd >= 0)
                close(w->dir_fd);
        w->dir_fd = fd;
        strcpy(w->at, "/");
        if (fstat(fd, &st) < 0)
                return negative_errno();
        return check_dir(w, &st);
}

/* The path of name in the directory being walked, for a message. */
static const char *path_of(const struct walk *w, const char *name, char buf[static PATH_MAX]) {
        snprintf(buf, PATH_MAX, "%s%s%s", w->at, strcmp(w->at, "/") == 0 ? "" : "/", name);
        return buf;
}

/* The rest of the walk becomes the link's target followed by what was left after the link. */
static int follow(struct walk *w, int link_fd, const char *name, const struct stat *st,
                  const char *rest, char **todo) {
        char target[PATH_MAX], buf[PATH_MAX];
        char *next;
        ssize_t n;

        /* A symlink cannot be changed, only replaced; in a sticky directory its owner may
         * replace it. */
        if (!owner_trusted(st->st_uid))
                return refuse(w, "the symlink %s on its path is owned by uid %lu, not root",
                              path_of(w, name, buf), (unsigned long) st->st_uid);
        n = readlinkat(link_fd, "", target, sizeof(target));
        if (n < 0)
                return negative_errno();
        if ((size_t) n >= sizeof(target))
                return -ENAMETOOLONG;
        target[n] = '\0';
        /* No slash after the last name: one would ask for a directory there. */
        if (asprintf(&next, "%s%s%s", target, *rest ? "/" : "", rest) < 0)
                return -ENOMEM;
        free(*todo);
        *todo = next;
        return target[0] == '/' ? enter_root(w) : 0;
}

/* The last name, a regular file: opened for reading where it was looked at. O_NONBLOCK in
 * case it is swapped for a FIFO after all; the inode must be the one that was looked at. */
static int open_file(struct walk *w, const char *name, const struct stat *seen) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r;

        if (!S_ISREG(seen->st_mode))
                return refuse(w, "not a regular file");
        fd = openat(w->dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (st.st_dev != seen->st_dev || st.st_ino != seen->st_ino || !S_ISREG(st.st_mode))
                return refuse(w, "replaced while it was opened");
        if (!owner_trusted(st.st_uid))
                return refuse(w, "owned by uid %lu, not root", (unsigned long) st.st_uid);
        if (st.st_mode & (S_IWGRP | S_IWOTH))
                return refuse(w, "writable by group or others (mode %04lo)",
                              (unsigned long) (st.st_mode & 07777));
        r = fd;
        fd = -EBADF;
        return r;
}

static int absolute(const char *path, char **ret) {
        char cwd[PATH_MAX];

        if (path[0] == '/')
                *ret = strdup(path);
        else if (!getcwd(cwd, sizeof(cwd)))
                return negative_errno();
        else if (asprintf(ret, "%s/%s", cwd, path) < 0)
                *ret = NULL;
        return *ret ? 0 : -ENOMEM;
}

/* One step: the next name of *todo from *p, looked up in w->dir_fd without following it.
 * Returns 0 to go on, 1 with the file open in *ret_fd, or -errno. */
static int step(struct walk *w, char **todo, const char **p, unsigned *hops, int *ret_fd) {
        _cleanup_close_ int fd = -EBADF;
        char name[NAME_MAX + 1];
        struct stat st;
        size_t len;
        bool last;
        int r;

        *p += strspn(*p, "/");
        len = strcspn(*p, "/");
        /* The path ends in a directory. */
        if (len == 0)
                return -EISDIR;
        if (len > NAME_MAX)
                return -ENAMETOOLONG;
        memcpy(name, *p, len);
        name[len] = '\0';
        *p += len;
        last = (*p)[strspn(*p, "/")] == '\0';

        if (strcmp(name, ".") == 0)
                return last ? -EISDIR : 0;
        fd = openat(w->dir_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (S_ISLNK(st.st_mode)) {
                if (++*hops > HOPS_MAX)
                        return -ELOOP;
                r = follow(w, fd, name, &st, *p, todo);
                *p = *todo;
                return r;
        }
        /* "file.conf/" is no file, as the kernel says. */
        if (!S_ISDIR(st.st_mode)) {
                if (!last || **p == '/')
                        return -ENOTDIR;
                *ret_fd = open_file(w, name, &st);
                return *ret_fd < 0 ? *ret_fd : 1;
        }
        if (last)
                return -EISDIR;
        at_push(w, name);
        r = check_dir(w, &st);
        if (r < 0)
                return r;
        close(w->dir_fd);
        w->dir_fd = fd;
        fd = -EBADF;
        return 0;
}

int hvt_open_trusted(const char *path, char *why, size_t size) {
        _cleanup_free_ char *todo = NULL;
        struct walk w = { .dir_fd = -EBADF, .why = why, .size = size };
        unsigned hops = 0;
        const char *p;
        int fd = -EBADF, r;

        /* A refusal says why; an error that is EPERM of itself (an LSM, a seccomp filter)
         * has no why of hvtuned's to print. */
        if (size > 0)
                snprintf(why, size, "not allowed to look at it");
        if (!*path)
                return -ENOENT;
        r = absolute(path, &todo);
        if (r < 0)
                return r;
        r = enter_root(&w);
        for (p = todo; r == 0; )
                r = step(&w, &todo, &p, &hops, &fd);
        if (w.dir_fd >= 0)
                close(w.dir_fd);
        return r < 0 ? r : fd;
}
