/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: making chosen sysfs attributes fail for the daemon under test, the ways a kernel, a
 * read-only mount or a disk that goes away make them fail.
 *
 * HVTUNED_TEST_FAULTS is a comma-separated list of SUFFIX=FAULT. SUFFIX matches the end of
 * the path an attribute is opened by, from a '/' on ("sdb/queue/nr_requests",
 * "0:0:0:1/queue_depth", "parameters/storvsc_max_hw_queues"), or, with a '*', is a pattern
 * for the last component (fnmatch(3): ".#hvtuned.sda.*", any temporary of sda's record); FAULT
 * is one of
 *   open:ERRNO        every open fails (ENOENT: this kernel has no such attribute, and
 *                     faccessat() says so too)
 *   open-once:ERRNO   the first open fails, the attribute still there (an open that raced
 *                     a remove and an add)
 *   open-write:ERRNO  opens for writing fail (EACCES: no write bit, kernfs_fop_open();
 *                     EROFS: sysfs mounted read-only; ENOENT: removed since it was read)
 *   write:ERRNO       write(2) fails and nothing is stored (the store function refused:
 *                     EINVAL, EBUSY; ENODEV: the node was removed while open)
 *   short             write(2) stores the whole value but returns one byte less
 *   read:ERRNO        read(2) fails
 *   read:garbage      reads return bytes no attribute shows, a NUL after "4096" among them
 *   read:escapes      reads return text with a terminal escape sequence and a newline inside
 *   read:empty        reads return end of file at once
 *   readback:...      as read:, for reads after the attribute was written (on an fd
 *                     opened before the write too: hvtuned reads back on the fd it read
 *                     the value with)
 * ERRNO is a name (EBUSY) or a number. An attribute may have several faults. When the value
 * starts with '@', the rest is a file holding the list, read again at every open: a test
 * changes or clears faults under a running daemon by rewriting it.
 *
 * Only openat() and openat64() are looked at: hvtuned's sysfs layer opens every attribute
 * with them, relative to the directory fd (lib/sysfs.c), and libudev and the test's own
 * reads do not. Loaded after write-log.so (which records what hvtuned tried) and before
 * sysfs-kernel.so (which answers the writes that get through as the kernel would). A bad
 * list aborts the process: a test must not pass on a fault that was never injected. Test
 * code only. */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "shim.h"

#define FAULTS_MAX 32
#define FDS_MAX 1024
#define WRITTEN_MAX 64
#define SPEC_MAX 4096
#define SUFFIX_MAX 256

enum op { OP_OPEN, OP_OPEN_ONCE, OP_OPEN_WRITE, OP_WRITE, OP_SHORT, OP_READ, OP_READBACK };
enum content { CONTENT_ERRNO, CONTENT_GARBAGE, CONTENT_ESCAPES, CONTENT_EMPTY };

struct fault {
        char suffix[SUFFIX_MAX];
        enum op op;
        enum content content;  /* for reads */
        int error;
};

/* What a read of a faulted fd gets. */
struct read_fault {
        bool set;
        enum content content;
        int error;
        size_t offset;
};

static struct fd_state {
        bool write_set;
        bool write_short;
        int write_error;
        struct read_fault read;
        struct read_fault readback;  /* once the path is written */
        char *path;  /* for the written list */
} fds[FDS_MAX];

/* Paths written through a write that got through: readback faults apply to them. */
static char *written[WRITTEN_MAX];
/* Paths whose open-once fault was met. */
static char *failed_once[WRITTEN_MAX];

/* "4096" first: a reader that stops at the NUL would take it for a valid value. */
static const char garbage[] = "4096\0\001\033[2J\nnone [bfq]\n";
static const char escapes[] = "\033[2J128\n256\n";

typedef int (*openat_fn)(int, const char *, int, ...);
static int (*real_faccessat)(int, const char *, int, int);
static openat_fn real_openat, real_openat64;
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_pread64)(int, void *, size_t, off_t);
static int (*real_close)(int);

static void init(void) {
        if (!real_close) {
                real_openat = (openat_fn) dlsym(RTLD_NEXT, "openat");
                real_openat64 = (openat_fn) dlsym(RTLD_NEXT, "openat64");
                real_write = (ssize_t (*)(int, const void *, size_t)) dlsym(RTLD_NEXT, "write");
                real_read = (ssize_t (*)(int, void *, size_t)) dlsym(RTLD_NEXT, "read");
                real_pread64 = (ssize_t (*)(int, void *, size_t, off_t)) dlsym(RTLD_NEXT, "pread64");
                real_close = (int (*)(int)) dlsym(RTLD_NEXT, "close");
                real_faccessat = (int (*)(int, const char *, int, int)) dlsym(RTLD_NEXT, "faccessat");
        }
}

static __attribute__((noreturn, format(printf, 1, 2))) void die(const char *fmt, ...) {
        va_list ap;

        fprintf(stderr, "sysfs-faults: ");
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\n");
        abort();
}

static const struct {
        const char *name;
        int error;
} errnos[] = {
        { "EPERM", EPERM }, { "ENOENT", ENOENT }, { "EIO", EIO }, { "ENXIO", ENXIO },
        { "EAGAIN", EAGAIN }, { "ENOMEM", ENOMEM }, { "EACCES", EACCES }, { "EBUSY", EBUSY },
        { "ENODEV", ENODEV }, { "EINVAL", EINVAL }, { "ENOSPC", ENOSPC }, { "EROFS", EROFS },
        { "ERANGE", ERANGE }, { "EOPNOTSUPP", EOPNOTSUPP }, { "ETIMEDOUT", ETIMEDOUT },
};

static int parse_errno(const char *s) {
        char *end;
        long v;

        for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
                if (strcmp(s, errnos[i].name) == 0)
                        return errnos[i].error;
        v = strtol(s, &end, 10);
        if (end == s || *end || v <= 0 || v > 4095)
                die("\"%s\" is not an errno", s);
        return (int) v;
}

/* "read:garbage", "write:EBUSY", "short" into f. */
static void parse_fault(const char *text, struct fault *f) {
        static const struct {
                const char *name;
                enum op op;
        } ops[] = {
                { "open", OP_OPEN }, { "open-once", OP_OPEN_ONCE }, { "open-write", OP_OPEN_WRITE }, { "write", OP_WRITE },
                { "read", OP_READ }, { "readback", OP_READBACK },
        };
        const char *colon = strchr(text, ':'), *arg;
        size_t len;

        if (strcmp(text, "short") == 0 || strcmp(text, "write:short") == 0) {
                f->op = OP_SHORT;
                return;
        }
        if (!colon)
                die("fault \"%s\" has no ':'", text);
        len = (size_t) (colon - text);
        arg = colon + 1;
        for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
                if (strlen(ops[i].name) != len || strncmp(text, ops[i].name, len) != 0)
                        continue;
                f->op = ops[i].op;
                f->content = CONTENT_ERRNO;
                if (f->op == OP_READ || f->op == OP_READBACK) {
                        if (strcmp(arg, "garbage") == 0) {
                                f->content = CONTENT_GARBAGE;
                                return;
                        }
                        if (strcmp(arg, "escapes") == 0) {
                                f->content = CONTENT_ESCAPES;
                                return;
                        }
                        if (strcmp(arg, "empty") == 0) {
                                f->content = CONTENT_EMPTY;
                                return;
                        }
                }
                f->error = parse_errno(arg);
                return;
        }
        die("fault \"%s\": no such operation", text);
}

/* The list now in force; 0 entries when none is set. */
static size_t load_faults(struct fault out[static FAULTS_MAX]) {
        const char *env = getenv("HVTUNED_TEST_FAULTS");
        char spec[SPEC_MAX], *entry, *save = NULL;
        size_t n = 0;

        if (!env || !*env)
                return 0;
        if (env[0] == '@') {
                int fd = real_openat(AT_FDCWD, env + 1, O_RDONLY | O_CLOEXEC);
                ssize_t len;

                if (fd < 0)
                        return 0;  /* no file: no faults */
                len = real_read(fd, spec, sizeof(spec) - 1);
                real_close(fd);
                spec[len < 0 ? 0 : len] = '\0';
        } else
                snprintf(spec, sizeof(spec), "%s", env);

        for (entry = strtok_r(spec, ",\n", &save); entry; entry = strtok_r(NULL, ",\n", &save)) {
                char *eq = strchr(entry, '=');

                if (!*entry)
                        continue;
                if (!eq || eq == entry)
                        die("\"%s\" is not SUFFIX=FAULT", entry);
                if (n == FAULTS_MAX)
                        die("more than %d faults", FAULTS_MAX);
                *eq = '\0';
                out[n] = (struct fault) {};
                snprintf(out[n].suffix, sizeof(out[n].suffix), "%s", entry);
                parse_fault(eq + 1, &out[n]);
                n++;
        }
        return n;
}

/* The absolute path of dirfd/name, as far as it can be told. */
static void full_path(int dirfd, const char *name, char out[static 4096]) {
        char link[64], dir[2048];
        ssize_t n;

        if (name[0] == '/' || dirfd == AT_FDCWD) {
                snprintf(out, 4096, "%s", name);
                return;
        }
        snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
        n = readlink(link, dir, sizeof(dir) - 1);
        dir[n < 0 ? 0 : n] = '\0';
        snprintf(out, 4096, "%s/%.2000s", dir, name);
}

/* "sdb/queue/nr_requests" matches ".../block/sdb/queue/nr_requests", not ".../xsdb/...". */
static bool matches(const char *path, const char *suffix) {
        size_t lp = strlen(path), ls = strlen(suffix);
        const char *base = strrchr(path, '/');

        if (strchr(suffix, '*'))
                return fnmatch(suffix, base ? base + 1 : path, 0) == 0;
        if (lp < ls || strcmp(path + lp - ls, suffix) != 0)
                return false;
        return lp == ls || path[lp - ls - 1] == '/' || suffix[0] == '/';
}

static bool in_list(char *const *list, const char *path) {
        for (size_t i = 0; i < WRITTEN_MAX; i++)
                if (list[i] && strcmp(list[i], path) == 0)
                        return true;
        return false;
}

static void add_to_list(char **list, const char *path) {
        if (in_list(list, path))
                return;
        for (size_t i = 0; i < WRITTEN_MAX; i++)
                if (!list[i]) {
                        list[i] = strdup(path);
                        return;
                }
}

static bool was_written(const char *path) {
        return in_list(written, path);
}

static void mark_written(const char *path) {
        add_to_list(written, path);
}

static void forget(int fd) {
        if (fd < 0 || fd >= FDS_MAX)
                return;
        free(fds[fd].path);
        fds[fd] = (struct fd_state) {};
}

static int open_faulted(openat_fn real, int dirfd, const char *name, int flags, mode_t mode) {
        struct fault faults[FAULTS_MAX];
        struct fd_state st = {};
        bool writing = (flags & O_ACCMODE) != O_RDONLY, any = false;
        char path[4096];
        size_t n;
        int fd;

        n = load_faults(faults);
        if (n > 0)
                full_path(dirfd, name, path);
        for (size_t i = 0; i < n; i++) {
                const struct fault *f = &faults[i];

                if (!matches(path, f->suffix))
                        continue;
                switch (f->op) {
                case OP_OPEN_ONCE:
                        if (in_list(failed_once, path))
                                break;
                        add_to_list(failed_once, path);
                        errno = f->error;
                        return -1;
                case OP_OPEN:
                case OP_OPEN_WRITE:
                        if (f->op == OP_OPEN_WRITE && !writing)
                                break;
                        errno = f->error;
                        return -1;
                case OP_WRITE:
                        st.write_set = true;
                        st.write_error = f->error;
                        break;
                case OP_SHORT:
                        st.write_set = true;
                        st.write_short = true;
                        break;
                case OP_READ:
                        st.read = (struct read_fault) { true, f->content, f->error, 0 };
                        break;
                case OP_READBACK:
                        st.readback = (struct read_fault) { true, f->content, f->error, 0 };
                        break;
                }
                any = true;
        }

        /* sysfs ignores O_TRUNC, and a refused write leaves the value: on a plain testbed
         * file the truncation would empty it. */
        if (st.write_set && !st.write_short)
                flags &= ~O_TRUNC;
        fd = real(dirfd, name, flags, mode);
        if (fd < 0 || fd >= FDS_MAX)
                return fd;
        forget(fd);
        if (any) {
                st.path = strdup(path);
                fds[fd] = st;
        }
        return fd;
}

/* An attribute whose opens fail with ENOENT is not there: hvtuned asks faccessat() whether an
 * ENOENT it met came from a missing attribute (lib/apply.c). */
int faccessat(int dirfd, const char *name, int mode, int flags) {
        struct fault faults[FAULTS_MAX];
        char path[4096];
        size_t n;

        init();
        n = load_faults(faults);
        if (n > 0)
                full_path(dirfd, name, path);
        for (size_t i = 0; i < n; i++)
                if (faults[i].op == OP_OPEN && faults[i].error == ENOENT && matches(path, faults[i].suffix)) {
                        errno = ENOENT;
                        return -1;
                }
        return real_faccessat(dirfd, name, mode, flags);
}

/* With _FILE_OFFSET_BITS=64 callers reach openat64; both go the same way. */
#define DEFINE_OPENAT(fn, real)                                                 \
        int fn(int dirfd, const char *name, int flags, ...) {                   \
                mode_t mode;                                                    \
                                                                                \
                init();                                                         \
                mode = SHIM_OPEN_MODE(flags, flags);                            \
                return open_faulted(real, dirfd, name, flags, mode);            \
        }

DEFINE_OPENAT(openat, real_openat)
DEFINE_OPENAT(openat64, real_openat64)

ssize_t write(int fd, const void *buf, size_t len) {
        struct fd_state *st;
        ssize_t n;

        init();
        if (fd < 0 || fd >= FDS_MAX || !fds[fd].path)
                return real_write(fd, buf, len);
        st = &fds[fd];
        if (st->write_set && !st->write_short) {
                errno = st->write_error;
                return -1;
        }
        n = real_write(fd, buf, len);
        if (n > 0)
                mark_written(st->path);
        if (st->write_set && n > 0)
                n--;  /* the kernel acted on all of it, and says less */
        return n;
}

/* The fault a read of fd gets now, if any: a readback fault only once its path is written. */
static struct read_fault *read_fault(int fd) {
        struct fd_state *st;

        if (fd < 0 || fd >= FDS_MAX)
                return NULL;
        st = &fds[fd];
        if (st->read.set)
                return &st->read;
        if (st->readback.set && st->path && was_written(st->path))
                return &st->readback;
        return NULL;
}

/* What a faulted read of len bytes from offset gets. */
static ssize_t faulted_read(const struct read_fault *rf, void *buf, size_t len, size_t offset) {
        const char *text;
        size_t size;

        switch (rf->content) {
        case CONTENT_ERRNO:
                errno = rf->error;
                return -1;
        case CONTENT_EMPTY:
        default:
                return 0;
        case CONTENT_GARBAGE:
                text = garbage;
                size = sizeof(garbage) - 1;
                break;
        case CONTENT_ESCAPES:
                text = escapes;
                size = sizeof(escapes) - 1;
                break;
        }
        if (offset >= size)
                return 0;
        if (len > size - offset)
                len = size - offset;
        memcpy(buf, text + offset, len);
        return (ssize_t) len;
}

ssize_t read(int fd, void *buf, size_t len) {
        struct read_fault *rf;
        ssize_t n;

        init();
        rf = read_fault(fd);
        if (!rf)
                return real_read(fd, buf, len);
        n = faulted_read(rf, buf, len, rf->offset);
        if (n > 0)
                rf->offset += (size_t) n;
        return n;
}

/* hvtuned reads attributes with pread(2) from offset 0 (lib/sysfs.c). */
ssize_t pread64(int fd, void *buf, size_t len, off_t offset) {
        struct read_fault *rf;

        init();
        rf = read_fault(fd);
        if (!rf || offset < 0)
                return real_pread64(fd, buf, len, offset);
        return faulted_read(rf, buf, len, (size_t) offset);
}

ssize_t pread(int fd, void *buf, size_t len, off_t offset) __attribute__((alias("pread64")));

int close(int fd) {
        init();
        forget(fd);
        return real_close(fd);
}
