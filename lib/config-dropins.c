/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the listing of config-dropins.h. The directory is listed once, from the descriptor
 * that was checked; each drop-in is then opened by the scan with the same walk as the main
 * file, so a name swapped in between is checked all the same. */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config-dropins.h"
#include "fs-util.h"
#include "macro.h"

#define SUFFIX ".conf"

__attribute__((format(printf, 4, 5)))
static int dir_error(struct hvt_config_error *err, const char *dir, int error, const char *fmt, ...) {
        va_list ap;

        *err = (struct hvt_config_error) {};
        (void) hvt_strscpy(err->file, sizeof(err->file), dir);
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof(err->message), fmt, ap);
        va_end(ap);
        return error;
}

static bool is_dropin_name(const char *name) {
        size_t n = strlen(name);

        return name[0] != '.' && n > strlen(SUFFIX) && strcmp(name + n - strlen(SUFFIX), SUFFIX) == 0;
}

/* The directory, walked and checked: an O_PATH descriptor, -ENOENT when there is none, or
 * -errno with err set. */
static int open_dir(const char *dir, struct hvt_config_error *err) {
        _cleanup_free_ char *probe = NULL;
        _cleanup_close_ int fd = -EBADF;
        char why[512];
        struct stat st;

        /* The walk hands back the directory of a last name, which need not exist: the
         * directory is what is walked to and checked, every step of the way. */
        if (asprintf(&probe, "%s/-", dir) < 0) {
                probe = NULL;  /* undefined after a failure */
                return -ENOMEM;
        }
        fd = hvt_walk(probe, HVT_WALK_FOLLOW | HVT_WALK_CHECK_EVERY | HVT_WALK_PARENT | HVT_OWNER_STICKY_OK,
                      NULL, why, sizeof(why));
        if (fd == -EPERM)
                return dir_error(err, dir, -EPERM, "refused, %s", why);
        if (fd == -ENOENT || fd == -ENOMEM)
                return fd;
        if (fd < 0)
                return dir_error(err, dir, fd, "cannot read the drop-in directory: %s", strerror(-fd));
        if (fstat(fd, &st) < 0)
                return dir_error(err, dir, negative_errno(), "cannot read the drop-in directory: %s", strerror(errno));
        /* The walk let a sticky one pass, as it does above the main file: here, the one whose
         * every file is read, it is refused. */
        if (hvt_check_owner(&st, 0, "the drop-in directory", why, sizeof(why)) < 0)
                return dir_error(err, dir, -EPERM, "refused, %s: sticky or not, anyone could add a drop-in", why);
        return TAKE_FD(fd);
}

int hvt_config_dropins(const char *path, char ***ret, size_t *ret_n, struct hvt_config_error *err) {
        _cleanup_(closedirp) DIR *d = NULL;
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *dir = NULL;
        char **names = NULL;
        size_t n = 0;
        int r = 0;

        *ret = NULL;
        *ret_n = 0;
        if (asprintf(&dir, "%s.d", path) < 0) {
                dir = NULL;  /* undefined after a failure */
                return -ENOMEM;
        }
        fd = open_dir(dir, err);
        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return fd;
        r = hvt_opendirat(fd, ".", &d);
        if (r < 0)
                return r == -ENOMEM ? r : dir_error(err, dir, r, "cannot list the drop-in directory: %s", strerror(-r));

        for (struct dirent *de; r >= 0; ) {
                char **grown;

                errno = 0;
                de = readdir(d);
                if (!de) {
                        if (errno != 0)
                                r = dir_error(err, dir, negative_errno(), "cannot list the drop-in directory: %s",
                                              strerror(errno));
                        break;
                }
                if (!is_dropin_name(de->d_name))
                        continue;
                if (n >= HVT_CONFIG_DROPINS_MAX) {
                        r = dir_error(err, dir, -E2BIG, "more than %d drop-ins", HVT_CONFIG_DROPINS_MAX);
                        break;
                }
                grown = realloc(names, (n + 1) * sizeof(*names));
                if (!grown) {
                        r = -ENOMEM;
                        break;
                }
                names = grown;
                names[n] = strdup(de->d_name);
                if (!names[n]) {
                        r = -ENOMEM;
                        break;
                }
                n++;
        }
        if (r < 0) {
                hvt_strv_free(names, n);
                return r;
        }

        /* Sorted by name, then made paths: the order is the names', whatever the directory. */
        if (n > 0)
                qsort(names, n, sizeof(*names), hvt_strcmpp);
        for (size_t i = 0; i < n; i++) {
                char *full;

                if (asprintf(&full, "%s/%s", dir, names[i]) < 0) {
                        hvt_strv_free(names, n);
                        return -ENOMEM;
                }
                free(names[i]);
                names[i] = full;
        }
        *ret = names;
        *ret_n = n;
        return 0;
}
