/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the reload handshake (see reload.h).
 *
 * Why two counters: a SIGHUP that arrives while a reload runs is folded into one pending
 * signal, and the reload under way may have read the file before the operator changed it. A
 * requester that saw "started S" before its signal waits for "finished >= S + 1", a reload
 * that began after the signal was sent. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "reload.h"
#include "state.h"

#define RECORD ".reload"
#define POLL_NS (20 * 1000 * 1000)
/* Longer than any pass over a VM's disks; systemd's own reload timeout comes first. */
#define WAIT_S 120

int hvt_reload_mark(int state_fd, unsigned started, unsigned finished, const char *config_error) {
        char buf[400];
        int n;

        if (state_fd < 0)
                return -EBADF;
        n = snprintf(buf, sizeof(buf), "%u %u %s\n", started, finished, *config_error ? config_error : "ok");
        if (n < 0 || (size_t) n >= sizeof(buf))
                return -ENOBUFS;
        return hvt_state_write(state_fd, RECORD, buf, (size_t) n);
}

static int read_mark(int dirfd, unsigned *started, unsigned *finished, char *result, size_t size) {
        char buf[400];
        int consumed = 0, r;

        r = hvt_state_read(dirfd, RECORD, buf, sizeof(buf));
        if (r < 0)
                return r;
        if (sscanf(buf, "%u %u %n", started, finished, &consumed) != 2 || consumed == 0)
                return -EBADMSG;
        snprintf(result, size, "%.*s", (int) strcspn(buf + consumed, "\n"), buf + consumed);
        return 0;
}

int hvt_reload_request(const struct hvt_log *log, const char *state_dir, pid_t pid) {
        _cleanup_close_ int dirfd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        unsigned started, finished;
        char result[320];
        int r;

        if (dirfd < 0)
                return hvt_log_errno(log, LOG_ERR, negative_errno(), "Cannot open %s: %m", state_dir);
        r = read_mark(dirfd, &started, &finished, result, sizeof(result));
        if (r < 0)
                return hvt_log_errno(log, LOG_ERR, r, "Cannot read %s/%s, the running hvtuned's reload record: %m",
                                     state_dir, RECORD);
        if (kill(pid, SIGHUP) < 0)
                return hvt_log_errno(log, LOG_ERR, negative_errno(), "Cannot signal hvtuned (PID %d): %m", (int) pid);

        for (long waited = 0; waited < (long) WAIT_S * 1000000000L; waited += POLL_NS) {
                const struct timespec tick = { 0, POLL_NS };
                unsigned s, f;

                (void) nanosleep(&tick, NULL);
                if (read_mark(dirfd, &s, &f, result, sizeof(result)) < 0 || f < started + 1)
                        continue;
                if (strcmp(result, "ok") == 0)
                        return 0;
                return hvt_log_errno(log, LOG_ERR, -EINVAL, "The new configuration was refused (error at %s): "
                                     "hvtuned keeps running on the previous one", result);
        }
        return hvt_log_errno(log, LOG_ERR, -ETIMEDOUT, "hvtuned (PID %d) did not finish reloading within %d s",
                             (int) pid, WAIT_S);
}
