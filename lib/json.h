/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: writing JSON (RFC 8259) for tools: objects, arrays, strings, numbers and booleans,
 * indented, to a stdio stream. Strings are escaped here, whatever they hold: '"', '\\' and
 * control bytes as JSON escapes, and every byte from 0x7f as \u00NN, so that a name of bytes
 * that are no UTF-8 still makes valid JSON (read as Latin-1, as hvt_escape() shows them as
 * \xNN). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define HVT_JSON_DEPTH_MAX 16

struct hvt_json {
        FILE *f;
        unsigned depth;
        bool any[HVT_JSON_DEPTH_MAX];  /* the container at that depth has an item already */
};

static inline struct hvt_json hvt_json_new(FILE *f) {
        return (struct hvt_json) { .f = f };
}

/* Each takes the member's key inside an object, NULL inside an array and at the top. Deeper
 * than HVT_JSON_DEPTH_MAX is a caller's bug: the text is then no JSON, and hvt_json_end()
 * says so. */
void hvt_json_object(struct hvt_json *j, const char *key);
void hvt_json_array(struct hvt_json *j, const char *key);
void hvt_json_close_object(struct hvt_json *j);
void hvt_json_close_array(struct hvt_json *j);
/* value NULL is null. */
void hvt_json_string(struct hvt_json *j, const char *key, const char *value);
void hvt_json_uint(struct hvt_json *j, const char *key, uint64_t value);
void hvt_json_int(struct hvt_json *j, const char *key, int64_t value);
void hvt_json_bool(struct hvt_json *j, const char *key, bool value);
void hvt_json_null(struct hvt_json *j, const char *key);

/* The final newline; 0, or -EIO when the stream failed, -EINVAL when the containers did not
 * close. */
int hvt_json_end(struct hvt_json *j);

/* value as a JSON string, quotes included, to f. */
void hvt_json_write_string(FILE *f, const char *value);
