/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Override matching and the merge: the platform defaults, base, then every matching override
 * in order, later ones winning per attribute; unset attributes stay unmanaged. */
#include <check.h>
#include <limits.h>

#include "policy.h"
#include "testutil.h"

static char dir[PATH_MAX];

/* The merge of the file's layers, without the platform defaults (tested on their own). */
static const char conf[] =
        "platform_defaults = false;\n"
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

static struct hvt_config *load_text(const char *text) {
        struct hvt_config_error err;
        struct hvt_config *c;
        char *path = test_write_file(dir, "policy.conf", text);

        ck_assert_int_eq(hvt_config_load(path, false, &c, &err), 0);
        free(path);
        return c;
}

static struct hvt_config *load(void) {
        return load_text(conf);
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

        hvt_policy_plan(c, &d, NULL, &p);
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

        hvt_policy_plan(c, &d, NULL, &p);
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

        hvt_policy_plan(c, &d, NULL, &p);
        ck_assert_int_eq(p.want[HVT_ATTR_TIMEOUT].num, 180);       /* controller + lun */
        ck_assert_int_eq(p.want[HVT_ATTR_NR_REQUESTS].num, 32);    /* host 1, then host 1 lun 0 */
        ck_assert_int_eq(p.want[HVT_ATTR_READ_AHEAD_KB].num, 1024);
        ck_assert_str_eq(p.want[HVT_ATTR_SCHEDULER].text, "none");  /* base, never overridden */
        ck_assert_uint_eq(hvt_plan_count(&p), 4);

        hvt_policy_plan(c, &d1, NULL, &p);
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
        hvt_policy_plan(c, &d, NULL, &p);
        ck_assert_uint_eq(hvt_plan_count(&p), 3);
        ck_assert_str_eq(p.want[HVT_ATTR_SCHEDULER].text, "mq-deadline");
        hvt_config_free(c);
}
END_TEST

static struct hvt_disk nvme_disk(enum hvt_kind kind, enum hvt_role role, uint32_t nsid) {
        return (struct hvt_disk) { .kind = kind, .role = role, .nsid = nsid,
                                   .lun = role == HVT_ROLE_DATA ? nsid - 2 : HVT_LUN_NONE };
}

/* Without a file: the scheduler, and the Azure defaults: a read-ahead ceiling on every disk,
 * io_timeout on NVMe only. */
START_TEST(test_platform_defaults) {
        struct hvt_config_error err;
        struct hvt_config *c;
        struct hvt_disk scsi = disk(HVT_KIND_SCSI, CTRL_B, 1, 0, "Virtual Disk");
        struct hvt_disk nvme = nvme_disk(HVT_KIND_NVME_ACCELERATOR, HVT_ROLE_OS, 1);
        struct hvt_plan p;

        ck_assert_int_eq(hvt_config_load("/nonexistent/hvtuned.conf", true, &c, &err), 0);
        hvt_policy_plan(c, &scsi, NULL, &p);
        ck_assert_uint_eq(hvt_plan_count(&p), 2);
        ck_assert_str_eq(p.want[HVT_ATTR_SCHEDULER].text, "none");
        ck_assert(p.want[HVT_ATTR_READ_AHEAD_KB].at_most);
        ck_assert_int_eq(p.want[HVT_ATTR_READ_AHEAD_KB].num, 128);
        ck_assert(!p.want[HVT_ATTR_IO_TIMEOUT].set);

        hvt_policy_plan(c, &nvme, NULL, &p);
        ck_assert_uint_eq(hvt_plan_count(&p), 3);
        ck_assert(!p.want[HVT_ATTR_IO_TIMEOUT].at_most);
        ck_assert_str_eq(p.want[HVT_ATTR_IO_TIMEOUT].text, "240000");
        ck_assert_int_eq(p.want[HVT_ATTR_READ_AHEAD_KB].num, 128);
        hvt_config_free(c);
}
END_TEST

/* A file's value wins over a default, as a value (no ceiling), and platform_defaults = false
 * leaves exactly what the file names. */
START_TEST(test_platform_defaults_yield_to_file) {
        struct hvt_config *c = load_text("override = ({ match = { role = \"data\"; }; queue = { read_ahead_kb = 4096; }; });\n");
        struct hvt_disk data = nvme_disk(HVT_KIND_NVME_ACCELERATOR, HVT_ROLE_DATA, 3);
        struct hvt_disk os = nvme_disk(HVT_KIND_NVME_ACCELERATOR, HVT_ROLE_OS, 1);
        struct hvt_plan p;

        hvt_policy_plan(c, &data, NULL, &p);
        ck_assert_int_eq(p.want[HVT_ATTR_READ_AHEAD_KB].num, 4096);
        ck_assert(!p.want[HVT_ATTR_READ_AHEAD_KB].at_most);
        ck_assert_int_eq(p.want[HVT_ATTR_IO_TIMEOUT].num, 240000);
        ck_assert(!p.want[HVT_ATTR_SCHEDULER].set);  /* a file exists: no scheduler default */
        hvt_policy_plan(c, &os, NULL, &p);
        ck_assert(p.want[HVT_ATTR_READ_AHEAD_KB].at_most);
        hvt_config_free(c);

        c = load_text("platform_defaults = false;\nqueue = { nomerges = 2; };\n");
        hvt_policy_plan(c, &os, NULL, &p);
        ck_assert_uint_eq(hvt_plan_count(&p), 1);
        ck_assert(p.want[HVT_ATTR_NOMERGES].set);
        hvt_config_free(c);
}
END_TEST

/* A ceiling over an attribute whose original hvtuned recorded is judged against that
 * original: the lower of the two, still a ceiling. A value the file sets is a value, and an
 * original changes nothing of it. */
START_TEST(test_ceiling_against_original) {
        struct hvt_config_error err;
        struct hvt_config *c;
        struct hvt_disk scsi = disk(HVT_KIND_SCSI, CTRL_B, 1, 0, "Virtual Disk");
        struct hvt_originals o = {};
        struct hvt_plan p;

        scsi.role = HVT_ROLE_DATA;
        ck_assert_int_eq(hvt_config_load("/nonexistent/hvtuned.conf", true, &c, &err), 0);
        ck_assert_int_eq(hvt_setting_from_kernel(&o.value[HVT_ATTR_READ_AHEAD_KB], HVT_ATTR_READ_AHEAD_KB, "64"), 0);
        ck_assert_int_eq(hvt_setting_from_kernel(&o.value[HVT_ATTR_SCHEDULER], HVT_ATTR_SCHEDULER, "bfq"), 0);
        /* Under the ceiling: not planned, so that its original goes back, as at a restart. */
        hvt_policy_plan(c, &scsi, &o, &p);
        ck_assert(!p.want[HVT_ATTR_READ_AHEAD_KB].set);
        ck_assert_str_eq(p.want[HVT_ATTR_SCHEDULER].text, "none");  /* no ceiling: as planned */

        /* Over the ceiling, or at it: the ceiling. */
        ck_assert_int_eq(hvt_setting_from_kernel(&o.value[HVT_ATTR_READ_AHEAD_KB], HVT_ATTR_READ_AHEAD_KB, "4096"), 0);
        hvt_policy_plan(c, &scsi, &o, &p);
        ck_assert(p.want[HVT_ATTR_READ_AHEAD_KB].at_most);
        ck_assert_str_eq(p.want[HVT_ATTR_READ_AHEAD_KB].text, "128");
        ck_assert_int_eq(hvt_setting_from_kernel(&o.value[HVT_ATTR_READ_AHEAD_KB], HVT_ATTR_READ_AHEAD_KB, "128"), 0);
        hvt_policy_plan(c, &scsi, &o, &p);
        ck_assert_str_eq(p.want[HVT_ATTR_READ_AHEAD_KB].text, "128");

        /* None recorded: the ceiling as it is, for apply to judge against the disk. */
        hvt_policy_plan(c, &scsi, &(struct hvt_originals) {}, &p);
        ck_assert(p.want[HVT_ATTR_READ_AHEAD_KB].at_most);
        ck_assert_int_eq(p.want[HVT_ATTR_READ_AHEAD_KB].num, 128);
        hvt_config_free(c);

        /* The file's value. */
        c = load_text("override = ({ match = { role = \"data\"; }; queue = { read_ahead_kb = 512; }; });\n");
        ck_assert_int_eq(hvt_setting_from_kernel(&o.value[HVT_ATTR_READ_AHEAD_KB], HVT_ATTR_READ_AHEAD_KB, "64"), 0);
        hvt_policy_plan(c, &scsi, &o, &p);
        ck_assert(!p.want[HVT_ATTR_READ_AHEAD_KB].at_most);
        ck_assert_str_eq(p.want[HVT_ATTR_READ_AHEAD_KB].text, "512");
        hvt_config_free(c);

        /* No ceiling at all without the platform defaults. */
        c = load_text("platform_defaults = false;\nqueue = { nomerges = 1; };\n");
        hvt_policy_plan(c, &scsi, &o, &p);
        ck_assert(!p.want[HVT_ATTR_READ_AHEAD_KB].set);
        hvt_config_free(c);
}
END_TEST

/* device/ of an NVMe namespace is its controller: SCSI's timeout never goes there. */
START_TEST(test_nvme_no_device_group) {
        struct hvt_config *c = load();
        struct hvt_disk nvme = nvme_disk(HVT_KIND_NVME_DIRECT_V2, HVT_ROLE_LOCAL, 1);
        struct hvt_plan p;

        hvt_policy_plan(c, &nvme, NULL, &p);
        ck_assert(!p.want[HVT_ATTR_TIMEOUT].set);
        ck_assert_int_eq(p.want[HVT_ATTR_NR_REQUESTS].num, 128);
        ck_assert_uint_eq(hvt_plan_count(&p), 2);
        hvt_config_free(c);
}
END_TEST

/* A head's queue has no requests: only what stays a head's own is planned. */
START_TEST(test_nvme_head_plan) {
        struct hvt_config *c = load_text("queue = { scheduler = \"none\"; nr_requests = 64; rq_affinity = 2; "
                                         "wbt_lat_usec = 0; nomerges = 1; };\n");
        struct hvt_disk head = nvme_disk(HVT_KIND_NVME_ACCELERATOR, HVT_ROLE_DATA, 2);
        struct hvt_plan p;

        head.multipath_head = true;
        hvt_policy_plan(c, &head, NULL, &p);
        ck_assert(!p.want[HVT_ATTR_SCHEDULER].set && !p.want[HVT_ATTR_NR_REQUESTS].set);
        ck_assert(!p.want[HVT_ATTR_RQ_AFFINITY].set && !p.want[HVT_ATTR_WBT_LAT_USEC].set);
        ck_assert(!p.want[HVT_ATTR_IO_TIMEOUT].set);  /* the platform's 240000 too */
        ck_assert(p.want[HVT_ATTR_NOMERGES].set && p.want[HVT_ATTR_READ_AHEAD_KB].at_most);
        ck_assert_uint_eq(hvt_plan_count(&p), 2);
        hvt_config_free(c);
}
END_TEST

START_TEST(test_match_role) {
        struct hvt_disk os = disk(HVT_KIND_SCSI, CTRL_A, 0, 0, "Virtual Disk");
        struct hvt_disk local = nvme_disk(HVT_KIND_NVME_DIRECT, HVT_ROLE_LOCAL, 1);
        struct hvt_match m = { .fields = HVT_MATCH_ROLE, .role = HVT_ROLE_LOCAL };

        os.role = HVT_ROLE_OS;
        ck_assert(!hvt_match_disk(&m, &os));
        ck_assert(hvt_match_disk(&m, &local));
        m = (struct hvt_match) { .fields = HVT_MATCH_KIND | HVT_MATCH_LUN, .kind = HVT_KIND_NVME_DIRECT, .lun = 0 };
        ck_assert(!hvt_match_disk(&m, &local));  /* a local disk has no LUN */
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
        tcase_add_test(tc, test_platform_defaults);
        tcase_add_test(tc, test_platform_defaults_yield_to_file);
        tcase_add_test(tc, test_ceiling_against_original);
        tcase_add_test(tc, test_nvme_no_device_group);
        tcase_add_test(tc, test_match_role);
        tcase_add_test(tc, test_nvme_head_plan);
        suite_add_tcase(s, tc);
        return test_run(s);
}
