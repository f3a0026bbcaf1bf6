/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: hvtuned's figures as Prometheus text exposition (see metrics.h).
 *
 * Names follow Prometheus's conventions: the hvtuned_ prefix, base units (bytes, seconds),
 * _total on counters, and one metric per quantity with what varies in labels. Counters count
 * from the start of this hvtuned; Prometheus's rate() and increase() take restarts in their
 * stride. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

static void header(FILE *f, const char *name, const char *type, const char *help) {
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value as the exposition format quotes it: backslash, quote and newline escaped. */
static void label_value(FILE *f, const char *v) {
        for (; *v; v++) {
                if (*v == '\\' || *v == '"')
                        fputc('\\', f);
                if (*v == '\n')
                        fputs("\\n", f);
                else
                        fputc(*v, f);
        }
}

static void controller_labels(FILE *f, const struct hvt_metrics_controller *c) {
        fprintf(f, "{host=\"host%u\",controller=\"", c->host);
        label_value(f, c->controller);
        fprintf(f, "\",kind=\"%s\"}", hvt_kind_to_string(c->kind));
}

static void per_controller(FILE *f, const struct hvt_metrics *m, const char *name, const char *help,
                           uint64_t (*value)(const struct hvt_metrics_controller *c)) {
        if (m->n_controllers == 0)
                return;
        header(f, name, "gauge", help);
        for (size_t i = 0; i < m->n_controllers; i++) {
                fputs(name, f);
                controller_labels(f, &m->controllers[i]);
                fprintf(f, " %" PRIu64 "\n", value(&m->controllers[i]));
        }
}

static void per_controller_ratio(FILE *f, const struct hvt_metrics *m, const char *name, const char *help) {
        if (m->n_controllers == 0)
                return;
        header(f, name, "gauge", help);
        for (size_t i = 0; i < m->n_controllers; i++) {
                fputs(name, f);
                controller_labels(f, &m->controllers[i]);
                fprintf(f, " %u.%02u\n", m->controllers[i].band_pct / 100, m->controllers[i].band_pct % 100);
        }
}

static uint64_t hw_queues(const struct hvt_metrics_controller *c) { return c->nr_hw_queues; }
static uint64_t can_queue(const struct hvt_metrics_controller *c) { return c->can_queue; }
static uint64_t bytes(const struct hvt_metrics_controller *c) { return c->bytes; }
static uint64_t capped_bytes(const struct hvt_metrics_controller *c) { return c->capped_bytes; }

/* An attribute's lines appear once it has been contested, with both decisions: a series that
 * exists reads 0, not "no data", when the contest is over. */
static void per_attribute(FILE *f, const struct hvt_metrics *m, const char *name, const char *type,
                          const char *help, bool counts) {
        static const char *const decision[2] = { "yield", "insist" };
        bool any = false;

        for (unsigned id = 0; id < _HVT_ATTR_DISK_MAX; id++) {
                char attr[48];

                if (m->contests[id][0] + m->contests[id][1] == 0)
                        continue;
                if (!any)
                        header(f, name, type, help);
                any = true;
                (void) hvt_attr_format_path((enum hvt_attr_id) id, attr, sizeof(attr));
                for (unsigned p = 0; p < 2; p++)
                        fprintf(f, "%s{attribute=\"%s\",decision=\"%s\"} %" PRIu64 "\n", name, attr, decision[p],
                                counts ? m->contests[id][p] : m->contested[id][p]);
        }
}

static uint64_t nvme_queues(const struct hvt_metrics_nvme *c) { return c->nr_io_queues; }
static uint64_t nvme_depth(const struct hvt_metrics_nvme *c) { return c->q_depth; }
static uint64_t nvme_bytes(const struct hvt_metrics_nvme *c) { return c->bytes; }

/* An NVMe controller's gauge, labelled by its name and kind; only_known leaves out those
 * whose value is 0 (no estimate: no figure rather than a 0 that reads as one). */
static void per_nvme(FILE *f, const struct hvt_metrics *m, const char *name, const char *help,
                     uint64_t (*value)(const struct hvt_metrics_nvme *c), bool only_known) {
        bool any = false;

        for (size_t i = 0; i < m->n_nvme; i++)
                any = any || !only_known || value(&m->nvme[i]) > 0;
        if (!any)
                return;
        header(f, name, "gauge", help);
        for (size_t i = 0; i < m->n_nvme; i++) {
                if (only_known && value(&m->nvme[i]) == 0)
                        continue;
                fprintf(f, "%s{controller=\"", name);
                label_value(f, m->nvme[i].controller);
                fprintf(f, "\",kind=\"%s\"} %" PRIu64 "\n", hvt_kind_to_string(m->nvme[i].kind), value(&m->nvme[i]));
        }
}

/* With an assumed NVMe layout: each controller with an estimate, its band as a ratio. */
static void per_nvme_ratio(FILE *f, const struct hvt_metrics *m, const char *name, const char *help) {
        bool any = false;

        for (size_t i = 0; i < m->n_nvme; i++)
                any = any || m->nvme[i].bytes > 0;
        if (!any)
                return;
        header(f, name, "gauge", help);
        for (size_t i = 0; i < m->n_nvme; i++) {
                if (m->nvme[i].bytes == 0)
                        continue;
                fprintf(f, "%s{controller=\"", name);
                label_value(f, m->nvme[i].controller);
                fprintf(f, "\",kind=\"%s\"} %u.%02u\n", hvt_kind_to_string(m->nvme[i].kind), m->nvme[i].band_pct / 100,
                        m->nvme[i].band_pct % 100);
        }
}

static void render(const struct hvt_metrics *m, FILE *f) {
        header(f, "hvtuned_build_info", "gauge", "hvtuned's version, as a label; always 1.");
        fputs("hvtuned_build_info{version=\"", f);
        label_value(f, m->version);
        fputs("\"} 1\n", f);

        header(f, "hvtuned_disks", "gauge",
               "Azure and Hyper-V disks hvtuned manages, by result: tuned (every managed attribute has its value "
               "or is unsupported) or failed.");
        fprintf(f, "hvtuned_disks{result=\"tuned\"} %u\n", m->disks_tuned);
        fprintf(f, "hvtuned_disks{result=\"failed\"} %u\n", m->disks_failed);
        header(f, "hvtuned_disks_managed", "gauge",
               "Disks hvtuned manages, by kind (storvsc's scsi, ide, fc; Azure's nvme-accelerator, nvme-direct, "
               "nvme-direct-v2) and role (os, data, resource, local, other); only the pairs present.");
        for (size_t k = 0; k < _HVT_KIND_MAX; k++)
                for (size_t r = 0; r < _HVT_ROLE_MAX; r++)
                        if (m->disks_by[k][r] > 0)
                                fprintf(f, "hvtuned_disks_managed{kind=\"%s\",role=\"%s\"} %u\n",
                                        hvt_kind_to_string((enum hvt_kind) k), hvt_role_to_string((enum hvt_role) r),
                                        m->disks_by[k][r]);
        header(f, "hvtuned_disks_repairs_paused", "gauge",
               "Managed disks whose settings were reverted too often: repairs wait for the window to end.");
        fprintf(f, "hvtuned_disks_repairs_paused %u\n", m->disks_paused);

        per_attribute(f, m, "hvtuned_contests_total", "counter",
                      "Attributes found contested: another program kept writing them back (a udev rule, a "
                      "tuning daemon, an agent), by attribute and what hvtuned did (contested in hvtuned.conf).",
                      true);
        per_attribute(f, m, "hvtuned_attributes_contested", "gauge",
                      "Disks whose attribute is contested now: left to the other program (yield), or still "
                      "repaired (insist).", false);

        header(f, "hvtuned_attributes", "gauge",
               "Managed attributes of all managed disks, by the result of their last pass.");
        /* A managed attribute's: a dry run's, a knock-on's or a left one's are none. */
        for (int o = 0; o < HVT_WOULD_APPLY; o++)
                fprintf(f, "hvtuned_attributes{result=\"%s\"} %u\n",
                        hvt_outcome_to_string((enum hvt_outcome) o), m->attributes[o]);

        header(f, "hvtuned_drift_repairs_total", "counter",
               "Attributes written again after something else changed them.");
        fprintf(f, "hvtuned_drift_repairs_total %" PRIu64 "\n", m->repairs);
        /* The same repairs by whose write they undid: their sum is the total above, which
         * stays as it was for the dashboards that read it. */
        header(f, "hvtuned_drift_repairs_by_writer_total", "counter",
               "Drift repairs by who wrote the value undone: the kernel re-applying its own read-ahead "
               "(kernel), or another program or person (other).");
        fprintf(f, "hvtuned_drift_repairs_by_writer_total{writer=\"kernel\"} %" PRIu64 "\n", m->kernel_repairs);
        fprintf(f, "hvtuned_drift_repairs_by_writer_total{writer=\"other\"} %" PRIu64 "\n",
                m->repairs - m->kernel_repairs);
        header(f, "hvtuned_busy_retries_total", "counter",
               "Disk passes run again because the kernel answered a scheduler or nr_requests write EBUSY "
               "(another change of the controller's queues under way).");
        fprintf(f, "hvtuned_busy_retries_total %" PRIu64 "\n", m->busy_retries);
        header(f, "hvtuned_config_reloads_total", "counter", "Configuration reloads (SIGHUP).");
        fprintf(f, "hvtuned_config_reloads_total %" PRIu64 "\n", m->reloads);
        header(f, "hvtuned_config_reload_failures_total", "counter",
               "Configuration reloads refused (the previous configuration kept running).");
        fprintf(f, "hvtuned_config_reload_failures_total %" PRIu64 "\n", m->reload_failures);
        if (m->last_reload_usec > 0) {
                header(f, "hvtuned_config_last_reload_success", "gauge",
                       "Whether the last configuration reload was taken (1) or refused (0).");
                fprintf(f, "hvtuned_config_last_reload_success %d\n", m->last_reload_ok);
                header(f, "hvtuned_config_last_reload_timestamp_seconds", "gauge",
                       "When the last configuration reload happened, in seconds since the epoch.");
                fprintf(f, "hvtuned_config_last_reload_timestamp_seconds %" PRIu64 ".%06" PRIu64 "\n",
                        m->last_reload_usec / 1000000, m->last_reload_usec % 1000000);
        }

        header(f, "hvtuned_hw_queue_cap", "gauge",
               "The cap on hw queues asked of storvsc for controllers probed from now on; 0: none.");
        fprintf(f, "hvtuned_hw_queue_cap %u\n", m->cap);
        if (m->cap_support != HVT_CAP_UNKNOWN) {
                header(f, "hvtuned_hw_queue_cap_supported", "gauge",
                       "Whether this kernel's storvsc can cap hw queues (storvsc_max_hw_queues, 5.13 and later); "
                       "0: one per present CPU until a kernel update, and no memory to win back.");
                fprintf(f, "hvtuned_hw_queue_cap_supported %d\n", m->cap_support == HVT_CAP_SUPPORTED);
        }
        if (m->n_controllers > 0 && m->layout_source) {
                header(f, "hvtuned_request_layout_info", "gauge",
                       "Where the storvsc estimates' request layout comes from: btf, table (the release's own "
                       "row), assumed (the row named, nearest by version: each estimate within "
                       "hvtuned_controller_preallocated_error_ratio), unknown (no estimates).");
                fprintf(f, "hvtuned_request_layout_info{source=\"%s\",row=\"%s\"} 1\n", m->layout_source,
                        m->layout_row ? m->layout_row : "");
        }
        per_controller(f, m, "hvtuned_controller_hw_queues", "A storvsc controller's hw queues.", hw_queues);
        per_controller(f, m, "hvtuned_controller_can_queue",
                       "A storvsc controller's requests per hw queue (the SCSI host's can_queue).", can_queue);
        per_controller(f, m, "hvtuned_controller_preallocated_bytes",
                       "Memory a storvsc controller's preallocated requests hold (hvtuned's estimate).", bytes);
        per_controller(f, m, "hvtuned_controller_capped_preallocated_bytes",
                       "What they would hold once the controller is probed under the cap (hvtuned's estimate).",
                       capped_bytes);
        if (m->layout_source && strcmp(m->layout_source, "assumed") == 0)
                per_controller_ratio(f, m, "hvtuned_controller_preallocated_error_ratio",
                                     "With an assumed request layout: how far a controller's two estimates may be "
                                     "off, as every row of hvtuned's table would make them (0.08: 8%).");
        per_nvme(f, m, "hvtuned_nvme_controller_io_queues", "An Azure NVMe controller's I/O queues (hw queues).",
                 nvme_queues, false);
        per_nvme(f, m, "hvtuned_nvme_controller_queue_depth",
                 "An Azure NVMe controller's ring entries a queue (nvme.io_queue_depth or less; tags: one fewer).",
                 nvme_depth, false);
        per_nvme(f, m, "hvtuned_nvme_controller_preallocated_bytes",
                 "Memory an Azure NVMe controller's queues and preallocated requests hold (hvtuned's estimate).",
                 nvme_bytes, true);
        if (m->n_nvme > 0 && m->nvme_layout_source) {
                header(f, "hvtuned_nvme_request_layout_info", "gauge",
                       "Where the NVMe estimates' request layout comes from: btf, table, assumed (the row named: "
                       "each estimate within hvtuned_nvme_controller_preallocated_error_ratio), unknown.");
                fprintf(f, "hvtuned_nvme_request_layout_info{source=\"%s\",row=\"%s\"} 1\n", m->nvme_layout_source,
                        m->nvme_layout_row ? m->nvme_layout_row : "");
                if (strcmp(m->nvme_layout_source, "assumed") == 0)
                        per_nvme_ratio(f, m, "hvtuned_nvme_controller_preallocated_error_ratio",
                                       "With an assumed NVMe request layout: how far a controller's estimate may "
                                       "be off, as every row of hvtuned's table would make it (0.08: 8%).");
        }
}

int hvt_metrics_render(const struct hvt_metrics *m, char **ret) {
        size_t len = 0;
        FILE *f = open_memstream(ret, &len);

        if (!f)
                return -ENOMEM;
        render(m, f);
        if (fclose(f) != 0) {
                free(*ret);
                *ret = NULL;
                return -ENOMEM;
        }
        return 0;
}
