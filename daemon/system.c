/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: what kind of stop this is, asked of systemd: a shutdown (Manager.SystemState), a
 * restart (a job of type "restart" on this unit), or a plain stop.
 *
 * PID 1's private socket first: during shutdown the D-Bus broker may already be gone, and
 * PID 1 still answers there (it is how systemctl talks to it). The system bus after that.
 *
 * systemd says "stopping" on the bus only (org.freedesktop.systemd1(5), as systemctl
 * is-system-running reads it): no file, variable or signal to the service tells a shutdown
 * from a plain stop, and PID 1's varlink interface (io.systemd.Manager) came with 257, after
 * the systemd hvtuned supports. So the one property read takes libsystemd's sd-bus, loaded
 * with dlopen() when the check is made: a start does not pay for libsystemd and the libraries
 * it pulls in (docs/performance.md), and without it the answer is "cannot tell". Once loaded
 * it stays: the process is about to exit, and libsystemd registers fork handlers that must
 * not outlive its code.
 *
 * The whole check, the dlopen() and both connections included, ends at one deadline: the
 * stop it delays has a timeout of its own, past which systemd kills hvtuned before its
 * restore. sd-bus's blocking calls cannot keep it (a connection's authentication and Hello
 * wait up to 90 s each, outside any method call timeout), so the question is asked without
 * blocking, and the waiting done here, in this process: a child left behind would hold the
 * stop as long (systemd waits for the whole cgroup). Only calls libsystemd has had since 221
 * are made, so that it works with the systemd 239 of RHEL 8; and they are declared here, so
 * that building hvtuned needs no libsystemd headers at all.
 *
 * A restart is a job too, and on the bus only: during the stop half of `systemctl restart`
 * (and of try-restart on an active unit, which collapses into one), the unit's job is of type
 * "restart" until the stop is done, when src/core/job.c turns it into a start (239 to 257
 * alike). The three questions go out together, on the one connection and within the one
 * deadline, and are answered in one round trip: SystemState, Manager.GetUnitByPID (this
 * unit's path) and Manager.ListJobs (every job's type and unit path), matched here.
 * Properties of the unit and then of its job would cost two more round trips. */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "system.h"

/* A shutdown must never wait on us: the whole check ends this long after it starts. */
#define CHECK_TIMEOUT_USEC (2 * 1000 * 1000)

#ifdef HVT_SD_BUS_HEADER_CHECK
/* The test build compiles this file once more against libsystemd's header, so that every
 * declaration below is checked against the real one (tests/meson.build). */
#include <systemd/sd-bus.h>
#else
/* As <systemd/sd-bus.h> declares them; opaque where hvtuned never looks inside. */
typedef struct sd_bus sd_bus;
typedef struct sd_bus_message sd_bus_message;
typedef struct sd_bus_slot sd_bus_slot;
typedef struct sd_bus_error sd_bus_error;
typedef int (*sd_bus_message_handler_t)(sd_bus_message *m, void *userdata, sd_bus_error *ret_error);
#endif

/* The calls made, found in libsystemd at run time: all in LIBSYSTEMD_221
 * (src/libsystemd/libsystemd.sym). */
struct bus_api {
        int (*sd_bus_new)(sd_bus **ret);
        int (*sd_bus_set_address)(sd_bus *bus, const char *address);
        int (*sd_bus_start)(sd_bus *bus);
        int (*sd_bus_open_system)(sd_bus **ret);
        int (*sd_bus_call_method_async)(sd_bus *bus, sd_bus_slot **slot, const char *destination,
                                        const char *path, const char *interface, const char *member,
                                        sd_bus_message_handler_t callback, void *userdata, const char *types, ...);
        int (*sd_bus_process)(sd_bus *bus, sd_bus_message **r);
        int (*sd_bus_get_fd)(sd_bus *bus);
        int (*sd_bus_get_events)(sd_bus *bus);
        int (*sd_bus_get_timeout)(sd_bus *bus, uint64_t *timeout_usec);
        int (*sd_bus_message_is_method_error)(sd_bus_message *m, const char *name);
        int (*sd_bus_message_get_errno)(sd_bus_message *m);
        int (*sd_bus_message_read)(sd_bus_message *m, const char *types, ...);
        int (*sd_bus_message_enter_container)(sd_bus_message *m, char type, const char *contents);
        int (*sd_bus_message_exit_container)(sd_bus_message *m);
        void (*sd_bus_close)(sd_bus *bus);
        sd_bus *(*sd_bus_unref)(sd_bus *bus);
};

#define BUS_CALLS(X)                            \
        X(sd_bus_new)                           \
        X(sd_bus_set_address)                   \
        X(sd_bus_start)                         \
        X(sd_bus_open_system)                   \
        X(sd_bus_call_method_async)             \
        X(sd_bus_process)                       \
        X(sd_bus_get_fd)                        \
        X(sd_bus_get_events)                    \
        X(sd_bus_get_timeout)                   \
        X(sd_bus_message_is_method_error)       \
        X(sd_bus_message_get_errno)             \
        X(sd_bus_message_read)                  \
        X(sd_bus_message_enter_container)       \
        X(sd_bus_message_exit_container)        \
        X(sd_bus_close)                         \
        X(sd_bus_unref)

#ifdef HVT_SD_BUS_HEADER_CHECK
#define CHECK_DECLARED(name)                                                                    \
        _Static_assert(__builtin_types_compatible_p(typeof(&name), typeof(((struct bus_api *) 0)->name)), \
                       #name " is not declared as <systemd/sd-bus.h> declares it");
BUS_CALLS(CHECK_DECLARED)
#endif

static int load_bus_api(struct bus_api *api, const struct hvt_log *log) {
        bool found = true;
        void *dl;

        dl = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
        if (!dl) {
                hvt_log_debug(log, "Cannot load libsystemd (%s): cannot tell whether the system is shutting down",
                              dlerror());
                return -EOPNOTSUPP;
        }
#define LOAD(name) found = found && (api->name = (typeof(api->name)) dlsym(dl, #name));
        BUS_CALLS(LOAD)
#undef LOAD
        if (!found) {
                hvt_log_debug(log, "libsystemd lacks what the shutdown check needs (%s): cannot tell whether "
                              "the system is shutting down", dlerror());
                (void) dlclose(dl);
                return -EOPNOTSUPP;
        }
        return 0;
}

static sd_bus *bus_close_unref(const struct bus_api *api, sd_bus *bus) {
        if (bus) {
                /* Closed without a flush: there is nothing to send, and nothing to wait for.
                 * The close also drops the queued messages that hold the bus. */
                api->sd_bus_close(bus);
                api->sd_bus_unref(bus);
        }
        return NULL;
}

/* Connecting does not block: sd_bus_start() only begins it, and the rest (authentication,
 * Hello on the bus) happens in ask()'s loop. */
static int open_bus(const struct bus_api *api, bool private, sd_bus **ret) {
        sd_bus *bus = NULL;
        int r;

        if (!private)
                return api->sd_bus_open_system(ret);
        r = api->sd_bus_new(&bus);
        if (r < 0)
                return r;
        r = api->sd_bus_set_address(bus, "unix:path=/run/systemd/private");
        if (r >= 0)
                r = api->sd_bus_start(bus);
        if (r < 0) {
                bus_close_unref(api, bus);
                return r;
        }
        *ret = bus;
        return 0;
}

/* Jobs of type "restart" taken from ListJobs' reply: one machine has a handful at most. More
 * than that, and which unit is restarting is not known. */
#define RESTART_JOBS_MAX 16
#define OBJECT_PATH_MAX 256

struct answers {
        const struct bus_api *api;
        unsigned pending;               /* replies still to come */
        bool state_done;
        int state_error;                /* SystemState's: the one answer every stop needs */
        char state[32];
        bool unit_known;                /* GetUnitByPID answered */
        char unit[OBJECT_PATH_MAX];     /* this process's unit, as an object path */
        bool jobs_known;                /* ListJobs answered, and every restart job fitted */
        char restarting[RESTART_JOBS_MAX][OBJECT_PATH_MAX];  /* units with a restart job */
        size_t n_restarting;
};

/* An error reply, or one sd-bus made up for a lost connection: -errno; 0 for a reply. */
static int reply_error(const struct bus_api *api, sd_bus_message *m) {
        int r;

        if (api->sd_bus_message_is_method_error(m, NULL) <= 0)
                return 0;
        r = api->sd_bus_message_get_errno(m);
        return r > 0 ? -r : -EIO;
}

static int on_state(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct answers *a = userdata;
        const char *state;
        int r;

        (void) ret_error;
        a->pending--;
        a->state_done = true;
        r = reply_error(a->api, m);
        if (r >= 0)
                r = a->api->sd_bus_message_read(m, "v", "s", &state);
        if (r < 0)
                a->state_error = r;
        else
                (void) hvt_strscpy(a->state, sizeof(a->state), state);
        return 0;
}

static int on_unit(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct answers *a = userdata;
        const char *path;

        (void) ret_error;
        a->pending--;
        if (reply_error(a->api, m) < 0 || a->api->sd_bus_message_read(m, "o", &path) < 0)
                return 0;
        a->unit_known = hvt_strscpy(a->unit, sizeof(a->unit), path);
        return 0;
}

/* ListJobs: a(usssoo), each job's id, unit name, type, state, job path and unit path. */
static int on_jobs(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct answers *a = userdata;
        bool fitted = true;
        int r;

        (void) ret_error;
        a->pending--;
        r = reply_error(a->api, m);
        if (r >= 0)
                r = a->api->sd_bus_message_enter_container(m, 'a', "(usssoo)");
        while (r >= 0) {
                const char *unit, *type, *state, *job, *unit_path;
                uint32_t id;

                r = a->api->sd_bus_message_read(m, "(usssoo)", &id, &unit, &type, &state, &job, &unit_path);
                if (r <= 0)
                        break;
                if (strcmp(type, "restart") != 0)
                        continue;
                if (a->n_restarting >= RESTART_JOBS_MAX ||
                    !hvt_strscpy(a->restarting[a->n_restarting], OBJECT_PATH_MAX, unit_path))
                        fitted = false;
                else
                        a->n_restarting++;
        }
        if (r >= 0)
                r = a->api->sd_bus_message_exit_container(m);
        a->jobs_known = r >= 0 && fitted;
        return 0;
}

/* Whether this process's unit has a job of type restart; false when that is not known. */
static bool answers_restarting(const struct answers *a) {
        if (!a->unit_known || !a->jobs_known)
                return false;
        for (size_t i = 0; i < a->n_restarting; i++)
                if (strcmp(a->restarting[i], a->unit) == 0)
                        return true;
        return false;
}

/* Waits for what the connection waits for: its socket, or its own next timeout if sooner
 * than the deadline. */
static int wait_bus(const struct bus_api *api, sd_bus *bus, uint64_t now, uint64_t deadline) {
        struct pollfd p;
        uint64_t until, usec;
        int r;

        r = api->sd_bus_get_fd(bus);
        if (r < 0)
                return r;
        p.fd = r;
        r = api->sd_bus_get_events(bus);
        if (r < 0)
                return r;
        p.events = (short) r;
        r = api->sd_bus_get_timeout(bus, &until);       /* absolute, CLOCK_MONOTONIC; or UINT64_MAX */
        if (r < 0)
                return r;
        usec = until < deadline ? (until > now ? until - now : 0) : deadline - now;
        if (ppoll(&p, 1, &(struct timespec) { .tv_sec = (time_t) (usec / 1000000), .tv_nsec = (long) (usec % 1000000) * 1000 },
                  NULL) < 0 && errno != EINTR)
                return -errno;
        return 0;
}

/* The three questions on one connection, asked together and answered by the deadline or
 * abandoned there: 0 once SystemState is answered (the others may not be: then it is not known
 * whether this is a restart), -errno otherwise. */
static int ask(const struct bus_api *api, bool private, uint64_t deadline, struct answers *a) {
        sd_bus *bus = NULL;
        int r;

        memset(a, 0, sizeof(*a));
        a->api = api;
        r = open_bus(api, private, &bus);
        if (r < 0)
                return r;
        /* The slots are the bus's own (floating): they go with the bus, and the callbacks with
         * it, never to be called once this returns. */
        r = api->sd_bus_call_method_async(bus, NULL, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                          "org.freedesktop.DBus.Properties", "Get", on_state, a, "ss",
                                          "org.freedesktop.systemd1.Manager", "SystemState");
        if (r >= 0) {
                a->pending++;
                /* Not sent, not known: the stop is then a plain one, and SystemState still counts. */
                if (api->sd_bus_call_method_async(bus, NULL, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                                  "org.freedesktop.systemd1.Manager", "GetUnitByPID", on_unit, a, "u",
                                                  (uint32_t) getpid()) >= 0)
                        a->pending++;
                if (api->sd_bus_call_method_async(bus, NULL, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                                  "org.freedesktop.systemd1.Manager", "ListJobs", on_jobs, a, "") >= 0)
                        a->pending++;
        }
        while (r >= 0 && a->pending > 0) {
                uint64_t now;

                r = api->sd_bus_process(bus, NULL);
                if (a->pending == 0 || r < 0)
                        break;
                /* Before waiting, and before the next message too: a peer that never stops
                 * talking must not keep us either. */
                now = hvt_now_usec(CLOCK_MONOTONIC);
                if (now >= deadline)
                        r = -ETIMEDOUT;
                else if (r == 0)
                        r = wait_bus(api, bus, now, deadline);
        }
        bus_close_unref(api, bus);
        if (!a->state_done)
                return r < 0 ? r : -EIO;
        return a->state_error;
}

static const char *job_said(const struct answers *a, bool restarting) {
        if (restarting)
                return "a restart";
        return a->unit_known && a->jobs_known ? "no restart" : "not known";
}

enum hvt_stop_kind hvt_system_stop_kind(const struct hvt_log *log) {
        uint64_t start = hvt_now_usec(CLOCK_MONOTONIC), deadline = start + CHECK_TIMEOUT_USEC;
        _cleanup_free_ struct answers *a = NULL;
        struct bus_api api;
        const char *bus_said = "not asked, no time left";
        bool restarting;
        double took;
        int r, r_private;

        if (load_bus_api(&api, log) < 0)
                return HVT_STOP_PLAIN;
        a = malloc(sizeof(*a));  /* 4 KiB of restart jobs: not on the signal handler's stack */
        if (!a) {
                hvt_log_debug(log, "Out of memory: cannot tell whether the system is shutting down or this is a restart");
                return HVT_STOP_PLAIN;
        }
        r = r_private = hvt_now_usec(CLOCK_MONOTONIC) < deadline ? ask(&api, true, deadline, a) : -ETIMEDOUT;
        if (r < 0 && hvt_now_usec(CLOCK_MONOTONIC) < deadline) {
                r = ask(&api, false, deadline, a);
                if (r < 0)
                        bus_said = strerror(-r);
        }
        took = (double) (hvt_now_usec(CLOCK_MONOTONIC) - start) / 1e6;
        if (r >= 0) {
                restarting = answers_restarting(a);
                hvt_log_debug(log, "systemd says the system is %s, and this unit's job is %s (asked in %.3f s)",
                              a->state, job_said(a, restarting), took);
                if (strcmp(a->state, "stopping") == 0)
                        return HVT_STOP_SHUTDOWN;
                return restarting ? HVT_STOP_RESTART : HVT_STOP_PLAIN;
        }
        /* Not there at all (no systemd, not root) is the usual reason, said at debug level;
         * a systemd that did not answer in time is worth saying: it is why the stop took
         * that long. */
        (void) hvt_log_struct(log, r_private == -ETIMEDOUT || r == -ETIMEDOUT ? LOG_INFO : LOG_DEBUG, 0, NULL, NULL,
                              "Cannot tell whether the system is shutting down or this is a restart, taken as a plain "
                              "stop: no answer from systemd in %.1f s (PID 1's private socket: %s; the system bus: %s)",
                              took, strerror(-r_private), bus_said);
        return HVT_STOP_PLAIN;
}
