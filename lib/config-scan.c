/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the walk over a configuration file and the files it includes, before libconfig reads
 * them: refusing a file that someone other than root could have written (trust.c), finding
 * integer literals that libconfig 1.5 would truncate to 32 bits, and handing libconfig exactly
 * the text that was checked.
 *
 * libconfig opens an included file by name, which would let anyone who can swap a name in
 * between have another file parsed. So each file is read once, from the descriptor trust.c
 * checked, and every @include in it is rewritten to name a sealed memfd holding the checked
 * (and itself rewritten) text of the file it includes: /proc/self/fd/N opens that memfd, not
 * a path. The rewrite keeps the line count, so libconfig's line numbers stay the file's.
 *
 * A small scanner for the part of libconfig's lexical grammar that matters here: comments
 * (#, //, / * * /), strings with escapes, names (which may hold digits, and which a load may
 * hold only so many of: config-scan.h), @include, and numbers.
 * A number that is a float, or carries the L suffix, is libconfig's business; a plain integer
 * beyond INT32 range is an error, not a value. So is a string holding a NUL escape, \x00 or
 * \X00 (scanner.l's hexchar takes either x): libconfig 1.5 drops the byte, so "no\x00ne"
 * loads as "none", and 1.7 keeps it, so "none\x00bfq" loads as "none" too. What the file
 * says is never what hvtuned would apply. */
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
#include <strings.h>
#include <sys/mman.h>

#include "config-scan.h"
#include "fs-util.h"
#include "macro.h"
#include "sysfs.h"
#include "trust.h"

/* Deeper than any sane configuration; stops an include loop. */
#define INCLUDE_DEPTH_MAX 8
/* More than any sane configuration; bounds the descriptors held open. What a load reads and
 * opens is bounded by its budget (HVT_CONFIG_BUDGET), not by this. */
#define INCLUDES_MAX 64
/* Names in an @include's path: each is a lookup and a check of its own (trust.c), so a name of
 * 800 "../" would cost a load of 1024 files over a million of them, seconds a SIGTERM waits
 * for. A sane include is a name or two. */
#define INCLUDE_COMPONENTS_MAX 32

#define PROC_FD "/proc/self/fd/"

struct scan {
        const char *path;
        const char *include_dir;
        struct hvt_config_source *src;
        struct hvt_config_error *err;
        struct hvt_config_budget *budget;  /* what the load has left (config-scan.h) */
        int line;
        const char *text;    /* the file's text */
        FILE *out;           /* the text as libconfig gets it */
        const char *copied;  /* how far the file's text is in out */
};

static int scan_file(const char *path, struct scan *parent, int line, int depth, char **ret_text, size_t *ret_len);
static int include_file(struct scan *s, const char *path, int line, int depth);

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

__attribute__((format(printf, 4, 5)))
static int line_error(struct scan *s, int line, int error, const char *fmt, ...) {
        va_list ap;

        *s->err = (struct hvt_config_error) { .line = line };
        (void) hvt_strscpy(s->err->file, sizeof(s->err->file), s->path);
        va_start(ap, fmt);
        vsnprintf(s->err->message, sizeof(s->err->message), fmt, ap);
        va_end(ap);
        return error;
}

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
                 "a string with a NUL escape (x00) in it: libconfig would drop the byte or end the string there");
        return -EINVAL;
}

/* Where a float ends, after the digits it starts with (at after), as scanner.l reads one: a '.'
 * and digits, or an exponent with digits, or both; NULL when none follows, and the number is an
 * integer. No further: a name may follow with nothing between ("a = 1.0b = 2;" is a float,
 * then the setting b), and a name read as part of a float would escape HVT_CONFIG_NAMES_MAX. */
static const char *float_end(const char *after) {
        const char *f = after, *e;
        bool is_float = false;

        if (*f == '.') {
                is_float = true;
                for (f++; isdigit((unsigned char) *f); f++)
                        ;
        }
        if (*f == 'e' || *f == 'E') {
                e = f + 1;
                if (*e == '-' || *e == '+')
                        e++;
                if (isdigit((unsigned char) *e)) {
                        is_float = true;
                        for (f = e; isdigit((unsigned char) *f); f++)
                                ;
                }
        }
        return is_float ? f : NULL;
}

/* At a digit (or a sign before one): consumes the number and checks it. */
static int scan_number(struct scan *s, const char **p) {
        const char *start = *p, *q = *p, *f;
        bool negative = false, hex;
        unsigned long long v;
        char *end;

        if (*q == '-' || *q == '+')
                negative = *q++ == '-';
        hex = q[0] == '0' && (q[1] == 'x' || q[1] == 'X');
        errno = 0;
        v = strtoull(hex ? q + 2 : q, &end, hex ? 16 : 10);
        *p = end;
        f = hex ? NULL : float_end(end);
        if (f) {
                *p = f;
                return 0;
        }
        if (errno == ERANGE || v > (unsigned long long) INT64_MAX)
                return literal_error(s, start, (size_t) (end - start), false);
        if (*end == 'L') {
                /* scanner.l's suffix is L or LL: an L after them starts a name. */
                *p += 1 + (end[1] == 'L');
                return 0;
        }
        if (v > (negative ? (unsigned long long) INT32_MAX + 1 : (unsigned long long) INT32_MAX))
                return literal_error(s, start, (size_t) (end - start), true);
        return 0;
}

/* The names a path is walked through ("a//b/../c" has four). */
static size_t path_components(const char *path) {
        size_t n = 0;

        for (const char *p = path; *p; p += strcspn(p, "/")) {
                p += strspn(p, "/");
                n += *p != '\0';
        }
        return n;
}

/* The name is read as libconfig reads it (scanner.l, state INCLUDE, alike in 1.5 and 1.7): up
 * to the first quote not escaped, newlines included; \\ and \" stand for a backslash and a
 * quote, and any other backslash is dropped. Read any other way, the scan would check one file
 * and libconfig parse another. */
static int scan_include(struct scan *s, const char **p, int depth) {
        const char *start = *p, *q = *p + strlen("@include");
        char name[PATH_MAX], full[PATH_MAX * 2];
        int line = s->line, fd;
        bool fits = true;
        size_t n = 0;

        const char *b = start;
        bool blank = *q == ' ' || *q == '\t';

        while (*q == ' ' || *q == '\t')
                q++;
        /* libconfig includes only at the start of a line, blanks aside, with a blank before the
         * quote (scanner.l: ^[ \t]*@include[ \t]+\"): anything else is its syntax error, and
         * is left as written, or the rewrite would make it an include. The scan goes on after
         * the keyword, or it would find it again forever. */
        while (b > s->text && (b[-1] == ' ' || b[-1] == '\t'))
                b--;
        if (*q != '"' || !blank || (b > s->text && b[-1] != '\n')) {
                *p = start + strlen("@include");
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
        if (!fits)
                return line_error(s, line, -EINVAL, "an @include name longer than %zu bytes", sizeof(name) - 1);
        if (path_components(name) > INCLUDE_COMPONENTS_MAX)
                return line_error(s, line, -EINVAL, "an @include name of more than %d path components: a "
                                  "configuration includes a file beside it or a directory or two away",
                                  INCLUDE_COMPONENTS_MAX);

        /* As libconfig 1.7 does; 1.5 put even an absolute name below the include directory. */
        if (name[0] == '/' || !s->include_dir)
                (void) hvt_strscpy(full, sizeof(full), name);
        else
                snprintf(full, sizeof(full), "%s/%s", s->include_dir, name);
        fd = include_file(s, full, line, depth + 1);
        if (fd < 0)
                return fd;

        /* The statement, newlines and all, becomes one naming the checked text; the newlines
         * follow it, so that the lines after it keep their numbers. */
        fwrite(s->copied, 1, (size_t) (start - s->copied), s->out);
        fprintf(s->out, "@include \"" PROC_FD "%d\"", fd);
        for (int i = line; i < s->line; i++)
                fputc('\n', s->out);
        s->copied = *p;
        return 0;
}

/* A word of the text, which scanner.l reads as a setting's name unless it is true or false,
 * in any case: those are booleans (its rule for them comes first). A word that is neither is
 * libconfig's syntax error, where its parse stops: counting it only refuses sooner a file that
 * would be refused. Each name counts, and its bytes, where libconfig's cost is (config-scan.h). */
static int scan_name(struct scan *s, const char *word, size_t len) {
        if ((len == 4 && strncasecmp(word, "true", 4) == 0) || (len == 5 && strncasecmp(word, "false", 5) == 0))
                return 0;
        if (s->budget->names == 0)
                return line_error(s, s->line, -E2BIG,
                                  "refused, this setting takes the configuration past %u setting names, the limit "
                                  "for all of its files together (main file, drop-ins and every include): a "
                                  "configuration has a few hundred; check that these are the right files, or set "
                                  "fewer", HVT_CONFIG_NAMES_MAX);
        if (s->budget->name_bytes < len)
                return line_error(s, s->line, -E2BIG,
                                  "refused, this setting takes the configuration past %u KiB of setting names, the "
                                  "limit for all of its files together (main file, drop-ins and every include): a "
                                  "configuration's names are a few KiB; check that these are the right files, or set "
                                  "fewer", HVT_CONFIG_NAME_BYTES_MAX / 1024);
        s->budget->names--;
        s->budget->name_bytes -= len;
        return 0;
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
                                /* scanner.l: \x or \X and exactly two hex digits make a
                                 * byte; "00" has no case. */
                                if (p[0] == '\\' && (p[1] == 'x' || p[1] == 'X') && p[2] == '0' && p[3] == '0')
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
                        const char *word = p;

                        while (is_name_char(*p))
                                p++;
                        r = scan_name(s, word, (size_t) (p - word));
                        if (r < 0)
                                return r;
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

static int nul_error(struct scan *s, const char *text) {
        for (const char *p = text; *p; p++)
                s->line += *p == '\n';
        return line_error(s, s->line, -EINVAL, "a NUL byte: not a text file");
}

/* The load's bytes ran out at path: reported where the load was told to read it, the @include
 * at parent's line, or path itself when no file included it. */
static int over_budget(struct scan *parent, int line, const char *path) {
        if (line > 0)
                return line_error(parent, line, -E2BIG,
                                  "refused, this @include would take the configuration past %u KiB, the limit "
                                  "for all of its files together (main file, drop-ins and every include): a "
                                  "configuration is a few KiB; include fewer or smaller files",
                                  HVT_CONFIG_LOAD_MAX / 1024);
        (void) file_error(parent->err, path,
                          "refused, reading this file would take the configuration past %u KiB, the limit for "
                          "all of its files together (main file, drop-ins and every include): a configuration "
                          "is a few KiB; use fewer or smaller files", HVT_CONFIG_LOAD_MAX / 1024);
        return -E2BIG;
}

/* The load's files ran out at path: reported as over_budget() does. */
static int over_files(struct scan *parent, int line, const char *path) {
        if (line > 0)
                return line_error(parent, line, -E2BIG,
                                  "refused, this @include would take the configuration past %u files, the limit for "
                                  "one load (main file, drop-ins and every include, each time it is included): a "
                                  "configuration is a few files; include fewer", HVT_CONFIG_FILES_MAX);
        (void) file_error(parent->err, path,
                          "refused, this file would take the configuration past %u files, the limit for one load "
                          "(main file, drop-ins and every include, each time it is included): a configuration "
                          "is a few files; use fewer", HVT_CONFIG_FILES_MAX);
        return -E2BIG;
}

/* Reads path (checked, see trust.h) and its includes, and returns its text as libconfig is to
 * get it. parent is the file that includes it at line, or for the file scanned first (line 0)
 * the scan's top, which holds what the load shares. */
static int scan_file(const char *path, struct scan *parent, int line, int depth, char **ret_text, size_t *ret_len) {
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct scan s = {
                .path = path,
                .line = 1,
                .include_dir = parent->include_dir,
                .src = parent->src,
                .err = parent->err,
                .budget = parent->budget,
        };
        size_t cap = s.budget->bytes < HVT_CONFIG_FILE_MAX ? s.budget->bytes : HVT_CONFIG_FILE_MAX;
        char why[256];
        int r;

        /* Before the open: what a file costs, small or not, is mostly opening it (config-scan.h). */
        if (s.budget->files == 0)
                return over_files(parent, line, path);
        s.budget->files--;
        fd = hvt_open_trusted(path, why, sizeof(why));
        if (fd == -EPERM)
                return file_error(s.err, path, "refused, %s", why);
        if (fd < 0)
                return fd;
        /* Read with a cap: a huge (or sparse) file would otherwise cost its whole size in
         * memory and time before anything could refuse it; and never past what the load has
         * left, or many files within their caps would (config-scan.h). */
        r = hvt_read_fd(fd, cap, &text);
        if (r == -EFBIG && cap < HVT_CONFIG_FILE_MAX)
                return over_budget(parent, line, path);
        if (r == -EFBIG)
                return file_error(s.err, path, "refused, larger than %u KiB, the limit for one configuration "
                                  "file: a configuration is a few KiB; check that this is the right file, or "
                                  "make it smaller", HVT_CONFIG_FILE_MAX / 1024);
        if (r < 0)
                return r;
        s.budget->bytes -= (size_t) r;
        /* The scan would stop at it and libconfig read on (a NUL in a comment hid the rest of
         * the file); in an include name libconfig exits the process. */
        if (strlen(text) != (size_t) r)
                return nul_error(&s, text);

        s.text = text;
        s.out = open_memstream(ret_text, ret_len);
        if (!s.out)
                return -ENOMEM;
        s.copied = text;
        r = scan_text(&s, text, depth);
        if (r >= 0)
                fputs(s.copied, s.out);
        if (fclose(s.out) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0) {
                free(*ret_text);
                *ret_text = NULL;
        }
        return r;
}

static int memfd_with(const char *text, size_t len) {
        _cleanup_close_ int fd = memfd_create("hvtuned-include", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        int r;

        if (fd < 0)
                return negative_errno();
        r = hvt_write_all(fd, text, len);
        if (r < 0)
                return r;
        /* Nothing changes it after the check, not even hvtuned. */
        if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0)
                return negative_errno();
        return TAKE_FD(fd);
}

/* The included file's checked text in a memfd, kept in s->src: its descriptor, or -errno with
 * s->err set. */
static int include_file(struct scan *s, const char *path, int line, int depth) {
        struct hvt_config_source *src = s->src;
        _cleanup_free_ char *text = NULL;
        struct hvt_config_part *parts;
        size_t len = 0;
        int r, fd;

        /* libconfig's own limit is deeper, and files past this one would go unchecked. */
        if (depth > INCLUDE_DEPTH_MAX)
                return file_error(s->err, path, "included more than %d levels deep (an include loop?)",
                                  INCLUDE_DEPTH_MAX);
        if (src->n_parts >= INCLUDES_MAX)
                return line_error(s, line, -EINVAL, "more than %d files included", INCLUDES_MAX);
        /* An error in the included file, or deeper, is reported there; one opening it here. */
        *s->err = (struct hvt_config_error) {};
        r = scan_file(path, s, line, depth, &text, &len);
        if (r < 0 && r != -ENOMEM && s->err->file[0] == '\0')
                return line_error(s, line, -EINVAL, "cannot include %s: %s", path, strerror(-r));
        if (r < 0)
                return r;

        parts = realloc(src->parts, (src->n_parts + 1) * sizeof(*parts));
        if (!parts)
                return -ENOMEM;
        src->parts = parts;
        fd = memfd_with(text, len);
        if (fd < 0)
                return line_error(s, line, fd, "cannot include %s: no memory file for its text: %s",
                                  path, strerror(-fd));
        parts[src->n_parts] = (struct hvt_config_part) { .fd = fd, .path = strdup(path) };
        if (!parts[src->n_parts].path) {
                close(fd);
                return -ENOMEM;
        }
        src->n_parts++;
        return fd;
}

int hvt_config_scan(const char *path, const char *include_dir, struct hvt_config_budget *budget,
                    struct hvt_config_source *ret, struct hvt_config_error *err) {
        struct scan top = { .include_dir = include_dir, .src = ret, .err = err, .budget = budget };
        size_t len = 0;
        int r;

        *ret = (struct hvt_config_source) {};
        r = scan_file(path, &top, 0, 0, &ret->text, &len);
        if (r < 0)
                hvt_config_source_done(ret);
        return r;
}

void hvt_config_source_done(struct hvt_config_source *src) {
        for (size_t i = 0; i < src->n_parts; i++) {
                close(src->parts[i].fd);
                free(src->parts[i].path);
        }
        free(src->parts);
        free(src->text);
        *src = (struct hvt_config_source) {};
}

const char *hvt_config_source_name(const struct hvt_config_source *src, const char *name) {
        char *end;
        long fd;

        if (!name || strncmp(name, PROC_FD, strlen(PROC_FD)) != 0)
                return NULL;
        errno = 0;
        fd = strtol(name + strlen(PROC_FD), &end, 10);
        if (errno != 0 || *end != '\0')
                return NULL;
        for (size_t i = 0; i < src->n_parts; i++)
                if (src->parts[i].fd == fd)
                        return src->parts[i].path;
        return NULL;
}
