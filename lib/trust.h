/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: deciding whether a file may steer a daemon that writes kernel tunables as root (the
 * rule of sshd's StrictModes, on every step of the path as systemd's CHASE_SAFE walks it). */
#pragma once

#include <stddef.h>

/* Opens path read-only and returns the descriptor, when every step to it could only have been
 * made by root or the effective user (a user checking a draft of their own):
 * - every directory on the way, through every symlink hop (a relative path starts at the
 *   working directory's own path), is owned by root or that user and not writable by group
 *   or others, unless sticky (like /tmp, where nobody can rename or replace what others own);
 * - every symlink on the way is owned by root or that user;
 * - the file is a regular file owned by root or that user, not writable by group or others.
 * Nothing is followed by name: each lookup is relative to the directory just checked, so what
 * is opened is what was checked. Else -EPERM with why ("writable by group or others (mode
 * 0664)"), or -errno: -ENOENT, -EISDIR, -ENOTDIR, -ELOOP (more than 40 symlinks)... */
int hvt_open_trusted(const char *path, char *why, size_t size);
