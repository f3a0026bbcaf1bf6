/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: a datagram peer that never blocks the loop (see dgram.h).
 *
 * Connected, so that EPOLLOUT speaks of the peer: on a connected AF_UNIX datagram socket it
 * says that the peer's queue has room (net.unix.max_dgram_qlen), where an unconnected one's
 * would only speak of its own send buffer and wake the loop for nothing. Non-blocking, so a
 * peer that stops reading (PID 1 busy, a journald stopped or wedged) costs a queue of ours,
 * never the loop: events, signals and the watchdog go on.
 *
 * A connected socket stays with the peer it was connected to. When that one is closed (the
 * peer restarted, or unlinked its path and bound it anew), the kernel refuses the next send
 * with ECONNREFUSED and then takes the socket as not connected; a path with no socket at all
 * is ENOENT. Each of these connects to the address again, once a send, so a peer bound anew
 * is found by the very send that met the old one gone.
 *
 * ENOBUFS and ENOMEM are this side's kernel short of memory for a moment, not the peer's
 * answer: the datagram is kept, as for EAGAIN, but tried again after a pause, since EPOLLOUT
 * (the peer has room) would call at once, and again. A single failure must not lose a READY=1,
 * which systemd would wait for until its start timeout. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dgram.h"
#include "macro.h"

int hvt_dgram_parse_address(const char *s, struct sockaddr_un *ret, socklen_t *ret_len) {
        size_t n = strlen(s);

        if (s[0] != '/' && s[0] != '@')
                return -EAFNOSUPPORT;
        if (n < 2 || n > sizeof(ret->sun_path) - (s[0] == '/'))
                return -EINVAL;
        *ret = (struct sockaddr_un) { .sun_family = AF_UNIX };
        memcpy(ret->sun_path, s, n);
        if (s[0] == '@')
                ret->sun_path[0] = '\0';  /* abstract: the length, not a NUL, ends the name */
        *ret_len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + n + (s[0] == '/'));
        return 0;
}

/* How long a datagram waits after a transient failure before it is tried again. */
#define RETRY_USEC (50 * 1000)

/* The peer as gone: its socket closed, or none bound at the path. */
static bool peer_gone(int r) {
        return r == -ECONNREFUSED || r == -ENOENT || r == -ENOTCONN;
}

static bool transient(int r) {
        return r == -ENOBUFS || r == -ENOMEM;
}

static int connect_peer(struct hvt_dgram *d) {
        if (connect(d->fd, (const struct sockaddr *) &d->address, d->address_len) < 0)
                return negative_errno();
        d->connected = true;
        return 0;
}

static int send_once(struct hvt_dgram *d, const struct iovec *iov, size_t n_iov) {
        struct msghdr mh = { .msg_iov = (struct iovec *) iov, .msg_iovlen = n_iov };
        ssize_t n;

        if (!d->connected)
                return -ENOTCONN;
        do
                n = sendmsg(d->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        if (n < 0) {
                int r = negative_errno();

                if (peer_gone(r))
                        d->connected = false;
                return r;
        }
        return 0;
}

static int send_reconnecting(struct hvt_dgram *d, const struct iovec *iov, size_t n_iov) {
        int r;

        if (d->fd < 0)
                return -EBADF;
        r = send_once(d, iov, n_iov);
        if (!peer_gone(r))
                return r;
        r = connect_peer(d);
        if (r < 0)
                return r;
        return send_once(d, iov, n_iov);
}

int hvt_dgram_open(struct hvt_dgram *d, const struct sockaddr_un *address, socklen_t address_len,
                   size_t max_bytes, hvt_dgram_lost_t lost, hvt_dgram_drained_t drained, void *userdata) {
        int r;

        *d = (struct hvt_dgram) {
                .address = *address,
                .address_len = address_len,
                .max_bytes = max_bytes,
                .lost = lost,
                .drained = drained,
                .userdata = userdata,
        };
        d->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (d->fd < 0) {
                r = negative_errno();
                d->fd = -EBADF;
                return r;
        }
        r = connect_peer(d);
        if (r < 0 && !peer_gone(r)) {
                close(d->fd);
                d->fd = -EBADF;
        }
        return r;
}

static struct hvt_dgram_datagram *take_first(struct hvt_dgram *d) {
        struct hvt_dgram_datagram *g = d->head;

        d->head = g->next;
        if (!d->head)
                d->tail = NULL;
        d->n_queued--;
        d->queued_bytes -= g->size;
        return g;
}

static void set_waiting(struct hvt_dgram *d, bool on) {
        if (d->writable)
                (void) hvt_event_source_set_enabled(d->writable, on);
        if (!on && d->retry)
                (void) hvt_event_source_set_enabled(d->retry, false);
}

/* What waits, after a send that failed with r (EAGAIN or transient): for the peer's room, or
 * for the retry's pause. Without a loop yet, the next send tries again. */
static void wait_again(struct hvt_dgram *d, int r) {
        if (r == -EAGAIN) {
                set_waiting(d, true);
                return;
        }
        set_waiting(d, false);
        if (d->retry)
                (void) hvt_event_source_set_time_relative(d->retry, RETRY_USEC);
}

/* Sends what waits, oldest first, while the peer takes it. A handler that sends again from
 * within (drained) finds the queue empty, so never a second flush over the same list.
 * Returns why it stopped short (-EAGAIN, transient), or 0. */
static int flush(struct hvt_dgram *d) {
        int r;

        if (d->flushing || !d->head)
                return 0;
        d->flushing = true;
        while (d->head) {
                struct hvt_dgram_datagram *g;

                r = send_reconnecting(d, &(struct iovec) { d->head->data, d->head->size }, 1);
                if (r == -EAGAIN || transient(r)) {
                        wait_again(d, r);
                        d->flushing = false;
                        return r;
                }
                g = take_first(d);
                if (r < 0 && d->lost)
                        d->lost(d, g->kind, g->data, g->size, r, d->userdata);
                free(g);
        }
        set_waiting(d, false);
        d->flushing = false;
        if (d->drained)
                d->drained(d, d->userdata);
        return 0;
}

static int on_writable(struct hvt_event_source *s, int fd, uint32_t revents, void *userdata) {
        (void) s, (void) fd, (void) revents;
        (void) flush(userdata);
        return 0;
}

static int on_retry(struct hvt_event_source *s, uint64_t usec, void *userdata) {
        (void) s, (void) usec;
        (void) flush(userdata);
        return 0;
}

int hvt_dgram_attach(struct hvt_dgram *d, struct hvt_event *e) {
        int r;

        if (d->fd < 0 || d->writable)
                return 0;
        r = hvt_event_add_io(e, &d->writable, d->fd, EPOLLOUT, on_writable, d);
        if (r >= 0)
                r = hvt_event_add_time_relative(e, &d->retry, RETRY_USEC, 0, on_retry, d);
        if (r < 0) {
                d->writable = hvt_event_source_free(d->writable);
                return r;
        }
        (void) hvt_event_source_set_enabled(d->retry, false);
        set_waiting(d, d->head);
        return 0;
}

size_t hvt_dgram_done(struct hvt_dgram *d, unsigned wait_ms) {
        struct timespec now, deadline;
        size_t left;

        d->writable = hvt_event_source_free(d->writable);
        d->retry = hvt_event_source_free(d->retry);
        d->drained = NULL;
        /* The last entries of a stop (the restores) come in a burst that a running peer reads
         * within milliseconds; one that does not read costs the stop wait_ms, no more. */
        (void) clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += wait_ms / 1000;
        deadline.tv_nsec += (long) (wait_ms % 1000) * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
                deadline.tv_sec++;
                deadline.tv_nsec -= 1000000000L;
        }
        for (int r = flush(d); d->head && d->fd >= 0; r = flush(d)) {
                long ms;

                (void) clock_gettime(CLOCK_MONOTONIC, &now);
                ms = (deadline.tv_sec - now.tv_sec) * 1000L + (deadline.tv_nsec - now.tv_nsec) / 1000000L;
                if (ms <= 0)
                        break;
                /* POLLOUT would answer at once after a transient failure: a pause instead. */
                if (transient(r))
                        (void) poll(NULL, 0, (int) (ms < RETRY_USEC / 1000 ? ms : RETRY_USEC / 1000));
                else if (poll(&(struct pollfd) { .fd = d->fd, .events = POLLOUT }, 1, (int) ms) <= 0)
                        break;
        }
        left = d->n_queued;
        while (d->head)
                free(take_first(d));
        if (d->fd >= 0)
                close(d->fd);
        d->fd = -EBADF;
        d->connected = false;
        return left;
}

static int keep(struct hvt_dgram *d, int kind, const struct iovec *iov, size_t n_iov) {
        struct hvt_dgram_datagram *g;
        size_t size = 0;

        for (size_t i = 0; i < n_iov; i++)
                size += iov[i].iov_len;
        if (d->queued_bytes + size > d->max_bytes)
                return -ENOBUFS;
        g = malloc(sizeof(*g) + size);
        if (!g)
                return -ENOBUFS;
        *g = (struct hvt_dgram_datagram) { .kind = kind, .size = size };
        size = 0;
        for (size_t i = 0; i < n_iov; i++) {
                memcpy(g->data + size, iov[i].iov_base, iov[i].iov_len);
                size += iov[i].iov_len;
        }
        if (d->tail)
                d->tail->next = g;
        else
                d->head = g;
        d->tail = g;
        d->n_queued++;
        d->queued_bytes += g->size;
        return 1;
}

int hvt_dgram_send(struct hvt_dgram *d, int kind, const struct iovec *iov, size_t n_iov) {
        int r;

        if (d->fd < 0)
                return -EBADF;
        /* Without a loop yet (early messages) this is the only chance the queue gets; with
         * one, it costs a refused send while the peer is full. What waits already is waited
         * for (flush() said how); a first failure here says it. */
        (void) flush(d);
        if (d->head)
                return keep(d, kind, iov, n_iov);
        r = send_reconnecting(d, iov, n_iov);
        if (r != -EAGAIN && !transient(r))
                return r;
        if (keep(d, kind, iov, n_iov) < 0)
                return -ENOBUFS;
        wait_again(d, r);
        return 1;
}

bool hvt_dgram_replace_last(struct hvt_dgram *d, int kind, const char *data, size_t size) {
        struct hvt_dgram_datagram *g, **link;

        if (!d->tail || d->tail->kind != kind || d->queued_bytes - d->tail->size + size > d->max_bytes)
                return false;
        for (link = &d->head; *link != d->tail; link = &(*link)->next)
                ;
        g = realloc(d->tail, sizeof(*g) + size);
        if (!g)
                return false;
        d->queued_bytes = d->queued_bytes - g->size + size;
        g->size = size;
        memcpy(g->data, data, size);
        *link = d->tail = g;
        return true;
}

bool hvt_dgram_has(const struct hvt_dgram *d, int kind) {
        for (const struct hvt_dgram_datagram *g = d->head; g; g = g->next)
                if (g->kind == kind)
                        return true;
        return false;
}

const struct hvt_dgram_datagram *hvt_dgram_first(const struct hvt_dgram *d) {
        return d->head;
}

void hvt_dgram_drop_first(struct hvt_dgram *d) {
        if (d->head)
                free(take_first(d));
        if (!d->head)
                set_waiting(d, false);
}

size_t hvt_dgram_drop_kind(struct hvt_dgram *d, int kind, size_t size) {
        struct hvt_dgram_datagram **link = &d->head, *prev = NULL;
        size_t n = 0;

        while (*link && d->queued_bytes + size > d->max_bytes) {
                struct hvt_dgram_datagram *g = *link;

                if (g->kind != kind) {
                        prev = g;
                        link = &g->next;
                        continue;
                }
                *link = g->next;
                if (d->tail == g)
                        d->tail = prev;
                d->n_queued--;
                d->queued_bytes -= g->size;
                free(g);
                n++;
        }
        if (!d->head)
                set_waiting(d, false);
        return n;
}
