/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: deciding whether a udev block device is an Azure or Hyper-V disk, and reading its
 * identity: controller, kind, role, H:C:T:L or nsid, vendor, model; and the same for a SCSI
 * host: whether it is a storvsc controller, with its queue figures. All of it is a walk up the
 * syspath string below a top directory, /sys/devices for udev's devices, any other for a
 * test's tree (libudev takes no syspath outside /sys).
 *
 * A storvsc disk is told by its VMBus ancestor bound to hv_storvsc, never by vendor/model
 * strings: "Msft Virtual Disk" is also what other Microsoft products report. An Azure NVMe
 * disk has no such ancestor to tell it by: Azure attaches the controller through Hyper-V's
 * virtual PCI, which is not always there to see (an NVMe-oF target, a test's stand-in), so its
 * controller's model is the test, the strings Azure's own udev rule matches. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "controller.h"
#include "disk.h"
#include "macro.h"
#include "sysfs.h"

/* The VMBus class ids storvsc binds to (drivers/scsi/storvsc_drv.c, id_table). */
static const struct {
        const char *class_id;
        enum hvt_kind kind;
} storvsc_classes[] = {
        { "{ba6163d9-04a1-4d29-b605-72e2ffb1dc7f}", HVT_KIND_SCSI },
        { "{32412632-86cb-44a2-9b5c-50d1417354f5}", HVT_KIND_IDE },
        { "{2f9bcc4a-0069-4af3-b76b-6fd0be528cda}", HVT_KIND_FC },
};

static const char *const kind_names[_HVT_KIND_MAX] = {
        [HVT_KIND_SCSI] = "scsi",
        [HVT_KIND_IDE] = "ide",
        [HVT_KIND_FC] = "fc",
        [HVT_KIND_UNKNOWN] = "unknown",
        [HVT_KIND_NVME_ACCELERATOR] = "nvme-accelerator",
        [HVT_KIND_NVME_DIRECT] = "nvme-direct",
        [HVT_KIND_NVME_DIRECT_V2] = "nvme-direct-v2",
};

/* The models of Azure's NVMe controllers (azure-vm-utils 80-azure-disk.rules, which matches
 * udev's ID_MODEL: the attribute with its padding trimmed). */
static const char *const nvme_models[_HVT_KIND_MAX] = {
        [HVT_KIND_NVME_ACCELERATOR] = "MSFT NVMe Accelerator v1.0",
        [HVT_KIND_NVME_DIRECT] = "Microsoft NVMe Direct Disk",
        [HVT_KIND_NVME_DIRECT_V2] = "Microsoft NVMe Direct Disk v2",
};

static const char *const role_names[_HVT_ROLE_MAX] = {
        [HVT_ROLE_OS] = "os",
        [HVT_ROLE_DATA] = "data",
        [HVT_ROLE_RESOURCE] = "resource",
        [HVT_ROLE_LOCAL] = "local",
        [HVT_ROLE_OTHER] = "other",
};

const char *hvt_kind_to_string(enum hvt_kind k) {
        return (unsigned) k < _HVT_KIND_MAX ? kind_names[k] : NULL;
}

int hvt_kind_from_string(const char *s) {
        for (size_t i = 0; i < _HVT_KIND_MAX; i++)
                if (strcmp(kind_names[i], s) == 0)
                        return (int) i;
        return -EINVAL;
}

int hvt_nvme_model_kind(const char *model) {
        size_t n = strlen(model);

        /* The kernel prints the whole 40-byte field of Identify Controller, blanks and all, and
         * a newline. */
        while (n > 0 && isspace((unsigned char) model[n - 1]))
                n--;
        for (size_t k = _HVT_KIND_NVME_FIRST; k < _HVT_KIND_MAX; k++)
                if (strlen(nvme_models[k]) == n && strncmp(nvme_models[k], model, n) == 0)
                        return (int) k;
        return -ENODEV;
}

const char *hvt_role_to_string(enum hvt_role r) {
        return (unsigned) r < _HVT_ROLE_MAX ? role_names[r] : NULL;
}

int hvt_role_from_string(const char *s) {
        for (size_t i = 0; i < _HVT_ROLE_MAX; i++)
                if (strcmp(role_names[i], s) == 0)
                        return (int) i;
        return -EINVAL;
}

int hvt_guid_normalize(const char *in, char out[static HVT_GUID_STR_MAX]) {
        static const int group_len[] = { 8, 4, 4, 4, 12 };
        size_t len = strlen(in);
        const char *p = in;
        char *o = out;

        if (len >= 2 && in[0] == '{' && in[len - 1] == '}')
                p++, len -= 2;
        if (len != 36)
                return -EINVAL;

        *o++ = '{';
        for (size_t g = 0; g < ELEMENTSOF(group_len); g++) {
                if (g > 0 && *p++ != '-')
                        return -EINVAL;
                for (int i = 0; i < group_len[g]; i++, p++) {
                        if (!isxdigit((unsigned char) *p))
                                return -EINVAL;
                        *o++ = (char) tolower((unsigned char) *p);
                }
                if (g + 1 < ELEMENTSOF(group_len))
                        *o++ = '-';
        }
        *o++ = '}';
        *o = '\0';
        return 0;
}

void hvt_strip_copy(char *dst, size_t size, const char *s) {
        size_t n = s ? strnlen(s, size - 1) : 0;

        while (n > 0 && isspace((unsigned char) s[n - 1]))
                n--;
        if (n > 0)
                memcpy(dst, s, n);
        dst[n] = '\0';
}

static bool streq_ptr(const char *a, const char *b) {
        return a && b && strcmp(a, b) == 0;
}

static enum hvt_kind kind_of_class(const char *class_id) {
        char norm[HVT_GUID_STR_MAX];

        if (!class_id || hvt_guid_normalize(class_id, norm) < 0)
                return HVT_KIND_UNKNOWN;
        for (size_t i = 0; i < ELEMENTSOF(storvsc_classes); i++)
                if (strcmp(storvsc_classes[i].class_id, norm) == 0)
                        return storvsc_classes[i].kind;
        return HVT_KIND_UNKNOWN;
}

/* Reads dir/name as hvt_sysfs_read() does. */
static int read_below(const char *dir, const char *name, char *buf, size_t size) {
        char path[PATH_MAX];

        if ((size_t) snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
                return -ENAMETOOLONG;
        return hvt_sysfs_read(AT_FDCWD, path, buf, size);
}

/* The last component of the link dir/name, as libudev names a device's subsystem and
 * driver ("vmbus" for subsystem -> ../../../bus/vmbus). */
static int link_name(const char *dir, const char *name, char *buf, size_t size) {
        char path[PATH_MAX], target[PATH_MAX];
        const char *last;
        ssize_t n;

        if ((size_t) snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
                return -ENAMETOOLONG;
        n = readlinkat(AT_FDCWD, path, target, sizeof(target) - 1);
        if (n < 0)
                return negative_errno();
        target[n] = '\0';
        last = strrchr(target, '/');
        return hvt_strscpy(buf, size, last ? last + 1 : target) ? 0 : -ENAMETOOLONG;
}


/* The ancestors classification needs, as lengths of prefixes of a device's syspath: the
 * nearest SCSI LUN and the nearest VMBus device (0 when there is none). Found with one
 * system call a level where udev_device_get_parent() builds a whole device, path walk and
 * all (on a VM with hundreds of LUNs that was two thirds of the start-up's system calls):
 * a directory below /sys/devices with a subsystem link is a device, and its subsystem is the
 * name the link points at. device_add() makes the link and the uevent file together, and a
 * class's glue directory ("block") has neither, so the link alone tells what libudev's stat()
 * of uevent does. */
struct ancestors {
        char path[PATH_MAX];
        size_t sdev, vmbus;
        /* An NVMe namespace's parent: its controller (class nvme) or, under native multipath,
         * its subsystem (class nvme-subsystem, nvme_head true). */
        size_t nvme;
        bool nvme_head;
        const struct hvt_nvme_seen *nvme_seen;  /* the cache's entry of that parent, or NULL */
};

/* The ancestor of length len, in buf. */
static const char *ancestor(const struct ancestors *a, size_t len, char buf[static PATH_MAX]) {
        memcpy(buf, a->path, len);
        buf[len] = '\0';
        return buf;
}

/* A LUN's name, "H:C:T:L" as the kernel names it (scsi_sysfs_device_initialize():
 * "%d:%d:%d:%llu"), into d's address: 0, or -EBADMSG for any other name. */
static int parse_address(const char *name, struct hvt_disk *d) {
        unsigned h, c, t;
        uint64_t l;
        int consumed = 0;

        if (sscanf(name, "%u:%u:%u:%" SCNu64 "%n", &h, &c, &t, &l, &consumed) != 4 || name[consumed] != '\0')
                return -EBADMSG;
        d->host = h, d->channel = c, d->target = t, d->lun = l;
        return 0;
}

/* Whether a device of the scsi bus named name is a LUN (DEVTYPE=scsi_device): the bus holds
 * hosts ("host%d"), targets ("target%d:%d:%d") and LUNs, so the name tells, without the
 * three calls a read of its uevent costs. */
static bool is_lun_name(const char *name) {
        struct hvt_disk d;

        return parse_address(name, &d) == 0;
}

/* The length of a VMBus device's path the cache knows that is a prefix of path[0..len], or 0. */
static size_t cached_vmbus(const struct hvt_classify_cache *c, const char *path, size_t len) {
        for (size_t i = 0; c && i < c->n; i++) {
                size_t n = strlen(c->v[i].path);

                if (n <= len && strncmp(path, c->v[i].path, n) == 0 && (path[n] == '/' || n == len))
                        return n;
        }
        return 0;
}

/* The cache's entry of the NVMe parent at path[0..len], or NULL. */
static const struct hvt_nvme_seen *cached_nvme(const struct hvt_classify_cache *c, const char *path, size_t len) {
        for (size_t i = 0; c && i < c->n_nvme; i++)
                if (strlen(c->nvme[i].path) == len && strncmp(path, c->nvme[i].path, len) == 0)
                        return &c->nvme[i];
        return NULL;
}

static int find_ancestors(const char *top, const char *syspath, const struct hvt_classify_cache *cache,
                          struct ancestors *a) {
        const size_t top_len = strlen(top);
        size_t len = strlen(syspath);
        const char *slash;
        bool seen = false;  /* a device below this level: the disk's parent is behind us */

        a->sdev = a->vmbus = a->nvme = 0;
        a->nvme_head = false;
        a->nvme_seen = NULL;
        if (!hvt_sysfs_path_below(top, syspath))
                return 0;  /* no device of top's: none of its ancestors either */
        if (len >= sizeof(a->path))
                return -ENAMETOOLONG;
        memcpy(a->path, syspath, len + 1);
        while ((slash = memrchr(a->path, '/', len)) && (len = (size_t) (slash - a->path)) > top_len) {
                char dir[PATH_MAX], subsystem[64];

                /* Once the LUN is found, a VMBus device this walk met before is recognised by
                 * its path: the levels between (target, host) need no look. */
                if (a->sdev && (a->vmbus = cached_vmbus(cache, a->path, len)) > 0)
                        break;
                /* A namespace of an NVMe parent met before: what is above it is known too. */
                if (!seen && (a->nvme_seen = cached_nvme(cache, a->path, len))) {
                        a->nvme = len;
                        a->nvme_head = a->nvme_seen->head;
                        a->vmbus = a->nvme_seen->vmbus;
                        break;
                }
                ancestor(a, len, dir);
                if (link_name(dir, "subsystem", subsystem, sizeof(subsystem)) < 0)
                        continue;  /* not a device: a class directory ("block") */
                if (strcmp(subsystem, "vmbus") == 0) {
                        a->vmbus = len;
                        break;
                }
                if (!a->sdev && strcmp(subsystem, "scsi") == 0 && is_lun_name(strrchr(dir, '/') + 1))
                        a->sdev = len;
                /* Only a namespace's own parent: a disk further down (nvme over something) is
                 * not the namespace. */
                else if (!seen && strcmp(subsystem, "nvme") == 0)
                        a->nvme = len;
                else if (!seen && strcmp(subsystem, "nvme-subsystem") == 0) {
                        a->nvme = len;
                        a->nvme_head = true;
                }
                seen = true;
        }
        return 0;
}

/* Whether the VMBus device at path is bound to driver. */
static bool bound_to(const char *vmbus, const char *driver) {
        char name[64];

        return link_name(vmbus, "driver", name, sizeof(name)) >= 0 && strcmp(name, driver) == 0;
}

static bool storvsc_bound(const char *vmbus) {
        return bound_to(vmbus, "hv_storvsc");
}

/* The VMBus device_id, or the device name (the kernel names VMBus devices after their
 * instance GUID) when the attribute is missing. */
static int read_controller(const char *vmbus, char out[static HVT_GUID_STR_MAX]) {
        char id[64];

        if (read_below(vmbus, "device_id", id, sizeof(id)) >= 0 && hvt_guid_normalize(id, out) == 0)
                return 0;
        return hvt_guid_normalize(strrchr(vmbus, '/') + 1, out);
}

static enum hvt_kind read_kind(const char *vmbus) {
        char class_id[64];

        return read_below(vmbus, "class_id", class_id, sizeof(class_id)) >= 0 ?
                kind_of_class(class_id) : HVT_KIND_UNKNOWN;
}

/* dir/name with trailing blanks stripped, "" when it cannot be read. */
static void read_stripped(const char *dir, const char *name, char *dst, size_t size) {
        char buf[64];

        hvt_strip_copy(dst, size, read_below(dir, name, buf, sizeof(buf)) >= 0 ? buf : NULL);
}

static int read_address(const char *sdev, struct hvt_disk *d) {
        return parse_address(strrchr(sdev, '/') + 1, d);
}

/* dir's dev, "MAJOR:MINOR": 0, or -errno (-EBADMSG: not one). */
static int read_devnum(const char *dir, dev_t *ret) {
        char dev[32];
        unsigned maj, min;
        int consumed = 0, r;

        r = read_below(dir, "dev", dev, sizeof(dev));
        if (r < 0)
                return r;
        if (sscanf(dev, "%u:%u%n", &maj, &min, &consumed) != 2 || dev[consumed] != '\0')
                return -EBADMSG;
        *ret = makedev(maj, min);
        return 0;
}

int hvt_disk_read_instance(const char *syspath, dev_t devnum, struct hvt_disk *d) {
        struct stat st;
        char seq[32];
        int r;

        /* No block disk has major 0: an add event without MAJOR and MINOR (Debian 11's
         * umockdev 0.15 sends its added devices' so) would record 0:0, which the disk's next
         * start reads as another instance's record, and its originals would go with it. The
         * kernel's own number is in the directory. */
        if (major(devnum) == 0) {
                r = read_devnum(syspath, &devnum);
                if (r < 0 && r != -ENOENT)
                        return r;
        }
        snprintf(d->dev, sizeof(d->dev), "%u:%u", major(devnum), minor(devnum));
        d->diskseq = 0;
        d->ino = stat(syspath, &st) == 0 ? (uint64_t) st.st_ino : 0;
        /* None before 5.15: 0. One there that cannot be read is no 0: against a record's
         * diskseq it would make the record another instance's, deleted with its originals. An
         * inode that cannot be read is 0, which every record matches. */
        r = read_below(syspath, "diskseq", seq, sizeof(seq));
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        return sscanf(seq, "%" SCNu64, &d->diskseq) == 1 ? 0 : -EBADMSG;
}

int hvt_classify(struct udev_device *dev, struct hvt_disk *ret) {
        if (!streq_ptr(udev_device_get_subsystem(dev), "block") ||
            !streq_ptr(udev_device_get_devtype(dev), "disk"))
                return 0;
        return hvt_classify_syspath("/sys/devices", udev_device_get_syspath(dev), udev_device_get_devnum(dev), ret);
}

int hvt_classify_block_name(int class_block, const char *name, char *syspath, size_t size, dev_t *ret_devnum) {
        char target[PATH_MAX];
        const char *rel = "../../devices/", *last, *parent;
        int r;
        ssize_t n;

        n = readlinkat(class_block, name, target, sizeof(target) - 1);
        if (n < 0)
                return errno == EINVAL || errno == ENOENT ? 0 : negative_errno();
        target[n] = '\0';
        /* ../../devices/.../block/sda: a disk; ../../devices/.../block/sda/sda1: a partition. */
        last = strrchr(target, '/');
        if (strncmp(target, rel, strlen(rel)) != 0 || !last || strcmp(last + 1, name) != 0)
                return 0;
        for (parent = last; parent > target && parent[-1] != '/'; parent--)
                ;
        if ((size_t) snprintf(syspath, size, "/sys/%s", target + strlen("../../")) >= size)
                return -ENAMETOOLONG;
        /* A disk below a "block" directory (SCSI, virtio, loop) is whole: a partition lives in its
         * disk's directory. Elsewhere (nvme0/nvme0n1, sda/sda1) the kernel marks a partition by
         * its partition attribute. */
        if ((size_t) (last - parent) != strlen("block") || strncmp(parent, "block", strlen("block")) != 0) {
                char partition[PATH_MAX];

                if ((size_t) snprintf(partition, sizeof(partition), "%s/partition", syspath) >= sizeof(partition))
                        return -ENAMETOOLONG;
                if (access(partition, F_OK) >= 0)
                        return 0;
                if (errno != ENOENT)
                        return negative_errno();
        }

        r = read_devnum(syspath, ret_devnum);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        return 1;
}

/* What classification needs of the VMBus device at path, read or from the cache (and then
 * kept in it; out of memory, simply not kept). */
static const struct hvt_vmbus_seen *vmbus_facts(const char *path, struct hvt_classify_cache *cache,
                                                struct hvt_vmbus_seen *buf) {
        struct hvt_vmbus_seen *more;

        for (size_t i = 0; cache && i < cache->n; i++)
                if (strcmp(cache->v[i].path, path) == 0)
                        return &cache->v[i];
        *buf = (struct hvt_vmbus_seen) { .storvsc = storvsc_bound(path) };
        if (buf->storvsc) {
                buf->error = read_controller(path, buf->controller);
                buf->kind = read_kind(path);
        } else if ((buf->hv_pci = bound_to(path, "hv_pci")))
                buf->error = read_controller(path, buf->controller);
        if (!cache || !(buf->path = strdup(path)))
                return buf;
        more = reallocarray(cache->v, cache->n + 1, sizeof(*more));
        if (!more) {
                free(buf->path);
                buf->path = NULL;
                return buf;
        }
        cache->v = more;
        cache->v[cache->n] = *buf;
        buf->path = NULL;
        return &cache->v[cache->n++];
}

/* Azure's rule: on storvsc, the first SCSI controller's LUN 0 is the OS disk and LUN 1 the
 * resource disk, the next three hold data disks; on Gen1's IDE, controller 0 is the OS disk's
 * and controller 1 the resource disk's. */
static enum hvt_role storvsc_role(const char *controller, uint64_t lun) {
        static const char azure_tail[] = "-1e82-4818-a1c3-63d806ec15bb}";

        if (strncmp(controller, "{00000000-0000-", 15) == 0)
                return HVT_ROLE_OS;
        if (strncmp(controller, "{00000000-0001-", 15) == 0)
                return HVT_ROLE_RESOURCE;
        if (strncmp(controller, "{f8b3781", 8) != 0 || strcmp(controller + 9, azure_tail) != 0)
                return HVT_ROLE_OTHER;
        switch (controller[8]) {
        case 'a':
                return lun == 0 ? HVT_ROLE_OS : lun == 1 ? HVT_ROLE_RESOURCE : HVT_ROLE_OTHER;
        case 'b':
        case 'c':
        case 'd':
                return HVT_ROLE_DATA;
        default:
                return HVT_ROLE_OTHER;
        }
}

/* Fills ret with what every classified disk has: its paths and which instance it is. */
static int finish_disk(const char *syspath, const char *parent, dev_t devnum, struct hvt_disk *d,
                       struct hvt_disk *ret) {
        int r = hvt_disk_read_instance(syspath, devnum, d);

        if (r < 0)
                return r;
        d->syspath = strdup(syspath);
        d->device_syspath = strdup(parent);
        if (!d->syspath || !d->device_syspath) {
                hvt_disk_done(d);
                return -ENOMEM;
        }
        d->sysname = strrchr(d->syspath, '/') + 1;
        *ret = *d;
        return 1;
}

/* The hidden device of one path of a multipath namespace: "nvme%dc%dn%d"
 * (nvme_mpath_set_disk_name()). Its queue is the one the head sends to; hvtuned leaves it to
 * the kernel, which makes and drops such devices as paths come and go. */
static bool is_nvme_path_device(const char *name) {
        unsigned a, b, c;
        int consumed = 0;

        return sscanf(name, "nvme%uc%un%u%n", &a, &b, &c, &consumed) == 3 && name[consumed] == '\0';
}

/* The kind of the NVMe parent at path by its model, -ENOMEDIUM when it is none of Azure's, or
 * -errno; kept in the cache (out of memory, simply not kept). An error is not kept: the next
 * namespace reads again. */
static int nvme_parent_kind(const char *path, const struct ancestors *a, struct hvt_classify_cache *cache) {
        struct hvt_nvme_seen *more;
        char model[64];
        int r;

        r = read_below(path, "model", model, sizeof(model));
        /* No model (nothing there, or no file), or one too long or odd for any of Azure's. */
        if (r == -ENOENT || r == -ELOOP || r == -EISDIR || r == -ENOTDIR || r == -EFBIG || r == -EBADMSG)
                r = -1;
        else if (r < 0)
                return r;
        else
                r = hvt_nvme_model_kind(model);
        if (cache && (more = reallocarray(cache->nvme, cache->n_nvme + 1, sizeof(*more)))) {
                cache->nvme = more;
                more[cache->n_nvme] = (struct hvt_nvme_seen) {
                        .path = strdup(path), .kind = r < 0 ? -1 : r, .head = a->nvme_head, .vmbus = a->vmbus };
                cache->n_nvme += more[cache->n_nvme].path != NULL;
        }
        return r < 0 ? -ENOMEDIUM : r;
}

/* The walk reads only what is on the disk's syspath: a direct namespace's controller is its
 * parent, and a VMBus device above it bound to hv_pci is Azure's way in. A multipath head's
 * controllers are elsewhere (links in its subsystem's directory): whether one of them is under
 * hv_pci is not looked up. */
static int classify_nvme(const char *syspath, dev_t devnum, struct hvt_classify_cache *cache,
                         const struct ancestors *a, struct hvt_disk *ret) {
        char parent[PATH_MAX], nsid[32], vmbus[PATH_MAX];
        struct hvt_disk d = { .lun = HVT_LUN_NONE };
        unsigned long n;
        int consumed = 0, r;

        if (is_nvme_path_device(strrchr(syspath, '/') + 1))
                return 0;
        ancestor(a, a->nvme, parent);
        r = !a->nvme_seen ? nvme_parent_kind(parent, a, cache) :
                a->nvme_seen->kind < 0 ? -ENOMEDIUM : a->nvme_seen->kind;
        if (r < 0)
                return r == -ENOMEDIUM ? 0 : r;
        d.kind = (enum hvt_kind) r;
        d.multipath_head = a->nvme_head;

        r = read_below(syspath, "nsid", nsid, sizeof(nsid));
        if (r < 0)
                return r;
        if (sscanf(nsid, "%lu%n", &n, &consumed) != 1 || nsid[consumed] != '\0' || n == 0 || n > UINT32_MAX)
                return -EBADMSG;
        d.nsid = (uint32_t) n;
        /* Azure's rule: the accelerator's namespace 1 is the OS disk, namespace n the data disk
         * at LUN n - 2; a Direct Disk is a local disk. */
        if (d.kind != HVT_KIND_NVME_ACCELERATOR)
                d.role = HVT_ROLE_LOCAL;
        else if (d.nsid == 1)
                d.role = HVT_ROLE_OS;
        else {
                d.role = HVT_ROLE_DATA;
                d.lun = d.nsid - 2;
        }

        if (a->vmbus) {
                struct hvt_vmbus_seen buf;
                const struct hvt_vmbus_seen *v = vmbus_facts(ancestor(a, a->vmbus, vmbus), cache, &buf);

                if (v->hv_pci && v->error >= 0) {
                        d.via_hv_pci = true;
                        memcpy(d.controller, v->controller, sizeof(d.controller));
                }
        }
        return finish_disk(syspath, parent, devnum, &d, ret);
}

int hvt_classify_syspath_cached(const char *top, const char *syspath, dev_t devnum, struct hvt_classify_cache *cache,
                                struct hvt_disk *ret) {
        char vmbus[PATH_MAX], sdev[PATH_MAX];
        const struct hvt_vmbus_seen *v;
        struct hvt_vmbus_seen buf;
        struct hvt_disk d = {};
        struct ancestors a;
        int r;

        r = find_ancestors(top, syspath, cache, &a);
        if (r < 0)
                return r;
        v = a.vmbus ? vmbus_facts(ancestor(&a, a.vmbus, vmbus), cache, &buf) : NULL;
        /* storvsc only ever exposes disks through the SCSI midlayer */
        if (!v || !v->storvsc || !a.sdev)
                return a.nvme ? classify_nvme(syspath, devnum, cache, &a, ret) : 0;
        ancestor(&a, a.sdev, sdev);

        if (v->error < 0)
                return v->error;
        memcpy(d.controller, v->controller, sizeof(d.controller));
        r = read_address(sdev, &d);
        if (r < 0)
                return r;
        d.kind = v->kind;
        d.role = storvsc_role(d.controller, d.lun);
        read_stripped(sdev, "vendor", d.vendor, sizeof(d.vendor));
        read_stripped(sdev, "model", d.model, sizeof(d.model));
        return finish_disk(syspath, sdev, devnum, &d, ret);
}

int hvt_classify_syspath(const char *top, const char *syspath, dev_t devnum, struct hvt_disk *ret) {
        return hvt_classify_syspath_cached(top, syspath, devnum, NULL, ret);
}

void hvt_classify_cache_done(struct hvt_classify_cache *c) {
        for (size_t i = 0; i < c->n; i++)
                free(c->v[i].path);
        free(c->v);
        for (size_t i = 0; i < c->n_nvme; i++)
                free(c->nvme[i].path);
        free(c->nvme);
        *c = (struct hvt_classify_cache) {};
}

void hvt_disk_done(struct hvt_disk *d) {
        free(d->syspath);
        free(d->device_syspath);
        *d = (struct hvt_disk) {};
}

static int read_uint_attr(const char *dir, const char *name, unsigned *ret) {
        char v[32];
        unsigned n;
        int consumed = 0, r;

        r = read_below(dir, name, v, sizeof(v));
        if (r < 0)
                return r == -EFBIG ? -EBADMSG : r;  /* too long for any number */
        if (sscanf(v, "%u%n", &n, &consumed) != 1 || v[consumed] != '\0')
                return -EBADMSG;
        *ret = n;
        return 0;
}

int hvt_classify_controller_syspath(const char *top, const char *syspath, struct hvt_controller *ret) {
        struct hvt_controller c = {};
        char vmbus[PATH_MAX];
        struct ancestors a;
        const char *name;
        int consumed = 0, r;

        r = find_ancestors(top, syspath, NULL, &a);
        if (r < 0)
                return r;
        if (!a.vmbus || !storvsc_bound(ancestor(&a, a.vmbus, vmbus)))
                return 0;

        /* udev's sysname, the last component: "hostN" has no '!', which udev would make a '/'. */
        name = strrchr(syspath, '/') + 1;
        if (sscanf(name, "host%u%n", &c.host, &consumed) != 1 || name[consumed] != '\0')
                return -EBADMSG;
        r = read_controller(vmbus, c.controller);
        if (r < 0)
                return r;
        if (!hvt_strscpy(c.name, sizeof(c.name), strrchr(vmbus, '/') + 1))
                return -EBADMSG;
        c.kind = read_kind(vmbus);
        r = read_uint_attr(syspath, "nr_hw_queues", &c.nr_hw_queues);
        if (r >= 0)
                r = read_uint_attr(syspath, "can_queue", &c.can_queue);
        if (r < 0)
                return r;

        c.syspath = strdup(vmbus);
        if (!c.syspath)
                return -ENOMEM;
        *ret = c;
        return 1;
}

void hvt_controller_done(struct hvt_controller *c) {
        free(c->syspath);
        *c = (struct hvt_controller) {};
}
