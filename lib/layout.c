/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the request layout of layout.h.
 *
 * BTF first: it describes the kernel that runs, whatever its version says, so RHEL's
 * kABI-padded structs, SLES's and Azure Linux's backports come out right. A table by version
 * only covers kernels whose structs follow an upstream release, and only the rows checked
 * against that kernel's BTF (tests/unit/test-layout.c, on the kernels bench/vm boots); it
 * fills in what the BTF lacks (5.10 has no module BTF, and Debian builds SCSI as a module),
 * and is refused when the BTF it has disagrees. A kernel that neither describes nor matches
 * (a distribution's numbering without module BTF, a kernel built without BTF) gets the
 * nearest row's sizes for what its BTF lacks, said as assumed and with the band the rows
 * span: the rows differ by at most 128 bytes a request (1024 to 1152), small beside what
 * the figure is for (whether capping a controller's queues wins back ~10 or ~100 MiB), where
 * "unknown" leaves the operator with nothing. A kernel older than every row stays unknown:
 * no row says anything about the structs before 5.10. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "layout.h"
#include "macro.h"

#define CACHE_LINE 64u
#define PAGE_BYTES 4096u
#define INLINE_SG 2u           /* SCSI_INLINE_SG_CNT */
#define BTF_MAX (64u << 20)

/* Debian's x86-64 kernels, each row checked against that kernel's BTF (vmlinux, scsi_mod.ko,
 * hv_storvsc.ko) where it has one: 5.10's modules carry none, so its scsi_cmnd and
 * storvsc_cmd_request are from the 5.10 sources and only its request is checked. */
static const struct {
        const char *version;
        struct hvt_layout_sizes sizes;
} table[] = {
        { "5.10", { 280, 392, 416, 32 } },
        { "6.1",  { 272, 296, 416, 32 } },
        { "6.12", { 248, 296, 416, 32 } },
        { "7.3",  { 272, 296, 416, 32 } },
};
_Static_assert(ELEMENTSOF(table) <= HVT_LAYOUT_ROWS_MAX, "an assumed layout keeps a request size a row");

int hvt_layout_request_bytes(const struct hvt_layout_sizes *s, unsigned *ret) {
        uint64_t sum;

        if (s->request == 0 || s->scsi_cmnd == 0 || s->storvsc_cmd == 0 || s->scatterlist == 0)
                return -ERANGE;
        sum = (uint64_t) s->request + s->scsi_cmnd + s->storvsc_cmd + (uint64_t) INLINE_SG * s->scatterlist;
        sum = (sum + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE;
        if (sum > PAGE_BYTES)
                return -ERANGE;
        *ret = (unsigned) sum;
        return 0;
}

static const char *const wanted[] = { "request", "scsi_cmnd", "storvsc_cmd_request", "scatterlist" };

static uint32_t *field(struct hvt_layout_sizes *s, size_t i) {
        uint32_t *f[] = { &s->request, &s->scsi_cmnd, &s->storvsc_cmd, &s->scatterlist };

        return f[i];
}

int hvt_layout_sizes_from_btf(const void *vmlinux, size_t vmlinux_size, const void *scsi_mod, size_t scsi_mod_size,
                              const void *storvsc, size_t storvsc_size, struct hvt_layout_sizes *ret) {
        const void *blob[] = { vmlinux, scsi_mod, storvsc };
        const size_t len[] = { vmlinux_size, scsi_mod_size, storvsc_size };
        struct hvt_layout_sizes s = {};
        struct hvt_btf base;
        int r;

        r = hvt_btf_open(vmlinux, vmlinux_size, NULL, &base);
        if (r < 0)
                return r;
        for (size_t b = 0; b < ELEMENTSOF(blob); b++) {
                uint32_t sizes[ELEMENTSOF(wanted)];
                struct hvt_btf btf;

                if (!blob[b])
                        continue;
                r = b == 0 ? (btf = base, 0) : hvt_btf_open(blob[b], len[b], &base, &btf);
                if (r >= 0)
                        r = hvt_btf_struct_sizes(&btf, wanted, sizes, ELEMENTSOF(wanted));
                if (r < 0)
                        return r;
                for (size_t i = 0; i < ELEMENTSOF(wanted); i++)
                        if (*field(&s, i) == 0)
                                *field(&s, i) = sizes[i];
        }
        *ret = s;
        return 0;
}

/* Digits, at least one: the number in *ret, the text after it returned. NULL otherwise. */
static const char *number(const char *p, unsigned *ret) {
        unsigned long n = 0;

        if (!isdigit((unsigned char) *p))
                return NULL;
        for (; isdigit((unsigned char) *p); p++) {
                n = n * 10 + (unsigned) (*p - '0');
                if (n > 100000)
                        return NULL;
        }
        *ret = (unsigned) n;
        return p;
}

/* Lowercase letters, digits and '-' to the end: a Debian or Ubuntu flavour ("cloud-amd64",
 * "azure"), where a distribution's own numbering has dots and underscores. */
static bool flavour(const char *p) {
        for (; *p; p++)
                if (!islower((unsigned char) *p) && !isdigit((unsigned char) *p) && *p != '-')
                        return false;
        return true;
}

const struct hvt_layout_sizes *hvt_layout_table(const char *release, const char **ret_row) {
        unsigned major, minor, sub = 0, abi;
        bool has_sub = false, upstream = false;
        char version[16], text[128];
        const char *p = text, *q;

        /* As /proc/sys/kernel/osrelease has it: one line. */
        if (strlen(release) >= sizeof(text))
                return NULL;
        strcpy(text, release);
        text[strcspn(text, "\n")] = '\0';

        p = number(p, &major);
        if (!p || *p != '.' || !(p = number(p + 1, &minor)))
                return NULL;
        if (*p == '.') {
                p = number(p + 1, &sub);
                if (!p)
                        return NULL;
                has_sub = true;
        }
        if (*p == '\0')
                upstream = true;                                    /* kernel.org: "6.1", "6.1.5" */
        else if (strncmp(p, "-rc", 3) == 0)
                upstream = (q = number(p + 3, &abi)) && *q == '\0';  /* "6.13-rc4" */
        else if (has_sub && sub == 0 && *p == '-')                  /* "5.10.0-46-amd64" */
                upstream = (q = number(p + 1, &abi)) && (*q == '\0' || (*q == '-' && q[1] && flavour(q + 1)));
        else if (has_sub && strncmp(p, "+deb", 4) == 0)              /* "6.12.118+deb13-amd64" */
                upstream = (q = number(p + 4, &abi)) && (*q == '\0' || (*q == '-' && q[1] && flavour(q + 1)));
        if (!upstream)
                return NULL;
        snprintf(version, sizeof(version), "%u.%u", major, minor);
        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (strcmp(table[i].version, version) == 0) {
                        if (ret_row)
                                *ret_row = table[i].version;
                        return &table[i].sizes;
                }
        return NULL;
}

static bool agrees(uint32_t btf, uint32_t row) {
        return btf == 0 || btf == row;
}

unsigned hvt_release_version(const char *s) {
        unsigned major, minor;
        const char *p = number(s, &major);

        if (!p || *p != '.' || !number(p + 1, &minor) || minor >= 1000)
                return 0;
        return major * 1000 + minor;
}

const char *hvt_layout_nearest_row(const char *release) {
        unsigned v = release ? hvt_release_version(release) : 0;
        const char *best = NULL;
        unsigned best_v = 0;

        if (v == 0)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                unsigned r = hvt_release_version(table[i].version);

                if (r <= v && r >= best_v) {
                        best = table[i].version;
                        best_v = r;
                }
        }
        return best;
}

/* BTF's sizes where it has them, the row's for the rest. */
static struct hvt_layout_sizes fill(const struct hvt_layout_sizes *btf, const struct hvt_layout_sizes *row) {
        struct hvt_layout_sizes s = *row, b = btf ? *btf : (struct hvt_layout_sizes) {};

        for (size_t i = 0; i < ELEMENTSOF(wanted); i++)
                if (*field(&b, i) != 0)
                        *field(&s, i) = *field(&b, i);
        return s;
}

static void assume(const struct hvt_layout_sizes *btf, const char *release, struct hvt_layout *ret) {
        const char *name = hvt_layout_nearest_row(release);
        unsigned lo = UINT32_MAX, hi = 0;
        struct hvt_layout_sizes s;

        if (!name)
                return;
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                struct hvt_layout_sizes t = fill(btf, &table[i].sizes);
                unsigned bytes;

                if (hvt_layout_request_bytes(&t, &bytes) < 0) {
                        *ret = (struct hvt_layout) {};
                        return;  /* a size from BTF no kernel has: nothing to assume */
                }
                ret->row_bytes[i] = bytes;
                lo = bytes < lo ? bytes : lo;
                hi = bytes > hi ? bytes : hi;
                if (strcmp(table[i].version, name) == 0) {
                        s = t;
                        ret->request_bytes = bytes;
                }
        }
        ret->n_rows = ELEMENTSOF(table);
        ret->source = HVT_LAYOUT_ASSUMED;
        ret->sizes = s;
        ret->request_lo = lo;
        ret->request_hi = hi;
        snprintf(ret->table_row, sizeof(ret->table_row), "%s", name);
        snprintf(ret->band_rows, sizeof(ret->band_rows), "%s-%s", table[0].version,
                 table[ELEMENTSOF(table) - 1].version);
}

unsigned hvt_layout_band_pct(uint64_t figure, const uint64_t *others, size_t n) {
        uint64_t off = 0;

        if (figure == 0)
                return 0;
        for (size_t i = 0; i < n; i++) {
                uint64_t d = others[i] > figure ? others[i] - figure : figure - others[i];

                off = d > off ? d : off;
        }
        return (unsigned) ((off * 100 + figure - 1) / figure);
}

void hvt_layout_decide(const struct hvt_layout_sizes *btf, const char *release, struct hvt_layout *ret) {
        const struct hvt_layout_sizes *row;
        const char *name = NULL;

        *ret = (struct hvt_layout) {};
        if (btf && hvt_layout_request_bytes(btf, &ret->request_bytes) >= 0) {
                ret->source = HVT_LAYOUT_BTF;
                ret->sizes = *btf;
                return;
        }
        row = release ? hvt_layout_table(release, &name) : NULL;
        /* The kernel's own BTF saying otherwise makes it not the kernel of that row: at most
         * an assumption, as for any kernel without a row. */
        if (row && !(btf && !(agrees(btf->request, row->request) && agrees(btf->scsi_cmnd, row->scsi_cmnd) &&
                              agrees(btf->storvsc_cmd, row->storvsc_cmd) && agrees(btf->scatterlist, row->scatterlist))) &&
            hvt_layout_request_bytes(row, &ret->request_bytes) >= 0) {
                ret->source = HVT_LAYOUT_TABLE;
                ret->sizes = *row;
                snprintf(ret->table_row, sizeof(ret->table_row), "%s", name);
                return;
        }
        *ret = (struct hvt_layout) {};
        assume(btf, release, ret);
}

/* sysfs gives no size for a BTF file that can be trusted, so it is read until EOF. */
void *hvt_layout_read_btf(const char *dir, const char *name, size_t *ret_size) {
        char path[4096];
        _cleanup_close_ int fd = -EBADF;
        size_t size = 0, alloc = 0;
        uint8_t *buf = NULL;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0)
                return NULL;
        for (;;) {
                ssize_t n;

                if (size == alloc) {
                        uint8_t *more;

                        if (alloc >= BTF_MAX)
                                goto fail;
                        alloc = alloc ? alloc * 2 : 1u << 20;
                        more = realloc(buf, alloc);
                        if (!more)
                                goto fail;
                        buf = more;
                }
                n = read(fd, buf + size, alloc - size);
                if (n < 0)
                        goto fail;
                if (n == 0)
                        break;
                size += (size_t) n;
        }
        *ret_size = size;
        return buf;
fail:
        free(buf);
        return NULL;
}

void hvt_layout_read(const char *dir, const char *osrelease, struct hvt_layout *ret) {
        size_t n_vmlinux = 0, n_scsi = 0, n_storvsc = 0;
        _cleanup_free_ void *vmlinux = hvt_layout_read_btf(dir, "vmlinux", &n_vmlinux);
        _cleanup_free_ void *scsi = vmlinux ? hvt_layout_read_btf(dir, "scsi_mod", &n_scsi) : NULL;
        _cleanup_free_ void *storvsc = vmlinux ? hvt_layout_read_btf(dir, "hv_storvsc", &n_storvsc) : NULL;
        struct hvt_layout_sizes sizes = {};
        char release[128] = "";
        bool have_btf = false;
        int fd;

        if (vmlinux)
                have_btf = hvt_layout_sizes_from_btf(vmlinux, n_vmlinux, scsi, n_scsi, storvsc, n_storvsc,
                                                     &sizes) >= 0;
        fd = open(osrelease, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
                ssize_t n = read(fd, release, sizeof(release) - 1);

                release[n > 0 ? n : 0] = '\0';
                release[strcspn(release, "\n")] = '\0';
                close(fd);
        }
        /* A BTF that cannot be read is no BTF: its sizes are not taken, nor held against the
         * table (a hostile or damaged one must not decide either way). */
        hvt_layout_decide(have_btf ? &sizes : NULL, *release ? release : NULL, ret);
}

void hvt_layout_describe(const struct hvt_layout *l, char *buf, size_t size) {
        switch (l->source) {
        case HVT_LAYOUT_BTF:
                snprintf(buf, size, "BTF");
                break;
        case HVT_LAYOUT_TABLE:
                snprintf(buf, size, "table %s", l->table_row);
                break;
        case HVT_LAYOUT_ASSUMED:
                snprintf(buf, size, "assumed %s (%u to %u bytes across %s)", l->table_row, l->request_lo,
                         l->request_hi, l->band_rows);
                break;
        default:
                snprintf(buf, size, "unknown layout");
                break;
        }
}
