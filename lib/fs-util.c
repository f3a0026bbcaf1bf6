/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the file-system rules of fs-util.h.
 *
 * A walk takes one name at a time, each looked up relative to the directory already reached and
 * none followed by the kernel: nobody can swap a name between the check and the open. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/random.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "fs-util.h"
#include "macro.h"

/* hvt_write_atomic()'s temporaries: ".#hvtuned.NAME.0123456789abcdef", a name no editor or
 * other tool makes, so that a file named so is a leftover of hvtuned's whatever its type. It
 * starts with a dot and never ends in ".prom": node_exporter reads *.prom, and must not read
 * one half written. */
#define TMP_PREFIX ".#hvtuned."
#define TMP_RANDOM 16  /* hex digits */
#define TMP_TRIES 16
/* What a release before these names left: the metrics file's ".hvtuned.PID.HEX.tmp", and a
 * record's ".#NAME" (where emacs puts its lock link too). */
#define OLD_METRICS_PREFIX ".hvtuned."
#define OLD_METRICS_SUFFIX ".tmp"
#define OLD_RECORD_PREFIX ".#"

int hvt_check_owner(const struct stat *st, unsigned flags, const char *subject, char *why, size_t size) {
        bool foreign = st->st_uid != 0 && st->st_uid != geteuid();
        bool writable = !S_ISLNK(st->st_mode) && (st->st_mode & (S_IWGRP | S_IWOTH)) &&
                        !((flags & HVT_OWNER_STICKY_OK) && S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX));
        char owner[64] = "", mode[64] = "";

        if (!foreign && !writable)
                return 0;
        if (foreign)
                snprintf(owner, sizeof(owner), "owned by uid %lu, neither root's nor ours", (unsigned long) st->st_uid);
        if (writable)
                snprintf(mode, sizeof(mode), "writable by group or others (mode %04lo)",
                         (unsigned long) (st->st_mode & 07777));
        if (size > 0)
                snprintf(why, size, "%s%s%s%s%s", subject ? subject : "", subject ? " is " : "", owner,
                         foreign && writable ? ", and " : "", mode);
        return foreign ? -EPERM : -EACCES;
}

struct walk {
        int dir_fd;              /* the directory the next name is looked up in */
        struct stat dir_st;      /* its stat, for the check */
        unsigned flags;
        char at[PATH_MAX];       /* its path, for the messages */
        char *why;
        size_t size;
};

__attribute__((format(printf, 3, 4)))
static int refuse(struct walk *w, int error, const char *fmt, ...) {
        va_list ap;

        if (w->size == 0)
                return error;
        va_start(ap, fmt);
        vsnprintf(w->why, w->size, fmt, ap);
        va_end(ap);
        return error;
}

/* The path of name in the directory being walked, for a message. */
static const char *path_of(const struct walk *w, const char *name, char buf[static PATH_MAX]) {
        /* A path cut short still names enough for a message; the result is looked at so that
         * gcc's -Wformat-truncation (at -O3, the bench's release build) knows it is meant. */
        if (snprintf(buf, PATH_MAX, "%s%s%s", w->at, strcmp(w->at, "/") == 0 ? "" : "/", name) >= PATH_MAX)
                buf[PATH_MAX - 1] = '\0';
        return buf;
}

/* Whoever may write a directory may put another file under any name in it. Every refusal of
 * the walk is -EPERM, whatever the reason. */
static int check_dir(struct walk *w) {
        char subject[PATH_MAX + 64];

        snprintf(subject, sizeof(subject), "the directory %s on its path", w->at);
        return hvt_check_owner(&w->dir_st, w->flags, subject, w->why, w->size) < 0 ? -EPERM : 0;
}

/* Makes fd (with st) the directory the walk is in. */
static void enter(struct walk *w, int fd, const struct stat *st) {
        if (w->dir_fd >= 0)
                close(w->dir_fd);
        w->dir_fd = fd;
        w->dir_st = *st;
}

static int enter_root(struct walk *w) {
        struct stat st;
        int fd;

        fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0) {
                int r = negative_errno();

                close(fd);
                return r;
        }
        enter(w, fd, &st);
        strcpy(w->at, "/");
        return w->flags & HVT_WALK_CHECK_EVERY ? check_dir(w) : 0;
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

/* The rest of the walk becomes the link's target followed by what was left after the link. */
static int follow(struct walk *w, int link_fd, const char *name, const struct stat *st, const char *rest,
                  char **todo) {
        char target[PATH_MAX], subject[PATH_MAX + 64], buf[PATH_MAX];
        char *next;
        ssize_t n;

        /* A symlink cannot be changed, only replaced; in a sticky directory its owner may
         * replace it. */
        snprintf(subject, sizeof(subject), "the symlink %s on its path", path_of(w, name, buf));
        if (hvt_check_owner(st, w->flags, subject, w->why, w->size) < 0)
                return -EPERM;
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

/* The last name, a regular file: opened for reading where it was looked at. O_NONBLOCK in case
 * it is swapped for a FIFO after all; the inode must be the one that was looked at. */
static int open_file(struct walk *w, const char *name, const struct stat *seen) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        if (!S_ISREG(seen->st_mode))
                return refuse(w, -EPERM, "not a regular file");
        fd = openat(w->dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (st.st_dev != seen->st_dev || st.st_ino != seen->st_ino || !S_ISREG(st.st_mode))
                return refuse(w, -EPERM, "replaced while it was opened");
        if (hvt_check_owner(&st, 0, NULL, w->why, w->size) < 0)
                return -EPERM;
        return TAKE_FD(fd);
}

/* The last directory: checked now unless every one was, and handed on with the last name. */
static int hand_parent(struct walk *w, const char *name, char **ret_name) {
        int r;

        if (!(w->flags & HVT_WALK_CHECK_EVERY)) {
                r = check_dir(w);
                if (r < 0)
                        return r;
        }
        if (ret_name) {
                *ret_name = strdup(name);
                if (!*ret_name)
                        return -ENOMEM;
        }
        return TAKE_FD(w->dir_fd);
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
 * Returns 0 to go on, the fd the walk ends in (>= 0) as 1 with *ret_fd set, or -errno. */
static int step(struct walk *w, char **todo, const char **p, unsigned *hops, int *ret_fd, char **ret_name) {
        _cleanup_close_ int fd = -EBADF;
        char name[NAME_MAX + 1], buf[PATH_MAX];
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

        if (!(w->flags & HVT_WALK_FOLLOW) && (strcmp(name, ".") == 0 || strcmp(name, "..") == 0))
                return refuse(w, -EINVAL, "%s holds \"%s\": name the real directory", path_of(w, name, buf), name);
        if ((w->flags & HVT_WALK_PARENT) && last) {
                if (**p == '/' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
                        return -EISDIR;
                *ret_fd = hand_parent(w, name, ret_name);
                return *ret_fd < 0 ? *ret_fd : 1;
        }
        if (strcmp(name, ".") == 0)
                return last ? -EISDIR : 0;
        fd = openat(w->dir_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (S_ISLNK(st.st_mode)) {
                /* Whoever may write the directory it is in could swap it: refused, not checked. */
                if (!(w->flags & HVT_WALK_FOLLOW))
                        return refuse(w, -ELOOP, "%s on its path is a symbolic link: name the real directory",
                                      path_of(w, name, buf));
                if (++*hops > HVT_HOPS_MAX)
                        return -ELOOP;
                r = follow(w, fd, name, &st, *p, todo);
                *p = *todo;
                return r;
        }
        /* "file.conf/" is no file, as the kernel says. */
        if (!S_ISDIR(st.st_mode)) {
                if (!last || **p == '/')
                        return -ENOTDIR;
                if (!(w->flags & HVT_WALK_CHECK_EVERY)) {
                        r = check_dir(w);
                        if (r < 0)
                                return r;
                }
                *ret_fd = open_file(w, name, &st);
                return *ret_fd < 0 ? *ret_fd : 1;
        }
        if (last)
                return -EISDIR;
        enter(w, TAKE_FD(fd), &st);
        at_push(w, name);
        return w->flags & HVT_WALK_CHECK_EVERY ? check_dir(w) : 0;
}

int hvt_walk(const char *path, unsigned flags, char **ret_name, char *why, size_t size) {
        _cleanup_free_ char *todo = NULL;
        struct walk w = { .dir_fd = -EBADF, .flags = flags, .why = why, .size = size };
        unsigned hops = 0;
        const char *p;
        int fd = -EBADF, r;

        if (!(flags & HVT_WALK_PARENT) == !(flags & HVT_WALK_REGULAR))
                return -EINVAL;
        if (!*path)
                return -ENOENT;
        r = absolute(path, &todo);
        if (r < 0)
                return r;
        r = enter_root(&w);
        for (p = todo; r == 0; )
                r = step(&w, &todo, &p, &hops, &fd, ret_name);
        if (w.dir_fd >= 0)
                close(w.dir_fd);
        return r < 0 ? r : fd;
}

bool hvt_fs_volatile(int fd) {
        struct statfs sfs;

        return fstatfs(fd, &sfs) == 0 && (sfs.f_type == TMPFS_MAGIC || sfs.f_type == RAMFS_MAGIC);
}

int hvt_write_all(int fd, const char *data, size_t len) {
        for (size_t done = 0; done < len; ) {
                ssize_t n = write(fd, data + done, len - done);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                /* Nothing stored and no error: asking again would spin. */
                if (n == 0)
                        return -EIO;
                done += (size_t) n;
        }
        return 0;
}

/* Unique, not secret: O_EXCL tells a name already taken, and the next try draws another.
 * One getrandom() a process seeds a counter that splitmix64 spreads: a getrandom() for every
 * temporary was a system call a record (1.7 a disk at coldplug, docs/performance.md), for
 * names that only need to differ. A forked child draws its parent's next names: O_EXCL
 * settles that too. */
static uint64_t tmp_random(void) {
        static bool seeded;
        static uint64_t state;
        uint64_t z;

        if (!seeded) {
                if (getrandom(&state, sizeof(state), GRND_NONBLOCK) != (ssize_t) sizeof(state))
                        /* The kernel's pool not ready yet (early boot), where getrandom() would block. */
                        state = hvt_now_usec(CLOCK_MONOTONIC) ^ ((uint64_t) hvt_getpid() << 40);
                seeded = true;
        }
        z = (state += UINT64_C(0x9e3779b97f4a7c15));
        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

/* A new temporary for name in dir_fd, its name in tmp; the fd, or -errno. */
static int make_temporary(int dir_fd, const char *name, mode_t mode, char tmp[static NAME_MAX + 1]) {
        /* A long name is cut: the temporary is told by its prefix and suffix alone. */
        int keep = NAME_MAX - (int) strlen(TMP_PREFIX) - 1 - TMP_RANDOM;

        for (unsigned attempt = 1;; attempt++) {
                int fd;

                snprintf(tmp, NAME_MAX + 1, TMP_PREFIX "%.*s.%0*" PRIx64, keep, name, TMP_RANDOM, tmp_random());
                fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
                if (fd >= 0)
                        return fd;
                if (errno != EEXIST || attempt == TMP_TRIES)
                        return negative_errno();
        }
}

/* Writes the temporary fd by fill(), then makes it name: one way for every file hvtuned writes. */
static int write_atomic(int dir_fd, const char *name, int (*fill)(int fd, const void *userdata),
                        const void *userdata, unsigned flags, struct stat *ret_st) {
        _cleanup_close_ int fd = -EBADF;
        char tmp[NAME_MAX + 1];
        int r;

        /* A file hvtuned creates, never one it finds: a FIFO planted under a fixed name blocked
         * the open for writing, a hard link had its other name's file emptied and written. */
        /* Private from its creation: never readable by others for a moment, whatever the umask. */
        fd = make_temporary(dir_fd, name, flags & HVT_WRITE_PRIVATE ? 0600 : 0644, tmp);
        if (fd < 0)
                return fd;
        r = fill(fd, userdata);
        if (r == 0 && (flags & HVT_WRITE_READABLE) && fchmod(fd, 0644) < 0)
                r = negative_errno();
        /* After a crash, the old text or the new, never an empty file. */
        if (r == 0 && !(flags & HVT_WRITE_VOLATILE) && fsync(fd) < 0)
                r = negative_errno();
        if (r == 0 && ret_st && fstat(fd, ret_st) < 0)
                r = negative_errno();
        if (r == 0 && renameat(dir_fd, tmp, dir_fd, name) < 0)
                r = negative_errno();
        if (r < 0)
                (void) unlinkat(dir_fd, tmp, 0);
        return r;
}

struct buffer {
        const char *data;
        size_t len;
};

static int fill_buffer(int fd, const void *userdata) {
        const struct buffer *b = userdata;

        return hvt_write_all(fd, b->data, b->len);
}

int hvt_write_atomic(int dir_fd, const char *name, const char *data, size_t len, unsigned flags,
                     struct stat *ret_st) {
        return write_atomic(dir_fd, name, fill_buffer, &(struct buffer) { data, len }, flags, ret_st);
}

struct stream {
        int (*fill)(FILE *f, void *userdata);
        void *userdata;
};

static int fill_stream(int fd, const void *userdata) {
        const struct stream *s = userdata;
        _cleanup_close_ int copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        FILE *f;
        int r;

        if (copy < 0)
                return negative_errno();
        f = fdopen(copy, "w");
        if (!f)
                return negative_errno();
        copy = -EBADF;  /* the stream's now */
        r = s->fill(f, s->userdata);
        if (fflush(f) != 0 && r == 0)
                r = errno > 0 ? -errno : -EIO;
        if (ferror(f) && r == 0)
                r = -EIO;
        if (fclose(f) != 0 && r == 0)
                r = errno > 0 ? -errno : -EIO;
        return r;
}

int hvt_write_atomic_stream(int dir_fd, const char *name, int (*fill)(FILE *f, void *userdata), void *userdata,
                            unsigned flags, struct stat *ret_st) {
        return write_atomic(dir_fd, name, fill_stream, &(struct stream) { fill, userdata }, flags, ret_st);
}

static bool all_of(const char *s, size_t n, const char *set) {
        return n > 0 && strspn(s, set) >= n;
}

static bool is_new_temporary(const char *name) {
        size_t n = strlen(name), prefix = strlen(TMP_PREFIX);

        return n >= prefix + 2 + TMP_RANDOM && strncmp(name, TMP_PREFIX, prefix) == 0 &&
               name[n - TMP_RANDOM - 1] == '.' && all_of(name + n - TMP_RANDOM, TMP_RANDOM, "0123456789abcdef");
}

/* ".hvtuned.PID.HEX.tmp" */
static bool is_old_metrics_temporary(const char *name) {
        const char *p;
        size_t n;

        if (strncmp(name, OLD_METRICS_PREFIX, strlen(OLD_METRICS_PREFIX)) != 0)
                return false;
        p = name + strlen(OLD_METRICS_PREFIX);
        n = strspn(p, "0123456789");
        if (n == 0 || p[n] != '.')
                return false;
        p += n + 1;
        n = strspn(p, "0123456789abcdef");
        return n > 0 && strcmp(p + n, OLD_METRICS_SUFFIX) == 0;
}

/* ".#" and a name, a regular file: emacs puts its lock, a symbolic link, at ".#name" too. */
static bool is_old_record_temporary(int dir_fd, const char *name) {
        struct stat st;

        return strncmp(name, OLD_RECORD_PREFIX, strlen(OLD_RECORD_PREFIX)) == 0 && name[strlen(OLD_RECORD_PREFIX)] &&
               fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

bool hvt_is_temporary(int dir_fd, const char *name, unsigned flags) {
        return is_new_temporary(name) || is_old_metrics_temporary(name) ||
               ((flags & HVT_TEMPORARY_OLD_RECORD) && is_old_record_temporary(dir_fd, name));
}

int hvt_prune_temporaries(int dir_fd, unsigned flags, unsigned *ret_kept) {
        _cleanup_(closedirp) DIR *dir = NULL;
        unsigned removed = 0, kept = 0;
        int r;

        r = hvt_opendirat(dir_fd, ".", &dir);
        if (r < 0)
                return r;
        for (struct dirent *de; (de = readdir(dir)); ) {
                if (!hvt_is_temporary(dir_fd, de->d_name, flags))
                        continue;
                if (unlinkat(dir_fd, de->d_name, 0) >= 0)
                        removed++;
                else if (errno == EISDIR)
                        kept++;
                else if (errno != ENOENT && r == 0)
                        r = negative_errno();
        }
        if (ret_kept)
                *ret_kept = kept;
        return r < 0 ? r : (int) removed;
}

int hvt_read_small(int dir_fd, const char *name, char *buf, size_t size) {
        /* Non-blocking: a FIFO under the name would hold the open until a writer came (before
         * READY=1, or in an event handler that SIGTERM then waits on). */
        _cleanup_close_ int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        struct stat st;
        ssize_t n;

        if (size < 2)
                return -EINVAL;
        if (fd < 0)
                return errno == ELOOP ? -EBADMSG : negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        /* A FIFO, socket or device holds no text of hvtuned's: damaged, and the next write
         * replaces it. A directory, which no rename can replace, cannot be read. */
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (!S_ISREG(st.st_mode))
                return -EBADMSG;
        do
                n = read(fd, buf, size - 1);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return negative_errno();
        /* Too long, or with a NUL byte, which no text hvtuned writes holds: the C string before
         * it could pass for the whole ("nr_requests=12" of "nr_requests=12\08"). */
        if ((size_t) n == size - 1 || memchr(buf, '\0', (size_t) n))
                return -EBADMSG;
        buf[n] = '\0';
        return 0;
}

int hvt_opendirat(int dir_fd, const char *name, DIR **ret) {
        _cleanup_close_ int fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *dir;

        if (fd < 0)
                return negative_errno();
        dir = fdopendir(fd);
        if (!dir)
                return negative_errno();
        (void) TAKE_FD(fd);  /* dir's now */
        *ret = dir;
        return 0;
}
