/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the journal MESSAGE_IDs, one per kind of event. systemd/hvtuned.catalog explains
 * each one to the operator; keep the two in step. */
#pragma once

#define HVT_MESSAGE_ATTR_APPLIED     "eb47933e2e9c4b03a3bebcf187cc6d70"
#define HVT_MESSAGE_ATTR_CLAMPED     "1c4426a7035b4a489acf0513099c14a2"
#define HVT_MESSAGE_ATTR_FAILED      "573b87040f9442c4ae74cb59264b8376"
#define HVT_MESSAGE_ATTR_UNSUPPORTED "f618e97298334e43915b6a04762ea5da"
#define HVT_MESSAGE_DISK_FOUND       "9b1ee9a1f9644d0da961e04a6296daed"
#define HVT_MESSAGE_DISK_REMOVED     "ad07d426e6894b2d86f57baf98444849"
#define HVT_MESSAGE_DISK_RELEASED    "16a855b6bd9248309b3334d2cb20ee61"
#define HVT_MESSAGE_DISK_UNREADABLE  "a241d73e78864be089079be4f4b76d05"
#define HVT_MESSAGE_CONFIG_ERROR     "db0980a3242c48028642bc4ba477ff33"
#define HVT_MESSAGE_STARTED          "8f3cf14e474f4ae4a79a61748195705f"
#define HVT_MESSAGE_RESYNC           "3fb3417c701946a1979b87e57a12f3cd"
