/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: failing the daemon's sends to the service manager, the ways a kernel short of memory
 * or an interrupted call fail them.
 *
 * HVTUNED_TEST_NOTIFY_FAULTS is a comma-separated list of ERRNO:COUNT:NEEDLE: the first COUNT
 * sendmsg() calls on a socket connected to $NOTIFY_SOCKET whose datagram holds NEEDLE
 * ("READY=1", "RELOADING=1", "STOPPING=1") fail with ERRNO (a name: ENOBUFS, ENOMEM, EINTR,
 * EAGAIN) and send nothing; each rule counts on its own. The notify socket is told by its
 * peer's address, not by a count of calls, so sends of umockdev's or of the journal's never
 * use up a rule. hvtuned sends its notifications with sendmsg() alone (daemon/dgram.c). A bad
 * list aborts the process: a test must not pass on a fault that was never injected. Test code
 * only. */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

typedef ssize_t (*sendmsg_fn)(int, const struct msghdr *, int);

#define RULES_MAX 8

static struct rule {
        int error;
        unsigned left;
        char needle[64];
} rules[RULES_MAX];
static size_t n_rules;
static bool parsed;

static int errno_of(const char *name) {
        static const struct { const char *name; int value; } known[] = {
                { "ENOBUFS", ENOBUFS }, { "ENOMEM", ENOMEM }, { "EINTR", EINTR }, { "EAGAIN", EAGAIN },
        };

        for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
                if (strcmp(name, known[i].name) == 0)
                        return known[i].value;
        fprintf(stderr, "notify-faults: unknown errno %s\n", name);
        abort();
}

static void parse(void) {
        const char *list = getenv("HVTUNED_TEST_NOTIFY_FAULTS");
        char *copy, *save = NULL;

        parsed = true;
        if (!list || !*list)
                return;
        copy = strdup(list);
        for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
                char name[16];
                unsigned count;
                int consumed = 0;

                if (n_rules == RULES_MAX || sscanf(item, "%15[A-Z]:%u:%n", name, &count, &consumed) != 2 ||
                    consumed == 0 || strlen(item + consumed) >= sizeof(rules[0].needle) || !item[consumed]) {
                        fprintf(stderr, "notify-faults: bad rule '%s'\n", item);
                        abort();
                }
                rules[n_rules].error = errno_of(name);
                rules[n_rules].left = count;
                strcpy(rules[n_rules].needle, item + consumed);
                n_rules++;
        }
        free(copy);
}

/* Whether fd is connected to $NOTIFY_SOCKET (a path, or "@name" in the abstract namespace). */
static bool to_manager(int fd) {
        const char *want = getenv("NOTIFY_SOCKET");
        struct sockaddr_un sa;
        socklen_t len = sizeof(sa);
        size_t n;

        if (!want || getpeername(fd, (struct sockaddr *) &sa, &len) < 0 || sa.sun_family != AF_UNIX)
                return false;
        n = len - offsetof(struct sockaddr_un, sun_path);
        if (want[0] == '@')
                return n == strlen(want) && sa.sun_path[0] == '\0' && memcmp(sa.sun_path + 1, want + 1, n - 1) == 0;
        return strncmp(sa.sun_path, want, sizeof(sa.sun_path)) == 0;
}

static bool holds(const struct msghdr *msg, const char *needle) {
        char buf[4096];
        size_t n = 0;

        for (size_t i = 0; i < msg->msg_iovlen; i++) {
                size_t take = msg->msg_iov[i].iov_len;

                if (take > sizeof(buf) - 1 - n)
                        take = sizeof(buf) - 1 - n;
                memcpy(buf + n, msg->msg_iov[i].iov_base, take);
                n += take;
        }
        buf[n] = '\0';
        return strstr(buf, needle) != NULL;
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags) {
        static sendmsg_fn real;

        if (!real)
                real = (sendmsg_fn) dlsym(RTLD_NEXT, "sendmsg");
        if (!parsed)
                parse();
        if (n_rules > 0 && to_manager(fd))
                for (size_t i = 0; i < n_rules; i++)
                        if (rules[i].left > 0 && holds(msg, rules[i].needle)) {
                                rules[i].left--;
                                errno = rules[i].error;
                                return -1;
                        }
        return real(fd, msg, flags);
}
