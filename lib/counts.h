/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the count of managed disks by kind, and the phrase that says it ("4 Azure NVMe disks
 * on 2 controllers, 0 storvsc"), the one every summary of the daemon and its commands uses. */
#pragma once

#include <stddef.h>

#include "disk.h"

/* storvsc's disks (SCSI, IDE, FC, unknown class) and Azure's NVMe disks, each with the
 * controllers they are on. */
struct hvt_disk_counts {
        size_t storvsc, storvsc_controllers;
        size_t nvme, nvme_controllers;
};

/* The controller a disk counts under: storvsc's VMBus device, or the NVMe controller (the
 * subsystem, for a multipath head) whose namespace it is. Azure NVMe disks are each on a
 * PCI controller of their own, which is what an operator counts, not the hv_pci device. */
const char *hvt_disk_count_key(const struct hvt_disk *disk);

/* "6 storvsc disks on 3 controllers", "4 Azure NVMe disks on 2 controllers, 0 storvsc",
 * "6 storvsc disks on 3 controllers, 4 Azure NVMe disks on 2 controllers"; with none at all,
 * "0 disks". */
void hvt_disk_counts_format(const struct hvt_disk_counts *c, char *buf, size_t size);
