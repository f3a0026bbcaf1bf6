/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The hw queue cap with the real hvtuned binary on VMs of 4, 16, 32 and 64 vCPUs, a Gen1
 * VM with IDE controllers, VMs already capped from the kernel command line, and a module
 * parameter that refuses the write: the cap is written when it differs, never above the
 * present CPUs, reported like an attribute, restored on stop; every controller is reported
 * with the estimate of storvsc.md; the boot-time fix is the right one. Then the opt-in
 * re-probe, against a test that plays the kernel's driver core: it happens exactly when
 * every disk of the controller is unused, and each kind of use refuses it. */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "testutil.h"
#include "uevent.h"

#define SCSI0 "{f8b3781a-1e82-4818-a1c3-63d806ec15bb}"
#define SCSI1 "{f8b3781b-1e82-4818-a1c3-63d806ec15bb}"
#define PARAM "module/hv_storvsc/parameters/storvsc_max_hw_queues"
#define AZURE_CMDLINE "BOOT_IMAGE=/boot/vmlinuz-6.8.0-1021-azure root=PARTUUID=3e1a7c52-01 ro " \
                      "console=tty1 console=ttyS0 earlyprintk=ttyS0 panic=-1\n"
#define MOUNTINFO_AZURE \
        "22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n" \
        "25 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,discard\n" \
        "30 25 8:15 / /boot/efi rw,relatime shared:3 - vfat /dev/sda15 rw\n" \
        "31 25 8:17 / /mnt rw,relatime shared:4 - ext4 /dev/sdb1 rw\n"
#define SWAPS_HEADER "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"

/* The files of HVTUNED_TEST_HOST (tests/emulate/host-files.c): what /proc says. */
static void host_files(const char *cmdline, const char *mountinfo, const char *swaps, const char *busy) {
        static char dir[64];
        const char *const names[] = { "cmdline", "mountinfo", "swaps", "busy" };
        const char *const texts[] = { cmdline, mountinfo, swaps, busy };

        if (!*dir) {
                snprintf(dir, sizeof(dir), "/tmp/hvtuned-host.XXXXXX");
                ck_assert_ptr_nonnull(mkdtemp(dir));
                setenv("HVTUNED_TEST_HOST", dir, 1);
        }
        for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
                char *path = g_build_filename(dir, names[i], NULL);

                if (texts[i])
                        ck_assert(g_file_set_contents(path, texts[i], -1, NULL));
                else
                        (void) unlink(path);
                g_free(path);
        }
}

static char *sys_path(const char *rel) {
        return hv_keep(g_build_filename(getenv("UMOCKDEV_DIR"), "sys", rel, NULL));
}

static char *read_sys(const char *rel) {
        char *text = NULL;

        ck_assert_msg(g_file_get_contents(sys_path(rel), &text, NULL, NULL), "cannot read %s", rel);
        return hv_keep(g_strchomp(text));
}

static int run_once(const char *config_text, char **err) {
        char *config = config_write(config_text);
        const char *args[] = { "--once", "-c", config, NULL };
        int r = hvtuned_run(args, err);

        unlink(config);
        return r;
}

static const char *const every_size[][6] = {
        /* testbed, param after, the line of each controller, status part */
        { "azure-gen2-4cpu", "0",
          "host0 (controller " SCSI0 ", scsi): 4 hw queues x 316 requests, ~1.6 MiB preallocated; no cap applies\n",
          "host1 (controller " SCSI1 ", scsi): 4 hw queues x 316 requests, ~1.6 MiB preallocated; no cap applies\n",
          "4 Hyper-V disks on 2 controllers: 4 tuned, 0 failed\n", NULL },
        { "azure-gen2-16cpu", "4",
          "host0 (controller " SCSI0 ", scsi): 16 hw queues x 1267 requests, ~24.2 MiB preallocated; "
          "over the cap of 4: ~6.0 MiB with 4 queues, once re-probed\n",
          "host1 (controller " SCSI1 ", scsi): 16 hw queues x 1267 requests, ~24.2 MiB preallocated; "
          "over the cap of 4: ~6.0 MiB with 4 queues, once re-probed\n",
          "4 Hyper-V disks on 2 controllers: 4 tuned, 0 failed; hw queues: 2 controllers over cap 4, "
          "~36 MiB reclaimable at next boot\n", "(~36.3 MiB reclaimable)" },
        { "azure-gen2", "4",
          "host0 (controller " SCSI0 ", scsi): 32 hw queues x 2534 requests, ~96.6 MiB preallocated; "
          "over the cap of 4: ~12.1 MiB with 4 queues, once re-probed\n",
          "host1 (controller " SCSI1 ", scsi): 32 hw queues x 2534 requests, ~96.6 MiB preallocated; "
          "over the cap of 4: ~12.1 MiB with 4 queues, once re-probed\n",
          "4 Hyper-V disks on 2 controllers: 4 tuned, 0 failed; hw queues: 2 controllers over cap 4, "
          "~169 MiB reclaimable at next boot\n", "(~169.1 MiB reclaimable)" },
        { "azure-gen2-64cpu", "4",
          "host0 (controller " SCSI0 ", scsi): 64 hw queues x 5068 requests, ~386.2 MiB preallocated; "
          "over the cap of 4: ~24.1 MiB with 4 queues, once re-probed\n",
          "host1 (controller " SCSI1 ", scsi): 64 hw queues x 5068 requests, ~386.2 MiB preallocated; "
          "over the cap of 4: ~24.1 MiB with 4 queues, once re-probed\n",
          "4 Hyper-V disks on 2 controllers: 4 tuned, 0 failed; hw queues: 2 controllers over cap 4, "
          "~724 MiB reclaimable at next boot\n", "(~724.0 MiB reclaimable)" },
};

/* The default cap on each size of the VM: 4 above 4 vCPUs, untouched at 4. */
START_TEST(test_every_size) {
        const char *const *v = every_size[_i];
        UMockdevTestbed *tb;
        char *err;

        host_files(AZURE_CMDLINE, NULL, NULL, NULL);
        tb = testbed_load(v[0]);
        ck_assert_int_eq(run_once("queue = { scheduler = \"none\"; };\n", &err), 0);
        ck_assert_str_eq(read_sys(PARAM), v[1]);
        assert_contains(err, v[2]);
        assert_contains(err, v[3]);
        assert_contains(err, v[4]);
        if (strcmp(v[1], "4") == 0) {
                assert_contains(err, "hv_storvsc parameters/storvsc_max_hw_queues: 0 -> 4 (applied)\n");
                assert_contains(err, "2 controllers probed before the cap keep their queues until re-probed ");
                assert_contains(err, v[5]);
                assert_contains(err, "; the kernel command line does not set hv_storvsc.storvsc_max_hw_queues. "
                                "To cap them from boot: put hv_storvsc.storvsc_max_hw_queues=4 on the kernel "
                                "command line, or \"options hv_storvsc storvsc_max_hw_queues=4\" in "
                                "/etc/modprobe.d/ and rebuild the initramfs\n");
        } else {
                ck_assert_ptr_null(strstr(err, "storvsc_max_hw_queues"));
                ck_assert_ptr_null(strstr(err, "hw queues:"));
        }
        g_object_unref(tb);
}
END_TEST

/* IDE controllers have one queue and are never capped; the SCSI one of the same VM is. */
START_TEST(test_gen1_ide) {
        UMockdevTestbed *tb;
        char *err;

        host_files(AZURE_CMDLINE, NULL, NULL, NULL);
        tb = testbed_load("gen1");
        ck_assert_int_eq(run_once("queue = { scheduler = \"none\"; };\n", &err), 0);
        ck_assert_str_eq(read_sys(PARAM), "4");
        assert_contains(err, "host0 (controller {00000000-0000-8899-0000-000000000000}, ide): 1 hw queue x 316 "
                        "requests, ~0.4 MiB preallocated; IDE has a single queue, never capped\n");
        assert_contains(err, "host1 (controller {00000000-0001-8899-0000-000000000000}, ide): 1 hw queue x 316 "
                        "requests, ~0.4 MiB preallocated; IDE has a single queue, never capped\n");
        assert_contains(err, "host2 (controller {5e2f0b7c-3d91-4a6e-8c4b-9f1d27a6e8b3}, scsi): 8 hw queues x 633 "
                        "requests, ~6.3 MiB preallocated; over the cap of 4: ~3.1 MiB with 4 queues, once re-probed\n");
        assert_contains(err, "1 controller probed before the cap keeps its queues until re-probed (~3.1 MiB");
        assert_contains(err, "; hw queues: 1 controller over cap 4, ~3 MiB reclaimable at next boot\n");
        g_object_unref(tb);
}
END_TEST

/* WSL caps storvsc from the command line, and builds it into the kernel. */
START_TEST(test_wsl_capped) {
        UMockdevTestbed *tb;
        char *err;

        host_files("initrd=\\initrd.img WSL_ROOT_INIT=1 panic=-1 nr_cpus=16 hv_storvsc.storvsc_max_hw_queues=4 "
                   "console=hvc0 debug pty.legacy_count=0\n", NULL, NULL, NULL);
        tb = testbed_load("wsl2");
        ck_assert_int_eq(run_once("queue = { scheduler = \"none\"; };\n", &err), 0);
        ck_assert_str_eq(read_sys(PARAM), "4");
        assert_contains(err, "hv_storvsc parameters/storvsc_max_hw_queues: 4 (unchanged)\n");
        /* WSL's 5.15: no BTF here, and no upstream-numbered release: no figure from another kernel. */
        assert_contains(err, "Unknown request layout: ");
        assert_contains(err, "host0 (controller {a3c7e9f1-52b8-4d06-9e1a-7b4c2d8f0e65}, scsi): 4 hw queues x 1267 "
                        "requests, memory unknown (unknown layout); within the cap of 4\n");
        assert_contains(err, "; hw queues: every controller within cap 4\n");
        ck_assert_ptr_null(strstr(err, "To cap them from boot"));
        g_object_unref(tb);
}
END_TEST

/* The same Azure VM booted with the cap: nothing to write, nothing to advise. */
START_TEST(test_azure_capped) {
        UMockdevTestbed *tb;
        GHashTable *before;
        char *err;

        host_files(AZURE_CMDLINE "hv_storvsc.storvsc_max_hw_queues=4\n", NULL, NULL, NULL);
        tb = testbed_load("azure-gen2-capped");
        before = snapshot_take();
        ck_assert_int_eq(run_once("queue = { read_ahead_kb = 128; };\n", &err), 0);
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()), "");
        ck_assert_str_eq(read_sys(PARAM), "4");
        assert_contains(err, "hv_storvsc parameters/storvsc_max_hw_queues: 4 (unchanged)\n");
        assert_contains(err, "host1 (controller " SCSI1 ", scsi): 4 hw queues x 2534 requests, ~12.1 MiB "
                        "preallocated; within the cap of 4\n");
        ck_assert_ptr_null(strstr(err, "To cap them from boot"));
        g_object_unref(tb);
}
END_TEST

/* A command-line value the kernel ignores (more than the CPUs) is named in the advice. */
START_TEST(test_cmdline_too_large) {
        UMockdevTestbed *tb;
        char *err;

        host_files(AZURE_CMDLINE "hv_storvsc.storvsc_max_hw_queues=64\n", NULL, NULL, NULL);
        tb = testbed_load("azure-gen2");
        ck_assert_int_eq(run_once("queue = { scheduler = \"none\"; };\n", &err), 0);
        assert_contains(err, "; the kernel command line has hv_storvsc.storvsc_max_hw_queues=64, more than the "
                        "present CPUs, which the kernel ignores. To cap them from boot: put "
                        "hv_storvsc.storvsc_max_hw_queues=4 on the kernel command line");
        g_object_unref(tb);
}
END_TEST

/* The boot step for the machine in front of it: each platform's files, and only those, in
 * HVTUNED_TEST_HOST (tests/emulate/host-files.c). (unit/bootadvice has every combination.) */
static const char *const platforms[][4] = {
        { "osrelease", "5.15.167.4-microsoft-standard-WSL2\n", "wsl",
          "this is WSL, whose kernel command line Windows sets: under [wsl2] in the .wslconfig of the "
          "Windows user's profile folder (%UserProfile%) put kernelCommandLine = hv_storvsc.storvsc_max_hw_queues=4" },
        { "kernel-cmdline", "root=/dev/sda1\n", "kernel-cmdline",
          "add hv_storvsc.storvsc_max_hw_queues=4 to /etc/kernel/cmdline and run kernel-install add" },
        { "grubby", "", "grubby", "grubby --update-kernel=ALL --args=hv_storvsc.storvsc_max_hw_queues=4" },
        { "update-initramfs", "", "modprobe",
          "put \"options hv_storvsc storvsc_max_hw_queues=4\" in /etc/modprobe.d/hvtuned.conf and run update-initramfs -u" },
};

START_TEST(test_boot_advice_per_platform) {
        const char *const *p = platforms[_i];
        char *file, *err;
        UMockdevTestbed *tb;

        host_files(AZURE_CMDLINE, NULL, NULL, NULL);
        file = g_build_filename(getenv("HVTUNED_TEST_HOST"), p[0], NULL);
        ck_assert(g_file_set_contents(file, p[1], -1, NULL));
        tb = testbed_load("azure-gen2");
        ck_assert_int_eq(run_once("queue = { scheduler = \"none\"; };\n", &err), 0);
        assert_contains(err, hv_keep(g_strconcat("To cap them from boot: ", p[3], NULL)));
        ck_assert_int_eq(unlink(file), 0);
        g_free(file);
        g_object_unref(tb);
}
END_TEST

/* A cap from the configuration, never above the present CPUs; 0 never touches. */
START_TEST(test_configured_cap) {
        UMockdevTestbed *tb;
        GHashTable *before;
        char *err;

        host_files(AZURE_CMDLINE, NULL, NULL, NULL);
        tb = testbed_load("azure-gen2");
        ck_assert_int_eq(run_once("host = { max_hw_queues = 8; };\n", &err), 0);
        ck_assert_str_eq(read_sys(PARAM), "8");
        assert_contains(err, "hv_storvsc parameters/storvsc_max_hw_queues: 0 -> 8 (applied)\n");
        assert_contains(err, "over the cap of 8: ~24.2 MiB with 8 queues, once re-probed\n");
        ck_assert_ptr_null(strstr(err, "mq-deadline (about 226 KiB"));
        /* A cap of 1: new disks get mq-deadline from the kernel, and hvtuned says what keeps it off. */
        ck_assert_int_eq(run_once("host = { max_hw_queues = 1; };\n", &err), 0);
        ck_assert_str_eq(read_sys(PARAM), "1");
        assert_contains(err, "With a cap of 1, each disk on a controller probed from now on has a single hw queue, "
                        "and the kernel gives such a disk mq-deadline (about 226 KiB more per disk than none, "
                        "measured on 6.1)");

        /* 64 on 32 CPUs would make the kernel fall back to one queue per CPU: 32 is asked
         * for, which is what the 0 there already gives. */
        ck_assert(g_file_set_contents(sys_path(PARAM), "0\n", -1, NULL));
        ck_assert_int_eq(run_once("host = { max_hw_queues = 64; };\n", &err), 0);
        ck_assert_str_eq(read_sys(PARAM), "0");
        assert_contains(err, "hv_storvsc parameters/storvsc_max_hw_queues: 0 (unchanged: the kernel keeps it for 32)\n");
        assert_contains(err, "32 hw queues x 2534 requests, ~96.6 MiB preallocated; within the cap of 32\n");

        before = snapshot_take();
        ck_assert_int_eq(run_once("host = { max_hw_queues = 0; };\n", &err), 0);
        ck_assert_str_eq(read_sys(PARAM), "0");
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()), "");
        /* The cap is dropped: the original recorded by the first run is what is there. */
        assert_contains(err, "hv_storvsc parameters/storvsc_max_hw_queues: 0 (already the original)\n");
        assert_contains(err, "~96.6 MiB preallocated; no cap applies\n");

        /* With the record gone, 0 leaves the parameter out entirely. */
        ck_assert_int_eq(run_once("host = { max_hw_queues = 0; };\n", &err), 0);
        ck_assert_ptr_null(strstr(err, "storvsc_max_hw_queues"));
        g_object_unref(tb);
}
END_TEST

/* A parameter that refuses the write (sysfs gives EACCES for a file without write bits,
 * even to root) fails that one result: the disks are still tuned, and --once says so. */
START_TEST(test_param_refuses) {
        UMockdevTestbed *tb;
        char *err;

        host_files(AZURE_CMDLINE, NULL, NULL, NULL);
        tb = testbed_load("azure-gen2");
        ck_assert_int_eq(chmod(sys_path(PARAM), 0444), 0);
        ck_assert_int_eq(run_once("queue = { scheduler = \"none\"; };\n", &err), 2);
        ck_assert_str_eq(read_sys(PARAM), "0");
        assert_contains(err, "hv_storvsc parameters/storvsc_max_hw_queues: 0 -> 4 (failed: Permission denied)\n");
        ck_assert_str_eq(testbed_value("sdc", "queue/scheduler"), "none");
        assert_contains(err, "4 Hyper-V disks on 2 controllers: 4 tuned, 0 failed; hw queues: 2 controllers over cap 4");

        /* A kernel before 5.13 has no such parameter: unsupported, not failed. */
        ck_assert_int_eq(unlink(sys_path(PARAM)), 0);
        ck_assert_int_eq(run_once("queue = { scheduler = \"none\"; };\n", &err), 0);
        assert_contains(err, "hv_storvsc parameters/storvsc_max_hw_queues: 4 (unsupported: this kernel predates "
                        "storvsc_max_hw_queues, which came in 5.13");
        g_object_unref(tb);
}
END_TEST

/* The driver's record of its original is kept as a disk's is (daemon/originals.c): one that
 * cannot be read (a directory where the file should be) may hold the true original, so the
 * parameter is not written, and that is said; the disks are still tuned. Once it can be read,
 * the original in it is the one kept. */
START_TEST(test_param_record_unreadable) {
        g_autofree char *record = g_build_filename(runtime_dir(), "hv_storvsc", NULL);
        g_autofree char *inside = g_build_filename(record, "x", NULL), *kept = NULL;
        UMockdevTestbed *tb;
        char *err;

        host_files(AZURE_CMDLINE, NULL, NULL, NULL);
        tb = testbed_load("azure-gen2");
        ck_assert_int_eq(g_mkdir_with_parents(inside, 0755), 0);
        ck_assert_int_eq(run_once("queue = { scheduler = \"none\"; };\n", &err), 2);
        assert_contains(err, "hv_storvsc: cannot read the record of its original value (Is a directory): "
                        "not writing attributes that have none recorded\n");
        ck_assert_str_eq(read_sys(PARAM), "0");
        ck_assert_str_eq(testbed_value("sdc", "queue/scheduler"), "none");

        ck_assert_int_eq(rmdir(inside), 0);
        ck_assert_int_eq(rmdir(record), 0);
        ck_assert(g_file_set_contents(record, "# hvtuned: values before hvtuned first wrote them\n"
                                      "syspath=/sys/module/hv_storvsc\ndev=\ndiskseq=0\n"
                                      "parameters/storvsc_max_hw_queues=2\n", -1, NULL));
        ck_assert_int_eq(run_once("queue = { scheduler = \"none\"; };\n", &err), 0);
        assert_contains(err, "hv_storvsc parameters/storvsc_max_hw_queues: 0 -> 4 (applied)\n");
        ck_assert(g_file_get_contents(record, &kept, NULL, NULL));
        assert_contains(kept, "parameters/storvsc_max_hw_queues=2\n");
        g_object_unref(tb);
}
END_TEST

#define BULLSEYE0 "{b1e5a11e-1e82-4818-a1c3-63d806ec15bb}"
#define BULLSEYE1 "{b1e5a11f-1e82-4818-a1c3-63d806ec15bb}"
#define NO_CAP_WHY "hv_storvsc parameters/storvsc_max_hw_queues: 4 (unsupported: this kernel predates " \
                   "storvsc_max_hw_queues, which came in 5.13: every SCSI controller has one hw queue per present " \
                   "CPU, and only a kernel update can cap them (no module option or kernel command line does))\n"

/* Debian 11's 5.10 on 8 vCPUs: storvsc has no storvsc_max_hw_queues. The service says so
 * once, with why, through a reload; advises no boot step (none exists); its metrics say the
 * cap is unsupported and claim no memory to win back. */
START_TEST(test_no_cap) {
        char dir[] = "/tmp/hvtuned-metrics.XXXXXX", *prom, *text, *config, *err, *m, *osrelease;
        UMockdevTestbed *tb;
        const char *args[3];
        struct hv_run run;

        host_files("BOOT_IMAGE=/boot/vmlinuz-5.10.0-46-cloud-amd64 root=PARTUUID=3e1a7c52-01 ro console=ttyS0\n",
                   NULL, NULL, NULL);
        /* Debian 11's release: its vmlinux BTF has struct request, the table row the rest. */
        osrelease = g_build_filename(getenv("HVTUNED_TEST_HOST"), "osrelease", NULL);
        ck_assert(g_file_set_contents(osrelease, "5.10.0-46-cloud-amd64\n", -1, NULL));
        tb = testbed_load("bullseye");
        ck_assert_ptr_nonnull(mkdtemp(dir));
        prom = hv_keep(g_build_filename(dir, "hvtuned.prom", NULL));
        text = g_strdup_printf("queue = { scheduler = \"none\"; };\nmetrics_file = \"%s\";\n", prom);
        config = config_write(text);
        g_free(text);
        setenv("HVTUNED_TEST_METRICS_DIR", dir, 1);
        args[0] = "-c", args[1] = config, args[2] = NULL;
        hvtuned_start(&run, args);
        ck_assert_str_eq(run.status, "2 Hyper-V disks on 2 controllers: 2 tuned, 0 failed; "
                         "hw queues: 2 controllers over cap 4, which this kernel cannot apply");
        m = hvtuned_wait_metrics(prom, "hvtuned_hw_queue_cap_supported 0\n");
        assert_contains(m, "hvtuned_hw_queue_cap 0\n");
        assert_contains(m, "hvtuned_controller_hw_queues{host=\"host0\",controller=\"" BULLSEYE0 "\",kind=\"scsi\"} 8\n");
        assert_contains(m, "hvtuned_controller_can_queue{host=\"host1\",controller=\"" BULLSEYE1 "\",kind=\"scsi\"} 664\n");
        for (const char *const *c = (const char *const[]) { "host0\",controller=\"" BULLSEYE0,
                                                             "host1\",controller=\"" BULLSEYE1, NULL }; *c; c++) {
                char *now = g_strdup_printf("hvtuned_controller_preallocated_bytes{host=\"%s\",kind=\"scsi\"} ", *c);
                char *then = g_strdup_printf("hvtuned_controller_capped_preallocated_bytes{host=\"%s\",kind=\"scsi\"} ", *c);
                const char *a = strstr(m, now), *b = strstr(m, then);

                ck_assert_msg(a && b, "no bytes of %s in:\n%s", *c, m);
                a += strlen(now), b += strlen(then);
                /* Nothing to win back: what it holds under "the cap" is what it holds. */
                ck_assert_int_eq(strtoull(a, NULL, 10), strtoull(b, NULL, 10));
                ck_assert_int_gt(strtoull(a, NULL, 10), 0);
                g_free(now);
                g_free(then);
        }
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "READY=1");
        ck_assert_str_eq(run.status, "2 Hyper-V disks on 2 controllers: 2 tuned, 0 failed; "
                         "hw queues: 2 controllers over cap 4, which this kernel cannot apply");
        err = hvtuned_stop(&run);
        ck_assert_uint_eq(hv_count(err, NO_CAP_WHY), 1);
        ck_assert_uint_eq(hv_count(err, "storvsc_max_hw_queues"), 2);  /* that line only */
        /* 1152 bytes a request (5.10's layout), 8 x 664 of them: more than 6.1's would be (~6.4 MiB). */
        assert_contains(err, "Request layout (table 5.10): struct request 280 + scsi_cmnd 392 + storvsc_cmd_request "
                        "416 + 2 x scatterlist 32, 1152 bytes a preallocated request\n");
        assert_contains(err, "host0 (controller " BULLSEYE0 ", scsi): 8 hw queues x 664 requests, ~6.8 MiB "
                        "preallocated; over the cap of 4, which this kernel's storvsc cannot apply\n");
        ck_assert_ptr_null(strstr(err, "To cap them from boot"));
        ck_assert_ptr_null(strstr(err, "reclaimable"));
        unsetenv("HVTUNED_TEST_METRICS_DIR");
        (void) unlink(prom);
        (void) rmdir(dir);
        (void) unlink(osrelease);
        g_free(osrelease);
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* The service: STATUS carries the hw queue part, a reload that drops the cap puts the
 * original back, and so does stop. */
START_TEST(test_daemon_status_reload_stop) {
        UMockdevTestbed *tb;
        char *config, *err;
        const char *args[3];
        struct hv_run run;

        host_files(AZURE_CMDLINE, NULL, NULL, NULL);
        tb = testbed_load("azure-gen2");
        config = config_write("queue = { scheduler = \"none\"; };\n");
        args[0] = "-c", args[1] = config, args[2] = NULL;
        hvtuned_start(&run, args);
        ck_assert_str_eq(run.status, "4 Hyper-V disks on 2 controllers: 4 tuned, 0 failed; "
                         "hw queues: 2 controllers over cap 4, ~169 MiB reclaimable at next boot");
        ck_assert_str_eq(read_sys(PARAM), "4");

        ck_assert(g_file_set_contents(config, "queue = { scheduler = \"none\"; };\nhost = { max_hw_queues = 0; };\n",
                                      -1, NULL));
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "READY=1");
        ck_assert_str_eq(read_sys(PARAM), "0");
        ck_assert_str_eq(run.status, "4 Hyper-V disks on 2 controllers: 4 tuned, 0 failed");

        ck_assert(g_file_set_contents(config, "queue = { scheduler = \"none\"; };\n", -1, NULL));
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "READY=1");
        ck_assert_str_eq(read_sys(PARAM), "4");

        err = hvtuned_stop(&run);
        ck_assert_str_eq(read_sys(PARAM), "0");
        assert_contains(err, "hv_storvsc parameters/storvsc_max_hw_queues: 0 -> 4 (applied)\n");
        assert_contains(err, "hv_storvsc parameters/storvsc_max_hw_queues: 4 -> 0 (restored)\n");
        g_object_unref(tb);
}
END_TEST

/* ---------------------------------------------------------------- re-probe */

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
        remove_dangling_links(sys_path("block"), 0);
        remove_dangling_links(sys_path("class"), 1);
        remove_dangling_links(sys_path("dev"), 1);
        remove_dangling_links(sys_path("bus"), 2);
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
        k->dir = sys_path("bus/vmbus/drivers/hv_storvsc");
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
        GDir *d = g_dir_open(sys_path("block"), 0, NULL);
        const char *name;

        while ((name = g_dir_read_name(d))) {
                char *holders = g_build_filename(sys_path("block"), name, "holders", NULL);

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
        err = reprobe_run(tb, "4 Hyper-V disks on 2 controllers: 4 tuned, 0 failed; hw queues: 1 controller over "
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
                                         sys_path("block/sdc/holders/dm-1")), 0);
        if (strstr(v[3], "holders of sdd"))
                ck_assert_int_eq(rmdir(sys_path("block/sdd/holders")), 0);
        err = reprobe_run(tb, NULL, &requests);
        ck_assert_str_eq(requests, "");
        expect = g_strdup_printf("host1 (controller " SCSI1 "): not re-probing: %s", v[3]);
        assert_contains(err, expect);
        ck_assert_str_eq(read_sys("class/scsi_host/host1/nr_hw_queues"), "32");
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
        ck_assert_int_eq(run_once(REPROBE_CONFIG, &err), 0);
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
        hvtuned_wait_notify(&run, "STATUS=4 Hyper-V disks on 2 controllers: 4 tuned, 0 failed; hw queues: 1 controller");
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
        Suite *s = suite_create("hwqueues");
        TCase *cap = tcase_create("cap"), *reprobe = tcase_create("reprobe");

        tcase_set_timeout(cap, 60);
        tcase_add_loop_test(cap, test_every_size, 0, G_N_ELEMENTS(every_size));
        tcase_add_test(cap, test_gen1_ide);
        tcase_add_test(cap, test_wsl_capped);
        tcase_add_test(cap, test_azure_capped);
        tcase_add_test(cap, test_cmdline_too_large);
        tcase_add_loop_test(cap, test_boot_advice_per_platform, 0, G_N_ELEMENTS(platforms));
        tcase_add_test(cap, test_configured_cap);
        tcase_add_test(cap, test_param_refuses);
        tcase_add_test(cap, test_param_record_unreadable);
        tcase_add_test(cap, test_no_cap);
        tcase_add_test(cap, test_daemon_status_reload_stop);
        suite_add_tcase(s, cap);

        tcase_set_timeout(reprobe, 60);
        tcase_add_test(reprobe, test_reprobe_idle);
        tcase_add_loop_test(reprobe, test_reprobe_refused, 0, G_N_ELEMENTS(refusals));
        tcase_add_test(reprobe, test_reprobe_opt_in);
        tcase_add_test(reprobe, test_reprobe_resumed);
        suite_add_tcase(s, reprobe);
        return test_run(s);
}
