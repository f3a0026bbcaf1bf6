/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the sd_notify messages hvtuned sends, and their way to the service manager.
 *
 * libsystemd's sd_notify() sends on a blocking socket: when the manager does not read (PID 1
 * busy elsewhere) and its socket's queue is full (net.unix.max_dgram_qlen datagrams), it
 * blocks, and with it the loop: events, signals, even the watchdog that would restart the
 * daemon. So hvtuned has its own sender, as journald has: a non-blocking datagram socket,
 * connected to the manager's, so that EPOLLOUT says when the manager's queue has room again
 * (an unconnected socket's would only speak of its own buffer). What the socket does not take
 * waits for that: READY, RELOADING and STOPPING in order, a STATUS only until a newer one
 * replaces it, and the pings meanwhile as one. The watchdog's pings come from a timer of
 * this file's, so that they take the same way.
 *
 * Failures to notify are not errors of the daemon: systemd may not be listening (a terminal,
 * a container without it). STATUS holds text hvtuned does not control (a configuration file's
 * name): escaped here (lib/escape.h), it can never start a line, which would be a key. */
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

/* AF_UNIX only: a path, or "@name" in the abstract namespace. That is what systemd gives a
 * service; other forms (vsock:CID:PORT, for a whole VM's PID 1 to its host) are not for a
 * service, and libsystemd before 254 does not know them either. */
static int parse_address(const char *s, struct sockaddr_un *sa, socklen_t *len) {
        size_t n = strlen(s);

        if (s[0] != '/' && s[0] != '@')
                return -EAFNOSUPPORT;
        if (n < 2 || n > sizeof(sa->sun_path) - (s[0] == '/'))
                return -EINVAL;
        *sa = (struct sockaddr_un) { .sun_family = AF_UNIX };
        memcpy(sa->sun_path, s, n);
        if (s[0] == '@')
                sa->sun_path[0] = '\0';  /* abstract: the length, not a NUL, ends the name */
        *len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + n + (s[0] == '/'));
        return 0;
}

static int connect_manager(struct hvt_notify *n, const char *address) {
        struct sockaddr_un sa;
        socklen_t len;
        int r;

        r = parse_address(address, &sa, &len);
        if (r < 0)
                return r;
        n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (n->fd < 0)
                return negative_errno();
        if (connect(n->fd, (struct sockaddr *) &sa, len) < 0) {
                r = negative_errno();
                close(n->fd);
                n->fd = -EBADF;
                return r;
        }
        return 0;
}

static int send_now(struct hvt_notify *n, const char *text) {
        if (send(n->fd, text, strlen(text), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
                return negative_errno();
        n->told_error = 0;
        return 0;
}

static void drop_head(struct hvt_notify *n) {
        free(n->queue[0].text);
        memmove(n->queue, n->queue + 1, --n->n_queued * sizeof(n->queue[0]));
}

/* The first key of a message, for a log line: its value is escaped already. */
static int key_len(const char *text) {
        return (int) strcspn(text, "=\n");
}

/* Any failure but a full socket loses that message: said once for each kind of failure, as a
 * manager that went away makes every later message fail alike. */
static void lost(struct hvt_notify *n, int r, const char *text) {
        if (r == n->told_error)
                return;
        n->told_error = r;
        (void) hvt_log_errno(n->log, LOG_DEBUG, r, "Cannot notify the service manager (%m): %.*s lost",
                             key_len(text), text);
}

static void say_full(struct hvt_notify *n) {
        if (n->told_full)
                return;
        n->told_full = true;
        hvt_log_debug(n->log, "The service manager is not reading its notification socket: READY, RELOADING "
                      "and STOPPING wait for it in order, a STATUS only until a newer one, the watchdog's "
                      "pings as one");
}

/* Sends what waits, oldest first, as long as the socket takes it. */
static void flush(struct hvt_notify *n) {
        int r;

        while (n->n_queued > 0) {
                r = send_now(n, n->queue[0].text);
                if (r == -EAGAIN)
                        return;
                if (r < 0)
                        lost(n, r, n->queue[0].text);
                drop_head(n);
        }
        if (n->ping_waits) {
                r = send_now(n, "WATCHDOG=1");
                if (r == -EAGAIN)
                        return;
                if (r < 0)
                        lost(n, r, "WATCHDOG=1");
                n->ping_waits = false;
        }
        (void) hvt_event_source_set_enabled(n->writable, false);
        if (n->told_full)
                hvt_log_debug(n->log, "The service manager reads its notifications again");
        n->told_full = false;
}

static int on_writable(struct hvt_event_source *s, int fd, uint32_t revents, void *userdata) {
        (void) s, (void) fd, (void) revents;
        flush(userdata);
        return 0;
}

static void wait_for_room(struct hvt_notify *n) {
        say_full(n);
        (void) hvt_event_source_set_enabled(n->writable, true);
}

/* Takes text (malloc()ed): sent now, or kept until the socket has room. */
static void send_or_keep(struct hvt_notify *n, char *text, bool status_only) {
        struct hvt_notify_message *tail = n->n_queued > 0 ? &n->queue[n->n_queued - 1] : NULL;
        int r;

        if (!tail) {
                r = send_now(n, text);
                if (r != -EAGAIN) {
                        if (r < 0)
                                lost(n, r, text);
                        free(text);
                        return;
                }
        }
        if (tail && status_only && tail->status_only) {
                free(tail->text);
                tail->text = text;
                return;
        }
        if (n->n_queued == HVT_NOTIFY_QUEUE_MAX) {
                hvt_log_debug(n->log, "The service manager has not read %d notifications: the oldest, %.*s, "
                              "is lost", HVT_NOTIFY_QUEUE_MAX, key_len(n->queue[0].text), n->queue[0].text);
                drop_head(n);
        }
        n->queue[n->n_queued++] = (struct hvt_notify_message) { text, status_only };
        wait_for_room(n);
}

/* state (may be NULL), then STATUS=status escaped. */
static void notify_status(struct hvt_notify *n, const char *state, const char *status) {
        _cleanup_free_ char *shown = NULL;
        char *text;

        if (n->fd < 0)
                return;
        shown = hvt_escape_dup(status);
        if (!shown || asprintf(&text, "%s%sSTATUS=%s", state ? state : "", state ? "\n" : "", shown) < 0)
                return;
        send_or_keep(n, text, !state);
}

void hvt_notify_ready(struct hvt_notify *n, const char *status) {
        notify_status(n, "READY=1", status);
}

/* Type=notify-reload (systemd 253 and later) needs MONOTONIC_USEC with RELOADING=1 to tell
 * this reload from an earlier one; Type=notify shows it as "reloading" in the meantime. */
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
        int r;

        if (n->fd < 0)
                return;
        /* Behind waiting messages, or itself refused: one ping for all, when there is room. */
        if (n->n_queued > 0 || n->ping_waits) {
                n->ping_waits = true;
                return;
        }
        r = send_now(n, "WATCHDOG=1");
        if (r == -EAGAIN) {
                n->ping_waits = true;
                wait_for_room(n);
        } else if (r < 0)
                lost(n, r, "WATCHDOG=1");
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
                if ((pid_t) pid != getpid())
                        return 0;
        }
        *ret_usec = usec;
        return 1;
}

int hvt_notify_open(struct hvt_notify *n, struct hvt_event *e, const struct hvt_log *log) {
        const char *address = getenv("NOTIFY_SOCKET");
        int r;

        n->log = log;
        if (!address)
                return 0;
        r = connect_manager(n, address);
        if (r < 0) {
                (void) hvt_log_errno(log, LOG_WARNING, r, "Cannot reach the service manager at NOTIFY_SOCKET=%s "
                                     "(%m): it is not notified", address);
                return 0;
        }
        r = hvt_event_add_io(e, &n->writable, n->fd, EPOLLOUT, on_writable, n);
        if (r >= 0)
                r = hvt_event_source_set_enabled(n->writable, false);
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

void hvt_notify_done(struct hvt_notify *n) {
        while (n->n_queued > 0)
                drop_head(n);
        n->watchdog = hvt_event_source_free(n->watchdog);
        n->writable = hvt_event_source_free(n->writable);
        if (n->fd >= 0)
                close(n->fd);
        n->fd = -EBADF;
}
