/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The event loop (daemon/event.h): io, signal and timer sources dispatched, timers in order
 * and never early, sources freed from handlers (their own, another's) never run again, the
 * post sources only after something else ran, exit and its code, and an idle loop with no
 * timer that sleeps until something happens. Each test has an alarm: a loop that never
 * returns fails the test rather than hanging it. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "event.h"
#include "testutil.h"

#define MSEC 1000ULL

static struct hvt_event *new_loop(void) {
        struct hvt_event *e = NULL;

        ck_assert_int_eq(hvt_event_new(&e), 0);
        ck_assert_ptr_nonnull(e);
        return e;
}

static void guard(void) {
        alarm(10);  /* SIGALRM's default action: the test dies, and Check says it failed */
}

static void make_pipe(int p[2]) {
        ck_assert_int_eq(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
}

static uint64_t monotonic(void) {
        struct timespec ts;

        ck_assert_int_eq(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
        return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

/* --- io ------------------------------------------------------------------------------ */

struct io_seen {
        unsigned calls;
        int fd;
        uint32_t revents;
};

static int on_io(struct hvt_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct io_seen *seen = userdata;
        char c;

        (void) s;
        seen->calls++;
        seen->fd = fd;
        seen->revents = revents;
        if (revents & EPOLLIN)
                ck_assert_int_eq(read(fd, &c, 1), 1);
        return 0;
}

START_TEST(test_io) {
        _cleanup_(hvt_event_freep) struct hvt_event *e = new_loop();
        struct hvt_event_source *s = NULL;
        struct io_seen seen = {};
        int p[2];

        make_pipe(p);
        ck_assert_int_eq(hvt_event_add_io(e, &s, p[0], EPOLLIN, on_io, &seen), 0);
        ck_assert(hvt_event_source_get_enabled(s));
        ck_assert_int_eq(hvt_event_run(e, 0), 0);
        ck_assert_uint_eq(seen.calls, 0);

        ck_assert_int_eq(write(p[1], "x", 1), 1);
        ck_assert_int_eq(hvt_event_run(e, UINT64_MAX), 1);
        ck_assert_uint_eq(seen.calls, 1);
        ck_assert_int_eq(seen.fd, p[0]);
        ck_assert_uint_eq(seen.revents, EPOLLIN);

        /* Disabled, it is not dispatched, however ready; enabled again, it is. */
        ck_assert_int_eq(write(p[1], "x", 1), 1);
        ck_assert_int_eq(hvt_event_source_set_enabled(s, false), 0);
        ck_assert(!hvt_event_source_get_enabled(s));
        ck_assert_int_eq(hvt_event_run(e, 20 * MSEC), 0);
        ck_assert_uint_eq(seen.calls, 1);
        ck_assert_int_eq(hvt_event_source_set_enabled(s, true), 0);
        ck_assert_int_eq(hvt_event_run(e, UINT64_MAX), 1);
        ck_assert_uint_eq(seen.calls, 2);

        ck_assert_ptr_null(hvt_event_source_free(s));
        close(p[0]);
        close(p[1]);
}
END_TEST

/* EPOLLOUT interest turned on and off, as notify.c does while messages wait. */
START_TEST(test_io_writable) {
        _cleanup_(hvt_event_freep) struct hvt_event *e = new_loop();
        struct hvt_event_source *s = NULL;
        struct io_seen seen = {};
        int sp[2];

        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sp), 0);
        ck_assert_int_eq(hvt_event_add_io(e, &s, sp[0], EPOLLOUT, on_io, &seen), 0);
        ck_assert_int_eq(hvt_event_source_set_enabled(s, false), 0);
        ck_assert_int_eq(hvt_event_run(e, 0), 0);
        ck_assert_uint_eq(seen.calls, 0);
        ck_assert_int_eq(hvt_event_source_set_enabled(s, true), 0);
        ck_assert_int_eq(hvt_event_run(e, 0), 1);
        ck_assert_uint_eq(seen.calls, 1);
        ck_assert_uint_eq(seen.revents, EPOLLOUT);
        /* Its fd closed by the caller first: freeing it still works. */
        close(sp[0]);
        close(sp[1]);
        ck_assert_ptr_null(hvt_event_source_free(s));
        ck_assert_int_eq(hvt_event_run(e, 0), 0);
}
END_TEST

/* --- signals ------------------------------------------------------------------------- */

struct sig_seen {
        unsigned calls;
        int last;
};

static int on_signal(struct hvt_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        struct sig_seen *seen = userdata;

        (void) s;
        seen->calls++;
        seen->last = (int) si->ssi_signo;
        return 0;
}

static void block(int sig) {
        sigset_t mask;

        sigemptyset(&mask);
        sigaddset(&mask, sig);
        ck_assert_int_eq(sigprocmask(SIG_BLOCK, &mask, NULL), 0);
}

START_TEST(test_signal) {
        _cleanup_(hvt_event_freep) struct hvt_event *e = new_loop();
        struct sig_seen seen = {};

        /* Unblocked, the loop would never see it. */
        ck_assert_int_eq(hvt_event_add_signal(e, NULL, SIGUSR2, on_signal, &seen), -EBUSY);

        block(SIGUSR1);
        block(SIGHUP);
        ck_assert_int_eq(hvt_event_add_signal(e, NULL, SIGUSR1, on_signal, &seen), 0);
        ck_assert_int_eq(hvt_event_add_signal(e, NULL, SIGUSR1, on_signal, &seen), -EEXIST);
        ck_assert_int_eq(hvt_event_add_signal(e, NULL, SIGHUP, on_signal, &seen), 0);
        ck_assert_int_eq(hvt_event_run(e, 0), 0);

        ck_assert_int_eq(kill(getpid(), SIGUSR1), 0);
        ck_assert_int_eq(hvt_event_run(e, UINT64_MAX), 1);
        ck_assert_uint_eq(seen.calls, 1);
        ck_assert_int_eq(seen.last, SIGUSR1);

        /* Two at once: both in one iteration. */
        ck_assert_int_eq(kill(getpid(), SIGHUP), 0);
        ck_assert_int_eq(kill(getpid(), SIGUSR1), 0);
        ck_assert_int_eq(hvt_event_run(e, UINT64_MAX), 1);
        ck_assert_uint_eq(seen.calls, 3);
}
END_TEST

/* A signal whose source is freed stays blocked and pending: it is not lost, nor run. */
START_TEST(test_signal_freed) {
        _cleanup_(hvt_event_freep) struct hvt_event *e = new_loop();
        struct hvt_event_source *s = NULL;
        struct sig_seen seen = {};
        sigset_t pending;

        block(SIGUSR1);
        ck_assert_int_eq(hvt_event_add_signal(e, &s, SIGUSR1, on_signal, &seen), 0);
        s = hvt_event_source_free(s);
        ck_assert_int_eq(kill(getpid(), SIGUSR1), 0);
        ck_assert_int_eq(hvt_event_run(e, 20 * MSEC), 0);
        ck_assert_uint_eq(seen.calls, 0);
        ck_assert_int_eq(sigpending(&pending), 0);
        ck_assert_int_eq(sigismember(&pending, SIGUSR1), 1);
        /* And a new source takes it. */
        ck_assert_int_eq(hvt_event_add_signal(e, NULL, SIGUSR1, on_signal, &seen), 0);
        ck_assert_int_eq(hvt_event_run(e, UINT64_MAX), 1);
        ck_assert_uint_eq(seen.calls, 1);
}
END_TEST

/* --- timers -------------------------------------------------------------------------- */

struct timer_log {
        struct hvt_event *e;
        char order[16];
        size_t n;
        uint64_t iteration[16];
};

struct timer {
        struct timer_log *log;
        char name;
        struct hvt_event_source *s;
        unsigned rearm;          /* times left to re-arm itself, 5 ms on */
        struct timer *victim;    /* freed by this one's handler */
};

static int on_timer(struct hvt_event_source *s, uint64_t usec, void *userdata) {
        struct timer *t = userdata;
        struct timer_log *log = t->log;

        ck_assert_ptr_eq(s, t->s);
        ck_assert(!hvt_event_source_get_enabled(s));      /* one-shot: off as it runs */
        ck_assert_uint_ge(hvt_event_now(log->e), usec);   /* never early */
        ck_assert_uint_ge(monotonic(), usec);
        ck_assert_uint_lt(log->n, sizeof(log->order) - 1);
        log->iteration[log->n] = hvt_event_get_iteration(log->e);
        log->order[log->n++] = t->name;
        if (t->victim)
                t->victim->s = hvt_event_source_free(t->victim->s);
        if (t->rearm > 0) {
                t->rearm--;
                ck_assert_int_eq(hvt_event_source_set_time_relative(s, 5 * MSEC), 0);
                ck_assert(hvt_event_source_get_enabled(s));
        }
        return 0;
}

/* Runs until no timer is armed; each iteration bounded, in case one never fires. */
static void run_timers(struct hvt_event *e, struct timer *t, size_t n) {
        for (;;) {
                bool armed = false;

                for (size_t i = 0; i < n; i++)
                        armed = armed || hvt_event_source_get_enabled(t[i].s);
                if (!armed)
                        return;
                ck_assert_int_ge(hvt_event_run(e, 1000 * MSEC), 0);
        }
}

START_TEST(test_timer_order) {
        _cleanup_(hvt_event_freep) struct hvt_event *e = new_loop();
        struct timer_log log = { .e = e };
        struct timer t[3] = { { .log = &log, .name = 'a' }, { .log = &log, .name = 'b' }, { .log = &log, .name = 'c' } };
        uint64_t now = hvt_event_now(e);

        /* Added in another order than they are due; no slack. */
        ck_assert_int_eq(hvt_event_add_time(e, &t[0].s, now + 30 * MSEC, 0, on_timer, &t[0]), 0);
        ck_assert_int_eq(hvt_event_add_time(e, &t[1].s, now + 10 * MSEC, 0, on_timer, &t[1]), 0);
        ck_assert_int_eq(hvt_event_add_time_relative(e, &t[2].s, 20 * MSEC, 0, on_timer, &t[2]), 0);
        run_timers(e, t, 3);
        ck_assert_str_eq(log.order, "bca");
        for (size_t i = 0; i < 3; i++)
                t[i].s = hvt_event_source_free(t[i].s);
}
END_TEST

/* Timers whose windows overlap run in one wakeup, earliest first, none of them early. */
START_TEST(test_timer_accuracy) {
        _cleanup_(hvt_event_freep) struct hvt_event *e = new_loop();
        struct timer_log log = { .e = e };
        struct timer t[2] = { { .log = &log, .name = 'a' }, { .log = &log, .name = 'b' } };

        ck_assert_int_eq(hvt_event_add_time_relative(e, &t[0].s, 10 * MSEC, 100 * MSEC, on_timer, &t[0]), 0);
        ck_assert_int_eq(hvt_event_add_time_relative(e, &t[1].s, 40 * MSEC, 0, on_timer, &t[1]), 0);
        run_timers(e, t, 2);
        ck_assert_str_eq(log.order, "ab");
        ck_assert_uint_eq(log.iteration[0], log.iteration[1]);
        ck_assert_uint_eq(hvt_event_get_iteration(e), 1);
        for (size_t i = 0; i < 2; i++)
                t[i].s = hvt_event_source_free(t[i].s);
}
END_TEST

/* Re-armed from its handler, relative to the iteration's time; disabled, it never runs;
 * enabled again, it runs at the time it had. */
START_TEST(test_timer_rearm) {
        _cleanup_(hvt_event_freep) struct hvt_event *e = new_loop();
        struct timer_log log = { .e = e };
        struct timer t[2] = { { .log = &log, .name = 'a', .rearm = 3 }, { .log = &log, .name = 'b' } };

        ck_assert_int_eq(hvt_event_add_time_relative(e, &t[0].s, 5 * MSEC, 0, on_timer, &t[0]), 0);
        ck_assert_int_eq(hvt_event_add_time_relative(e, &t[1].s, 1 * MSEC, 0, on_timer, &t[1]), 0);
        ck_assert_int_eq(hvt_event_source_set_enabled(t[1].s, false), 0);
        run_timers(e, t, 2);
        ck_assert_str_eq(log.order, "aaaa");
        for (size_t i = 1; i < 4; i++)
                ck_assert_uint_gt(log.iteration[i], log.iteration[i - 1]);

        ck_assert_int_eq(hvt_event_source_set_enabled(t[1].s, true), 0);
        ck_assert_int_eq(hvt_event_run(e, UINT64_MAX), 1);
        ck_assert_str_eq(log.order, "aaaab");
        for (size_t i = 0; i < 2; i++)
                t[i].s = hvt_event_source_free(t[i].s);
}
END_TEST

static int rearm_now(struct hvt_event_source *s, uint64_t usec, void *userdata) {
        unsigned *calls = userdata;

        (void) usec;
        if (++*calls < 3)
                return hvt_event_source_set_time_relative(s, 0);
        return 0;
}

/* Re-armed for a time already past, it runs in the next iteration, not again in this one. */
START_TEST(test_timer_rearm_past) {
        _cleanup_(hvt_event_freep) struct hvt_event *e = new_loop();
        unsigned calls = 0;

        ck_assert_int_eq(hvt_event_add_time(e, NULL, 0, 0, rearm_now, &calls), 0);
        ck_assert_int_eq(hvt_event_run(e, 0), 1);
        ck_assert_uint_eq(calls, 1);
        ck_assert_int_eq(hvt_event_run(e, 0), 1);
        ck_assert_uint_eq(calls, 2);
        ck_assert_int_eq(hvt_event_run(e, 0), 1);
        ck_assert_uint_eq(calls, 3);
        ck_assert_int_eq(hvt_event_run(e, 0), 0);
}
END_TEST

static int failing_timer(struct hvt_event_source *s, uint64_t usec, void *userdata) {
        (void) usec, (void) userdata;
        (void) hvt_event_source_set_time_relative(s, 0);
        return -EIO;
}

/* A handler that fails has its source turned off: it does not spin. */
START_TEST(test_handler_fails) {
        _cleanup_(hvt_event_freep) struct hvt_event *e = new_loop();
        struct hvt_event_source *s = NULL;

        ck_assert_int_eq(hvt_event_add_time(e, &s, 0, 0, failing_timer, NULL), 0);
        ck_assert_int_eq(hvt_event_run(e, 0), 1);
        ck_assert(!hvt_event_source_get_enabled(s));
        ck_assert_int_eq(hvt_event_run(e, 0), 0);
        s = hvt_event_source_free(s);
}
END_TEST

/* --- sources freed from handlers ----------------------------------------------------- */

/* A timer frees itself, as a paused disk's does when its pause ends. */
static int free_self(struct hvt_event_source *s, uint64_t usec, void *userdata) {
        struct hvt_event_source **held = userdata;

        (void) usec;
        ck_assert_ptr_eq(*held, s);
        *held = hvt_event_source_free(*held);
        return 0;
}

static int free_self_io(struct hvt_event_source *s, int fd, uint32_t revents, void *userdata) {
        (void) fd, (void) revents;
        return free_self(s, 0, userdata);
}

START_TEST(test_free_own) {
        _cleanup_(hvt_event_freep) struct hvt_event *e = new_loop();
        struct hvt_event_source *timer = NULL, *io = NULL;
        int p[2];

        make_pipe(p);
        ck_assert_int_eq(hvt_event_add_time(e, &timer, 0, 0, free_self, &timer), 0);
        ck_assert_int_eq(hvt_event_add_io(e, &io, p[0], EPOLLIN, free_self_io, &io), 0);
        ck_assert_int_eq(write(p[1], "x", 1), 1);
        ck_assert_int_eq(hvt_event_run(e, 0), 1);
        ck_assert_ptr_null(timer);
        ck_assert_ptr_null(io);
        /* The fd is still readable, and nothing is left to run for it. */
        ck_assert_int_eq(hvt_event_run(e, 0), 0);
        close(p[0]);
        close(p[1]);
}
END_TEST

/* Two timers due in one iteration: the first frees the second (a disk forgotten while its
 * pause timer is due), which then never runs. */
START_TEST(test_free_other_timer) {
        _cleanup_(hvt_event_freep) struct hvt_event *e = new_loop();
        struct timer_log log = { .e = e };
        struct timer t[2] = { { .log = &log, .name = 'a' }, { .log = &log, .name = 'b' } };

        t[0].victim = &t[1];
        ck_assert_int_eq(hvt_event_add_time(e, &t[0].s, 1, 0, on_timer, &t[0]), 0);
        ck_assert_int_eq(hvt_event_add_time(e, &t[1].s, 2, 0, on_timer, &t[1]), 0);
        ck_assert_int_eq(hvt_event_run(e, 0), 1);
        ck_assert_str_eq(log.order, "a");
        ck_assert_ptr_null(t[1].s);
        ck_assert_int_eq(hvt_event_run(e, 0), 0);
        t[0].s = hvt_event_source_free(t[0].s);
}
END_TEST

struct pair {
        struct hvt_event_source *s[2];
        unsigned calls[2];
};

static int free_other_io(struct hvt_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct pair *p = userdata;
        int me = s == p->s[1];
        char c;

        (void) revents;
        ck_assert_int_eq(read(fd, &c, 1), 1);
        p->calls[me]++;
        p->s[!me] = hvt_event_source_free(p->s[!me]);
        return 0;
}

/* Two io sources ready in the same epoll answer: whichever runs first frees the other. */
START_TEST(test_free_other_io) {
        _cleanup_(hvt_event_freep) struct hvt_event *e = new_loop();
        struct pair pair = {};
        int a[2], b[2];

        make_pipe(a);
        make_pipe(b);
        ck_assert_int_eq(hvt_event_add_io(e, &pair.s[0], a[0], EPOLLIN, free_other_io, &pair), 0);
        ck_assert_int_eq(hvt_event_add_io(e, &pair.s[1], b[0], EPOLLIN, free_other_io, &pair), 0);
        ck_assert_int_eq(write(a[1], "x", 1), 1);
        ck_assert_int_eq(write(b[1], "x", 1), 1);
        ck_assert_int_eq(hvt_event_run(e, UINT64_MAX), 1);
        ck_assert_uint_eq(pair.calls[0] + pair.calls[1], 1);
        ck_assert_ptr_null(pair.s[pair.calls[0] ? 1 : 0]);  /* the one that did not run */
        for (size_t i = 0; i < 2; i++)
                pair.s[i] = hvt_event_source_free(pair.s[i]);
        close(a[0]), close(a[1]), close(b[0]), close(b[1]);
}
END_TEST

/* A signal's handler frees a timer due in the same iteration, and an io source ready in it. */
static int free_all(struct hvt_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        struct hvt_event_source **held = userdata;

        (void) s, (void) si;
        held[0] = hvt_event_source_free(held[0]);
        held[1] = hvt_event_source_free(held[1]);
        return 0;
}

static int never(struct hvt_event_source *s, uint64_t usec, void *userdata) {
        (void) s, (void) usec, (void) userdata;
        ck_abort_msg("a freed source ran");
        return 0;
}

static int never_io(struct hvt_event_source *s, int fd, uint32_t revents, void *userdata) {
        (void) fd, (void) revents;
        return never(s, 0, userdata);
}

START_TEST(test_free_other_type) {
        _cleanup_(hvt_event_freep) struct hvt_event *e = new_loop();
        struct hvt_event_source *held[2] = {};
        int p[2];

        make_pipe(p);
        block(SIGUSR1);
        ck_assert_int_eq(hvt_event_add_signal(e, NULL, SIGUSR1, free_all, held), 0);
        ck_assert_int_eq(hvt_event_add_time(e, &held[0], 0, 0, never, NULL), 0);
        ck_assert_int_eq(hvt_event_add_io(e, &held[1], p[0], EPOLLIN, never_io, NULL), 0);
        ck_assert_int_eq(write(p[1], "x", 1), 1);
        ck_assert_int_eq(kill(getpid(), SIGUSR1), 0);
        ck_assert_int_eq(hvt_event_run(e, UINT64_MAX), 1);
        ck_assert_ptr_null(held[0]);
        ck_assert_ptr_null(held[1]);
        close(p[0]);
        close(p[1]);
}
END_TEST

/* The loop freed first: the sources it holds go with it, one a caller holds is still freed
 * safely (the order in which the daemon's context is torn down must not matter). */
START_TEST(test_loop_freed_first) {
        struct hvt_event *e = new_loop();
        struct hvt_event_source *held = NULL;
        int p[2];

        make_pipe(p);
        ck_assert_int_eq(hvt_event_add_io(e, &held, p[0], EPOLLIN, never_io, NULL), 0);
        ck_assert_int_eq(hvt_event_add_io(e, NULL, p[1], EPOLLOUT, never_io, NULL), 0);
        ck_assert_int_eq(hvt_event_add_time_relative(e, NULL, 1000 * MSEC, 0, never, NULL), 0);
        ck_assert_ptr_null(hvt_event_free(e));
        ck_assert_int_eq(hvt_event_source_set_enabled(held, false), -ESTALE);
        ck_assert_ptr_null(hvt_event_source_free(held));
        close(p[0]);
        close(p[1]);
}
END_TEST

/* --- post, exit ---------------------------------------------------------------------- */

static int count_post(struct hvt_event_source *s, void *userdata) {
        unsigned *calls = userdata;

        (void) s;
        ++*calls;
        return 0;
}

START_TEST(test_post) {
        _cleanup_(hvt_event_freep) struct hvt_event *e = new_loop();
        struct io_seen seen = {};
        unsigned posts = 0, timer_calls = 3;
        int p[2];

        make_pipe(p);
        ck_assert_int_eq(hvt_event_add_post(e, NULL, count_post, &posts), 0);
        ck_assert_int_eq(hvt_event_add_io(e, NULL, p[0], EPOLLIN, on_io, &seen), 0);

        /* Nothing dispatched, no post; the post alone is not "something dispatched". */
        ck_assert_int_eq(hvt_event_run(e, 10 * MSEC), 0);
        ck_assert_int_eq(hvt_event_run(e, 0), 0);
        ck_assert_uint_eq(posts, 0);

        /* Two sources in one iteration: one post after both. */
        ck_assert_int_eq(hvt_event_add_time(e, NULL, 0, 0, rearm_now, &timer_calls), 0);
        ck_assert_int_eq(write(p[1], "x", 1), 1);
        ck_assert_int_eq(hvt_event_run(e, UINT64_MAX), 1);
        ck_assert_uint_eq(seen.calls, 1);
        ck_assert_uint_eq(posts, 1);
        ck_assert_int_eq(hvt_event_run(e, 10 * MSEC), 0);
        ck_assert_uint_eq(posts, 1);
        close(p[0]);
        close(p[1]);
}
END_TEST

static int exit_with(struct hvt_event_source *s, uint64_t usec, void *userdata) {
        (void) s, (void) usec;
        return hvt_event_exit(userdata, 42);
}

/* exit ends the loop with its code; nothing else of that iteration runs, not even post. */
START_TEST(test_exit) {
        _cleanup_(hvt_event_freep) struct hvt_event *e = new_loop();
        unsigned posts = 0;

        ck_assert_int_eq(hvt_event_add_post(e, NULL, count_post, &posts), 0);
        /* Both due in the same wakeup (at 6 ms), the one that exits first. */
        ck_assert_int_eq(hvt_event_add_time_relative(e, NULL, 5 * MSEC, 10 * MSEC, exit_with, e), 0);
        ck_assert_int_eq(hvt_event_add_time_relative(e, NULL, 6 * MSEC, 0, never, NULL), 0);
        ck_assert_int_eq(hvt_event_loop(e), 42);
        ck_assert_uint_eq(posts, 0);
        /* Exiting, an iteration does nothing. */
        ck_assert_int_eq(hvt_event_run(e, 0), 0);
}
END_TEST

/* --- idle ---------------------------------------------------------------------------- */

static int exit_io(struct hvt_event_source *s, int fd, uint32_t revents, void *userdata) {
        (void) s, (void) fd, (void) revents;
        return hvt_event_exit(userdata, 0);
}

/* With no timer armed (a disabled one does not count), the loop sleeps in one epoll_wait()
 * until something happens: one iteration, no wakeup before it, nothing spent meanwhile. */
START_TEST(test_idle_blocks) {
        _cleanup_(hvt_event_freep) struct hvt_event *e = new_loop();
        struct hvt_event_source *off = NULL;
        struct rusage before, after;
        unsigned posts = 0;
        uint64_t start;
        pid_t child;
        int p[2];

        make_pipe(p);
        ck_assert_int_eq(hvt_event_add_io(e, NULL, p[0], EPOLLIN, exit_io, e), 0);
        ck_assert_int_eq(hvt_event_add_post(e, NULL, count_post, &posts), 0);
        ck_assert_int_eq(hvt_event_add_time_relative(e, &off, 1 * MSEC, 0, never, NULL), 0);
        ck_assert_int_eq(hvt_event_source_set_enabled(off, false), 0);

        child = fork();
        ck_assert_int_ge(child, 0);
        if (child == 0) {
                usleep(300 * 1000);
                _exit(write(p[1], "x", 1) == 1 ? 0 : 1);
        }
        start = monotonic();
        ck_assert_int_eq(getrusage(RUSAGE_SELF, &before), 0);
        ck_assert_int_eq(hvt_event_loop(e), 0);
        ck_assert_int_eq(getrusage(RUSAGE_SELF, &after), 0);
        ck_assert_uint_ge(monotonic() - start, 250 * MSEC);
        ck_assert_uint_eq(hvt_event_get_iteration(e), 1);
        ck_assert_uint_eq(posts, 0);  /* its one iteration ended in exit */
        /* Blocked, not spinning: a few context switches at most for the one wakeup. */
        ck_assert_int_le(after.ru_nvcsw - before.ru_nvcsw, 2);
        ck_assert_int_eq(waitpid(child, NULL, 0), child);
        off = hvt_event_source_free(off);
        close(p[0]);
        close(p[1]);
}
END_TEST

/* The iteration's time is the same for all its handlers; before any, it is the time now. */
struct now_seen {
        struct hvt_event *e;
        uint64_t now;
};

static int note_now(struct hvt_event_source *s, uint64_t usec, void *userdata) {
        struct now_seen *seen = userdata;

        (void) s, (void) usec;
        seen->now = hvt_event_now(seen->e);
        usleep(2000);
        return 0;
}

START_TEST(test_now) {
        _cleanup_(hvt_event_freep) struct hvt_event *e = new_loop();
        struct now_seen a = { .e = e }, b = { .e = e };
        uint64_t t0, t1;

        t0 = hvt_event_now(e);
        usleep(2000);
        t1 = hvt_event_now(e);
        ck_assert_uint_gt(t1, t0);
        ck_assert_int_eq(hvt_event_add_time(e, NULL, 0, 0, note_now, &a), 0);
        ck_assert_int_eq(hvt_event_add_time(e, NULL, 0, 0, note_now, &b), 0);
        ck_assert_int_eq(hvt_event_run(e, 0), 1);
        ck_assert_uint_ge(a.now, t1);
        ck_assert_uint_eq(a.now, b.now);
}
END_TEST

int main(void) {
        Suite *s = suite_create("event");
        TCase *tc = tcase_create("event");

        tcase_add_checked_fixture(tc, guard, NULL);
        tcase_add_test(tc, test_io);
        tcase_add_test(tc, test_io_writable);
        tcase_add_test(tc, test_signal);
        tcase_add_test(tc, test_signal_freed);
        tcase_add_test(tc, test_timer_order);
        tcase_add_test(tc, test_timer_accuracy);
        tcase_add_test(tc, test_timer_rearm);
        tcase_add_test(tc, test_timer_rearm_past);
        tcase_add_test(tc, test_handler_fails);
        tcase_add_test(tc, test_free_own);
        tcase_add_test(tc, test_free_other_timer);
        tcase_add_test(tc, test_free_other_io);
        tcase_add_test(tc, test_free_other_type);
        tcase_add_test(tc, test_loop_freed_first);
        tcase_add_test(tc, test_post);
        tcase_add_test(tc, test_exit);
        tcase_add_test(tc, test_idle_blocks);
        tcase_add_test(tc, test_now);
        suite_add_tcase(s, tc);
        return test_run(s);
}
