/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: how `hvtuned --status` shows a state (state.h): a table an operator reads at a
 * glance, or one JSON object for tools (its keys are hvtuned(8)'s, and stay). Every text from
 * sysfs or the file is escaped for the terminal (escape.h) or as JSON (json.h). */
#pragma once

#include <stdio.h>

#include "state.h"

/* The version of the JSON object's keys ("format"): a key is only ever added under it. */
#define HVT_STATE_JSON_FORMAT 1

/* 0, or -EIO when f failed. */
int hvt_state_show_text(FILE *f, const struct hvt_state *s);
int hvt_state_show_json(FILE *f, const struct hvt_state *s);
