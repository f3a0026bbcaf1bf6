/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: checking the write log against the allowlist (see writes.h).
 *
 * The allowlist is the lib's own table, but the directory is judged here from the path:
 * queue/ of a block device (a SCSI disk's, in block/, or an NVMe namespace's), the LUN's
 * directory, the module's parameters/, the driver's directory. A name of the right group in the wrong place fails like a name not listed. */
#include <check.h>
#include <fcntl.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attr.h"
#include "harness.h"
#include "writes.h"

const char *writes_log(void) {
        static char path[64];

        if (!*path) {
                int fd;

                snprintf(path, sizeof(path), "/tmp/hvtuned-writes.XXXXXX");
                fd = mkstemp(path);
                ck_assert_int_ge(fd, 0);
                close(fd);
        }
        return path;
}

static bool ends_with(const char *s, size_t len, const char *suffix) {
        size_t n = strlen(suffix);

        return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

/* "0:0:0:1", the directory of a SCSI device. */
static bool is_lun_dir(const char *dir, size_t len) {
        const char *base = dir + len;
        unsigned a, b, c, d;
        char tail;

        while (base > dir && base[-1] != '/')
                base--;
        return sscanf(base, "%u:%u:%u:%u%c", &a, &b, &c, &d, &tail) == 5 && tail == '/';
}

/* ".../nvme0n2/queue": the queue of an NVMe namespace, below its controller or (a multipath
 * head) its subsystem. Never a hidden path device's ("nvme0c0n2", written through its head
 * only) nor anything else's. */
static bool is_nvme_queue_dir(const char *dir, size_t len) {
        const char *base;
        unsigned a, b;
        int n = -1;

        if (!ends_with(dir, len, "/queue"))
                return false;
        len -= strlen("/queue");
        base = dir + len;
        while (base > dir && base[-1] != '/')
                base--;
        return sscanf(base, "nvme%un%u/queue%n", &a, &b, &n) == 2 && n == (int) (dir + len - base) + 6;
}

/* The group whose directory dir (the path up to its last '/') is, or -1. */
static int dir_group(const char *path, size_t len) {
        if (ends_with(path, len, "/queue") && (strstr(path, "/block/") || is_nvme_queue_dir(path, len)))
                return HVT_GROUP_QUEUE;
        if (ends_with(path, len, "/module/hv_storvsc/parameters"))
                return HVT_GROUP_MODULE;
        if (ends_with(path, len, "/bus/vmbus/drivers/hv_storvsc"))
                return HVT_GROUP_DRIVER;
        if (is_lun_dir(path, len))
                return HVT_GROUP_DEVICE;
        return -1;
}

/* path as hvtuned saw it: the testbed's root taken off. NULL when not below /sys. */
static const char *sysfs_path(const char *path) {
        const char *root = getenv("UMOCKDEV_DIR");

        if (root && strncmp(path, root, strlen(root)) == 0)
                path += strlen(root);
        return strncmp(path, "/sys/", 5) == 0 ? path : NULL;
}

static bool allowlisted(const char *path) {
        const char *p = sysfs_path(path), *name;
        int group;

        if (!p || !(name = strrchr(p, '/')))
                return false;
        group = dir_group(p, (size_t) (name - p));
        return group >= 0 && hvt_attr_lookup(group, name + 1) >= 0;
}

/* umockdev's preload keeps files of its own beside the testbed's /sys (event8: a socket of
 * its uevent emulation), and removes them from within hvtuned. hvtuned cannot name them. */
static bool umockdev_own(const char *path) {
        const char *root = getenv("UMOCKDEV_DIR");
        size_t n = root ? strlen(root) : 0;

        return root && strncmp(path, root, n) == 0 && path[n] == '/' && strncmp(path + n, "/sys/", 5) != 0;
}

static bool record_path(const char *runtime, const char *path) {
        size_t n = strlen(runtime);

        return strncmp(path, runtime, n) == 0 && path[n] == '/' && !strchr(path + n + 1, '/');
}

/* A temporary of a record (lib/fs-util.c): ".#hvtuned.NAME.0123456789abcdef". hvtuned opens
 * nothing else in the runtime directory for writing: a record is only ever renamed into
 * place, never written where it is found. The pattern is restated here, not taken from
 * fs-util.c: a test that used its code would pass whatever name that code made. */
static bool temporary_path(const char *runtime, const char *path) {
        const char *name = path + strlen(runtime) + 1;
        size_t n;

        if (!record_path(runtime, path) || strncmp(name, ".#hvtuned.", 10) != 0)
                return false;
        n = strlen(name);
        return n >= 10 + 2 + 16 && name[n - 17] == '.' && strspn(name + n - 16, "0123456789abcdef") == 16;
}

/* A file of a directory a test named for the metrics file (metrics_file in hvtuned.conf): a
 * colon-separated list, for a test that moves the directory or names another. */
static bool metrics_path(const char *path) {
        const char *dirs = getenv("HVTUNED_TEST_METRICS_DIR");
        g_auto(GStrv) v = dirs ? g_strsplit(dirs, ":", -1) : NULL;

        for (char **dir = v; dir && *dir; dir++)
                if (**dir && record_path(*dir, path))
                        return true;
        return false;
}

int writes_verify(const char *log, const char *runtime, char **why) {
        g_autoptr(GHashTable) pending = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        g_auto(GStrv) lines = g_strsplit(log, "\n", -1);
        int checked = 0;

        *why = NULL;
        for (char **l = lines; *l && **l && !*why; l++) {
                g_auto(GStrv) w = g_strsplit(*l, " ", 3);
                const char *what = w[0], *a = w[1], *b = a ? w[2] : NULL;

                if (!a)
                        *why = g_strdup_printf("bad write log line \"%s\"", *l);
                else if (strcmp(what, "open") == 0 && allowlisted(a))
                        g_hash_table_insert(pending, g_strdup(a), GINT_TO_POINTER(1));
                else if (strcmp(what, "write") == 0 && allowlisted(a)) {
                        if (!b || !hvt_token_valid(b))
                                *why = g_strdup_printf("wrote \"%s\" to %s: not a plain token", b ? b : "", a);
                        else if (!g_hash_table_remove(pending, a))
                                *why = g_strdup_printf("a second write to %s in one open", a);
                        checked++;
                } else if (strcmp(what, "rename") == 0 && a && b && metrics_path(a) && metrics_path(b))
                        continue;
                else if (strcmp(what, "unlink") == 0 && metrics_path(a))
                        continue;
                else if (strcmp(what, "rename") == 0) {
                        if (!b || !temporary_path(runtime, a) || !record_path(runtime, b) || temporary_path(runtime, b))
                                *why = g_strdup_printf("renamed %s to %s: not a record's temporary into place in %s", a,
                                                       b ? b : "", runtime);
                } else if (strcmp(what, "unlink") == 0 && umockdev_own(a))
                        continue;
                /* stderr's stand-in once its reader is gone (daemon/log.c). */
                else if (strcmp(what, "open") == 0 && strcmp(a, "/dev/null") == 0)
                        continue;
                else if (strcmp(what, "unlink") == 0) {
                        if (!record_path(runtime, a) && !metrics_path(a))
                                *why = g_strdup_printf("\"%s\": neither an allowlisted attribute nor a record in %s",
                                                       *l, runtime);
                } else if (!(strcmp(what, "open") == 0 || strcmp(what, "write") == 0) ||
                           (!temporary_path(runtime, a) && !metrics_path(a)))
                        *why = g_strdup_printf("\"%s\": neither an allowlisted attribute nor a record's temporary "
                                               "(.#hvtuned.NAME.<16 hex digits>) in %s", *l, runtime);
        }
        return *why ? -1 : checked;
}

/* Attribute writes checked so far in this test process. */
static unsigned checked_total;

unsigned writes_checked(void) {
        return checked_total;
}

void writes_check(const char *runtime) {
        g_autofree char *text = NULL, *why = NULL;
        int n;

        ck_assert(g_file_get_contents(writes_log(), &text, NULL, NULL));
        n = writes_verify(text, runtime, &why);
        ck_assert_msg(n >= 0, "hvtuned wrote where it may not: %s", why);
        ck_assert_int_eq(truncate(writes_log(), 0), 0);
        checked_total += (unsigned) n;
}
