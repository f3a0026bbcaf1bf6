/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: opening, reading and writing sysfs attributes below a directory fd, and reading the
 * kernel's text files of unbounded size (/proc/cmdline, /proc/self/mountinfo).
 *
 * A write is opened relative to the device's own directory with O_NOFOLLOW, so it can only
 * ever land in that directory, on an allowlisted name; a read may come by the attribute's
 * path too (apply.c's periodic check), with O_NOFOLLOW as well. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "sysfs.h"

bool hvt_sysfs_path_below(const char *top, const char *path) {
        size_t n = strlen(top);
        const char *p = path + n;

        if (strncmp(path, top, n) != 0 || *p != '/')
                return false;
        while (*p == '/') {
                size_t len = strcspn(++p, "/");

                if (len == 0 || (p[0] == '.' && (len == 1 || (len == 2 && p[1] == '.'))))
                        return false;
                p += len;
        }
        return true;
}

int hvt_sysfs_open_dir(const char *path) {
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        return fd < 0 ? negative_errno() : fd;
}

/* Reads into buf[*len..size) until end of file (0) or until it is full (1). */
static int read_more(int fd, char *buf, size_t size, size_t *len) {
        while (*len < size) {
                ssize_t n = read(fd, buf + *len, size - *len);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0)
                        return 0;
                *len += (size_t) n;
        }
        return 1;
}

/* One pread(2) from offset 0: sysfs makes an attribute's whole text at once and hands it out
 * from there (kernfs_seq_show() into a page), and a regular file (the records) is read whole,
 * so a read that does not fill buf has it all; the second read, to see end of file, would
 * only return 0. systemd's read_virtual_file() goes by the same rule. From offset 0 the text
 * is made anew (seq_read_iter() resets its iterator there, as seq_read() did on 4.18), so an
 * fd kept open reads what a write since left. */
static int read_once(int fd, char *buf, size_t size, size_t *len) {
        ssize_t n;

        do
                n = pread(fd, buf, size, 0);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return negative_errno();
        *len = (size_t) n;
        return *len == size;
}

int hvt_sysfs_open(int dirfd, const char *name) {
        /* O_NONBLOCK: sysfs ignores it, and a FIFO where an attribute should be (a testbed, a
         * path from a file) is not waited on; its read then fails (ESPIPE). No fstat() to
         * refuse it sooner: that is a call an attribute on every pass, for what sysfs never
         * holds. */
        int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

        return fd < 0 ? negative_errno() : fd;
}

int hvt_sysfs_read_fd(int fd, char *buf, size_t size) {
        size_t len = 0;
        int r;

        if (size == 0)
                return -EINVAL;
        r = read_once(fd, buf, size, &len);
        if (r < 0)
                return r;
        if (r > 0)
                return -EFBIG;
        /* Attributes are text. A NUL inside is no value of one, and the C string before it
         * could pass for one ("4096\0..."). */
        if (memchr(buf, '\0', len))
                return -EBADMSG;

        while (len > 0 && buf[len - 1] == '\n')
                len--;
        buf[len] = '\0';
        return (int) len;
}

int hvt_sysfs_read(int dirfd, const char *name, char *buf, size_t size) {
        _cleanup_close_ int fd = -EBADF;

        fd = hvt_sysfs_open(dirfd, name);
        if (fd < 0)
                return fd;
        return hvt_sysfs_read_fd(fd, buf, size);
}

int hvt_sysfs_write(int dirfd, enum hvt_attr_id id, const char *value) {
        const struct hvt_attr *a = hvt_attr_get(id);
        _cleanup_close_ int fd = -EBADF;
        size_t len;
        ssize_t n;

        if (!a || !hvt_token_valid(value))
                return -EINVAL;
        /* O_TRUNC is a no-op on sysfs, and makes a plain-file testbed behave like one. */
        fd = openat(dirfd, a->name, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();

        len = strlen(value);
        do
                n = write(fd, value, len);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return negative_errno();
        if ((size_t) n != len)
                return -EIO;
        /* The value is already stored on sysfs; a close error would come from another
         * filesystem (a testbed, a fault injector) and must not be lost. */
        n = close(fd);
        fd = -EBADF;
        return n < 0 ? negative_errno() : 0;
}

int hvt_read_fd(int fd, size_t max, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, size = 0;
        int r;

        if (max > INT_MAX)
                max = INT_MAX;
        do {
                /* One byte past max, to tell a file of max bytes from a longer one; and one
                 * for the NUL. */
                size_t grow = max + 2 - size < 65536 ? max + 2 - size : 65536;
                char *p = realloc(buf, size + grow);

                if (!p)
                        return -ENOMEM;
                buf = p;
                size += grow;
                r = read_more(fd, buf, size - 1, &len);
                if (r < 0)
                        return r;
                if (len > max)
                        return -EFBIG;
        } while (r > 0);
        buf[len] = '\0';
        *ret = TAKE_PTR(buf);
        return (int) len;
}

int hvt_read_file(const char *path, char **ret) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return negative_errno();
        return hvt_read_fd(fd, INT_MAX, ret);
}
