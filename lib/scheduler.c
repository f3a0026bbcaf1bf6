/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: parsing the bracketed elevator list the kernel shows in queue/scheduler. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "scheduler.h"

static bool is_space(char c) {
        return c == ' ' || c == '\t' || c == '\n';
}

static int add_name(struct hvt_sched_list *l, const char *p, size_t len, bool active) {
        char name[HVT_SCHED_NAME_MAX];

        if (len == 0 || len >= sizeof(name) || l->n >= HVT_SCHED_LIST_MAX)
                return -EBADMSG;
        memcpy(name, p, len);
        name[len] = '\0';
        if (!hvt_sched_name_valid(name))
                return -EBADMSG;
        if (active) {
                if (l->active >= 0)
                        return -EBADMSG;
                l->active = (int) l->n;
        }
        memcpy(l->names[l->n++], name, len + 1);
        return 0;
}

int hvt_sched_parse(const char *text, struct hvt_sched_list *ret) {
        struct hvt_sched_list l = { .active = -1 };
        const char *p = text;
        int r;

        for (;;) {
                const char *start;
                bool active = false;

                while (is_space(*p))
                        p++;
                if (!*p)
                        break;
                if (*p == '[') {
                        active = true;
                        p++;
                }
                start = p;
                while (*p && !is_space(*p) && *p != '[' && *p != ']')
                        p++;
                r = add_name(&l, start, (size_t) (p - start), active);
                if (r < 0)
                        return r;
                if (active) {
                        if (*p != ']')
                                return -EBADMSG;
                        p++;
                }
                /* "a[b]" or "[a]b": names must be separated by blanks. */
                if (*p && !is_space(*p))
                        return -EBADMSG;
        }

        if (l.n == 0)
                return -EBADMSG;
        /* A lone unbracketed name is what a queue without elevator support shows: the kernel
         * prints only "none" that way. Any other lone name is taken as active too: there is
         * no other reading of it, and it is what a write leaves in a plain-file testbed. */
        if (l.active < 0) {
                if (l.n != 1)
                        return -EBADMSG;
                l.active = 0;
        }
        *ret = l;
        return 0;
}

int hvt_sched_find(const struct hvt_sched_list *l, const char *name) {
        for (size_t i = 0; i < l->n; i++)
                if (strcmp(l->names[i], name) == 0)
                        return (int) i;
        return -ENOENT;
}

const char *hvt_sched_active(const struct hvt_sched_list *l) {
        return l->active >= 0 ? l->names[l->active] : NULL;
}

const char *hvt_sched_resolve(const struct hvt_sched_list *l, const char *want) {
        int i = hvt_sched_find(l, want);

        if (i >= 0)
                return l->names[i];
        if (strcmp(want, "none") == 0) {
                i = hvt_sched_find(l, "noop");
                if (i >= 0)
                        return l->names[i];
        }
        return NULL;
}

void hvt_sched_format(const struct hvt_sched_list *l, char *buf, size_t size) {
        size_t off = 0;

        if (size == 0)
                return;
        buf[0] = '\0';
        for (size_t i = 0; i < l->n; i++) {
                size_t len = strlen(l->names[i]) + (i > 0);

                if (off + len >= size)
                        break;
                if (i > 0)
                        buf[off++] = ' ';
                strcpy(buf + off, l->names[i]);
                off += strlen(l->names[i]);
        }
}
