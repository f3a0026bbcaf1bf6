/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The file-system layer: one wording for every refusal of an owner or mode, the walk's flags,
 * a file written whole through a temporary of one naming scheme, the temporaries of this and
 * earlier releases told apart from everyone else's files, and a small file read without
 * blocking or following. Needs root (files owned by another user): exits 77 without it. */
#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>

#include "fs-util.h"
#include "macro.h"
#include "testutil.h"

#define SKIP 77
#define NOBODY 65534

static char dir[64];

static char *path_in(const char *name) {
        char *p;

        ck_assert_int_ge(asprintf(&p, "%s/%s", dir, name), 0);
        return p;
}

static int open_test_dir(void) {
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        ck_assert_int_ge(fd, 0);
        return fd;
}

static bool exists(const char *name) {
        _cleanup_free_ char *p = path_in(name);
        struct stat st;

        return lstat(p, &st) == 0;
}

START_TEST(test_owner_wording) {
        struct stat st = { .st_uid = NOBODY, .st_mode = S_IFDIR | 0777 };
        char why[256] = "";

        ck_assert_int_eq(hvt_check_owner(&st, 0, "the directory /x on its path", why, sizeof(why)), -EPERM);
        ck_assert_str_eq(why, "the directory /x on its path is owned by uid 65534, neither root's nor ours, and "
                              "writable by group or others (mode 0777)");
        st.st_mode = S_IFREG | 0644;
        ck_assert_int_eq(hvt_check_owner(&st, 0, NULL, why, sizeof(why)), -EPERM);
        ck_assert_str_eq(why, "owned by uid 65534, neither root's nor ours");
        st = (struct stat) { .st_uid = 0, .st_mode = S_IFREG | 0664 };
        ck_assert_int_eq(hvt_check_owner(&st, 0, "it", why, sizeof(why)), -EACCES);
        ck_assert_str_eq(why, "it is writable by group or others (mode 0664)");

        /* Ours is as good as root's; a passing check leaves why alone. */
        strcpy(why, "untouched");
        st = (struct stat) { .st_uid = geteuid(), .st_mode = S_IFDIR | 0755 };
        ck_assert_int_eq(hvt_check_owner(&st, 0, "it", why, sizeof(why)), 0);
        ck_assert_str_eq(why, "untouched");

        /* Sticky: taken only when asked, and only for a directory. */
        st.st_mode = S_IFDIR | 01777;
        ck_assert_int_eq(hvt_check_owner(&st, HVT_OWNER_STICKY_OK, "it", why, sizeof(why)), 0);
        ck_assert_int_eq(hvt_check_owner(&st, 0, "it", why, sizeof(why)), -EACCES);
        ck_assert_str_eq(why, "it is writable by group or others (mode 1777)");
        st.st_mode = S_IFREG | 01666;
        ck_assert_int_eq(hvt_check_owner(&st, HVT_OWNER_STICKY_OK, "it", why, sizeof(why)), -EACCES);

        /* A symlink's mode means nothing, its owner everything. */
        st = (struct stat) { .st_uid = 0, .st_mode = S_IFLNK | 0777 };
        ck_assert_int_eq(hvt_check_owner(&st, 0, "it", why, sizeof(why)), 0);
        st.st_uid = NOBODY;
        ck_assert_int_eq(hvt_check_owner(&st, 0, "the symlink /l on its path", why, sizeof(why)), -EPERM);
        ck_assert_str_eq(why, "the symlink /l on its path is owned by uid 65534, neither root's nor ours");

        /* No room for why: the answer all the same. */
        st.st_mode = S_IFREG | 0666;
        ck_assert_int_eq(hvt_check_owner(&st, 0, "it", NULL, 0), -EPERM);
}
END_TEST

/* The metrics file's walk: no symlink, no . or .., the last directory alone checked, and
 * not even sticky; the directory is handed back with the last name. */
START_TEST(test_walk_parent) {
        _cleanup_free_ char *sub = path_in("p"), *deep = path_in("p/d"), *file = path_in("p/d/f.prom"),
                            *link = path_in("p/l"), *via_link = path_in("p/l/f.prom"),
                            *dots = path_in("p/../p/d/f.prom"), *name = NULL;
        char why[PATH_MAX + 128] = "";
        struct stat st, seen;
        int fd;

        ck_assert_int_eq(mkdir(sub, 0755), 0);
        ck_assert_int_eq(mkdir(deep, 0755), 0);
        ck_assert_int_eq(symlink("d", link), 0);

        fd = hvt_walk(file, HVT_WALK_PARENT, &name, why, sizeof(why));
        ck_assert_int_ge(fd, 0);
        ck_assert_str_eq(name, "f.prom");
        ck_assert_str_eq(why, "");
        ck_assert_int_eq(fstat(fd, &seen), 0);
        ck_assert_int_eq(stat(deep, &st), 0);
        ck_assert(seen.st_ino == st.st_ino && seen.st_dev == st.st_dev);
        close(fd);

        ck_assert_int_eq(hvt_walk(via_link, HVT_WALK_PARENT, NULL, why, sizeof(why)), -ELOOP);
        ck_assert_msg(strstr(why, "/p/l on its path is a symbolic link: name the real directory"), "%s", why);
        ck_assert_int_eq(hvt_walk(dots, HVT_WALK_PARENT, NULL, why, sizeof(why)), -EINVAL);
        ck_assert_msg(strstr(why, "/p/.. holds \"..\": name the real directory"), "%s", why);

        /* An ancestor of another user's does not matter, the last directory does. */
        ck_assert_int_eq(chown(sub, NOBODY, NOBODY), 0);
        fd = hvt_walk(file, HVT_WALK_PARENT, NULL, why, sizeof(why));
        ck_assert_int_ge(fd, 0);
        close(fd);
        ck_assert_int_eq(hvt_walk(file, HVT_WALK_PARENT | HVT_WALK_CHECK_EVERY | HVT_OWNER_STICKY_OK, NULL, why,
                                  sizeof(why)), -EPERM);
        ck_assert_msg(strstr(why, "/p on its path is owned by uid 65534, neither root's nor ours"), "%s", why);
        ck_assert_int_eq(chown(sub, 0, 0), 0);
        ck_assert_int_eq(chown(deep, NOBODY, NOBODY), 0);
        ck_assert_int_eq(hvt_walk(file, HVT_WALK_PARENT, NULL, why, sizeof(why)), -EPERM);
        ck_assert_msg(strstr(why, "the directory ") == why && strstr(why, "/p/d on its path is owned by uid 65534, "
                                                                      "neither root's nor ours"), "%s", why);
        ck_assert_int_eq(chown(deep, 0, 0), 0);

        /* Sticky is writable all the same, unless asked. */
        ck_assert_int_eq(chmod(deep, 01777), 0);
        ck_assert_int_eq(hvt_walk(file, HVT_WALK_PARENT, NULL, why, sizeof(why)), -EPERM);
        ck_assert_msg(strstr(why, "/p/d on its path is writable by group or others (mode 1777)"), "%s", why);
        fd = hvt_walk(file, HVT_WALK_PARENT | HVT_OWNER_STICKY_OK, NULL, why, sizeof(why));
        ck_assert_int_ge(fd, 0);
        close(fd);
        ck_assert_int_eq(chmod(deep, 0755), 0);

        /* One of HVT_WALK_PARENT and HVT_WALK_REGULAR. */
        ck_assert_int_eq(hvt_walk(file, 0, NULL, why, sizeof(why)), -EINVAL);
        ck_assert_int_eq(hvt_walk(file, HVT_WALK_PARENT | HVT_WALK_REGULAR, NULL, why, sizeof(why)), -EINVAL);
        unlink(link);
        rmdir(deep);
        rmdir(sub);
}
END_TEST

/* The configuration's walk: symlinks of root's (or ours) followed, every directory checked,
 * a regular file at the end, held to the rule too. */
START_TEST(test_walk_regular) {
        _cleanup_free_ char *sub = path_in("r"), *file = path_in("r/f.conf"), *link = path_in("r/l.conf"),
                            *fifo = path_in("r/fifo"), *loop_a = path_in("r/a"), *loop_b = path_in("r/b"),
                            *trailing = path_in("r/f.conf/");
        const unsigned flags = HVT_WALK_FOLLOW | HVT_WALK_CHECK_EVERY | HVT_WALK_REGULAR | HVT_OWNER_STICKY_OK;
        char why[PATH_MAX + 128] = "", buf[8] = "";
        int fd;

        ck_assert_int_eq(mkdir(sub, 0755), 0);
        free(test_write_file(dir, "r/f.conf", "x=1\n"));
        ck_assert_int_eq(symlink("f.conf", link), 0);

        fd = hvt_walk(link, flags, NULL, why, sizeof(why));
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(read(fd, buf, sizeof(buf) - 1), 4);
        ck_assert_str_eq(buf, "x=1\n");
        close(fd);

        ck_assert_int_eq(lchown(link, NOBODY, NOBODY), 0);
        ck_assert_int_eq(hvt_walk(link, flags, NULL, why, sizeof(why)), -EPERM);
        ck_assert_msg(strstr(why, "/r/l.conf on its path is owned by uid 65534, neither root's nor ours"), "%s", why);
        ck_assert_int_eq(hvt_walk(link, flags & ~HVT_WALK_FOLLOW, NULL, why, sizeof(why)), -ELOOP);

        ck_assert_int_eq(chmod(file, 0666), 0);
        ck_assert_int_eq(hvt_walk(file, flags, NULL, why, sizeof(why)), -EPERM);
        ck_assert_str_eq(why, "writable by group or others (mode 0666)");
        ck_assert_int_eq(chmod(file, 0644), 0);
        ck_assert_int_eq(chown(file, NOBODY, NOBODY), 0);
        ck_assert_int_eq(hvt_walk(file, flags, NULL, why, sizeof(why)), -EPERM);
        ck_assert_str_eq(why, "owned by uid 65534, neither root's nor ours");
        ck_assert_int_eq(chown(file, 0, 0), 0);

        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        alarm(10);
        ck_assert_int_eq(hvt_walk(fifo, flags, NULL, why, sizeof(why)), -EPERM);
        alarm(0);
        ck_assert_str_eq(why, "not a regular file");
        ck_assert_int_eq(hvt_walk(sub, flags, NULL, why, sizeof(why)), -EISDIR);
        ck_assert_int_eq(hvt_walk(trailing, flags, NULL, why, sizeof(why)), -ENOTDIR);

        /* A loop of symlinks ends at the kernel's own limit. */
        ck_assert_int_eq(symlink("b", loop_a), 0);
        ck_assert_int_eq(symlink("a", loop_b), 0);
        ck_assert_int_eq(hvt_walk(loop_a, flags, NULL, why, sizeof(why)), -ELOOP);

        /* Not found: no refusal of hvtuned's, why as it was. */
        strcpy(why, "untouched");
        ck_assert_int_eq(hvt_walk("/nonexistent/hvtuned.conf", flags, NULL, why, sizeof(why)), -ENOENT);
        ck_assert_str_eq(why, "untouched");
        unlink(loop_a);
        unlink(loop_b);
        unlink(fifo);
        unlink(link);
        unlink(file);
        rmdir(sub);
}
END_TEST

START_TEST(test_write_atomic) {
        _cleanup_free_ char *path = path_in("out"), *other = path_in("other-name");
        char long_name[NAME_MAX + 1];
        _cleanup_close_ int fd = open_test_dir();
        struct stat st, made;
        char buf[64] = "";

        ck_assert_int_eq(hvt_write_atomic(fd, "out", "one\n", 4, 0, NULL), 0);
        ck_assert_int_eq(hvt_read_small(fd, "out", buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "one\n");

        /* Under the unit's UMask=0077 a file is the owner's alone, unless made readable. */
        umask(077);
        ck_assert_int_eq(hvt_write_atomic(fd, "out", "two\n", 4, 0, NULL), 0);
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0600);
        ck_assert_int_eq(hvt_write_atomic(fd, "out", "three\n", 6, HVT_WRITE_READABLE, &made), 0);
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0644);
        ck_assert(st.st_ino == made.st_ino && st.st_dev == made.st_dev);
        umask(022);
        /* Private whatever the umask (the state file, run outside the unit too). */
        ck_assert_int_eq(hvt_write_atomic(fd, "private", "four\n", 5, HVT_WRITE_PRIVATE, &made), 0);
        ck_assert_uint_eq(made.st_mode & 07777, 0600);
        ck_assert_int_eq(unlinkat(fd, "private", 0), 0);

        /* The name is swapped, never written into: a hard link's other name keeps its text,
         * and a FIFO there is replaced, not waited on. */
        ck_assert_int_eq(link(path, other), 0);
        ck_assert_int_eq(hvt_write_atomic(fd, "out", "four\n", 5, 0, NULL), 0);
        ck_assert_int_eq(hvt_read_small(fd, "other-name", buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "three\n");
        ck_assert_int_eq(unlink(path), 0);
        ck_assert_int_eq(mkfifo(path, 0600), 0);
        alarm(10);
        ck_assert_int_eq(hvt_write_atomic(fd, "out", "five\n", 5, 0, NULL), 0);
        alarm(0);
        ck_assert_int_eq(hvt_read_small(fd, "out", buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "five\n");

        /* A name as long as a name may be: the temporary's is cut, not refused. */
        memset(long_name, 'n', NAME_MAX);
        long_name[NAME_MAX] = '\0';
        ck_assert_int_eq(hvt_write_atomic(fd, long_name, "x", 1, 0, NULL), 0);
        ck_assert(exists(long_name));
        ck_assert_int_eq(unlinkat(fd, long_name, 0), 0);

        /* Nothing left but what was named; a failed rename takes its temporary with it. */
        ck_assert_int_eq(mkdirat(fd, "a-dir", 0755), 0);
        ck_assert_int_eq(mkdirat(fd, "a-dir/inside", 0755), 0);
        ck_assert_int_lt(hvt_write_atomic(fd, "a-dir", "x", 1, 0, NULL), 0);
        ck_assert_int_eq(hvt_prune_temporaries(fd, 0, NULL), 0);
        ck_assert_int_eq(unlinkat(fd, "a-dir/inside", AT_REMOVEDIR), 0);
        ck_assert_int_eq(unlinkat(fd, "a-dir", AT_REMOVEDIR), 0);
        unlink(path);
        unlink(other);
}
END_TEST

static int fill_lines(FILE *f, void *userdata) {
        unsigned *n = userdata;

        for (unsigned i = 0; i < *n; i++)
                fprintf(f, "line %u\n", i);
        return 0;
}

static int fill_then_fail(FILE *f, void *userdata) {
        (void) userdata;
        fputs("half\n", f);
        return -ENOMEM;
}

/* The stream's text, larger than its buffer, lands whole; a fill that fails leaves the old
 * text and no temporary. */
START_TEST(test_write_atomic_stream) {
        _cleanup_close_ int fd = open_test_dir();
        unsigned n = 5000, kept = 0;
        struct stat made;
        char buf[64] = "";

        ck_assert_int_eq(hvt_write_atomic(fd, "out", "old\n", 4, 0, NULL), 0);
        ck_assert_int_eq(hvt_write_atomic_stream(fd, "out", fill_then_fail, NULL, 0, NULL), -ENOMEM);
        ck_assert_int_eq(hvt_read_small(fd, "out", buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "old\n");
        ck_assert_int_eq(hvt_prune_temporaries(fd, 0, &kept), 0);
        ck_assert_int_eq(hvt_write_atomic_stream(fd, "out", fill_lines, &n, HVT_WRITE_PRIVATE, &made), 0);
        ck_assert_uint_eq(made.st_mode & 07777, 0600);
        ck_assert_int_gt(made.st_size, 8192);
        ck_assert_int_eq((int) made.st_size, 48890);  /* "line 0\n" to "line 4999\n" */
        ck_assert_int_eq(hvt_prune_temporaries(fd, 0, &kept), 0);
        ck_assert_int_eq(unlinkat(fd, "out", 0), 0);
}
END_TEST

/* Today's temporaries, and those of earlier releases, are told from everyone else's files. */
START_TEST(test_temporaries) {
        static const char *const ours[] = {
                ".#hvtuned.sda.0123456789abcdef",
                ".#hvtuned..reload.0123456789abcdef",
                ".#hvtuned.hvtuned.prom.0123456789abcdef",  /* the metrics file's */
                ".hvtuned.4242.1f2e3d.tmp",                 /* the metrics file's before */
        };
        static const char *const theirs[] = {
                ".#hvtuned.sda.0123456789abcde",   /* 15 digits */
                ".#hvtuned.sda.0123456789ABCDEF",
                ".#hvtuned..0123456789abcdef",     /* no name */
                ".hvtuned.42.1f.tmp.prom",
                ".hvtuned.x.1f.tmp",
                ".hvtuned.42..tmp",
                "hvtuned.prom",
                ".hvtuned-notes",
        };
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *fifo = NULL, *lock = NULL, *sub = NULL;
        unsigned kept = 99;

        /* A directory of its own: the prune must find nothing else's. */
        strcat(dir, "/tmps");
        ck_assert_int_eq(mkdir(dir, 0700), 0);
        fd = open_test_dir();
        for (size_t i = 0; i < ELEMENTSOF(ours); i++) {
                free(test_write_file(dir, ours[i], "x"));
                ck_assert_msg(hvt_is_temporary(fd, ours[i], 0), "%s", ours[i]);
                /* Never one the collector reads, never one ls shows. */
                ck_assert(ours[i][0] == '.');
                ck_assert(!strstr(ours[i], ".prom") || strcmp(strstr(ours[i], ".prom"), ".prom") != 0);
        }
        for (size_t i = 0; i < ELEMENTSOF(theirs); i++) {
                free(test_write_file(dir, theirs[i], "x"));
                ck_assert_msg(!hvt_is_temporary(fd, theirs[i], 0), "%s", theirs[i]);
        }
        /* An older hvtuned's record temporary, ".#NAME": a regular file, in the runtime
         * directory alone. An editor's lock link or a FIFO there is not one. */
        free(test_write_file(dir, ".#sdf", "x"));
        ck_assert(hvt_is_temporary(fd, ".#sdf", HVT_TEMPORARY_OLD_RECORD));
        ck_assert(!hvt_is_temporary(fd, ".#sdf", 0));
        lock = path_in(".#notes.txt");
        ck_assert_int_eq(symlink("root@host.1234", lock), 0);
        ck_assert(!hvt_is_temporary(fd, ".#notes.txt", HVT_TEMPORARY_OLD_RECORD));
        fifo = path_in(".#sdg");
        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        ck_assert(!hvt_is_temporary(fd, ".#sdg", HVT_TEMPORARY_OLD_RECORD));
        /* A FIFO under a name of ours is ours; a directory is none of our making. */
        unlink(fifo);
        free(fifo);
        fifo = path_in(".#hvtuned.sdb.fedcba9876543210");
        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        sub = path_in(".#hvtuned.sdd.1111111111111111");
        ck_assert_int_eq(mkdir(sub, 0700), 0);

        ck_assert_int_eq(hvt_prune_temporaries(fd, 0, &kept), (int) ELEMENTSOF(ours) + 1);
        ck_assert_uint_eq(kept, 1);
        for (size_t i = 0; i < ELEMENTSOF(ours); i++)
                ck_assert_msg(!exists(ours[i]), "%s was left", ours[i]);
        for (size_t i = 0; i < ELEMENTSOF(theirs); i++)
                ck_assert_msg(exists(theirs[i]), "%s was pruned", theirs[i]);
        ck_assert(exists(".#sdf") && exists(".#notes.txt") && exists(".#hvtuned.sdd.1111111111111111"));
        /* In the runtime directory every regular ".#NAME" goes: .#sdf and the three near
         * names of .#hvtuned. above. */
        ck_assert_int_eq(hvt_prune_temporaries(fd, HVT_TEMPORARY_OLD_RECORD, &kept), 4);
        ck_assert(!exists(".#sdf") && exists(".#notes.txt") && exists(".hvtuned-notes"));
}
END_TEST

START_TEST(test_read_small) {
        _cleanup_close_ int fd = open_test_dir();
        _cleanup_free_ char *fifo = path_in("fifo"), *link = path_in("link");
        char buf[8];
        int nfd;

        free(test_write_file(dir, "fits", "123456"));      /* size - 2: the room to tell */
        ck_assert_int_eq(hvt_read_small(fd, "fits", buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "123456");
        free(test_write_file(dir, "long", "1234567"));
        ck_assert_int_eq(hvt_read_small(fd, "long", buf, sizeof(buf)), -EBADMSG);
        /* "12" would pass for the whole. */
        nfd = openat(fd, "nul", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ck_assert_int_eq(write(nfd, "12\0" "8", 4), 4);
        close(nfd);
        ck_assert_int_eq(hvt_read_small(fd, "nul", buf, sizeof(buf)), -EBADMSG);
        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        alarm(10);
        ck_assert_int_eq(hvt_read_small(fd, "fifo", buf, sizeof(buf)), -EBADMSG);
        alarm(0);
        ck_assert_int_eq(symlink("fits", link), 0);
        ck_assert_int_eq(hvt_read_small(fd, "link", buf, sizeof(buf)), -EBADMSG);
        ck_assert_int_eq(mkdirat(fd, "sub", 0755), 0);
        ck_assert_int_eq(hvt_read_small(fd, "sub", buf, sizeof(buf)), -EISDIR);
        ck_assert_int_eq(hvt_read_small(fd, "missing", buf, sizeof(buf)), -ENOENT);
}
END_TEST

START_TEST(test_opendirat_and_take) {
        _cleanup_close_ int fd = open_test_dir();
        _cleanup_(closedirp) DIR *d = NULL;
        _cleanup_free_ char *p = strdup("x");
        char *q;
        bool seen = false;
        int taken;

        free(test_write_file(dir, "listed", ""));
        ck_assert_int_eq(hvt_opendirat(fd, ".", &d), 0);
        for (struct dirent *de; (de = readdir(d)); )
                seen = seen || strcmp(de->d_name, "listed") == 0;
        ck_assert(seen);
        ck_assert_int_eq(hvt_opendirat(fd, "listed", &(DIR *) { NULL }), -ENOTDIR);

        taken = TAKE_FD(fd);
        ck_assert_int_eq(fd, -EBADF);
        ck_assert_int_ge(taken, 0);
        close(taken);
        q = TAKE_PTR(p);
        ck_assert_ptr_null(p);
        ck_assert_str_eq(q, "x");
        free(q);
}
END_TEST

int main(void) {
        Suite *s = suite_create("fs-util");
        TCase *tc = tcase_create("fs-util");

        if (geteuid() != 0) {
                fprintf(stderr, "SKIP: needs root to make files owned by another user\n");
                return SKIP;
        }
        umask(022);
        /* Made here, so that every forked test has it. */
        if (!mkdtemp(strcpy(dir, "/tmp/hvtuned-test.XXXXXX")))
                return EXIT_FAILURE;
        tcase_add_test(tc, test_owner_wording);
        tcase_add_test(tc, test_walk_parent);
        tcase_add_test(tc, test_walk_regular);
        tcase_add_test(tc, test_write_atomic);
        tcase_add_test(tc, test_write_atomic_stream);
        tcase_add_test(tc, test_temporaries);
        tcase_add_test(tc, test_read_small);
        tcase_add_test(tc, test_opendirat_and_take);
        tcase_set_timeout(tc, 30);
        suite_add_tcase(s, tc);
        return test_run(s);
}
