/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the re-probe of idle controllers (see reprobe.h).
 *
 * Taking a controller away removes its disks: it is done only when nothing could notice.
 * Every disk of the controller, and every partition, must be unmounted, not swap, without
 * holders, and open exclusively for hvtuned, as mount and swapon would need it; the claims
 * are held across the unbind, so that no mount, swapon or dm/md can take a disk between check
 * and unbind. A plain open(2) of a raw device (dd, a database on it) is not seen: nothing the
 * kernel offers tells it apart short of walking every process's fds. Block disks are what is
 * checked; a LUN the asynchronous scan has not turned into one yet has no user to lose.
 * Whatever cannot be read is a reason to refuse. The disks come back as new devices, and
 * their add events tune them like any hot-added disk. */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fs-util.h"
#include "host.h"
#include "hwqueues.h"
#include "macro.h"
#include "messages.h"
#include "notify.h"
#include "report.h"
#include "reprobe.h"
#include "sysfs.h"
#include "udev-util.h"
#include "usage.h"

#define DRIVER_DIR "/sys/bus/vmbus/drivers/hv_storvsc"
#define DISKS_MAX 256
/* In the runtime directory; a dot file, so the pruning of disk records leaves it alone. */
#define PENDING ".rebind"
#define BIND_TRIES 3
#define BIND_PAUSE_MS 200

struct claims {
        int fd[DISKS_MAX];
        size_t n;
};

static void claims_release(struct claims *c) {
        for (size_t i = 0; i < c->n; i++)
                close(c->fd[i]);
        c->n = 0;
}

__attribute__((format(printf, 3, 4)))
static void refuse(struct hvt_daemon *d, const struct hvt_controller *c, const char *fmt, ...) {
        char why[256];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        (void) hvt_log_controller(&d->log, c, LOG_NOTICE, 0, HVT_MESSAGE_REPROBE_REFUSED,
                                  HVT_FIELDS(HVT_FIELD("HVTUNED_REASON=%s", why)),
                                  "host%u (controller %s): not re-probing: %s", c->host, c->controller, why);
}

/* Checks every disk below the controller and claims each; false (logged) on the first
 * reason to leave the controller alone. */
static bool claim_disks(struct hvt_daemon *d, const struct hvt_controller *c, const struct hvt_usage *u,
                        struct claims *claims) {
        _cleanup_(udev_enumerate_unrefp) struct udev_enumerate *e = NULL;
        struct udev_device *parent;
        struct udev_list_entry *entry;
        char why[256];
        int r;

        e = udev_enumerate_new(d->udev);
        parent = udev_device_new_from_syspath(d->udev, c->syspath);
        if (!e || !parent) {
                udev_device_unref(parent);
                refuse(d, c, "cannot list its disks");
                return false;
        }
        r = udev_enumerate_add_match_parent(e, parent);
        if (r >= 0)
                r = udev_enumerate_add_match_subsystem(e, "block");
        if (r >= 0)
                r = udev_enumerate_add_match_property(e, "DEVTYPE", "disk");
        if (r >= 0)
                r = udev_enumerate_scan_devices(e);
        udev_device_unref(parent);
        if (r < 0) {
                refuse(d, c, "cannot list its disks (%s)", strerror(-r));
                return false;
        }

        udev_list_entry_foreach(entry, udev_enumerate_get_list_entry(e)) {
                const char *path = udev_list_entry_get_name(entry), *name = strrchr(path, '/') + 1;
                int fd;

                r = hvt_usage_check_disk(u, path, why, sizeof(why));
                if (r < 0) {
                        refuse(d, c, "in doubt: %s (%s)", why, strerror(-r));
                        return false;
                }
                if (r > 0) {
                        refuse(d, c, "%s", why);
                        return false;
                }
                if (claims->n == DISKS_MAX) {
                        refuse(d, c, "more than %d disks", DISKS_MAX);
                        return false;
                }
                fd = hvt_usage_claim(name);
                if (fd == -EBUSY) {
                        refuse(d, c, "%s is in use: someone else has it open exclusively", name);
                        return false;
                }
                if (fd < 0) {
                        refuse(d, c, "in doubt: cannot open /dev/%s exclusively (%s)", name, strerror(-fd));
                        return false;
                }
                claims->fd[claims->n++] = fd;
        }
        return true;
}

void hvt_unbound_done(struct hvt_unbound *u) {
        free(u->controller);
        *u = (struct hvt_unbound) {};
}

static void report_done(struct hvt_daemon *d, const struct hvt_controller *old, unsigned before) {
        const struct hvt_controller *now = hvt_controllers_find(&d->host.controllers, old->controller);
        char s_bytes[112];
        uint64_t freed, after;

        if (!now) {
                (void) hvt_log_controller(&d->log, old, LOG_ERR, ENODEV, HVT_MESSAGE_REPROBE_FAILED, NULL,
                                          "Controller %s was bound again but has no SCSI host: its disks are gone",
                                          old->controller);
                return;
        }
        if (now->nr_hw_queues > d->driver.target) {
                (void) hvt_log_controller(&d->log, now, LOG_WARNING, 0, HVT_MESSAGE_REPROBE_FAILED, NULL,
                                          "host%u (controller %s) was re-probed but has %u hw queues, not %u",
                                          now->host, now->controller, now->nr_hw_queues, d->driver.target);
                return;
        }
        /* can_queue follows the online CPUs, which may have changed since the last probe. */
        freed = hvt_host_estimate(d, before, old->can_queue);
        after = hvt_host_estimate(d, now->nr_hw_queues, now->can_queue);
        freed = freed > after ? freed - after : 0;
        if (d->host.layout.request_bytes > 0) {
                char note[64];

                s_bytes[0] = '~';
                hvt_format_bytes(freed, s_bytes + 1, sizeof(s_bytes) - 1);
                hvt_host_layout_note(d, hvt_host_band(d, before, old->can_queue, now->nr_hw_queues, now->can_queue),
                                     false, note, sizeof(note));
                (void) strncat(s_bytes, note, sizeof(s_bytes) - strlen(s_bytes) - 1);
        } else
                (void) hvt_strscpy(s_bytes, sizeof(s_bytes), "memory unknown (unknown layout)");
        (void) hvt_log_controller(&d->log, now, LOG_INFO, 0, HVT_MESSAGE_REPROBED,
                                  HVT_FIELDS(d->host.layout.request_bytes > 0 ?
                                             HVT_FIELD("HVTUNED_EST_BYTES_RECLAIMED=%" PRIu64, freed) : NULL),
                                  "host%u (controller %s) re-probed: %u -> %u hw queues, %s reclaimed",
                                  now->host, now->controller, before, now->nr_hw_queues, s_bytes);
}

/* The controller between unbind and bind, in the runtime directory. */
static int pending_save(struct hvt_daemon *d, const char *name) {
        if (d->state_fd < 0)
                return -EBADF;
        return hvt_write_atomic(d->state_fd, PENDING, name, strlen(name), d->state_write_flags, NULL);
}

static void pending_clear(struct hvt_daemon *d) {
        if (unlinkat(d->state_fd, PENDING, 0) < 0 && errno != ENOENT)
                (void) hvt_log_errno(&d->log, LOG_WARNING, negative_errno(), "Cannot remove %s: %m", PENDING);
}

/* A bind can fail for a moment (the VMBus channel still closing): a few tries. */
static int bind_controller(struct hvt_daemon *d, int driver_fd, const char *name) {
        int r = 0;

        for (int i = 0; i < BIND_TRIES; i++) {
                const struct timespec pause = { 0, BIND_PAUSE_MS * 1000 * 1000 };

                if (i > 0)
                        (void) nanosleep(&pause, NULL);
                r = hvt_sysfs_write(driver_fd, HVT_ATTR_DRIVER_BIND, name);
                if (r >= 0 || r == -EBUSY)  /* EBUSY: bound already */
                        return 0;
                hvt_log_debug(&d->log, "Binding %s failed (%s), %d tries left", name, strerror(-r),
                              BIND_TRIES - i - 1);
        }
        return r;
}

void hvt_reprobe_resume(struct hvt_daemon *d) {
        _cleanup_close_ int driver_fd = -EBADF;
        char name[HVT_VMBUS_NAME_MAX + 1];  /* + 1: hvt_read_small() wants room to tell "too long" */
        int r;

        if (d->state_fd < 0 || (d->apply_flags & HVT_APPLY_DRY_RUN))
                return;
        r = hvt_read_small(d->state_fd, PENDING, name, sizeof(name));
        if (r == -ENOENT)
                return;
        if (r < 0 || !hvt_token_valid(name)) {
                (void) hvt_log_errno(&d->log, LOG_ERR, -EBADMSG, "%s holds no controller name: dropped", PENDING);
                pending_clear(d);
                return;
        }
        driver_fd = hvt_sysfs_open_dir(DRIVER_DIR);
        r = driver_fd < 0 ? driver_fd : bind_controller(d, driver_fd, name);
        if (r < 0 && r != -ENODEV) {
                (void) hvt_log_struct(&d->log, LOG_CRIT, r, HVT_MESSAGE_REPROBE_FAILED, NULL,
                                      "Controller %s was left unbound by an interrupted re-probe, and binding it "
                                      "failed (%m): echo %s > %s/bind", name, name, DRIVER_DIR);
                return;
        }
        if (r == -ENODEV)
                hvt_log_info(&d->log, "Controller %s of an interrupted re-probe is gone", name);
        else
                (void) hvt_log_struct(&d->log, LOG_WARNING, 0, HVT_MESSAGE_REPROBED, NULL,
                                      "Controller %s was left unbound by an interrupted re-probe: bound again", name);
        pending_clear(d);
}

/* Whether c was unbound (bound again or not). */
static bool reprobe_one(struct hvt_daemon *d, int driver_fd, const struct hvt_controller *c,
                        const struct hvt_usage *u) {
        _cleanup_(claims_release) struct claims claims = {};
        struct hvt_controller old = *c;  /* c points into the list a rescan replaces */
        int r;

        old.syspath = NULL;
        if (!claim_disks(d, c, u, &claims))
                return false;

        /* Until the bind succeeds a crash would lose the controller: the next start binds it. */
        r = pending_save(d, c->name);
        if (r < 0) {
                refuse(d, c, "cannot record it as pending in the runtime directory (%s)", strerror(-r));
                return false;
        }
        hvt_notify_watchdog(&d->notify);  /* the unbind flushes every disk's cache */
        r = hvt_sysfs_write(driver_fd, HVT_ATTR_DRIVER_UNBIND, c->name);
        if (r < 0) {
                pending_clear(d);
                (void) hvt_log_controller(&d->log, c, LOG_ERR, r, HVT_MESSAGE_REPROBE_FAILED, NULL,
                                          "host%u (controller %s): cannot unbind it from hv_storvsc (%m): left as it was",
                                          c->host, c->controller);
                return false;
        }
        claims_release(&claims);

        hvt_notify_watchdog(&d->notify);
        r = bind_controller(d, driver_fd, old.name);
        if (r < 0) {
                (void) hvt_log_controller(&d->log, &old, LOG_CRIT, r, HVT_MESSAGE_REPROBE_FAILED, NULL,
                                          "Controller %s: cannot bind it to hv_storvsc again (%m): its disks are gone "
                                          "until: echo %s > %s/bind (hvtuned tries again at its next start)",
                                          old.controller, old.name, DRIVER_DIR);
                return true;
        }
        pending_clear(d);
        /* The SCSI host exists once bind returns (storvsc_probe adds it); its disks follow
         * as the asynchronous scan finds them, each with an add event. */
        if (hvt_host_scan(d) >= 0)
                report_done(d, &old, old.nr_hw_queues);
        return true;
}

int hvt_reprobe_idle(struct hvt_daemon *d, struct hvt_unbound *ret) {
        _cleanup_(hvt_usage_done) struct hvt_usage u = {};
        _cleanup_close_ int driver_fd = -EBADF;
        _cleanup_free_ char (*names)[HVT_GUID_STR_MAX] = NULL;
        size_t n = 0;
        int r;

        *ret = (struct hvt_unbound) {};
        if (d->once || (d->apply_flags & HVT_APPLY_DRY_RUN)) {
                hvt_log_info(&d->log, "Not re-probing controllers under --once or --dry-run: their disks come "
                             "back as new devices, which only the service tunes");
                return 0;
        }
        /* Names first: each re-probe reads the controllers anew. */
        names = calloc(d->host.controllers.n + 1, sizeof(*names));
        if (!names)
                return hvt_log_errno(&d->log, LOG_ERR, -ENOMEM, "Out of memory");
        for (size_t i = 0; i < d->host.controllers.n; i++) {
                const struct hvt_controller *c = &d->host.controllers.v[i];

                if (c->kind == HVT_KIND_IDE || d->driver.target == 0 || c->nr_hw_queues <= d->driver.target)
                        continue;
                if (d->driver.param_last.outcome != HVT_APPLIED && d->driver.param_last.outcome != HVT_UNCHANGED) {
                        refuse(d, c, "the module parameter does not hold the cap, so a re-probe would not apply it");
                        continue;
                }
                memcpy(names[n++], c->controller, sizeof(*names));
        }
        if (n == 0)
                return 0;

        r = hvt_usage_load(&u);
        if (r >= 0) {
                driver_fd = hvt_sysfs_open_dir(DRIVER_DIR);
                r = driver_fd;
        }
        for (size_t i = 0; i < n; i++) {
                const struct hvt_controller *c = hvt_controllers_find(&d->host.controllers, names[i]);

                if (!c)
                        continue;
                if (r < 0)
                        refuse(d, c, "cannot read the mounts, swaps or %s: %s", DRIVER_DIR, strerror(-r));
                else if (reprobe_one(d, driver_fd, c, &u))
                        /* In place: names[] is walked ahead of what it keeps. */
                        memcpy(names[ret->n++], names[i], sizeof(*names));
        }
        ret->controller = TAKE_PTR(names);
        return 0;
}
