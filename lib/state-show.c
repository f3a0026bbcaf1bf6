/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the two forms of state-show.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "escape.h"
#include "hwqueues.h"
#include "json.h"
#include "macro.h"
#include "state-show.h"

#define NOT_RUNNING "hvtuned is not running: from its records and sysfs (no repair history)"
#define COLS_MAX 8

/* A table: every cell escaped, the columns as wide as their widest cell. A row of one long
 * text (a disk's repairs) starts in a column and counts in no width. */
struct table {
        size_t cols, n;
        char **cell;
        bool *spans;     /* [n]: the row is a span */
        bool oom;
};

static void row(struct table *t, ...) {
        char **p = reallocarray(t->cell, (t->n + 1) * t->cols, sizeof(char *));
        bool *sp = p ? reallocarray(t->spans, t->n + 1, sizeof(bool)) : NULL;
        va_list ap;

        if (p)
                t->cell = p;
        if (!sp) {
                t->oom = true;
                return;
        }
        t->spans = sp;
        sp[t->n] = false;
        va_start(ap, t);
        for (size_t c = 0; c < t->cols; c++) {
                const char *v = va_arg(ap, const char *);
                char *e = hvt_escape_dup(v ? v : "");

                t->oom = t->oom || !e;
                p[t->n * t->cols + c] = e;
        }
        va_end(ap);
        t->n++;
}

/* text from column col on, in a row of its own. */
static void span(struct table *t, size_t col, const char *text) {
        const char *cells[COLS_MAX] = {};

        size_t n = t->n;

        cells[col] = text;
        row(t, cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], cells[6], cells[7]);
        if (t->n > n)
                t->spans[n] = true;
}

static bool is_span(const struct table *t, size_t r) {
        return t->spans[r];
}

static void table_print(FILE *f, struct table *t) {
        size_t width[COLS_MAX] = {};

        for (size_t i = 0; i < t->n * t->cols; i++)
                if (!is_span(t, i / t->cols) && t->cell[i] && strlen(t->cell[i]) > width[i % t->cols])
                        width[i % t->cols] = strlen(t->cell[i]);
        for (size_t r = 0; r < t->n; r++) {
                size_t last = t->cols;

                /* No blanks after the last cell with text. */
                while (last > 0 && (!t->cell[r * t->cols + last - 1] || !*t->cell[r * t->cols + last - 1]))
                        last--;
                for (size_t c = 0; c < last; c++)
                        if (c + 1 < last)
                                fprintf(f, "%-*s  ", (int) width[c], strna(t->cell[r * t->cols + c]));
                        else
                                fputs(strna(t->cell[r * t->cols + c]), f);
                fputc('\n', f);
        }
        for (size_t i = 0; i < t->n * t->cols; i++)
                free(t->cell[i]);
        free(t->cell);
        free(t->spans);
        *t = (struct table) {};
}

static const char *attr_name(enum hvt_attr_id id, char buf[static 48]) {
        if (hvt_attr_format_path(id, buf, 48) < 0)
                (void) hvt_strscpy(buf, 48, "?");
        return buf;
}

static const char *bytes_text(uint64_t bytes, char buf[static 48]) {
        if (bytes == 0)
                return "unknown";
        buf[0] = '~';
        hvt_format_bytes(bytes, buf + 1, 47);
        return buf;
}

/* An estimate made on an assumed request layout says how far it may be off. */
static const char *estimate_text(uint64_t bytes, unsigned band_pct, char buf[static 48]) {
        size_t n;

        bytes_text(bytes, buf);
        n = strlen(buf);
        if (bytes > 0 && band_pct > 0)
                snprintf(buf + n, 48 - n, " +/-%u%%", band_pct);
        return buf;
}

static void time_text(uint64_t usec, char *buf, size_t size) {
        time_t t = (time_t) (usec / 1000000);
        struct tm tm;

        if (usec == 0 || !gmtime_r(&t, &tm) || strftime(buf, size, "%Y-%m-%d %H:%M:%S UTC", &tm) == 0)
                (void) hvt_strscpy(buf, size, "unknown");
}

static const char *current_text(const struct hvt_state_attr *a, char *buf, size_t size) {
        if (a->current_error == 0)
                return a->current;
        snprintf(buf, size, "(%s)", a->current_error == -ENOENT ? "absent" : strerror(-a->current_error));
        return buf;
}

/* What an attribute's row adds: how it stands, what hvtuned last did. */
static void note_text(const struct hvt_state *s, const struct hvt_state_attr *a, char *buf, size_t size) {
        size_t off = 0;

        buf[0] = '\0';
#define ADD(...) do { if (off < size) off += (size_t) snprintf(buf + off, size - off, __VA_ARGS__); } while (0)
        if (a->role == HVT_STATE_YIELDED)
                ADD("yielded to another writer");
        else if (a->role == HVT_STATE_KNOCK_ON)
                ADD("knock-on%s%s%s", *a->left ? " (hvtuned's write left " : "", a->left, *a->left ? ")" : "");
        else if (a->current_outcome == HVT_WOULD_APPLY)
                ADD("differs");
        if (s->running && a->last >= 0 && a->last != HVT_UNCHANGED)
                ADD("%slast %s", off ? "; " : "", hvt_outcome_to_string((enum hvt_outcome) a->last));
        if (s->running && a->error > 0)
                ADD(" (%s)", strerror(a->error));
        if (*a->origin)
                ADD("%sfrom %s", off ? "; " : "", a->origin);
#undef ADD
}

static void show_disks(FILE *f, const struct hvt_state *s) {
        struct table t = { .cols = 8 };

        if (s->n_disk == 0) {
                fputs("No Hyper-V or Azure disk managed.\n", f);
                return;
        }
        row(&t, "DISK", "KIND", "ROLE", "ATTRIBUTE", "CURRENT", "WANTED", "ORIGINAL", "NOTE");
        for (size_t i = 0; i < s->n_disk; i++) {
                const struct hvt_state_disk *d = &s->disk[i];
                char disk_note[160] = "";

                if (s->running && d->repairs > 0) {
                        char when[40], name[48];

                        time_text(d->last_repair_usec, when, sizeof(when));
                        snprintf(disk_note, sizeof(disk_note), "drift repairs: %" PRIu64 ", last %s (%s)%s", d->repairs,
                                 when, d->last_repair_attr >= 0 ? attr_name((enum hvt_attr_id) d->last_repair_attr, name) : "?",
                                 d->paused ? "; repairs paused, reverted too often" : "");
                }
                if (d->n_attr == 0)
                        row(&t, d->name, hvt_kind_to_string(d->kind), hvt_role_to_string(d->role), "(nothing managed)",
                            "", "", "", "");
                for (size_t j = 0; j < d->n_attr; j++) {
                        const struct hvt_state_attr *a = &d->attr[j];
                        char name[48], cur[64], note[160 + HVT_ORIGIN_TEXT_MAX];

                        note_text(s, a, note, sizeof(note));
                        row(&t, j == 0 ? d->name : "", j == 0 ? hvt_kind_to_string(d->kind) : "",
                            j == 0 ? hvt_role_to_string(d->role) : "", attr_name(a->id, name),
                            current_text(a, cur, sizeof(cur)), *a->want ? a->want : "-", *a->orig ? a->orig : "-", note);
                }
                if (*disk_note)
                        span(&t, 3, disk_note);
        }
        table_print(f, &t);
}

static void show_controllers(FILE *f, const struct hvt_state *s) {
        struct table t = { .cols = 7 };

        if (s->n_controller > 0) {
                row(&t, "CONTROLLER", "KIND", "HW QUEUES", "CAN_QUEUE", "ESTIMATE", "OVER CAP", "RECLAIMABLE");
                for (size_t i = 0; i < s->n_controller; i++) {
                        const struct hvt_state_controller *c = &s->controller[i];
                        char name[64], queues[32], can[16], est[48], rec[48];
                        bool known = c->bytes > 0;

                        snprintf(name, sizeof(name), "host%u %s", c->host, c->controller);
                        /* The queues it has, and those the cap gives it once re-probed. */
                        snprintf(queues, sizeof(queues), c->over_cap ? "%u (%u under the cap)" : "%u",
                                 c->nr_hw_queues, c->capped_queues);
                        snprintf(can, sizeof(can), "%u", c->can_queue);
                        row(&t, name, hvt_kind_to_string(c->kind), queues, can, estimate_text(c->bytes, c->band_pct, est),
                            c->over_cap ? (s->driver.cap_support == 0 ? "yes, cannot cap" : "yes") : "no",
                            !c->over_cap ? "-" :
                            known && c->bytes > c->capped_bytes ? estimate_text(c->bytes - c->capped_bytes, c->band_pct, rec) :
                            known ? "none" : "unknown");
                }
                fputc('\n', f);
                table_print(f, &t);
        }
        if (s->n_nvme > 0) {
                t = (struct table) { .cols = 5 };
                row(&t, "NVME", "KIND", "IO QUEUES", "DEPTH", "ESTIMATE");
                for (size_t i = 0; i < s->n_nvme; i++) {
                        const struct hvt_state_nvme *n = &s->nvme[i];
                        char q[16], depth[16], est[48];

                        snprintf(q, sizeof(q), "%u", n->nr_io_queues);
                        snprintf(depth, sizeof(depth), "%u", n->q_depth);
                        row(&t, n->name, hvt_kind_to_string(n->kind), q, depth, estimate_text(n->bytes, n->band_pct, est));
                }
                fputc('\n', f);
                table_print(f, &t);
        }
}

static void show_cap(FILE *f, const struct hvt_state *s) {
        const struct hvt_state_driver *d = &s->driver;
        /* What sysfs and the file say is escaped, as every such text here. */
        _cleanup_free_ char *current = hvt_escape_dup(d->current), *orig = hvt_escape_dup(d->orig);
        size_t over;
        uint64_t bytes = hvt_state_reclaimable(s, &over);
        char cur[64], b[48];

        if (d->cap_support < 0 && d->cap == 0)
                return;
        if (d->current_error == 0)
                snprintf(cur, sizeof(cur), "%s", strna(current));
        else
                snprintf(cur, sizeof(cur), "(%s)", strerror(-d->current_error));
        fputc('\n', f);
        if (d->cap == 0)
                fprintf(f, "hw queue cap: none (hv_storvsc.storvsc_max_hw_queues is %s", cur);
        else
                fprintf(f, "hw queue cap: %u (hv_storvsc.storvsc_max_hw_queues is %s", d->cap, cur);
        fprintf(f, "%s%s%s)\n", *d->orig ? ", original " : "", *d->orig ? strna(orig) : "",
                d->cap_support == 0 ? ", which this kernel lacks" : "");
        if (over == 0)
                fputs("Left to reclaim: nothing, no controller is over the cap\n", f);
        else if (d->cap_support == 0)
                fprintf(f, "Left to reclaim: nothing this kernel can: %zu controller%s over the cap\n", over,
                        over == 1 ? "" : "s");
        else
                fprintf(f, "Left to reclaim: %s on %zu controller%s over the cap, at the next boot or re-probe\n",
                        bytes > 0 ? bytes_text(bytes, b) : "memory unknown (unknown layout)", over, over == 1 ? "" : "s");
}

int hvt_state_show_text(FILE *f, const struct hvt_state *s) {
        _cleanup_free_ char *status = hvt_escape_dup(s->status ? s->status : "");

        if (s->running) {
                char when[40];

                time_text(s->written_usec, when, sizeof(when));
                fprintf(f, "hvtuned is running (pid %d); its state as of %s\n", (int) s->pid, when);
        } else
                fputs(NOT_RUNNING "\n", f);
        if (status && *status)
                fprintf(f, "%s\n", status);
        fputc('\n', f);
        show_disks(f, s);
        show_controllers(f, s);
        show_cap(f, s);
        return ferror(f) ? -EIO : 0;
}

/* JSON: null where there is no value, never "" or 0 that would read as one. */

static void json_value(struct hvt_json *j, const char *key, const char *v) {
        hvt_json_string(j, key, v && *v ? v : NULL);
}

static void json_bytes(struct hvt_json *j, const char *key, uint64_t v, bool known) {
        if (known)
                hvt_json_uint(j, key, v);
        else
                hvt_json_null(j, key);
}

static void json_attr(struct hvt_json *j, const struct hvt_state *s, const struct hvt_state_attr *a) {
        char name[48];

        hvt_json_object(j, NULL);
        hvt_json_string(j, "name", attr_name(a->id, name));
        hvt_json_string(j, "role", hvt_state_role_to_string(a->role));
        json_value(j, "current", a->current_error == 0 ? a->current : NULL);
        if (a->current_error != 0)
                hvt_json_string(j, "current_error", strerror(-a->current_error));
        else
                hvt_json_null(j, "current_error");
        json_value(j, "wanted", a->want);
        json_value(j, "original", a->orig);
        json_value(j, "left", a->left);
        json_value(j, "last", s->running && a->last >= 0 ? hvt_outcome_to_string((enum hvt_outcome) a->last) : NULL);
        json_value(j, "last_error", s->running && a->error > 0 ? strerror(a->error) : NULL);
        json_value(j, "origin", a->origin);
        hvt_json_close_object(j);
}

static void json_disk(struct hvt_json *j, const struct hvt_state *s, const struct hvt_state_disk *d) {
        char name[48];

        hvt_json_object(j, NULL);
        hvt_json_string(j, "name", d->name);
        hvt_json_string(j, "syspath", d->syspath);
        hvt_json_string(j, "kind", hvt_kind_to_string(d->kind));
        hvt_json_string(j, "role", hvt_role_to_string(d->role));
        json_value(j, "controller", d->controller);
        hvt_json_uint(j, "failed", d->failed);
        if (s->running) {
                hvt_json_uint(j, "drift_repairs", d->repairs);
                hvt_json_bool(j, "paused", d->paused);
        } else {
                hvt_json_null(j, "drift_repairs");
                hvt_json_null(j, "paused");
        }
        if (s->running && d->repairs > 0) {
                hvt_json_object(j, "last_repair");
                json_bytes(j, "usec", d->last_repair_usec, d->last_repair_usec > 0);
                json_value(j, "attribute", d->last_repair_attr >= 0 ?
                           attr_name((enum hvt_attr_id) d->last_repair_attr, name) : NULL);
                hvt_json_close_object(j);
        } else
                hvt_json_null(j, "last_repair");
        hvt_json_array(j, "attributes");
        for (size_t i = 0; i < d->n_attr; i++)
                json_attr(j, s, &d->attr[i]);
        hvt_json_close_array(j);
        hvt_json_array(j, "knock_ons");
        for (size_t i = 0; i < d->n_attr; i++)
                if (d->attr[i].role == HVT_STATE_KNOCK_ON)
                        hvt_json_string(j, NULL, attr_name(d->attr[i].id, name));
        hvt_json_close_array(j);
        hvt_json_close_object(j);
}

int hvt_state_show_json(FILE *f, const struct hvt_state *s) {
        struct hvt_json j = hvt_json_new(f);
        size_t over;
        uint64_t reclaim = hvt_state_reclaimable(s, &over);
        bool known = true;

        hvt_json_object(&j, NULL);
        hvt_json_uint(&j, "format", HVT_STATE_JSON_FORMAT);
        hvt_json_bool(&j, "running", s->running);
        if (s->running) {
                hvt_json_int(&j, "pid", s->pid);
                json_bytes(&j, "written_usec", s->written_usec, s->written_usec > 0);
        } else {
                hvt_json_null(&j, "pid");
                hvt_json_null(&j, "written_usec");
        }
        json_value(&j, "summary", s->status);

        hvt_json_object(&j, "driver");
        hvt_json_string(&j, "parameter", "hv_storvsc.storvsc_max_hw_queues");
        hvt_json_uint(&j, "cap", s->driver.cap);
        if (s->driver.cap_support < 0)
                hvt_json_null(&j, "supported");
        else
                hvt_json_bool(&j, "supported", s->driver.cap_support > 0);
        json_bytes(&j, "present_cpus", s->driver.present_cpus, s->driver.present_cpus > 0);
        json_value(&j, "current", s->driver.current_error == 0 ? s->driver.current : NULL);
        json_value(&j, "original", s->driver.orig);
        hvt_json_close_object(&j);

        hvt_json_array(&j, "disks");
        for (size_t i = 0; i < s->n_disk; i++)
                json_disk(&j, s, &s->disk[i]);
        hvt_json_close_array(&j);

        hvt_json_array(&j, "controllers");
        for (size_t i = 0; i < s->n_controller; i++) {
                const struct hvt_state_controller *c = &s->controller[i];
                char name[16];

                snprintf(name, sizeof(name), "host%u", c->host);
                hvt_json_object(&j, NULL);
                hvt_json_string(&j, "host", name);
                json_value(&j, "controller", c->controller);
                hvt_json_string(&j, "kind", hvt_kind_to_string(c->kind));
                hvt_json_uint(&j, "hw_queues", c->nr_hw_queues);
                hvt_json_uint(&j, "can_queue", c->can_queue);
                hvt_json_uint(&j, "capped_queues", c->capped_queues);
                hvt_json_bool(&j, "over_cap", c->over_cap);
                json_bytes(&j, "estimate_bytes", c->bytes, c->bytes > 0);
                json_bytes(&j, "capped_bytes", c->capped_bytes, c->bytes > 0);
                json_bytes(&j, "reclaimable_bytes", c->over_cap && c->bytes > c->capped_bytes ? c->bytes - c->capped_bytes : 0,
                           c->bytes > 0);
                hvt_json_uint(&j, "estimate_band_pct", c->band_pct);
                known = known && (c->bytes > 0 || !c->over_cap);
                hvt_json_close_object(&j);
        }
        hvt_json_close_array(&j);

        hvt_json_array(&j, "nvme_controllers");
        for (size_t i = 0; i < s->n_nvme; i++) {
                const struct hvt_state_nvme *n = &s->nvme[i];

                hvt_json_object(&j, NULL);
                hvt_json_string(&j, "name", n->name);
                hvt_json_string(&j, "kind", hvt_kind_to_string(n->kind));
                hvt_json_uint(&j, "io_queues", n->nr_io_queues);
                hvt_json_uint(&j, "queue_depth", n->q_depth);
                json_bytes(&j, "estimate_bytes", n->bytes, n->bytes > 0);
                hvt_json_uint(&j, "estimate_band_pct", n->band_pct);
                hvt_json_close_object(&j);
        }
        hvt_json_close_array(&j);
        hvt_json_uint(&j, "controllers_over_cap", over);
        json_bytes(&j, "reclaimable_bytes", s->driver.cap_support == 0 ? 0 : reclaim, known);
        hvt_json_close_object(&j);
        return hvt_json_end(&j);
}
