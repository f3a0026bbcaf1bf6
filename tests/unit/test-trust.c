/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The StrictModes rule through the loader: a configuration file, or a file it includes, that
 * someone other than root could have written is refused before it is parsed, with a message
 * naming the file and why. Needs root (files owned by another user): exits 77 without it. */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
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
        assert_refused(path, path, "refused, owned by uid 65534, neither root's nor ours");
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
        assert_refused(path, inc, "owned by uid 65534, neither root's nor ours");
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
 * \"), drop any other backslash, and an absolute name is taken as it is. A name read another
 * way let libconfig parse a file nobody checked (found by fuzz-config). */
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

        /* "/x/abs.conf" is that file, never <include dir>//x/abs.conf (libconfig 1.5's
         * reading, which hvtuned no longer lets it make). */
        inc = test_write_file(dir, "abs.conf", "nr_requests = 64;\n");
        snprintf(abs, sizeof(abs), "%s/abs.conf", dir);
        path = main_including(abs);
        /* dir is /tmp/hvtuned-test.XXXXXX: the same path below itself. */
        snprintf(below, sizeof(below), "%s/tmp", dir);
        ck_assert_int_eq(mkdir(below, 0755), 0);
        snprintf(below, sizeof(below), "%s%s", dir, dir);
        ck_assert_int_eq(mkdir(below, 0755), 0);
        free(test_write_file(below, "abs.conf", "nr_requests = 64;\n"));
        snprintf(below, sizeof(below), "%s/%s", dir, abs);
        ck_assert_int_eq(chmod(below, 0666), 0);
        assert_loads(path);
        ck_assert_int_eq(chmod(inc, 0666), 0);
        assert_refused(path, inc, "writable by group or others (mode 0666)");
        free(inc);
        free(path);
}
END_TEST

/* Only what libconfig takes for an include is one: at the start of a line, a blank before the
 * quote. Anything else is libconfig's syntax error, never rewritten into an include. */
START_TEST(test_include_as_libconfig_sees_it) {
        char *inc = test_write_file(dir, "part.conf", "nr_requests = 64;\n");
        char *path = test_write_file(dir, "main.conf", "queue = {\n  @include\"part.conf\"\n};\n");
        struct hvt_config_error err = {};
        struct hvt_config *c = NULL;

        ck_assert_int_eq(hvt_config_load(path, false, &c, &err), -EINVAL);
        ck_assert_str_eq(err.file, path);
        ck_assert_int_eq(err.line, 2);
        free(path);
        path = test_write_file(dir, "main.conf", "queue = { nr_requests = 32; }; @include \"part.conf\"\n");
        ck_assert_int_eq(hvt_config_load(path, false, &c, &err), -EINVAL);
        ck_assert_int_eq(err.line, 1);
        ck_assert_ptr_null(strstr(err.message, "refused"));
        /* "file/" is no file. */
        free(path);
        ck_assert_int_ge(asprintf(&path, "%s/", inc), 0);
        ck_assert_int_eq(hvt_config_load(path, false, &c, &err), -ENOTDIR);
        free(path);
        free(inc);
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
        assert_refused(path, path, "the directory");
        assert_refused(path, path, "sub on its path is writable by group or others (mode 0775)");
        ck_assert_int_eq(chmod(sub, 01777), 0);
        assert_loads(path);
        ck_assert_int_eq(chmod(sub, 0755), 0);
        ck_assert_int_eq(chown(sub, NOBODY, 0), 0);
        assert_refused(path, path, "is owned by uid 65534, neither root's nor ours");
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
        assert_refused(link, link, "open on its path is writable by group or others (mode 0777)");
        ck_assert_int_eq(chmod(sub, 0755), 0);
        assert_loads(link);
        ck_assert_int_eq(chmod(target, 0666), 0);
        assert_refused(link, link, "writable by group or others (mode 0666)");
        free(target);
}
END_TEST

static char *path_in(const char *sub) {
        char *p;

        ck_assert_int_ge(asprintf(&p, "%s/%s", dir, sub), 0);
        return p;
}

/* Not only the file's own directory: every one above it could rename that one away. */
START_TEST(test_ancestor) {
        char *a = path_in("a"), b[128], *path;

        snprintf(b, sizeof(b), "%s/b", a);
        ck_assert_int_eq(mkdir(a, 0755), 0);
        ck_assert_int_eq(mkdir(b, 0755), 0);
        path = test_write_file(b, "c.conf", "queue = { nr_requests = 64; };\n");
        assert_loads(path);
        ck_assert_int_eq(chmod(a, 0777), 0);
        assert_refused(path, path, "/a on its path is writable by group or others (mode 0777)");
        /* A relative name is walked from the working directory's own path. */
        ck_assert_int_eq(chdir(b), 0);
        assert_refused("c.conf", "c.conf", "/a on its path is writable by group or others");
        ck_assert_int_eq(chmod(a, 0755), 0);
        assert_loads("c.conf");
        ck_assert_int_eq(chown(a, NOBODY, 0), 0);
        assert_refused(path, path, "/a on its path is owned by uid 65534, neither root's nor ours");
        free(path);
        free(a);
}
END_TEST

/* x.conf -> ww/link -> real.conf: the directory of the middle link counts, and so does who
 * owns a link in a sticky directory (its owner may replace it there). */
START_TEST(test_symlink_hops) {
        char *ww = path_in("ww"), *wlink = path_in("ww/link"), *x = path_in("x.conf");
        char *real = test_write_file(dir, "real.conf", "queue = { nr_requests = 64; };\n");

        ck_assert_int_eq(mkdir(ww, 0755), 0);
        ck_assert_int_eq(symlink(real, wlink), 0);
        ck_assert_int_eq(symlink("ww/link", x), 0);
        assert_loads(x);
        ck_assert_int_eq(chmod(ww, 0777), 0);
        assert_refused(x, x, "/ww on its path is writable by group or others (mode 0777)");
        ck_assert_int_eq(chmod(ww, 01777), 0);
        assert_loads(x);
        ck_assert_int_eq(lchown(wlink, NOBODY, NOBODY), 0);
        assert_refused(x, x, "the symlink ");
        assert_refused(x, x, "/ww/link on its path is owned by uid 65534, neither root's nor ours");

        /* The same through an include. */
        free(x);
        x = main_including("ww/link");
        ck_assert_int_eq(unlink(real), 0);
        free(test_write_file(dir, "real.conf", "nr_requests = 64;\n"));
        assert_refused(x, wlink, "/ww/link on its path is owned by uid 65534, neither root's nor ours");
        ck_assert_int_eq(lchown(wlink, 0, 0), 0);
        assert_loads(x);

        /* A loop ends. */
        ck_assert_int_eq(unlink(wlink), 0);
        ck_assert_int_eq(symlink("link", wlink), 0);
        struct hvt_config_error err = {};
        struct hvt_config *c = NULL;
        ck_assert_int_eq(hvt_config_load(x, false, &c, &err), -EINVAL);
        ck_assert_int_eq(err.line, 2);
        ck_assert_msg(strstr(err.message, "cannot include") && strstr(err.message, "Too many levels of symbolic links"),
                      "%s", err.message);
        free(real);
        free(x);
        free(wlink);
        free(ww);
}
END_TEST

/* Swaps link between good and bad as fast as it can, until killed. */
static void swap_forever(const char *link, const char *good, const char *bad) {
        char *tmp;

        ck_assert_int_ge(asprintf(&tmp, "%s.new", link), 0);
        for (unsigned i = 0;; i++) {
                (void) unlink(tmp);
                if (symlink(i % 2 ? bad : good, tmp) < 0 || rename(tmp, link) < 0)
                        _exit(EXIT_FAILURE);
        }
}

/* Loads path over and over while a symlink on its way is swapped between a trusted file
 * (nr_requests 64) and one anybody could have written (nr_requests 4). Each load must refuse
 * or get 64: the file parsed is the file checked. */
static void assert_race_safe(const char *path, const char *link, const char *good, const char *bad) {
        unsigned loaded = 0, refused = 0;
        struct timespec until;
        pid_t pid = fork();

        ck_assert_int_ge(pid, 0);
        if (pid == 0)
                swap_forever(link, good, bad);
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += 2;
        for (;;) {
                struct hvt_config_error err = {};
                struct hvt_config *c = NULL;
                struct timespec now;
                int r = hvt_config_load(path, false, &c, &err);

                if (r == 0) {
                        ck_assert_msg(c->settings[HVT_ATTR_NR_REQUESTS].num == 64,
                                      "load %u parsed the file nobody checked (nr_requests %" PRIu64 ")",
                                      loaded + refused, c->settings[HVT_ATTR_NR_REQUESTS].num);
                        loaded++;
                } else
                        refused++;
                hvt_config_free(c);
                clock_gettime(CLOCK_MONOTONIC, &now);
                if (now.tv_sec > until.tv_sec ||
                    (now.tv_sec == until.tv_sec && now.tv_nsec > until.tv_nsec))
                        break;
        }
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        /* Both files were seen, or the race was not run at all. */
        ck_assert_uint_gt(loaded, 0);
        ck_assert_uint_gt(refused, 0);
}

START_TEST(test_swap_race) {
        char *good = test_write_file(dir, "good.conf", "queue = { nr_requests = 64; };\n");
        char *bad = test_write_file(dir, "bad.conf", "queue = { nr_requests = 4; };\n");
        char *link = path_in("cur.conf");
        char *path;

        ck_assert_int_eq(chmod(bad, 0666), 0);
        ck_assert_int_eq(symlink(good, link), 0);
        assert_race_safe(link, link, good, bad);

        /* And an included file. */
        free(good);
        free(bad);
        good = test_write_file(dir, "good.conf", "nr_requests = 64;\n");
        bad = test_write_file(dir, "bad.conf", "nr_requests = 4;\n");
        ck_assert_int_eq(chmod(bad, 0666), 0);
        path = main_including("cur.conf");
        assert_race_safe(path, link, good, bad);
        free(path);
        free(link);
        free(bad);
        free(good);
}
END_TEST

/* Drop-ins (PATH.d) are held to the rule as the main file is, their directory too: a refused
 * one refuses the whole configuration, named. */
START_TEST(test_dropins) {
        char sub[128], dropins[160], *path, *f, *target, link[200];

        snprintf(sub, sizeof(sub), "%s/dropins", dir);
        ck_assert_int_eq(mkdir(sub, 0755), 0);
        path = test_write_file(sub, "hvtuned.conf", "queue = { nr_requests = 64; };\n");
        snprintf(dropins, sizeof(dropins), "%s.d", path);
        ck_assert_int_eq(mkdir(dropins, 0755), 0);
        f = test_write_file(dropins, "50-x.conf", "queue = { nr_requests = 32; };\n");
        assert_loads(path);

        ck_assert_int_eq(chown(f, NOBODY, NOBODY), 0);
        assert_refused(path, f, "refused, owned by uid 65534, neither root's nor ours");
        ck_assert_int_eq(chown(f, 0, 0), 0);
        assert_loads(path);

        ck_assert_int_eq(chown(dropins, NOBODY, 0), 0);
        assert_refused(path, dropins, "is owned by uid 65534, neither root's nor ours");
        ck_assert_int_eq(chown(dropins, 0, 0), 0);

        /* A symlink in the directory is followed only when it is root's. */
        target = test_write_file(sub, "elsewhere.conf", "queue = { nr_requests = 16; };\n");
        snprintf(link, sizeof(link), "%s/60-link.conf", dropins);
        ck_assert_int_eq(symlink(target, link), 0);
        assert_loads(path);
        ck_assert_int_eq(lchown(link, NOBODY, NOBODY), 0);
        assert_refused(path, link, "60-link.conf on its path is owned by uid 65534");
        free(target);
        free(f);
        free(path);
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
        tcase_add_test(tc, test_ancestor);
        tcase_add_test(tc, test_include_as_libconfig_sees_it);
        tcase_add_test(tc, test_symlink_hops);
        tcase_add_test(tc, test_swap_race);
        tcase_add_test(tc, test_dropins);
        tcase_set_timeout(tc, 30);
        suite_add_tcase(s, tc);
        return test_run(s);
}
