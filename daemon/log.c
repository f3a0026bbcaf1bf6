/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the journal/stderr split and log levels, and escaping what they carry.
 *
 * Journal detection follows systemd's contract: JOURNAL_STREAM names the device and inode of
 * the stream it connected to stderr, so a redirected stderr is never mistaken for journald.
 *
 * A message and its fields hold text hvtuned does not control (file names, what sysfs and the
 * configuration say): every stderr line, MESSAGE and field value is escaped here, whole
 * (lib/escape.h), and nowhere before. */
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

#include "escape.h"
#include "log.h"
#include "macro.h"

/* MESSAGE, PRIORITY, MESSAGE_ID, ERRNO, and room for the caller's fields. */
#define FIELDS_MAX 24
/* A message is cut to this, before it is escaped. */
#define MESSAGE_MAX 1024

/* The escaped fields of one entry. */
struct fields {
        char *v[FIELDS_MAX];
        size_t n;
};

static void fields_done(struct fields *f) {
        for (size_t i = 0; i < f->n; i++)
                free(f->v[i]);
}

/* Adds "NAME=" and value escaped. */
static int fields_add(struct fields *f, const char *name, size_t name_len, const char *value) {
        size_t n = hvt_escape(NULL, 0, value);
        char *s;

        if (f->n >= FIELDS_MAX)
                return -E2BIG;
        s = malloc(name_len + n + 1);
        if (!s)
                return -ENOMEM;
        memcpy(s, name, name_len);
        (void) hvt_escape(s + name_len, n + 1, value);
        f->v[f->n++] = s;
        return 0;
}

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

static int send_journal(int prio, int error, const char *message_id, const char *const *fields,
                        const char *message) {
        _cleanup_(fields_done) struct fields f = {};
        struct iovec iov[FIELDS_MAX];
        char number[24];
        int r;

        r = fields_add(&f, "MESSAGE=", strlen("MESSAGE="), message);
        snprintf(number, sizeof(number), "%d", prio);
        if (r >= 0)
                r = fields_add(&f, "PRIORITY=", strlen("PRIORITY="), number);
        if (r >= 0 && message_id)
                r = fields_add(&f, "MESSAGE_ID=", strlen("MESSAGE_ID="), message_id);
        snprintf(number, sizeof(number), "%d", abs(error));
        if (r >= 0 && error != 0)
                r = fields_add(&f, "ERRNO=", strlen("ERRNO="), number);
        /* A field the caller gave without "=" is escaped whole: journald drops it. */
        for (size_t i = 0; r >= 0 && fields && fields[i] && f.n < FIELDS_MAX; i++) {
                const char *eq = strchr(fields[i], '=');
                size_t name_len = eq ? (size_t) (eq - fields[i]) + 1 : 0;

                r = fields_add(&f, fields[i], name_len, fields[i] + name_len);
        }
        if (r < 0)
                return r;

        for (size_t i = 0; i < f.n; i++)
                iov[i] = (struct iovec) { f.v[i], strlen(f.v[i]) };
        return sd_journal_sendv(iov, (int) f.n);
}

static void send_stderr(const char *message) {
        char shown[HVT_ESCAPED_SIZE(MESSAGE_MAX)];

        (void) hvt_escape(shown, sizeof(shown), message);
        fprintf(stderr, "%s\n", shown);
}

int hvt_log_struct(const struct hvt_log *log, int prio, int error, const char *message_id,
                   const char *const *fields, const char *fmt, ...) {
        char message[MESSAGE_MAX];
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
                        (void) send_journal(prio, error, message_id, fields, message);
                else
                        send_stderr(message);
        }
        return -abs(error);
}
