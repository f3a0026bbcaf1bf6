/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: attribute I/O relative to a sysfs directory fd, and whole kernel text files (/proc).
 * Reads are free; writes go only to names from the allowlist (attr.c), with values that are
 * plain tokens. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "attr.h"

/* Whether path is below top and made of names only: no empty, "." or ".." component could
 * then take it up to top or above ("/sys/devices" and a path from a file). libudev's syspaths
 * all are. A string check, as every sysfs path is opened by its name (a testbed's too). */
bool hvt_sysfs_path_below(const char *top, const char *path);

/* An fd on a sysfs directory (a disk's queue/, a LUN's directory), or -errno. */
int hvt_sysfs_open_dir(const char *path);

/* Reads name below dirfd into buf without the trailing newline. Returns the length, or
 * -errno: -ENOENT when the attribute does not exist, -EFBIG when it does not fit, -EBADMSG
 * when it holds a NUL (no text value does). */
int hvt_sysfs_read(int dirfd, const char *name, char *buf, size_t size);

/* An attribute opened for reading, to be read with hvt_sysfs_read_fd() now and again after
 * a write of the same pass (one pread(2) each, where a new open costs three calls): an fd, or
 * -errno. Never waits: a FIFO opens, and its read is -ESPIPE. */
int hvt_sysfs_open(int dirfd, const char *name);
/* Reads what the attribute open on fd shows now, as hvt_sysfs_read() does. */
int hvt_sysfs_read_fd(int fd, char *buf, size_t size);

/* Writes value to the attribute id below dirfd in one write(2), as sysfs wants it.
 * -EINVAL for a value that is not a plain token, -EIO for a short write. */
int hvt_sysfs_write(int dirfd, enum hvt_attr_id id, const char *value);

/* The whole of a kernel text file (/proc/self/mountinfo may be long), NUL-terminated, in a
 * malloc()ed *ret. Returns its length: more than strlen() when the file holds a NUL byte. */
int hvt_read_file(const char *path, char **ret);
/* The same for a file already open (checked before it is read), of at most max bytes:
 * -EFBIG for a longer one, found after reading max + 1 bytes at most (never the whole of a
 * huge or endless file). */
int hvt_read_fd(int fd, size_t max, char **ret);
