/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Prometheus text of lib/metrics.h: every metric with its HELP and TYPE, label values
 * escaped as the exposition format wants, controller metrics only when there are
 * controllers, the reload gauges only after a reload. (tests/prometheus checks the daemon's
 * file with promtool and a real Prometheus.) */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "testutil.h"

static char *render(const struct hvt_metrics *m) {
        char *text = NULL;

        ck_assert_int_eq(hvt_metrics_render(m, &text), 0);
        ck_assert_ptr_nonnull(text);
        return text;
}

static unsigned count(const char *text, const char *what) {
        unsigned n = 0;

        for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
                n++;
        return n;
}

START_TEST(test_every_metric_typed) {
        struct hvt_metrics m = { .version = "1.2.3", .disks_tuned = 3, .disks_failed = 1, .repairs = 7, .kernel_repairs = 2,
                                 .busy_retries = 5,
                                 .reloads = 2, .reload_failures = 1, .last_reload_usec = 1764790000123456,
                                 .last_reload_ok = false, .cap = 4 };
        char *text;

        m.attributes[HVT_APPLIED] = 5;
        m.attributes[HVT_WOULD_APPLY] = 9;
        m.disks_by[HVT_KIND_SCSI][HVT_ROLE_DATA] = 2;
        m.disks_by[HVT_KIND_NVME_ACCELERATOR][HVT_ROLE_OS] = 1;
        text = render(&m);
        ck_assert_ptr_nonnull(strstr(text, "hvtuned_disks_managed{kind=\"scsi\",role=\"data\"} 2\n"
                                           "hvtuned_disks_managed{kind=\"nvme-accelerator\",role=\"os\"} 1\n"));
        ck_assert_ptr_null(strstr(text, "role=\"local\""));  /* only the pairs present */
        ck_assert_ptr_nonnull(strstr(text, "hvtuned_build_info{version=\"1.2.3\"} 1\n"));
        ck_assert_ptr_nonnull(strstr(text, "hvtuned_disks{result=\"tuned\"} 3\nhvtuned_disks{result=\"failed\"} 1\n"));
        ck_assert_ptr_nonnull(strstr(text, "hvtuned_attributes{result=\"applied\"} 5\n"));
        /* A dry run's outcome is no state of a disk. */
        ck_assert_ptr_null(strstr(text, "would"));
        ck_assert_ptr_nonnull(strstr(text, "# TYPE hvtuned_drift_repairs_total counter\nhvtuned_drift_repairs_total 7\n"));
        /* The same 7 by writer: 2 of them the kernel's. */
        ck_assert_ptr_nonnull(strstr(text, "# TYPE hvtuned_drift_repairs_by_writer_total counter\n"
                                           "hvtuned_drift_repairs_by_writer_total{writer=\"kernel\"} 2\n"
                                           "hvtuned_drift_repairs_by_writer_total{writer=\"other\"} 5\n"));
        ck_assert_ptr_nonnull(strstr(text, "# TYPE hvtuned_busy_retries_total counter\nhvtuned_busy_retries_total 5\n"));
        ck_assert_ptr_nonnull(strstr(text, "hvtuned_config_last_reload_success 0\n"));
        ck_assert_ptr_nonnull(strstr(text, "hvtuned_config_last_reload_timestamp_seconds 1764790000.123456\n"));
        ck_assert_ptr_null(strstr(text, "hvtuned_controller_"));
        /* One HELP and one TYPE per metric name. */
        ck_assert_uint_eq(count(text, "# HELP "), count(text, "# TYPE "));
        ck_assert_uint_eq(count(text, "# TYPE "), 13);
        free(text);

        m.last_reload_usec = 0;
        text = render(&m);
        ck_assert_ptr_null(strstr(text, "last_reload"));
        free(text);
}
END_TEST

/* Per attribute, once it has been contested: both decisions, the counter and the gauge. */
START_TEST(test_contested_attributes) {
        struct hvt_metrics m = { .version = "1" };
        char *text;

        text = render(&m);
        ck_assert_ptr_null(strstr(text, "contest"));
        free(text);

        m.contests[HVT_ATTR_IO_TIMEOUT][0] = 3;      /* yielded on three disks */
        m.contested[HVT_ATTR_IO_TIMEOUT][0] = 2;     /* one of them since removed */
        m.contests[HVT_ATTR_READ_AHEAD_KB][1] = 1;   /* insisted on, its neighbour gone */
        text = render(&m);
        ck_assert_ptr_nonnull(strstr(text,
                "# TYPE hvtuned_contests_total counter\n"
                "hvtuned_contests_total{attribute=\"queue/read_ahead_kb\",decision=\"yield\"} 0\n"
                "hvtuned_contests_total{attribute=\"queue/read_ahead_kb\",decision=\"insist\"} 1\n"
                "hvtuned_contests_total{attribute=\"queue/io_timeout\",decision=\"yield\"} 3\n"
                "hvtuned_contests_total{attribute=\"queue/io_timeout\",decision=\"insist\"} 0\n"));
        ck_assert_ptr_nonnull(strstr(text,
                "# TYPE hvtuned_attributes_contested gauge\n"
                "hvtuned_attributes_contested{attribute=\"queue/read_ahead_kb\",decision=\"yield\"} 0\n"
                "hvtuned_attributes_contested{attribute=\"queue/read_ahead_kb\",decision=\"insist\"} 0\n"
                "hvtuned_attributes_contested{attribute=\"queue/io_timeout\",decision=\"yield\"} 2\n"
                "hvtuned_attributes_contested{attribute=\"queue/io_timeout\",decision=\"insist\"} 0\n"));
        ck_assert_ptr_null(strstr(text, "attribute=\"queue/scheduler\""));
        ck_assert_uint_eq(count(text, "# HELP "), count(text, "# TYPE "));
        free(text);
}
END_TEST

/* Azure's NVMe controllers: queues and depth for each, bytes only where there is an estimate. */
START_TEST(test_nvme) {
        const struct hvt_metrics_nvme nvme[] = {
                { "nvme0", HVT_KIND_NVME_ACCELERATOR, 8, 1024, 4559424, 9 },
                { "nvme1", HVT_KIND_NVME_DIRECT_V2, 4, 1024, 0, 0 },
        };
        struct hvt_metrics m = { .version = "1", .nvme = nvme, .n_nvme = 2 };
        char *text = render(&m);

        ck_assert_ptr_nonnull(strstr(text, "# TYPE hvtuned_nvme_controller_io_queues gauge\n"
                                           "hvtuned_nvme_controller_io_queues{controller=\"nvme0\",kind=\"nvme-accelerator\"} 8\n"
                                           "hvtuned_nvme_controller_io_queues{controller=\"nvme1\",kind=\"nvme-direct-v2\"} 4\n"));
        ck_assert_ptr_nonnull(strstr(text, "hvtuned_nvme_controller_queue_depth{controller=\"nvme1\",kind=\"nvme-direct-v2\"} 1024\n"));
        ck_assert_ptr_nonnull(strstr(text, "hvtuned_nvme_controller_preallocated_bytes{controller=\"nvme0\","
                                           "kind=\"nvme-accelerator\"} 4559424\n"));
        /* No estimate: no figure, rather than a 0 that reads as one. */
        ck_assert_uint_eq(count(text, "hvtuned_nvme_controller_preallocated_bytes{"), 1);
        ck_assert_uint_eq(count(text, "# HELP "), count(text, "# TYPE "));
        ck_assert_ptr_null(strstr(text, "hvtuned_nvme_request_layout_info"));  /* no layout read */
        free(text);

        /* An assumed layout: where from, and each estimate's band; none for no estimate. */
        m.nvme_layout_source = "assumed", m.nvme_layout_row = "6.12";
        text = render(&m);
        ck_assert_ptr_nonnull(strstr(text, "hvtuned_nvme_request_layout_info{source=\"assumed\",row=\"6.12\"} 1\n"));
        ck_assert_ptr_nonnull(strstr(text, "# TYPE hvtuned_nvme_controller_preallocated_error_ratio gauge\n"
                                           "hvtuned_nvme_controller_preallocated_error_ratio{controller=\"nvme0\","
                                           "kind=\"nvme-accelerator\"} 0.09\n"));
        ck_assert_uint_eq(count(text, "hvtuned_nvme_controller_preallocated_error_ratio{"), 1);
        ck_assert_uint_eq(count(text, "# HELP "), count(text, "# TYPE "));
        free(text);
        m.nvme_layout_source = "btf", m.nvme_layout_row = NULL;
        text = render(&m);
        ck_assert_ptr_nonnull(strstr(text, "hvtuned_nvme_request_layout_info{source=\"btf\",row=\"\"} 1\n"));
        ck_assert_ptr_null(strstr(text, "# TYPE hvtuned_nvme_controller_preallocated_error_ratio"));
        free(text);
        m.nvme_layout_source = NULL;

        /* None with an estimate: no preallocated_bytes family at all. */
        m.n_nvme = 1;
        m.nvme = nvme + 1;
        text = render(&m);
        ck_assert_ptr_null(strstr(text, "hvtuned_nvme_controller_preallocated_bytes"));
        ck_assert_ptr_nonnull(strstr(text, "hvtuned_nvme_controller_io_queues{"));
        free(text);

        /* No NVMe controller: no NVMe metric. */
        m.n_nvme = 0;
        text = render(&m);
        ck_assert_ptr_null(strstr(text, "hvtuned_nvme_"));
        free(text);
}
END_TEST

START_TEST(test_controllers_and_escaping) {
        const struct hvt_metrics_controller c[] = {
                { .host = 0, .controller = "{f8b3781a-1e82-4818-a1c3-63d806ec15bb}", .kind = HVT_KIND_SCSI,
                  .nr_hw_queues = 32, .can_queue = 2534, .bytes = 101294080, .capped_bytes = 12661760, .band_pct = 8 },
                { .host = 7, .controller = "a\"b\\c\nd", .kind = HVT_KIND_IDE, .nr_hw_queues = 1, .can_queue = 1,
                  .bytes = 1, .capped_bytes = 1 },
        };
        struct hvt_metrics m = { .version = "v\"1", .controllers = c, .n_controllers = 2 };
        char *text = render(&m);

        ck_assert_ptr_nonnull(strstr(text, "hvtuned_build_info{version=\"v\\\"1\"} 1\n"));
        ck_assert_ptr_nonnull(strstr(text,
                "hvtuned_controller_preallocated_bytes{host=\"host0\",controller=\"{f8b3781a-1e82-4818-a1c3-63d806ec15bb}\",kind=\"scsi\"} 101294080\n"
                "hvtuned_controller_preallocated_bytes{host=\"host7\",controller=\"a\\\"b\\\\c\\nd\",kind=\"ide\"} 1\n"));
        ck_assert_ptr_nonnull(strstr(text, "kind=\"scsi\"} 12661760\n"));
        ck_assert_uint_eq(count(text, "# TYPE hvtuned_controller_"), 4);
        ck_assert_ptr_null(strstr(text, "hvtuned_request_layout"));  /* no layout read: nothing said */
        free(text);

        /* From BTF: where the figures come from, no band. */
        m.layout_source = "btf";
        text = render(&m);
        ck_assert_ptr_nonnull(strstr(text, "# TYPE hvtuned_request_layout_info gauge\n"
                                           "hvtuned_request_layout_info{source=\"btf\",row=\"\"} 1\n"));
        ck_assert_ptr_null(strstr(text, "# TYPE hvtuned_controller_preallocated_error_ratio"));
        free(text);
        /* Assumed: the row, and how far off each controller's estimates may be. */
        m.layout_source = "assumed", m.layout_row = "6.12";
        text = render(&m);
        ck_assert_ptr_nonnull(strstr(text, "hvtuned_request_layout_info{source=\"assumed\",row=\"6.12\"} 1\n"));
        ck_assert_ptr_nonnull(strstr(text, "# TYPE hvtuned_controller_preallocated_error_ratio gauge\n"
                "hvtuned_controller_preallocated_error_ratio{host=\"host0\",controller=\"{f8b3781a-1e82-4818-a1c3-63d806ec15bb}\",kind=\"scsi\"} 0.08\n"
                "hvtuned_controller_preallocated_error_ratio{host=\"host7\",controller=\"a\\\"b\\\\c\\nd\",kind=\"ide\"} 0.00\n"));
        free(text);
}
END_TEST

int main(void) {
        Suite *s = suite_create("metrics");
        TCase *tc = tcase_create("render");

        tcase_add_test(tc, test_every_metric_typed);
        tcase_add_test(tc, test_controllers_and_escaping);
        tcase_add_test(tc, test_contested_attributes);
        tcase_add_test(tc, test_nvme);
        suite_add_tcase(s, tc);
        return test_run(s);
}
