/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the suspects of neighbours.h, read from the rules directories, tuned's pid file and
 * active profile, and /proc under a root.
 *
 * A rules file is
 * followed where it is a symlink (udev follows them, and a link to /dev/null masks), opened
 * non-blocking (a FIFO under a rules name would hold the daemon) and read only when regular. */
#include <ctype.h>
#include <limits.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hvtuned-config.h"
#include "fs-util.h"
#include "macro.h"
#include "neighbours.h"

const char *const hvt_udev_rules_dirs[4] = {
        "/etc/udev/rules.d",
        "/run/udev/rules.d",
        "/usr/lib/udev/rules.d",
        "/lib/udev/rules.d",
};

static bool key_eq(const char *key, size_t len, const char *dir, const char *name) {
        size_t d = dir ? strlen(dir) : 0, n = strlen(name);

        if (dir)
                return len == d + 1 + n && memcmp(key, dir, d) == 0 && key[d] == '/' && memcmp(key + d + 1, name, n) == 0;
        return len == n && memcmp(key, name, n) == 0;
}

static bool key_names(const char *key, size_t len, enum hvt_attr_id id) {
        const struct hvt_attr *a = hvt_attr_get(id);

        if (a->group == HVT_GROUP_QUEUE)
                return key_eq(key, len, "queue", a->name) ||
                       (id == HVT_ATTR_READ_AHEAD_KB && key_eq(key, len, "bdi", a->name));
        if (a->group == HVT_GROUP_DEVICE)
                return key_eq(key, len, "device", a->name) || key_eq(key, len, NULL, a->name);
        return false;
}

bool hvt_rule_key_is(const char *key, size_t len, enum hvt_attr_id id) {
        if (key_names(key, len, id))
                return true;
        if (id == HVT_ATTR_TIMEOUT)
                return key_names(key, len, HVT_ATTR_IO_TIMEOUT);
        if (id == HVT_ATTR_IO_TIMEOUT)
                return key_names(key, len, HVT_ATTR_TIMEOUT);
        return false;
}

/* Whether one physical line, of a logical line that is no comment, assigns id. */
static bool line_assigns(const char *p, const char *end, enum hvt_attr_id id) {
        static const char token[] = "ATTR{";
        const size_t tlen = sizeof(token) - 1;

        for (const char *at = p; at + tlen <= end; at++) {
                const char *key, *close, *op;

                if (memcmp(at, token, tlen) != 0)
                        continue;
                /* A key of its own, not the end of another's name. */
                if (at > p && !isspace((unsigned char) at[-1]) && at[-1] != ',')
                        continue;
                key = at + tlen;
                close = memchr(key, '}', (size_t) (end - key));
                if (!close)
                        return false;
                op = close + 1;
                while (op < end && (*op == ' ' || *op == '\t'))
                        op++;
                /* "=" or ":=" assigns; "==" and "!=" match. */
                if (((op < end && *op == '=' && (op + 1 >= end || op[1] != '=')) ||
                     (op + 1 < end && op[0] == ':' && op[1] == '=')) &&
                    hvt_rule_key_is(key, (size_t) (close - key), id))
                        return true;
                at = close;
        }
        return false;
}

unsigned hvt_rules_assign_line(const char *text, size_t len, enum hvt_attr_id id) {
        const char *p = text, *end = text + len;
        bool continued = false, comment = false;
        unsigned line = 0, found = 0;

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p)), *eol = nl ? nl : end, *s = p;

                line++;
                /* udev joins a line ending in a backslash with the next, and skips a logical
                 * line whose first character (after blanks) is '#'. */
                if (!continued) {
                        while (s < eol && isspace((unsigned char) *s))
                                s++;
                        comment = s < eol && *s == '#';
                }
                if (!comment && line_assigns(p, eol, id))
                        found = line;
                continued = eol > p && eol[-1] == '\\';
                p = nl ? nl + 1 : end;
        }
        return found;
}

/* The start of name, read into buf (at most size - 1 bytes, NUL-terminated): its length, or
 * -errno; -EBADMSG for a file that is not regular (a link to /dev/null, a FIFO). */
static ssize_t read_prefix(int dir_fd, const char *name, int flags, char *buf, size_t size) {
        _cleanup_close_ int fd = openat(dir_fd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | flags);
        struct stat st;
        size_t have = 0;

        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EBADMSG;
        while (have < size - 1) {
                ssize_t n = read(fd, buf + have, size - 1 - have);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        break;
                have += (size_t) n;
        }
        buf[have] = '\0';
        return (ssize_t) have;
}

struct rules_file {
        const char *dir;   /* one of hvt_udev_rules_dirs */
        int dir_fd;
        char *name;
};

static int by_name(const void *a, const void *b) {
        return strcmp(((const struct rules_file *) a)->name, ((const struct rules_file *) b)->name);
}

static bool listed(const struct rules_file *f, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(f[i].name, name) == 0)
                        return true;
        return false;
}

static bool ends_with(const char *s, const char *suffix) {
        size_t n = strlen(s), m = strlen(suffix);

        return n > m && strcmp(s + n - m, suffix) == 0;
}

/* Adds the *.rules of dir not hidden by an earlier directory's; *n stays at most max. */
static void list_dir(int dir_fd, const char *dir, struct rules_file *f, size_t *n, size_t max) {
        DIR *d;
        struct dirent *de;

        if (hvt_opendirat(dir_fd, ".", &d) < 0)
                return;
        while (*n < max && (de = readdir(d))) {
                if (de->d_name[0] == '.' || !ends_with(de->d_name, ".rules") || listed(f, *n, de->d_name))
                        continue;
                f[*n] = (struct rules_file) { .dir = dir, .dir_fd = dir_fd, .name = strdup(de->d_name) };
                if (!f[*n].name)
                        break;
                (*n)++;
        }
        closedir(d);
}

/* root's path + an absolute path: opened by its whole name, so that a test's preload can
 * stand a directory of its own in for one of a system's. */
static int open_under(const char *root, const char *path, int flags) {
        char buf[PATH_MAX];

        if ((size_t) snprintf(buf, sizeof(buf), "%s%s", root, path) >= sizeof(buf))
                return -ENAMETOOLONG;
        return open(buf, flags | O_CLOEXEC);
}

static void find_rule(const char *root, enum hvt_attr_id id, struct hvt_suspects *ret) {
        int fds[ELEMENTSOF(hvt_udev_rules_dirs)];
        _cleanup_free_ struct rules_file *f = calloc(HVT_RULES_FILES_MAX, sizeof(*f));
        _cleanup_free_ char *text = malloc(HVT_RULES_FILE_READ_MAX + 1);
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(fds); i++) {
                fds[i] = open_under(root, hvt_udev_rules_dirs[i], O_RDONLY | O_DIRECTORY);
                if (fds[i] >= 0 && f && text)
                        list_dir(fds[i], hvt_udev_rules_dirs[i], f, &n, HVT_RULES_FILES_MAX);
        }
        if (n > 0)
                qsort(f, n, sizeof(*f), by_name);
        /* In udev's order: the last file that assigns it has the last word. A masked one
         * (empty, a link to /dev/null) reads as nothing. */
        for (size_t i = 0, total = 0; i < n && total < HVT_RULES_READ_TOTAL_MAX; i++) {
                ssize_t len = read_prefix(f[i].dir_fd, f[i].name, 0, text, HVT_RULES_FILE_READ_MAX + 1);
                unsigned line = len > 0 ? hvt_rules_assign_line(text, (size_t) len, id) : 0;

                total += len > 0 ? (size_t) len : 0;

                if (line > 0) {
                        snprintf(ret->rule, sizeof(ret->rule), "%s/%s", f[i].dir, f[i].name);
                        ret->rule_line = line;
                }
        }
        for (size_t i = 0; i < n; i++)
                free(f[i].name);
        for (size_t i = 0; i < ELEMENTSOF(fds); i++)
                if (fds[i] >= 0)
                        close(fds[i]);
}

static const char *base_name(const char *s) {
        const char *slash = strrchr(s, '/');

        return slash ? slash + 1 : s;
}

/* Whether pid's command line has an argument whose last name is name, or one that starts with
 * prefix: the interpreter runs the script, so argv[0] is python's. */
static bool runs(int proc_fd, const char *pid, const char *name, const char *prefix) {
        char path[32], buf[4096];
        ssize_t len;

        snprintf(path, sizeof(path), "%s/cmdline", pid);
        len = read_prefix(proc_fd, path, O_NOFOLLOW, buf, sizeof(buf));
        for (ssize_t at = 0; len > 0 && at < len; at += (ssize_t) strlen(buf + at) + 1) {
                const char *b = base_name(buf + at);

                if ((name && strcmp(b, name) == 0) || (prefix && strncmp(b, prefix, strlen(prefix)) == 0))
                        return true;
        }
        return false;
}

/* Whether TuneD's active profile is hvtuned's own: TuneD writes the names it runs to
 * active_profile, space-separated, at each profile load. hvtuned's profile turns the disk plugin
 * off, so that TuneD then writes no disk's attribute; merged with another profile it may. */
static bool runs_hvtuned_profile(const char *root) {
        _cleanup_close_ int etc_fd = open_under(root, "/etc/tuned", O_RDONLY | O_DIRECTORY);
        char buf[256];
        ssize_t len;

        if (etc_fd < 0 || (len = read_prefix(etc_fd, "active_profile", O_NOFOLLOW, buf, sizeof(buf))) <= 0)
                return false;
        while (len > 0 && isspace((unsigned char) buf[len - 1]))
                buf[--len] = '\0';
        return strcmp(buf, HVTUNED_TUNED_PROFILE) == 0;
}

/* tuned writes its pid file at start and removes it at stop; one left by a crash names a
 * process that is gone, or another program's. */
static pid_t find_tuned(const char *root, int proc_fd) {
        _cleanup_close_ int run_fd = open_under(root, "/run/tuned", O_RDONLY | O_DIRECTORY);
        char buf[32];
        long pid;
        char *end;

        if (proc_fd < 0 || run_fd < 0 || read_prefix(run_fd, "tuned.pid", O_NOFOLLOW, buf, sizeof(buf)) <= 0)
                return 0;
        pid = strtol(buf, &end, 10);
        if (end == buf || pid <= 0 || pid > INT32_MAX || (*end && !isspace((unsigned char) *end)))
                return 0;
        snprintf(buf, sizeof(buf), "%ld", pid);
        if (!runs(proc_fd, buf, "tuned", NULL) || runs_hvtuned_profile(root))
                return 0;
        return (pid_t) pid;
}

/* The daemon runs as "python3 -u /usr/sbin/waagent -daemon", its extension handler as
 * ".../WALinuxAgent-2.x-py3.x.egg -run-exthandlers". */
static pid_t find_waagent(int proc_fd) {
        unsigned seen = 0;
        pid_t found = 0;
        struct dirent *de;
        DIR *d;

        if (proc_fd < 0 || hvt_opendirat(proc_fd, ".", &d) < 0)
                return 0;
        while (!found && seen < HVT_PROCESSES_MAX && (de = readdir(d))) {
                if (!isdigit((unsigned char) de->d_name[0]))
                        continue;
                seen++;
                if (runs(proc_fd, de->d_name, "waagent", "WALinuxAgent"))
                        found = (pid_t) atol(de->d_name);
        }
        closedir(d);
        return found;
}

int hvt_suspects_find(const char *root, enum hvt_attr_id id, struct hvt_suspects *ret) {
        _cleanup_close_ int proc_fd = -EBADF;
        struct stat st;

        *ret = (struct hvt_suspects) {};
        if (stat(root, &st) < 0)
                return negative_errno();
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        if ((unsigned) id >= _HVT_ATTR_DISK_MAX)
                return 0;
        /* "/" is no prefix: "/etc/...", not "//etc/...". */
        if (strcmp(root, "/") == 0)
                root = "";
        find_rule(root, id, ret);
        proc_fd = open_under(root, "/proc", O_RDONLY | O_DIRECTORY);
        if (id == HVT_ATTR_SCHEDULER || id == HVT_ATTR_READ_AHEAD_KB)
                ret->tuned = find_tuned(root, proc_fd);
        if (id == HVT_ATTR_TIMEOUT || id == HVT_ATTR_IO_TIMEOUT)
                ret->waagent = find_waagent(proc_fd);
        return 0;
}

void hvt_suspects_format(const struct hvt_suspects *s, char *buf, size_t size) {
        size_t off = 0;

        buf[0] = '\0';
        if (*s->rule)
                off += (size_t) snprintf(buf, size, "udev rule %s:%u", s->rule, s->rule_line);
        if (s->tuned > 0 && off < size)
                off += (size_t) snprintf(buf + off, size - off, "%stuned (pid %d)", off ? ", " : "", (int) s->tuned);
        if (s->waagent > 0 && off < size)
                (void) snprintf(buf + off, size - off, "%sWALinuxAgent (pid %d)", off ? ", " : "", (int) s->waagent);
}
