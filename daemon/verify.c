/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the --verify command (see verify.h).
 *
 * The state file says what the daemon last did; sysfs is read now, by the same dry run that
 * --status's CURRENT column comes from (show.c), which judges each value as the daemon's pass
 * does: what the kernel kept of the wanted value, and a ceiling's lower values, are as
 * configured. So the answer is about the system now, not as of the last periodic check. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "escape.h"
#include "json.h"
#include "macro.h"
#include "show.h"
#include "state.h"
#include "verify.h"

/* How one managed attribute stands, the worst last: the exit status takes the worst found. */
enum judgement {
        AS_CONFIGURED,
        KEPT,            /* the kernel kept another value for the wanted one, which hvtuned accepts */
        UNSUPPORTED,     /* this kernel or disk lacks it: as --once, no failure */
        DIFFERS,
        YIELDED,
        PAUSED,
        FAILED,
        UNREADABLE,
        _JUDGEMENT_MAX,
};

static const char *const reason_names[_JUDGEMENT_MAX] = {
        [AS_CONFIGURED] = "as-configured",
        [KEPT] = "kept-by-kernel",
        [UNSUPPORTED] = "unsupported",
        [DIFFERS] = "differs",
        [YIELDED] = "yielded",
        [PAUSED] = "paused",
        [FAILED] = "failed",
        [UNREADABLE] = "unreadable",
};

static int status_of(enum judgement j) {
        return j >= FAILED ? HVT_VERIFY_FAILED : j >= DIFFERS ? HVT_VERIFY_DIFFERS : HVT_VERIFY_OK;
}

static enum judgement judge(const struct hvt_state_disk *sd, const struct hvt_state_attr *a) {
        if (a->role == HVT_STATE_YIELDED)
                return YIELDED;
        if (a->last == HVT_FAILED)
                return FAILED;
        if (a->last == HVT_UNSUPPORTED && (a->current_error != 0 || a->current_outcome < 0))
                return UNSUPPORTED;
        if (a->current_error != 0)
                return UNREADABLE;
        if (a->current_outcome == HVT_UNCHANGED) {
                /* Repairs paused: whoever reverts it may do so again at any moment. */
                if (sd->paused && sd->last_repair_attr == (int) a->id)
                        return PAUSED;
                return *a->kept && strcmp(a->current, a->kept) == 0 && strcmp(a->current, a->want) != 0 ?
                        KEPT : AS_CONFIGURED;
        }
        return sd->paused ? PAUSED : DIFFERS;
}

struct tally {
        size_t disks, attributes;
        size_t n[_JUDGEMENT_MAX];
        int status;
};

static bool managed(const struct hvt_state_attr *a) {
        return a->role != HVT_STATE_KNOCK_ON;
}

/* A disk whose pass failed with no attribute to show for it (its record unreadable, out of
 * memory): the disk itself is the failure. */
static bool disk_failed_alone(const struct hvt_state_disk *sd) {
        if (sd->failed == 0)
                return false;
        for (size_t i = 0; i < sd->n_attr; i++)
                if (managed(&sd->attr[i]) && judge(sd, &sd->attr[i]) == FAILED)
                        return false;
        return true;
}

static void count(const struct hvt_state *s, struct tally *t) {
        *t = (struct tally) { .disks = s->n_disk };
        for (size_t i = 0; i < s->n_disk; i++) {
                const struct hvt_state_disk *sd = &s->disk[i];

                for (size_t k = 0; k < sd->n_attr; k++) {
                        enum judgement j;

                        if (!managed(&sd->attr[k]))
                                continue;
                        j = judge(sd, &sd->attr[k]);
                        t->attributes++;
                        t->n[j]++;
                        if (status_of(j) > t->status)
                                t->status = status_of(j);
                }
                if (disk_failed_alone(sd)) {
                        t->n[FAILED]++;
                        t->status = HVT_VERIFY_FAILED;
                }
        }
}

static const char *why_text(enum judgement j, const struct hvt_state_attr *a, char *buf, size_t size) {
        int error = a->current_error != 0 ? -a->current_error : a->error;

        switch (j) {
        case KEPT:
                snprintf(buf, size, "kept by the kernel for %s", a->want);
                break;
        case UNSUPPORTED:
                snprintf(buf, size, "unsupported by this kernel or disk");
                break;
        case YIELDED:
                snprintf(buf, size, "yielded to another writer");
                break;
        case PAUSED:
                snprintf(buf, size, "repairs paused, reverted too often");
                break;
        case FAILED:
                snprintf(buf, size, "failed: %s", error > 0 ? strerror(error) : "not tuned");
                break;
        case UNREADABLE:
                snprintf(buf, size, "cannot be read: %s", strerror(error > 0 ? error : EIO));
                break;
        default:
                snprintf(buf, size, "%s", j == DIFFERS ? "differs" : a->ceiling ? "as configured, at most that" :
                         "as configured");
        }
        return buf;
}

static void print_attr(const struct hvt_state_disk *sd, const struct hvt_state_attr *a, enum judgement j) {
        char name[48], want[4 * HVT_VALUE_MAX], found[4 * HVT_VALUE_MAX], why[4 * HVT_VALUE_MAX + 64];
        _cleanup_free_ char *disk = hvt_escape_dup(sd->name);

        if (hvt_attr_format_path(a->id, name, sizeof(name)) < 0)
                (void) hvt_strscpy(name, sizeof(name), "?");
        (void) hvt_escape(want, sizeof(want), a->want);
        (void) hvt_escape(found, sizeof(found), a->current);
        why_text(j, a, why, sizeof(why));
        if (a->current_error != 0)
                printf("%s %s: wanted %s (%s)\n", strna(disk), name, want, why);
        else if (j < DIFFERS)
                printf("%s %s: %s (%s)\n", strna(disk), name, found, why);
        else
                printf("%s %s: wanted %s, found %s (%s)\n", strna(disk), name, want, found, why);
}

static void print_verdict(const struct tally *t) {
        size_t bad = t->n[FAILED] + t->n[UNREADABLE], off = t->n[DIFFERS] + t->n[YIELDED] + t->n[PAUSED];

        printf("verify: ");
        if (bad + off > 0)
                printf("%zu of ", bad + off);
        printf("%zu attribute%s on %zu disk%s", t->attributes, t->attributes == 1 ? "" : "s", t->disks,
               t->disks == 1 ? "" : "s");
        if (bad > 0 && off > 0)
                printf(" failed or differ: %zu failed, %zu differ%s\n", bad, off, off == 1 ? "s" : "");
        else if (bad > 0)
                printf(" failed\n");
        else if (off > 0)
                printf(" differ%s\n", bad + off == 1 ? "s" : "");
        else
                printf(" as configured\n");
}

static void show_text(const struct hvt_state *s, const struct tally *t, bool verbose) {
        for (size_t i = 0; i < s->n_disk; i++) {
                const struct hvt_state_disk *sd = &s->disk[i];

                for (size_t k = 0; k < sd->n_attr; k++) {
                        enum judgement j;

                        if (!managed(&sd->attr[k]))
                                continue;
                        j = judge(sd, &sd->attr[k]);
                        if (verbose || j >= DIFFERS)
                                print_attr(sd, &sd->attr[k], j);
                }
                if (disk_failed_alone(sd)) {
                        _cleanup_free_ char *disk = hvt_escape_dup(sd->name);

                        printf("%s: failed: %u setting%s not tuned\n", strna(disk), sd->failed, sd->failed == 1 ? "" : "s");
                }
        }
        print_verdict(t);
}

static const char *verdict_name(int status) {
        static const char *const names[] = {
                [HVT_VERIFY_OK] = "as-configured",
                [HVT_VERIFY_DIFFERS] = "differs",
                [HVT_VERIFY_FAILED] = "failed",
                [HVT_VERIFY_NOT_RUNNING] = "not-running",
                [HVT_VERIFY_UNKNOWN] = "unknown",
        };

        return names[status];
}

static void json_value(struct hvt_json *j, const char *key, const char *v) {
        hvt_json_string(j, key, v && *v ? v : NULL);
}

static void json_entry(struct hvt_json *j, const struct hvt_state_disk *sd, const struct hvt_state_attr *a,
                       enum judgement v) {
        char name[48];
        int error = !a ? 0 : a->current_error != 0 ? -a->current_error : a->error;

        hvt_json_object(j, NULL);
        hvt_json_string(j, "disk", sd->name);
        if (a && hvt_attr_format_path(a->id, name, sizeof(name)) >= 0)
                hvt_json_string(j, "attribute", name);
        else
                hvt_json_null(j, "attribute");
        hvt_json_string(j, "reason", reason_names[v]);
        json_value(j, "wanted", a ? a->want : NULL);
        json_value(j, "found", a && a->current_error == 0 ? a->current : NULL);
        json_value(j, "error", a && error > 0 && v >= FAILED ? strerror(error) : NULL);
        /* The daemon's view, as of its state file: its last pass's outcome. */
        json_value(j, "daemon_last", a && a->last >= 0 ? hvt_outcome_to_string((enum hvt_outcome) a->last) : NULL);
        json_value(j, "daemon_error", a && a->error > 0 ? strerror(a->error) : NULL);
        json_value(j, "kept", a ? a->kept : NULL);
        hvt_json_bool(j, "paused", sd->paused);
        hvt_json_close_object(j);
}

/* s NULL: no state (not running, or not known), why says what stopped it. */
static void show_json(const struct hvt_state *s, const struct tally *t, const char *why) {
        struct hvt_json j = hvt_json_new(stdout);

        hvt_json_object(&j, NULL);
        hvt_json_uint(&j, "format", 1);
        hvt_json_string(&j, "verdict", verdict_name(t->status));
        hvt_json_int(&j, "exit_status", t->status);
        json_value(&j, "error", why);
        if (s && s->running) {
                hvt_json_int(&j, "pid", s->pid);
                hvt_json_uint(&j, "written_usec", s->written_usec);
        } else {
                hvt_json_null(&j, "pid");
                hvt_json_null(&j, "written_usec");
        }
        hvt_json_uint(&j, "disks", t->disks);
        hvt_json_uint(&j, "attributes", t->attributes);
        hvt_json_object(&j, "counts");
        for (unsigned k = 0; k < _JUDGEMENT_MAX; k++)
                hvt_json_uint(&j, reason_names[k], t->n[k]);
        hvt_json_close_object(&j);
        hvt_json_array(&j, "not_as_configured");
        for (size_t i = 0; s && i < s->n_disk; i++) {
                const struct hvt_state_disk *sd = &s->disk[i];

                for (size_t k = 0; k < sd->n_attr; k++) {
                        enum judgement v;

                        if (!managed(&sd->attr[k]))
                                continue;
                        v = judge(sd, &sd->attr[k]);
                        if (v >= DIFFERS)
                                json_entry(&j, sd, &sd->attr[k], v);
                }
                if (disk_failed_alone(sd))
                        json_entry(&j, sd, NULL, FAILED);
        }
        hvt_json_close_array(&j);
        hvt_json_close_object(&j);
        (void) hvt_json_end(&j);
}

int hvt_verify(struct hvt_daemon *d, bool json, bool verbose) {
        struct hvt_state s = {};
        struct tally t = {};
        int r;

        r = hvt_show_running_state(d, "--verify", &s);
        if (r <= 0) {
                t.status = r == 0 ? HVT_VERIFY_NOT_RUNNING : HVT_VERIFY_UNKNOWN;
                if (json)
                        show_json(NULL, &t, r == 0 ? "hvtuned is not running" : strerror(-r));
                else if (r == 0)
                        printf("verify: hvtuned is not running\n");
                else
                        printf("verify: cannot be told: %s\n", strerror(-r));
                (void) fflush(stdout);
                return t.status;
        }
        count(&s, &t);
        if (json)
                show_json(&s, &t, NULL);
        else
                show_text(&s, &t, verbose);
        hvt_state_done(&s);
        /* The status is the answer: a reader gone (`| head -1`) or a full disk changes nothing. */
        (void) fflush(stdout);
        return t.status;
}
