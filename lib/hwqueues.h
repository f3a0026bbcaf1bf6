/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the arithmetic of storvsc hw queues: how many CPUs are present, which cap to ask
 * for, what the kernel makes of a parameter value, and what the preallocated requests of a
 * controller cost. Pure functions over text the caller read. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

/* The preallocated requests of a storvsc controller (an estimate, checked against real
 * kernels' free memory by bench/vm: docs/performance.md). storvsc shares no tags between hw
 * queues, so each hw queue has can_queue requests of its own, each request_bytes (layout.h:
 * round_up(sizeof(struct request) + tag_set.cmd_size, cache line), where
 * scsi_mq_setup_tags() makes cmd_size sizeof(struct scsi_cmnd) + the host template's cmd_size
 * (storvsc: sizeof(struct storvsc_cmd_request)) + 2 inline scatterlist entries; 1088 bytes on
 * 6.1). blk_mq_alloc_rqs() packs them into 64 KiB blocks, the last block as small as fits;
 * scsi_mq_init_request() adds a sense buffer from a 128-byte slab object (96 bytes, cache
 * aligned); and each hw queue has its tag pointer arrays (rqs, static_rqs: 8 bytes a tag
 * each, kmalloc-rounded), its sbitmap, context and flush request. About 1.21 KiB a request
 * in all on 6.1. */
#define HVT_SENSE_BYTES 128

/* The default cap when the configuration has none, applied only when more CPUs than that are
 * present. WSL's choice, from its change's fio measurement (microsoft/WSL PR #40975, 32 vCPUs,
 * random reads: 1 queue 255.8k IOPS, 4 queues 437.7k, 16 queues 443.3k; random writes peaked
 * at 1 queue, 262.9k); hvtuned has measured no throughput itself. */
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

/* Bytes that a controller's preallocated requests hold (the model above), with requests of
 * request_bytes each; 0 when request_bytes is 0 (an unknown layout) or more than a page. */
uint64_t hvt_hwq_estimate_bytes(unsigned request_bytes, unsigned nr_hw_queues, unsigned can_queue);

/* What one hw queue's tags hold, for any blk-mq driver whose requests are request_bytes
 * (struct request and the driver's cmd_size, rounded up to a cache line) and that shares no
 * tags between hw queues: the requests as blk_mq_alloc_rqs() packs them, the rqs and
 * static_rqs pointer arrays and the sbitmap. 0 when request_bytes is 0 or more than a page. */
uint64_t hvt_tags_bytes(unsigned request_bytes, unsigned depth);

/* Those bytes as an operator reads them: "96.6 MiB", "1.2 GiB". */
void hvt_format_bytes(uint64_t bytes, char *buf, size_t size);

/* The value of hv_storvsc.storvsc_max_hw_queues on a kernel command line: 1 and *ret when
 * given (the last valid one counts, as the kernel parses them in order), 0 when absent,
 * -EINVAL when given only with values that are not numbers (the kernel ignores those). */
int hvt_cmdline_max_hw_queues(const char *cmdline, unsigned *ret);
