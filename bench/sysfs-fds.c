/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the cost of keeping sysfs attribute fds open, for bench/run --verify: N fds on real
 * sysfs attributes (the paths given, in turn), each read once, as a periodic check with kept
 * fds would hold them; and the time a check spends on an attribute either way.
 *
 *     sysfs-fds N PATH...
 *
 * Steps, each started by a line on stdin and ended by a line on stdout, so that the caller
 * reads the memory of the cgroup it put this process in between them:
 *   "opened E"  N opens with the soft RLIMIT_NOFILE as it came (E: the opens that failed,
 *               and errno of the first), then the rest with it raised to the hard limit;
 *   "read"      each fd read once with pread(2): a kernfs file makes its seq_file buffer
 *               (a page) at its first read, and keeps it until the close;
 *   "times O D K" ns an attribute, each the median of 5 rounds over N: O by its path,
 *               openat + pread + close (a check); D the same below a directory fd opened
 *               and closed a directory (a pass: the paths of one directory come in a row);
 *               K a pread on a kept fd.
 * Then it closes them and exits. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 5

static long long now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void step(const char *text) {
        char line[64];

        printf("%s\n", text);
        fflush(stdout);
        if (!fgets(line, sizeof(line), stdin))
                exit(EXIT_FAILURE);
}

/* Every path's attribute below its directory's fd, opened once for the paths of one directory
 * in a row, as a pass opens queue/: 0, or -1. */
static int read_below_dirs(char **path, int paths, int n) {
        char dir[4096], prev[4096] = "", buf[4096];
        int dfd = -1;

        for (int i = 0; i < n; i++) {
                const char *p = path[i % paths], *name = strrchr(p, '/') + 1;
                int fd;

                snprintf(dir, sizeof(dir), "%.*s", (int) (name - 1 - p), p);
                if (strcmp(dir, prev) != 0) {
                        if (dfd >= 0)
                                close(dfd);
                        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        if (dfd < 0)
                                return -1;
                        memcpy(prev, dir, sizeof(prev));
                }
                fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
                if (fd < 0 || pread(fd, buf, sizeof(buf), 0) < 0)
                        return -1;
                close(fd);
        }
        if (dfd >= 0)
                close(dfd);
        return 0;
}

static int cmp_ll(const void *a, const void *b) {
        long long x = *(const long long *) a, y = *(const long long *) b;

        return (x > y) - (x < y);
}

static long long median(long long v[static ROUNDS]) {
        qsort(v, ROUNDS, sizeof(v[0]), cmp_ll);
        return v[ROUNDS / 2];
}

int main(int argc, char **argv) {
        long long open_ns[ROUNDS], dir_ns[ROUNDS], kept_ns[ROUNDS];
        unsigned failed = 0;
        int first_errno = 0, n, paths, *fds;
        struct rlimit rl;
        char buf[4096], text[128];

        if (argc < 3 || (n = atoi(argv[1])) <= 0) {
                fprintf(stderr, "usage: sysfs-fds N PATH...\n");
                return EXIT_FAILURE;
        }
        paths = argc - 2;
        fds = calloc((size_t) n, sizeof(int));
        if (!fds || getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return EXIT_FAILURE;

        step("ready");
        for (int i = 0; i < n; i++) {
                fds[i] = open(argv[2 + i % paths], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
                if (fds[i] >= 0)
                        continue;
                if (errno != EMFILE || failed++ == 0)
                        first_errno = errno;
                if (errno != EMFILE)
                        return EXIT_FAILURE;
                /* As a daemon keeping them would have to: the soft limit raised to the hard. */
                rl.rlim_cur = rl.rlim_max;
                if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                        return EXIT_FAILURE;
                i--;
        }
        snprintf(text, sizeof(text), "opened %u %s", failed, failed ? strerror(first_errno) : "-");
        step(text);
        for (int i = 0; i < n; i++)
                if (pread(fds[i], buf, sizeof(buf), 0) < 0)
                        return EXIT_FAILURE;
        step("read");

        for (int r = 0; r < ROUNDS; r++) {
                long long t = now_ns();

                for (int i = 0; i < n; i++)
                        if (pread(fds[i], buf, sizeof(buf), 0) < 0)
                                return EXIT_FAILURE;
                kept_ns[r] = (now_ns() - t) / n;
                t = now_ns();
                for (int i = 0; i < n; i++) {
                        int fd = open(argv[2 + i % paths], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

                        if (fd < 0 || pread(fd, buf, sizeof(buf), 0) < 0)
                                return EXIT_FAILURE;
                        close(fd);
                }
                open_ns[r] = (now_ns() - t) / n;
                t = now_ns();
                if (read_below_dirs(argv + 2, paths, n) < 0)
                        return EXIT_FAILURE;
                dir_ns[r] = (now_ns() - t) / n;
        }
        snprintf(text, sizeof(text), "times %lld %lld %lld", median(open_ns), median(dir_ns), median(kept_ns));
        step(text);
        for (int i = 0; i < n; i++)
                close(fds[i]);
        free(fds);
        return EXIT_SUCCESS;
}
