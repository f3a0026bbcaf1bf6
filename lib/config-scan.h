/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the checks run on a configuration file and its includes before libconfig parses them,
 * and the text libconfig is given. */
#pragma once

#include <stddef.h>

#include "config-error.h"

/* Bytes one file may hold, the main one, a drop-in or an included one: a sane configuration
 * is a few KiB. A larger file is not read past this (a sparse 1.5 GB file, read whole, cost
 * 7 s and 1.5 GB of memory). */
#define HVT_CONFIG_FILE_MAX (1024 * 1024)
/* Bytes one load may read, its main file, every drop-in and every include together, an
 * included file counted each time it is included. The caps of one file bound nothing across
 * files: 8 drop-ins of 63 includes of one 1 MiB file read 504 MiB, in 10-23 s on a 2-core VM,
 * while the daemon, which loads synchronously, held a SIGTERM; the 256 drop-ins allowed, of 64
 * includes each, would read 16 GiB. Twice the cap of one file: a file at that cap stays
 * legal, with as much again for the rest (256 drop-ins of 4 KiB), some 500 times a sane
 * configuration. A load at this bound took 0.1 s on that VM, and 1 s of CPU at worst, in
 * includes of a single 1 MiB line, which libconfig's lexer reads slowly. */
#define HVT_CONFIG_LOAD_MAX (2 * HVT_CONFIG_FILE_MAX)

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
 *   or 64 included files are errors too;
 * - each file is read up to HVT_CONFIG_FILE_MAX bytes, a larger one is -EPERM; and no further
 *   than *budget, the bytes the load has left to read (HVT_CONFIG_LOAD_MAX for a whole load,
 *   its files scanned in turn), which every file read takes from. A file past it is -E2BIG,
 *   err at the @include that names it, or at path itself (a drop-in: no line).
 * Returns 0 with ret filled (hvt_config_source_done() frees it), or -errno: err is set unless
 * the main file itself cannot be opened (-ENOENT, -EISDIR...) or memory ran out. libconfig is
 * to parse ret->text with no include directory. */
int hvt_config_scan(const char *path, const char *include_dir, size_t *budget, struct hvt_config_source *ret,
                    struct hvt_config_error *err);

void hvt_config_source_done(struct hvt_config_source *src);

/* The file a name libconfig reports ("/proc/self/fd/5") stands for, or NULL when it is none
 * of the parts. */
const char *hvt_config_source_name(const struct hvt_config_source *src, const char *name);
