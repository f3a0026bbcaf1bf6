/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The real hvtuned binary in --once, --dry-run and --check-config modes on each generated
 * VM: exactly the Hyper-V disks change, exactly as configured, and nothing else does. */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "harness.h"
#include "writes.h"
#include "testutil.h"

#define ISSUE_CONFIG \
        "queue  = { scheduler = \"none\"; nr_requests = 128; read_ahead_kb = 4096; };\n" \
        "device = { queue_depth = 254; timeout = 300; };\n" \
        "override = (\n" \
        "  { match = { kind = \"ide\"; }; queue = { scheduler = \"mq-deadline\"; }; },\n" \
        "  { match = { controller = \"{f8b3781b-1e82-4818-a1c3-63d806ec15bb}\"; lun = 0; };\n" \
        "    device = { timeout = 180; }; }\n" \
        ");\n"

static int run_once(const char *config_text, const char *mode, char **err) {
        char *config = config_write(config_text);
        const char *args[] = { mode, "-c", config, NULL };
        int r = hvtuned_run(args, err);

        unlink(config);
        return r;
}

/* The runtime directory is shared: hvtuned touches only what it can prove its own. An
 * operator's file stays (mentioned once), and a FIFO under a disk's record name is a damaged
 * record, replaced, never an open that hangs. */
START_TEST(test_runtime_dir_not_only_hvtuned) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        g_autofree char *notes = g_build_filename(runtime_dir(), "notes.txt", NULL);
        g_autofree char *fifo = g_build_filename(runtime_dir(), "sda", NULL);
        struct stat st;
        char *err;

        ck_assert(g_file_set_contents(notes, "mine\n", -1, NULL));
        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        ck_assert_int_eq(run_once("queue = { scheduler = \"none\"; };\n", "--once", &err), 0);
        ck_assert(g_file_test(notes, G_FILE_TEST_IS_REGULAR));
        assert_contains(err, " holds 1 file hvtuned did not write: left alone\n");
        ck_assert_int_eq(lstat(fifo, &st), 0);
        ck_assert_msg(S_ISREG(st.st_mode), "the FIFO was not replaced by sda's record");
        assert_contains(err, "sda queue/scheduler: mq-deadline -> none (applied)\n");
        unlink(notes);
        unlink(fifo);
        g_object_unref(tb);
}
END_TEST

/* A runtime directory that refuses the record (read-only, full): the attribute is not
 * written, and the line says the record failed, not the attribute. */
START_TEST(test_record_refused_is_said) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *err;

        ck_assert_int_eq(setenv("HVTUNED_TEST_FAULTS", ".#hvtuned.sda.*=open-write:EROFS", 1), 0);
        ck_assert_int_eq(run_once("queue = { scheduler = \"none\"; };\n", "--once", &err), 2);
        unsetenv("HVTUNED_TEST_FAULTS");
        assert_contains(err, "sda queue/scheduler: mq-deadline -> none (not written: the record of its original "
                             "failed: Read-only file system)\n");
        ck_assert_str_eq(testbed_value("sda", "queue/scheduler"), "mq-deadline");
        assert_contains(err, "sdc queue/scheduler: bfq -> none (applied)\n");
        g_object_unref(tb);
}
END_TEST

/* --once with a deadline: a hang fails the test rather than holding it, and is killed. */
static int once_within(const char *config_text, char **err) {
        char *config = config_write(config_text);
        const char *args[] = { "--once", "-c", config, NULL };
        g_autofree char *err_path = g_strdup_printf("/tmp/hvtuned-once-err.%d", (int) getpid());
        int timeout_ms = hvtuned_under_valgrind() ? 90000 : 20000;
        pid_t pid = hvtuned_spawn_out(args, err_path, err_path);
        int status = hvtuned_wait_exit(pid, timeout_ms);

        if (status == -1) {
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
        }
        ck_assert_msg(status != -1, "hvtuned --once still ran after %d ms", timeout_ms);
        ck_assert(g_file_get_contents(err_path, err, NULL, NULL));
        hv_keep(*err);
        unlink(err_path);
        unlink(config);
        ck_assert(WIFEXITED(status));
        return WEXITSTATUS(status);
}

/* A record's temporary is a file hvtuned creates itself, never one it finds: a FIFO at an
 * older version's fixed name (.#sda) blocked --once in its open for good, and a hard link
 * there had the file it names elsewhere overwritten with sda's record. A FIFO under a name
 * of hvtuned's own pattern is a leftover, pruned without being opened. */
START_TEST(test_planted_temporaries) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        g_autofree char *fifo = g_build_filename(runtime_dir(), ".#sda", NULL);
        g_autofree char *ours = g_build_filename(runtime_dir(), ".#hvtuned.sdc.0123456789abcdef", NULL);
        g_autofree char *record = g_build_filename(runtime_dir(), "sda", NULL);
        char victim[] = "/tmp/hvtuned-victim.XXXXXX", *err, *text;
        struct stat st;
        int fd;

        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        ck_assert_int_eq(mkfifo(ours, 0600), 0);
        ck_assert_int_eq(once_within("queue = { scheduler = \"none\"; };\n", &err), 0);
        assert_contains(err, "sda queue/scheduler: mq-deadline -> none (applied)\n");
        assert_contains(err, "sdc queue/scheduler: bfq -> none (applied)\n");
        ck_assert(g_file_test(record, G_FILE_TEST_IS_REGULAR));
        ck_assert(g_file_get_contents(record, &text, NULL, NULL));
        assert_contains(hv_keep(text), "queue/scheduler=mq-deadline\n");
        ck_assert_int_lt(lstat(ours, &st), 0);
        ck_assert_int_eq(lstat(fifo, &st), 0);  /* not hvtuned's to prune: an editor's, for all it knows */
        ck_assert(S_ISFIFO(st.st_mode));

        /* sda written again, with a hard link at .#sda to a file outside the directory. */
        ck_assert_int_eq(unlink(fifo), 0);
        ck_assert_int_eq(unlink(record), 0);
        umockdev_testbed_set_attribute(tb, testbed_syspath("sda"), "queue/scheduler", "none [mq-deadline] kyber bfq \n");
        fd = mkstemp(victim);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, "precious\n", 9), 9);
        ck_assert_int_eq(close(fd), 0);
        ck_assert_int_eq(link(victim, fifo), 0);
        ck_assert_int_eq(once_within("queue = { scheduler = \"none\"; };\n", &err), 0);
        assert_contains(err, "sda queue/scheduler: mq-deadline -> none (applied)\n");
        ck_assert(g_file_get_contents(victim, &text, NULL, NULL));
        ck_assert_str_eq(hv_keep(text), "precious\n");
        ck_assert(g_file_test(record, G_FILE_TEST_IS_REGULAR));
        unlink(victim);
        g_object_unref(tb);
}
END_TEST

/* A runtime directory someone else could plant a record in is refused: a planted record made
 * SIGTERM "restore" read_ahead_kb to 0. Reached through a link, another user's, writable by
 * group or others: said, and the disks are tuned without records, as when the directory is
 * read-only. The lock is still taken there: a --once beside the service must not take the
 * service's values for originals. */
static const struct {
        const char *why;
} refused_dirs[] = {
        { "it is a symbolic link" },
        { "it is owned by uid 65534, neither root's nor ours, and writable by group or others (mode 0777)" },
        { "it is writable by group or others (mode 0775)" },
        { "it is owned by uid 65534, neither root's nor ours" },
};

START_TEST(test_runtime_dir_refused) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char base[] = "/tmp/hvtuned-refused.XXXXXX", *err;
        g_autofree char *dir = NULL, *path = NULL, *want = NULL, *clean = NULL;
        const char *config = "queue = { scheduler = \"none\"; };\n";
        GDir *entries;
        int lock;

        ck_assert_ptr_nonnull(mkdtemp(base));
        dir = g_build_filename(base, "run", NULL);
        ck_assert_int_eq(mkdir(dir, 0755), 0);
        path = g_strdup(dir);
        switch (_i) {
        case 0:
                g_free(path);
                path = g_build_filename(base, "link", NULL);
                ck_assert_int_eq(symlink(dir, path), 0);
                break;
        case 1:
                ck_assert_int_eq(chown(dir, 65534, 65534), 0);
                ck_assert_int_eq(chmod(dir, 0777), 0);
                break;
        case 2:
                ck_assert_int_eq(chmod(dir, 0775), 0);
                break;
        case 3:
                ck_assert_int_eq(chown(dir, 65534, 65534), 0);
                break;
        }
        runtime_dir_use(path);

        lock = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(lock, 0);
        ck_assert_int_eq(flock(lock, LOCK_EX | LOCK_NB), 0);
        ck_assert_int_eq(run_once(config, "--once", &err), 1);
        /* Named as --restore names it: here the holder is this test. */
        want = g_strdup_printf("hvtuned (pid %d) is running (it holds %s): reload it", (int) getpid(), path);
        assert_contains(err, want);
        ck_assert_str_eq(testbed_value("sda", "queue/scheduler"), "mq-deadline");
        ck_assert_int_eq(close(lock), 0);

        ck_assert_int_eq(run_once(config, "--once", &err), 0);
        g_free(want);
        want = g_strdup_printf("%s: refused for the records of original values, %s: they are kept in memory "
                               "only, and a restart forgets them\n", path, refused_dirs[_i].why);
        assert_contains(err, want);
        assert_contains(err, "sda queue/scheduler: mq-deadline -> none (applied)\n");
        ck_assert_str_eq(testbed_value("sda", "queue/scheduler"), "none");
        ck_assert_str_eq(testbed_value("sdc", "queue/scheduler"), "none");
        entries = g_dir_open(dir, 0, NULL);
        ck_assert_ptr_nonnull(entries);
        ck_assert_msg(!g_dir_read_name(entries), "hvtuned wrote into %s", dir);
        g_dir_close(entries);

        runtime_dir_use(NULL);
        clean = g_strdup_printf("rm -rf '%s'", base);
        ck_assert_int_eq(system(clean), 0);
        g_object_unref(tb);
}
END_TEST

START_TEST(test_azure_scheduler_only) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        GHashTable *before = snapshot_take();
        char *err, *diff;

        ck_assert_int_eq(run_once("queue = { scheduler = \"none\"; };\n", "--once", &err), 0);
        diff = snapshot_diff(before, snapshot_take());
        /* sdb and sdd already had none: not written. The USB stick, virtio, NVMe, loop, dm
         * and md disks are not Hyper-V disks: not touched. The kernel itself resets the
         * nr_requests of a disk whose scheduler changes. */
        ck_assert_str_eq(diff, "sda/queue/nr_requests\nsda/queue/scheduler\nsdc/queue/nr_requests\nsdc/queue/scheduler");
        ck_assert_str_eq(testbed_value("sda", "queue/scheduler"), "none");
        ck_assert_str_eq(testbed_value("sdc", "queue/scheduler"), "none");
        assert_contains(err, "sda queue/scheduler: mq-deadline -> none (applied)\n");
        assert_contains(err, "sdc queue/scheduler: bfq -> none (applied)\n");
        /* What did not change is not said: -v says it (test_unchanged_with_verbose). */
        ck_assert_ptr_null(strstr(err, "(unchanged)"));
        assert_contains(err, "sda: found Hyper-V scsi disk 0:0:0:0 on controller {f8b3781a-1e82-4818-a1c3-63d806ec15bb} (Msft Virtual Disk), role os\n");
        assert_contains(err, "4 storvsc disks on 2 controllers: 4 tuned, 0 failed" AZURE_HWQ "\n");
        ck_assert_ptr_null(strstr(err, "sde"));
        ck_assert_ptr_null(strstr(err, "vda"));
        g_object_unref(tb);
}
END_TEST

START_TEST(test_azure_issue_config) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        GHashTable *before = snapshot_take();
        char *err, *diff;

        ck_assert_int_eq(run_once(ISSUE_CONFIG, "--once", &err), 0);
        diff = snapshot_diff(before, snapshot_take());
        /* nr_requests and queue_depth differ everywhere; sdc (controller f8b3781b, LUN 0)
         * keeps its timeout of 180, which the override asks for; a timeout written is
         * io_timeout too, one rq_timeout (tests/kernel/kernel-answers.h). */
        ck_assert_str_eq(diff,
                "0:0:0:0/queue_depth\n0:0:0:0/timeout\n"
                "0:0:0:1/queue_depth\n0:0:0:1/timeout\n"
                "1:0:0:0/queue_depth\n"
                "1:0:0:1/queue_depth\n1:0:0:1/timeout\n"
                "sda/queue/io_timeout\nsda/queue/nr_requests\nsda/queue/read_ahead_kb\nsda/queue/scheduler\n"
                "sdb/queue/io_timeout\nsdb/queue/nr_requests\nsdb/queue/read_ahead_kb\n"
                "sdc/queue/nr_requests\nsdc/queue/read_ahead_kb\nsdc/queue/scheduler\n"
                "sdd/queue/io_timeout\nsdd/queue/nr_requests\nsdd/queue/read_ahead_kb");
        ck_assert_str_eq(testbed_value("sdd", "queue/io_timeout"), "300000");
        assert_contains(err, "sdd queue/io_timeout: 180000 -> 300000 (knock-on: changed by the write of "
                        "device/timeout; the original goes back with it)\n");
        ck_assert_str_eq(testbed_read("sdc", "device/timeout"), "180\n");
        ck_assert_str_eq(testbed_read("sdd", "device/timeout"), "300\n");
        ck_assert_str_eq(testbed_value("sdb", "queue/nr_requests"), "128");
        ck_assert_str_eq(testbed_read("sda", "device/queue_depth"), "254");
        ck_assert_ptr_null(strstr(err, "sdc device/timeout"));
        assert_contains(err, "sdd device/timeout: 180 -> 300 (applied)\n");
        g_object_unref(tb);
}
END_TEST

START_TEST(test_dry_run) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        GHashTable *before = snapshot_take();
        char *err;

        ck_assert_int_eq(run_once(ISSUE_CONFIG, "--dry-run", &err), 0);
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()), "");
        assert_contains(err, "sda queue/scheduler: mq-deadline -> none (would apply)\n");
        assert_contains(err, "sdd device/timeout: 180 -> 300 (would apply)\n");
        assert_contains(err, "4 storvsc disks on 2 controllers: 4 would change, 0 failed" AZURE_HWQ " (dry run, nothing written)\n");
        g_object_unref(tb);
}
END_TEST

START_TEST(test_gen1_ide_override) {
        UMockdevTestbed *tb = testbed_load("gen1");
        GHashTable *before = snapshot_take();
        char *err;

        ck_assert_int_eq(run_once("queue = { scheduler = \"none\"; };\n"
                                  "override = ( { match = { kind = \"ide\"; }; queue = { scheduler = \"mq-deadline\"; }; } );\n",
                                  "--once", &err), 0);
        /* The IDE disks (sda, sdb) keep mq-deadline; the SCSI data disk sdd loses bfq, and
         * the kernel resets its nr_requests. */
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()), "sdd/queue/nr_requests\nsdd/queue/scheduler");
        ck_assert_ptr_null(strstr(err, "sda queue/scheduler"));
        assert_contains(err, "sdb: found Hyper-V ide disk 1:0:1:0 on controller {00000000-0001-8899-0000-000000000000}");
        assert_contains(err, "sdd queue/scheduler: bfq -> none (applied)\n");
        assert_contains(err, "4 storvsc disks on 3 controllers: 4 tuned, 0 failed" GEN1_HWQ "\n");
        g_object_unref(tb);
}
END_TEST

START_TEST(test_wsl2_old_kernel) {
        UMockdevTestbed *tb = testbed_load("wsl2");
        GHashTable *before = snapshot_take();
        char *err;

        ck_assert_int_eq(run_once("queue = { scheduler = \"none\"; wbt_lat_usec = 0; };\n", "--once", &err), 0);
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()), "sdc/queue/nr_requests\nsdc/queue/scheduler");
        assert_contains(err, "sdc queue/scheduler: mq-deadline -> none (applied)\n");
        /* WSL kernels have no writeback throttling: reported, not failed. */
        assert_contains(err, "sda queue/wbt_lat_usec: 0 (unsupported: no such attribute on this kernel)\n");
        assert_contains(err, "4 storvsc disks on 1 controller: 4 tuned, 0 failed, 4 settings unsupported" WSL_HWQ "\n");
        g_object_unref(tb);
}
END_TEST

/* The read-ahead ceiling of the platform defaults is every managed disk's, not Azure's alone
 * (README, hvtuned.conf(5)): the storvsc disks of WSL2 and of Hyper-V (Gen1: an IDE disk and
 * one on a SCSI controller no Azure rule names) come down from 4096 to 128, and one someone set
 * lower keeps its value. Nothing else is written. */
static const struct {
        const char *profile, *high, *low;
} ceiling_beds[] = {
        { "wsl2", "sdc", "sdd" },
        { "gen1", "sda", "sdc" },
};

START_TEST(test_read_ahead_ceiling_not_azure_only) {
        UMockdevTestbed *tb = testbed_load(ceiling_beds[_i].profile);
        const char *high = ceiling_beds[_i].high, *low = ceiling_beds[_i].low;
        g_autofree char *diff = g_strdup_printf("%s/queue/read_ahead_kb", high);
        g_autofree char *applied = g_strdup_printf("%s queue/read_ahead_kb: 4096 -> 128 (applied)\n", high);
        /* What the disk keeps under the ceiling, not the ceiling: not written, not said. */
        g_autofree char *kept = g_strdup_printf("%s queue/read_ahead_kb", low);
        GHashTable *before;
        char *err;

        testbed_drift(tb, high, "queue/read_ahead_kb", "4096\n");
        testbed_drift(tb, low, "queue/read_ahead_kb", "64\n");
        before = snapshot_take();
        ck_assert_int_eq(run_once("platform_defaults = true;\n", "--once", &err), 0);
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()), diff);
        ck_assert_str_eq(testbed_value(high, "queue/read_ahead_kb"), "128");
        ck_assert_str_eq(testbed_value(low, "queue/read_ahead_kb"), "64");
        assert_contains(err, applied);
        ck_assert_ptr_null(strstr(err, kept));
        g_object_unref(tb);
}
END_TEST

START_TEST(test_legacy_noop) {
        UMockdevTestbed *tb = testbed_load("legacy");
        char *err;

        ck_assert_int_eq(run_once("queue = { scheduler = \"none\"; };\n", "--once", &err), 0);
        ck_assert_str_eq(testbed_value("sda", "queue/scheduler"), "noop");
        assert_contains(err, "sda queue/scheduler: deadline -> noop (applied)\n");
        /* Before 5.10 no SCSI host reports nr_hw_queues: said once, not a warning a host. */
        ck_assert_ptr_null(strstr(err, "cannot read its storvsc queue figures"));
        assert_contains(err, "This kernel does not report the hw queues of a SCSI host");
        ck_assert_ptr_eq(strstr(strstr(err, "This kernel does not report") + 1, "This kernel does not report"), NULL);
        g_object_unref(tb);
}
END_TEST

START_TEST(test_unsupported_scheduler) {
        UMockdevTestbed *tb = testbed_load("wsl2");
        GHashTable *before = snapshot_take();
        char *err;

        ck_assert_int_eq(run_once("queue = { scheduler = \"bfq\"; };\n", "--once", &err), 0);
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()), "");
        assert_contains(err, "sda queue/scheduler: none -> bfq (unsupported: the disk offers mq-deadline kyber none)\n");
        g_object_unref(tb);
}
END_TEST

/* A value over a bound the kernel states: --dry-run says it would be refused and names the
 * bound, under the scheduler the write would be made under, and a refused write names it
 * too (the tag depth is the SCSI host's can_queue, 2534 at 32 vCPUs, as mq/0/nr_tags shows). */
START_TEST(test_bounds_named) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        GHashTable *before = snapshot_take();
        char *err;

        ck_assert_int_eq(run_once("queue = { scheduler = \"none\"; nr_requests = 4000; max_sectors_kb = 4096; };\n",
                                  "--dry-run", &err), 0);
        assert_contains(err, "sdb queue/nr_requests: 2534 -> 4000 (would be refused: over the tag depth 2534)\n");
        /* sda would be switched to none first: its bound is the tag depth, not its scheduler's */
        assert_contains(err, "sda queue/nr_requests: 256 -> 4000 (would be refused: over the tag depth 2534)\n");
        assert_contains(err, "sdb queue/max_sectors_kb: 1280 -> 4096 (would be refused, or clamped from 6.10: over "
                             "queue/max_hw_sectors_kb 2048)\n");
        ck_assert_ptr_null(strstr(err, "-> 4000 (would apply)"));
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()), "");
        {
                /* The refused line is a line of the plan, on stdout with the others; the warning
                 * is stderr's. */
                char *config = config_write("queue = { scheduler = \"none\"; nr_requests = 4000; };\n"), *out;
                const char *const dry[] = { "--dry-run", "-c", config, NULL };

                ck_assert_int_eq(hvtuned_run_out(dry, &out, &err), 0);
                assert_contains(out, "sdb queue/nr_requests: 2534 -> 4000 (would be refused: over the tag depth 2534)\n");
                ck_assert_ptr_null(strstr(err, "(would be refused"));
                assert_contains(err, "sdb queue/nr_requests: 4000 is over a bound the kernel states (over the tag "
                                "depth 2534): the kernel would refuse it\n");
                ck_assert_ptr_null(strstr(out, "is over a bound"));
                unlink(config);
        }

        ck_assert_int_eq(run_once("queue = { scheduler = \"mq-deadline\"; nr_requests = 3000; };\n", "--dry-run", &err), 0);
        assert_contains(err, "sdb queue/nr_requests: 2534 -> 3000 (would be refused: over the 2048 a scheduler takes)\n");

        ck_assert_int_eq(run_once("queue = { scheduler = \"none\"; nr_requests = 4000; };\n", "--once", &err), 2);
        assert_contains(err, "sdb queue/nr_requests: 2534 -> 4000 (failed: Invalid argument: over the tag depth 2534)\n");
        g_object_unref(tb);
}
END_TEST

START_TEST(test_failure_exit_code) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *sdb = testbed_syspath("sdb"), *err;
        GHashTable *before;

        /* One disk's attribute reads back as nonsense: that attribute fails, the rest of that
         * disk and every other disk are still tuned, and --once says so with exit code 2. */
        umockdev_testbed_set_attribute(tb, sdb, "queue/nr_requests", "many\n");
        before = snapshot_take();
        ck_assert_int_eq(run_once("queue = { scheduler = \"none\"; nr_requests = 64; };\n", "--once", &err), 2);
        assert_contains(err, "sdb queue/nr_requests: many -> 64 (failed: Bad message)\n");
        assert_contains(err, "4 storvsc disks on 2 controllers: 3 tuned, 1 failed" AZURE_HWQ "\n");
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()),
                         "sda/queue/nr_requests\nsda/queue/scheduler\n"
                         "sdc/queue/nr_requests\nsdc/queue/scheduler\n"
                         "sdd/queue/nr_requests");
        g_object_unref(tb);
}
END_TEST

static const struct {
        const char *text;
        const char *error;  /* what stderr must say, after the file name */
} bad_configs[] = {
        { "queue = { scheduler = \"none\"; };\nqueue = { };\n", ":2: duplicate setting name" },
        { "queue = {\n  scheduler = \"none\";\n  nr_requests = 99999;\n};\n", ":3: queue.nr_requests: 99999 is out of range" },
        { "device = { timeout = \"300\"; };\n", ":1: device.timeout: expected an integer, got a string" },
        { "queue = { scheduler = \"none; rm\"; };\n", ":1: queue.scheduler: \"none; rm\" is not a scheduler name" },
        { "queue = { scheduler = \"none\"; }\noverride = ( { match = { kind = \"usb\"; }; queue = { nomerges = 1; }; } );\n",
          ":2: override[0].match.kind: \"usb\" is not a controller kind" },
        { "queue = { scheduler = \"none\" ;; };\n", ":1: " },
        /* Nothing that could end a sysfs token, start a second one or name a path gets through. */
        { "queue = { scheduler = \"none\\n\"; };\n", ":1: queue.scheduler: \"none\\n\" is not a scheduler name" },
        { "queue = { scheduler = \"none\\t\"; };\n", ":1: queue.scheduler: \"none\\t\" is not a scheduler name" },
        { "queue = { scheduler = \"none mq-deadline\"; };\n", ":1: queue.scheduler: \"none mq-deadline\" is not a scheduler name" },
        { "queue = { scheduler = \"../../x\"; };\n", ":1: queue.scheduler: \"../../x\" is not a scheduler name" },
        { "queue = { scheduler = \"\"; };\n", ":1: queue.scheduler: \"\" is not a scheduler name" },
        { "queue = { nr_requests = \"64\\n\"; };\n", ":1: queue.nr_requests: expected an integer, got a string" },
        /* A match key's string is the file's text: shown escaped, an ESC or BEL never raw. */
        { "override = ( { match = { vendor = \"\\x1b[2J\\x07Microsoft\"; }; queue = { nomerges = 1; }; } );\n",
          ":1: override[0].match.vendor: \"\\x1b[2J\\x07Microsoft\" is longer than the SCSI field (8 characters)" },
        { "override = ( { match = { model = \"Virtual\\x0dDisk, really long\"; }; queue = { nomerges = 1; }; } );\n",
          ":1: override[0].match.model: \"Virtual\\x0dDisk, really long\" is longer than the SCSI field (16 characters)" },
};

START_TEST(test_bad_config_changes_nothing) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        GHashTable *before = snapshot_take();
        char *config = config_write(bad_configs[_i].text), *err, *expect;
        const char *once[] = { "--once", "-c", config, NULL };
        const char *check[] = { "--check-config", "-c", config, NULL };

        expect = g_strconcat(config, bad_configs[_i].error, NULL);
        ck_assert_int_eq(hvtuned_run(once, &err), 1);
        assert_contains(err, expect);
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()), "");
        ck_assert_int_eq(hvtuned_run(check, &err), 1);
        assert_contains(err, expect);
        g_free(expect);
        unlink(config);
        g_object_unref(tb);
}
END_TEST

START_TEST(test_cli) {
        const char *help[] = { "--help", NULL }, *version[] = { "--version", NULL };
        const char *bad[] = { "--frobnicate", NULL }, *extra[] = { "--once", "sda", NULL };
        const char *hostile[] = { "--once", "sd\x1b[2J\nfake line", NULL };
        char *config = config_write("queue = { scheduler = \"none\"; };\n"), *out, *err;
        const char *verbose[] = { "-v", "--once", "-c", config, NULL };
        UMockdevTestbed *tb;

        ck_assert_int_eq(hvtuned_run_out(help, &out, &err), 0);
        ck_assert_str_eq(err, "");
        assert_contains(out, "Usage: hvtuned [OPTIONS]\n");
        assert_contains(out, "--check-config");
        assert_contains(out, "(default /etc/hvtuned.conf)");
        ck_assert_int_eq(hvtuned_run_out(version, &out, &err), 0);
        ck_assert_str_eq(err, "");
        ck_assert_ptr_eq(strstr(out, "hvtuned "), out);
        ck_assert_int_eq(hvtuned_run(bad, &err), 1);
        assert_contains(err, "frobnicate");
        ck_assert_int_eq(hvtuned_run(extra, &err), 1);
        assert_contains(err, "unexpected argument 'sda'");
        /* What was typed is shown escaped, like any text hvtuned does not control. */
        ck_assert_int_eq(hvtuned_run(hostile, &err), 1);
        assert_contains(err, "unexpected argument 'sd\\x1b[2J\\nfake line'");

        /* -v adds debug lines, such as where the configuration came from. */
        tb = testbed_load("legacy");
        ck_assert_int_eq(hvtuned_run(verbose, &err), 0);
        assert_contains(err, "Loaded configuration from ");
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* And the effective settings, on stdout, each with the line it comes from (no built-in one:
 * the harness's file says platform_defaults = false). */
START_TEST(test_check_config_good) {
        char *config = config_write(ISSUE_CONFIG), *err, *out, *want;
        const char *check[] = { "--check-config", "-c", config, NULL };
        const char *missing[] = { "--check-config", "-c", "/nonexistent.conf", NULL };
        g_autofree char *nr = g_strdup_printf("queue.nr_requests = 128;                    # %s:1\n", config);
        g_autofree char *ide = g_strdup_printf("override.match = { kind = \"ide\"; };         # %s:4\n"
                                               "        queue.scheduler = \"mq-deadline\";    # %s:4\n", config, config);
        g_autofree char *off = g_strdup_printf("platform_defaults = false;                  # %s:9\n", config);

        ck_assert_int_eq(hvtuned_run_out(check, &out, &err), 0);
        assert_contains(out, "valid");
        assert_contains(out, nr);
        assert_contains(out, ide);
        assert_contains(out, off);
        ck_assert_ptr_null(strstr(out, "built-in"));
        ck_assert_int_eq(hvtuned_run(missing, &err), 1);
        assert_contains(err, "/nonexistent.conf: cannot read: No such file or directory");
        ck_assert_ptr_null(strstr(err, "a scheduler takes"));
        unlink(config);

        /* Valid, with the bound any kernel puts on the value said, and where it is: what a
         * disk's tag depth bounds is --dry-run's to say. */
        config = config_write("queue = { scheduler = \"mq-deadline\"; nr_requests = 4000; };\n"
                              "override = ( { match = { role = \"data\"; }; queue = { scheduler = \"none\"; }; } );\n");
        check[2] = config;
        ck_assert_int_eq(hvtuned_run(check, &err), 0);
        want = g_strdup_printf("%s:1: queue.nr_requests = 4000 is over the 2048 a scheduler takes: the kernel "
                               "refuses it under mq-deadline\n", config);
        assert_contains(err, want);
        g_free(want);
        ck_assert_ptr_null(strstr(err, "override[0]"));
        assert_contains(err, "valid");
        unlink(config);
        /* An override's names its file and line, and its index in that file, as an error does. */
        config = config_write("override = ( { match = { role = \"os\"; }; queue = { nomerges = 1; }; },\n"
                              "  { match = { role = \"data\"; };\n"
                              "    queue = { scheduler = \"bfq\"; nr_requests = 3000; }; } );\n");
        check[2] = config;
        ck_assert_int_eq(hvtuned_run(check, &err), 0);
        want = g_strdup_printf("%s:3: override[1].queue.nr_requests = 3000 is over the 2048 a scheduler takes: "
                               "the kernel refuses it under bfq\n", config);
        assert_contains(err, want);
        g_free(want);
        unlink(config);
        config = config_write("queue = { nr_requests = 4000; };\n");
        check[2] = config;
        ck_assert_int_eq(hvtuned_run(check, &err), 0);
        assert_contains(err, "queue.nr_requests = 4000 is over the 2048 a scheduler takes: the kernel refuses it on "
                             "a disk with a scheduler, and with none where the disk's tag depth is lower, which "
                             "`hvtuned --dry-run` reads\n");
        unlink(config);
}
END_TEST

/* StrictModes: a file others could write steers nothing, and the message says what to fix. */
START_TEST(test_untrusted_config) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        GHashTable *before = snapshot_take();
        char *config = config_write(ISSUE_CONFIG), *err, *expect;
        const char *once[] = { "--once", "-c", config, NULL };
        const char *check[] = { "--check-config", "-c", config, NULL };

        ck_assert_int_eq(chmod(config, 0666), 0);
        expect = g_strconcat(config, ": refused, writable by group or others (mode 0666)", NULL);
        ck_assert_int_eq(hvtuned_run(check, &err), 1);
        assert_contains(err, expect);
        ck_assert_int_eq(hvtuned_run(once, &err), 1);
        assert_contains(err, expect);
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()), "");
        g_free(expect);
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* Every hvtuned the harness runs has its writes checked against the allowlist when it ends;
 * this shows the check sees them, and refuses what it should. */
/* A log line with @R, @Q and @L for the runtime directory, a queue/ and a LUN directory. */
/* Not g_string_replace(): that is glib 2.68's, and Debian 11 has 2.66. Takes s. */
static char *replace_all(char *s, const char *from, const char *to) {
        char **parts = g_strsplit(s, from, -1);
        char *r = g_strjoinv(to, parts);

        g_strfreev(parts);
        g_free(s);
        return r;
}

static char *log_of(const char *text, const char *rt) {
        char *s = g_strdup(text);

        s = replace_all(s, "@R", rt);
        s = replace_all(s, "@Q", "/sys/devices/v/host0/target0:0:0/0:0:0:0/block/sda/queue");
        return replace_all(s, "@L", "/sys/devices/v/host0/target0:0:0/0:0:0:0");
}

/* Every hvtuned the harness runs has its writes checked against the allowlist when it ends;
 * this shows the check sees them, and refuses what it should. */
START_TEST(test_writes_allowlisted) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *config = config_write(ISSUE_CONFIG), *err, *why;
        const char *once[] = { "--once", "-c", config, NULL };
        const char *rt = runtime_dir();
        static const struct {
                const char *log;
                const char *why;
        } bad[] = {
                { "open @R/../sda\n", "neither an allowlisted attribute nor a record" },
                { "open /etc/passwd\n", "neither an allowlisted attribute nor a record" },
                { "open @Q/queue_depth\n", "neither an allowlisted attribute" },  /* a device name in queue/ */
                { "open @L/scheduler\n", "neither an allowlisted attribute" },    /* a queue name in the LUN */
                { "open @Q/scheduler\nwrite @Q/scheduler none\\x0a\n", "not a plain token" },
                { "open @Q/scheduler\nwrite @Q/scheduler none\nwrite @Q/scheduler none\n", "a second write" },
                { "rename @R/.#hvtuned.sda.0123456789abcdef /tmp/sda\n", "not a record's temporary into place" },
                /* A record is written only as a temporary hvtuned made: never in place, never
                 * through an older version's fixed temporary (a FIFO or a link planted there). */
                { "open @R/sda\n", "nor a record's temporary" },
                { "open @R/.#sda\nwrite @R/.#sda x\n", "nor a record's temporary" },
                { "rename @R/.#sda @R/sda\n", "not a record's temporary into place" },
                { "rename @R/sdb @R/sda\n", "not a record's temporary into place" },
                { "unlink /sys/devices/v/host0\n", "neither" },
        };
        g_autofree char *good = log_of("open @R/.#hvtuned.sda.0123456789abcdef\nwrite @R/.#hvtuned.sda.0123456789abcdef x\n"
                                       "rename @R/.#hvtuned.sda.0123456789abcdef @R/sda\nunlink @R/.#hvtuned.sdb.0123456789abcdef\n"
                                       "open @Q/nr_requests\nwrite @Q/nr_requests 128\n"
                                       "open @L/timeout\nwrite @L/timeout 300\nunlink @R/sda\n", rt);

        ck_assert_int_eq(hvtuned_run(once, &err), 0);
        /* 4 disks: scheduler where it differs, nr_requests, timeout, the module parameter. */
        ck_assert_uint_ge(writes_checked(), 10);

        for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
                g_autofree char *log = log_of(bad[i].log, rt);

                ck_assert_int_eq(writes_verify(log, rt, &why), -1);
                assert_contains(why, bad[i].why);
                g_free(why);
        }
        ck_assert_int_eq(writes_verify(good, rt, &why), 2);
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* A command's report on stdout, its diagnostics on stderr, as coreutils and systemctl do
 * (log.c): `hvtuned --dry-run | less` shows the plan, `hvtuned --once >/dev/null` still shows
 * what went wrong, `hvtuned --check-config` says "valid" on stdout and a refusal on stderr. */
START_TEST(test_streams) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        GHashTable *before = snapshot_take();
        char *config = config_write("queue = { scheduler = \"none\"; };\n"), *out, *err, *want;
        const char *dry[] = { "--dry-run", "-c", config, NULL }, *once[] = { "--once", "-c", config, NULL };
        const char *check[] = { "--check-config", "-c", config, NULL };
        int lock;

        /* The plan, the disks found and the summary; nothing went wrong: nothing on stderr. */
        ck_assert_int_eq(hvtuned_run_out(dry, &out, &err), 0);
        ck_assert_str_eq(err, "");
        assert_contains(out, "sda: found Hyper-V scsi disk 0:0:0:0 on controller ");
        assert_contains(out, "sda queue/scheduler: mq-deadline -> none (would apply)\n");
        assert_contains(out, "sdc queue/scheduler: bfq -> none (would apply)\n");
        assert_contains(out, " would change, 0 failed" AZURE_HWQ " (dry run, nothing written)\n");
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()), "");
        /* Run by a unit (ExecStartPre=, a oneshot), stdout and stderr are journald's one stream:
         * each line, stdout's too, carries its priority. */
        hvtuned_log_to_journal(true);
        ck_assert_int_eq(hvtuned_run(dry, &err), 0);
        hvtuned_log_to_journal(false);
        assert_contains(err, "\n<6>sda queue/scheduler: mq-deadline -> none (would apply)\n");

        /* The verdict on stdout; a refused file on stderr, and nothing on stdout. */
        ck_assert_int_eq(hvtuned_run_out(check, &out, &err), 0);
        ck_assert_str_eq(err, "");
        /* The verdict first, then the listing of what is in effect (layers' own test). */
        want = hv_keep(g_strconcat(config, ": valid\n", NULL));
        ck_assert_ptr_eq(strstr(out, want), out);
        ck_assert_int_eq(chmod(config, 0666), 0);
        ck_assert_int_eq(hvtuned_run_out(check, &out, &err), 1);
        ck_assert_str_eq(out, "");
        assert_contains(err, hv_keep(g_strconcat(config, ": refused, writable by group or others", NULL)));
        ck_assert_int_eq(chmod(config, 0644), 0);

        /* A refusal (a daemon, here this test, holds the runtime directory) names its pid, on
         * stderr, as --restore's does. */
        lock = open(runtime_dir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(lock, 0);
        ck_assert_int_eq(flock(lock, LOCK_EX | LOCK_NB), 0);
        ck_assert_int_eq(hvtuned_run_out(once, &out, &err), 1);
        ck_assert_str_eq(out, "");
        assert_contains(err, hv_keep(g_strdup_printf("hvtuned (pid %d) is running (it holds %s): reload it "
                                                     "(systemctl reload hvtuned) instead\n", (int) getpid(),
                                                     runtime_dir())));
        ck_assert_int_eq(hvtuned_run_out((const char *const[]) { "--restore", NULL }, &out, &err), 1);
        ck_assert_str_eq(out, "");
        assert_contains(err, hv_keep(g_strdup_printf("hvtuned (pid %d) is running: `systemctl stop hvtuned`",
                                                     (int) getpid())));
        ck_assert_int_eq(close(lock), 0);
        ck_assert_str_eq(snapshot_diff(before, snapshot_take()), "");

        /* A write that fails: its line on stderr alone; what was applied, and the summary that
         * counts the failure, on stdout. */
        ck_assert_int_eq(setenv("HVTUNED_TEST_FAULTS", "sdc/queue/scheduler=open-write:EACCES", 1), 0);
        ck_assert_int_eq(hvtuned_run_out(once, &out, &err), 2);
        unsetenv("HVTUNED_TEST_FAULTS");
        assert_contains(err, "sdc queue/scheduler: bfq -> none (failed: Permission denied)\n");
        ck_assert_ptr_null(strstr(out, "sdc queue/scheduler"));
        assert_contains(out, "sda queue/scheduler: mq-deadline -> none (applied)\n");
        assert_contains(out, ": 3 tuned, 1 failed");
        ck_assert_ptr_null(strstr(err, "(applied)"));
        unlink(config);
        g_object_unref(tb);
}
END_TEST

/* --once says what it changed or could not; -v adds the attributes it found as wanted, on
 * stdout too (-v's debug lines are stderr's). The summary counts every disk either way. */
START_TEST(test_unchanged_only_with_verbose) {
        UMockdevTestbed *tb = testbed_load("azure-gen2");
        char *config = config_write("queue = { scheduler = \"none\"; };\n"), *out, *err;
        const char *once[] = { "--once", "-c", config, NULL }, *verbose[] = { "--once", "-v", "-c", config, NULL };

        ck_assert_int_eq(hvtuned_run_out(verbose, &out, &err), 0);
        assert_contains(out, "sdb queue/scheduler: none (unchanged)\n");
        assert_contains(out, "sda queue/scheduler: mq-deadline -> none (applied)\n");
        ck_assert_ptr_null(strstr(err, "(unchanged)"));
        assert_contains(err, "Loaded configuration from ");
        /* Now every attribute is as wanted: not one line about them, and the same summary. */
        ck_assert_int_eq(hvtuned_run_out(once, &out, &err), 0);
        ck_assert_str_eq(err, "");
        ck_assert_ptr_null(strstr(out, " queue/"));
        ck_assert_ptr_null(strstr(out, "storvsc_max_hw_queues:"));
        assert_contains(out, "4 storvsc disks on 2 controllers: 4 tuned, 0 failed" AZURE_HWQ "\n");
        /* --status writes its report itself: what its pass logs with -v is stderr's, never in
         * the JSON (its exit status is --status's tests'). */
        (void) hvtuned_run_out((const char *const[]) { "--status", "--json", "-v", "-c", config, NULL }, &out, &err);
        ck_assert_ptr_eq(strstr(out, "{"), out);
        ck_assert_ptr_null(strstr(out, "found Hyper-V"));
        assert_contains(err, "sda: found Hyper-V scsi disk");
        unlink(config);
        g_object_unref(tb);
}
END_TEST

int main(void) {
        Suite *s = suite_create("once");
        TCase *tc = tcase_create("testbeds");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_azure_scheduler_only);
        tcase_add_test(tc, test_runtime_dir_not_only_hvtuned);
        tcase_add_test(tc, test_record_refused_is_said);
        tcase_add_test(tc, test_planted_temporaries);
        tcase_add_loop_test(tc, test_runtime_dir_refused, 0, G_N_ELEMENTS(refused_dirs));
        tcase_add_test(tc, test_azure_issue_config);
        tcase_add_test(tc, test_dry_run);
        tcase_add_test(tc, test_gen1_ide_override);
        tcase_add_test(tc, test_wsl2_old_kernel);
        tcase_add_loop_test(tc, test_read_ahead_ceiling_not_azure_only, 0, G_N_ELEMENTS(ceiling_beds));
        tcase_add_test(tc, test_legacy_noop);
        tcase_add_test(tc, test_unsupported_scheduler);
        tcase_add_test(tc, test_failure_exit_code);
        tcase_add_test(tc, test_bounds_named);
        tcase_add_loop_test(tc, test_bad_config_changes_nothing, 0, sizeof(bad_configs) / sizeof(bad_configs[0]));
        tcase_add_test(tc, test_cli);
        tcase_add_test(tc, test_check_config_good);
        tcase_add_test(tc, test_untrusted_config);
        tcase_add_test(tc, test_writes_allowlisted);
        tcase_add_test(tc, test_streams);
        tcase_add_test(tc, test_unchanged_only_with_verbose);
        suite_add_tcase(s, tc);
        return test_run(s);
}
