/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the command line. Everything it decides ends up in the daemon context. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "config-show.h"
#include "daemon.h"
#include "enumerate.h"
#include "escape.h"
#include "host.h"
#include "hvtuned-config.h"
#include "load.h"
#include "loop.h"
#include "macro.h"
#include "passes.h"
#include "reload.h"
#include "rundir.h"
#include "show.h"
#include "status.h"
#include "undo.h"
#include "verify.h"
#include "writer.h"

/* --once exit codes, documented in hvtuned(8). 1 is also what any other fatal error gives. */
#define EXIT_CONFIG EXIT_FAILURE
#define EXIT_ATTR_FAILED 2

enum mode {
        MODE_DAEMON,
        MODE_ONCE,
        MODE_CHECK_CONFIG,
        MODE_RELOAD,
        MODE_STATUS,
        MODE_RESTORE,
        MODE_VERIFY,
};

static void help(void) {
        printf("Usage: hvtuned [OPTIONS]\n"
               "Tune the IO queues of Hyper-V (storvsc) and Azure NVMe disks and keep them tuned.\n\n"
               "  -c, --config=FILE   configuration file (default %s)\n"
               "      --check-config  validate the configuration and exit (0 valid, 1 not)\n"
               "      --once          tune every disk once, print what was done and exit\n"
               "                      (0 all good, 1 configuration or fatal error,\n"
               "                      2 a setting or a disk failed)\n"
               "      --dry-run       like --once, but only print what would change\n"
               "      --restore       put back every original hvtuned recorded, when no hvtuned\n"
               "                      runs (0 all back, 1 refused or fatal error, 2 a record\n"
               "                      kept); with --dry-run, only print what it would do\n"
               "      --reload=PID    make the running hvtuned PID reload, and wait until it\n"
               "                      applied the new configuration (1 if it refused it)\n"
               "      --status        show what hvtuned manages: each disk's attributes (now,\n"
               "                      wanted, original), repairs, hw queues (0 shown, 1 not)\n"
               "      --verify        whether every attribute the running hvtuned manages is as\n"
               "                      configured now: a line for each that is not (-v: every\n"
               "                      one), then a verdict (0 as configured, 1 one differs,\n"
               "                      2 one failed, 3 hvtuned is not running, 4 cannot be told,\n"
               "                      usage errors with --verify included)\n"
               "      --json          with --status or --verify: one JSON object (keys in\n"
               "                      hvtuned(8))\n"
               "  -v, --verbose       debug logging; with --once, the unchanged attributes too\n"
               "  -h, --help          show this help\n"
               "      --version       show the version\n",
               HVTUNED_CONFIG_PATH);
}

/* Each of --check-config, --once, --reload, --status, --verify and --restore is a mode of its
 * own: two of them are refused, but --check-config over --once (whatever their order: a check
 * of the file a pass would use). */
static int set_mode(enum mode *mode, const char **given, enum mode m, const char *option) {
        if (*mode == MODE_CHECK_CONFIG && m == MODE_ONCE)
                return 0;
        if (*mode != MODE_DAEMON && *mode != m && !(*mode == MODE_ONCE && m == MODE_CHECK_CONFIG)) {
                fprintf(stderr, "hvtuned: %s and %s cannot be given together\n", *given, option);
                return -EINVAL;
        }
        *mode = m;
        *given = option;
        return 0;
}

static int parse_argv(int argc, char *argv[], struct hvt_daemon *d, enum mode *mode, int *level, pid_t *pid,
                      bool *json) {
        enum { ARG_CHECK_CONFIG = 0x100, ARG_ONCE, ARG_DRY_RUN, ARG_RELOAD, ARG_VERSION, ARG_STATUS, ARG_JSON, ARG_RESTORE,
               ARG_VERIFY };
        static const struct option options[] = {
                { "config",       required_argument, NULL, 'c' },
                { "check-config", no_argument,       NULL, ARG_CHECK_CONFIG },
                { "once",         no_argument,       NULL, ARG_ONCE },
                { "dry-run",      no_argument,       NULL, ARG_DRY_RUN },
                { "reload",       required_argument, NULL, ARG_RELOAD },
                { "status",       no_argument,       NULL, ARG_STATUS },
                { "json",         no_argument,       NULL, ARG_JSON },
                { "restore",      no_argument,       NULL, ARG_RESTORE },
                { "verify",       no_argument,       NULL, ARG_VERIFY },
                { "verbose",      no_argument,       NULL, 'v' },
                { "help",         no_argument,       NULL, 'h' },
                { "version",      no_argument,       NULL, ARG_VERSION },
                {}
        };
        const char *given = NULL;
        int c, r = 0;

        while (r >= 0 && (c = getopt_long(argc, argv, "c:vh", options, NULL)) >= 0)
                switch (c) {
                case 'c':
                        d->config_path = optarg;
                        d->config_explicit = true;
                        break;
                case ARG_CHECK_CONFIG:
                        r = set_mode(mode, &given, MODE_CHECK_CONFIG, "--check-config");
                        break;
                case ARG_ONCE:
                        r = set_mode(mode, &given, MODE_ONCE, "--once");
                        break;
                case ARG_DRY_RUN:
                        d->apply_flags |= HVT_APPLY_DRY_RUN;
                        break;
                case ARG_RELOAD: {
                        char *end;
                        long v;

                        errno = 0;
                        v = strtol(optarg, &end, 10);
                        if (errno != 0 || end == optarg || *end || v <= 1 || v > INT32_MAX) {
                                _cleanup_free_ char *shown = hvt_escape_dup(optarg);

                                fprintf(stderr, "hvtuned: --reload: '%s' is not a process id\n", strna(shown));
                                return -EINVAL;
                        }
                        *pid = (pid_t) v;
                        r = set_mode(mode, &given, MODE_RELOAD, "--reload");
                        break;
                }
                case ARG_STATUS:
                        r = set_mode(mode, &given, MODE_STATUS, "--status");
                        break;
                case ARG_JSON:
                        *json = true;
                        break;
                case ARG_RESTORE:
                        r = set_mode(mode, &given, MODE_RESTORE, "--restore");
                        break;
                case ARG_VERIFY:
                        r = set_mode(mode, &given, MODE_VERIFY, "--verify");
                        break;
                case 'v':
                        *level = LOG_DEBUG;
                        break;
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("hvtuned %s\n", HVTUNED_VERSION);
                        return 0;
                default:
                        return -EINVAL;
                }

        if (r < 0)
                return r;
        /* --dry-run alone is --once's; with --restore, a restore that writes nothing. */
        if ((d->apply_flags & HVT_APPLY_DRY_RUN) && *mode == MODE_DAEMON)
                *mode = MODE_ONCE;
        if ((d->apply_flags & HVT_APPLY_DRY_RUN) && (*mode == MODE_STATUS || *mode == MODE_RELOAD || *mode == MODE_VERIFY)) {
                fprintf(stderr, "hvtuned: --dry-run goes with --once or --restore\n");
                return -EINVAL;
        }
        if (*json && *mode != MODE_STATUS && *mode != MODE_VERIFY) {
                fprintf(stderr, "hvtuned: --json goes with --status or --verify\n");
                return -EINVAL;
        }
        if (optind < argc) {
                _cleanup_free_ char *shown = hvt_escape_dup(argv[optind]);

                fprintf(stderr, "hvtuned: unexpected argument '%s' (see --help)\n", strna(shown));
                return -EINVAL;
        }
        return 1;
}

/* A usage error of a command line that asks --verify exits 4, "status unknown" as LSB's
 * status action has it: a monitor must not read a typo beside it as 1, "differs". Looked for
 * in argv itself, as getopt stops at the first error, which may come before it. */
static bool verify_given(int argc, char *argv[]) {
        /* getopt_long takes an unambiguous abbreviation: "--veri" is the shortest (--verbose,
         * --version). */
        for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
                if (strlen(argv[i]) >= strlen("--veri") && strncmp(argv[i], "--verify", strlen(argv[i])) == 0)
                        return true;
        return false;
}

static int run_once(struct hvt_daemon *d) {
        char status[sizeof(d->status_sent)], nvme[192];
        int r;

        r = hvt_enumerate(d, NULL, NULL);
        if (r < 0)
                return r;
        hvt_pass_driver(d);
        hvt_status_format(d, status, sizeof(status));
        hvt_log_info(&d->log, "%s%s", status, d->apply_flags & HVT_APPLY_DRY_RUN ? " (dry run, nothing written)" : "");
        /* A line of the summary's, not a part of STATUS=: what the controllers hold does not
         * change while hvtuned runs, and each controller has its journal entry. */
        hvt_host_format_nvme_status(d, nvme, sizeof(nvme));
        if (*nvme)
                hvt_log_info(&d->log, "%s", nvme);
        return 0;
}

/* --check-config reads the file, not the machine: it runs where the file is written, often
 * on no VM of the size it is for, and a tag depth differs by size (633 at 8 vCPUs, 2534 at 32).
 * What a file breaks on every machine is said; what this machine's disks bound, --dry-run
 * says. A warning: the file is valid, the kernel is what refuses. */
static void check_config_bounds(const struct hvt_daemon *d) {
        const struct hvt_config *c = d->config;
        char why[384], at[PATH_MAX + 32];

        if (hvt_bound_setting(&c->settings[HVT_ATTR_NR_REQUESTS], &c->settings[HVT_ATTR_SCHEDULER], why,
                              sizeof(why)) > 0) {
                hvt_origin_format(&c->origin[HVT_ATTR_NR_REQUESTS], at, sizeof(at));
                (void) hvt_log_struct(&d->log, LOG_WARNING, 0, NULL, NULL, "%s: %s", at, why);
        }
        for (size_t i = 0, n = 0; i < c->n_overrides; i++, n++) {
                const struct hvt_override *o = &c->overrides[i];
                const struct hvt_setting *sched = o->settings[HVT_ATTR_SCHEDULER].set ? &o->settings[HVT_ATTR_SCHEDULER] :
                                                  &c->settings[HVT_ATTR_SCHEDULER];

                /* Counted from 0 in each file, as a refused override is (override[N]). */
                if (i > 0 && o->at.file != c->overrides[i - 1].at.file)
                        n = 0;
                if (hvt_bound_setting(&o->settings[HVT_ATTR_NR_REQUESTS], sched, why, sizeof(why)) <= 0)
                        continue;
                hvt_origin_format(&o->origin[HVT_ATTR_NR_REQUESTS], at, sizeof(at));
                (void) hvt_log_struct(&d->log, LOG_WARNING, 0, NULL, NULL, "%s: override[%zu].%s", at, n, why);
        }
}

int main(int argc, char *argv[]) {
        struct hvt_daemon d = { .config_path = HVTUNED_CONFIG_PATH, .state_fd = -EBADF, .lock_fd = -EBADF,
                                .notify = HVT_NOTIFY_NULL };
        enum mode mode = MODE_DAEMON;
        int level = LOG_INFO, r, ret;
        pid_t pid = 0;
        bool json = false;

        /* A log line to a stderr nobody reads any more (`hvtuned --once 2>&1 | head -3`) must
         * not kill the process between a write and its restore: EPIPE instead, which log.c
         * takes as "no more stderr", and --status as a reader that had enough (show.c). A
         * service has it ignored already (IgnoreSIGPIPE=). */
        (void) signal(SIGPIPE, SIG_IGN);

        r = parse_argv(argc, argv, &d, &mode, &level, &pid, &json);
        if (r < 0 && verify_given(argc, argv))
                return HVT_VERIFY_UNKNOWN;
        if (r <= 0)
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        /* systemctl reload or kill -s USR1 during a start: for the loop, not the default
         * action. Before anything else, as the daemon can be signalled from its first moment. */
        if (mode == MODE_DAEMON && hvt_loop_block_signals() < 0) {
                fprintf(stderr, "hvtuned: cannot block signals: %m\n");
                return EXIT_FAILURE;
        }
        /* Every other mode runs to its end: a --once or --restore holds the runtime directory
         * as the daemon does, and a SIGHUP meant for a reload (or the hangup of the terminal it
         * ran from) must not end it between a write and its record, nor a SIGUSR1 meant for
         * a dump. */
        if (mode != MODE_DAEMON) {
                (void) signal(SIGHUP, SIG_IGN);
                (void) signal(SIGUSR1, SIG_IGN);
        }
        if (mode == MODE_RELOAD) {
                char dir[4096];

                /* ExecReload= runs with the service's RUNTIME_DIRECTORY and stderr. Its lines go
                 * to that stream, not to journald's socket: a datagram read after this short
                 * process has exited can no longer be told to be the unit's, and
                 * systemctl status would not show it; the stream was when it was opened. */
                hvt_log_init(&d.log, level, false);
                hvt_rundir_path(dir, sizeof(dir));
                r = hvt_reload_request(&d.log, dir, pid);
                hvt_log_done(&d.log);
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        }

        if (mode == MODE_STATUS) {
                /* stdout is the report, which show.c writes: every line of the log is a
                 * diagnostic here, on stderr (-v's info and debug too, never in the JSON). */
                hvt_log_init(&d.log, level == LOG_DEBUG ? LOG_DEBUG : LOG_WARNING, false);
                r = hvt_show_status(&d, json);
                hvt_daemon_done(&d);
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        }

        if (mode == MODE_VERIFY) {
                /* As --status: errors on stderr, the report on stdout; -v is every attribute. */
                hvt_log_init(&d.log, LOG_WARNING, false);
                ret = hvt_verify(&d, json, level == LOG_DEBUG);
                hvt_daemon_done(&d);
                return ret;
        }

        if (mode == MODE_RESTORE) {
                /* The records say what goes back, not the configuration: a file that no longer
                 * loads must not keep the originals out. Its lines split as --once's. */
                hvt_log_init(&d.log, level, false);
                hvt_log_report_to_stdout(&d.log);
                d.once = true;
                r = hvt_undo(&d);
                hvt_daemon_done(&d);
                return r < 0 ? EXIT_FAILURE : r > 0 ? EXIT_ATTR_FAILED : EXIT_SUCCESS;
        }

        d.once = mode != MODE_DAEMON;
        d.kernel_version = hvt_writer_kernel_version();
        /* --once and --check-config answer the person who ran them: the report on stdout, the
         * diagnostics on stderr (log.c). The daemon's lines all go to the journal, or stderr. */
        hvt_log_init(&d.log, level, mode == MODE_DAEMON);
        if (mode != MODE_DAEMON)
                hvt_log_report_to_stdout(&d.log);

        r = hvt_load_config(&d);
        if (mode == MODE_CHECK_CONFIG) {
                if (r >= 0)
                        check_config_bounds(&d);
                if (r >= 0) {
                        char read[PATH_MAX + 64];

                        hvt_config_describe(d.config, read, sizeof(read));
                        hvt_log_info(&d.log, "%s: valid", read);
                        /* The listing is the command's output too: on stdout, after the verdict
                         * (written already: log.c writes with write(2), not through stdio). */
                        hvt_config_show(d.config, stdout);
                }
                ret = r < 0 ? EXIT_CONFIG : EXIT_SUCCESS;
        } else if (r < 0)
                ret = EXIT_CONFIG;
        else if (!(d.udev = udev_new())) {
                (void) hvt_log_errno(&d.log, LOG_ERR, -ENOMEM, "Cannot create a udev context: %m");
                ret = EXIT_FAILURE;
        } else if (mode == MODE_ONCE) {
                /* A dry run touches nothing, records included: originals stay in memory. */
                r = d.apply_flags & HVT_APPLY_DRY_RUN ? 0 : hvt_rundir_open(&d);
                if (r >= 0)
                        r = run_once(&d);
                ret = r < 0 ? EXIT_FAILURE : d.any_failed ? EXIT_ATTR_FAILED : EXIT_SUCCESS;
        } else {
                r = hvt_rundir_open(&d);
                if (r >= 0)
                        r = hvt_loop_run(&d);
                ret = r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        }

        hvt_daemon_done(&d);
        return ret;
}
