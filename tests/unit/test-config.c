/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Config loading: the issue's example, the built-in default, and every kind of bad input
 * with the file, line and key it must name. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "macro.h"
#include "policy.h"
#include "testutil.h"

static char dir[PATH_MAX];

static struct hvt_config *load_ok(const char *text) {
        struct hvt_config_error err = {};
        struct hvt_config *c = NULL;
        char *path = test_write_file(dir, "ok.conf", text);
        int r = hvt_config_load(path, false, &c, &err);

        ck_assert_msg(r == 0, "load failed: %s:%d: %s: %s", err.file, err.line, err.key, err.message);
        free(path);
        return c;
}

/* Loads text, expects failure at line naming key, with a message containing needle. */
static void load_bad(const char *text, int line, const char *key, const char *needle) {
        struct hvt_config_error err = {};
        struct hvt_config *c = NULL;
        char *path = test_write_file(dir, "bad.conf", text);
        char formatted[512];

        ck_assert_int_eq(hvt_config_load(path, false, &c, &err), -EINVAL);
        ck_assert_ptr_null(c);
        ck_assert_str_eq(err.file, path);
        ck_assert_int_eq(err.line, line);
        ck_assert_str_eq(err.key, key);
        ck_assert_msg(strstr(err.message, needle), "message \"%s\" lacks \"%s\"", err.message, needle);
        hvt_config_error_format(&err, formatted, sizeof(formatted));
        ck_assert_ptr_eq(strstr(formatted, path), formatted);
        free(path);
}

START_TEST(test_issue_example) {
        struct hvt_config *c = load_ok(
                "queue  = { scheduler = \"none\"; nr_requests = 128; read_ahead_kb = 4096; };\n"
                "device = { queue_depth = 254; timeout = 300; };\n"
                "override = (\n"
                "  { match = { kind = \"ide\"; }; queue = { scheduler = \"mq-deadline\"; }; },\n"
                "  { match = { controller = \"{F8B3781B-1e82-4818-a1c3-63d806ec15bb}\"; lun = 0; };\n"
                "    device = { timeout = 180; }; }\n"
                ");\n");

        ck_assert_str_eq(c->settings[HVT_ATTR_SCHEDULER].text, "none");
        ck_assert_int_eq(c->settings[HVT_ATTR_NR_REQUESTS].num, 128);
        ck_assert_int_eq(c->settings[HVT_ATTR_READ_AHEAD_KB].num, 4096);
        ck_assert_int_eq(c->settings[HVT_ATTR_QUEUE_DEPTH].num, 254);
        ck_assert_int_eq(c->settings[HVT_ATTR_TIMEOUT].num, 300);
        ck_assert(!c->settings[HVT_ATTR_NOMERGES].set);
        ck_assert(!c->settings[HVT_ATTR_EH_TIMEOUT].set);

        ck_assert_uint_eq(c->n_overrides, 2);
        ck_assert_uint_eq(c->overrides[0].match.fields, HVT_MATCH_KIND);
        ck_assert_int_eq(c->overrides[0].match.kind, HVT_KIND_IDE);
        ck_assert_str_eq(c->overrides[0].settings[HVT_ATTR_SCHEDULER].text, "mq-deadline");
        ck_assert_uint_eq(c->overrides[1].match.fields, HVT_MATCH_CONTROLLER | HVT_MATCH_LUN);
        ck_assert_str_eq(c->overrides[1].match.controller, "{f8b3781b-1e82-4818-a1c3-63d806ec15bb}");
        ck_assert_uint_eq(c->overrides[1].match.lun, 0);
        ck_assert_int_eq(c->overrides[1].settings[HVT_ATTR_TIMEOUT].num, 180);
        ck_assert(!c->overrides[1].settings[HVT_ATTR_SCHEDULER].set);
        hvt_config_free(c);
}
END_TEST

START_TEST(test_all_keys_and_bounds) {
        struct hvt_config *c = load_ok(
                "queue = { scheduler = \"bfq\"; nr_requests = 4; read_ahead_kb = 4294967295L;\n"
                "          max_sectors_kb = 1024; rq_affinity = 2; nomerges = 0; add_random = 0;\n"
                "          iostats = 1; io_timeout = 30000; wbt_lat_usec = 0; };\n"
                "device = { queue_depth = 4096; eh_timeout = 10; };\n"
                "override = ( { match = { vendor = \"Msft    \"; model = \"Virtual Disk\"; host = 3; };\n"
                "               queue = { nomerges = 2; }; },\n"
                "             { match = {}; device = { queue_depth = 1; }; } );\n");

        for (size_t i = 0; i < _HVT_ATTR_DISK_MAX; i++)
                ck_assert_msg(c->settings[i].set == (i != HVT_ATTR_TIMEOUT), "attribute %zu", i);
        for (size_t i = _HVT_ATTR_DISK_MAX; i < _HVT_ATTR_MAX; i++)
                ck_assert_msg(!c->settings[i].set, "driver attribute %zu set from a disk group", i);
        ck_assert_int_eq(c->settings[HVT_ATTR_READ_AHEAD_KB].num, 4294967295LL);
        ck_assert_str_eq(c->settings[HVT_ATTR_READ_AHEAD_KB].text, "4294967295");
        ck_assert_str_eq(c->overrides[0].match.vendor, "Msft");
        ck_assert_str_eq(c->overrides[0].match.model, "Virtual Disk");
        ck_assert_uint_eq(c->overrides[0].match.host, 3);
        ck_assert_uint_eq(c->overrides[1].match.fields, 0);
        hvt_config_free(c);
}
END_TEST

START_TEST(test_host) {
        struct hvt_config *c = load_ok("# nothing\n");

        ck_assert(!c->host.max_hw_queues_set);
        ck_assert(!c->host.reprobe_idle_controllers);
        hvt_config_free(c);

        c = load_ok("host = { max_hw_queues = 0; reprobe_idle_controllers = true; };\n");
        ck_assert(c->host.max_hw_queues_set);
        ck_assert_uint_eq(c->host.max_hw_queues, 0);
        ck_assert(c->host.reprobe_idle_controllers);
        hvt_config_free(c);

        c = load_ok("host = { max_hw_queues = 8; };\n");
        ck_assert_uint_eq(c->host.max_hw_queues, 8);
        hvt_config_free(c);

        load_bad("host = { max_hw_queues = -1; };\n", 1, "host.max_hw_queues", "out of range 0..4294967295");
        load_bad("host = { max_hw_queues = \"4\"; };\n", 1, "host.max_hw_queues", "expected an integer");
        load_bad("host = {\n reprobe_idle_controllers = 1; };\n", 2, "host.reprobe_idle_controllers",
                 "expected a boolean, got an integer");
        load_bad("host = { storvsc_max_hw_queues = 4; };\n", 1, "host.storvsc_max_hw_queues",
                 "unknown key (max_hw_queues, reprobe_idle_controllers)");
        load_bad("host = 4;\n", 1, "host", "expected a group");
}
END_TEST

START_TEST(test_empty_file_manages_nothing) {
        struct hvt_config *c = load_ok("# nothing\n");

        for (size_t i = 0; i < _HVT_ATTR_MAX; i++)
                ck_assert(!c->settings[i].set);
        ck_assert_str_eq(c->path + strlen(c->path) - 7, "ok.conf");
        hvt_config_free(c);
}
END_TEST

START_TEST(test_default_when_missing) {
        struct hvt_config_error err = {};
        struct hvt_config *c = NULL;

        ck_assert_int_eq(hvt_config_load("/nonexistent/hvtuned.conf", true, &c, &err), 0);
        ck_assert_ptr_null(c->path);
        ck_assert_str_eq(c->settings[HVT_ATTR_SCHEDULER].text, "none");
        for (size_t i = 1; i < _HVT_ATTR_MAX; i++)
                ck_assert(!c->settings[i].set);
        hvt_config_free(c);

        /* Asked for by name (-c), a missing file is an error. */
        c = NULL;
        ck_assert_int_eq(hvt_config_load("/nonexistent/hvtuned.conf", false, &c, &err), -ENOENT);
        ck_assert_ptr_null(c);
        ck_assert_str_eq(err.file, "/nonexistent/hvtuned.conf");
        ck_assert_ptr_nonnull(strstr(err.message, "No such file"));
}
END_TEST

START_TEST(test_bad_values) {
        load_bad("queue = {\n  nr_requests = 20000;\n};\n", 2, "queue.nr_requests", "out of range");
        load_bad("queue = { nr_requests = 3; };\n", 1, "queue.nr_requests", "4..10240");
        load_bad("\n\nqueue = { rq_affinity = 3; };\n", 3, "queue.rq_affinity", "0..2");
        load_bad("queue = { read_ahead_kb = -1; };\n", 1, "queue.read_ahead_kb", "out of range");
        load_bad("queue = { read_ahead_kb = 4294967296L; };\n", 1, "queue.read_ahead_kb", "out of range");
        load_bad("queue = { io_timeout = 0; };\n", 1, "queue.io_timeout", "out of range");
        load_bad("queue = { wbt_lat_usec = -1; };\n", 1, "queue.wbt_lat_usec", "out of range");
        load_bad("device = { queue_depth = 0; };\n", 1, "device.queue_depth", "out of range");
        load_bad("device = { timeout = 0; };\n", 1, "device.timeout", "out of range");
        load_bad("queue = { nr_requests = \"128\"; };\n", 1, "queue.nr_requests", "expected an integer, got a string");
        load_bad("queue = { nr_requests = 1.5; };\n", 1, "queue.nr_requests", "got a float");
        load_bad("queue = { add_random = true; };\n", 1, "queue.add_random", "got a boolean");
        load_bad("queue = { scheduler = 1; };\n", 1, "queue.scheduler", "expected a string");
        load_bad("queue = { scheduler = \"mq deadline\"; };\n", 1, "queue.scheduler", "not a scheduler name");
        load_bad("queue = { scheduler = \"../../x\"; };\n", 1, "queue.scheduler", "not a scheduler name");
        load_bad("queue = { scheduler = \"\"; };\n", 1, "queue.scheduler", "not a scheduler name");
}
END_TEST

START_TEST(test_bad_keys) {
        load_bad("queue = { scheduler = \"none\"; };\nqeueu = { };\n", 2, "qeueu", "unknown key");
        load_bad("verify = 5;\n", 1, "verify", "unknown key (queue, device, host, override, verify_interval, restore_on_stop, platform_defaults, builtin_policy, metrics_file, contested)");
        load_bad("queue = {\n  schedular = \"none\";\n};\n", 2, "queue.schedular", "unknown key");
        load_bad("queue = { io_poll = 1; };\n", 1, "queue.io_poll", "unknown key");
        load_bad("device = { nr_requests = 1; };\n", 1, "device.nr_requests", "unknown key");
        load_bad("queue = \"none\";\n", 1, "queue", "expected a group");
        load_bad("queue = { timeout = 30; };\n", 1, "queue.timeout", "unknown key");
}
END_TEST

/* A misspelt key names the key meant where one is near (two edits at most); a far one does
 * not guess. */
START_TEST(test_bad_keys_suggest) {
        load_bad("queue = {\n  shceduler = \"none\";\n};\n", 2, "queue.shceduler",
                 "unknown key, did you mean scheduler?");
        load_bad("device = { queue_dpeth = 32; };\n", 1, "device.queue_dpeth", "unknown key, did you mean queue_depth?");
        load_bad("verify_intervall = 5;\n", 1, "verify_intervall", "unknown key (queue, device, host, override, "
                 "verify_interval, restore_on_stop, platform_defaults, builtin_policy, metrics_file, contested), did you mean "
                 "verify_interval?");
        load_bad("host = { max_hwqueues = 4; };\n", 1, "host.max_hwqueues", "did you mean max_hw_queues?");
        load_bad("override = ( { match = { rol = \"data\"; }; queue = { nomerges = 1; }; } );\n", 1,
                 "override[0].match.rol", "did you mean role?");
        load_bad("contested = { queue = { read_ahaed_kb = \"insist\"; }; };\n", 1, "contested.queue.read_ahaed_kb",
                 "unknown key, did you mean read_ahead_kb?");
        load_bad("queue = { frobnicate = 1; };\n", 1, "queue.frobnicate", "unknown key");
        {
                struct hvt_config_error err = {};
                struct hvt_config *c = NULL;
                char *path = test_write_file(dir, "far.conf", "queue = { frobnicate = 1; };\n");

                ck_assert_int_eq(hvt_config_load(path, false, &c, &err), -EINVAL);
                ck_assert_str_eq(err.message, "unknown key");
                free(path);
        }
}
END_TEST

/* libconfig refuses "yes" before hvtuned sees the setting: its "syntax error" at the line
 * says how a boolean (or a string) is written. */
/* Loads text, expects failure at line with exactly message. */
static void load_bad_exact(const char *text, int line, const char *message) {
        struct hvt_config_error err = {};
        struct hvt_config *c = NULL;
        char *path = test_write_file(dir, "bad.conf", text);

        ck_assert_int_eq(hvt_config_load(path, false, &c, &err), -EINVAL);
        ck_assert_int_eq(err.line, line);
        ck_assert_str_eq(err.message, message);
        free(path);
}

START_TEST(test_bare_word_value) {
        load_bad("verify_interval = 5;\nrestore_on_stop = yes;\n", 2, "",
                 "syntax error: a boolean is written true or false, not yes");
        load_bad("host = { reprobe_idle_controllers = Off; };\n", 1, "",
                 "syntax error: a boolean is written true or false, not Off");
        load_bad("queue = { scheduler = none; };\n", 1, "",
                 "syntax error: a string is written in double quotes (\"none\"), a boolean as true or false");
        /* Another syntax error keeps libconfig's words alone. */
        load_bad("queue = { nr_requests = ; };\n", 1, "", "syntax error");
        /* A word in a comment or in a string is no value: the hint names the bare word, or
         * none. */
        load_bad_exact("queue = { nr_requests = 12x; }; # note: tuned\n", 1, "syntax error");
        load_bad_exact("queue = { nr_requests = 12x; }; // note: tuned\n", 1, "syntax error");
        load_bad_exact("queue = { nr_requests = 12x; }; /* note: tuned */\n", 1, "syntax error");
        load_bad_exact("metrics_file = \"/run/a:b\"; queue = { scheduler = none; };\n", 1,
                       "syntax error: a string is written in double quotes (\"none\"), a boolean as true or false");
        load_bad_exact("metrics_file = \"/run/\\\"x=y\"; queue = { scheduler = none; };\n", 1,
                       "syntax error: a string is written in double quotes (\"none\"), a boolean as true or false");
}
END_TEST

START_TEST(test_metrics_file) {
        struct hvt_config *c = load_ok("verify_interval = 5;\n");

        ck_assert_ptr_null(c->metrics_file);
        hvt_config_free(c);
        c = load_ok("metrics_file = \"/var/lib/prometheus/node-exporter/hvtuned.prom\";\n");
        ck_assert_str_eq(c->metrics_file, "/var/lib/prometheus/node-exporter/hvtuned.prom");
        hvt_config_free(c);
        load_bad("metrics_file = \"hvtuned.prom\";\n", 1, "metrics_file", "\"hvtuned.prom\" is not an absolute path");
        load_bad("metrics_file = \"/var/lib/x/hvtuned.txt\";\n", 1, "metrics_file", "does not end in NAME.prom");
        load_bad("metrics_file = \"/var/lib/x/.prom\";\n", 1, "metrics_file", "does not end in NAME.prom");
        /* The message keeps the value as it is; the sinks escape it (lib/escape.h). */
        load_bad("metrics_file = \"/x/a\\nb.prom\";\n", 1, "metrics_file", "\"/x/a\nb.prom\" holds a control character");
        load_bad("metrics_file = 1;\n", 1, "metrics_file", "expected a string");
}
END_TEST

/* contested: yield unless the file says insist, per attribute; a bad one names its key. */
START_TEST(test_contested) {
        struct hvt_config *c = load_ok("queue = { read_ahead_kb = 128; };\n");

        ck_assert_uint_eq(c->contest_insist, 0);  /* the default: yield everywhere */
        hvt_config_free(c);
        c = load_ok("contested = {\n"
                    "  queue = { read_ahead_kb = \"insist\"; scheduler = \"yield\"; io_timeout = \"insist\"; };\n"
                    "  device = { timeout = \"insist\"; };\n"
                    "};\n");
        ck_assert_uint_eq(c->contest_insist, (UINT32_C(1) << HVT_ATTR_READ_AHEAD_KB) |
                          (UINT32_C(1) << HVT_ATTR_IO_TIMEOUT) | (UINT32_C(1) << HVT_ATTR_TIMEOUT));
        hvt_config_free(c);

        load_bad("contested = 1;\n", 1, "contested", "expected a group, got an integer");
        load_bad("contested = {\n  host = {};\n};\n", 2, "contested.host", "unknown key (queue, device)");
        load_bad("contested = {\n  queue = \"insist\";\n};\n", 2, "contested.queue", "expected a group, got a string");
        load_bad("contested = { queue = {\n  readahead = \"insist\"; }; };\n", 2, "contested.queue.readahead",
                 "unknown key");
        /* A device attribute is not the queue's, nor the other way round. */
        load_bad("contested = { queue = {\n timeout = \"insist\"; }; };\n", 2, "contested.queue.timeout",
                 "unknown key");
        load_bad("contested = { device = {\n\n timeout = \"fight\"; }; };\n", 3, "contested.device.timeout",
                 "\"fight\" is neither \"yield\" nor \"insist\"");
        load_bad("contested = { device = { timeout = true; }; };\n", 1, "contested.device.timeout",
                 "expected a string, got a boolean");
}
END_TEST

START_TEST(test_timeout_pair) {
        load_bad("device = { timeout = 300; };\n"
                 "override = ( { match = { kind = \"ide\"; }; queue = { io_timeout = 30000; }; } );\n",
                 2, "override[0].queue.io_timeout", "same kernel setting");
}
END_TEST

START_TEST(test_bad_overrides) {
        load_bad("override = { match = {}; };\n", 1, "override", "expected a list");
        load_bad("override = ( { queue = { nomerges = 1; }; } );\n", 1, "override[0]", "no match group");
        load_bad("override = ( { match = { kind = \"ide\"; }; } );\n", 1, "override[0]", "sets nothing");
        load_bad("override = (\n { match = { kind = \"nvme\"; }; queue = { nomerges = 1; }; }\n);\n",
                 2, "override[0].match.kind", "not a controller kind");
        load_bad("override = (\n { match = {}; queue = { nomerges = 1; }; },\n"
                 " { match = { controller = \"f8b3781b\"; }; queue = { nomerges = 1; }; }\n);\n",
                 3, "override[1].match.controller", "not a VMBus device id");
        load_bad("override = ( { match = { lun = -1; }; queue = { nomerges = 1; }; } );\n",
                 1, "override[0].match.lun", "out of range");
        load_bad("override = ( { match = { serial = \"x\"; }; queue = { nomerges = 1; }; } );\n",
                 1, "override[0].match.serial", "unknown match key");
        load_bad("override = ( { match = { vendor = \"Microsoft\"; }; queue = { nomerges = 1; }; } );\n",
                 1, "override[0].match.vendor", "can never match");
        load_bad("override = ( { match = {}; queue = { nomerges = 1; }; scope = 1; } );\n",
                 1, "override[0].scope", "unknown key");
        load_bad("override = ( { match = {}; device = { queue_depth = 5000; }; } );\n",
                 1, "override[0].device.queue_depth", "1..4096");
}
END_TEST

START_TEST(test_wide_literals) {
        struct hvt_config *c;

        /* libconfig 1.5 keeps the low 32 bits of a plain integer: refused, never applied as 0. */
        load_bad("queue = {\n  read_ahead_kb = 4294967296;\n};\n", 2, "", "write 4294967296L");
        load_bad("queue = { read_ahead_kb = 0x100000000; };\n", 1, "", "write 0x100000000L");
        load_bad("queue = { nr_requests = 2147483648; };\n", 1, "", "does not fit in 32 bits");
        load_bad("# x\nqueue = { read_ahead_kb = 99999999999999999999L; };\n", 2, "", "is too large");
        /* A NUL escape, in either spelling libconfig reads (\x00, \X00): 1.5 drops the byte
         * ("no\x00ne" loads as "none"), 1.7 ends the string there ("none\x00bfq" is "none"). */
        load_bad("queue = {\n scheduler = \"none\\x00bfq\";\n};\n", 2, "", "a NUL escape (x00)");
        load_bad("queue = {\n\n scheduler = \"no\\X00ne\";\n};\n", 3, "", "a NUL escape (x00)");
        load_bad("queue = { scheduler = \"no\\x00ne\"; };\n", 1, "", "a NUL escape (x00)");
        /* Not a NUL escape: an escaped backslash and then "x00" (a path may hold both). */
        c = load_ok("metrics_file = \"/run/a\\\\x00.prom\";\n");
        ck_assert_str_eq(c->metrics_file, "/run/a\\x00.prom");
        hvt_config_free(c);
        hvt_config_free(load_ok("queue = { scheduler = \"none\"; }; # \"\\x00\" in a comment is no string\n"));

        /* Not integers of the configuration: comments, strings, names, floats; and L literals. */
        c = load_ok("# 99999999999\n// 0x1ffffffff\n/* 4294967296\n */\n"
                    "queue = { read_ahead_kb = 4294967295L; scheduler = \"b5000000000\"; };\n"
                    "device = { timeout = 2147483; };\n");
        ck_assert_int_eq(c->settings[HVT_ATTR_READ_AHEAD_KB].num, 4294967295LL);
        hvt_config_free(c);
        c = load_ok("queue = { rq_affinity = -0; };\n" "device = { eh_timeout = 0x10; };\n");
        ck_assert_int_eq(c->settings[HVT_ATTR_EH_TIMEOUT].num, 16);
        hvt_config_free(c);
}
END_TEST

START_TEST(test_top_level_options) {
        struct hvt_config *c = load_ok("queue = { scheduler = \"none\"; };\n");

        /* A minute unless said; 0 is said (no timer at all). */
        ck_assert_uint_eq(c->verify_interval, 60);
        hvt_config_free(c);
        c = load_ok("verify_interval = 0;\n");
        ck_assert_uint_eq(c->verify_interval, 0);
        ck_assert(c->restore_on_stop);
        hvt_config_free(c);

        c = load_ok("verify_interval = 300;\nrestore_on_stop = false;\n");
        ck_assert_uint_eq(c->verify_interval, 300);
        ck_assert(!c->restore_on_stop);
        hvt_config_free(c);

        load_bad("verify_interval = -1;\n", 1, "verify_interval", "out of range 0..604800");
        load_bad("verify_interval = 604801;\n", 1, "verify_interval", "out of range");
        load_bad("verify_interval = \"5m\";\n", 1, "verify_interval", "expected an integer");
        load_bad("\nrestore_on_stop = 1;\n", 2, "restore_on_stop", "expected a boolean, got an integer");
        load_bad("restore_on_stop = \"yes\";\n", 1, "restore_on_stop", "expected a boolean");
}
END_TEST

START_TEST(test_syntax_error) {
        struct hvt_config_error err = {};
        struct hvt_config *c = NULL;
        char *path = test_write_file(dir, "syntax.conf", "queue = {\n  scheduler = \"none\";\n  nr_requests = ;\n};\n");

        ck_assert_int_eq(hvt_config_load(path, false, &c, &err), -EINVAL);
        ck_assert_str_eq(err.file, path);
        ck_assert_int_eq(err.line, 3);
        ck_assert_str_eq(err.key, "");
        ck_assert_str_ne(err.message, "");
        free(path);
}
END_TEST

START_TEST(test_include) {
        struct hvt_config_error err = {};
        struct hvt_config *c = NULL;
        char *inc = test_write_file(dir, "part.conf", "nr_requests = 64;\n");
        char *path = test_write_file(dir, "main.conf", "queue = {\n  @include \"part.conf\"\n};\n");

        ck_assert_int_eq(hvt_config_load(path, false, &c, &err), 0);
        ck_assert_int_eq(c->settings[HVT_ATTR_NR_REQUESTS].num, 64);
        hvt_config_free(c);
        free(path);

        /* An error in an included file names that file and its line. */
        free(inc);
        inc = test_write_file(dir, "part.conf", "\nnr_requests = 1;\n");
        path = test_write_file(dir, "main.conf", "queue = {\n  @include \"part.conf\"\n};\n");
        c = NULL;
        ck_assert_int_eq(hvt_config_load(path, false, &c, &err), -EINVAL);
        ck_assert_str_eq(err.file, inc);
        ck_assert_int_eq(err.line, 2);
        ck_assert_str_eq(err.key, "queue.nr_requests");
        free(inc);
        free(path);

        /* The literal guard follows includes too. */
        inc = test_write_file(dir, "part.conf", "\n\nread_ahead_kb = 8589934592;\n");
        path = test_write_file(dir, "main.conf", "queue = {\n  @include \"part.conf\"\n};\n");
        ck_assert_int_eq(hvt_config_load(path, false, &c, &err), -EINVAL);
        ck_assert_str_eq(err.file, inc);
        ck_assert_int_eq(err.line, 3);
        ck_assert_ptr_nonnull(strstr(err.message, "8589934592L"));
        free(inc);
        free(path);

        /* What follows an include is checked too, up to the end (the include's closing quote
         * once opened a string that hid it). */
        inc = test_write_file(dir, "part.conf", "nr_requests = 64;\n");
        path = test_write_file(dir, "main.conf", "queue = {\n  @include \"part.conf\"\n  read_ahead_kb = 4294967296;\n"
                                                 "  scheduler = \"none\";\n};\n");
        ck_assert_int_eq(hvt_config_load(path, false, &c, &err), -EINVAL);
        ck_assert_str_eq(err.file, path);
        ck_assert_int_eq(err.line, 3);
        ck_assert_ptr_nonnull(strstr(err.message, "4294967296L"));
        free(inc);
        free(path);
}
END_TEST

/* An @include without a file name is libconfig's syntax error to report; the checks before
 * it must get past it, not spin on it (found by fuzz-config: --check-config hung). */
START_TEST(test_include_without_name) {
        load_bad("@include\n", 1, "", "syntax error");
        load_bad("queue = { scheduler = \"none\"; };\n@include x\n", 2, "", "syntax error");
        load_bad("queue = {\n  @include  \t\n};\n", 2, "", "syntax error");
}
END_TEST

/* A configuration is text: a NUL byte is refused where it is. Past one the checks saw nothing
 * while libconfig read on (an untrusted include in a comment's tail was parsed), and libconfig
 * exits the process on an include name that a NUL cuts short (found by fuzz-config). */
static char *write_bytes(const char *name, const char *bytes, size_t size) {
        char *path = test_write_file(dir, name, "");
        FILE *f = fopen(path, "we");

        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(bytes, 1, size, f), size);
        ck_assert_int_eq(fclose(f), 0);
        return path;
}

/* Loads path, expecting a NUL byte reported in file at line. */
static void load_bad_nul(const char *path, const char *file, int line) {
        struct hvt_config_error err = {};
        struct hvt_config *c = NULL;

        ck_assert_int_eq(hvt_config_load(path, false, &c, &err), -EINVAL);
        ck_assert_ptr_null(c);
        ck_assert_str_eq(err.file, file);
        ck_assert_int_eq(err.line, line);
        ck_assert_msg(strstr(err.message, "NUL byte"), "message \"%s\"", err.message);
}

START_TEST(test_nul_byte) {
        static const char comment[] = "# x \0 y\n@include \"part.conf\"\n";
        static const char include[] = "queue = {\n  @include \"\0x\"\n};\n";
        static const char part[] = "nr_requests = 64;\n\0";
        char *inc = test_write_file(dir, "part.conf", "nr_requests = 64;\n");
        char *path;

        path = write_bytes("nul.conf", comment, sizeof(comment) - 1);
        load_bad_nul(path, path, 1);
        free(path);
        path = write_bytes("nul.conf", include, sizeof(include) - 1);
        load_bad_nul(path, path, 2);
        free(path);
        free(inc);

        /* In an included file, that file is named. */
        inc = write_bytes("part.conf", part, sizeof(part) - 1);
        path = test_write_file(dir, "main.conf", "queue = {\n  @include \"part.conf\"\n};\n");
        load_bad_nul(path, inc, 2);
        free(inc);
        free(path);
}
END_TEST

/* A configuration of any size is read with a cap: a sparse 1.5 GB file, main or included, is
 * refused after 1 MiB is read (it cost 7 s and 1.5 GB of RSS, read whole, before libconfig
 * refused it), naming the file. A file at the cap still loads. */
static char *write_sparse(const char *name, off_t size) {
        char *path = test_write_file(dir, name, "queue = { nr_requests = 64; };\n");

        ck_assert_int_eq(truncate(path, size), 0);
        return path;
}

static void load_too_large(const char *path, const char *file) {
        struct hvt_config_error err = {};
        struct hvt_config *c = NULL;
        struct rusage ru;

        ck_assert_int_eq(hvt_config_load(path, false, &c, &err), -EPERM);
        ck_assert_ptr_null(c);
        ck_assert_str_eq(err.file, file);
        /* A whole sentence: what is wrong, and what to do (it was cut at "no configuration is"). */
        ck_assert_str_eq(err.message, "refused, larger than 1024 KiB, the limit for one configuration file: "
                         "a configuration is a few KiB; check that this is the right file, or make it smaller");
        /* Not read whole: far below the file's size in memory (ASan and valgrind included). */
        ck_assert_int_eq(getrusage(RUSAGE_SELF, &ru), 0);
        ck_assert_int_lt(ru.ru_maxrss, 512 * 1024);
}

START_TEST(test_size_cap) {
        static const char setting[] = "queue = { nr_requests = 64; };\n";
        static char text[1024 * 1024];
        struct hvt_config_error err = {};
        struct hvt_config *c = NULL;
        char *inc, *path;

        path = write_sparse("huge.conf", 1536LL * 1024 * 1024);
        load_too_large(path, path);
        free(path);

        inc = write_sparse("part.conf", 1536LL * 1024 * 1024);
        path = test_write_file(dir, "main.conf", "@include \"part.conf\"\n");
        load_too_large(path, inc);
        free(inc);
        free(path);

        /* At the cap it loads (a setting, then blanks: text, not NUL bytes); a byte more is
         * refused. */
        memset(text, ' ', sizeof(text));
        memcpy(text, setting, strlen(setting));
        path = write_bytes("edge.conf", text, sizeof(text));
        ck_assert_int_eq(hvt_config_load(path, false, &c, &err), 0);
        ck_assert_int_eq(c->settings[HVT_ATTR_NR_REQUESTS].num, 64);
        hvt_config_free(c);
        free(path);
        path = write_bytes("edge.conf", text, sizeof(text));
        ck_assert_int_eq(truncate(path, sizeof(text) + 1), 0);
        load_too_large(path, path);
        free(path);
}
END_TEST

/* Drop-ins: every PATH.d/NAME.conf after PATH, in name order, each over the files before it. */

/* The main file's path in this test's directory (which it makes), and its drop-in directory,
 * made 0755. */
static char *main_path(void) {
        char *path = test_write_file(dir, "hvtuned.conf", "");

        ck_assert_int_eq(unlink(path), 0);
        return path;
}

static char *dropin_dir(const char *main) {
        char *d;

        ck_assert_int_ge(asprintf(&d, "%s.d", main), 0);
        ck_assert_int_eq(mkdir(d, 0755), 0);
        ck_assert_int_eq(chmod(d, 0755), 0);
        return d;
}

static struct hvt_config *load_path_ok(const char *path, bool missing_ok) {
        struct hvt_config_error err = {};
        struct hvt_config *c = NULL;
        int r = hvt_config_load(path, missing_ok, &c, &err);

        ck_assert_msg(r == 0, "load failed (%d): %s:%d: %s: %s", r, err.file, err.line, err.key, err.message);
        return c;
}

/* Loads path, expecting error r at file:line (0: none) with a message containing needle. */
static void load_path_bad(const char *path, int r, const char *file, int line, const char *needle) {
        struct hvt_config_error err = {};
        struct hvt_config *c = NULL;
        char formatted[1024], where[600];

        ck_assert_int_eq(hvt_config_load(path, false, &c, &err), r);
        ck_assert_ptr_null(c);
        ck_assert_str_eq(err.file, file);
        ck_assert_int_eq(err.line, line);
        ck_assert_msg(strstr(err.message, needle), "message \"%s\" lacks \"%s\"", err.message, needle);
        /* What --check-config and the journal print starts with it: "FILE:LINE: ". */
        hvt_config_error_format(&err, formatted, sizeof(formatted));
        if (line > 0)
                snprintf(where, sizeof(where), "%s:%d: ", file, line);
        else
                snprintf(where, sizeof(where), "%s: ", file);
        ck_assert_msg(strncmp(formatted, where, strlen(where)) == 0, "\"%s\" does not start with \"%s\"",
                      formatted, where);
}

START_TEST(test_dropins_merge) {
        char *path = main_path(), *d = dropin_dir(path), desc[512];
        struct hvt_config *c;

        free(test_write_file(dir, "hvtuned.conf",
                "queue = { scheduler = \"none\"; nr_requests = 128; };\n"
                "device = { queue_depth = 254; };\n"
                "verify_interval = 300;\n"
                "metrics_file = \"/run/a/hvtuned.prom\";\n"
                "host = { max_hw_queues = 8; };\n"
                "contested = { queue = { read_ahead_kb = \"insist\"; }; };\n"
                "override = ( { match = { kind = \"ide\"; }; queue = { nomerges = 1; }; } );\n"));
        free(test_write_file(d, "10-fleet.conf",
                "queue = { nr_requests = 64; };\n"
                "host = { reprobe_idle_controllers = true; };\n"
                "contested = { queue = { read_ahead_kb = \"yield\"; scheduler = \"insist\"; }; };\n"
                "override = ( { match = { lun = 1; }; queue = { nomerges = 2; }; },\n"
                "             { match = { lun = 2; }; queue = { nomerges = 0; }; } );\n"));
        free(test_write_file(d, "20-site.conf",
                "verify_interval = 60;\nrestore_on_stop = false;\n"
                "override = ( { match = {}; device = { queue_depth = 32; }; } );\n"));

        c = load_path_ok(path, false);
        /* Per attribute, the last file that sets it. */
        ck_assert_str_eq(c->settings[HVT_ATTR_SCHEDULER].text, "none");
        ck_assert_int_eq(c->settings[HVT_ATTR_NR_REQUESTS].num, 64);
        ck_assert_int_eq(c->settings[HVT_ATTR_QUEUE_DEPTH].num, 254);
        ck_assert_uint_eq(c->verify_interval, 60);
        ck_assert(!c->restore_on_stop);
        ck_assert_str_eq(c->metrics_file, "/run/a/hvtuned.prom");
        ck_assert(c->host.max_hw_queues_set);
        ck_assert_uint_eq(c->host.max_hw_queues, 8);
        ck_assert(c->host.reprobe_idle_controllers);
        ck_assert_uint_eq(c->contest_insist, UINT32_C(1) << HVT_ATTR_SCHEDULER);
        /* Overrides in file order, the main file's first. */
        ck_assert_uint_eq(c->n_overrides, 4);
        ck_assert_int_eq(c->overrides[0].match.kind, HVT_KIND_IDE);
        ck_assert_uint_eq(c->overrides[1].match.lun, 1);
        ck_assert_uint_eq(c->overrides[2].match.lun, 2);
        ck_assert_uint_eq(c->overrides[3].match.fields, 0);
        ck_assert_int_eq(c->overrides[3].settings[HVT_ATTR_QUEUE_DEPTH].num, 32);
        /* The files read, in order. */
        ck_assert_str_eq(c->path, path);
        ck_assert_uint_eq(c->n_files, 3);
        ck_assert_uint_eq(c->n_dropins, 2);
        ck_assert_str_eq(c->files[0], path);
        ck_assert_ptr_nonnull(strstr(c->files[1], ".conf.d/10-fleet.conf"));
        ck_assert_ptr_nonnull(strstr(c->files[2], ".conf.d/20-site.conf"));
        hvt_config_describe(c, desc, sizeof(desc));
        ck_assert_str_eq(desc + strlen(path), " (+2 drop-ins)");

        /* Through the plan, the later file's override wins where both match, as a later one
         * in one file does: an IDE disk at LUN 1 gets the drop-in's nomerges. */
        struct hvt_disk disk = { .kind = HVT_KIND_IDE, .lun = 1 };
        struct hvt_plan plan;

        hvt_policy_plan(c, &disk, NULL, &plan);
        ck_assert_int_eq(plan.want[HVT_ATTR_NOMERGES].num, 2);
        ck_assert_int_eq(plan.want[HVT_ATTR_QUEUE_DEPTH].num, 32);
        ck_assert_int_eq(plan.want[HVT_ATTR_NR_REQUESTS].num, 64);
        hvt_config_free(c);
        free(d);
        free(path);
}
END_TEST

/* Name order in the C locale, not the directory's; other names are not read (each of those
 * would be an error if it were). */
START_TEST(test_dropins_order) {
        static const char *const order[] = { "10-x.conf", "9-y.conf", "A.conf", "a.conf", "b.conf" };
        static const char *const ignored[] = { "c.conf~", ".hidden.conf", "d.txt", "e.conf.dpkg-old",
                                               ".conf", "f.conf.swp", "g.CONF" };
        char *path = main_path(), *d = dropin_dir(path), text[64];
        struct hvt_config *c;

        free(test_write_file(dir, "hvtuned.conf", "verify_interval = 1;\n"));
        /* Written in another order than read. */
        for (size_t i = ELEMENTSOF(order); i-- > 0; ) {
                snprintf(text, sizeof(text), "verify_interval = %zu;\n", 10 + i);
                free(test_write_file(d, order[i], text));
        }
        for (size_t i = 0; i < ELEMENTSOF(ignored); i++)
                free(test_write_file(d, ignored[i], "not a configuration\n"));

        c = load_path_ok(path, false);
        ck_assert_uint_eq(c->verify_interval, 10 + ELEMENTSOF(order) - 1);
        ck_assert_uint_eq(c->n_dropins, ELEMENTSOF(order));
        for (size_t i = 0; i < ELEMENTSOF(order); i++)
                ck_assert_str_eq(strrchr(c->files[i + 1], '/') + 1, order[i]);
        hvt_config_free(c);

        /* An empty directory, or none: the main file alone. */
        for (size_t i = 0; i < ELEMENTSOF(order); i++) {
                snprintf(text, sizeof(text), "%s/%s", d, order[i]);
                ck_assert_int_eq(unlink(text), 0);
        }
        c = load_path_ok(path, false);
        ck_assert_uint_eq(c->verify_interval, 1);
        ck_assert_uint_eq(c->n_files, 1);
        ck_assert_uint_eq(c->n_dropins, 0);
        hvt_config_free(c);
        free(d);
        free(path);
}
END_TEST

/* Every error in a drop-in names it and its line; the first file at fault stops the load. */
START_TEST(test_dropins_errors) {
        char *path = main_path(), *d = dropin_dir(path), *bad, *inc;

        free(test_write_file(dir, "hvtuned.conf", "queue = { scheduler = \"none\"; };\n"));
        free(test_write_file(d, "10-good.conf", "queue = { nr_requests = 64; };\n"));
        bad = test_write_file(d, "20-bad.conf", "# a comment\nqueue = {\n  nr_requests = 2;\n};\n");
        free(test_write_file(d, "30-worse.conf", "queue = ;\n"));
        load_path_bad(path, -EINVAL, bad, 3, "out of range");
        free(bad);

        bad = test_write_file(d, "20-bad.conf", "\n\nqueue = ;\n");
        load_path_bad(path, -EINVAL, bad, 3, "syntax error");
        free(bad);

        bad = test_write_file(d, "20-bad.conf", "verify = 1;\n");
        load_path_bad(path, -EINVAL, bad, 1, "unknown key");
        free(bad);

        bad = test_write_file(d, "20-bad.conf", "queue = {\n read_ahead_kb = 4294967296;\n};\n");
        load_path_bad(path, -EINVAL, bad, 2, "write 4294967296L");
        free(bad);

        /* The index of an override is its file's. */
        bad = test_write_file(d, "20-bad.conf", "override = ( { match = { kind = \"x\"; }; queue = { nomerges = 1; }; } );\n");
        {
                struct hvt_config_error err = {};
                struct hvt_config *c = NULL;

                ck_assert_int_eq(hvt_config_load(path, false, &c, &err), -EINVAL);
                ck_assert_str_eq(err.file, bad);
                ck_assert_str_eq(err.key, "override[0].match.kind");
        }
        free(bad);

        /* device.timeout and queue.io_timeout are one kernel value across the files too: the
         * second one set names where the first is. */
        free(test_write_file(d, "10-good.conf", "device = {\n  timeout = 300;\n};\n"));
        bad = test_write_file(d, "20-bad.conf", "override = ( { match = {}; queue = { io_timeout = 30000; }; } );\n");
        {
                struct hvt_config_error err = {};
                struct hvt_config *c = NULL;
                char *first;

                ck_assert_int_ge(asprintf(&first, "the other is set at %s/10-good.conf:2", d), 0);
                ck_assert_int_eq(hvt_config_load(path, false, &c, &err), -EINVAL);
                ck_assert_str_eq(err.file, bad);
                ck_assert_int_eq(err.line, 1);
                ck_assert_str_eq(err.key, "override[0].queue.io_timeout");
                ck_assert_msg(strstr(err.message, first), "\"%s\" lacks \"%s\"", err.message, first);
                free(first);
        }
        free(bad);

        /* An error in a file a drop-in includes names that file. */
        inc = test_write_file(d, "common.inc", "\nnr_requests = 1;\n");
        bad = test_write_file(d, "20-bad.conf", "queue = {\n  @include \"common.inc\"\n};\n");
        free(test_write_file(d, "10-good.conf", "\n"));
        load_path_bad(path, -EINVAL, inc, 2, "out of range");
        free(inc);
        free(bad);

        /* A name listed that cannot be read as a file: a directory, a dangling symlink. */
        bad = test_write_file(d, "20-bad.conf", "\n");
        ck_assert_int_eq(unlink(bad), 0);
        ck_assert_int_eq(mkdir(bad, 0755), 0);
        load_path_bad(path, -EISDIR, bad, 0, "cannot read");
        ck_assert_int_eq(rmdir(bad), 0);
        ck_assert_int_eq(symlink("/nonexistent/hvtuned.conf", bad), 0);
        load_path_bad(path, -ENOENT, bad, 0, "No such file");
        ck_assert_int_eq(unlink(bad), 0);
        free(bad);
        free(d);
        free(path);
}
END_TEST

/* Each drop-in is held to the main file's rule, and its directory too, sticky or not. */
START_TEST(test_dropins_trust) {
        char *path = main_path(), *d = dropin_dir(path), *f, *target, *link;
        struct hvt_config *c;

        free(test_write_file(dir, "hvtuned.conf", "queue = { scheduler = \"none\"; };\n"));
        f = test_write_file(d, "50-x.conf", "queue = { nr_requests = 64; };\n");
        ck_assert_int_eq(chmod(f, 0644), 0);
        hvt_config_free(load_path_ok(path, false));

        ck_assert_int_eq(chmod(f, 0664), 0);
        load_path_bad(path, -EPERM, f, 0, "refused, writable by group or others (mode 0664)");
        ck_assert_int_eq(chmod(f, 0644), 0);

        ck_assert_int_eq(chmod(d, 0775), 0);
        load_path_bad(path, -EPERM, d, 0, ".conf.d on its path is writable by group or others (mode 0775)");
        /* Sticky: anyone could add a file, and one refused file refuses them all. */
        ck_assert_int_eq(chmod(d, 01777), 0);
        load_path_bad(path, -EPERM, d, 0, "refused, the drop-in directory is writable by group or others (mode 1777): "
                      "sticky or not, anyone could add a drop-in");
        /* Refused even when nothing is in it to read, and when there is no main file. */
        ck_assert_int_eq(unlink(f), 0);
        load_path_bad(path, -EPERM, d, 0, "mode 1777");
        ck_assert_int_eq(unlink(path), 0);
        {
                struct hvt_config_error err = {};

                c = NULL;
                ck_assert_int_eq(hvt_config_load(path, true, &c, &err), -EPERM);
                ck_assert_ptr_null(c);
                ck_assert_str_eq(err.file, d);
        }
        ck_assert_int_eq(chmod(d, 0755), 0);
        free(test_write_file(dir, "hvtuned.conf", "queue = { scheduler = \"none\"; };\n"));

        /* A symlink is followed as the main file's is, to a file held to the same rule. */
        target = test_write_file(dir, "elsewhere.conf", "queue = { nr_requests = 96; };\n");
        ck_assert_int_eq(symlink(target, f), 0);
        c = load_path_ok(path, false);
        ck_assert_int_eq(c->settings[HVT_ATTR_NR_REQUESTS].num, 96);
        hvt_config_free(c);
        ck_assert_int_eq(chmod(target, 0666), 0);
        load_path_bad(path, -EPERM, f, 0, "writable by group or others (mode 0666)");
        ck_assert_int_eq(unlink(f), 0);

        /* A symlink to /dev/null masks nothing (there is one directory): it is not a regular
         * file, refused as the main file would be. */
        ck_assert_int_eq(symlink("/dev/null", f), 0);
        load_path_bad(path, -EPERM, f, 0, "not a regular file");
        ck_assert_int_eq(unlink(f), 0);

        /* The directory itself may be a symlink, as any directory on the main file's path. */
        ck_assert_int_ge(asprintf(&link, "%s/real.d", dir), 0);
        ck_assert_int_eq(rename(d, link), 0);
        ck_assert_int_eq(symlink(link, d), 0);
        free(test_write_file(link, "50-x.conf", "queue = { nr_requests = 80; };\n"));
        c = load_path_ok(path, false);
        ck_assert_int_eq(c->settings[HVT_ATTR_NR_REQUESTS].num, 80);
        hvt_config_free(c);
        ck_assert_int_eq(chmod(link, 0777), 0);
        load_path_bad(path, -EPERM, d, 0, "real.d on its path is writable by group or others (mode 0777)");
        free(link);
        free(target);
        free(f);
        free(d);
        free(path);
}
END_TEST

/* A drop-in's @include is sealed as the main file's, and found in the drop-in directory. */
START_TEST(test_dropins_include) {
        char *path = main_path(), *d = dropin_dir(path), *f;
        struct hvt_config *c;

        free(test_write_file(dir, "hvtuned.conf", "queue = { scheduler = \"none\"; };\n"));
        /* Beside the main file, under the same name: not the one a drop-in includes. */
        free(test_write_file(dir, "common.inc", "nr_requests = 4;\n"));
        /* Not a *.conf name: read only where it is included. */
        free(test_write_file(d, "common.inc", "nr_requests = 64;\n"));
        f = test_write_file(d, "50-x.conf", "queue = {\n  @include \"common.inc\"\n};\n");
        c = load_path_ok(path, false);
        ck_assert_int_eq(c->settings[HVT_ATTR_NR_REQUESTS].num, 64);
        ck_assert_uint_eq(c->n_files, 2);
        hvt_config_free(c);

        /* The included file is held to the rule too. */
        free(test_write_file(d, "common.inc", "nr_requests = 64;\n"));
        {
                char *inc;

                ck_assert_int_ge(asprintf(&inc, "%s/common.inc", d), 0);
                ck_assert_int_eq(chmod(inc, 0646), 0);
                load_path_bad(path, -EPERM, inc, 0, "writable by group or others (mode 0646)");
                free(inc);
        }
        free(f);
        free(d);
        free(path);
}
END_TEST

/* Drop-ins without a main file are laid over the built-in policy, which stands for the main
 * file. Named with -c, the main file must exist. */
START_TEST(test_dropins_without_main) {
        char *path = main_path(), *d = dropin_dir(path), *f, desc[512], *want;
        struct hvt_config_error err = {};
        struct hvt_config *c;

        /* An empty directory: the built-in policy. */
        c = load_path_ok(path, true);
        ck_assert_ptr_null(c->path);
        ck_assert_str_eq(c->settings[HVT_ATTR_SCHEDULER].text, "none");
        hvt_config_describe(c, desc, sizeof(desc));
        ck_assert_str_eq(desc, "no configuration file, built-in defaults");
        hvt_config_free(c);

        f = test_write_file(d, "50-x.conf", "queue = { nr_requests = 64; };\n");
        c = load_path_ok(path, true);
        ck_assert_str_eq(c->settings[HVT_ATTR_SCHEDULER].text, "none");
        ck_assert_int_eq(c->origin[HVT_ATTR_SCHEDULER].kind, HVT_ORIGIN_POLICY);
        ck_assert_int_eq(c->settings[HVT_ATTR_NR_REQUESTS].num, 64);
        ck_assert(c->platform_defaults);
        ck_assert(c->restore_on_stop);
        ck_assert_str_eq(c->path, path);
        ck_assert_uint_eq(c->n_files, 1);
        ck_assert_uint_eq(c->n_dropins, 1);
        ck_assert_str_eq(c->files[0], f);
        hvt_config_describe(c, desc, sizeof(desc));
        ck_assert_int_ge(asprintf(&want, "%s.d (1 drop-in, no %s)", path, path), 0);
        ck_assert_str_eq(desc, want);
        hvt_config_free(c);

        c = NULL;
        ck_assert_int_eq(hvt_config_load(path, false, &c, &err), -ENOENT);
        ck_assert_ptr_null(c);
        ck_assert_str_eq(err.file, path);
        free(want);
        free(f);
        free(d);
        free(path);
}
END_TEST

/* A load reads the directory as it is now: a drop-in added or removed since the last one
 * counts (what a reload does). */
START_TEST(test_dropins_added_removed) {
        char *path = main_path(), *d = dropin_dir(path), *f;
        struct hvt_config *c;

        free(test_write_file(dir, "hvtuned.conf", "queue = { nr_requests = 128; };\n"));
        c = load_path_ok(path, false);
        ck_assert_int_eq(c->settings[HVT_ATTR_NR_REQUESTS].num, 128);
        hvt_config_free(c);
        f = test_write_file(d, "50-x.conf", "queue = { nr_requests = 64; };\n");
        c = load_path_ok(path, false);
        ck_assert_int_eq(c->settings[HVT_ATTR_NR_REQUESTS].num, 64);
        hvt_config_free(c);
        ck_assert_int_eq(unlink(f), 0);
        c = load_path_ok(path, false);
        ck_assert_int_eq(c->settings[HVT_ATTR_NR_REQUESTS].num, 128);
        ck_assert_uint_eq(c->n_dropins, 0);
        hvt_config_free(c);
        free(f);
        free(d);
        free(path);
}
END_TEST

/* The caps of one file do not bound a load: 8 drop-ins of 63 includes of one 1 MiB file read
 * 504 MiB and held SIGTERM for 10-21 s during a reload. What one load reads, the main file,
 * every drop-in and every include together, is bounded: at the bound it loads, a byte past
 * it is refused where it was crossed, at the @include or at the drop-in, and not read on. */
#define TOTAL_KIB 2048
#define OVER_TOTAL "would take the configuration past 2048 KiB, the limit for all of its files together " \
                   "(main file, drop-ins and every include): a configuration is a few KiB; "

/* A file of size bytes in dir/name: setting, if any, then blanks. */
static char *write_blank(const char *name, const char *setting, size_t size) {
        char *text = malloc(size), *path;

        ck_assert_ptr_nonnull(text);
        memset(text, ' ', size);
        memcpy(text, setting, strlen(setting));
        path = write_bytes(name, text, size);
        free(text);
        return path;
}

START_TEST(test_total_cap) {
        static const char include[] = "@include \"big.inc\"\n";
        static const char setting[] = "queue = { nr_requests = 64; };\n";
        char *path = main_path(), *d = dropin_dir(path), *big, *a, *b;
        size_t total = TOTAL_KIB * 1024, file = 1024 * 1024;
        struct hvt_config *c;

        /* The main file, a drop-in and the 1 MiB file it includes: exactly the bound. */
        free(write_blank("hvtuned.conf", setting, file - strlen(include)));
        a = write_blank("hvtuned.conf.d/10-a.conf", include, strlen(include));
        big = write_blank("hvtuned.conf.d/big.inc", "", total - file);
        c = load_path_ok(path, false);
        ck_assert_int_eq(c->settings[HVT_ATTR_NR_REQUESTS].num, 64);
        ck_assert_uint_eq(c->n_dropins, 1);
        hvt_config_free(c);

        /* A byte more in the main file: the include that crosses the bound is named. */
        free(write_blank("hvtuned.conf", setting, file - strlen(include) + 1));
        load_path_bad(path, -E2BIG, a, 1,
                      "refused, this @include " OVER_TOTAL "include fewer or smaller files");

        /* Two files at the 1 MiB cap load; a drop-in of one byte after them is refused. */
        ck_assert_int_eq(unlink(a), 0);
        ck_assert_int_eq(unlink(big), 0);
        free(write_blank("hvtuned.conf", setting, file));
        free(a);
        a = write_blank("hvtuned.conf.d/10-a.conf", "", total - file);
        c = load_path_ok(path, false);
        ck_assert_int_eq(c->settings[HVT_ATTR_NR_REQUESTS].num, 64);
        hvt_config_free(c);
        b = write_blank("hvtuned.conf.d/20-b.conf", "", 1);
        load_path_bad(path, -E2BIG, b, 0,
                      "refused, reading this file " OVER_TOTAL "use fewer or smaller files");

        free(b);
        free(big);
        free(a);
        free(d);
        free(path);
}
END_TEST

/* libconfig checks each setting name against every one before it in its group: one legal
 * 950 KB file of 95,000 top-level keys took 85 s to load (to be refused for its unknown keys),
 * and 4096 names of 470 bytes 15 s. What one load holds, every file and include together, is
 * bounded in names (4096) and in their bytes (32 KiB): at each bound it loads, past it it is
 * refused at the name that crossed it, before libconfig parses anything. true and false are
 * booleans, not names; a name right after a number ("1.5e3x", "1LLx") is one, as libconfig
 * reads it. */
#define OVER_NAMES "refused, this setting takes the configuration past 4096 setting names, the limit for all " \
                   "of its files together (main file, drop-ins and every include): a configuration has a " \
                   "few hundred; check that these are the right files, or set fewer"
#define OVER_NAME_BYTES "refused, this setting takes the configuration past 32 KiB of setting names, the limit " \
                        "for all of its files together (main file, drop-ins and every include): a " \
                        "configuration's names are a few KiB; check that these are the right files, or set fewer"

/* head, then "override = (" and n overrides of 3 names each, one a line, each the same. */
static void write_overrides(const char *head, size_t n, const char *override) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        ck_assert_ptr_nonnull(f);
        fprintf(f, "%soverride = (\n", head);
        for (size_t i = 0; i < n; i++)
                fprintf(f, "%s%s\n", override, i + 1 < n ? "," : "");
        fputs(");\n", f);
        ck_assert_int_eq(fclose(f), 0);
        free(test_write_file(dir, "hvtuned.conf", text));
        free(text);
}

START_TEST(test_names_cap) {
        /* Overrides of 3 names, 24 bytes: 1 + 3 x 1365 names, 8 + 24 x 1365 bytes, both bounds. */
        static const char wide[] = "{ match = {}; queue = { max_sectors_kb = 64; }; }";
        static const char narrow[] = "{ match = {}; queue = { nomerges = 1; }; }";
        char *path = main_path(), *d = dropin_dir(path), *a, *more;
        struct hvt_config *c;

        write_overrides("", 1365, wide);
        c = load_path_ok(path, false);
        ck_assert_uint_eq(c->n_overrides, 1365);
        hvt_config_free(c);

        /* 4095 names (the booleans not counted), then one in a drop-in: at the bound. */
        write_overrides("restore_on_stop = TRUE; platform_defaults = false;\n", 1364, narrow);
        a = test_write_file(d, "10-a.conf", "\nverify_interval = 300;\n");
        c = load_path_ok(path, false);
        ck_assert_uint_eq(c->n_overrides, 1364);
        ck_assert(!c->platform_defaults);
        ck_assert_uint_eq(c->verify_interval, 300);
        hvt_config_free(c);

        /* A name more, in the drop-in or in a file it includes: refused at that name. */
        free(test_write_file(d, "10-a.conf", "\nverify_interval = 300; host = {};\n"));
        load_path_bad(path, -E2BIG, a, 2, OVER_NAMES);
        free(test_write_file(d, "10-a.conf", "verify_interval = 300;\n@include \"more.inc\"\n"));
        more = test_write_file(d, "more.inc", "\n\nhost = {};\n");
        load_path_bad(path, -E2BIG, more, 3, OVER_NAMES);
        /* Names that follow a number with nothing between are names to libconfig too. */
        free(test_write_file(d, "10-a.conf", "\nverify_interval = 3.0e2host = {};\n"));
        load_path_bad(path, -E2BIG, a, 2, OVER_NAMES);
        free(test_write_file(d, "10-a.conf", "\nverify_interval = 300LLL = 1;\n"));
        load_path_bad(path, -E2BIG, a, 2, OVER_NAMES);

        /* 4093 names of 32744 bytes, then 3 names of 24 bytes: at both bounds; of 25 bytes, a
         * byte past the second, at the name that crosses it. */
        write_overrides("", 1364, wide);
        free(test_write_file(d, "10-a.conf", "queue = { read_ahead_kb = 64; };\ndevice = {};\n"));
        c = load_path_ok(path, false);
        ck_assert_int_eq(c->settings[HVT_ATTR_READ_AHEAD_KB].num, 64);
        hvt_config_free(c);
        free(test_write_file(d, "10-a.conf", "queue = { max_sectors_kb = 64; };\ndevice = {};\n"));
        load_path_bad(path, -E2BIG, a, 2, OVER_NAME_BYTES);

        free(more);
        free(a);
        free(d);
        free(path);
}
END_TEST

/* Bytes bound nothing when the files are small: 256 drop-ins of 64 includes of an empty file
 * opened 16,640 files, in ~2 s. One load opens at most 1024, the main file, the drop-ins and
 * every include, each time it is included: at the bound it loads, and the file past it is
 * refused where it was to be opened, at its @include or at the drop-in, and not opened. */
#define OVER_FILES " would take the configuration past 1024 files, the limit for one load (main file, " \
                   "drop-ins and every include, each time it is included): a configuration is a few files; "

/* name, holding n includes of "e.inc", one a line. */
static char *write_includes(char *in, const char *name, size_t n) {
        char *text = calloc(n + 1, strlen("@include \"e.inc\"\n")), *path;

        ck_assert_ptr_nonnull(text);
        for (size_t i = 0; i < n; i++)
                strcat(text, "@include \"e.inc\"\n");
        path = test_write_file(in, name, text);
        free(text);
        return path;
}

START_TEST(test_files_cap) {
        char *path = main_path(), *d = dropin_dir(path), *last, *extra, name[32];
        struct hvt_config *c;

        /* The main file and 15 drop-ins, each with 63 includes: 16 x 64 = 1024 files. */
        free(test_write_file(dir, "e.inc", ""));
        free(test_write_file(d, "e.inc", ""));
        free(write_includes(dir, "hvtuned.conf", 63));
        for (int i = 0; i < 14; i++) {
                snprintf(name, sizeof(name), "%02d.conf", i);
                free(write_includes(d, name, 63));
        }
        last = write_includes(d, "14.conf", 63);
        c = load_path_ok(path, false);
        ck_assert_uint_eq(c->n_dropins, 15);
        hvt_config_free(c);

        /* An include more: refused at its line. */
        free(write_includes(d, "14.conf", 64));
        load_path_bad(path, -E2BIG, last, 64, "refused, this @include" OVER_FILES "include fewer");

        /* A drop-in more, empty: refused at the drop-in. */
        free(write_includes(d, "14.conf", 63));
        extra = test_write_file(d, "15.conf", "");
        load_path_bad(path, -E2BIG, extra, 0, "refused, this file" OVER_FILES "use fewer");

        free(extra);
        free(last);
        free(d);
        free(path);
}
END_TEST

/* An @include is walked a name at a time, each name checked: a path of 32 names loads, one of
 * 33 is refused at its line before any is looked up. */
static char *include_through(int dots) {
        char text[256] = "@include \"";

        for (int i = 0; i < dots; i++)
                strcat(text, "./");
        strcat(text, "x/../e.inc\"\n");
        return test_write_file(dir, "hvtuned.conf", text);
}

START_TEST(test_include_components_cap) {
        char *path = main_path(), x[PATH_MAX + 8], *conf;

        free(test_write_file(dir, "e.inc", ""));
        snprintf(x, sizeof(x), "%s/x", dir);
        ck_assert(mkdir(x, 0755) == 0 || errno == EEXIST);
        /* 29 "." names, then x, "..", e.inc: 32. */
        free(include_through(29));
        hvt_config_free(load_path_ok(path, false));
        conf = include_through(30);
        load_path_bad(path, -EINVAL, conf, 1, "an @include name of more than 32 path components");

        ck_assert_int_eq(rmdir(x), 0);
        free(conf);
        free(path);
}
END_TEST

int main(void) {
        Suite *s = suite_create("config");
        TCase *tc = tcase_create("load");

        tcase_add_test(tc, test_issue_example);
        tcase_add_test(tc, test_include_components_cap);
        tcase_add_test(tc, test_all_keys_and_bounds);
        tcase_add_test(tc, test_host);
        tcase_add_test(tc, test_empty_file_manages_nothing);
        tcase_add_test(tc, test_default_when_missing);
        tcase_add_test(tc, test_bad_values);
        tcase_add_test(tc, test_bad_keys);
        tcase_add_test(tc, test_bad_keys_suggest);
        tcase_add_test(tc, test_bare_word_value);
        tcase_add_test(tc, test_timeout_pair);
        tcase_add_test(tc, test_contested);
        tcase_add_test(tc, test_metrics_file);
        tcase_add_test(tc, test_bad_overrides);
        tcase_add_test(tc, test_wide_literals);
        tcase_add_test(tc, test_top_level_options);
        tcase_add_test(tc, test_syntax_error);
        tcase_add_test(tc, test_include);
        tcase_add_test(tc, test_include_without_name);
        tcase_add_test(tc, test_nul_byte);
        tcase_add_test(tc, test_size_cap);
        tcase_add_test(tc, test_dropins_merge);
        tcase_add_test(tc, test_dropins_order);
        tcase_add_test(tc, test_dropins_errors);
        tcase_add_test(tc, test_dropins_trust);
        tcase_add_test(tc, test_dropins_include);
        tcase_add_test(tc, test_dropins_without_main);
        tcase_add_test(tc, test_dropins_added_removed);
        tcase_add_test(tc, test_total_cap);
        tcase_add_test(tc, test_names_cap);
        tcase_add_test(tc, test_files_cap);
        suite_add_tcase(s, tc);
        return test_run(s);
}
