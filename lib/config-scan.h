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
/* Setting names one load may hold, every file and include together (an included file's each
 * time it is included), and their bytes. libconfig checks each new name against every one
 * before it in its group, comparing up to where they differ: a group of n names sharing l
 * bytes costs ~n^2/2 * l, at ~4 ns a byte on a 2-core VM. A legal 950 KB file of 95,000
 * top-level keys took 85 s there (59 s of CPU) to be refused for its unknown keys, past
 * systemd's watchdog and stop timeout, and the byte bound allows two. A count alone is not
 * enough: 4096 names of 470 bytes, in 2 MiB, took 15 s of CPU. A sane configuration has a few
 * hundred names of at most 24 bytes (top-level keys, the attributes of queue, device, host and
 * contested, overrides of a match and a few settings each), a few KiB of them. At these bounds
 * the worst load, 4096 names of 8 bytes in one group, took 0.2 s of CPU (0.26 s of wall time
 * with the VM busy), and 4096 top-level keys 0.15 s. */
#define HVT_CONFIG_NAMES_MAX 4096
#define HVT_CONFIG_NAME_BYTES_MAX (32 * 1024)
/* Files one load may open, its main file, every drop-in and every include, an included file
 * counted each time it is included: a file costs its open, its checks and a parse whatever its
 * size, and bytes bound nothing when the files are empty (256 drop-ins of 64 includes of an
 * empty file opened 16,640 files, in ~2 s). A sane configuration is a few files; this leaves
 * room for the 256 drop-ins allowed, each with 3 includes. A load of 1024 empty files took
 * 0.06 s of CPU on that VM (0.17 s of wall time at most). */
#define HVT_CONFIG_FILES_MAX 1024

/* What one load has left: every file it scans, the main file, each drop-in and each include,
 * takes from it. The daemon loads synchronously, and the time a load takes is time a reload
 * holds a SIGTERM: each field bounds one way a configuration within the others takes long. */
struct hvt_config_budget {
        size_t bytes;       /* to read (HVT_CONFIG_LOAD_MAX) */
        size_t names;       /* setting names to hold (HVT_CONFIG_NAMES_MAX) */
        size_t name_bytes;  /* and their bytes (HVT_CONFIG_NAME_BYTES_MAX) */
        size_t files;       /* to open (HVT_CONFIG_FILES_MAX) */
};

/* A whole load's budget, given to the scan of its first file. */
#define HVT_CONFIG_BUDGET                                                                       \
        ((struct hvt_config_budget) { .bytes = HVT_CONFIG_LOAD_MAX, .names = HVT_CONFIG_NAMES_MAX, \
                                      .name_bytes = HVT_CONFIG_NAME_BYTES_MAX, .files = HVT_CONFIG_FILES_MAX })

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
 *   or 64 included files, or an include name of more than 32 path components, are errors too;
 * - each file is read up to HVT_CONFIG_FILE_MAX bytes, a larger one is -EPERM;
 * - every file takes from *budget, what the load has left (HVT_CONFIG_BUDGET for a whole load,
 *   its files scanned in turn): one file to open, the bytes read, and each setting name (a
 *   word as libconfig's lexer reads one, true and false aside) and its bytes. A file past the
 *   files or the bytes left is -E2BIG, err at the @include that names it or at path itself (a
 *   drop-in: no line), and is not opened or read past them; a name past the names or their
 *   bytes left is -E2BIG at its line.
 * Returns 0 with ret filled (hvt_config_source_done() frees it), or -errno: err is set unless
 * the main file itself cannot be opened (-ENOENT, -EISDIR...) or memory ran out. libconfig is
 * to parse ret->text with no include directory. */
int hvt_config_scan(const char *path, const char *include_dir, struct hvt_config_budget *budget,
                    struct hvt_config_source *ret, struct hvt_config_error *err);

void hvt_config_source_done(struct hvt_config_source *src);

/* The file a name libconfig reports ("/proc/self/fd/5") stands for, or NULL when it is none
 * of the parts. */
const char *hvt_config_source_name(const struct hvt_config_source *src, const char *name);
