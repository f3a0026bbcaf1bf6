/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the daemon's context, the one place that holds running state (configuration, the
 * Hyper-V disks it manages with their originals and history, the storvsc driver's cap and
 * controllers, its event sources). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <libudev.h>
#include <systemd/sd-event.h>

#include "apply.h"
#include "config.h"
#include "disk.h"
#include "host.h"
#include "index.h"
#include "log.h"
#include "notify.h"
#include "policy.h"
#include "state.h"
#include "track.h"

struct hvt_daemon;

/* A Hyper-V disk hvtuned manages. */
struct hvt_tracked {
        struct hvt_daemon *daemon;
        struct hvt_disk disk;
        struct hvt_slots slots;         /* per attribute: wanted, original, history */
        int orig_error;                 /* < 0: the record exists but could not be read */
        unsigned n_failed, n_unsupported, n_would_apply;  /* of the last pass */
        bool seen;                      /* found by the enumeration under way */
        struct hvt_repair_window window; /* CLOCK_MONOTONIC: drift rate limit */
        sd_event_source *resume;        /* set while repairs are paused */
};

/* What happened since start, for the metrics file. */
struct hvt_counters {
        uint64_t repairs;           /* drift repairs */
        uint64_t reloads, reload_failures;
        uint64_t last_reload_usec;  /* CLOCK_REALTIME; 0: none yet */
        bool last_reload_ok;
};

/* The metrics file as last written (metrics-file.h). */
struct hvt_metrics_file {
        char *path;      /* NULL: none written */
        char *written;   /* its text */
        int error;       /* the last write's, said once */
};

struct hvt_daemon {
        struct hvt_log log;
        const char *config_path;
        bool config_explicit;    /* -c given: a missing file is an error */
        struct hvt_config *config;
        unsigned apply_flags;    /* HVT_APPLY_DRY_RUN */
        bool once;               /* --once / --dry-run: one pass, no loop */
        int state_fd;            /* the records of originals; -1 if unavailable */

        struct udev *udev;
        struct udev_monitor *monitor;
        sd_event *event;
        sd_event_source *verify;  /* verify_interval timer, NULL when 0 */
        struct hvt_notify notify; /* the service manager's socket, the watchdog */

        struct hvt_host host;    /* the driver: hw queue cap, controllers */
        struct hvt_tracked **disks;
        size_t n_disks, n_allocated;
        struct hvt_index index;  /* the disks by syspath */
        bool any_failed;         /* for --once's exit code */
        bool foreign_told;       /* files not hvtuned's in the runtime directory: said once */
        char config_error[300];  /* "FILE:LINE" of the last failed load, "" after a good one */
        char status[1024];       /* the STATUS= last sent, so that only changes are sent */
        unsigned reloads;        /* reloads begun, for the ExecReload handshake (reload.h) */
        struct hvt_counters counters;
        struct hvt_metrics_file metrics;
};

void hvt_daemon_done(struct hvt_daemon *d);

/* Loads the configuration into d->config; on error logs it (file:line) and keeps the old. */
int hvt_daemon_load_config(struct hvt_daemon *d);

/* Opens and locks the runtime directory of originals: $RUNTIME_DIRECTORY (set by systemd's
 * RuntimeDirectory=) or /run/hvtuned. Without it hvtuned keeps originals in memory only;
 * -EWOULDBLOCK (logged) when another hvtuned holds it. */
int hvt_daemon_open_state(struct hvt_daemon *d);

/* That directory's path. */
void hvt_daemon_state_path(char *buf, size_t size);

/* Runs one udev device through the data path: a block disk for "add" and "change" (or
 * none, from enumeration), forgotten on "remove"; a SCSI device's change re-checks its disk.
 * Devices that are not Hyper-V disks are ignored; a managed disk that stops being one is
 * forgotten and left as it is. */
int hvt_daemon_handle_device(struct hvt_daemon *d, struct udev_device *dev, const char *action);

/* Forgets a managed disk that is gone, with its record. */
void hvt_daemon_forget(struct hvt_daemon *d, struct hvt_tracked *t);

/* Walks every block disk, as at start-up and after lost events; a managed disk it does not
 * find any more is forgotten as removed, and so are records of disks that are not there.
 * Returns 1, having walked only part, when a SIGTERM or SIGINT is pending. */
int hvt_daemon_enumerate(struct hvt_daemon *d);

/* The configuration changed: every managed disk gets the new plan. */
void hvt_daemon_retune_all(struct hvt_daemon *d);

/* The periodic re-check of every managed disk (verify_interval). */
void hvt_daemon_verify_all(struct hvt_daemon *d);

/* Puts every recorded original back, and drops the records. */
void hvt_daemon_restore_all(struct hvt_daemon *d);

/* "4 Hyper-V disks on 2 controllers: 4 tuned, 0 failed" */
void hvt_daemon_format_status(const struct hvt_daemon *d, char *buf, size_t size);

/* Sends STATUS= when its text changed: a change-event flood must not become a notification
 * flood. */
void hvt_daemon_update_status(struct hvt_daemon *d);
