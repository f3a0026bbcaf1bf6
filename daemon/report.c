/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the wording and the journal fields of entries about a disk, the driver or a
 * controller (see report.h).
 *
 * The stderr line and the journal MESSAGE are the same text, so what an operator reads in
 * `journalctl` is what --once prints: "sda queue/scheduler: mq-deadline -> none (applied)". */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "messages.h"
#include "report.h"

/* The fields of an entry: what it is about, then the caller's. */
#define SUBJECT_FIELDS 4
#define CALLER_FIELDS_MAX 16

struct entry_fields {
        char about[SUBJECT_FIELDS][HVT_FIELD_MAX];
        const char *list[SUBJECT_FIELDS + CALLER_FIELDS_MAX + 1];
        size_t n;
};

static void add_about(struct entry_fields *f, const char *name, const char *value) {
        char *buf = f->about[f->n];

        snprintf(buf, HVT_FIELD_MAX, "%s=%s", name, value);
        f->list[f->n++] = buf;
}

static const char *const *with_callers(struct entry_fields *f, const char *const *fields) {
        for (size_t i = 0; fields && fields[i] && i < CALLER_FIELDS_MAX; i++)
                f->list[f->n++] = fields[i];
        f->list[f->n] = NULL;
        return f->list;
}

__attribute__((format(printf, 7, 0)))
static int log_subject(const struct hvt_log *log, const struct hvt_subject *s, int prio, int error,
                       const char *message_id, const char *const *fields, const char *fmt, va_list ap) {
        struct entry_fields f = {};

        if (prio > log->max_level)
                return -abs(error);
        if (!hvt_log_fields_wanted(log))
                return hvt_log_structv(log, prio, error, message_id, NULL, fmt, ap);
        add_about(&f, "HVTUNED_DEVICE", s->name);
        if (*s->controller)  /* the driver belongs to none, nor an NVMe disk not under hv_pci */
                add_about(&f, "HVTUNED_CONTROLLER", s->controller);
        if (s->kind && *s->kind)
                add_about(&f, "HVTUNED_KIND", s->kind);
        if (s->role && *s->role)
                add_about(&f, "HVTUNED_ROLE", s->role);
        return hvt_log_structv(log, prio, error, message_id, with_callers(&f, fields), fmt, ap);
}

int hvt_log_subject(const struct hvt_log *log, const struct hvt_subject *s, int prio, int error,
                    const char *message_id, const char *const *fields, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = log_subject(log, s, prio, error, message_id, fields, fmt, ap);
        va_end(ap);
        return r;
}

int hvt_log_disk(const struct hvt_log *log, const struct hvt_disk *disk, int prio, int error,
                 const char *message_id, const char *const *fields, const char *fmt, ...) {
        struct hvt_subject s = hvt_subject_disk(disk);
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = log_subject(log, &s, prio, error, message_id, fields, fmt, ap);
        va_end(ap);
        return r;
}

int hvt_log_controller(const struct hvt_log *log, const struct hvt_controller *c, int prio, int error,
                       const char *message_id, const char *const *fields, const char *fmt, ...) {
        struct entry_fields f = {};
        char host[32];
        va_list ap;
        int r;

        if (prio > log->max_level)
                return -abs(error);
        snprintf(host, sizeof(host), "host%u", c->host);
        add_about(&f, "HVTUNED_CONTROLLER", c->controller);
        add_about(&f, "HVTUNED_HOST", host);
        va_start(ap, fmt);
        r = hvt_log_structv(log, prio, error, message_id, with_callers(&f, fields), fmt, ap);
        va_end(ap);
        return r;
}

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
        [HVT_KNOCKED_ON]  = { LOG_NOTICE,  HVT_MESSAGE_ATTR_KNOCKED_ON },
        [HVT_LEFT]        = { LOG_NOTICE,  HVT_MESSAGE_ATTR_LEFT },
};

static const char *const action_names[] = {
        [HVT_ACTION_TUNE] = "tune",
        [HVT_ACTION_REPAIR] = "repair",
        [HVT_ACTION_RESTORE] = "restore",
};

/* What follows "sda queue/scheduler: ". */
static void format_result(const struct hvt_result *r, enum hvt_action action, unsigned flags, const char *because,
                          char *buf, size_t size) {
        const char *outcome = hvt_outcome_to_string(r->outcome);
        const char *what = outcome;

        if (action == HVT_ACTION_REPAIR && (r->outcome == HVT_APPLIED || r->outcome == HVT_CLAMPED))
                what = flags & HVT_REPORT_BY_KERNEL ? "drift repaired: the kernel re-applied its own value" :
                       "drift repaired";
        else if (action == HVT_ACTION_RESTORE)
                what = r->outcome == HVT_APPLIED || r->outcome == HVT_CLAMPED ? "restored" :
                       r->outcome == HVT_FAILED ? "restore failed" :
                       r->outcome == HVT_UNCHANGED ? "already the original" :
                       r->outcome == HVT_WOULD_APPLY ? "would restore" : outcome;

        char cause[48] = "";

        (void) hvt_attr_format_path(r->cause, cause, sizeof(cause));
        if (r->watched && action == HVT_ACTION_RESTORE && r->outcome != HVT_KNOCKED_ON) {
                /* A restore's knock-on, put back. */
                if (r->outcome == HVT_FAILED)
                        snprintf(buf, size, "%s -> %s (changed by the restore of %s, putting it back failed: %s)",
                                 r->from, r->to, cause, strerror(r->error));
                else
                        snprintf(buf, size, "%s -> %s (changed by the restore of %s, put back)", r->from, r->to,
                                 cause);
                return;
        }
        switch (r->outcome) {
        case HVT_KNOCKED_ON:
                snprintf(buf, size, "%s -> %s (knock-on: changed by the write of %s; the original goes back with it)",
                         r->from, r->to, cause);
                break;
        case HVT_LEFT:
                snprintf(buf, size, "%s (left: changed since hvtuned's write left %s; the original %s is not put back)",
                         r->from, r->kept, r->to);
                break;
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
                else if (r->held && action == HVT_ACTION_RESTORE)
                        snprintf(buf, size, "%s -> %s (not put back: it goes with %s, whose restore failed: %s)",
                                 r->from, r->to, cause, strerror(r->error));
                else if (r->held)
                        snprintf(buf, size, "%s -> %s (not written: the write of %s it depends on failed: %s)",
                                 r->from, r->to, cause, strerror(r->error));
                else if (r->unread)
                        snprintf(buf, size, "%s -> %s (not written: %s, which the write changes, cannot be read: %s)",
                                 r->from, r->to, cause, strerror(r->error));
                else if (*r->from && *r->bound)
                        snprintf(buf, size, "%s -> %s (%s: %s: %s)", r->from, r->to, what, strerror(r->error),
                                 r->bound);
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
                        snprintf(buf, size, "%s (%s: %s)", r->to, what,
                                 because ? because : "no such attribute on this kernel");
                break;
        case HVT_WOULD_APPLY:
                /* Where the write would break a bound the kernel states: said, not "would apply". */
                if (*r->bound)
                        snprintf(buf, size, "%s -> %s (would be %s: %s)", r->from, r->to,
                                 r->attr == HVT_ATTR_MAX_SECTORS_KB ? "refused, or clamped from 6.10" : "refused",
                                 r->bound);
                else
                        snprintf(buf, size, "%s -> %s (%s)", r->from, r->to, what);
                break;
        default:
                snprintf(buf, size, "%s -> %s (%s)", r->from, r->to, what);
                break;
        }
}

static const char *message_id(const struct hvt_result *r, enum hvt_action action, unsigned flags) {
        bool wrote = r->outcome == HVT_APPLIED || r->outcome == HVT_CLAMPED;

        if (action == HVT_ACTION_REPAIR && wrote)
                return flags & HVT_REPORT_BY_KERNEL ? HVT_MESSAGE_KERNEL_REAPPLIED : HVT_MESSAGE_DRIFT_REPAIRED;
        if (action == HVT_ACTION_RESTORE && wrote)
                return HVT_MESSAGE_ATTR_RESTORED;
        return outcome_log[r->outcome].message_id;
}

/* A plan line that the kernel would refuse stays a line of the plan (stdout, with the
 * others: `hvtuned --dry-run | less` shows it); this warning, on stderr, is what a script
 * or a terminal that drops stdout still sees. */
static void warn_would_refuse(const struct hvt_log *log, const struct hvt_subject *subject,
                              const struct hvt_result *r, const char *attr) {
        (void) hvt_log_subject(log, subject, LOG_WARNING, 0, NULL, NULL,
                               "%s %s: %s is over a bound the kernel states (%s): %s", subject->name, attr,
                               r->to, r->bound,
                               r->attr == HVT_ATTR_MAX_SECTORS_KB ? "the kernel would refuse it, or clamp it from 6.10" :
                               "the kernel would refuse it");
}

void hvt_report_result(const struct hvt_log *log, const struct hvt_subject *subject, const struct hvt_result *r,
                       enum hvt_action action, unsigned flags) {
        hvt_report_result_because(log, subject, r, action, flags, NULL);
}

void hvt_report_result_because(const struct hvt_log *log, const struct hvt_subject *subject,
                               const struct hvt_result *r, enum hvt_action action, unsigned flags,
                               const char *because) {
        char attr[48], cause[48] = "", text[512], cause_field[HVT_FIELD_MAX], value_field[HVT_FIELD_MAX],
                writer_field[HVT_FIELD_MAX], bound_field[HVT_FIELD_MAX];
        const char *optional[4] = {};
        size_t n_optional = 0;
        int prio = outcome_log[r->outcome].prio;

        /* --once reports what it changed or could not: an unchanged attribute only with -v,
         * then at info, a line of the report (stdout) as the others are, not a debug one. */
        if (r->outcome == HVT_UNCHANGED && (flags & HVT_REPORT_UNCHANGED_INFO) && log->max_level >= LOG_DEBUG)
                prio = LOG_INFO;
        if (flags & (HVT_REPORT_REPEATED | HVT_REPORT_DEBUG))
                prio = LOG_DEBUG;
        /* Before the fields are made: most results are unchanged ones, at debug. */
        if (prio > log->max_level)
                return;

        (void) hvt_attr_format_path(r->attr, attr, sizeof(attr));
        format_result(r, action, flags, because, text, sizeof(text));
        if (r->watched || r->held || r->unread)
                (void) hvt_attr_format_path(r->cause, cause, sizeof(cause));
        /* The optional fields that apply, packed first: the first NULL ends the list. */
        if (*cause && hvt_log_fields_wanted(log))
                optional[n_optional++] = hvt_field_format(cause_field, sizeof(cause_field), "HVTUNED_CAUSE=%s", cause);
        if (*r->kept && hvt_log_fields_wanted(log))
                optional[n_optional++] = hvt_field_format(value_field, sizeof(value_field), "HVTUNED_KEPT=%s", r->kept);
        else if (*r->offered && hvt_log_fields_wanted(log))
                optional[n_optional++] = hvt_field_format(value_field, sizeof(value_field), "HVTUNED_OFFERED=%s",
                                                          r->offered);
        if ((flags & (HVT_REPORT_BY_KERNEL | HVT_REPORT_BY_OTHER)) && hvt_log_fields_wanted(log))
                optional[n_optional++] = hvt_field_format(writer_field, sizeof(writer_field), "HVTUNED_WRITER=%s",
                                                          flags & HVT_REPORT_BY_KERNEL ? "kernel" : "other");
        /* A fleet's query finds every disk whose configuration a kernel bound refuses, without
         * parsing MESSAGE. */
        if (*r->bound && hvt_log_fields_wanted(log))
                optional[n_optional++] = hvt_field_format(bound_field, sizeof(bound_field), "HVTUNED_BOUND=%s",
                                                          r->bound);
        (void) hvt_log_subject(log, subject, prio, r->error, message_id(r, action, flags),
                               HVT_FIELDS_FOR(log, HVT_FIELD("HVTUNED_ATTR=%s", attr),
                                              HVT_FIELD("HVTUNED_FROM=%s", r->from),
                                              HVT_FIELD("HVTUNED_TO=%s", r->to),
                                              HVT_FIELD("HVTUNED_RESULT=%s", hvt_outcome_to_string(r->outcome)),
                                              HVT_FIELD("HVTUNED_ACTION=%s", action_names[action]),
                                              optional[0], optional[1], optional[2], optional[3]),
                               "%s %s: %s", subject->name, attr, text);
        if (r->outcome == HVT_WOULD_APPLY && *r->bound)
                warn_would_refuse(log, subject, r, attr);
}

/* "nsid 2 (data LUN 0), direct, via hv_pci {guid}". */
static void nvme_place(const struct hvt_disk *disk, char *buf, size_t size) {
        char lun[32] = "";

        if (disk->lun != HVT_LUN_NONE)
                snprintf(lun, sizeof(lun), " LUN %" PRIu64, disk->lun);
        /* A head's controllers are not on its path: whether hv_pci leads to them is not known. */
        if (disk->multipath_head)
                snprintf(buf, size, "nsid %" PRIu32 " (%s%s), multipath head", disk->nsid,
                         hvt_role_to_string(disk->role), lun);
        else
                snprintf(buf, size, "nsid %" PRIu32 " (%s%s), direct, %s%s", disk->nsid,
                         hvt_role_to_string(disk->role), lun, disk->via_hv_pci ? "via hv_pci " : "not via hv_pci",
                         disk->controller);
}

static void report_disk(const struct hvt_log *log, const struct hvt_disk *disk, int prio,
                        const char *message_id, const char *what) {
        char place[160];

        if (hvt_kind_is_nvme(disk->kind)) {
                nvme_place(disk, place, sizeof(place));
                (void) hvt_log_disk(log, disk, prio, 0, message_id,
                                    HVT_FIELDS_FOR(log, HVT_FIELD("HVTUNED_NSID=%" PRIu32, disk->nsid),
                                                   HVT_FIELD("HVTUNED_NVME_LAYOUT=%s",
                                                             disk->multipath_head ? "multipath-head" : "direct"),
                                                   HVT_FIELD("HVTUNED_VIA_HV_PCI=%s",
                                                             disk->multipath_head ? "unknown" :
                                                             disk->via_hv_pci ? "yes" : "no")),
                                    "%s: %s Azure %s disk %s", disk->sysname, what,
                                    hvt_kind_to_string(disk->kind), place);
                return;
        }
        (void) hvt_log_disk(log, disk, prio, 0, message_id,
                            HVT_FIELDS_FOR(log, HVT_FIELD("HVTUNED_SCSI_ADDRESS=%u:%u:%u:%" PRIu64, disk->host,
                                                          disk->channel, disk->target, disk->lun)),
                            "%s: %s Hyper-V %s disk %u:%u:%u:%" PRIu64 " on controller %s (%s %s), role %s",
                            disk->sysname, what, hvt_kind_to_string(disk->kind), disk->host,
                            disk->channel, disk->target, disk->lun, disk->controller, disk->vendor,
                            disk->model, hvt_role_to_string(disk->role));
}

void hvt_report_nvme_timeout_short(const struct hvt_log *log, const struct hvt_disk *disk, const char *ms) {
        (void) hvt_log_disk(log, disk, LOG_WARNING, 0, HVT_MESSAGE_NVME_TIMEOUT_SHORT,
                            HVT_FIELDS_FOR(log, HVT_FIELD("HVTUNED_ATTR=%s", "queue/io_timeout"),
                                           HVT_FIELD("HVTUNED_TO=%s", ms)),
                            "%s queue/io_timeout: back to %s ms, below the 240000 Azure's host needs "
                            "(nvme_core.io_timeout=240 keeps it without hvtuned)", disk->sysname, ms);
}

void hvt_report_disk_found(const struct hvt_log *log, const struct hvt_disk *disk) {
        report_disk(log, disk, LOG_INFO, HVT_MESSAGE_DISK_FOUND, "found");
}

void hvt_report_disk_removed(const struct hvt_log *log, const struct hvt_disk *disk) {
        report_disk(log, disk, LOG_INFO, HVT_MESSAGE_DISK_REMOVED, "removed");
}

void hvt_report_disk_released(const struct hvt_log *log, const struct hvt_disk *disk) {
        report_disk(log, disk, LOG_INFO, HVT_MESSAGE_DISK_RELEASED,
                    hvt_kind_is_nvme(disk->kind) ? "left alone, no longer an" : "left alone, no longer a");
}

int hvt_report_disk_unreadable(const struct hvt_log *log, const char *sysname, int error) {
        return hvt_log_struct(log, LOG_ERR, error, HVT_MESSAGE_DISK_UNREADABLE,
                              HVT_FIELDS(HVT_FIELD("HVTUNED_DEVICE=%s", sysname)),
                              "%s: cannot read its Hyper-V identity: %m", sysname);
}

void hvt_report_drift_paused(const struct hvt_log *log, const struct hvt_disk *disk, unsigned repairs,
                             unsigned window_s, unsigned pause_s) {
        (void) hvt_log_disk(log, disk, LOG_WARNING, 0, HVT_MESSAGE_DRIFT_PAUSED,
                            HVT_FIELDS(HVT_FIELD("HVTUNED_REPAIRS=%u", repairs)),
                            "%s: reverted %u times within %u s: something keeps changing it back; "
                            "not repairing it for %u s", disk->sysname, repairs, window_s, pause_s);
}

void hvt_report_contested(const struct hvt_log *log, const struct hvt_disk *disk, enum hvt_attr_id id,
                          const char *theirs, const char *ours, unsigned repairs, unsigned horizon_s,
                          enum hvt_contest_policy policy, const char *suspects) {
        bool yield = policy == HVT_CONTEST_YIELD;
        char attr[48], key[64], suspect_field[HVT_FIELD_MAX];
        const char *optional = NULL;

        (void) hvt_attr_format_path(id, attr, sizeof(attr));
        /* contested.queue.io_timeout: the key that decides it. */
        snprintf(key, sizeof(key), "contested.%s", attr);
        key[strcspn(key, "/")] = '.';
        if (*suspects && hvt_log_fields_wanted(log))
                optional = hvt_field_format(suspect_field, sizeof(suspect_field), "HVTUNED_SUSPECT=%s", suspects);
        (void) hvt_log_disk(log, disk, LOG_WARNING, 0, HVT_MESSAGE_CONTESTED,
                            HVT_FIELDS_FOR(log, HVT_FIELD("HVTUNED_ATTR=%s", attr),
                                           HVT_FIELD("HVTUNED_FROM=%s", theirs), HVT_FIELD("HVTUNED_TO=%s", ours),
                                           HVT_FIELD("HVTUNED_REPAIRS=%u", repairs),
                                           HVT_FIELD("HVTUNED_DECISION=%s", yield ? "yield" : "insist"), optional),
                            "%s %s: set back to %s %u times, each within %u s of the last: another program keeps "
                            "writing it (%s%s); %s (%s%s = \"insist\"%s)", disk->sysname, attr, theirs, repairs, horizon_s,
                            *suspects ? "suspect: " : "no suspect found", suspects,
                            yield ? "hvtuned yields: it leaves the attribute to that program on this disk, and at "
                                    "stop puts the original back only where its own value is still found" :
                                    "hvtuned insists: it goes on repairing, pausing while the disk is past its "
                                    "repair budget",
                            yield ? "the default; " : "", key, yield ? " keeps it" : "");
}

/* The first try is told at notice level, the others at debug: a busy that clears within a
 * try or two is one line in the journal, and one that does not ends in the warning below. */
void hvt_report_busy_retry(const struct hvt_log *log, const struct hvt_disk *disk, unsigned delay_ms,
                           unsigned try, unsigned tries) {
        (void) hvt_log_disk(log, disk, try == 1 ? LOG_NOTICE : LOG_DEBUG, EBUSY, HVT_MESSAGE_BUSY_RETRY,
                            HVT_FIELDS(HVT_FIELD("HVTUNED_TRY=%u", try), HVT_FIELD("HVTUNED_TRIES=%u", tries),
                                       HVT_FIELD("HVTUNED_DELAY_MS=%u", delay_ms)),
                            "%s: busy, another change of its controller's queues is under way: "
                            "the pass runs again in %u ms (try %u of %u)", disk->sysname, delay_ms, try, tries);
}

void hvt_report_busy_gave_up(const struct hvt_log *log, const struct hvt_disk *disk, unsigned tries,
                             unsigned total_ms) {
        (void) hvt_log_disk(log, disk, LOG_WARNING, EBUSY, HVT_MESSAGE_BUSY_GAVE_UP,
                            HVT_FIELDS(HVT_FIELD("HVTUNED_TRIES=%u", tries)),
                            "%s: still busy after %u more passes over %u ms: left as it is until its next "
                            "event, a reload or the periodic check", disk->sysname, tries, total_ms);
}
