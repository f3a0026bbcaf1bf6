/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the BTF reader of btf.h. Layout facts from the kernel's include/uapi/linux/btf.h and
 * Documentation/bpf/btf.rst: a 24-byte header (magic 0xeb9f, version 1, flags, hdr_len, then
 * type_off, type_len, str_off, str_len, both offsets from the header's end), the type section
 * as records of a 12-byte struct btf_type (name_off, info, size/type) followed by what the
 * kind adds, and in a module's split BTF, name offsets past vmlinux's strings continue into
 * the module's own. Written here rather than taken from libbpf: hvtuned needs four sizes,
 * and a bounded walk of ~150 lines is less than a library and its dependencies. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "btf.h"
#include "macro.h"

#define BTF_MAGIC 0xeb9f
#define BTF_VERSION 1
#define BTF_HEADER_LEN 24
#define BTF_TYPE_LEN 12

enum {
        KIND_INT = 1, KIND_PTR, KIND_ARRAY, KIND_STRUCT, KIND_UNION, KIND_ENUM, KIND_FWD,
        KIND_TYPEDEF, KIND_VOLATILE, KIND_CONST, KIND_RESTRICT, KIND_FUNC, KIND_FUNC_PROTO,
        KIND_VAR, KIND_DATASEC, KIND_FLOAT, KIND_DECL_TAG, KIND_TYPE_TAG, KIND_ENUM64,
};

static uint32_t le32(const uint8_t *p) {
        return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

int hvt_btf_open(const void *data, size_t size, const struct hvt_btf *base, struct hvt_btf *ret) {
        const uint8_t *p = data;
        uint32_t hdr_len, type_off, type_len, str_off, str_len;
        uint64_t body;

        if (size < BTF_HEADER_LEN)
                return -EBADMSG;
        /* A big-endian kernel's BTF reads 0x9feb here: not this machine's, refused too. */
        if ((p[0] | p[1] << 8) != BTF_MAGIC || p[2] != BTF_VERSION)
                return -EBADMSG;
        hdr_len = le32(p + 4);
        type_off = le32(p + 8);
        type_len = le32(p + 12);
        str_off = le32(p + 16);
        str_len = le32(p + 20);
        if (hdr_len < BTF_HEADER_LEN || hdr_len > size)
                return -EBADMSG;
        body = size - hdr_len;
        if ((uint64_t) type_off + type_len > body || (uint64_t) str_off + str_len > body)
                return -EBADMSG;
        if (type_off % 4 != 0 || str_len == 0 || p[hdr_len + str_off + str_len - 1] != '\0')
                return -EBADMSG;
        *ret = (struct hvt_btf) {
                .types = p + hdr_len + type_off,
                .types_len = type_len,
                .strs = (const char *) p + hdr_len + str_off,
                .strs_len = str_len,
                .base = base,
        };
        return 0;
}

/* The name at off: vmlinux's strings first, then (split BTF) this blob's. NULL outside both;
 * each section ends in NUL, so the string found ends inside it. */
static const char *name_at(const struct hvt_btf *btf, uint32_t off) {
        if (btf->base) {
                if (off < btf->base->strs_len)
                        return btf->base->strs + off;
                off -= btf->base->strs_len;
        }
        return off < btf->strs_len ? btf->strs + off : NULL;
}

/* Bytes that follow a record of this kind, or -1 for a kind this reader does not know (its
 * length cannot be known, so the walk cannot go on). */
static int64_t trailer_len(unsigned kind, uint32_t vlen) {
        switch (kind) {
        case KIND_PTR: case KIND_FWD: case KIND_TYPEDEF: case KIND_VOLATILE: case KIND_CONST:
        case KIND_RESTRICT: case KIND_FUNC: case KIND_FLOAT: case KIND_TYPE_TAG:
                return 0;
        case KIND_INT: case KIND_VAR: case KIND_DECL_TAG:
                return 4;
        case KIND_ARRAY:
                return 12;
        case KIND_STRUCT: case KIND_UNION: case KIND_DATASEC: case KIND_ENUM64:
                return (int64_t) vlen * 12;
        case KIND_ENUM: case KIND_FUNC_PROTO:
                return (int64_t) vlen * 8;
        default:
                return -1;
        }
}

int hvt_btf_struct_sizes(const struct hvt_btf *btf, const char *const *names, uint32_t *sizes, size_t n) {
        uint64_t pos = 0;

        for (size_t i = 0; i < n; i++)
                sizes[i] = 0;
        while (pos < btf->types_len) {
                const uint8_t *t = btf->types + pos;
                uint32_t info, kind, vlen;
                int64_t more;

                if (btf->types_len - pos < BTF_TYPE_LEN)
                        return -EBADMSG;
                info = le32(t + 4);
                kind = (info >> 24) & 0x1f;
                vlen = info & 0xffff;
                more = trailer_len(kind, vlen);
                if (more < 0 || (uint64_t) more > btf->types_len - pos - BTF_TYPE_LEN)
                        return -EBADMSG;
                if (kind == KIND_STRUCT) {
                        const char *name = name_at(btf, le32(t));
                        uint32_t size = le32(t + 8);

                        if (!name)
                                return -EBADMSG;
                        for (size_t i = 0; i < n; i++) {
                                if (strcmp(name, names[i]) != 0)
                                        continue;
                                if (sizes[i] != 0 && sizes[i] != size)
                                        return -ENOTUNIQ;
                                sizes[i] = size;
                        }
                }
                pos += BTF_TYPE_LEN + (uint64_t) more;
        }
        return 0;
}
