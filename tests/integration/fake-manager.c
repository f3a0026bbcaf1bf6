/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: a stand-in for PID 1's private D-Bus socket that answers what a stop asks.
 *
 * fake-manager SOCKET STATE [JOB] listens on SOCKET (the test puts it at /run/systemd/private
 * in a private mount namespace) and serves, on /org/freedesktop/systemd1, to every client in
 * turn until killed: org.freedesktop.systemd1.Manager.SystemState = STATE; GetUnitByPID,
 * which says every process is hvtuned.service's; and ListJobs, which lists a restart of
 * another unit (that one is not hvtuned's) and, given JOB, a job of type JOB of
 * hvtuned.service. It lets a test show what hvtuned does on SIGTERM while "the system is
 * stopping" or during the stop half of a restart, which no test can do to the machine it runs
 * on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#define UNIT_PATH "/org/freedesktop/systemd1/unit/hvtuned_2eservice"

struct answers {
        const char *state;
        const char *job;  /* NULL: hvtuned.service has none */
};

static int get_unit_by_pid(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        uint32_t pid;
        int r;

        (void) userdata, (void) error;
        r = sd_bus_message_read(m, "u", &pid);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(m, "o", UNIT_PATH);
}

static int list_jobs(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const struct answers *a = userdata;
        sd_bus_message *reply = NULL;
        int r;

        (void) error;
        r = sd_bus_message_new_method_return(m, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(usssoo)");
        if (r >= 0)
                r = sd_bus_message_append(reply, "(usssoo)", 7, "other.service", "restart", "running",
                                          "/org/freedesktop/systemd1/job/7",
                                          "/org/freedesktop/systemd1/unit/other_2eservice");
        if (r >= 0 && a->job)
                r = sd_bus_message_append(reply, "(usssoo)", 8, "hvtuned.service", a->job, "running",
                                          "/org/freedesktop/systemd1/job/8", UNIT_PATH);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        sd_bus_message_unref(reply);
        return r;
}

static int get_state(sd_bus *bus, const char *path, const char *interface, const char *property,
                     sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        (void) bus, (void) path, (void) interface, (void) property, (void) error;
        return sd_bus_message_append(reply, "s", ((const struct answers *) userdata)->state);
}

static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("SystemState", "s", get_state, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_METHOD("GetUnitByPID", "u", "o", get_unit_by_pid, 0),
        SD_BUS_METHOD("ListJobs", "", "a(usssoo)", list_jobs, 0),
        SD_BUS_VTABLE_END
};

/* One client, until it hangs up. */
static void serve(int fd, struct answers *a) {
        sd_bus *bus = NULL;
        sd_id128_t id;
        int r;

        if (sd_bus_new(&bus) < 0 || sd_id128_randomize(&id) < 0 || sd_bus_set_fd(bus, fd, fd) < 0 ||
            sd_bus_set_server(bus, 1, id) < 0 ||
            sd_bus_add_object_vtable(bus, NULL, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
                                     manager_vtable, a) < 0 ||
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
        struct answers a = { .state = argc > 2 ? argv[2] : NULL, .job = argc > 3 ? argv[3] : NULL };
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int lfd;

        if (argc != 3 && argc != 4) {
                fprintf(stderr, "usage: fake-manager SOCKET STATE [JOB]\n");
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
                        serve(fd, &a);
        }
}
