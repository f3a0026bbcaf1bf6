/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the daemon's context, the one place that holds running state: configuration, the
 * managed disks, the storvsc driver's cap and controllers, the event sources. Only types:
 * every module of daemon/ includes it, so it includes none of theirs but the leaves'. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <libudev.h>

#include "apply.h"
#include "config.h"
#include "controllers.h"
#include "disks.h"
#include "event.h"
#include "layout.h"
#include "log.h"
#include "notify.h"
#include "nvme.h"
#include "nvme-controllers.h"
#include "records.h"

/* The hv_storvsc driver's module parameter (driver.c). */
struct hvt_driver {
        bool loaded;                     /* the record of the original was looked for */
        int orig_error;                  /* that record could not be read: no write until it can */
        unsigned present;                /* CPUs present; 0 when unknown */
        unsigned target;                 /* the cap asked of the parameter; 0: left alone */
        struct hvt_result param_last;    /* the parameter's last result */
        struct hvt_originals orig;       /* the parameter before hvtuned first wrote it */
        int cap_support;                 /* hvt_driver_cap_supported() */
};

/* The storvsc controllers: their queues, what they hold, the report (host.c). */
struct hvt_host {
        struct hvt_controllers controllers;
        bool no_figures_told;            /* a kernel without nr_hw_queues: said once */
        struct hvt_layout layout;        /* what a request costs on this kernel */
        bool layout_read;                /* read (and said) once: the kernel does not change */
        struct hvt_nvme_controllers nvme;       /* Azure's NVMe controllers, as last read */
        struct hvt_nvme_controllers nvme_told;  /* as last reported: a change is reported again */
        struct hvt_nvme_layout nvme_layout;     /* what an NVMe request costs on this kernel */
        bool nvme_layout_read;                  /* read once, when the first controller is seen */
        char advice_told[384];                  /* the storvsc boot advice last said ("": none) */
};

/* A controller whose disks are re-checked after an event (settle.h): only while a burst is
 * under way, or its last re-check is still to come. */
struct hvt_settle {
        struct hvt_daemon *daemon;
        char *controller;                /* its syspath (settle.h) */
        struct hvt_event_source *timer;  /* the next re-check */
        uint64_t event_usec;             /* CLOCK_MONOTONIC: its last event */
        uint64_t check_usec;             /* its last re-check; 0: none yet */
};

struct hvt_settles {
        struct hvt_settle **v;
        size_t n, allocated;
};

/* What happened since start, for the metrics file. */
struct hvt_counters {
        uint64_t repairs;           /* drift repairs, whoever's write they undid */
        uint64_t kernel_repairs;    /* of those, of the kernel's re-application (writer.h) */
        uint64_t busy_retries;      /* passes run again after EBUSY */
        uint64_t contests[_HVT_ATTR_DISK_MAX][2];  /* contested attributes found, by enum hvt_contest_policy */
        uint64_t reloads, reload_failures;
        uint64_t last_reload_usec;  /* CLOCK_REALTIME; 0: none yet */
        bool last_reload_ok;
};

/* The metrics file as last written (metrics-file.h). */
struct hvt_metrics_file {
        char *path;      /* NULL: none configured yet; the rest is of this path */
        int dir_fd;      /* its directory, walked and checked; -EBADF until then */
        bool made;       /* dev and ino are the file hvtuned renamed there */
        dev_t dev;
        ino_t ino;
        char *written;   /* its text */
        uint64_t written_usec; /* CLOCK_MONOTONIC, when it was last written */
        int error;       /* the last write's, said once */
};

struct hvt_daemon {
        struct hvt_log log;
        const char *config_path;
        bool config_explicit;    /* -c given: a missing file is an error */
        struct hvt_config *config;
        unsigned apply_flags;    /* HVT_APPLY_DRY_RUN */
        bool once;               /* --once / --dry-run: one pass, no loop */
        unsigned kernel_version; /* the running kernel's, at start (writer.h); 0: unknown */
        int state_fd;            /* the records of originals; -1 if unavailable */
        unsigned state_write_flags;  /* HVT_WRITE_VOLATILE on tmpfs (/run) */
        int lock_fd;             /* the runtime directory, held while its records are refused */

        struct udev *udev;
        struct udev_monitor *monitor;
        struct hvt_event *event;
        struct hvt_event_source *monitor_source;
        struct hvt_event_source *resync;  /* a walk over every disk after lost events */
        uint64_t resync_done_usec;        /* CLOCK_MONOTONIC, when the last one ended; 0: none yet */
        struct hvt_event_source *verify;  /* verify_interval timer, NULL when 0 */
        struct hvt_event_source *status;  /* after each loop iteration: STATUS= and the metrics file */
        struct hvt_notify notify; /* the service manager's socket, the watchdog */

        struct hvt_driver driver; /* the hw queue cap on the driver's parameter */
        struct hvt_host host;    /* the controllers and what their queues hold */
        struct hvt_disks disks;  /* the managed disks */
        struct hvt_settles settles;  /* controllers whose disks an event wants re-checked */
        bool any_failed;         /* for --once's exit code */
        bool undo;               /* hvtuned --restore: a timeout a stop keeps is let go (tune.c); the
                                  * cap's restore said without a controller scan (driver.c) */
        bool nvme_advice_told;   /* the NVMe I/O timeout's boot advice: once a run (nvme-timeout.h) */
        bool foreign_told;       /* files not hvtuned's in the runtime directory: said once */
        char config_error[300];  /* "FILE:LINE" of the last failed load, "" after a good one */
        char status_sent[1024];  /* the STATUS= last sent, so that only changes are sent */
        unsigned reloads;        /* reloads begun, for the ExecReload handshake (reload.h) */
        struct hvt_counters counters;
        struct hvt_metrics_file metrics;
        uint64_t state_hash;     /* of the state file's text as last written, its time left out (state-file.h) */
        bool state_hash_set;
        bool state_error_told;   /* a failure to write it was said */
        uint64_t state_gathered_usec;         /* CLOCK_MONOTONIC, its last gathering; 0: none yet */
        struct hvt_event_source *state_later; /* set while a gathering waits out the interval */
};
