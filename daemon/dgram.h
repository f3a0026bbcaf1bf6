/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: a datagram peer that never blocks the loop. An AF_UNIX datagram socket, non-blocking
 * and connected to one address (the service manager's, journald's), connected again when the
 * peer is gone or was bound anew; and the datagrams the peer had no room for yet, kept up to a
 * number of bytes and sent, oldest first, when EPOLLOUT says it reads again. What to keep and
 * what each failure means is the owner's (notify.c, log.c): this file never logs. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>

#include "event.h"

struct hvt_dgram;

/* A datagram that waited and that the peer then refused for good (error < 0: not there, or
 * not connectable): gone from the queue once this returns. */
typedef void (*hvt_dgram_lost_t)(struct hvt_dgram *d, int kind, const char *data, size_t size, int error,
                                 void *userdata);
/* The last datagram that waited left the queue (sent or lost). It may send again. */
typedef void (*hvt_dgram_drained_t)(struct hvt_dgram *d, void *userdata);

struct hvt_dgram_datagram {
        struct hvt_dgram_datagram *next;
        int kind;                          /* the owner's tag */
        size_t size;
        char data[];
};

struct hvt_dgram {
        struct sockaddr_un address;
        socklen_t address_len;
        int fd;                            /* -EBADF: none */
        bool connected;                    /* to the peer now bound at address */
        struct hvt_event_source *writable; /* EPOLLOUT, on while datagrams wait; NULL: no loop yet */
        struct hvt_event_source *retry;    /* a pause after a transient failure (ENOBUFS, ENOMEM) */
        struct hvt_dgram_datagram *head, *tail;  /* waiting, oldest first */
        size_t n_queued, queued_bytes, max_bytes;
        bool flushing;
        hvt_dgram_lost_t lost;
        hvt_dgram_drained_t drained;
        void *userdata;
};

#define HVT_DGRAM_NULL { .fd = -EBADF }

/* Parses address: a path, or "@name" in the abstract namespace (what systemd gives a service:
 * NOTIFY_SOCKET). -EAFNOSUPPORT for another form, -EINVAL for one that does not fit. */
int hvt_dgram_parse_address(const char *s, struct sockaddr_un *ret, socklen_t *ret_len);

/* Makes the socket and connects it to address. A peer that is not there (-ENOENT,
 * -ECONNREFUSED) is returned but leaves d ready: every send tries again. Any other error
 * leaves no socket. max_bytes: what the queue may hold. */
int hvt_dgram_open(struct hvt_dgram *d, const struct sockaddr_un *address, socklen_t address_len,
                   size_t max_bytes, hvt_dgram_lost_t lost, hvt_dgram_drained_t drained, void *userdata);
/* Watches the socket for room from then on, on e (once). Datagrams that wait already are
 * sent when there is. */
int hvt_dgram_attach(struct hvt_dgram *d, struct hvt_event *e);
/* Sends what waits, waiting for the peer's room up to wait_ms in all; what is left then is
 * dropped: their number. The socket is closed, the source freed. */
size_t hvt_dgram_done(struct hvt_dgram *d, unsigned wait_ms);

/* Sends the datagram made of iov, after those that wait. A peer that refuses it as gone
 * (-ECONNREFUSED, -ENOENT, or not connected) is connected to again, once, and asked again.
 * 0: sent; 1: kept until the peer has room, or until a transient failure (ENOBUFS, ENOMEM
 * from sendmsg()) has passed; -ENOBUFS: the datagram could not be sent and the queue has no
 * room either, nothing kept; other -errno: refused. Never blocks. */
int hvt_dgram_send(struct hvt_dgram *d, int kind, const struct iovec *iov, size_t n_iov);

/* The newest datagram that waits, if it is of kind, becomes data instead: true. */
bool hvt_dgram_replace_last(struct hvt_dgram *d, int kind, const char *data, size_t size);
/* Whether a datagram of kind waits. */
bool hvt_dgram_has(const struct hvt_dgram *d, int kind);
/* The oldest datagram that waits (NULL: none), and dropping it. */
const struct hvt_dgram_datagram *hvt_dgram_first(const struct hvt_dgram *d);
void hvt_dgram_drop_first(struct hvt_dgram *d);
/* Drops datagrams of kind that wait, oldest first, until size more bytes would fit: how many
 * it dropped (fewer than needed, when no more of kind wait). */
size_t hvt_dgram_drop_kind(struct hvt_dgram *d, int kind, size_t size);
