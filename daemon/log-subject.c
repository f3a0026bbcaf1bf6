/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the entries about one thing of log-subject.h. */
#include <stdarg.h>
#include <stdio.h>

#include "log-subject.h"
#include "macro.h"

/* The fields of an entry: what it is about, then the caller's. */
#define SUBJECT_FIELDS 2
#define CALLER_FIELDS_MAX 16

struct entry_fields {
        char about[SUBJECT_FIELDS][HVT_FIELD_MAX];
        const char *list[SUBJECT_FIELDS + CALLER_FIELDS_MAX + 1];
        size_t n;
};

static void add_about(struct entry_fields *f, const char *name, const char *value) {
        char *buf = f->about[f->n];

        snprintf(buf, HVT_FIELD_MAX, "%s=%s", name, value);
        f->list[f->n++] = buf;
}

static const char *const *with_callers(struct entry_fields *f, const char *const *fields) {
        for (size_t i = 0; fields && fields[i] && i < CALLER_FIELDS_MAX; i++)
                f->list[f->n++] = fields[i];
        f->list[f->n] = NULL;
        return f->list;
}

__attribute__((format(printf, 7, 0)))
static int log_subject(const struct hvt_log *log, const struct hvt_subject *s, int prio, int error,
                       const char *message_id, const char *const *fields, const char *fmt, va_list ap) {
        struct entry_fields f = {};

        if (prio > log->max_level)
                return -abs(error);
        add_about(&f, "HVTUNED_DEVICE", s->name);
        if (*s->controller)  /* the driver belongs to none */
                add_about(&f, "HVTUNED_CONTROLLER", s->controller);
        return hvt_log_structv(log, prio, error, message_id, with_callers(&f, fields), fmt, ap);
}

int hvt_log_subject(const struct hvt_log *log, const struct hvt_subject *s, int prio, int error,
                    const char *message_id, const char *const *fields, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = log_subject(log, s, prio, error, message_id, fields, fmt, ap);
        va_end(ap);
        return r;
}

int hvt_log_disk(const struct hvt_log *log, const struct hvt_disk *disk, int prio, int error,
                 const char *message_id, const char *const *fields, const char *fmt, ...) {
        struct hvt_subject s = hvt_subject_disk(disk);
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = log_subject(log, &s, prio, error, message_id, fields, fmt, ap);
        va_end(ap);
        return r;
}

int hvt_log_controller(const struct hvt_log *log, const struct hvt_controller *c, int prio, int error,
                       const char *message_id, const char *const *fields, const char *fmt, ...) {
        struct entry_fields f = {};
        char host[32];
        va_list ap;
        int r;

        if (prio > log->max_level)
                return -abs(error);
        snprintf(host, sizeof(host), "host%u", c->host);
        add_about(&f, "HVTUNED_CONTROLLER", c->controller);
        add_about(&f, "HVTUNED_HOST", host);
        va_start(ap, fmt);
        r = hvt_log_structv(log, prio, error, message_id, with_callers(&f, fields), fmt, ap);
        va_end(ap);
        return r;
}
