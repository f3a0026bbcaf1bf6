/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the list of Azure NVMe controllers of this VM as sysfs shows them now (class nvme),
 * with the queue figures their memory estimate (nvme.h) needs, and the nvme module's
 * io_queue_depth parameter. Read whole, never logged: the caller says what it found. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "disk.h"

/* sysfs's: the kernel pads the model to 40 bytes. */
#define HVT_NVME_MODEL_MAX 48
#define HVT_NVME_NAME_MAX 32

/* Where a controller's queue figures came from. */
enum hvt_nvme_figures {
        HVT_NVME_FIGURES_NONE,        /* neither could be read: no estimate */
        HVT_NVME_FIGURES_NAMESPACE,   /* a namespace's tag set: mq/ directories and mq/0/nr_tags */
        HVT_NVME_FIGURES_CONTROLLER,  /* the controller's queue_count and sqsize (no namespace) */
};

struct hvt_nvme_controller {
        char name[HVT_NVME_NAME_MAX];       /* "nvme0" */
        char model[HVT_NVME_MODEL_MAX];     /* trimmed */
        enum hvt_kind kind;                 /* hvt_nvme_model_kind(): one of the NVMe kinds */
        bool pcie;                          /* transport "pcie": nvme.ko's, which the estimate is of */
        bool live;                          /* state "live": its queues are all there */
        enum hvt_nvme_figures figures;
        unsigned nr_io_queues;              /* the I/O tag set's hw queues */
        unsigned q_depth;                   /* ring entries; the I/O tags are one fewer */
};

struct hvt_nvme_controllers {
        struct hvt_nvme_controller *v;
        size_t n;
};

/* Reads every controller of class_dir ("/sys/class/nvme") whose model is Azure's into ret,
 * sorted by name, replacing what it held; ret is left as it was on error (-ENOMEM, or what
 * listing class_dir gave; a missing class_dir is no controller). A controller that vanishes
 * while it is read is left out. The figures, of a namespace when the controller has one (a
 * block device below it, "nvme0n1", or a multipath path "nvme0c0n1", whose mq/ is the tag
 * set's), else queue_count less the admin queue and sqsize plus 1 (0's based): the two agree
 * on real kernels (bench/vm). */
int hvt_nvme_controllers_scan(const char *class_dir, struct hvt_nvme_controllers *ret);

void hvt_nvme_controllers_done(struct hvt_nvme_controllers *c);

/* The parameter nvme.io_queue_depth at path ("/sys/module/nvme/parameters/io_queue_depth"):
 * -ENOENT when the driver is not loaded (or is built without it), -EBADMSG when not a number. */
int hvt_nvme_io_queue_depth_read(const char *path, unsigned *ret);
