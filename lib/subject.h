/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: what a record of originals or a report is about: one disk, or the hv_storvsc driver
 * itself, whose module parameter is its only attribute. Each holds only its own attributes. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "attr.h"
#include "disk.h"

#define HVT_DRIVER_NAME "hv_storvsc"
#define HVT_DRIVER_SYSPATH "/sys/module/hv_storvsc"

struct hvt_subject {
        bool driver;             /* the driver; else a disk */
        const char *name;        /* the disk's sysname, or HVT_DRIVER_NAME: a record's file name */
        const char *syspath;     /* the disk's, or HVT_DRIVER_SYSPATH */
        const char *controller;  /* the disk's "{guid}"; "" for the driver */
        const char *kind, *role; /* the disk's, as hvt_kind_to_string() and hvt_role_to_string() */
        const char *dev;         /* which instance of the disk: "8:32"; "" for the driver */
        uint64_t diskseq;        /* 0 on kernels without it, and for the driver */
        uint64_t ino;            /* its sysfs directory's inode; 0 when unknown, and for the driver */
};

static inline struct hvt_subject hvt_subject_disk(const struct hvt_disk *d) {
        return (struct hvt_subject) {
                .name = d->sysname,
                .syspath = d->syspath,
                .controller = d->controller,
                .kind = hvt_kind_to_string(d->kind),
                .role = hvt_role_to_string(d->role),
                .dev = d->dev,
                .diskseq = d->diskseq,
                .ino = d->ino,
        };
}

static inline struct hvt_subject hvt_subject_driver(void) {
        return (struct hvt_subject) {
                .driver = true,
                .name = HVT_DRIVER_NAME,
                .syspath = HVT_DRIVER_SYSPATH,
                .controller = "",
                .kind = "",
                .role = "",
                .dev = "",
        };
}

/* Whether id is an attribute of s: a disk's, or the driver's module parameter. */
static inline bool hvt_subject_has(const struct hvt_subject *s, enum hvt_attr_id id) {
        return s->driver ? hvt_attr_get(id)->group == HVT_GROUP_MODULE : id < _HVT_ATTR_DISK_MAX;
}
