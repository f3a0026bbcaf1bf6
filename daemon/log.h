/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: where messages go (journal, stdout or stderr) and at which level. Structured entries
 * take a list of extra "FIELD=value" strings. */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <syslog.h>

struct hvt_event;
struct hvt_log_held;
struct hvt_log_journal;

struct hvt_log {
        int max_level;  /* LOG_INFO, or LOG_DEBUG with -v */
        bool journal;   /* stderr is journald's stream: its lines carry their priority */
        /* Notice and info lines on stdout, a command's report (hvt_log_report_to_stdout()),
         * not stderr; stdout_journal: stdout is journald's stream. */
        bool report_stdout;
        bool stdout_journal;
        /* When journal and allowed: journald's socket for structured entries, and those that
         * wait for it (log.c); NULL if not. A pointer, so that a const struct hvt_log can
         * still send. */
        struct hvt_log_journal *journald;
        /* The lines held (hvt_log_hold()); NULL: none are. */
        struct hvt_log_held *held;
};

/* journal is chosen only when stderr is the stream systemd set up (JOURNAL_STREAM matches),
 * and allow_journal: structured entries on journald's socket. Lines on that stream carry
 * "<prio>" before the message, with or without the socket. An entry journald's socket does
 * not take (journald not listening yet, or gone) is written to the stream: never lost without
 * a trace. Sending
 * never blocks: an entry a journald that does not read has no room for waits, up to a limit;
 * those past it are counted and the count is logged once journald has read the rest. */
void hvt_log_init(struct hvt_log *log, int max_level, bool allow_journal);
/* A command's log (--once, --dry-run, --restore, --check-config): what it was asked
 * to report, notice and info, goes to stdout; diagnostics, warnings and worse and -v's debug,
 * stay on stderr. The daemon's lines all stay where hvt_log_init() put them. */
void hvt_log_report_to_stdout(struct hvt_log *log);
/* Once the loop exists: entries that wait are sent when journald has room, from e (before,
 * only as the next entry is sent). 0 or -errno. */
int hvt_log_attach(struct hvt_log *log, struct hvt_event *e);
/* Sends what journald takes without waiting; what is left is dropped, and that is said on
 * the stream only if it takes the line without waiting either. */
void hvt_log_done(struct hvt_log *log);

/* Whether an entry's extra fields go anywhere: only journald's socket takes them. */
static inline bool hvt_log_fields_wanted(const struct hvt_log *log) {
        return log->journald;
}

/* From hvt_log_hold() to the matching hvt_log_release(), lines on a stream at LOG_NOTICE and
 * below are held and go out together: a disk's pass says what it found and did in one
 * write(2). A warning or worse goes out at once, with what was held before it. Nested holds
 * end at the outermost release; hvt_log_done() writes what is left. */
void hvt_log_hold(const struct hvt_log *log);
void hvt_log_release(const struct hvt_log *log);

/* Logs message at prio with MESSAGE_ID and the extra fields (NULL-terminated array of
 * "FIELD=value", may be NULL). Returns -abs(error), or 0 when error is 0, so that callers
 * can "return hvt_log_errno(...)". */
int hvt_log_struct(const struct hvt_log *log, int prio, int error, const char *message_id,
                   const char *const *fields, const char *fmt, ...)
        __attribute__((format(printf, 6, 7)));
int hvt_log_structv(const struct hvt_log *log, int prio, int error, const char *message_id,
                    const char *const *fields, const char *fmt, va_list ap)
        __attribute__((format(printf, 6, 0)));

/* The extra fields of one entry, each made where it is used and checked by the compiler like
 * any printf: HVT_FIELDS(HVT_FIELD("HVTUNED_HW_QUEUES=%u", n), HVT_FIELD("HVTUNED_KIND=%s", k)).
 * A field's text lives until the end of the statement's block, and is cut to HVT_FIELD_MAX;
 * the sinks escape it. */
#define HVT_FIELD_MAX 512
/* The same, made only when the entry can carry them (a journal entry): on stderr an entry is
 * its message alone, and formatting its fields was a tenth of a coldplug's instructions. */
#define HVT_FIELDS_FOR(log, ...) (hvt_log_fields_wanted(log) ? HVT_FIELDS(__VA_ARGS__) : NULL)
#define HVT_FIELD(...) hvt_field_format((char[HVT_FIELD_MAX]) {}, HVT_FIELD_MAX, __VA_ARGS__)
#define HVT_FIELDS(...) ((const char *const[]) { __VA_ARGS__, NULL })

const char *hvt_field_format(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define hvt_log_errno(log, prio, error, ...) hvt_log_struct((log), (prio), (error), NULL, NULL, __VA_ARGS__)
#define hvt_log_info(log, ...) (void) hvt_log_struct((log), LOG_INFO, 0, NULL, NULL, __VA_ARGS__)
#define hvt_log_debug(log, ...) (void) hvt_log_struct((log), LOG_DEBUG, 0, NULL, NULL, __VA_ARGS__)
