/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the runtime directory of rundir.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "macro.h"
#include "messages.h"
#include "rundir.h"

#define STATE_DIR_DEFAULT "/run/hvtuned"

void hvt_rundir_path(char *buf, size_t size) {
        const char *dir = getenv("RUNTIME_DIRECTORY");

        /* systemd passes a colon-separated list when a unit has several; ours is the first. */
        (void) hvt_strscpy(buf, size, dir && *dir ? dir : STATE_DIR_DEFAULT);
        buf[strcspn(buf, ":")] = '\0';
}

int hvt_rundir_open(struct hvt_daemon *d) {
        char path[4096];

        hvt_rundir_path(path, sizeof(path));

        d->state_fd = hvt_state_open(path);
        if (d->state_fd < 0) {
                (void) hvt_log_struct(&d->log, LOG_WARNING, d->state_fd, HVT_MESSAGE_STATE_ERROR, NULL,
                                      "Cannot use %s for the records of original values (%m): they "
                                      "are kept in memory only, and a restart forgets them", path);
                return 0;
        }
        /* One hvtuned at a time owns the records: a --once beside the service would take the
         * service's values for originals, or restore what the service still manages. */
        if (flock(d->state_fd, LOCK_EX | LOCK_NB) < 0) {
                int r = negative_errno();

                close(d->state_fd);
                d->state_fd = -EBADF;
                if (r == -EWOULDBLOCK)
                        return hvt_log_errno(&d->log, LOG_ERR, r, "Another hvtuned is running (it holds %s): "
                                             "reload it (systemctl reload hvtuned) instead", path);
                return hvt_log_errno(&d->log, LOG_ERR, r, "Cannot lock %s: %m", path);
        }
        return 0;
}
