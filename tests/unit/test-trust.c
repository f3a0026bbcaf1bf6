/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The StrictModes rule through the loader: a configuration file, or a file it includes, that
 * someone other than root could have written is refused before it is parsed, with a message
 * naming the file and why. Needs root (files owned by another user): exits 77 without it. */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "testutil.h"

#define SKIP 77
#define NOBODY 65534

static char dir[64];

/* Loads path, expecting a refusal of file with a message containing why. */
static void assert_refused(const char *path, const char *file, const char *why) {
        struct hvt_config_error err = {};
        struct hvt_config *c = NULL;

        ck_assert_int_eq(hvt_config_load(path, false, &c, &err), -EPERM);
        ck_assert_ptr_null(c);
        ck_assert_str_eq(err.file, file);
        ck_assert_int_eq(err.line, 0);
        ck_assert_msg(strstr(err.message, why), "\"%s\" does not say \"%s\"", err.message, why);
}

static void assert_loads(const char *path) {
        struct hvt_config_error err = {};
        struct hvt_config *c = NULL;

        ck_assert_msg(hvt_config_load(path, false, &c, &err) == 0, "%s: %s", err.file, err.message);
        hvt_config_free(c);
}

static char *main_including(const char *name) {
        char text[256];

        snprintf(text, sizeof(text), "queue = {\n  @include \"%s\"\n};\n", name);
        return test_write_file(dir, "main.conf", text);
}

START_TEST(test_mode) {
        char *path = test_write_file(dir, "mode.conf", "queue = { nr_requests = 64; };\n");

        assert_loads(path);
        ck_assert_int_eq(chmod(path, 0664), 0);
        assert_refused(path, path, "refused, writable by group or others (mode 0664)");
        ck_assert_int_eq(chmod(path, 0602), 0);
        assert_refused(path, path, "writable by group or others (mode 0602)");
        /* Read-only for everyone is fine, and so is unreadable by others. */
        ck_assert_int_eq(chmod(path, 0400), 0);
        assert_loads(path);
        free(path);
}
END_TEST

START_TEST(test_owner) {
        char *path = test_write_file(dir, "owner.conf", "queue = { nr_requests = 64; };\n");

        ck_assert_int_eq(chown(path, NOBODY, NOBODY), 0);
        assert_refused(path, path, "refused, owned by uid 65534, not root");
        free(path);
}
END_TEST

/* An included file is held to the same rule, and the refusal names it, not the main file. */
START_TEST(test_include) {
        char *inc = test_write_file(dir, "part.conf", "nr_requests = 64;\n");
        char *path = main_including("part.conf");

        assert_loads(path);
        ck_assert_int_eq(chmod(inc, 0666), 0);
        assert_refused(path, inc, "writable by group or others (mode 0666)");
        ck_assert_int_eq(chmod(inc, 0644), 0);
        ck_assert_int_eq(chown(inc, NOBODY, 0), 0);
        assert_refused(path, inc, "owned by uid 65534, not root");
        unlink(inc);

        /* A FIFO is refused, not waited on. */
        ck_assert_int_eq(mkfifo(inc, 0600), 0);
        alarm(10);
        assert_refused(path, inc, "not a regular file");
        alarm(0);
        unlink(inc);
        free(inc);

        /* Every include is checked, the second one too. */
        inc = test_write_file(dir, "part.conf", "nr_requests = 64;\n");
        free(path);
        path = test_write_file(dir, "main.conf", "queue = {\n  @include \"part.conf\"\n  @include \"other.conf\"\n};\n");
        free(inc);
        inc = test_write_file(dir, "other.conf", "read_ahead_kb = 64;\n");
        assert_loads(path);
        ck_assert_int_eq(chmod(inc, 0666), 0);
        assert_refused(path, inc, "writable by group or others (mode 0666)");
        free(inc);

        /* An include loop stops at the depth limit, where every file was checked. */
        free(path);
        path = test_write_file(dir, "loop.conf", "@include \"loop.conf\"\n");
        assert_refused(path, path, "included more than 8 levels deep");
        free(path);
}
END_TEST

/* The file checked is the file libconfig reads: its include names have two escapes (\\ and
 * \"), drop any other backslash, and, in libconfig 1.5, put even an absolute name below the
 * include directory. A name read another way let libconfig parse a file nobody checked
 * (found by fuzz-config). */
static void assert_include_checked(const char *written, const char *file) {
        char *inc = test_write_file(dir, file, "nr_requests = 64;\n");
        char *path = main_including(written);

        assert_loads(path);
        ck_assert_int_eq(chmod(inc, 0666), 0);
        assert_refused(path, inc, "writable by group or others (mode 0666)");
        ck_assert_int_eq(unlink(inc), 0);
        free(inc);
        free(path);
}

START_TEST(test_include_names) {
        char abs[128], below[256], *inc, *path;

        assert_include_checked("o\\\"pen.conf", "o\"pen.conf");
        assert_include_checked("b\\\\ack.conf", "b\\ack.conf");
        assert_include_checked("d\\rop.conf", "drop.conf");

        /* "/x/abs.conf" is read as it is, or as <include dir>//x/abs.conf: both are checked. */
        inc = test_write_file(dir, "abs.conf", "nr_requests = 64;\n");
        snprintf(abs, sizeof(abs), "%s/abs.conf", dir);
        path = main_including(abs);
        /* dir is /tmp/hvtuned-test.XXXXXX: the same path below itself. */
        snprintf(below, sizeof(below), "%s/tmp", dir);
        ck_assert_int_eq(mkdir(below, 0755), 0);
        snprintf(below, sizeof(below), "%s%s", dir, dir);
        ck_assert_int_eq(mkdir(below, 0755), 0);
        free(test_write_file(below, "abs.conf", "nr_requests = 64;\n"));
        assert_loads(path);
        ck_assert_int_eq(chmod(inc, 0666), 0);
        assert_refused(path, inc, "writable by group or others (mode 0666)");
        ck_assert_int_eq(chmod(inc, 0644), 0);
        snprintf(below, sizeof(below), "%s/%s", dir, abs);
        ck_assert_int_eq(chmod(below, 0666), 0);
        assert_refused(path, below, "writable by group or others (mode 0666)");
        free(inc);
        free(path);
}
END_TEST

/* Whoever can write the directory can put another file under the name. A sticky directory
 * (/tmp) does not let them rename or remove root's file. */
START_TEST(test_directory) {
        char sub[128], *path;

        snprintf(sub, sizeof(sub), "%s/sub", dir);
        ck_assert_int_eq(mkdir(sub, 0755), 0);
        path = test_write_file(sub, "d.conf", "queue = { nr_requests = 64; };\n");
        assert_loads(path);
        ck_assert_int_eq(chmod(sub, 0775), 0);
        assert_refused(path, path, "its directory");
        assert_refused(path, path, "is writable by group or others (mode 0775)");
        ck_assert_int_eq(chmod(sub, 01777), 0);
        assert_loads(path);
        ck_assert_int_eq(chmod(sub, 0755), 0);
        ck_assert_int_eq(chown(sub, NOBODY, 0), 0);
        assert_refused(path, path, "is owned by uid 65534, not root");
        free(path);
}
END_TEST

/* A symlink is followed: the file it leads to and the directory that file is in count. */
START_TEST(test_symlink) {
        char sub[128], link[160], *target;

        snprintf(sub, sizeof(sub), "%s/open", dir);
        ck_assert_int_eq(mkdir(sub, 0777), 0);
        ck_assert_int_eq(chmod(sub, 0777), 0);
        target = test_write_file(sub, "t.conf", "queue = { nr_requests = 64; };\n");
        snprintf(link, sizeof(link), "%s/link.conf", dir);
        ck_assert_int_eq(symlink(target, link), 0);
        assert_refused(link, link, "its directory");
        ck_assert_int_eq(chmod(sub, 0755), 0);
        assert_loads(link);
        ck_assert_int_eq(chmod(target, 0666), 0);
        assert_refused(link, link, "writable by group or others (mode 0666)");
        free(target);
}
END_TEST

int main(void) {
        Suite *s = suite_create("trust");
        TCase *tc = tcase_create("strict-modes");

        if (geteuid() != 0) {
                fprintf(stderr, "SKIP: needs root to make files owned by another user\n");
                return SKIP;
        }
        /* Test files are made with the usual umask, whatever the caller's. */
        umask(022);
        /* Made here, so that every forked test has it. */
        if (!mkdtemp(strcpy(dir, "/tmp/hvtuned-test.XXXXXX")))
                return EXIT_FAILURE;
        tcase_add_test(tc, test_mode);
        tcase_add_test(tc, test_owner);
        tcase_add_test(tc, test_include);
        tcase_add_test(tc, test_include_names);
        tcase_add_test(tc, test_directory);
        tcase_add_test(tc, test_symlink);
        suite_add_tcase(s, tc);
        return test_run(s);
}
