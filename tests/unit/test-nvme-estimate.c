/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The NVMe estimate (nvme.h) against figures computed by hand from its model, the NVMe request
 * layout's choice between BTF, the table and "unknown layout", and the controller list read
 * from a sysfs-like tree made here (nvme-controllers.h; the models are classify's,
 * hvt_nvme_model_kind(), tested in test-classify).
 * tests/unit/test-layout-kernels.c checks the table against real kernels' BTF, bench/vm the
 * estimate against their free memory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "nvme.h"
#include "nvme-controllers.h"
#include "testutil.h"

START_TEST(test_request_bytes) {
        unsigned b = 0;

        ck_assert_int_eq(hvt_nvme_request_bytes(&(struct hvt_nvme_layout_sizes) { 272, 136 }, &b), 0);
        ck_assert_uint_eq(b, 448);                      /* 6.1: 408, a cache line up */
        ck_assert_int_eq(hvt_nvme_request_bytes(&(struct hvt_nvme_layout_sizes) { 248, 208 }, &b), 0);
        ck_assert_uint_eq(b, 512);                      /* 6.12: 456 */
        ck_assert_int_eq(hvt_nvme_request_bytes(&(struct hvt_nvme_layout_sizes) { 256, 128 }, &b), 0);
        ck_assert_uint_eq(b, 384);                      /* a multiple stays */
        ck_assert_int_eq(hvt_nvme_request_bytes(&(struct hvt_nvme_layout_sizes) { 0, 136 }, &b), -ERANGE);
        ck_assert_int_eq(hvt_nvme_request_bytes(&(struct hvt_nvme_layout_sizes) { 272, 0 }, &b), -ERANGE);
        ck_assert_int_eq(hvt_nvme_request_bytes(&(struct hvt_nvme_layout_sizes) { 272, 4000 }, &b), -ERANGE);
}
END_TEST

/* 6.1's 448-byte requests, 8 I/O queues of 1024 entries (QEMU's controller at -smp 8, and the
 * default nvme.io_queue_depth):
 *   a queue's 1023 tags: 146 requests a 64 KiB block, 7 blocks hold 1022, the last request a
 *     4 KiB page: 462848; rqs and static_rqs 8184 bytes each, kmalloc-8k: 16384; sbitmap 1024;
 *   its rings: 1024 x 64 = 64 KiB, 1024 x 16 = 16 KiB: 81920;  8 x 562176 = 4497408;
 *   admin: 30 tags (13440 bytes: an order-2 block, 16384), 2 x 256, 64; rings 2 x 4096; its
 *     hw context 4096; the controller 32768: 16960 + 8192 + 4096 + 32768 = 62016. */
START_TEST(test_estimate) {
        ck_assert_uint_eq(hvt_nvme_estimate_bytes(448, 8, 1024), 4497408 + 62016);
        /* One queue more adds one queue's figure. */
        ck_assert_uint_eq(hvt_nvme_estimate_bytes(448, 9, 1024) - hvt_nvme_estimate_bytes(448, 8, 1024), 562176);
        /* 64 entries: 63 tags, 28224 bytes: one order-3 block (32768); 2 x 512; 64; rings 4096 +
         * 4096 (1 KiB of completions still takes a page). */
        ck_assert_uint_eq(hvt_nvme_estimate_bytes(448, 1, 64), 32768 + 1024 + 64 + 8192 + 62016);
        /* No queue: the admin queue and the controller. */
        ck_assert_uint_eq(hvt_nvme_estimate_bytes(448, 0, 1024), 62016);
        /* Unknown layout, a request past a page, a depth without a tag: no estimate. */
        ck_assert_uint_eq(hvt_nvme_estimate_bytes(0, 8, 1024), 0);
        ck_assert_uint_eq(hvt_nvme_estimate_bytes(8192, 8, 1024), 0);
        ck_assert_uint_eq(hvt_nvme_estimate_bytes(448, 8, 1), 0);
        ck_assert_uint_eq(hvt_nvme_estimate_bytes(448, 8, 0), 0);
        /* Larger requests, more memory. */
        ck_assert_uint_gt(hvt_nvme_estimate_bytes(512, 8, 1024), hvt_nvme_estimate_bytes(448, 8, 1024));
}
END_TEST

START_TEST(test_decide) {
        struct hvt_nvme_layout l;

        /* BTF with both sizes: BTF, whatever the release. */
        hvt_nvme_layout_decide(&(struct hvt_nvme_layout_sizes) { 248, 208 }, "4.18.0-553.el8_10.x86_64", &l);
        ck_assert_int_eq(l.source, HVT_LAYOUT_BTF);
        ck_assert_uint_eq(l.request_bytes, 512);
        /* 5.10: vmlinux's BTF only; its request agrees with the row, which fills in nvme_iod. */
        hvt_nvme_layout_decide(&(struct hvt_nvme_layout_sizes) { 280, 0 }, "5.10.0-46-amd64", &l);
        ck_assert_int_eq(l.source, HVT_LAYOUT_TABLE);
        ck_assert_str_eq(l.table_row, "5.10");
        ck_assert_uint_eq(l.sizes.nvme_iod, 152);
        ck_assert_uint_eq(l.request_bytes, 448);
        /* No BTF at all: the row. */
        hvt_nvme_layout_decide(NULL, "6.12.118+deb13-amd64", &l);
        ck_assert_int_eq(l.source, HVT_LAYOUT_TABLE);
        ck_assert_uint_eq(l.request_bytes, 512);
        /* A BTF that disagrees with the row: not that row's kernel, so at most an assumption:
         * its own struct request, the row's nvme_iod. */
        hvt_nvme_layout_decide(&(struct hvt_nvme_layout_sizes) { 272, 0 }, "5.10.0-46-amd64", &l);
        ck_assert_int_eq(l.source, HVT_LAYOUT_ASSUMED);
        ck_assert_uint_eq(l.sizes.request, 272);
        ck_assert_uint_eq(l.sizes.nvme_iod, 152);
        ck_assert_uint_eq(l.request_bytes, 448);
        /* A distribution's own numbering, a version without a row: the nearest row, assumed. */
        hvt_nvme_layout_decide(NULL, "5.14.21-150500.55.65-azure", &l);
        ck_assert_int_eq(l.source, HVT_LAYOUT_ASSUMED);
        ck_assert_str_eq(l.table_row, "5.10");
        hvt_nvme_layout_decide(NULL, "6.6.0-1-amd64", &l);
        ck_assert_int_eq(l.source, HVT_LAYOUT_ASSUMED);
        ck_assert_str_eq(l.table_row, "6.1");
        /* Azure's v6 testbed: 6.14, vmlinux BTF with struct request 272, no nvme module BTF.
         * 6.12's nvme_iod (208): 480 -> 512; the rows make it 448 (5.10, 6.1) to 512. */
        hvt_nvme_layout_decide(&(struct hvt_nvme_layout_sizes) { 272, 0 }, "6.14.0-1012-azure", &l);
        ck_assert_int_eq(l.source, HVT_LAYOUT_ASSUMED);
        ck_assert_str_eq(l.table_row, "6.12");
        ck_assert_uint_eq(l.request_bytes, 512);
        ck_assert_uint_eq(l.request_lo, 448);
        ck_assert_uint_eq(l.request_hi, 512);
        ck_assert_uint_eq(l.n_rows, 4);
        {
                char text[96];

                hvt_nvme_layout_describe(&l, text, sizeof(text));
                ck_assert_str_eq(text, "assumed 6.12 (448 to 512 bytes across 5.10-7.3)");
        }
        /* Older than every row, no release, a size no kernel has: unknown. */
        hvt_nvme_layout_decide(NULL, "4.18.0-553.el8_10.x86_64", &l);
        ck_assert_int_eq(l.source, HVT_LAYOUT_UNKNOWN);
        hvt_nvme_layout_decide(NULL, NULL, &l);
        ck_assert_int_eq(l.source, HVT_LAYOUT_UNKNOWN);
        hvt_nvme_layout_decide(&(struct hvt_nvme_layout_sizes) { 5000, 0 }, "6.14.0-1012-azure", &l);
        ck_assert_int_eq(l.source, HVT_LAYOUT_UNKNOWN);
        ck_assert_uint_eq(l.request_bytes, 0);
}
END_TEST

static void mkdirs(const char *root, const char *path) {
        char full[4096];

        snprintf(full, sizeof(full), "%s/%s", root, path);
        for (char *p = full + strlen(root) + 1; (p = strchr(p, '/')); p++) {
                *p = '\0';
                (void) mkdir(full, 0755);
                *p = '/';
        }
        ck_assert(mkdir(full, 0755) == 0 || errno == EEXIST);
}

static void put(char *root, const char *path, const char *text) {
        char *slash = strrchr(path, '/');
        char dir[4096];

        snprintf(dir, sizeof(dir), "%.*s", (int) (slash - path), path);
        mkdirs(root, dir);
        free(test_write_file(root, path, text));
}

/* A class directory as the kernel lays it out (the entries are directories here, links there):
 *   nvme0: the accelerator with a namespace of 8 hw queues of 1023 tags (its queue_count and
 *          sqsize say 4 and 255: the namespace's tag set is what is read);
 *   nvme1: QEMU's controller: not Azure's, left out;
 *   nvme2: a Direct Disk v2 without a namespace: queue_count 5 (4 I/O queues), sqsize 1023;
 *   nvme10: the accelerator over TCP, its namespace a multipath path (nvme10c10n1) beside the
 *          head's name (no mq/): not on the PCI driver;
 *   nvme3: a Direct Disk whose figures cannot be read. */
START_TEST(test_scan) {
        char root[64] = "/tmp/hvtuned-test.XXXXXX", cls[128];
        struct hvt_nvme_controllers c = {};
        unsigned depth = 0;

        ck_assert_ptr_nonnull(mkdtemp(root));

        put(root, "nvme0/model", "MSFT NVMe Accelerator v1.0              \n");
        put(root, "nvme0/transport", "pcie\n");
        put(root, "nvme0/state", "live\n");
        put(root, "nvme0/queue_count", "5\n");
        put(root, "nvme0/sqsize", "255\n");
        for (int i = 0; i < 8; i++) {
                char p[64];

                snprintf(p, sizeof(p), "nvme0/nvme0n1/mq/%d/nr_tags", i);
                put(root, p, "1023\n");
        }
        put(root, "nvme1/model", "QEMU NVMe Ctrl                          \n");
        put(root, "nvme1/queue_count", "9\n");
        put(root, "nvme1/sqsize", "1023\n");
        put(root, "nvme2/model", "Microsoft NVMe Direct Disk v2           \n");
        put(root, "nvme2/transport", "pcie\n");
        put(root, "nvme2/state", "connecting\n");
        put(root, "nvme2/queue_count", "5\n");
        put(root, "nvme2/sqsize", "1023\n");
        put(root, "nvme10/model", "MSFT NVMe Accelerator v1.0\n");
        put(root, "nvme10/transport", "tcp\n");
        put(root, "nvme10/state", "live\n");
        put(root, "nvme10/nvme10c10n1/mq/0/nr_tags", "127\n");
        put(root, "nvme10/nvme10c10n1/mq/1/nr_tags", "127\n");
        mkdirs(root, "nvme10/nvme1n1");
        put(root, "nvme3/model", "Microsoft NVMe Direct Disk\n");
        put(root, "nvme3/transport", "pcie\n");

        snprintf(cls, sizeof(cls), "%s", root);
        ck_assert_int_eq(hvt_nvme_controllers_scan(cls, &c), 0);
        ck_assert_uint_eq(c.n, 4);
        ck_assert_str_eq(c.v[0].name, "nvme0");
        ck_assert_int_eq(c.v[0].kind, HVT_KIND_NVME_ACCELERATOR);
        ck_assert_str_eq(c.v[0].model, "MSFT NVMe Accelerator v1.0");
        ck_assert(c.v[0].pcie && c.v[0].live);
        ck_assert_int_eq(c.v[0].figures, HVT_NVME_FIGURES_NAMESPACE);
        ck_assert_uint_eq(c.v[0].nr_io_queues, 8);
        ck_assert_uint_eq(c.v[0].q_depth, 1024);
        ck_assert_str_eq(c.v[1].name, "nvme2");
        ck_assert_int_eq(c.v[1].kind, HVT_KIND_NVME_DIRECT_V2);
        ck_assert(c.v[1].pcie && !c.v[1].live);
        ck_assert_int_eq(c.v[1].figures, HVT_NVME_FIGURES_CONTROLLER);
        ck_assert_uint_eq(c.v[1].nr_io_queues, 4);
        ck_assert_uint_eq(c.v[1].q_depth, 1024);
        ck_assert_str_eq(c.v[2].name, "nvme3");
        ck_assert_int_eq(c.v[2].kind, HVT_KIND_NVME_DIRECT);
        ck_assert_int_eq(c.v[2].figures, HVT_NVME_FIGURES_NONE);
        ck_assert_str_eq(c.v[3].name, "nvme10");
        ck_assert(!c.v[3].pcie);
        ck_assert_int_eq(c.v[3].figures, HVT_NVME_FIGURES_NAMESPACE);
        ck_assert_uint_eq(c.v[3].nr_io_queues, 2);
        ck_assert_uint_eq(c.v[3].q_depth, 128);
        hvt_nvme_controllers_done(&c);
        ck_assert_uint_eq(c.n, 0);

        /* No class directory: no NVMe driver, no controller. */
        snprintf(cls, sizeof(cls), "%s/none", root);
        ck_assert_int_eq(hvt_nvme_controllers_scan(cls, &c), 0);
        ck_assert_uint_eq(c.n, 0);

        /* The parameter. */
        put(root, "param/io_queue_depth", "1024\n");
        put(root, "param/bad", "x\n");
        snprintf(cls, sizeof(cls), "%s/param/io_queue_depth", root);
        ck_assert_int_eq(hvt_nvme_io_queue_depth_read(cls, &depth), 0);
        ck_assert_uint_eq(depth, 1024);
        snprintf(cls, sizeof(cls), "%s/param/bad", root);
        ck_assert_int_eq(hvt_nvme_io_queue_depth_read(cls, &depth), -EBADMSG);
        snprintf(cls, sizeof(cls), "%s/param/none", root);
        ck_assert_int_eq(hvt_nvme_io_queue_depth_read(cls, &depth), -ENOENT);
}
END_TEST

int main(void) {
        Suite *s = suite_create("nvme-estimate");
        TCase *tc = tcase_create("nvme");

        tcase_add_test(tc, test_request_bytes);
        tcase_add_test(tc, test_estimate);
        tcase_add_test(tc, test_decide);
        tcase_add_test(tc, test_scan);
        suite_add_tcase(s, tc);
        return test_run(s);
}
