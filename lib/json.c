/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the JSON writer of json.h. */
#include <errno.h>
#include <inttypes.h>

#include "json.h"

void hvt_json_write_string(FILE *f, const char *value) {
        fputc('"', f);
        for (const unsigned char *p = (const unsigned char *) value; *p; p++)
                switch (*p) {
                case '"':
                        fputs("\\\"", f);
                        break;
                case '\\':
                        fputs("\\\\", f);
                        break;
                case '\n':
                        fputs("\\n", f);
                        break;
                case '\t':
                        fputs("\\t", f);
                        break;
                default:
                        if (*p < 0x20 || *p >= 0x7f)
                                fprintf(f, "\\u%04x", *p);
                        else
                                fputc(*p, f);
                }
        fputc('"', f);
}

/* The separator and indentation before an item, and its key. */
static void item(struct hvt_json *j, const char *key) {
        if (j->depth > 0 && j->depth <= HVT_JSON_DEPTH_MAX) {
                if (j->any[j->depth - 1])
                        fputc(',', j->f);
                j->any[j->depth - 1] = true;
                fprintf(j->f, "\n%*s", (int) (2 * j->depth), "");
        }
        if (key) {
                hvt_json_write_string(j->f, key);
                fputs(": ", j->f);
        }
}

static void open_container(struct hvt_json *j, const char *key, char c) {
        item(j, key);
        fputc(c, j->f);
        if (j->depth < HVT_JSON_DEPTH_MAX)
                j->any[j->depth] = false;
        j->depth++;
}

static void close_container(struct hvt_json *j, char c) {
        if (j->depth == 0) {
                j->depth = UINT32_MAX;  /* unbalanced: hvt_json_end() says so */
                return;
        }
        j->depth--;
        if (j->depth < HVT_JSON_DEPTH_MAX && j->any[j->depth])
                fprintf(j->f, "\n%*s", (int) (2 * j->depth), "");
        fputc(c, j->f);
}

void hvt_json_object(struct hvt_json *j, const char *key) {
        open_container(j, key, '{');
}

void hvt_json_array(struct hvt_json *j, const char *key) {
        open_container(j, key, '[');
}

void hvt_json_close_object(struct hvt_json *j) {
        close_container(j, '}');
}

void hvt_json_close_array(struct hvt_json *j) {
        close_container(j, ']');
}

void hvt_json_string(struct hvt_json *j, const char *key, const char *value) {
        item(j, key);
        if (value)
                hvt_json_write_string(j->f, value);
        else
                fputs("null", j->f);
}

void hvt_json_uint(struct hvt_json *j, const char *key, uint64_t value) {
        item(j, key);
        fprintf(j->f, "%" PRIu64, value);
}

void hvt_json_int(struct hvt_json *j, const char *key, int64_t value) {
        item(j, key);
        fprintf(j->f, "%" PRId64, value);
}

void hvt_json_bool(struct hvt_json *j, const char *key, bool value) {
        item(j, key);
        fputs(value ? "true" : "false", j->f);
}

void hvt_json_null(struct hvt_json *j, const char *key) {
        item(j, key);
        fputs("null", j->f);
}

int hvt_json_end(struct hvt_json *j) {
        fputc('\n', j->f);
        if (j->depth != 0)
                return -EINVAL;
        return ferror(j->f) ? -EIO : 0;
}
