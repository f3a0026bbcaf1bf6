/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the journal/stderr split and log levels.
 *
 * Journal detection follows systemd's contract: JOURNAL_STREAM names the device and inode of
 * the stream it connected to stderr, so a redirected stderr is never mistaken for journald. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"

/* MESSAGE, PRIORITY, MESSAGE_ID, ERRNO, and room for the caller's fields. */
#define FIELDS_MAX 24

static bool stderr_is_journal(void) {
        const char *e = getenv("JOURNAL_STREAM");
        uint64_t dev, ino;
        struct stat st;

        if (!e || sscanf(e, "%" SCNu64 ":%" SCNu64, &dev, &ino) != 2)
                return false;
        if (fstat(STDERR_FILENO, &st) < 0)
                return false;
        return (uint64_t) st.st_dev == dev && (uint64_t) st.st_ino == ino;
}

void hvt_log_init(struct hvt_log *log, int max_level, bool allow_journal) {
        *log = (struct hvt_log) {
                .max_level = max_level,
                .journal = allow_journal && stderr_is_journal(),
        };
}

static void send_journal(int prio, int error, const char *message_id, const char *const *fields,
                         const char *message) {
        struct iovec iov[FIELDS_MAX];
        char prio_field[16], errno_field[24];
        _cleanup_free_ char *msg_field = NULL, *id_field = NULL;
        size_t n = 0;

        if (asprintf(&msg_field, "MESSAGE=%s", message) < 0) {
                msg_field = NULL;
                return;
        }
        iov[n++] = (struct iovec) { msg_field, strlen(msg_field) };
        snprintf(prio_field, sizeof(prio_field), "PRIORITY=%d", prio);
        iov[n++] = (struct iovec) { prio_field, strlen(prio_field) };
        if (message_id) {
                if (asprintf(&id_field, "MESSAGE_ID=%s", message_id) < 0) {
                        id_field = NULL;
                        return;
                }
                iov[n++] = (struct iovec) { id_field, strlen(id_field) };
        }
        if (error != 0) {
                snprintf(errno_field, sizeof(errno_field), "ERRNO=%d", abs(error));
                iov[n++] = (struct iovec) { errno_field, strlen(errno_field) };
        }
        for (size_t i = 0; fields && fields[i] && n < FIELDS_MAX; i++)
                iov[n++] = (struct iovec) { (void *) fields[i], strlen(fields[i]) };

        (void) sd_journal_sendv(iov, (int) n);
}

int hvt_log_struct(const struct hvt_log *log, int prio, int error, const char *message_id,
                   const char *const *fields, const char *fmt, ...) {
        char message[1024];
        va_list ap;

        if (prio <= log->max_level) {
                int saved = errno;

                /* %m means the error being reported, not whatever errno is now. */
                errno = abs(error);
                va_start(ap, fmt);
                vsnprintf(message, sizeof(message), fmt, ap);
                va_end(ap);
                errno = saved;

                if (log->journal)
                        send_journal(prio, error, message_id, fields, message);
                else
                        fprintf(stderr, "%s\n", message);
        }
        return -abs(error);
}
