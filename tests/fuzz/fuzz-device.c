/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: fuzzing what the daemon does with one Hyper-V disk once it has classified it: the
 * record of originals it may find from an earlier run (lib/records.h), the plan for it
 * (lib/policy.h), the pass over its attributes, dry and real, with the originals recorded
 * before each first write as daemon/tune.c does (lib/apply.h), the restore of those
 * originals, and the in-use check of a re-probe (lib/usage.h).
 *
 * hvt_classify() takes a struct udev_device, so the disk record (struct hvt_disk) is built
 * here directly from the input, key=value lines named after what the classifier reads:
 *
 *   sysname=sda            the block device (default sda)
 *   dev=8:0                its device number, MAJOR:MINOR (default 8:0)
 *   diskseq=8001
 *   controller={f8b3...}   the VMBus device_id, normalized as the classifier does; when it
 *   vmbus=f8b3...          is no GUID, the VMBus device's name is
 *   kind=scsi              scsi, ide, fc; anything else is unknown
 *   address=0:0:0:1        the SCSI device's name, H:C:T:L
 *   vendor=Msft            INQUIRY strings, trailing blanks stripped as the classifier does
 *   model=Virtual Disk
 *   queue/NAME=VALUE       a file in the disk's queue/ directory (plain files: what is
 *   device/NAME=VALUE      written reads back), or in its SCSI device's directory
 *   kept/GROUP/NAME=VALUE  what the kernel kept of the desired value last time (the
 *                          daemon's history, struct hvt_plan's kept)
 *   record=LINE            a line of a record of originals left in the runtime directory;
 *                          @syspath@ in it stands for the disk's syspath
 *   part=sda1 8:1          a partition: its name and device number
 *   holder=dm-0            an entry in the disk's holders/
 *   mount=LINE             a line of /proc/self/mountinfo
 *   swap=LINE              a line of /proc/swaps after its header
 *   policy=default         the built-in policy instead of a configuration with overrides
 *
 * The checks are the promises of the headers: a dry run writes nothing and says what a real
 * pass does; the real pass ends with the desired values, and with the record on disk holding
 * exactly the originals; the restore puts them back; a disk whose device number is mounted or
 * which is swap is in use. */
#include <inttypes.h>
#include <sys/sysmacros.h>

#include "apply.h"
#include "config.h"
#include "fuzz.h"
#include "policy.h"
#include "records.h"
#include "sysfs.h"
#include "usage.h"

#define CONF_TEXT                                                                                        \
        "queue = { scheduler = \"none\"; nr_requests = 128; read_ahead_kb = 4096; wbt_lat_usec = 0; };\n"  \
        "device = { queue_depth = 254; timeout = 300; };\n"                                              \
        "override = (\n"                                                                                 \
        "  { match = { kind = \"ide\"; }; queue = { scheduler = \"mq-deadline\"; }; },\n"                \
        "  { match = { controller = \"{f8b3781b-1e82-4818-a1c3-63d806ec15bb}\"; lun = 0; };\n"           \
        "    device = { timeout = 180; }; },\n"                                                          \
        "  { match = { vendor = \"Msft\"; model = \"Virtual Disk\"; host = 1; };\n"                      \
        "    queue = { max_sectors_kb = 512; nomerges = 2; }; },\n"                                      \
        "  { match = { kind = \"fc\"; }; queue = { scheduler = \"noop\"; rq_affinity = 2; add_random = 0;\n" \
        "    iostats = 0; }; device = { eh_timeout = 10; }; }\n"                                         \
        ");\n"

#define LINES_MAX 64

static struct hvt_config *config, *builtin;
static char root[300];
static int root_fd = -1;

static void setup(void) {
        struct hvt_config_error err;
        char path[400], absent[400];
        int fd;

        snprintf(root, sizeof(root), "%s", fuzz_scratch());
        fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                abort();
        fuzz_write_file(fd, "hvtuned.conf", CONF_TEXT, strlen(CONF_TEXT), 0600);
        close(fd);
        snprintf(path, sizeof(path), "%s/hvtuned.conf", root);
        snprintf(absent, sizeof(absent), "%s/absent.conf", root);
        /* No file: the built-in policy, as the daemon runs without one. */
        if (hvt_config_load(path, false, &config, &err) < 0 || hvt_config_load(absent, true, &builtin, &err) < 0) {
                fprintf(stderr, "%s:%d: %s: %s\n", err.file, err.line, err.key, err.message);
                abort();
        }
        snprintf(root + strlen(root), sizeof(root) - strlen(root), "/run");
        if (mkdir(root, 0700) < 0)
                abort();
        root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0)
                abort();
}

/* One parsed input. Values point into the input's copy. */
struct input {
        struct hvt_disk disk;
        const char *vmbus, *controller;
        const char *queue[LINES_MAX][2], *device[LINES_MAX][2], *kept[LINES_MAX][2];
        const char *record[LINES_MAX], *part[LINES_MAX], *holder[LINES_MAX];
        const char *mount[LINES_MAX], *swap[LINES_MAX];
        size_t n_queue, n_device, n_kept, n_record, n_part, n_holder, n_mount, n_swap;
        bool builtin;
};

static void add(const char *list[LINES_MAX], size_t *n, const char *v) {
        if (*n < LINES_MAX)
                list[(*n)++] = v;
}

static void add_pair(const char *list[LINES_MAX][2], size_t *n, const char *k, const char *v) {
        if (*n < LINES_MAX) {
                list[*n][0] = k;
                list[(*n)++][1] = v;
        }
}

/* A name that can be one directory entry, as every sysfs name is. */
static bool plain_name(const char *s) {
        return *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0 && strlen(s) < 64;
}

static void parse_dev(const char *v, char out[static 24]) {
        unsigned ma, mi;
        int consumed = 0;

        /* As hvt_classify() formats udev_device_get_devnum(). */
        if (sscanf(v, "%u:%u%n", &ma, &mi, &consumed) == 2 && v[consumed] == '\0')
                snprintf(out, 24, "%u:%u", major(makedev(ma, mi)), minor(makedev(ma, mi)));
}

static void parse_line(struct input *in, char *line) {
        char *v = strchr(line, '=');
        struct hvt_disk *d = &in->disk;

        if (!v)
                return;
        *v++ = '\0';
        if (strcmp(line, "sysname") == 0)
                d->sysname = v;
        else if (strcmp(line, "dev") == 0)
                parse_dev(v, d->dev);
        else if (strcmp(line, "diskseq") == 0)
                d->diskseq = strtoull(v, NULL, 10);
        else if (strcmp(line, "controller") == 0)
                in->controller = v;
        else if (strcmp(line, "vmbus") == 0)
                in->vmbus = v;
        else if (strcmp(line, "kind") == 0) {
                int k = hvt_kind_from_string(v);
                d->kind = k < 0 ? HVT_KIND_UNKNOWN : (enum hvt_kind) k;
        } else if (strcmp(line, "address") == 0) {
                int consumed = 0;

                if (sscanf(v, "%u:%u:%u:%" SCNu64 "%n", &d->host, &d->channel, &d->target, &d->lun, &consumed) != 4 ||
                    v[consumed] != '\0') {
                        d->host = d->channel = d->target = 0;
                        d->lun = 0;
                }
        } else if (strcmp(line, "vendor") == 0)
                hvt_strip_copy(d->vendor, sizeof(d->vendor), v);
        else if (strcmp(line, "model") == 0)
                hvt_strip_copy(d->model, sizeof(d->model), v);
        else if (strncmp(line, "queue/", 6) == 0)
                add_pair(in->queue, &in->n_queue, line + 6, v);
        else if (strncmp(line, "device/", 7) == 0)
                add_pair(in->device, &in->n_device, line + 7, v);
        else if (strncmp(line, "kept/", 5) == 0)
                add_pair(in->kept, &in->n_kept, line + 5, v);
        else if (strcmp(line, "record") == 0)
                add(in->record, &in->n_record, v);
        else if (strcmp(line, "part") == 0)
                add(in->part, &in->n_part, v);
        else if (strcmp(line, "holder") == 0)
                add(in->holder, &in->n_holder, v);
        else if (strcmp(line, "mount") == 0)
                add(in->mount, &in->n_mount, v);
        else if (strcmp(line, "swap") == 0)
                add(in->swap, &in->n_swap, v);
        else if (strcmp(line, "policy") == 0)
                in->builtin = strcmp(v, "default") == 0;
}

static void parse(struct input *in, char *text) {
        *in = (struct input) { .disk = { .sysname = "sda", .dev = "8:0", .kind = HVT_KIND_SCSI } };
        for (char *line = text, *nl; line; line = nl) {
                nl = strchr(line, '\n');
                if (nl)
                        *nl++ = '\0';
                parse_line(in, line);
        }
        /* As the classifier reads the controller: device_id, else the VMBus device's name. */
        if (!in->controller || hvt_guid_normalize(in->controller, in->disk.controller) < 0)
                if (!in->vmbus || hvt_guid_normalize(in->vmbus, in->disk.controller) < 0)
                        strcpy(in->disk.controller, "{f8b3781a-1e82-4818-a1c3-63d806ec15bb}");
}

static int mkdirat_or_die(int dirfd, const char *name) {
        int fd;

        if (mkdirat(dirfd, name, 0755) < 0 && errno != EEXIST)
                abort();
        fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return fd;
}

static void write_attr(int dirfd, const char *name, const char *value) {
        _cleanup_free_ char *text = NULL;

        if (!plain_name(name) || asprintf(&text, "%s\n", value) < 0)
                return;
        fuzz_write_file(dirfd, name, text, strlen(text), 0644);
}

/* root/block/<sysname>/{dev,queue/,holders/,<partitions>/}, root/lun/ and root/state/. */
static int build_tree(const struct input *in, int *state_fd) {
        int block, disk, queue, lun, holders;

        block = mkdirat_or_die(root_fd, "block");
        disk = mkdirat_or_die(block, in->disk.sysname);
        if (disk < 0) {
                close(block);
                return -1;  /* a name that is no directory: no disk has it */
        }
        write_attr(disk, "dev", in->disk.dev);
        queue = mkdirat_or_die(disk, "queue");
        holders = mkdirat_or_die(disk, "holders");
        lun = mkdirat_or_die(root_fd, "lun");
        for (size_t i = 0; i < in->n_queue; i++)
                write_attr(queue, in->queue[i][0], in->queue[i][1]);
        for (size_t i = 0; i < in->n_device; i++)
                write_attr(lun, in->device[i][0], in->device[i][1]);
        for (size_t i = 0; i < in->n_holder; i++)
                if (plain_name(in->holder[i]))
                        write_attr(holders, in->holder[i], "");
        for (size_t i = 0; i < in->n_part; i++) {
                char name[64], dev[24] = "";
                int part, ph;

                if (sscanf(in->part[i], "%63s %23s", name, dev) < 1 || !plain_name(name) ||
                    strcmp(name, "queue") == 0 || strcmp(name, "holders") == 0)
                        continue;
                part = mkdirat_or_die(disk, name);
                if (part < 0)
                        continue;
                write_attr(part, "dev", dev);
                write_attr(part, "partition", "1");
                ph = mkdirat_or_die(part, "holders");
                close(ph);
                close(part);
        }
        close(holders);
        close(queue);
        close(lun);
        close(disk);
        close(block);
        *state_fd = mkdirat_or_die(root_fd, "state");
        return *state_fd < 0 ? -1 : 0;
}

/* A record from an earlier run, @syspath@ standing for the disk's. */
static void write_record(const struct input *in, int state_fd) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        FILE *f;

        if (in->n_record == 0)
                return;
        f = open_memstream(&text, &size);
        if (!f)
                abort();
        for (size_t i = 0; i < in->n_record; i++) {
                for (const char *p = in->record[i]; *p;) {
                        if (strncmp(p, "@syspath@", 9) == 0) {
                                fputs(in->disk.syspath, f);
                                p += 9;
                        } else
                                fputc(*p++, f);
                }
                fputc('\n', f);
        }
        if (fclose(f) != 0)
                abort();
        fuzz_write_file(state_fd, in->disk.sysname, text, size, 0644);
}

static void check_originals(const struct hvt_originals *o) {
        for (size_t i = 0; i < _HVT_ATTR_MAX; i++) {
                struct hvt_setting again;

                if (!o->value[i].set)
                        continue;
                fuzz_check(hvt_setting_from_kernel(&again, (enum hvt_attr_id) i, o->value[i].text) == 0 &&
                           strcmp(again.text, o->value[i].text) == 0, "original %zu \"%s\"", i, o->value[i].text);
        }
}

/* What the daemon does with a record it finds: the originals, or nothing and no record. */
static void load_record(const struct input *in, int state_fd, struct hvt_originals *orig) {
        int r = hvt_records_load(state_fd, FUZZ_SUBJECT(&in->disk), orig);

        if (r == 0) {
                check_originals(orig);
                return;
        }
        fuzz_check(r == -ENOENT || r == -EBADMSG || (r == -EINVAL && in->disk.sysname[0] == '.'),
                   "state_load returned %d", r);
        if (r != -EINVAL)
                fuzz_check(faccessat(state_fd, in->disk.sysname, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT,
                           "a record refused with %d is still there", r);
        *orig = (struct hvt_originals) {};
}

/* The hook of daemon/tune.c: the original goes on disk before the first write. */
struct hook {
        const struct hvt_disk *disk;
        struct hvt_originals *orig;
        int state_fd;
};

static int record_original(const struct hvt_apply *found, void *userdata) {
        struct hook *h = userdata;
        struct hvt_originals before = *h->orig;
        int r = 0;

        for (size_t i = 0; r >= 0 && i < found->n; i++) {
                const struct hvt_result *res = &found->results[i];
                struct hvt_setting *o = &h->orig->value[res->attr];

                if (!o->set && hvt_apply_may_write(found, i))
                        r = hvt_setting_from_kernel(o, res->attr, res->from);
        }
        if (r >= 0)
                r = hvt_records_save(h->state_fd, FUZZ_SUBJECT(h->disk), h->orig, 0);
        if (r < 0)
                *h->orig = before;
        return r;
}

static void check_results(const struct hvt_plan *p, const struct hvt_apply *a, bool dry) {
        size_t j = 0;

        fuzz_check(a->n == hvt_plan_count(p), "%zu results for %zu planned", a->n, hvt_plan_count(p));
        for (size_t i = 0; i < _HVT_ATTR_DISK_MAX; i++) {
                const struct hvt_result *res;

                if (!p->want[i].set)
                        continue;
                res = &a->results[j++];
                fuzz_check(res->attr == (enum hvt_attr_id) i, "result %zu is for %d, not %zu", j - 1, res->attr, i);
                fuzz_check(hvt_outcome_to_string(res->outcome), "outcome %d", res->outcome);
                fuzz_check(dry ? res->outcome != HVT_APPLIED && res->outcome != HVT_CLAMPED : res->outcome != HVT_WOULD_APPLY,
                           "%s outcome in a %s pass", hvt_outcome_to_string(res->outcome), dry ? "dry" : "real");
                fuzz_check(res->outcome != HVT_FAILED || res->error > 0, "failed without an error");
                fuzz_check(memchr(res->from, '\0', sizeof(res->from)) && memchr(res->to, '\0', sizeof(res->to)) &&
                           memchr(res->kept, '\0', sizeof(res->kept)) && memchr(res->offered, '\0', sizeof(res->offered)),
                           "unterminated text in a result");
        }
}

/* What a file holds now, without the trailing newline; "" when it cannot be read. */
static void read_attr(const struct hvt_disk *d, enum hvt_attr_id id, char *buf, size_t size) {
        char path[4200];
        int fd, r;

        if (hvt_attr_get(id)->group == HVT_GROUP_DEVICE)
                snprintf(path, sizeof(path), "%s", d->device_syspath);
        else
                snprintf(path, sizeof(path), "%s/queue", d->syspath);
        fd = hvt_sysfs_open_dir(path);
        r = fd < 0 ? fd : hvt_sysfs_read(fd, hvt_attr_get(id)->name, buf, size);
        if (fd >= 0)
                close(fd);
        if (r < 0)
                *buf = '\0';
}

static void snapshot(const struct hvt_disk *d, char now[_HVT_ATTR_DISK_MAX][4096]) {
        for (size_t i = 0; i < _HVT_ATTR_DISK_MAX; i++)
                read_attr(d, (enum hvt_attr_id) i, now[i], sizeof(now[i]));
}

static bool any_original(const struct hvt_originals *o) {
        for (size_t i = 0; i < _HVT_ATTR_MAX; i++)
                if (o->value[i].set)
                        return true;
        return false;
}

static bool same_originals(const struct hvt_originals *a, const struct hvt_originals *b) {
        for (size_t i = 0; i < _HVT_ATTR_MAX; i++)
                if (a->value[i].set != b->value[i].set ||
                    (a->value[i].set && strcmp(a->value[i].text, b->value[i].text) != 0))
                        return false;
        return true;
}

/* The plan, a dry pass and a real one; the real results in *ret. */
static void pass(const struct input *in, int state_fd, struct hvt_originals *orig, struct hvt_apply *ret) {
        static char before[_HVT_ATTR_DISK_MAX][4096], after[_HVT_ATTR_DISK_MAX][4096];
        struct hook hook = { &in->disk, orig, state_fd };
        struct hvt_apply dry, real;
        struct hvt_originals saved;
        struct hvt_plan plan;
        int r;

        hvt_policy_plan(in->builtin ? builtin : config, &in->disk, NULL, &plan);
        for (size_t i = 0; i < in->n_kept; i++) {
                const char *slash = strchr(in->kept[i][0], '/');
                int id = -ENOENT;

                for (int g = 0; slash && g < _HVT_GROUP_MAX && id < 0; g++)
                        if (strncmp(in->kept[i][0], hvt_group_name((enum hvt_group) g), (size_t) (slash - in->kept[i][0])) == 0 &&
                            hvt_group_name((enum hvt_group) g)[slash - in->kept[i][0]] == '\0')
                                id = hvt_attr_lookup((enum hvt_group) g, slash + 1);
                if (id >= 0)
                        snprintf(plan.kept[id], HVT_VALUE_MAX, "%s", in->kept[i][1]);
        }

        snapshot(&in->disk, before);
        hvt_apply_disk(&in->disk, &plan, HVT_APPLY_DRY_RUN, record_original, &hook, &dry);
        check_results(&plan, &dry, true);
        snapshot(&in->disk, after);
        for (size_t i = 0; i < _HVT_ATTR_DISK_MAX; i++)
                fuzz_check(strcmp(before[i], after[i]) == 0, "a dry run changed attribute %zu", i);

        hvt_apply_disk(&in->disk, &plan, 0, record_original, &hook, &real);
        check_results(&plan, &real, false);
        for (size_t j = 0; j < real.n; j++) {
                const struct hvt_result *d = &dry.results[j], *res = &real.results[j];
                char now[4096];

                /* The dry run says what the real pass does. */
                if (d->outcome == HVT_WOULD_APPLY)
                        fuzz_check(res->outcome == HVT_APPLIED || res->outcome == HVT_FAILED,
                                   "would apply, then %s", hvt_outcome_to_string(res->outcome));
                else
                        fuzz_check(res->outcome == d->outcome && res->error == d->error,
                                   "dry %s, real %s", hvt_outcome_to_string(d->outcome), hvt_outcome_to_string(res->outcome));
                /* A plain file keeps what is written. */
                fuzz_check(res->outcome != HVT_CLAMPED, "clamped by a plain file");
                read_attr(&in->disk, res->attr, now, sizeof(now));
                if (res->outcome == HVT_APPLIED)
                        fuzz_check(strcmp(now, res->to) == 0 && orig->value[res->attr].set,
                                   "applied %s, reads \"%s\"", res->to, now);
                if (res->outcome == HVT_UNCHANGED || res->outcome == HVT_UNSUPPORTED)
                        fuzz_check(strcmp(now, before[res->attr]) == 0, "%s, yet written",
                                   hvt_outcome_to_string(res->outcome));
        }

        /* The record on disk holds exactly the originals in memory. */
        r = hvt_records_load(state_fd, FUZZ_SUBJECT(&in->disk), &saved);
        if (r == 0)
                fuzz_check(same_originals(&saved, orig), "the record read back differs from the originals");
        else
                /* A name starting with a dot is no disk's, and has no record (record_name()). */
                fuzz_check((r == -ENOENT || (r == -EINVAL && in->disk.sysname[0] == '.')) && !any_original(orig),
                           "originals recorded, and the record reads back %d", r);
        *ret = real;
}

/* Originals go back, as at stop: what the pass changed reads back as it was (but the
 * scheduler, whose list a plain file lost: the original may not be offered any more). */
static void restore(const struct input *in, const struct hvt_originals *orig, const struct hvt_apply *real) {
        struct hvt_plan p = {};
        struct hvt_apply a;

        /* A disk's only, as the daemon's slots take them from a record. */
        for (size_t i = 0; i < _HVT_ATTR_DISK_MAX; i++)
                p.want[i] = orig->value[i];
        hvt_apply_disk(&in->disk, &p, 0, NULL, NULL, &a);
        check_results(&p, &a, false);
        for (size_t j = 0; j < real->n; j++) {
                const struct hvt_result *changed = &real->results[j];
                char now[4096];

                if (changed->outcome != HVT_APPLIED || hvt_attr_get(changed->attr)->kind == HVT_VALUE_SCHEDULER)
                        continue;
                for (size_t k = 0; k < a.n; k++) {
                        const struct hvt_result *res = &a.results[k];

                        if (res->attr != changed->attr)
                                continue;
                        read_attr(&in->disk, res->attr, now, sizeof(now));
                        fuzz_check((res->outcome == HVT_APPLIED || res->outcome == HVT_UNCHANGED) &&
                                   strcmp(now, orig->value[res->attr].text) == 0,
                                   "restore of %d: %s, reads \"%s\", original \"%s\"", res->attr,
                                   hvt_outcome_to_string(res->outcome), now, orig->value[res->attr].text);
                }
        }
}

static char *join(const char *const *lines, size_t n, const char *header) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        if (!f)
                abort();
        fputs(header, f);
        for (size_t i = 0; i < n; i++)
                fprintf(f, "%s\n", lines[i]);
        if (fclose(f) != 0)
                abort();
        return text;
}

/* Field i of a blank-separated line, as mountinfo and swaps are: "" when there is none. */
static void field(const char *line, unsigned i, char *buf, size_t size) {
        const char *p = line;
        size_t n;

        for (;; i--) {
                p += strspn(p, " ");
                n = strcspn(p, " ");
                if (i == 0 || n == 0)
                        break;
                p += n;
        }
        snprintf(buf, size, "%.*s", (int) n, p);
}

static void check_usage(const struct input *in) {
        _cleanup_free_ char *mountinfo = join(in->mount, in->n_mount, "");
        _cleanup_free_ char *swaps = join(in->swap, in->n_swap, "Filename\tType\tSize\tUsed\tPriority\n");
        struct hvt_usage u = { .mountinfo = mountinfo, .swaps = swaps };
        char why[256], f[4096], path[4200];
        bool used = false;
        int r;

        memset(why, 'x', sizeof(why));
        r = hvt_usage_check_disk(&u, in->disk.syspath, why, sizeof(why));
        fuzz_check(r == 0 || r == 1 || r < 0, "check_disk returned %d", r);
        fuzz_check(r == 0 || memchr(why, '\0', sizeof(why)), "reason not terminated");
        if (r < 0)
                return;
        /* Independent of how usage.c reads them: a holder, the disk's own number in field 3 of
         * a mount, /dev/<disk> as the first field of a swap line. */
        for (size_t i = 0; i < in->n_holder; i++)
                used = used || (plain_name(in->holder[i]) && in->holder[i][0] != '.');
        for (size_t i = 0; i < in->n_mount; i++) {
                field(in->mount[i], 2, f, sizeof(f));
                used = used || strcmp(f, in->disk.dev) == 0;
        }
        snprintf(path, sizeof(path), "/dev/%s", in->disk.sysname);
        for (size_t i = 0; i < in->n_swap; i++) {
                field(in->swap[i], 0, f, sizeof(f));
                used = used || strcmp(f, path) == 0;
        }
        if (used)
                fuzz_check(r == 1, "the disk is mounted, swap or held, and check_disk says %d", r);
        if (r == 1)
                fuzz_check(*why, "in use without a reason");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *text = fuzz_strndup(data, size);
        _cleanup_free_ char *syspath = NULL, *device_syspath = NULL;
        struct hvt_originals orig;
        struct hvt_apply real;
        struct input in;
        int state_fd = -1;

        if (root_fd < 0)
                setup();
        parse(&in, text);
        if (!plain_name(in.disk.sysname))
                return 0;
        if (asprintf(&syspath, "%s/block/%s", root, in.disk.sysname) < 0 ||
            asprintf(&device_syspath, "%s/lun", root) < 0)
                abort();
        in.disk.syspath = syspath;
        in.disk.device_syspath = device_syspath;
        in.disk.sysname = strrchr(syspath, '/') + 1;

        if (build_tree(&in, &state_fd) == 0) {
                write_record(&in, state_fd);
                load_record(&in, state_fd, &orig);
                pass(&in, state_fd, &orig, &real);
                restore(&in, &orig, &real);
                fuzz_check(hvt_records_remove(state_fd, FUZZ_SUBJECT(&in.disk)) == 0 || in.disk.sysname[0] == '.', "records_remove");
                check_usage(&in);
        }
        if (state_fd >= 0)
                close(state_fd);
        fuzz_empty_dir(root_fd);
        return 0;
}
