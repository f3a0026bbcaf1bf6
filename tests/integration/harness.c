/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the integration-test harness described in harness.h. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "uevent.h"
#include "writes.h"

/* Under memcheck hvtuned runs some 20 to 50 times slower: every wait gets that much longer
 * (HVTUNED_TEST_VALGRIND, the test setup "valgrind"). */
#define NOTIFY_TIMEOUT_MS (hvtuned_under_valgrind() ? 200000 : 20000)

const char *const azure_disks[4] = { "sda", "sdb", "sdc", "sdd" };

/* What the harness hands out lives until the test process exits: tests stay readable
 * (assertions on returned strings) and leak-free under LeakSanitizer. */
static GPtrArray *arena_strings, *arena_tables;

static void arena_free(void) {
        g_clear_pointer(&arena_strings, g_ptr_array_unref);
        g_clear_pointer(&arena_tables, g_ptr_array_unref);
}

static void arena_init(void) {
        if (arena_strings)
                return;
        arena_strings = g_ptr_array_new_with_free_func(g_free);
        arena_tables = g_ptr_array_new_with_free_func((GDestroyNotify) g_hash_table_unref);
        atexit(arena_free);
}

char *hv_keep(char *s) {
        arena_init();
        g_ptr_array_add(arena_strings, s);
        return s;
}

static GHashTable *keep_table(GHashTable *h) {
        arena_init();
        g_ptr_array_add(arena_tables, h);
        return h;
}

bool hvtuned_under_valgrind(void) {
        const char *v = getenv("HVTUNED_TEST_VALGRIND");

        return v && *v;
}

static const char *env_or_die(const char *name) {
        const char *v = getenv(name);

        ck_assert_msg(v && *v, "%s is not set (run through meson test)", name);
        return v;
}

static char *sys_dir(void) {
        return g_build_filename(env_or_die("UMOCKDEV_DIR"), "sys", NULL);
}

void assert_contains(const char *haystack, const char *needle) {
        ck_assert_msg(strstr(haystack, needle), "\"%s\" not found in:\n%s", needle, haystack);
}

/* What the testbed's kernel has beside its devices (/sys/kernel/btf, its osrelease: hvtuned's
 * request layout), from the tar mkvm.py --kernel-tar made for its profile ("azure-gen2-16cpu"
 * runs "azure-gen2"'s kernel), extracted in the testbed's root. */
static void testbed_kernel(UMockdevTestbed *tb, const char *name) {
        char *sys = umockdev_testbed_get_sys_dir(tb);  /* the caller's to free */
        char *profile = g_strdup(name), *root = g_path_get_dirname(sys);

        for (;;) {
                char *tar = g_strdup_printf("%s/%s.kernel.tar", env_or_die("HVTUNED_TESTBEDS"), profile);

                if (g_file_test(tar, G_FILE_TEST_EXISTS)) {
                        const char *argv[] = { "tar", "-C", root, "-xf", tar, NULL };
                        int status = -1;

                        ck_assert_msg(g_spawn_sync(NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL,
                                                   NULL, &status, NULL) && status == 0,
                                      "cannot extract %s in %s", tar, root);
                        g_free(tar);
                        break;
                }
                g_free(tar);
                ck_assert_msg(strrchr(profile, '-'), "no %s.kernel.tar for the testbed %s", profile, name);
                *strrchr(profile, '-') = '\0';
        }
        g_free(root);
        g_free(profile);
        g_free(sys);
}

UMockdevTestbed *testbed_load(const char *profile) {
        UMockdevTestbed *tb = umockdev_testbed_new();
        char *file = g_strdup_printf("%s.umockdev", profile);

        testbed_add(tb, file);
        testbed_kernel(tb, profile);
        g_free(file);
        return tb;
}

void testbed_add(UMockdevTestbed *tb, const char *file) {
        char *path = g_build_filename(env_or_die("HVTUNED_TESTBEDS"), file, NULL);
        GError *error = NULL;

        ck_assert_msg(umockdev_testbed_add_from_file(tb, path, &error), "%s: %s", path,
                      error ? error->message : "?");
        g_free(path);
}

void testbed_remove(UMockdevTestbed *tb, const char *syspath) {
        struct uevent_device dev;

        uevent_capture(syspath, &dev);
        umockdev_testbed_remove_device(tb, syspath);
        uevent_send_captured(&dev, "remove");
}

char *testbed_syspath(const char *sysname) {
        char *sys = sys_dir(), *link = g_build_filename(sys, "block", sysname, NULL);
        char real[PATH_MAX], *ret;

        ck_assert_msg(realpath(link, real), "%s: %m", link);
        ck_assert(g_str_has_prefix(real, sys));
        ret = g_strconcat("/sys", real + strlen(sys), NULL);
        g_free(link);
        g_free(sys);
        return hv_keep(ret);
}

/* "none [bfq] \n" -> "bfq", "256\n" -> "256". */
static char *value_of(const char *path, const char *content) {
        const char *open = strchr(content, '['), *close = open ? strchr(open, ']') : NULL;

        if (g_str_has_suffix(path, "/scheduler") && open && close)
                return g_strndup(open + 1, (size_t) (close - open - 1));
        return g_strchomp(g_strdup(content));
}

char *testbed_read(const char *sysname, const char *rel) {
        char *sys = sys_dir(), *path = g_build_filename(sys, "block", sysname, rel, NULL);
        char *text = NULL;

        ck_assert_msg(g_file_get_contents(path, &text, NULL, NULL), "cannot read %s", path);
        g_free(path);
        g_free(sys);
        return hv_keep(text);
}

char *testbed_value(const char *sysname, const char *rel) {
        return hv_keep(value_of(rel, testbed_read(sysname, rel)));
}

void testbed_wait_value(const char *sysname, const char *rel, const char *want) {
        testbed_wait_value_for(sysname, rel, want, NOTIFY_TIMEOUT_MS);
}

void testbed_wait_value_for(const char *sysname, const char *rel, const char *want, int timeout_ms) {
        char *sys = sys_dir(), *path = g_build_filename(sys, "block", sysname, rel, NULL);
        char *text = NULL, *value = NULL;

        for (int waited = 0; ; waited += 10) {
                g_free(text);
                g_free(value);
                text = value = NULL;
                if (g_file_get_contents(path, &text, NULL, NULL) && strcmp(value = value_of(rel, text), want) == 0)
                        break;
                ck_assert_msg(waited < timeout_ms, "%s is \"%s\", not \"%s\", after %d ms", path,
                              text ? text : "(unreadable)", want, timeout_ms);
                usleep(10 * 1000);
        }
        g_free(text);
        g_free(value);
        g_free(path);
        g_free(sys);
}

/* A test's file manages exactly what it names: the platform defaults (lib/policy.h) are off
 * unless the text speaks of them, as the tests of those defaults do. Said last, so that the
 * lines a test expects in a message stay the text's. */
static char *with_defaults_said(const char *text) {
        return strstr(text, "platform_defaults") ? g_strdup(text) :
                g_strconcat(text, "\nplatform_defaults = false;\n", NULL);
}

char *config_write(const char *text) {
        g_autofree char *full = with_defaults_said(text);
        char path[] = "/tmp/hvtuned-conf.XXXXXX";
        int fd;

        /* The files a test rewrites later must not be group-writable either: hvtuned would
         * refuse them (lib/trust.c). */
        umask(022);
        fd = mkstemp(path);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, full, strlen(full)), (ssize_t) strlen(full));
        close(fd);
        return hv_keep(g_strdup(path));
}

void config_rewrite(const char *path, const char *text) {
        g_autofree char *full = with_defaults_said(text);

        ck_assert(g_file_set_contents(path, full, -1, NULL));
}

bool record_exists(const char *sysname) {
        g_autofree char *path = g_build_filename(runtime_dir(), sysname, NULL);

        return g_file_test(path, G_FILE_TEST_EXISTS);
}

void testbed_sentinel(UMockdevTestbed *tb, const char *sysname) {
        umockdev_testbed_set_attribute(tb, testbed_syspath(sysname), "queue/scheduler", "none mq-deadline kyber [bfq] \n");
        uevent_send_blocking(testbed_syspath(sysname), "change", 1);
        testbed_wait_value(sysname, "queue/scheduler", "none");
}

void testbed_drift(UMockdevTestbed *tb, const char *sysname, const char *attr, const char *value) {
        umockdev_testbed_set_attribute(tb, testbed_syspath(sysname), attr, value);
}

void testbed_sentinel_value(UMockdevTestbed *tb, const char *sysname, const char *attr, const char *value,
                            const char *want) {
        testbed_drift(tb, sysname, attr, value);
        uevent_send_blocking(testbed_syspath(sysname), "change", 1);
        testbed_wait_value(sysname, attr, want);
}

char *testbed_sys_path(const char *rel) {
        return hv_keep(g_build_filename(getenv("UMOCKDEV_DIR"), "sys", rel, NULL));
}

char *testbed_sys_read(const char *rel) {
        char *text = NULL;

        ck_assert_msg(g_file_get_contents(testbed_sys_path(rel), &text, NULL, NULL), "cannot read %s", rel);
        return hv_keep(g_strchomp(text));
}

void host_files(const char *cmdline, const char *mountinfo, const char *swaps, const char *busy) {
        static char dir[64];
        const char *const names[] = { "cmdline", "mountinfo", "swaps", "busy" };
        const char *const texts[] = { cmdline, mountinfo, swaps, busy };

        if (!*dir) {
                snprintf(dir, sizeof(dir), "/tmp/hvtuned-host.XXXXXX");
                ck_assert_ptr_nonnull(mkdtemp(dir));
                setenv("HVTUNED_TEST_HOST", dir, 1);
        }
        for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
                char *path = g_build_filename(dir, names[i], NULL);

                if (texts[i])
                        ck_assert(g_file_set_contents(path, texts[i], -1, NULL));
                else
                        (void) unlink(path);
                g_free(path);
        }
}

static const char *runtime_dir_used;

void runtime_dir_use(const char *path) {
        runtime_dir_used = path;
}

const char *runtime_dir(void) {
        static char dir[64];

        if (runtime_dir_used)
                return runtime_dir_used;
        if (!*dir) {
                snprintf(dir, sizeof(dir), "/tmp/hvtuned-runtime.XXXXXX");
                ck_assert_ptr_nonnull(mkdtemp(dir));
        }
        return dir;
}

static bool journal_stream;

void hvtuned_log_to_journal(bool on) {
        journal_stream = on;
}

/* The setup's valgrind command line, quiet and with its report in a file of hvtuned's own
 * (%p: its pid), since the tests compare what hvtuned prints on stderr. */
static char **valgrind_argv(void) {
        GError *error = NULL;
        char **argv = NULL;
        int n;

        ck_assert_msg(g_shell_parse_argv(getenv("HVTUNED_TEST_VALGRIND"), &n, &argv, &error),
                      "HVTUNED_TEST_VALGRIND: %s", error ? error->message : "?");
        argv = g_renew(char *, argv, n + 3);
        argv[n] = g_strdup("-q");
        argv[n + 1] = g_strdup("--log-file=/tmp/hvtuned-valgrind.%p");
        argv[n + 2] = NULL;
        return argv;
}

static char *valgrind_log(pid_t pid) {
        return g_strdup_printf("/tmp/hvtuned-valgrind.%d", (int) pid);
}

/* hvtuned's environment: this process's, with what the test sets; JOURNAL_STREAM names the
 * stderr it gets (device and inode, as systemd gives them). */
static char **child_environ(const char *notify, int err_fd) {
        char **env = g_get_environ();

        if (notify)
                env = g_environ_setenv(env, "NOTIFY_SOCKET", notify, TRUE);
        else
                env = g_environ_unsetenv(env, "NOTIFY_SOCKET");
        if (journal_stream) {
                struct stat st;
                char value[64];

                ck_assert_int_eq(fstat(err_fd, &st), 0);
                snprintf(value, sizeof(value), "%llu:%llu", (unsigned long long) st.st_dev,
                         (unsigned long long) st.st_ino);
                env = g_environ_setenv(env, "JOURNAL_STREAM", value, TRUE);
        } else
                env = g_environ_unsetenv(env, "JOURNAL_STREAM");
        env = g_environ_setenv(env, "RUNTIME_DIRECTORY", runtime_dir(), TRUE);
        return g_environ_setenv(env, "HVTUNED_TEST_WRITE_LOG", writes_log(), TRUE);
}

static int open_output(const char *path) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
        return fd;
}

/* Everything is made before posix_spawn and nothing runs between its fork and exec: this
 * process has threads (umockdev's, GLib's), and a forked child that allocated, or opened a
 * file through the preloaded shims, could wait forever on a lock one of them held. */
/* given_out_fd: stdout's, without out_path; -1 is the test's own, OUT_TO_ERR stderr's. */
#define OUT_TO_ERR (-2)
static pid_t spawn_out(const char *const *args, const char *notify, const char *err_path, const char *out_path,
                       int given_out_fd) {
        char **vg = hvtuned_under_valgrind() ? valgrind_argv() : NULL, **env;
        int err_fd = open_output(err_path), r;
        int out_fd = out_path ? open_output(out_path) : given_out_fd == OUT_TO_ERR ? err_fd : given_out_fd;
        posix_spawn_file_actions_t actions;
        const char *argv[64];
        size_t n = 0;
        pid_t pid;

        for (char **v = vg; v && *v; v++) {
                ck_assert_uint_lt(n, 32);
                argv[n++] = *v;
        }
        argv[n++] = env_or_die("HVTUNED_BIN");
        for (; args && *args; args++) {
                ck_assert_uint_lt(n, G_N_ELEMENTS(argv) - 1);
                argv[n++] = *args;
        }
        argv[n] = NULL;
        env = child_environ(notify, err_fd);

        ck_assert_int_eq(posix_spawn_file_actions_init(&actions), 0);
        ck_assert_int_eq(posix_spawn_file_actions_adddup2(&actions, err_fd, STDERR_FILENO), 0);
        if (out_fd >= 0)
                ck_assert_int_eq(posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO), 0);
        r = posix_spawn(&pid, argv[0], &actions, NULL, (char **) argv, env);
        ck_assert_msg(r == 0, "cannot run %s: %s", argv[0], strerror(r));
        posix_spawn_file_actions_destroy(&actions);
        g_strfreev(env);
        g_strfreev(vg);
        close(err_fd);
        if (out_path)
                close(out_fd);
        return pid;
}

static void drop_to_nobody(gpointer userdata) {
        (void) userdata;
        if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
                _exit(99);
}

int hvtuned_run_as_nobody(const char *const *args, char **out, char **err) {
        g_autofree char *rt = g_strdup_printf("RUNTIME_DIRECTORY=%s", runtime_dir());
        const char *envp[] = { rt, NULL }, *argv[16];
        size_t n = 0;
        int code = 0;

        if (geteuid() != 0)
                return -1;
        argv[n++] = env_or_die("HVTUNED_BIN");
        for (; args && *args; args++) {
                ck_assert_uint_lt(n, G_N_ELEMENTS(argv) - 1);
                argv[n++] = *args;
        }
        argv[n] = NULL;
        ck_assert(g_spawn_sync(NULL, (char **) argv, (char **) envp, 0, drop_to_nobody, NULL, out, err, &code, NULL));
        hv_keep(*out);
        hv_keep(*err);
        /* The wait status checked by hand: g_spawn_check_wait_status() is glib 2.70's. */
        ck_assert_msg(WIFEXITED(code), "hvtuned as nobody: wait status %d", code);
        return WEXITSTATUS(code);
}

char *python_on_text(const char *script, const char *text) {
        char path[] = "/tmp/hvtuned-python.XXXXXX", *out = NULL, *err = NULL;
        const char *argv[] = { "python3", "-c", script, path, NULL };
        int fd = mkstemp(path), code = 0;

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
        ck_assert(g_spawn_sync(NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err, &code, NULL));
        /* The wait status checked by hand: g_spawn_check_wait_status() is glib 2.70's (bullseye has 2.66). */
        ck_assert_msg(WIFEXITED(code) && WEXITSTATUS(code) == 0, "python3 refused it: %s\n%s", err, text);
        unlink(path);
        hv_keep(err);
        return hv_keep(out);
}

pid_t hvtuned_spawn_out(const char *const *args, const char *err_path, const char *out_path) {
        return spawn_out(args, NULL, err_path, out_path, -1);
}

static pid_t spawn(const char *const *args, const char *notify, const char *err_path, const char *out_path) {
        return spawn_out(args, notify, err_path, out_path, -1);
}

/* With -q, memcheck writes its log only for an error or a definite leak: any line in it fails
 * the test, whatever hvtuned's exit status (its 1 is also a configuration error). */
static void valgrind_check(pid_t pid) {
        char *path, *text = NULL;

        if (!hvtuned_under_valgrind())
                return;
        path = valgrind_log(pid);
        ck_assert_msg(g_file_get_contents(path, &text, NULL, NULL), "no valgrind log %s", path);
        unlink(path);
        g_free(path);
        ck_assert_msg(!*text, "memcheck found errors in hvtuned:\n%s", text);
        g_free(text);
}

/* A run that does not end is killed, after saying where it was, as /proc shows it. */
static void hung(pid_t pid) {
        char *exe_path = g_strdup_printf("/proc/%d/exe", (int) pid), exe[PATH_MAX] = "?";
        char *wchan_path = g_strdup_printf("/proc/%d/wchan", (int) pid), *wchan = NULL;
        char *stack_path = g_strdup_printf("/proc/%d/stack", (int) pid), *stack = NULL;
        ssize_t n = readlink(exe_path, exe, sizeof(exe) - 1);

        if (n > 0)
                exe[n] = '\0';
        (void) g_file_get_contents(wchan_path, &wchan, NULL, NULL);
        (void) g_file_get_contents(stack_path, &stack, NULL, NULL);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        ck_abort_msg("process %d (%s) still ran after %d ms, waiting in %s\n%s", (int) pid, exe,
                     NOTIFY_TIMEOUT_MS, wchan ? wchan : "?", stack ? stack : "");
}

/* Reaps hvtuned, within a bound, and checks where it wrote; the wait status. */
static int reap(pid_t pid) {
        int status = hvtuned_wait_exit(pid, NOTIFY_TIMEOUT_MS);

        if (status == -1)
                hung(pid);
        return status;
}

static int wait_exit(pid_t pid) {
        int status = reap(pid);

        ck_assert_msg(WIFEXITED(status), "hvtuned died of signal %d", WTERMSIG(status));
        return WEXITSTATUS(status);
}

static char *slurp(const char *path) {
        char *text = NULL;

        ck_assert(g_file_get_contents(path, &text, NULL, NULL));
        return hv_keep(text);
}

pid_t hvtuned_spawn_notify(const char *const *args, const char *notify_path, const char *err_path) {
        return spawn(args, notify_path, err_path, NULL);
}

int hvtuned_wait_exit(pid_t pid, int timeout_ms) {
        for (int waited = 0; ; waited += 10) {
                int status;
                pid_t r = waitpid(pid, &status, WNOHANG);

                ck_assert_int_ge(r, 0);
                if (r == pid) {
                        valgrind_check(pid);
                        writes_check(runtime_dir());
                        return status;
                }
                if (waited >= timeout_ms)
                        return -1;
                usleep(10 * 1000);
        }
}

int hvtuned_run(const char *const *args, char **err) {
        char err_path[] = "/tmp/hvtuned-err.XXXXXX";
        int fd, r;

        fd = mkstemp(err_path);
        ck_assert_int_ge(fd, 0);
        close(fd);
        r = wait_exit(spawn_out(args, NULL, err_path, NULL, OUT_TO_ERR));
        *err = slurp(err_path);
        unlink(err_path);
        return r;
}

int hvtuned_run_once(const char *config_text, char **err) {
        char *config = config_write(config_text);
        const char *args[] = { "--once", "-c", config, NULL };
        int r = hvtuned_run(args, err);

        unlink(config);
        return r;
}

int hvtuned_run_out(const char *const *args, char **out, char **err) {
        char err_path[] = "/tmp/hvtuned-err.XXXXXX", out_path[] = "/tmp/hvtuned-out.XXXXXX";
        int fd, r;

        fd = mkstemp(err_path);
        ck_assert_int_ge(fd, 0);
        close(fd);
        fd = mkstemp(out_path);
        ck_assert_int_ge(fd, 0);
        close(fd);
        r = wait_exit(spawn(args, NULL, err_path, out_path));
        *err = slurp(err_path);
        *out = slurp(out_path);
        unlink(err_path);
        unlink(out_path);
        return r;
}

int hvtuned_run_fd(const char *const *args, int out_fd, char **err) {
        char err_path[] = "/tmp/hvtuned-err.XXXXXX";
        int fd, r;

        fd = mkstemp(err_path);
        ck_assert_int_ge(fd, 0);
        close(fd);
        r = wait_exit(spawn_out(args, NULL, err_path, NULL, out_fd));
        *err = slurp(err_path);
        unlink(err_path);
        return r;
}

/* The service manager's side of the socket: every notification, as it comes. */
static gpointer read_notes(gpointer userdata) {
        struct hv_run *run = userdata;

        for (;;) {
                struct pollfd p[2] = { { .fd = run->notify_fd, .events = POLLIN },
                                       { .fd = run->stop_fd, .events = POLLIN } };
                char buf[4096];
                ssize_t n;

                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                if (p[1].revents)
                        break;
                n = recv(run->notify_fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
                if (n <= 0)
                        continue;
                g_async_queue_push(run->notes, g_strndup(buf, (gsize) n));
        }
        return NULL;
}

/* Whether args make hvtuned a command (log.c: its report on stdout), not the daemon. */
static bool is_command(const char *const *args) {
        static const char *const commands[] = { "--once", "--dry-run", "--restore", "--check-config", "--status" };

        for (; args && *args; args++)
                for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
                        if (strcmp(*args, commands[i]) == 0)
                                return true;
        return false;
}

void hvtuned_launch(struct hv_run *run, const char *const *args) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd;

        *run = (struct hv_run) { .command = is_command(args) };
        snprintf(run->notify_path, sizeof(run->notify_path), "/tmp/hvtuned-notify.%d", getpid());
        snprintf(run->err_path, sizeof(run->err_path), "/tmp/hvtuned-err.%d", getpid());
        snprintf(run->out_path, sizeof(run->out_path), "/tmp/hvtuned-out.%d", getpid());
        unlink(run->notify_path);
        run->notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(run->notify_fd, 0);
        strcpy(sa.sun_path, run->notify_path);
        ck_assert_int_eq(bind(run->notify_fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        fd = open(run->err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        close(fd);
        run->stop_fd = eventfd(0, EFD_CLOEXEC);
        ck_assert_int_ge(run->stop_fd, 0);
        run->notes = g_async_queue_new_full(g_free);
        run->reader = g_thread_new("notify", read_notes, run);

        run->pid = spawn(args, run->notify_path, run->err_path, run->out_path);
}

void hvtuned_start(struct hv_run *run, const char *const *args) {
        hvtuned_launch(run, args);
        hvtuned_wait_notify(run, "READY=1");
}

void azure_start_with(struct hv_run *run, UMockdevTestbed **tb, char **config, const char *text,
                      const char *option) {
        *tb = testbed_load("azure-gen2");
        *config = config_write(text);
        hvtuned_start(run, (const char *const[]) { "-c", *config, option, NULL });
}

void azure_start(struct hv_run *run, UMockdevTestbed **tb, char **config, const char *text) {
        azure_start_with(run, tb, config, text, NULL);
}

const char *hvtuned_wait_notify(struct hv_run *run, const char *needle) {
        return hvtuned_wait_notify_counting(run, needle, NULL, NULL);
}

static const char *wait_notify(struct hv_run *run, const char *needle, const char *count_what,
                               unsigned *count, int timeout_ms);

unsigned hv_count(const char *text, const char *needle) {
        unsigned n = 0;

        for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

void hvtuned_wait_stderr_timeout(const struct hv_run *run, const char *needle, unsigned n, int timeout_ms) {
        int limit_ms = hvtuned_under_valgrind() ? 10 * timeout_ms : timeout_ms;

        for (int waited = 0; ; waited += 10) {
                char *text = NULL;
                unsigned seen = g_file_get_contents(run->err_path, &text, NULL, NULL) ? hv_count(text, needle) : 0;

                g_free(text);
                if (seen >= n)
                        return;
                ck_assert_msg(waited < limit_ms, "\"%s\" on stderr %u times, not %u, after %d ms", needle, seen, n,
                              limit_ms);
                usleep(10 * 1000);
        }
}

char *hvtuned_wait_file(const char *path, const char *needle, int timeout_ms) {
        for (int waited = 0;; waited += 10) {
                char *text = NULL;

                if (g_file_get_contents(path, &text, NULL, NULL) && strstr(text, needle))
                        return hv_keep(text);
                ck_assert_msg(waited < timeout_ms, "\"%s\" not in %s after %d ms:\n%s", needle, path, timeout_ms,
                              text ? text : "(no file)");
                g_free(text);
                usleep(10 * 1000);
        }
}

char *hvtuned_wait_metrics(const char *path, const char *needle) {
        return hvtuned_wait_file(path, needle, hvtuned_under_valgrind() ? 200000 : 20000);
}

void hvtuned_wait_stderr(const struct hv_run *run, const char *needle, unsigned n) {
        hvtuned_wait_stderr_timeout(run, needle, n, 20000);
}

const char *hvtuned_wait_notify_timeout(struct hv_run *run, const char *needle, int timeout_ms) {
        return wait_notify(run, needle, NULL, NULL, timeout_ms);
}

const char *hvtuned_wait_notify_counting(struct hv_run *run, const char *needle, const char *count_what,
                                         unsigned *count) {
        return wait_notify(run, needle, count_what, count, NOTIFY_TIMEOUT_MS);
}

static const char *wait_notify(struct hv_run *run, const char *needle, const char *count_what,
                               unsigned *count, int timeout_ms) {
        gint64 deadline = g_get_monotonic_time() + (gint64) timeout_ms * 1000;

        for (;;) {
                g_autofree char *buf = NULL;
                char *status;

                buf = g_async_queue_timeout_pop(run->notes, MAX(deadline - g_get_monotonic_time(), 0));
                ck_assert_msg(buf, "no \"%s\" notification in %d ms (last STATUS: %s)", needle, timeout_ms,
                              run->status);
                status = strstr(buf, "STATUS=");
                if (status)
                        snprintf(run->status, sizeof(run->status), "%.*s", (int) strcspn(status + 7, "\n"),
                                 status + 7);
                if (count && strstr(buf, count_what))
                        (*count)++;
                if (strstr(buf, needle))
                        return hv_keep(g_steal_pointer(&buf));
        }
}

char *hvtuned_stop(struct hv_run *run) {
        return hvtuned_stop_with(run, SIGTERM);
}

static void run_done(struct hv_run *run) {
        /* The daemon's lines are all the journal's, or stderr's: a command's report is what
         * goes to stdout (log.c). */
        if (!run->command)
                ck_assert_str_eq(slurp(run->out_path), "");
        unlink(run->out_path);
        ck_assert_int_eq(eventfd_write(run->stop_fd, 1), 0);
        g_thread_join(run->reader);
        g_async_queue_unref(run->notes);
        close(run->stop_fd);
        close(run->notify_fd);
        unlink(run->notify_path);
        unlink(run->err_path);
}

char *hvtuned_stop_wait(struct hv_run *run) {
        char *err;

        ck_assert_int_eq(wait_exit(run->pid), 0);
        err = slurp(run->err_path);
        run_done(run);
        return err;
}

char *hvtuned_reaped(struct hv_run *run) {
        char *err = slurp(run->err_path);

        run_done(run);
        return err;
}

char *hvtuned_stop_with(struct hv_run *run, int sig) {
        ck_assert_int_eq(kill(run->pid, sig), 0);
        hvtuned_wait_notify(run, "STOPPING=1");
        return hvtuned_stop_wait(run);
}

void hvtuned_kill(struct hv_run *run, int sig) {
        int status;

        ck_assert_int_eq(kill(run->pid, sig), 0);
        status = reap(run->pid);
        ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == sig);
        run_done(run);
}

/* nftw has no user data pointer. */
static GHashTable *snapshot_target;
static size_t snapshot_prefix;

static int snapshot_one(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        char *text = NULL;

        (void) st, (void) ftw;
        if (type == FTW_F && g_file_get_contents(path, &text, NULL, NULL))
                g_hash_table_insert(snapshot_target, g_strdup(path + snapshot_prefix), text);
        return 0;
}

GHashTable *snapshot_take(void) {
        char *sys = sys_dir(), *devices = g_build_filename(sys, "devices", NULL);
        GHashTable *h = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);

        snapshot_target = h;
        snapshot_prefix = strlen(devices) + 1;
        ck_assert_int_eq(nftw(devices, snapshot_one, 32, FTW_PHYS), 0);
        g_free(devices);
        g_free(sys);
        return keep_table(h);
}

static int compare_strings(gconstpointer a, gconstpointer b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* ".../0:0:0:0/block/sda/queue/scheduler" -> "sda/queue/scheduler",
 * ".../1:0:0:0/timeout" -> "1:0:0:0/timeout": short, and still unique on a testbed. */
static char *short_name(const char *path) {
        const char *b = g_strrstr(path, "/block/"), *p;
        g_autoptr(GMatchInfo) match = NULL;
        static GRegex *nvme;

        if (b)
                return g_strdup(b + 7);
        /* An NVMe namespace sits below its controller or subsystem, not in a block/ directory:
         * named from its own (or its partition's) directory, "nvme0n2/queue/io_timeout". */
        if (!nvme)
                nvme = g_regex_new("^.*/(nvme[0-9]+(c[0-9]+)?n[0-9]+(p[0-9]+)?/.+)$", 0, 0, NULL);
        if (g_regex_match(nvme, path, 0, &match))
                return g_match_info_fetch(match, 1);
        p = strrchr(path, '/');
        while (p && p > path && p[-1] != '/')
                p--;
        return g_strdup(p ? p : path);
}

char *snapshot_diff_values(GHashTable *before, GHashTable *after) {
        GHashTable *b = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        GHashTable *a = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        GHashTableIter it;
        gpointer key, value;

        g_hash_table_iter_init(&it, before);
        while (g_hash_table_iter_next(&it, &key, &value))
                g_hash_table_insert(b, g_strdup(key), value_of(key, value));
        g_hash_table_iter_init(&it, after);
        while (g_hash_table_iter_next(&it, &key, &value))
                g_hash_table_insert(a, g_strdup(key), value_of(key, value));
        keep_table(a);
        keep_table(b);
        return snapshot_diff(b, a);
}

char *snapshot_diff(GHashTable *before, GHashTable *after) {
        GPtrArray *changed = g_ptr_array_new_with_free_func(g_free);
        GHashTableIter it;
        gpointer key, value;
        char *joined;

        g_hash_table_iter_init(&it, after);
        while (g_hash_table_iter_next(&it, &key, &value)) {
                const char *old = g_hash_table_lookup(before, key);
                if (!old || strcmp(old, value) != 0)
                        g_ptr_array_add(changed, short_name(key));
        }
        g_hash_table_iter_init(&it, before);
        while (g_hash_table_iter_next(&it, &key, &value))
                if (!g_hash_table_contains(after, key))
                        g_ptr_array_add(changed, short_name(key));
        g_ptr_array_sort(changed, compare_strings);
        g_ptr_array_add(changed, NULL);
        joined = g_strjoinv("\n", (char **) changed->pdata);
        g_ptr_array_free(changed, TRUE);
        return hv_keep(joined);
}

int watch_writes(void) {
        int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

        ck_assert_int_ge(fd, 0);
        for (size_t i = 0; i < G_N_ELEMENTS(azure_disks); i++) {
                char *sys = g_build_filename(getenv("UMOCKDEV_DIR"), "sys", "block", azure_disks[i], NULL);
                char real[4096], *queue, *lun;

                ck_assert_ptr_nonnull(realpath(sys, real));
                queue = g_build_filename(real, "queue", NULL);
                lun = g_build_filename(real, "..", "..", NULL);
                ck_assert_int_ge(inotify_add_watch(fd, queue, IN_CLOSE_WRITE), 0);
                ck_assert_int_ge(inotify_add_watch(fd, lun, IN_CLOSE_WRITE), 0);
                g_free(queue);
                g_free(lun);
                g_free(sys);
        }
        return fd;
}

char *watched_writes(int fd) {
        char buf[65536] __attribute__((aligned(__alignof__(struct inotify_event))));
        GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
        ssize_t len;
        char *joined;

        while ((len = read(fd, buf, sizeof(buf))) > 0)
                for (char *p = buf; p < buf + len; p += sizeof(struct inotify_event) + ((struct inotify_event *) p)->len) {
                        const struct inotify_event *e = (const struct inotify_event *) p;
                        /* umockdev_testbed_set_attribute() writes a temporary file and renames
                         * it: that is the test's drift, not the daemon's write. */
                        if (e->len && !strchr(e->name, '.'))
                                g_ptr_array_add(names, g_strdup(e->name));
                }
        g_ptr_array_sort(names, compare_strings);
        g_ptr_array_add(names, NULL);
        joined = g_strjoinv("\n", (char **) names->pdata);
        g_ptr_array_free(names, TRUE);
        return hv_keep(joined);
}

void watched_writes_expect(int fd, const char *want) {
        GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
        char *joined = NULL;

        for (int waited = 0;; waited += 10) {
                g_auto(GStrv) more = g_strsplit(watched_writes(fd), "\n", -1);

                for (char **m = more; *m; m++)
                        if (**m)
                                g_ptr_array_add(names, g_strdup(*m));
                g_ptr_array_sort(names, compare_strings);
                g_free(joined);
                g_ptr_array_add(names, NULL);
                joined = g_strjoinv("\n", (char **) names->pdata);
                g_ptr_array_remove_index(names, names->len - 1);
                if (strcmp(joined, want) == 0 || waited >= 10000)
                        break;
                usleep(10 * 1000);
        }
        ck_assert_str_eq(joined, want);
        g_free(joined);
        g_ptr_array_free(names, TRUE);
}
