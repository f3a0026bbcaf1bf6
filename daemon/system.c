/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the shutdown check, through systemd's Manager.SystemState.
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
 * that building hvtuned needs no libsystemd headers at all. */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

struct answer {
        const struct bus_api *api;
        bool done;
        int error;
        char state[32];
};

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct answer *a = userdata;
        const char *state;
        int r;

        (void) ret_error;
        a->done = true;
        /* An error reply, or one sd-bus made up for a lost connection. */
        if (a->api->sd_bus_message_is_method_error(m, NULL) > 0) {
                r = a->api->sd_bus_message_get_errno(m);
                a->error = r > 0 ? -r : -EIO;
                return 0;
        }
        r = a->api->sd_bus_message_read(m, "v", "s", &state);
        if (r < 0)
                a->error = r;
        else
                (void) hvt_strscpy(a->state, sizeof(a->state), state);
        return 0;
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

/* Properties.Get(Manager, SystemState) on one connection, made and answered by the
 * deadline or abandoned there. */
static int ask(const struct bus_api *api, bool private, uint64_t deadline, char *state, size_t size) {
        struct answer a = { .api = api };
        sd_bus *bus = NULL;
        int r;

        r = open_bus(api, private, &bus);
        if (r < 0)
                return r;
        /* The slot is the bus's own (floating): it goes with the bus, and the callback with
         * it, never to be called once this returns. */
        r = api->sd_bus_call_method_async(bus, NULL, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                          "org.freedesktop.DBus.Properties", "Get", on_reply, &a, "ss",
                                          "org.freedesktop.systemd1.Manager", "SystemState");
        while (r >= 0) {
                uint64_t now;

                r = api->sd_bus_process(bus, NULL);
                if (a.done || r < 0)
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
        if (!a.done)
                return r < 0 ? r : -EIO;
        if (a.error < 0)
                return a.error;
        (void) hvt_strscpy(state, size, a.state);
        return 0;
}

bool hvt_system_is_stopping(const struct hvt_log *log) {
        uint64_t start = hvt_now_usec(CLOCK_MONOTONIC), deadline = start + CHECK_TIMEOUT_USEC;
        struct bus_api api;
        char state[32];
        const char *bus_said = "not asked, no time left";
        double took;
        int r, r_private;

        if (load_bus_api(&api, log) < 0)
                return false;
        r = r_private = hvt_now_usec(CLOCK_MONOTONIC) < deadline ?
                ask(&api, true, deadline, state, sizeof(state)) : -ETIMEDOUT;
        if (r < 0 && hvt_now_usec(CLOCK_MONOTONIC) < deadline) {
                r = ask(&api, false, deadline, state, sizeof(state));
                if (r < 0)
                        bus_said = strerror(-r);
        }
        took = (double) (hvt_now_usec(CLOCK_MONOTONIC) - start) / 1e6;
        if (r >= 0) {
                hvt_log_debug(log, "systemd says the system is %s (asked in %.3f s)", state, took);
                return strcmp(state, "stopping") == 0;
        }
        /* Not there at all (no systemd, not root) is the usual reason, said at debug level;
         * a systemd that did not answer in time is worth saying: it is why the stop took
         * that long. */
        (void) hvt_log_struct(log, r_private == -ETIMEDOUT || r == -ETIMEDOUT ? LOG_INFO : LOG_DEBUG, 0, NULL, NULL,
                              "Cannot tell whether the system is shutting down, taken as running: no answer from "
                              "systemd in %.1f s (PID 1's private socket: %s; the system bus: %s)",
                              took, strerror(-r_private), bus_said);
        return false;
}
