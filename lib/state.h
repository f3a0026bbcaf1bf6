/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the state file, what a running hvtuned publishes for `hvtuned --status`: every disk it
 * manages with each attribute's wanted value, original and last result, its drift repairs and
 * knock-ons, the controllers' hardware-queue figures and the driver's cap; its text format,
 * written and read.
 *
 * The format is line-oriented, one record a line, its fields separated by tabs and each field
 * escaped as escape.h does (no field holds a tab or a newline then):
 *
 *   hvtuned-state  1                  first: the format's version
 *   pid            PID
 *   written        USEC               CLOCK_REALTIME
 *   status         TEXT               the daemon's one-line status (STATUS=)
 *   driver         CAP  CPUS  SUPPORT  ORIGINAL   SUPPORT: 1 yes, 0 no, -1 unknown
 *   disk           NAME SYSPATH DEVICE_SYSPATH CONTROLLER KIND ROLE REPAIRS LAST_USEC LAST_ATTR PAUSED FAILED
 *   attr           ATTR ROLE WANTED ORIGINAL LEFT LAST ERRNO [KEPT CEILING ORIGIN]   (of the disk
 *                  line before it; the bracketed fields since 0.2.0, an earlier hvtuned's line ends
 *                  before them: KEPT what the kernel kept of WANTED, CEILING 1 when WANTED is one,
 *                  ORIGIN where WANTED comes from, "FILE:LINE" or "built-in ...")
 *   controller     HOST CONTROLLER KIND HW_QUEUES CAN_QUEUE CAPPED_QUEUES OVER_CAP BYTES CAPPED_BYTES BAND_PCT
 *   nvme           NAME KIND IO_QUEUES QUEUE_DEPTH BYTES BAND_PCT   (BAND_PCT: an assumed layout's, 0..100)
 *   end            N                  last: the number of lines before it
 *
 * A line without the bracketed fields (an older hvtuned's) reads as "", 0 and "". ORIGIN is
 * for a person: the writer cuts a long path at the front and keeps ":LINE", and a reader cuts
 * a longer one (a newer writer's) rather than refuse the file.
 *
 * An empty field is "none". A reader of version 1 skips the records it does not know and the
 * fields past those it knows, so that a field or a record may be added without a new version;
 * anything that changes what a known field means is a new version, which it refuses. A file
 * without its end line is cut short: refused, never half read. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "apply.h"
#include "attr.h"
#include "disk.h"

/* In the runtime directory: a dot name, which is never a disk's record (records.c refuses
 * those) and which the records' prune leaves alone. */
#define HVT_STATE_FILE ".state"
#define HVT_STATE_VERSION 1
/* An origin's text in the state file: "/etc/hvtuned.conf.d/50-fleet.conf:12", cut past it. */
#define HVT_ORIGIN_TEXT_MAX 128
/* The longest state file a reader takes: some 700 bytes a disk, so beyond 10,000 disks. */
#define HVT_STATE_MAX (16u << 20)

/* What an attribute is to hvtuned. */
enum hvt_state_role {
        HVT_STATE_MANAGED,     /* in the plan: hvtuned keeps it at its wanted value */
        HVT_STATE_YIELDED,     /* contested, left to another writer (track.h) */
        HVT_STATE_KNOCK_ON,    /* not managed; a write of hvtuned's changed it: its original goes back with that write's */
        _HVT_STATE_ROLE_MAX,
};

const char *hvt_state_role_to_string(enum hvt_state_role r);

struct hvt_state_attr {
        enum hvt_attr_id id;
        enum hvt_state_role role;
        char want[HVT_VALUE_MAX];     /* "": none (a knock-on) */
        char orig[HVT_VALUE_MAX];     /* "": none recorded */
        char left[HVT_VALUE_MAX];     /* a knock-on: what hvtuned's write left in it; "": not known */
        int last;                     /* enum hvt_outcome of the last pass; -1: none */
        int error;                    /* its positive errno, 0 */
        char kept[HVT_VALUE_MAX];     /* what the kernel kept of want (clamped); "": none */
        bool ceiling;                 /* want is a ceiling: at or below it is as wanted */
        char origin[HVT_ORIGIN_TEXT_MAX]; /* where want comes from (origin.h's text); "": not known */
        /* Not in the file: what sysfs shows now, read by `--status` itself, and how that
         * compares with want as a pass would judge it (kept and ceiling included):
         * HVT_UNCHANGED as wanted, HVT_WOULD_APPLY not, -1 not judged (no want, or the read
         * failed). */
        char current[HVT_VALUE_MAX];
        int current_error;            /* < 0: could not be read */
        int current_outcome;
};

struct hvt_state_disk {
        char *name, *syspath, *device_syspath;
        char controller[HVT_GUID_STR_MAX];
        enum hvt_kind kind;
        enum hvt_role role;
        uint64_t repairs;             /* drift repairs since hvtuned found it */
        uint64_t last_repair_usec;    /* CLOCK_REALTIME; 0: none, or not known any more */
        int last_repair_attr;         /* enum hvt_attr_id; -1: none */
        bool paused;                  /* repairs paused: reverted too often */
        unsigned failed;              /* settings that failed in the last pass */
        struct hvt_state_attr attr[_HVT_ATTR_DISK_MAX];
        size_t n_attr;
};

struct hvt_state_controller {
        unsigned host;
        char controller[HVT_GUID_STR_MAX];
        enum hvt_kind kind;
        unsigned nr_hw_queues, can_queue, capped_queues;
        bool over_cap;
        uint64_t bytes, capped_bytes;  /* the estimates; 0: unknown (no request layout) */
        unsigned band_pct;             /* how far they may be off (an assumed layout); 0: exact */
};

struct hvt_state_nvme {
        char name[32];
        enum hvt_kind kind;
        unsigned nr_io_queues, q_depth;
        uint64_t bytes;                /* 0: unknown */
        unsigned band_pct;             /* how far it may be off (an assumed layout); 0: exact */
};

struct hvt_state_driver {
        unsigned cap;                  /* storvsc_max_hw_queues asked; 0: none */
        unsigned present_cpus;         /* 0: unknown */
        int cap_support;               /* 1 yes, 0 no (before 5.13), -1 not known (no storvsc) */
        char orig[HVT_VALUE_MAX];      /* "": none recorded */
        /* Not in the file: the parameter now. */
        char current[HVT_VALUE_MAX];
        int current_error;
};

struct hvt_state {
        bool running;                  /* a running daemon's; false: from records and sysfs */
        pid_t pid;
        uint64_t written_usec;
        char *status;
        struct hvt_state_driver driver;
        struct hvt_state_disk *disk;
        size_t n_disk;
        struct hvt_state_controller *controller;
        size_t n_controller;
        struct hvt_state_nvme *nvme;
        size_t n_nvme;
};

void hvt_state_done(struct hvt_state *s);

/* A new disk at the end of s->disk, with its strings copied; NULL when out of memory. */
struct hvt_state_disk *hvt_state_add_disk(struct hvt_state *s, const char *name, const char *syspath,
                                          const char *device_syspath);

/* The text of s, in *ret (malloc'd, NUL-terminated): 0 or -ENOMEM. */
int hvt_state_format(const struct hvt_state *s, char **ret);

/* The same text a record at a time, to f: the head (s's pid, time, status and driver), each
 * disk, then the tail (s's controllers, and the end line). A daemon with thousands of disks
 * writes them one by one, never all of them in memory at once. The tail returns -ENOMEM when
 * a field could not be escaped; the stream's own errors are the stream's. */
struct hvt_state_out {
        FILE *f;
        unsigned lines;
        bool oom;
};
void hvt_state_write_head(struct hvt_state_out *o, const struct hvt_state *s);
void hvt_state_write_disk(struct hvt_state_out *o, const struct hvt_state_disk *d);
int hvt_state_write_tail(struct hvt_state_out *o, const struct hvt_state *s);

/* Reads text (modified) into *ret (running set). -EBADMSG for a text that is no state file or
 * cut short, -EPROTONOSUPPORT for another version, each with why; -ENOMEM. */
int hvt_state_parse(char *text, struct hvt_state *ret, char *why, size_t size);

/* Reclaimable at the next boot (or a re-probe) over the controllers past the cap, and how
 * many they are; 0 bytes also when the layout is unknown. */
uint64_t hvt_state_reclaimable(const struct hvt_state *s, size_t *ret_over);
