/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the configuration model and its loading from a libconfig file, with every key and
 * value validated before anything can be applied. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attr.h"
#include "config-error.h"
#include "disk.h"
#include "origin.h"

enum {
        HVT_MATCH_KIND       = 1 << 0,
        HVT_MATCH_CONTROLLER = 1 << 1,
        HVT_MATCH_LUN        = 1 << 2,
        HVT_MATCH_HOST       = 1 << 3,
        HVT_MATCH_VENDOR     = 1 << 4,
        HVT_MATCH_MODEL      = 1 << 5,
        HVT_MATCH_ROLE       = 1 << 6,
};

/* Every field present must match (AND); an empty match selects every disk. */
struct hvt_match {
        unsigned fields;
        enum hvt_kind kind;
        enum hvt_role role;
        char controller[HVT_GUID_STR_MAX];
        uint64_t lun;
        unsigned host;
        char vendor[HVT_VENDOR_MAX];
        char model[HVT_MODEL_MAX];
};

struct hvt_override {
        struct hvt_match match;
        struct hvt_origin at;  /* where the override starts */
        struct hvt_setting settings[_HVT_ATTR_MAX];
        struct hvt_origin origin[_HVT_ATTR_MAX];
};

/* A setting that is no disk attribute (a top-level key, host.*, contested.*.*) as the last
 * file that set it wrote it: for --check-config's listing. */
struct hvt_config_key {
        char name[64];
        char value[PATH_MAX + 2];  /* a string quoted, whole: metrics_file is a path */
        struct hvt_origin origin;
};

/* verify_interval: seconds between re-checks of every disk, at most a week; 0 = never. By
 * default a minute: what the kernel re-applies without an event (a controller rescan, a SCSI
 * rescan on 6.12 and later) and what a neighbour writes without one (TuneD, WALinuxAgent)
 * is repaired within it. */
#define HVT_VERIFY_INTERVAL_MAX (7 * 24 * 3600)
#define HVT_VERIFY_INTERVAL_DEFAULT 60

/* The hv_storvsc driver as a whole: its hw queue cap (host = { ... };). */
struct hvt_host_config {
        bool max_hw_queues_set;         /* absent: 4 when more than 4 CPUs are present */
        unsigned max_hw_queues;         /* 0: never touch the module parameter */
        bool reprobe_idle_controllers;  /* unbind and bind an unused controller over the cap */
};

struct hvt_config {
        /* The main file's name, which names the configuration (its drop-ins are in path + ".d"),
         * whether it exists or drop-ins alone were read; NULL for the built-in policy. */
        char *path;
        /* Every file read, in the order read: the main file when it exists, then each drop-in
         * (the last n_dropins). Not the files they @include. */
        char **files;
        size_t n_files;
        size_t n_dropins;
        unsigned verify_interval;  /* 0: no timer at all; HVT_VERIFY_INTERVAL_DEFAULT */
        bool restore_on_stop;      /* put originals back on SIGTERM (default true) */
        /* The platform values (hvt_platform_defaults(), default true), under every file's
         * settings, with or without a file. */
        bool platform_defaults;
        /* The built-in policy in place of a missing main file (default true). Where the main
         * file exists it has replaced the policy already, and false changes nothing. */
        bool builtin_policy;
        char *metrics_file;        /* Prometheus text file written after every pass; NULL: none */
        uint32_t contest_insist;   /* contested: the attributes insisted on (1 << id); the rest yield */
        struct hvt_host_config host;
        struct hvt_setting settings[_HVT_ATTR_MAX];
        struct hvt_origin origin[_HVT_ATTR_MAX];  /* of each of settings */
        struct hvt_override *overrides;
        size_t n_overrides;
        struct hvt_config_key *keys;
        size_t n_keys;
        /* The files origins name (included ones too), each once: an origin points into it. */
        char **origin_files;
        size_t n_origin_files;
};


/* Loads and validates the layers: path, or, where it does not exist (missing_ok), the built-in
 * policy (queue.scheduler = "none") in its place; then its drop-ins (config-dropins.h) in their
 * order, each over what the files before it set: a top-level key, and each attribute of the queue, device,
 * host and contested groups, takes the last file's value; overrides are appended in file
 * order. The rules that span settings (device.timeout or queue.io_timeout, not both) span the
 * files. builtin_policy = false (the last file's word) drops the built-in policy, and only it;
 * platform_defaults = false drops only the platform values (hvt_policy_plan()). c->path is NULL when neither the main file nor a drop-in exists. The load, every file and include together, reads
 * at most HVT_CONFIG_LOAD_MAX bytes, opens at most HVT_CONFIG_FILES_MAX files and holds at
 * most HVT_CONFIG_NAMES_MAX setting names of HVT_CONFIG_NAME_BYTES_MAX bytes, and is refused
 * (-E2BIG) where it would cross one, before libconfig parses what crosses it (config-scan.h).
 * On error returns -errno, fills err (the file and line at fault: a drop-in's, an included
 * file's, the @include or the name that crossed a bound), and *ret is untouched. */
int hvt_config_load(const char *path, bool missing_ok, struct hvt_config **ret,
                    struct hvt_config_error *err);

void hvt_config_free(struct hvt_config *c);

/* What c was read from, for a person: "/etc/hvtuned.conf", "/etc/hvtuned.conf (+2 drop-ins)",
 * "/etc/hvtuned.conf.d (1 drop-in, no /etc/hvtuned.conf)" or "no configuration file, built-in
 * defaults". */
void hvt_config_describe(const struct hvt_config *c, char *buf, size_t size);

/* "file:line: key: message" (parts that are empty left out). */
void hvt_config_error_format(const struct hvt_config_error *err, char *buf, size_t size);
