/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: fuzzing the classification walk of lib/classify.c: hvt_classify_syspath() and
 * hvt_classify_controller_syspath(), what hvt_classify() does once udev has named the device
 * and what the controller scan does for each SCSI host it lists, on a sysfs-like tree the input describes. libudev accepts only
 * syspaths below /sys, so the tree is built in the private directory with its top at
 * ROOT/sys/devices, and the walk is given that top. The input's lines, paths relative to ROOT:
 *
 *   disk=PATH            classify the whole disk at PATH (up to 4 of them)
 *   host=PATH            classify the scsi_host at PATH (up to 4)
 *   dir=PATH             a directory
 *   file=PATH=TEXT       a file; TEXT with the escapes \n, \t, \0 and \\
 *   link=PATH=TARGET     a symbolic link to TARGET as given: relative, absolute, dangling, a loop
 *
 * A component NAME*N of a path is N components NAME (at most 128 in a path): absurd depth, and
 * syspaths longer than PATH_MAX. The syspaths of disk= and host= lines are made first, of real
 * directories as sysfs has them, so that nothing later replaces one of their components; an
 * entry whose parent is no directory, or which exists, is left out. A syspath with an empty,
 * "." or ".." component is not made, only walked.
 *
 * The walk's calls of openat(), fstatat() and readlinkat() are seen through the linker's
 * --wrap (meson.build), and checked: each names one entry of a directory on the syspath
 * strictly below top (or of the syspath itself), never of one above the nearest VMBus device;
 * opens are read-only and follow no link; there are at most three calls a level and a few more.
 * So the walk reads nothing outside the tree, and terminates whatever the links. The result is
 * checked against a model of the tree built here from the same files (a device is a directory
 * with a subsystem link, its subsystem the link's last component: sysfs makes the link and
 * uevent together): a disk is Hyper-V's exactly when its nearest VMBus ancestor is bound to
 * hv_storvsc and there is a SCSI LUN (a device of "scsi" named H:C:T:L, as the kernel names
 * LUNs and no host or target) between them, then with that LUN's H:C:T:L, the VMBus
 * device's device_id (or its name) and class, the LUN's INQUIRY strings and the disk's diskseq;
 * a scsi_host is storvsc's when its nearest VMBus ancestor is bound, with its figures. A value
 * the model cannot be sure of (a file longer than sysfs makes one, a number written oddly) is
 * left unchecked. */
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/sysmacros.h>

#include "controller.h"
#include "disk.h"
#include "fuzz.h"

#define PATHS_MAX 4
#define COMPONENTS_MAX 128
#define SYSPATH_MAX 16384
/* The longest small attribute the model is sure the walk reads (a braced GUID and a newline
 * is 39 bytes). */
#define SMALL_MAX 40

static char root[PATH_MAX], top[PATH_MAX];
static int root_fd = -1;

/* ---- what the walk does to the file system ---- */

enum call_kind { CALL_OPEN, CALL_STAT, CALL_READLINK };

struct call {
        enum call_kind kind;
        char *path;  /* absolute */
        int flags;
};

static struct {
        bool on;
        struct call calls[3 * COMPONENTS_MAX + 32];
        size_t n, dropped;
} seen;

int __real_openat(int dirfd, const char *path, int flags, ...);
int __real_openat64(int dirfd, const char *path, int flags, ...);
int __real_fstatat(int dirfd, const char *path, struct stat *st, int flags);
int __real_fstatat64(int dirfd, const char *path, struct stat *st, int flags);
int __real_stat(const char *path, struct stat *st);
int __real_stat64(const char *path, struct stat64 *st);
ssize_t __real_readlinkat(int dirfd, const char *path, char *buf, size_t size);
int __wrap_openat(int dirfd, const char *path, int flags, ...);
int __wrap_openat64(int dirfd, const char *path, int flags, ...);
int __wrap_fstatat(int dirfd, const char *path, struct stat *st, int flags);
int __wrap_fstatat64(int dirfd, const char *path, struct stat *st, int flags);
int __wrap_stat(const char *path, struct stat *st);
int __wrap_stat64(const char *path, struct stat64 *st);
ssize_t __wrap_readlinkat(int dirfd, const char *path, char *buf, size_t size);

static void note(enum call_kind kind, int dirfd, const char *path, int flags) {
        char dir[PATH_MAX + 32] = "", proc[64];
        char *full;

        if (!seen.on)
                return;
        if (seen.n >= ELEMENTSOF(seen.calls)) {
                seen.dropped++;
                return;
        }
        if (path[0] != '/' && dirfd != AT_FDCWD) {
                ssize_t n;

                snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dirfd);
                n = __real_readlinkat(AT_FDCWD, proc, dir, sizeof(dir) - 1);
                dir[n < 0 ? 0 : n] = '\0';
        } else if (path[0] != '/' && !getcwd(dir, sizeof(dir)))
                abort();
        if (asprintf(&full, "%s%s%s", path[0] == '/' ? "" : dir, path[0] == '/' ? "" : "/", path) < 0)
                abort();
        seen.calls[seen.n++] = (struct call) { kind, full, flags };
}

static mode_t open_mode(int flags, va_list ap) {
        return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, mode_t) : 0;
}

int __wrap_openat(int dirfd, const char *path, int flags, ...) {
        va_list ap;
        mode_t mode;

        va_start(ap, flags);
        mode = open_mode(flags, ap);
        va_end(ap);
        note(CALL_OPEN, dirfd, path, flags);
        return __real_openat(dirfd, path, flags, mode);
}

int __wrap_openat64(int dirfd, const char *path, int flags, ...) {
        va_list ap;
        mode_t mode;

        va_start(ap, flags);
        mode = open_mode(flags, ap);
        va_end(ap);
        note(CALL_OPEN, dirfd, path, flags);
        return __real_openat64(dirfd, path, flags, mode);
}

int __wrap_fstatat(int dirfd, const char *path, struct stat *st, int flags) {
        note(CALL_STAT, dirfd, path, flags);
        return __real_fstatat(dirfd, path, st, flags);
}

int __wrap_fstatat64(int dirfd, const char *path, struct stat *st, int flags) {
        note(CALL_STAT, dirfd, path, flags);
        return __real_fstatat64(dirfd, path, st, flags);
}

/* The walk's stat() of the disk's directory, for its inode (lib/classify.c: umockdev 0.15.4
 * redirects stat(), not fstatat()). */
int __wrap_stat(const char *path, struct stat *st) {
        note(CALL_STAT, AT_FDCWD, path, 0);
        return __real_stat(path, st);
}

int __wrap_stat64(const char *path, struct stat64 *st) {
        note(CALL_STAT, AT_FDCWD, path, 0);
        return __real_stat64(path, st);
}

ssize_t __wrap_readlinkat(int dirfd, const char *path, char *buf, size_t size) {
        note(CALL_READLINK, dirfd, path, 0);
        return __real_readlinkat(dirfd, path, buf, size);
}

static void seen_start(void) {
        seen.n = seen.dropped = 0;
        seen.on = true;
}

static void seen_clear(void) {
        seen.on = false;
        for (size_t i = 0; i < seen.n; i++)
                free(seen.calls[i].path);
        seen.n = seen.dropped = 0;
}

/* ---- the tree ---- */

static void setup(void) {
        snprintf(root, sizeof(root), "%s/root", fuzz_scratch());
        snprintf(top, sizeof(top), "%s/sys/devices", root);
        if (mkdir(root, 0700) < 0)
                abort();
        root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0)
                abort();
}

/* PATH with NAME*N expanded, as a list of components. */
struct path {
        char *comp[COMPONENTS_MAX];
        size_t n;
        bool canonical;  /* no empty, "." or ".." component, and not too long: can be made */
};

static void path_done(struct path *p) {
        for (size_t i = 0; i < p->n; i++)
                free(p->comp[i]);
        p->n = 0;
}

static void path_parse(const char *text, struct path *p) {
        size_t total = 0;

        *p = (struct path) { .canonical = true };
        for (const char *s = text;; s++) {
                size_t len = strcspn(s, "/");
                char *name = strndup(s, len), *star, *end;
                unsigned long times = 1;

                if (!name)
                        abort();
                star = strrchr(name, '*');
                if (star && star > name && star[1]) {
                        times = strtoul(star + 1, &end, 10);
                        if (*end || star[1] < '0' || star[1] > '9')
                                times = 1;
                        else
                                *star = '\0';
                }
                if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || times > COMPONENTS_MAX - p->n)
                        p->canonical = false;
                for (unsigned long i = 0; i < times && p->n < COMPONENTS_MAX; i++) {
                        total += strlen(name) + 1;
                        p->comp[p->n] = strdup(name);
                        if (!p->comp[p->n++])
                                abort();
                }
                free(name);
                if (total > SYSPATH_MAX)
                        p->canonical = false;
                s += len;
                if (!*s)
                        break;
        }
}

/* "ROOT/a/b/c" of the components, in buf[SYSPATH_MAX + PATH_MAX]. */
static void path_join(const struct path *p, char *buf, size_t size) {
        size_t off = (size_t) snprintf(buf, size, "%s", root);

        for (size_t i = 0; i < p->n && off < size; i++)
                off += (size_t) snprintf(buf + off, size - off, "/%s", p->comp[i]);
}

/* The directory of components [0, n), made as needed; -1 when one is no directory. */
static int path_dir(const struct path *p, size_t n, bool make) {
        int fd = dup(root_fd);

        for (size_t i = 0; fd >= 0 && i < n; i++) {
                int sub = openat(fd, p->comp[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                if (sub < 0 && errno == ENOENT && make && mkdirat(fd, p->comp[i], 0755) == 0)
                        sub = openat(fd, p->comp[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                close(fd);
                fd = sub;
        }
        return fd;
}

static size_t unescape(char *s) {
        char *o = s;

        for (const char *p = s; *p; p++) {
                if (*p != '\\' || !p[1]) {
                        *o++ = *p;
                        continue;
                }
                p++;
                *o++ = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p == '0' ? '\0' : *p;
        }
        return (size_t) (o - s);
}

/* The parent directory of the last entry made, by the text of its path: consecutive lines of
 * an input mostly make entries of one directory, and a directory once made stays. */
static struct {
        char *text;
        int fd;
} parent = { .fd = -1 };

static void parent_forget(void) {
        free(parent.text);
        parent.text = NULL;
        if (parent.fd >= 0)
                close(parent.fd);
        parent.fd = -1;
}

/* The directory of all but the last component of p (whose text is v), not to be closed. */
static int parent_dir(const struct path *p, const char *v) {
        const char *slash = strrchr(v, '/');
        size_t len = slash ? (size_t) (slash - v) : 0;

        if (parent.text && strlen(parent.text) == len && strncmp(parent.text, v, len) == 0)
                return parent.fd;
        parent_forget();
        parent.fd = path_dir(p, p->n - 1, true);
        parent.text = strndup(v, len);
        if (!parent.text)
                abort();
        return parent.fd;
}

static void make_entry(const char *key, char *v) {
        char *eq = strcmp(key, "dir") == 0 ? NULL : strchr(v, '=');
        struct path p;
        int fd;

        if (strcmp(key, "dir") != 0) {
                if (!eq)
                        return;
                *eq++ = '\0';
        }
        path_parse(v, &p);
        if (p.canonical && p.n > 0) {
                fd = parent_dir(&p, v);
                if (fd >= 0) {
                        const char *name = p.comp[p.n - 1];

                        if (strcmp(key, "dir") == 0)
                                (void) mkdirat(fd, name, 0755);
                        else if (strcmp(key, "link") == 0)
                                (void) symlinkat(eq, fd, name);
                        else {
                                size_t len = unescape(eq);
                                int f = openat(fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
                                struct stat st;

                                /* Only a regular file: an O_TRUNC that got a directory failed. */
                                if (f >= 0 && fstat(f, &st) == 0 && S_ISREG(st.st_mode) &&
                                    write(f, eq, len) != (ssize_t) len)
                                        abort();
                                if (f >= 0)
                                        close(f);
                        }
                }
        }
        path_done(&p);
}

/* ---- the model ---- */

enum attr_state { ATTR_ABSENT, ATTR_TEXT, ATTR_ODD };

/* dir/name as sysfs would give it: absent (or no regular file), text without its trailing
 * newlines when it is at most max bytes without a NUL, or odd. */
static enum attr_state attr(const char *dir, size_t dir_len, const char *name, size_t max, char *buf, size_t size) {
        char path[SYSPATH_MAX + PATH_MAX];
        struct stat st;
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "%.*s/%s", (int) dir_len, dir, name);
        if (strlen(path) >= PATH_MAX)
                return ATTR_ABSENT;  /* no system call takes it */
        fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return ATTR_ABSENT;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                close(fd);
                return ATTR_ABSENT;
        }
        n = read(fd, buf, size - 1);
        close(fd);
        if (n < 0)
                abort();
        if ((size_t) n > max || memchr(buf, '\0', (size_t) n))
                return ATTR_ODD;
        while (n > 0 && buf[n - 1] == '\n')
                n--;
        buf[n] = '\0';
        return ATTR_TEXT;
}

/* The last component of the link dir/name, as libudev names a subsystem or driver; "" when it
 * is no link. */
static void link_last(const char *dir, size_t dir_len, const char *name, char *buf, size_t size) {
        char path[SYSPATH_MAX + PATH_MAX], target[PATH_MAX];
        ssize_t n;

        *buf = '\0';
        snprintf(path, sizeof(path), "%.*s/%s", (int) dir_len, dir, name);
        if (strlen(path) >= PATH_MAX)
                return;
        n = readlink(path, target, sizeof(target) - 1);
        if (n < 0)
                return;
        target[n] = '\0';
        snprintf(buf, size, "%s", strrchr(target, '/') ? strrchr(target, '/') + 1 : target);
}

static const char *last_of(const char *syspath, size_t len, char *buf, size_t size) {
        const char *slash = memrchr(syspath, '/', len);

        snprintf(buf, size, "%.*s", (int) (len - (size_t) (slash - syspath) - 1), slash + 1);
        return buf;
}

/* Whether the last component of dir[0..dir_len) is a LUN's name: H:C:T:L, as
 * lib/classify.c's read_address() parses it. */
static bool is_lun_name(const char *dir, size_t dir_len) {
        char name[PATH_MAX];
        unsigned h, c, t;
        uint64_t l;
        int consumed = 0;

        last_of(dir, dir_len, name, sizeof(name));
        return sscanf(name, "%u:%u:%u:%" SCNu64 "%n", &h, &c, &t, &l, &consumed) == 4 && name[consumed] == '\0';
}

struct model {
        size_t levels;   /* directories strictly between top and the syspath */
        size_t vmbus;    /* length of the nearest VMBus device's path; 0: none */
        bool bound;      /* that device's driver is hv_storvsc */
        bool hv_pci;     /* that device's driver is hv_pci */
        size_t sdev;     /* the nearest SCSI LUN between them; 0: none */
        size_t nvme;     /* the nearest device, when its subsystem is nvme or nvme-subsystem; 0: not */
        bool head;       /* that subsystem is nvme-subsystem */
};

static void model_walk(const char *syspath, struct model *m) {
        size_t top_len = strlen(top);

        bool device_below = false;

        *m = (struct model) {};
        for (size_t len = strlen(syspath); len > top_len; len--) {
                char subsystem[PATH_MAX], driver[PATH_MAX];

                if (syspath[len] != '/')
                        continue;
                m->levels++;
                if (m->vmbus)
                        continue;
                link_last(syspath, len, "subsystem", subsystem, sizeof(subsystem));
                if (!*subsystem)
                        continue;
                if (strcmp(subsystem, "vmbus") == 0) {
                        m->vmbus = len;
                        link_last(syspath, len, "driver", driver, sizeof(driver));
                        m->bound = strcmp(driver, "hv_storvsc") == 0;
                        m->hv_pci = strcmp(driver, "hv_pci") == 0;
                } else if (!m->sdev && strcmp(subsystem, "scsi") == 0 && is_lun_name(syspath, len))
                        m->sdev = len;
                else if (!device_below && (strcmp(subsystem, "nvme") == 0 || strcmp(subsystem, "nvme-subsystem") == 0)) {
                        m->nvme = len;
                        m->head = strcmp(subsystem, "nvme-subsystem") == 0;
                }
                device_below = true;
        }
}

/* ---- the checks ---- */

static void check_calls(const char *syspath, const struct model *m) {
        size_t top_len = strlen(top), len = strlen(syspath);

        fuzz_check(seen.dropped == 0 && seen.n <= 3 * m->levels + 16, "%zu calls for %zu levels", seen.n + seen.dropped,
                   m->levels);
        for (size_t i = 0; i < seen.n; i++) {
                const struct call *c = &seen.calls[i];
                const char *slash = strrchr(c->path, '/');
                size_t dir = (size_t) (slash - c->path);

                fuzz_check(dir > top_len && dir <= len && strncmp(c->path, syspath, dir) == 0 &&
                           (syspath[dir] == '/' || syspath[dir] == '\0') && slash[1] && strcmp(slash, "/.") != 0 &&
                           strcmp(slash, "/..") != 0,
                           "%s: not an entry of a directory of the syspath below %s", c->path, top);
                fuzz_check(!m->vmbus || dir >= m->vmbus, "%s: above the VMBus device", c->path);
                if (c->kind == CALL_OPEN)
                        fuzz_check((c->flags & O_ACCMODE) == O_RDONLY && (c->flags & O_NOFOLLOW) && !(c->flags & O_CREAT),
                                   "%s opened with flags %#x", c->path, (unsigned) c->flags);
        }
}

/* Whether syspath is one the walk may take: below top, of names only (no empty, "." or ".."
 * component). Others are no device's, and nothing is read for them. */
static bool walkable(const char *syspath) {
        size_t n = strlen(top);
        char *copy, *save = NULL;
        bool ok;

        if (strncmp(syspath, top, n) != 0 || syspath[n] != '/')
                return false;
        copy = strdup(syspath + n + 1);
        if (!copy)
                abort();
        ok = *copy && copy[0] != '/' && copy[strlen(copy) - 1] != '/' && !strstr(copy, "//");
        for (char *c = strtok_r(copy, "/", &save); ok && c; c = strtok_r(NULL, "/", &save))
                ok = strcmp(c, ".") != 0 && strcmp(c, "..") != 0;
        free(copy);
        return ok;
}

/* The calls of the walk on a syspath the model has seen. */
static void check_walk(const char *syspath, const struct model *m, const char *what) {
        fuzz_check(!seen.on, "recording");
        /* The wrap must see the walk, or the checks would pass for nothing: a walk over a
         * level makes a call at least. */
        if (m->levels >= 1 && strlen(syspath) < PATH_MAX)
                fuzz_check(seen.n > 0, "%s walked %s unseen: does the library call other symbols than "
                           "meson.build wraps (a _FORTIFY_SOURCE build)?", what, syspath);
        check_calls(syspath, m);
}

static bool canonical_decimal(const char *s, uint64_t max, uint64_t *ret) {
        uint64_t v = 0;

        if (!*s || (s[0] == '0' && s[1]))
                return false;
        for (; *s; s++) {
                if (*s < '0' || *s > '9' || v > (max - (uint64_t) (*s - '0')) / 10)
                        return false;
                v = v * 10 + (uint64_t) (*s - '0');
        }
        *ret = v;
        return true;
}

/* What the VMBus device says of the controller: 1 known into guid, 0 unsure, -1 no GUID. */
static int model_controller(const char *syspath, size_t vmbus, char guid[static HVT_GUID_STR_MAX]) {
        char buf[SMALL_MAX + 64], name[PATH_MAX];

        switch (attr(syspath, vmbus, "device_id", SMALL_MAX, buf, sizeof(buf))) {
        case ATTR_ODD:
                return 0;
        case ATTR_TEXT:
                if (hvt_guid_normalize(buf, guid) == 0)
                        return 1;
                break;
        case ATTR_ABSENT:
                break;
        }
        return hvt_guid_normalize(last_of(syspath, vmbus, name, sizeof(name)), guid) == 0 ? 1 : -1;
}

/* The class: 1 known into kind, 0 unsure. */
static int model_kind(const char *syspath, size_t vmbus, enum hvt_kind *kind) {
        static const char *const classes[] = {
                [HVT_KIND_SCSI] = "{ba6163d9-04a1-4d29-b605-72e2ffb1dc7f}",
                [HVT_KIND_IDE] = "{32412632-86cb-44a2-9b5c-50d1417354f5}",
                [HVT_KIND_FC] = "{2f9bcc4a-0069-4af3-b76b-6fd0be528cda}",
        };
        char buf[SMALL_MAX + 64], guid[HVT_GUID_STR_MAX];
        enum attr_state s = attr(syspath, vmbus, "class_id", SMALL_MAX, buf, sizeof(buf));

        *kind = HVT_KIND_UNKNOWN;
        if (s == ATTR_ODD)
                return 0;
        for (size_t i = 0; s == ATTR_TEXT && i < ELEMENTSOF(classes); i++)
                if (hvt_guid_normalize(buf, guid) == 0 && strcmp(guid, classes[i]) == 0)
                        *kind = (enum hvt_kind) i;
        return 1;
}

static void check_string(const char *syspath, size_t dir, const char *name, size_t width, const char *got) {
        char buf[SMALL_MAX + 64], want[64];
        enum attr_state s = attr(syspath, dir, name, SMALL_MAX, buf, sizeof(buf));

        if (s == ATTR_ODD)
                return;
        hvt_strip_copy(want, width, s == ATTR_TEXT ? buf : NULL);
        fuzz_check(strcmp(want, got) == 0, "%s \"%s\", the file says \"%s\"", name, got, want);
}

/* What the walk found above the LUN: the disk's controller and kind, its instance. */
static void check_disk_common(const char *syspath, const struct model *m, const struct hvt_disk *d, int ctrl,
                              const char *guid) {
        char buf[SMALL_MAX + 64];
        enum hvt_kind kind;
        uint64_t seq;

        fuzz_check(strcmp(d->syspath, syspath) == 0 && d->sysname == strrchr(d->syspath, '/') + 1, "syspath");
        fuzz_check(strlen(d->device_syspath) < strlen(syspath) && strlen(d->device_syspath) > m->vmbus &&
                   strncmp(d->device_syspath, syspath, strlen(d->device_syspath)) == 0 &&
                   syspath[strlen(d->device_syspath)] == '/', "LUN %s is no directory between", d->device_syspath);
        if (ctrl > 0)
                fuzz_check(strcmp(d->controller, guid) == 0, "controller %s, the tree says %s", d->controller, guid);
        if (model_kind(syspath, m->vmbus, &kind))
                fuzz_check(d->kind == kind, "kind %d, the class says %d", d->kind, kind);
        fuzz_check(strcmp(d->dev, "259:1048575") == 0, "dev %s", d->dev);
        switch (attr(syspath, strlen(syspath), "diskseq", SMALL_MAX, buf, sizeof(buf))) {
        case ATTR_ABSENT:
                fuzz_check(d->diskseq == 0, "diskseq %" PRIu64 " without the file", d->diskseq);
                break;
        case ATTR_TEXT:
                if (canonical_decimal(buf, UINT64_MAX, &seq))
                        fuzz_check(d->diskseq == seq, "diskseq %" PRIu64 ", the file says %s", d->diskseq, buf);
                break;
        case ATTR_ODD:
                break;
        }
}

/* Whether the disk's diskseq is there but is no plain number: hvt_disk_read_instance()
 * refuses such a disk (-EBADMSG, -EFBIG) rather than take it for 0, which would make its
 * record another instance's; or, for text sscanf() reads a number from, takes it. Either
 * answer is right. */
static bool diskseq_odd(const char *syspath) {
        char buf[SMALL_MAX + 64];
        uint64_t seq;

        switch (attr(syspath, strlen(syspath), "diskseq", SMALL_MAX, buf, sizeof(buf))) {
        case ATTR_ABSENT:
                return false;
        case ATTR_TEXT:
                return !canonical_decimal(buf, UINT64_MAX, &seq);
        case ATTR_ODD:
        default:
                return true;
        }
}

/* An NVMe namespace: Azure's when its parent's model is one of Azure's, the hidden per-path
 * devices excepted; then with its nsid, the role Azure's rule gives it, and the hv_pci device
 * above a direct namespace's controller. */
static void check_nvme(const char *syspath, const struct model *m, int r, struct hvt_disk *d) {
        char buf[SMALL_MAX + 64], name[PATH_MAX], guid[HVT_GUID_STR_MAX];
        unsigned x, y, z;
        int consumed = 0, kind, ctrl;
        uint64_t nsid;

        last_of(syspath, strlen(syspath), name, sizeof(name));
        if (sscanf(name, "nvme%uc%un%u%n", &x, &y, &z, &consumed) == 3 && name[consumed] == '\0') {
                fuzz_check(r == 0, "a per-path device %s, classified: %d", name, r);
                return;
        }
        switch (attr(syspath, m->nvme, "model", 63, buf, sizeof(buf))) {
        case ATTR_ABSENT:
                fuzz_check(r == 0, "no model, yet classified: %d", r);
                return;
        case ATTR_ODD:
                fuzz_check(r <= 0, "an odd model, classified");
                return;
        case ATTR_TEXT:
                break;
        }
        kind = hvt_nvme_model_kind(buf);
        if (kind < 0) {
                fuzz_check(r == 0, "model \"%s\" is not Azure's, yet classified: %d", buf, r);
                return;
        }
        if (attr(syspath, strlen(syspath), "nsid", SMALL_MAX, buf, sizeof(buf)) != ATTR_TEXT ||
            !canonical_decimal(buf, UINT32_MAX, &nsid) || nsid == 0) {
                if (r > 0)
                        hvt_disk_done(d);
                return;  /* unsure, or refused with an error: either may be right */
        }
        fuzz_check(r == 1 || (r < 0 && diskseq_odd(syspath)), "an Azure namespace refused with %d", r);
        if (r != 1)
                return;
        fuzz_check(d->kind == (enum hvt_kind) kind && d->nsid == nsid && d->multipath_head == m->head, "kind, nsid or layout");
        fuzz_check(strcmp(d->syspath, syspath) == 0 && strlen(d->device_syspath) == m->nvme &&
                   strncmp(d->device_syspath, syspath, m->nvme) == 0, "parent %s", d->device_syspath);
        if (kind != HVT_KIND_NVME_ACCELERATOR)
                fuzz_check(d->role == HVT_ROLE_LOCAL && d->lun == HVT_LUN_NONE, "a Direct Disk's role");
        else if (nsid == 1)
                fuzz_check(d->role == HVT_ROLE_OS && d->lun == HVT_LUN_NONE, "namespace 1's role");
        else
                fuzz_check(d->role == HVT_ROLE_DATA && d->lun == nsid - 2, "a data disk's LUN");
        ctrl = m->vmbus && m->hv_pci ? model_controller(syspath, m->vmbus, guid) : -1;
        if (ctrl >= 0)
                fuzz_check(d->via_hv_pci == (ctrl > 0 || d->via_hv_pci), "hv_pci");
        else
                fuzz_check(!d->via_hv_pci && !*d->controller, "via hv_pci without one");
        if (ctrl > 0)
                fuzz_check(d->via_hv_pci && strcmp(d->controller, guid) == 0, "controller %s, the tree says %s",
                           d->controller, guid);
        hvt_disk_done(d);
}

static void check_disk(const char *syspath) {
        char guid[HVT_GUID_STR_MAX], name[PATH_MAX];
        uint64_t h, c, t, l;
        struct hvt_disk d;
        struct model m;
        int r, ctrl;
        bool addr;

        model_walk(syspath, &m);
        seen_start();
        r = hvt_classify_syspath(top, syspath, makedev(259, 1048575), &d);
        seen.on = false;
        check_walk(syspath, &m, "hvt_classify_syspath()");

        if (strlen(syspath) >= PATH_MAX) {
                fuzz_check(r == -ENAMETOOLONG || r == 0, "a syspath of %zu bytes: %d", strlen(syspath), r);
                return;
        }
        if (!m.vmbus || !m.bound || !m.sdev) {
                if (m.nvme)
                        return check_nvme(syspath, &m, r, &d);
                fuzz_check(r == 0, "no Hyper-V disk, yet classified: %d", r);
                return;
        }
        ctrl = model_controller(syspath, m.vmbus, guid);
        fuzz_check(r != 0, "a disk below hv_storvsc and a LUN, classified as none");

        last_of(syspath, m.sdev, name, sizeof(name));
        addr = sscanf(name, "%" SCNu64 ":%" SCNu64 ":%" SCNu64 ":%" SCNu64, &h, &c, &t, &l) == 4;
        if (addr) {
                /* Only a canonical H:C:T:L (sysfs names) is a sure one. */
                char again[128];

                snprintf(again, sizeof(again), "%" PRIu64 ":%" PRIu64 ":%" PRIu64 ":%" PRIu64, h, c, t, l);
                addr = strcmp(again, name) == 0 && h <= UINT_MAX && c <= UINT_MAX && t <= UINT_MAX;
        }
        if (ctrl < 0 || !strpbrk(name, "0123456789")) {
                fuzz_check(r < 0, "no controller GUID or no address, yet classified: %d", r);
                return;
        }
        if (ctrl > 0 && addr)
                fuzz_check(r == 1 || (r < 0 && diskseq_odd(syspath)), "a Hyper-V disk refused with %d", r);
        if (r < 0)
                return;

        check_disk_common(syspath, &m, &d, ctrl, guid);
        fuzz_check(strlen(d.device_syspath) == m.sdev && strncmp(d.device_syspath, syspath, m.sdev) == 0,
                   "LUN %s, the nearest is %.*s", d.device_syspath, (int) m.sdev, syspath);
        if (addr)
                fuzz_check(d.host == h && d.channel == c && d.target == t && d.lun == l, "address of %s", name);
        check_string(syspath, m.sdev, "vendor", sizeof(d.vendor), d.vendor);
        check_string(syspath, m.sdev, "model", sizeof(d.model), d.model);
        hvt_disk_done(&d);
}

/* A queue figure: 1 known, 0 unsure, -1 cannot be read as a number. */
static int model_figure(const char *syspath, const char *name, unsigned *ret) {
        char buf[SMALL_MAX + 64];
        uint64_t v;

        switch (attr(syspath, strlen(syspath), name, SMALL_MAX, buf, sizeof(buf))) {
        case ATTR_ABSENT:
                return -1;
        case ATTR_TEXT:
                if (canonical_decimal(buf, UINT_MAX, &v)) {
                        *ret = (unsigned) v;
                        return 1;
                }
                return strpbrk(buf, "0123456789") ? 0 : -1;
        case ATTR_ODD:
                break;
        }
        return 0;
}

static void check_host(const char *syspath) {
        char guid[HVT_GUID_STR_MAX], name[PATH_MAX];
        const char *sysname = strrchr(syspath, '/') + 1;
        struct hvt_controller c;
        unsigned nr = 0, can = 0;
        enum hvt_kind kind;
        struct model m;
        int r, ctrl, fnr, fcan;
        uint64_t host;
        bool named;

        model_walk(syspath, &m);
        seen_start();
        r = hvt_classify_controller_syspath(top, syspath, &c);
        seen.on = false;
        check_walk(syspath, &m, "hvt_classify_controller_syspath()");

        if (strlen(syspath) >= PATH_MAX) {
                fuzz_check(r == -ENAMETOOLONG || r == 0, "a syspath of %zu bytes: %d", strlen(syspath), r);
                return;
        }
        if (!m.vmbus || !m.bound) {
                fuzz_check(r == 0, "no storvsc host, yet classified: %d", r);
                return;
        }
        fuzz_check(r != 0, "a SCSI host below hv_storvsc classified as none");

        ctrl = model_controller(syspath, m.vmbus, guid);
        last_of(syspath, m.vmbus, name, sizeof(name));
        named = strncmp(sysname, "host", 4) == 0 && canonical_decimal(sysname + 4, UINT_MAX, &host);
        fnr = model_figure(syspath, "nr_hw_queues", &nr);
        fcan = model_figure(syspath, "can_queue", &can);
        if (ctrl < 0 || strlen(name) >= HVT_VMBUS_NAME_MAX || strncmp(sysname, "host", 4) != 0 ||
            !strpbrk(sysname + 4, "0123456789") || fnr < 0 || fcan < 0) {
                fuzz_check(r < 0, "a host that cannot be described, classified: %d", r);
                return;
        }
        if (ctrl > 0 && named && fnr > 0 && fcan > 0)
                fuzz_check(r == 1, "a storvsc host refused with %d", r);
        if (r < 0)
                return;

        fuzz_check(strlen(c.syspath) == m.vmbus && strncmp(c.syspath, syspath, m.vmbus) == 0, "VMBus device %s",
                   c.syspath);
        fuzz_check(strcmp(c.name, name) == 0, "name %s, the VMBus device is %s", c.name, name);
        if (ctrl > 0)
                fuzz_check(strcmp(c.controller, guid) == 0, "controller %s, the tree says %s", c.controller, guid);
        if (named)
                fuzz_check(c.host == host, "host%u of %s", c.host, sysname);
        if (fnr > 0 && fcan > 0)
                fuzz_check(c.nr_hw_queues == nr && c.can_queue == can, "figures %u %u, the files say %u %u",
                           c.nr_hw_queues, c.can_queue, nr, can);
        if (model_kind(syspath, m.vmbus, &kind))
                fuzz_check(c.kind == kind, "kind %d, the class says %d", c.kind, kind);
        hvt_controller_done(&c);
}

/* A syspath that is no device's below top: nothing is read for it. */
static void check_not_walked(const char *syspath, bool host) {
        struct hvt_controller c;
        struct hvt_disk d;
        int r;

        seen_start();
        r = host ? hvt_classify_controller_syspath(top, syspath, &c) : hvt_classify_syspath(top, syspath, 0, &d);
        seen.on = false;
        fuzz_check(r == 0 && seen.n == 0, "%s, no syspath below %s: %d, %zu calls", syspath, top, r, seen.n);
}

/* ---- the input ---- */

struct input {
        char *disk[PATHS_MAX], *host[PATHS_MAX];
        size_t n_disk, n_host;
};

/* A syspath of the input, made of real directories when it can be; its text in *ret. */
static void make_syspath(const char *v, char **ret) {
        static char buf[SYSPATH_MAX + PATH_MAX];
        struct path p;
        int fd;

        path_parse(v, &p);
        if (p.canonical && p.n > 0) {
                path_join(&p, buf, sizeof(buf));
                fd = path_dir(&p, p.n, true);
                if (fd >= 0)
                        close(fd);
        } else
                snprintf(buf, sizeof(buf), "%s/%s", root, v);  /* walked, not made */
        path_done(&p);
        *ret = strdup(buf);
        if (!*ret)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *text = fuzz_strndup(data, size);
        struct input in = {};
        char *line, *nl, *eq;

        if (root_fd < 0)
                setup();
        /* The syspaths first, then the rest in order. */
        for (int pass = 0; pass < 2; pass++) {
                _cleanup_free_ char *copy = strdup(text);

                if (!copy)
                        abort();
                for (line = copy; line; line = nl) {
                        nl = strchr(line, '\n');
                        if (nl)
                                *nl++ = '\0';
                        eq = strchr(line, '=');
                        if (!eq)
                                continue;
                        *eq++ = '\0';
                        if (pass == 0 && strcmp(line, "disk") == 0 && in.n_disk < PATHS_MAX)
                                make_syspath(eq, &in.disk[in.n_disk++]);
                        else if (pass == 0 && strcmp(line, "host") == 0 && in.n_host < PATHS_MAX)
                                make_syspath(eq, &in.host[in.n_host++]);
                        else if (pass == 1 && (strcmp(line, "dir") == 0 || strcmp(line, "file") == 0 ||
                                               strcmp(line, "link") == 0))
                                make_entry(line, eq);
                }
        }
        parent_forget();
        for (size_t i = 0; i < in.n_disk; i++) {
                if (walkable(in.disk[i]))
                        check_disk(in.disk[i]);
                else
                        check_not_walked(in.disk[i], false);
                seen_clear();
                free(in.disk[i]);
        }
        for (size_t i = 0; i < in.n_host; i++) {
                if (walkable(in.host[i]))
                        check_host(in.host[i]);
                else
                        check_not_walked(in.host[i], true);
                seen_clear();
                free(in.host[i]);
        }
        fuzz_empty_dir(root_fd);
        return 0;
}
