/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Classification through the real libudev on umockdev testbeds: every Hyper-V disk of each
 * generated VM is recognised with its identity, everything else (partitions, virtio, NVMe,
 * USB, loop, dm, md) is not, and a VMBus parent not bound to hv_storvsc never counts. */
#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <umockdev.h>

#include "disk.h"
#include "macro.h"
#include "testutil.h"

static UMockdevTestbed *testbed_load(const char *profile) {
        UMockdevTestbed *tb = umockdev_testbed_new();
        GError *error = NULL;
        char path[4096];

        snprintf(path, sizeof(path), "%s/%s.umockdev", getenv("HVTUNED_TESTBEDS"), profile);
        ck_assert_msg(umockdev_testbed_add_from_file(tb, path, &error), "%s: %s", path,
                      error ? error->message : "?");
        return tb;
}

/* The walk's way to the same answer: the name in /sys/class/block read without udev, and the
 * disks of a controller classified with what the walk learnt of it (cache). */
static void check_walk(struct udev_device *dev, int r, const struct hvt_disk *d, struct hvt_classify_cache *cache) {
        int class_block = open("/sys/class/block", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char syspath[4096];
        struct hvt_disk w;
        dev_t devnum;
        int rw;

        ck_assert_int_ge(class_block, 0);
        rw = hvt_classify_block_name(class_block, udev_device_get_sysname(dev), syspath, sizeof(syspath), &devnum);
        close(class_block);
        ck_assert_int_eq(rw, (udev_device_get_devtype(dev) && strcmp(udev_device_get_devtype(dev), "disk") == 0));
        if (rw == 0)
                return;
        ck_assert_str_eq(syspath, udev_device_get_syspath(dev));
        ck_assert(devnum == udev_device_get_devnum(dev));
        rw = hvt_classify_syspath_cached("/sys/devices", syspath, devnum, cache, &w);
        ck_assert_int_eq(rw, r);
        if (rw <= 0)
                return;
        ck_assert_str_eq(w.syspath, d->syspath);
        ck_assert_str_eq(w.device_syspath, d->device_syspath);
        ck_assert_str_eq(w.controller, d->controller);
        ck_assert_int_eq(w.kind, d->kind);
        ck_assert_uint_eq(w.host, d->host);
        ck_assert_uint_eq(w.lun, d->lun);
        ck_assert_str_eq(w.vendor, d->vendor);
        ck_assert_str_eq(w.model, d->model);
        ck_assert_str_eq(w.dev, d->dev);
        ck_assert_uint_eq(w.diskseq, d->diskseq);
        /* An NVMe namespace of a parent met before takes all of these from the cache. */
        ck_assert_int_eq(w.role, d->role);
        ck_assert_uint_eq(w.nsid, d->nsid);
        ck_assert_int_eq(w.multipath_head, d->multipath_head);
        ck_assert_int_eq(w.via_hv_pci, d->via_hv_pci);
        hvt_disk_done(&w);
}

/* Classifies every block device and writes "sysname H:C:T:L kind controller vendor/model"
 * lines for the Hyper-V ones into out. Returns how many block devices were looked at. */
static unsigned classify_all(char *out, size_t size) {
        _cleanup_(hvt_classify_cache_done) struct hvt_classify_cache cache = {};
        struct udev *udev = udev_new();
        struct udev_enumerate *e = udev_enumerate_new(udev);
        struct udev_list_entry *entry;
        unsigned seen = 0;
        size_t off = 0;

        out[0] = '\0';
        udev_enumerate_add_match_subsystem(e, "block");
        udev_enumerate_add_match_sysname(e, "*");
        ck_assert_int_ge(udev_enumerate_scan_devices(e), 0);
        udev_list_entry_foreach(entry, udev_enumerate_get_list_entry(e)) {
                struct udev_device *dev = udev_device_new_from_syspath(udev, udev_list_entry_get_name(entry));
                struct hvt_disk d;
                int r;

                ck_assert_ptr_nonnull(dev);
                seen++;
                r = hvt_classify(dev, &d);
                ck_assert_int_ge(r, 0);
                if (udev_device_get_subsystem(dev) && strcmp(udev_device_get_subsystem(dev), "block") == 0)
                        check_walk(dev, r, &d, &cache);
                if (r > 0) {
                        ck_assert_str_eq(d.sysname, udev_device_get_sysname(dev));
                        ck_assert_str_eq(d.syspath, udev_device_get_syspath(dev));
                        off += (size_t) snprintf(out + off, size - off, "%s %u:%u:%u:%llu %s %s %s/%s\n",
                                                 d.sysname, d.host, d.channel, d.target,
                                                 (unsigned long long) d.lun, hvt_kind_to_string(d.kind),
                                                 d.controller, d.vendor, d.model);
                        hvt_disk_done(&d);
                }
                udev_device_unref(dev);
        }
        udev_enumerate_unref(e);
        udev_unref(udev);
        return seen;
}

START_TEST(test_azure_gen2) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char out[2048];

        /* 4 Hyper-V disks + 4 sda/sdb partitions + vda, nvme0n1, sde (USB), loop0, dm-0, md0 */
        ck_assert_uint_ge(classify_all(out, sizeof(out)), 14);
        ck_assert_str_eq(out,
                "sda 0:0:0:0 scsi {f8b3781a-1e82-4818-a1c3-63d806ec15bb} Msft/Virtual Disk\n"
                "sdb 0:0:0:1 scsi {f8b3781a-1e82-4818-a1c3-63d806ec15bb} Msft/Virtual Disk\n"
                "sdc 1:0:0:0 scsi {f8b3781b-1e82-4818-a1c3-63d806ec15bb} Msft/Virtual Disk\n"
                "sdd 1:0:0:1 scsi {f8b3781b-1e82-4818-a1c3-63d806ec15bb} Msft/Virtual Disk\n");
        g_object_unref(tb);
}
END_TEST

START_TEST(test_gen1) {
        UMockdevTestbed *tb = testbed_load("gen1");
        char out[2048];

        classify_all(out, sizeof(out));
        ck_assert_str_eq(out,
                "sda 0:0:0:0 ide {00000000-0000-8899-0000-000000000000} Msft/Virtual Disk\n"
                "sdb 1:0:1:0 ide {00000000-0001-8899-0000-000000000000} Msft/Virtual Disk\n"
                "sdc 2:0:0:0 scsi {5e2f0b7c-3d91-4a6e-8c4b-9f1d27a6e8b3} Msft/Virtual Disk\n"
                "sdd 2:0:0:1 scsi {5e2f0b7c-3d91-4a6e-8c4b-9f1d27a6e8b3} Msft/Virtual Disk\n");
        g_object_unref(tb);
}
END_TEST

START_TEST(test_wsl2) {
        UMockdevTestbed *tb = testbed_load("wsl2");
        char out[2048];

        classify_all(out, sizeof(out));
        ck_assert_str_eq(out,
                "sda 0:0:0:0 scsi {a3c7e9f1-52b8-4d06-9e1a-7b4c2d8f0e65} Msft/Virtual Disk\n"
                "sdb 0:0:0:1 scsi {a3c7e9f1-52b8-4d06-9e1a-7b4c2d8f0e65} Msft/Virtual Disk\n"
                "sdc 0:0:0:2 scsi {a3c7e9f1-52b8-4d06-9e1a-7b4c2d8f0e65} Msft/Virtual Disk\n"
                "sdd 0:0:0:3 scsi {a3c7e9f1-52b8-4d06-9e1a-7b4c2d8f0e65} Msft/Virtual Disk\n");
        g_object_unref(tb);
}
END_TEST

/* A "Msft Virtual Disk" below a VMBus device that is not bound to hv_storvsc (unbound, or
 * another driver) is not ours, whatever its strings say. */
static void add_chain(UMockdevTestbed *tb, const char *guid, const char *driver_link, unsigned h,
                      const char *disk) {
        char path[512], text[4096];
        GError *error = NULL;

        snprintf(path, sizeof(path), "/devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00/%s", guid);
        snprintf(text, sizeof(text),
                 "P: %s\nE: SUBSYSTEM=vmbus\nA: class_id={ba6163d9-04a1-4d29-b605-72e2ffb1dc7f}\\n\n"
                 "A: device_id={%s}\\n\n%s\n"
                 "P: %s/host%u\nE: SUBSYSTEM=scsi\nE: DEVTYPE=scsi_host\n\n"
                 "P: %s/host%u/target%u:0:0\nE: SUBSYSTEM=scsi\nE: DEVTYPE=scsi_target\n\n"
                 "P: %s/host%u/target%u:0:0/%u:0:0:0\nE: SUBSYSTEM=scsi\nE: DEVTYPE=scsi_device\n"
                 "A: vendor=Msft    \\n\nA: model=Virtual Disk    \\n\n\n"
                 "P: %s/host%u/target%u:0:0/%u:0:0:0/block/%s\nN: %s\nE: SUBSYSTEM=block\nE: DEVTYPE=disk\n"
                 "E: DEVNAME=/dev/%s\nE: MAJOR=8\nE: MINOR=%u\nA: dev=8:%u\\n\n\n",
                 path, guid, driver_link, path, h, path, h, h, path, h, h, h, path, h, h, h, disk, disk,
                 disk, h * 16, h * 16);
        ck_assert_msg(umockdev_testbed_add_from_string(tb, text, &error), "%s", error ? error->message : "?");
}

START_TEST(test_vmbus_not_storvsc) {
        UMockdevTestbed *tb = umockdev_testbed_new();
        char out[2048];

        add_chain(tb, "11111111-2222-3333-4444-555555555555", "", 7, "sdh");
        add_chain(tb, "66666666-7777-8888-9999-000000000000",
                  "L: driver=../../../../../../bus/vmbus/drivers/hv_netvsc\n", 8, "sdi");
        add_chain(tb, "12345678-9abc-def0-1234-56789abcdef0",
                  "L: driver=../../../../../../bus/vmbus/drivers/hv_storvsc\n", 9, "sdj");
        classify_all(out, sizeof(out));
        ck_assert_str_eq(out, "sdj 9:0:0:0 scsi {12345678-9abc-def0-1234-56789abcdef0} Msft/Virtual Disk\n");
        g_object_unref(tb);
}
END_TEST

/* ---- Azure's NVMe namespaces, on a plain tree laid out as the kernel lays out sysfs ---- */

static char tree[64];

/* Makes every directory of path (relative to tree) and, with target, a link at it. */
static void make(const char *path, const char *target, const char *text) {
        char full[PATH_MAX], *p;

        snprintf(full, sizeof(full), "%s/%s", tree, path);
        for (p = full + strlen(tree) + 1; (p = strchr(p, '/')); p++) {
                *p = '\0';
                ck_assert(mkdir(full, 0755) == 0 || errno == EEXIST);
                *p = '/';
        }
        if (target)
                ck_assert_int_eq(symlink(target, full), 0);
        else if (text) {
                FILE *f = fopen(full, "w");

                ck_assert_ptr_nonnull(f);
                fputs(text, f);
                fclose(f);
        } else
                ck_assert(mkdir(full, 0755) == 0 || errno == EEXIST);
}

#define VMBUS "devices/LNXSYSTM:00/VMBUS:00/7870a1b2-0c3d-4e5f-8a9b-0c1d2e3f4a5b"
#define PCI VMBUS "/pci7870:00/7870:00:00.0"
#define CTRL PCI "/nvme/nvme0"
#define SUBSYS "devices/virtual/nvme-subsystem/nvme-subsys1"

/* A controller and one namespace of it, with the kernel's 40-byte padded model. */
static void make_direct(const char *model, const char *vmbus_driver) {
        char padded[64];

        snprintf(padded, sizeof(padded), "%-40s\n", model);
        make(VMBUS "/subsystem", "../../../bus/vmbus", NULL);
        make(VMBUS "/driver", vmbus_driver, NULL);
        make(VMBUS "/device_id", NULL, "{7870a1b2-0c3d-4e5f-8a9b-0c1d2e3f4a5b}\n");
        make(PCI "/subsystem", "../../../../../bus/pci", NULL);
        make(CTRL "/subsystem", "../../../../../../../class/nvme", NULL);
        make(CTRL "/model", NULL, padded);
        for (unsigned n = 1; n <= 3; n++) {
                char path[PATH_MAX], nsid[16];

                snprintf(path, sizeof(path), CTRL "/nvme0n%u/subsystem", n);
                make(path, "../../../../../../../../class/block", NULL);
                snprintf(path, sizeof(path), CTRL "/nvme0n%u/nsid", n);
                snprintf(nsid, sizeof(nsid), "%u\n", n);
                make(path, NULL, nsid);
        }
}

static int classify_at(const char *rel, struct hvt_disk *d) {
        char top[PATH_MAX], syspath[PATH_MAX];

        snprintf(top, sizeof(top), "%s/devices", tree);
        snprintf(syspath, sizeof(syspath), "%s/%s", tree, rel);
        return hvt_classify_syspath(top, syspath, makedev(259, 1), d);
}

static void tree_new(void) {
        snprintf(tree, sizeof(tree), "/tmp/hvtuned-classify.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(tree));
}

static void tree_done(void) {
        char cmd[PATH_MAX + 16];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tree);
        ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_nvme_accelerator) {
        struct hvt_disk d;

        tree_new();
        make_direct("MSFT NVMe Accelerator v1.0", "../../../bus/vmbus/drivers/hv_pci");
        ck_assert_int_eq(classify_at(CTRL "/nvme0n1", &d), 1);
        ck_assert_int_eq(d.kind, HVT_KIND_NVME_ACCELERATOR);
        ck_assert_int_eq(d.role, HVT_ROLE_OS);
        ck_assert(d.lun == HVT_LUN_NONE);
        ck_assert(d.via_hv_pci && !d.multipath_head);
        ck_assert_str_eq(d.controller, "{7870a1b2-0c3d-4e5f-8a9b-0c1d2e3f4a5b}");
        ck_assert_str_eq(d.sysname, "nvme0n1");
        ck_assert(strstr(d.device_syspath, "/nvme/nvme0") && !strstr(d.device_syspath, "nvme0n1"));
        hvt_disk_done(&d);
        ck_assert_int_eq(classify_at(CTRL "/nvme0n3", &d), 1);
        ck_assert_int_eq(d.role, HVT_ROLE_DATA);
        ck_assert_uint_eq(d.lun, 1);
        ck_assert_uint_eq(d.nsid, 3);
        hvt_disk_done(&d);
        tree_done();
}
END_TEST

/* An add event without MAJOR and MINOR (Debian 11's umockdev) has device number 0: the
 * instance takes the kernel's from the directory's dev, so that the record it writes matches
 * the disk at the next start; a number the event has is kept. */
START_TEST(test_devnum_from_sysfs) {
        char top[PATH_MAX], syspath[PATH_MAX];
        struct hvt_disk d;

        tree_new();
        make_direct("MSFT NVMe Accelerator v1.0", "../../../bus/vmbus/drivers/hv_pci");
        make(CTRL "/nvme0n2/dev", NULL, "259:7\n");
        snprintf(top, sizeof(top), "%s/devices", tree);
        snprintf(syspath, sizeof(syspath), "%s/" CTRL "/nvme0n2", tree);
        ck_assert_int_eq(hvt_classify_syspath(top, syspath, 0, &d), 1);
        ck_assert_str_eq(d.dev, "259:7");
        hvt_disk_done(&d);
        ck_assert_int_eq(hvt_classify_syspath(top, syspath, makedev(259, 9), &d), 1);
        ck_assert_str_eq(d.dev, "259:9");
        hvt_disk_done(&d);
        tree_done();
}
END_TEST

/* hv_pci is reported, not required: a stand-in's controller is on no VMBus. */
START_TEST(test_nvme_direct_disk_without_hv_pci) {
        struct hvt_disk d;

        tree_new();
        make_direct("Microsoft NVMe Direct Disk v2", "../../../bus/vmbus/drivers/hv_netvsc");
        ck_assert_int_eq(classify_at(CTRL "/nvme0n2", &d), 1);
        ck_assert_int_eq(d.kind, HVT_KIND_NVME_DIRECT_V2);
        ck_assert_int_eq(d.role, HVT_ROLE_LOCAL);
        ck_assert(!d.via_hv_pci && !*d.controller);
        hvt_disk_done(&d);
        tree_done();
}
END_TEST

/* Another vendor's controller, a model that only starts like Azure's, and a partition-like
 * or per-path name are never Azure's disks. */
START_TEST(test_nvme_decoys) {
        struct hvt_disk d;

        tree_new();
        make_direct("QEMU NVMe Ctrl", "../../../bus/vmbus/drivers/hv_pci");
        ck_assert_int_eq(classify_at(CTRL "/nvme0n1", &d), 0);
        tree_done();

        tree_new();
        make_direct("Microsoft NVMe Direct Disk v3", "../../../bus/vmbus/drivers/hv_pci");
        ck_assert_int_eq(classify_at(CTRL "/nvme0n1", &d), 0);
        tree_done();

        tree_new();
        make_direct("Microsoft NVMe Direct Disk", "../../../bus/vmbus/drivers/hv_pci");
        make(CTRL "/nvme0c0n1/subsystem", "../../../../../../../../class/block", NULL);
        make(CTRL "/nvme0c0n1/nsid", NULL, "1\n");
        ck_assert_int_eq(classify_at(CTRL "/nvme0c0n1", &d), 0);
        ck_assert_int_eq(classify_at(CTRL "/nvme0n1", &d), 1);
        ck_assert_int_eq(d.kind, HVT_KIND_NVME_DIRECT);
        hvt_disk_done(&d);
        tree_done();
}
END_TEST

/* Native multipath: the head's parent is the subsystem, which has the model. */
START_TEST(test_nvme_multipath_head) {
        struct hvt_disk d;

        tree_new();
        make(SUBSYS "/subsystem", "../../../../class/nvme-subsystem", NULL);
        make(SUBSYS "/model", NULL, "MSFT NVMe Accelerator v1.0              \n");
        make(SUBSYS "/nvme1n2/subsystem", "../../../../../class/block", NULL);
        make(SUBSYS "/nvme1n2/nsid", NULL, "2\n");
        ck_assert_int_eq(classify_at(SUBSYS "/nvme1n2", &d), 1);
        ck_assert(d.multipath_head && !d.via_hv_pci);
        ck_assert_int_eq(d.role, HVT_ROLE_DATA);
        ck_assert_uint_eq(d.lun, 0);
        ck_assert(strstr(d.device_syspath, "nvme-subsys1") && !strstr(d.device_syspath, "nvme1n2"));
        hvt_disk_done(&d);
        tree_done();
}
END_TEST

static int classify_cached_at(const char *rel, struct hvt_classify_cache *cache, struct hvt_disk *d) {
        char top[PATH_MAX], syspath[PATH_MAX];

        snprintf(top, sizeof(top), "%s/devices", tree);
        snprintf(syspath, sizeof(syspath), "%s/%s", tree, rel);
        return hvt_classify_syspath_cached(top, syspath, makedev(259, 1), cache, d);
}

/* A walk reads a controller's model once: the next namespaces take the kind, the way in
 * (hv_pci) and the not-Azure answer from the cache, which the changed model file proves. */
START_TEST(test_nvme_cache) {
        _cleanup_(hvt_classify_cache_done) struct hvt_classify_cache cache = {}, decoys = {};
        char model[PATH_MAX];
        struct hvt_disk d;

        tree_new();
        make_direct("MSFT NVMe Accelerator v1.0", "../../../bus/vmbus/drivers/hv_pci");
        ck_assert_int_eq(classify_cached_at(CTRL "/nvme0n1", &cache, &d), 1);
        ck_assert_int_eq(d.role, HVT_ROLE_OS);
        hvt_disk_done(&d);
        snprintf(model, sizeof(model), "%s/" CTRL "/model", tree);
        ck_assert_int_eq(unlink(model), 0);
        ck_assert_int_eq(classify_at(CTRL "/nvme0n2", &d), 0);
        ck_assert_int_eq(classify_cached_at(CTRL "/nvme0n2", &cache, &d), 1);
        ck_assert_int_eq(d.kind, HVT_KIND_NVME_ACCELERATOR);
        ck_assert_int_eq(d.role, HVT_ROLE_DATA);
        ck_assert_uint_eq(d.lun, 0);
        ck_assert(d.via_hv_pci && !d.multipath_head);
        ck_assert_str_eq(d.controller, "{7870a1b2-0c3d-4e5f-8a9b-0c1d2e3f4a5b}");
        ck_assert(strstr(d.device_syspath, "/nvme/nvme0") && !strstr(d.device_syspath, "nvme0n2"));
        hvt_disk_done(&d);
        /* A per-path device is still told by its name. */
        make(CTRL "/nvme0c0n1/subsystem", "../../../../../../../../class/block", NULL);
        make(CTRL "/nvme0c0n1/nsid", NULL, "1\n");
        ck_assert_int_eq(classify_cached_at(CTRL "/nvme0c0n1", &cache, &d), 0);
        tree_done();

        tree_new();
        make_direct("QEMU NVMe Ctrl", "../../../bus/vmbus/drivers/hv_pci");
        ck_assert_int_eq(classify_cached_at(CTRL "/nvme0n1", &decoys, &d), 0);
        snprintf(model, sizeof(model), "%s/" CTRL "/model", tree);
        ck_assert_int_eq(unlink(model), 0);
        make(CTRL "/model", NULL, "MSFT NVMe Accelerator v1.0\n");
        ck_assert_int_eq(classify_cached_at(CTRL "/nvme0n2", &decoys, &d), 0);
        tree_done();
}
END_TEST

START_TEST(test_nvme_model_kind) {
        ck_assert_int_eq(hvt_nvme_model_kind("MSFT NVMe Accelerator v1.0"), HVT_KIND_NVME_ACCELERATOR);
        ck_assert_int_eq(hvt_nvme_model_kind("Microsoft NVMe Direct Disk                \n"), HVT_KIND_NVME_DIRECT);
        ck_assert_int_eq(hvt_nvme_model_kind("Microsoft NVMe Direct Disk v2"), HVT_KIND_NVME_DIRECT_V2);
        ck_assert_int_eq(hvt_nvme_model_kind("Microsoft NVMe Direct"), -ENODEV);
        ck_assert_int_eq(hvt_nvme_model_kind(" MSFT NVMe Accelerator v1.0"), -ENODEV);
        ck_assert_int_eq(hvt_nvme_model_kind(""), -ENODEV);
}
END_TEST

START_TEST(test_guid_normalize) {
        char out[HVT_GUID_STR_MAX];

        ck_assert_int_eq(hvt_guid_normalize("F8B3781A-1E82-4818-A1C3-63D806EC15BB", out), 0);
        ck_assert_str_eq(out, "{f8b3781a-1e82-4818-a1c3-63d806ec15bb}");
        ck_assert_int_eq(hvt_guid_normalize("{f8b3781a-1e82-4818-a1c3-63d806ec15bb}", out), 0);
        ck_assert_str_eq(out, "{f8b3781a-1e82-4818-a1c3-63d806ec15bb}");
        ck_assert_int_eq(hvt_guid_normalize("{f8b3781a-1e82-4818-a1c3-63d806ec15bb", out), -EINVAL);
        ck_assert_int_eq(hvt_guid_normalize("f8b3781a1e824818a1c363d806ec15bb", out), -EINVAL);
        ck_assert_int_eq(hvt_guid_normalize("g8b3781a-1e82-4818-a1c3-63d806ec15bb", out), -EINVAL);
        ck_assert_int_eq(hvt_guid_normalize("", out), -EINVAL);
}
END_TEST

int main(void) {
        Suite *s = suite_create("classify");
        TCase *tc = tcase_create("umockdev");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_azure_gen2);
        tcase_add_test(tc, test_gen1);
        tcase_add_test(tc, test_wsl2);
        tcase_add_test(tc, test_vmbus_not_storvsc);
        tcase_add_test(tc, test_guid_normalize);
        tcase_add_test(tc, test_nvme_accelerator);
        tcase_add_test(tc, test_devnum_from_sysfs);
        tcase_add_test(tc, test_nvme_direct_disk_without_hv_pci);
        tcase_add_test(tc, test_nvme_decoys);
        tcase_add_test(tc, test_nvme_multipath_head);
        tcase_add_test(tc, test_nvme_cache);
        tcase_add_test(tc, test_nvme_model_kind);
        suite_add_tcase(s, tc);
        return test_run(s);
}
