/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the walk of enumerate.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "enumerate.h"
#include "macro.h"
#include "records.h"
#include "route.h"
#include "rundir.h"
#include "udev-util.h"

/* How often a walk asks whether to stop: before its first disk, then each time this much
 * of it has passed. Reading the clock is no system call; asking for the signals pending is. */
#define STOP_CHECK_USEC 1000

/* The names /sys/class/block listed as the walk began, sorted, and the directory. */
struct listing {
        DIR *dir;
        char **names;
        size_t n;
};

/* A record is kept while a block device of its name exists, Hyper-V's or not: a disk hvtuned
 * could not classify this time keeps its originals for the next. A name the walk's listing
 * had is kept without asking the kernel again; one it had not may have come since. */
static bool record_wanted(const char *sysname, void *userdata) {
        const struct listing *l = userdata;

        if (strcmp(sysname, HVT_DRIVER_NAME) == 0)
                return true;  /* the module parameter's: the driver pass owns it */
        if (l->n > 0 && bsearch(&sysname, l->names, l->n, sizeof(*l->names), hvt_disk_name_cmp))
                return true;
        return faccessat(dirfd(l->dir), sysname, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Whether stop says to end the walk, asked at most once every STOP_CHECK_USEC. */
static bool stop_asked(hvt_stop_t stop, void *userdata, uint64_t *next) {
        uint64_t now;

        if (!stop)
                return false;
        now = hvt_now_usec(CLOCK_MONOTONIC);
        if (now < *next)
                return false;
        *next = now + STOP_CHECK_USEC;
        return stop(userdata);
}

/* The names in /sys/class/block (disks and partitions), sorted. Not udev_enumerate: it makes
 * and keeps a device, properties and all, for every block device at once, the largest
 * allocation of a VM with thousands of LUNs; here there is one device at a time. */
static int block_names(DIR *dir, char ***ret, size_t *n_ret) {
        char **names = NULL;
        size_t n = 0, size = 0;
        struct dirent *de;

        errno = 0;
        while ((de = readdir(dir))) {
                if (de->d_name[0] == '.')
                        continue;
                if (n == size) {
                        char **more = realloc(names, (size = size ? 2 * size : 64) * sizeof(*names));

                        if (!more)
                                goto oom;
                        names = more;
                }
                names[n] = strdup(de->d_name);
                if (!names[n])
                        goto oom;
                n++;
        }
        if (errno != 0) {
                int r = negative_errno();

                hvt_strv_free(names, n);
                return r;
        }
        if (n > 0)
                qsort(names, n, sizeof(*names), hvt_disk_name_cmp);
        *ret = names;
        *n_ret = n;
        return 0;
oom:
        hvt_strv_free(names, n);
        return -ENOMEM;
}

/* Whether a walk leaves the disks udevd has not finished with to their "add" event, which
 * comes once udevd ran their rules. Read before, a disk shows what the kernel made of it, not
 * what the system's rules set up (a distro's bfq, an operator's nr_requests): recorded as the
 * originals, those would be what a stop puts back, and the rules' values would be fought as
 * drift. Without udevd (a container, a test tree: no udev database at all) no event will
 * come, and a single pass has no loop to take one: there every disk is taken as it is. */
static bool wait_for_udev(const struct hvt_daemon *d) {
        _cleanup_(udev_queue_unrefp) struct udev_queue *q = NULL;

        if (d->once)
                return false;
        q = udev_queue_new(d->udev);
        return q && udev_queue_get_udev_is_active(q) > 0;
}

/* Whether udevd has run its rules for the block device devnum: it keeps a database entry for
 * every device it has handled, under the name libudev gives it ("b8:0"), and libudev's
 * udev_device_get_is_initialized() asks the same. */
static bool udev_initialized(dev_t devnum) {
        char path[64];

        snprintf(path, sizeof(path), "/run/udev/data/b%u:%u", major(devnum), minor(devnum));
        return access(path, F_OK) == 0;
}

/* A disk the walk skipped is there all the same: a managed one of its name stays managed,
 * its record and its originals with it, instead of being forgotten as gone. A scan: skips
 * are rare. */
static void keep_skipped(struct hvt_daemon *d, const char *name) {
        for (size_t i = 0; i < d->disks.n; i++)
                if (strcmp(d->disks.v[i]->disk.sysname, name) == 0)
                        d->disks.v[i]->seen = true;
}

static void listing_done(struct listing *l) {
        hvt_strv_free(l->names, l->n);
        if (l->dir)
                (void) closedir(l->dir);
}

/* Records of disks that went while hvtuned was not running. What is not hvtuned's stays,
 * and is mentioned once. */
static void prune_records(struct hvt_daemon *d, const struct listing *class_block) {
        char path[4096];
        int r;

        if (d->state_fd < 0 || (d->apply_flags & HVT_APPLY_DRY_RUN))
                return;
        r = hvt_records_prune(d->state_fd, record_wanted, (void *) class_block);
        if (r <= 0 || d->foreign_told)
                return;
        hvt_rundir_path(path, sizeof(path));
        hvt_log_info(&d->log, "%s holds %d file%s hvtuned did not write: left alone", path, r, r == 1 ? "" : "s");
        d->foreign_told = true;
}

int hvt_enumerate(struct hvt_daemon *d, hvt_stop_t stop, void *userdata) {
        _cleanup_(hvt_classify_cache_done) struct hvt_classify_cache cache = {};
        _cleanup_(listing_done) struct listing l = {};
        bool wait = wait_for_udev(d);
        uint64_t next_stop_check = 0;
        int r;

        l.dir = opendir("/sys/class/block");
        r = l.dir ? block_names(l.dir, &l.names, &l.n) : negative_errno();
        if (r < 0)
                return hvt_log_errno(&d->log, LOG_ERR, r, "Cannot list /sys/class/block: %m");

        for (size_t i = 0; i < d->disks.n; i++)
                d->disks.v[i]->seen = false;
        for (size_t i = 0; i < l.n; i++) {
                const char *name = l.names[i];
                char syspath[PATH_MAX];
                dev_t devnum;

                /* A stop is not held up by the rest of a long walk, nor by one slow disk after
                 * it. What was not walked is neither forgotten nor pruned: its records may hold
                 * a crashed run's originals. */
                if (stop_asked(stop, userdata, &next_stop_check)) {
                        hvt_log_debug(&d->log, "Stop requested: ending the walk over the disks early");
                        return 1;
                }
                r = hvt_classify_block_name(dirfd(l.dir), name, syspath, sizeof(syspath), &devnum);
                if (r < 0) {
                        /* Not known to be Hyper-V's: skipped, as libudev's lookup skips it. */
                        hvt_log_debug(&d->log, "%s: cannot read what it is (%s): skipped", name, strerror(-r));
                        keep_skipped(d, name);
                }
                if (r <= 0)
                        continue;  /* a partition, or gone since the listing */
                if (wait && !udev_initialized(devnum)) {
                        hvt_log_debug(&d->log, "%s: udev has not finished with it: tuned at its add event", name);
                        keep_skipped(d, name);
                        continue;
                }
                (void) hvt_route_found(d, syspath, name, devnum, &cache);
        }
        /* Whatever was not found again went away while events were lost. Backwards, since a
         * removal moves the last entry into the freed slot. */
        for (size_t i = d->disks.n; i > 0; i--)
                if (!d->disks.v[i - 1]->seen)
                        hvt_route_forget(d, d->disks.v[i - 1], true);
        prune_records(d, &l);
        return 0;
}
