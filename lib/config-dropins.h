/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: finding a configuration's drop-ins: the directory beside the main file (its path and
 * ".d"), checked as the main file's directories are, and the *.conf names in it, in order. */
#pragma once

#include <stddef.h>

#include "config-error.h"

/* More than any fleet's configuration management writes. What a load opens, includes too, is
 * bounded by HVT_CONFIG_FILES_MAX, and what it reads by HVT_CONFIG_LOAD_MAX (config-scan.h). */
#define HVT_CONFIG_DROPINS_MAX 256

/* The drop-ins of the configuration at path, as "PATH.d/NAME" in the C locale's byte order of
 * NAME (systemd's order for its own drop-ins): every entry whose name ends in ".conf" and
 * does not start with "." (editors' and package managers' leftovers: "x.conf~", ".x.conf.swp",
 * "x.conf.dpkg-old" are not read). What an entry is, a regular file or a symlink to one, and
 * whether it is trusted, is the scan's to check when it opens it (config-scan.h).
 * The directory is walked as trust.h walks to the main file, every step checked, symlinks of
 * root's or ours followed; itself, it must be root's or ours and writable by neither group
 * nor others, sticky or not: a sticky directory would let anyone add a file, and one file
 * refused refuses the whole configuration.
 * Returns 0 with *ret (hvt_strv_free(*ret, *ret_n)) and *ret_n; both NULL and 0 when the
 * directory does not exist. Else -errno with err set (the directory named), or -ENOMEM. */
int hvt_config_dropins(const char *path, char ***ret, size_t *ret_n, struct hvt_config_error *err);
