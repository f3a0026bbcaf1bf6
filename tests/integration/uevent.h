/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: sending uevents to the monitors of a umockdev testbed without losing the test.
 *
 * umockdev_testbed_uevent() sends without blocking, and gives up the whole process when a
 * monitor's queue is full (net.unix.max_dgram_qlen is 10 here): fine for a few events, fatal
 * for a flood. This sender speaks the same libudev monitor protocol, blocking until the
 * daemon has room: what a real udevd burst looks like to the daemon, minus the losses. */
#pragma once

/* Sends action for syspath ("/sys/devices/...") to every monitor listening on the testbed,
 * count times. */
void uevent_send_blocking(const char *syspath, const char *action, unsigned count);

/* What an event of a device says, taken while it exists: a "remove" is sent after the device
 * left the testbed, as udevd sends it after the kernel removed it. */
struct uevent_device {
        char syspath[1024];
        char subsystem[64], devtype[64];
        char props[4096];
        size_t len;
};

void uevent_capture(const char *syspath, struct uevent_device *ret);
void uevent_send_captured(const struct uevent_device *dev, const char *action);

/* umockdev_testbed_add_*() also sends an "add" of every device it makes, without blocking:
 * umockdev 0.19 aborts the process when a monitor's queue is full (0.17 dropped the event),
 * which a whole controller's devices do. Between these two calls the testbed's monitors are
 * out of umockdev's sight; the caller then sends what udevd would, with the calls above. */
void uevent_monitors_hide(void);
void uevent_monitors_show(void);
