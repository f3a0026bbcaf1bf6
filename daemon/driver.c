/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the driver's module parameter (see driver.h).
 *
 * storvsc reads storvsc_max_hw_queues only when it probes a controller, so writing it helps
 * every controller probed later (hot-added, re-probed) and none probed before: host.c reports
 * which still hold queues over the cap. hvtuned never edits the bootloader or /etc. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"
#include "host.h"
#include "hwqueues.h"
#include "macro.h"
#include "originals.h"
#include "report.h"
#include "sysfs.h"

#define CPU_DIR "/sys/devices/system/cpu"
#define PARAM_DIR HVT_DRIVER_SYSPATH "/parameters"

/* 1 when storvsc has the parameter, 0 when storvsc is there without it, -errno when storvsc's
 * parameters cannot be seen at all (no storvsc: nothing to say about its cap). */
static int cap_support(void) {
        if (access(PARAM_DIR "/storvsc_max_hw_queues", F_OK) == 0)
                return 1;
        if (errno != ENOENT)
                return negative_errno();
        return access(PARAM_DIR, F_OK) == 0 ? 0 : negative_errno();
}

int hvt_driver_cap_supported(const struct hvt_daemon *d) {
        return d->driver.cap_support;
}

bool hvt_driver_loaded(const struct hvt_daemon *d) {
        return d->driver.cap_support != -ENOENT;
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
                d->driver.present = 0;
                return hvt_log_errno(&d->log, hvt_host_has_storvsc(d) ? LOG_WARNING : LOG_DEBUG, r, "Cannot count the present CPUs (%s/present: %m): "
                                     "leaving storvsc_max_hw_queues alone", CPU_DIR);
        }
        d->driver.present = n;
        return 0;
}

/* The record into d->driver.orig: once at start, said when it cannot be read, and again
 * before a write after that (quietly): it may hold the true original. 0 once loaded or when
 * there is none. */
static int load_original(struct hvt_daemon *d, bool quiet) {
        struct hvt_subject driver = hvt_subject_driver();
        int r;

        if (d->driver.orig_error == 0 && d->driver.loaded)
                return 0;
        d->driver.loaded = true;
        r = hvt_originals_load(d, &driver, &d->driver.orig, quiet);
        d->driver.orig_error = r < 0 && r != -ENOENT && r != -EBADMSG ? r : 0;
        return d->driver.orig_error;
}

static int record_original(const struct hvt_apply *found, void *userdata) {
        struct hvt_daemon *d = userdata;
        struct hvt_subject driver = hvt_subject_driver();
        /* hvt_apply_attr(): one attribute, the parameter. */
        const struct hvt_result *res = &found->results[0];
        struct hvt_setting *o = &d->driver.orig.value[res->attr];
        int r;

        r = load_original(d, true);
        if (r < 0 || o->set)
                return r;
        r = hvt_setting_from_kernel(o, res->attr, res->from);
        if (r >= 0)
                r = hvt_originals_save(d, &driver, &d->driver.orig);
        if (r < 0)
                o->set = false;
        return r;
}

static void report_param(struct hvt_daemon *d, const struct hvt_result *r, enum hvt_action action,
                         const char *because) {
        struct hvt_subject driver = hvt_subject_driver();
        unsigned flags = d->once ? HVT_REPORT_UNCHANGED_INFO : 0;
        const struct hvt_result *last = &d->driver.param_last;

        /* As for a disk's attributes: the same failure, or the same missing parameter, once. */
        if ((r->outcome == HVT_FAILED || r->outcome == HVT_UNSUPPORTED) && last->outcome == r->outcome &&
            last->error == r->error && strcmp(last->to, r->to) == 0)
                flags |= HVT_REPORT_REPEATED;
        /* Without a storvsc controller the cap is only for one probed later: nothing to say of
         * it, nor a failure to count. --restore scans no controller: what it puts back is said. */
        if (!hvt_host_has_storvsc(d) && !d->undo)
                flags |= HVT_REPORT_DEBUG;
        hvt_report_result_because(&d->log, &driver, r, action, flags, because);
        d->driver.param_last = *r;
        if (r->outcome == HVT_FAILED && (hvt_host_has_storvsc(d) || d->undo))
                d->any_failed = true;
}

/* Writes value unless the kernel would give a controller probed now the same queues; a
 * restore puts the exact original back. */
static void set_param(struct hvt_daemon *d, unsigned value, enum hvt_action action) {
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
                /* Before 5.13 (and without storvsc) there is no such parameter: what the read
                 * finds is what the kernel has, whatever an earlier look said. An ENOENT is an
                 * absence only when faccessat() agrees, as in apply.c: a parameter that is there
                 * and could not be opened is a failure, whose original stays recorded. */
                bool absent = r == -ENOENT &&
                              faccessat(fd >= 0 ? fd : AT_FDCWD, fd >= 0 ? "storvsc_max_hw_queues" :
                                        PARAM_DIR "/storvsc_max_hw_queues", F_OK, 0) < 0 && errno == ENOENT;

                res.outcome = absent ? HVT_UNSUPPORTED : HVT_FAILED;
                res.error = -r;
                if (fd >= 0 && absent)
                        d->driver.cap_support = 0;
                return report_param(d, &res, action,
                                    d->driver.cap_support == 0 ? "this kernel predates storvsc_max_hw_queues, which came "
                                    "in 5.13: every SCSI controller has one hw queue per present CPU, and only a kernel "
                                    "update can cap them (no module option or kernel command line does)" : NULL);
        }
        errno = 0;
        cur = strtoul(buf, &end, 10);
        if (errno == 0 && end != buf && *end == '\0' && cur <= UINT32_MAX && action != HVT_ACTION_RESTORE &&
            d->driver.present > 0 &&
            hvt_hwq_effective((unsigned) cur, d->driver.present) == hvt_hwq_effective(value, d->driver.present)) {
                res.outcome = HVT_UNCHANGED;
                snprintf(res.from, sizeof(res.from), "%lu", cur);
                if (cur != value)  /* "0" already means one per present CPU */
                        snprintf(res.kept, sizeof(res.kept), "%lu", cur);
                return report_param(d, &res, action, NULL);
        }
        hvt_apply_attr(fd, HVT_ATTR_MAX_HW_QUEUES, &want, d->apply_flags,
                       action == HVT_ACTION_RESTORE ? NULL : record_original, d, &res);
        report_param(d, &res, action, NULL);
}

void hvt_driver_restore(struct hvt_daemon *d) {
        struct hvt_subject driver = hvt_subject_driver();
        struct hvt_setting *o = &d->driver.orig.value[HVT_ATTR_MAX_HW_QUEUES];

        if (!o->set)
                return;
        set_param(d, (unsigned) o->num, HVT_ACTION_RESTORE);
        if (d->driver.param_last.outcome == HVT_FAILED)
                return;  /* the record stays, for a later try */
        o->set = false;
        (void) hvt_originals_save(d, &driver, &d->driver.orig);
}

int hvt_driver_load(struct hvt_daemon *d) {
        d->driver.cap_support = cap_support();
        return load_original(d, false);
}

void hvt_driver_set_cap(struct hvt_daemon *d) {
        struct hvt_driver *drv = &d->driver;

        (void) load_original(d, false);
        drv->cap_support = cap_support();
        if (!hvt_driver_loaded(d)) {
                drv->target = 0;
                hvt_log_debug(&d->log, "hv_storvsc is not loaded (no " PARAM_DIR "): no hw queue cap to set");
                return;
        }
        (void) read_present(d);
        drv->target = hvt_hwq_target(&d->config->host, drv->present);
        if (drv->target > 0)
                set_param(d, drv->target, HVT_ACTION_TUNE);
        /* blk-mq gives a disk with a single hw queue mq-deadline by default (elevator.c,
         * elevator_get_default()), which a scheduler in hvtuned.conf then has to undo. Its
         * cost: docs/performance.md measured ~320 KiB a hw queue (256 scheduler requests and
         * their sense buffers; 10.0-10.2 MiB at 32 queues) on 6.1. */
        if (drv->target == 1 && hvt_host_has_storvsc(d))
                (void) hvt_log_struct(&d->log, LOG_NOTICE, 0, NULL, NULL,
                                      "With a cap of 1, each disk on a controller probed from now on has a single "
                                      "hw queue, and the kernel gives such a disk mq-deadline (about 320 KiB more "
                                      "per disk than none, measured on 6.1): hvtuned.conf's queue.scheduler "
                                      "(none by default) is what keeps it off");
        if (drv->target == 0)
                hvt_driver_restore(d);  /* a cap dropped by a reload goes back to the original */
}
