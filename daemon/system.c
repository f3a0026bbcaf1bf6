/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the shutdown check, through systemd's Manager.SystemState.
 *
 * PID 1's private socket first: during shutdown the D-Bus broker may already be gone, and
 * PID 1 still answers there (it is how systemctl talks to it). The system bus after that. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "macro.h"
#include "system.h"

/* A shutdown must never wait on us: ask briefly. */
#define BUS_TIMEOUT_USEC (2 * 1000 * 1000)


static int open_private(sd_bus **ret) {
        _cleanup_(sd_bus_close_unrefp) sd_bus *bus = NULL;
        int r;

        r = sd_bus_new(&bus);
        if (r < 0)
                return r;
        r = sd_bus_set_address(bus, "unix:path=/run/systemd/private");
        if (r < 0)
                return r;
        r = sd_bus_start(bus);
        if (r < 0)
                return r;
        *ret = bus;
        bus = NULL;
        return 0;
}

static int system_state(sd_bus *bus, char **ret) {
        (void) sd_bus_set_method_call_timeout(bus, BUS_TIMEOUT_USEC);
        return sd_bus_get_property_string(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                          "org.freedesktop.systemd1.Manager", "SystemState", NULL, ret);
}

bool hvt_system_is_stopping(void) {
        _cleanup_free_ char *state = NULL;
        sd_bus *bus = NULL;
        int r = -ENOTCONN;

        /* Closed without a flush: there is nothing to send, and nothing to wait for. */
        if (open_private(&bus) >= 0) {
                r = system_state(bus, &state);
                bus = sd_bus_close_unref(bus);
        }
        if (r < 0 && sd_bus_open_system(&bus) >= 0) {
                r = system_state(bus, &state);
                bus = sd_bus_close_unref(bus);
        }
        return r >= 0 && strcmp(state, "stopping") == 0;
}
