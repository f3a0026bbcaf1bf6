/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: hvtuned's figures as Prometheus text exposition (version 0.0.4), for node_exporter's
 * textfile collector: the names, labels, types and help of every metric. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "apply.h"
#include "disk.h"

struct hvt_metrics_controller {
        unsigned host;                  /* N of hostN */
        const char *controller;         /* "{f8b3781b-...}" */
        enum hvt_kind kind;
        unsigned nr_hw_queues, can_queue;
        uint64_t bytes;                 /* preallocated now (hwqueues.h's estimate) */
        uint64_t capped_bytes;          /* preallocated once probed under the cap */
        unsigned capped_queues;         /* its hw queues once probed under the cap */
        bool over_cap;                  /* it has more than the cap (which this kernel may not apply) */
        unsigned band_pct;              /* how far both may be off (an assumed layout); 0: exact */
};

struct hvt_metrics_nvme {
        const char *controller;         /* "nvme0" */
        enum hvt_kind kind;             /* one of the NVMe kinds */
        unsigned nr_io_queues, q_depth;
        uint64_t bytes;                 /* preallocated (nvme.h's estimate); 0: none */
        unsigned band_pct;              /* how far it may be off (an assumed layout); 0: exact */
};

/* Whether storvsc has storvsc_max_hw_queues (5.13 and later). */
enum hvt_cap_support {
        HVT_CAP_UNKNOWN,        /* no storvsc seen: not written */
        HVT_CAP_SUPPORTED,
        HVT_CAP_UNSUPPORTED,    /* one hw queue per present CPU until a kernel update */
};

/* What a pass leaves, gathered by the daemon. */
struct hvt_metrics {
        const char *version;
        unsigned disks_tuned, disks_failed, disks_paused;
        unsigned disks_by[_HVT_KIND_MAX][_HVT_ROLE_MAX];  /* managed disks by kind and role */
        unsigned attributes[_HVT_OUTCOME_MAX];  /* managed attributes by their last result */
        uint64_t repairs;                       /* drift repairs since start */
        uint64_t kernel_repairs;                /* of those, of the kernel's re-application */
        uint64_t busy_retries;                  /* passes run again after EBUSY, since start */
        uint64_t reloads, reload_failures;      /* since start */
        uint64_t last_reload_usec;              /* CLOCK_REALTIME; 0: none yet */
        bool last_reload_ok;
        unsigned cap;                           /* the hw queue cap asked of storvsc; 0: none */
        enum hvt_cap_support cap_support;
        /* Per disk attribute (enum hvt_attr_id), by what hvtuned does (enum hvt_contest_policy):
         * contests found since start, and disks where it is contested now. */
        uint64_t contests[_HVT_ATTR_DISK_MAX][2];
        unsigned contested[_HVT_ATTR_DISK_MAX][2];
        const struct hvt_metrics_controller *controllers;
        size_t n_controllers;
        /* Where the controllers' estimates come from (layout.h), with them: "btf", "table" or
         * "assumed" (then the row), "unknown"; NULL before it is read. */
        const char *layout_source, *layout_row;
        const char *nvme_layout_source, *nvme_layout_row;     /* the same for NVMe's estimates */
        const struct hvt_metrics_nvme *nvme;    /* Azure's NVMe controllers */
        size_t n_nvme;
};

/* The text of m, in *ret (malloc'd, NUL-terminated). */
int hvt_metrics_render(const struct hvt_metrics *m, char **ret);
