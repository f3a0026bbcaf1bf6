/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The state file's format (lib/state.c): a state written and read back is the same state,
 * hostile text in any field included; a file cut anywhere, of another version or damaged is
 * refused with a reason, never half read. And the JSON writer (lib/json.c): what it makes of
 * every byte is JSON Python's parser reads back. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "state.h"
#include "state-show.h"
#include "macro.h"
#include "origin.h"
#include "testutil.h"

static void assert_contains(const char *haystack, const char *needle) {
        ck_assert_msg(strstr(haystack, needle), "\"%s\" not found in \"%s\"", needle, haystack);
}

static void sample(struct hvt_state *s) {
        struct hvt_state_disk *d;

        *s = (struct hvt_state) { .running = true, .pid = 4242, .written_usec = 1796562423766361 };
        s->status = strdup("4 Hyper-V disks\ton 2 controllers\n\\x41 \033[2J \xff");
        s->driver = (struct hvt_state_driver) { .cap = 4, .present_cpus = 32, .cap_support = 1, .orig = "0" };
        d = hvt_state_add_disk(s, "sda", "/sys/devices/a b\tc/block/sda", "/sys/devices/x/0:0:0:0");
        ck_assert_ptr_nonnull(d);
        snprintf(d->controller, sizeof(d->controller), "{f8b3781a-1e82-4818-a1c3-63d806ec15bb}");
        d->kind = HVT_KIND_SCSI;
        d->role = HVT_ROLE_OS;
        d->repairs = 3;
        d->last_repair_usec = 1796562423000000;
        d->last_repair_attr = HVT_ATTR_SCHEDULER;
        d->paused = true;
        d->failed = 1;
        d->attr[d->n_attr++] = (struct hvt_state_attr) { .id = HVT_ATTR_SCHEDULER, .role = HVT_STATE_MANAGED,
                                                         .want = "none", .orig = "mq-deadline", .last = HVT_APPLIED,
                                                         .origin = "/etc/hvtuned.conf.d/50 fleet\t.conf:3" };
        d->attr[d->n_attr++] = (struct hvt_state_attr) { .id = HVT_ATTR_NR_REQUESTS, .role = HVT_STATE_KNOCK_ON,
                                                         .orig = "256", .left = "2534", .last = -1 };
        d->attr[d->n_attr++] = (struct hvt_state_attr) { .id = HVT_ATTR_TIMEOUT, .role = HVT_STATE_YIELDED,
                                                         .want = "300", .last = HVT_FAILED, .error = EACCES };
        d->attr[d->n_attr++] = (struct hvt_state_attr) { .id = HVT_ATTR_READ_AHEAD_KB, .role = HVT_STATE_MANAGED,
                                                         .want = "10", .kept = "8", .ceiling = true,
                                                         .last = HVT_CLAMPED };
        d = hvt_state_add_disk(s, "nvme0n1", "/sys/devices/n/nvme0n1", "");
        ck_assert_ptr_nonnull(d);
        d->kind = HVT_KIND_NVME_DIRECT_V2;
        d->role = HVT_ROLE_LOCAL;
        s->controller = calloc(1, sizeof(*s->controller));
        s->controller[s->n_controller++] = (struct hvt_state_controller) {
                .host = 1, .controller = "{f8b3781b-1e82-4818-a1c3-63d806ec15bb}", .kind = HVT_KIND_SCSI,
                .nr_hw_queues = 32, .can_queue = 2534, .capped_queues = 4, .over_cap = true,
                .bytes = 101292032, .capped_bytes = 12661504, .band_pct = 7 };
        s->nvme = calloc(1, sizeof(*s->nvme));
        s->nvme[s->n_nvme++] = (struct hvt_state_nvme) { .name = "nvme0", .kind = HVT_KIND_NVME_ACCELERATOR,
                                                         .nr_io_queues = 8, .q_depth = 1024, .bytes = 123,
                                                         .band_pct = 10 };
}

static char *formatted(const struct hvt_state *s) {
        char *text = NULL;

        ck_assert_int_eq(hvt_state_format(s, &text), 0);
        return text;
}

START_TEST(test_round_trip) {
        struct hvt_state a, b;
        char *text, *again, why[256];

        sample(&a);
        text = formatted(&a);
        /* One record a line: no field's tab or newline got through. */
        ck_assert_ptr_nonnull(strchr(text, '\n'));
        ck_assert_uint_eq(strcspn(text, "\n"), strlen("hvtuned-state\t1"));
        ck_assert_int_eq(hvt_state_parse(text, &b, why, sizeof(why)), 0);
        again = formatted(&b);
        free(text);
        text = formatted(&a);
        ck_assert_str_eq(again, text);
        ck_assert_str_eq(b.status, a.status);
        ck_assert_str_eq(b.disk[0].syspath, "/sys/devices/a b\tc/block/sda");
        ck_assert_uint_eq(b.disk[0].n_attr, 4);
        ck_assert_str_eq(b.disk[0].attr[3].kept, "8");
        ck_assert(b.disk[0].attr[3].ceiling);
        ck_assert(!b.disk[0].attr[0].ceiling);
        ck_assert_int_eq(b.disk[0].attr[2].error, EACCES);
        ck_assert_str_eq(b.disk[0].attr[0].origin, "/etc/hvtuned.conf.d/50 fleet\t.conf:3");
        ck_assert_str_eq(b.disk[0].attr[2].origin, "");
        ck_assert_int_eq(b.disk[0].attr[1].last, -1);
        ck_assert_int_eq(b.disk[1].last_repair_attr, -1);
        ck_assert_uint_eq(hvt_state_reclaimable(&b, NULL), 101292032 - 12661504);
        ck_assert_uint_eq(b.controller[0].band_pct, 7);
        ck_assert_uint_eq(b.nvme[0].band_pct, 10);
        free(text);
        free(again);
        hvt_state_done(&a);
        hvt_state_done(&b);
}
END_TEST

static int parse(const char *text, char *why, size_t size) {
        char *copy = strdup(text);
        struct hvt_state s;
        int r = hvt_state_parse(copy, &s, why, size);

        if (r >= 0)
                hvt_state_done(&s);
        free(copy);
        return r;
}

/* An attr line of a hvtuned before KEPT and CEILING (version 1 all the same): read, with
 * neither; one whose CEILING is no boolean is refused. */
START_TEST(test_attr_without_kept) {
        char text[] = "hvtuned-state\t1\npid\t1\nwritten\t0\nstatus\t\ndriver\t0\t0\t-1\t\n"
                      "disk\tsda\t/sys/devices/x/block/sda\t\t\tscsi\tos\t0\t0\t\t0\t0\n"
                      "attr\tqueue/scheduler\tmanaged\tnone\t\t\tapplied\t0\nend\t7\n";
        char bad[] = "hvtuned-state\t1\npid\t1\nwritten\t0\nstatus\t\ndriver\t0\t0\t-1\t\n"
                     "disk\tsda\t/sys/devices/x/block/sda\t\t\tscsi\tos\t0\t0\t\t0\t0\n"
                     "attr\tqueue/scheduler\tmanaged\tnone\t\t\tapplied\t0\t\tyes\nend\t7\n";
        struct hvt_state s;
        char why[256];

        ck_assert_int_eq(hvt_state_parse(text, &s, why, sizeof(why)), 0);
        ck_assert_uint_eq(s.disk[0].n_attr, 1);
        ck_assert_str_eq(s.disk[0].attr[0].kept, "");
        ck_assert(!s.disk[0].attr[0].ceiling);
        hvt_state_done(&s);
        ck_assert_int_eq(parse(bad, why, sizeof(why)), -EBADMSG);
}
END_TEST

START_TEST(test_cut_anywhere) {
        struct hvt_state a;
        char *text, why[256];
        size_t len;

        sample(&a);
        text = formatted(&a);
        len = strlen(text);
        /* Every prefix is refused (a reader that found the file while it was being written,
         * which the rename never lets it, or a full /run). */
        for (size_t n = 0; n < len; n++) {
                char *cut = strndup(text, n);

                ck_assert_msg(parse(cut, why, sizeof(why)) == -EBADMSG, "cut at %zu taken", n);
                ck_assert_msg(*why, "cut at %zu: no reason", n);
                free(cut);
        }
        ck_assert_int_eq(parse(text, why, sizeof(why)), 0);
        free(text);
        hvt_state_done(&a);
}
END_TEST

/* A file of 0.1.0, whose attr lines have no ORIGIN: read as it was, the origin not known;
 * and what --status shows of an origin, in text and JSON. */
START_TEST(test_origin_compatible) {
        static const char old[] =
                "hvtuned-state\t1\npid\t1\nwritten\t1\nstatus\tok\ndriver\t0\t0\t-1\t\n"
                "disk\tsda\t/sys/sda\t\t\tscsi\tos\t0\t0\t\t0\t0\n"
                "attr\tqueue/scheduler\tmanaged\tnone\tmq-deadline\t\tapplied\t0\nend\t7\n";
        char *copy = strdup(old), why[256], *text = NULL, *json = NULL;
        struct hvt_state s;
        size_t size = 0;
        FILE *f;

        ck_assert_msg(hvt_state_parse(copy, &s, why, sizeof(why)) == 0, "%s", why);
        ck_assert_uint_eq(s.disk[0].n_attr, 1);
        ck_assert_str_eq(s.disk[0].attr[0].want, "none");
        ck_assert_str_eq(s.disk[0].attr[0].origin, "");
        (void) hvt_strscpy(s.disk[0].attr[0].origin, sizeof(s.disk[0].attr[0].origin), "built-in policy");
        f = open_memstream(&text, &size);
        ck_assert_int_eq(hvt_state_show_text(f, &s), 0);
        ck_assert_int_eq(fclose(f), 0);
        assert_contains(text, "from built-in policy\n");
        f = open_memstream(&json, &size);
        ck_assert_int_eq(hvt_state_show_json(f, &s), 0);
        ck_assert_int_eq(fclose(f), 0);
        assert_contains(json, "\"origin\": \"built-in policy\"");
        hvt_state_done(&s);
        free(copy);
        free(text);
        free(json);
}
END_TEST

/* A newer writer's ORIGIN longer than this reader keeps: cut, not a refused file (which would
 * fail --status and make --verify exit 4). And a writer's origin too long for the field keeps
 * its line, cutting the path at the front. */
START_TEST(test_origin_long) {
        char *text, why[256], origin[HVT_ORIGIN_TEXT_MAX];
        struct hvt_state s;
        struct hvt_origin o = { .kind = HVT_ORIGIN_FILE, .line = 12 };
        char path[300];

        memset(path, 'x', sizeof(path) - 1);
        path[0] = '/';
        path[sizeof(path) - 1] = '\0';
        ck_assert_int_ge(asprintf(&text, "hvtuned-state\t1\npid\t1\nwritten\t1\nstatus\tok\ndriver\t0\t0\t-1\t\n"
                                  "disk\tsda\t/sys/sda\t\t\tscsi\tos\t0\t0\t\t0\t0\n"
                                  "attr\tqueue/scheduler\tmanaged\tnone\tmq-deadline\t\tapplied\t0\t\t0\t%s:3\nend\t7\n",
                                  path), 0);
        ck_assert_msg(hvt_state_parse(text, &s, why, sizeof(why)) == 0, "%s", why);
        ck_assert_uint_eq(strlen(s.disk[0].attr[0].origin), HVT_ORIGIN_TEXT_MAX - 1);
        ck_assert(strncmp(s.disk[0].attr[0].origin, path, HVT_ORIGIN_TEXT_MAX - 1) == 0);
        hvt_state_done(&s);
        free(text);

        o.file = path;
        hvt_origin_format(&o, origin, sizeof(origin));
        ck_assert_uint_eq(strlen(origin), sizeof(origin) - 1);
        ck_assert(strncmp(origin, "...", 3) == 0);
        ck_assert_str_eq(origin + strlen(origin) - 6, "xxx:12");
        o.file = "/etc/hvtuned.conf.d/50-fleet.conf";
        hvt_origin_format(&o, origin, sizeof(origin));
        ck_assert_str_eq(origin, "/etc/hvtuned.conf.d/50-fleet.conf:12");
}
END_TEST

START_TEST(test_refused) {
        char why[256];

        ck_assert_int_eq(parse("hvtuned-state\t2\nend\t1\n", why, sizeof(why)), -EPROTONOSUPPORT);
        assert_contains(why, "format version 2, this hvtuned reads 1 (written by a newer hvtuned)");
        ck_assert_int_eq(parse("# hvtuned: values before hvtuned first wrote them\n", why, sizeof(why)), -EBADMSG);
        assert_contains(why, "not a state file");
        ck_assert_int_eq(parse("hvtuned-state\t1\nattr\tqueue/scheduler\tmanaged\tnone\t\t\t\t0\nend\t2\n", why,
                               sizeof(why)), -EBADMSG);
        assert_contains(why, "line 2: an attribute before any disk");
        ck_assert_int_eq(parse("hvtuned-state\t1\ndisk\tsda\n", why, sizeof(why)), -EBADMSG);
        assert_contains(why, "line 2: disk has 1 fields, not 11");
        ck_assert_int_eq(parse("hvtuned-state\t1\npid\t12x\nend\t2\n", why, sizeof(why)), -EBADMSG);
        ck_assert_int_eq(parse("hvtuned-state\t1\nstatus\ta\\qb\nend\t2\n", why, sizeof(why)), -EBADMSG);
        assert_contains(why, "not escaped");
        ck_assert_int_eq(parse("hvtuned-state\t1\nend\t5\n", why, sizeof(why)), -EBADMSG);
        ck_assert_int_eq(parse("hvtuned-state\t1\nend\t1\nmore\n", why, sizeof(why)), -EBADMSG);
        /* Attributes the reader does not know, or another subject's: refused; a record it
         * does not know, and fields past those it reads: skipped (a newer hvtuned's). */
        ck_assert_int_eq(parse("hvtuned-state\t1\ndisk\tsda\t/s\t\t\tscsi\tos\t0\t0\t\t0\t0\n"
                               "attr\tmodule/storvsc_max_hw_queues\tmanaged\t4\t\t\t\t0\nend\t3\n", why, sizeof(why)),
                         -EBADMSG);
        ck_assert_int_eq(parse("hvtuned-state\t1\nnewthing\tx\npid\t7\textra\nend\t3\n", why, sizeof(why)), 0);
}
END_TEST

/* The JSON writer's strings, read back by Python's json. */
START_TEST(test_json_every_byte) {
        char raw[256], *text = NULL, path[] = "/tmp/hvtuned-json.XXXXXX", cmd[256];
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        struct hvt_json j = hvt_json_new(f);
        int fd;

        for (int i = 1; i < 256; i++)
                raw[i - 1] = (char) i;
        raw[255] = '\0';
        hvt_json_object(&j, NULL);
        hvt_json_string(&j, "every \"byte\"", raw);
        hvt_json_string(&j, "none", NULL);
        hvt_json_array(&j, "empty");
        hvt_json_close_array(&j);
        hvt_json_array(&j, "list");
        hvt_json_uint(&j, NULL, UINT64_MAX);
        hvt_json_int(&j, NULL, -1);
        hvt_json_bool(&j, NULL, true);
        hvt_json_close_array(&j);
        hvt_json_close_object(&j);
        ck_assert_int_eq(hvt_json_end(&j), 0);
        fclose(f);
        ck_assert_ptr_null(strchr(text, '\t'));
        ck_assert_uint_eq(strlen(text), len);
        fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, len), (ssize_t) len);
        close(fd);
        /* Each byte 1..255 as the code point of the same number (Latin-1), in order. */
        snprintf(cmd, sizeof(cmd),
                 "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
                 "assert d[\"every \\\"byte\\\"\"] == \"\".join(map(chr, range(1, 256))); "
                 "assert d[\"none\"] is None and d[\"empty\"] == [] and d[\"list\"] == [2**64-1, -1, True]' %s", path);
        ck_assert_msg(system(cmd) == 0, "python3 refused:\n%s", text);
        unlink(path);
        free(text);
}
END_TEST

START_TEST(test_json_unbalanced) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        struct hvt_json j = hvt_json_new(f);

        hvt_json_object(&j, NULL);
        ck_assert_int_eq(hvt_json_end(&j), -EINVAL);
        fclose(f);
        free(text);
}
END_TEST

/* --status's controller table says what the figure in brackets is: the queues a controller
 * over the cap would have under it, once re-probed or at the next boot. */
START_TEST(test_show_queues_under_cap) {
        struct hvt_state a;
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        ck_assert_ptr_nonnull(f);
        sample(&a);
        ck_assert_int_eq(hvt_state_show_text(f, &a), 0);
        ck_assert_int_eq(fclose(f), 0);
        assert_contains(text, " 32 (4 under the cap) ");
        ck_assert_ptr_null(strstr(text, "capped)"));
        free(text);
        hvt_state_done(&a);
}
END_TEST

int main(void) {
        Suite *s = suite_create("state");
        TCase *tc = tcase_create("state");

        tcase_add_test(tc, test_round_trip);
        tcase_add_test(tc, test_cut_anywhere);
        tcase_add_test(tc, test_attr_without_kept);
        tcase_add_test(tc, test_refused);
        tcase_add_test(tc, test_origin_compatible);
        tcase_add_test(tc, test_origin_long);
        tcase_add_test(tc, test_json_every_byte);
        tcase_add_test(tc, test_json_unbalanced);
        tcase_add_test(tc, test_show_queues_under_cap);
        suite_add_tcase(s, tc);
        return test_run(s);
}
