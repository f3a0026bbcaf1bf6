/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the event loop: io, signal and CLOCK_MONOTONIC timer sources on one epoll, waiting
 * until one of them has something, and dispatching it.
 *
 * What hvtuned used of sd-event, with its conventions, and nothing more: an iteration waits
 * (epoll_wait, with no timeout at all when no timer is armed: an idle daemon never wakes),
 * then dispatches the signals that arrived, the ready io sources and the expired timers, in
 * that order (a SIGTERM is not kept waiting behind a burst of events), then the post sources
 * if anything else was dispatched. A handler that returns < 0 has its source turned off, and
 * the loop goes on. exit stops the iteration where it is: nothing else of it is dispatched,
 * not even the post sources.
 *
 * A source may be freed at any time, also from its own handler or another one of the same
 * iteration: it is never dispatched after that, and its memory waits for the iteration's end.
 * Functions return 0 or -errno unless said otherwise. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>

#include "macro.h"

struct hvt_event;
struct hvt_event_source;

typedef int (*hvt_event_io_handler_t)(struct hvt_event_source *s, int fd, uint32_t revents, void *userdata);
typedef int (*hvt_event_signal_handler_t)(struct hvt_event_source *s, const struct signalfd_siginfo *si,
                                          void *userdata);
/* usec: the time it was armed for, not when it ran. */
typedef int (*hvt_event_time_handler_t)(struct hvt_event_source *s, uint64_t usec, void *userdata);
typedef int (*hvt_event_post_handler_t)(struct hvt_event_source *s, void *userdata);

int hvt_event_new(struct hvt_event **ret);
/* Frees e and the sources nobody else holds. A source still held (added with ret) stays
 * valid for hvt_event_source_free() only. Returns NULL. */
struct hvt_event *hvt_event_free(struct hvt_event *e);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct hvt_event *, hvt_event_free);

/* Every add_* function: with ret, the caller holds the source and frees it; ret NULL, the loop
 * holds it until the loop is freed. Sources start enabled. */

/* events: EPOLLIN, EPOLLOUT. The fd stays the caller's, and must outlive the source. */
int hvt_event_add_io(struct hvt_event *e, struct hvt_event_source **ret, int fd, uint32_t events,
                     hvt_event_io_handler_t handler, void *userdata);
/* sig must be blocked already (-EBUSY otherwise): it then waits for the loop; one source a
 * signal (-EEXIST). */
int hvt_event_add_signal(struct hvt_event *e, struct hvt_event_source **ret, int sig,
                         hvt_event_signal_handler_t handler, void *userdata);
/* One-shot, at usec (CLOCK_MONOTONIC) or up to accuracy later, never earlier: timers whose
 * windows overlap are run by one wakeup. The timer turns itself off as it runs; its handler
 * re-arms it with hvt_event_source_set_time_relative(). */
int hvt_event_add_time(struct hvt_event *e, struct hvt_event_source **ret, uint64_t usec, uint64_t accuracy,
                       hvt_event_time_handler_t handler, void *userdata);
/* The same, usec after hvt_event_now(). */
int hvt_event_add_time_relative(struct hvt_event *e, struct hvt_event_source **ret, uint64_t usec,
                                uint64_t accuracy, hvt_event_time_handler_t handler, void *userdata);
/* Run at the end of each iteration that dispatched any other source. */
int hvt_event_add_post(struct hvt_event *e, struct hvt_event_source **ret, hvt_event_post_handler_t handler,
                       void *userdata);

/* Disables and frees s (NULL: nothing). Returns NULL, for "s = hvt_event_source_free(s)". */
struct hvt_event_source *hvt_event_source_free(struct hvt_event_source *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct hvt_event_source *, hvt_event_source_free);
/* A disabled source is not dispatched (an io source is out of the epoll set); enabling a
 * timer arms it again at the time it last had. */
int hvt_event_source_set_enabled(struct hvt_event_source *s, bool enabled);
bool hvt_event_source_get_enabled(const struct hvt_event_source *s);
/* Arms a timer usec after hvt_event_now(), enabling it. */
int hvt_event_source_set_time_relative(struct hvt_event_source *s, uint64_t usec);

/* CLOCK_MONOTONIC in µs as the iteration under way began (as sd_event_now()): every handler
 * of an iteration sees the same time. Before the first iteration, the time now. */
uint64_t hvt_event_now(struct hvt_event *e);
/* Iterations begun so far. */
uint64_t hvt_event_get_iteration(const struct hvt_event *e);

/* Ends the loop with code, once the handler that calls it returns. */
int hvt_event_exit(struct hvt_event *e, int code);
/* One iteration, waiting for at most timeout µs (UINT64_MAX: as long as it takes): > 0 if it
 * dispatched anything, 0 if not (or exit was asked), -errno. */
int hvt_event_run(struct hvt_event *e, uint64_t timeout);
/* Iterations until exit: its code, or -errno. */
int hvt_event_loop(struct hvt_event *e);
