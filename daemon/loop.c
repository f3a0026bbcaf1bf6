/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: event sources and their handlers (the notification socket's and the watchdog's are
 * notify.c's, a paused disk's is tune.c's).
 *
 * The monitor listens on the "udev" source, after rules ran: a handler on the kernel source
 * would race the distro rules that set their own scheduler. It is receiving before the
 * start-up enumeration, so a disk that appears during the walk is seen at least once. */
#include <errno.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <string.h>

#include "dump.h"
#include "enumerate.h"
#include "event.h"
#include "host.h"
#include "load.h"
#include "loop.h"
#include "macro.h"
#include "messages.h"
#include "notify.h"
#include "passes.h"
#include "reload.h"
#include "route.h"
#include "status.h"
#include "stop.h"
#include "udev-util.h"

/* Large enough for a burst of hot-added LUNs; charged only while it holds events. */
#define MONITOR_RCVBUF (128 * 1024 * 1024)
/* Events one dispatch reads at most: a storm that never lets the socket drain must still let
 * the loop go round, and a SIGTERM is dispatched first in every round. */
#define MONITOR_BATCH 256
/* Walks over every disk after lost events, at most one this long after the last one ended:
 * overruns that come again and again (a storm, or a socket that says ENOBUFS on every read)
 * cost a walk a second, never a spin. */
#define RESYNC_INTERVAL_USEC (1000 * 1000)

/* SIGTERM or SIGINT waiting: blocked (hvt_loop_block_signals()), they wait for the loop, and
 * a long walk over the disks ends early for them. */
static bool stop_pending(void *userdata) {
        sigset_t pending;

        (void) userdata;
        return sigpending(&pending) == 0 &&
               (sigismember(&pending, SIGTERM) == 1 || sigismember(&pending, SIGINT) == 1);
}

static int on_resync(struct hvt_event_source *s, uint64_t usec, void *userdata) {
        struct hvt_daemon *d = userdata;

        (void) s, (void) usec;
        (void) hvt_log_struct(&d->log, LOG_WARNING, ENOBUFS, HVT_MESSAGE_RESYNC, NULL,
                              "Lost device events (receive buffer overrun), re-enumerating all disks");
        (void) hvt_enumerate(d, stop_pending, NULL);
        (void) hvt_host_scan(d);
        d->resync_done_usec = hvt_now_usec(CLOCK_MONOTONIC);
        /* The events the socket kept meanwhile come next: the walk saw where they led already,
         * and a pass over a disk that needs nothing writes nothing. */
        return hvt_event_source_set_enabled(d->monitor_source, true);
}

/* Lost events: one walk covers every loss until it runs, so the monitor rests until then,
 * and the walk waits for its interval. */
static void want_resync(struct hvt_daemon *d) {
        uint64_t now = hvt_now_usec(CLOCK_MONOTONIC), at = d->resync_done_usec + RESYNC_INTERVAL_USEC;

        (void) hvt_event_source_set_enabled(d->monitor_source, false);
        if (!hvt_event_source_get_enabled(d->resync))
                (void) hvt_event_source_set_time_relative(d->resync, d->resync_done_usec && at > now ? at - now : 0);
}

static int on_monitor(struct hvt_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct hvt_daemon *d = userdata;

        (void) s, (void) fd, (void) revents;
        for (unsigned i = 0; i < MONITOR_BATCH; i++) {
                _cleanup_(udev_device_unrefp) struct udev_device *dev = NULL;

                errno = 0;
                dev = udev_monitor_receive_device(d->monitor);
                if (!dev) {
                        if (errno == ENOBUFS)
                                want_resync(d);
                        break;  /* else EAGAIN: drained */
                }
                (void) hvt_route_device(d, dev, udev_device_get_action(dev));
        }
        return 0;
}

/* After every iteration that dispatched anything: what the pass changed, said once for the
 * whole batch of events. */
static int on_post(struct hvt_event_source *s, void *userdata) {
        (void) s;
        hvt_status_update(userdata);
        return 0;
}

/* Restores originals unless told not to, a restart follows, or the whole system is going down
 * anyway (stop.h). */
static int on_terminate(struct hvt_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        struct hvt_daemon *d = userdata;

        (void) s;
        hvt_log_debug(&d->log, "Received %s, exiting", strsignal((int) si->ssi_signo));
        hvt_notify_stopping(&d->notify);
        hvt_stop(d);
        return hvt_event_exit(d->event, 0);
}

/* The loop may run a timer up to its accuracy late (event.h). The verify timer is armed that
 * much early, so that checks are at most the interval apart and a write made just after one
 * is found within the interval, the bound hvtuned.conf(5) gives. */
static uint64_t verify_accuracy(uint64_t interval) {
        return interval / 10 < 1000000 ? interval / 10 : 1000000;
}

static uint64_t verify_early(uint64_t interval) {
        return interval - verify_accuracy(interval);
}

static int on_verify(struct hvt_event_source *s, uint64_t usec, void *userdata) {
        struct hvt_daemon *d = userdata;

        (void) usec;
        hvt_pass_verify(d);
        /* Relative to this iteration, not to the last deadline: a slow pass never queues up
         * passes. */
        return hvt_event_source_set_time_relative(s, verify_early((uint64_t) d->config->verify_interval * 1000000));
}

/* verify_interval = 0 means no timer at all, not an idle one: zero wakeups. */
static int setup_verify(struct hvt_daemon *d) {
        uint64_t usec = (uint64_t) d->config->verify_interval * 1000000;
        int r;

        if (usec == 0) {
                d->verify = hvt_event_source_free(d->verify);
                return 0;
        }
        /* A new interval has a new accuracy: a new timer. */
        d->verify = hvt_event_source_free(d->verify);
        r = hvt_event_add_time_relative(d->event, &d->verify, verify_early(usec), verify_accuracy(usec), on_verify, d);
        if (r < 0)
                return hvt_log_errno(&d->log, LOG_ERR, r, "Cannot set up the verify timer: %m");
        return 0;
}

/* Reload: a good file is applied to every disk as a difference; a bad one keeps the running
 * configuration (and the disks their values), and STATUS says where the error is. SIGHUPs
 * that arrive meanwhile are one pending signal: a burst costs one more reload. */
static int on_reload(struct hvt_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        struct hvt_daemon *d = userdata;
        int r;

        (void) s, (void) si;
        hvt_notify_reloading(&d->notify);
        d->reloads++;
        (void) hvt_reload_mark(d->state_fd, d->reloads, d->reloads - 1, d->config_error);
        unsigned interval = d->config->verify_interval;

        r = hvt_load_config(d);
        d->counters.reloads++;
        d->counters.reload_failures += r < 0;
        d->counters.last_reload_ok = r >= 0;
        d->counters.last_reload_usec = hvt_now_usec(CLOCK_REALTIME);
        if (r >= 0) {
                hvt_pass_retune(d);
                hvt_pass_driver(d);
                /* The same interval keeps its schedule: frequent reloads must not postpone it. */
                if (d->config->verify_interval != interval)
                        (void) setup_verify(d);
        }
        hvt_status_ready(d);
        (void) hvt_reload_mark(d->state_fd, d->reloads, d->reloads, d->config_error);
        return 0;
}

static int on_dump(struct hvt_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        (void) s, (void) si;
        hvt_dump_state(userdata);
        return 0;
}

static int setup_monitor(struct hvt_daemon *d) {
        int r;

        d->monitor = udev_monitor_new_from_netlink(d->udev, "udev");
        if (!d->monitor)
                return hvt_log_errno(&d->log, LOG_ERR, negative_errno(), "Cannot open the udev monitor: %m");
        /* Disks, the SCSI LUNs whose device/ attributes hvtuned manages, and SCSI hosts. */
        r = udev_monitor_filter_add_match_subsystem_devtype(d->monitor, "block", "disk");
        if (r >= 0)
                r = udev_monitor_filter_add_match_subsystem_devtype(d->monitor, "scsi", "scsi_device");
        /* Controllers: hot-added ones, and re-probed ones coming back. */
        if (r >= 0)
                r = udev_monitor_filter_add_match_subsystem_devtype(d->monitor, "scsi_host", NULL);
        /* NVMe controllers, for their report. */
        if (r >= 0)
                r = udev_monitor_filter_add_match_subsystem_devtype(d->monitor, "nvme", NULL);
        if (r < 0)
                return hvt_log_errno(&d->log, LOG_ERR, r, "Cannot filter the udev monitor: %m");
        /* Needs CAP_NET_ADMIN beyond rmem_max; without it the default buffer still works. */
        (void) udev_monitor_set_receive_buffer_size(d->monitor, MONITOR_RCVBUF);
        r = udev_monitor_enable_receiving(d->monitor);
        if (r < 0)
                return hvt_log_errno(&d->log, LOG_ERR, r, "Cannot listen for udev events: %m");
        r = hvt_event_add_io(d->event, &d->monitor_source, udev_monitor_get_fd(d->monitor), EPOLLIN, on_monitor, d);
        if (r >= 0)
                r = hvt_event_add_time_relative(d->event, &d->resync, 0, 0, on_resync, d);
        if (r >= 0)
                r = hvt_event_source_set_enabled(d->resync, false);
        if (r < 0)
                return hvt_log_errno(&d->log, LOG_ERR, r, "Cannot watch the udev monitor: %m");
        return 0;
}

static const struct {
        int sig;
        hvt_event_signal_handler_t handler;
} handlers[] = {
        { SIGTERM, on_terminate },
        { SIGINT,  on_terminate },
        { SIGHUP,  on_reload },
        { SIGUSR1, on_dump },
};

int hvt_loop_block_signals(void) {
        sigset_t mask;

        sigemptyset(&mask);
        for (size_t i = 0; i < ELEMENTSOF(handlers); i++)
                sigaddset(&mask, handlers[i].sig);
        return sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ? negative_errno() : 0;
}

static int setup_signals(struct hvt_daemon *d) {
        int r;

        r = hvt_loop_block_signals();
        if (r < 0)
                return hvt_log_errno(&d->log, LOG_ERR, r, "Cannot block signals: %m");

        for (size_t i = 0; i < ELEMENTSOF(handlers); i++) {
                r = hvt_event_add_signal(d->event, NULL, handlers[i].sig, handlers[i].handler, d);
                if (r < 0)
                        return hvt_log_errno(&d->log, LOG_ERR, r, "Cannot watch signals: %m");
        }
        return 0;
}

int hvt_loop_run(struct hvt_daemon *d) {
        char status[sizeof(d->status_sent)];
        int r;

        r = hvt_event_new(&d->event);
        if (r < 0)
                return hvt_log_errno(&d->log, LOG_ERR, r, "Cannot create the event loop: %m");
        /* From here entries journald has no room for wait for it on the loop, not for the next. */
        r = hvt_log_attach(&d->log, d->event);
        if (r < 0)
                return hvt_log_errno(&d->log, LOG_ERR, r, "Cannot watch the journal's socket: %m");
        r = setup_signals(d);
        if (r < 0)
                return r;
        r = hvt_notify_open(&d->notify, d->event, &d->log);
        if (r < 0)
                return r;
        r = setup_monitor(d);
        if (r < 0)
                return r;

        r = hvt_event_add_post(d->event, &d->status, on_post, d);
        if (r < 0)
                return hvt_log_errno(&d->log, LOG_ERR, r, "Cannot set up the status updates: %m");
        /* Every step that can fail the start comes before the first write: an exit from
         * here on would leave the disks tuned with nobody to put them back. */
        r = setup_verify(d);
        if (r < 0)
                return r;

        r = hvt_enumerate(d, stop_pending, NULL);
        if (r < 0)
                return r;
        /* Stopping already: the loop handles the signal first thing, restoring what was done. */
        if (r == 0)
                hvt_pass_driver(d);
        hvt_status_format(d, status, sizeof(status));
        (void) hvt_log_struct(&d->log, LOG_INFO, 0, HVT_MESSAGE_STARTED, NULL, "Started: %s", status);
        /* Before READY=1: systemctl start returns on it, and a reload right after needs the record. */
        (void) hvt_reload_mark(d->state_fd, 0, 0, "");
        hvt_status_ready(d);

        r = hvt_event_loop(d->event);
        if (r < 0)
                return hvt_log_errno(&d->log, LOG_ERR, r, "Event loop failed: %m");
        return 0;
}
