/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the metrics file (metrics_file in hvtuned.conf) node_exporter's textfile collector
 * reads: gathered from the daemon after a pass, written whole, removed when hvtuned stops. */
#pragma once

struct hvt_daemon;

/* Writes the figures to the configured file when they changed since the last write (a
 * change-event flood is not a write flood), or, under a watchdog, when twice its period has
 * passed since (the file's mtime says the daemon runs); removes the file of an earlier
 * configuration that named another. Nothing in --once or a dry run. A failure is logged
 * once, then again only when it changes. */
void hvt_metrics_update(struct hvt_daemon *d);

/* Removes the file hvtuned wrote, if any. */
void hvt_metrics_remove(struct hvt_daemon *d);
