/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: a stand-in for PID 1's private D-Bus socket that answers one question.
 *
 * fake-manager SOCKET STATE listens on SOCKET (the test puts it at /run/systemd/private in
 * a private mount namespace) and serves org.freedesktop.systemd1.Manager.SystemState =
 * STATE on /org/freedesktop/systemd1, to every client in turn, until killed. It lets a test
 * show what hvtuned does on SIGTERM while "the system is stopping", which no test can do to
 * the machine it runs on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

static int get_state(sd_bus *bus, const char *path, const char *interface, const char *property,
                     sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        (void) bus, (void) path, (void) interface, (void) property, (void) error;
        return sd_bus_message_append(reply, "s", (const char *) userdata);
}

static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("SystemState", "s", get_state, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_VTABLE_END
};

/* One client, until it hangs up. */
static void serve(int fd, const char *state) {
        sd_bus *bus = NULL;
        sd_id128_t id;
        int r;

        if (sd_bus_new(&bus) < 0 || sd_id128_randomize(&id) < 0 || sd_bus_set_fd(bus, fd, fd) < 0 ||
            sd_bus_set_server(bus, 1, id) < 0 ||
            sd_bus_add_object_vtable(bus, NULL, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
                                     manager_vtable, (void *) state) < 0 ||
            sd_bus_start(bus) < 0) {
                fprintf(stderr, "fake-manager: cannot serve a client\n");
                sd_bus_unref(bus);
                close(fd);
                return;
        }
        for (;;) {
                r = sd_bus_process(bus, NULL);
                if (r < 0)
                        break;
                if (r > 0)
                        continue;
                if (sd_bus_wait(bus, UINT64_MAX) < 0)
                        break;
        }
        sd_bus_flush_close_unref(bus);
}

int main(int argc, char *argv[]) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int lfd;

        if (argc != 3) {
                fprintf(stderr, "usage: fake-manager SOCKET STATE\n");
                return 2;
        }
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[1]);
        unlink(argv[1]);
        lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (lfd < 0 || bind(lfd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(lfd, 8) < 0) {
                perror("fake-manager");
                return 1;
        }
        printf("ready\n");
        fflush(stdout);
        for (;;) {
                int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

                if (fd >= 0)
                        serve(fd, argv[2]);
        }
}
