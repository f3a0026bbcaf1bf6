/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Azure's NVMe disks on the generated VMs (tests/testbeds/mkvm.py azure-v6, azure-v6-mpath,
 * lsv3): the testbeds show what the kernel's sysfs shows, through the real libudev (parents,
 * subsystems, drivers, attributes), and the testbed's shim (tests/emulate/sysfs-kernel.c)
 * answers writes to a namespace's queue as the kernel does. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <libudev.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "harness.h"
#include "hvtuned-config.h"
#include "kernel-answers.h"
#include "testutil.h"
#include "uevent.h"
#include "writes.h"

#define ACCEL "MSFT NVMe Accelerator v1.0"
#define DIRECT "Microsoft NVMe Direct Disk"
#define DIRECT2 "Microsoft NVMe Direct Disk v2"
#define HV_PCI_CLASS "{44c4f61d-4444-4400-9d52-802e27ede19f}"

static struct udev *udev;

static struct udev_device *device(const char *sysname) {
        struct udev_device *dev;

        if (!udev)
                udev = udev_new();
        dev = udev_device_new_from_syspath(udev, testbed_syspath(sysname));
        ck_assert_msg(dev, "libudev does not see %s", sysname);
        return dev;
}

static const char *attr(struct udev_device *dev, const char *name) {
        const char *v = udev_device_get_sysattr_value(dev, name);

        ck_assert_msg(v, "%s has no %s", udev_device_get_syspath(dev), name);
        return v;
}

static const char *subsystem(struct udev_device *dev) {
        const char *s = udev_device_get_subsystem(dev);

        return s ? s : "";
}

/* A string of the kernel's Identify fields: width bytes, text padded with spaces. */
static void assert_padded(const char *shown, const char *text, size_t width) {
        size_t n = strlen(text);

        ck_assert_msg(strlen(shown) == width, "\"%s\" is %zu bytes, not %zu", shown, strlen(shown), width);
        ck_assert_msg(strncmp(shown, text, n) == 0 && strspn(shown + n, " ") == width - n,
                      "\"%s\" is not \"%s\" padded with spaces", shown, text);
}

/* Where sysname's "device" link leads: the syspath libudev gives that device. */
static void assert_device_link(const char *sysname, struct udev_device *want) {
        g_autofree char *link = g_strdup_printf("%s/sys/block/%s/device", getenv("UMOCKDEV_DIR"), sysname);
        g_autofree char *sys = g_strdup_printf("%s/sys", getenv("UMOCKDEV_DIR"));
        char real[4096], want_real[4096];
        g_autofree char *want_path = NULL;

        ck_assert_msg(realpath(link, real), "%s: %s", link, strerror(errno));
        want_path = g_strconcat(sys, udev_device_get_syspath(want) + strlen("/sys"), NULL);
        ck_assert_msg(realpath(want_path, want_real), "%s: %s", want_path, strerror(errno));
        ck_assert_str_eq(real, want_real);
}

/* Whether the queue directory of sysname has the attribute. */
static bool queue_has(const char *sysname, const char *name) {
        struct stat st;
        char *path = g_strdup_printf("%s/sys/block/%s/queue/%s", getenv("UMOCKDEV_DIR"), sysname, name);
        bool has = stat(path, &st) == 0;

        g_free(path);
        return has;
}

/* The direct layout of an Azure NVMe namespace: namespace -> controller (class nvme, the
 * model) -> PCI function (driver nvme) -> the host bridge (no subsystem) -> the VMBus device
 * bound to hv_pci, whose instance GUID's second field is the PCI domain. */
static void check_azure_namespace(const char *sysname, const char *model, const char *nsid, const char *guid) {
        struct udev_device *ns = device(sysname);
        struct udev_device *ctrl = udev_device_get_parent(ns), *pci, *bridge, *vmbus;
        g_autofree char *domain = g_strndup(guid + 9, 4), *bridge_name = g_strdup_printf("pci%s:00", domain);
        g_autofree char *slot = g_strdup_printf("%s:00:00.0", domain), *device_id = g_strdup_printf("{%s}", guid);

        ck_assert_str_eq(subsystem(ns), "block");
        ck_assert_str_eq(udev_device_get_devtype(ns), "disk");
        ck_assert_str_eq(attr(ns, "nsid"), nsid);
        ck_assert_str_eq(attr(ns, "hidden"), "0");
        ck_assert_uint_ne(udev_device_get_devnum(ns), 0);
        ck_assert_ptr_nonnull(ctrl);
        ck_assert_str_eq(subsystem(ctrl), "nvme");
        assert_padded(attr(ctrl, "model"), model, 40);
        ck_assert_str_eq(attr(ctrl, "transport"), "pcie");
        ck_assert_uint_eq(strlen(attr(ctrl, "serial")), 20);
        ck_assert_uint_eq(strlen(attr(ctrl, "firmware_rev")), 8);
        ck_assert_str_eq(attr(ctrl, "address"), slot);
        /* the namespace's device link is its controller */
        assert_device_link(sysname, ctrl);
        pci = udev_device_get_parent(ctrl);
        ck_assert_str_eq(subsystem(pci), "pci");
        ck_assert_str_eq(udev_device_get_sysname(pci), slot);
        ck_assert_str_eq(udev_device_get_driver(pci), "nvme");
        ck_assert_str_eq(attr(pci, "class"), "0x010802");
        bridge = udev_device_get_parent(pci);
        ck_assert_str_eq(udev_device_get_sysname(bridge), bridge_name);
        ck_assert_str_eq(subsystem(bridge), "");
        vmbus = udev_device_get_parent(bridge);
        ck_assert_str_eq(subsystem(vmbus), "vmbus");
        ck_assert_str_eq(udev_device_get_driver(vmbus), "hv_pci");
        ck_assert_str_eq(attr(vmbus, "class_id"), HV_PCI_CLASS);
        ck_assert_str_eq(attr(vmbus, "device_id"), device_id);
        ck_assert_str_eq(udev_device_get_sysname(vmbus), guid);
        /* the namespace is a disk of a request-based queue: no SCSI device attributes anywhere */
        ck_assert_ptr_null(udev_device_get_parent_with_subsystem_devtype(ns, "scsi", NULL));
        ck_assert_ptr_null(udev_device_get_sysattr_value(ns, "device/timeout"));
        ck_assert_ptr_null(udev_device_get_sysattr_value(ns, "device/queue_depth"));
        ck_assert_ptr_null(udev_device_get_sysattr_value(ns, "device/eh_timeout"));
        udev_device_unref(ns);
}

START_TEST(test_v6_layout) {
        UMockdevTestbed *tb = testbed_load("azure-v6");
        struct udev_device *d, *sub;

        check_azure_namespace("nvme0n1", ACCEL, "1", "0d5b1c3e-7870-4a3b-8d2e-6f1a9c4b7e20");
        check_azure_namespace("nvme0n2", ACCEL, "2", "0d5b1c3e-7870-4a3b-8d2e-6f1a9c4b7e20");
        check_azure_namespace("nvme0n3", ACCEL, "3", "0d5b1c3e-7870-4a3b-8d2e-6f1a9c4b7e20");
        check_azure_namespace("nvme1n1", DIRECT2, "1", "7a4e2f91-2b41-4c6d-9e35-1d8f0a6b3c57");
        /* the accelerator's queue: a 32 MiB optimal size, read-ahead twice that (the kernel's rule,
         * lib/readahead-rule.h; Azure/AKS#5743), and the NVMe driver's */
        ck_assert_str_eq(testbed_read("nvme0n2", "queue/optimal_io_size"), "33554432\n");
        ck_assert_str_eq(testbed_read("nvme0n2", "queue/read_ahead_kb"), "65536\n");
        ck_assert_str_eq(testbed_read("nvme0n2", "queue/scheduler"), "[none] mq-deadline \n");
        ck_assert_str_eq(testbed_read("nvme0n3", "queue/scheduler"), "none [mq-deadline] \n");
        ck_assert_str_eq(testbed_read("nvme0n2", "queue/io_timeout"), "30000\n");
        ck_assert_str_eq(testbed_read("nvme0n2", "queue/nr_requests"), "1023\n");
        ck_assert_str_eq(testbed_read("nvme0n3", "queue/nr_requests"), "256\n");
        ck_assert_str_eq(testbed_read("nvme0n2", "mq/0/nr_tags"), "1023\n");
        ck_assert_str_eq(testbed_read("nvme0n2", "queue/rq_affinity"), "1\n");
        ck_assert_str_eq(testbed_read("nvme0n2", "queue/nomerges"), "0\n");
        ck_assert_str_eq(testbed_read("nvme0n2", "queue/rotational"), "0\n");
        ck_assert_str_eq(testbed_read("nvme1n1", "queue/read_ahead_kb"), "128\n");
        /* partitions of the OS disk and of the local disk */
        d = device("nvme0n1p15");
        ck_assert_str_eq(udev_device_get_devtype(d), "partition");
        ck_assert_str_eq(udev_device_get_sysname(udev_device_get_parent(d)), "nvme0n1");
        udev_device_unref(d);
        d = device("nvme1n1p1");
        ck_assert_str_eq(udev_device_get_devtype(d), "partition");
        udev_device_unref(d);
        /* every controller has its subsystem, which links to it */
        sub = udev_device_new_from_subsystem_sysname(udev, "nvme-subsystem", "nvme-subsys0");
        ck_assert_ptr_nonnull(sub);
        assert_padded(attr(sub, "model"), ACCEL, 40);
        ck_assert_msg(g_str_has_suffix(attr(sub, "subsysnqn"), "MSFT NVMe Accelerator v1.0              "),
                      "the synthesized NQN ends in the padded model");
        udev_device_unref(sub);
        /* no storvsc on this VM */
        ck_assert(!g_file_test(testbed_sys_path("module/hv_storvsc"), G_FILE_TEST_EXISTS));
        g_object_unref(tb);
}
END_TEST

/* The decoys: QEMU's controller on the PCI root, no VMBus above it; an NVMe/TCP namespace of
 * a Linux target under native multipath (the head below its subsystem, bio-based; the hidden
 * path below the fabrics controller, with no dev_t). */
START_TEST(test_v6_decoys) {
        UMockdevTestbed *tb = testbed_load("azure-v6");
        struct udev_device *d, *p;

        d = device("nvme2n1");
        p = udev_device_get_parent(d);
        ck_assert_str_eq(subsystem(p), "nvme");
        assert_padded(attr(p, "model"), "QEMU NVMe Ctrl", 40);
        ck_assert_ptr_null(udev_device_get_parent_with_subsystem_devtype(d, "vmbus", NULL));
        udev_device_unref(d);

        d = device("nvme3n1");
        p = udev_device_get_parent(d);
        ck_assert_str_eq(subsystem(p), "nvme-subsystem");
        ck_assert_str_eq(udev_device_get_sysname(p), "nvme-subsys3");
        assert_padded(attr(p, "model"), "Linux", 40);
        ck_assert_str_eq(attr(d, "nsid"), "1");
        assert_device_link("nvme3n1", p);   /* a head's device is its subsystem */
        ck_assert_ptr_null(udev_device_get_parent_with_subsystem_devtype(d, "nvme", NULL));
        udev_device_unref(d);
        /* a head's queue on a kernel with blk_mq_queue_attrs: no request-based attributes */
        ck_assert(queue_has("nvme3n1", "read_ahead_kb"));
        ck_assert(!queue_has("nvme3n1", "io_timeout"));
        ck_assert(!queue_has("nvme3n1", "scheduler"));
        ck_assert(!queue_has("nvme3n1", "nr_requests"));
        ck_assert(!queue_has("nvme3n1", "rq_affinity"));
        ck_assert(!queue_has("nvme3n1", "wbt_lat_usec"));

        d = device("nvme3c3n1");
        ck_assert_str_eq(udev_device_get_devtype(d), "disk");
        ck_assert_str_eq(attr(d, "hidden"), "1");
        ck_assert_uint_eq(udev_device_get_devnum(d), 0);
        ck_assert_ptr_null(udev_device_get_devnode(d));
        p = udev_device_get_parent(d);
        ck_assert_str_eq(subsystem(p), "nvme");
        ck_assert_str_eq(attr(p, "transport"), "tcp");
        assert_device_link("nvme3c3n1", p);
        ck_assert_str_eq(udev_device_get_sysname(udev_device_get_parent(p)), "ctl");
        ck_assert(queue_has("nvme3c3n1", "io_timeout"));
        udev_device_unref(d);
        g_object_unref(tb);
}
END_TEST

/* The accelerator under native multipath on 6.8: heads below nvme-subsys0 with the
 * accelerator's model, their queues bio-based as 6.8 shows one (scheduler "none" without
 * brackets, nr_requests 128, no io_timeout), the hidden paths below the controller. */
START_TEST(test_v6_mpath_layout) {
        UMockdevTestbed *tb = testbed_load("azure-v6-mpath");
        struct udev_device *d, *p;

        d = device("nvme0n2");
        p = udev_device_get_parent(d);
        ck_assert_str_eq(subsystem(p), "nvme-subsystem");
        assert_padded(attr(p, "model"), ACCEL, 40);
        ck_assert_str_eq(attr(d, "nsid"), "2");
        udev_device_unref(d);
        ck_assert_str_eq(testbed_read("nvme0n2", "queue/scheduler"), "none\n");
        ck_assert_str_eq(testbed_read("nvme0n2", "queue/nr_requests"), "128\n");
        ck_assert_str_eq(testbed_read("nvme0n2", "queue/read_ahead_kb"), "65536\n");
        ck_assert(!queue_has("nvme0n2", "io_timeout"));
        d = device("nvme0c0n2");
        ck_assert_str_eq(attr(d, "hidden"), "1");
        p = udev_device_get_parent(d);
        assert_padded(attr(p, "model"), ACCEL, 40);
        ck_assert_str_eq(udev_device_get_driver(udev_device_get_parent(p)), "nvme");
        udev_device_unref(d);
        ck_assert_str_eq(testbed_read("nvme0c0n2", "queue/scheduler"), "[none] mq-deadline kyber bfq \n");
        ck_assert_str_eq(testbed_read("nvme0c0n2", "queue/io_timeout"), "30000\n");
        d = device("nvme1n1");   /* the Direct Disk v2 stays direct */
        ck_assert_str_eq(subsystem(udev_device_get_parent(d)), "nvme");
        udev_device_unref(d);
        g_object_unref(tb);
}
END_TEST

/* The Lsv3 VM: storvsc disks beside two Direct Disk (v1) controllers. */
START_TEST(test_lsv3_layout) {
        UMockdevTestbed *tb = testbed_load("lsv3");
        struct udev_device *d;

        check_azure_namespace("nvme0n1", DIRECT, "1", "3c9e6d10-5d21-4f0b-b7a4-8e2c1f6a9d03");
        check_azure_namespace("nvme1n1", DIRECT, "1", "9b2f4e87-e3a7-4c52-8f1d-0a6c3b5e7d14");
        ck_assert_str_eq(testbed_read("nvme1n1", "queue/scheduler"), "none [mq-deadline] kyber bfq \n");
        for (size_t i = 0; i < G_N_ELEMENTS(azure_disks); i++) {
                struct udev_device *vmbus;

                d = device(azure_disks[i]);
                vmbus = udev_device_get_parent_with_subsystem_devtype(d, "vmbus", NULL);
                ck_assert_ptr_nonnull(vmbus);
                ck_assert_str_eq(udev_device_get_driver(vmbus), "hv_storvsc");
                udev_device_unref(d);
        }
        ck_assert_str_eq(testbed_read("sda", "device/timeout"), "180\n");
        g_object_unref(tb);
}
END_TEST

/* A data disk attached later: its fragment adds a namespace of the accelerator, numbered
 * after every base device. */
START_TEST(test_v6_hotplug_fragment) {
        UMockdevTestbed *tb = testbed_load("azure-v6");
        struct udev_device *d;
        dev_t seen[16];
        size_t n = 0;
        const char *const names[] = { "nvme0n1", "nvme0n1p1", "nvme0n1p14", "nvme0n1p15", "nvme0n2", "nvme0n3",
                                      "nvme1n1", "nvme1n1p1", "nvme2n1", "nvme3n1", "nvme3n1p1", "nvme0n4" };

        testbed_add(tb, "azure-v6-nvme0n4.umockdev");
        check_azure_namespace("nvme0n4", ACCEL, "4", "0d5b1c3e-7870-4a3b-8d2e-6f1a9c4b7e20");
        for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
                d = device(names[i]);
                seen[n] = udev_device_get_devnum(d);
                ck_assert_uint_eq(major(seen[n]), 259);
                for (size_t j = 0; j < n; j++)
                        ck_assert_msg(seen[j] != seen[n], "%s has the device number of %s", names[i], names[j]);
                n++;
                udev_device_unref(d);
        }
        g_object_unref(tb);
}
END_TEST

/* The kernel's answers (tests/kernel/kernel-answers.h) on an NVMe namespace's queue: its tag
 * depth is the controller's tag set (mq/0/nr_tags, 1023), not a SCSI host's. */
START_TEST(test_nvme_queue_like_the_kernel) {
        UMockdevTestbed *tb = testbed_load("azure-v6");
        char *queue = g_strdup_printf("%s/queue", testbed_syspath("nvme0n2"));

        kernel_answers_check(queue);
        g_free(queue);
        g_object_unref(tb);
}
END_TEST

/* io_timeout of an NVMe namespace: queue_io_timeout_store() (block/blk-sysfs.c) takes a u32
 * of milliseconds above 0, kept in jiffies (HZ 250); it is the queue's alone: no LUN timeout
 * beside it, no other namespace's. */
START_TEST(test_nvme_io_timeout_like_the_kernel) {
        UMockdevTestbed *tb = testbed_load("azure-v6");
        static const struct {
                const char *value;
                int error;
                const char *shows;
        } rows[] = {
                { "240000", 0, "240000" }, { "0", EINVAL, NULL }, { "1", 0, "4" }, { "30001", 0, "30004" },
                { "4294967296", EINVAL, NULL }, { "-1", EINVAL, NULL }, { "abc", EINVAL, NULL },
                { "4294967295", 0, NULL }, { "240000", 0, "240000" },
        };
        g_autofree char *queue = g_strdup_printf("%s/queue", testbed_syspath("nvme0n2"));
        GHashTable *before = snapshot_take();
        int fd = hvt_sysfs_open_dir(queue);

        ck_assert_int_ge(fd, 0);
        for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
                char was[64], now[64];
                int r;

                kernel_answer_read(fd, HVT_ATTR_IO_TIMEOUT, was, sizeof(was));
                r = hvt_sysfs_write(fd, HVT_ATTR_IO_TIMEOUT, rows[i].value);
                ck_assert_msg(r == -rows[i].error, "row %zu, %s: %s", i, rows[i].value, r < 0 ? strerror(-r) : "taken");
                kernel_answer_read(fd, HVT_ATTR_IO_TIMEOUT, now, sizeof(now));
                if (rows[i].error)
                        ck_assert_str_eq(now, was);
                else if (rows[i].shows)
                        ck_assert_str_eq(now, rows[i].shows);
        }
        close(fd);
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()), "nvme0n2/queue/io_timeout");
        g_object_unref(tb);
}
END_TEST

/* A scheduler switch on an NVMe queue resets nr_requests to the tag set's depth (none) or
 * 2 x min(depth, 128) (an elevator); under none, nr_requests cannot exceed the depth. */
START_TEST(test_nvme_scheduler_switch_like_the_kernel) {
        UMockdevTestbed *tb = testbed_load("azure-v6");
        g_autofree char *queue = g_strdup_printf("%s/queue", testbed_syspath("nvme0n3"));
        int fd = hvt_sysfs_open_dir(queue);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(hvt_sysfs_write(fd, HVT_ATTR_NR_REQUESTS, "64"), 0);
        ck_assert_int_eq(hvt_sysfs_write(fd, HVT_ATTR_SCHEDULER, "none"), 0);
        ck_assert_str_eq(testbed_read("nvme0n3", "queue/scheduler"), "[none] mq-deadline \n");
        ck_assert_str_eq(testbed_read("nvme0n3", "queue/nr_requests"), "1023\n");
        ck_assert_int_eq(hvt_sysfs_write(fd, HVT_ATTR_NR_REQUESTS, "1024"), -EINVAL);
        ck_assert_int_eq(hvt_sysfs_write(fd, HVT_ATTR_SCHEDULER, "kyber"), -EINVAL);  /* not built in on 6.14 */
        ck_assert_int_eq(hvt_sysfs_write(fd, HVT_ATTR_SCHEDULER, "mq-deadline"), 0);
        ck_assert_str_eq(testbed_read("nvme0n3", "queue/nr_requests"), "256\n");
        close(fd);
        g_object_unref(tb);
}
END_TEST

/* A multipath head's queue where 6.8 shows the request-based attributes: the scheduler takes
 * any name and stays "none" (elv_iosched_store() returns at once), nr_requests is EINVAL
 * (queue_requests_store()); on 6.14 neither is there to open. */
START_TEST(test_head_queue_like_the_kernel) {
        UMockdevTestbed *tb = testbed_load("azure-v6-mpath");
        g_autofree char *queue = g_strdup_printf("%s/queue", testbed_syspath("nvme0n2"));
        g_autofree char *head = NULL;
        GHashTable *before = snapshot_take();
        int fd = hvt_sysfs_open_dir(queue);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(hvt_sysfs_write(fd, HVT_ATTR_SCHEDULER, "mq-deadline"), 0);
        ck_assert_int_eq(hvt_sysfs_write(fd, HVT_ATTR_SCHEDULER, "none"), 0);
        ck_assert_str_eq(testbed_read("nvme0n2", "queue/scheduler"), "none\n");
        ck_assert_int_eq(hvt_sysfs_write(fd, HVT_ATTR_NR_REQUESTS, "64"), -EINVAL);
        ck_assert_int_eq(hvt_sysfs_write(fd, HVT_ATTR_IO_TIMEOUT, "240000"), -ENOENT);
        ck_assert_int_eq(hvt_sysfs_write(fd, HVT_ATTR_READ_AHEAD_KB, "128"), 0);
        close(fd);
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()), "nvme0n2/queue/read_ahead_kb");
        g_object_unref(tb);

        tb = testbed_load("azure-v6");
        head = g_strdup_printf("%s/queue", testbed_syspath("nvme3n1"));
        fd = hvt_sysfs_open_dir(head);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(hvt_sysfs_write(fd, HVT_ATTR_SCHEDULER, "none"), -ENOENT);
        ck_assert_int_eq(hvt_sysfs_write(fd, HVT_ATTR_NR_REQUESTS, "64"), -ENOENT);
        close(fd);
        g_object_unref(tb);
}
END_TEST

/* The write check (writes.c) takes an NVMe namespace's queue, direct or a multipath head's,
 * and refuses a hidden path device's, a partition's, a controller's and a subsystem's. */
START_TEST(test_nvme_writes_judged) {
        static const char *const good[] = {
                "/sys/devices/pci0000:00/0000:00:05.0/nvme/nvme0/nvme0n2/queue/io_timeout",
                "/sys/devices/virtual/nvme-subsystem/nvme-subsys3/nvme3n1/queue/read_ahead_kb",
        };
        static const char *const bad[] = {
                "/sys/devices/virtual/nvme-fabrics/ctl/nvme3/nvme3c3n1/queue/io_timeout",
                "/sys/devices/pci0000:00/0000:00:05.0/nvme/nvme0/nvme0n1/nvme0n1p1/queue/read_ahead_kb",
                "/sys/devices/pci0000:00/0000:00:05.0/nvme/nvme0/queue/io_timeout",
                "/sys/devices/pci0000:00/0000:00:05.0/nvme/nvme0/nvme0n2/io_timeout",
                "/sys/devices/pci0000:00/0000:00:05.0/nvme/nvme0/nvme0n2/device/timeout",
                "/sys/devices/virtual/nvme-subsystem/nvme-subsys3/queue/read_ahead_kb",
        };
        char *why;

        for (size_t i = 0; i < G_N_ELEMENTS(good); i++) {
                g_autofree char *log = g_strdup_printf("open %s\nwrite %s 240000\n", good[i], good[i]);

                ck_assert_msg(writes_verify(log, runtime_dir(), &why) == 1, "%s: %s", good[i], why ? why : "");
        }
        for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
                g_autofree char *log = g_strdup_printf("open %s\nwrite %s 240000\n", bad[i], bad[i]);

                ck_assert_msg(writes_verify(log, runtime_dir(), &why) == -1, "%s was taken", bad[i]);
                assert_contains(why, "neither an allowlisted attribute");
                g_free(why);
        }
}
END_TEST

/* ---- hvtuned on the NVMe VMs ---- */

#define V6_ACCEL "{0d5b1c3e-7870-4a3b-8d2e-6f1a9c4b7e20}"
#define V6_DIRECT2 "{7a4e2f91-2b41-4c6d-9e35-1d8f0a6b3c57}"

/* hvtuned without -c and without a file at its default path runs on its built-in policy
 * (a -c naming a missing file is an error): main() leaves those cases out where the file
 * exists. */
static bool default_config_exists(void) {
        return access(HVTUNED_CONFIG_PATH, F_OK) == 0;
}

/* hvtuned in mode with the configuration file at config_path, or none (NULL). */
static int once_on(const char *config_path, const char *mode, char **err) {
        const char *args[] = { mode, config_path ? "-c" : NULL, config_path, NULL };

        return hvtuned_run(args, err);
}

/* What hvtuned changes on the v6 VM with the platform defaults and no file: read_ahead_kb down
 * to 128 and io_timeout up to 240000 on the accelerator's namespaces, io_timeout on the local
 * disk (its read-ahead is 128 already), and the scheduler none on nvme0n3, whose nr_requests
 * the kernel resets with it. Nothing else: not the partitions, not QEMU's namespace, not the
 * NVMe/TCP head nor its hidden path, not the controllers. */
#define V6_TUNED_FILES \
        "nvme0n1/queue/io_timeout\nnvme0n1/queue/read_ahead_kb\n" \
        "nvme0n2/queue/io_timeout\nnvme0n2/queue/read_ahead_kb\n" \
        "nvme0n3/queue/io_timeout\nnvme0n3/queue/nr_requests\nnvme0n3/queue/read_ahead_kb\nnvme0n3/queue/scheduler\n" \
        "nvme1n1/queue/io_timeout"

static void assert_v6_tuned(void) {
        const char *const accel[] = { "nvme0n1", "nvme0n2", "nvme0n3" };

        for (size_t i = 0; i < G_N_ELEMENTS(accel); i++) {
                ck_assert_str_eq(testbed_value(accel[i], "queue/read_ahead_kb"), "128");
                ck_assert_str_eq(testbed_value(accel[i], "queue/io_timeout"), "240000");
                ck_assert_str_eq(testbed_value(accel[i], "queue/scheduler"), "none");
        }
        ck_assert_str_eq(testbed_value("nvme0n3", "queue/nr_requests"), "1023");
        ck_assert_str_eq(testbed_value("nvme1n1", "queue/io_timeout"), "240000");
        ck_assert_str_eq(testbed_value("nvme1n1", "queue/read_ahead_kb"), "128");
}

START_TEST(test_v6_once_defaults) {
        UMockdevTestbed *tb = testbed_load("azure-v6");
        GHashTable *before = snapshot_take();
        char *err;

        ck_assert_int_eq(once_on(NULL, "--once", &err), 0);
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()), V6_TUNED_FILES);
        assert_v6_tuned();
        assert_contains(err, "nvme0n1: found Azure nvme-accelerator disk nsid 1 (os), direct, via hv_pci " V6_ACCEL "\n");
        assert_contains(err, "nvme0n3: found Azure nvme-accelerator disk nsid 3 (data LUN 1), direct, via hv_pci "
                             V6_ACCEL "\n");
        assert_contains(err, "nvme1n1: found Azure nvme-direct-v2 disk nsid 1 (local), direct, via hv_pci "
                             V6_DIRECT2 "\n");
        assert_contains(err, "nvme0n2 queue/read_ahead_kb: 65536 -> 128 (applied)\n");
        assert_contains(err, "nvme0n2 queue/io_timeout: 30000 -> 240000 (applied)\n");
        assert_contains(err, "nvme0n3 queue/scheduler: mq-deadline -> none (applied)\n");
        /* the decoys are never named */
        ck_assert_ptr_null(strstr(err, "nvme2"));
        ck_assert_ptr_null(strstr(err, "nvme3"));
        ck_assert_ptr_null(strstr(err, "nvme0n1p"));
        g_object_unref(tb);
}
END_TEST

START_TEST(test_v6_dry_run) {
        UMockdevTestbed *tb = testbed_load("azure-v6");
        GHashTable *before = snapshot_take();
        char *err;

        ck_assert_int_eq(once_on(NULL, "--dry-run", &err), 0);
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()), "");
        assert_contains(err, "nvme0n2 queue/read_ahead_kb: 65536 -> 128 (would apply)\n");
        assert_contains(err, "nvme1n1 queue/io_timeout: 30000 -> 240000 (would apply)\n");
        ck_assert(!record_exists("nvme0n2"));
        g_object_unref(tb);
}
END_TEST

/* A VM of NVMe disks alone (no hv_storvsc under /sys/module, no SCSI host of storvsc's)
 * counts its disks by kind and says nothing of storvsc: no request layout, no cap written or
 * found missing, no hw queue figures, even with a cap in the file. */
START_TEST(test_v6_no_storvsc) {
        UMockdevTestbed *tb = testbed_load("azure-v6");
        char *config = config_write("platform_defaults = true;\nhost = { max_hw_queues = 1; };\n");
        const char *const modes[] = { "--once", "--dry-run" };
        char *err;

        for (size_t i = 0; i < G_N_ELEMENTS(modes); i++) {
                ck_assert_int_eq(once_on(config, modes[i], &err), 0);
                assert_contains(err, i == 0 ? "\n4 Azure NVMe disks on 2 controllers, 0 storvsc: 4 tuned, 0 failed\n" :
                                "\n4 Azure NVMe disks on 2 controllers, 0 storvsc: 0 would change, 0 failed");
                ck_assert_msg(!strstr(err, "storvsc_max_hw_queues") && !strstr(err, "Request layout") &&
                              !strstr(err, "hw queue"), "storvsc named on a VM without it:\n%s", err);
        }
        /* hv_storvsc built in (=y) or loaded by an initramfs, with no controller of its own:
         * the cap may still be written, for a controller probed later, but nothing is said of
         * it, whether the write works, fails or finds no parameter. */
        {
                const char *param = "module/hv_storvsc/parameters/storvsc_max_hw_queues";
                g_autofree char *dir = g_path_get_dirname(testbed_sys_path(param));

                ck_assert_int_eq(g_mkdir_with_parents(dir, 0755), 0);
                ck_assert(g_file_set_contents(testbed_sys_path(param), "0\n", -1, NULL));
                for (int round = 0; round < 3; round++) {
                        if (round == 1)
                                ck_assert_int_eq(chmod(testbed_sys_path(param), 0444), 0);
                        if (round == 2)
                                ck_assert_int_eq(unlink(testbed_sys_path(param)), 0);
                        ck_assert_int_eq(once_on(config, "--once", &err), 0);
                        ck_assert_msg(!strstr(err, "storvsc_max_hw_queues") && !strstr(err, "Request layout") &&
                                      !strstr(err, "hw queue"), "storvsc named without a controller of its own "
                                      "(round %d):\n%s", round, err);
                        assert_contains(err, "\n4 Azure NVMe disks on 2 controllers, 0 storvsc: 4 tuned, 0 failed\n");
                        if (round == 0)
                                ck_assert_str_eq(testbed_sys_read(param), "1");
                }
                ck_assert_int_eq(rmdir(dir), 0);
        }
        /* An NVMe disk's tag depth is its controller's queue size, as its mq/0/nr_tags shows */
        config_rewrite(config, "platform_defaults = true;\nqueue = { scheduler = \"none\"; nr_requests = 2000; };\n");
        ck_assert_int_eq(once_on(config, "--dry-run", &err), 0);
        assert_contains(err, "nvme1n1 queue/nr_requests: 1023 -> 2000 (would be refused: over the tag depth 1023)\n");
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* A file that sets an attribute takes it from the platform defaults; a main file means no
 * scheduler default. (The harness's files say platform_defaults = false unless they name
 * it: these name it.) */
START_TEST(test_v6_file_over_defaults) {
        UMockdevTestbed *tb = testbed_load("azure-v6");
        char *config = config_write("platform_defaults = true;\n"
                                    "override = ( { match = { role = \"data\"; }; queue = { read_ahead_kb = 4096; }; } );\n");
        char *err;

        ck_assert_int_eq(once_on(config, "--once", &err), 0);
        ck_assert_str_eq(testbed_value("nvme0n1", "queue/read_ahead_kb"), "128");
        ck_assert_str_eq(testbed_value("nvme0n2", "queue/read_ahead_kb"), "4096");
        ck_assert_str_eq(testbed_value("nvme0n3", "queue/read_ahead_kb"), "4096");
        ck_assert_str_eq(testbed_value("nvme0n3", "queue/scheduler"), "mq-deadline");
        ck_assert_str_eq(testbed_value("nvme0n3", "queue/io_timeout"), "240000");
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* platform_defaults = false: a file with nothing else changes nothing. */
START_TEST(test_v6_platform_defaults_off) {
        UMockdevTestbed *tb = testbed_load("azure-v6");
        char *config = config_write("platform_defaults = false;\n");
        GHashTable *before = snapshot_take();
        char *err;

        ck_assert_int_eq(once_on(config, "--once", &err), 0);
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()), "");
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* The daemon: a data disk attached later is tuned, a change event undoing io_timeout (as
 * something with another idea of it) is repaired, and stop puts every original back but the
 * 30 s timeouts, under the 120 s Azure's host retries I/O: those stay at hvtuned's 240000,
 * their records kept, said in one line with the boot-time step; the next start adopts them
 * and writes nothing. */
START_TEST(test_v6_daemon_hotplug_drift_restore) {
        UMockdevTestbed *tb = testbed_load("azure-v6");
        GHashTable *before = snapshot_take();
        const char *args[] = { NULL };
        const char *accel[] = { "nvme0n1", "nvme0n2", "nvme0n3", "nvme0n4" };
        g_autofree char *diff = NULL;
        struct hv_run run;
        char *err, **lines;

        hvtuned_start(&run, args);
        assert_v6_tuned();
        /* The start raised them from 30 s: the boot-time step, once. */
        hvtuned_wait_stderr(&run, "ran with an I/O timeout of 30000 ms until hvtuned started", 1);

        testbed_add(tb, "azure-v6-nvme0n4.umockdev");
        testbed_wait_value("nvme0n4", "queue/io_timeout", "240000");
        testbed_wait_value("nvme0n4", "queue/read_ahead_kb", "128");

        testbed_sentinel_value(tb, "nvme0n2", "queue/io_timeout", "30000\n", "240000");
        testbed_sentinel_value(tb, "nvme1n1", "queue/io_timeout", "60000\n", "240000");
        testbed_sentinel_value(tb, "nvme0n3", "queue/read_ahead_kb", "65536\n", "128");

        err = hvtuned_stop(&run);
        ck_assert_uint_eq(hv_count(err, "ran with an I/O timeout of"), 1);
        ck_assert_msg(!strstr(err, "queue/io_timeout: 240000 -> 30000 (restored)"), "a 30 s timeout went back:\n%s", err);
        assert_contains(err, "nvme0n1, nvme0n2, nvme0n3, nvme1n1, nvme0n4: queue/io_timeout left as hvtuned set it, "
                        "not put back to their originals, under 120000 ms");
        assert_contains(err, "nvme_core.io_timeout=240");
        assert_contains(err, "nvme0n3 queue/scheduler: none -> mq-deadline (restored)\n");
        assert_contains(err, "kept (5 Azure NVMe I/O timeouts), 0 left as tuned, on 5 disks");
        /* Every value as it was but the timeouts; the hot-added namespace's files are new. */
        diff = g_strdup(snapshot_diff_values(before, snapshot_take()));
        lines = g_strsplit(diff, "\n", -1);
        for (char **l = lines; *l; l++)
                ck_assert_msg(!**l || g_str_has_prefix(*l, "nvme0n4/") || g_str_has_prefix(*l, "ng0n4/") ||
                              strstr(*l, "/queue/io_timeout"), "%s differs after stop", *l);
        g_strfreev(lines);
        ck_assert_str_eq(testbed_value("nvme0n3", "queue/nr_requests"), "256");
        for (size_t i = 0; i < G_N_ELEMENTS(accel); i++) {
                ck_assert_str_eq(testbed_value(accel[i], "queue/io_timeout"), "240000");
                ck_assert_msg(record_exists(accel[i]), "%s's record went", accel[i]);
        }
        ck_assert_str_eq(testbed_value("nvme1n1", "queue/io_timeout"), "240000");
        ck_assert_str_eq(testbed_value("nvme0n4", "queue/read_ahead_kb"), "65536");

        /* The next start adopts them: the timeouts need no write, and the next stop keeps them
         * again. */
        hvtuned_start(&run, args);
        err = hvtuned_stop(&run);
        ck_assert_msg(!strstr(err, "queue/io_timeout: 30000 -> 240000") && !strstr(err, "queue/io_timeout: 240000 ->"),
                      "a timeout was written:\n%s", err);
        ck_assert_uint_eq(hv_count(err, "ran with an I/O timeout of"), 0);
        assert_contains(err, "kept (5 Azure NVMe I/O timeouts)");
        g_object_unref(tb);
}
END_TEST

/* hvtuned --restore, after a stop kept the 30 s timeouts' records: it leaves the timeouts at
 * 240000 too, and deletes their records, saying so; an original at or above 120000 ms goes
 * back as any other. */
START_TEST(test_v6_restore_leaves_short_timeout) {
        UMockdevTestbed *tb = testbed_load("azure-v6");
        const char *args[] = { NULL }, *restore[] = { "--restore", NULL };
        struct hv_run run;
        char *err = NULL;

        /* Not Azure's 30 s: this one goes back. */
        ck_assert(g_file_set_contents(testbed_sys_path("block/nvme1n1/queue/io_timeout"), "180000\n", -1, NULL));
        hvtuned_start(&run, args);
        assert_v6_tuned();
        hvtuned_kill(&run, SIGKILL);    /* a crash: every record left for --restore */
        ck_assert(record_exists("nvme0n2"));

        ck_assert_int_eq(hvtuned_run(restore, &err), 0);
        assert_contains(err, "nvme0n1, nvme0n2, nvme0n3: queue/io_timeout left as hvtuned set it");
        assert_contains(err, "Their records are deleted");
        assert_contains(err, "nvme1n1 queue/io_timeout: 240000 -> 180000 (restored)\n");
        assert_contains(err, "(3 Azure NVMe I/O timeouts left as set)");
        ck_assert_str_eq(testbed_value("nvme0n2", "queue/io_timeout"), "240000");
        ck_assert_str_eq(testbed_value("nvme0n3", "queue/scheduler"), "mq-deadline");
        ck_assert_str_eq(testbed_value("nvme1n1", "queue/io_timeout"), "180000");
        ck_assert(!record_exists("nvme0n1") && !record_exists("nvme0n2") && !record_exists("nvme0n3") &&
                  !record_exists("nvme1n1"));
        g_object_unref(tb);
}
END_TEST

/* A namespace that goes away (a data disk detached): hvtuned says so and forgets it; stop
 * restores the others and tries nothing on it. */
START_TEST(test_v6_daemon_namespace_removed) {
        UMockdevTestbed *tb = testbed_load("azure-v6");
        const char *args[] = { NULL };
        struct hv_run run;
        char *err, *after;

        hvtuned_start(&run, args);
        testbed_add(tb, "azure-v6-nvme0n4.umockdev");
        testbed_wait_value("nvme0n4", "queue/io_timeout", "240000");
        testbed_remove(tb, testbed_syspath("nvme0n4"));
        hvtuned_wait_stderr(&run, "nvme0n4: removed Azure nvme-accelerator disk nsid 4 (data LUN 2)", 1);
        /* handled in order: a repair after it shows the remove was taken */
        testbed_sentinel_value(tb, "nvme0n2", "queue/io_timeout", "30000\n", "240000");
        err = hvtuned_stop(&run);
        ck_assert_ptr_nonnull((after = strstr(err, "nvme0n4: removed")));
        ck_assert_msg(!strstr(after, "nvme0n4 queue/"), "nvme0n4 written after it went:\n%s", after);
        assert_contains(err, "nvme0n2, nvme0n3, nvme1n1: queue/io_timeout left as hvtuned set it");
        ck_assert(!record_exists("nvme0n4"));
        g_object_unref(tb);
}
END_TEST

/* settle.h's HVT_SETTLE_USEC: a burst's last re-check comes this long after its last event. */
#define SETTLE_MS 1000

/* "/sys/devices/..." of the testbed's /sys/rel, its links resolved, as libudev names it. */
static char *syspath_of(const char *rel) {
        char real[PATH_MAX], top[PATH_MAX];

        ck_assert_msg(realpath(testbed_sys_path(rel), real), "%s: %m", rel);
        ck_assert(realpath(testbed_sys_path("devices"), top));
        ck_assert(g_str_has_prefix(real, top));
        return hv_keep(g_strconcat("/sys/devices", real + strlen(top), NULL));
}

/* What the kernel does to a namespace when it re-applies its queue limits (a scan, a reset's
 * reconnect through blk_mq_update_nr_hw_queues()), sending no event of it: its read-ahead back
 * to 2 x optimal_io_size, its elevator switched off, nr_requests reset to the tag depth. */
static void nvme_reapplies(UMockdevTestbed *tb, const char *ns, bool queue) {
        testbed_drift(tb, ns, "queue/read_ahead_kb", "65536\n");
        if (queue) {
                testbed_drift(tb, ns, "queue/scheduler", "[none] mq-deadline kyber bfq \n");
                testbed_drift(tb, ns, "queue/nr_requests", "1023\n");
        }
}

static void nvme_put_back(const char *ns, bool queue) {
        testbed_wait_value(ns, "queue/read_ahead_kb", "128");
        if (queue) {
                testbed_wait_value(ns, "queue/scheduler", "mq-deadline");
                testbed_wait_value(ns, "queue/nr_requests", "64");
        }
}

/* Every attribute a reconnect may reset, and no periodic check: what puts a namespace back
 * is the event of another namespace or of the controller. */
#define SIBLINGS_V6 "platform_defaults = true;\nqueue = { scheduler = \"mq-deadline\"; nr_requests = 64; };\n" \
                    "verify_interval = 0;\n"

/* A namespace attached, changed or detached, and the controller's change (a reset's
 * NVME_EVENT=connected): the kernel may have re-applied every namespace's limits, and sent no
 * event for them. nvme0n2 is put back each time, and once more when the kernel's write comes
 * after the event (a scan runs asynchronously); nvme1n1, another controller's, is left. */
START_TEST(test_v6_siblings) {
        UMockdevTestbed *tb = testbed_load("azure-v6");
        const char *args[3] = { "-c", NULL, NULL };
        struct hv_run run;
        char *err;

        args[1] = config_write(SIBLINGS_V6);
        hvtuned_start(&run, args);
        nvme_put_back("nvme0n3", true);

        nvme_reapplies(tb, "nvme0n2", true);
        nvme_reapplies(tb, "nvme0n1", false);
        nvme_reapplies(tb, "nvme1n1", false);
        testbed_add(tb, "azure-v6-nvme0n4.umockdev");
        nvme_put_back("nvme0n2", true);
        nvme_put_back("nvme0n1", false);
        usleep((SETTLE_MS + 300) * 1000);

        nvme_reapplies(tb, "nvme0n2", true);
        uevent_send_blocking(testbed_syspath("nvme0n3"), "change", 1);
        nvme_put_back("nvme0n2", true);
        usleep((SETTLE_MS + 300) * 1000);

        nvme_reapplies(tb, "nvme0n2", true);
        testbed_remove(tb, testbed_syspath("nvme0n4"));
        nvme_put_back("nvme0n2", true);
        usleep((SETTLE_MS + 300) * 1000);

        nvme_reapplies(tb, "nvme0n2", true);
        uevent_send_blocking(hv_keep(g_path_get_dirname(testbed_syspath("nvme0n2"))), "change", 1);
        nvme_put_back("nvme0n2", true);
        usleep((SETTLE_MS + 300) * 1000);

        /* The re-application after the event: the re-check once the burst settled. */
        uevent_send_blocking(hv_keep(g_path_get_dirname(testbed_syspath("nvme0n2"))), "change", 1);
        usleep(300 * 1000);
        nvme_reapplies(tb, "nvme0n2", true);
        nvme_put_back("nvme0n2", true);

        ck_assert_str_eq(testbed_value("nvme1n1", "queue/read_ahead_kb"), "65536");
        err = hvtuned_stop(&run);
        ck_assert_uint_eq(hv_count(err, "nvme0n2 queue/read_ahead_kb: 65536 -> 128 (drift repaired: the kernel re-applied its own value)\n"), 5);
        ck_assert_uint_eq(hv_count(err, "nvme0n2 queue/scheduler: none -> mq-deadline (drift repaired)\n"), 5);
        ck_assert_ptr_null(strstr(err, "nvme1n1 queue/read_ahead_kb: 65536 -> 128 (drift repaired"));
        unlink(args[1]);
        g_object_unref(tb);
}
END_TEST

/* Under native multipath a namespace's disk is its subsystem's head: the controller's change
 * re-checks every head of the subsystem it is a path of. */
START_TEST(test_v6_mpath_siblings) {
        UMockdevTestbed *tb = testbed_load("azure-v6-mpath");
        const char *args[3] = { "-c", NULL, NULL };
        struct hv_run run;
        char *err;

        args[1] = config_write("platform_defaults = true;\nverify_interval = 0;\n");
        hvtuned_start(&run, args);
        nvme_put_back("nvme0n2", false);
        nvme_reapplies(tb, "nvme0n1", false);
        nvme_reapplies(tb, "nvme0n2", false);
        uevent_send_blocking(syspath_of("devices/virtual/nvme-subsystem/nvme-subsys0/nvme0"), "change", 1);
        nvme_put_back("nvme0n1", false);
        nvme_put_back("nvme0n2", false);
        err = hvtuned_stop(&run);
        assert_contains(err, "nvme0n1 queue/read_ahead_kb: 65536 -> 128 (drift repaired: the kernel re-applied its own value)\n");
        assert_contains(err, "nvme0n2 queue/read_ahead_kb: 65536 -> 128 (drift repaired: the kernel re-applied its own value)\n");
        unlink(args[1]);
        g_object_unref(tb);
}
END_TEST

/* A reload that adds an override by role moves the data disks' read-ahead, and the rest
 * stays; stop is exact. The metrics file counts the disks by kind and role. */
START_TEST(test_v6_reload) {
        UMockdevTestbed *tb = testbed_load("azure-v6");
        GHashTable *before = snapshot_take();
        char dir[] = "/tmp/hvtuned-metrics.XXXXXX";
        g_autofree char *prom = NULL, *text = NULL;
        char *config, *m;
        const char *args[3] = { "-c", NULL, NULL };
        struct hv_run run;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        prom = g_build_filename(dir, "hvtuned.prom", NULL);
        ck_assert_int_eq(setenv("HVTUNED_TEST_METRICS_DIR", dir, 1), 0);
        text = g_strdup_printf("platform_defaults = true;\nqueue = { scheduler = \"none\"; };\nmetrics_file = \"%s\";\n",
                               prom);
        args[1] = config = config_write(text);
        hvtuned_start(&run, args);
        assert_v6_tuned();
        /* the metrics count the disks by kind and role */
        m = hvtuned_wait_metrics(prom, "hvtuned_disks{result=\"tuned\"} 4\n");
        assert_contains(m, "hvtuned_disks_managed{kind=\"nvme-accelerator\",role=\"os\"} 1\n");
        assert_contains(m, "hvtuned_disks_managed{kind=\"nvme-accelerator\",role=\"data\"} 2\n");
        assert_contains(m, "hvtuned_disks_managed{kind=\"nvme-direct-v2\",role=\"local\"} 1\n");
        ck_assert_uint_eq(hv_count(m, "hvtuned_disks_managed{"), 3);
        g_free(text);
        text = g_strdup_printf("platform_defaults = true;\nqueue = { scheduler = \"none\"; };\nmetrics_file = \"%s\";\n"
                               "override = ( { match = { role = \"data\"; }; queue = { read_ahead_kb = 1024; }; } );\n",
                               prom);
        config_rewrite(config, text);
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "RELOADING=1");
        hvtuned_wait_notify(&run, "READY=1");
        ck_assert_str_eq(testbed_value("nvme0n1", "queue/read_ahead_kb"), "128");
        ck_assert_str_eq(testbed_value("nvme0n2", "queue/read_ahead_kb"), "1024");
        ck_assert_str_eq(testbed_value("nvme0n3", "queue/read_ahead_kb"), "1024");
        ck_assert_str_eq(testbed_value("nvme1n1", "queue/read_ahead_kb"), "128");
        ck_assert_str_eq(testbed_value("nvme0n2", "queue/io_timeout"), "240000");
        hvtuned_stop(&run);
        /* All but the 30 s timeouts, which a stop keeps at 240000 (test_v6_daemon_hotplug_drift_restore). */
        ck_assert_str_eq(snapshot_diff_values(before, snapshot_take()),
                         "nvme0n1/queue/io_timeout\nnvme0n2/queue/io_timeout\nnvme0n3/queue/io_timeout\nnvme1n1/queue/io_timeout");
        unlink(config);
        unlink(prom);
        (void) rmdir(dir);
        g_object_unref(tb);
}
END_TEST

/* The accelerator under native multipath: the heads are its disks; their bio-based queues
 * have no io_timeout (reported absent, never created) and the hidden paths are never
 * written. */
START_TEST(test_v6_mpath_once) {
        UMockdevTestbed *tb = testbed_load("azure-v6-mpath");
        GHashTable *before = snapshot_take();
        char *err;

        ck_assert_int_eq(once_on(NULL, "--once", &err), 0);
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()),
                         "nvme0n1/queue/read_ahead_kb\nnvme0n2/queue/read_ahead_kb\nnvme1n1/queue/io_timeout");
        assert_contains(err, "nvme0n2: found Azure nvme-accelerator disk nsid 2 (data LUN 0), multipath head\n");
        ck_assert(!queue_has("nvme0n2", "io_timeout"));
        ck_assert_ptr_null(strstr(err, "nvme0c0n"));
        g_object_unref(tb);
}
END_TEST

/* The Lsv3 VM tunes both kinds: the storvsc disks and the local Direct Disks, and overrides
 * select the latter by kind and by role. */
START_TEST(test_lsv3_both_kinds) {
        UMockdevTestbed *tb = testbed_load("lsv3");
        char *config = config_write("platform_defaults = true;\nqueue = { scheduler = \"none\"; };\n"
                                    "override = (\n"
                                    "  { match = { kind = \"nvme-direct\"; }; queue = { read_ahead_kb = 1024; }; },\n"
                                    "  { match = { role = \"local\"; }; queue = { rq_affinity = 2; }; },\n"
                                    "  { match = { role = \"resource\"; }; queue = { nomerges = 1; }; }\n"
                                    ");\n");
        GHashTable *before = snapshot_take();
        char *err;

        ck_assert_int_eq(once_on(config, "--once", &err), 0);
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()),
                         "nvme0n1/queue/io_timeout\nnvme0n1/queue/read_ahead_kb\nnvme0n1/queue/rq_affinity\n"
                         "nvme1n1/queue/io_timeout\nnvme1n1/queue/nr_requests\nnvme1n1/queue/read_ahead_kb\n"
                         "nvme1n1/queue/rq_affinity\nnvme1n1/queue/scheduler\n"
                         "sda/queue/nr_requests\nsda/queue/scheduler\nsdb/queue/nomerges\n"
                         "sdd/queue/nr_requests\nsdd/queue/scheduler");
        ck_assert_str_eq(testbed_value("nvme1n1", "queue/read_ahead_kb"), "1024");
        ck_assert_str_eq(testbed_value("nvme1n1", "queue/rq_affinity"), "2");
        ck_assert_str_eq(testbed_value("nvme1n1", "queue/io_timeout"), "240000");
        ck_assert_str_eq(testbed_value("nvme1n1", "queue/scheduler"), "none");
        ck_assert_str_eq(testbed_value("sda", "queue/scheduler"), "none");
        ck_assert_str_eq(testbed_value("sda", "queue/read_ahead_kb"), "128");
        assert_contains(err, "nvme0n1: found Azure nvme-direct disk nsid 1 (local), direct, via hv_pci "
                             "{3c9e6d10-5d21-4f0b-b7a4-8e2c1f6a9d03}\n");
        /* the resource disk alone took the override by role */
        assert_contains(err, "sdb queue/nomerges: 0 -> 1 (applied)\n");
        /* both kinds counted, each on its own controllers */
        assert_contains(err, "\n4 storvsc disks on 2 controllers, 2 Azure NVMe disks on 2 controllers: 6 tuned, 0 failed");
        ck_assert_str_eq(testbed_value("sda", "queue/nomerges"), "0");
        unlink(config);
        g_object_unref(tb);
}
END_TEST

int main(void) {
        Suite *s = suite_create("nvme");
        TCase *layout = tcase_create("layout"), *kernel = tcase_create("emulated-kernel");
        TCase *tuned = tcase_create("hvtuned");

        tcase_set_timeout(layout, 120);
        tcase_add_test(layout, test_v6_layout);
        tcase_add_test(layout, test_v6_decoys);
        tcase_add_test(layout, test_v6_mpath_layout);
        tcase_add_test(layout, test_lsv3_layout);
        tcase_add_test(layout, test_v6_hotplug_fragment);
        tcase_add_test(layout, test_nvme_writes_judged);
        tcase_set_timeout(kernel, 120);
        tcase_add_test(kernel, test_nvme_queue_like_the_kernel);
        tcase_add_test(kernel, test_nvme_io_timeout_like_the_kernel);
        tcase_add_test(kernel, test_nvme_scheduler_switch_like_the_kernel);
        tcase_add_test(kernel, test_head_queue_like_the_kernel);
        tcase_set_timeout(tuned, 120);
        if (default_config_exists())
                printf("nvme: %s exists: the cases without a configuration file are left out\n", HVTUNED_CONFIG_PATH);
        else {
                tcase_add_test(tuned, test_v6_once_defaults);
                tcase_add_test(tuned, test_v6_dry_run);
                tcase_add_test(tuned, test_v6_no_storvsc);
                tcase_add_test(tuned, test_v6_daemon_hotplug_drift_restore);
                tcase_add_test(tuned, test_v6_daemon_namespace_removed);
                tcase_add_test(tuned, test_v6_restore_leaves_short_timeout);
                tcase_add_test(tuned, test_v6_mpath_once);
        }
        tcase_add_test(tuned, test_v6_siblings);
        tcase_add_test(tuned, test_v6_mpath_siblings);
        tcase_add_test(tuned, test_v6_file_over_defaults);
        tcase_add_test(tuned, test_v6_platform_defaults_off);
        tcase_add_test(tuned, test_v6_reload);
        tcase_add_test(tuned, test_lsv3_both_kinds);
        /* Under valgrind the point is hvtuned's memory: one case of the new testbeds (the
         * bundled example's VM, defaults), not the rest; the layout and the emulation start
         * no hvtuned. */
        if (hvtuned_under_valgrind()) {
                TCase *one = tcase_create("valgrind");

                tcase_set_timeout(one, 120);   /* CK_TIMEOUT_MULTIPLIER stretches it */
                tcase_add_test(one, default_config_exists() ? test_v6_file_over_defaults : test_v6_once_defaults);
                suite_add_tcase(s, one);
        } else {
                suite_add_tcase(s, layout);
                suite_add_tcase(s, kernel);
                suite_add_tcase(s, tuned);
        }
        return test_run(s);
}
