/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the checks run on a configuration file and its includes before libconfig parses them,
 * and the text libconfig is given. */
#pragma once

#include <stddef.h>

#include "config-error.h"

/* An included file, as libconfig gets it: a sealed memfd of its checked text. */
struct hvt_config_part {
        int fd;
        char *path;  /* the file it was read from */
};

/* What libconfig parses, and nothing else: the main file's text, read from the descriptor
 * that was checked, with every @include rewritten to "/proc/self/fd/N" of a part. */
struct hvt_config_source {
        char *text;
        struct hvt_config_part *parts;
        size_t n_parts;
};

/* Scans path and the files it @includes (their names unescaped as libconfig does, a relative
 * one found in include_dir, an absolute one as it is) before libconfig reads any of them:
 * - each is opened as trust.h says, else -EPERM (err names the file and why);
 * - libconfig 1.5 stores an integer literal without the L suffix in an int and silently keeps
 *   the low 32 bits: "read_ahead_kb = 4294967296;" would load as 0. Later versions promote
 *   decimal literals to 64 bits but still truncate hexadecimal ones (0x100000000 is 0), so
 *   such a literal is -EINVAL with every libconfig; so are a NUL byte and "\x00" in a string;
 * - an include that cannot be opened is an error at its line; more than 8 levels of includes
 *   or 64 included files are errors too.
 * Returns 0 with ret filled (hvt_config_source_done() frees it), or -errno: err is set unless
 * the main file itself cannot be opened (-ENOENT, -EISDIR...) or memory ran out. libconfig is
 * to parse ret->text with no include directory. */
int hvt_config_scan(const char *path, const char *include_dir, struct hvt_config_source *ret,
                    struct hvt_config_error *err);

void hvt_config_source_done(struct hvt_config_source *src);

/* The file a name libconfig reports ("/proc/self/fd/5") stands for, or NULL when it is none
 * of the parts. */
const char *hvt_config_source_name(const struct hvt_config_source *src, const char *name);
