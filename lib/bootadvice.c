/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the boot-time step for the hw queue cap (see bootadvice.h).
 *
 * The first that applies wins: on WSL nothing inside the guest sets the command line; a
 * machine with /etc/kernel/cmdline boots through kernel-install (systemd-boot, UKIs), whatever
 * else is installed; grubby is how Fedora and RHEL edit every boot entry; Debian's GRUB reads
 * drop-ins in /etc/default/grub.d/. Only when no boot loader is known, and storvsc is a
 * module, is modprobe.d the step: it needs the initramfs rebuilt, since the root disk is on
 * storvsc. Every step says how to undo it. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bootadvice.h"
#include "macro.h"
#include "sysfs.h"

static bool exists(const char *root, const char *path) {
        char full[4096];
        int fd;

        snprintf(full, sizeof(full), "%s%s", root, path);
        fd = open(full, O_PATH | O_CLOEXEC);
        if (fd < 0)
                return false;
        close(fd);
        return true;
}

/* WSL's kernels say so in their release: "5.15.153.1-microsoft-standard-WSL2". */
static bool is_wsl(const char *root) {
        _cleanup_free_ char *text = NULL;
        char full[4096];

        snprintf(full, sizeof(full), "%s/proc/sys/kernel/osrelease", root);
        if (hvt_read_file(full, &text) < 0)
                return false;
        return strstr(text, "microsoft") || strstr(text, "Microsoft") || strstr(text, "WSL");
}

void hvt_boot_facts_read(const char *root, bool module, struct hvt_boot_facts *ret) {
        *ret = (struct hvt_boot_facts) {
                .wsl = is_wsl(root),
                .module = module,
                .kernel_cmdline = exists(root, "/etc/kernel/cmdline"),
                .grubby = exists(root, "/usr/sbin/grubby"),
                .grub_debian = exists(root, "/etc/default/grub") && exists(root, "/usr/sbin/update-grub"),
                .initramfs = exists(root, "/usr/sbin/update-initramfs") ? "update-initramfs -u" :
                             exists(root, "/usr/bin/dracut") ? "dracut -f" : NULL,
        };
}

enum hvt_boot_kind hvt_boot_choose(const struct hvt_boot_facts *f) {
        if (f->wsl)
                return HVT_BOOT_WSL;
        if (f->kernel_cmdline)
                return HVT_BOOT_KERNEL_CMDLINE;
        if (f->grubby)
                return HVT_BOOT_GRUBBY;
        if (f->grub_debian)
                return HVT_BOOT_GRUB_DEBIAN;
        if (f->module && f->initramfs)
                return HVT_BOOT_MODPROBE;
        return HVT_BOOT_GENERIC;
}

const char *hvt_boot_kind_to_string(enum hvt_boot_kind k) {
        static const char *const names[] = {
                [HVT_BOOT_WSL] = "wsl",
                [HVT_BOOT_KERNEL_CMDLINE] = "kernel-cmdline",
                [HVT_BOOT_GRUBBY] = "grubby",
                [HVT_BOOT_GRUB_DEBIAN] = "grub",
                [HVT_BOOT_MODPROBE] = "modprobe",
                [HVT_BOOT_GENERIC] = "generic",
        };

        return (unsigned) k < ELEMENTSOF(names) ? names[k] : NULL;
}

void hvt_boot_advice(const struct hvt_boot_facts *f, unsigned cap, char *buf, size_t size) {
        switch (hvt_boot_choose(f)) {
        case HVT_BOOT_WSL:
                /* No backslash in the path: the log escapes one as two. */
                snprintf(buf, size, "this is WSL, whose kernel command line Windows sets: under [wsl2] in "
                         "the .wslconfig of the Windows user's profile folder (%%UserProfile%%) put "
                         "kernelCommandLine = hv_storvsc.storvsc_max_hw_queues=%u and run wsl --shutdown "
                         "(remove the line to undo)", cap);
                break;
        case HVT_BOOT_KERNEL_CMDLINE:
                snprintf(buf, size, "add hv_storvsc.storvsc_max_hw_queues=%u to /etc/kernel/cmdline and run "
                         "kernel-install add \"$(uname -r)\" \"/boot/vmlinuz-$(uname -r)\" (take it out and run "
                         "the same to undo)", cap);
                break;
        case HVT_BOOT_GRUBBY:
                snprintf(buf, size, "grubby --update-kernel=ALL --args=hv_storvsc.storvsc_max_hw_queues=%u "
                         "(grubby --update-kernel=ALL --remove-args=hv_storvsc.storvsc_max_hw_queues undoes it)", cap);
                break;
        case HVT_BOOT_GRUB_DEBIAN:
                snprintf(buf, size, "put GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX hv_storvsc.storvsc_max_hw_queues=%u\" "
                         "in /etc/default/grub.d/hvtuned.cfg and run update-grub (delete the file and run update-grub "
                         "to undo)", cap);
                break;
        case HVT_BOOT_MODPROBE:
                snprintf(buf, size, "put \"options hv_storvsc storvsc_max_hw_queues=%u\" in /etc/modprobe.d/hvtuned.conf "
                         "and run %s (delete the file and run %s to undo)", cap, f->initramfs, f->initramfs);
                break;
        case HVT_BOOT_GENERIC:
                if (f->module)
                        snprintf(buf, size, "put hv_storvsc.storvsc_max_hw_queues=%u on the kernel command line, or "
                                 "\"options hv_storvsc storvsc_max_hw_queues=%u\" in /etc/modprobe.d/ and rebuild "
                                 "the initramfs", cap, cap);
                else
                        snprintf(buf, size, "put hv_storvsc.storvsc_max_hw_queues=%u on the kernel command line "
                                 "(storvsc is built into this kernel)", cap);
                break;
        }
}

bool hvt_boot_azure_rule(const char *root) {
        return exists(root, "/usr/lib/udev/rules.d/80-azure-disk.rules") ||
               exists(root, "/lib/udev/rules.d/80-azure-disk.rules") ||
               exists(root, "/etc/udev/rules.d/80-azure-disk.rules");
}

/* The kernel command line's step for nvme_core.io_timeout=240, by boot loader. NVMe is never
 * on WSL; nvme_core, module or not, reads it from the command line. */
static void nvme_cmdline_step(const struct hvt_boot_facts *f, char *buf, size_t size) {
        switch (hvt_boot_choose(f)) {
        case HVT_BOOT_KERNEL_CMDLINE:
                snprintf(buf, size, "add nvme_core.io_timeout=240 to /etc/kernel/cmdline and run kernel-install add "
                         "\"$(uname -r)\" \"/boot/vmlinuz-$(uname -r)\" (take it out and run the same to undo)");
                break;
        case HVT_BOOT_GRUBBY:
                snprintf(buf, size, "grubby --update-kernel=ALL --args=nvme_core.io_timeout=240 (--remove-args="
                         "nvme_core.io_timeout undoes it)");
                break;
        case HVT_BOOT_GRUB_DEBIAN:
                snprintf(buf, size, "put GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX nvme_core.io_timeout=240\" in "
                         "/etc/default/grub.d/nvme-io-timeout.cfg and run update-grub (delete the file and run "
                         "update-grub to undo)");
                break;
        default:
                snprintf(buf, size, "put nvme_core.io_timeout=240 on the kernel command line");
                break;
        }
}

void hvt_boot_nvme_advice(const struct hvt_boot_facts *f, bool azure_rule, char *buf, size_t size) {
        char step[192];

        nvme_cmdline_step(f, step, sizeof(step));
        snprintf(buf, size, "%s (its udev rule sets 240000 on each Azure NVMe disk, from the initramfs on), or, "
                 "for every NVMe disk, %s", azure_rule ? "update azure-vm-utils to 0.7 or later" :
                 "install azure-vm-utils 0.7 or later where the distribution has it", step);
}
