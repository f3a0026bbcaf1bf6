/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: hvtuned --restore (see undo.h).
 *
 * No second restore: each record is loaded into a tracked disk (or the driver's original) as
 * a daemon starting after a crash loads it, and hvt_pass_restore() puts them back as a stop
 * does, in the same order, with the same retries of a busy kernel, the same knock-ons and the
 * same words. What hvtuned would want of a disk is not asked: the configuration is not read,
 * so that a file that no longer loads cannot keep the originals out.
 *
 * A neighbour's value: a daemon that yielded an attribute to a neighbour puts its original
 * back at stop only where its own value is still there. Without the daemon that value is not
 * known (the records hold originals only), and a knock-on's is not either, so each original
 * goes back as it is recorded: the operator asked for the state before hvtuned, and a
 * neighbour that writes on every event writes its value again. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"
#include "macro.h"
#include "messages.h"
#include "nvme-timeout.h"
#include "originals.h"
#include "passes.h"
#include "report.h"
#include "rundir.h"
#include "tune.h"
#include "undo.h"

struct tally {
        unsigned restored, dropped, kept;
        unsigned held;  /* Azure NVMe timeouts left as hvtuned set them, their records deleted */
};

static bool dry_run(const struct hvt_daemon *d) {
        return d->apply_flags & HVT_APPLY_DRY_RUN;
}

/* The runtime directory into d->state_fd, locked: 0; 1 when there is none (nothing was ever
 * recorded); -errno, said. A directory the daemon would refuse for its records holds none it
 * wrote: nothing is taken from it. */
static int hold(struct hvt_daemon *d, const char *path) {
        struct hvt_rundir_holder holder;
        char why[160];
        int fd, r;

        fd = hvt_rundir_open_dir(path, false);
        if (fd == -ENOENT)
                return 1;
        if (fd == -ELOOP)
                return hvt_log_errno(&d->log, LOG_ERR, fd, "%s is a symbolic link: hvtuned keeps no records there, "
                                     "and restores none from it", path);
        /* The unit's RuntimeDirectoryMode=0700: another user was never meant to get in. Said as
         * --status says it, not as a bare "Permission denied". */
        if (fd == -EACCES)
                return hvt_rundir_needs_root(&d->log, "--restore", path);
        if (fd < 0)
                return hvt_log_errno(&d->log, LOG_ERR, fd, "Cannot open %s: %m", path);
        (void) hvt_rundir_private(&d->log, fd, path, !dry_run(d));
        /* Held while this works, as a daemon holds it: one starting meanwhile fails as it does
         * beside another daemon, instead of recording the values this is putting back. The fd
         * is the context's once held: what is done at exit with it (the state file) is the
         * holder's to do. */
        r = hvt_rundir_lock(fd, dry_run(d), &holder);
        if (r >= 0)
                d->state_fd = fd;
        else
                close(fd);
        if (r == -EWOULDBLOCK && holder.hvtuned)
                return hvt_log_errno(&d->log, LOG_ERR, r, "%s is running: `systemctl stop hvtuned` puts the "
                                     "originals back (with restore_on_stop = false, hvtuned --restore does once it has "
                                     "stopped)", holder.name);
        if (r == -EWOULDBLOCK)
                return hvt_rundir_said_held(&d->log, r, path, &holder, "nothing is restored while it does");
        if (r < 0)
                return hvt_log_errno(&d->log, LOG_ERR, r, "Cannot lock %s: %m", path);
        r = hvt_rundir_check(fd, why, sizeof(why));
        if (r < 0)
                return hvt_log_errno(&d->log, LOG_ERR, r, "%s: refused for the records of original values, %s: nothing "
                                     "restored from it", path, why);
        return 0;
}

/* A record with nothing to put back: its disk is gone. */
static void drop(struct hvt_daemon *d, const char *name, const char *why, struct tally *n) {
        int r = dry_run(d) ? 0 : hvt_records_delete(d->state_fd, name);

        if (r < 0) {
                (void) hvt_log_errno(&d->log, LOG_ERR, r, "%s: %s, but its record cannot be deleted: %m", name, why);
                n->kept++;
                return;
        }
        (void) hvt_log_struct(&d->log, LOG_NOTICE, 0, NULL, NULL, "%s: %s: its record %s dropped",
                              name, why, dry_run(d) ? "would be" : "is");
        n->dropped++;
}

/* What the load of a record that is there (listed) said: another instance's (-ENOENT, gone
 * with the load), damaged (-EBADMSG, gone and said), unreadable (said: kept). */
static void not_loaded(struct hvt_daemon *d, const char *name, int r, struct tally *n) {
        if (r == -ENOENT)
                (void) hvt_log_struct(&d->log, LOG_NOTICE, 0, NULL, NULL,
                                      "%s: its record is of an earlier disk of that name (another device number, "
                                      "diskseq or sysfs directory): %s dropped", name, dry_run(d) ? "would be" : "is");
        if (r == -ENOENT || r == -EBADMSG) {
                n->dropped++;
                return;
        }
        (void) hvt_log_errno(&d->log, LOG_ERR, r, "%s: its record is kept, for another hvtuned --restore: it cannot "
                             "be read (%m)", name);
        n->kept++;
}

/* A block disk of the record's name that is not one hvtuned tunes (the controller no longer
 * storvsc's, a USB disk that took the name): a record of another instance goes; one of this
 * very disk stays, as the daemon keeps it, for when the disk is one of hvtuned's again. */
static void take_foreign(struct hvt_daemon *d, const char *name, const char *syspath, dev_t devnum, struct tally *n) {
        struct hvt_disk id = {};
        struct hvt_subject s;
        struct hvt_originals o;
        int r;

        r = hvt_disk_read_instance(syspath, devnum, &id);
        if (r < 0) {
                (void) hvt_log_errno(&d->log, LOG_ERR, r, "%s: cannot tell which disk it is now (%m): its record is "
                                     "kept", name);
                n->kept++;
                return;
        }
        s = (struct hvt_subject) { .name = name, .syspath = syspath, .controller = "", .kind = "", .role = "",
                                   .dev = id.dev, .diskseq = id.diskseq, .ino = id.ino };
        r = hvt_originals_load(d, &s, &o, false);
        if (r < 0)
                return not_loaded(d, name, r, n);
        (void) hvt_log_struct(&d->log, LOG_ERR, 0, HVT_MESSAGE_STATE_ERROR, NULL,
                              "%s: no longer a disk hvtuned tunes (neither storvsc's nor Azure's NVMe): its record is "
                              "kept, for when it is again", name);
        n->kept++;
}

/* A disk's record into a tracked disk, for the pass, as the daemon's start loads it. */
static void take_disk(struct hvt_daemon *d, int class_block, const char *name, struct tally *n) {
        struct hvt_disk disk = {};
        struct hvt_tracked *t;
        char syspath[PATH_MAX];
        dev_t devnum;
        int r;

        r = hvt_classify_block_name(class_block, name, syspath, sizeof(syspath), &devnum);
        /* Gone only when the name is not listed at all: a link that could not be read is no
         * proof, and a partition's name was never a record's. */
        if (r == 0 && faccessat(class_block, name, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
                return drop(d, name, "no such disk any more", n);
        if (r == 0) {
                (void) hvt_log_struct(&d->log, LOG_ERR, 0, HVT_MESSAGE_STATE_ERROR, NULL,
                                      "%s: /sys/class/block/%s is there, but cannot be read as a whole disk: its record "
                                      "is kept", name, name);
                n->kept++;
                return;
        }
        if (r > 0)
                r = hvt_classify_syspath("/sys/devices", syspath, devnum, &disk);
        if (r < 0) {
                (void) hvt_log_errno(&d->log, LOG_ERR, r, "%s: cannot tell what disk it is now (%m): its record is kept",
                                     name);
                n->kept++;
                return;
        }
        if (r == 0)
                return take_foreign(d, name, syspath, devnum, n);
        t = hvt_disks_add(&d->disks, &disk);
        if (!t) {
                hvt_disk_done(&disk);
                (void) hvt_log_errno(&d->log, LOG_ERR, -ENOMEM, "%s: out of memory: its record is kept", name);
                n->kept++;
                return;
        }
        t->daemon = d;
        r = hvt_tune_load_record(d, t);
        if (r >= 0)
                return;
        hvt_disks_remove(&d->disks, t);  /* the last one: the others keep their order */
        not_loaded(d, name, r, n);
}

/* "queue/scheduler (Permission denied), queue/nr_requests (goes with queue/scheduler)" of what
 * t still has to put back: what a scheduler switch resets stays recorded while the scheduler
 * does, as it means something only under the original scheduler (track.h). */
static void format_left(const struct hvt_tracked *t, char *buf, size_t size) {
        const struct hvt_slot *sched = hvt_slot_get(&t->slots, HVT_ATTR_SCHEDULER);
        bool sched_left = sched && sched->orig_set;
        size_t off = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < t->slots.n && off < size; i++) {
                const struct hvt_slot *slot = &t->slots.slot[i];
                char attr[48];
                int k;

                if (!slot->orig_set)
                        continue;
                (void) hvt_attr_format_path((enum hvt_attr_id) slot->id, attr, sizeof(attr));
                if (sched_left && hvt_attr_reset_by_scheduler((enum hvt_attr_id) slot->id))
                        k = snprintf(buf + off, size - off, "%s%s (goes with queue/scheduler)", off ? ", " : "", attr);
                else if (slot->last.error > 0)
                        k = snprintf(buf + off, size - off, "%s%s (%s)", off ? ", " : "", attr, strerror(slot->last.error));
                else
                        k = snprintf(buf + off, size - off, "%s%s", off ? ", " : "", attr);
                if (k < 0)
                        break;
                off += (size_t) k;
        }
}

/* After the pass: what went back, what did not. */
static void count_disks(struct hvt_daemon *d, struct tally *n) {
        for (size_t i = 0; i < d->disks.n; i++) {
                const struct hvt_tracked *t = d->disks.v[i];
                char left[512];

                format_left(t, left, sizeof(left));
                if (dry_run(d)) {
                        n->restored++;
                        continue;
                }
                /* The record itself says whether it went: its save after the pass deletes it
                 * only when nothing of it is left (not one of an attribute this hvtuned does
                 * not know, nor one whose delete failed). */
                if (!*left && faccessat(d->state_fd, t->disk.sysname, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT) {
                        n->restored++;
                        continue;
                }
                if (!*left) {
                        (void) hvt_log_disk(&d->log, &t->disk, LOG_ERR, 0, HVT_MESSAGE_STATE_ERROR, NULL,
                                            "%s: its originals went back, but its record is still there: kept",
                                            t->disk.sysname);
                        n->kept++;
                        continue;
                }
                (void) hvt_log_disk(&d->log, &t->disk, LOG_ERR, 0, HVT_MESSAGE_STATE_ERROR, NULL,
                                    "%s: its record is kept, for another hvtuned --restore or the daemon's next stop: "
                                    "not put back: %s", t->disk.sysname, left);
                n->kept++;
        }
}

static void restore_driver_said(struct hvt_daemon *d, struct tally *n) {
        const struct hvt_setting *o = &d->driver.orig.value[HVT_ATTR_MAX_HW_QUEUES];
        const struct hvt_result *last = &d->driver.param_last;

        if (o->set && !dry_run(d)) {
                (void) hvt_log_struct(&d->log, LOG_ERR, last->error, HVT_MESSAGE_STATE_ERROR, NULL,
                                      "%s: its record is kept, for another hvtuned --restore or the daemon's next stop: "
                                      "not put back: storvsc_max_hw_queues%s%s%s", HVT_DRIVER_NAME,
                                      last->error ? " (" : "", last->error ? strerror(last->error) : "",
                                      last->error ? ")" : "");
                n->kept++;
                return;
        }
        n->restored++;
        /* storvsc reads it at probe only (driver.c). */
        if (last->outcome == HVT_APPLIED || last->outcome == HVT_CLAMPED || last->outcome == HVT_WOULD_APPLY)
                hvt_log_info(&d->log, "storvsc reads storvsc_max_hw_queues only when it probes a controller: the "
                             "controllers probed already keep their hw queues until they are probed again or the "
                             "next boot");
}

static void summary(struct hvt_daemon *d, const struct tally *n) {
        char held[96] = "";

        if (n->held > 0)
                snprintf(held, sizeof(held), " (%u Azure NVMe I/O timeout%s %s as set)", n->held,
                         n->held == 1 ? "" : "s", dry_run(d) ? "to leave" : "left");
        if (dry_run(d))
                hvt_log_info(&d->log, "Dry run, nothing written: %u record%s to put back%s, %u to drop, %u to keep",
                             n->restored, n->restored == 1 ? "" : "s", held, n->dropped, n->kept);
        else
                hvt_log_info(&d->log, "%u record%s put back and deleted%s, %u dropped, %u kept", n->restored,
                             n->restored == 1 ? "" : "s", held, n->dropped, n->kept);
}

int hvt_undo(struct hvt_daemon *d) {
        _cleanup_close_ int class_block = -EBADF;
        char path[4096], **names = NULL;
        struct tally n = {};
        bool driver = false;
        size_t n_names = 0;
        int r;

        d->undo = true;
        hvt_rundir_path(path, sizeof(path));
        r = hold(d, path);
        if (r > 0)
                hvt_log_info(&d->log, "Nothing to restore: there is no %s", path);
        if (r != 0)
                return r < 0 ? r : 0;
        r = hvt_records_list(d->state_fd, &names, &n_names);
        if (r < 0)
                return hvt_log_errno(&d->log, LOG_ERR, r, "Cannot list the records in %s: %m", path);
        if (n_names == 0) {
                hvt_log_info(&d->log, "Nothing to restore: %s holds no records", path);
                hvt_strv_free(names, n_names);
                return 0;
        }
        class_block = open("/sys/class/block", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (class_block < 0) {
                r = negative_errno();
                hvt_strv_free(names, n_names);
                return hvt_log_errno(&d->log, LOG_ERR, r, "Cannot open /sys/class/block: %m");
        }

        for (size_t i = 0; i < n_names; i++) {
                if (strcmp(names[i], HVT_DRIVER_NAME) == 0)
                        driver = true;
                else
                        take_disk(d, class_block, names[i], &n);
        }
        hvt_strv_free(names, n_names);
        r = driver ? hvt_driver_load(d) : 0;
        if (r < 0) {
                driver = false;  /* nothing loaded, nothing written */
                not_loaded(d, HVT_DRIVER_NAME, r, &n);
        }

        hvt_pass_restore(d);
        n.held = hvt_nvme_timeout_said_held(d);
        count_disks(d, &n);
        if (driver)
                restore_driver_said(d, &n);
        summary(d, &n);
        return n.kept > 0;
}
