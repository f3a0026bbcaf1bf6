/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: journald's socket for a test (see journal.h): bound in a private mount namespace,
 * read in a thread, each datagram of the native protocol parsed into its fields. */
#include <check.h>
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "harness.h"
#include "journal.h"

/* The journal's socket, and the entries read from it (GHashTable: field -> first value). */
static int journal_fd = -1;
static pthread_t journal_reader;
static GMutex journal_lock;
static GPtrArray *journal_entries;
static unsigned journal_barriers;

/* One datagram of the native protocol: "FIELD=value\n", or "FIELD\n" + le64 size + data + "\n". */
static GHashTable *parse_entry(const char *p, size_t len) {
        GHashTable *e = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        const char *end = p + len;

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p)), *eq;
                char *name, *value;

                if (!nl)
                        break;
                eq = memchr(p, '=', (size_t) (nl - p));
                if (eq) {
                        name = g_strndup(p, (size_t) (eq - p));
                        value = g_strndup(eq + 1, (size_t) (nl - eq - 1));
                        p = nl + 1;
                } else {
                        uint64_t size;

                        name = g_strndup(p, (size_t) (nl - p));
                        p = nl + 1;
                        ck_assert_int_ge(end - p, 8);
                        memcpy(&size, p, 8);
                        size = le64toh(size);
                        p += 8;
                        ck_assert_uint_ge((uint64_t) (end - p), size + 1);
                        value = g_strndup(p, size);
                        p += size + 1;
                }
                if (g_hash_table_contains(e, name)) {
                        g_free(name);
                        g_free(value);
                } else
                        g_hash_table_insert(e, name, value);
        }
        return e;
}

static void *journal_read(void *userdata) {
        static char buf[256 * 1024];

        (void) userdata;
        for (;;) {
                ssize_t n = recv(journal_fd, buf, sizeof(buf), 0);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return NULL;
                g_mutex_lock(&journal_lock);
                g_ptr_array_add(journal_entries, parse_entry(buf, (size_t) n));
                g_mutex_unlock(&journal_lock);
        }
}

void journal_start(void) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = JOURNAL_SOCKET };

        /* A private /run: the host's journal never sees these entries, nor any other. */
        ck_assert_int_eq(unshare(CLONE_NEWNS), 0);
        ck_assert_int_eq(mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL), 0);
        ck_assert_int_eq(mount("tmpfs", "/run", "tmpfs", 0, "mode=0755"), 0);
        ck_assert_int_eq(mkdir("/run/systemd", 0755), 0);
        ck_assert_int_eq(mkdir(JOURNAL_DIR, 0755), 0);

        journal_entries = g_ptr_array_new_with_free_func((GDestroyNotify) g_hash_table_unref);
        journal_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(journal_fd, 0);
        ck_assert_int_eq(bind(journal_fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        ck_assert_int_eq(pthread_create(&journal_reader, NULL, journal_read, NULL), 0);
        hvtuned_log_to_journal(true);
}

void journal_stop(void) {
        ck_assert_int_eq(shutdown(journal_fd, SHUT_RDWR), 0);
        ck_assert_int_eq(pthread_join(journal_reader, NULL), 0);
        close(journal_fd);
        g_ptr_array_unref(journal_entries);
}

/* Waits until the reader has every entry sent before now: datagrams on one socket are
 * received in the order they were sent, so a marker of the test's own comes after them. */
static void journal_sync(void) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = JOURNAL_SOCKET };
        char marker[64], value[32];
        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        bool seen = false;
        int n;

        snprintf(value, sizeof(value), "%u", ++journal_barriers);
        n = snprintf(marker, sizeof(marker), "TEST_BARRIER=%s\n", value);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(sendto(fd, marker, (size_t) n, 0, (struct sockaddr *) &sa, sizeof(sa)), n);
        close(fd);
        for (int waited = 0; !seen; waited += 10) {
                ck_assert_msg(waited < 20000, "the journal reader did not get marker %s", value);
                usleep(10 * 1000);
                g_mutex_lock(&journal_lock);
                for (size_t i = 0; i < journal_entries->len && !seen; i++)
                        seen = g_strcmp0(g_hash_table_lookup(journal_entries->pdata[i], "TEST_BARRIER"), value) == 0;
                g_mutex_unlock(&journal_lock);
        }
}

const char *journal_field(GHashTable *e, const char *name) {
        const char *v = g_hash_table_lookup(e, name);

        return v ? v : "(none)";
}

GPtrArray *journal_find(size_t from, const char *name, const char *value) {
        GPtrArray *found = g_ptr_array_new();

        journal_sync();
        g_mutex_lock(&journal_lock);
        for (size_t i = from; i < journal_entries->len; i++)
                if (!name || g_strcmp0(g_hash_table_lookup(journal_entries->pdata[i], name), value) == 0)
                        g_ptr_array_add(found, journal_entries->pdata[i]);
        g_mutex_unlock(&journal_lock);
        return found;
}

size_t journal_count(void) {
        size_t n;

        journal_sync();
        g_mutex_lock(&journal_lock);
        n = journal_entries->len;
        g_mutex_unlock(&journal_lock);
        return n;
}
