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
 * not outlive its code. */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "macro.h"
#include "system.h"

/* A shutdown must never wait on us: ask briefly. */
#define BUS_TIMEOUT_USEC (2 * 1000 * 1000)

/* The calls made, found in libsystemd at run time; <systemd/sd-bus.h> gives their types, so
 * that the compiler checks each call as if it were linked. */
struct bus_api {
        typeof(sd_bus_new) *sd_bus_new;
        typeof(sd_bus_set_address) *sd_bus_set_address;
        typeof(sd_bus_start) *sd_bus_start;
        typeof(sd_bus_open_system) *sd_bus_open_system;
        typeof(sd_bus_set_method_call_timeout) *sd_bus_set_method_call_timeout;
        typeof(sd_bus_get_property_string) *sd_bus_get_property_string;
        typeof(sd_bus_close_unref) *sd_bus_close_unref;
};

#define BUS_SYM(api, dl, name) ((api)->name = (typeof((api)->name)) dlsym((dl), #name))

static int load_bus_api(struct bus_api *api, const struct hvt_log *log) {
        void *dl;

        dl = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
        if (!dl) {
                hvt_log_debug(log, "Cannot load libsystemd (%s): cannot tell whether the system is shutting down",
                              dlerror());
                return -EOPNOTSUPP;
        }
        if (!BUS_SYM(api, dl, sd_bus_new) ||
            !BUS_SYM(api, dl, sd_bus_set_address) ||
            !BUS_SYM(api, dl, sd_bus_start) ||
            !BUS_SYM(api, dl, sd_bus_open_system) ||
            !BUS_SYM(api, dl, sd_bus_set_method_call_timeout) ||
            !BUS_SYM(api, dl, sd_bus_get_property_string) ||
            !BUS_SYM(api, dl, sd_bus_close_unref)) {
                /* Too old a libsystemd (sd_bus_close_unref() is 241's): nothing of it is used. */
                hvt_log_debug(log, "libsystemd lacks what the shutdown check needs (%s): cannot tell whether "
                              "the system is shutting down", dlerror());
                (void) dlclose(dl);
                return -EOPNOTSUPP;
        }
        return 0;
}

static int open_private(const struct bus_api *api, sd_bus **ret) {
        sd_bus *bus = NULL;
        int r;

        r = api->sd_bus_new(&bus);
        if (r < 0)
                return r;
        r = api->sd_bus_set_address(bus, "unix:path=/run/systemd/private");
        if (r >= 0)
                r = api->sd_bus_start(bus);
        if (r < 0) {
                api->sd_bus_close_unref(bus);
                return r;
        }
        *ret = bus;
        return 0;
}

/* Closed without a flush: there is nothing to send, and nothing to wait for. */
static int system_state(const struct bus_api *api, sd_bus *bus, char **ret) {
        int r;

        (void) api->sd_bus_set_method_call_timeout(bus, BUS_TIMEOUT_USEC);
        r = api->sd_bus_get_property_string(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                            "org.freedesktop.systemd1.Manager", "SystemState", NULL, ret);
        api->sd_bus_close_unref(bus);
        return r;
}

bool hvt_system_is_stopping(const struct hvt_log *log) {
        _cleanup_free_ char *state = NULL;
        struct bus_api api;
        sd_bus *bus = NULL;
        int r = -ENOTCONN;

        if (load_bus_api(&api, log) < 0)
                return false;
        if (open_private(&api, &bus) >= 0)
                r = system_state(&api, bus, &state);
        if (r < 0 && api.sd_bus_open_system(&bus) >= 0)
                r = system_state(&api, bus, &state);
        return r >= 0 && strcmp(state, "stopping") == 0;
}
