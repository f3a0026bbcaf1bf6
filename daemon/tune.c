/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: running a managed disk's pass: the plan, the restore and the apply in order, the
 * record of originals saved before the first write, the reports, the timer that ends a
 * repair pause and the one that runs a busy pass again. What each result means is track.h's.
 *
 * A pass only ever writes what differs, so a change event where nothing drifted costs the
 * reads of the managed attributes and nothing else. */
#include <errno.h>
#include <stdio.h>

#include "macro.h"
#include "messages.h"
#include "neighbours.h"
#include "nvme-timeout.h"
#include "originals.h"
#include "report.h"
#include "sysfs.h"
#include "tune.h"
#include "writer.h"

/* hvt_tracked_instance()'s answer, before it is asked. */
#define INSTANCE_UNASKED 2

struct hook {
        struct hvt_daemon *d;
        struct hvt_tracked *t;
        int instance;   /* hvt_tracked_instance(), once asked; INSTANCE_UNASKED before */
};

/* Whether the disk at t's path is no longer the one tracked. A pass on a disk classified long
 * ago (an event, the periodic check, a controller's re-check, a reload, the stop) may come
 * before the events of a disk removed and added again at its path are read: the disk there
 * is another instance, and writing it would take its values for drift, or give it the old
 * one's originals. Its events follow; until then nothing is written. Asked before the first
 * write only, so that a pass that finds every value as planned costs nothing more, and after
 * the pass opened the disk's directory, so that a swap between the question and the writes
 * leaves them on the old directory. A disk that cannot be read is taken for the one tracked:
 * its writes fail or land as they did before the question was asked. */
static bool another_instance(struct hook *h) {
        if (h->instance == INSTANCE_UNASKED)
                h->instance = hvt_tracked_instance(h->t);
        return h->instance == 0;
}

/* The before-write hook of a restore: no record to write, only the question. */
static int check_instance(const struct hvt_apply *found, void *userdata) {
        (void) found;
        return another_instance(userdata) ? -ESTALE : 0;
}

/* The pass wrote nothing: the disk at t's path is not the one tracked (another_instance()). */
static void stale_pass(struct hvt_daemon *d, const struct hvt_tracked *t) {
        hvt_log_info(&d->log, "%s: no longer the disk at its path (removed, perhaps added again): nothing written, "
                     "its events follow", t->disk.sysname);
}

static int save_record(struct hvt_daemon *d, struct hvt_tracked *t) {
        struct hvt_subject s = hvt_subject_disk(&t->disk);
        struct hvt_originals o;

        hvt_slots_originals(&t->slots, &o);
        return hvt_originals_save(d, &s, &o);
}

/* The originals in the disk's record into its slots: 0, or -errno (-ENOENT: none; -EBADMSG:
 * damaged, and gone), said unless quiet. */
static int load_record(struct hvt_daemon *d, struct hvt_tracked *t, bool quiet) {
        struct hvt_subject s = hvt_subject_disk(&t->disk);
        struct hvt_originals o;
        int r;

        r = hvt_originals_load(d, &s, &o, quiet);
        if (r >= 0)
                r = hvt_slots_set_originals(&t->slots, &o);
        return r;
}

int hvt_tune_load_record(struct hvt_daemon *d, struct hvt_tracked *t) {
        int r = load_record(d, t, false);

        if (r < 0 && r != -ENOENT && r != -EBADMSG)
                t->orig_error = r;
        return r;
}

/* Loads a record that exists but could not be read before: it may hold the true originals,
 * and writing now would overwrite it with whatever is there, perhaps hvtuned's own earlier
 * values. Each pass that writes tries again. */
static int reload_record(struct hvt_daemon *d, struct hvt_tracked *t) {
        int r;

        if (t->orig_error >= 0)
                return 0;
        r = load_record(d, t, true);
        if (r < 0 && r != -ENOENT && r != -EBADMSG) {
                t->orig_error = r;
                return r;
        }
        t->orig_error = 0;
        return 0;
}

/* Before the first write of a pass: the original of every attribute the pass may change that
 * has none yet, as found before that write, goes on disk in one record, or no write. */
static int record_originals(const struct hvt_apply *found, void *userdata) {
        struct hook *h = userdata;
        bool taken[_HVT_ATTR_DISK_MAX];
        int r;

        if (another_instance(h))
                return -ESTALE;
        r = reload_record(h->d, h->t);
        if (r < 0)
                return r;
        r = hvt_track_originals(&h->t->slots, found, taken);
        if (r <= 0)
                return r;
        r = save_record(h->d, h->t);
        if (r < 0)
                hvt_track_drop_originals(&h->t->slots, taken);
        return r;
}

static unsigned report_flags(const struct hvt_daemon *d, const struct hvt_verdict *v) {
        return (d->once ? HVT_REPORT_UNCHANGED_INFO : 0) | (v->repeated ? HVT_REPORT_REPEATED : 0) |
               (v->writer == HVT_WRITER_KERNEL ? HVT_REPORT_BY_KERNEL : 0) |
               (v->writer == HVT_WRITER_OTHER ? HVT_REPORT_BY_OTHER : 0);
}

/* A restore that put an Azure NVMe disk's I/O timeout back under the platform's: the operator
 * is told what that costs. */
static bool nvme_timeout_short(const struct hvt_tracked *t, const struct hvt_result *r) {
        struct hvt_setting put_back;

        return r->attr == HVT_ATTR_IO_TIMEOUT && hvt_kind_is_nvme(t->disk.kind) &&
                (r->outcome == HVT_APPLIED || r->outcome == HVT_CLAMPED) &&
                hvt_setting_from_kernel(&put_back, r->attr, r->to) >= 0 &&
                put_back.num < HVT_PLATFORM_NVME_IO_TIMEOUT_MS;
}

/* A tune that raised an Azure NVMe disk's I/O timeout from under the host's retry window: the
 * disk ran with it until hvtuned started, which is after the root disk was in use. */
static bool nvme_timeout_raised(const struct hvt_tracked *t, const struct hvt_result *r) {
        struct hvt_setting found;

        return r->attr == HVT_ATTR_IO_TIMEOUT && hvt_kind_is_nvme(t->disk.kind) &&
                (r->outcome == HVT_APPLIED || r->outcome == HVT_CLAMPED) &&
                hvt_setting_from_kernel(&found, r->attr, r->from) >= 0 && found.num < HVT_PLATFORM_NVME_RETRY_MS;
}

static void report_results(struct hvt_daemon *d, const struct hvt_tracked *t, const struct hvt_apply *a,
                           const struct hvt_verdict *v) {
        struct hvt_subject s = hvt_subject_disk(&t->disk);

        for (size_t i = 0; i < a->n; i++) {
                const struct hvt_result *r = &a->results[i];

                hvt_report_result(&d->log, &s, r, v[i].action, report_flags(d, &v[i]));
                if (v[i].action == HVT_ACTION_RESTORE && nvme_timeout_short(t, r))
                        hvt_report_nvme_timeout_short(&d->log, &t->disk, r->to);
                if (v[i].action != HVT_ACTION_RESTORE && nvme_timeout_raised(t, r))
                        hvt_nvme_timeout_advise(d, &t->disk, r->from);
        }
}

/* Whether a write of the pass stayed busy through its tries (apply.h). */
static bool any_busy(const struct hvt_apply *a) {
        for (size_t i = 0; i < a->n; i++)
                if (a->results[i].outcome == HVT_FAILED && a->results[i].error == EBUSY)
                        return true;
        return false;
}

/* Puts back the originals of p, unless the disk at t's path is no longer t's (then
 * h->instance is 0). A restore that fails keeps its record, for a later pass or a restart to
 * do it. Returns how many failed; *busy is set when one was busy. */
static unsigned restore(struct hvt_daemon *d, struct hvt_tracked *t, const struct hvt_plan *p, bool *busy,
                        struct hook *h) {
        struct hvt_verdict v[_HVT_ATTR_DISK_MAX];
        struct hvt_apply a;
        unsigned failed;

        if (hvt_plan_count(p) == 0)
                return 0;
        hvt_apply_disk(&t->disk, p, d->apply_flags | HVT_APPLY_RESTORE, check_instance, h, &a);
        /* Nothing written: the record keeps every original, and the caller says why. */
        if (h->instance == 0)
                return 0;
        failed = hvt_track_restored(&t->slots, &a, v);
        report_results(d, t, &a, v);
        (void) save_record(d, t);
        if (busy && any_busy(&a))
                *busy = true;
        return failed;
}

/* At stop, an Azure NVMe disk's I/O timeout whose original is under the host's retry window
 * stays as hvtuned set it, when that is what the disk shows and at least the window: putting
 * the original back would fail I/O the host still completes (policy.h). Returns whether it is
 * held, then taken out of p. Whose value it is: the daemon knows what it wanted; hvtuned
 * --restore reads no configuration, and a value at least the window is taken for hvtuned's,
 * since the record says hvtuned wrote it. */
static bool hold_nvme_timeout(const struct hvt_tracked *t, struct hvt_plan *p) {
        struct hvt_setting *orig = &p->want[HVT_ATTR_IO_TIMEOUT], was, now, want;
        const struct hvt_slot *slot = hvt_slot_get(&t->slots, HVT_ATTR_IO_TIMEOUT);
        _cleanup_close_ int fd = -EBADF;
        char text[HVT_VALUE_MAX];

        if (!hvt_kind_is_nvme(t->disk.kind) || !orig->set ||
            hvt_setting_from_kernel(&was, HVT_ATTR_IO_TIMEOUT, orig->text) < 0 || was.num >= HVT_PLATFORM_NVME_RETRY_MS)
                return false;
        fd = hvt_sysfs_open_dir(t->disk.syspath);
        if (fd < 0 || hvt_sysfs_read(fd, "queue/io_timeout", text, sizeof(text)) < 0 ||
            hvt_setting_from_kernel(&now, HVT_ATTR_IO_TIMEOUT, text) < 0 || now.num < HVT_PLATFORM_NVME_RETRY_MS)
                return false;
        if (slot && slot->want_set) {
                hvt_slot_want(slot, &want);
                if (want.num != now.num)
                        return false;
        }
        orig->set = false;
        return true;
}

/* hvtuned --restore lets the held timeout go: its record goes, and nothing puts the failing
 * value back later (a start would adopt it as hvtuned's to restore). */
static void forget_held_timeout(struct hvt_daemon *d, struct hvt_tracked *t) {
        struct hvt_slot *slot = hvt_slot_get(&t->slots, HVT_ATTR_IO_TIMEOUT);

        if (!slot)
                return;
        hvt_slot_set_orig(slot, &(struct hvt_setting) {});
        hvt_slots_compact(&t->slots);
        if (save_record(d, t) < 0)
                t->timeout_held = false;  /* still recorded: counted as kept by the caller */
}

bool hvt_tune_restore(struct hvt_daemon *d, struct hvt_tracked *t) {
        struct hook hook = { .d = d, .t = t, .instance = INSTANCE_UNASKED };
        struct hvt_plan all;
        bool busy = false;

        hvt_track_restore_all(&t->slots, &all);
        t->timeout_held = hold_nvme_timeout(t, &all);
        if (t->timeout_held && d->undo)
                forget_held_timeout(d, t);
        (void) restore(d, t, &all, &busy, &hook);
        if (hook.instance == 0)
                stale_pass(d, t);
        return busy;
}

static int on_resume(struct hvt_event_source *s, uint64_t usec, void *userdata) {
        struct hvt_tracked *t = userdata;

        (void) s;
        t->resume = hvt_event_source_free(t->resume);  /* no longer paused: the pass below is not skipped */
        hvt_repair_window_restart(&t->window, usec);
        hvt_tune(t->daemon, t, HVT_TUNE_VERIFY);
        return 0;
}

/* What hvtuned wanted of id in this pass, and what it found there: the neighbour's value. */
static void contest_values(const struct hvt_apply *a, enum hvt_attr_id id, const char **theirs, const char **ours) {
        const struct hvt_result *r = hvt_apply_find(a, id);

        *theirs = r ? r->from : "?";
        *ours = r ? r->to : "?";
}

/* Each attribute this pass found contested: who is likely writing it (only now, never on a
 * pass's path: it reads the rules directories and /proc), the entry, the count. */
static void tell_contests(struct hvt_daemon *d, struct hvt_tracked *t, const struct hvt_apply *a,
                          const struct hvt_contest *c, uint64_t horizon) {
        for (unsigned id = 0; id < _HVT_ATTR_DISK_MAX; id++) {
                enum hvt_contest_policy policy = c->yielded & (UINT32_C(1) << id) ? HVT_CONTEST_YIELD :
                                                 HVT_CONTEST_INSIST;
                const struct hvt_slot *slot = hvt_slot_get(&t->slots, (enum hvt_attr_id) id);
                struct hvt_suspects suspects;
                const char *theirs, *ours;
                char text[512] = "";

                if (!(c->contested & (UINT32_C(1) << id)) || !slot)
                        continue;
                if (hvt_suspects_find("/", (enum hvt_attr_id) id, &suspects) >= 0)
                        hvt_suspects_format(&suspects, text, sizeof(text));
                contest_values(a, (enum hvt_attr_id) id, &theirs, &ours);
                hvt_report_contested(&d->log, &t->disk, (enum hvt_attr_id) id, theirs, ours, slot->repairs,
                                     (unsigned) (horizon / 1000000), policy, text);
                d->counters.contests[id][policy]++;
        }
}

/* The repairs into the metrics, and those of other writers into the disk's window and each
 * attribute's run (track.h): a contest is told, and past the repair budget, for what hvtuned
 * still repairs, the disk pauses until the window ends. The kernel's re-application is neither
 * a neighbour nor a fight: it is counted, and that is all. */
static void count_repairs(struct hvt_daemon *d, struct hvt_tracked *t, const struct hvt_tally *tally,
                          const struct hvt_apply *a) {
        uint64_t horizon = hvt_contest_horizon(d->config->verify_interval), now, end;
        struct hvt_contest c;
        int r;

        d->counters.repairs += tally->repairs + tally->kernel_repairs;
        d->counters.kernel_repairs += tally->kernel_repairs;
        if (tally->repairs == 0)
                return;
        t->n_repairs = tally->repairs > UINT32_MAX - t->n_repairs ? UINT32_MAX : t->n_repairs + tally->repairs;
        if (tally->repaired)
                /* A pass applies in the attributes' order: its last repair is the highest. */
                t->last_repair_id = (uint8_t) (31 - __builtin_clz(tally->repaired));
        if (!d->event)
                return;
        now = hvt_event_now(d->event);
        hvt_track_repairs(&t->slots, &t->window, tally, now, horizon, d->config->contest_insist, &c);
        if (c.contested)
                tell_contests(d, t, a, &c, horizon);
        if (!c.pause || t->resume)
                return;

        end = hvt_repair_window_end(&t->window);
        r = hvt_event_add_time(d->event, &t->resume, end, 1000000, on_resume, t);
        if (r < 0) {
                (void) hvt_log_errno(&d->log, LOG_ERR, r, "%s: cannot pause repairs: %m", t->disk.sysname);
                return;
        }
        hvt_report_drift_paused(&d->log, &t->disk, t->window.repairs, HVT_REPAIR_WINDOW_S,
                                (unsigned) ((end - now + 999999) / 1000000));
}

/* A pass that met EBUSY runs again after HVT_BUSY_FIRST_MS, twice that, ..., at most
 * HVT_BUSY_PASSES times in a row: 15.75 s in all. */
#define HVT_BUSY_FIRST_MS 250u
#define HVT_BUSY_PASSES 6u

static int on_busy_retry(struct hvt_event_source *s, uint64_t usec, void *userdata) {
        struct hvt_tracked *t = userdata;

        (void) s;
        (void) usec;
        t->busy_retry = hvt_event_source_free(t->busy_retry);
        hvt_tune(t->daemon, t, HVT_TUNE_BUSY);
        return 0;
}

/* 7.3 and 6.18.y answer a scheduler or nr_requests write with EBUSY while another change of
 * the controller's tag set holds its lock: another LUN's switch (milliseconds), a re-probe or an
 * nr_hw_queues update (longer). apply.c's tries at once cover the first; for the others the
 * disk's pass runs again, later each time, a bounded number of times: without it a disk that
 * met a busy kernel at start would stay untuned until some event came. A pass that is not
 * busy ends the series. */
static void retry_busy(struct hvt_daemon *d, struct hvt_tracked *t, bool busy) {
        uint64_t delay_ms;
        int r;

        if (!busy || !d->event) {
                t->busy_retry = hvt_event_source_free(t->busy_retry);
                t->busy_passes = 0;
                return;
        }
        if (t->busy_retry)  /* an event's pass met the same busy: the timer stands */
                return;
        if (t->busy_passes >= HVT_BUSY_PASSES) {
                hvt_report_busy_gave_up(&d->log, &t->disk, t->busy_passes,
                                        HVT_BUSY_FIRST_MS * ((1u << HVT_BUSY_PASSES) - 1));
                t->busy_passes = 0;
                return;
        }
        delay_ms = (uint64_t) HVT_BUSY_FIRST_MS << t->busy_passes;
        r = hvt_event_add_time_relative(d->event, &t->busy_retry, delay_ms * 1000, delay_ms * 1000 / 4,
                                        on_busy_retry, t);
        if (r < 0) {
                (void) hvt_log_errno(&d->log, LOG_ERR, r, "%s: cannot set up the busy retry: %m", t->disk.sysname);
                return;
        }
        t->busy_passes++;
        d->counters.busy_retries++;
        hvt_report_busy_retry(&d->log, &t->disk, (unsigned) delay_ms, t->busy_passes, HVT_BUSY_PASSES);
}

static void tune(struct hvt_daemon *d, struct hvt_tracked *t, enum hvt_tune_reason why) {
        /* A disk found just now was classified from its path a moment ago. */
        struct hook hook = { .d = d, .t = t, .instance = why == HVT_TUNE_FOUND ? 1 : INSTANCE_UNASKED };
        struct hvt_verdict v[_HVT_ATTR_DISK_MAX];
        struct hvt_originals orig;
        struct hvt_plan plan, back;
        struct hvt_tally tally;
        struct hvt_apply a;
        unsigned restore_failed;
        bool busy = false;

        /* Paused: events and periodic checks wait for the end of the pause, which re-checks;
         * a new configuration is the operator's word and applies at once. */
        if (t->resume && (why == HVT_TUNE_EVENT || why == HVT_TUNE_VERIFY || why == HVT_TUNE_BUSY))
                return;

        hvt_slots_originals(&t->slots, &orig);
        hvt_policy_plan(d->config, &t->disk, &orig, &plan);
        /* An insisted contest whose neighbour stopped is over; what is yielded stays out of the
         * plan while it says the same (track.h). */
        if (d->event)
                (void) hvt_track_contest_over(&t->slots, hvt_event_now(d->event),
                                              hvt_contest_horizon(d->config->verify_interval));
        hvt_track_yields(&t->slots, &plan, d->config->contest_insist);
        if (hvt_track_plan(&t->slots, &plan, &back) < 0) {
                (void) hvt_log_errno(&d->log, LOG_ERR, -ENOMEM, "%s: out of memory, not tuned", t->disk.sysname);
                t->n_failed = 1;
                d->any_failed = true;
                return;
        }
        restore_failed = restore(d, t, &back, &busy, &hook);
        if (hook.instance == 0) {
                stale_pass(d, t);
                return;
        }
        /* A periodic check finds most disks as planned: read by path, no directory opened. */
        hvt_apply_disk(&t->disk, &plan, d->apply_flags | (why == HVT_TUNE_VERIFY ? HVT_APPLY_CHECK : 0),
                       record_originals, &hook, &a);
        if (hook.instance == 0) {
                stale_pass(d, t);
                return;
        }
        hvt_track_applied(&t->slots, &a, v, &tally);
        hvt_writer_classify(d, t, &a, v, &tally);
        report_results(d, t, &a, v);
        if (tally.forgotten > 0)
                (void) save_record(d, t);

        t->n_failed = restore_failed + tally.failed;
        t->n_unsupported = tally.unsupported;
        t->n_would_apply = tally.would_apply;
        if (t->n_failed > 0)
                d->any_failed = true;
        if (tally.repairs + tally.kernel_repairs > 0)
                count_repairs(d, t, &tally, &a);
        t->n_yielded = 0;
        for (size_t i = 0; i < t->slots.n; i++)
                t->n_yielded += t->slots.slot[i].yielded;
        retry_busy(d, t, busy || any_busy(&a));
}

void hvt_tune(struct hvt_daemon *d, struct hvt_tracked *t, enum hvt_tune_reason why) {
        /* What the pass found and did, in one write(2) on stderr. */
        hvt_log_hold(&d->log);
        tune(d, t, why);
        hvt_log_release(&d->log);
}
