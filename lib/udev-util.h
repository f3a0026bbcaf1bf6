/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the cleanup helpers of libudev's objects, one copy for every file that holds one. */
#pragma once

#include <libudev.h>

#include "macro.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct udev_device *, udev_device_unref);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct udev_enumerate *, udev_enumerate_unref);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct udev_queue *, udev_queue_unref);
