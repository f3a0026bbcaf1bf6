/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Config loading: the issue's example, the built-in default, and every kind of bad input
 * with the file, line and key it must name. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <sys/resource.h>
#include <unistd.h>

#include "config.h"
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
        load_bad("verify = 5;\n", 1, "verify", "unknown key (queue, device, host, override, verify_interval, restore_on_stop, platform_defaults, metrics_file, contested)");
        load_bad("queue = {\n  schedular = \"none\";\n};\n", 2, "queue.schedular", "unknown key");
        load_bad("queue = { io_poll = 1; };\n", 1, "queue.io_poll", "unknown key");
        load_bad("device = { nr_requests = 1; };\n", 1, "device.nr_requests", "unknown key");
        load_bad("queue = \"none\";\n", 1, "queue", "expected a group");
        load_bad("queue = { timeout = 30; };\n", 1, "queue.timeout", "unknown key");
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
        ck_assert_msg(strstr(err.message, "refused, larger than 1024 KiB"), "message \"%s\"", err.message);
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

int main(void) {
        Suite *s = suite_create("config");
        TCase *tc = tcase_create("load");

        tcase_add_test(tc, test_issue_example);
        tcase_add_test(tc, test_all_keys_and_bounds);
        tcase_add_test(tc, test_host);
        tcase_add_test(tc, test_empty_file_manages_nothing);
        tcase_add_test(tc, test_default_when_missing);
        tcase_add_test(tc, test_bad_values);
        tcase_add_test(tc, test_bad_keys);
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
        suite_add_tcase(s, tc);
        return test_run(s);
}
