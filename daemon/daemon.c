/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the context's lifetime (see daemon.h). */
#include <unistd.h>

#include "daemon.h"
#include "host.h"
#include "metrics-file.h"
#include "settle.h"
#include "state-file.h"

void hvt_daemon_done(struct hvt_daemon *d) {
        hvt_metrics_remove(d);
        hvt_state_file_remove(d);
        hvt_settle_done(&d->settles);
        hvt_disks_done(&d->disks);
        hvt_host_done(&d->host);
        hvt_config_free(d->config);
        if (d->state_fd >= 0)
                close(d->state_fd);
        if (d->lock_fd >= 0)
                close(d->lock_fd);
        hvt_event_source_free(d->verify);
        hvt_event_source_free(d->status);
        hvt_event_source_free(d->resync);
        hvt_event_source_free(d->monitor_source);
        hvt_notify_done(&d->notify);
        /* The loop before the monitor: its sources still refer to the monitor's fd. */
        hvt_event_free(d->event);
        udev_monitor_unref(d->monitor);
        udev_unref(d->udev);
        hvt_log_done(&d->log);
}
