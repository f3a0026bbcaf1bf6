/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: what a refused configuration says, and where. Filled by the checks before libconfig
 * (config-scan.c) and by the validation after it (config.c): each includes this, and the
 * checks need nothing else of config.h. */
#pragma once

/* What was wrong, where: "file:line: key: message". line is 0 when no line applies. */
struct hvt_config_error {
        char file[256];
        int line;
        char key[64];
        char message[256];
};
