/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The opt-in re-probe (host.reprobe_idle_controllers) that applies the hw queue cap without a
 * reboot, with the real hvtuned binary on the Azure VM and a test that plays the kernel's
 * driver core: it happens exactly when every disk of the controller is unused, each kind of
 * use refuses it, it is off by default and under --once, and one a crash cut off between
 * unbind and bind is resumed at the next start. */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "testutil.h"
#include "uevent.h"

/* The kernel's driver core for hv_storvsc, played by a thread of the test: a write of a
 * controller's name to unbind removes its SCSI host and everything below, a write to bind
 * probes it again with the queues the fragment has; the write returns when that is done
 * (tests/emulate/sysfs-kernel.c waits for our answer). The uevents reach the daemon's
 * monitor in the kernel's order, removes then adds: the removes sent once the unbind is
 * answered, the adds by umockdev as the fragment's devices appear. The daemon reads none of
 * them until bind returns; its socket filter keeps only disks, LUNs and SCSI hosts, which
 * for this two-LUN controller is 10 datagrams, within the 10 + 1 a unix socket queues. */
struct kernel {
        UMockdevTestbed *tb;
        const char *fragment;    /* the host as a probe under the cap makes it */
        char *dir;               /* the driver's directory in the testbed */
        int inotify;
        int stop_pipe[2];
        GThread *thread;
        GPtrArray *removed;      /* struct uevent_device, children first */
        GPtrArray *added;        /* struct uevent_device, parents first */
        char *requests;          /* "unbind NAME\nbind NAME\n" as received */
        GMutex lock;
};

/* Every device directory below dir (one with a uevent file), not following links. */
static void collect_devices(const char *dir, GPtrArray *out) {
        GDir *d = g_dir_open(dir, 0, NULL);
        const char *name;
        char *uevent = g_build_filename(dir, "uevent", NULL);

        if (g_file_test(uevent, G_FILE_TEST_EXISTS))
                g_ptr_array_add(out, g_strdup(dir));
        g_free(uevent);
        while (d && (name = g_dir_read_name(d))) {
                char *sub = g_build_filename(dir, name, NULL);

                if (g_file_test(sub, G_FILE_TEST_IS_DIR) && !g_file_test(sub, G_FILE_TEST_IS_SYMLINK))
                        collect_devices(sub, out);
                g_free(sub);
        }
        if (d)
                g_dir_close(d);
}

static int longest_first(gconstpointer a, gconstpointer b) {
        return (int) strlen(*(char *const *) b) - (int) strlen(*(char *const *) a);
}

/* The devices of the host directories below the controller, as "/sys/..." paths, deepest
 * first. */
static GPtrArray *host_devices(const char *controller_dir) {
        GPtrArray *all = g_ptr_array_new_with_free_func(g_free), *ret = g_ptr_array_new_with_free_func(g_free);
        GDir *d = g_dir_open(controller_dir, 0, NULL);
        const char *name, *root = getenv("UMOCKDEV_DIR");

        while (d && (name = g_dir_read_name(d)))
                if (g_str_has_prefix(name, "host")) {
                        char *sub = g_build_filename(controller_dir, name, NULL);

                        collect_devices(sub, all);
                        g_free(sub);
                }
        if (d)
                g_dir_close(d);
        g_ptr_array_sort(all, longest_first);
        for (size_t i = 0; i < all->len; i++)
                g_ptr_array_add(ret, g_strdup((char *) all->pdata[i] + strlen(root)));
        g_ptr_array_unref(all);
        return ret;
}

/* Whether hvtuned listens for events of this device (disks, LUNs, SCSI hosts). */
static bool wanted_event(const struct uevent_device *u) {
        return (strcmp(u->subsystem, "block") == 0 && strcmp(u->devtype, "disk") == 0) ||
               (strcmp(u->subsystem, "scsi") == 0 && strcmp(u->devtype, "scsi_device") == 0) ||
               strcmp(u->subsystem, "scsi_host") == 0;
}

static void capture_into(GPtrArray *list, const char *syspath) {
        struct uevent_device *u = g_new0(struct uevent_device, 1);

        uevent_capture(syspath, u);
        if (wanted_event(u))
                g_ptr_array_add(list, u);
        else
                g_free(u);
}

static void kernel_answer(struct kernel *k, const char *what, int error) {
        char *req = g_build_filename(k->dir, what, NULL), *done = g_strconcat(req, ".done", NULL);
        char *text = g_strdup_printf("%d\n", error);

        ck_assert(g_file_set_contents(req, "", 0, NULL));  /* consumed */
        ck_assert(g_file_set_contents(done, text, -1, NULL));
        g_free(text);
        g_free(done);
        g_free(req);
}

static char *controller_dir(const char *name) {
        char *link = g_build_filename(getenv("UMOCKDEV_DIR"), "sys", "bus", "vmbus", "devices", name, NULL);
        char *real = realpath(link, NULL);

        g_free(link);
        return real;
}

/* umockdev leaves some links of removed devices behind (/sys/block/sdc, ...): sysfs would
 * not, and a device added again under the name could not be linked. */
static void remove_dangling_links(const char *dir, int depth) {
        GDir *d = g_dir_open(dir, 0, NULL);
        const char *name;

        while (d && (name = g_dir_read_name(d))) {
                char *sub = g_build_filename(dir, name, NULL);

                if (g_file_test(sub, G_FILE_TEST_IS_SYMLINK) && !g_file_test(sub, G_FILE_TEST_EXISTS))
                        (void) unlink(sub);
                else if (depth > 0 && g_file_test(sub, G_FILE_TEST_IS_DIR) && !g_file_test(sub, G_FILE_TEST_IS_SYMLINK))
                        remove_dangling_links(sub, depth - 1);
                g_free(sub);
        }
        if (d)
                g_dir_close(d);
}

static void remove_stale_links(void) {
        remove_dangling_links(testbed_sys_path("block"), 0);
        remove_dangling_links(testbed_sys_path("class"), 1);
        remove_dangling_links(testbed_sys_path("dev"), 1);
        remove_dangling_links(testbed_sys_path("bus"), 2);
}

static int kernel_unbind(struct kernel *k, const char *name) {
        char *dir = controller_dir(name), *driver;
        GPtrArray *devs;

        if (!dir)
                return ENODEV;
        driver = g_build_filename(dir, "driver", NULL);
        if (!g_file_test(driver, G_FILE_TEST_IS_SYMLINK)) {
                g_free(driver);
                free(dir);
                return ENODEV;  /* not bound to this driver */
        }
        devs = host_devices(dir);
        for (size_t i = 0; i < devs->len; i++)
                capture_into(k->removed, devs->pdata[i]);
        for (size_t i = 0; i < devs->len; i++) {
                umockdev_testbed_remove_device(k->tb, devs->pdata[i]);
        }
        remove_stale_links();
        ck_assert_int_eq(unlink(driver), 0);
        g_ptr_array_unref(devs);
        g_free(driver);
        free(dir);
        return 0;
}

static int kernel_bind(struct kernel *k, const char *name) {
        char *dir = controller_dir(name), *driver, *target;

        if (!dir)
                return ENODEV;
        driver = g_build_filename(dir, "driver", NULL);
        if (g_file_test(driver, G_FILE_TEST_IS_SYMLINK)) {
                g_free(driver);
                free(dir);
                return EBUSY;  /* already bound */
        }
        /* Relative to the controller's /sys/devices/... directory, as mkvm.py links it. */
        target = g_strconcat("", NULL);
        for (const char *p = dir + strlen(getenv("UMOCKDEV_DIR")) + strlen("/sys"); *p; p++)
                if (*p == '/') {
                        char *t = g_strconcat(target, "../", NULL);

                        g_free(target);
                        target = t;
                }
        {
                char *t = g_strconcat(target, "bus/vmbus/drivers/hv_storvsc", NULL);

                g_free(target);
                target = t;
        }
        ck_assert_int_eq(symlink(target, driver), 0);
        /* The devices come back, and udevd passes on the adds hvtuned listens for, parents
         * first, once answered (kernel_request); umockdev's own non-blocking adds would
         * overflow hvtuned's queue. */
        uevent_monitors_hide();
        testbed_add(k->tb, k->fragment);
        uevent_monitors_show();
        {
                GPtrArray *devs = host_devices(dir);

                for (size_t i = devs->len; i-- > 0;)
                        capture_into(k->added, devs->pdata[i]);
                g_ptr_array_unref(devs);
        }
        g_free(target);
        g_free(driver);
        free(dir);
        return 0;
}

/* One request in the file named what: acts, answers, and after an unbind sends the removes. */
static void kernel_request(struct kernel *k, const char *what) {
        char *path = g_build_filename(k->dir, what, NULL), *text = NULL;
        int error;

        if (!g_file_get_contents(path, &text, NULL, NULL) || !*g_strstrip(text)) {
                g_free(text);
                g_free(path);
                return;
        }
        error = strcmp(what, "unbind") == 0 ? kernel_unbind(k, text) : kernel_bind(k, text);
        g_mutex_lock(&k->lock);
        {
                char *r = g_strdup_printf("%s%s %s\n", k->requests, what, text);

                g_free(k->requests);
                k->requests = r;
        }
        g_mutex_unlock(&k->lock);
        kernel_answer(k, what, error);
        for (size_t i = 0; i < k->removed->len; i++)
                uevent_send_captured(k->removed->pdata[i], "remove");
        g_ptr_array_set_size(k->removed, 0);
        for (size_t i = 0; i < k->added->len; i++)
                uevent_send_captured(k->added->pdata[i], "add");
        g_ptr_array_set_size(k->added, 0);
        g_free(text);
        g_free(path);
}

static gpointer kernel_main(gpointer data) {
        struct kernel *k = data;
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

        for (;;) {
                struct pollfd p[2] = { { k->inotify, POLLIN, 0 }, { k->stop_pipe[0], POLLIN, 0 } };
                ssize_t len;

                if (poll(p, 2, -1) < 0 || p[1].revents)
                        return NULL;
                len = read(k->inotify, buf, sizeof(buf));
                for (char *e = buf; len > 0 && e < buf + len;) {
                        struct inotify_event *ev = (struct inotify_event *) e;

                        if (ev->len && (strcmp(ev->name, "bind") == 0 || strcmp(ev->name, "unbind") == 0))
                                kernel_request(k, ev->name);
                        e += sizeof(*ev) + ev->len;
                }
        }
}

static void kernel_start(struct kernel *k, UMockdevTestbed *tb, const char *fragment) {
        *k = (struct kernel) { .tb = tb, .fragment = fragment };
        k->dir = testbed_sys_path("bus/vmbus/drivers/hv_storvsc");
        k->removed = g_ptr_array_new_with_free_func(g_free);
        k->added = g_ptr_array_new_with_free_func(g_free);
        k->requests = g_strdup("");
        g_mutex_init(&k->lock);
        k->inotify = inotify_init1(IN_CLOEXEC);
        ck_assert_int_ge(k->inotify, 0);
        ck_assert_int_ge(inotify_add_watch(k->inotify, k->dir, IN_MODIFY), 0);
        ck_assert_int_eq(pipe(k->stop_pipe), 0);
        k->thread = g_thread_new("kernel", kernel_main, k);
}

/* What the driver was asked, in order. */
static char *kernel_stop(struct kernel *k) {
        char *requests;

        ck_assert_int_eq(write(k->stop_pipe[1], "x", 1), 1);
        g_thread_join(k->thread);
        close(k->inotify);
        close(k->stop_pipe[0]);
        close(k->stop_pipe[1]);
        g_ptr_array_unref(k->removed);
        g_ptr_array_unref(k->added);
        requests = k->requests;
        g_mutex_clear(&k->lock);
        return hv_keep(requests);
}

/* Every disk and partition has holders/ in sysfs; a record file cannot make an empty one. */
static void add_holders(void) {
        GDir *d = g_dir_open(testbed_sys_path("block"), 0, NULL);
        const char *name;

        while ((name = g_dir_read_name(d))) {
                char *holders = g_build_filename(testbed_sys_path("block"), name, "holders", NULL);

                ck_assert_int_eq(g_mkdir_with_parents(holders, 0755), 0);
                g_free(holders);
        }
        g_dir_close(d);
}

#define REPROBE_CONFIG "queue = { scheduler = \"none\"; };\nhost = { reprobe_idle_controllers = true; };\n"

/* Starts the service on the Azure VM with reprobe on, waits for a STATUS with wait_for and
 * stops it; returns its stderr, and in *requests what the driver was asked. */
static char *reprobe_run(UMockdevTestbed *tb, const char *wait_for, char **requests) {
        char *config = config_write(REPROBE_CONFIG);
        const char *args[] = { "-c", config, NULL };
        struct kernel k;
        struct hv_run run;
        char *err;

        kernel_start(&k, tb, "azure-gen2-host1-cap4.umockdev");
        hvtuned_start(&run, args);
        if (wait_for)
                hvtuned_wait_notify(&run, wait_for);
        err = hvtuned_stop(&run);
        *requests = kernel_stop(&k);
        unlink(config);
        return err;
}

/* host0 holds the root filesystem; host1's disks are idle: host1 alone is re-probed, comes
 * back with 4 queues, and its disks, new devices, are tuned again. */
START_TEST(test_reprobe_idle) {
        UMockdevTestbed *tb;
        char *err, *requests;

        host_files(AZURE_CMDLINE, MOUNTINFO_AZURE, SWAPS_HEADER, NULL);
        tb = testbed_load("azure-gen2");
        add_holders();
        err = reprobe_run(tb, "4 storvsc disks on 2 controllers: 4 tuned, 0 failed; hw queues: 1 controller over "
                          "cap 4, ~85 MiB reclaimable at next boot", &requests);
        ck_assert_str_eq(requests, "unbind f8b3781b-1e82-4818-a1c3-63d806ec15bb\n"
                                   "bind f8b3781b-1e82-4818-a1c3-63d806ec15bb\n");
        assert_contains(err, "host0 (controller " SCSI0 "): not re-probing: sda1 holds the root filesystem\n");
        assert_contains(err, "host1 (controller " SCSI1 ") re-probed: 32 -> 4 hw queues, ~84.5 MiB reclaimed\n");
        assert_contains(err, "sdc: removed Hyper-V scsi disk 1:0:0:0");
        assert_contains(err, "sdc: found Hyper-V scsi disk 1:0:0:0");
        assert_contains(err, "host1 (controller " SCSI1 ", scsi): 4 hw queues x 2534 requests, ~12.1 MiB "
                        "preallocated; within the cap of 4\n");
        /* The new sdc came with bfq again (the distro rule): tuned like a hot-added disk, its
         * own original recorded, and put back on stop. */
        ck_assert_ptr_nonnull(strstr(strstr(err, "re-probed: 32 -> 4"), "sdc queue/scheduler: bfq -> none (applied)\n"));
        assert_contains(err, "sdc queue/scheduler: none -> bfq (restored)\n");
        ck_assert_str_eq(testbed_value("sdc", "queue/scheduler"), "bfq");
        g_object_unref(tb);
}
END_TEST

static const char *const refusals[][4] = {
        /* mountinfo addition, swaps addition, busy, the reason */
        { "40 25 8:32 / /data rw - xfs /dev/sdc rw\n", "", NULL, "sdc is mounted on /data" },
        { "", "/dev/sdd                                partition\t4194300\t\t0\t\t-2\n", NULL,
          "sdd is in use as swap" },
        { "", "", "sdd\n", "sdd is in use: someone else has it open exclusively" },
        { "", "", NULL, "sdc is held by dm-1" },
        { "", "", NULL, "in doubt: cannot read the holders of sdd" },
};

/* Each kind of use of one of host1's disks keeps host1 as it is. */
START_TEST(test_reprobe_refused) {
        const char *const *v = refusals[_i];
        char *mountinfo = g_strconcat(MOUNTINFO_AZURE, v[0], NULL), *swaps = g_strconcat(SWAPS_HEADER, v[1], NULL);
        UMockdevTestbed *tb;
        char *err, *requests, *expect;

        host_files(AZURE_CMDLINE, mountinfo, swaps, v[2]);
        tb = testbed_load("azure-gen2");
        add_holders();
        if (strstr(v[3], "held by"))
                ck_assert_int_eq(symlink("../../../../../../../../../../../virtual/block/dm-1",
                                         testbed_sys_path("block/sdc/holders/dm-1")), 0);
        if (strstr(v[3], "holders of sdd"))
                ck_assert_int_eq(rmdir(testbed_sys_path("block/sdd/holders")), 0);
        err = reprobe_run(tb, NULL, &requests);
        ck_assert_str_eq(requests, "");
        expect = g_strdup_printf("host1 (controller " SCSI1 "): not re-probing: %s", v[3]);
        assert_contains(err, expect);
        ck_assert_str_eq(testbed_sys_read("class/scsi_host/host1/nr_hw_queues"), "32");
        g_free(expect);
        g_free(mountinfo);
        g_free(swaps);
        g_object_unref(tb);
}
END_TEST

/* Off by default, and never under --once. */
START_TEST(test_reprobe_opt_in) {
        char *config = config_write("queue = { scheduler = \"none\"; };\n");
        const char *args[] = { "-c", config, NULL };
        UMockdevTestbed *tb;
        struct hv_run run;
        struct kernel k;
        char *err;

        host_files(AZURE_CMDLINE, MOUNTINFO_AZURE, SWAPS_HEADER, NULL);
        tb = testbed_load("azure-gen2");
        add_holders();
        kernel_start(&k, tb, "azure-gen2-host1-cap4.umockdev");
        hvtuned_start(&run, args);
        err = hvtuned_stop(&run);
        assert_contains(err, "host1 (controller " SCSI1 ", scsi): 32 hw queues");
        ck_assert_ptr_null(strstr(err, "ot re-probing"));
        ck_assert_ptr_null(strstr(err, "re-probed:"));
        ck_assert_int_eq(hvtuned_run_once(REPROBE_CONFIG, &err), 0);
        assert_contains(err, "Not re-probing controllers under --once or --dry-run");
        ck_assert_str_eq(kernel_stop(&k), "");
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* A re-probe cut off between unbind and bind (a crash) left a record: the next start binds
 * the controller again, its disks come back and are tuned. */
START_TEST(test_reprobe_resumed) {
        char *config = config_write("queue = { scheduler = \"none\"; };\n");
        const char *args[] = { "-c", config, NULL };
        char *pending = g_build_filename(runtime_dir(), ".rebind", NULL), *err;
        UMockdevTestbed *tb;
        struct hv_run run;
        struct kernel k;

        host_files(AZURE_CMDLINE, MOUNTINFO_AZURE, SWAPS_HEADER, NULL);
        tb = testbed_load("azure-gen2");
        kernel_start(&k, tb, "azure-gen2-host1-cap4.umockdev");
        ck_assert_int_eq(kernel_unbind(&k, "f8b3781b-1e82-4818-a1c3-63d806ec15bb"), 0);
        g_ptr_array_set_size(k.removed, 0);  /* that hvtuned is gone: no events for it */
        ck_assert(g_file_set_contents(pending, "f8b3781b-1e82-4818-a1c3-63d806ec15bb", -1, NULL));

        hvtuned_start(&run, args);
        hvtuned_wait_notify(&run, "STATUS=4 storvsc disks on 2 controllers: 4 tuned, 0 failed; hw queues: 1 controller");
        err = hvtuned_stop(&run);
        ck_assert_str_eq(kernel_stop(&k), "bind f8b3781b-1e82-4818-a1c3-63d806ec15bb\n");
        assert_contains(err, "Controller f8b3781b-1e82-4818-a1c3-63d806ec15bb was left unbound by an interrupted "
                        "re-probe: bound again\n");
        assert_contains(err, "sdc queue/scheduler: bfq -> none (applied)\n");
        ck_assert(!g_file_test(pending, G_FILE_TEST_EXISTS));
        g_free(pending);
        unlink(config);
        g_object_unref(tb);
}
END_TEST

int main(void) {
        Suite *s = suite_create("reprobe");
        TCase *reprobe = tcase_create("reprobe");

        tcase_set_timeout(reprobe, 60);
        tcase_add_test(reprobe, test_reprobe_idle);
        tcase_add_loop_test(reprobe, test_reprobe_refused, 0, G_N_ELEMENTS(refusals));
        tcase_add_test(reprobe, test_reprobe_opt_in);
        tcase_add_test(reprobe, test_reprobe_resumed);
        suite_add_tcase(s, reprobe);
        return test_run(s);
}
