/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the listing of a configuration's effective settings with where each comes from, as
 * `hvtuned --check-config` prints it (in the spirit of `systemd-analyze cat-config`). */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "config-show.h"
#include "escape.h"
#include "macro.h"
#include "policy.h"

/* The listing's comment column: "key = value" is padded to it. */
#define COLUMN 44

/* The value and the origin come from files (a path, a string): escaped, one line each. */
static void entry(FILE *f, const char *indent, const char *key, const char *op, const char *value,
                  const char *origin, const char *note) {
        _cleanup_free_ char *v = hvt_escape_dup(value), *o = hvt_escape_dup(origin);
        int n = fprintf(f, "%s%s %s %s;", indent, key, op, strna(v));

        fprintf(f, "%*s# %s%s%s\n", n > 0 && n < COLUMN ? COLUMN - n : 1, "", strna(o), *note ? ", " : "", note);
}

static void setting(FILE *f, const char *indent, enum hvt_attr_id id, const struct hvt_setting *s,
                    const struct hvt_origin *o, const char *note) {
        char key[48], value[HVT_VALUE_MAX + 2], from[PATH_MAX + 32];

        (void) hvt_attr_format_path(id, key, sizeof(key));
        *strchr(key, '/') = '.';
        if (hvt_attr_get(id)->kind == HVT_VALUE_SCHEDULER)
                snprintf(value, sizeof(value), "\"%s\"", s->text);
        else
                snprintf(value, sizeof(value), "%s", s->text);
        hvt_origin_format(o, from, sizeof(from));
        entry(f, indent, key, s->at_most ? "<=" : "=", value, from, note);
}

/* The platform values where no file's top-level group sets the attribute: what they are on a
 * disk of each kind they differ for. */
static void platform(FILE *f, const struct hvt_config *c) {
        const struct hvt_disk scsi = { .kind = HVT_KIND_SCSI }, nvme = { .kind = HVT_KIND_NVME_ACCELERATOR };
        const struct hvt_origin o = { .kind = HVT_ORIGIN_PLATFORM };
        struct hvt_setting on_scsi[_HVT_ATTR_DISK_MAX], on_nvme[_HVT_ATTR_DISK_MAX];

        if (!c->platform_defaults)
                return;
        hvt_platform_defaults(&scsi, on_scsi);
        hvt_platform_defaults(&nvme, on_nvme);
        for (unsigned id = 0; id < _HVT_ATTR_DISK_MAX; id++)
                if (on_nvme[id].set && !c->settings[id].set)
                        setting(f, "", id, &on_nvme[id], &o,
                                on_scsi[id].set ? "every disk hvtuned manages" : "Azure's NVMe disks");
}

static void match_text(const struct hvt_match *m, char *buf, size_t size) {
        size_t off = 0;

#define ADD(...) do { if (off < size) off += (size_t) snprintf(buf + off, size - off, __VA_ARGS__); } while (0)
        ADD("{");
        if (m->fields & HVT_MATCH_KIND)
                ADD(" kind = \"%s\";", hvt_kind_to_string(m->kind));
        if (m->fields & HVT_MATCH_ROLE)
                ADD(" role = \"%s\";", hvt_role_to_string(m->role));
        if (m->fields & HVT_MATCH_CONTROLLER)
                ADD(" controller = \"%s\";", m->controller);
        if (m->fields & HVT_MATCH_LUN)
                ADD(" lun = %" PRIu64 ";", m->lun);
        if (m->fields & HVT_MATCH_HOST)
                ADD(" host = %u;", m->host);
        if (m->fields & HVT_MATCH_VENDOR)
                ADD(" vendor = \"%s\";", m->vendor);
        if (m->fields & HVT_MATCH_MODEL)
                ADD(" model = \"%s\";", m->model);
        ADD(" }");
#undef ADD
}

void hvt_config_show(const struct hvt_config *c, FILE *f) {
        char from[PATH_MAX + 32], match[512];

        for (unsigned id = 0; id < _HVT_ATTR_DISK_MAX; id++)
                if (c->settings[id].set)
                        setting(f, "", id, &c->settings[id], &c->origin[id], "");
        platform(f, c);
        for (size_t i = 0; i < c->n_keys; i++) {
                hvt_origin_format(&c->keys[i].origin, from, sizeof(from));
                entry(f, "", c->keys[i].name, "=", c->keys[i].value, from, "");
        }
        for (size_t i = 0; i < c->n_overrides; i++) {
                const struct hvt_override *o = &c->overrides[i];

                match_text(&o->match, match, sizeof(match));
                hvt_origin_format(&o->at, from, sizeof(from));
                entry(f, "", "override.match", "=", match, from, "");
                for (unsigned id = 0; id < _HVT_ATTR_DISK_MAX; id++)
                        if (o->settings[id].set)
                                setting(f, "        ", id, &o->settings[id], &o->origin[id], "");
        }
}
