/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: telling whether a block disk is in use, before its controller is taken away: a
 * mounted filesystem on it or a partition, a holder (dm, md, bcache), swap, or anyone else's
 * exclusive open. What cannot be read counts as in use. */
#pragma once

#include <stddef.h>

/* What the system uses, as read once from /proc: mounts and swap areas. */
struct hvt_usage {
        char *mountinfo;  /* /proc/self/mountinfo */
        char *swaps;      /* /proc/swaps */
};

/* -errno (logged by the caller as "in doubt") when either cannot be read. */
int hvt_usage_load(struct hvt_usage *u);
void hvt_usage_done(struct hvt_usage *u);

/* 0 when neither the disk at syspath nor any of its partitions is mounted, swap or held;
 * 1 with the reason in why ("sdc1 is mounted on /data") when one is; -errno when that cannot
 * be told (why says what could not be read). */
int hvt_usage_check_disk(const struct hvt_usage *u, const char *syspath, char *why, size_t size);

/* Opens /dev/<sysname> exclusively, as mount and swapon do: the kernel's own answer to "is
 * anyone using it". Returns the fd, to hold while the disk is taken away, or -EBUSY. */
int hvt_usage_claim(const char *sysname);
