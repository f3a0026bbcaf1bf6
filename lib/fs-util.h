/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the file-system rules every file of hvtuned's keeps, each written once: whose a file
 * it trusts may be, how a path is walked to one, how a file is written whole and a small one
 * read, and which leftovers in a directory are hvtuned's own temporaries. */
#pragma once

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <sys/stat.h>

/* The kernel's own limit of symlinks in one lookup. */
#define HVT_HOPS_MAX 40

enum {
        /* A sticky directory (/tmp) writable by group or others passes: there nobody can
         * rename or replace what others own. */
        HVT_OWNER_STICKY_OK = 1 << 0,
};

/* Whether st may steer hvtuned: 0 when it is root's or ours (geteuid()) and writable by
 * neither group nor others (a symlink's mode means nothing: only its owner counts). Else
 * -EPERM (another owner) or -EACCES (writable by group or others), with every reason in why,
 * one way: "SUBJECT is owned by uid 65534, neither root's nor ours, and writable by group or
 * others (mode 0777)"; without a subject, from "owned" on. */
int hvt_check_owner(const struct stat *st, unsigned flags, const char *subject, char *why, size_t size);

enum {
        /* HVT_OWNER_STICKY_OK (above) passes on to every check. */
        /* Follow symlinks owned by root or us, at most HVT_HOPS_MAX. Without it the path must
         * be the real one: a symlink (-ELOOP), "." or ".." (-EINVAL) on the way is refused. */
        HVT_WALK_FOLLOW = 1 << 8,
        /* Check every directory on the way, not only the last. */
        HVT_WALK_CHECK_EVERY = 1 << 9,
        /* Stop at the last directory: return it, the last name in *ret_name. */
        HVT_WALK_PARENT = 1 << 10,
        /* Open the last name, which must be a regular file held to hvt_check_owner(), read-only. */
        HVT_WALK_REGULAR = 1 << 11,
};

/* Walks path (a relative one from the working directory's path) a name at a time from "/",
 * every lookup relative to the directory just reached (O_PATH|O_NOFOLLOW, then fstat()), so
 * that what is opened is what was checked; the file is opened where it was looked at and must
 * be the same inode. Returns an fd, an O_PATH one on the directory with HVT_WALK_PARENT; else
 * -EPERM (refused) or -EINVAL, -ELOOP (see HVT_WALK_FOLLOW) with why, which is written only
 * then, or -errno: -ENOENT, -EISDIR, -ENOTDIR, -ELOOP (more than HVT_HOPS_MAX symlinks)... */
int hvt_walk(const char *path, unsigned flags, char **ret_name, char *why, size_t size);

/* Writes data to name in dir_fd whole or not at all: into a temporary hvtuned creates
 * (O_EXCL|O_NOFOLLOW: never a file it finds, a FIFO or a hard link planted there), fsync(),
 * renamed over name, which swaps the name only. With ret_st, the inode made. */
enum {
        /* 0644 whatever the umask: for a reader of another user under a unit's UMask=0077. */
        HVT_WRITE_READABLE = 1 << 0,
        /* dir_fd is on a file system that a crash of the kernel empties (hvt_fs_volatile()):
         * no fsync(), which would keep nothing the page cache does not. */
        HVT_WRITE_VOLATILE = 1 << 1,
        /* 0600 whatever the umask: what only root may read, run outside the unit too. */
        HVT_WRITE_PRIVATE = 1 << 2,
};
int hvt_write_atomic(int dir_fd, const char *name, const char *data, size_t len, unsigned flags,
                     struct stat *ret_st);

/* hvt_write_atomic() of what fill() writes to f (the temporary, buffered), for a text too
 * large to hold whole in memory (the state file at thousands of disks). fill() returns 0 or
 * -errno; a write error of the stream fails it too. */
int hvt_write_atomic_stream(int dir_fd, const char *name, int (*fill)(FILE *f, void *userdata), void *userdata,
                            unsigned flags, struct stat *ret_st);

/* Whether fd is on tmpfs or ramfs: what is written there lasts as long as the kernel that
 * holds it, fsync()ed or not (/run, where the records are). */
bool hvt_fs_volatile(int fd);

/* write() until all of data is written, through EINTR and short writes. */
int hvt_write_all(int fd, const char *data, size_t len);

enum {
        /* ".#NAME" as a regular file, an older hvtuned's temporary of a record: only in the
         * runtime directory, where no other tool writes. */
        HVT_TEMPORARY_OLD_RECORD = 1 << 0,
};

/* Whether name in dir_fd is a temporary of hvt_write_atomic() (".#hvtuned.NAME.<16 hex>"),
 * or of an earlier release: ".hvtuned.PID.HEX.tmp" (the metrics file's), and with
 * HVT_TEMPORARY_OLD_RECORD ".#NAME". The first two are hvtuned's whatever their type (a FIFO
 * planted under such a name is no one else's either). */
bool hvt_is_temporary(int dir_fd, const char *name, unsigned flags);

/* Removes every temporary of dir_fd's (unlinkat(): nothing is opened). A directory under such
 * a name is none of hvtuned's making: left, counted in *ret_kept. Returns how many went, or
 * the first -errno. */
int hvt_prune_temporaries(int dir_fd, unsigned flags, unsigned *ret_kept);

/* Reads name in dir_fd whole into buf, NUL-terminated. Never blocks on a FIFO, never follows a
 * symlink: -EBADMSG for a file that is not regular, too long for buf, or holds a NUL byte;
 * -EISDIR for a directory. */
int hvt_read_small(int dir_fd, const char *name, char *buf, size_t size);

/* The directory name in dir_fd (dir_fd itself with "."), to be read with readdir(). */
int hvt_opendirat(int dir_fd, const char *name, DIR **ret);
