/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Override matching and the merge: base, then every matching override in order, later
 * ones winning per attribute; unset attributes stay unmanaged. */
#include <check.h>
#include <limits.h>

#include "policy.h"
#include "testutil.h"

static char dir[PATH_MAX];

static const char conf[] =
        "queue = { scheduler = \"none\"; nr_requests = 128; };\n"
        "device = { timeout = 300; };\n"
        "override = (\n"
        "  { match = { kind = \"ide\"; }; queue = { scheduler = \"mq-deadline\"; }; },\n"
        "  { match = { controller = \"{f8b3781b-1e82-4818-a1c3-63d806ec15bb}\"; lun = 0; };\n"
        "    device = { timeout = 180; }; },\n"
        "  { match = { host = 1; }; queue = { nr_requests = 64; }; },\n"
        "  { match = { host = 1; lun = 0; }; queue = { nr_requests = 32; read_ahead_kb = 1024; }; },\n"
        "  { match = { vendor = \"Msft\"; model = \"Virtual CD/ROM\"; }; queue = { read_ahead_kb = 0; }; }\n"
        ");\n";

static struct hvt_config *load(void) {
        struct hvt_config_error err;
        struct hvt_config *c;
        char *path = test_write_file(dir, "policy.conf", conf);

        ck_assert_int_eq(hvt_config_load(path, false, &c, &err), 0);
        free(path);
        return c;
}

static struct hvt_disk disk(enum hvt_kind kind, const char *controller, unsigned host, uint64_t lun,
                            const char *model) {
        struct hvt_disk d = { .kind = kind, .host = host, .lun = lun };

        strcpy(d.controller, controller);
        strcpy(d.vendor, "Msft");
        strcpy(d.model, model);
        return d;
}

#define CTRL_A "{f8b3781a-1e82-4818-a1c3-63d806ec15bb}"
#define CTRL_B "{f8b3781b-1e82-4818-a1c3-63d806ec15bb}"

START_TEST(test_base_only) {
        struct hvt_config *c = load();
        struct hvt_disk d = disk(HVT_KIND_SCSI, CTRL_A, 0, 0, "Virtual Disk");
        struct hvt_plan p;

        hvt_policy_plan(c, &d, &p);
        ck_assert_uint_eq(hvt_plan_count(&p), 3);
        ck_assert_str_eq(p.want[HVT_ATTR_SCHEDULER].text, "none");
        ck_assert_int_eq(p.want[HVT_ATTR_NR_REQUESTS].num, 128);
        ck_assert_int_eq(p.want[HVT_ATTR_TIMEOUT].num, 300);
        ck_assert(!p.want[HVT_ATTR_READ_AHEAD_KB].set);
        hvt_config_free(c);
}
END_TEST

START_TEST(test_kind) {
        struct hvt_config *c = load();
        struct hvt_disk d = disk(HVT_KIND_IDE, "{00000000-0000-8899-0000-000000000000}", 0, 0, "Virtual Disk");
        struct hvt_plan p;

        hvt_policy_plan(c, &d, &p);
        ck_assert_str_eq(p.want[HVT_ATTR_SCHEDULER].text, "mq-deadline");
        ck_assert_int_eq(p.want[HVT_ATTR_TIMEOUT].num, 300);
        hvt_config_free(c);
}
END_TEST

START_TEST(test_later_wins_per_attribute) {
        struct hvt_config *c = load();
        struct hvt_disk d = disk(HVT_KIND_SCSI, CTRL_B, 1, 0, "Virtual Disk");
        struct hvt_disk d1 = disk(HVT_KIND_SCSI, CTRL_B, 1, 1, "Virtual Disk");
        struct hvt_plan p;

        hvt_policy_plan(c, &d, &p);
        ck_assert_int_eq(p.want[HVT_ATTR_TIMEOUT].num, 180);       /* controller + lun */
        ck_assert_int_eq(p.want[HVT_ATTR_NR_REQUESTS].num, 32);    /* host 1, then host 1 lun 0 */
        ck_assert_int_eq(p.want[HVT_ATTR_READ_AHEAD_KB].num, 1024);
        ck_assert_str_eq(p.want[HVT_ATTR_SCHEDULER].text, "none");  /* base, never overridden */
        ck_assert_uint_eq(hvt_plan_count(&p), 4);

        hvt_policy_plan(c, &d1, &p);
        ck_assert_int_eq(p.want[HVT_ATTR_TIMEOUT].num, 300);
        ck_assert_int_eq(p.want[HVT_ATTR_NR_REQUESTS].num, 64);
        ck_assert(!p.want[HVT_ATTR_READ_AHEAD_KB].set);
        hvt_config_free(c);
}
END_TEST

START_TEST(test_match_fields) {
        struct hvt_disk d = disk(HVT_KIND_SCSI, CTRL_B, 2, 7, "Virtual CD/ROM");
        struct hvt_match m = {};

        ck_assert(hvt_match_disk(&m, &d));  /* empty match: every disk */
        m.fields = HVT_MATCH_VENDOR | HVT_MATCH_MODEL;
        strcpy(m.vendor, "Msft");
        strcpy(m.model, "Virtual CD/ROM");
        ck_assert(hvt_match_disk(&m, &d));
        strcpy(m.model, "Virtual Disk");
        ck_assert(!hvt_match_disk(&m, &d));

        m = (struct hvt_match) { .fields = HVT_MATCH_LUN, .lun = 7 };
        ck_assert(hvt_match_disk(&m, &d));
        m.lun = 6;
        ck_assert(!hvt_match_disk(&m, &d));

        m = (struct hvt_match) { .fields = HVT_MATCH_HOST | HVT_MATCH_KIND, .host = 2, .kind = HVT_KIND_SCSI };
        ck_assert(hvt_match_disk(&m, &d));
        m.kind = HVT_KIND_FC;
        ck_assert(!hvt_match_disk(&m, &d));

        m = (struct hvt_match) { .fields = HVT_MATCH_CONTROLLER };
        strcpy(m.controller, CTRL_A);
        ck_assert(!hvt_match_disk(&m, &d));
        strcpy(m.controller, CTRL_B);
        ck_assert(hvt_match_disk(&m, &d));
}
END_TEST

/* The configuration's settings are whole-table; the driver's there (which the parser never
 * sets) never reach a disk's plan. */
START_TEST(test_driver_settings_left_out) {
        struct hvt_config *c = load();
        struct hvt_disk d = disk(HVT_KIND_IDE, CTRL_A, 0, 0, "Virtual Disk");   /* override[0]'s */
        struct hvt_plan p;

        for (size_t i = _HVT_ATTR_DISK_MAX; i < _HVT_ATTR_MAX; i++) {
                c->settings[i] = (struct hvt_setting) { .set = true, .num = 1, .text = "1" };
                c->overrides[0].settings[i] = c->settings[i];
        }
        hvt_policy_plan(c, &d, &p);
        ck_assert_uint_eq(hvt_plan_count(&p), 3);
        ck_assert_str_eq(p.want[HVT_ATTR_SCHEDULER].text, "mq-deadline");
        hvt_config_free(c);
}
END_TEST

int main(void) {
        Suite *s = suite_create("policy");
        TCase *tc = tcase_create("merge");

        tcase_add_test(tc, test_base_only);
        tcase_add_test(tc, test_kind);
        tcase_add_test(tc, test_later_wins_per_attribute);
        tcase_add_test(tc, test_match_fields);
        tcase_add_test(tc, test_driver_settings_left_out);
        suite_add_tcase(s, tc);
        return test_run(s);
}
