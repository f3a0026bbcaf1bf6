/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the check, after every hvtuned the harness ran, that it wrote only where it may. */
#pragma once

/* The log every hvtuned of this test process appends to (tests/emulate/write-log.c). */
const char *writes_log(void);

/* Whether every open for writing, rename and unlink in log was of the runtime directory's
 * records or of an allowlisted attribute (lib/attr.c) in the directory its group names, and
 * every write to an attribute was one plain token, once per open. A test that configures a
 * metrics file names its directories in $HVTUNED_TEST_METRICS_DIR (colon-separated): what
 * hvtuned writes, renames and unlinks there is its own too. Returns the number of
 * attribute writes, or -1 with *why (g_free()) saying what was wrong. */
int writes_verify(const char *log, const char *runtime, char **why);

/* The same on the log, failing the test on a wrong write; then empties the log. */
void writes_check(const char *runtime);

/* The attribute writes writes_check() has seen in this test process. */
unsigned writes_checked(void);
