/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Starts a benchmarked program, so that its time is counted from its exec and not from the
 * bench's fork: the CLOCK_MONOTONIC nanoseconds just before execvp() go to STAMP.
 *
 * With -r ROOT it first gives the program a mount namespace of its own in which ROOT/sys (a
 * umockdev testbed's tree) is bound over /sys: the program then reaches the testbed through
 * plain system calls, without umockdev's preload translating every path, as it reaches
 * sysfs on a guest. Needs CAP_SYS_ADMIN. The bind is private to the namespace; it goes away
 * with the program.
 *
 * With -b SRC:DST (repeatable, needs -r) it binds SRC over DST in that namespace too: the
 * bench gives a program that keeps state of its own (TuneD: /etc/tuned, /run) empty
 * temporary directories there, so that it can neither read nor change the host's.
 *
 * Usage: launch -s STAMP [-r ROOT [-b SRC:DST]...] PROGRAM [ARG...] */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

static int fail(const char *what, const char *arg) {
        fprintf(stderr, "launch: %s %s: %s\n", what, arg, strerror(errno));
        return 127;
}

#define BINDS_MAX 8

static int bind_sys(const char *root, char **binds, size_t n_binds) {
        char sys[4096];

        if ((size_t) snprintf(sys, sizeof(sys), "%s/sys", root) >= sizeof(sys)) {
                errno = ENAMETOOLONG;
                return fail("testbed", root);
        }
        if (unshare(CLONE_NEWNS) < 0)
                return fail("unshare", "CLONE_NEWNS");
        /* Else the bind would propagate to the host's /sys through a shared root. */
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return fail("mount --make-rprivate", "/");
        if (mount(sys, "/sys", NULL, MS_BIND | MS_REC, NULL) < 0)
                return fail("mount --bind", sys);
        for (size_t i = 0; i < n_binds; i++) {
                char *dst = strchr(binds[i], ':');

                if (!dst || dst == binds[i] || !dst[1]) {
                        errno = EINVAL;
                        return fail("bind", binds[i]);
                }
                *dst++ = '\0';
                if (mount(binds[i], dst, NULL, MS_BIND | MS_REC, NULL) < 0)
                        return fail("mount --bind", binds[i]);
        }
        return 0;
}

static int stamp(const char *path) {
        struct timespec ts;
        char buf[32];
        int fd, n;

        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return fail("open", path);
        clock_gettime(CLOCK_MONOTONIC, &ts);
        n = snprintf(buf, sizeof(buf), "%lld\n", (long long) ts.tv_sec * 1000000000LL + ts.tv_nsec);
        if (write(fd, buf, (size_t) n) != n || close(fd) < 0)
                return fail("write", path);
        return 0;
}

int main(int argc, char **argv) {
        const char *stamp_path = NULL, *root = NULL;
        char *binds[BINDS_MAX];
        size_t n_binds = 0;
        int opt, r;

        while ((opt = getopt(argc, argv, "+s:r:b:")) != -1)
                switch (opt) {
                case 's': stamp_path = optarg; break;
                case 'r': root = optarg; break;
                case 'b':
                        if (n_binds == BINDS_MAX)
                                goto usage;
                        binds[n_binds++] = optarg;
                        break;
                default: goto usage;
                }
        if (!stamp_path || optind >= argc || (n_binds > 0 && !root))
                goto usage;
        if (root && (r = bind_sys(root, binds, n_binds)) != 0)
                return r;
        if ((r = stamp(stamp_path)) != 0)
                return r;
        execvp(argv[optind], argv + optind);
        return fail("exec", argv[optind]);
usage:
        fprintf(stderr, "usage: launch -s STAMP [-r ROOT [-b SRC:DST]...] PROGRAM [ARG...]\n");
        return 2;
}
