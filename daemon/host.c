/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the controllers' queues as a whole (see host.h).
 *
 * storvsc reads storvsc_max_hw_queues (driver.c) only when it probes a controller, so the cap
 * helps every controller probed later and none probed before: the report says which
 * controllers still hold queues over the cap, what that costs, and the boot-time setting that
 * would cap them from the start. hvtuned never edits the bootloader or /etc. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootadvice.h"
#include "host.h"
#include "hwqueues.h"
#include "macro.h"
#include "messages.h"
#include "report.h"
#include "sysfs.h"

#define MODULE_DIR HVT_DRIVER_SYSPATH
#define CMDLINE "/proc/cmdline"
#define BTF_DIR "/sys/kernel/btf"
#define OSRELEASE "/proc/sys/kernel/osrelease"
#define NVME_CLASS "/sys/class/nvme"
#define NVME_DEPTH_PARAM "/sys/module/nvme/parameters/io_queue_depth"

void hvt_host_done(struct hvt_host *h) {
        hvt_controllers_done(&h->controllers);
        hvt_nvme_controllers_done(&h->nvme);
        hvt_nvme_controllers_done(&h->nvme_told);
}

static void unreadable(const char *sysname, int error, void *userdata) {
        struct hvt_daemon *d = userdata;

        if (error != -EOPNOTSUPP)
                (void) hvt_log_errno(&d->log, LOG_WARNING, error, "%s: cannot read its storvsc queue figures: %m",
                                     sysname);
        else if (!d->host.no_figures_told) {
                hvt_log_info(&d->log, "This kernel does not report the hw queues of a SCSI host "
                             "(nr_hw_queues came in 5.10): no queue figures, no estimates");
                d->host.no_figures_told = true;
        }
}

static void nvme_read_layout(struct hvt_daemon *d);

/* The layout is read with the first Azure controller found, whichever path finds it, so that
 * every figure made from the list (report, metrics, summary) has it. */
static void nvme_scan(struct hvt_daemon *d) {
        int r = hvt_nvme_controllers_scan(NVME_CLASS, &d->host.nvme);

        if (r < 0)
                (void) hvt_log_errno(&d->log, LOG_WARNING, r, "Cannot enumerate NVMe controllers: %m");
        if (d->host.nvme.n > 0)
                nvme_read_layout(d);
}

int hvt_host_scan(struct hvt_daemon *d) {
        int r = hvt_controllers_scan(&d->host.controllers, unreadable, d);

        /* As NVMe's: storvsc's request layout is said with its first controller, the only
         * thing it is about; a VM without storvsc hears nothing of it. */
        if (d->host.controllers.n > 0)
                hvt_host_read_layout(d);

        /* Even when the SCSI hosts cannot be listed: a VM of the newest sizes has none. */
        nvme_scan(d);
        if (r < 0)
                return hvt_log_errno(&d->log, LOG_ERR, r, "Cannot enumerate SCSI hosts: %m");
        return 0;
}

/* The estimate for a controller with these queues; 0 for an unknown layout. */
static uint64_t estimate(const struct hvt_host *h, unsigned nr_hw_queues, unsigned can_queue) {
        return hvt_hwq_estimate_bytes(h->layout.request_bytes, nr_hw_queues, can_queue);
}

static bool layout_known(const struct hvt_host *h) {
        return h->layout.request_bytes > 0;
}

uint64_t hvt_host_estimate(const struct hvt_daemon *d, unsigned nr_hw_queues, unsigned can_queue) {
        return estimate(&d->host, nr_hw_queues, can_queue);
}

/* The estimate of qa queues of cqa requests, less that of qb of cqb (qb 0: nothing less), at
 * each row's request size. */
static size_t estimates_per_row(const struct hvt_host *h, unsigned qa, unsigned cqa, unsigned qb, unsigned cqb,
                                uint64_t *ret) {
        const struct hvt_layout *l = &h->layout;

        for (size_t i = 0; i < l->n_rows; i++) {
                uint64_t a = hvt_hwq_estimate_bytes(l->row_bytes[i], qa, cqa);
                uint64_t b = qb > 0 ? hvt_hwq_estimate_bytes(l->row_bytes[i], qb, cqb) : 0;

                ret[i] = a > b ? a - b : 0;
        }
        return l->n_rows;
}

unsigned hvt_host_band(const struct hvt_daemon *d, unsigned qa, unsigned cqa, unsigned qb, unsigned cqb) {
        const struct hvt_host *h = &d->host;
        uint64_t others[HVT_LAYOUT_ROWS_MAX], a, b;
        size_t n;

        if (h->layout.source != HVT_LAYOUT_ASSUMED)
                return 0;
        n = estimates_per_row(h, qa, cqa, qb, cqb, others);
        a = estimate(h, qa, cqa);
        b = qb > 0 ? estimate(h, qb, cqb) : 0;
        return hvt_layout_band_pct(a > b ? a - b : 0, others, n);
}

/* What an estimate on an assumed layout (storvsc's or NVMe's) says after its figure. */
static void layout_note(enum hvt_layout_source source, const char *row, const char *rows, unsigned band, bool full,
                        char *buf, size_t size) {
        if (source != HVT_LAYOUT_ASSUMED)
                buf[0] = '\0';
        else if (full)
                snprintf(buf, size, " (assumed %s's layout, +/-%u%% across %s)", row, band, rows);
        else
                snprintf(buf, size, " (assumed %s's layout, +/-%u%%)", row, band);
}

void hvt_host_layout_note(const struct hvt_daemon *d, unsigned band, bool full, char *buf, size_t size) {
        const struct hvt_layout *l = &d->host.layout;

        layout_note(l->source, l->table_row, l->band_rows, band, full, buf, size);
}

/* HVTUNED_LAYOUT's value, and the metrics' source label. */
static const char *source_value(enum hvt_layout_source source) {
        switch (source) {
        case HVT_LAYOUT_BTF:
                return "btf";
        case HVT_LAYOUT_TABLE:
                return "table";
        case HVT_LAYOUT_ASSUMED:
                return "assumed";
        default:
                return "unknown";
        }
}

void hvt_host_read_layout(struct hvt_daemon *d) {
        struct hvt_layout *l = &d->host.layout;
        const struct hvt_layout_sizes *s = &l->sizes;
        char from[32];

        if (d->host.layout_read)
                return;
        d->host.layout_read = true;
        hvt_layout_read(BTF_DIR, OSRELEASE, l);
        hvt_layout_describe(l, from, sizeof(from));
        if (l->source == HVT_LAYOUT_UNKNOWN)
                (void) hvt_log_struct(&d->log, LOG_INFO, 0, NULL,
                                      HVT_FIELDS(HVT_FIELD("HVTUNED_LAYOUT=%s", "unknown")),
                                      "Unknown request layout: no BTF in " BTF_DIR " has struct request, scsi_cmnd, "
                                      "storvsc_cmd_request and scatterlist, and no row of hvtuned's table can be "
                                      "assumed for this kernel (its release is older than every row, 5.10, or "
                                      "unreadable): no memory estimates");
        else if (l->source == HVT_LAYOUT_ASSUMED)
                (void) hvt_log_struct(&d->log, LOG_INFO, 0, NULL,
                                      HVT_FIELDS(HVT_FIELD("HVTUNED_LAYOUT=%s", "assumed"),
                                                 HVT_FIELD("HVTUNED_LAYOUT_ROW=%s", l->table_row),
                                                 HVT_FIELD("HVTUNED_REQUEST_BYTES=%u", l->request_bytes),
                                                 HVT_FIELD("HVTUNED_REQUEST_BYTES_MIN=%u", l->request_lo),
                                                 HVT_FIELD("HVTUNED_REQUEST_BYTES_MAX=%u", l->request_hi)),
                                      "Request layout assumed: no BTF in " BTF_DIR " has all of struct request, "
                                      "scsi_cmnd, storvsc_cmd_request and scatterlist, and this kernel is no "
                                      "upstream-numbered one of hvtuned's table, so %s's row fills in what BTF "
                                      "lacks: struct request %u + scsi_cmnd %u + storvsc_cmd_request %u + 2 x "
                                      "scatterlist %u, %u bytes a preallocated request; the rows %s would make it "
                                      "%u to %u, and each memory estimate says how far that moves it",
                                      l->table_row, s->request, s->scsi_cmnd, s->storvsc_cmd, s->scatterlist,
                                      l->request_bytes, l->band_rows, l->request_lo, l->request_hi);
        else
                (void) hvt_log_struct(&d->log, LOG_INFO, 0, NULL,
                                      HVT_FIELDS(HVT_FIELD("HVTUNED_LAYOUT=%s", l->source == HVT_LAYOUT_BTF ? "btf" : "table"),
                                                 HVT_FIELD("HVTUNED_REQUEST_BYTES=%u", l->request_bytes)),
                                      "Request layout (%s): struct request %u + scsi_cmnd %u + storvsc_cmd_request %u "
                                      "+ 2 x scatterlist %u, %u bytes a preallocated request",
                                      from, s->request, s->scsi_cmnd, s->storvsc_cmd, s->scatterlist, l->request_bytes);
}

/* The queues this controller would have under the cap: IDE has one, whatever the cap. */
static unsigned capped_queues(const struct hvt_driver *drv, const struct hvt_controller *c) {
        if (drv->target == 0 || c->kind == HVT_KIND_IDE || c->nr_hw_queues <= drv->target)
                return c->nr_hw_queues;
        return drv->target;
}

static bool over_cap(const struct hvt_driver *drv, const struct hvt_controller *c) {
        return capped_queues(drv, c) < c->nr_hw_queues;
}

/* A kernel before 5.13: storvsc has no storvsc_max_hw_queues, gives every SCSI controller one
 * hw queue per present CPU, and nothing but another kernel changes that. */
static bool cap_unsupported(const struct hvt_driver *drv) {
        return drv->cap_support == 0;
}

/* Whether the parameter holds the cap (or would, in a dry run): only then does a controller
 * probed from now on get it. When the write failed, only the boot-time setting still can;
 * when the parameter does not exist (before 5.13), nothing can. */
static bool cap_held(const struct hvt_driver *drv) {
        enum hvt_outcome o = drv->param_last.outcome;

        return o == HVT_APPLIED || o == HVT_UNCHANGED || o == HVT_WOULD_APPLY;
}

/* What capping gives back, with requests of request_bytes. */
static uint64_t reclaimable_at(const struct hvt_daemon *d, unsigned request_bytes, size_t *n_over) {
        const struct hvt_host *h = &d->host;
        uint64_t bytes = 0;

        *n_over = 0;
        for (size_t i = 0; i < h->controllers.n; i++) {
                const struct hvt_controller *c = &h->controllers.v[i];

                if (!over_cap(&d->driver, c))
                        continue;
                (*n_over)++;
                bytes += hvt_hwq_estimate_bytes(request_bytes, c->nr_hw_queues, c->can_queue) -
                         hvt_hwq_estimate_bytes(request_bytes, capped_queues(&d->driver, c), c->can_queue);
        }
        return bytes;
}

static uint64_t reclaimable(const struct hvt_daemon *d, size_t *n_over) {
        return reclaimable_at(d, d->host.layout.request_bytes, n_over);
}

/* How far the reclaimable figure may be off with an assumed layout; 0 otherwise. */
static unsigned reclaimable_band(const struct hvt_daemon *d) {
        const struct hvt_layout *l = &d->host.layout;
        uint64_t others[HVT_LAYOUT_ROWS_MAX];
        size_t n_over;

        if (l->source != HVT_LAYOUT_ASSUMED)
                return 0;
        for (size_t i = 0; i < l->n_rows; i++)
                others[i] = reclaimable_at(d, l->row_bytes[i], &n_over);
        return hvt_layout_band_pct(reclaimable(d, &n_over), others, l->n_rows);
}

bool hvt_host_has_storvsc(const struct hvt_daemon *d) {
        return d->host.controllers.n > 0;
}

void hvt_host_format_status(const struct hvt_daemon *d, char *buf, size_t size) {
        const struct hvt_host *h = &d->host;
        const struct hvt_driver *drv = &d->driver;
        size_t n_over;
        uint64_t bytes = reclaimable(d, &n_over);
        char note[64];

        hvt_host_layout_note(d, reclaimable_band(d), false, note, sizeof(note));
        if (drv->target == 0 || !hvt_host_has_storvsc(d))
                buf[0] = '\0';
        else if (n_over == 0)
                snprintf(buf, size, "hw queues: every controller within cap %u", drv->target);
        else if (cap_unsupported(drv))
                snprintf(buf, size, "hw queues: %zu controller%s over cap %u, which this kernel cannot apply",
                         n_over, n_over == 1 ? "" : "s", drv->target);
        else if (!layout_known(h))
                snprintf(buf, size, "hw queues: %zu controller%s over cap %u, reclaimable memory unknown (unknown layout)%s%s%s",
                         n_over, n_over == 1 ? "" : "s", drv->target,
                         cap_held(drv) ? "" : ", cap not set (", cap_held(drv) ? "" : strerror(drv->param_last.error),
                         cap_held(drv) ? "" : ")");
        else
                snprintf(buf, size, "hw queues: %zu controller%s over cap %u, ~%" PRIu64 " MiB reclaimable at next boot%s%s%s%s",
                         n_over, n_over == 1 ? "" : "s", drv->target, (bytes + 512 * 1024) / (1024 * 1024), note,
                         cap_held(drv) ? "" : ", cap not set (", cap_held(drv) ? "" : strerror(drv->param_last.error),
                         cap_held(drv) ? "" : ")");
}

/* The band of a controller's figures, now and under the cap: the larger. */
static unsigned controller_band(const struct hvt_daemon *d, const struct hvt_controller *c) {
        unsigned now = hvt_host_band(d, c->nr_hw_queues, c->can_queue, 0, 0);
        unsigned then = hvt_host_band(d, capped_queues(&d->driver, c), c->can_queue, 0, 0);

        return now > then ? now : then;
}

void hvt_host_metrics_layout(const struct hvt_daemon *d, struct hvt_metrics *m) {
        const struct hvt_layout *l = &d->host.layout;

        /* Read with the first pass over the controllers: before it, nothing is said. */
        if (!d->host.layout_read)
                return;
        m->layout_source = source_value(l->source);
        m->layout_row = l->source == HVT_LAYOUT_TABLE || l->source == HVT_LAYOUT_ASSUMED ? l->table_row : NULL;
}

void hvt_host_metrics_nvme_layout(const struct hvt_daemon *d, struct hvt_metrics *m) {
        const struct hvt_nvme_layout *l = &d->host.nvme_layout;

        /* Read with the first Azure NVMe controller: before it, nothing is said. */
        if (!d->host.nvme_layout_read)
                return;
        m->nvme_layout_source = source_value(l->source);
        m->nvme_layout_row = l->source == HVT_LAYOUT_TABLE || l->source == HVT_LAYOUT_ASSUMED ? l->table_row : NULL;
}

void hvt_host_metrics(const struct hvt_daemon *d, struct hvt_metrics_controller *ret) {
        const struct hvt_host *h = &d->host;
        const struct hvt_driver *drv = &d->driver;

        for (size_t i = 0; i < h->controllers.n; i++) {
                const struct hvt_controller *c = &h->controllers.v[i];

                ret[i] = (struct hvt_metrics_controller) {
                        .host = c->host,
                        .controller = c->controller,
                        .kind = c->kind,
                        .nr_hw_queues = c->nr_hw_queues,
                        .can_queue = c->can_queue,
                        .bytes = estimate(h, c->nr_hw_queues, c->can_queue),
                        /* Nothing comes back on a kernel that cannot cap: claim nothing. */
                        .capped_bytes = estimate(h, cap_unsupported(drv) ? c->nr_hw_queues : capped_queues(drv, c),
                                                 c->can_queue),
                        .capped_queues = capped_queues(drv, c),
                        .over_cap = over_cap(drv, c),
                        .band_pct = controller_band(d, c),
                };
        }
}

static void report_controller(struct hvt_daemon *d, const struct hvt_controller *c) {
        const struct hvt_host *h = &d->host;
        const struct hvt_driver *drv = &d->driver;
        unsigned capped = capped_queues(drv, c);
        uint64_t now = estimate(h, c->nr_hw_queues, c->can_queue);
        uint64_t then = cap_unsupported(drv) ? now : estimate(h, capped, c->can_queue);
        const struct hvt_layout *l = &h->layout;
        char s_now[48], s_then[48], held[128], tail[192], note[64];
        char f_layout[32], f_row[40], f_band[32], f_est[48], f_capped[48];
        const char *fields[6] = {};
        size_t n = 0;

        hvt_host_layout_note(d, controller_band(d, c), true, note, sizeof(note));
        if (layout_known(h)) {
                hvt_format_bytes(now, s_now + 1, sizeof(s_now) - 1);
                hvt_format_bytes(then, s_then + 1, sizeof(s_then) - 1);
                s_now[0] = s_then[0] = '~';
                snprintf(held, sizeof(held), "%s preallocated%s", s_now, note);
        } else {
                (void) hvt_strscpy(s_then, sizeof(s_then), "memory unknown");
                (void) hvt_strscpy(held, sizeof(held), "memory unknown (unknown layout)");
        }
        if (over_cap(drv, c) && cap_unsupported(drv))
                snprintf(tail, sizeof(tail), "over the cap of %u, which this kernel's storvsc cannot apply",
                         drv->target);
        else if (over_cap(drv, c))
                snprintf(tail, sizeof(tail), "over the cap of %u: %s with %u queues, once %s", drv->target,
                         s_then, capped, cap_held(drv) ? "re-probed" : "capped at boot (the module parameter does not hold it)");
        else if (c->kind == HVT_KIND_IDE)
                snprintf(tail, sizeof(tail), "IDE has a single queue, never capped");
        else if (drv->target == 0)
                snprintf(tail, sizeof(tail), "no cap applies");
        else
                snprintf(tail, sizeof(tail), "within the cap of %u", drv->target);
        /* Built here: a NULL in HVT_FIELDS() would end the list at the first field left out. */
        snprintf(f_layout, sizeof(f_layout), "HVTUNED_LAYOUT=%s", source_value(l->source));
        fields[n++] = f_layout;
        if (l->source == HVT_LAYOUT_ASSUMED) {
                snprintf(f_row, sizeof(f_row), "HVTUNED_LAYOUT_ROW=%s", l->table_row);
                snprintf(f_band, sizeof(f_band), "HVTUNED_EST_BAND_PCT=%u", controller_band(d, c));
                fields[n++] = f_row;
                fields[n++] = f_band;
        }
        /* No figure at all rather than a 0 that reads as one. */
        if (layout_known(h)) {
                snprintf(f_est, sizeof(f_est), "HVTUNED_EST_BYTES=%" PRIu64, now);
                snprintf(f_capped, sizeof(f_capped), "HVTUNED_EST_BYTES_CAPPED=%" PRIu64, then);
                fields[n++] = f_est;
                fields[n++] = f_capped;
        }
        fields[n] = NULL;
        (void) hvt_log_controller(&d->log, c, LOG_INFO, 0, HVT_MESSAGE_CONTROLLER,
                                  HVT_FIELDS(HVT_FIELD("HVTUNED_KIND=%s", hvt_kind_to_string(c->kind)),
                                             HVT_FIELD("HVTUNED_HW_QUEUES=%u", c->nr_hw_queues),
                                             HVT_FIELD("HVTUNED_CAN_QUEUE=%u", c->can_queue),
                                             HVT_FIELD("HVTUNED_OVER_CAP=%s", !over_cap(drv, c) ? "no" :
                                                       cap_unsupported(drv) ? "unsupported" : "yes"),
                                             fields[0], fields[1], fields[2], fields[3], fields[4]),
                                  "host%u (controller %s, %s): %u hw queue%s x %u requests, %s; %s",
                                  c->host, c->controller, hvt_kind_to_string(c->kind), c->nr_hw_queues,
                                  c->nr_hw_queues == 1 ? "" : "s", c->can_queue, held, tail);
}

static const char *layout_field(const struct hvt_daemon *d, char *buf, size_t size) {
        snprintf(buf, size, "HVTUNED_LAYOUT=%s", source_value(d->host.layout.source));
        return buf;
}

static const char *reclaimable_field(uint64_t bytes, char *buf, size_t size) {
        snprintf(buf, size, "HVTUNED_EST_BYTES_RECLAIMABLE=%" PRIu64, bytes);
        return buf;
}

/* The boot advice is said once a run, and again only when it changes (another cap after a
 * reload): 330 characters at every reload would bury what the reload did. */
static bool advice_is_new(struct hvt_daemon *d, const char *fix) {
        if (strcmp(d->host.advice_told, fix) == 0)
                return false;
        (void) hvt_strscpy(d->host.advice_told, sizeof(d->host.advice_told), fix);
        return true;
}

/* The fix that makes the cap apply at boot, to the controllers probed before hvtuned. */
static void report_advice(struct hvt_daemon *d) {
        const struct hvt_host *h = &d->host;
        const struct hvt_driver *drv = &d->driver;
        _cleanup_free_ char *cmdline = NULL;
        char cmd[64], now[128], fix[384], s_bytes[112], note[64], f_est[64], f_layout[48];
        struct hvt_boot_facts facts;
        bool module = access(MODULE_DIR "/initstate", F_OK) == 0;
        unsigned value = 0;
        size_t n_over;
        uint64_t bytes = reclaimable(d, &n_over);
        int r;

        if (n_over == 0)
                return;
        /* No parameter, no command-line option either: the parameter's report says so. */
        if (cap_unsupported(drv))
                return;
        r = hvt_read_file(CMDLINE, &cmdline);
        if (r >= 0)
                r = hvt_cmdline_max_hw_queues(cmdline, &value);
        if (r > 0) {
                snprintf(now, sizeof(now), "the kernel command line has hv_storvsc.storvsc_max_hw_queues=%u%s",
                         value, value > drv->present ? ", more than the present CPUs, which the kernel ignores" : "");
                snprintf(cmd, sizeof(cmd), "hv_storvsc.storvsc_max_hw_queues=%u", value);
        } else if (r == 0) {
                snprintf(now, sizeof(now), "the kernel command line does not set hv_storvsc.storvsc_max_hw_queues");
                cmd[0] = '\0';
        } else {
                snprintf(now, sizeof(now), "%s cannot be read or sets hv_storvsc.storvsc_max_hw_queues to no number (%s)",
                         CMDLINE, strerror(-r));
                (void) hvt_strscpy(cmd, sizeof(cmd), "?");
        }
        hvt_boot_facts_read("", module, &facts);
        hvt_boot_advice(&facts, drv->target, fix, sizeof(fix));
        if (!advice_is_new(d, fix))
                return;
        hvt_host_layout_note(d, reclaimable_band(d), false, note, sizeof(note));
        if (layout_known(h)) {
                s_bytes[0] = '~';
                hvt_format_bytes(bytes, s_bytes + 1, sizeof(s_bytes) - 1);
                (void) strncat(s_bytes, note, sizeof(s_bytes) - strlen(s_bytes) - 1);
        } else
                (void) hvt_strscpy(s_bytes, sizeof(s_bytes), "memory unknown: unknown layout,");
        (void) hvt_log_struct(&d->log, LOG_NOTICE, 0, HVT_MESSAGE_HWQ_ADVICE,
                              HVT_FIELDS(HVT_FIELD("HVTUNED_CMDLINE=%s", cmd),
                                         HVT_FIELD("HVTUNED_FIX=hv_storvsc.storvsc_max_hw_queues=%u", drv->target),
                                         HVT_FIELD("HVTUNED_BOOT=%s",
                                                   hvt_boot_kind_to_string(hvt_boot_choose(&facts))),
                                         layout_field(d, f_layout, sizeof(f_layout)),
                                         layout_known(h) ? reclaimable_field(bytes, f_est, sizeof(f_est)) : NULL),
                              "%zu controller%s probed before the cap keep%s %s queues %s (%s "
                              "reclaimable); %s. To cap them from boot: %s",
                              n_over, n_over == 1 ? "" : "s", n_over == 1 ? "s" : "", n_over == 1 ? "its" : "their",
                              cap_held(drv) ? "until re-probed" : "even re-probed, as the module parameter does not hold the cap",
                              s_bytes, now, fix);
}

/* Once, when the first Azure NVMe controller is seen: the NVMe request layout, said. */
static void nvme_read_layout(struct hvt_daemon *d) {
        struct hvt_nvme_layout *l = &d->host.nvme_layout;
        char from[32];

        if (d->host.nvme_layout_read)
                return;
        d->host.nvme_layout_read = true;
        hvt_nvme_layout_read(BTF_DIR, OSRELEASE, l);
        hvt_nvme_layout_describe(l, from, sizeof(from));
        if (l->source == HVT_LAYOUT_UNKNOWN)
                (void) hvt_log_struct(&d->log, LOG_INFO, 0, NULL,
                                      HVT_FIELDS(HVT_FIELD("HVTUNED_LAYOUT=%s", "unknown")),
                                      "Unknown NVMe request layout: no BTF in " BTF_DIR " has struct request and "
                                      "nvme_iod, and no row of hvtuned's table can be assumed for this kernel (its "
                                      "release is older than every row, 5.10, or unreadable): no NVMe memory "
                                      "estimates");
        else if (l->source == HVT_LAYOUT_ASSUMED)
                (void) hvt_log_struct(&d->log, LOG_INFO, 0, NULL,
                                      HVT_FIELDS(HVT_FIELD("HVTUNED_LAYOUT=%s", "assumed"),
                                                 HVT_FIELD("HVTUNED_LAYOUT_ROW=%s", l->table_row),
                                                 HVT_FIELD("HVTUNED_REQUEST_BYTES=%u", l->request_bytes),
                                                 HVT_FIELD("HVTUNED_REQUEST_BYTES_MIN=%u", l->request_lo),
                                                 HVT_FIELD("HVTUNED_REQUEST_BYTES_MAX=%u", l->request_hi)),
                                      "NVMe request layout assumed: no BTF in " BTF_DIR " has both struct request "
                                      "and nvme_iod, and this kernel is no upstream-numbered one of hvtuned's "
                                      "table, so %s's row fills in what BTF lacks: struct request %u + nvme_iod "
                                      "%u, %u bytes a preallocated request; the rows %s would make it %u to %u, "
                                      "and each NVMe memory estimate says how far that moves it",
                                      l->table_row, l->sizes.request, l->sizes.nvme_iod, l->request_bytes,
                                      l->band_rows, l->request_lo, l->request_hi);
        else
                (void) hvt_log_struct(&d->log, LOG_INFO, 0, NULL,
                                      HVT_FIELDS(HVT_FIELD("HVTUNED_LAYOUT=%s",
                                                           l->source == HVT_LAYOUT_BTF ? "btf" : "table"),
                                                 HVT_FIELD("HVTUNED_REQUEST_BYTES=%u", l->request_bytes)),
                                      "NVMe request layout (%s): struct request %u + nvme_iod %u, %u bytes a "
                                      "preallocated request",
                                      from, l->sizes.request, l->sizes.nvme_iod, l->request_bytes);
}

/* The estimate for an NVMe controller: 0 when it has none (a transport other than the PCI
 * driver's, figures that could not be read, an unknown layout). */
static uint64_t nvme_estimate(const struct hvt_host *h, const struct hvt_nvme_controller *c) {
        if (!c->pcie || c->figures == HVT_NVME_FIGURES_NONE)
                return 0;
        return hvt_nvme_estimate_bytes(h->nvme_layout.request_bytes, c->nr_io_queues, c->q_depth);
}

/* How far an NVMe controller's estimate may be off with an assumed layout: what it is at
 * every row's request size, in percent rounded up; 0 otherwise, or with no estimate. */
static unsigned nvme_band(const struct hvt_host *h, const struct hvt_nvme_controller *c) {
        const struct hvt_nvme_layout *l = &h->nvme_layout;
        uint64_t others[HVT_LAYOUT_ROWS_MAX];

        if (l->source != HVT_LAYOUT_ASSUMED || nvme_estimate(h, c) == 0)
                return 0;
        for (size_t i = 0; i < l->n_rows; i++)
                others[i] = hvt_nvme_estimate_bytes(l->row_bytes[i], c->nr_io_queues, c->q_depth);
        return hvt_layout_band_pct(nvme_estimate(h, c), others, l->n_rows);
}

/* The same for the sum of every controller's estimate. */
static unsigned nvme_total_band(const struct hvt_host *h) {
        const struct hvt_nvme_layout *l = &h->nvme_layout;
        uint64_t others[HVT_LAYOUT_ROWS_MAX] = {}, total = 0;

        if (l->source != HVT_LAYOUT_ASSUMED)
                return 0;
        for (size_t j = 0; j < h->nvme.n; j++) {
                const struct hvt_nvme_controller *c = &h->nvme.v[j];

                if (nvme_estimate(h, c) == 0)
                        continue;
                total += nvme_estimate(h, c);
                for (size_t i = 0; i < l->n_rows; i++)
                        others[i] += hvt_nvme_estimate_bytes(l->row_bytes[i], c->nr_io_queues, c->q_depth);
        }
        return hvt_layout_band_pct(total, others, l->n_rows);
}

static void nvme_note(const struct hvt_host *h, unsigned band, bool full, char *buf, size_t size) {
        const struct hvt_nvme_layout *l = &h->nvme_layout;

        layout_note(l->source, l->table_row, l->band_rows, band, full, buf, size);
}

static void report_nvme(struct hvt_daemon *d, const struct hvt_nvme_controller *c) {
        const struct hvt_nvme_layout *l = &d->host.nvme_layout;
        uint64_t bytes = nvme_estimate(&d->host, c);
        unsigned param = 0, band = nvme_band(&d->host, c);
        bool have_param = hvt_nvme_io_queue_depth_read(NVME_DEPTH_PARAM, &param) >= 0;
        char held[128], figures[96], depth[192], note[96];
        char f_param[64], f_layout[32], f_row[40], f_band[32], f_est[48];
        const char *fields[6] = {};
        size_t n = 0;

        if (c->figures == HVT_NVME_FIGURES_NONE)
                (void) hvt_strscpy(figures, sizeof(figures), "queue figures unreadable");
        else
                snprintf(figures, sizeof(figures), "%u I/O queue%s x %u requests (%u ring entries)", c->nr_io_queues,
                         c->nr_io_queues == 1 ? "" : "s", c->q_depth - 1, c->q_depth);
        if (bytes > 0) {
                held[0] = '~';
                hvt_format_bytes(bytes, held + 1, sizeof(held) - 1);
                (void) strncat(held, " preallocated", sizeof(held) - strlen(held) - 1);
                nvme_note(&d->host, band, true, note, sizeof(note));
                (void) strncat(held, note, sizeof(held) - strlen(held) - 1);
        } else if (!c->pcie)
                (void) hvt_strscpy(held, sizeof(held), "no estimate (not on the PCI driver)");
        else
                (void) hvt_strscpy(held, sizeof(held), c->figures == HVT_NVME_FIGURES_NONE ? "memory unknown" :
                                                      "memory unknown (unknown layout)");
        /* Named, never written: it is read when a controller is enabled, limits only the depth
         * (the controller's CAP.MQES may limit it more), and the queue count has no cap. */
        if (!have_param)
                snprintf(depth, sizeof(depth), "nvme.io_queue_depth unreadable");
        else if (c->figures != HVT_NVME_FIGURES_NONE && c->pcie && c->q_depth < param)
                snprintf(depth, sizeof(depth), "nvme.io_queue_depth is %u, the controller allows %u; "
                         "hvtuned reports the parameter, never writes it", param, c->q_depth);
        else
                snprintf(depth, sizeof(depth), "nvme.io_queue_depth is %u (read when a controller is enabled); "
                         "hvtuned reports it, never writes it", param);
        /* Built here: a NULL in HVT_FIELDS() would end the list at the first field left out. */
        if (have_param) {
                snprintf(f_param, sizeof(f_param), "HVTUNED_IO_QUEUE_DEPTH_PARAM=%u", param);
                fields[n++] = f_param;
        }
        if (c->pcie) {
                snprintf(f_layout, sizeof(f_layout), "HVTUNED_LAYOUT=%s", source_value(l->source));
                fields[n++] = f_layout;
        }
        /* No figure at all rather than a 0 that reads as one. */
        if (bytes > 0) {
                snprintf(f_est, sizeof(f_est), "HVTUNED_EST_BYTES=%" PRIu64, bytes);
                fields[n++] = f_est;
                if (l->source == HVT_LAYOUT_ASSUMED) {
                        snprintf(f_row, sizeof(f_row), "HVTUNED_LAYOUT_ROW=%s", l->table_row);
                        snprintf(f_band, sizeof(f_band), "HVTUNED_EST_BAND_PCT=%u", band);
                        fields[n++] = f_row;
                        fields[n++] = f_band;
                }
        }
        fields[n] = NULL;
        (void) hvt_log_struct(&d->log, LOG_INFO, 0, HVT_MESSAGE_NVME_CONTROLLER,
                              HVT_FIELDS(HVT_FIELD("HVTUNED_NVME_CONTROLLER=%s", c->name),
                                         HVT_FIELD("HVTUNED_KIND=%s", hvt_kind_to_string(c->kind)),
                                         HVT_FIELD("HVTUNED_MODEL=%s", c->model),
                                         HVT_FIELD("HVTUNED_HW_QUEUES=%u", c->nr_io_queues),
                                         HVT_FIELD("HVTUNED_QUEUE_DEPTH=%u", c->q_depth),
                                         fields[0], fields[1], fields[2], fields[3], fields[4]),
                              "%s (%s, %s): %s, %s; %s", c->name, c->model, hvt_kind_to_string(c->kind), figures,
                              held, depth);
}

static bool nvme_same(const struct hvt_nvme_controller *a, const struct hvt_nvme_controller *b) {
        return strcmp(a->name, b->name) == 0 && a->figures == b->figures && a->nr_io_queues == b->nr_io_queues &&
               a->q_depth == b->q_depth && a->pcie == b->pcie;
}

/* Every live controller (all), or those not reported as they are now. A controller that is
 * not live yet (being enabled: its I/O queues come last) is reported once it is. */
static void report_nvme_all(struct hvt_daemon *d, bool all) {
        struct hvt_host *h = &d->host;
        struct hvt_nvme_controller *told;
        size_t n = 0;

        if (h->nvme.n == 0) {
                hvt_nvme_controllers_done(&h->nvme_told);
                return;
        }
        told = calloc(h->nvme.n, sizeof(*told));
        for (size_t i = 0; i < h->nvme.n; i++) {
                const struct hvt_nvme_controller *c = &h->nvme.v[i];
                bool seen = false;

                if (!c->live)
                        continue;
                for (size_t j = 0; j < h->nvme_told.n && !seen; j++)
                        seen = nvme_same(c, &h->nvme_told.v[j]);
                if (all || !seen)
                        report_nvme(d, c);
                if (told)
                        told[n++] = *c;
        }
        hvt_nvme_controllers_done(&h->nvme_told);
        /* Out of memory, nothing is remembered: the next change reports every controller. */
        h->nvme_told = (struct hvt_nvme_controllers) { told, n };
}

void hvt_host_report(struct hvt_daemon *d) {
        for (size_t i = 0; i < d->host.controllers.n; i++)
                report_controller(d, &d->host.controllers.v[i]);
        report_advice(d);
        report_nvme_all(d, true);
}

void hvt_host_handle_nvme(struct hvt_daemon *d) {
        nvme_scan(d);
        report_nvme_all(d, false);
}

void hvt_host_format_nvme_status(const struct hvt_daemon *d, char *buf, size_t size) {
        const struct hvt_host *h = &d->host;
        uint64_t bytes = 0;
        bool unknown = false;
        char s[48], note[64];

        buf[0] = '\0';
        if (h->nvme.n == 0)
                return;
        for (size_t i = 0; i < h->nvme.n; i++) {
                uint64_t b = nvme_estimate(h, &h->nvme.v[i]);

                bytes += b;
                unknown = unknown || b == 0;
        }
        hvt_format_bytes(bytes, s, sizeof(s));
        nvme_note(h, nvme_total_band(h), false, note, sizeof(note));
        if (bytes == 0)
                snprintf(buf, size, "NVMe: %zu Azure controller%s, memory unknown", h->nvme.n, h->nvme.n == 1 ? "" : "s");
        else
                snprintf(buf, size, "NVMe: %zu Azure controller%s, ~%s preallocated%s%s", h->nvme.n,
                         h->nvme.n == 1 ? "" : "s", s, note, unknown ? " (and some unknown)" : "");
}

size_t hvt_host_nvme_metrics(const struct hvt_daemon *d, struct hvt_metrics_nvme *ret) {
        const struct hvt_host *h = &d->host;
        size_t n = 0;

        for (size_t i = 0; i < h->nvme.n; i++) {
                const struct hvt_nvme_controller *c = &h->nvme.v[i];

                if (c->figures == HVT_NVME_FIGURES_NONE)
                        continue;
                ret[n++] = (struct hvt_metrics_nvme) {
                        .controller = c->name,
                        .kind = c->kind,
                        .nr_io_queues = c->nr_io_queues,
                        .q_depth = c->q_depth,
                        .bytes = nvme_estimate(h, c),
                        .band_pct = nvme_band(h, c),
                };
        }
        return n;
}

void hvt_host_handle_device(struct hvt_daemon *d, const char *syspath, const char *action) {
        bool added = action && strcmp(action, "add") == 0;

        if (hvt_host_scan(d) < 0 || !added)
                return;
        for (size_t i = 0; i < d->host.controllers.n; i++) {
                const struct hvt_controller *c = &d->host.controllers.v[i];
                char path[4096];

                snprintf(path, sizeof(path), "%s/host%u/scsi_host/host%u", c->syspath, c->host, c->host);
                if (strcmp(path, syspath) == 0)
                        report_controller(d, c);
        }
}
