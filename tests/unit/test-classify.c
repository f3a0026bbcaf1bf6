/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Classification through the real libudev on umockdev testbeds: every Hyper-V disk of each
 * generated VM is recognised with its identity, everything else (partitions, virtio, NVMe,
 * USB, loop, dm, md) is not, and a VMBus parent not bound to hv_storvsc never counts. */
#include <check.h>
#include <fcntl.h>
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
        suite_add_tcase(s, tc);
        return test_run(s);
}
