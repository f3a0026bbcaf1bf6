/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the event loop (see event.h).
 *
 * Sources are in one list a type. Timers are few (the verify timer, the watchdog, one per
 * paused disk), so the earliest is found by a scan rather than kept in a heap, and a wakeup
 * is epoll_wait()'s timeout rather than a timerfd: no fd, and no system call to re-arm it.
 * Dispatching never holds a pointer to a source across a handler but the one being run and
 * epoll's answers, and a freed source stays in memory, marked dead, until the iteration ends:
 * each scan starts again from the list's head, so a handler may free or add any source. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "event.h"
#include "macro.h"

enum source_type {
        SOURCE_IO,
        SOURCE_SIGNAL,
        SOURCE_TIME,
        SOURCE_POST,
        _SOURCE_TYPE_MAX,
};

struct hvt_event_source {
        struct hvt_event *event;                /* NULL once detached: the loop was freed first */
        struct hvt_event_source *prev, *next;   /* the loop's list of this type; next: its dead list */
        enum source_type type;
        bool enabled;
        bool floating;                          /* the loop holds it, nobody else */
        bool dead;                              /* freed while dispatching: never run again */
        bool pending;                           /* timer, post: to run in the iteration under way */
        void *userdata;
        union {
                struct {
                        hvt_event_io_handler_t handler;
                        int fd;
                        uint32_t events;
                } io;
                struct {
                        hvt_event_signal_handler_t handler;
                        int sig;
                } signal;
                struct {
                        hvt_event_time_handler_t handler;
                        uint64_t next, accuracy;
                } time;
                struct {
                        hvt_event_post_handler_t handler;
                } post;
        };
};

struct hvt_event {
        int epoll_fd;
        int signal_fd;                          /* -EBADF until the first signal source */
        sigset_t signals;                       /* those the signalfd takes: the enabled sources' */
        struct hvt_event_source *by_signal[_NSIG];
        struct hvt_event_source *sources[_SOURCE_TYPE_MAX];
        struct hvt_event_source *dead;          /* freed during this iteration */
        bool dispatching;
        uint64_t now;                           /* as the iteration began */
        uint64_t iteration;
        bool exiting;
        int exit_code;
};

/* A time that does not fit is "never", not a wrap into the past. */
static uint64_t add_usec(uint64_t a, uint64_t b) {
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

int hvt_event_new(struct hvt_event **ret) {
        struct hvt_event *e = calloc(1, sizeof(*e));

        if (!e)
                return -ENOMEM;
        e->signal_fd = -EBADF;
        sigemptyset(&e->signals);
        e->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
        if (e->epoll_fd < 0) {
                int r = negative_errno();

                free(e);
                return r;
        }
        *ret = e;
        return 0;
}

static void link_source(struct hvt_event *e, struct hvt_event_source *s) {
        s->next = e->sources[s->type];
        if (s->next)
                s->next->prev = s;
        e->sources[s->type] = s;
}

static void unlink_source(struct hvt_event *e, struct hvt_event_source *s) {
        if (s->prev)
                s->prev->next = s->next;
        else
                e->sources[s->type] = s->next;
        if (s->next)
                s->next->prev = s->prev;
        s->prev = s->next = NULL;
}

/* The signalfd takes exactly the signals of enabled sources; one nobody handles any more
 * stays blocked and pending, as before its source existed. */
static int update_signals(struct hvt_event *e, int sig, bool on) {
        sigset_t mask = e->signals;
        int fd;

        if (on)
                sigaddset(&mask, sig);
        else
                sigdelset(&mask, sig);
        fd = signalfd(e->signal_fd >= 0 ? e->signal_fd : -1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (e->signal_fd < 0) {
                /* The loop itself as the tag: no io source has that address. */
                struct epoll_event ev = { .events = EPOLLIN, .data.ptr = e };

                if (epoll_ctl(e->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0) {
                        int r = negative_errno();

                        close(fd);
                        return r;
                }
                e->signal_fd = fd;
        }
        e->signals = mask;
        return 0;
}

/* What enabling or disabling means for the kernel's side of a source. */
static int arm(struct hvt_event_source *s, bool on) {
        struct hvt_event *e = s->event;

        switch (s->type) {
        case SOURCE_IO: {
                struct epoll_event ev = { .events = s->io.events, .data.ptr = s };

                /* Out of the set rather than an empty mask: EPOLLHUP and EPOLLERR are reported
                 * whatever the mask says, and would wake a loop that wants nothing of the fd. */
                if (epoll_ctl(e->epoll_fd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, s->io.fd, &ev) < 0)
                        return negative_errno();
                return 0;
        }
        case SOURCE_SIGNAL:
                return update_signals(e, s->signal.sig, on);
        default:
                return 0;
        }
}

int hvt_event_source_set_enabled(struct hvt_event_source *s, bool enabled) {
        int r;

        if (!s || s->dead)
                return -EINVAL;
        if (!s->event)
                return -ESTALE;
        if (!enabled)
                s->pending = false;  /* off now: not run, even if this iteration found it due */
        if (s->enabled == enabled)
                return 0;
        r = arm(s, enabled);
        if (r < 0)
                return r;
        s->enabled = enabled;
        return 0;
}

bool hvt_event_source_get_enabled(const struct hvt_event_source *s) {
        return s && !s->dead && s->enabled;
}

static int add_source(struct hvt_event *e, struct hvt_event_source **ret, struct hvt_event_source *proto) {
        struct hvt_event_source *s;
        int r;

        if (!e)
                return -EINVAL;
        s = malloc(sizeof(*s));
        if (!s)
                return -ENOMEM;
        *s = *proto;
        s->event = e;
        s->floating = !ret;
        r = arm(s, true);
        if (r < 0) {
                free(s);
                return r;
        }
        s->enabled = true;
        link_source(e, s);
        if (s->type == SOURCE_SIGNAL)
                e->by_signal[s->signal.sig] = s;
        if (ret)
                *ret = s;
        return 0;
}

int hvt_event_add_io(struct hvt_event *e, struct hvt_event_source **ret, int fd, uint32_t events,
                     hvt_event_io_handler_t handler, void *userdata) {
        if (fd < 0 || !handler)
                return -EINVAL;
        return add_source(e, ret, &(struct hvt_event_source) {
                .type = SOURCE_IO, .userdata = userdata, .io = { handler, fd, events } });
}

int hvt_event_add_signal(struct hvt_event *e, struct hvt_event_source **ret, int sig,
                         hvt_event_signal_handler_t handler, void *userdata) {
        sigset_t blocked;

        if (!e || sig <= 0 || sig >= _NSIG || !handler)
                return -EINVAL;
        if (e->by_signal[sig])
                return -EEXIST;
        /* Unblocked, it would kill the daemon, or go to a handler, before the signalfd saw it. */
        if (sigprocmask(SIG_SETMASK, NULL, &blocked) < 0)
                return negative_errno();
        if (sigismember(&blocked, sig) != 1)
                return -EBUSY;
        return add_source(e, ret, &(struct hvt_event_source) {
                .type = SOURCE_SIGNAL, .userdata = userdata, .signal = { handler, sig } });
}

int hvt_event_add_time(struct hvt_event *e, struct hvt_event_source **ret, uint64_t usec, uint64_t accuracy,
                       hvt_event_time_handler_t handler, void *userdata) {
        if (!handler)
                return -EINVAL;
        return add_source(e, ret, &(struct hvt_event_source) {
                .type = SOURCE_TIME, .userdata = userdata, .time = { handler, usec, accuracy } });
}

int hvt_event_add_time_relative(struct hvt_event *e, struct hvt_event_source **ret, uint64_t usec,
                                uint64_t accuracy, hvt_event_time_handler_t handler, void *userdata) {
        if (!e)
                return -EINVAL;
        return hvt_event_add_time(e, ret, add_usec(hvt_event_now(e), usec), accuracy, handler, userdata);
}

int hvt_event_add_post(struct hvt_event *e, struct hvt_event_source **ret, hvt_event_post_handler_t handler,
                       void *userdata) {
        if (!handler)
                return -EINVAL;
        return add_source(e, ret, &(struct hvt_event_source) {
                .type = SOURCE_POST, .userdata = userdata, .post = { handler } });
}

int hvt_event_source_set_time_relative(struct hvt_event_source *s, uint64_t usec) {
        if (!s || s->dead || s->type != SOURCE_TIME)
                return -EINVAL;
        if (!s->event)
                return -ESTALE;
        s->time.next = add_usec(hvt_event_now(s->event), usec);
        s->pending = false;  /* a new time: not what this iteration found due */
        s->enabled = true;
        return 0;
}

/* Out of the loop: out of the kernel's sets, and out of its list. */
static void detach(struct hvt_event_source *s) {
        struct hvt_event *e = s->event;

        if (s->enabled)
                (void) arm(s, false);  /* fails only for an fd closed already: out of the set anyway */
        s->enabled = false;
        if (s->type == SOURCE_SIGNAL)
                e->by_signal[s->signal.sig] = NULL;
        unlink_source(e, s);
        s->event = NULL;
}

struct hvt_event_source *hvt_event_source_free(struct hvt_event_source *s) {
        struct hvt_event *e;

        if (!s)
                return NULL;
        e = s->event;
        if (e) {
                detach(s);
                if (e->dispatching) {
                        /* epoll's answers, or the dispatcher itself, may still point at it. */
                        s->dead = true;
                        s->next = e->dead;
                        e->dead = s;
                        return NULL;
                }
        }
        free(s);
        return NULL;
}

static void free_dead(struct hvt_event *e) {
        while (e->dead) {
                struct hvt_event_source *s = e->dead;

                e->dead = s->next;
                free(s);
        }
}

struct hvt_event *hvt_event_free(struct hvt_event *e) {
        if (!e)
                return NULL;
        for (size_t t = 0; t < _SOURCE_TYPE_MAX; t++)
                while (e->sources[t]) {
                        struct hvt_event_source *s = e->sources[t];

                        detach(s);
                        if (s->floating)
                                free(s);
                }
        free_dead(e);
        if (e->signal_fd >= 0)
                close(e->signal_fd);
        close(e->epoll_fd);
        free(e);
        return NULL;
}

uint64_t hvt_event_now(struct hvt_event *e) {
        return e->iteration > 0 ? e->now : hvt_now_usec(CLOCK_MONOTONIC);
}

uint64_t hvt_event_get_iteration(const struct hvt_event *e) {
        return e->iteration;
}

int hvt_event_exit(struct hvt_event *e, int code) {
        if (!e)
                return -EINVAL;
        e->exiting = true;
        e->exit_code = code;
        return 0;
}

/* A handler's failure turns its source off, as sd-event does: a source that keeps failing
 * would otherwise keep the loop busy. */
static void ran(struct hvt_event_source *s, int r) {
        if (r < 0 && !s->dead)
                (void) hvt_event_source_set_enabled(s, false);
}

/* The signalfd could not be read: the signals it would have given are still pending, and
 * sigtimedwait() takes them as well. A loop that cannot read its signalfd must still obey a
 * SIGTERM. 1 with one in *si, 0 when none is pending, or -errno. */
static int take_pending(struct hvt_event *e, struct signalfd_siginfo *si) {
        static const struct timespec now = {};
        siginfo_t info;

        if (sigtimedwait(&e->signals, &info, &now) < 0)
                return errno == EAGAIN ? 0 : negative_errno();
        *si = (struct signalfd_siginfo) { .ssi_signo = (uint32_t) info.si_signo, .ssi_code = info.si_code,
                                          .ssi_pid = (uint32_t) info.si_pid, .ssi_uid = info.si_uid };
        return 1;
}

/* One siginfo at a time, as each signal's handler may look at what is still pending (a
 * SIGTERM behind a SIGHUP). */
static int dispatch_signals(struct hvt_event *e, bool *dispatched) {
        while (!e->exiting) {
                struct signalfd_siginfo si;
                struct hvt_event_source *s;
                ssize_t n;
                int r;

                n = read(e->signal_fd, &si, sizeof(si));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return 0;
                if (n != sizeof(si)) {
                        int failed = n < 0 ? negative_errno() : -EIO;

                        r = take_pending(e, &si);
                        if (r <= 0)
                                return r < 0 ? failed : 0;
                }
                s = si.ssi_signo < _NSIG ? e->by_signal[si.ssi_signo] : NULL;
                if (!s || !s->enabled)
                        continue;  /* its source went while it was queued */
                *dispatched = true;
                ran(s, s->signal.handler(s, &si, s->userdata));
        }
        return 0;
}

/* The pending one of list that comes first: the earliest timer, or the first post source. */
static struct hvt_event_source *next_pending(struct hvt_event_source *list) {
        struct hvt_event_source *best = NULL;

        for (struct hvt_event_source *s = list; s; s = s->next)
                if (s->pending && (!best || (s->type == SOURCE_TIME && s->time.next < best->time.next)))
                        best = s;
        return best;
}

/* The timers due as the iteration began, earliest first. Each is off as its handler runs; one
 * that re-arms itself for a time already past runs in the next iteration, not this one. */
static void dispatch_timers(struct hvt_event *e, bool *dispatched) {
        struct hvt_event_source *s;

        for (s = e->sources[SOURCE_TIME]; s; s = s->next)
                s->pending = s->enabled && s->time.next <= e->now;
        while (!e->exiting && (s = next_pending(e->sources[SOURCE_TIME]))) {
                s->pending = false;
                s->enabled = false;
                *dispatched = true;
                ran(s, s->time.handler(s, s->time.next, s->userdata));
        }
}

static void dispatch_post(struct hvt_event *e) {
        struct hvt_event_source *s;

        for (s = e->sources[SOURCE_POST]; s; s = s->next)
                s->pending = s->enabled;
        while (!e->exiting && (s = next_pending(e->sources[SOURCE_POST]))) {
                s->pending = false;
                ran(s, s->post.handler(s, s->userdata));
        }
}

/* The wait until the first timer's window ends, in ms rounded up (never early); -1: none. */
static int wait_ms(struct hvt_event *e, uint64_t timeout) {
        uint64_t wake = UINT64_MAX, now, ms;

        for (struct hvt_event_source *s = e->sources[SOURCE_TIME]; s; s = s->next)
                if (s->enabled) {
                        uint64_t end = add_usec(s->time.next, s->time.accuracy);

                        if (end < wake)
                                wake = end;
                }
        now = hvt_now_usec(CLOCK_MONOTONIC);
        if (timeout != UINT64_MAX && add_usec(now, timeout) < wake)
                wake = add_usec(now, timeout);
        if (wake == UINT64_MAX)
                return -1;
        if (wake <= now)
                return 0;
        ms = (wake - now + 999) / 1000;
        return ms > INT_MAX ? INT_MAX : (int) ms;
}

int hvt_event_run(struct hvt_event *e, uint64_t timeout) {
        struct epoll_event events[16];
        bool dispatched = false;
        int n, r = 0;

        if (!e)
                return -EINVAL;
        if (e->exiting)
                return 0;
        n = epoll_wait(e->epoll_fd, events, ELEMENTSOF(events), wait_ms(e, timeout));
        if (n < 0) {
                if (errno != EINTR)  /* a debugger's attach: timers may still be due */
                        return negative_errno();
                n = 0;
        }
        e->now = hvt_now_usec(CLOCK_MONOTONIC);
        e->iteration++;
        e->dispatching = true;

        for (int i = 0; i < n; i++)
                if (events[i].data.ptr == e) {
                        r = dispatch_signals(e, &dispatched);
                        break;
                }
        for (int i = 0; r >= 0 && i < n && !e->exiting; i++) {
                struct hvt_event_source *s = events[i].data.ptr;

                if (s == (void *) e || s->dead || !s->enabled)
                        continue;
                dispatched = true;
                ran(s, s->io.handler(s, s->io.fd, events[i].events, s->userdata));
        }
        if (r >= 0)
                dispatch_timers(e, &dispatched);
        if (r >= 0 && dispatched)
                dispatch_post(e);

        e->dispatching = false;
        free_dead(e);
        return r < 0 ? r : dispatched;
}

int hvt_event_loop(struct hvt_event *e) {
        int r;

        if (!e)
                return -EINVAL;
        while (!e->exiting) {
                r = hvt_event_run(e, UINT64_MAX);
                if (r < 0)
                        return r;
        }
        return e->exit_code;
}
