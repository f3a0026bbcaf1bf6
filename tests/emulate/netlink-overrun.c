/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: losing uevents the way an overrun netlink socket does, on a umockdev testbed.
 *
 * umockdev's uevents arrive on a unix socket, which blocks the sender instead of dropping:
 * the daemon can never see ENOBUFS there. The kernel drops what does not fit a monitor's
 * receive buffer and fails the next recvmsg() with ENOBUFS (netlink_overrun()). With
 * HVTUNED_TEST_OVERRUN=FLAG, while the file FLAG exists every message that arrives is
 * dropped unread (the monitor sees nothing: EAGAIN); the first recvmsg() after FLAG is gone
 * fails with ENOBUFS, once, and the messages after it arrive again; so does a drain that
 * outlasts FLAG. With HVTUNED_TEST_ENOBUFS=FILE, while FILE exists every recvmsg() fails with
 * ENOBUFS and reads nothing, so a socket that holds a message stays readable: a source that
 * fails on every call, which no kernel does for long, but a storm that overruns it again and
 * again comes close. hvtuned's only recvmsg() is libudev's, on the monitor. Test code only. */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

typedef ssize_t (*recvmsg_fn)(int, struct msghdr *, int);

static bool lost;

ssize_t recvmsg(int fd, struct msghdr *msg, int flags) {
        static recvmsg_fn real;
        const char *flag = getenv("HVTUNED_TEST_OVERRUN");

        const char *always = getenv("HVTUNED_TEST_ENOBUFS");

        if (!real)
                real = (recvmsg_fn) dlsym(RTLD_NEXT, "recvmsg");
        if (always && access(always, F_OK) == 0) {
                errno = ENOBUFS;
                return -1;
        }
        if (flag && access(flag, F_OK) == 0) {
                while (real(fd, msg, flags | MSG_DONTWAIT) >= 0)
                        lost = true;
                /* The kernel's overrun wakes the reader itself (sk_error_report()); here only
                 * a message can. The test removes FLAG, then sends one: if this drain took it
                 * too, nothing else would wake the daemon for the ENOBUFS, so it is given now. */
                if (!lost || access(flag, F_OK) == 0) {
                        errno = EAGAIN;
                        return -1;
                }
        }
        if (lost) {
                lost = false;
                errno = ENOBUFS;
                return -1;
        }
        return real(fd, msg, flags);
}
