/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the blocking uevent sender (see uevent.h).
 *
 * The message is libudev's monitor format: a header ("libudev", magic 0xfeedcafe in network
 * order, offsets, and MurmurHash2 hashes of subsystem and devtype, which the receiver's
 * socket filter checks), then NUL-separated properties: ACTION, DEVPATH, SUBSYSTEM, SEQNUM
 * and those of the device's uevent file (DEVTYPE, DEVNAME, MAJOR, MINOR...). libudev takes
 * a received device as it is, without reading sysfs: without DEVTYPE its own filter would
 * drop the event as not a disk. */
#include <arpa/inet.h>
#include <check.h>
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "harness.h"
#include "uevent.h"

struct monitor_header {
        char prefix[8];
        uint32_t magic;
        uint32_t header_size;
        uint32_t properties_off;
        uint32_t properties_len;
        uint32_t filter_subsystem_hash;
        uint32_t filter_devtype_hash;
        uint32_t filter_tag_bloom_hi;
        uint32_t filter_tag_bloom_lo;
};

/* MurmurHash2 (Austin Appleby, public domain), seeded with the length, as libudev uses it. */
static uint32_t murmur2(const char *s) {
        const uint32_t m = 0x5bd1e995;
        size_t len = strlen(s);
        uint32_t h = (uint32_t) len;
        const unsigned char *p = (const unsigned char *) s;

        for (; len >= 4; len -= 4, p += 4) {
                uint32_t k;

                memcpy(&k, p, 4);
                k *= m;
                k ^= k >> 24;
                k *= m;
                h = h * m ^ k;
        }
        switch (len) {
        case 3:
                h ^= (uint32_t) p[2] << 16;
                __attribute__((fallthrough));
        case 2:
                h ^= (uint32_t) p[1] << 8;
                __attribute__((fallthrough));
        case 1:
                h ^= p[0];
                h *= m;
        }
        h ^= h >> 13;
        h *= m;
        h ^= h >> 15;
        return h;
}

/* The SUBSYSTEM= and DEVTYPE= of the device, from its uevent file and subsystem link, and
 * the uevent file's properties, NUL-separated, in props. */
static size_t device_identity(const char *syspath, char subsystem[static 64], char devtype[static 64],
                              char *props, size_t size) {
        char *dir = g_build_filename(getenv("UMOCKDEV_DIR"), syspath, NULL);
        char *link = g_build_filename(dir, "subsystem", NULL), *uevent = g_build_filename(dir, "uevent", NULL);
        char target[4096], *text = NULL, *p;
        ssize_t n = readlink(link, target, sizeof(target) - 1);
        size_t len = 0;

        ck_assert_msg(n > 0, "%s has no subsystem link", dir);
        target[n] = '\0';
        snprintf(subsystem, 64, "%s", strrchr(target, '/') + 1);
        devtype[0] = '\0';
        ck_assert_msg(g_file_get_contents(uevent, &text, NULL, NULL), "%s has no uevent file", dir);
        if ((p = strstr(text, "DEVTYPE=")))
                snprintf(devtype, 64, "%.*s", (int) strcspn(p + 8, "\n"), p + 8);
        for (p = text; *p; ) {
                size_t line = strcspn(p, "\n");

                ck_assert_uint_lt(len + line + 1, size);
                if (line > 0) {
                        memcpy(props + len, p, line);
                        props[len + line] = '\0';
                        len += line + 1;
                }
                p += line + (p[line] == '\n');
        }
        g_free(text);
        g_free(uevent);
        g_free(link);
        g_free(dir);
        return len;
}

void uevent_capture(const char *syspath, struct uevent_device *ret) {
        ck_assert_uint_lt(strlen(syspath), sizeof(ret->syspath));
        snprintf(ret->syspath, sizeof(ret->syspath), "%s", syspath);
        ret->len = device_identity(syspath, ret->subsystem, ret->devtype, ret->props, sizeof(ret->props));
}

static void send_to_monitors(const struct uevent_device *dev, const char *action, unsigned count) {
        static unsigned long long seqnum = 1000000;
        char props[8192];
        struct monitor_header h = { .prefix = "libudev" };
        char *pattern = g_build_filename(getenv("UMOCKDEV_DIR"), "event[0-9]*", NULL);
        glob_t gl;

        h.magic = htonl(0xfeedcafe);
        h.header_size = sizeof(h);
        h.properties_off = sizeof(h);
        h.filter_subsystem_hash = htonl(murmur2(dev->subsystem));
        if (*dev->devtype)
                h.filter_devtype_hash = htonl(murmur2(dev->devtype));

        ck_assert_int_eq(glob(pattern, 0, NULL, &gl), 0);
        for (size_t i = 0; i < gl.gl_pathc; i++) {
                struct sockaddr_un sa = { .sun_family = AF_UNIX };
                int fd = socket(AF_UNIX, SOCK_RAW | SOCK_CLOEXEC, 0);

                ck_assert_int_ge(fd, 0);
                snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", gl.gl_pathv[i]);
                ck_assert_int_eq(connect(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
                for (unsigned c = 0; c < count; c++) {
                        int len = snprintf(props, sizeof(props), "ACTION=%s%cDEVPATH=%s%cSUBSYSTEM=%s%cSEQNUM=%llu%c",
                                           action, 0, dev->syspath + strlen("/sys"), 0, dev->subsystem, 0,
                                           seqnum++, 0);
                        struct iovec iov[2] = { { &h, sizeof(h) }, { props, 0 } };

                        memcpy(props + len, dev->props, dev->len);
                        len += (int) dev->len;
                        iov[1].iov_len = (size_t) len;
                        struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };

                        h.properties_len = (uint32_t) len;
                        ck_assert_int_eq(sendmsg(fd, &msg, 0), (ssize_t) sizeof(h) + len);
                }
                close(fd);
        }
        globfree(&gl);
        g_free(pattern);
}

void uevent_send_captured(const struct uevent_device *dev, const char *action) {
        send_to_monitors(dev, action, 1);
}

void uevent_send_blocking(const char *syspath, const char *action, unsigned count) {
        struct uevent_device dev;

        uevent_capture(syspath, &dev);
        send_to_monitors(&dev, action, count);
}

/* Renames every name matching pattern in the testbed's root to prefix + its own name minus
 * strip characters: a renamed socket keeps its inode, so the monitor bound to it still hears
 * whoever connects to the new name. */
static void rename_monitors(const char *pattern, const char *prefix, size_t strip) {
        char *glob_pattern = g_build_filename(getenv("UMOCKDEV_DIR"), pattern, NULL);
        glob_t gl;
        int r = glob(glob_pattern, 0, NULL, &gl);

        ck_assert_msg(r == 0 || r == GLOB_NOMATCH, "glob %s: %d", glob_pattern, r);
        for (size_t i = 0; r == 0 && i < gl.gl_pathc; i++) {
                char *name = g_path_get_basename(gl.gl_pathv[i]), *dir = g_path_get_dirname(gl.gl_pathv[i]);
                char *renamed = g_strconcat(dir, "/", prefix, name + strip, NULL);

                ck_assert_msg(rename(gl.gl_pathv[i], renamed) == 0, "%s: %m", gl.gl_pathv[i]);
                g_free(renamed);
                g_free(dir);
                g_free(name);
        }
        if (r == 0)
                globfree(&gl);
        g_free(glob_pattern);
}

void uevent_monitors_hide(void) {
        rename_monitors("event[0-9]*", "hidden-", 0);
}

void uevent_monitors_show(void) {
        rename_monitors("hidden-event[0-9]*", "", strlen("hidden-"));
}
