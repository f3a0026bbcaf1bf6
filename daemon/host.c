/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the hw queue cap, the controller report and the boot advice (see host.h).
 *
 * storvsc reads storvsc_max_hw_queues only when it probes a controller, so writing it helps
 * every controller probed later (hot-added, re-probed) and none probed before: the report
 * says which controllers still hold queues over the cap, what that costs, and the boot-time
 * setting that would cap them from the start. hvtuned never edits the bootloader or /etc. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "bootadvice.h"
#include "host.h"
#include "hwqueues.h"
#include "macro.h"
#include "messages.h"
#include "reprobe.h"
#include "report.h"
#include "sysfs.h"

#define CPU_DIR "/sys/devices/system/cpu"
#define MODULE_DIR "/sys/module/hv_storvsc"
#define PARAM_DIR MODULE_DIR "/parameters"
#define CMDLINE "/proc/cmdline"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct udev_enumerate *, udev_enumerate_unref);

/* The parameter is reported like a disk attribute, of a "device" named after the module. */
static struct hvt_disk module_disk(struct hvt_host *h) {
        (void) hvt_strscpy(h->module_syspath, sizeof(h->module_syspath), MODULE_DIR);
        return (struct hvt_disk) { .syspath = h->module_syspath, .sysname = HVT_HOST_RECORD };
}

void hvt_host_done(struct hvt_host *h) {
        for (size_t i = 0; i < h->n_controllers; i++)
                hvt_controller_done(&h->controllers[i]);
        free(h->controllers);
        h->controllers = NULL;
        h->n_controllers = 0;
}

void hvt_format_bytes(uint64_t bytes, char *buf, size_t size) {
        if (bytes >= 1024ull * 1024 * 1024)
                snprintf(buf, size, "%.1f GiB", (double) bytes / (1024.0 * 1024 * 1024));
        else
                snprintf(buf, size, "%.1f MiB", (double) bytes / (1024.0 * 1024));
}

const struct hvt_controller *hvt_host_find(const struct hvt_daemon *d, const char *controller) {
        for (size_t i = 0; i < d->host.n_controllers; i++)
                if (strcmp(d->host.controllers[i].controller, controller) == 0)
                        return &d->host.controllers[i];
        return NULL;
}

/* A kernel before 5.10: the SCSI host has no nr_hw_queues to read. */
static bool no_queue_count(struct udev_device *dev) {
        char path[4096];

        snprintf(path, sizeof(path), "%s/nr_hw_queues", udev_device_get_syspath(dev));
        return access(path, F_OK) < 0 && errno == ENOENT;
}

int hvt_host_scan(struct hvt_daemon *d) {
        _cleanup_(udev_enumerate_unrefp) struct udev_enumerate *e = NULL;
        struct hvt_controller *list = NULL;
        struct udev_list_entry *entry;
        size_t n = 0;
        bool oom = false;
        int r;

        e = udev_enumerate_new(d->udev);
        if (!e)
                return hvt_log_errno(&d->log, LOG_ERR, -ENOMEM, "Cannot enumerate SCSI hosts: %m");
        r = udev_enumerate_add_match_subsystem(e, "scsi_host");
        if (r >= 0)
                r = udev_enumerate_scan_devices(e);
        if (r < 0)
                return hvt_log_errno(&d->log, LOG_ERR, r, "Cannot enumerate SCSI hosts: %m");

        udev_list_entry_foreach(entry, udev_enumerate_get_list_entry(e)) {
                struct udev_device *dev = udev_device_new_from_syspath(d->udev, udev_list_entry_get_name(entry));
                struct hvt_controller c, *p;

                if (!dev)
                        continue;
                r = hvt_classify_controller(dev, &c);
                oom = r == -ENOMEM;
                if (r == -ENOENT && no_queue_count(dev)) {
                        if (!d->host.no_figures_told)
                                hvt_log_info(&d->log, "This kernel does not report the hw queues of a SCSI host "
                                             "(nr_hw_queues came in 5.10): no queue figures, no estimates");
                        d->host.no_figures_told = true;
                } else if (r < 0 && !oom)
                        (void) hvt_log_errno(&d->log, LOG_WARNING, r, "%s: cannot read its storvsc queue figures: %m",
                                             udev_device_get_sysname(dev));
                udev_device_unref(dev);
                if (oom)
                        break;
                if (r <= 0)
                        continue;
                p = reallocarray(list, n + 1, sizeof(*list));
                if (!p) {
                        hvt_controller_done(&c);
                        oom = true;
                        break;
                }
                list = p;
                list[n++] = c;
        }
        if (oom) {
                for (size_t i = 0; i < n; i++)
                        hvt_controller_done(&list[i]);
                free(list);
                return hvt_log_errno(&d->log, LOG_ERR, -ENOMEM, "Out of memory");
        }
        hvt_host_done(&d->host);
        d->host.controllers = list;
        d->host.n_controllers = n;
        return 0;
}

/* The queues this controller would have under the cap: IDE has one, whatever the cap. */
static unsigned capped_queues(const struct hvt_host *h, const struct hvt_controller *c) {
        if (h->target == 0 || c->kind == HVT_KIND_IDE || c->nr_hw_queues <= h->target)
                return c->nr_hw_queues;
        return h->target;
}

static bool over_cap(const struct hvt_host *h, const struct hvt_controller *c) {
        return capped_queues(h, c) < c->nr_hw_queues;
}

/* Whether the parameter holds the cap (or would, in a dry run): only then does a controller
 * probed from now on get it. When the write failed, only the boot-time setting still can;
 * when the parameter does not exist (before 5.13), nothing can. */
static bool cap_held(const struct hvt_host *h) {
        enum hvt_outcome o = h->param_last.outcome;

        return o == HVT_APPLIED || o == HVT_UNCHANGED || o == HVT_WOULD_APPLY;
}

static uint64_t reclaimable(const struct hvt_host *h, size_t *n_over) {
        uint64_t bytes = 0;

        *n_over = 0;
        for (size_t i = 0; i < h->n_controllers; i++) {
                const struct hvt_controller *c = &h->controllers[i];

                if (!over_cap(h, c))
                        continue;
                (*n_over)++;
                bytes += hvt_hwq_estimate_bytes(c->nr_hw_queues, c->can_queue) -
                         hvt_hwq_estimate_bytes(capped_queues(h, c), c->can_queue);
        }
        return bytes;
}

void hvt_host_format_status(const struct hvt_daemon *d, char *buf, size_t size) {
        const struct hvt_host *h = &d->host;
        size_t n_over;
        uint64_t bytes = reclaimable(h, &n_over);

        if (h->target == 0)
                buf[0] = '\0';
        else if (n_over == 0)
                snprintf(buf, size, "hw queues: every controller within cap %u", h->target);
        else if (h->param_last.outcome == HVT_UNSUPPORTED)
                snprintf(buf, size, "hw queues: %zu controller%s over cap %u, which this kernel cannot apply",
                         n_over, n_over == 1 ? "" : "s", h->target);
        else
                snprintf(buf, size, "hw queues: %zu controller%s over cap %u, ~%" PRIu64 " MiB reclaimable at next boot%s%s%s",
                         n_over, n_over == 1 ? "" : "s", h->target, (bytes + 512 * 1024) / (1024 * 1024),
                         cap_held(h) ? "" : ", cap not set (", cap_held(h) ? "" : strerror(h->param_last.error),
                         cap_held(h) ? "" : ")");
}

void hvt_host_metrics(const struct hvt_daemon *d, struct hvt_metrics_controller *ret) {
        const struct hvt_host *h = &d->host;

        for (size_t i = 0; i < h->n_controllers; i++) {
                const struct hvt_controller *c = &h->controllers[i];

                ret[i] = (struct hvt_metrics_controller) {
                        .host = c->host,
                        .controller = c->controller,
                        .kind = c->kind,
                        .nr_hw_queues = c->nr_hw_queues,
                        .can_queue = c->can_queue,
                        .bytes = hvt_hwq_estimate_bytes(c->nr_hw_queues, c->can_queue),
                        .capped_bytes = hvt_hwq_estimate_bytes(capped_queues(h, c), c->can_queue),
                };
        }
}

static void report_controller(struct hvt_daemon *d, const struct hvt_controller *c) {
        const struct hvt_host *h = &d->host;
        unsigned capped = capped_queues(h, c);
        uint64_t now = hvt_hwq_estimate_bytes(c->nr_hw_queues, c->can_queue);
        uint64_t then = hvt_hwq_estimate_bytes(capped, c->can_queue);
        char f_ctrl[64], f_host[32], f_kind[32], f_q[32], f_cq[32], f_est[48], f_cap[48], f_over[32];
        const char *fields[] = { f_ctrl, f_host, f_kind, f_q, f_cq, f_est, f_cap, f_over, NULL };
        char s_now[32], s_then[32], tail[192];

        snprintf(f_ctrl, sizeof(f_ctrl), "HVTUNED_CONTROLLER=%s", c->controller);
        snprintf(f_host, sizeof(f_host), "HVTUNED_HOST=host%u", c->host);
        snprintf(f_kind, sizeof(f_kind), "HVTUNED_KIND=%s", hvt_kind_to_string(c->kind));
        snprintf(f_q, sizeof(f_q), "HVTUNED_HW_QUEUES=%u", c->nr_hw_queues);
        snprintf(f_cq, sizeof(f_cq), "HVTUNED_CAN_QUEUE=%u", c->can_queue);
        snprintf(f_est, sizeof(f_est), "HVTUNED_EST_BYTES=%" PRIu64, now);
        snprintf(f_cap, sizeof(f_cap), "HVTUNED_EST_BYTES_CAPPED=%" PRIu64, then);
        snprintf(f_over, sizeof(f_over), "HVTUNED_OVER_CAP=%s", over_cap(h, c) ? "yes" : "no");
        hvt_format_bytes(now, s_now, sizeof(s_now));
        hvt_format_bytes(then, s_then, sizeof(s_then));

        if (over_cap(h, c) && h->param_last.outcome == HVT_UNSUPPORTED)
                snprintf(tail, sizeof(tail), "over the cap of %u, which this kernel's storvsc cannot apply",
                         h->target);
        else if (over_cap(h, c))
                snprintf(tail, sizeof(tail), "over the cap of %u: ~%s with %u queues, once %s", h->target,
                         s_then, capped, cap_held(h) ? "re-probed" : "capped at boot (the module parameter does not hold it)");
        else if (c->kind == HVT_KIND_IDE)
                snprintf(tail, sizeof(tail), "IDE has a single queue, never capped");
        else if (h->target == 0)
                snprintf(tail, sizeof(tail), "no cap applies");
        else
                snprintf(tail, sizeof(tail), "within the cap of %u", h->target);
        (void) hvt_log_struct(&d->log, LOG_INFO, 0, HVT_MESSAGE_CONTROLLER, fields,
                              "host%u (controller %s, %s): %u hw queue%s x %u requests, ~%s preallocated; %s",
                              c->host, c->controller, hvt_kind_to_string(c->kind), c->nr_hw_queues,
                              c->nr_hw_queues == 1 ? "" : "s", c->can_queue, s_now, tail);
}

/* The fix that makes the cap apply at boot, to the controllers probed before hvtuned. */
static void report_advice(struct hvt_daemon *d) {
        const struct hvt_host *h = &d->host;
        _cleanup_free_ char *cmdline = NULL;
        char f_cmd[96], f_fix[160], f_bytes[48], f_boot[48], now[128], fix[384], s_bytes[32];
        struct hvt_boot_facts facts;
        const char *fields[] = { f_cmd, f_fix, f_bytes, f_boot, NULL };
        bool module = access(MODULE_DIR "/initstate", F_OK) == 0;
        unsigned value = 0;
        size_t n_over;
        uint64_t bytes = reclaimable(h, &n_over);
        int r;

        if (n_over == 0)
                return;
        /* No parameter, no command-line option either: the controller reports say so. */
        if (h->param_last.outcome == HVT_UNSUPPORTED)
                return;
        r = hvt_read_file(CMDLINE, &cmdline);
        if (r >= 0)
                r = hvt_cmdline_max_hw_queues(cmdline, &value);
        if (r > 0) {
                snprintf(now, sizeof(now), "the kernel command line has hv_storvsc.storvsc_max_hw_queues=%u%s",
                         value, value > h->present ? ", more than the present CPUs, which the kernel ignores" : "");
                snprintf(f_cmd, sizeof(f_cmd), "HVTUNED_CMDLINE=hv_storvsc.storvsc_max_hw_queues=%u", value);
        } else if (r == 0) {
                snprintf(now, sizeof(now), "the kernel command line does not set hv_storvsc.storvsc_max_hw_queues");
                snprintf(f_cmd, sizeof(f_cmd), "HVTUNED_CMDLINE=");
        } else {
                snprintf(now, sizeof(now), "%s cannot be read or sets hv_storvsc.storvsc_max_hw_queues to no number (%s)",
                         CMDLINE, strerror(-r));
                snprintf(f_cmd, sizeof(f_cmd), "HVTUNED_CMDLINE=?");
        }
        hvt_boot_facts_read("", module, &facts);
        hvt_boot_advice(&facts, h->target, fix, sizeof(fix));
        snprintf(f_boot, sizeof(f_boot), "HVTUNED_BOOT=%s", hvt_boot_kind_to_string(hvt_boot_choose(&facts)));
        snprintf(f_fix, sizeof(f_fix), "HVTUNED_FIX=hv_storvsc.storvsc_max_hw_queues=%u", h->target);
        snprintf(f_bytes, sizeof(f_bytes), "HVTUNED_EST_BYTES_RECLAIMABLE=%" PRIu64, bytes);
        hvt_format_bytes(bytes, s_bytes, sizeof(s_bytes));
        (void) hvt_log_struct(&d->log, LOG_NOTICE, 0, HVT_MESSAGE_HWQ_ADVICE, fields,
                              "%zu controller%s probed before the cap keep%s %s queues %s (~%s "
                              "reclaimable); %s. To cap them from boot: %s",
                              n_over, n_over == 1 ? "" : "s", n_over == 1 ? "s" : "", n_over == 1 ? "its" : "their",
                              cap_held(h) ? "until re-probed" : "even re-probed, as the module parameter does not hold the cap",
                              s_bytes, now, fix);
}

static int read_present(struct hvt_daemon *d) {
        _cleanup_close_ int fd = -EBADF;
        char buf[256];
        unsigned n;
        int r;

        fd = hvt_sysfs_open_dir(CPU_DIR);
        r = fd < 0 ? fd : hvt_sysfs_read(fd, "present", buf, sizeof(buf));
        if (r >= 0)
                r = hvt_cpulist_count(buf, &n);
        if (r < 0) {
                d->host.present = 0;
                return hvt_log_errno(&d->log, LOG_WARNING, r, "Cannot count the present CPUs (%s/present: %m): "
                                     "leaving storvsc_max_hw_queues alone", CPU_DIR);
        }
        d->host.present = n;
        return 0;
}

static int save_original(struct hvt_daemon *d) {
        struct hvt_disk m = module_disk(&d->host);
        int r;

        if (d->state_fd < 0)
                return 0;
        r = hvt_state_save(d->state_fd, &m, &d->host.orig);
        if (r < 0)
                (void) hvt_log_struct(&d->log, LOG_ERR, r, HVT_MESSAGE_STATE_ERROR, NULL,
                                      "%s: cannot write the record of its original value: %m", HVT_HOST_RECORD);
        return r;
}

static int record_original(const struct hvt_apply *found, void *userdata) {
        struct hvt_daemon *d = userdata;
        /* hvt_apply_attr(): one attribute, the parameter. */
        const struct hvt_result *res = &found->results[0];
        struct hvt_setting *o = &d->host.orig.value[res->attr];
        int r;

        if (o->set)
                return 0;
        r = hvt_setting_from_kernel(o, res->attr, res->from);
        if (r >= 0)
                r = save_original(d);
        if (r < 0)
                o->set = false;
        return r;
}

static void load_original(struct hvt_daemon *d) {
        struct hvt_disk m = module_disk(&d->host);
        int r;

        if (d->host.loaded || d->state_fd < 0)
                return;
        d->host.loaded = true;
        r = hvt_state_load(d->state_fd, &m, &d->host.orig);
        if (r < 0 && r != -ENOENT)
                (void) hvt_log_struct(&d->log, LOG_WARNING, r, HVT_MESSAGE_STATE_ERROR, NULL,
                                      "%s: cannot read the record of its original value (%m)", HVT_HOST_RECORD);
}

static void report_param(struct hvt_daemon *d, const struct hvt_result *r, enum hvt_action kind) {
        struct hvt_disk m = module_disk(&d->host);
        unsigned flags = d->once ? HVT_REPORT_UNCHANGED_INFO : 0;
        const struct hvt_result *last = &d->host.param_last;

        /* As for a disk's attributes: the same failure, or the same missing parameter, once. */
        if ((r->outcome == HVT_FAILED || r->outcome == HVT_UNSUPPORTED) && last->outcome == r->outcome &&
            last->error == r->error && strcmp(last->to, r->to) == 0)
                flags |= HVT_REPORT_REPEATED;
        hvt_report_result(&d->log, &m, r, kind, flags);
        d->host.param_last = *r;
        if (r->outcome == HVT_FAILED)
                d->any_failed = true;
}

/* Writes value unless the kernel would give a controller probed now the same queues; a
 * restore puts the exact original back. */
static void set_param(struct hvt_daemon *d, unsigned value, enum hvt_action kind) {
        _cleanup_close_ int fd = -EBADF;
        struct hvt_setting want;
        struct hvt_result res = { .attr = HVT_ATTR_MAX_HW_QUEUES };
        char buf[32];
        unsigned long cur;
        char *end;
        int r;

        (void) hvt_setting_set_int(&want, HVT_ATTR_MAX_HW_QUEUES, value);
        (void) hvt_strscpy(res.to, sizeof(res.to), want.text);
        fd = hvt_sysfs_open_dir(PARAM_DIR);
        r = fd < 0 ? fd : hvt_sysfs_read(fd, "storvsc_max_hw_queues", buf, sizeof(buf));
        if (r < 0) {
                /* Before 5.13 (and without storvsc) there is no such parameter. */
                res.outcome = r == -ENOENT ? HVT_UNSUPPORTED : HVT_FAILED;
                res.error = -r;
                return report_param(d, &res, kind);
        }
        errno = 0;
        cur = strtoul(buf, &end, 10);
        if (errno == 0 && end != buf && *end == '\0' && cur <= UINT32_MAX && kind != HVT_ACTION_RESTORE &&
            d->host.present > 0 &&
            hvt_hwq_effective((unsigned) cur, d->host.present) == hvt_hwq_effective(value, d->host.present)) {
                res.outcome = HVT_UNCHANGED;
                snprintf(res.from, sizeof(res.from), "%lu", cur);
                if (cur != value)  /* "0" already means one per present CPU */
                        snprintf(res.kept, sizeof(res.kept), "%lu", cur);
                return report_param(d, &res, kind);
        }
        hvt_apply_attr(fd, HVT_ATTR_MAX_HW_QUEUES, &want, d->apply_flags,
                       kind == HVT_ACTION_RESTORE ? NULL : record_original, d, &res);
        report_param(d, &res, kind);
}

void hvt_host_restore(struct hvt_daemon *d) {
        struct hvt_setting *o = &d->host.orig.value[HVT_ATTR_MAX_HW_QUEUES];

        if (!o->set)
                return;
        set_param(d, (unsigned) o->num, HVT_ACTION_RESTORE);
        if (d->host.param_last.outcome == HVT_FAILED)
                return;  /* the record stays, for a later try */
        o->set = false;
        (void) save_original(d);
}

void hvt_host_pass(struct hvt_daemon *d, bool reprobe) {
        struct hvt_host *h = &d->host;

        hvt_reprobe_resume(d);
        load_original(d);
        (void) read_present(d);
        h->target = hvt_hwq_target(&d->config->host, h->present);
        if (h->target > 0)
                set_param(d, h->target, HVT_ACTION_TUNE);
        /* blk-mq gives a disk with a single hw queue mq-deadline by default (elevator.c,
         * elevator_get_default()), which a scheduler in hvtuned.conf then has to undo. */
        if (h->target == 1)
                (void) hvt_log_struct(&d->log, LOG_NOTICE, 0, NULL, NULL,
                                      "With a cap of 1, each disk on a controller probed from now on has a single "
                                      "hw queue, and the kernel gives such a disk mq-deadline (about 226 KiB more "
                                      "per disk than none, measured on 6.1): hvtuned.conf's queue.scheduler "
                                      "(none by default) is what keeps it off");
        if (h->target == 0)
                hvt_host_restore(d);  /* a cap dropped by a reload goes back to the original */

        if (hvt_host_scan(d) < 0)
                return;
        /* Re-probes first: the report and the advice are about what stays over the cap. */
        if (reprobe && d->config->host.reprobe_idle_controllers)
                hvt_reprobe_idle(d);
        for (size_t i = 0; i < h->n_controllers; i++)
                report_controller(d, &h->controllers[i]);
        report_advice(d);
}

void hvt_host_handle_device(struct hvt_daemon *d, const char *syspath, const char *action) {
        bool added = action && strcmp(action, "add") == 0;

        if (hvt_host_scan(d) < 0 || !added)
                return;
        for (size_t i = 0; i < d->host.n_controllers; i++) {
                const struct hvt_controller *c = &d->host.controllers[i];
                char path[4096];

                snprintf(path, sizeof(path), "%s/host%u/scsi_host/host%u", c->syspath, c->host, c->host);
                if (strcmp(path, syspath) == 0)
                        report_controller(d, c);
        }
}
