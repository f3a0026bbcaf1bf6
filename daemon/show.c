/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the --status command (see show.h).
 *
 * A running daemon holds an exclusive flock() on the runtime directory (rundir.c): a shared
 * one that cannot be had says it runs, and its state file is read; one that can is dropped at
 * once (a daemon starting meanwhile must not find it taken), and the same classify and policy
 * path as --dry-run says what would be wanted, the records what was found before hvtuned. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "enumerate.h"
#include "fs-util.h"
#include "load.h"
#include "macro.h"
#include "passes.h"
#include "rundir.h"
#include "show.h"
#include "state-file.h"
#include "state-show.h"
#include "status.h"
#include "sysfs.h"

#define PARAM_DIR HVT_DRIVER_SYSPATH "/parameters"
#define DEVICES_DIR "/sys/devices"

static int needs_root(struct hvt_daemon *d, const char *command, const char *what) {
        return hvt_rundir_needs_root(&d->log, command, what);
}

/* The running daemon's state file, parsed into *ret. */
static int read_state(struct hvt_daemon *d, const char *command, int dir_fd, const char *dir, struct hvt_state *ret) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *text = NULL;
        char path[4200], why[256];
        struct stat st;
        int r;

        snprintf(path, sizeof(path), "%s/%s", dir, HVT_STATE_FILE);
        /* Anyone who could write there could answer for the daemon (as for --reload). */
        r = hvt_rundir_check(dir_fd, why, sizeof(why));
        if (r < 0)
                return hvt_log_errno(&d->log, LOG_ERR, r, "hvtuned is running, but %s is not believed: %s", dir, why);
        fd = openat(dir_fd, HVT_STATE_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0 && errno == EACCES)
                return needs_root(d, command, path);
        if (fd < 0 && errno == ENOENT)
                return hvt_log_errno(&d->log, LOG_ERR, -ENOENT, "hvtuned is running (it holds %s) but has published "
                                     "no state: it is starting, is a --once or a --restore, or cannot write there", dir);
        if (fd < 0)
                return hvt_log_errno(&d->log, LOG_ERR, errno, "Cannot open %s: %m", path);
        if (fstat(fd, &st) < 0)
                return hvt_log_errno(&d->log, LOG_ERR, errno, "Cannot check %s: %m", path);
        if (!S_ISREG(st.st_mode))
                return hvt_log_errno(&d->log, LOG_ERR, -EBADMSG, "%s is not a regular file", path);
        r = hvt_check_owner(&st, 0, NULL, why, sizeof(why));
        if (r < 0)
                return hvt_log_errno(&d->log, LOG_ERR, r, "%s is not believed: %s", path, why);
        r = hvt_read_fd(fd, HVT_STATE_MAX, &text);
        if (r < 0)
                return hvt_log_errno(&d->log, LOG_ERR, r, "Cannot read %s: %m", path);
        if ((size_t) r != strlen(text))
                return hvt_log_errno(&d->log, LOG_ERR, -EBADMSG, "%s holds a NUL byte: not a state file", path);
        r = hvt_state_parse(text, ret, why, sizeof(why));
        if (r < 0)
                return hvt_log_errno(&d->log, LOG_ERR, r, "%s: %s", path, why);
        /* An earlier daemon's, killed before it could remove it, while this one starts. */
        if (ret->pid <= 0 || (kill(ret->pid, 0) < 0 && errno == ESRCH)) {
                hvt_state_done(ret);
                return hvt_log_errno(&d->log, LOG_ERR, -ESRCH, "hvtuned is running (it holds %s), but %s is an "
                                     "earlier hvtuned's: it is starting", dir, path);
        }
        return 0;
}

/* Each record's originals into its disk of s (made from d's disks, in their order); an
 * original of an attribute the plan does not manage is one that goes back with its cause. */
static int read_records(struct hvt_daemon *d, int dir_fd, const char *dir, struct hvt_state *s) {
        struct hvt_subject drv = hvt_subject_driver();
        struct hvt_originals o;
        int r;

        for (size_t i = 0; i < s->n_disk && i < d->disks.n; i++) {
                struct hvt_subject subject = hvt_subject_disk(&d->disks.v[i]->disk);
                struct hvt_state_disk *sd = &s->disk[i];

                r = hvt_records_read(dir_fd, &subject, &o);
                if (r == -EACCES)
                        return needs_root(d, "--status", dir);
                if (r == -EBADMSG)
                        (void) hvt_log_errno(&d->log, LOG_WARNING, r, "%s/%s: a damaged record, not shown "
                                             "(the next hvtuned drops it)", dir, subject.name);
                else if (r < 0 && r != -ENOENT)
                        (void) hvt_log_errno(&d->log, LOG_WARNING, r, "%s/%s: cannot read the record: %m", dir,
                                             subject.name);
                if (r < 0)
                        continue;
                for (unsigned id = 0; id < _HVT_ATTR_DISK_MAX; id++) {
                        struct hvt_state_attr *a = NULL;

                        if (!o.value[id].set)
                                continue;
                        for (size_t j = 0; j < sd->n_attr && !a; j++)
                                if (sd->attr[j].id == id)
                                        a = &sd->attr[j];
                        if (!a) {
                                size_t at = 0;

                                /* In id order, which is apply order, as the daemon's slots are. */
                                while (at < sd->n_attr && sd->attr[at].id < id)
                                        at++;
                                memmove(&sd->attr[at + 1], &sd->attr[at], (sd->n_attr - at) * sizeof(sd->attr[0]));
                                sd->n_attr++;
                                a = &sd->attr[at];
                                *a = (struct hvt_state_attr) { .id = id, .role = HVT_STATE_KNOCK_ON, .last = -1 };
                        }
                        (void) hvt_strscpy(a->orig, sizeof(a->orig), o.value[id].text);
                }
        }
        r = hvt_records_read(dir_fd, &drv, &o);
        if (r == -EACCES)
                return needs_root(d, "--status", dir);
        if (r >= 0 && o.value[HVT_ATTR_MAX_HW_QUEUES].set)
                (void) hvt_strscpy(s->driver.orig, sizeof(s->driver.orig), o.value[HVT_ATTR_MAX_HW_QUEUES].text);
        return 0;
}

/* No daemon: the dry run's context, as the daemon would gather it, and the records. */
static int compute_state(struct hvt_daemon *d, int dir_fd, const char *dir, struct hvt_state *ret) {
        char status[sizeof(d->status_sent)];
        int r;

        d->once = true;
        d->apply_flags |= HVT_APPLY_DRY_RUN;
        r = hvt_load_config(d);
        if (r < 0)
                return r;
        d->udev = udev_new();
        if (!d->udev)
                return hvt_log_errno(&d->log, LOG_ERR, -ENOMEM, "Cannot create a udev context: %m");
        r = hvt_enumerate(d, NULL, NULL);
        if (r < 0)
                return r;
        hvt_pass_driver(d);
        hvt_status_format(d, status, sizeof(status));
        r = hvt_state_gather(d, status, ret);
        if (r < 0)
                return hvt_log_errno(&d->log, LOG_ERR, r, "Cannot gather the state: %m");
        ret->running = false;
        ret->pid = 0;
        if (dir_fd >= 0) {
                char why[256];

                /* The daemon would refuse them: whoever may write there could have made them. */
                r = hvt_rundir_check(dir_fd, why, sizeof(why));
                if (r < 0) {
                        (void) hvt_log_errno(&d->log, LOG_WARNING, r, "%s: its records are not believed, %s: no originals shown",
                                             dir, why);
                        return 0;
                }
                r = read_records(d, dir_fd, dir, ret);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Whether the disk's paths from the state file are sysfs's: below /sys/devices, names only,
 * where libudev's syspaths all are (an empty device path opens nothing). The file is root's,
 * but --status is not to open what it names elsewhere: a FIFO would keep it waiting, a device
 * node act on the open. Said when not. */
static bool disk_paths_sysfs(struct hvt_daemon *d, const struct hvt_state_disk *sd) {
        const char *bad = !hvt_sysfs_path_below(DEVICES_DIR, sd->syspath) ? sd->syspath :
                *sd->device_syspath && !hvt_sysfs_path_below(DEVICES_DIR, sd->device_syspath) ? sd->device_syspath :
                NULL;

        if (!bad)
                return true;
        (void) hvt_log_errno(&d->log, LOG_WARNING, -EPERM, "%s: the state file puts it at %s, not below %s: not read",
                             sd->name, bad, DEVICES_DIR);
        return false;
}

/* What sysfs shows now, for each attribute of each disk (a dry run of the values known:
 * reads only, the scheduler's active name as apply finds it) and for the driver's cap. */
static void read_current(struct hvt_daemon *d, struct hvt_state *s) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        for (size_t i = 0; i < s->n_disk; i++) {
                struct hvt_state_disk *sd = &s->disk[i];
                struct hvt_disk disk = { .syspath = sd->syspath, .device_syspath = sd->device_syspath };
                bool sysfs = disk_paths_sysfs(d, sd);
                struct hvt_plan plan = {};
                struct hvt_apply a;

                for (size_t j = 0; j < sd->n_attr; j++) {
                        struct hvt_state_attr *at = &sd->attr[j];
                        const char *v = *at->want ? at->want : *at->orig ? at->orig : at->left;

                        at->current_error = sysfs ? -ENODATA : -EPERM;
                        at->current_outcome = -1;
                        (void) hvt_setting_from_kernel(&plan.want[at->id], at->id, v);
                        /* Judged as the daemon's pass judges it: what the kernel kept of the
                         * want, and a ceiling's lower values, are as wanted. */
                        plan.want[at->id].at_most = *at->want && at->ceiling;
                        (void) hvt_strscpy(plan.kept[at->id], sizeof(plan.kept[at->id]), at->kept);
                }
                if (!sysfs)
                        continue;
                hvt_apply_disk(&disk, &plan, HVT_APPLY_DRY_RUN, NULL, NULL, &a);
                for (size_t j = 0; j < sd->n_attr; j++) {
                        struct hvt_state_attr *at = &sd->attr[j];
                        const struct hvt_result *res = hvt_apply_find(&a, at->id);

                        if (!res)
                                continue;
                        /* A scheduler this kernel does not offer still has one active. */
                        if (res->outcome == HVT_FAILED || (res->outcome == HVT_UNSUPPORTED && !*res->from))
                                at->current_error = res->error > 0 ? -res->error : -EIO;
                        else {
                                (void) hvt_strscpy(at->current, sizeof(at->current), res->from);
                                at->current_error = 0;
                        }
                        if (*at->want && (res->outcome == HVT_UNCHANGED || res->outcome == HVT_WOULD_APPLY))
                                at->current_outcome = (int) res->outcome;
                }
        }
        s->driver.current_error = -ENOENT;
        fd = hvt_sysfs_open_dir(PARAM_DIR);
        r = fd < 0 ? fd : hvt_sysfs_read(fd, hvt_attr_get(HVT_ATTR_MAX_HW_QUEUES)->name, s->driver.current,
                                         sizeof(s->driver.current));
        s->driver.current_error = r < 0 ? r : 0;
}

/* Whether stdout's reader went away (`hvtuned --status | head -1`, `| grep -q`): EPIPE, or,
 * when an earlier write failed and its errno is gone, a pipe whose read end is closed (POLLERR)
 * or a socket whose peer hung up. It had what it wanted: that is no failure of the status, nor
 * one to print. SIGPIPE is ignored (main.c), so this is seen instead of the process dying. */
static bool reader_gone(int r) {
        struct pollfd p = { .fd = STDOUT_FILENO, .events = POLLOUT };

        return r == -EPIPE || (poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)));
}

/* 1: a daemon holds the directory; 0: none does. */
static int daemon_runs(struct hvt_daemon *d, int dir_fd, const char *dir) {
        if (flock(dir_fd, LOCK_SH | LOCK_NB) == 0) {
                (void) flock(dir_fd, LOCK_UN);
                return 0;
        }
        if (errno == EWOULDBLOCK)
                return 1;
        return hvt_log_errno(&d->log, LOG_ERR, errno, "Cannot tell whether hvtuned runs (flock on %s: %m)", dir);
}

/* The state: 1 with the running daemon's, 0 when none runs (then the dry run's and the
 * records' when compute, else nothing); what sysfs shows now read into it. -errno, said. */
static int open_state(struct hvt_daemon *d, const char *command, bool compute, struct hvt_state *ret) {
        _cleanup_close_ int dir_fd = -EBADF;
        char dir[4096];
        int r, runs;

        hvt_rundir_path(dir, sizeof(dir));
        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dir_fd < 0 && errno == EACCES)
                return needs_root(d, command, dir);
        if (dir_fd < 0 && errno != ENOENT)
                return hvt_log_errno(&d->log, LOG_ERR, errno, "Cannot open the runtime directory %s: %m", dir);
        /* Said, not changed: a report writes nothing. */
        if (dir_fd >= 0)
                (void) hvt_rundir_private(&d->log, dir_fd, dir, false);
        runs = dir_fd < 0 ? 0 : daemon_runs(d, dir_fd, dir);
        if (runs < 0)
                return runs;
        if (runs == 0 && !compute)
                return 0;
        r = runs > 0 ? read_state(d, command, dir_fd, dir, ret) : compute_state(d, dir_fd, dir, ret);
        if (r < 0) {
                hvt_state_done(ret);
                return r;
        }
        read_current(d, ret);
        return runs;
}

int hvt_show_running_state(struct hvt_daemon *d, const char *command, struct hvt_state *ret) {
        *ret = (struct hvt_state) {};
        return open_state(d, command, false, ret);
}

int hvt_show_status(struct hvt_daemon *d, bool json) {
        struct hvt_state s = {};
        int r;

        r = open_state(d, "--status", true, &s);
        if (r < 0)
                return r;
        r = json ? hvt_state_show_json(stdout, &s) : hvt_state_show_text(stdout, &s);
        hvt_state_done(&s);
        if (fflush(stdout) != 0)
                r = negative_errno();
        else if (r < 0)
                r = -EIO;  /* a write failed before the last: stdio's error flag, its errno gone */
        if (r < 0 && reader_gone(r))
                return 0;
        if (r < 0)
                return hvt_log_errno(&d->log, LOG_ERR, r, "Cannot write the status: %m");
        return 0;
}
