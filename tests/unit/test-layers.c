/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The layers of a configuration: the platform values, the main file or (where it does not
 * exist) the built-in policy in its place, then each drop-in; platform_defaults = false drops
 * the platform values and builtin_policy = false the policy, each alone; and where each setting
 * of a plan came from. */
#include <check.h>
#include <limits.h>
#include <sys/stat.h>

#include "policy.h"
#include "testutil.h"

static char dir[PATH_MAX];

/* The main file's path (written when main is not NULL) with the drop-ins 40-a.conf (a, when
 * not NULL) and 50-fleet.conf (b, when not NULL), loaded with missing_ok as the daemon loads its
 * default path. */
static struct hvt_config *load2(const char *main, const char *a, const char *b) {
        struct hvt_config_error err = {};
        struct hvt_config *c = NULL;
        char *path, *d;

        if (main)
                path = test_write_file(dir, "hvtuned.conf", main);
        else {
                free(test_write_file(dir, "unused", ""));
                ck_assert_int_ge(asprintf(&path, "%s/hvtuned.conf", dir), 0);
        }
        if (a || b) {
                ck_assert_int_ge(asprintf(&d, "%s/hvtuned.conf.d", dir), 0);
                ck_assert_int_eq(mkdir(d, 0755), 0);
                free(d);
        }
        if (a)
                free(test_write_file(dir, "hvtuned.conf.d/40-a.conf", a));
        if (b)
                free(test_write_file(dir, "hvtuned.conf.d/50-fleet.conf", b));
        ck_assert_msg(hvt_config_load(path, true, &c, &err) == 0, "%s:%d: %s", err.file, err.line, err.message);
        free(path);
        return c;
}

/* The main file (when not NULL) with dropin as its one drop-in, 50-fleet.conf (when not NULL). */
static struct hvt_config *load(const char *main, const char *dropin) {
        return load2(main, NULL, dropin);
}

static struct hvt_disk scsi_disk(void) {
        struct hvt_disk d = { .kind = HVT_KIND_SCSI, .role = HVT_ROLE_DATA };

        strcpy(d.controller, "{f8b3781a-1e82-4818-a1c3-63d806ec15bb}");
        return d;
}

static struct hvt_disk nvme_disk(void) {
        struct hvt_disk d = { .kind = HVT_KIND_NVME_ACCELERATOR, .role = HVT_ROLE_DATA };

        return d;
}

static const char *origin(const struct hvt_plan *p, enum hvt_attr_id id, char *buf, size_t size) {
        hvt_origin_format(&p->origin[id], buf, size);
        return buf;
}

/* README's Fleets step: a drop-in alone, no main file. The built-in policy stays under it. */
START_TEST(test_dropin_only_keeps_policy) {
        struct hvt_config *c = load(NULL, "queue = {\n  nr_requests = 64;\n};\n");
        struct hvt_disk d = scsi_disk();
        struct hvt_plan p;
        char buf[PATH_MAX + 32], want[PATH_MAX + 32];

        hvt_policy_plan(c, &d, NULL, &p);
        ck_assert(p.want[HVT_ATTR_SCHEDULER].set);
        ck_assert_str_eq(p.want[HVT_ATTR_SCHEDULER].text, "none");
        ck_assert_int_eq(p.want[HVT_ATTR_NR_REQUESTS].num, 64);
        ck_assert(p.want[HVT_ATTR_READ_AHEAD_KB].set && p.want[HVT_ATTR_READ_AHEAD_KB].at_most);
        ck_assert_uint_eq(hvt_plan_count(&p), 3);
        ck_assert_str_eq(origin(&p, HVT_ATTR_SCHEDULER, buf, sizeof(buf)), "built-in policy");
        ck_assert_str_eq(origin(&p, HVT_ATTR_READ_AHEAD_KB, buf, sizeof(buf)), "built-in platform value");
        snprintf(want, sizeof(want), "%s/hvtuned.conf.d/50-fleet.conf:2", dir);
        ck_assert_str_eq(origin(&p, HVT_ATTR_NR_REQUESTS, buf, sizeof(buf)), want);
        ck_assert_str_eq(origin(&p, HVT_ATTR_IO_TIMEOUT, buf, sizeof(buf)), "");
        hvt_config_free(c);
}
END_TEST

/* A drop-in's scheduler is laid over the built-in policy's. */
START_TEST(test_dropin_over_policy) {
        struct hvt_config *c = load(NULL, "queue = { scheduler = \"mq-deadline\"; };\n");
        struct hvt_disk d = scsi_disk();
        struct hvt_plan p;
        char buf[PATH_MAX + 32], want[PATH_MAX + 32];

        hvt_policy_plan(c, &d, NULL, &p);
        ck_assert_str_eq(p.want[HVT_ATTR_SCHEDULER].text, "mq-deadline");
        snprintf(want, sizeof(want), "%s/hvtuned.conf.d/50-fleet.conf:1", dir);
        ck_assert_str_eq(origin(&p, HVT_ATTR_SCHEDULER, buf, sizeof(buf)), want);
        hvt_config_free(c);
}
END_TEST

/* An existing main file replaces the built-in policy, as before: one naming no scheduler
 * manages none, with or without drop-ins. */
START_TEST(test_main_replaces_policy) {
        struct hvt_config *c = load("queue = { nr_requests = 128; };\n", "verify_interval = 30;\n");
        struct hvt_disk d = nvme_disk();
        struct hvt_plan p;
        char buf[PATH_MAX + 32], want[PATH_MAX + 32];

        hvt_policy_plan(c, &d, NULL, &p);
        ck_assert(!p.want[HVT_ATTR_SCHEDULER].set);
        ck_assert_int_eq(p.want[HVT_ATTR_NR_REQUESTS].num, 128);
        ck_assert_int_eq(p.want[HVT_ATTR_IO_TIMEOUT].num, 240000);
        ck_assert_uint_eq(hvt_plan_count(&p), 3);
        snprintf(want, sizeof(want), "%s/hvtuned.conf:1", dir);
        ck_assert_str_eq(origin(&p, HVT_ATTR_NR_REQUESTS, buf, sizeof(buf)), want);
        ck_assert_str_eq(origin(&p, HVT_ATTR_IO_TIMEOUT, buf, sizeof(buf)), "built-in platform value");
        hvt_config_free(c);
}
END_TEST

/* A main file with no attribute at all (issue 42's note): the platform values still apply. */
START_TEST(test_main_without_attributes) {
        struct hvt_config *c = load("metrics_file = \"/run/x/hvtuned.prom\";\n", NULL);
        struct hvt_disk d = nvme_disk();
        struct hvt_plan p;

        hvt_policy_plan(c, &d, NULL, &p);
        ck_assert(!p.want[HVT_ATTR_SCHEDULER].set);
        ck_assert_int_eq(p.want[HVT_ATTR_IO_TIMEOUT].num, 240000);
        ck_assert_int_eq(p.want[HVT_ATTR_READ_AHEAD_KB].num, 128);
        ck_assert_uint_eq(hvt_plan_count(&p), 2);
        hvt_config_free(c);
}
END_TEST

/* platform_defaults = false in a drop-in drops the platform values only: the built-in
 * policy's scheduler stays under the drop-ins, and what the files set stays. */
START_TEST(test_no_platform_from_dropin) {
        struct hvt_config *c = load(NULL, "platform_defaults = false;\nqueue = { nomerges = 2; };\n");
        struct hvt_disk d = nvme_disk();
        struct hvt_plan p;

        hvt_policy_plan(c, &d, NULL, &p);
        ck_assert_str_eq(p.want[HVT_ATTR_SCHEDULER].text, "none");
        ck_assert(!p.want[HVT_ATTR_READ_AHEAD_KB].set);
        ck_assert(!p.want[HVT_ATTR_IO_TIMEOUT].set);
        ck_assert_int_eq(p.want[HVT_ATTR_NOMERGES].num, 2);
        ck_assert_uint_eq(hvt_plan_count(&p), 2);
        hvt_config_free(c);
}
END_TEST

/* builtin_policy = false in a drop-in drops the built-in policy only: the kernel's scheduler
 * stays, and Azure's NVMe keeps its platform io_timeout and read-ahead ceiling. */
START_TEST(test_no_policy_from_dropin) {
        struct hvt_config *c = load(NULL, "builtin_policy = false;\nqueue = { nomerges = 2; };\n");
        struct hvt_disk d = nvme_disk();
        struct hvt_plan p;
        char buf[64];

        hvt_policy_plan(c, &d, NULL, &p);
        ck_assert(!p.want[HVT_ATTR_SCHEDULER].set);
        ck_assert_int_eq(p.want[HVT_ATTR_IO_TIMEOUT].num, 240000);
        ck_assert(p.want[HVT_ATTR_READ_AHEAD_KB].set && p.want[HVT_ATTR_READ_AHEAD_KB].at_most);
        ck_assert_int_eq(p.want[HVT_ATTR_NOMERGES].num, 2);
        ck_assert_uint_eq(hvt_plan_count(&p), 3);
        ck_assert_str_eq(origin(&p, HVT_ATTR_IO_TIMEOUT, buf, sizeof(buf)), "built-in platform value");
        hvt_config_free(c);
}
END_TEST

/* Both keys false: no built-in setting at all. */
START_TEST(test_no_builtin_at_all) {
        struct hvt_config *c = load(NULL, "builtin_policy = false;\nplatform_defaults = false;\n"
                                    "queue = { nomerges = 2; };\n");
        struct hvt_disk d = nvme_disk();
        struct hvt_plan p;

        hvt_policy_plan(c, &d, NULL, &p);
        ck_assert(!p.want[HVT_ATTR_SCHEDULER].set);
        ck_assert(!p.want[HVT_ATTR_IO_TIMEOUT].set);
        ck_assert_uint_eq(hvt_plan_count(&p), 1);
        hvt_config_free(c);
}
END_TEST

/* A later drop-in saying true again brings back what an earlier one dropped: the last file
 * wins, as for every top-level key. */
START_TEST(test_builtin_back_in_later_file) {
        struct hvt_config *c = load2(NULL, "builtin_policy = false;\nplatform_defaults = false;\n",
                                     "builtin_policy = true;\nplatform_defaults = true;\n");
        struct hvt_disk d = scsi_disk();
        struct hvt_plan p;

        hvt_policy_plan(c, &d, NULL, &p);
        ck_assert_str_eq(p.want[HVT_ATTR_SCHEDULER].text, "none");
        ck_assert(p.want[HVT_ATTR_READ_AHEAD_KB].set && p.want[HVT_ATTR_READ_AHEAD_KB].at_most);
        ck_assert_uint_eq(hvt_plan_count(&p), 2);
        hvt_config_free(c);
}
END_TEST

/* ... and a later one saying false drops what an earlier one kept. */
START_TEST(test_builtin_dropped_in_later_file) {
        struct hvt_config *c = load2(NULL, "builtin_policy = true;\n", "builtin_policy = false;\n");
        struct hvt_disk d = scsi_disk();
        struct hvt_plan p;

        hvt_policy_plan(c, &d, NULL, &p);
        ck_assert(!p.want[HVT_ATTR_SCHEDULER].set);
        ck_assert_uint_eq(hvt_plan_count(&p), 1);
        hvt_config_free(c);
}
END_TEST

/* Where the main file exists, builtin_policy = false changes nothing: the main file has
 * replaced the policy already. */
START_TEST(test_builtin_policy_with_main) {
        struct hvt_config *c = load("queue = { scheduler = \"mq-deadline\"; };\n", "builtin_policy = false;\n");
        struct hvt_disk d = scsi_disk();
        struct hvt_plan p;

        hvt_policy_plan(c, &d, NULL, &p);
        ck_assert_str_eq(p.want[HVT_ATTR_SCHEDULER].text, "mq-deadline");
        ck_assert_uint_eq(hvt_plan_count(&p), 2);
        hvt_config_free(c);
}
END_TEST

/* No file at all: the built-in policy over the platform values, as before. */
START_TEST(test_no_file) {
        struct hvt_config *c = load(NULL, NULL);
        struct hvt_disk d = scsi_disk();
        struct hvt_plan p;
        char buf[64];

        hvt_policy_plan(c, &d, NULL, &p);
        ck_assert_str_eq(p.want[HVT_ATTR_SCHEDULER].text, "none");
        ck_assert_uint_eq(hvt_plan_count(&p), 2);
        ck_assert_str_eq(origin(&p, HVT_ATTR_SCHEDULER, buf, sizeof(buf)), "built-in policy");
        hvt_config_free(c);
}
END_TEST

/* An override's setting names its own line. */
START_TEST(test_override_origin) {
        struct hvt_config *c = load("queue = { scheduler = \"none\"; };\n"
                                    "override = (\n"
                                    "  { match = { role = \"data\"; };\n"
                                    "    queue = { read_ahead_kb = 1024; }; }\n"
                                    ");\n", NULL);
        struct hvt_disk d = scsi_disk();
        struct hvt_plan p;
        char buf[PATH_MAX + 32], want[PATH_MAX + 32];

        hvt_policy_plan(c, &d, NULL, &p);
        ck_assert_int_eq(p.want[HVT_ATTR_READ_AHEAD_KB].num, 1024);
        snprintf(want, sizeof(want), "%s/hvtuned.conf:4", dir);
        ck_assert_str_eq(origin(&p, HVT_ATTR_READ_AHEAD_KB, buf, sizeof(buf)), want);
        snprintf(want, sizeof(want), "%s/hvtuned.conf:1", dir);
        ck_assert_str_eq(origin(&p, HVT_ATTR_SCHEDULER, buf, sizeof(buf)), want);
        hvt_config_free(c);
}
END_TEST

int main(void) {
        Suite *s = suite_create("layers");
        TCase *tc = tcase_create("layers");

        tcase_add_test(tc, test_dropin_only_keeps_policy);
        tcase_add_test(tc, test_dropin_over_policy);
        tcase_add_test(tc, test_main_replaces_policy);
        tcase_add_test(tc, test_main_without_attributes);
        tcase_add_test(tc, test_no_platform_from_dropin);
        tcase_add_test(tc, test_no_policy_from_dropin);
        tcase_add_test(tc, test_no_builtin_at_all);
        tcase_add_test(tc, test_builtin_back_in_later_file);
        tcase_add_test(tc, test_builtin_dropped_in_later_file);
        tcase_add_test(tc, test_builtin_policy_with_main);
        tcase_add_test(tc, test_no_file);
        tcase_add_test(tc, test_override_origin);
        suite_add_tcase(s, tc);
        return test_run(s);
}
