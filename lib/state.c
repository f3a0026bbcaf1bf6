/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the state file's text (see state.h), written and read. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "macro.h"
#include "parse.h"
#include "state.h"

#define MAGIC "hvtuned-state"
#define FIELDS_MAX 16

static const char *const role_names[_HVT_STATE_ROLE_MAX] = {
        [HVT_STATE_MANAGED] = "managed",
        [HVT_STATE_YIELDED] = "yielded",
        [HVT_STATE_KNOCK_ON] = "knock-on",
};

const char *hvt_state_role_to_string(enum hvt_state_role r) {
        return (unsigned) r < _HVT_STATE_ROLE_MAX ? role_names[r] : "?";
}

void hvt_state_done(struct hvt_state *s) {
        for (size_t i = 0; i < s->n_disk; i++) {
                free(s->disk[i].name);
                free(s->disk[i].syspath);
                free(s->disk[i].device_syspath);
        }
        free(s->disk);
        free(s->controller);
        free(s->nvme);
        free(s->status);
        *s = (struct hvt_state) {};
}

/* Grows v (of *n items of size) by one zeroed item; NULL when out of memory. */
static void *grow(void **v, size_t *n, size_t size) {
        char *p = reallocarray(*v, *n + 1, size);

        if (!p)
                return NULL;
        *v = p;
        memset(p + *n * size, 0, size);
        return p + (*n)++ * size;
}

struct hvt_state_disk *hvt_state_add_disk(struct hvt_state *s, const char *name, const char *syspath,
                                          const char *device_syspath) {
        struct hvt_state_disk *d = grow((void **) &s->disk, &s->n_disk, sizeof(*d));

        if (!d)
                return NULL;
        d->last_repair_attr = -1;
        d->name = strdup(name);
        d->syspath = strdup(syspath);
        d->device_syspath = strdup(device_syspath ? device_syspath : "");
        if (!d->name || !d->syspath || !d->device_syspath)
                return NULL;  /* freed with s */
        return d;
}

/* Writing. */

/* One line: the key, then each field of fmt escaped after a tab. fmt is a string of 's'
 * (const char *), 'u' (unsigned), 'U' (uint64_t) and 'i' (int). */
static void line(struct hvt_state_out *o, const char *key, const char *fmt, ...) {
        va_list ap;

        fputs(key, o->f);
        va_start(ap, fmt);
        for (const char *t = fmt; *t; t++) {
                fputc('\t', o->f);
                switch (*t) {
                case 's': {
                        const char *v = va_arg(ap, const char *);
                        _cleanup_free_ char *e = hvt_escape_dup(v ? v : "");

                        if (!e)
                                o->oom = true;
                        else
                                fputs(e, o->f);
                        break;
                }
                case 'u':
                        fprintf(o->f, "%u", va_arg(ap, unsigned));
                        break;
                case 'U':
                        fprintf(o->f, "%" PRIu64, va_arg(ap, uint64_t));
                        break;
                case 'i':
                        fprintf(o->f, "%d", va_arg(ap, int));
                        break;
                }
        }
        va_end(ap);
        fputc('\n', o->f);
        o->lines++;
}

static const char *attr_path(int id, char buf[static 48]) {
        buf[0] = '\0';
        if (id >= 0)
                (void) hvt_attr_format_path((enum hvt_attr_id) id, buf, 48);
        return buf;
}

void hvt_state_write_head(struct hvt_state_out *o, const struct hvt_state *s) {
        line(o, MAGIC, "u", HVT_STATE_VERSION);
        line(o, "pid", "i", (int) s->pid);
        line(o, "written", "U", s->written_usec);
        line(o, "status", "s", s->status ? s->status : "");
        line(o, "driver", "uuis", s->driver.cap, s->driver.present_cpus, s->driver.cap_support, s->driver.orig);
}

void hvt_state_write_disk(struct hvt_state_out *o, const struct hvt_state_disk *d) {
        char path[48];

        line(o, "disk", "ssssssUUsuu", d->name, d->syspath, d->device_syspath, d->controller,
             hvt_kind_to_string(d->kind), hvt_role_to_string(d->role), d->repairs, d->last_repair_usec,
             attr_path(d->last_repair_attr, path), d->paused ? 1u : 0u, d->failed);
        for (size_t j = 0; j < d->n_attr; j++) {
                const struct hvt_state_attr *a = &d->attr[j];

                line(o, "attr", "ssssssisus", attr_path(a->id, path), hvt_state_role_to_string(a->role),
                     a->want, a->orig, a->left,
                     a->last >= 0 ? hvt_outcome_to_string((enum hvt_outcome) a->last) : "", a->error, a->kept,
                     a->ceiling ? 1u : 0u, a->origin);
        }
}

int hvt_state_write_tail(struct hvt_state_out *o, const struct hvt_state *s) {
        for (size_t i = 0; i < s->n_controller; i++) {
                const struct hvt_state_controller *c = &s->controller[i];

                line(o, "controller", "ussuuuuUUu", c->host, c->controller, hvt_kind_to_string(c->kind),
                     c->nr_hw_queues, c->can_queue, c->capped_queues, c->over_cap ? 1u : 0u, c->bytes, c->capped_bytes,
                     c->band_pct > 100 ? 100u : c->band_pct);
        }
        for (size_t i = 0; i < s->n_nvme; i++) {
                const struct hvt_state_nvme *n = &s->nvme[i];

                line(o, "nvme", "ssuuUu", n->name, hvt_kind_to_string(n->kind), n->nr_io_queues, n->q_depth, n->bytes,
                     n->band_pct > 100 ? 100u : n->band_pct);
        }
        line(o, "end", "u", o->lines);
        return o->oom ? -ENOMEM : 0;
}

int hvt_state_format(const struct hvt_state *s, char **ret) {
        _cleanup_free_ char *text = NULL;
        struct hvt_state_out o = {};
        size_t len = 0;
        int r;

        o.f = open_memstream(&text, &len);
        if (!o.f)
                return -ENOMEM;
        hvt_state_write_head(&o, s);
        for (size_t i = 0; i < s->n_disk; i++)
                hvt_state_write_disk(&o, &s->disk[i]);
        r = hvt_state_write_tail(&o, s);
        if (fclose(o.f) != 0 || r < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(text);
        return 0;
}

/* Reading. */

struct in {
        unsigned line;
        char *why;
        size_t size;
};

__attribute__((format(printf, 3, 4)))
static int bad(struct in *in, int r, const char *fmt, ...) {
        va_list ap;
        int n = in->line ? snprintf(in->why, in->size, "line %u: ", in->line) : 0;

        va_start(ap, fmt);
        if (n >= 0 && (size_t) n < in->size)
                vsnprintf(in->why + n, in->size - (size_t) n, fmt, ap);
        va_end(ap);
        return r;
}

static int parse_uint(const char *s, unsigned *ret) {
        uint64_t v;
        int r = hvt_parse_u64(s, UINT32_MAX, &v);

        if (r >= 0)
                *ret = (unsigned) v;
        return r;
}

static int parse_int(const char *s, int *ret) {
        unsigned v;
        bool minus = *s == '-';
        int r = parse_uint(s + minus, &v);

        if (r < 0 || v > INT32_MAX)
                return -EINVAL;
        *ret = minus ? -(int) v : (int) v;
        return 0;
}

static int parse_bool(const char *s, bool *ret) {
        if (strcmp(s, "0") != 0 && strcmp(s, "1") != 0)
                return -EINVAL;
        *ret = *s == '1';
        return 0;
}

/* A value as the file holds it: it must fit a value's room. */
static int parse_value(const char *s, char ret[static HVT_VALUE_MAX]) {
        return hvt_strscpy(ret, HVT_VALUE_MAX, s) ? 0 : -EINVAL;
}

/* "group/name" of a disk's attribute (disk true) or the driver's; -1 for "". */
static int parse_attr(const char *s, bool allow_none, int *ret) {
        char buf[48];
        char *slash;

        if (!*s && allow_none) {
                *ret = -1;
                return 0;
        }
        if (!hvt_strscpy(buf, sizeof(buf), s) || !(slash = strchr(buf, '/')))
                return -EINVAL;
        *slash = '\0';
        for (int g = 0; g < _HVT_GROUP_MAX; g++)
                if (strcmp(buf, hvt_group_name((enum hvt_group) g)) == 0) {
                        int id = hvt_attr_lookup((enum hvt_group) g, slash + 1);

                        if (id < 0 || id >= _HVT_ATTR_DISK_MAX)
                                return -EINVAL;
                        *ret = id;
                        return 0;
                }
        return -EINVAL;
}

static int parse_kind(const char *s, enum hvt_kind *ret) {
        int k = hvt_kind_from_string(s);

        if (k < 0)
                return -EINVAL;
        *ret = (enum hvt_kind) k;
        return 0;
}

static int parse_role(const char *s, enum hvt_role *ret) {
        int r = hvt_role_from_string(s);

        if (r < 0)
                return -EINVAL;
        *ret = (enum hvt_role) r;
        return 0;
}

static int parse_state_role(const char *s, enum hvt_state_role *ret) {
        for (unsigned i = 0; i < _HVT_STATE_ROLE_MAX; i++)
                if (strcmp(s, role_names[i]) == 0) {
                        *ret = (enum hvt_state_role) i;
                        return 0;
                }
        return -EINVAL;
}

static int parse_outcome(const char *s, int *ret) {
        if (!*s) {
                *ret = -1;
                return 0;
        }
        for (int i = 0; i < _HVT_OUTCOME_MAX; i++)
                if (strcmp(s, hvt_outcome_to_string((enum hvt_outcome) i)) == 0) {
                        *ret = i;
                        return 0;
                }
        return -EINVAL;
}

static int parse_guid(const char *s, char ret[static HVT_GUID_STR_MAX]) {
        return hvt_strscpy(ret, HVT_GUID_STR_MAX, s) ? 0 : -EINVAL;
}

/* f[0] is the key; n counts it. Each returns -EINVAL for a field that is not what it says. */

static int read_driver(char **f, struct hvt_state *s) {
        struct hvt_state_driver *d = &s->driver;

        if (parse_uint(f[1], &d->cap) < 0 || parse_uint(f[2], &d->present_cpus) < 0 ||
            parse_int(f[3], &d->cap_support) < 0 || parse_value(f[4], d->orig) < 0)
                return -EINVAL;
        return 0;
}

static int read_disk(char **f, struct hvt_state *s) {
        struct hvt_state_disk *d;
        uint64_t repairs, last;
        int last_attr;
        enum hvt_kind kind;
        enum hvt_role role;
        unsigned failed;
        bool paused;

        if (!*f[1] || !*f[2] || parse_kind(f[5], &kind) < 0 || parse_role(f[6], &role) < 0 ||
            hvt_parse_u64(f[7], UINT64_MAX, &repairs) < 0 || hvt_parse_u64(f[8], UINT64_MAX, &last) < 0 ||
            parse_attr(f[9], true, &last_attr) < 0 || parse_bool(f[10], &paused) < 0 || parse_uint(f[11], &failed) < 0)
                return -EINVAL;
        d = hvt_state_add_disk(s, f[1], f[2], f[3]);
        if (!d)
                return -ENOMEM;
        if (parse_guid(f[4], d->controller) < 0)
                return -EINVAL;
        d->kind = kind;
        d->role = role;
        d->repairs = repairs;
        d->last_repair_usec = last;
        d->last_repair_attr = last_attr;
        d->paused = paused;
        d->failed = failed;
        return 0;
}

/* KEPT, CEILING and ORIGIN, fields 0.2.0 added: absent from an earlier hvtuned's file. */
static int read_attr(struct in *in, char **f, unsigned n, struct hvt_state *s) {
        struct hvt_state_disk *d;
        struct hvt_state_attr a = { .current_error = -ENODATA, .current_outcome = -1 };
        int id;

        if (s->n_disk == 0)
                return bad(in, -EBADMSG, "an attribute before any disk");
        d = &s->disk[s->n_disk - 1];
        if (parse_attr(f[1], false, &id) < 0 || parse_state_role(f[2], &a.role) < 0 || parse_value(f[3], a.want) < 0 ||
            parse_value(f[4], a.orig) < 0 || parse_value(f[5], a.left) < 0 || parse_outcome(f[6], &a.last) < 0 ||
            parse_int(f[7], &a.error) < 0)
                return -EINVAL;
        /* Added within version 1: an older hvtuned's line ends before them. */
        if (n > 8 && parse_value(f[8], a.kept) < 0)
                return -EINVAL;
        if (n > 9 && parse_bool(f[9], &a.ceiling) < 0)
                return -EINVAL;
        /* Text for a person, never parsed: a newer writer's longer one is cut, not refused
         * (which would fail --status over a note). */
        if (n > 10)
                (void) hvt_strscpy(a.origin, sizeof(a.origin), f[10]);
        a.id = (enum hvt_attr_id) id;
        for (size_t i = 0; i < d->n_attr; i++)
                if (d->attr[i].id == a.id)
                        return bad(in, -EBADMSG, "%s twice for disk %s", f[1], d->name);
        /* Each attribute at most once: the room is the allowlist's. */
        d->attr[d->n_attr++] = a;
        return 0;
}

static int read_controller(char **f, struct hvt_state *s) {
        struct hvt_state_controller c = {};

        if (parse_uint(f[1], &c.host) < 0 || parse_guid(f[2], c.controller) < 0 || parse_kind(f[3], &c.kind) < 0 ||
            parse_uint(f[4], &c.nr_hw_queues) < 0 || parse_uint(f[5], &c.can_queue) < 0 ||
            parse_uint(f[6], &c.capped_queues) < 0 || parse_bool(f[7], &c.over_cap) < 0 ||
            hvt_parse_u64(f[8], UINT64_MAX, &c.bytes) < 0 || hvt_parse_u64(f[9], UINT64_MAX, &c.capped_bytes) < 0 ||
            parse_uint(f[10], &c.band_pct) < 0 || c.band_pct > 100)
                return -EINVAL;
        struct hvt_state_controller *p = grow((void **) &s->controller, &s->n_controller, sizeof(c));
        if (!p)
                return -ENOMEM;
        *p = c;
        return 0;
}

static int read_nvme(char **f, struct hvt_state *s) {
        struct hvt_state_nvme n = {};

        if (!hvt_strscpy(n.name, sizeof(n.name), f[1]) || !*n.name || parse_kind(f[2], &n.kind) < 0 ||
            parse_uint(f[3], &n.nr_io_queues) < 0 || parse_uint(f[4], &n.q_depth) < 0 ||
            hvt_parse_u64(f[5], UINT64_MAX, &n.bytes) < 0 || parse_uint(f[6], &n.band_pct) < 0 || n.band_pct > 100)
                return -EINVAL;
        struct hvt_state_nvme *p = grow((void **) &s->nvme, &s->n_nvme, sizeof(n));
        if (!p)
                return -ENOMEM;
        *p = n;
        return 0;
}

/* What each record needs: its key and how many fields, the key counted. */
static const struct {
        const char *key;
        unsigned fields;
} records[] = {
        { MAGIC, 2 }, { "pid", 2 }, { "written", 2 }, { "status", 2 }, { "driver", 5 },
        { "disk", 12 }, { "attr", 8 }, { "controller", 11 }, { "nvme", 7 }, { "end", 2 },
};

static int read_line(struct in *in, char **f, unsigned n, struct hvt_state *s, bool *end) {
        const char *key = f[0];
        unsigned want = 0;
        int r = 0, pid = 0;

        for (size_t i = 0; i < ELEMENTSOF(records); i++)
                if (strcmp(key, records[i].key) == 0)
                        want = records[i].fields;
        if (want == 0)
                return 0;  /* a newer hvtuned's record of the same version: skipped */
        if (n < want)
                return bad(in, -EBADMSG, "%s has %u fields, not %u", key, n - 1, want - 1);

        if (strcmp(key, MAGIC) == 0)
                return bad(in, -EBADMSG, "a second header");
        if (strcmp(key, "pid") == 0) {
                r = parse_int(f[1], &pid);
                s->pid = (pid_t) pid;
        } else if (strcmp(key, "written") == 0)
                r = hvt_parse_u64(f[1], UINT64_MAX, &s->written_usec);
        else if (strcmp(key, "status") == 0) {
                free(s->status);
                s->status = strdup(f[1]);
                r = s->status ? 0 : -ENOMEM;
        } else if (strcmp(key, "driver") == 0)
                r = read_driver(f, s);
        else if (strcmp(key, "disk") == 0)
                r = read_disk(f, s);
        else if (strcmp(key, "attr") == 0)
                r = read_attr(in, f, n, s);
        else if (strcmp(key, "controller") == 0)
                r = read_controller(f, s);
        else if (strcmp(key, "nvme") == 0)
                r = read_nvme(f, s);
        else {
                unsigned lines;

                if (parse_uint(f[1], &lines) < 0 || lines != in->line - 1)
                        return bad(in, -EBADMSG, "the end line counts %s lines, the file has %u", f[1], in->line - 1);
                *end = true;
        }
        if (r == -EINVAL)
                return bad(in, -EBADMSG, "a %s line with a field this hvtuned cannot read", key);
        return r;
}

/* Splits line at tabs into f[], each field unescaped: the count, or -EBADMSG. */
static int split(struct in *in, char *line, char *f[static FIELDS_MAX]) {
        unsigned n = 0;

        for (char *p = line;;) {
                char *tab = strchr(p, '\t');

                if (tab)
                        *tab = '\0';
                if (n < FIELDS_MAX) {
                        if (hvt_unescape(p) < 0)
                                return bad(in, -EBADMSG, "field %u is not escaped as hvtuned escapes", n + 1);
                        f[n++] = p;
                }
                if (!tab)
                        break;
                p = tab + 1;
        }
        return (int) n;
}

int hvt_state_parse(char *text, struct hvt_state *ret, char *why, size_t size) {
        struct hvt_state s = { .running = true, .driver.cap_support = -1 };
        struct in in = { .why = why, .size = size };
        bool end = false;
        char *next = text;
        int r = 0;

        if (size > 0)
                why[0] = '\0';
        while (next && *next && r >= 0 && !end) {
                char *line = next, *nl = strchr(line, '\n'), *f[FIELDS_MAX];
                int n;

                /* A line without its newline was cut short: so is the file. */
                if (!nl) {
                        r = bad(&in, -EBADMSG, "cut short (no end line)");
                        break;
                }
                *nl = '\0';
                next = nl + 1;
                in.line++;
                n = split(&in, line, f);
                if (n < 0) {
                        r = n;
                        break;
                }
                if (in.line == 1) {
                        unsigned version;

                        if (strcmp(f[0], MAGIC) != 0 || n < 2 || parse_uint(f[1], &version) < 0)
                                r = bad(&in, -EBADMSG, "not a state file of hvtuned's");
                        else if (version != HVT_STATE_VERSION)
                                r = bad(&in, -EPROTONOSUPPORT, "format version %u, this hvtuned reads %u (written by %s hvtuned)",
                                        version, HVT_STATE_VERSION, version > HVT_STATE_VERSION ? "a newer" : "an older");
                        continue;
                }
                r = read_line(&in, f, (unsigned) n, &s, &end);
        }
        if (r >= 0 && in.line == 0) {
                in.line = 0;
                r = bad(&in, -EBADMSG, "empty");
        } else if (r >= 0 && !end)
                r = bad(&in, -EBADMSG, "cut short (no end line)");
        else if (r >= 0 && next && *next)
                r = bad(&in, -EBADMSG, "text after the end line");
        if (r < 0) {
                if (r == -ENOMEM && size > 0)
                        snprintf(why, size, "out of memory");
                hvt_state_done(&s);
                return r;
        }
        *ret = s;
        return 0;
}

uint64_t hvt_state_reclaimable(const struct hvt_state *s, size_t *ret_over) {
        uint64_t bytes = 0;
        size_t over = 0;

        for (size_t i = 0; i < s->n_controller; i++) {
                const struct hvt_state_controller *c = &s->controller[i];

                if (!c->over_cap)
                        continue;
                over++;
                if (c->bytes > c->capped_bytes)
                        bytes += c->bytes - c->capped_bytes;
        }
        if (ret_over)
                *ret_over = over;
        return bytes;
}
