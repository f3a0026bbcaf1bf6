/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: making a umockdev testbed answer writes to sysfs attributes as the kernel does.
 *
 * A testbed attribute is a plain file: writing "none" over "[mq-deadline] none" leaves "none",
 * and every value is kept as written. The kernel instead keeps the list and moves the
 * brackets, takes a name as elv_iosched_store() does (blanks stripped, anything that starts
 * with "none" as none, "deadline" as mq-deadline) and refuses one it does not offer (EINVAL),
 * takes numbers as kstrtoul() does up to UINT_MAX, keeps read_ahead_kb in whole pages, raises
 * nr_requests to at least 4 and refuses it beyond MAX_SCHED_RQ under an elevator or beyond the
 * tag depth under none (a SCSI host's can_queue, any other disk's mq/0/nr_tags: an NVMe
 * controller's tag set), refuses nr_requests on a bio-based queue (a multipath head, where the
 * kernel still shows the attributes: its scheduler reads "none" unbracketed and takes any name
 * without a change) (block/elevator.c, block/blk-sysfs.c; tests/kernel/kernel-answers.h
 * holds what a real kernel answered, and both are tested against it), and resets nr_requests on
 * every scheduler switch, as blk_mq_init_sched() does (block/blk-mq-sched.c; seen on 6.1 and
 * 6.18): to the tag depth for none, to 2 x min(tag depth, BLKDEV_DEFAULT_RQ) for an elevator;
 * a store of max_sectors_kb, add_random or iostats commits the limits, and what that does to
 * read-ahead, "none" while none is active, and EBUSY from a trylock follow the kernel that
 * $HVTUNED_TEST_KERNEL names (kernel_version() below; tests/kernel/kernel-answers.h's couplings);
 * a LUN's timeout and its disk's io_timeout show one rq_timeout, in jiffies of HZ 250 (an NVMe
 * namespace's io_timeout is its queue's alone, with no LUN beside it; 0 is EINVAL everywhere);
 * a uint module parameter takes what kstrtouint() takes, ERANGE beyond UINT_MAX
 * (kernel/params.c). An attribute without
 * write permission cannot be opened for writing, not even by root (kernfs_fop_open(): EACCES);
 * and a write to a driver's bind or unbind returns only when the device was probed or removed
 * (drivers/base/bus.c). The test plays the kernel for those: the shim waits for "<bind or
 * unbind>.done" in the driver's directory, holding the errno the write gets. This LD_PRELOAD
 * shim, loaded before umockdev's (which calls libc directly, so nothing after it sees a call),
 * does the same for testbed files, /sys paths as umockdev will redirect them and paths below
 * $UMOCKDEV_DIR: on an open for writing it keeps the old content, on write(2) it stores what
 * the kernel would show, or fails the write and puts the old content back. Test code only: its
 * state is this process's. */
/* openat and openat64 are both defined here: no redirection of one to the other. */
#undef _FILE_OFFSET_BITS
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "readahead-rule.h"
#include "shim.h"

#define TRACKED_MAX 64
#define CONTENT_MAX 512

/* include/linux/elevator.h, include/linux/blkdev.h, block/blk-mq-sched.h; x86-64 pages. */
#define ELV_NAME_MAX 16
#define BLKDEV_MIN_RQ 4
#define BLKDEV_DEFAULT_RQ 128
#define MAX_SCHED_RQ 2048
#define PAGE_KB 4
/* Debian's CONFIG_HZ: a request timeout is kept in jiffies. */
#define HZ 250

enum kind { SCHEDULER, READ_AHEAD_KB, NR_REQUESTS, LIMITS, TIMEOUT_S, IO_TIMEOUT_MS, PARAM_UINT, DRIVER_BIND };

/* The kernel the testbed plays, from $HVTUNED_TEST_KERNEL (tests/kernel/kernel-answers.h has each
 * one's rows): 5.10 and 6.1 (the default) keep read-ahead on a limits write, 6.12 raises it to
 * at least 128 KiB, 6.17 (459779d04ae8, in 6.17-rc1) and later to twice max_sectors_kb on a
 * rotational disk without an optimal I/O size (lib/readahead-rule.h); 6.18 and 7.3 switch
 * again on "none" while none is active, and take a trylock on scheduler and nr_requests writes
 * ($HVTUNED_TEST_KERNEL_BUSY; tests/kernel/kernel-answers.h kernel_trylock). uname(2) gives
 * the same release on a testbed, so the daemon knows the kernel it is played. */
#define DEFAULT_KERNEL "6.1"

static const char *kernel_release(void) {
        const char *k = getenv("HVTUNED_TEST_KERNEL");

        return k && *k ? k : DEFAULT_KERNEL;
}

static unsigned kernel_version(void) {
        unsigned major = 6, minor = 1;

        (void) sscanf(kernel_release(), "%u.%u", &major, &minor);
        return major * 1000 + minor;
}

/* How long a bind or unbind waits for the test's answer. */
#define BIND_TIMEOUT_MS 30000

static const struct {
        const char *suffix;
        enum kind kind;
} emulated[] = {
        { "/queue/scheduler", SCHEDULER },
        { "/queue/read_ahead_kb", READ_AHEAD_KB },
        { "/queue/nr_requests", NR_REQUESTS },
        /* The limits hvtuned may write (lib/attr.c): rotational, write_cache and
         * stable_writes go through the same commit on 6.12+, but hvtuned never writes them. */
        { "/queue/max_sectors_kb", LIMITS },
        { "/queue/add_random", LIMITS },
        { "/queue/iostats", LIMITS },
        /* One rq_timeout: a LUN's timeout in seconds, its disk's io_timeout in ms. */
        { "/timeout", TIMEOUT_S },
        { "/queue/io_timeout", IO_TIMEOUT_MS },
        { "/parameters/storvsc_max_hw_queues", PARAM_UINT },
        { "/drivers/hv_storvsc/bind", DRIVER_BIND },
        { "/drivers/hv_storvsc/unbind", DRIVER_BIND },
};

static struct tracked {
        int fd;
        enum kind kind;
        bool append;   /* opened O_APPEND: pwrite(2) would append */
        bool dirty;    /* the file holds something else than old */
        char path[4096];
        char old[CONTENT_MAX];
} tracked[TRACKED_MAX];

/* Which entries are in use, for which fd: apart from the entries, whose buffers span 72 pages
 * that a scan of every close(2) would fault in, one by one, in each process. */
static struct in_use {
        bool used;
        int fd;
} in_use[TRACKED_MAX];

typedef int (*openat_fn)(int, const char *, int, ...);
static openat_fn real_openat, real_openat64;
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_read)(int, void *, size_t);
static int (*real_close)(int);

static void init(void) {
        if (!real_write) {
                real_openat = (openat_fn) dlsym(RTLD_NEXT, "openat");
                real_openat64 = (openat_fn) dlsym(RTLD_NEXT, "openat64");
                real_write = (ssize_t (*)(int, const void *, size_t)) dlsym(RTLD_NEXT, "write");
                /* Not a fault shim's read(), loaded before this one: the emulation's own reads
                 * are the kernel's, never a test's injected failure. */
                real_read = (ssize_t (*)(int, void *, size_t)) dlsym(RTLD_NEXT, "read");
                real_close = (int (*)(int)) dlsym(RTLD_NEXT, "close");
        }
}

static struct tracked *find(int fd) {
        for (size_t i = 0; i < TRACKED_MAX; i++)
                if (in_use[i].used && in_use[i].fd == fd)
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
        if (strcmp(root, "/") == 0 && name[0] == '/')
                snprintf(out, 4096, "%s", name);   /* bound over /sys: no redirection */
        else if (strncmp(name, "/sys/", 5) == 0)
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

/* What a kernel attribute shows, as one read(2) shows it: the emulation's own calls are
 * not a guest's, and the bench counts them against hvtuned, so they are kept few. */
static bool read_file_at(int dirfd, const char *name, char buf[static CONTENT_MAX]) {
        int fd = real_openat(dirfd, name, O_RDONLY | O_CLOEXEC, 0);
        ssize_t n;

        if (fd < 0)
                return false;
        n = real_read(fd, buf, CONTENT_MAX - 1);
        buf[n > 0 ? n : 0] = '\0';
        (void) real_close(fd);
        return n >= 0;
}

static bool read_file(const char *path, char buf[static CONTENT_MAX]) {
        return read_file_at(AT_FDCWD, path, buf);
}

/* The whole content replaced: written first, then cut to its length, so that a reader never
 * sees the attribute empty (one that reads in between may see the new text over the end of
 * the old). */
static void put_back(struct tracked *t, const char *content) {
        size_t len = strlen(content);
        bool ok;

        if (t->append)
                ok = lseek(t->fd, 0, SEEK_SET) == 0 && ftruncate(t->fd, 0) == 0 &&
                     real_write(t->fd, content, len) == (ssize_t) len;
        else
                ok = pwrite(t->fd, content, len, 0) == (ssize_t) len && ftruncate(t->fd, (off_t) len) == 0;
        /* The testbed's own file: a kernel that cannot keep a value is no emulation. */
        if (!ok) {
                fprintf(stderr, "sysfs-kernel: cannot put \"%s\" into %s: %m\n", content, t->path);
                abort();
        }
        t->dirty = strcmp(content, t->old) != 0;
}

/* Whether name's last component is that of an emulated attribute. */
static bool maybe_emulated(const char *name) {
        const char *base = strrchr(name, '/');

        base = base ? base + 1 : name;
        for (size_t i = 0; i < sizeof(emulated) / sizeof(emulated[0]); i++)
                if (strcmp(strrchr(emulated[i].suffix, '/') + 1, base) == 0)
                        return true;
        return false;
}

static int open_tracked(openat_fn real, int dirfd, const char *name, int flags, mode_t mode) {
        const char *root = getenv("UMOCKDEV_DIR");
        char path[4096];
        struct stat st;
        int fd;

        if ((flags & O_ACCMODE) == O_RDONLY)
                return real(dirfd, name, flags, mode);
        /* Bound over /sys, every file is the testbed's: a relative name that no emulated
         * attribute ends in needs only the permission check, not its absolute path. */
        if (root && strcmp(root, "/") == 0 && name[0] != '/' && dirfd != AT_FDCWD && !maybe_emulated(name)) {
                if (fstatat(dirfd, name, &st, 0) == 0 && S_ISREG(st.st_mode) && !(st.st_mode & 0222)) {
                        errno = EACCES;
                        return -1;
                }
                return real(dirfd, name, flags, mode);
        }
        if (!testbed_path(dirfd, name, path))
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
                        if (!in_use[j].used)
                                t = &tracked[j];
                if (!t || !read_file(path, t->old))
                        break;
                /* No O_TRUNC: a reader must never see the attribute empty; write() puts the
                 * whole new content in place. */
                fd = real(dirfd, name, flags & ~O_TRUNC, mode);
                if (fd < 0)
                        return fd;
                t->fd = fd;
                in_use[t - tracked] = (struct in_use) { .used = true, .fd = fd };
                t->kind = emulated[i].kind;
                t->append = flags & O_APPEND;
                t->dirty = false;
                snprintf(t->path, sizeof(t->path), "%s", path);
                return fd;
        }
        return real(dirfd, name, flags, mode);
}


/* With _FILE_OFFSET_BITS=64 callers reach openat64; both go the same way. */
#define DEFINE_OPENAT(fn, real)                                                 \
        int fn(int dirfd, const char *name, int flags, ...) {                   \
                mode_t mode;                                                    \
                                                                                \
                init();                                                         \
                mode = SHIM_OPEN_MODE(flags, flags);                            \
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

static bool offers(const char *list, const char *name) {
        char scratch[CONTENT_MAX];

        return switch_scheduler(list, name, scratch);
}

/* The active name of a bracketed list, "" for none bracketed. */
static void active_of(const char *list, char out[static CONTENT_MAX]) {
        const char *open = strchr(list, '[');

        snprintf(out, CONTENT_MAX, "%.*s", open ? (int) strcspn(open + 1, "]") : 0, open ? open + 1 : "");
}

/* Whether a scheduler attribute reads as a bio-based queue's: "none" and no brackets. */
static bool bio_based(const char *list) {
        size_t n = strspn(list, " ");

        return strncmp(list + n, "none", 4) == 0 && list[n + 4 + strspn(list + n + 4, " \n")] == '\0';
}

/* elv_iosched_store(): the name is what fits in ELV_NAME_MAX, blanks stripped (strscpy(),
 * strstrip()). A multi-queue kernel (its list offers none) takes any name that starts with
 * "none" as none, since elevator_change() compares four characters, and "deadline" as
 * mq-deadline's alias; a legacy one has neither. 0 or an errno. */
static int store_scheduler(const char *old, const char *buf, size_t len, char shown[static CONTENT_MAX]) {
        char name[ELV_NAME_MAX], *p, *e;
        bool mq = offers(old, "none");

        /* A bio-based queue (a multipath head) on a kernel that still shows it the attribute
         * reads "none", unbracketed (elv_iosched_show()), and takes any write without a
         * change: elv_iosched_store() returns at once when !elv_support_iosched(). */
        if (bio_based(old)) {
                snprintf(shown, CONTENT_MAX, "%s", old);
                return 0;
        }

        snprintf(name, sizeof(name), "%.*s", (int) (len < sizeof(name) ? len : sizeof(name) - 1), buf);
        for (p = name; isspace((unsigned char) *p); p++)
                ;
        for (e = p + strlen(p); e > p && isspace((unsigned char) e[-1]); e--)
                e[-1] = '\0';
        if (mq && strncmp(p, "none", 4) == 0)
                p = (char *) "none";
        else if (mq && strcmp(p, "deadline") == 0 && offers(old, "mq-deadline"))
                p = (char *) "mq-deadline";
        return switch_scheduler(old, p, shown) ? 0 : EINVAL;
}

/* kstrtoull(): an optional '+', digits in base (0: "0x" hex, a leading 0 octal, else
 * decimal), one optional trailing newline, nothing else. 0, EINVAL, or ERANGE beyond max. */
static int parse_number(const char *buf, size_t len, int base, unsigned long long max, unsigned long long *ret) {
        unsigned long long v = 0;
        size_t i = 0;
        bool any = false;

        if (len > 0 && buf[len - 1] == '\n')
                len--;
        if (i < len && buf[i] == '+')
                i++;
        if (base == 0) {
                if (len - i > 2 && buf[i] == '0' && (buf[i + 1] == 'x' || buf[i + 1] == 'X')) {
                        base = 16;
                        i += 2;
                } else
                        base = i < len && buf[i] == '0' && len - i > 1 ? 8 : 10;
        }
        for (; i < len; i++) {
                int c = (unsigned char) buf[i], d;

                if (c >= '0' && c <= '9')
                        d = c - '0';
                else if (c >= 'a' && c <= 'f')
                        d = c - 'a' + 10;
                else if (c >= 'A' && c <= 'F')
                        d = c - 'A' + 10;
                else
                        return EINVAL;
                if (d >= base)
                        return EINVAL;
                if (v > (ULLONG_MAX - (unsigned) d) / (unsigned) base)
                        return ERANGE;
                v = v * (unsigned) base + (unsigned) d;
                any = true;
        }
        if (!any)
                return EINVAL;
        if (v > max)
                return ERANGE;
        *ret = v;
        return 0;
}

/* The first number in the file at path, or -1. */
static long long read_number(const char *path) {
        char buf[CONTENT_MAX], *end;
        long long v;

        if (!read_file(path, buf))
                return -1;
        v = strtoll(buf, &end, 10);
        return end == buf ? -1 : v;
}

/* The tag depths read so far, by their SCSI host's path or their disk's (FNV-1a): the kernel
 * sizes a host's (a controller's) tags once, as it adds it, so a depth read once holds until a driver bind or unbind (a
 * re-probe, which a test plays by putting a host back at the same path). Each disk of a host
 * would read it again otherwise. */
#define DEPTHS_MAX 64
static struct depth {
        uint64_t host_hash;
        long long depth;
} depths[DEPTHS_MAX];
static size_t n_depths, next_depth;

static uint64_t fnv1a(const char *s, size_t n) {
        uint64_t h = 0xcbf29ce484222325u;

        for (size_t i = 0; i < n; i++)
                h = (h ^ (unsigned char) s[i]) * 0x100000001b3u;
        return h;
}

/* The depth read before for the key (the first n bytes of path), or for the file at
 * depth_path, read now and remembered; -1 when there is none to read. */
static long long remembered_depth(const char *path, size_t n, const char *depth_path) {
        uint64_t hash = fnv1a(path, n);
        long long depth;

        for (size_t i = 0; i < n_depths; i++)
                if (depths[i].host_hash == hash)
                        return depths[i].depth;
        depth = read_number(depth_path);
        if (depth > 0) {
                depths[next_depth] = (struct depth) { hash, depth };
                next_depth = (next_depth + 1) % DEPTHS_MAX;
                if (n_depths < DEPTHS_MAX)
                        n_depths++;
        }
        return depth;
}

/* The tag depth of a disk, from ".../block/sdX/queue/nr_requests" or ".../nvme0n1/queue/...":
 * a SCSI disk's is its host's can_queue (scsi_mq_setup_tags()); any other disk's (an NVMe
 * namespace's: its controller's tag set, min(CAP.MQES + 1, io_queue_depth) - 1 in
 * drivers/nvme/host/pci.c) is what its hw queues show, mq/0/nr_tags. -1 when there is none
 * to read. */
static long long tag_depth(const char *path) {
        char file[4200];
        const char *p, *h = NULL, *queue;
        size_t n;

        for (p = strstr(path, "/host"); p; p = strstr(p + 1, "/host"))
                if (p[5] >= '0' && p[5] <= '9')
                        h = p + 1;
        if (h) {
                n = strcspn(h, "/");
                snprintf(file, sizeof(file), "%.*s/scsi_host/%.*s/can_queue", (int) (h - path + n), path, (int) n, h);
                return remembered_depth(path, (size_t) (h - path) + n, file);
        }
        queue = strstr(path, "/queue/");
        if (!queue)
                return -1;
        snprintf(file, sizeof(file), "%.*s/mq/0/nr_tags", (int) (queue - path), path);
        return remembered_depth(path, (size_t) (queue - path), file);
}

/* queue_requests_store(): the same value is nothing to do; below BLKDEV_MIN_RQ is raised to
 * it; on a multi-queue kernel beyond MAX_SCHED_RQ with an elevator, or beyond the tag depth
 * without one, EINVAL. */
static int store_nr_requests(const struct tracked *t, unsigned long long v, char shown[static CONTENT_MAX]) {
        char sched_path[4200], sched[CONTENT_MAX], active[CONTENT_MAX];
        long long depth;

        sched[0] = '\0';
        snprintf(sched_path, sizeof(sched_path), "%.*s/scheduler", (int) (strrchr(t->path, '/') - t->path), t->path);
        /* queue_requests_store() refuses a bio-based queue first (where the kernel still shows
         * it the attribute). */
        if (read_file(sched_path, sched) && bio_based(sched))
                return EINVAL;
        if (*t->old && (long long) v == strtoll(t->old, NULL, 10)) {
                snprintf(shown, CONTENT_MAX, "%s", t->old);
                return 0;
        }
        if (v < BLKDEV_MIN_RQ)
                v = BLKDEV_MIN_RQ;
        if (*sched && offers(sched, "none")) {
                active_of(sched, active);
                if (strcmp(active, "none") != 0 && *active) {
                        if (v > MAX_SCHED_RQ)
                                return EINVAL;
                } else if ((depth = tag_depth(t->path)) > 0 && v > (unsigned long long) depth)
                        return EINVAL;
        }
        snprintf(shown, CONTENT_MAX, "%llu\n", v);
        return 0;
}

/* blk_mq_init_sched(): a switch to another elevator (the same name is no switch, see
 * elevator_change()) puts nr_requests at the new one's default. Disks whose tag depth the
 * testbed does not say are left as they are. */
static void reset_nr_requests(const char *sched_path, const char *before, const char *after) {
        char was[CONTENT_MAX], now[CONTENT_MAX], path[4200], value[32];
        long long depth;
        int fd;

        active_of(before, was);
        active_of(after, now);
        /* 6.18 and 7.3's elevator_change() switches unless an elevator is active and matches:
         * "none" while none is active is a switch again. */
        if (!offers(after, "none") || (strcmp(was, now) == 0 && !(strcmp(now, "none") == 0 && kernel_version() >= 6018)))
                return;
        snprintf(path, sizeof(path), "%.*s/nr_requests", (int) (strrchr(sched_path, '/') - sched_path), sched_path);
        depth = tag_depth(path);
        if (depth <= 0)
                return;
        snprintf(value, sizeof(value), "%lld\n",
                 strcmp(now, "none") == 0 ? depth : 2 * (depth < BLKDEV_DEFAULT_RQ ? depth : BLKDEV_DEFAULT_RQ));
        fd = real_openat(AT_FDCWD, path, O_WRONLY | O_TRUNC | O_CLOEXEC, 0);
        if (fd < 0)
                return;
        (void) real_write(fd, value, strlen(value));
        (void) real_close(fd);
}

/* The file beside t's attribute in its queue directory. */
static void sibling(const struct tracked *t, const char *name, char out[static 4200]) {
        snprintf(out, 4200, "%.*s/%s", (int) (strrchr(t->path, '/') - t->path), t->path, name);
}

/* A store of a limits-backed attribute: max_sectors_kb as queue_max_sectors_store() takes it
 * (kstrtoul(), EINVAL below a page or above max_hw_sectors_kb; 0, "the default" on 6.12+, is
 * not played: hvtuned's allowlist starts at 4), add_random and iostats as
 * queue_feature_store() (any number, nonzero sets the feature). */
static int store_limit(const struct tracked *t, const char *buf, size_t len, char shown[static CONTENT_MAX]) {
        char path[4200];
        unsigned long long v;
        long long hw;

        if (parse_number(buf, len, 10, UINT_MAX, &v))
                return EINVAL;
        if (strcmp(strrchr(t->path, '/'), "/max_sectors_kb") != 0) {
                snprintf(shown, CONTENT_MAX, "%d\n", v != 0);
                return 0;
        }
        sibling(t, "max_hw_sectors_kb", path);
        hw = read_number(path);
        if (v < PAGE_KB || (hw > 0 && v > (unsigned long long) hw))
                return EINVAL;
        snprintf(shown, CONTENT_MAX, "%llu\n", v);
        return 0;
}

/* blk_apply_bdi_limits() after a limits commit (block/blk-settings.c), as lib/readahead-rule.h
 * has the kernel's rule: 6.12 (played as 6.12.118, with the stable backport of 7b720c720253)
 * raises read-ahead to 2 x io_opt and at least 128 KiB, never lowering it; 6.17 and on take
 * max_sectors for io_opt on a rotational disk that reports none. Of the kernels played, 5.10
 * and 6.1 commit nothing at a store of these attributes and do not touch read-ahead (the rule
 * applies there at an NVMe revalidation, not at a sysfs store). */
static void apply_bdi_limits(const struct tracked *t) {
        char path[4200], value[32];
        unsigned version = kernel_version();
        struct hvt_ra_queue q = {};
        struct hvt_ra_rule rule;
        long long ra, n;
        uint64_t after;
        int fd;

        if (version < HVT_KERNEL_VERSION(6, 12))
                return;
        sibling(t, "optimal_io_size", path);
        n = read_number(path);
        q.io_opt_bytes = n > 0 ? (uint64_t) n : 0;
        sibling(t, "rotational", path);
        q.rotational = read_number(path) == 1;
        sibling(t, "max_sectors_kb", path);
        n = read_number(path);
        q.max_sectors_kb = n > 0 ? (uint64_t) n : 0;
        q.nvme = strstr(t->path, "/nvme/") != NULL;
        hvt_readahead_rule(version, &q, &rule);
        sibling(t, "read_ahead_kb", path);
        ra = read_number(path);
        if (ra < 0)
                return;
        after = hvt_readahead_after(&rule, (uint64_t) ra);
        if (after == (uint64_t) ra)
                return;
        snprintf(value, sizeof(value), "%llu\n", (unsigned long long) after);
        fd = real_openat(AT_FDCWD, path, O_WRONLY | O_TRUNC | O_CLOEXEC, 0);
        if (fd < 0)
                return;
        (void) real_write(fd, value, strlen(value));
        (void) real_close(fd);
}

/* Puts value into the file at path, when there is one. */
static void store_at(const char *path, const char *value) {
        int fd = real_openat(AT_FDCWD, path, O_WRONLY | O_TRUNC | O_CLOEXEC, 0);

        if (fd < 0)
                return;
        (void) real_write(fd, value, strlen(value));
        (void) real_close(fd);
}

/* The queue's rq_timeout, in jiffies, as the other of its two attributes shows it:
 * sdev_store_timeout() (drivers/scsi/scsi_sysfs.c) sets seconds x HZ, which io_timeout shows
 * as jiffies_to_msecs(); queue_io_timeout_store() (block/blk-sysfs.c) sets
 * msecs_to_jiffies(), rounded up, which the LUN's timeout shows divided by HZ. Every
 * version. t's path is ".../H:C:T:L/timeout" or ".../H:C:T:L/block/sdX/queue/io_timeout". */
static void couple_timeouts(const struct tracked *t, unsigned long long jiffies) {
        char path[4200], value[32], *cut;
        /* The LUN's block/ read with getdents64() into the stack: opendir()'s 32 KiB buffer
         * would be the emulation's in the program's heap, and in the peak RSS bench/run
         * counts against hvtuned. */
        char entries[1024] __attribute__((aligned(8)));
        const struct dirent64 *e = NULL;
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "%s", t->path);
        if (t->kind == IO_TIMEOUT_MS) {
                /* ".../H:C:T:L/block/sdX/queue/io_timeout": a SCSI disk's LUN is its parent's
                 * parent. Any other disk (an NVMe namespace, below its controller) has no LUN
                 * timeout: its io_timeout is its queue's alone. */
                for (int i = 0; i < 3 && (cut = strrchr(path, '/')); i++)
                        *cut = '\0';
                cut = strrchr(path, '/');
                if (!cut || strcmp(cut, "/block") != 0)
                        return;
                *cut = '\0';
                if (!strchr(strrchr(path, '/') ? strrchr(path, '/') : path, ':'))
                        return;   /* not a SCSI disk: no LUN timeout */
                snprintf(path + strlen(path), sizeof(path) - strlen(path), "/timeout");
                snprintf(value, sizeof(value), "%llu\n", jiffies / HZ);
                store_at(path, value);
                return;
        }
        *strrchr(path, '/') = '\0';
        snprintf(path + strlen(path), sizeof(path) - strlen(path), "/block");
        fd = real_openat(AT_FDCWD, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_DIRECTORY, 0);
        if (fd < 0)
                return;
        n = syscall(SYS_getdents64, fd, entries, sizeof(entries));
        for (ssize_t off = 0; off < n; off += e->d_reclen) {
                e = (const struct dirent64 *) (entries + off);
                if (e->d_name[0] != '.')
                        break;
        }
        if (n > 0 && e && e->d_name[0] != '.') {
                snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%.64s/queue/io_timeout", e->d_name);
                snprintf(value, sizeof(value), "%llu\n", jiffies * 1000 / HZ);
                store_at(path, value);
        }
        (void) real_close(fd);
}

/* 6.18's and 7.3's elv_iosched_store() and queue_requests_store() take update_nr_hwq_lock with a
 * trylock and answer EBUSY when someone else holds it: $HVTUNED_TEST_KERNEL_BUSY="sdX:N"
 * plays N such writes to sdX's scheduler or nr_requests, counted in this process; "sdX:N+K"
 * lets the first K through (busy at stop, not at start). */
static bool trylock_fails(const struct tracked *t) {
        static unsigned seen;
        const char *spec = getenv("HVTUNED_TEST_KERNEL_BUSY"), *colon, *plus;
        unsigned n, skip;
        char needle[64];

        if (kernel_version() < 6018 || !spec || !(colon = strchr(spec, ':')))
                return false;
        snprintf(needle, sizeof(needle), "/block/%.*s/queue/", (int) (colon - spec), spec);
        if (!strstr(t->path, needle))
                return false;
        n = (unsigned) atoi(colon + 1);
        skip = (plus = strchr(colon, '+')) ? (unsigned) atoi(plus + 1) : 0;
        seen++;
        return seen > skip && seen <= skip + n;
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
        char value[CONTENT_MAX], shown[CONTENT_MAX];
        unsigned long long v, jiffies = 0;
        int error;

        init();
        t = find(fd);
        if (!t)
                return real_write(fd, buf, len);
        /* kernfs does not call the store function for nothing. */
        if (len == 0)
                return 0;

        snprintf(value, sizeof(value), "%.*s", (int) (len < sizeof(value) ? len : sizeof(value) - 1), (const char *) buf);
        switch (t->kind) {
        case DRIVER_BIND:
                n_depths = next_depth = 0;   /* the hosts re-probed get their depths anew */
                value[strcspn(value, " \n")] = '\0';
                put_back(t, value);
                error = wait_for_kernel(t->path);
                if (error) {
                        errno = error;
                        return -1;
                }
                return (ssize_t) len;
        case PARAM_UINT:
                /* param_set_uint(): kstrtouint(), ERANGE beyond UINT_MAX. */
                error = parse_number(buf, len, 0, UINT_MAX, &v);
                if (!error)
                        snprintf(shown, sizeof(shown), "%llu\n", v);
                break;
        case SCHEDULER:
                error = trylock_fails(t) ? EBUSY : store_scheduler(t->old, buf, len, shown);
                break;
        case LIMITS:
                error = store_limit(t, buf, len, shown);
                break;
        case TIMEOUT_S:
                /* sdev_store_timeout(): a number of seconds (garbage, which older kernels take
                 * as whatever sscanf() leaves, is not played: hvtuned writes numbers). */
                error = parse_number(buf, len, 10, INT_MAX / HZ, &v) ? EINVAL : 0;
                jiffies = v * HZ;
                if (!error)
                        snprintf(shown, sizeof(shown), "%llu\n", v);
                break;
        case IO_TIMEOUT_MS:
                /* queue_io_timeout_store(): kstrtou32(), EINVAL for 0. */
                error = parse_number(buf, len, 10, UINT_MAX, &v) || v == 0 ? EINVAL : 0;
                jiffies = (v * HZ + 999) / 1000;
                if (!error)
                        snprintf(shown, sizeof(shown), "%llu\n", jiffies * 1000 / HZ);
                break;
        case READ_AHEAD_KB:
        case NR_REQUESTS:
                /* queue_var_store(): kstrtoul(), base 10; EINVAL for anything it refuses or
                 * beyond UINT_MAX. */
                error = parse_number(buf, len, 10, UINT_MAX, &v) ? EINVAL : 0;
                if (!error && t->kind == READ_AHEAD_KB)
                        snprintf(shown, sizeof(shown), "%llu\n", v / PAGE_KB * PAGE_KB);
                else if (!error)
                        error = trylock_fails(t) ? EBUSY : store_nr_requests(t, v, shown);
                break;
        default:
                error = EINVAL;
                break;
        }
        if (error) {
                put_back(t, t->old);
                errno = error;
                return -1;
        }
        if (t->kind == SCHEDULER)
                reset_nr_requests(t->path, t->old, shown);
        snprintf(t->old, sizeof(t->old), "%s", shown);
        put_back(t, shown);
        if (t->kind == LIMITS)
                apply_bdi_limits(t);
        else if (t->kind == TIMEOUT_S || t->kind == IO_TIMEOUT_MS)
                couple_timeouts(t, jiffies);
        return (ssize_t) len;
}

/* The machine's, with the played kernel's release while a testbed is played. */
int uname(struct utsname *buf) {
        static int (*real_uname)(struct utsname *);
        int r;

        if (!real_uname)
                real_uname = (int (*)(struct utsname *)) dlsym(RTLD_NEXT, "uname");
        r = real_uname(buf);
        if (r == 0 && getenv("UMOCKDEV_DIR"))
                snprintf(buf->release, sizeof(buf->release), "%s", kernel_release());
        return r;
}

int close(int fd) {
        struct tracked *t;

        init();
        t = find(fd);
        if (t) {
                /* What a write could not take (a bind's device name) is not left behind. */
                if (t->dirty)
                        put_back(t, t->old);
                t->path[0] = '\0';
                t->fd = -1;
                in_use[t - tracked].used = false;
        }
        return real_close(fd);
}
