/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the device model: what hvtuned knows about one Azure or Hyper-V disk (a storvsc LUN or
 * an Azure NVMe namespace), and how a udev device is recognised as one (classify.c). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <libudev.h>

/* "{f8b3781a-1e82-4818-a1c3-63d806ec15bb}" as the kernel prints a VMBus device_id. */
#define HVT_GUID_STR_MAX 39
/* SCSI INQUIRY field widths. */
#define HVT_VENDOR_MAX 9
#define HVT_MODEL_MAX 17

/* The controller flavour: storvsc's from the VMBus class_id, Azure NVMe's from the controller's
 * model (the strings azure-vm-utils' 80-azure-disk.rules matches). */
enum hvt_kind {
        HVT_KIND_SCSI,
        HVT_KIND_IDE,
        HVT_KIND_FC,
        HVT_KIND_UNKNOWN,            /* bound to hv_storvsc, a class id it does not list */
        HVT_KIND_NVME_ACCELERATOR,   /* "MSFT NVMe Accelerator v1.0": remote OS and data disks */
        HVT_KIND_NVME_DIRECT,        /* "Microsoft NVMe Direct Disk": local (Lsv2, Lsv3) */
        HVT_KIND_NVME_DIRECT_V2,     /* "Microsoft NVMe Direct Disk v2": local (v6 and later) */
        _HVT_KIND_MAX,
        _HVT_KIND_NVME_FIRST = HVT_KIND_NVME_ACCELERATOR,
};

/* What the disk is for, as Azure's own rule names it (azure-vm-utils 80-azure-disk.rules). */
enum hvt_role {
        HVT_ROLE_OS,
        HVT_ROLE_DATA,
        HVT_ROLE_RESOURCE,  /* storvsc's temporary disk */
        HVT_ROLE_LOCAL,     /* an NVMe Direct Disk */
        HVT_ROLE_OTHER,     /* none of these: a controller Azure's rule does not name */
        _HVT_ROLE_MAX,
};

/* An NVMe disk that is not an Azure data disk has no LUN. */
#define HVT_LUN_NONE UINT64_MAX

struct hvt_disk {
        char *syspath;         /* the block disk, e.g. /sys/devices/.../block/sda */
        const char *sysname;   /* points into syspath: "sda" */
        /* Its parent device: the SCSI LUN (/sys/devices/.../0:0:0:0), the NVMe controller
         * (.../nvme/nvme0) or, for a native-multipath head, the NVMe subsystem
         * (/sys/devices/virtual/nvme-subsystem/nvme-subsys0). */
        char *device_syspath;
        /* storvsc's VMBus device id; for NVMe, that of the VMBus device bound to hv_pci that
         * leads to the controller, "" when none does (via_hv_pci false). */
        char controller[HVT_GUID_STR_MAX];
        enum hvt_kind kind;
        enum hvt_role role;
        bool via_hv_pci;       /* NVMe: a VMBus device bound to hv_pci is an ancestor */
        bool multipath_head;   /* NVMe: the head of the kernel's native multipath */
        unsigned host, channel, target;  /* SCSI only */
        uint64_t lun;          /* SCSI's LUN; NVMe: an accelerator's data LUN (nsid - 2), else HVT_LUN_NONE */
        uint32_t nsid;         /* NVMe only */
        char vendor[HVT_VENDOR_MAX];  /* SCSI only, trailing blanks stripped */
        char model[HVT_MODEL_MAX];
        /* Which instance of the disk this is: a disk removed and added again under the same
         * name is a new one (diskseq is 0 on kernels before 5.15, which lack it). A hot-remove
         * and re-add at one LUN gives the same path and often the same dev, so without diskseq
         * only the sysfs directory tells them apart: kernfs gives every new node a new inode
         * number (from 4.18; 0 when it cannot be read). */
        char dev[24];                 /* "8:32" */
        uint64_t diskseq;
        uint64_t ino;
};

const char *hvt_kind_to_string(enum hvt_kind k);
int hvt_kind_from_string(const char *s);
static inline bool hvt_kind_is_nvme(enum hvt_kind k) {
        return k >= _HVT_KIND_NVME_FIRST;
}
/* The Azure NVMe kind of a controller's model as the kernel shows it (padded with blanks), or
 * -ENODEV for any other model. */
int hvt_nvme_model_kind(const char *model);
const char *hvt_role_to_string(enum hvt_role r);
int hvt_role_from_string(const char *s);

/* 1 and fills ret when dev is a whole disk that is either
 *  (a) below a VMBus device bound to hv_storvsc, through a SCSI LUN, or
 *  (b) an NVMe namespace (direct, or a native-multipath head; never a hidden per-path device)
 *      whose controller's or subsystem's model is one of Azure's (hvt_nvme_model_kind());
 * 0 when it is anything else (partition, loop, virtio, other NVMe, USB, dm, md, ...); -errno
 * when it is one whose description cannot be read. */
int hvt_classify(struct udev_device *dev, struct hvt_disk *ret);

/* What hvt_classify() does once udev has said that dev is a whole disk: the walk up its
 * syspath, canonical as libudev gives it (real directories), to the nearest VMBus device below
 * top (the daemon's top is "/sys/devices"; a test's tree lies where libudev does not go).
 * Nothing at or above top is read, and a syspath with an empty, "." or ".." component is not
 * walked (0). devnum is udev's device number of the disk. */
int hvt_classify_syspath(const char *top, const char *syspath, dev_t devnum, struct hvt_disk *ret);

/* What a walk over many disks learnt of their VMBus devices, so that the disks of one
 * controller (up to 64) do not each read it again, nor look at the levels between it and
 * their LUN. Good for one walk only: a controller may be re-probed between two. */
struct hvt_vmbus_seen {
        char *path;
        bool storvsc;                        /* bound to hv_storvsc */
        bool hv_pci;                         /* bound to hv_pci: an NVMe controller's way in */
        int error;                           /* < 0: its id could not be read (either driver) */
        char controller[HVT_GUID_STR_MAX];
        enum hvt_kind kind;
};

/* What the walk learnt of an NVMe namespace's parent (controller, or a multipath head's
 * subsystem), so that the namespaces of one accelerator do not each read its model again, nor
 * walk the PCI levels above it to the VMBus device. */
struct hvt_nvme_seen {
        char *path;
        int kind;        /* an NVMe enum hvt_kind, or -1: not one of Azure's models */
        bool head;       /* a subsystem: the namespace is a native-multipath head */
        size_t vmbus;    /* the length of the VMBus ancestor's path (a prefix of path), 0: none */
};

struct hvt_classify_cache {
        struct hvt_vmbus_seen *v;
        size_t n;
        struct hvt_nvme_seen *nvme;
        size_t n_nvme;
};

/* hvt_classify_syspath() with the cache of a walk (NULL: none). */
int hvt_classify_syspath_cached(const char *top, const char *syspath, dev_t devnum, struct hvt_classify_cache *cache,
                                struct hvt_disk *ret);
void hvt_classify_cache_done(struct hvt_classify_cache *c);

/* What udev tells hvt_classify() of a device, read without it, for a walk over every block
 * device (udev's device lookup costs some sixty system calls a disk): the syspath that
 * /sys/class/block/name leads to (class_block: a directory fd on it) and its device number.
 * 1 when it is a whole disk, 0 when it is a partition or gone, -errno when it cannot be read. */
int hvt_classify_block_name(int class_block, const char *name, char *syspath, size_t size, dev_t *ret_devnum);

/* Which instance the block disk at syspath is: d's dev, diskseq and ino, as a classified disk
 * has them (the rest of d untouched). devnum is the event's; 0 (an event without one) takes
 * the directory's dev, and a directory gone reads as 0:0. -errno when a dev or diskseq that is
 * there cannot be read. */
int hvt_disk_read_instance(const char *syspath, dev_t devnum, struct hvt_disk *d);

void hvt_disk_done(struct hvt_disk *d);

/* Lower-case, braced "{...}" form of a GUID given with or without braces; -EINVAL if it is
 * not a GUID. */
int hvt_guid_normalize(const char *in, char out[static HVT_GUID_STR_MAX]);

/* Copies at most size-1 bytes of s and strips trailing blanks, as SCSI pads INQUIRY strings. */
void hvt_strip_copy(char *dst, size_t size, const char *s);
