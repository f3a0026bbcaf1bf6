/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: reading hvtuned.conf and its drop-ins with libconfig and validating them into one
 * struct hvt_config, each file over the ones before it.
 *
 * Groups are named after the sysfs directory they write into (queue, device), so every key
 * is an attribute name from the allowlist in attr.c. Nothing is half-loaded: the first
 * error stops the load and the caller keeps whatever configuration it had. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <libconfig.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "config.h"
#include "config-dropins.h"
#include "config-scan.h"
#include "macro.h"
#include "suggest.h"

/* Where a setting was made, kept past the file it was read from. */
struct origin {
        char file[256];
        int line;  /* 0: not set */
};

struct loader {
        struct hvt_config *config;            /* what the load fills: origins point into it */
        const char *path;                     /* the file being read: the main one or a drop-in */
        const struct hvt_config_source *src;  /* what libconfig parsed of it: names its includes */
        struct hvt_config_error *err;
        /* What the load has left, across all of its files: bytes to read, setting names, files
         * to open (config-scan.h). The daemon loads synchronously, and the time a load takes is
         * time a reload holds a SIGTERM. */
        struct hvt_config_budget budget;
        /* Where device.timeout and queue.io_timeout were first set, in any file: they are one
         * kernel value (the request queue's rq_timeout), so a configuration may set only one
         * of them, or a drop-in's one and the main file's other would fight on every disk. */
        struct origin timeout_at[2];
};

static void config_destroyp(config_t **c) {
        if (*c)
                config_destroy(*c);
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct hvt_config *, hvt_config_free);

__attribute__((format(printf, 5, 0)))
static void set_error(struct hvt_config_error *err, const char *file, int line, const char *key,
                      const char *fmt, va_list ap) {
        *err = (struct hvt_config_error) { .line = line };
        (void) hvt_strscpy(err->file, sizeof(err->file), file ? file : "");
        (void) hvt_strscpy(err->key, sizeof(err->key), key ? key : "");
        vsnprintf(err->message, sizeof(err->message), fmt, ap);
}

/* libconfig names the main file's text NULL, an included one by its memfd (config-scan.h). */
static const char *resolve_file(const struct loader *l, const char *file) {
        const char *name = hvt_config_source_name(l->src, file);

        return name ? name : l->path;
}

__attribute__((format(printf, 4, 5)))
static int fail(struct loader *l, const config_setting_t *s, const char *key, const char *fmt, ...) {
        const char *file = resolve_file(l, s ? config_setting_source_file(s) : NULL);
        va_list ap;

        va_start(ap, fmt);
        set_error(l->err, file, s ? (int) config_setting_source_line(s) : 0, key, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

/* The configuration's own copy of a file's name, made once: the origins of a load point into it. */
static const char *intern(struct hvt_config *c, const char *file) {
        char **grown;

        for (size_t i = 0; i < c->n_origin_files; i++)
                if (strcmp(c->origin_files[i], file) == 0)
                        return c->origin_files[i];
        grown = realloc(c->origin_files, (c->n_origin_files + 1) * sizeof(*grown));
        if (!grown)
                return NULL;
        c->origin_files = grown;
        grown[c->n_origin_files] = strdup(file);
        return grown[c->n_origin_files] ? grown[c->n_origin_files++] : NULL;
}

/* Where s is written: its file (the main file, a drop-in or an included file) and line. */
static int origin_of(struct loader *l, const config_setting_t *s, struct hvt_origin *ret) {
        const char *file = intern(l->config, resolve_file(l, config_setting_source_file(s)));

        if (!file)
                return -ENOMEM;
        *ret = (struct hvt_origin) {
                .kind = HVT_ORIGIN_FILE,
                .line = config_setting_source_line(s),
                .file = file,
        };
        return 0;
}

/* "\"" + 40 bytes + "\"" and a NUL. */
#define QUOTE_MAX 43

/* A string from the file as a message shows it: quoted and cut at 40 bytes. What it holds is
 * escaped where the message is sent (lib/escape.h), never here: it would be escaped twice. */
static const char *quote(const char *v, char buf[static QUOTE_MAX]) {
        snprintf(buf, QUOTE_MAX, "\"%.40s\"", v);
        return buf;
}

static const char *type_name(int type) {
        switch (type) {
        case CONFIG_TYPE_GROUP:  return "a group";
        case CONFIG_TYPE_INT:
        case CONFIG_TYPE_INT64:  return "an integer";
        case CONFIG_TYPE_FLOAT:  return "a float";
        case CONFIG_TYPE_STRING: return "a string";
        case CONFIG_TYPE_BOOL:   return "a boolean";
        case CONFIG_TYPE_ARRAY:  return "an array";
        case CONFIG_TYPE_LIST:   return "a list";
        default:                 return "a value of unknown type";
        }
}

static int expect_type(struct loader *l, const config_setting_t *s, const char *key, int type) {
        int t = config_setting_type(s);

        if (t == type || (type == CONFIG_TYPE_INT && t == CONFIG_TYPE_INT64))
                return 0;
        return fail(l, s, key, "expected %s, got %s", type_name(type), type_name(t));
}

/* "prefix.name", or name alone; a key too long for buf is cut: it only names the setting
 * in messages. */
static void key_join(char *buf, size_t size, const char *prefix, const char *name) {
        size_t n;

        (void) hvt_strscpy(buf, size, prefix);
        n = strlen(buf);
        if (*prefix && n + 1 < size) {
                buf[n++] = '.';
                buf[n] = '\0';
        }
        (void) hvt_strscpy(buf + n, size - n, name);
}

static int check_timeout_pair(struct loader *l, const config_setting_t *s, const char *key,
                              enum hvt_attr_id id) {
        int mine = id == HVT_ATTR_TIMEOUT, other = !mine;

        if (l->timeout_at[other].line > 0)
                return fail(l, s, key,
                            "device.timeout and queue.io_timeout are the same kernel setting "
                            "(the request timeout), the other is set at %s:%d: set only one of them",
                            l->timeout_at[other].file, l->timeout_at[other].line);
        if (l->timeout_at[mine].line == 0) {
                (void) hvt_strscpy(l->timeout_at[mine].file, sizeof(l->timeout_at[mine].file),
                                   resolve_file(l, config_setting_source_file(s)));
                l->timeout_at[mine].line = (int) config_setting_source_line(s);
        }
        return 0;
}

static int parse_value(struct loader *l, const config_setting_t *s, const char *key,
                       enum hvt_attr_id id, struct hvt_setting *out) {
        const struct hvt_attr *a = hvt_attr_get(id);
        int r;

        if (a->kind == HVT_VALUE_SCHEDULER) {
                const char *name;
                char q[QUOTE_MAX];

                r = expect_type(l, s, key, CONFIG_TYPE_STRING);
                if (r < 0)
                        return r;
                name = config_setting_get_string(s);
                if (hvt_setting_set_sched(out, name) < 0)
                        return fail(l, s, key,
                                    "%s is not a scheduler name (letters, digits, '_' and '-', "
                                    "not starting with '-', at most %d characters)",
                                    quote(name, q), HVT_SCHED_NAME_MAX - 1);
                return 0;
        }

        r = expect_type(l, s, key, CONFIG_TYPE_INT);
        if (r < 0)
                return r;
        long long v = config_setting_get_int64(s);
        if (hvt_setting_set_int(out, id, v) < 0)
                return fail(l, s, key, "%lld is out of range, the kernel accepts %" PRId64 "..%" PRId64,
                            v, a->min, a->max);
        if (id == HVT_ATTR_TIMEOUT || id == HVT_ATTR_IO_TIMEOUT)
                return check_timeout_pair(l, s, key, id);
        return 0;
}

/* what ("unknown key", with the keys known), and the key meant where one of known is near. */
static int fail_unknown(struct loader *l, const config_setting_t *s, const char *key, const char *what,
                        const char *const *known, size_t n) {
        const char *near = hvt_suggest(config_setting_name(s), known, n);

        if (near)
                return fail(l, s, key, "%s, did you mean %s?", what, near);
        return fail(l, s, key, "%s", what);
}

static int fail_unknown_attr(struct loader *l, const config_setting_t *s, const char *key, enum hvt_group group) {
        const char *known[_HVT_ATTR_MAX];
        size_t n = 0;

        for (unsigned id = 0; id < _HVT_ATTR_MAX; id++)
                if (hvt_attr_get(id)->group == group)
                        known[n++] = hvt_attr_get(id)->name;
        return fail_unknown(l, s, key, "unknown key", known, n);
}

/* One "queue = { ... };" or "device = { ... };" group. */
static int parse_group(struct loader *l, const config_setting_t *g, const char *prefix,
                       enum hvt_group group, struct hvt_setting settings[static _HVT_ATTR_MAX],
                       struct hvt_origin origins[static _HVT_ATTR_MAX]) {
        char key[64];
        int r;

        key_join(key, sizeof(key), prefix, hvt_group_name(group));
        r = expect_type(l, g, key, CONFIG_TYPE_GROUP);
        if (r < 0)
                return r;

        for (int i = 0; i < config_setting_length(g); i++) {
                const config_setting_t *s = config_setting_get_elem(g, (unsigned) i);
                const char *name = config_setting_name(s);
                int id;

                snprintf(key, sizeof(key), "%s%s%s.%s", prefix, *prefix ? "." : "",
                         hvt_group_name(group), name);
                id = hvt_attr_lookup(group, name);
                if (id < 0)
                        return fail_unknown_attr(l, s, key, group);
                r = parse_value(l, s, key, (enum hvt_attr_id) id, &settings[id]);
                if (r >= 0)
                        r = origin_of(l, s, &origins[id]);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int match_string(struct loader *l, const config_setting_t *s, const char *key,
                        char *dst, size_t size) {
        const char *v;
        size_t n;
        int r;

        r = expect_type(l, s, key, CONFIG_TYPE_STRING);
        if (r < 0)
                return r;
        v = config_setting_get_string(s);
        /* Trailing blanks are SCSI padding: "Msft    " and "Msft" are the same vendor, as
         * classify.c strips them from what the disk reports. */
        n = strlen(v);
        while (n > 0 && isspace((unsigned char) v[n - 1]))
                n--;
        if (n >= size) {
                char q[QUOTE_MAX];

                return fail(l, s, key, "%s is longer than the SCSI field (%zu characters): it can never match",
                            quote(v, q), size - 1);
        }
        hvt_strip_copy(dst, size, v);
        return 0;
}

static int parse_uint(struct loader *l, const config_setting_t *s, const char *key,
                      long long max, long long *ret) {
        int r = expect_type(l, s, key, CONFIG_TYPE_INT);
        long long v = 0;

        if (r < 0)
                return r;
        v = config_setting_get_int64(s);
        if (v < 0 || v > max)
                return fail(l, s, key, "%lld is out of range 0..%lld", v, max);
        *ret = v;
        return 0;
}

static int parse_match_key(struct loader *l, const config_setting_t *s, const char *key,
                           struct hvt_match *m) {
        const char *name = config_setting_name(s);
        char q[QUOTE_MAX];
        long long v = 0;
        int r;

        if (strcmp(name, "kind") == 0) {
                r = expect_type(l, s, key, CONFIG_TYPE_STRING);
                if (r < 0)
                        return r;
                r = hvt_kind_from_string(config_setting_get_string(s));
                if (r < 0 || r == HVT_KIND_UNKNOWN)
                        return fail(l, s, key, "%s is not a controller kind (scsi, ide, fc, nvme-accelerator, "
                                    "nvme-direct or nvme-direct-v2)", quote(config_setting_get_string(s), q));
                m->kind = (enum hvt_kind) r;
                m->fields |= HVT_MATCH_KIND;
        } else if (strcmp(name, "role") == 0) {
                r = expect_type(l, s, key, CONFIG_TYPE_STRING);
                if (r < 0)
                        return r;
                r = hvt_role_from_string(config_setting_get_string(s));
                if (r < 0)
                        return fail(l, s, key, "%s is not a role (os, data, resource, local or other)",
                                    quote(config_setting_get_string(s), q));
                m->role = (enum hvt_role) r;
                m->fields |= HVT_MATCH_ROLE;
        } else if (strcmp(name, "controller") == 0) {
                r = expect_type(l, s, key, CONFIG_TYPE_STRING);
                if (r < 0)
                        return r;
                if (hvt_guid_normalize(config_setting_get_string(s), m->controller) < 0)
                        return fail(l, s, key, "%s is not a VMBus device id "
                                    "({xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx})",
                                    quote(config_setting_get_string(s), q));
                m->fields |= HVT_MATCH_CONTROLLER;
        } else if (strcmp(name, "lun") == 0) {
                r = parse_uint(l, s, key, UINT32_MAX, &v);
                if (r < 0)
                        return r;
                m->lun = (uint64_t) v;
                m->fields |= HVT_MATCH_LUN;
        } else if (strcmp(name, "host") == 0) {
                r = parse_uint(l, s, key, UINT32_MAX, &v);
                if (r < 0)
                        return r;
                m->host = (unsigned) v;
                m->fields |= HVT_MATCH_HOST;
        } else if (strcmp(name, "vendor") == 0) {
                r = match_string(l, s, key, m->vendor, sizeof(m->vendor));
                if (r < 0)
                        return r;
                m->fields |= HVT_MATCH_VENDOR;
        } else if (strcmp(name, "model") == 0) {
                r = match_string(l, s, key, m->model, sizeof(m->model));
                if (r < 0)
                        return r;
                m->fields |= HVT_MATCH_MODEL;
        } else
                return fail_unknown(l, s, key, "unknown match key (kind, role, controller, lun, host, vendor, model)",
                                    (const char *const[]) { "kind", "role", "controller", "lun", "host", "vendor", "model" }, 7);
        return 0;
}

static int parse_override(struct loader *l, const config_setting_t *o, size_t index,
                          struct hvt_override *ret) {
        struct hvt_override ov = {};
        const config_setting_t *match = NULL;
        char prefix[32], key[64];
        bool sets = false;
        int r;

        snprintf(prefix, sizeof(prefix), "override[%zu]", index);
        r = expect_type(l, o, prefix, CONFIG_TYPE_GROUP);
        if (r < 0)
                return r;

        for (int i = 0; i < config_setting_length(o); i++) {
                const config_setting_t *s = config_setting_get_elem(o, (unsigned) i);
                const char *name = config_setting_name(s);

                key_join(key, sizeof(key), prefix, name);
                if (strcmp(name, "match") == 0) {
                        r = expect_type(l, s, key, CONFIG_TYPE_GROUP);
                        if (r < 0)
                                return r;
                        for (int j = 0; j < config_setting_length(s); j++) {
                                const config_setting_t *m = config_setting_get_elem(s, (unsigned) j);
                                char mkey[64];

                                key_join(mkey, sizeof(mkey), key, config_setting_name(m));
                                r = parse_match_key(l, m, mkey, &ov.match);
                                if (r < 0)
                                        return r;
                        }
                        match = s;
                } else if (strcmp(name, "queue") == 0 || strcmp(name, "device") == 0) {
                        r = parse_group(l, s, prefix, name[0] == 'q' ? HVT_GROUP_QUEUE : HVT_GROUP_DEVICE,
                                        ov.settings, ov.origin);
                        if (r < 0)
                                return r;
                        sets = sets || config_setting_length(s) > 0;
                } else
                        return fail_unknown(l, s, key, "unknown key (match, queue, device)",
                                            (const char *const[]) { "match", "queue", "device" }, 3);
        }

        if (!match)
                return fail(l, o, prefix, "has no match group (use match = {}; for every disk)");
        if (!sets)
                return fail(l, o, prefix, "sets nothing: give it a queue or device group");
        r = origin_of(l, o, &ov.at);
        if (r < 0)
                return r;
        *ret = ov;
        return 0;
}

/* A file's overrides come after those of the files before it (the main file's first): as
 * within a file, a later one wins per attribute, so a later file's do (hvt_policy_plan()). A
 * message numbers them in their file, where the operator finds them. */
static int parse_overrides(struct loader *l, const config_setting_t *list, struct hvt_config *c) {
        struct hvt_override *grown;
        int n, r;

        if (config_setting_type(list) != CONFIG_TYPE_LIST)
                return fail(l, list, "override", "expected a list ( {...}, ... ), got %s",
                            type_name(config_setting_type(list)));
        n = config_setting_length(list);
        if (n == 0)
                return 0;
        grown = realloc(c->overrides, (c->n_overrides + (size_t) n) * sizeof(*c->overrides));
        if (!grown)
                return -ENOMEM;
        c->overrides = grown;
        for (int i = 0; i < n; i++) {
                r = parse_override(l, config_setting_get_elem(list, (unsigned) i), (size_t) i,
                                   &c->overrides[c->n_overrides]);
                if (r < 0)
                        return r;
                c->n_overrides++;
        }
        return 0;
}

/* A setting that is no disk attribute, for the listing: the last file's replaces an earlier's. */
static int note_key(struct loader *l, const config_setting_t *s, const char *key) {
        struct hvt_config *c = l->config;
        struct hvt_config_key *k = NULL, *grown;

        for (size_t i = 0; i < c->n_keys && !k; i++)
                if (strcmp(c->keys[i].name, key) == 0)
                        k = &c->keys[i];
        if (!k) {
                grown = realloc(c->keys, (c->n_keys + 1) * sizeof(*grown));
                if (!grown)
                        return -ENOMEM;
                c->keys = grown;
                k = &c->keys[c->n_keys++];
                *k = (struct hvt_config_key) {};
                (void) hvt_strscpy(k->name, sizeof(k->name), key);
        }
        switch (config_setting_type(s)) {
        case CONFIG_TYPE_BOOL:
                snprintf(k->value, sizeof(k->value), "%s", config_setting_get_bool(s) ? "true" : "false");
                break;
        case CONFIG_TYPE_STRING:
                snprintf(k->value, sizeof(k->value), "\"%s\"", config_setting_get_string(s));
                break;
        default:
                snprintf(k->value, sizeof(k->value), "%lld", config_setting_get_int64(s));
                break;
        }
        return origin_of(l, s, &k->origin);
}

static int parse_verify_interval(struct loader *l, const config_setting_t *s, struct hvt_config *c) {
        long long v = 0;
        int r = parse_uint(l, s, "verify_interval", HVT_VERIFY_INTERVAL_MAX, &v);

        if (r < 0)
                return r;
        c->verify_interval = (unsigned) v;
        return 0;
}

static int parse_bool(struct loader *l, const config_setting_t *s, const char *key, bool *ret) {
        int r = expect_type(l, s, key, CONFIG_TYPE_BOOL);

        if (r < 0)
                return r;
        *ret = config_setting_get_bool(s);
        return 0;
}

/* The file node_exporter's textfile collector reads: it takes only *.prom names, and hvtuned
 * writes its temporary file beside it, so a directory is named by an absolute path. */
static int parse_metrics_file(struct loader *l, const config_setting_t *s, struct hvt_config *c) {
        int r = expect_type(l, s, "metrics_file", CONFIG_TYPE_STRING);
        const char *v, *base;
        char buf[192];

        if (r < 0)
                return r;
        v = config_setting_get_string(s);
        base = strrchr(v, '/');
        if (v[0] != '/' || strlen(v) >= PATH_MAX - 16)
                return fail(l, s, "metrics_file", "%s is not an absolute path", quote(v, buf));
        if (strlen(base) <= strlen("/.prom") || strcmp(v + strlen(v) - 5, ".prom") != 0)
                return fail(l, s, "metrics_file", "%s does not end in NAME.prom, the only files "
                            "node_exporter's textfile collector reads", quote(v, buf));
        for (const char *p = v; *p; p++)
                if ((unsigned char) *p < ' ' || *p == 0x7f)
                        return fail(l, s, "metrics_file", "%s holds a control character", quote(v, buf));
        free(c->metrics_file);
        c->metrics_file = strdup(v);
        return c->metrics_file ? 0 : -ENOMEM;
}

static int parse_host(struct loader *l, const config_setting_t *g, struct hvt_host_config *h) {
        int r = expect_type(l, g, "host", CONFIG_TYPE_GROUP);

        for (int i = 0; r >= 0 && i < config_setting_length(g); i++) {
                const config_setting_t *s = config_setting_get_elem(g, (unsigned) i);
                const char *name = config_setting_name(s);
                char key[64];
                long long v = 0;

                key_join(key, sizeof(key), "host", name);
                if (strcmp(name, "max_hw_queues") == 0) {
                        r = parse_uint(l, s, key, UINT32_MAX, &v);
                        if (r >= 0) {
                                h->max_hw_queues = (unsigned) v;
                                h->max_hw_queues_set = true;
                        }
                } else if (strcmp(name, "reprobe_idle_controllers") == 0) {
                        r = expect_type(l, s, key, CONFIG_TYPE_BOOL);
                        if (r >= 0)
                                h->reprobe_idle_controllers = config_setting_get_bool(s);
                } else
                        r = fail_unknown(l, s, key, "unknown key (max_hw_queues, reprobe_idle_controllers)",
                                         (const char *const[]) { "max_hw_queues", "reprobe_idle_controllers" }, 2);
                if (r >= 0)
                        r = note_key(l, s, key);
        }
        return r;
}

/* contested = { queue = { read_ahead_kb = "insist"; }; device = { timeout = "yield"; }; };
 * what hvtuned does when another program keeps rewriting an attribute (track.h). */
static int parse_contested(struct loader *l, const config_setting_t *g, struct hvt_config *c) {
        int r = expect_type(l, g, "contested", CONFIG_TYPE_GROUP);

        for (int i = 0; r >= 0 && i < config_setting_length(g); i++) {
                const config_setting_t *grp = config_setting_get_elem(g, (unsigned) i);
                const char *gname = config_setting_name(grp);
                bool queue = strcmp(gname, "queue") == 0;
                char key[64], q[QUOTE_MAX];

                key_join(key, sizeof(key), "contested", gname);
                if (!queue && strcmp(gname, "device") != 0)
                        return fail_unknown(l, grp, key, "unknown key (queue, device)",
                                            (const char *const[]) { "queue", "device" }, 2);
                r = expect_type(l, grp, key, CONFIG_TYPE_GROUP);
                for (int j = 0; r >= 0 && j < config_setting_length(grp); j++) {
                        const config_setting_t *s = config_setting_get_elem(grp, (unsigned) j);
                        int id = hvt_attr_lookup(queue ? HVT_GROUP_QUEUE : HVT_GROUP_DEVICE, config_setting_name(s));
                        const char *v;

                        snprintf(key, sizeof(key), "contested.%s.%s", gname, config_setting_name(s));
                        if (id < 0)
                                return fail_unknown_attr(l, s, key, queue ? HVT_GROUP_QUEUE : HVT_GROUP_DEVICE);
                        r = expect_type(l, s, key, CONFIG_TYPE_STRING);
                        if (r < 0)
                                return r;
                        v = config_setting_get_string(s);
                        if (strcmp(v, "insist") == 0)
                                c->contest_insist |= UINT32_C(1) << id;
                        else if (strcmp(v, "yield") == 0)
                                c->contest_insist &= ~(UINT32_C(1) << id);
                        else
                                return fail(l, s, key, "%s is neither \"yield\" nor \"insist\"", quote(v, q));
                        r = note_key(l, s, key);
                }
        }
        return r;
}

static const char *const top_keys[] = {
        "queue", "device", "host", "override", "verify_interval", "restore_on_stop", "platform_defaults",
        "builtin_policy", "metrics_file", "contested",
};

static int parse_root(struct loader *l, const config_setting_t *root, struct hvt_config *c) {
        int r;

        for (int i = 0; i < config_setting_length(root); i++) {
                const config_setting_t *s = config_setting_get_elem(root, (unsigned) i);
                const char *name = config_setting_name(s);

                if (strcmp(name, "queue") == 0)
                        r = parse_group(l, s, "", HVT_GROUP_QUEUE, c->settings, c->origin);
                else if (strcmp(name, "device") == 0)
                        r = parse_group(l, s, "", HVT_GROUP_DEVICE, c->settings, c->origin);
                else if (strcmp(name, "host") == 0)
                        r = parse_host(l, s, &c->host);
                else if (strcmp(name, "override") == 0)
                        r = parse_overrides(l, s, c);
                else if (strcmp(name, "verify_interval") == 0)
                        r = parse_verify_interval(l, s, c);
                else if (strcmp(name, "restore_on_stop") == 0)
                        r = parse_bool(l, s, name, &c->restore_on_stop);
                else if (strcmp(name, "platform_defaults") == 0)
                        r = parse_bool(l, s, name, &c->platform_defaults);
                else if (strcmp(name, "builtin_policy") == 0)
                        r = parse_bool(l, s, name, &c->builtin_policy);
                else if (strcmp(name, "metrics_file") == 0)
                        r = parse_metrics_file(l, s, c);
                else if (strcmp(name, "contested") == 0)
                        r = parse_contested(l, s, c);
                else
                        r = fail_unknown(l, s, name, "unknown key (queue, device, host, override, "
                                         "verify_interval, restore_on_stop, platform_defaults, builtin_policy, metrics_file, "
                                         "contested)",
                                         top_keys, ELEMENTSOF(top_keys));
                if (r >= 0 && config_setting_is_scalar(s))
                        r = note_key(l, s, name);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The built-in policy, in place of a missing main file: queue.scheduler = "none". */
static void builtin_policy(struct hvt_config *c) {
        (void) hvt_setting_set_sched(&c->settings[HVT_ATTR_SCHEDULER], "none");
        c->origin[HVT_ATTR_SCHEDULER] = (struct hvt_origin) { .kind = HVT_ORIGIN_POLICY };
}

/* builtin_policy = false, in the last file that names it: the drop-ins are laid over nothing
 * where no main file exists. The platform values are platform_defaults' alone. */
static void drop_builtin_policy(struct hvt_config *c) {
        for (size_t i = 0; i < _HVT_ATTR_MAX; i++)
                if (c->origin[i].kind == HVT_ORIGIN_POLICY) {
                        c->settings[i] = (struct hvt_setting) {};
                        c->origin[i] = (struct hvt_origin) {};
                }
}

static int io_error(struct hvt_config_error *err, const char *path, int error) {
        *err = (struct hvt_config_error) {};
        (void) hvt_strscpy(err->file, sizeof(err->file), path);
        snprintf(err->message, sizeof(err->message), "cannot read: %s", strerror(error));
        return -error;
}

/* Every setting comes from a text that was checked: the main file's, or a part's. libconfig
 * 1.5 and config-scan.c agree on where an @include is (config-scan.c rewrites each one), and
 * this holds them to it: an @include the scan missed would name a file nobody checked. */
static int sources_checked(struct loader *l, const config_setting_t *s) {
        const char *file = config_setting_source_file(s);

        if (file && !hvt_config_source_name(l->src, file))
                return fail(l, NULL, config_setting_name(s),
                            "read from %s, which was not checked: refused", file);
        for (int i = 0; i < config_setting_length(s); i++) {
                int r = sources_checked(l, config_setting_get_elem(s, (unsigned) i));

                if (r < 0)
                        return r;
        }
        return 0;
}

/* The word at p, when it is a bare value: letters and '_' only, then (after blanks) what ends
 * a value (';', ',', '}' or the end of the line). Returns its length, 0 for none. */
static size_t bare_word(const char *p) {
        size_t len = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_");
        const char *q = p + len;

        q += strspn(q, " \t");
        return len > 0 && strchr(";,}\n", *q) ? len : 0;
}

/* A bare word after an "=" or ":" on line n of text (not true or false, which libconfig
 * reads so): libconfig calls anything else a syntax error. An "=" or ":" inside a string,
 * and whatever follows a comment's start, is not one. */
static bool bare_value(const char *text, int n, char *buf, size_t size) {
        const char *p = text;

        for (int i = 1; p && i < n; i++)
                if ((p = strchr(p, '\n')))
                        p++;
        if (!p || n < 1)
                return false;
        for (; *p && *p != '\n'; p++) {
                size_t len;

                if (*p == '"') {
                        /* Past the string, its escapes and all: an unterminated one ends the line. */
                        while (*++p && *p != '"' && *p != '\n')
                                if (*p == '\\' && p[1] && p[1] != '\n')
                                        p++;
                        if (*p != '"')
                                return false;
                        continue;
                }
                if (*p == '#' || (*p == '/' && (p[1] == '/' || p[1] == '*')))
                        return false;
                if (*p != '=' && *p != ':')
                        continue;
                p += 1 + strspn(p + 1, " \t");
                len = bare_word(p);
                if (len == 0 || len >= size || (len == 4 && strncasecmp(p, "true", 4) == 0) ||
                    (len == 5 && strncasecmp(p, "false", 5) == 0)) {
                        p--;  /* the loop's p++ looks at *p again: it may open a string */
                        continue;
                }
                memcpy(buf, p, len);
                buf[len] = '\0';
                return true;
        }
        return false;
}

/* libconfig's message, and for a bare word where a value goes what a value is written as:
 * "restore_on_stop = yes;" is a bare "syntax error" to libconfig. Only the main text is known
 * here, not an included file's (text NULL): there the message stays libconfig's. */
static void syntax_error_text(const char *why, const char *text, int line, char *buf, size_t size) {
        static const char *const booleans[] = { "yes", "no", "on", "off", "enabled", "disabled" };
        char word[32];

        if (!text || strcmp(why, "syntax error") != 0 || !bare_value(text, line, word, sizeof(word))) {
                (void) hvt_strscpy(buf, size, why);
                return;
        }
        for (size_t i = 0; i < ELEMENTSOF(booleans); i++)
                if (strcasecmp(word, booleans[i]) == 0) {
                        snprintf(buf, size, "syntax error: a boolean is written true or false, not %s", word);
                        return;
                }
        snprintf(buf, size, "syntax error: a string is written in double quotes (\"%s\"), a boolean as true "
                 "or false", word);
}

static void config_source_donep(struct hvt_config_source *src) {
        hvt_config_source_done(src);
}

/* Reads one file (the main one or a drop-in) into c, over what the files before it set. Returns
 * 0, -ENOENT with err empty when the file does not exist, or -errno with err set (but for
 * -ENOMEM). */
static int load_file(struct loader *l, const char *path, struct hvt_config *c) {
        _cleanup_(config_destroyp) config_t *cfg = NULL;
        _cleanup_(config_source_donep) struct hvt_config_source src = {};
        _cleanup_free_ char *dir = NULL;
        config_t storage;
        int r;

        l->path = path;
        l->src = &src;
        dir = strdup(path);
        if (!dir)
                return -ENOMEM;

        /* Before libconfig: a file someone else could have written is not even parsed, and
         * what libconfig parses is the text that was checked. A relative @include is found
         * in the directory of the file that holds the first one (as libconfig would find
         * every include, nested ones too, with the include directory hvtuned used to give
         * it): the main file's, or the drop-in directory. */
        *l->err = (struct hvt_config_error) {};
        r = hvt_config_scan(path, dirname(dir), &l->budget, &src, l->err);
        if (r == -ENOENT && !*l->err->file)
                return r;
        if (r < 0 && r != -ENOMEM && !*l->err->file)
                return io_error(l->err, path, -r);
        if (r < 0)
                return r;

        config_init(&storage);
        cfg = &storage;
        if (!config_read_string(cfg, src.text)) {
                *l->err = (struct hvt_config_error) { .line = config_error_line(cfg) };
                (void) hvt_strscpy(l->err->file, sizeof(l->err->file), resolve_file(l, config_error_file(cfg)));
                syntax_error_text(config_error_text(cfg), config_error_file(cfg) ? NULL : src.text,
                                  config_error_line(cfg), l->err->message, sizeof(l->err->message));
                return -EINVAL;
        }
        r = sources_checked(l, config_root_setting(cfg));
        if (r < 0)
                return -EPERM;
        return parse_root(l, config_root_setting(cfg), c);
}

static int add_file(struct hvt_config *c, const char *path) {
        char **grown = realloc(c->files, (c->n_files + 1) * sizeof(*c->files));

        if (!grown)
                return -ENOMEM;
        c->files = grown;
        c->files[c->n_files] = strdup(path);
        if (!c->files[c->n_files])
                return -ENOMEM;
        c->n_files++;
        return 0;
}

int hvt_config_load(const char *path, bool missing_ok, struct hvt_config **ret,
                    struct hvt_config_error *err) {
        _cleanup_(hvt_config_freep) struct hvt_config *c = NULL;
        char **dropins = NULL;
        size_t n_dropins = 0;
        bool main_missing = false;
        /* Not .budget = HVT_CONFIG_BUDGET: gcc 10 (Debian 11) takes the compound literal for the
         * whole initializer and warns of the fields after it (-Wmissing-field-initializers). */
        struct loader l = { .err = err };
        int r;

        l.budget = HVT_CONFIG_BUDGET;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->verify_interval = HVT_VERIFY_INTERVAL_DEFAULT;
        c->restore_on_stop = true;
        c->platform_defaults = true;
        c->builtin_policy = true;
        c->path = strdup(path);
        if (!c->path)
                return -ENOMEM;
        l.config = c;

        r = load_file(&l, path, c);
        if (r == -ENOENT && missing_ok) {
                /* The built-in policy stands for the main file where it does not exist: the
                 * drop-ins lay their settings over it, as over a main file. */
                main_missing = true;
                builtin_policy(c);
        } else if (r == -ENOENT)
                return io_error(err, path, ENOENT);
        else if (r < 0)
                return r;
        else if (add_file(c, path) < 0)
                return -ENOMEM;

        /* The drop-ins, after the main file: each over what the files before it set. One that
         * is refused refuses the configuration, as a refused main file does. */
        r = hvt_config_dropins(path, &dropins, &n_dropins, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n_dropins && r >= 0; i++) {
                r = load_file(&l, dropins[i], c);
                if (r == -ENOENT && !*err->file)
                        /* Listed, then gone or a dangling symlink: a file of the configuration
                         * that cannot be read. */
                        r = io_error(err, dropins[i], ENOENT);
                if (r >= 0)
                        r = add_file(c, dropins[i]);
        }
        hvt_strv_free(dropins, n_dropins);
        if (r < 0)
                return r;
        c->n_dropins = n_dropins;
        if (!c->builtin_policy)
                drop_builtin_policy(c);
        if (main_missing && n_dropins == 0) {
                /* No file at all: "built-in defaults". */
                free(c->path);
                c->path = NULL;
        }

        *ret = TAKE_PTR(c);
        return 0;
}

void hvt_config_free(struct hvt_config *c) {
        if (!c)
                return;
        free(c->path);
        hvt_strv_free(c->files, c->n_files);
        free(c->metrics_file);
        free(c->overrides);
        free(c->keys);
        hvt_strv_free(c->origin_files, c->n_origin_files);
        free(c);
}

void hvt_config_describe(const struct hvt_config *c, char *buf, size_t size) {
        size_t n = c->n_dropins;

        if (!c->path)
                snprintf(buf, size, "no configuration file, built-in defaults");
        else if (n == 0)
                snprintf(buf, size, "%s", c->path);
        else if (c->n_files > n)
                snprintf(buf, size, "%s (+%zu drop-in%s)", c->path, n, n == 1 ? "" : "s");
        else
                snprintf(buf, size, "%s.d (%zu drop-in%s, no %s)", c->path, n, n == 1 ? "" : "s", c->path);
}

void hvt_config_error_format(const struct hvt_config_error *err, char *buf, size_t size) {
        char line[16] = "";

        if (err->line > 0)
                snprintf(line, sizeof(line), ":%d", err->line);
        snprintf(buf, size, "%s%s: %s%s%s", err->file, line, err->key, *err->key ? ": " : "",
                 err->message);
}
