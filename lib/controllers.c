/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the controller list of controllers.h. Never logs: what cannot be read is told to the
 * caller, who decides how loud it is. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controllers.h"
#include "macro.h"

#define CLASS_SCSI_HOST "/sys/class/scsi_host"

/* A kernel before 5.10: the SCSI host has no nr_hw_queues to read. */
static bool no_queue_count(const char *syspath) {
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/nr_hw_queues", syspath);
        return access(path, F_OK) < 0 && errno == ENOENT;
}

/* The syspaths of the SCSI hosts, sorted as libudev sorts an enumeration: each name in
 * /sys/class/scsi_host is a link to the host's class device ("../../devices/.../hostN/
 * scsi_host/hostN"). Not udev_enumerate: it builds a device and its every ancestor for each
 * host, some 250 system calls for one. A name gone since the listing is skipped. */
static int host_syspaths(char ***ret, size_t *n_ret) {
        _cleanup_(closedirp) DIR *dir = opendir(CLASS_SCSI_HOST);
        const char *rel = "../../devices/";
        char **v = NULL;
        size_t n = 0;
        struct dirent *de;
        int r = 0;

        if (!dir) {
                *ret = NULL;
                *n_ret = 0;
                return errno == ENOENT ? 0 : negative_errno();   /* no SCSI at all */
        }
        while ((errno = 0, de = readdir(dir))) {
                char target[PATH_MAX], **more;
                ssize_t len;

                if (de->d_name[0] == '.')
                        continue;
                len = readlinkat(dirfd(dir), de->d_name, target, sizeof(target) - 1);
                if (len < 0)
                        continue;
                target[len] = '\0';
                if (strncmp(target, rel, strlen(rel)) != 0)
                        continue;
                more = reallocarray(v, n + 1, sizeof(*v));
                if (!more || asprintf(&more[n], "/sys/%s", target + strlen("../../")) < 0) {
                        v = more ? more : v;
                        r = -ENOMEM;
                        break;
                }
                v = more;
                n++;
        }
        if (r >= 0 && errno != 0)
                r = negative_errno();
        if (r < 0) {
                hvt_strv_free(v, n);
                return r;
        }
        if (n > 0)
                qsort(v, n, sizeof(*v), hvt_strcmpp);
        *ret = v;
        *n_ret = n;
        return 0;
}

static void list_free(struct hvt_controller *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                hvt_controller_done(&v[i]);
        free(v);
}

int hvt_controllers_scan(struct hvt_controllers *ret, hvt_controller_unreadable_t unreadable, void *userdata) {
        struct hvt_controller *list = NULL;
        char **hosts = NULL;
        size_t n = 0, n_hosts = 0;
        int r;

        r = host_syspaths(&hosts, &n_hosts);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n_hosts; i++) {
                struct hvt_controller c, *p;

                r = hvt_classify_controller_syspath("/sys/devices", hosts[i], &c);
                if (r < 0 && r != -ENOMEM && unreadable)
                        unreadable(strrchr(hosts[i], '/') + 1, r == -ENOENT && no_queue_count(hosts[i]) ? -EOPNOTSUPP : r,
                                   userdata);
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
        hvt_strv_free(hosts, n_hosts);
        hvt_controllers_done(ret);
        *ret = (struct hvt_controllers) { list, n };
        return 0;
oom:
        hvt_strv_free(hosts, n_hosts);
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
