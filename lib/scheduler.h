/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the queue/scheduler format: "[none] mq-deadline kyber ", "mq-deadline kyber [none] "
 * (before ~6.2), "noop [deadline] cfq " (legacy single-queue), or a lone "none" (a queue
 * without elevator support). */
#pragma once

#include <stddef.h>

#include "attr.h"

#define HVT_SCHED_LIST_MAX 16

struct hvt_sched_list {
        size_t n;
        int active;  /* index into names, -1 if none is marked */
        char names[HVT_SCHED_LIST_MAX][HVT_SCHED_NAME_MAX];
};

/* 0, or -EBADMSG when the text is not a scheduler list (two active entries, a stray
 * bracket, a name that is no identifier, nothing at all). */
int hvt_sched_parse(const char *text, struct hvt_sched_list *ret);
int hvt_sched_find(const struct hvt_sched_list *l, const char *name);
const char *hvt_sched_active(const struct hvt_sched_list *l);

/* The name to write for "want" on this queue: want itself, or "noop" for "none" on a legacy
 * kernel that offers noop and no none. NULL if the queue offers neither. */
const char *hvt_sched_resolve(const struct hvt_sched_list *l, const char *want);

/* "none mq-deadline kyber": the offered names, for a message. */
void hvt_sched_format(const struct hvt_sched_list *l, char *buf, size_t size);
