/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The hw queue cap with the real hvtuned binary on VMs of 4, 16, 32 and 64 vCPUs, a Gen1
 * VM with IDE controllers, VMs already capped from the kernel command line, a kernel without
 * the parameter, and a module parameter that refuses the write: the cap is written when it
 * differs, never above the present CPUs, reported like an attribute, restored on stop; every
 * controller is reported with the estimate of lib/hwqueues.c; the boot-time fix is the right one.
 * (The opt-in re-probe that applies it without a reboot: test-reprobe.c.) */
#include <check.h>
#include <stdbool.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "testutil.h"

#define PARAM "module/hv_storvsc/parameters/storvsc_max_hw_queues"

static const char *const every_size[][6] = {
        /* testbed, param after, the line of each controller, status part */
        { "azure-gen2-4cpu", "0",
          "host0 (controller " SCSI0 ", scsi): 4 hw queues x 316 requests, ~1.6 MiB preallocated; no cap applies\n",
          "host1 (controller " SCSI1 ", scsi): 4 hw queues x 316 requests, ~1.6 MiB preallocated; no cap applies\n",
          "4 storvsc disks on 2 controllers: 4 tuned, 0 failed\n", NULL },
        { "azure-gen2-16cpu", "4",
          "host0 (controller " SCSI0 ", scsi): 16 hw queues x 1267 requests, ~24.2 MiB preallocated; "
          "over the cap of 4: ~6.0 MiB with 4 queues, once re-probed\n",
          "host1 (controller " SCSI1 ", scsi): 16 hw queues x 1267 requests, ~24.2 MiB preallocated; "
          "over the cap of 4: ~6.0 MiB with 4 queues, once re-probed\n",
          "4 storvsc disks on 2 controllers: 4 tuned, 0 failed; hw queues: 2 controllers over cap 4, "
          "~36 MiB reclaimable at next boot\n", "(~36.3 MiB reclaimable)" },
        { "azure-gen2", "4",
          "host0 (controller " SCSI0 ", scsi): 32 hw queues x 2534 requests, ~96.6 MiB preallocated; "
          "over the cap of 4: ~12.1 MiB with 4 queues, once re-probed\n",
          "host1 (controller " SCSI1 ", scsi): 32 hw queues x 2534 requests, ~96.6 MiB preallocated; "
          "over the cap of 4: ~12.1 MiB with 4 queues, once re-probed\n",
          "4 storvsc disks on 2 controllers: 4 tuned, 0 failed; hw queues: 2 controllers over cap 4, "
          "~169 MiB reclaimable at next boot\n", "(~169.1 MiB reclaimable)" },
        { "azure-gen2-64cpu", "4",
          "host0 (controller " SCSI0 ", scsi): 64 hw queues x 5068 requests, ~386.2 MiB preallocated; "
          "over the cap of 4: ~24.1 MiB with 4 queues, once re-probed\n",
          "host1 (controller " SCSI1 ", scsi): 64 hw queues x 5068 requests, ~386.2 MiB preallocated; "
          "over the cap of 4: ~24.1 MiB with 4 queues, once re-probed\n",
          "4 storvsc disks on 2 controllers: 4 tuned, 0 failed; hw queues: 2 controllers over cap 4, "
          "~724 MiB reclaimable at next boot\n", "(~724.0 MiB reclaimable)" },
};

/* The default cap on each size of the VM: 4 above 4 vCPUs, untouched at 4. */
START_TEST(test_every_size) {
        const char *const *v = every_size[_i];
        UMockdevTestbed *tb;
        char *err;

        host_files(AZURE_CMDLINE, NULL, NULL, NULL);
        tb = testbed_load(v[0]);
        ck_assert_int_eq(hvtuned_run_once("queue = { scheduler = \"none\"; };\n", &err), 0);
        ck_assert_str_eq(testbed_sys_read(PARAM), v[1]);
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

/* Azure's v6 VM (2 vCPUs): the accelerator and the Direct Disk v2 reported with their queues (a
 * namespace's tag set: 2 hw queues of 1023 tags), the decoys (QEMU's controller, a Linux NVMe/TCP
 * target) not at all. Its kernel has no NVMe BTF (vmlinux's struct request only) and is no row
 * of the table: the nearest row's nvme_iod is assumed, and said so with each figure's band
 * (6.14: 6.12's row, 272 + 208 -> 512 bytes; azure-v6-mpath runs Ubuntu's 6.8: 6.1's, 272 + 136
 * -> 448). Under native multipath (azure-v6-mpath) the figures come from the hidden path
 * devices below each controller. */
START_TEST(test_nvme_controller) {
        static const struct { const char *bed, *each, *status; } beds[] = {
                { "azure-v6", "~1.2 MiB preallocated (assumed 6.12's layout, +/-10% across 5.10-7.3); ",
                  "\nNVMe: 2 Azure controllers, ~2.5 MiB preallocated (assumed 6.12's layout, +/-10%)\n" },
                { "azure-v6-mpath", "~1.1 MiB preallocated (assumed 6.1's layout, +/-11% across 5.10-7.3); ",
                  "\nNVMe: 2 Azure controllers, ~2.3 MiB preallocated (assumed 6.1's layout, +/-11%)\n" },
        };
        UMockdevTestbed *tb;
        char *err;

        host_files(AZURE_CMDLINE, NULL, NULL, NULL);
        tb = testbed_load(beds[_i].bed);
        ck_assert_int_eq(hvtuned_run_once("", &err), 0);
        assert_contains(err, hv_keep(g_strconcat("nvme0 (MSFT NVMe Accelerator v1.0, nvme-accelerator): 2 I/O queues "
                                                 "x 1023 requests (1024 ring entries), ", beds[_i].each, NULL)));
        assert_contains(err, hv_keep(g_strconcat("nvme1 (Microsoft NVMe Direct Disk v2, nvme-direct-v2): 2 I/O queues "
                                                 "x 1023 requests (1024 ring entries), ", beds[_i].each, NULL)));
        assert_contains(err, beds[_i].status);
        assert_contains(err, "NVMe request layout assumed: ");
        ck_assert_ptr_null(strstr(err, "unknown layout"));
        ck_assert_ptr_null(strstr(err, "QEMU NVMe Ctrl"));
        ck_assert_ptr_null(strstr(err, "nvme3 ("));
        ck_assert_ptr_null(strstr(err, "nvme2 ("));
        g_object_unref(tb);
}
END_TEST

/* IDE controllers have one queue and are never capped; the SCSI one of the same VM is. */
START_TEST(test_gen1_ide) {
        UMockdevTestbed *tb;
        char *err;

        host_files(AZURE_CMDLINE, NULL, NULL, NULL);
        tb = testbed_load("gen1");
        ck_assert_int_eq(hvtuned_run_once("queue = { scheduler = \"none\"; };\n", &err), 0);
        ck_assert_str_eq(testbed_sys_read(PARAM), "4");
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

/* WSL caps storvsc from the command line, and builds it into the kernel. This one has no BTF
 * (Microsoft's own WSL kernels have had it since 5.15.74.2: a kernel built without): its
 * release is no row of the table, so the nearest row older than it, 5.10's, is assumed and
 * said so; WSL's first kernel, 4.19, is older than every row: no figure at all. */
START_TEST(test_wsl_capped) {
        static const char *const wsl_cmdline = "initrd=\\initrd.img WSL_ROOT_INIT=1 panic=-1 nr_cpus=16 "
                "hv_storvsc.storvsc_max_hw_queues=4 console=hvc0 debug pty.legacy_count=0\n";
        UMockdevTestbed *tb;
        char *err, *osrelease;

        host_files(wsl_cmdline, NULL, NULL, NULL);
        osrelease = hv_keep(g_build_filename(getenv("HVTUNED_TEST_HOST"), "osrelease", NULL));
        ck_assert(g_file_set_contents(osrelease, "5.15.167.4-microsoft-standard-WSL2\n", -1, NULL));
        tb = testbed_load("wsl2");
        ck_assert_int_eq(hvtuned_run_once("queue = { scheduler = \"none\"; };\n", &err), 0);
        ck_assert_str_eq(testbed_sys_read(PARAM), "4");
        /* --once says what it changed: the cap already there, not (-v would). */
        ck_assert_ptr_null(strstr(err, "storvsc_max_hw_queues: 4"));
        /* 1152 bytes (5.10's row); the rows go down to 1024 (6.12's): the controller's figure
         * 11.5% lower, said as 12%. */
        assert_contains(err, "Request layout assumed: no BTF in /sys/kernel/btf has all of struct request, scsi_cmnd, "
                        "storvsc_cmd_request and scatterlist, and this kernel is no upstream-numbered one of "
                        "hvtuned's table, so 5.10's row fills in what BTF lacks: struct request 280 + scsi_cmnd 392 "
                        "+ storvsc_cmd_request 416 + 2 x scatterlist 32, 1152 bytes a preallocated request; the "
                        "rows 5.10-7.3 would make it 1024 to 1152, and each memory estimate says how far that moves "
                        "it\n");
        assert_contains(err, "host0 (controller {a3c7e9f1-52b8-4d06-9e1a-7b4c2d8f0e65}, scsi): 4 hw queues x 1267 "
                        "requests, ~6.5 MiB preallocated (assumed 5.10's layout, +/-12% across 5.10-7.3); within the "
                        "cap of 4\n");
        assert_contains(err, "; hw queues: every controller within cap 4\n");
        ck_assert_ptr_null(strstr(err, "To cap them from boot"));
        ck_assert_ptr_null(strstr(err, "unknown"));
        g_object_unref(tb);

        host_files(wsl_cmdline, NULL, NULL, NULL);
        ck_assert(g_file_set_contents(osrelease, "4.19.128-microsoft-standard\n", -1, NULL));
        tb = testbed_load("wsl2");
        ck_assert_int_eq(hvtuned_run_once("queue = { scheduler = \"none\"; };\n", &err), 0);
        assert_contains(err, "Unknown request layout: ");
        assert_contains(err, "host0 (controller {a3c7e9f1-52b8-4d06-9e1a-7b4c2d8f0e65}, scsi): 4 hw queues x 1267 "
                        "requests, memory unknown (unknown layout); within the cap of 4\n");
        ck_assert_ptr_null(strstr(err, "(assumed"));
        (void) unlink(osrelease);
        g_object_unref(tb);
}
END_TEST

/* A kernel whose SCSI core and storvsc are modules without BTF (built without
 * DEBUG_INFO_BTF_MODULES, or its modules' BTF stripped when packaged): vmlinux's BTF has
 * struct request and scatterlist, and its release is no row's (this host's, 6.18.44-fc-v1294).
 * The figures are 6.12's row's with the kernel's own struct request, said as assumed wherever
 * they appear: each controller's line and journal fields, the boot advice, STATUS= and the
 * metrics. */
START_TEST(test_assumed_layout) {
        char dir[] = "/tmp/hvtuned-metrics.XXXXXX", *prom, *text, *config, *err, *m, *osrelease;
        UMockdevTestbed *tb;
        const char *args[3];
        struct hv_run run;

        host_files(AZURE_CMDLINE, NULL, NULL, NULL);
        osrelease = hv_keep(g_build_filename(getenv("HVTUNED_TEST_HOST"), "osrelease", NULL));
        ck_assert(g_file_set_contents(osrelease, "6.18.44-fc-v1294\n", -1, NULL));
        tb = testbed_load("azure-gen2");
        ck_assert_int_eq(unlink(testbed_sys_path("kernel/btf/hv_storvsc")), 0);
        ck_assert_int_eq(unlink(testbed_sys_path("kernel/btf/scsi_mod")), 0);
        ck_assert_ptr_nonnull(mkdtemp(dir));
        prom = hv_keep(g_build_filename(dir, "hvtuned.prom", NULL));
        text = g_strdup_printf("queue = { scheduler = \"none\"; };\nmetrics_file = \"%s\";\n", prom);
        config = config_write(text);
        g_free(text);
        setenv("HVTUNED_TEST_METRICS_DIR", dir, 1);
        args[0] = "-c", args[1] = config, args[2] = NULL;
        hvtuned_start(&run, args);
        /* 272 (its BTF) + 296 + 416 + 64 = 1048 -> 1088; with 5.10's scsi_cmnd (392) 1152: a 64 KiB
         * block holds 56 requests instead of 60, and what the cap gives back grows by 6.2%: 7%. */
        ck_assert_str_eq(run.status, "4 storvsc disks on 2 controllers: 4 tuned, 0 failed; hw queues: 2 controllers "
                         "over cap 4, ~169 MiB reclaimable at next boot (assumed 6.12's layout, +/-7%)");
        m = hvtuned_wait_metrics(prom, "hvtuned_request_layout_info{source=\"assumed\",row=\"6.12\"} 1\n");
        assert_contains(m, "hvtuned_controller_preallocated_error_ratio{host=\"host0\",controller=\"" SCSI0 "\",kind=\"scsi\"} 0.07\n");
        assert_contains(m, "hvtuned_controller_preallocated_bytes{host=\"host0\",controller=\"" SCSI0 "\",kind=\"scsi\"} ");
        err = hvtuned_stop(&run);
        assert_contains(err, "host0 (controller " SCSI0 ", scsi): 32 hw queues x 2534 requests, ~96.6 MiB preallocated "
                        "(assumed 6.12's layout, +/-7% across 5.10-7.3); over the cap of 4: ~12.1 MiB with 4 queues, "
                        "once re-probed\n");
        assert_contains(err, "2 controllers probed before the cap keep their queues until re-probed (~169.1 MiB "
                        "(assumed 6.12's layout, +/-7%) reclaimable)");
        ck_assert_ptr_null(strstr(err, "unknown"));
        unsetenv("HVTUNED_TEST_METRICS_DIR");
        (void) unlink(prom);
        (void) rmdir(dir);
        (void) unlink(osrelease);
        unlink(config);
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
        ck_assert_int_eq(hvtuned_run_once("queue = { read_ahead_kb = 128; };\n", &err), 0);
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()), "");
        ck_assert_str_eq(testbed_sys_read(PARAM), "4");
        ck_assert_ptr_null(strstr(err, "storvsc_max_hw_queues: 4"));
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
        ck_assert_int_eq(hvtuned_run_once("queue = { scheduler = \"none\"; };\n", &err), 0);
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
        ck_assert_int_eq(hvtuned_run_once("queue = { scheduler = \"none\"; };\n", &err), 0);
        assert_contains(err, hv_keep(g_strconcat("To cap them from boot: ", p[3], NULL)));
        ck_assert_int_eq(unlink(file), 0);
        g_free(file);
        g_object_unref(tb);
}
END_TEST

/* hvtuned --once -v: the unchanged results too, which --once alone does not print. */
static int run_once_verbose(const char *config_text, char **err) {
        char *config = config_write(config_text);
        int r = hvtuned_run((const char *const[]) { "--once", "-v", "-c", config, NULL }, err);

        unlink(config);
        return r;
}

/* A cap from the configuration, never above the present CPUs; 0 never touches. */
START_TEST(test_configured_cap) {
        UMockdevTestbed *tb;
        GHashTable *before;
        char *err;

        host_files(AZURE_CMDLINE, NULL, NULL, NULL);
        tb = testbed_load("azure-gen2");
        ck_assert_int_eq(hvtuned_run_once("host = { max_hw_queues = 8; };\n", &err), 0);
        ck_assert_str_eq(testbed_sys_read(PARAM), "8");
        assert_contains(err, "hv_storvsc parameters/storvsc_max_hw_queues: 0 -> 8 (applied)\n");
        assert_contains(err, "over the cap of 8: ~24.2 MiB with 8 queues, once re-probed\n");
        ck_assert_ptr_null(strstr(err, "mq-deadline (about 320 KiB"));
        /* A cap of 1: new disks get mq-deadline from the kernel, and hvtuned says what keeps it off. */
        ck_assert_int_eq(hvtuned_run_once("host = { max_hw_queues = 1; };\n", &err), 0);
        ck_assert_str_eq(testbed_sys_read(PARAM), "1");
        assert_contains(err, "With a cap of 1, each disk on a controller probed from now on has a single hw queue, "
                        "and the kernel gives such a disk mq-deadline (about 320 KiB more per disk than none, "
                        "measured on 6.1)");

        /* 64 on 32 CPUs would make the kernel fall back to one queue per CPU: 32 is asked
         * for, which is what the 0 there already gives. */
        ck_assert(g_file_set_contents(testbed_sys_path(PARAM), "0\n", -1, NULL));
        ck_assert_int_eq(run_once_verbose("host = { max_hw_queues = 64; };\n", &err), 0);
        ck_assert_str_eq(testbed_sys_read(PARAM), "0");
        assert_contains(err, "hv_storvsc parameters/storvsc_max_hw_queues: 0 (unchanged: the kernel keeps it for 32)\n");
        assert_contains(err, "32 hw queues x 2534 requests, ~96.6 MiB preallocated; within the cap of 32\n");

        before = snapshot_take();
        ck_assert_int_eq(run_once_verbose("host = { max_hw_queues = 0; };\n", &err), 0);
        ck_assert_str_eq(testbed_sys_read(PARAM), "0");
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()), "");
        /* The cap is dropped: the original recorded by the first run is what is there. */
        assert_contains(err, "hv_storvsc parameters/storvsc_max_hw_queues: 0 (already the original)\n");
        assert_contains(err, "~96.6 MiB preallocated; no cap applies\n");

        /* With the record gone, 0 leaves the parameter out entirely. */
        ck_assert_int_eq(hvtuned_run_once("host = { max_hw_queues = 0; };\n", &err), 0);
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
        ck_assert_int_eq(chmod(testbed_sys_path(PARAM), 0444), 0);
        ck_assert_int_eq(hvtuned_run_once("queue = { scheduler = \"none\"; };\n", &err), 2);
        ck_assert_str_eq(testbed_sys_read(PARAM), "0");
        assert_contains(err, "hv_storvsc parameters/storvsc_max_hw_queues: 0 -> 4 (failed: Permission denied)\n");
        ck_assert_str_eq(testbed_value("sdc", "queue/scheduler"), "none");
        assert_contains(err, "4 storvsc disks on 2 controllers: 4 tuned, 0 failed; hw queues: 2 controllers over cap 4");

        /* A kernel before 5.13 has no such parameter: unsupported, not failed. */
        ck_assert_int_eq(unlink(testbed_sys_path(PARAM)), 0);
        ck_assert_int_eq(hvtuned_run_once("queue = { scheduler = \"none\"; };\n", &err), 0);
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
        ck_assert_int_eq(hvtuned_run_once("queue = { scheduler = \"none\"; };\n", &err), 2);
        assert_contains(err, "hv_storvsc: cannot read the record of its original value (Is a directory): "
                        "not writing attributes that have none recorded\n");
        ck_assert_str_eq(testbed_sys_read(PARAM), "0");
        ck_assert_str_eq(testbed_value("sdc", "queue/scheduler"), "none");

        ck_assert_int_eq(rmdir(inside), 0);
        ck_assert_int_eq(rmdir(record), 0);
        ck_assert(g_file_set_contents(record, "# hvtuned: values before hvtuned first wrote them\n"
                                      "syspath=/sys/module/hv_storvsc\ndev=\ndiskseq=0\n"
                                      "parameters/storvsc_max_hw_queues=2\n", -1, NULL));
        ck_assert_int_eq(hvtuned_run_once("queue = { scheduler = \"none\"; };\n", &err), 0);
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
        ck_assert_str_eq(run.status, "2 storvsc disks on 2 controllers: 2 tuned, 0 failed; "
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
        ck_assert_str_eq(run.status, "2 storvsc disks on 2 controllers: 2 tuned, 0 failed; "
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
        ck_assert_str_eq(run.status, "4 storvsc disks on 2 controllers: 4 tuned, 0 failed; "
                         "hw queues: 2 controllers over cap 4, ~169 MiB reclaimable at next boot");
        ck_assert_str_eq(testbed_sys_read(PARAM), "4");

        config_rewrite(config, "queue = { scheduler = \"none\"; };\nhost = { max_hw_queues = 0; };\n");
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "READY=1");
        ck_assert_str_eq(testbed_sys_read(PARAM), "0");
        ck_assert_str_eq(run.status, "4 storvsc disks on 2 controllers: 4 tuned, 0 failed");

        config_rewrite(config, "queue = { scheduler = \"none\"; };\n");
        ck_assert_int_eq(kill(run.pid, SIGHUP), 0);
        hvtuned_wait_notify(&run, "READY=1");
        ck_assert_str_eq(testbed_sys_read(PARAM), "4");

        err = hvtuned_stop(&run);
        ck_assert_str_eq(testbed_sys_read(PARAM), "0");
        assert_contains(err, "hv_storvsc parameters/storvsc_max_hw_queues: 0 -> 4 (applied)\n");
        assert_contains(err, "hv_storvsc parameters/storvsc_max_hw_queues: 4 -> 0 (restored)\n");
        /* The boot advice once a run: the reloads that brought the same cap back do not
         * repeat it. */
        {
                const char *first = strstr(err, "To cap them from boot: ");

                ck_assert_ptr_nonnull(first);
                ck_assert_msg(!strstr(first + 1, "To cap them from boot: "), "the boot advice repeated:\n%s", err);
        }
        g_object_unref(tb);
}
END_TEST

int main(void) {
        Suite *s = suite_create("hwqueues");
        TCase *cap = tcase_create("cap");

        tcase_set_timeout(cap, 60);
        tcase_add_loop_test(cap, test_every_size, 0, G_N_ELEMENTS(every_size));
        tcase_add_test(cap, test_gen1_ide);
        tcase_add_loop_test(cap, test_nvme_controller, 0, 2);
        tcase_add_test(cap, test_wsl_capped);
        tcase_add_test(cap, test_assumed_layout);
        tcase_add_test(cap, test_azure_capped);
        tcase_add_test(cap, test_cmdline_too_large);
        tcase_add_loop_test(cap, test_boot_advice_per_platform, 0, G_N_ELEMENTS(platforms));
        tcase_add_test(cap, test_configured_cap);
        tcase_add_test(cap, test_param_refuses);
        tcase_add_test(cap, test_param_record_unreadable);
        tcase_add_test(cap, test_no_cap);
        tcase_add_test(cap, test_daemon_status_reload_stop);
        suite_add_tcase(s, cap);
        return test_run(s);
}
