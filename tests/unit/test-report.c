/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The plain lines hvtuned prints for each result and disk event outside the journal: the
 * same text becomes the journal's MESSAGE, so this is what an operator reads either way. */
#include <check.h>
#include <stdio.h>

#include "report.h"
#include "testutil.h"

static struct hvt_disk disk = {
        .sysname = "sdc",
        .controller = "{f8b3781b-1e82-4818-a1c3-63d806ec15bb}",
        .kind = HVT_KIND_SCSI, .role = HVT_ROLE_DATA, .host = 1, .channel = 0, .target = 0, .lun = 2,
        .vendor = "Msft", .model = "Virtual Disk",
};

static struct hvt_disk nvme = {
        .sysname = "nvme1n3",
        .controller = "{7870a1b2-0c3d-4e5f-8a9b-0c1d2e3f4a5b}",
        .kind = HVT_KIND_NVME_ACCELERATOR, .role = HVT_ROLE_DATA, .nsid = 3, .lun = 1, .via_hv_pci = true,
};

static struct hvt_disk local = {
        .sysname = "nvme0n1",
        .controller = "",
        .kind = HVT_KIND_NVME_DIRECT_V2, .role = HVT_ROLE_LOCAL, .nsid = 1, .lun = HVT_LUN_NONE,
        .multipath_head = true,
};

/* Runs report on stderr redirected into a file and returns what was printed. */
static char *capture(void (*report)(const struct hvt_log *log, const void *arg), const void *arg, int level) {
        static char buf[4096];
        struct hvt_log log = { .max_level = level };
        FILE *f = tmpfile();
        int saved = dup(STDERR_FILENO);
        size_t n;

        ck_assert_ptr_nonnull(f);
        fflush(stderr);
        ck_assert_int_ge(dup2(fileno(f), STDERR_FILENO), 0);
        report(&log, arg);
        fflush(stderr);
        dup2(saved, STDERR_FILENO);
        close(saved);
        rewind(f);
        n = fread(buf, 1, sizeof(buf) - 1, f);
        buf[n] = '\0';
        fclose(f);
        return buf;
}

/* What the daemon reports a disk's results about. */
#define SUBJECT (&(struct hvt_subject[1]) { hvt_subject_disk(&disk) }[0])

static void report_one(const struct hvt_log *log, const void *arg) {
        hvt_report_result(log, SUBJECT, arg, HVT_ACTION_TUNE, 0);
}

static void report_verbose(const struct hvt_log *log, const void *arg) {
        hvt_report_result(log, SUBJECT, arg, HVT_ACTION_TUNE, HVT_REPORT_UNCHANGED_INFO);
}

static void report_repair(const struct hvt_log *log, const void *arg) {
        hvt_report_result(log, SUBJECT, arg, HVT_ACTION_REPAIR, 0);
}

static void report_restore(const struct hvt_log *log, const void *arg) {
        hvt_report_result(log, SUBJECT, arg, HVT_ACTION_RESTORE, 0);
}

static void report_repeat(const struct hvt_log *log, const void *arg) {
        hvt_report_result(log, SUBJECT, arg, HVT_ACTION_TUNE, HVT_REPORT_REPEATED);
}

#define RESULT(...) (&(const struct hvt_result) { __VA_ARGS__ })

START_TEST(test_result_lines) {
        ck_assert_str_eq(capture(report_one, RESULT(.attr = HVT_ATTR_SCHEDULER, .outcome = HVT_APPLIED,
                                                    .from = "mq-deadline", .to = "none"), LOG_INFO),
                         "sdc queue/scheduler: mq-deadline -> none (applied)\n");
        ck_assert_str_eq(capture(report_one, RESULT(.attr = HVT_ATTR_READ_AHEAD_KB, .outcome = HVT_CLAMPED,
                                                    .from = "128", .to = "4095", .kept = "4092"), LOG_INFO),
                         "sdc queue/read_ahead_kb: 128 -> 4095 (clamped: the kernel kept 4092)\n");
        ck_assert_str_eq(capture(report_one, RESULT(.attr = HVT_ATTR_QUEUE_DEPTH, .outcome = HVT_FAILED,
                                                    .error = EINVAL, .from = "2048", .to = "4000"), LOG_INFO),
                         "sdc device/queue_depth: 2048 -> 4000 (failed: Invalid argument)\n");
        ck_assert_str_eq(capture(report_one, RESULT(.attr = HVT_ATTR_TIMEOUT, .outcome = HVT_FAILED,
                                                    .error = EACCES, .to = "300"), LOG_INFO),
                         "sdc device/timeout: 300 (failed: Permission denied)\n");
        ck_assert_str_eq(capture(report_one, RESULT(.attr = HVT_ATTR_WBT_LAT_USEC, .outcome = HVT_UNSUPPORTED,
                                                    .error = ENOENT, .to = "0"), LOG_INFO),
                         "sdc queue/wbt_lat_usec: 0 (unsupported: no such attribute on this kernel)\n");
        ck_assert_str_eq(capture(report_one, RESULT(.attr = HVT_ATTR_SCHEDULER, .outcome = HVT_UNSUPPORTED,
                                                    .from = "none", .to = "bfq", .offered = "none mq-deadline"), LOG_INFO),
                         "sdc queue/scheduler: none -> bfq (unsupported: the disk offers none mq-deadline)\n");
        ck_assert_str_eq(capture(report_one, RESULT(.attr = HVT_ATTR_NOMERGES, .outcome = HVT_WOULD_APPLY,
                                                    .from = "0", .to = "1"), LOG_INFO),
                         "sdc queue/nomerges: 0 -> 1 (would apply)\n");
}
END_TEST

START_TEST(test_kinds) {
        const struct hvt_result *wrote = RESULT(.attr = HVT_ATTR_SCHEDULER, .outcome = HVT_APPLIED,
                                                .from = "bfq", .to = "none");
        const struct hvt_result *failed = RESULT(.attr = HVT_ATTR_QUEUE_DEPTH, .outcome = HVT_FAILED,
                                                 .error = EINVAL, .from = "2048", .to = "4000");

        ck_assert_str_eq(capture(report_repair, wrote, LOG_INFO),
                         "sdc queue/scheduler: bfq -> none (drift repaired)\n");
        ck_assert_str_eq(capture(report_repair, RESULT(.attr = HVT_ATTR_READ_AHEAD_KB, .outcome = HVT_CLAMPED,
                                                       .from = "128", .to = "4095", .kept = "4092"), LOG_INFO),
                         "sdc queue/read_ahead_kb: 128 -> 4095 (drift repaired: the kernel kept 4092)\n");
        ck_assert_str_eq(capture(report_restore, RESULT(.attr = HVT_ATTR_READ_AHEAD_KB, .outcome = HVT_APPLIED,
                                                        .from = "1024", .to = "128"), LOG_INFO),
                         "sdc queue/read_ahead_kb: 1024 -> 128 (restored)\n");
        ck_assert_str_eq(capture(report_restore, failed, LOG_INFO),
                         "sdc device/queue_depth: 2048 -> 4000 (restore failed: Invalid argument)\n");
        /* The same failure again: only with -v. */
        ck_assert_str_eq(capture(report_repeat, failed, LOG_INFO), "");
        ck_assert_str_eq(capture(report_repeat, failed, LOG_DEBUG),
                         "sdc device/queue_depth: 2048 -> 4000 (failed: Invalid argument)\n");
}
END_TEST

START_TEST(test_levels) {
        const struct hvt_result *unchanged = RESULT(.attr = HVT_ATTR_SCHEDULER, .outcome = HVT_UNCHANGED,
                                                    .from = "none", .to = "none");
        const struct hvt_result *clamped = RESULT(.attr = HVT_ATTR_IO_TIMEOUT, .outcome = HVT_CLAMPED,
                                                  .from = "30000", .to = "30001", .kept = "30004");

        /* Found again as the kernel kept it: the value shown is the one it has. */
        ck_assert_str_eq(capture(report_verbose, RESULT(.attr = HVT_ATTR_READ_AHEAD_KB, .outcome = HVT_UNCHANGED,
                                                        .from = "1000", .to = "1001", .kept = "1000"), LOG_DEBUG),
                         "sdc queue/read_ahead_kb: 1000 (unchanged: the kernel keeps it for 1001)\n");
        /* Unchanged is debug for the daemon; --once shows it only with -v (and then at info, on
         * its report's stream). */
        ck_assert_str_eq(capture(report_one, unchanged, LOG_INFO), "");
        ck_assert_str_eq(capture(report_one, unchanged, LOG_DEBUG), "sdc queue/scheduler: none (unchanged)\n");
        ck_assert_str_eq(capture(report_verbose, unchanged, LOG_INFO), "");
        ck_assert_str_eq(capture(report_verbose, unchanged, LOG_DEBUG), "sdc queue/scheduler: none (unchanged)\n");
        /* Warnings still show when only warnings are wanted; applied does not. */
        ck_assert_str_ne(capture(report_one, clamped, LOG_WARNING), "");
        ck_assert_str_eq(capture(report_one, RESULT(.attr = HVT_ATTR_SCHEDULER, .outcome = HVT_APPLIED,
                                                    .from = "bfq", .to = "none"), LOG_WARNING), "");
}
END_TEST

static void found(const struct hvt_log *log, const void *arg) {
        (void) arg;
        hvt_report_disk_found(log, &disk);
}

static void removed(const struct hvt_log *log, const void *arg) {
        (void) arg;
        hvt_report_disk_removed(log, &disk);
}

static void released(const struct hvt_log *log, const void *arg) {
        (void) arg;
        hvt_report_disk_released(log, &disk);
}

static void nvme_found(const struct hvt_log *log, const void *arg) {
        hvt_report_disk_found(log, arg);
}

static void nvme_released(const struct hvt_log *log, const void *arg) {
        hvt_report_disk_released(log, arg);
}

static void unreadable(const struct hvt_log *log, const void *arg) {
        (void) arg;
        ck_assert_int_eq(hvt_report_disk_unreadable(log, "sdq", EBADMSG), -EBADMSG);
}

START_TEST(test_disk_lines) {
        ck_assert_str_eq(capture(found, NULL, LOG_INFO),
                         "sdc: found Hyper-V scsi disk 1:0:0:2 on controller {f8b3781b-1e82-4818-a1c3-63d806ec15bb} (Msft Virtual Disk), role data\n");
        ck_assert_str_eq(capture(removed, NULL, LOG_INFO),
                         "sdc: removed Hyper-V scsi disk 1:0:0:2 on controller {f8b3781b-1e82-4818-a1c3-63d806ec15bb} (Msft Virtual Disk), role data\n");
        ck_assert_str_eq(capture(released, NULL, LOG_INFO),
                         "sdc: left alone, no longer a Hyper-V scsi disk 1:0:0:2 on controller {f8b3781b-1e82-4818-a1c3-63d806ec15bb} (Msft Virtual Disk), role data\n");
        ck_assert_str_eq(capture(unreadable, NULL, LOG_INFO), "sdq: cannot read its Hyper-V identity: Bad message\n");
        ck_assert_str_eq(capture(nvme_found, &nvme, LOG_INFO),
                         "nvme1n3: found Azure nvme-accelerator disk nsid 3 (data LUN 1), direct, "
                         "via hv_pci {7870a1b2-0c3d-4e5f-8a9b-0c1d2e3f4a5b}\n");
        ck_assert_str_eq(capture(nvme_released, &local, LOG_INFO),
                         "nvme0n1: left alone, no longer an Azure nvme-direct-v2 disk nsid 1 (local), "
                         "multipath head\n");
}
END_TEST

static void report_contested(const struct hvt_log *log, const void *arg) {
        hvt_report_contested(log, &disk, HVT_ATTR_TIMEOUT, "240", "300", 11, 120, *(const enum hvt_contest_policy *) arg,
                             HVT_CONTEST_YIELD == *(const enum hvt_contest_policy *) arg ? "WALinuxAgent (pid 812)" : "");
}

/* A contest names the key that decides it, the device group's as the queue's. */
START_TEST(test_contested_lines) {
        enum hvt_contest_policy p = HVT_CONTEST_YIELD;

        ck_assert_str_eq(capture(report_contested, &p, LOG_INFO),
                         "sdc device/timeout: set back to 240 11 times, each within 120 s of the last: another program "
                         "keeps writing it (suspect: WALinuxAgent (pid 812)); hvtuned yields: it leaves the attribute "
                         "to that program on this disk, and at stop puts the original back only where its own value "
                         "is still found (the default; contested.device.timeout = \"insist\" keeps it)\n");
        p = HVT_CONTEST_INSIST;
        ck_assert_str_eq(capture(report_contested, &p, LOG_INFO),
                         "sdc device/timeout: set back to 240 11 times, each within 120 s of the last: another program "
                         "keeps writing it (no suspect found); hvtuned insists: it goes on repairing, pausing while "
                         "the disk is past its repair budget (contested.device.timeout = \"insist\")\n");
        /* A warning: not hidden at the default level. */
        ck_assert_str_ne(capture(report_contested, &p, LOG_WARNING), "");
}
END_TEST

int main(void) {
        Suite *s = suite_create("report");
        TCase *tc = tcase_create("stderr");

        tcase_add_test(tc, test_result_lines);
        tcase_add_test(tc, test_kinds);
        tcase_add_test(tc, test_levels);
        tcase_add_test(tc, test_disk_lines);
        tcase_add_test(tc, test_contested_lines);
        suite_add_tcase(s, tc);
        return test_run(s);
}
