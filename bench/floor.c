/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The floor: replays the filesystem calls of one recorded hvtuned run (bench/ops.py wrote
 * them) and does nothing else, so that hvtuned's time over it is what hvtuned adds to the
 * sysfs work it cannot avoid. The script is parsed before the first call; with -t the time
 * that took is printed (microseconds) for the bench to take off.
 *
 * Usage: floor [-t] OPS */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_FD 65536

struct op {
        char kind;
        int fd, dirfd, newdirfd;
        long a, b;              /* flags, mode, count, offset, whence */
        char *path, *path2;     /* into the script's text */
        unsigned char *data;    /* W: the bytes, a of them */
};

static int fdmap[MAX_FD];

static int real_fd(int fd) {
        if (fd == AT_FDCWD)
                return AT_FDCWD;
        return fd >= 0 && fd < MAX_FD ? fdmap[fd] : -1;
}

static char *field(char **p) {
        char *f = *p, *tab;

        if (!f)
                return (char *) "";
        tab = strpbrk(f, "\t\n");
        if (tab && *tab == '\t') {
                *tab = '\0';
                *p = tab + 1;
        } else {
                if (tab)
                        *tab = '\0';
                *p = NULL;
        }
        return f;
}

static long num(char **p) {
        return strtol(field(p), NULL, 10);
}

static unsigned char *unhex(char *hex, long *len) {
        size_t n = strlen(hex) / 2;
        unsigned char *out = (unsigned char *) hex;  /* decoded in place: it only shrinks */

        for (size_t i = 0; i < n; i++) {
                char byte[3] = { hex[2 * i], hex[2 * i + 1], 0 };

                out[i] = (unsigned char) strtoul(byte, NULL, 16);
        }
        *len = (long) n;
        return out;
}

static int parse(char *text, struct op **ret, size_t *n_ret) {
        size_t n = 0, cap = 1024;
        struct op *ops = malloc(cap * sizeof(*ops));

        if (!ops)
                return -ENOMEM;
        for (char *line = text, *next; line && *line; line = next) {
                struct op o = { .kind = line[0] };
                char *p = line + 2;

                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                switch (o.kind) {
                case 'O': o.fd = (int) num(&p); o.dirfd = (int) num(&p); o.a = num(&p); o.b = num(&p); o.path = field(&p); break;
                case 'R': case 'G': o.fd = (int) num(&p); o.a = num(&p); break;
                case 'P': case 'K': o.fd = (int) num(&p); o.a = num(&p); o.b = num(&p); break;
                case 'W': o.fd = (int) num(&p); o.data = unhex(field(&p), &o.a); break;
                case 'C': case 'F': case 'Y': o.fd = (int) num(&p); break;
                case 'L': o.dirfd = (int) num(&p); o.path = field(&p); break;
                case 'S': case 'U': o.dirfd = (int) num(&p); o.path = field(&p); o.a = num(&p); break;
                case 'A': o.dirfd = (int) num(&p); o.path = field(&p); o.a = num(&p); o.b = num(&p); break;
                case 'N': o.dirfd = (int) num(&p); o.path = field(&p); o.newdirfd = (int) num(&p); o.path2 = field(&p); break;
                case 'M': o.path = field(&p); o.a = num(&p); break;
                default:
                        fprintf(stderr, "floor: bad line \"%s\"\n", line);
                        free(ops);
                        return -EINVAL;
                }
                if (n == cap) {
                        struct op *more = realloc(ops, 2 * cap * sizeof(*ops));

                        if (!more) {
                                free(ops);
                                return -ENOMEM;
                        }
                        ops = more;
                        cap *= 2;
                }
                ops[n++] = o;
        }
        *ret = ops;
        *n_ret = n;
        return 0;
}

static char buf[1 << 20];

static void replay(const struct op *o) {
        struct stat st;
        struct statfs sfs;
        long count = o->a < (long) sizeof(buf) ? o->a : (long) sizeof(buf);
        int r;

        switch (o->kind) {
        case 'O':
                r = openat(real_fd(o->dirfd), o->path, (int) o->a, (mode_t) o->b);
                if (o->fd >= 0 && o->fd < MAX_FD)
                        fdmap[o->fd] = r;
                else if (r >= 0)
                        close(r);   /* it failed when recorded */
                break;
        case 'R': (void) !read(real_fd(o->fd), buf, (size_t) count); break;
        case 'P': (void) !pread(real_fd(o->fd), buf, (size_t) count, o->b); break;
        case 'W': (void) !write(real_fd(o->fd), o->data, (size_t) o->a); break;
        case 'C':
                close(real_fd(o->fd));
                if (o->fd >= 0 && o->fd < MAX_FD)
                        fdmap[o->fd] = -1;
                break;
        case 'G': (void) syscall(SYS_getdents64, real_fd(o->fd), buf, (size_t) count); break;
        case 'L': (void) !readlinkat(real_fd(o->dirfd), o->path, buf, 4096); break;
        case 'S': (void) fstatat(real_fd(o->dirfd), o->path, &st, (int) o->a); break;
        case 'A': (void) !faccessat(real_fd(o->dirfd), o->path, (int) o->a, (int) o->b); break;
        case 'F': (void) fstatfs(real_fd(o->fd), &sfs); break;
        case 'N': (void) renameat(real_fd(o->dirfd), o->path, real_fd(o->newdirfd), o->path2); break;
        case 'U': (void) unlinkat(real_fd(o->dirfd), o->path, (int) o->a); break;
        case 'M': (void) mkdir(o->path, (mode_t) o->a); break;
        case 'Y': (void) fsync(real_fd(o->fd)); break;
        case 'K': (void) lseek(real_fd(o->fd), o->a, (int) o->b); break;
        }
}

static long long now_us(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (long long) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int main(int argc, char **argv) {
        int timed = argc == 3 && strcmp(argv[1], "-t") == 0;
        long long start = now_us();
        struct op *ops;
        size_t n, len = 0, size = 1 << 20;
        char *text = malloc(size);
        FILE *f;

        if (argc != 2 + timed || !text) {
                fprintf(stderr, "usage: floor [-t] OPS\n");
                return 2;
        }
        f = fopen(argv[1 + timed], "re");
        if (!f) {
                fprintf(stderr, "floor: %s: %s\n", argv[1 + timed], strerror(errno));
                return 1;
        }
        for (size_t got; (got = fread(text + len, 1, size - len - 1, f)) > 0;) {
                len += got;
                if (len + 1 == size) {
                        char *more = realloc(text, size *= 2);

                        if (!more)
                                return 1;
                        text = more;
                }
        }
        fclose(f);
        text[len] = '\0';
        if (parse(text, &ops, &n) < 0)
                return 1;
        for (size_t i = 0; i < MAX_FD; i++)
                fdmap[i] = -1;
        if (timed)
                printf("%lld\n", now_us() - start);
        fflush(stdout);
        for (size_t i = 0; i < n; i++)
                replay(&ops[i]);
        return 0;
}
