/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the sd_notify messages hvtuned sends, and their way to the service manager.
 *
 * libsystemd's sd_notify() sends on a blocking socket: when the manager does not read (PID 1
 * busy elsewhere) and its socket's queue is full (net.unix.max_dgram_qlen datagrams), it
 * blocks, and with it the loop: events, signals, even the watchdog that would restart the
 * daemon. So hvtuned has its own sender, as journald has: a non-blocking datagram socket
 * connected to the manager's (dgram.c), so that EPOLLOUT says when the manager's queue has
 * room again. What the socket does not take waits for that: READY, RELOADING and STOPPING in
 * order, a STATUS only until a newer one replaces it, and the pings meanwhile as one. The
 * watchdog's pings come from a timer of this file's, so that they take the same way. A
 * manager that binds its socket anew (restarted, or re-executed) is connected to again by the
 * first notification that meets the old one gone; while none can be reached, that is said
 * once, as a warning: without notifications the watchdog kills the daemon.
 *
 * Failures to notify are not errors of the daemon: systemd may not be listening (a terminal,
 * a container without it). STATUS holds text hvtuned does not control (a configuration file's
 * name): escaped here (lib/escape.h), it can never start a line, which would be a key. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "escape.h"
#include "macro.h"
#include "notify.h"

/* The longest STATUS= text sent whole (the daemon's is shorter, status_sent[]): a longer one
 * is cut. */
#define STATUS_MAX 1024
/* Bytes the queue may hold: HVT_NOTIFY_QUEUE_MAX messages of STATUS's size, escaped. */
#define QUEUE_BYTES (64 * 1024)

enum {
        KIND_STATE,   /* READY, RELOADING, STOPPING: each kept, in order */
        KIND_STATUS,  /* a later STATUS= supersedes it */
        KIND_PING,    /* WATCHDOG=1: one waiting stands for all */
};

/* The first key of a message, for a log line: its value is escaped already. */
static int key_len(const char *text, size_t size) {
        size_t n = 0;

        while (n < size && text[n] != '=' && text[n] != '\n')
                n++;
        return (int) n;
}

/* The manager's socket is gone (closed, or its path unbound): said once as a warning, since
 * from here systemd hears nothing (no READY, no pings: the watchdog will kill us) until it
 * can be reached again, which every later notification tries. */
static void unreachable(struct hvt_notify *n, int r) {
        if (n->told_unreachable)
                return;
        n->told_unreachable = true;
        (void) hvt_log_errno(n->log, LOG_WARNING, r, "Cannot reach the service manager at NOTIFY_SOCKET=%s "
                             "(%m): it is not notified until it can be reached again", n->address);
}

/* Any other failure but a full socket loses that message: said once for each kind of failure,
 * as a manager that went away makes every later message fail alike. */
static void lost(struct hvt_notify *n, int r, const char *text, size_t size) {
        if (r == -ECONNREFUSED || r == -ENOENT || r == -ENOTCONN) {
                unreachable(n, r);
                return;
        }
        if (r == n->told_error)
                return;
        n->told_error = r;
        (void) hvt_log_errno(n->log, LOG_DEBUG, r, "Cannot notify the service manager (%m): %.*s lost",
                             key_len(text, size), text);
}

static void on_lost(struct hvt_dgram *d, int kind, const char *data, size_t size, int error, void *userdata) {
        (void) d, (void) kind;
        lost(userdata, error, data, size);
}

static void on_drained(struct hvt_dgram *d, void *userdata) {
        struct hvt_notify *n = userdata;

        (void) d;
        if (n->told_full)
                hvt_log_debug(n->log, "The service manager reads its notifications again");
        n->told_full = false;
}

static void say_full(struct hvt_notify *n) {
        if (n->told_full)
                return;
        n->told_full = true;
        hvt_log_debug(n->log, "The service manager is not reading its notification socket: READY, RELOADING "
                      "and STOPPING wait for it in order, a STATUS only until a newer one, the watchdog's "
                      "pings as one");
}

static void reached(struct hvt_notify *n) {
        if (n->told_unreachable)
                hvt_log_info(n->log, "The service manager at NOTIFY_SOCKET=%s is reached again", n->address);
        n->told_unreachable = false;
        n->told_error = 0;
}

/* Sends text now, or keeps it until the socket has room. */
static void send_or_keep(struct hvt_notify *n, const char *text, int kind) {
        const struct hvt_dgram_datagram *oldest;
        size_t size = strlen(text);
        int r;

        if (kind == KIND_STATUS && hvt_dgram_replace_last(&n->manager, KIND_STATUS, text, size))
                return;
        if (n->manager.n_queued >= HVT_NOTIFY_QUEUE_MAX && (oldest = hvt_dgram_first(&n->manager))) {
                hvt_log_debug(n->log, "The service manager has not read %d notifications: the oldest, %.*s, "
                              "is lost", HVT_NOTIFY_QUEUE_MAX, key_len(oldest->data, oldest->size), oldest->data);
                hvt_dgram_drop_first(&n->manager);
        }
        r = hvt_dgram_send(&n->manager, kind, &(struct iovec) { (char *) text, size }, 1);
        if (r == 0)
                reached(n);
        else if (r > 0)
                say_full(n);
        else
                lost(n, r, text, size);
}

/* state (may be NULL), then STATUS=status escaped. On the stack: a READY=1 or STOPPING=1 must
 * not be lost to a failed allocation. */
static void notify_status(struct hvt_notify *n, const char *state, const char *status) {
        char shown[HVT_ESCAPED_SIZE(STATUS_MAX)], text[sizeof(shown) + 96];

        if (n->manager.fd < 0)
                return;
        (void) hvt_escape(shown, sizeof(shown), status);
        snprintf(text, sizeof(text), "%s%sSTATUS=%s", state ? state : "", state ? "\n" : "", shown);
        send_or_keep(n, text, state ? KIND_STATE : KIND_STATUS);
}

void hvt_notify_ready(struct hvt_notify *n, const char *status) {
        notify_status(n, "READY=1", status);
}

/* systemd shows the unit as "reloading" until READY=1, and from 253 wants MONOTONIC_USEC with
 * RELOADING=1 to tell this reload from an earlier one (Type=notify-reload, in a drop-in). */
void hvt_notify_reloading(struct hvt_notify *n) {
        char state[64];

        snprintf(state, sizeof(state), "RELOADING=1\nMONOTONIC_USEC=%" PRIu64, hvt_now_usec(CLOCK_MONOTONIC));
        notify_status(n, state, "Reloading configuration");
}

void hvt_notify_status(struct hvt_notify *n, const char *status) {
        notify_status(n, NULL, status);
}

void hvt_notify_stopping(struct hvt_notify *n) {
        notify_status(n, "STOPPING=1", "Stopping");
}

void hvt_notify_watchdog(struct hvt_notify *n) {
        if (n->manager.fd < 0)
                return;
        /* One waiting already: it says all a second one would. */
        if (hvt_dgram_has(&n->manager, KIND_PING))
                return;
        send_or_keep(n, "WATCHDOG=1", KIND_PING);
}

/* Half the period, as sd-event's watchdog does: a late wakeup still pings in time. */
static int on_watchdog(struct hvt_event_source *s, uint64_t usec, void *userdata) {
        struct hvt_notify *n = userdata;

        (void) usec;
        hvt_notify_watchdog(n);
        return hvt_event_source_set_time_relative(s, n->watchdog_usec / 2);
}

/* A decimal number with nothing around it. */
static int parse_u64(const char *s, uint64_t *ret) {
        unsigned long long v;
        char *end;

        if (*s < '0' || *s > '9')  /* strtoull() would take spaces and a sign */
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno > 0)
                return -errno;
        if (*end != '\0')
                return -EINVAL;
        *ret = v;
        return 0;
}

/* What systemd sets for WatchdogSec= (sd_watchdog_enabled(3)): WATCHDOG_USEC, the period,
 * and WATCHDOG_PID, the process it is for when set (a child of ours inherits both, and must
 * not take the pings for its own). 1 with the period, 0 when there is none for us, -EINVAL
 * when either variable is not a valid value. */
static int watchdog_enabled(uint64_t *ret_usec) {
        const char *s = getenv("WATCHDOG_USEC"), *p = getenv("WATCHDOG_PID");
        uint64_t usec, pid;
        int r;

        if (!s)
                return 0;
        r = parse_u64(s, &usec);
        if (r < 0)
                return r;
        if (usec == 0 || usec == UINT64_MAX)  /* not set, and infinity */
                return -EINVAL;
        if (p) {
                r = parse_u64(p, &pid);
                if (r < 0)
                        return r;
                if (pid == 0 || pid > INT_MAX)
                        return -EINVAL;
                if ((pid_t) pid != hvt_getpid())
                        return 0;
        }
        *ret_usec = usec;
        return 1;
}

int hvt_notify_open(struct hvt_notify *n, struct hvt_event *e, const struct hvt_log *log) {
        const char *address = getenv("NOTIFY_SOCKET");
        struct sockaddr_un sa;
        socklen_t len;
        int r;

        n->log = log;
        if (!address)
                return 0;
        (void) hvt_strscpy(n->address, sizeof(n->address), address);
        r = hvt_dgram_parse_address(address, &sa, &len);
        if (r >= 0)
                r = hvt_dgram_open(&n->manager, &sa, len, QUEUE_BYTES, on_lost, on_drained, n);
        if (r < 0 && n->manager.fd < 0) {
                _cleanup_free_ char *shown = hvt_escape_dup(address);

                /* Out of descriptors or memory for the socket: a manager that is never told
                 * READY=1 kills the start at its timeout, so the start fails now instead, and
                 * Restart=on-failure tries again. An address that cannot be used stays so:
                 * hvtuned runs untold, as from a terminal. */
                if (r == -EMFILE || r == -ENFILE || r == -ENOBUFS || r == -ENOMEM)
                        return hvt_log_errno(log, LOG_ERR, r, "Cannot make a socket for NOTIFY_SOCKET=%s: %m",
                                             strna(shown));
                (void) hvt_log_errno(log, LOG_WARNING, r, "Cannot use NOTIFY_SOCKET=%s (%m): the service "
                                     "manager is not notified", strna(shown));
                return 0;
        }
        /* Not there yet, or gone: the next notification looks again. */
        if (r < 0)
                unreachable(n, r);
        r = hvt_dgram_attach(&n->manager, e);
        if (r < 0)
                return hvt_log_errno(log, LOG_ERR, r, "Cannot watch the notification socket: %m");

        /* WatchdogSec= in the unit sets WATCHDOG_USEC; without it no timer exists. */
        r = watchdog_enabled(&n->watchdog_usec);
        if (r < 0)
                return hvt_log_errno(log, LOG_ERR, r, "Cannot set up the watchdog: %m");
        if (r == 0)
                return 0;
        hvt_notify_watchdog(n);
        /* The loop fires a timer at the end of its slack: half the period plus a sixteenth
         * leaves the manager's deadline far away. */
        r = hvt_event_add_time_relative(e, &n->watchdog, n->watchdog_usec / 2, n->watchdog_usec / 16,
                                        on_watchdog, n);
        if (r < 0)
                return hvt_log_errno(log, LOG_ERR, r, "Cannot set up the watchdog: %m");
        return 0;
}

/* What the manager has no room for now is dropped: nothing waits for it at exit. */
void hvt_notify_done(struct hvt_notify *n) {
        n->watchdog = hvt_event_source_free(n->watchdog);
        (void) hvt_dgram_done(&n->manager, 0);
}
