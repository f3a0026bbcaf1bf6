/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: running the real hvtuned binary on a umockdev testbed from a Check test: the
 * testbed, a NOTIFY_SOCKET the test owns, the daemon's stderr, and snapshots of every
 * sysfs file to prove what changed and what did not. */
#pragma once

#include <check.h>
#include <glib.h>
#include <stdbool.h>
#include <sys/types.h>
#include <umockdev.h>

/* The harness reads the notify socket all the time, as systemd does: a daemon that sends
 * faster than a test waits must not block on a full socket. */
struct hv_run {
        pid_t pid;
        int notify_fd;
        int stop_fd;            /* an eventfd that ends the reader */
        GThread *reader;
        GAsyncQueue *notes;     /* the notifications read, oldest first */
        char notify_path[108];
        char err_path[64];
        char out_path[64];      /* stdout: a daemon's stays empty (run_done()) */
        bool command;           /* --once or another command, which reports on stdout */
        char status[512];  /* the last STATUS= seen */
};

/* What STATUS adds on each VM for its hw queues (4 controllers' worth on Azure, 32 vCPUs). */
#define AZURE_HWQ "; hw queues: 2 controllers over cap 4, ~169 MiB reclaimable at next boot"
#define GEN1_HWQ "; hw queues: 1 controller over cap 4, ~3 MiB reclaimable at next boot"
#define WSL_HWQ "; hw queues: every controller within cap 4"

/* The Azure VM (azure-gen2): its Hyper-V disks, its two SCSI controllers, and what its /proc
 * says for host_files(): the kernel command line, the mounts (the root filesystem on sda1,
 * the resource disk sdb1 at /mnt), no swap. */
extern const char *const azure_disks[4];
#define SCSI0 "{f8b3781a-1e82-4818-a1c3-63d806ec15bb}"
#define SCSI1 "{f8b3781b-1e82-4818-a1c3-63d806ec15bb}"
#define AZURE_CMDLINE "BOOT_IMAGE=/boot/vmlinuz-6.8.0-1021-azure root=PARTUUID=3e1a7c52-01 ro " \
                      "console=tty1 console=ttyS0 earlyprintk=ttyS0 panic=-1\n"
#define MOUNTINFO_AZURE \
        "22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n" \
        "25 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,discard\n" \
        "30 25 8:15 / /boot/efi rw,relatime shared:3 - vfat /dev/sda15 rw\n" \
        "31 25 8:17 / /mnt rw,relatime shared:4 - ext4 /dev/sdb1 rw\n"
#define SWAPS_HEADER "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"

/* True when hvtuned runs under valgrind memcheck (HVTUNED_TEST_VALGRIND, the test setup
 * "valgrind"): a test that floods it may scale its counts down, and says so. */
bool hvtuned_under_valgrind(void);

/* Strings and snapshots returned below belong to the harness and live until the test
 * process exits; hv_keep() hands a g_malloc()ed string of the test's over the same way. */
char *hv_keep(char *s);

/* Fails the test, showing haystack, unless it contains needle. */
void assert_contains(const char *haystack, const char *needle);

/* A testbed holding the generated VM profile (and more fragments with testbed_add). */
UMockdevTestbed *testbed_load(const char *profile);
void testbed_add(UMockdevTestbed *tb, const char *file);

/* "/sys/devices/.../block/sda" for "sda", as libudev names it. */
char *testbed_syspath(const char *sysname);

/* Takes the disk (and whatever is below it) out of the testbed, then sends its remove event,
 * as udevd does after the kernel removed it: a remove for a disk still in the testbed is a
 * spurious one, which hvtuned ignores. */
void testbed_remove(UMockdevTestbed *tb, const char *syspath);
/* Contents of /sys/block/<sysname>/<rel> (or of the LUN: rel "device/timeout"). */
char *testbed_read(const char *sysname, const char *rel);

/* The value of that attribute: the active name of a scheduler list, a number without its
 * newline. */
char *testbed_value(const char *sysname, const char *rel);

/* Waits until testbed_value(sysname, rel) is want (the daemon acts on events in order, so a
 * later event's effect shows that earlier ones were handled). */
void testbed_wait_value(const char *sysname, const char *rel, const char *want);
/* The same with a timeout of the test's. */
void testbed_wait_value_for(const char *sysname, const char *rel, const char *want, int timeout_ms);

/* Drifts sysname's scheduler to bfq, sends a change event and waits for the repair: events
 * are handled in order, so everything sent before has been handled too. */
void testbed_sentinel(UMockdevTestbed *tb, const char *sysname);
/* The same with another attribute: drifts it to value, waits until it is want again. */
void testbed_sentinel_value(UMockdevTestbed *tb, const char *sysname, const char *attr, const char *value,
                            const char *want);
/* Sets the attribute to value, as something other than hvtuned would: no event. */
void testbed_drift(UMockdevTestbed *tb, const char *sysname, const char *attr, const char *value);

/* The testbed's /sys/<rel> ("module/hv_storvsc/parameters/..."), and what it holds without
 * its newline. */
char *testbed_sys_path(const char *rel);
char *testbed_sys_read(const char *rel);

/* The files of HVTUNED_TEST_HOST (tests/emulate/host-files.c): what /proc says to every
 * hvtuned started from then on; NULL leaves that file out. */
void host_files(const char *cmdline, const char *mountinfo, const char *swaps, const char *busy);

/* The RUNTIME_DIRECTORY every hvtuned of this test process gets (records of originals):
 * one per test, kept across restarts within it. */
const char *runtime_dir(void);
/* From then on, RUNTIME_DIRECTORY is path instead (a directory hvtuned must refuse), and
 * runtime_dir() says so: where its writes are checked against. */
void runtime_dir_use(const char *path);

/* Writes a config file with text and returns its path. "platform_defaults = false;" goes
 * last unless text names platform_defaults. */
char *config_write(const char *text);
/* Replaces what the config file at path says with text. */
void config_rewrite(const char *path, const char *text);
/* Whether hvtuned keeps a record of sysname's originals in runtime_dir(). */
bool record_exists(const char *sysname);

/* Runs hvtuned with args (NULL-terminated) to completion; returns its exit status and puts
 * what it printed into *err: stdout and stderr in one file, in the order a terminal shows
 * them (`2>&1`). A command splits its lines, the report on stdout and the diagnostics on
 * stderr (log.c); the tests of what it says read both, those of the split (test-once's
 * test_streams) hvtuned_run_out(). */
int hvtuned_run(const char *const *args, char **err);
/* The same for hvtuned --once with a configuration that says config_text. */
int hvtuned_run_once(const char *config_text, char **err);
/* The same, with stdout and stderr apart: *out and *err. */
int hvtuned_run_out(const char *const *args, char **out, char **err);
/* The same with stdout on out_fd, which stays the caller's (a pipe whose reader is gone). */
int hvtuned_run_fd(const char *const *args, int out_fd, char **err);

/* Runs hvtuned with args as the user nobody (the test runs as root; -1 when it does not),
 * with RUNTIME_DIRECTORY alone in its environment: not the test's shims, whose logs nobody
 * may write. Its exit status, stdout in *out and stderr in *err. */
int hvtuned_run_as_nobody(const char *const *args, char **out, char **err);

/* What python3 running script prints, with a file holding text as its argument: how a test
 * reads a command's JSON through Python's own parser. The script failing fails the test. */
char *python_on_text(const char *script, const char *text);

/* With on, every hvtuned started from then on finds JOURNAL_STREAM naming its stderr, as
 * systemd sets it, and sends its entries to the journal's socket instead of stderr. */
void hvtuned_log_to_journal(bool on);

/* Starts hvtuned as a daemon with a NOTIFY_SOCKET and waits for READY=1. */
void hvtuned_start(struct hv_run *run, const char *const *args);
/* The same on the Azure VM, loaded into *tb, with a configuration of text written to *config
 * and, unless NULL, one more option ("-v"). */
void azure_start(struct hv_run *run, UMockdevTestbed **tb, char **config, const char *text);
void azure_start_with(struct hv_run *run, UMockdevTestbed **tb, char **config, const char *text,
                      const char *option);
/* The same without waiting. */
void hvtuned_launch(struct hv_run *run, const char *const *args);
/* Waits until a notification contains needle (STATUS= updates run->status); returns it.
 * *count, if given, is increased for every notification containing count_what on the way. */
const char *hvtuned_wait_notify(struct hv_run *run, const char *needle);
const char *hvtuned_wait_notify_timeout(struct hv_run *run, const char *needle, int timeout_ms);
const char *hvtuned_wait_notify_counting(struct hv_run *run, const char *needle, const char *count_what,
                                         unsigned *count);
/* How many times needle is in text, without overlaps. */
unsigned hv_count(const char *text, const char *needle);
/* Until the file at path holds needle, within timeout_ms; what it holds then (kept until the
 * test ends). */
char *hvtuned_wait_file(const char *path, const char *needle, int timeout_ms);
/* The same for a metrics file, within 20 s (200 s under valgrind). */
char *hvtuned_wait_metrics(const char *path, const char *needle);
/* Until needle has been on hvtuned's stderr n times: within 20 s (200 s under valgrind), or
 * timeout_ms (ten times that under valgrind). */
void hvtuned_wait_stderr(const struct hv_run *run, const char *needle, unsigned n);
void hvtuned_wait_stderr_timeout(const struct hv_run *run, const char *needle, unsigned n, int timeout_ms);
/* SIGTERM (or sig), STOPPING=1, exit status 0; returns what it printed on stderr. */
char *hvtuned_stop(struct hv_run *run);
char *hvtuned_stop_with(struct hv_run *run, int sig);
/* The rest of a stop whose signal was sent and STOPPING=1 seen: exit status 0, stderr. */
char *hvtuned_stop_wait(struct hv_run *run);
/* The rest of a run whose hvtuned the test reaped itself (hvtuned_wait_exit()): what it printed
 * on stderr. The notifications not read are dropped. */
char *hvtuned_reaped(struct hv_run *run);
/* Kills it with sig and checks that sig is what ended it. */
void hvtuned_kill(struct hv_run *run, int sig);

/* Starts hvtuned with NOTIFY_SOCKET naming notify_path, a socket the test binds and reads as
 * it pleases (or never, as a service manager that is stuck), and stderr into err_path. */
pid_t hvtuned_spawn_notify(const char *const *args, const char *notify_path, const char *err_path);
/* Starts hvtuned without a NOTIFY_SOCKET, stderr into err_path and stdout into out_path (the
 * same path: both into one file, or one pipe). */
pid_t hvtuned_spawn_out(const char *const *args, const char *err_path, const char *out_path);
/* Waits up to timeout_ms for pid to exit and checks what it wrote: its wait status, or -1
 * when it is still running. */
int hvtuned_wait_exit(pid_t pid, int timeout_ms);

/* Every regular file under the testbed's /sys/devices: path -> content. */
GHashTable *snapshot_take(void);
/* The files whose value differs: like snapshot_diff(), but with trailing blanks ignored and a
 * scheduler list read as its active name ("none [bfq]" and "bfq" are the same value). */
char *snapshot_diff_values(GHashTable *before, GHashTable *after);

/* The files whose content differs, sorted, one a line, each named from its disk or LUN:
 * "sda/queue/scheduler", "1:0:0:0/timeout", "nvme0n2/queue/io_timeout". */
char *snapshot_diff(GHashTable *before, GHashTable *after);

/* Writes to the Azure VM's Hyper-V disks as inotify tells of them (IN_CLOSE_WRITE), which
 * counts them where a snapshot would only show a value that did not change: a watch on
 * every queue/ and LUN directory of azure_disks, its descriptor returned. */
int watch_writes(void);
/* The names of the files written since the last call, sorted, one a line. */
char *watched_writes(int fd);
/* Asserts that the writes since the last call are want, sorted, one a line. The shim stores
 * a value at write(), and inotify tells of it at close(): a test that saw the value may read
 * the events before the close that makes the last one. So what arrives is gathered until it
 * is want, or for 10 s: a write too many or too few still fails. */
void watched_writes_expect(int fd, const char *want);
