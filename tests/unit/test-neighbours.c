/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Who else writes an attribute, on a made-up root: the rule udev would run last (a name in
 * /etc hides the same name below, an empty file or a link to /dev/null masks, later names
 * win), assignments told from matches and comments, tuned by its pid file and a live
 * process, WALinuxAgent by its command line, and nothing where there is nothing. */
#include <check.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <sys/stat.h>

#include "neighbours.h"
#include "testutil.h"

static char root[256];

/* Writes root/rel (made with its directories) holding len bytes of text. */
static void put(const char *rel, const char *text, size_t len) {
        char path[PATH_MAX];
        int fd;

        if (!*root)
                ck_assert_ptr_nonnull(mkdtemp(strcpy(root, "/tmp/hvtuned-neighbours.XXXXXX")));
        snprintf(path, sizeof(path), "%s/%s", root, rel);
        for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
                *p = '\0';
                ck_assert(mkdir(path, 0755) == 0 || errno == EEXIST);
                *p = '/';
        }
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, len), (ssize_t) len);
        close(fd);
}

static void put_text(const char *rel, const char *text) {
        put(rel, text, strlen(text));
}

static struct hvt_suspects find(enum hvt_attr_id id) {
        struct hvt_suspects s;

        ck_assert_int_eq(hvt_suspects_find(root, id, &s), 0);
        return s;
}

/* As azure-vm-utils' 80-azure-disk.rules writes it (#82). */
#define AZURE_RULE \
        "# Azure NVMe disks\n" \
        "ACTION!=\"add|change\", GOTO=\"azure_disk_end\"\n" \
        "SUBSYSTEM!=\"block\", GOTO=\"azure_disk_end\"\n" \
        "KERNEL==\"nvme*[0-9]n*[0-9]\", ATTRS{model}==\"MSFT NVMe Accelerator v1.0*\", \\\n" \
        "  ATTR{queue/io_timeout}=\"240000\"\n" \
        "LABEL=\"azure_disk_end\"\n"

START_TEST(test_rule_lines) {
        /* The physical line of the assignment, continued or not. */
        ck_assert_uint_eq(hvt_rules_assign_line(AZURE_RULE, strlen(AZURE_RULE), HVT_ATTR_IO_TIMEOUT), 5);
        /* One kernel value: a rule on io_timeout is one on the SCSI timeout too. */
        ck_assert_uint_eq(hvt_rules_assign_line(AZURE_RULE, strlen(AZURE_RULE), HVT_ATTR_TIMEOUT), 5);
        ck_assert_uint_eq(hvt_rules_assign_line(AZURE_RULE, strlen(AZURE_RULE), HVT_ATTR_READ_AHEAD_KB), 0);

#define T(text, id, line) ck_assert_uint_eq(hvt_rules_assign_line(text, strlen(text), id), line)
        T("ATTR{queue/read_ahead_kb}==\"128\", RUN+=\"x\"\n", HVT_ATTR_READ_AHEAD_KB, 0);   /* a match */
        T("ATTR{queue/read_ahead_kb}!=\"128\"\n", HVT_ATTR_READ_AHEAD_KB, 0);
        T("ATTR{queue/read_ahead_kb} = \"128\"\n", HVT_ATTR_READ_AHEAD_KB, 1);
        T("ATTR{bdi/read_ahead_kb}:=\"128\"\n", HVT_ATTR_READ_AHEAD_KB, 1);
        T("ATTRS{queue/read_ahead_kb}=\"128\"\n", HVT_ATTR_READ_AHEAD_KB, 0);              /* a parent's */
        T("ENV{X}=\"1\",ATTR{queue/scheduler}=\"bfq\"\n", HVT_ATTR_SCHEDULER, 1);
        T("SUBSYSTEM==\"scsi\", ATTR{timeout}=\"300\"\n", HVT_ATTR_TIMEOUT, 1);          /* on the LUN */
        T("SUBSYSTEM==\"block\", ATTR{timeout}=\"300\"\n", HVT_ATTR_READ_AHEAD_KB, 0);
        T("ATTR{queue/nr_requests}=\"64\"\n", HVT_ATTR_NR_REQUESTS, 1);
        T("ATTR{queue/nr_requests}=\"64\"\n", HVT_ATTR_SCHEDULER, 0);
        T("  # ATTR{queue/scheduler}=\"bfq\"\n", HVT_ATTR_SCHEDULER, 0);                /* a comment */
        T("# a comment \\\nATTR{queue/scheduler}=\"bfq\"\n", HVT_ATTR_SCHEDULER, 0);    /* continued */
        T("A==\"1\", \\\nATTR{queue/scheduler}=\"bfq\"\nB==\"2\"\n", HVT_ATTR_SCHEDULER, 2);
        T("ATTR{queue/scheduler}=\"bfq\"\n\nATTR{queue/scheduler}=\"none\"", HVT_ATTR_SCHEDULER, 3);
        T("ATTR{queue/scheduler", HVT_ATTR_SCHEDULER, 0);                                /* cut short */
        T("", HVT_ATTR_SCHEDULER, 0);
#undef T
}
END_TEST

START_TEST(test_rule_precedence) {
        struct hvt_suspects s;

        /* Nothing there at all: no suspect, no error. */
        put_text("empty", "");
        s = find(HVT_ATTR_IO_TIMEOUT);
        ck_assert_str_eq(s.rule, "");
        ck_assert_int_eq(s.tuned + s.waagent, 0);

        put_text("usr/lib/udev/rules.d/80-azure-disk.rules", AZURE_RULE);
        s = find(HVT_ATTR_IO_TIMEOUT);
        ck_assert_str_eq(s.rule, "/usr/lib/udev/rules.d/80-azure-disk.rules");
        ck_assert_uint_eq(s.rule_line, 5);

        /* A later name wins, wherever it is. */
        put_text("lib/udev/rules.d/99-timeout.rules", "\nATTR{queue/io_timeout}=\"60000\"\n");
        s = find(HVT_ATTR_IO_TIMEOUT);
        ck_assert_str_eq(s.rule, "/lib/udev/rules.d/99-timeout.rules");
        ck_assert_uint_eq(s.rule_line, 2);
        /* Not a .rules file: not read. */
        put_text("etc/udev/rules.d/99-zz.rules.bak", "ATTR{queue/io_timeout}=\"1\"\n");
        ck_assert_str_eq(find(HVT_ATTR_IO_TIMEOUT).rule, "/lib/udev/rules.d/99-timeout.rules");

        /* The same name in /run hides /lib's, and this one does not assign it. */
        put_text("run/udev/rules.d/99-timeout.rules", "ATTR{queue/io_timeout}==\"60000\"\n");
        ck_assert_str_eq(find(HVT_ATTR_IO_TIMEOUT).rule, "/usr/lib/udev/rules.d/80-azure-disk.rules");

        /* /etc masks Azure's: an empty file, then a link to /dev/null. */
        put_text("etc/udev/rules.d/80-azure-disk.rules", "");
        ck_assert_str_eq(find(HVT_ATTR_IO_TIMEOUT).rule, "");
        s = find(HVT_ATTR_IO_TIMEOUT);
        ck_assert_uint_eq(s.rule_line, 0);
        {
                char path[PATH_MAX];

                snprintf(path, sizeof(path), "%s/etc/udev/rules.d/80-azure-disk.rules", root);
                ck_assert_int_eq(unlink(path), 0);
                ck_assert_int_eq(symlink("/dev/null", path), 0);
        }
        ck_assert_str_eq(find(HVT_ATTR_IO_TIMEOUT).rule, "");
        /* An image builder's pin in /etc. */
        put_text("etc/udev/rules.d/60-readahead.rules",
                 "ACTION==\"add|change\", KERNEL==\"sd*|nvme*n*\", ATTR{queue/read_ahead_kb}=\"128\"\n");
        s = find(HVT_ATTR_READ_AHEAD_KB);
        ck_assert_str_eq(s.rule, "/etc/udev/rules.d/60-readahead.rules");
        ck_assert_uint_eq(s.rule_line, 1);
}
END_TEST

/* Only the start of a huge file is read: an assignment past the cap is not seen. */
START_TEST(test_rule_read_cap) {
        size_t len = HVT_RULES_FILE_READ_MAX + 64;
        char *big = malloc(len + 1);

        ck_assert_ptr_nonnull(big);
        memset(big, '\n', len);
        memcpy(big + len - 40, "ATTR{queue/nomerges}=\"2\"\n", 25);
        put("etc/udev/rules.d/50-big.rules", big, len);
        ck_assert_str_eq(find(HVT_ATTR_NOMERGES).rule, "");
        memcpy(big + 10, "ATTR{queue/nomerges}=\"2\"\n", 25);
        put("etc/udev/rules.d/50-big.rules", big, len);
        ck_assert_uint_eq(find(HVT_ATTR_NOMERGES).rule_line, 11);
        free(big);
}
END_TEST

/* At most HVT_RULES_READ_TOTAL_MAX in all: files after it in udev's order are not read. */
START_TEST(test_rule_total_cap) {
        const size_t each = HVT_RULES_FILE_READ_MAX, fill = HVT_RULES_READ_TOTAL_MAX / HVT_RULES_FILE_READ_MAX;
        char *big = malloc(each), name[64], path[PATH_MAX];

        ck_assert_ptr_nonnull(big);
        memset(big, '\n', each);
        for (size_t i = 0; i < fill; i++) {
                snprintf(name, sizeof(name), "lib/udev/rules.d/%02zu-big.rules", i);
                put(name, big, each);
        }
        put_text("lib/udev/rules.d/zz-last.rules", "ATTR{queue/scheduler}=\"bfq\"\n");
        ck_assert_str_eq(find(HVT_ATTR_SCHEDULER).rule, "");
        /* One file fewer, and the last is read. */
        snprintf(path, sizeof(path), "%s/lib/udev/rules.d/00-big.rules", root);
        ck_assert_int_eq(unlink(path), 0);
        ck_assert_str_eq(find(HVT_ATTR_SCHEDULER).rule, "/lib/udev/rules.d/zz-last.rules");
        free(big);
}
END_TEST

static const char tuned_cmdline[] = "/usr/bin/python3\0-Es\0/usr/sbin/tuned\0-l\0-P\0";
static const char waagent_cmdline[] = "python3\0-u\0/usr/sbin/waagent\0-daemon\0";
static const char handler_cmdline[] = "python3\0-u\0bin/WALinuxAgent-2.9.1.1-py3.8.egg\0-run-exthandlers\0";
static const char other_cmdline[] = "/usr/bin/python3\0/usr/bin/tuned-adm\0profile\0";

START_TEST(test_tuned) {
        struct hvt_suspects s;
        char text[128];

        put("proc/1/cmdline", "/sbin/init\0", 11);
        put("proc/812/cmdline", tuned_cmdline, sizeof(tuned_cmdline) - 1);
        /* No pid file: tuned.service is not active. */
        ck_assert_int_eq(find(HVT_ATTR_SCHEDULER).tuned, 0);
        put_text("run/tuned/tuned.pid", "812\n");
        s = find(HVT_ATTR_SCHEDULER);
        ck_assert_int_eq(s.tuned, 812);
        hvt_suspects_format(&s, text, sizeof(text));
        ck_assert_str_eq(text, "tuned (pid 812)");
        ck_assert_int_eq(find(HVT_ATTR_READ_AHEAD_KB).tuned, 812);
        /* Its disk plugin sets neither timeouts nor nomerges. */
        ck_assert_int_eq(find(HVT_ATTR_IO_TIMEOUT).tuned, 0);
        ck_assert_int_eq(find(HVT_ATTR_NOMERGES).tuned, 0);
        /* A pid file a crash left, naming a process gone or another program's. */
        put_text("run/tuned/tuned.pid", "813\n");
        ck_assert_int_eq(find(HVT_ATTR_SCHEDULER).tuned, 0);
        put_text("run/tuned/tuned.pid", "1\n");
        ck_assert_int_eq(find(HVT_ATTR_SCHEDULER).tuned, 0);
        put("proc/900/cmdline", other_cmdline, sizeof(other_cmdline) - 1);
        put_text("run/tuned/tuned.pid", "900\n");
        ck_assert_int_eq(find(HVT_ATTR_SCHEDULER).tuned, 0);
        put_text("run/tuned/tuned.pid", "garbage\n");
        ck_assert_int_eq(find(HVT_ATTR_SCHEDULER).tuned, 0);
}
END_TEST

/* TuneD running hvtuned's own profile (its disk plugin off) writes no disk's attribute: no
 * suspect. Any other active profile, hvtuned's merged with another included, is one. */
START_TEST(test_tuned_profile) {
        put("proc/812/cmdline", tuned_cmdline, sizeof(tuned_cmdline) - 1);
        put_text("run/tuned/tuned.pid", "812\n");
        put_text("etc/tuned/active_profile", "hvtuned-virtual-guest\n");
        ck_assert_int_eq(find(HVT_ATTR_READ_AHEAD_KB).tuned, 0);
        ck_assert_int_eq(find(HVT_ATTR_SCHEDULER).tuned, 0);
        put_text("etc/tuned/active_profile", "virtual-guest\n");
        ck_assert_int_eq(find(HVT_ATTR_READ_AHEAD_KB).tuned, 812);
        put_text("etc/tuned/active_profile", "hvtuned-virtual-guest throughput-performance\n");
        ck_assert_int_eq(find(HVT_ATTR_READ_AHEAD_KB).tuned, 812);
        put_text("etc/tuned/active_profile", "hvtuned-virtual-guest-old\n");
        ck_assert_int_eq(find(HVT_ATTR_READ_AHEAD_KB).tuned, 812);
        /* None written yet (TuneD picks one at its first start): a suspect. */
        put_text("etc/tuned/active_profile", "");
        ck_assert_int_eq(find(HVT_ATTR_READ_AHEAD_KB).tuned, 812);
}
END_TEST

START_TEST(test_waagent) {
        struct hvt_suspects s;
        char text[256];

        put("proc/1/cmdline", "/sbin/init\0", 11);
        put("proc/77/cmdline", other_cmdline, sizeof(other_cmdline) - 1);
        ck_assert_int_eq(find(HVT_ATTR_TIMEOUT).waagent, 0);
        put("proc/1234/cmdline", handler_cmdline, sizeof(handler_cmdline) - 1);
        ck_assert_int_eq(find(HVT_ATTR_TIMEOUT).waagent, 1234);
        put("proc/1234/cmdline", waagent_cmdline, sizeof(waagent_cmdline) - 1);
        s = find(HVT_ATTR_IO_TIMEOUT);
        ck_assert_int_eq(s.waagent, 1234);
        /* It sets the SCSI timeout, nothing of the queue's. */
        ck_assert_int_eq(find(HVT_ATTR_READ_AHEAD_KB).waagent, 0);

        /* With a rule and tuned as well, all are named, the rule first. */
        put_text("etc/udev/rules.d/99-t.rules", "SUBSYSTEM==\"scsi\", ATTR{timeout}=\"300\"\n");
        s = find(HVT_ATTR_TIMEOUT);
        hvt_suspects_format(&s, text, sizeof(text));
        ck_assert_str_eq(text, "udev rule /etc/udev/rules.d/99-t.rules:1, WALinuxAgent (pid 1234)");
}
END_TEST

START_TEST(test_bad_root) {
        struct hvt_suspects s;

        ck_assert_int_eq(hvt_suspects_find("/nonexistent/hvtuned", HVT_ATTR_SCHEDULER, &s), -ENOENT);
        ck_assert_int_eq(hvt_suspects_find("/dev/null", HVT_ATTR_SCHEDULER, &s), -ENOTDIR);
        /* The driver's attributes are no disk's. */
        ck_assert_int_eq(hvt_suspects_find("/", HVT_ATTR_MAX_HW_QUEUES, &s), 0);
        ck_assert_str_eq(s.rule, "");
}
END_TEST

/* A fresh root for each test, gone after it. */
static void setup(void) {
        root[0] = '\0';
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) flag;
        (void) ftw;
        return remove(path);
}

static void teardown(void) {
        if (*root)
                (void) nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void) {
        Suite *s = suite_create("neighbours");
        TCase *tc = tcase_create("suspects");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_rule_lines);
        tcase_add_test(tc, test_rule_precedence);
        tcase_add_test(tc, test_rule_read_cap);
        tcase_add_test(tc, test_rule_total_cap);
        tcase_add_test(tc, test_tuned);
        tcase_add_test(tc, test_tuned_profile);
        tcase_add_test(tc, test_waagent);
        tcase_add_test(tc, test_bad_root);
        suite_add_tcase(s, tc);
        return test_run(s);
}
