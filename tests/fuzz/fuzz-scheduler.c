/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: fuzzing the queue/scheduler parser (lib/scheduler.h) with what a kernel, a testbed
 * or a broken driver could show there. Beyond not crashing: a list that parses is one the
 * rest of the code can trust (names are elevator names, one is active), finds and resolves
 * consistently, formats into any buffer without overrunning it, and reads back the same when
 * printed the way the kernel prints it. */
#include "fuzz.h"
#include "scheduler.h"

static void check_list(const struct hvt_sched_list *l) {
        fuzz_check(l->n >= 1 && l->n <= HVT_SCHED_LIST_MAX, "n = %zu", l->n);
        fuzz_check(l->active >= 0 && (size_t) l->active < l->n, "active = %d of %zu", l->active, l->n);
        fuzz_check(hvt_sched_active(l) == l->names[l->active], "active name");
        for (size_t i = 0; i < l->n; i++) {
                int found = hvt_sched_find(l, l->names[i]);

                fuzz_check(hvt_sched_name_valid(l->names[i]), "name %zu \"%s\"", i, l->names[i]);
                fuzz_check(found >= 0 && (size_t) found <= i && strcmp(l->names[found], l->names[i]) == 0,
                           "find(\"%s\") = %d", l->names[i], found);
                fuzz_check(hvt_sched_resolve(l, l->names[i]) == l->names[found], "resolve(\"%s\")", l->names[i]);
        }
}

/* "none" is written as "noop" only where there is noop and no none. */
static void check_resolve_none(const struct hvt_sched_list *l) {
        const char *r = hvt_sched_resolve(l, "none");
        int none = hvt_sched_find(l, "none"), noop = hvt_sched_find(l, "noop");

        if (none >= 0)
                fuzz_check(r == l->names[none], "none offered, resolved to %s", r ? r : "(null)");
        else if (noop >= 0)
                fuzz_check(r == l->names[noop], "noop fallback, resolved to %s", r ? r : "(null)");
        else
                fuzz_check(!r, "neither offered, resolved to %s", r);
}

/* Every buffer size: NUL-terminated within it, and a prefix of the full text. */
static void check_format(const struct hvt_sched_list *l) {
        char full[HVT_SCHED_LIST_MAX * HVT_SCHED_NAME_MAX + 1], buf[sizeof(full)];

        hvt_sched_format(l, full, sizeof(full));
        fuzz_check(strlen(full) < sizeof(full), "full format");
        for (size_t size = 1; size <= strlen(full) + 1; size++) {
                memset(buf, 'x', sizeof(buf));
                hvt_sched_format(l, buf, size);
                fuzz_check(memchr(buf, '\0', size), "format into %zu bytes: not terminated", size);
                fuzz_check(strncmp(buf, full, strlen(buf)) == 0, "format into %zu: \"%s\" is not a prefix of \"%s\"",
                           size, buf, full);
                fuzz_check(buf[size] == 'x' || size == sizeof(buf), "format into %zu bytes wrote past them", size);
        }
        hvt_sched_format(l, buf, 0);  /* must not touch anything */
}

/* Printed as elv_iosched_show() does ("[a] b c "), the list parses back as it was. */
static void check_round_trip(const struct hvt_sched_list *l) {
        char text[HVT_SCHED_LIST_MAX * (HVT_SCHED_NAME_MAX + 3) + 2] = "";
        struct hvt_sched_list again;
        size_t off = 0;

        for (size_t i = 0; i < l->n; i++)
                off += (size_t) snprintf(text + off, sizeof(text) - off, (int) i == l->active ? "[%s] " : "%s ",
                                         l->names[i]);
        text[off++] = '\n';
        text[off] = '\0';
        fuzz_check(hvt_sched_parse(text, &again) == 0, "\"%s\" does not parse back", text);
        fuzz_check(again.n == l->n && again.active == l->active, "\"%s\": %zu/%d, was %zu/%d", text,
                   again.n, again.active, l->n, l->active);
        for (size_t i = 0; i < l->n; i++)
                fuzz_check(strcmp(again.names[i], l->names[i]) == 0, "\"%s\": name %zu", text, i);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *text = fuzz_strndup(data, size);
        struct hvt_sched_list l;
        int r;

        r = hvt_sched_parse(text, &l);
        fuzz_check(r == 0 || r == -EBADMSG, "parse returned %d", r);
        if (r < 0)
                return 0;
        check_list(&l);
        check_resolve_none(&l);
        check_format(&l);
        check_round_trip(&l);
        return 0;
}
