/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: override matching and the per-disk merge of configuration layers. */
#include <string.h>

#include "policy.h"

bool hvt_match_disk(const struct hvt_match *m, const struct hvt_disk *d) {
        if ((m->fields & HVT_MATCH_KIND) && m->kind != d->kind)
                return false;
        if ((m->fields & HVT_MATCH_ROLE) && m->role != d->role)
                return false;
        if ((m->fields & HVT_MATCH_CONTROLLER) && strcmp(m->controller, d->controller) != 0)
                return false;
        if ((m->fields & HVT_MATCH_LUN) && m->lun != d->lun)
                return false;
        if ((m->fields & HVT_MATCH_HOST) && m->host != d->host)
                return false;
        if ((m->fields & HVT_MATCH_VENDOR) && strcmp(m->vendor, d->vendor) != 0)
                return false;
        if ((m->fields & HVT_MATCH_MODEL) && strcmp(m->model, d->model) != 0)
                return false;
        return true;
}

/* A configuration's settings are whole-table; a plan takes a disk's attributes of them. */
static void overlay(struct hvt_plan *p, const struct hvt_setting src[static _HVT_ATTR_DISK_MAX],
                    const struct hvt_origin origin[static _HVT_ATTR_DISK_MAX]) {
        for (size_t i = 0; i < _HVT_ATTR_DISK_MAX; i++)
                if (src[i].set) {
                        p->want[i] = src[i];
                        p->origin[i] = origin[i];
                }
}

void hvt_platform_defaults(const struct hvt_disk *d, struct hvt_setting ret[static _HVT_ATTR_DISK_MAX]) {
        for (size_t i = 0; i < _HVT_ATTR_DISK_MAX; i++)
                ret[i] = (struct hvt_setting) {};
        (void) hvt_setting_set_int(&ret[HVT_ATTR_READ_AHEAD_KB], HVT_ATTR_READ_AHEAD_KB, HVT_PLATFORM_READ_AHEAD_KB);
        ret[HVT_ATTR_READ_AHEAD_KB].at_most = true;
        if (hvt_kind_is_nvme(d->kind))
                (void) hvt_setting_set_int(&ret[HVT_ATTR_IO_TIMEOUT], HVT_ATTR_IO_TIMEOUT, HVT_PLATFORM_NVME_IO_TIMEOUT_MS);
}

/* A ceiling keeps what the operator lowered, and what the disk shows now may be hvtuned's own
 * value instead (a drop-in's 512, since removed): judged against that, a reload would bring
 * it down to the ceiling, where a restart, whose stop puts the original back first, finds the
 * operator's 64 under it and leaves it. So a reload does what the restart does: where the
 * recorded original is under the ceiling, the attribute is not planned, and, as any attribute
 * no longer managed, its original goes back (unless someone changed it since) and its record
 * goes; the ceiling is then judged against the disk, as after a start. Wanting the original
 * instead would make it a ceiling of its own, and bring a later 100 down to 64 where a
 * restarted hvtuned leaves it. */
static void judge_ceiling(struct hvt_setting *want, const struct hvt_setting *orig) {
        if (want->set && want->at_most && orig->set && orig->num < want->num)
                *want = (struct hvt_setting) {};
}

void hvt_policy_plan(const struct hvt_config *c, const struct hvt_disk *d, const struct hvt_originals *orig,
                     struct hvt_plan *ret) {
        *ret = (struct hvt_plan) {};
        if (c->platform_defaults) {
                hvt_platform_defaults(d, ret->want);
                for (size_t i = 0; i < _HVT_ATTR_DISK_MAX; i++)
                        if (ret->want[i].set)
                                ret->origin[i].kind = HVT_ORIGIN_PLATFORM;
        }
        overlay(ret, c->settings, c->origin);
        for (size_t i = 0; i < c->n_overrides; i++)
                if (hvt_match_disk(&c->overrides[i].match, d))
                        overlay(ret, c->overrides[i].settings, c->overrides[i].origin);
        for (size_t i = 0; i < _HVT_ATTR_DISK_MAX; i++) {
                if (!hvt_policy_applies(d, i))
                        ret->want[i] = (struct hvt_setting) {};
                else if (orig)
                        judge_ceiling(&ret->want[i], &orig->value[i]);
                if (!ret->want[i].set)
                        ret->origin[i] = (struct hvt_origin) {};
        }
}

bool hvt_policy_applies(const struct hvt_disk *d, enum hvt_attr_id id) {
        /* An NVMe namespace's device/ is its controller or subsystem: SCSI's attributes there
         * (timeout, queue_depth, eh_timeout) do not exist, and a file's top-level group meant
         * the SCSI disks. */
        if (hvt_kind_is_nvme(d->kind) && hvt_attr_get(id)->group == HVT_GROUP_DEVICE)
                return false;
        /* A multipath head's queue is bio-based: requests, and with them the scheduler, their
         * number, their completion CPU, writeback throttling and the timeout, are its hidden
         * paths' (5.10 and 6.1 show a scheduler and nr_requests that do nothing, and a
         * wbt_lat_usec that cannot be read; 6.12 on has none of them). Those paths raise no
         * uevent and come and go with the fabric: the kernel's parameters set them. */
        if (d->multipath_head)
                switch (id) {
                case HVT_ATTR_SCHEDULER:
                case HVT_ATTR_NR_REQUESTS:
                case HVT_ATTR_RQ_AFFINITY:
                case HVT_ATTR_WBT_LAT_USEC:
                case HVT_ATTR_IO_TIMEOUT:
                        return false;
                default:
                        break;
                }
        return true;
}

size_t hvt_plan_count(const struct hvt_plan *p) {
        size_t n = 0;

        for (size_t i = 0; i < _HVT_ATTR_DISK_MAX; i++)
                n += p->want[i].set;
        return n;
}
