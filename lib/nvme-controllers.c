/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the NVMe controller list of nvme-controllers.h. Attributes from drivers/nvme/host/
 * core.c (model, transport, state, queue_count, sqsize: every transport's controller has
 * them, 5.10 to 7.3) and block/blk-mq-sysfs.c (a request queue's mq/<n>/nr_tags). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs-util.h"
#include "macro.h"
#include "nvme.h"
#include "nvme-controllers.h"
#include "sysfs.h"

static int parse_uint(const char *text, unsigned *ret) {
        char *end;
        unsigned long n;

        if (*text < '0' || *text > '9')
                return -EBADMSG;
        errno = 0;
        n = strtoul(text, &end, 10);
        if (errno != 0 || *end != '\0' || n > UINT_MAX)
                return -EBADMSG;
        *ret = (unsigned) n;
        return 0;
}

static int read_uint(int dirfd, const char *name, unsigned *ret) {
        char buf[32];
        int r = hvt_sysfs_read(dirfd, name, buf, sizeof(buf));

        return r < 0 ? r : parse_uint(buf, ret);
}

int hvt_nvme_io_queue_depth_read(const char *path, unsigned *ret) {
        _cleanup_free_ char *text = NULL;
        int r = hvt_read_file(path, &text);

        if (r < 0)
                return r;
        text[strcspn(text, "\n")] = '\0';
        return parse_uint(text, ret);
}

/* A namespace's block device below the controller: "<ctrl>n<N>" or "<ctrl>c<M>n<N>". */
static bool namespace_name(const char *ctrl, const char *name) {
        size_t len = strlen(ctrl);

        return strncmp(name, ctrl, len) == 0 && (name[len] == 'n' || name[len] == 'c') &&
               name[len + 1] >= '0' && name[len + 1] <= '9';
}

/* 0 with the tag set's figures from the first namespace that shows them; -ENOENT for none. */
static int namespace_figures(int cfd, const char *ctrl, unsigned *ret_queues, unsigned *ret_tags) {
        _cleanup_(closedirp) DIR *dir = NULL;
        struct dirent *de;
        int r;

        r = hvt_opendirat(cfd, ".", &dir);
        if (r < 0)
                return r;
        while ((de = readdir(dir))) {
                _cleanup_(closedirp) DIR *mq = NULL;
                _cleanup_close_ int q0 = -EBADF;
                struct dirent *e;
                char mqpath[sizeof(de->d_name) + 8];
                unsigned n = 0, tags;

                if (!namespace_name(ctrl, de->d_name))
                        continue;
                snprintf(mqpath, sizeof(mqpath), "%s/mq", de->d_name);
                if (hvt_opendirat(cfd, mqpath, &mq) < 0)
                        continue;   /* a multipath head: bio-based, no tag set */
                while ((e = readdir(mq)))
                        n += e->d_name[0] >= '0' && e->d_name[0] <= '9';
                snprintf(mqpath, sizeof(mqpath), "%s/mq/0", de->d_name);
                q0 = openat(cfd, mqpath, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (n == 0 || q0 < 0 || read_uint(q0, "nr_tags", &tags) < 0 || tags == 0)
                        continue;
                *ret_queues = n;
                *ret_tags = tags;
                return 0;
        }
        return -ENOENT;
}

/* 1 and ret filled for an Azure controller, 0 for any other, -errno when it cannot be read. */
static int read_controller(int classfd, const char *name, struct hvt_nvme_controller *ret) {
        _cleanup_close_ int cfd = -EBADF;
        char model[128], text[32];
        unsigned queues, tags, count, sqsize;
        int kind, r;

        /* The class directory's entries are links to the controllers' directories. */
        cfd = openat(classfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (cfd < 0)
                return negative_errno();
        r = hvt_sysfs_read(cfd, "model", model, sizeof(model));
        if (r < 0)
                return r;
        kind = hvt_nvme_model_kind(model);
        if (kind < 0)
                return 0;
        *ret = (struct hvt_nvme_controller) { .kind = (enum hvt_kind) kind };
        (void) hvt_strscpy(ret->name, sizeof(ret->name), name);
        (void) hvt_strscpy(ret->model, sizeof(ret->model), model);
        ret->model[strcspn(ret->model, "\n")] = '\0';
        for (size_t len = strlen(ret->model); len > 0 && ret->model[len - 1] == ' '; len--)
                ret->model[len - 1] = '\0';
        ret->pcie = hvt_sysfs_read(cfd, "transport", text, sizeof(text)) >= 0 && strcmp(text, "pcie") == 0;
        ret->live = hvt_sysfs_read(cfd, "state", text, sizeof(text)) >= 0 && strcmp(text, "live") == 0;
        if (namespace_figures(cfd, name, &queues, &tags) >= 0) {
                ret->figures = HVT_NVME_FIGURES_NAMESPACE;
                ret->nr_io_queues = queues;
                ret->q_depth = tags + 1;
        } else if (read_uint(cfd, "queue_count", &count) >= 0 && read_uint(cfd, "sqsize", &sqsize) >= 0 &&
                   count >= 2 && sqsize < UINT_MAX) {
                ret->figures = HVT_NVME_FIGURES_CONTROLLER;
                ret->nr_io_queues = count - 1;
                ret->q_depth = sqsize + 1;
        }
        return 1;
}

static int by_name(const void *a, const void *b) {
        const struct hvt_nvme_controller *x = a, *y = b;
        size_t lx = strlen(x->name), ly = strlen(y->name);

        /* nvme2 before nvme10. */
        return lx != ly ? (lx < ly ? -1 : 1) : strcmp(x->name, y->name);
}

int hvt_nvme_controllers_scan(const char *class_dir, struct hvt_nvme_controllers *ret) {
        _cleanup_(closedirp) DIR *dir = opendir(class_dir);
        struct hvt_nvme_controller *v = NULL;
        struct dirent *de;
        size_t n = 0;

        if (!dir) {
                if (errno != ENOENT)
                        return negative_errno();
                hvt_nvme_controllers_done(ret);   /* no NVMe driver loaded: none */
                return 0;
        }
        while ((errno = 0, de = readdir(dir))) {
                struct hvt_nvme_controller c, *more;

                if (strncmp(de->d_name, "nvme", 4) != 0 || strlen(de->d_name) >= HVT_NVME_NAME_MAX)
                        continue;
                if (read_controller(dirfd(dir), de->d_name, &c) <= 0)
                        continue;
                more = reallocarray(v, n + 1, sizeof(*v));
                if (!more) {
                        free(v);
                        return -ENOMEM;
                }
                v = more;
                v[n++] = c;
        }
        if (errno != 0) {
                int r = negative_errno();

                free(v);
                return r;
        }
        if (n > 1)
                qsort(v, n, sizeof(*v), by_name);
        hvt_nvme_controllers_done(ret);
        *ret = (struct hvt_nvme_controllers) { v, n };
        return 0;
}

void hvt_nvme_controllers_done(struct hvt_nvme_controllers *c) {
        free(c->v);
        *c = (struct hvt_nvme_controllers) {};
}
