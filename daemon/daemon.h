/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the daemon's context, the one place that holds running state (configuration, the
 * Hyper-V disks it manages, its event sources), and the per-device data path:
 * udev device -> classify -> plan -> apply -> report. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <libudev.h>
#include <systemd/sd-event.h>

#include "apply.h"
#include "config.h"
#include "disk.h"
#include "log.h"

/* A Hyper-V disk hvtuned manages, with the outcome of its last pass. */
struct hvt_tracked {
        struct hvt_disk disk;
        unsigned n_failed;       /* attributes that failed on the last pass */
        unsigned n_unsupported;
        unsigned n_would_apply;  /* --dry-run */
        bool seen;               /* found by the enumeration under way */
};

struct hvt_daemon {
        struct hvt_log log;
        const char *config_path;
        bool config_explicit;    /* -c given: a missing file is an error */
        struct hvt_config *config;
        unsigned apply_flags;    /* HVT_APPLY_DRY_RUN */
        bool once;               /* --once / --dry-run: one pass, no loop */

        struct udev *udev;
        struct udev_monitor *monitor;
        sd_event *event;

        struct hvt_tracked *disks;
        size_t n_disks, n_allocated;
        bool any_failed;         /* for --once's exit code */
        char config_error[300];  /* "FILE:LINE" of the last failed load, "" after a good one */
        char status[256];        /* the STATUS= last sent, so that only changes are sent */
};

void hvt_daemon_done(struct hvt_daemon *d);

/* Loads the configuration into d->config; on error logs it (file:line) and keeps the old. */
int hvt_daemon_load_config(struct hvt_daemon *d);

/* Runs one udev device through the data path for an "add" or "change" action, or forgets it
 * on "remove". Devices that are not Hyper-V disks are ignored; a managed disk that stops
 * being one is forgotten and left as it is. */
int hvt_daemon_handle_device(struct hvt_daemon *d, struct udev_device *dev, const char *action);

/* Walks every block disk, as at start-up and after lost events; a managed disk it does not
 * find any more is forgotten as removed. */
int hvt_daemon_enumerate(struct hvt_daemon *d);

/* "4 Hyper-V disks on 2 controllers: 4 tuned, 0 failed" */
void hvt_daemon_format_status(const struct hvt_daemon *d, char *buf, size_t size);
