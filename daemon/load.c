/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the configuration's loading (see load.h). */
#include <errno.h>
#include <stdio.h>

#include "load.h"
#include "macro.h"
#include "messages.h"

int hvt_load_config(struct hvt_daemon *d) {
        struct hvt_config_error err;
        struct hvt_config *c;
        char text[512];
        int r;

        r = hvt_config_load(d->config_path, !d->config_explicit, &c, &err);
        if (r < 0) {
                if (r == -ENOMEM) {
                        (void) hvt_strscpy(d->config_error, sizeof(d->config_error), d->config_path);
                        return hvt_log_errno(&d->log, LOG_ERR, r, "Out of memory loading configuration");
                }
                hvt_config_error_format(&err, text, sizeof(text));
                if (err.line > 0)
                        snprintf(d->config_error, sizeof(d->config_error), "%s:%d", err.file, err.line);
                else
                        (void) hvt_strscpy(d->config_error, sizeof(d->config_error), err.file);
                return hvt_log_struct(&d->log, LOG_ERR, r, HVT_MESSAGE_CONFIG_ERROR,
                                      HVT_FIELDS(HVT_FIELD("HVTUNED_CONFIG_FILE=%s", err.file),
                                                 HVT_FIELD("HVTUNED_CONFIG_LINE=%d", err.line)),
                                      "%s", text);
        }

        hvt_config_describe(c, text, sizeof(text));
        hvt_log_debug(&d->log, "Loaded configuration from %s", text);
        for (size_t i = 0; i < c->n_files; i++)
                hvt_log_debug(&d->log, "Read configuration file %s", c->files[i]);
        hvt_config_free(d->config);
        d->config = c;
        d->config_error[0] = '\0';
        return 0;
}
