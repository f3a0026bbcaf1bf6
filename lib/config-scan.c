/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the walk over a configuration file and the files it includes, before libconfig reads
 * them: refusing a file that someone other than root could have written (trust.c), and
 * finding integer literals that libconfig 1.5 would truncate to 32 bits.
 *
 * A small scanner for the part of libconfig's lexical grammar that matters here: comments
 * (#, //, / * * /), strings with escapes, names (which may hold digits), @include, and numbers.
 * A number that is a float, or carries the L suffix, is libconfig's business; a plain integer
 * beyond INT32 range is an error, not a value. So is a string holding the escape \x00:
 * libconfig puts a NUL in it, and "none\x00bfq" would load as "none". */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-scan.h"
#include "macro.h"
#include "sysfs.h"
#include "trust.h"

/* Deeper than any sane configuration; stops an include loop. */
#define INCLUDE_DEPTH_MAX 8

struct scan {
        const char *path;
        const char *include_dir;
        struct hvt_config_error *err;
        int line;
};

static int scan_file(const char *path, const char *include_dir, int depth, struct hvt_config_error *err);

static bool is_name_start(char c) {
        return isalpha((unsigned char) c) || c == '*';
}

static bool is_name_char(char c) {
        return isalnum((unsigned char) c) || c == '-' || c == '_' || c == '*';
}

static int literal_error(struct scan *s, const char *start, size_t len, bool fits_64) {
        *s->err = (struct hvt_config_error) { .line = s->line };
        (void) hvt_strscpy(s->err->file, sizeof(s->err->file), s->path);
        if (fits_64)
                snprintf(s->err->message, sizeof(s->err->message),
                         "integer %.*s does not fit in 32 bits, libconfig would truncate it: write %.*sL",
                         (int) len, start, (int) len, start);
        else
                snprintf(s->err->message, sizeof(s->err->message), "integer %.*s is too large",
                         (int) len, start);
        return -EINVAL;
}

static int nul_escape_error(struct scan *s) {
        *s->err = (struct hvt_config_error) { .line = s->line };
        (void) hvt_strscpy(s->err->file, sizeof(s->err->file), s->path);
        snprintf(s->err->message, sizeof(s->err->message),
                 "a string with \\x00 in it: libconfig would end it there");
        return -EINVAL;
}

/* At a digit (or a sign before one): consumes the number and checks it. */
static int scan_number(struct scan *s, const char **p) {
        const char *start = *p, *q = *p;
        bool negative = false, hex;
        unsigned long long v;
        char *end;

        if (*q == '-' || *q == '+')
                negative = *q++ == '-';
        hex = q[0] == '0' && (q[1] == 'x' || q[1] == 'X');
        errno = 0;
        v = strtoull(hex ? q + 2 : q, &end, hex ? 16 : 10);
        *p = end;
        if (!hex && (*end == '.' || *end == 'e' || *end == 'E')) {
                /* A float: skip the rest of it. */
                while (isalnum((unsigned char) **p) || **p == '.' || **p == '-' || **p == '+')
                        (*p)++;
                return 0;
        }
        if (errno == ERANGE || v > (unsigned long long) INT64_MAX)
                return literal_error(s, start, (size_t) (end - start), false);
        if (*end == 'L') {
                while (**p == 'L')
                        (*p)++;
                return 0;
        }
        if (v > (negative ? (unsigned long long) INT32_MAX + 1 : (unsigned long long) INT32_MAX))
                return literal_error(s, start, (size_t) (end - start), true);
        return 0;
}

/* The name is read as libconfig reads it (scanner.l, state INCLUDE, alike in 1.5 and 1.7): up
 * to the first quote not escaped, newlines included; \\ and \" stand for a backslash and a
 * quote, and any other backslash is dropped. Read any other way, the scan would check one file
 * and libconfig parse another. */
static int scan_include(struct scan *s, const char **p, int depth) {
        const char *q = *p + strlen("@include");
        char name[PATH_MAX], full[PATH_MAX * 2];
        bool fits = true;
        size_t n = 0;
        int r;

        while (*q == ' ' || *q == '\t')
                q++;
        /* libconfig reports the syntax error; the scan goes on after the keyword, or it would
         * find it again forever. */
        if (*q != '"') {
                *p = q;
                return 0;
        }
        for (q++; *q && *q != '"'; q++) {
                if (*q == '\\' && q[1] != '\\' && q[1] != '"')
                        continue;
                if (*q == '\\')
                        q++;
                s->line += *q == '\n';
                if (n + 1 < sizeof(name))
                        name[n++] = *q;
                else
                        fits = false;
        }
        name[n] = '\0';
        /* Without its closing quote, libconfig includes nothing. */
        if (!*q) {
                *p = q;
                return 0;
        }
        /* Past the closing quote: taken for an opening one, it would hide what follows, up to
         * the next quote, from the scan. */
        *p = q + 1;
        /* No file has a name that long: libconfig's error to report. */
        if (!fits)
                return 0;

        /* libconfig 1.5 puts even an absolute name below the include directory, later versions
         * take it as it is: both files are checked. */
        if (name[0] == '/' || !s->include_dir) {
                r = scan_file(name, s->include_dir, depth + 1, s->err);
                if (r < 0 || !s->include_dir)
                        return r;
        }
        snprintf(full, sizeof(full), "%s/%s", s->include_dir, name);
        return scan_file(full, s->include_dir, depth + 1, s->err);
}

static int scan_text(struct scan *s, const char *p, int depth) {
        int r;

        while (*p) {
                if (*p == '\n') {
                        s->line++;
                        p++;
                } else if (*p == '#' || (p[0] == '/' && p[1] == '/')) {
                        p += strcspn(p, "\n");
                } else if (p[0] == '/' && p[1] == '*') {
                        for (p += 2; *p && !(p[0] == '*' && p[1] == '/'); p++)
                                s->line += *p == '\n';
                        p += *p ? 2 : 0;
                } else if (*p == '"') {
                        for (p++; *p && *p != '"'; p++) {
                                /* scanner.l: \x and exactly two hex digits make a byte. */
                                if (strncmp(p, "\\x00", 4) == 0)
                                        return nul_escape_error(s);
                                if (*p == '\\' && p[1])
                                        p++;
                                s->line += *p == '\n';
                        }
                        p += *p ? 1 : 0;
                } else if (strncmp(p, "@include", 8) == 0) {
                        r = scan_include(s, &p, depth);
                        if (r < 0)
                                return r;
                } else if (is_name_start(*p)) {
                        while (is_name_char(*p))
                                p++;
                } else if (isdigit((unsigned char) *p) ||
                           ((*p == '-' || *p == '+') && isdigit((unsigned char) p[1]))) {
                        r = scan_number(s, &p);
                        if (r < 0)
                                return r;
                } else
                        p++;
        }
        return 0;
}

__attribute__((format(printf, 3, 4)))
static int file_error(struct hvt_config_error *err, const char *path, const char *fmt, ...) {
        va_list ap;

        *err = (struct hvt_config_error) {};
        (void) hvt_strscpy(err->file, sizeof(err->file), path);
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof(err->message), fmt, ap);
        va_end(ap);
        return -EPERM;
}

static int nul_error(struct scan *s, const char *text) {
        for (const char *p = text; *p; p++)
                s->line += *p == '\n';
        *s->err = (struct hvt_config_error) { .line = s->line };
        (void) hvt_strscpy(s->err->file, sizeof(s->err->file), s->path);
        snprintf(s->err->message, sizeof(s->err->message), "a NUL byte: not a text file");
        return -EINVAL;
}

/* Opens path for the scan, refusing it unless root alone could have written it. O_NONBLOCK:
 * a FIFO under the name must be refused, not waited on. */
static int open_trusted(const char *path, struct hvt_config_error *err) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        char why[256];
        int r;

        if (fd < 0)
                return negative_errno();
        r = hvt_file_trusted(fd, path, why, sizeof(why));
        if (r == -EPERM)
                return file_error(err, path, "refused, %s", why);
        if (r < 0)
                return r;
        r = fd;
        fd = -EBADF;
        return r;
}

static int scan_file(const char *path, const char *include_dir, int depth, struct hvt_config_error *err) {
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct scan s = { .path = path, .include_dir = include_dir, .err = err, .line = 1 };
        int r;

        /* libconfig's own limit is deeper, and files past this one would go unchecked. */
        if (depth > INCLUDE_DEPTH_MAX)
                return file_error(err, path, "included more than %d levels deep (an include loop?)",
                                  INCLUDE_DEPTH_MAX);
        fd = open_trusted(path, err);
        if (fd == -EPERM)
                return fd;
        /* An include that cannot be opened is libconfig's error to report, in its own words. */
        if (fd < 0)
                return 0;
        r = hvt_read_fd(fd, &text);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0;
        /* The scan would stop at it and libconfig read on (a NUL in a comment hid the rest of
         * the file); in an include name libconfig exits the process. */
        if (strlen(text) != (size_t) r)
                return nul_error(&s, text);
        return scan_text(&s, text, depth);
}

int hvt_config_scan(const char *path, const char *include_dir, struct hvt_config_error *err) {
        return scan_file(path, include_dir, 0, err);
}
