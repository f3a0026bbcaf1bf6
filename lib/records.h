/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the records of original values, the ones attributes had before hvtuned first wrote
 * them, kept one file per disk (and one for the driver) in the runtime directory (/run/hvtuned)
 * so that a restarted hvtuned still knows the true originals, never values it wrote itself.
 * Where that directory is, and whether it may hold records, is daemon/rundir.h's. */
#pragma once

#include <stdbool.h>

#include "attr.h"
#include "subject.h"

/* The longest record, in bytes: what hvt_records_save() writes, hvt_records_load() reads. */
#define HVT_RECORD_MAX 4095

struct hvt_originals {
        struct hvt_setting value[_HVT_ATTR_MAX];  /* .set: recorded */
};

/* The record of this subject (a disk instance, or the driver). -ENOENT when there is none, or
 * when the record found belongs to another instance (same name, other diskseq, device number
 * or sysfs inode where both know it: a disk removed and added again), which is then deleted. -EBADMSG for a record that
 * cannot be read, or holds an attribute that is not the subject's, deleted too: a guess at
 * originals is worse than none. */
int hvt_records_load(int dirfd, const struct hvt_subject *s, struct hvt_originals *ret);

/* The same, for a reader that must change nothing (`hvtuned --status`): a record of another
 * instance is -ENOENT, a damaged one -EBADMSG, and both stay. */
int hvt_records_read(int dirfd, const struct hvt_subject *s, struct hvt_originals *ret);

/* Replaces the subject's record atomically (hvt_write_atomic()) with the originals of its
 * own attributes; with none recorded, the record is deleted (but a record of a disk at
 * another path). Whatever is under the disk's name is replaced, hvtuned's header or not: the load before a disk's first save drops what
 * is there as a damaged record already, and refusing would leave the disk untuned for a
 * stray file; the rename swaps the name only, never writing into what it held (a hard link's
 * other name, a link's target). write_flags go to hvt_write_atomic() (HVT_WRITE_VOLATILE). */
int hvt_records_save(int dirfd, const struct hvt_subject *s, const struct hvt_originals *o, unsigned write_flags);

/* Deletes the subject's record, when what is under its name is a record of hvtuned's (by
 * its header) and not of a disk at another path: a remove event for a disk hvtuned never
 * managed leaves an operator's file of that name alone. Only s->name and s->syspath are
 * used. */
int hvt_records_remove(int dirfd, const struct hvt_subject *s);

/* Deletes every record whose disk name keep() does not want (disks gone while hvtuned was
 * not running), and left-over temporaries (hvt_prune_temporaries(), an older hvtuned's
 * ".#NAME" too). A file it cannot prove is a record of its own (by
 * its header) is left alone: returns how many, or -errno. */
int hvt_records_prune(int dirfd, bool (*keep)(const char *sysname, void *userdata), void *userdata);

/* The names of the records in the directory, the files hvtuned can prove its own by their
 * header, and those that cannot be read (a directory, an I/O error: a record may be there, which
 * the caller's load tells), never a dot file (the daemon's own, a temporary), in the kernel's
 * order of disk names (sdz before sdaa), HVT_DRIVER_NAME's among them: *ret is an array of n
 * strings, each and the array freed by the caller. 0 or -errno. */
int hvt_records_list(int dirfd, char ***ret, size_t *ret_n);

/* Deletes the record called name, when what is there is a record of hvtuned's (by its
 * header): one whose disk is gone, said so by the caller. 0 also when there is none, or the
 * file is provably not hvtuned's; -errno when it cannot be read (it may be a record, and stays)
 * or deleted. */
int hvt_records_delete(int dirfd, const char *name);

/* qsort() of disk names (char *) in the kernel's order: sdz before sdaa. */
int hvt_disk_name_cmp(const void *a, const void *b);
