/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the journal/stderr split and log levels, a command's stdout/stderr split, the journal's
 * native protocol, escaping what they carry, and holding a disk's lines for one write.
 *
 * Journal detection follows systemd's contract: JOURNAL_STREAM names the device and inode of
 * the stream it connected to stderr, so a redirected stderr is never mistaken for journald.
 *
 * Entries are sent to journald's socket here, not with sd_journal_sendv(): that one returns
 * success when the socket does not exist ("fail silently if the journal is not available"),
 * and an entry sent before journald listens would be lost without a trace. An entry the socket
 * refuses (no journald, or the socket of one that is gone) goes to stderr instead, which is
 * journald's stream, with its priority.
 *
 * A journald that stops reading (stopped, wedged, starved) must not stop the daemon, and a
 * blocking send would: events, signals, the watchdog and the restore at SIGTERM would all wait
 * for it. So the socket is dgram.c's, connected and non-blocking, and the entries journald has
 * no room for wait in a queue of QUEUE_BYTES, sent as it reads again. The stream is no way
 * out here: a journald that does not read its socket does not read its streams either. What
 * does not fit is counted, and the count logged once the queue is empty again; at exit what
 * is left gets EXIT_WAIT_MS to go, then is dropped, said on the stream only if it takes the
 * line at once.
 *
 * A message and its fields hold text hvtuned does not control (file names, what sysfs and the
 * configuration say): every stderr line, MESSAGE and field value is escaped here, whole
 * (lib/escape.h), and nowhere before. Escaped, no value holds a newline, so every field is
 * the protocol's plain "NAME=value\n".
 *
 * A command (--once, --dry-run, --restore, --check-config) splits its lines as
 * coreutils and systemctl do, by priority, here and nowhere else: notice and info are what it
 * was asked to report (each attribute's line, the disks found, the summary, "valid"), on
 * stdout, so that `hvtuned --dry-run | less` shows the plan; warning and worse (a refused
 * file, a failed write, "needs root", a neighbour) and -v's debug lines are diagnostics, on
 * stderr, so that `hvtuned --once >/dev/null` still shows what went wrong. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "dgram.h"
#include "escape.h"
#include "log.h"
#include "macro.h"
#include "messages.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"

/* The queue's kinds of entries: a state dump's give way first when it is full. */
enum { KIND_ENTRY, KIND_DUMP };
/* MESSAGE, PRIORITY, MESSAGE_ID, ERRNO, SYSLOG_IDENTIFIER, and room for the caller's fields
 * (the most, a disk's state dump, has 15). */
#define FIELDS_MAX 24
/* A message is cut to this, before it is escaped. An entry is then some 20 KiB at most, well
 * within one datagram (the default send buffer takes about 200 KiB), so the memfd that
 * sd_journal_sendv() passes for an entry too large for one is never needed. */
#define MESSAGE_MAX 1024
/* What waits for a journald that does not read: some 500 entries, a start-up's on a large VM
 * while journald catches up. */
#define QUEUE_BYTES (256 * 1024)
/* What journald is given at exit to read the last entries (a stop's restores come in a burst
 * larger than its socket's queue): a running one needs milliseconds, a stopped one costs the
 * stop this much. */
#define EXIT_WAIT_MS 1000

struct hvt_log_journal {
        struct hvt_dgram socket;
        const struct hvt_log *log;
        uint64_t dropped;    /* entries not sent, not yet said */
};

/* The lines of a disk's pass, held for one write(2) (hvt_log_hold()): six lines a disk were six
 * system calls, a tenth of what a disk cost at coldplug. PIPE_BUF: a pipe takes it whole. */
struct hvt_log_held {
        unsigned depth;
        int fd;      /* the stream the lines held are for */
        size_t len;
        char buf[PIPE_BUF];
};

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

static bool stream_is_journal(int fd) {
        const char *e = getenv("JOURNAL_STREAM");
        uint64_t dev, ino;
        struct stat st;

        if (!e || sscanf(e, "%" SCNu64 ":%" SCNu64, &dev, &ino) != 2)
                return false;
        if (fstat(fd, &st) < 0)
                return false;
        return (uint64_t) st.st_dev == dev && (uint64_t) st.st_ino == ino;
}

static void on_lost(struct hvt_dgram *d, int kind, const char *data, size_t size, int error, void *userdata) {
        struct hvt_log_journal *j = userdata;

        /* It waited, and journald went away meanwhile: counted, as the stream may be gone too. */
        (void) d, (void) kind, (void) data, (void) size, (void) error;
        j->dropped++;
}

/* journald read everything that waited: now it hears how much did not wait. */
static void on_drained(struct hvt_dgram *d, void *userdata) {
        struct hvt_log_journal *j = userdata;
        uint64_t n = j->dropped;

        (void) d;
        if (n == 0)
                return;
        j->dropped = 0;
        (void) hvt_log_struct(j->log, LOG_WARNING, 0, NULL, HVT_FIELDS(HVT_FIELD("HVTUNED_DROPPED=%" PRIu64, n)),
                              "Dropped %" PRIu64 " log entr%s that journald did not read in time", n,
                              n == 1 ? "y" : "ies");
}

void hvt_log_init(struct hvt_log *log, int max_level, bool allow_journal) {
        static const struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = JOURNAL_SOCKET };
        struct hvt_log_journal *j;

        *log = (struct hvt_log) {
                .max_level = max_level,
                .journal = stream_is_journal(STDERR_FILENO),
                /* NULL (out of memory): every line goes out at once. */
                .held = calloc(1, sizeof(struct hvt_log_held)),
        };
        if (log->held)
                log->held->fd = STDERR_FILENO;
        if (!log->journal || !allow_journal)
                return;
        /* Failing, every entry goes to the stream. A journald not there yet (-ENOENT) or gone
         * (-ECONNREFUSED) is looked for again by each entry, so one that starts or restarts is
         * found by the next. */
        j = malloc(sizeof(*j));
        if (!j)
                return;
        *j = (struct hvt_log_journal) { .log = log };
        (void) hvt_dgram_open(&j->socket, &sa, sizeof(sa), QUEUE_BYTES, on_lost, on_drained, j);
        if (j->socket.fd < 0) {
                free(j);
                return;
        }
        log->journald = j;
}

void hvt_log_report_to_stdout(struct hvt_log *log) {
        log->report_stdout = true;
        /* A command run by a unit: stdout is journald's stream too, with systemd's defaults. */
        log->stdout_journal = stream_is_journal(STDOUT_FILENO);
}

int hvt_log_attach(struct hvt_log *log, struct hvt_event *e) {
        return log->journald ? hvt_dgram_attach(&log->journald->socket, e) : 0;
}

/* One line on the stream, only if it takes it now: when journald did not read its socket, it
 * may not read its streams either, and a line written anyway would wait for it. */
static void say_dropped_at_exit(uint64_t n) {
        char line[128];
        int len;

        len = snprintf(line, sizeof(line), "<%d>Dropped %" PRIu64 " log entr%s that journald did not read before "
                       "exit\n", LOG_WARNING, n, n == 1 ? "y" : "ies");
        (void) send(STDERR_FILENO, line, (size_t) len, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* Once a stream's reader is gone (EPIPE: the pipe's reader exited, as `hvtuned --dry-run |
 * head -3`'s does, or journald's stream was closed), there is no more of it: /dev/null takes
 * its place, so that no later line fails again, and its descriptor is never closed (the next
 * open would get it). */
static void stream_gone(int stream) {
        int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

        if (fd < 0)
                return;
        (void) dup2(fd, stream);
        if (fd != stream)
                close(fd);
        clearerr(stream == STDOUT_FILENO ? stdout : stderr);
}

static void write_stream(int stream, const char *data, size_t len) {
        while (len > 0) {
                ssize_t n = write(stream, data, len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EPIPE)
                        stream_gone(stream);
                if (n <= 0)
                        return;  /* nowhere else to say it */
                data += n;
                len -= (size_t) n;
        }
}

static void flush_held(struct hvt_log_held *h) {
        write_stream(h->fd, h->buf, h->len);
        h->len = 0;
}

void hvt_log_done(struct hvt_log *log) {
        struct hvt_log_journal *j = log->journald;
        uint64_t dropped;

        if (log->held) {
                flush_held(log->held);
                free(log->held);
                log->held = NULL;
        }
        if (!j)
                return;
        dropped = hvt_dgram_done(&j->socket, EXIT_WAIT_MS);
        dropped += j->dropped;
        if (dropped > 0)
                say_dropped_at_exit(dropped);
        free(j);
        log->journald = NULL;
}

/* 0 when journald has the entry, or it waits for journald, or it was counted as dropped;
 * -errno when the stream should have it. */
static int send_journal(const struct hvt_log *log, int prio, int error, const char *message_id,
                        const char *const *fields, const char *message) {
        _cleanup_(fields_done) struct fields f = {};
        struct iovec iov[FIELDS_MAX];
        int kind = message_id && (strcmp(message_id, HVT_MESSAGE_STATE_DISK) == 0 ||
                                  strcmp(message_id, HVT_MESSAGE_STATE_SUMMARY) == 0) ? KIND_DUMP : KIND_ENTRY;
        char number[24];
        int r;

        if (!log->journald)
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
        /* ENOENT (no journald yet), ECONNREFUSED (the socket of one that is gone), ... */
        r = hvt_dgram_send(&log->journald->socket, kind, iov, f.n);
        /* A full queue gives up a state dump's entries before anything else: SIGUSR1 asks for
         * another dump, but a repair or a restore happens once, and is said once. */
        if (r == -ENOBUFS && kind != KIND_DUMP) {
                size_t size = 0, n;

                for (size_t i = 0; i < f.n; i++)
                        size += iov[i].iov_len;
                n = hvt_dgram_drop_kind(&log->journald->socket, KIND_DUMP, size);
                log->journald->dropped += n;
                if (n > 0)
                        r = hvt_dgram_send(&log->journald->socket, kind, iov, f.n);
        }
        if (r == -ENOBUFS) {
                log->journald->dropped++;
                return 0;
        }
        return r < 0 ? r : 0;
}

/* The stream of a line at prio: notice and info are a command's report, the rest diagnostics
 * (see the top of this file). The daemon's lines all stay on stderr. */
static int stream_of(const struct hvt_log *log, int prio) {
        return log->report_stdout && (prio == LOG_NOTICE || prio == LOG_INFO) ? STDOUT_FILENO : STDERR_FILENO;
}

/* One line; with the syslog prefix "<prio>" when its stream is journald's, whose protocol
 * reads the priority from it (SyslogLevelPrefix=, on by default). Held while a disk's pass
 * runs, but a warning or worse, which takes what was held out with it at once, and a line
 * for the other stream, which does too: on a terminal the two keep their order. */
static void send_stream(const struct hvt_log *log, int prio, const char *message) {
        char line[HVT_ESCAPED_SIZE(MESSAGE_MAX) + sizeof("<7>\n")], *p = line;
        struct hvt_log_held *h = log->held;
        int fd = stream_of(log, prio);
        size_t len, room, n;

        if (fd == STDOUT_FILENO ? log->stdout_journal : log->journal)
                p += sprintf(p, "<%d>", prio);
        room = (size_t) (line + sizeof(line) - 1 - p);  /* and the newline */
        n = hvt_escape(p, room, message);
        p += n < room ? n : room - 1;
        *p++ = '\n';
        len = (size_t) (p - line);

        if (h && h->depth > 0 && prio > LOG_WARNING && len <= sizeof(h->buf)) {
                if (h->len + len > sizeof(h->buf) || (h->len > 0 && h->fd != fd))
                        flush_held(h);
                h->fd = fd;
                memcpy(h->buf + h->len, line, len);
                h->len += len;
                return;
        }
        if (h)
                flush_held(h);
        write_stream(fd, line, len);
}

void hvt_log_hold(const struct hvt_log *log) {
        if (log->held)
                log->held->depth++;
}

void hvt_log_release(const struct hvt_log *log) {
        struct hvt_log_held *h = log->held;

        if (h && h->depth > 0 && --h->depth == 0)
                flush_held(h);
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
                        send_stream(log, prio, message);
                else if (!log->journald || send_journal(log, prio, error, message_id, fields, message) < 0)
                        /* journald's socket not there or not listening yet (it starts, or
                         * restarts): stderr is its stream, which it reads when it is back. The
                         * entry keeps its priority, not its fields. */
                        send_stream(log, prio, message);
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
