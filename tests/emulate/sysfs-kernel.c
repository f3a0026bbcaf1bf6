/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: making a umockdev testbed answer writes to sysfs attributes as the kernel does.
 *
 * A testbed attribute is a plain file: writing "none" over "[mq-deadline] none" leaves
 * "none", and every value is kept as written. The kernel instead keeps the list and moves
 * the brackets, refuses a name it does not offer (EINVAL), keeps read_ahead_kb in whole
 * pages and raises nr_requests to at least 4 (block/elevator.c, block/blk-sysfs.c); a uint
 * module parameter takes what kstrtouint() takes (kernel/params.c); an attribute without
 * write permission cannot be opened for writing, not even by root (kernfs_fop_open(): EACCES);
 * and a write to a driver's bind or unbind returns only when the device was probed or
 * removed (drivers/base/bus.c). The test plays the kernel for those: the shim waits for
 * "<bind or unbind>.done" in the driver's directory, holding the errno the write gets. This
 * LD_PRELOAD shim, loaded before umockdev's (which calls libc directly, so nothing after it
 * sees a call), does the same for testbed files, /sys paths as umockdev will redirect them
 * and paths below $UMOCKDEV_DIR: on an open for writing it
 * keeps the old content, on write(2) it stores what the kernel would show, or fails the
 * write and puts the old content back. Test code only: its state is this process's. */
/* openat and openat64 are both defined here: no redirection of one to the other. */
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
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define TRACKED_MAX 64
#define CONTENT_MAX 512

enum kind { SCHEDULER, READ_AHEAD_KB, NR_REQUESTS, PARAM_UINT, DRIVER_BIND };

/* How long a bind or unbind waits for the test's answer. */
#define BIND_TIMEOUT_MS 30000

static const struct {
        const char *suffix;
        enum kind kind;
} emulated[] = {
        { "/queue/scheduler", SCHEDULER },
        { "/queue/read_ahead_kb", READ_AHEAD_KB },
        { "/queue/nr_requests", NR_REQUESTS },
        { "/parameters/storvsc_max_hw_queues", PARAM_UINT },
        { "/drivers/hv_storvsc/bind", DRIVER_BIND },
        { "/drivers/hv_storvsc/unbind", DRIVER_BIND },
};

static struct tracked {
        int fd;
        enum kind kind;
        char path[4096];
        char old[CONTENT_MAX];
} tracked[TRACKED_MAX];

typedef int (*openat_fn)(int, const char *, int, ...);
static openat_fn real_openat, real_openat64;
static ssize_t (*real_write)(int, const void *, size_t);
static int (*real_close)(int);

static void init(void) {
        if (!real_write) {
                real_openat = (openat_fn) dlsym(RTLD_NEXT, "openat");
                real_openat64 = (openat_fn) dlsym(RTLD_NEXT, "openat64");
                real_write = (ssize_t (*)(int, const void *, size_t)) dlsym(RTLD_NEXT, "write");
                real_close = (int (*)(int)) dlsym(RTLD_NEXT, "close");
        }
}

static struct tracked *find(int fd) {
        for (size_t i = 0; i < TRACKED_MAX; i++)
                if (tracked[i].fd == fd && tracked[i].path[0])
                        return &tracked[i];
        return NULL;
}

/* The absolute path of dirfd/name, if it is below the testbed. */
static bool testbed_path(int dirfd, const char *name, char out[static 4096]) {
        const char *root = getenv("UMOCKDEV_DIR");
        char dir[2048], link[64];
        ssize_t n;

        if (!root)
                return false;
        if (strncmp(name, "/sys/", 5) == 0)
                snprintf(out, 4096, "%.2000s%.2000s", root, name);  /* umockdev redirects it there */
        else if (name[0] == '/')
                snprintf(out, 4096, "%s", name);
        else {
                if (dirfd == AT_FDCWD)
                        return false;
                snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
                n = readlink(link, dir, sizeof(dir) - 1);
                if (n < 0)
                        return false;
                dir[n] = '\0';
                snprintf(out, 4096, "%s/%.2000s", dir, name);
        }
        return strncmp(out, root, strlen(root)) == 0;
}

static bool read_file(const char *path, char buf[static CONTENT_MAX]) {
        FILE *f = fopen(path, "re");
        size_t n;

        if (!f)
                return false;
        n = fread(buf, 1, CONTENT_MAX - 1, f);
        buf[n] = '\0';
        fclose(f);
        return true;
}

static void put_back(struct tracked *t, const char *content) {
        (void) lseek(t->fd, 0, SEEK_SET);
        (void) ftruncate(t->fd, 0);
        (void) real_write(t->fd, content, strlen(content));
}

static int open_tracked(openat_fn real, int dirfd, const char *name, int flags, mode_t mode) {
        char path[4096];
        struct stat st;
        int fd;

        if ((flags & O_ACCMODE) == O_RDONLY || !testbed_path(dirfd, name, path))
                return real(dirfd, name, flags, mode);
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && !(st.st_mode & 0222)) {
                errno = EACCES;
                return -1;
        }

        for (size_t i = 0; i < sizeof(emulated) / sizeof(emulated[0]); i++) {
                size_t ls = strlen(emulated[i].suffix), lp = strlen(path);
                struct tracked *t;

                if (lp < ls || strcmp(path + lp - ls, emulated[i].suffix) != 0)
                        continue;
                t = NULL;
                for (size_t j = 0; j < TRACKED_MAX && !t; j++)
                        if (!tracked[j].path[0])
                                t = &tracked[j];
                if (!t || !read_file(path, t->old))
                        break;
                /* No O_TRUNC: a reader must never see the attribute empty; write() puts the
                 * whole new content in place. */
                fd = real(dirfd, name, flags & ~O_TRUNC, mode);
                if (fd < 0)
                        return fd;
                t->fd = fd;
                t->kind = emulated[i].kind;
                snprintf(t->path, sizeof(t->path), "%s", path);
                return fd;
        }
        return real(dirfd, name, flags, mode);
}

static mode_t mode_arg(int flags, va_list ap) {
        return flags & (O_CREAT | O_TMPFILE) ? (mode_t) va_arg(ap, int) : 0;
}

/* With _FILE_OFFSET_BITS=64 callers reach openat64; both go the same way. */
#define DEFINE_OPENAT(fn, real)                                                 \
        int fn(int dirfd, const char *name, int flags, ...) {                   \
                va_list ap;                                                     \
                mode_t mode;                                                    \
                                                                                \
                init();                                                         \
                va_start(ap, flags);                                            \
                mode = mode_arg(flags, ap);                                     \
                va_end(ap);                                                     \
                return open_tracked(real, dirfd, name, flags, mode);            \
        }

DEFINE_OPENAT(openat, real_openat)
DEFINE_OPENAT(openat64, real_openat64)

/* "[none] mq-deadline kyber " with name bracketed instead; false if it is not offered. */
static bool switch_scheduler(const char *old, const char *name, char out[static CONTENT_MAX]) {
        char copy[CONTENT_MAX], *tok, *save = NULL;
        size_t off = 0;
        bool found = false;

        snprintf(copy, sizeof(copy), "%s", old);
        out[0] = '\0';
        for (tok = strtok_r(copy, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
                size_t len = strlen(tok);

                if (tok[0] == '[' && len > 2 && tok[len - 1] == ']') {
                        tok[len - 1] = '\0';
                        tok++;
                }
                found = found || strcmp(tok, name) == 0;
                off += (size_t) snprintf(out + off, CONTENT_MAX - off, strcmp(tok, name) == 0 ? "[%s] " : "%s ", tok);
        }
        snprintf(out + off, CONTENT_MAX - off, "\n");
        return found;
}

/* The test's answer to a bind or unbind: the errno in "<path>.done", 0 for success. */
static int wait_for_kernel(const char *path) {
        char done[4200], answer[CONTENT_MAX];
        struct timespec tick = { 0, 10 * 1000 * 1000 };

        snprintf(done, sizeof(done), "%s.done", path);
        for (int waited = 0; waited < BIND_TIMEOUT_MS; waited += 10) {
                if (read_file(done, answer)) {
                        unlink(done);
                        return atoi(answer);
                }
                nanosleep(&tick, NULL);
        }
        return ETIMEDOUT;
}

ssize_t write(int fd, const void *buf, size_t len) {
        struct tracked *t;
        char value[CONTENT_MAX], shown[CONTENT_MAX], *end;
        long long v;

        init();
        t = find(fd);
        if (!t)
                return real_write(fd, buf, len);

        snprintf(value, sizeof(value), "%.*s", (int) (len < sizeof(value) ? len : sizeof(value) - 1), (const char *) buf);
        value[strcspn(value, " \n")] = '\0';
        if (t->kind == DRIVER_BIND) {
                int error;

                put_back(t, value);
                error = wait_for_kernel(t->path);
                if (error) {
                        errno = error;
                        return -1;
                }
                return (ssize_t) len;
        }
        if (t->kind == PARAM_UINT) {
                unsigned long long u;

                errno = 0;
                u = strtoull(value, &end, 0);
                if (errno || end == value || *end || value[0] == '-' || u > 0xffffffffULL) {
                        put_back(t, t->old);
                        errno = EINVAL;
                        return -1;
                }
                snprintf(shown, sizeof(shown), "%llu\n", u);
        } else if (t->kind == SCHEDULER) {
                if (!switch_scheduler(t->old, value, shown)) {
                        put_back(t, t->old);
                        errno = EINVAL;
                        return -1;
                }
        } else {
                v = strtoll(value, &end, 10);
                if (end == value || *end || v < 0) {
                        put_back(t, t->old);
                        errno = EINVAL;
                        return -1;
                }
                if (t->kind == READ_AHEAD_KB)
                        v -= v % 4;  /* whole 4 KiB pages */
                else if (v < 4)
                        v = 4;       /* BLKDEV_MIN_RQ */
                snprintf(shown, sizeof(shown), "%lld\n", v);
        }
        snprintf(t->old, sizeof(t->old), "%s", shown);
        put_back(t, shown);
        return (ssize_t) len;
}

int close(int fd) {
        struct tracked *t;

        init();
        t = find(fd);
        if (t) {
                /* A kernel attribute is never left empty by an open that wrote nothing. */
                put_back(t, t->old);
                t->path[0] = '\0';
                t->fd = -1;
        }
        return real_close(fd);
}
