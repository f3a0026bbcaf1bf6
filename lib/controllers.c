/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the controller list of controllers.h. Never logs: what cannot be read is told to the
 * caller, who decides how loud it is. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controllers.h"
#include "macro.h"
#include "udev-util.h"

/* A kernel before 5.10: the SCSI host has no nr_hw_queues to read. */
static bool no_queue_count(struct udev_device *dev) {
        char path[4096];

        snprintf(path, sizeof(path), "%s/nr_hw_queues", udev_device_get_syspath(dev));
        return access(path, F_OK) < 0 && errno == ENOENT;
}

static void list_free(struct hvt_controller *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                hvt_controller_done(&v[i]);
        free(v);
}

int hvt_controllers_scan(struct udev *udev, struct hvt_controllers *ret, hvt_controller_unreadable_t unreadable,
                         void *userdata) {
        _cleanup_(udev_enumerate_unrefp) struct udev_enumerate *e = NULL;
        struct hvt_controller *list = NULL;
        struct udev_list_entry *entry;
        size_t n = 0;
        int r;

        e = udev_enumerate_new(udev);
        if (!e)
                return -ENOMEM;
        r = udev_enumerate_add_match_subsystem(e, "scsi_host");
        if (r >= 0)
                r = udev_enumerate_scan_devices(e);
        if (r < 0)
                return r;

        udev_list_entry_foreach(entry, udev_enumerate_get_list_entry(e)) {
                struct udev_device *dev = udev_device_new_from_syspath(udev, udev_list_entry_get_name(entry));
                struct hvt_controller c, *p;

                if (!dev)
                        continue;
                r = hvt_classify_controller(dev, &c);
                if (r < 0 && r != -ENOMEM && unreadable)
                        unreadable(udev_device_get_sysname(dev), r == -ENOENT && no_queue_count(dev) ? -EOPNOTSUPP : r,
                                   userdata);
                udev_device_unref(dev);
                if (r == -ENOMEM)
                        goto oom;
                if (r <= 0)
                        continue;
                p = reallocarray(list, n + 1, sizeof(*list));
                if (!p) {
                        hvt_controller_done(&c);
                        goto oom;
                }
                list = p;
                list[n++] = c;
        }
        hvt_controllers_done(ret);
        *ret = (struct hvt_controllers) { list, n };
        return 0;
oom:
        list_free(list, n);
        return -ENOMEM;
}

const struct hvt_controller *hvt_controllers_find(const struct hvt_controllers *c, const char *controller) {
        for (size_t i = 0; i < c->n; i++)
                if (strcmp(c->v[i].controller, controller) == 0)
                        return &c->v[i];
        return NULL;
}

void hvt_controllers_done(struct hvt_controllers *c) {
        list_free(c->v, c->n);
        *c = (struct hvt_controllers) {};
}
