/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The boot-time step for the hw queue cap, on machines that have exactly the files of each
 * platform: WSL, systemd-boot (/etc/kernel/cmdline), grubby, Debian's GRUB, storvsc as a module
 * with update-initramfs or dracut, and none of them. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bootadvice.h"
#include "testutil.h"

/* A fresh root holding files, NULL-terminated pairs of path and text. */
static char *make_root(const char *const *files) {
        static unsigned n;
        char *root;

        ck_assert_int_ge(asprintf(&root, "/tmp/hvtuned-boot.%d.%u", (int) getpid(), n++), 0);
        for (size_t i = 0; files[i]; i += 2) {
                char *path, *dir, *slash;
                FILE *f;

                ck_assert_int_ge(asprintf(&path, "%s%s", root, files[i]), 0);
                dir = strdup(path);
                for (slash = strchr(dir + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
                        *slash = '\0';
                        (void) mkdir(dir, 0755);
                        *slash = '/';
                }
                f = fopen(path, "we");
                ck_assert_ptr_nonnull(f);
                fputs(files[i + 1], f);
                fclose(f);
                free(dir);
                free(path);
        }
        (void) mkdir(root, 0755);
        return root;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st, (void) flag, (void) ftw;
        return remove(path);
}

static void assert_advice(const char *const *files, bool module, enum hvt_boot_kind kind, const char *want) {
        char *root = make_root(files), buf[512];
        struct hvt_boot_facts f;

        hvt_boot_facts_read(root, module, &f);
        ck_assert_int_eq(hvt_boot_choose(&f), kind);
        hvt_boot_advice(&f, 4, buf, sizeof(buf));
        ck_assert_str_eq(buf, want);
        ck_assert_int_eq(nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS), 0);
        free(root);
}

#define WSL_RELEASE "/proc/sys/kernel/osrelease", "5.15.167.4-microsoft-standard-WSL2\n"
#define CMDLINE_FILE "/etc/kernel/cmdline", "root=UUID=x ro quiet\n"
#define GRUBBY "/usr/sbin/grubby", ""
#define DEFAULT_GRUB "/etc/default/grub", "GRUB_CMDLINE_LINUX=\"\"\n"
#define UPDATE_GRUB "/usr/sbin/update-grub", ""
#define UPDATE_INITRAMFS "/usr/sbin/update-initramfs", ""
#define DRACUT "/usr/bin/dracut", ""

START_TEST(test_wsl) {
        /* WSL's own tools may be there too: nothing inside the guest sets its command line. */
        assert_advice((const char *const[]) { WSL_RELEASE, DEFAULT_GRUB, UPDATE_GRUB, NULL }, true, HVT_BOOT_WSL,
                      "this is WSL, whose kernel command line Windows sets: under [wsl2] in "
                      "the .wslconfig of the Windows user's profile folder (%UserProfile%) put "
                      "kernelCommandLine = hv_storvsc.storvsc_max_hw_queues=4 and run wsl --shutdown "
                      "(remove the line to undo)");
        /* An Azure kernel is no WSL kernel. */
        assert_advice((const char *const[]) { "/proc/sys/kernel/osrelease", "6.8.0-1017-azure\n", NULL }, false,
                      HVT_BOOT_GENERIC, "put hv_storvsc.storvsc_max_hw_queues=4 on the kernel command line "
                      "(storvsc is built into this kernel)");
}
END_TEST

START_TEST(test_kernel_install) {
        assert_advice((const char *const[]) { CMDLINE_FILE, GRUBBY, NULL }, false, HVT_BOOT_KERNEL_CMDLINE,
                      "add hv_storvsc.storvsc_max_hw_queues=4 to /etc/kernel/cmdline and run kernel-install add "
                      "\"$(uname -r)\" \"/boot/vmlinuz-$(uname -r)\" (take it out and run the same to undo)");
}
END_TEST

START_TEST(test_grubby) {
        assert_advice((const char *const[]) { GRUBBY, DEFAULT_GRUB, DRACUT, NULL }, true, HVT_BOOT_GRUBBY,
                      "grubby --update-kernel=ALL --args=hv_storvsc.storvsc_max_hw_queues=4 "
                      "(grubby --update-kernel=ALL --remove-args=hv_storvsc.storvsc_max_hw_queues undoes it)");
}
END_TEST

START_TEST(test_grub_debian) {
        assert_advice((const char *const[]) { DEFAULT_GRUB, UPDATE_GRUB, UPDATE_INITRAMFS, NULL }, true,
                      HVT_BOOT_GRUB_DEBIAN,
                      "put GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX hv_storvsc.storvsc_max_hw_queues=4\" in "
                      "/etc/default/grub.d/hvtuned.cfg and run update-grub (delete the file and run update-grub "
                      "to undo)");
        /* /etc/default/grub without update-grub is no Debian GRUB. */
        assert_advice((const char *const[]) { DEFAULT_GRUB, NULL }, false, HVT_BOOT_GENERIC,
                      "put hv_storvsc.storvsc_max_hw_queues=4 on the kernel command line "
                      "(storvsc is built into this kernel)");
}
END_TEST

START_TEST(test_modprobe) {
        assert_advice((const char *const[]) { UPDATE_INITRAMFS, NULL }, true, HVT_BOOT_MODPROBE,
                      "put \"options hv_storvsc storvsc_max_hw_queues=4\" in /etc/modprobe.d/hvtuned.conf and run "
                      "update-initramfs -u (delete the file and run update-initramfs -u to undo)");
        assert_advice((const char *const[]) { DRACUT, NULL }, true, HVT_BOOT_MODPROBE,
                      "put \"options hv_storvsc storvsc_max_hw_queues=4\" in /etc/modprobe.d/hvtuned.conf and run "
                      "dracut -f (delete the file and run dracut -f to undo)");
        /* Built in, modprobe.d does nothing. */
        assert_advice((const char *const[]) { DRACUT, NULL }, false, HVT_BOOT_GENERIC,
                      "put hv_storvsc.storvsc_max_hw_queues=4 on the kernel command line "
                      "(storvsc is built into this kernel)");
}
END_TEST

START_TEST(test_nothing_known) {
        assert_advice((const char *const[]) { NULL }, true, HVT_BOOT_GENERIC,
                      "put hv_storvsc.storvsc_max_hw_queues=4 on the kernel command line, or \"options hv_storvsc "
                      "storvsc_max_hw_queues=4\" in /etc/modprobe.d/ and rebuild the initramfs");
        ck_assert_str_eq(hvt_boot_kind_to_string(HVT_BOOT_GRUB_DEBIAN), "grub");
}
END_TEST

/* The NVMe I/O timeout's step: azure-vm-utils first (installed: too old, to update), then the
 * kernel command line by boot loader. */
static void assert_nvme_advice(const char *const *files, const char *want) {
        char *root = make_root(files), buf[512];
        struct hvt_boot_facts f;

        hvt_boot_facts_read(root, false, &f);
        hvt_boot_nvme_advice(&f, hvt_boot_azure_rule(root), buf, sizeof(buf));
        ck_assert_str_eq(buf, want);
        ck_assert_int_eq(nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS), 0);
        free(root);
}

#define AZURE_RULE "/usr/lib/udev/rules.d/80-azure-disk.rules", ""

START_TEST(test_nvme_timeout) {
        assert_nvme_advice((const char *const[]) { GRUBBY, NULL },
                           "install azure-vm-utils 0.7 or later where the distribution has it (its udev rule sets "
                           "240000 on each Azure NVMe disk, from the initramfs on), or, for every NVMe disk, grubby "
                           "--update-kernel=ALL --args=nvme_core.io_timeout=240 (--remove-args=nvme_core.io_timeout "
                           "undoes it)");
        assert_nvme_advice((const char *const[]) { AZURE_RULE, DEFAULT_GRUB, UPDATE_GRUB, NULL },
                           "update azure-vm-utils to 0.7 or later (its udev rule sets 240000 on each Azure NVMe disk, "
                           "from the initramfs on), or, for every NVMe disk, put GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX "
                           "nvme_core.io_timeout=240\" in /etc/default/grub.d/nvme-io-timeout.cfg and run update-grub "
                           "(delete the file and run update-grub to undo)");
        assert_nvme_advice((const char *const[]) { UPDATE_INITRAMFS, NULL },
                           "install azure-vm-utils 0.7 or later where the distribution has it (its udev rule sets "
                           "240000 on each Azure NVMe disk, from the initramfs on), or, for every NVMe disk, put "
                           "nvme_core.io_timeout=240 on the kernel command line");
}
END_TEST

int main(void) {
        Suite *s = suite_create("bootadvice");
        TCase *tc = tcase_create("platforms");

        tcase_add_test(tc, test_wsl);
        tcase_add_test(tc, test_kernel_install);
        tcase_add_test(tc, test_grubby);
        tcase_add_test(tc, test_grub_debian);
        tcase_add_test(tc, test_modprobe);
        tcase_add_test(tc, test_nothing_known);
        tcase_add_test(tc, test_nvme_timeout);
        suite_add_tcase(s, tc);
        return test_run(s);
}
