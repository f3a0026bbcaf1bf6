/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: what every test program needs: temporary files and running a suite. */
#pragma once

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Writes text to a new file in dir (created on first use) and returns its path. */
static inline char *test_write_file(char *dir, const char *name, const char *text) {
        char *path;
        FILE *f;

        if (!*dir)
                ck_assert_ptr_nonnull(mkdtemp(strcpy(dir, "/tmp/hvtuned-test.XXXXXX")));
        ck_assert_int_ge(asprintf(&path, "%s/%s", dir, name), 0);
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        fputs(text, f);
        ck_assert_int_eq(fclose(f), 0);
        return path;
}

/* Runs every test of s, forked, and gives main()'s exit status. */
static inline int test_run(Suite *s) {
        SRunner *sr = srunner_create(s);
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
