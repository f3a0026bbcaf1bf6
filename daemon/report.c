/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the wording and the journal fields of attribute results and disk events.
 *
 * The stderr line and the journal MESSAGE are the same text, so what an operator reads in
 * `journalctl` is what --once prints: "sda queue/scheduler: mq-deadline -> none (applied)". */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "messages.h"
#include "report.h"

/* HVTUNED_DEVICE, HVTUNED_CONTROLLER, HVTUNED_ATTR, HVTUNED_FROM, HVTUNED_TO, HVTUNED_RESULT,
 * HVTUNED_ACTION, HVTUNED_KEPT or HVTUNED_OFFERED, and the terminating NULL. */
#define RESULT_FIELDS 9

static const struct {
        int prio;
        const char *message_id;
} outcome_log[_HVT_OUTCOME_MAX] = {
        [HVT_UNCHANGED]   = { LOG_DEBUG,   NULL },
        [HVT_APPLIED]     = { LOG_INFO,    HVT_MESSAGE_ATTR_APPLIED },
        [HVT_CLAMPED]     = { LOG_WARNING, HVT_MESSAGE_ATTR_CLAMPED },
        [HVT_FAILED]      = { LOG_ERR,     HVT_MESSAGE_ATTR_FAILED },
        [HVT_UNSUPPORTED] = { LOG_WARNING, HVT_MESSAGE_ATTR_UNSUPPORTED },
        [HVT_WOULD_APPLY] = { LOG_INFO,    NULL },
};

static const char *const action_names[] = {
        [HVT_ACTION_TUNE] = "tune",
        [HVT_ACTION_REPAIR] = "repair",
        [HVT_ACTION_RESTORE] = "restore",
};

/* What follows "sda queue/scheduler: ". */
static void format_result(const struct hvt_result *r, enum hvt_action action, char *buf, size_t size) {
        const char *outcome = hvt_outcome_to_string(r->outcome);
        const char *what = outcome;

        if (action == HVT_ACTION_REPAIR && (r->outcome == HVT_APPLIED || r->outcome == HVT_CLAMPED))
                what = "drift repaired";
        else if (action == HVT_ACTION_RESTORE)
                what = r->outcome == HVT_APPLIED || r->outcome == HVT_CLAMPED ? "restored" :
                       r->outcome == HVT_FAILED ? "restore failed" :
                       r->outcome == HVT_UNCHANGED ? "already the original" : outcome;

        switch (r->outcome) {
        case HVT_UNCHANGED:
                if (*r->kept)
                        snprintf(buf, size, "%s (%s: the kernel keeps it for %s)", r->kept, what, r->to);
                else
                        snprintf(buf, size, "%s (%s)", r->to, what);
                break;
        case HVT_CLAMPED:
                snprintf(buf, size, "%s -> %s (%s: the kernel kept %s)", r->from, r->to, what, r->kept);
                break;
        case HVT_FAILED:
                /* The attribute is fine: the record of its original is what failed. */
                if (r->not_recorded)
                        snprintf(buf, size, "%s -> %s (not written: the record of its original failed: %s)",
                                 r->from, r->to, strerror(r->error));
                else if (*r->from)
                        snprintf(buf, size, "%s -> %s (%s: %s)", r->from, r->to, what, strerror(r->error));
                else
                        snprintf(buf, size, "%s (%s: %s)", r->to, what, strerror(r->error));
                break;
        case HVT_UNSUPPORTED:
                if (*r->offered)
                        snprintf(buf, size, "%s -> %s (%s: the disk offers %s)", r->from, r->to,
                                 what, r->offered);
                else
                        snprintf(buf, size, "%s (%s: no such attribute on this kernel)", r->to, what);
                break;
        default:
                snprintf(buf, size, "%s -> %s (%s)", r->from, r->to, what);
                break;
        }
}

static const char *message_id(const struct hvt_result *r, enum hvt_action action) {
        bool wrote = r->outcome == HVT_APPLIED || r->outcome == HVT_CLAMPED;

        if (action == HVT_ACTION_REPAIR && wrote)
                return HVT_MESSAGE_DRIFT_REPAIRED;
        if (action == HVT_ACTION_RESTORE && wrote)
                return HVT_MESSAGE_ATTR_RESTORED;
        return outcome_log[r->outcome].message_id;
}

void hvt_report_result(const struct hvt_log *log, const struct hvt_disk *disk, const struct hvt_result *r,
                       enum hvt_action action, unsigned flags) {
        char attr[48], text[256];
        char f_dev[64], f_ctrl[64], f_attr[64], f_from[64], f_to[64], f_result[48], f_action[32], f_extra[128];
        const char *fields[RESULT_FIELDS] = {};
        size_t n = 0;
        int prio = outcome_log[r->outcome].prio;

        if (r->outcome == HVT_UNCHANGED && (flags & HVT_REPORT_UNCHANGED_INFO))
                prio = LOG_INFO;
        if (flags & HVT_REPORT_REPEATED)
                prio = LOG_DEBUG;
        if (prio > log->max_level)
                return;

        (void) hvt_attr_format_path(r->attr, attr, sizeof(attr));
        format_result(r, action, text, sizeof(text));

        snprintf(f_dev, sizeof(f_dev), "HVTUNED_DEVICE=%s", disk->sysname);
        snprintf(f_ctrl, sizeof(f_ctrl), "HVTUNED_CONTROLLER=%s", disk->controller);
        snprintf(f_attr, sizeof(f_attr), "HVTUNED_ATTR=%s", attr);
        snprintf(f_from, sizeof(f_from), "HVTUNED_FROM=%s", r->from);
        snprintf(f_to, sizeof(f_to), "HVTUNED_TO=%s", r->to);
        snprintf(f_result, sizeof(f_result), "HVTUNED_RESULT=%s", hvt_outcome_to_string(r->outcome));
        snprintf(f_action, sizeof(f_action), "HVTUNED_ACTION=%s", action_names[action]);
        fields[n++] = f_dev;
        if (*disk->controller)  /* the module parameter belongs to none */
                fields[n++] = f_ctrl;
        fields[n++] = f_attr;
        fields[n++] = f_from;
        fields[n++] = f_to;
        fields[n++] = f_result;
        fields[n++] = f_action;
        if (*r->kept) {
                snprintf(f_extra, sizeof(f_extra), "HVTUNED_KEPT=%s", r->kept);
                fields[n++] = f_extra;
        } else if (*r->offered) {
                snprintf(f_extra, sizeof(f_extra), "HVTUNED_OFFERED=%s", r->offered);
                fields[n++] = f_extra;
        }

        (void) hvt_log_struct(log, prio, r->error, message_id(r, action), fields, "%s %s: %s",
                              disk->sysname, attr, text);
}

static void report_disk(const struct hvt_log *log, const struct hvt_disk *disk, int prio,
                        const char *message_id, const char *what) {
        char f_dev[64], f_ctrl[64], f_addr[64], f_kind[32];
        const char *fields[] = { f_dev, f_ctrl, f_addr, f_kind, NULL };

        snprintf(f_dev, sizeof(f_dev), "HVTUNED_DEVICE=%s", disk->sysname);
        snprintf(f_ctrl, sizeof(f_ctrl), "HVTUNED_CONTROLLER=%s", disk->controller);
        snprintf(f_addr, sizeof(f_addr), "HVTUNED_SCSI_ADDRESS=%u:%u:%u:%" PRIu64, disk->host,
                 disk->channel, disk->target, disk->lun);
        snprintf(f_kind, sizeof(f_kind), "HVTUNED_KIND=%s", hvt_kind_to_string(disk->kind));
        (void) hvt_log_struct(log, prio, 0, message_id, fields,
                              "%s: %s Hyper-V %s disk %u:%u:%u:%" PRIu64 " on controller %s (%s %s)",
                              disk->sysname, what, hvt_kind_to_string(disk->kind), disk->host,
                              disk->channel, disk->target, disk->lun, disk->controller,
                              disk->vendor, disk->model);
}

void hvt_report_disk_found(const struct hvt_log *log, const struct hvt_disk *disk) {
        report_disk(log, disk, LOG_INFO, HVT_MESSAGE_DISK_FOUND, "found");
}

void hvt_report_disk_removed(const struct hvt_log *log, const struct hvt_disk *disk) {
        report_disk(log, disk, LOG_INFO, HVT_MESSAGE_DISK_REMOVED, "removed");
}

void hvt_report_disk_released(const struct hvt_log *log, const struct hvt_disk *disk) {
        report_disk(log, disk, LOG_INFO, HVT_MESSAGE_DISK_RELEASED, "left alone, no longer a");
}

int hvt_report_disk_unreadable(const struct hvt_log *log, const char *sysname, int error) {
        char f_dev[64];
        const char *fields[] = { f_dev, NULL };

        snprintf(f_dev, sizeof(f_dev), "HVTUNED_DEVICE=%s", sysname);
        return hvt_log_struct(log, LOG_ERR, error, HVT_MESSAGE_DISK_UNREADABLE, fields,
                              "%s: cannot read its Hyper-V identity: %m", sysname);
}

void hvt_report_drift_paused(const struct hvt_log *log, const struct hvt_disk *disk, unsigned repairs,
                             unsigned window_s, unsigned pause_s) {
        char f_dev[64], f_ctrl[64], f_n[48];
        const char *fields[] = { f_dev, f_ctrl, f_n, NULL };

        snprintf(f_dev, sizeof(f_dev), "HVTUNED_DEVICE=%s", disk->sysname);
        snprintf(f_ctrl, sizeof(f_ctrl), "HVTUNED_CONTROLLER=%s", disk->controller);
        snprintf(f_n, sizeof(f_n), "HVTUNED_REPAIRS=%u", repairs);
        (void) hvt_log_struct(log, LOG_WARNING, 0, HVT_MESSAGE_DRIFT_PAUSED, fields,
                              "%s: reverted %u times within %u s: something keeps changing it back; "
                              "not repairing it for %u s", disk->sysname, repairs, window_s, pause_s);
}
