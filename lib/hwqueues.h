/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the arithmetic of storvsc hw queues: how many CPUs are present, which cap to ask
 * for, what the kernel makes of a parameter value, and what the preallocated requests of a
 * controller cost. Pure functions over text the caller read. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

/* What one preallocated request of a storvsc controller costs, in bytes (an estimate).
 * blk_mq_alloc_rqs() allocates, for every tag of every hw queue, round_up(sizeof(struct
 * request) + tag_set.cmd_size, cache line), and scsi_mq_setup_tags() makes cmd_size
 * sizeof(struct scsi_cmnd) + the host template's cmd_size (storvsc: sizeof(struct
 * storvsc_cmd_request), ~416 bytes) + 2 inline scatterlist entries (64 bytes). With a
 * ~300-byte struct request and a ~260-byte scsi_cmnd that is about 1 KiB on x86-64; storvsc
 * shares no tags between hw queues, so a controller holds nr_hw_queues x can_queue of them. */
#define HVT_REQUEST_BYTES 1024

/* The default cap when the configuration has none (WSL's choice: 4 queues keep almost all
 * the IOPS), applied only when more CPUs than that are present. */
#define HVT_DEFAULT_MAX_HW_QUEUES 4

/* Counts the CPUs of a cpulist ("0-31", "0,2-5", "0-7\n"): -EINVAL if it is not one. */
int hvt_cpulist_count(const char *text, unsigned *ret);

/* The cap to ask of the module parameter, or 0 to leave the parameter alone (cap 0, or the
 * default on a VM with at most 4 CPUs). Never above present: a larger value makes the
 * kernel fall back to one queue per CPU at the next probe, and resets the parameter. */
unsigned hvt_hwq_target(const struct hvt_host_config *h, unsigned present);

/* How many hw queues a SCSI controller probed with this parameter value gets (storvsc_probe:
 * 0 or more than present means one per present CPU). */
unsigned hvt_hwq_effective(unsigned param, unsigned present);

/* Bytes that a controller's preallocated requests hold. */
uint64_t hvt_hwq_estimate_bytes(unsigned nr_hw_queues, unsigned can_queue);

/* The value of hv_storvsc.storvsc_max_hw_queues on a kernel command line: 1 and *ret when
 * given (the last valid one counts, as the kernel parses them in order), 0 when absent,
 * -EINVAL when given only with values that are not numbers (the kernel ignores those). */
int hvt_cmdline_max_hw_queues(const char *cmdline, unsigned *ret);
