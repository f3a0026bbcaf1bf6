/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: who else is likely writing an attribute of a disk: the udev rule that assigns it last,
 * an active tuned.service, a running WALinuxAgent. Looked for under a root directory ("/" on
 * a system, a directory of a test's), and only when a contest was found (track.h): it reads
 * directories and files, so it is never on a pass's path, and its work is capped.
 *
 * Likely, not proven: a rule that assigns the attribute may not match this disk, and a daemon
 * that can write it may not be the one that did. The report says "suspect". */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "attr.h"

/* The rules directories, highest precedence first, as udev reads them: a file of one name in
 * an earlier directory hides the others of that name (and one that is empty or a link to
 * /dev/null masks them); the files then run in the order of their names, so the last
 * assignment of an attribute is the one that stays. */
extern const char *const hvt_udev_rules_dirs[4];

/* At most this many rules files are read, this much of each and this much in all: the look
 * runs in the event loop. A distribution's largest rules file is about 10 KiB, and a system
 * has a hundred or two; past the caps a later file's assignment may go unseen. */
#define HVT_RULES_FILES_MAX 512
#define HVT_RULES_FILE_READ_MAX (64 * 1024)
#define HVT_RULES_READ_TOTAL_MAX (4 * 1024 * 1024)
/* At most this many processes are looked at for WALinuxAgent. */
#define HVT_PROCESSES_MAX 8192

struct hvt_suspects {
        char rule[320];   /* "/usr/lib/udev/rules.d/80-azure-disk.rules", as udev finds it; "": none */
        unsigned rule_line;
        pid_t tuned;      /* > 0: tuned's daemon, alive (its pid file, /run/tuned/tuned.pid), and
                           * running a profile other than hvtuned's (/etc/tuned/active_profile) */
        pid_t waagent;    /* > 0: a process of WALinuxAgent */
};

/* The suspects for id under root: a rule for any attribute; tuned for the attributes its disk
 * plugin sets (scheduler, read_ahead_kb); WALinuxAgent for the SCSI timeout it sets (and
 * io_timeout, the same kernel value). 0, or -errno when root cannot be opened; a directory
 * or file that cannot be read is passed over. */
int hvt_suspects_find(const char *root, enum hvt_attr_id id, struct hvt_suspects *ret);

/* "udev rule /etc/udev/rules.d/99-ra.rules:3, tuned (pid 812)"; "" when none. */
void hvt_suspects_format(const struct hvt_suspects *s, char *buf, size_t size);

/* Whether key, the name inside a rule's ATTR{...}, is id (read_ahead_kb also as the bdi's,
 * a SCSI attribute also as a rule on the SCSI device would name it, and device/timeout and
 * queue/io_timeout each as the other: one kernel value). */
bool hvt_rule_key_is(const char *key, size_t len, enum hvt_attr_id id);

/* The line (from 1) of the last assignment to id (ATTR{...}="..." or :=, not a match == or
 * !=) in the rules text, continued lines joined as udev joins them; 0 when none. */
unsigned hvt_rules_assign_line(const char *text, size_t len, enum hvt_attr_id id);
