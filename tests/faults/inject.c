/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: failing one system call, or one allocation, of hvtuned's at a chosen point of its
 * life, and listing the points a life has. Test code only (tests/faults/sweep.py drives it).
 *
 * A point is a function, the call site that called it and, for a call about a file, its path:
 * "openat64 hvtuned+0x5e1c /sys/.../sdc/queue/scheduler", and the occurrence of that point in
 * the life, counted from 1. Not a global count of calls: umockdev's worker thread makes calls
 * of its own at times no test controls, which would shift every later number. A call site is
 * the caller's object and offset (dladdr()), the same for every run of one build.
 *
 * Whose calls count: those made from hvtuned's executable, and from libudev and libconfig,
 * the libraries it drives (the udev monitor's recvmsg() is libudev's). The emulation's own
 * calls (tests/emulate, umockdev's preload, which this one comes before in LD_PRELOAD) and
 * libc's internal ones (strdup()'s malloc, stdio's write) are never seen or never counted:
 * a preload sees libc's entry points only.
 *
 * HVTUNED_INJECT_RECORD=FILE   at exit, every point of the life, one a line:
 *                              "FUNCTION<TAB>SITE<TAB>PATH<TAB>COUNT"
 * HVTUNED_INJECT=SPEC          FUNCTION<TAB>SITE<TAB>PATH<TAB>N<TAB>ERRNO<TAB>once|from: the Nth
 *                              occurrence of the point fails with ERRNO (a number), or that
 *                              one and every later one. An allocation fails by returning NULL.
 * HVTUNED_INJECT_HIT=FILE      created when the fault was injected, so that a run where the
 *                              point never came is not taken for one that survived it.
 * HVTUNED_INJECT_STRIP=PREFIX  a path under PREFIX is written "$T" and the rest: the sweep's
 *                              temporary directories have new names every run.
 * A temporary's random part (".#hvtuned.NAME.0123456789abcdef") is written "*". */
#undef _FILE_OFFSET_BITS
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);

#define FDS_MAX 4096
#define POINTS_MAX 8192
#define PATH_LEN 512

struct point {
        char func[24], site[48], path[PATH_LEN];
        unsigned long count;
};

static struct {
        pthread_mutex_t lock;
        bool ready;
        uintptr_t exe_start, exe_end;
        char *fd_path[FDS_MAX];
        struct point *points;
        size_t n_points;
        const char *record, *hit, *strip;
        bool injecting;
        struct point want;          /* want.count: the occurrence */
        int error;
        bool from;
} g = { .lock = PTHREAD_MUTEX_INITIALIZER };

static __thread int busy;  /* inside this file: its own calls are nobody's */

static int find_exe(struct dl_phdr_info *info, size_t size, void *data) {
        (void) size, (void) data;
        /* The first object is the program itself. */
        for (int i = 0; i < info->dlpi_phnum; i++) {
                const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
                uintptr_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;

                if (ph->p_type != PT_LOAD)
                        continue;
                if (!g.exe_start || start < g.exe_start)
                        g.exe_start = start;
                if (end > g.exe_end)
                        g.exe_end = end;
        }
        return 1;
}

static void parse_spec(const char *spec) {
        char mode[8] = "";
        int n = sscanf(spec, "%23[^\t]\t%47[^\t]\t%511[^\t]\t%lu\t%d\t%7s", g.want.func, g.want.site,
                       g.want.path, &g.want.count, &g.error, mode);

        if (n != 6 || g.want.count == 0 || (strcmp(mode, "once") != 0 && strcmp(mode, "from") != 0)) {
                fprintf(stderr, "inject: bad HVTUNED_INJECT '%s'\n", spec);
                abort();
        }
        g.from = strcmp(mode, "from") == 0;
        g.injecting = true;
}

__attribute__((constructor))
static void init(void) {
        const char *spec = getenv("HVTUNED_INJECT");

        busy++;
        dl_iterate_phdr(find_exe, NULL);
        g.record = getenv("HVTUNED_INJECT_RECORD");
        g.hit = getenv("HVTUNED_INJECT_HIT");
        g.strip = getenv("HVTUNED_INJECT_STRIP");
        if (spec && *spec)
                parse_spec(spec);
        if (g.record)
                g.points = __libc_calloc(POINTS_MAX, sizeof(struct point));
        g.ready = true;
        busy--;
}

__attribute__((destructor))
static void done(void) {
        FILE *f;

        if (!g.record || !g.points)
                return;
        busy++;
        f = fopen(g.record, "w");
        if (f) {
                for (size_t i = 0; i < g.n_points; i++)
                        fprintf(f, "%s\t%s\t%s\t%lu\n", g.points[i].func, g.points[i].site, g.points[i].path,
                                g.points[i].count);
                fclose(f);
        }
        busy--;
}

/* "hvtuned+0x1234", "libudev+0x99", or NULL for a caller whose calls do not count. */
static bool site_of(const void *caller, char *buf, size_t size) {
        uintptr_t a = (uintptr_t) caller;
        Dl_info info;
        const char *base;

        if (a >= g.exe_start && a < g.exe_end) {
                snprintf(buf, size, "hvtuned+0x%lx", (unsigned long) (a - g.exe_start));
                return true;
        }
        if (!dladdr(caller, &info) || !info.dli_fname)
                return false;
        base = strrchr(info.dli_fname, '/');
        base = base ? base + 1 : info.dli_fname;
        if (strncmp(base, "libudev.so", 10) == 0 || strncmp(base, "libconfig.so", 12) == 0) {
                snprintf(buf, size, "%.*s+0x%lx", (int) strcspn(base, "."), base,
                         (unsigned long) (a - (uintptr_t) info.dli_fbase));
                return true;
        }
        return false;
}

/* The path as a point names it: the sweep's prefix as "$T", a temporary's random part as "*". */
static void normalize(const char *path, char *buf, size_t size) {
        size_t n = g.strip ? strlen(g.strip) : 0;
        char *t;

        if (n > 0 && strncmp(path, g.strip, n) == 0)
                snprintf(buf, size, "$T%s", path + n);
        else
                snprintf(buf, size, "%s", path);
        t = strstr(buf, ".#hvtuned.");
        if (t) {
                char *dot = strrchr(t, '.');
                size_t hex = dot ? strspn(dot + 1, "0123456789abcdef") : 0;

                if (hex == 16 && dot[17] == '\0')
                        strcpy(dot + 1, "*");
        }
}

static const char *path_of_fd(int fd) {
        return fd >= 0 && fd < FDS_MAX && g.fd_path[fd] ? g.fd_path[fd] : "-";
}

/* name in the directory dirfd, as a path. */
static void join(int dirfd, const char *name, char *buf, size_t size) {
        const char *dir = path_of_fd(dirfd);

        if (name[0] == '/' || dirfd == AT_FDCWD)
                snprintf(buf, size, "%s", name);
        else if (name[0] == '\0' || strcmp(name, ".") == 0)
                snprintf(buf, size, "%s", dir);
        else
                snprintf(buf, size, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", name);
}

static void remember_fd(int fd, int dirfd, const char *path) {
        char full[PATH_LEN], buf[PATH_LEN];

        if (fd < 0 || fd >= FDS_MAX)
                return;
        join(dirfd, path, full, sizeof(full));
        normalize(full, buf, sizeof(buf));
        free(g.fd_path[fd]);
        g.fd_path[fd] = strdup(buf);
}

static void forget_fd(int fd) {
        if (fd >= 0 && fd < FDS_MAX) {
                free(g.fd_path[fd]);
                g.fd_path[fd] = NULL;
        }
}

/* The occurrence of this point, counted; the error to fail it with, or 0. */
static int point(const char *func, const void *caller, const char *path) {
        char site[48], shown[PATH_LEN];
        unsigned long n = 0;
        int error = 0;

        if (!g.ready || busy || !site_of(caller, site, sizeof(site)))
                return 0;
        busy++;
        normalize(path ? path : "-", shown, sizeof(shown));
        pthread_mutex_lock(&g.lock);
        if (g.points) {
                size_t i;

                for (i = 0; i < g.n_points; i++)
                        if (strcmp(g.points[i].func, func) == 0 && strcmp(g.points[i].site, site) == 0 &&
                            strcmp(g.points[i].path, shown) == 0)
                                break;
                if (i == g.n_points && g.n_points < POINTS_MAX) {
                        snprintf(g.points[i].func, sizeof(g.points[i].func), "%s", func);
                        snprintf(g.points[i].site, sizeof(g.points[i].site), "%s", site);
                        snprintf(g.points[i].path, sizeof(g.points[i].path), "%s", shown);
                        g.n_points++;
                }
                if (i < g.n_points)
                        g.points[i].count++;
        }
        if (g.injecting && strcmp(g.want.func, func) == 0 && strcmp(g.want.site, site) == 0 &&
            strcmp(g.want.path, shown) == 0) {
                static unsigned long seen;

                n = ++seen;
                if (n == g.want.count || (g.from && n > g.want.count))
                        error = g.error;
        }
        pthread_mutex_unlock(&g.lock);
        if (error && g.hit) {
                int fd = ((int (*)(const char *, int, ...)) dlsym(RTLD_NEXT, "open64"))(g.hit, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

                if (fd >= 0)
                        close(fd);
        }
        busy--;
        return error;
}

#define REAL(type, name, ...) \
        static type (*real)(__VA_ARGS__); \
        if (!real) \
                real = (type (*)(__VA_ARGS__)) dlsym(RTLD_NEXT, name)

#define CALLER __builtin_return_address(0)

/* Fails the wrapper's call with its point's error, when it has one, returning failed. */
#define FAIL_AT(func, path, failed)                                     \
        do {                                                            \
                int error_ = point(func, CALLER, path);                 \
                if (error_) {                                           \
                        errno = error_;                                 \
                        return failed;                                  \
                }                                                       \
        } while (0)

/* --- files --- */

static int do_openat(const char *func, const void *caller, int dirfd, const char *path, int flags, mode_t mode) {
        REAL(int, "openat64", int, const char *, int, ...);
        char full[PATH_LEN];
        int r, fd;

        join(dirfd, path, full, sizeof(full));
        r = point(func, caller, full);
        if (r) {
                errno = r;
                return -1;
        }
        fd = real(dirfd, path, flags, mode);
        /* Only the counted callers' files are named: they all run on hvtuned's one thread. */
        if (fd >= 0 && !busy && site_of(caller, full, sizeof(full))) {
                busy++;
                remember_fd(fd, dirfd, path);
                busy--;
        }
        return fd;
}

int open64(const char *path, int flags, ...) {
        mode_t mode = 0;

        if (flags & (O_CREAT | O_TMPFILE)) {
                va_list ap;

                va_start(ap, flags);
                mode = va_arg(ap, mode_t);
                va_end(ap);
        }
        return do_openat("open", CALLER, AT_FDCWD, path, flags, mode);
}

int open(const char *path, int flags, ...) __attribute__((alias("open64")));

int openat64(int dirfd, const char *path, int flags, ...) {
        mode_t mode = 0;

        if (flags & (O_CREAT | O_TMPFILE)) {
                va_list ap;

                va_start(ap, flags);
                mode = va_arg(ap, mode_t);
                va_end(ap);
        }
        return do_openat("openat", CALLER, dirfd, path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...) __attribute__((alias("openat64")));

int close(int fd) {
        REAL(int, "close", int);

        if (!busy) {
                busy++;
                pthread_mutex_lock(&g.lock);
                forget_fd(fd);
                pthread_mutex_unlock(&g.lock);
                busy--;
        }
        return real(fd);
}

ssize_t read(int fd, void *buf, size_t count) {
        REAL(ssize_t, "read", int, void *, size_t);
        FAIL_AT("read", path_of_fd(fd), -1);
        return real(fd, buf, count);
}

/* hvtuned reads sysfs attributes and its files with pread(2) from offset 0 (lib/sysfs.c). */
ssize_t pread64(int fd, void *buf, size_t count, off64_t offset) {
        REAL(ssize_t, "pread64", int, void *, size_t, off64_t);
        FAIL_AT("pread", path_of_fd(fd), -1);
        return real(fd, buf, count, offset);
}

ssize_t pread(int fd, void *buf, size_t count, off_t offset) __attribute__((alias("pread64")));

ssize_t write(int fd, const void *buf, size_t count) {
        REAL(ssize_t, "write", int, const void *, size_t);
        /* stderr's lines: a fault there is said nowhere, and tests/integration covers EPIPE. */
        if (fd != STDERR_FILENO)
                FAIL_AT("write", path_of_fd(fd), -1);
        return real(fd, buf, count);
}

int fstat64(int fd, struct stat64 *st) {
        REAL(int, "fstat64", int, struct stat64 *);
        FAIL_AT("fstat", path_of_fd(fd), -1);
        return real(fd, st);
}

int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags) {
        REAL(int, "fstatat64", int, const char *, struct stat64 *, int);
        char full[PATH_LEN];

        join(dirfd, path, full, sizeof(full));
        FAIL_AT("fstatat", full, -1);
        return real(dirfd, path, st, flags);
}

int stat64(const char *path, struct stat64 *st) {
        REAL(int, "stat64", const char *, struct stat64 *);
        FAIL_AT("stat", path, -1);
        return real(path, st);
}

int lstat64(const char *path, struct stat64 *st) {
        REAL(int, "lstat64", const char *, struct stat64 *);
        FAIL_AT("lstat", path, -1);
        return real(path, st);
}

int mkdir(const char *path, mode_t mode) {
        REAL(int, "mkdir", const char *, mode_t);
        FAIL_AT("mkdir", path, -1);
        return real(path, mode);
}

int renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
        REAL(int, "renameat", int, const char *, int, const char *);
        char full[PATH_LEN];

        join(newdirfd, newpath, full, sizeof(full));
        FAIL_AT("renameat", full, -1);
        return real(olddirfd, oldpath, newdirfd, newpath);
}

int unlinkat(int dirfd, const char *path, int flags) {
        REAL(int, "unlinkat", int, const char *, int);
        char full[PATH_LEN];

        join(dirfd, path, full, sizeof(full));
        FAIL_AT("unlinkat", full, -1);
        return real(dirfd, path, flags);
}

int fsync(int fd) {
        REAL(int, "fsync", int);
        FAIL_AT("fsync", path_of_fd(fd), -1);
        return real(fd);
}

int fchmod(int fd, mode_t mode) {
        REAL(int, "fchmod", int, mode_t);
        FAIL_AT("fchmod", path_of_fd(fd), -1);
        return real(fd, mode);
}

ssize_t readlinkat(int dirfd, const char *path, char *buf, size_t size) {
        REAL(ssize_t, "readlinkat", int, const char *, char *, size_t);
        char full[PATH_LEN];

        join(dirfd, path, full, sizeof(full));
        FAIL_AT("readlinkat", full, -1);
        return real(dirfd, path, buf, size);
}

DIR *fdopendir(int fd) {
        REAL(DIR *, "fdopendir", int);
        FAIL_AT("fdopendir", path_of_fd(fd), NULL);
        return real(fd);
}

int flock(int fd, int op) {
        REAL(int, "flock", int, int);
        FAIL_AT("flock", path_of_fd(fd), -1);
        return real(fd, op);
}

int memfd_create(const char *name, unsigned flags) {
        REAL(int, "memfd_create", const char *, unsigned);
        FAIL_AT("memfd_create", NULL, -1);
        return real(name, flags);
}

/* --- sockets and the loop --- */

int socket(int domain, int type, int protocol) {
        REAL(int, "socket", int, int, int);
        char what[32], site[48];
        int fd;

        snprintf(what, sizeof(what), "socket:%d:%d", domain, type & 0xf);
        FAIL_AT("socket", what, -1);
        fd = real(domain, type, protocol);
        if (fd >= 0 && fd < FDS_MAX && !busy && site_of(CALLER, site, sizeof(site))) {
                busy++;
                free(g.fd_path[fd]);
                g.fd_path[fd] = strdup(what);
                busy--;
        }
        return fd;
}

int connect(int fd, const struct sockaddr *sa, socklen_t len) {
        REAL(int, "connect", int, const struct sockaddr *, socklen_t);
        FAIL_AT("connect", path_of_fd(fd), -1);
        return real(fd, sa, len);
}

ssize_t send(int fd, const void *buf, size_t len, int flags) {
        REAL(ssize_t, "send", int, const void *, size_t, int);
        if (fd != STDERR_FILENO)
                FAIL_AT("send", path_of_fd(fd), -1);
        return real(fd, buf, len, flags);
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags) {
        REAL(ssize_t, "sendmsg", int, const struct msghdr *, int);
        FAIL_AT("sendmsg", path_of_fd(fd), -1);
        return real(fd, msg, flags);
}

ssize_t recvmsg(int fd, struct msghdr *msg, int flags) {
        REAL(ssize_t, "recvmsg", int, struct msghdr *, int);
        FAIL_AT("recvmsg", path_of_fd(fd), -1);
        return real(fd, msg, flags);
}

int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev) {
        REAL(int, "epoll_ctl", int, int, int, struct epoll_event *);
        FAIL_AT("epoll_ctl", NULL, -1);
        return real(epfd, op, fd, ev);
}

int signalfd(int fd, const sigset_t *mask, int flags) {
        REAL(int, "signalfd", int, const sigset_t *, int);
        FAIL_AT("signalfd", NULL, -1);
        return real(fd, mask, flags);
}

ssize_t getrandom(void *buf, size_t len, unsigned flags) {
        REAL(ssize_t, "getrandom", void *, size_t, unsigned);
        FAIL_AT("getrandom", NULL, -1);
        return real(buf, len, flags);
}

/* --- allocations: libc's own, as dlsym() allocates --- */

void *malloc(size_t size) {
        if (point("malloc", CALLER, NULL)) {
                errno = ENOMEM;
                return NULL;
        }
        return __libc_malloc(size);
}

void *calloc(size_t n, size_t size) {
        if (point("calloc", CALLER, NULL)) {
                errno = ENOMEM;
                return NULL;
        }
        return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size) {
        if (point("realloc", CALLER, NULL)) {
                errno = ENOMEM;
                return NULL;
        }
        return __libc_realloc(p, size);
}

void *reallocarray(void *p, size_t n, size_t size) {
        if (point("reallocarray", CALLER, NULL)) {
                errno = ENOMEM;
                return NULL;
        }
        if (size && n > SIZE_MAX / size) {
                errno = ENOMEM;
                return NULL;
        }
        return __libc_realloc(p, n * size);
}
