/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: deciding whether a file may steer a daemon that writes kernel tunables as root (the
 * rule of sshd's StrictModes). */
#pragma once

#include <stddef.h>

/* 0 when the file open on fd (named path) is a regular file owned by root (or by the
 * effective user, for a user checking a draft of their own), not writable by group or
 * others, in a directory that only its owner can change (or a sticky one, like /tmp, where
 * nobody else can rename or replace it). Else -EPERM with why ("writable by group or others
 * (mode 0664)"), or -errno when the directory cannot be looked at. */
int hvt_file_trusted(int fd, const char *path, char *why, size_t size);
