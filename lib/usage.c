/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the in-use checks of usage.h.
 *
 * Mounts are matched by device number (field 3 of mountinfo) and by source name, since a
 * btrfs mount shows an anonymous device number; /proc/swaps names its devices by path. The
 * exclusive open is the final word: it also sees mounts of other namespaces. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs-util.h"
#include "macro.h"
#include "sysfs.h"
#include "usage.h"

#define DEV_MAX 24

int hvt_usage_load(struct hvt_usage *u) {
        int r;

        *u = (struct hvt_usage) {};
        r = hvt_read_file("/proc/self/mountinfo", &u->mountinfo);
        if (r >= 0)
                r = hvt_read_file("/proc/swaps", &u->swaps);
        if (r < 0)
                hvt_usage_done(u);
        return r;
}

void hvt_usage_done(struct hvt_usage *u) {
        free(u->mountinfo);
        free(u->swaps);
        *u = (struct hvt_usage) {};
}

/* "/dev/sdc1" names sdc1; so does "/dev/disk/../sdc1". */
static bool path_names(const char *path, size_t len, const char *name) {
        const char *base = memrchr(path, '/', len);

        if (strncmp(path, "/dev/", 5) != 0 || !base)
                return false;
        base++;
        return (size_t) (path + len - base) == strlen(name) && strncmp(base, name, strlen(name)) == 0;
}

/* Field i (0-based) of a blank-separated line, and its length. */
static const char *field(const char *line, size_t line_len, unsigned i, size_t *len) {
        const char *p = line, *end = line + line_len;

        for (;;) {
                const char *f;

                while (p < end && *p == ' ')
                        p++;
                f = p;
                while (p < end && *p != ' ')
                        p++;
                if (f == p)
                        return NULL;
                if (i-- == 0) {
                        *len = (size_t) (p - f);
                        return f;
                }
        }
}

/* Where a mount of this device (number dev, name name) is, or NULL. */
static bool find_mount(const char *mountinfo, const char *dev, const char *name, char *where, size_t size) {
        for (const char *line = mountinfo; *line;) {
                const char *nl = strchrnul(line, '\n'), *f, *sep, *src;
                size_t len = (size_t) (nl - line), flen, slen;

                f = field(line, len, 2, &flen);
                sep = strstr(line, " - ");
                src = sep && sep < nl ? field(sep + 3, (size_t) (nl - sep - 3), 1, &slen) : NULL;
                if ((f && flen == strlen(dev) && strncmp(f, dev, flen) == 0) ||
                    (src && path_names(src, slen, name))) {
                        const char *mp = field(line, len, 4, &flen);

                        snprintf(where, size, "%.*s", mp ? (int) flen : 1, mp ? mp : "?");
                        return true;
                }
                line = *nl ? nl + 1 : nl;
        }
        return false;
}

static bool find_swap(const char *swaps, const char *name) {
        /* The first line is the header; each other starts with the path of the area. */
        const char *line = strchr(swaps, '\n');

        while (line && *++line) {
                const char *nl = strchrnul(line, '\n');
                size_t len;
                const char *f = field(line, (size_t) (nl - line), 0, &len);

                if (f && path_names(f, len, name))
                        return true;
                line = *nl ? nl : NULL;
        }
        return false;
}

/* 1 with *holder set when holders/ has an entry, 0 when it is empty. */
static int first_holder(int dirfd, char *holder, size_t size) {
        _cleanup_(closedirp) DIR *dir = NULL;
        struct dirent *de;
        int r;

        r = hvt_opendirat(dirfd, "holders", &dir);
        if (r < 0)
                return r;
        while ((de = readdir(dir)))
                if (de->d_name[0] != '.') {
                        (void) hvt_strscpy(holder, size, de->d_name);
                        return 1;
                }
        return 0;
}

/* What check_one() found: the root filesystem outranks any other reason, as the one an
 * operator must hear first. */
enum use {
        USE_NONE,
        USE_OTHER,
        USE_ROOT,
};

/* One block device directory: the disk or one of its partitions: an enum use, or -errno. */
static int check_one(const struct hvt_usage *u, int dirfd, const char *name, char *why, size_t size) {
        char dev[DEV_MAX], where[256], holder[256];
        int r;

        r = hvt_sysfs_read(dirfd, "dev", dev, sizeof(dev));
        if (r < 0) {
                snprintf(why, size, "cannot read the device number of %s", name);
                return r;
        }
        if (find_mount(u->mountinfo, dev, name, where, sizeof(where))) {
                if (strcmp(where, "/") == 0) {
                        snprintf(why, size, "%s holds the root filesystem", name);
                        return USE_ROOT;
                }
                snprintf(why, size, "%s is mounted on %s", name, where);
                return USE_OTHER;
        }
        if (find_swap(u->swaps, name)) {
                snprintf(why, size, "%s is in use as swap", name);
                return USE_OTHER;
        }
        r = first_holder(dirfd, holder, sizeof(holder));
        if (r < 0) {
                snprintf(why, size, "cannot read the holders of %s", name);
                return r;
        }
        if (r > 0) {
                snprintf(why, size, "%s is held by %s", name, holder);
                return USE_OTHER;
        }
        return USE_NONE;
}

int hvt_usage_check_disk(const struct hvt_usage *u, const char *syspath, char *why, size_t size) {
        _cleanup_(closedirp) DIR *dir = NULL;
        const char *name = strrchr(syspath, '/');
        _cleanup_close_ int fd = -EBADF;
        char other[256] = "";
        struct dirent *de;
        int r;

        name = name ? name + 1 : syspath;
        /* By its path through hvt_sysfs_open_dir(), as every sysfs directory is opened (a
         * testbed's too); listed through a descriptor of its own. */
        fd = hvt_sysfs_open_dir(syspath);
        if (fd < 0) {
                snprintf(why, size, "cannot open %s", syspath);
                return fd;
        }
        r = hvt_opendirat(fd, ".", &dir);
        if (r < 0) {
                snprintf(why, size, "cannot list %s", syspath);
                return r;
        }
        r = check_one(u, fd, name, why, size);
        if (r < 0 || r == USE_ROOT)
                return r < 0 ? r : 1;
        if (r > 0)
                (void) hvt_strscpy(other, sizeof(other), why);

        /* Partitions are the subdirectories named after the disk that have a partition file.
         * Holding the root filesystem is the reason given when it is one of them. */
        while ((de = readdir(dir))) {
                _cleanup_close_ int pfd = -EBADF;
                char buf[16];

                if (strncmp(de->d_name, name, strlen(name)) != 0 || strcmp(de->d_name, name) == 0)
                        continue;
                pfd = openat(fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (pfd < 0 || hvt_sysfs_read(pfd, "partition", buf, sizeof(buf)) < 0)
                        continue;
                r = check_one(u, pfd, de->d_name, why, size);
                if (r < 0 || r == USE_ROOT)
                        return r < 0 ? r : 1;
                if (r > 0 && !*other)
                        (void) hvt_strscpy(other, sizeof(other), why);
        }
        if (*other) {
                (void) hvt_strscpy(why, size, other);
                return 1;
        }
        return 0;
}

int hvt_usage_claim(const char *sysname) {
        char path[64];
        int fd;

        if (strchr(sysname, '/') || snprintf(path, sizeof(path), "/dev/%s", sysname) >= (int) sizeof(path))
                return -EINVAL;
        fd = open(path, O_RDONLY | O_EXCL | O_NONBLOCK | O_CLOEXEC);
        return fd < 0 ? negative_errno() : fd;
}
