/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: reading BTF (the kernel's type information, /sys/kernel/btf/) far enough to know the
 * size of a struct by its name: the header, the string section and a walk of the type
 * section, every offset checked against the blob. Nothing else of BTF is interpreted. */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct hvt_btf {
        const uint8_t *types;      /* the type section */
        uint32_t types_len;
        const char *strs;          /* the string section, NUL-terminated */
        uint32_t strs_len;
        const struct hvt_btf *base;  /* a module's BTF names vmlinux's strings too */
};

/* Checks the header of the blob (little-endian BTF, version 1, sections inside it, the string
 * section ending in NUL) and points ret into it; base is vmlinux's BTF for a module's split
 * BTF, or NULL. -EBADMSG for anything else. The blob must outlive ret. */
int hvt_btf_open(const void *data, size_t size, const struct hvt_btf *base, struct hvt_btf *ret);

/* For each of names[0..n), the size of the struct of that name (0 when this BTF has none),
 * in one walk of the types. -EBADMSG when the type section is malformed (a record past its
 * end, a kind this reader cannot step over, a name outside the strings), -ENOTUNIQ when two
 * structs of one of the names differ in size. */
int hvt_btf_struct_sizes(const struct hvt_btf *btf, const char *const *names, uint32_t *sizes, size_t n);
