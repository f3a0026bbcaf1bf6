/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the journal/stderr split and log levels, the journal's native protocol, and escaping
 * what they carry.
 *
 * Journal detection follows systemd's contract: JOURNAL_STREAM names the device and inode of
 * the stream it connected to stderr, so a redirected stderr is never mistaken for journald.
 *
 * Entries are sent to journald's socket here, not with sd_journal_sendv(): that one returns
 * success when the socket does not exist ("fail silently if the journal is not available"),
 * and an entry sent before journald listens would be lost without a trace. An entry the socket
 * does not take goes to stderr instead, which is journald's stream, with its priority.
 *
 * A message and its fields hold text hvtuned does not control (file names, what sysfs and the
 * configuration say): every stderr line, MESSAGE and field value is escaped here, whole
 * (lib/escape.h), and nowhere before. Escaped, no value holds a newline, so every field is
 * the protocol's plain "NAME=value\n". */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "escape.h"
#include "log.h"
#include "macro.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"
/* MESSAGE, PRIORITY, MESSAGE_ID, ERRNO, SYSLOG_IDENTIFIER, and room for the caller's fields
 * (the most, a disk's state dump, has 15). */
#define FIELDS_MAX 24
/* A message is cut to this, before it is escaped. An entry is then some 20 KiB at most, well
 * within one datagram (the default send buffer takes about 200 KiB), so the memfd that
 * sd_journal_sendv() passes for an entry too large for one is never needed. */
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

/* Adds "NAME=", value escaped and "\n". */
static int fields_add(struct fields *f, const char *name, size_t name_len, const char *value) {
        size_t n = hvt_escape(NULL, 0, value);
        char *s;

        if (f->n >= FIELDS_MAX)
                return -E2BIG;
        s = malloc(name_len + n + 2);
        if (!s)
                return -ENOMEM;
        memcpy(s, name, name_len);
        (void) hvt_escape(s + name_len, n + 1, value);
        memcpy(s + name_len + n, "\n", 2);
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
                .journal_fd = -EBADF,
        };
        /* Not connected: a journald that starts or restarts binds the path anew, and the next
         * entry finds it. Blocking, as every journal client: journald reads. Failing, every
         * entry goes to the stream. */
        if (log->journal)
                log->journal_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
}

void hvt_log_done(struct hvt_log *log) {
        if (log->journal_fd >= 0)
                close(log->journal_fd);
        log->journal_fd = -EBADF;
}

static int send_journal(const struct hvt_log *log, int prio, int error, const char *message_id,
                        const char *const *fields, const char *message) {
        static const struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = JOURNAL_SOCKET };
        _cleanup_(fields_done) struct fields f = {};
        struct iovec iov[FIELDS_MAX];
        struct msghdr mh = {
                .msg_name = (void *) &sa,
                .msg_namelen = sizeof(sa),
                .msg_iov = iov,
        };
        char number[24];
        int r;

        if (log->journal_fd < 0)
                return -EBADF;
        r = fields_add(&f, "MESSAGE=", strlen("MESSAGE="), message);
        snprintf(number, sizeof(number), "%d", prio);
        if (r >= 0)
                r = fields_add(&f, "PRIORITY=", strlen("PRIORITY="), number);
        if (r >= 0 && message_id)
                r = fields_add(&f, "MESSAGE_ID=", strlen("MESSAGE_ID="), message_id);
        snprintf(number, sizeof(number), "%d", abs(error));
        if (r >= 0 && error != 0)
                r = fields_add(&f, "ERRNO=", strlen("ERRNO="), number);
        /* As sd_journal_sendv() adds it: "hvtuned[PID]:" in journalctl's lines. */
        if (r >= 0)
                r = fields_add(&f, "SYSLOG_IDENTIFIER=", strlen("SYSLOG_IDENTIFIER="),
                               program_invocation_short_name);
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
        mh.msg_iovlen = f.n;
        /* ENOENT (no journald yet), ECONNREFUSED (the socket of one that is gone), ... */
        if (sendmsg(log->journal_fd, &mh, MSG_NOSIGNAL) < 0)
                return negative_errno();
        return 0;
}

/* Once stderr's reader is gone (EPIPE: the pipe's reader exited, or journald's stream was
 * closed), there is no more stderr: /dev/null takes its place, so that no later line fails
 * again, and descriptor 2 is never closed (the next open would get it). */
static void stderr_gone(void) {
        int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

        if (fd < 0)
                return;
        (void) dup2(fd, STDERR_FILENO);
        if (fd != STDERR_FILENO)
                close(fd);
        clearerr(stderr);
}

/* One line; with prio >= 0 behind the syslog prefix "<prio>", which journald's stream
 * protocol reads the priority from (SyslogLevelPrefix=, on by default). */
static void send_stderr(int prio, const char *message) {
        char shown[HVT_ESCAPED_SIZE(MESSAGE_MAX)];
        int n;

        (void) hvt_escape(shown, sizeof(shown), message);
        if (prio >= 0)
                n = fprintf(stderr, "<%d>%s\n", prio, shown);
        else
                n = fprintf(stderr, "%s\n", shown);
        if (n < 0 && errno == EPIPE)
                stderr_gone();
}

int hvt_log_structv(const struct hvt_log *log, int prio, int error, const char *message_id,
                    const char *const *fields, const char *fmt, va_list ap) {
        char message[MESSAGE_MAX];

        if (prio <= log->max_level) {
                int saved = errno;

                /* %m means the error being reported, not whatever errno is now. */
                errno = abs(error);
                vsnprintf(message, sizeof(message), fmt, ap);
                errno = saved;

                if (!log->journal)
                        send_stderr(-1, message);
                else if (send_journal(log, prio, error, message_id, fields, message) < 0)
                        /* journald's socket not there or not listening yet (it starts, or
                         * restarts): stderr is its stream, which it reads when it is back. The
                         * entry keeps its priority, not its fields. */
                        send_stderr(prio, message);
        }
        return -abs(error);
}

int hvt_log_struct(const struct hvt_log *log, int prio, int error, const char *message_id,
                   const char *const *fields, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = hvt_log_structv(log, prio, error, message_id, fields, fmt, ap);
        va_end(ap);
        return r;
}

const char *hvt_field_format(char *buf, size_t size, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, size, fmt, ap);
        va_end(ap);
        return buf;
}
