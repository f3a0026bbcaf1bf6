/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the context's lifetime, configuration (re)loading, the table of managed disks, the
 * runtime directory of originals, and routing each udev device to its disk's pass. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>

#include "daemon.h"
#include "macro.h"
#include "messages.h"
#include "metrics-file.h"
#include "notify.h"
#include "report.h"
#include "sysfs.h"
#include "tune.h"

#define STATE_DIR_DEFAULT "/run/hvtuned"

static void tracked_free(struct hvt_tracked *t) {
        hvt_tune_forget(t);
        hvt_slots_done(&t->slots);
        hvt_disk_done(&t->disk);
        free(t);
}

void hvt_daemon_done(struct hvt_daemon *d) {
        /* Stopped: figures left behind would be read as a running hvtuned's. */
        hvt_metrics_remove(d);
        for (size_t i = 0; i < d->n_disks; i++)
                tracked_free(d->disks[i]);
        free(d->disks);
        hvt_index_done(&d->index);
        hvt_host_done(&d->host);
        hvt_config_free(d->config);
        if (d->state_fd >= 0)
                close(d->state_fd);
        sd_event_source_unref(d->verify);
        hvt_notify_done(&d->notify);
        /* The loop before the monitor: its sources still refer to the monitor's fd. */
        sd_event_unref(d->event);
        udev_monitor_unref(d->monitor);
        udev_unref(d->udev);
        hvt_log_done(&d->log);
}

int hvt_daemon_load_config(struct hvt_daemon *d) {
        struct hvt_config_error err;
        struct hvt_config *c;
        char text[512];
        int r;

        r = hvt_config_load(d->config_path, !d->config_explicit, &c, &err);
        if (r < 0) {
                char f_file[300], f_line[32];
                const char *fields[] = { f_file, f_line, NULL };

                if (r == -ENOMEM) {
                        (void) hvt_strscpy(d->config_error, sizeof(d->config_error), d->config_path);
                        return hvt_log_errno(&d->log, LOG_ERR, r, "Out of memory loading configuration");
                }
                hvt_config_error_format(&err, text, sizeof(text));
                if (err.line > 0)
                        snprintf(d->config_error, sizeof(d->config_error), "%s:%d", err.file, err.line);
                else
                        (void) hvt_strscpy(d->config_error, sizeof(d->config_error), err.file);
                snprintf(f_file, sizeof(f_file), "HVTUNED_CONFIG_FILE=%s", err.file);
                snprintf(f_line, sizeof(f_line), "HVTUNED_CONFIG_LINE=%d", err.line);
                return hvt_log_struct(&d->log, LOG_ERR, r, HVT_MESSAGE_CONFIG_ERROR, fields, "%s", text);
        }

        hvt_log_debug(&d->log, "Loaded configuration from %s", c->path ? c->path : "built-in defaults");
        hvt_config_free(d->config);
        d->config = c;
        d->config_error[0] = '\0';
        return 0;
}

void hvt_daemon_state_path(char *buf, size_t size) {
        const char *dir = getenv("RUNTIME_DIRECTORY");

        /* systemd passes a colon-separated list when a unit has several; ours is the first. */
        (void) hvt_strscpy(buf, size, dir && *dir ? dir : STATE_DIR_DEFAULT);
        buf[strcspn(buf, ":")] = '\0';
}

int hvt_daemon_open_state(struct hvt_daemon *d) {
        char path[4096];

        hvt_daemon_state_path(path, sizeof(path));

        d->state_fd = hvt_state_open(path);
        if (d->state_fd < 0) {
                (void) hvt_log_struct(&d->log, LOG_WARNING, d->state_fd, HVT_MESSAGE_STATE_ERROR, NULL,
                                      "Cannot use %s for the records of original values (%m): they "
                                      "are kept in memory only, and a restart forgets them", path);
                return 0;
        }
        /* One hvtuned at a time owns the records: a --once beside the service would take the
         * service's values for originals, or restore what the service still manages. */
        if (flock(d->state_fd, LOCK_EX | LOCK_NB) < 0) {
                int r = negative_errno();

                close(d->state_fd);
                d->state_fd = -EBADF;
                if (r == -EWOULDBLOCK)
                        return hvt_log_errno(&d->log, LOG_ERR, r, "Another hvtuned is running (it holds %s): "
                                             "reload it (systemctl reload hvtuned) instead", path);
                return hvt_log_errno(&d->log, LOG_ERR, r, "Cannot lock %s: %m", path);
        }
        return 0;
}

/* The managed disk of a SCSI LUN: a scan, as LUN events are rare. */
static struct hvt_tracked *find_lun(struct hvt_daemon *d, const char *syspath) {
        for (size_t i = 0; i < d->n_disks; i++)
                if (strcmp(d->disks[i]->disk.device_syspath, syspath) == 0)
                        return d->disks[i];
        return NULL;
}

/* Takes ownership of disk, and loads the originals a previous run recorded for it. */
static struct hvt_tracked *track(struct hvt_daemon *d, struct hvt_disk *disk) {
        struct hvt_tracked *t;
        int r;

        if (d->n_disks == d->n_allocated) {
                size_t n = d->n_allocated ? d->n_allocated * 2 : 16;
                struct hvt_tracked **p = reallocarray(d->disks, n, sizeof(*p));

                if (!p)
                        return NULL;
                d->disks = p;
                d->n_allocated = n;
        }
        t = calloc(1, sizeof(*t));
        if (!t)
                return NULL;
        t->daemon = d;
        t->disk = *disk;
        if (hvt_index_add(&d->index, t) < 0) {
                free(t);
                return NULL;
        }
        *disk = (struct hvt_disk) {};
        d->disks[d->n_disks++] = t;

        if (d->state_fd >= 0) {
                struct hvt_originals o;

                r = hvt_state_load(d->state_fd, &t->disk, &o);
                if (r >= 0 && hvt_slots_set_originals(&t->slots, &o) < 0)
                        r = -ENOMEM;
                if (r == -EBADMSG)
                        (void) hvt_log_struct(&d->log, LOG_WARNING, r, HVT_MESSAGE_STATE_ERROR, NULL,
                                              "%s: the record of its original values is damaged and was "
                                              "dropped", t->disk.sysname);
                else if (r >= 0)
                        hvt_log_debug(&d->log, "%s: originals recorded by an earlier run loaded", t->disk.sysname);
                else if (r != -ENOENT) {
                        t->orig_error = r;
                        (void) hvt_log_struct(&d->log, LOG_ERR, r, HVT_MESSAGE_STATE_ERROR, NULL,
                                              "%s: cannot read the record of its original values (%m): "
                                              "not writing attributes that have none recorded",
                                              t->disk.sysname);
                }
        }
        return t;
}

static void untrack(struct hvt_daemon *d, struct hvt_tracked *t) {
        hvt_index_remove(&d->index, t);
        for (size_t i = 0; i < d->n_disks; i++)
                if (d->disks[i] == t) {
                        d->disks[i] = d->disks[--d->n_disks];
                        break;
                }
        tracked_free(t);
}

/* A disk that is gone takes its record with it: a disk added again is a new disk. */
static void forget(struct hvt_daemon *d, struct hvt_tracked *t, bool removed) {
        if (removed) {
                hvt_report_disk_removed(&d->log, &t->disk);
                if (d->state_fd >= 0)
                        (void) hvt_state_remove(d->state_fd, &t->disk);
        } else
                hvt_report_disk_released(&d->log, &t->disk);
        untrack(d, t);
}

void hvt_daemon_forget(struct hvt_daemon *d, struct hvt_tracked *t) {
        forget(d, t, true);
}

/* `udevadm trigger --action=remove` sends a remove for a disk that stays, and an add after it:
 * taken for a removal, it would cost the disk its record, and the add would record the tuned
 * values as its originals. The kernel says whether it is gone: the same disk is still there
 * while its directory shows the device number and diskseq hvtuned tracks. (A real removal's
 * event reaches hvtuned through udevd, after its rules, long after the kernel removed the
 * directory.) */
static bool still_present(const struct hvt_tracked *t) {
        _cleanup_close_ int fd = hvt_sysfs_open_dir(t->disk.syspath);
        char dev[sizeof(t->disk.dev)], seq[32];
        char *end;

        if (fd < 0 || hvt_sysfs_read(fd, "dev", dev, sizeof(dev)) < 0 || strcmp(dev, t->disk.dev) != 0)
                return false;
        if (t->disk.diskseq == 0)
                return true;
        if (hvt_sysfs_read(fd, "diskseq", seq, sizeof(seq)) < 0)
                return false;
        errno = 0;
        return strtoull(seq, &end, 10) == t->disk.diskseq && errno == 0 && *end == '\0';
}

/* A change on a SCSI LUN (device/ attributes) is a change of its disk. */
static int handle_lun(struct hvt_daemon *d, struct udev_device *dev, const char *action) {
        struct hvt_tracked *t = find_lun(d, udev_device_get_syspath(dev));

        if (t && action && strcmp(action, "change") == 0)
                hvt_tune(d, t, HVT_TUNE_EVENT);
        return 0;
}

int hvt_daemon_handle_device(struct hvt_daemon *d, struct udev_device *dev, const char *action) {
        const char *subsystem = udev_device_get_subsystem(dev);
        struct hvt_disk disk;
        struct hvt_tracked *t;
        int r;

        if (subsystem && strcmp(subsystem, "scsi") == 0)
                return handle_lun(d, dev, action);
        if (subsystem && strcmp(subsystem, "scsi_host") == 0) {
                hvt_host_handle_device(d, udev_device_get_syspath(dev), action);
                return 0;
        }

        t = hvt_index_find(&d->index, udev_device_get_syspath(dev));
        if (action && strcmp(action, "remove") == 0) {
                if (t && still_present(t))
                        hvt_log_info(&d->log, "%s: a remove event, but the disk is still there: kept as it was",
                                     t->disk.sysname);
                else if (t)
                        forget(d, t, true);
                else if (d->state_fd >= 0) {
                        /* A disk hvtuned had let go of (no longer Hyper-V's) may have a record. */
                        struct hvt_disk gone = { .syspath = (char *) udev_device_get_syspath(dev),
                                                 .sysname = udev_device_get_sysname(dev) };
                        (void) hvt_state_remove(d->state_fd, &gone);
                }
                return 0;
        }

        if (t)
                t->seen = true;
        r = hvt_classify(dev, &disk);
        if (r < 0) {
                /* A Hyper-V disk left untuned is a failure, as much as a failed attribute. */
                d->any_failed = true;
                return hvt_report_disk_unreadable(&d->log, udev_device_get_sysname(dev), r);
        }
        if (r == 0) {
                if (t)
                        forget(d, t, false);
                return 0;
        }

        /* Another disk at the same path (a LUN re-probed): a new disk, with no history. */
        if (t && (strcmp(t->disk.dev, disk.dev) != 0 || t->disk.diskseq != disk.diskseq)) {
                forget(d, t, true);
                t = NULL;
        }
        if (t) {
                /* Same instance: vendor or model may read differently after a rescan. */
                hvt_disk_done(&t->disk);
                t->disk = disk;
                hvt_tune(d, t, HVT_TUNE_EVENT);
                return 0;
        }

        t = track(d, &disk);
        if (!t) {
                hvt_disk_done(&disk);
                return hvt_log_errno(&d->log, LOG_ERR, -ENOMEM, "Out of memory");
        }
        t->seen = true;
        hvt_report_disk_found(&d->log, &t->disk);
        hvt_tune(d, t, HVT_TUNE_FOUND);
        return 0;
}

/* A record is kept while a block device of its name exists, Hyper-V's or not: a disk hvtuned
 * could not classify this time keeps its originals for the next. */
static bool record_wanted(const char *sysname, void *userdata) {
        DIR *class_block = userdata;

        if (strcmp(sysname, HVT_HOST_RECORD) == 0)
                return true;  /* the module parameter's: the host pass owns it */
        return faccessat(dirfd(class_block), sysname, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

/* SIGTERM or SIGINT waiting: the service blocks them and handles them in its event loop. */
static bool stop_pending(void) {
        sigset_t pending;

        return sigpending(&pending) == 0 &&
               (sigismember(&pending, SIGTERM) == 1 || sigismember(&pending, SIGINT) == 1);
}

/* The kernel's order of disk names: sdz before sdaa. */
static int name_cmp(const void *a, const void *b) {
        const char *x = *(const char *const *) a, *y = *(const char *const *) b;
        size_t lx = strlen(x), ly = strlen(y);

        return lx != ly ? (lx < ly ? -1 : 1) : strcmp(x, y);
}

static void names_free(char **names, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
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

                names_free(names, n);
                return r;
        }
        if (n > 0)
                qsort(names, n, sizeof(*names), name_cmp);
        *ret = names;
        *n_ret = n;
        return 0;
oom:
        names_free(names, n);
        return -ENOMEM;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir);

/* A block device of the name that is a whole disk, or NULL. */
static struct udev_device *disk_new(struct udev *udev, const char *name) {
        struct udev_device *dev = udev_device_new_from_subsystem_sysname(udev, "block", name);
        const char *devtype = dev ? udev_device_get_devtype(dev) : NULL;

        if (devtype && strcmp(devtype, "disk") == 0)
                return dev;
        return udev_device_unref(dev);
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct udev_queue *, udev_queue_unref);

/* Whether a walk leaves the disks udevd has not finished with to their "add" event, which
 * comes once udevd ran their rules. Read before, a disk shows what the kernel made of it, not
 * what the system's rules set up (a distro's bfq, an operator's nr_requests): recorded as the
 * originals, those would be what a stop puts back, and the rules' values would be fought as
 * drift. Without udevd (a container, a test tree: no udev database at all) no event will
 * come, and a single pass has no loop to take one: there every disk is taken as it is. */
static bool wait_for_udev(struct hvt_daemon *d) {
        _cleanup_(udev_queue_unrefp) struct udev_queue *q = NULL;

        if (d->once)
                return false;
        q = udev_queue_new(d->udev);
        return q && udev_queue_get_udev_is_active(q) > 0;
}

int hvt_daemon_enumerate(struct hvt_daemon *d) {
        _cleanup_(closedirp) DIR *dir = NULL;
        char **names = NULL;
        size_t n = 0;
        bool wait = wait_for_udev(d);
        int r;

        dir = opendir("/sys/class/block");
        r = dir ? block_names(dir, &names, &n) : negative_errno();
        if (r < 0)
                return hvt_log_errno(&d->log, LOG_ERR, r, "Cannot list /sys/class/block: %m");

        for (size_t i = 0; i < d->n_disks; i++)
                d->disks[i]->seen = false;
        for (size_t i = 0; i < n; i++) {
                struct udev_device *dev;

                /* A stop is not held up by the rest of a long walk. What was not walked is
                 * neither forgotten nor pruned: its records may hold a crashed run's originals. */
                if (stop_pending()) {
                        hvt_log_debug(&d->log, "Stop requested: ending the walk over the disks early");
                        names_free(names, n);
                        return 1;
                }
                dev = disk_new(d->udev, names[i]);
                if (!dev)
                        continue;  /* a partition, or gone since the listing */
                if (wait && !udev_device_get_is_initialized(dev)) {
                        hvt_log_debug(&d->log, "%s: udev has not finished with it: tuned at its add event", names[i]);
                        udev_device_unref(dev);
                        continue;
                }
                (void) hvt_daemon_handle_device(d, dev, NULL);
                udev_device_unref(dev);
        }
        names_free(names, n);
        /* Whatever was not found again went away while events were lost. Backwards, since
         * untrack() moves the last entry into the freed slot. */
        for (size_t i = d->n_disks; i > 0; i--)
                if (!d->disks[i - 1]->seen)
                        forget(d, d->disks[i - 1], true);

        /* Records of disks that went while hvtuned was not running. What is not hvtuned's
         * stays, and is mentioned once. */
        if (d->state_fd >= 0 && !(d->apply_flags & HVT_APPLY_DRY_RUN)) {
                r = hvt_state_prune(d->state_fd, record_wanted, dir);
                if (r > 0 && !d->foreign_told) {
                        char path[4096];

                        hvt_daemon_state_path(path, sizeof(path));
                        hvt_log_info(&d->log, "%s holds %d file%s hvtuned did not write: left alone", path, r,
                                     r == 1 ? "" : "s");
                        d->foreign_told = true;
                }
        }
        return 0;
}

void hvt_daemon_retune_all(struct hvt_daemon *d) {
        for (size_t i = 0; i < d->n_disks; i++)
                hvt_tune(d, d->disks[i], HVT_TUNE_CONFIG);
}

void hvt_daemon_verify_all(struct hvt_daemon *d) {
        for (size_t i = 0; i < d->n_disks; i++)
                hvt_tune(d, d->disks[i], HVT_TUNE_VERIFY);
}

void hvt_daemon_restore_all(struct hvt_daemon *d) {
        for (size_t i = 0; i < d->n_disks; i++)
                hvt_tune_restore(d, d->disks[i]);
        hvt_host_restore(d);
}

/* Controllers with a managed disk. A controller holds up to 64 LUNs: the disks are compared
 * with the few controllers found so far, not with each other (quadratic in disks, and the
 * status is made after every batch of events). */
static size_t count_controllers(const struct hvt_daemon *d) {
        _cleanup_free_ const char **seen = NULL;
        size_t n = 0;

        seen = malloc(d->n_disks * sizeof(*seen));
        for (size_t i = 0; i < d->n_disks; i++) {
                const char *c = d->disks[i]->disk.controller;
                size_t j = seen ? n : i;

                /* Disks of a controller mostly come one after another: newest first. Out of
                 * memory, with each earlier disk instead. */
                while (j > 0 && strcmp(seen ? seen[j - 1] : d->disks[j - 1]->disk.controller, c) != 0)
                        j--;
                if (j == 0 && seen)
                        seen[n] = c;
                n += j == 0;
        }
        return n;
}

void hvt_daemon_format_status(const struct hvt_daemon *d, char *buf, size_t size) {
        size_t n_controllers = count_controllers(d), n_failed = 0, n_unsupported = 0, n_would = 0,
               n_paused = 0, full = size;
        char notice[sizeof(d->config_error) + 48] = "";
        int off;

        /* The notice of a refused configuration says that what runs is not what the file
         * says: it survives whole, the figures before it give way if anything must. */
        if (*d->config_error)
                snprintf(notice, sizeof(notice), "; config error at %s, keeping previous", d->config_error);
        if (strlen(notice) < size)
                size -= strlen(notice);

        for (size_t i = 0; i < d->n_disks; i++) {
                const struct hvt_tracked *t = d->disks[i];

                n_failed += t->n_failed > 0;
                n_unsupported += t->n_unsupported;
                n_would += t->n_would_apply > 0;
                n_paused += t->resume != NULL;
        }

        /* "tuned": every managed attribute has its value, or this kernel lacks it (counted
         * apart as unsupported). A dry run tunes nothing: it says what would change. */
        if (d->apply_flags & HVT_APPLY_DRY_RUN)
                off = snprintf(buf, size, "%zu Hyper-V disk%s on %zu controller%s: %zu would change, %zu failed",
                               d->n_disks, d->n_disks == 1 ? "" : "s", n_controllers,
                               n_controllers == 1 ? "" : "s", n_would, n_failed);
        else
                off = snprintf(buf, size, "%zu Hyper-V disk%s on %zu controller%s: %zu tuned, %zu failed",
                               d->n_disks, d->n_disks == 1 ? "" : "s", n_controllers,
                               n_controllers == 1 ? "" : "s", d->n_disks - n_failed, n_failed);
        if (n_unsupported > 0 && off > 0 && (size_t) off < size)
                off += snprintf(buf + off, size - (size_t) off, ", %zu setting%s unsupported",
                                n_unsupported, n_unsupported == 1 ? "" : "s");
        if (n_paused > 0 && off > 0 && (size_t) off < size)
                off += snprintf(buf + off, size - (size_t) off, "; %zu disk%s reverted too often, repairs paused",
                                n_paused, n_paused == 1 ? "" : "s");
        if (off > 0 && (size_t) off < size) {
                char hwq[160];

                hvt_host_format_status(d, hwq, sizeof(hwq));
                if (*hwq)
                        off += snprintf(buf + off, size - (size_t) off, "; %s", hwq);
        }
        if (*notice && size < full)
                (void) strncat(buf, notice, full - strlen(buf) - 1);
}

void hvt_daemon_update_status(struct hvt_daemon *d) {
        char status[sizeof(d->status)];

        hvt_metrics_update(d);
        hvt_daemon_format_status(d, status, sizeof(status));
        if (strcmp(status, d->status) == 0)
                return;
        memcpy(d->status, status, sizeof(status));
        hvt_notify_status(&d->notify, status);
}
