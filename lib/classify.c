/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: deciding whether a udev block device is a Hyper-V (storvsc) disk, and reading its
 * identity: controller, kind, H:C:T:L, vendor, model; and the same for a SCSI host: whether
 * it is a storvsc controller, with its queue figures.
 *
 * The test is the VMBus ancestor bound to hv_storvsc, never vendor/model strings: "Msft
 * Virtual Disk" is also what other Microsoft products report. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "controller.h"
#include "disk.h"
#include "macro.h"

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

/* The VMBus device_id, or the device name (the kernel names VMBus devices after their
 * instance GUID) when the attribute is missing. */
static int read_controller(struct udev_device *vmbus, char out[static HVT_GUID_STR_MAX]) {
        const char *id = udev_device_get_sysattr_value(vmbus, "device_id");

        if (id && hvt_guid_normalize(id, out) == 0)
                return 0;
        return hvt_guid_normalize(udev_device_get_sysname(vmbus), out);
}

/* The VMBus device bound to hv_storvsc above dev, owned by dev; NULL for any other device. */
static struct udev_device *storvsc_parent(struct udev_device *dev) {
        struct udev_device *vmbus = udev_device_get_parent_with_subsystem_devtype(dev, "vmbus", NULL);

        return vmbus && streq_ptr(udev_device_get_driver(vmbus), "hv_storvsc") ? vmbus : NULL;
}

static int read_address(struct udev_device *sdev, struct hvt_disk *d) {
        unsigned h, c, t;
        uint64_t l;
        int consumed = 0;
        const char *name = udev_device_get_sysname(sdev);

        if (sscanf(name, "%u:%u:%u:%" SCNu64 "%n", &h, &c, &t, &l, &consumed) != 4 ||
            name[consumed] != '\0')
                return -EBADMSG;
        d->host = h, d->channel = c, d->target = t, d->lun = l;
        return 0;
}

static void read_instance(struct udev_device *dev, struct hvt_disk *d) {
        dev_t devnum = udev_device_get_devnum(dev);
        const char *seq = udev_device_get_sysattr_value(dev, "diskseq");

        snprintf(d->dev, sizeof(d->dev), "%u:%u", major(devnum), minor(devnum));
        if (!seq || sscanf(seq, "%" SCNu64, &d->diskseq) != 1)
                d->diskseq = 0;
}

int hvt_classify(struct udev_device *dev, struct hvt_disk *ret) {
        struct udev_device *vmbus, *sdev;
        struct hvt_disk d = {};
        int r;

        if (!streq_ptr(udev_device_get_subsystem(dev), "block") ||
            !streq_ptr(udev_device_get_devtype(dev), "disk"))
                return 0;

        /* Parents are owned by dev: no unref. */
        vmbus = storvsc_parent(dev);
        if (!vmbus)
                return 0;
        sdev = udev_device_get_parent_with_subsystem_devtype(dev, "scsi", "scsi_device");
        if (!sdev)
                return 0;  /* storvsc only ever exposes disks through the SCSI midlayer */

        r = read_controller(vmbus, d.controller);
        if (r < 0)
                return r;
        r = read_address(sdev, &d);
        if (r < 0)
                return r;
        d.kind = kind_of_class(udev_device_get_sysattr_value(vmbus, "class_id"));
        hvt_strip_copy(d.vendor, sizeof(d.vendor), udev_device_get_sysattr_value(sdev, "vendor"));
        hvt_strip_copy(d.model, sizeof(d.model), udev_device_get_sysattr_value(sdev, "model"));
        read_instance(dev, &d);

        d.syspath = strdup(udev_device_get_syspath(dev));
        d.device_syspath = strdup(udev_device_get_syspath(sdev));
        if (!d.syspath || !d.device_syspath) {
                hvt_disk_done(&d);
                return -ENOMEM;
        }
        d.sysname = strrchr(d.syspath, '/') + 1;
        *ret = d;
        return 1;
}

void hvt_disk_done(struct hvt_disk *d) {
        free(d->syspath);
        free(d->device_syspath);
        *d = (struct hvt_disk) {};
}

static int read_uint_attr(struct udev_device *dev, const char *name, unsigned *ret) {
        const char *v = udev_device_get_sysattr_value(dev, name);
        unsigned n;
        int consumed = 0;

        if (!v)
                return -ENOENT;
        if (sscanf(v, "%u%n", &n, &consumed) != 1 || (v[consumed] != '\0' && v[consumed] != '\n'))
                return -EBADMSG;
        *ret = n;
        return 0;
}

int hvt_classify_controller(struct udev_device *dev, struct hvt_controller *ret) {
        struct hvt_controller c = {};
        struct udev_device *vmbus;
        const char *name = udev_device_get_sysname(dev);
        int consumed = 0, r;

        if (!streq_ptr(udev_device_get_subsystem(dev), "scsi_host"))
                return 0;
        vmbus = storvsc_parent(dev);
        if (!vmbus)
                return 0;

        if (!name || sscanf(name, "host%u%n", &c.host, &consumed) != 1 || name[consumed] != '\0')
                return -EBADMSG;
        r = read_controller(vmbus, c.controller);
        if (r < 0)
                return r;
        if (strlen(udev_device_get_sysname(vmbus)) >= sizeof(c.name))
                return -EBADMSG;
        strcpy(c.name, udev_device_get_sysname(vmbus));
        c.kind = kind_of_class(udev_device_get_sysattr_value(vmbus, "class_id"));
        r = read_uint_attr(dev, "nr_hw_queues", &c.nr_hw_queues);
        if (r >= 0)
                r = read_uint_attr(dev, "can_queue", &c.can_queue);
        if (r < 0)
                return r;

        c.syspath = strdup(udev_device_get_syspath(vmbus));
        if (!c.syspath)
                return -ENOMEM;
        *ret = c;
        return 1;
}

void hvt_controller_done(struct hvt_controller *c) {
        free(c->syspath);
        *c = (struct hvt_controller) {};
}
