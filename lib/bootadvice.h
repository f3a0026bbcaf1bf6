/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: which exact, reversible step puts the hw queue cap on this machine's boot, from what
 * the machine has (WSL, systemd-boot's kernel command line file, grubby, Debian's GRUB, an
 * initramfs tool), and the words of that step. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

enum hvt_boot_kind {
        HVT_BOOT_WSL,            /* the command line is Windows' to set: .wslconfig */
        HVT_BOOT_KERNEL_CMDLINE, /* systemd-boot / UKIs: /etc/kernel/cmdline and kernel-install */
        HVT_BOOT_GRUBBY,         /* Fedora, RHEL and their kin */
        HVT_BOOT_GRUB_DEBIAN,    /* /etc/default/grub.d/ and update-grub */
        HVT_BOOT_MODPROBE,       /* storvsc a module: modprobe.d and the initramfs tool */
        HVT_BOOT_GENERIC,        /* none of those found: the kernel command line, in general */
};

/* What decides the step. */
struct hvt_boot_facts {
        bool wsl;                 /* /proc/sys/kernel/osrelease says Microsoft's WSL kernel */
        bool module;              /* storvsc is a loadable module (the caller knows) */
        bool kernel_cmdline;      /* /etc/kernel/cmdline */
        bool grubby;              /* /usr/sbin/grubby */
        bool grub_debian;         /* /etc/default/grub and /usr/sbin/update-grub */
        const char *initramfs;    /* "update-initramfs -u", "dracut -f", or NULL */
};

/* Looks at the files above under root ("" for the running system; a test's directory), each
 * with open(): a file that cannot be opened is absent. */
void hvt_boot_facts_read(const char *root, bool module, struct hvt_boot_facts *ret);

enum hvt_boot_kind hvt_boot_choose(const struct hvt_boot_facts *f);

/* "wsl", "kernel-cmdline", "grubby", "grub", "modprobe", "generic": for a journal field. */
const char *hvt_boot_kind_to_string(enum hvt_boot_kind k);

/* The step, with how to undo it, for the cap: what follows "To cap them from boot: ". */
void hvt_boot_advice(const struct hvt_boot_facts *f, unsigned cap, char *buf, size_t size);

/* Whether azure-vm-utils' udev rule (80-azure-disk.rules) is installed under root. */
bool hvt_boot_azure_rule(const char *root);

/* The step that gives every Azure NVMe disk a 240 s I/O timeout from boot on, before hvtuned
 * starts: azure-vm-utils 0.7 or later, whose rule sets it per disk (in the initramfs too), or
 * nvme_core.io_timeout=240 on the kernel command line, for every NVMe disk. */
void hvt_boot_nvme_advice(const struct hvt_boot_facts *f, bool azure_rule, char *buf, size_t size);
