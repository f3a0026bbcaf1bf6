/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: fuzzing the configuration loader (lib/config.h) as the daemon calls it, on a file
 * it would trust, and the plans that a loaded configuration gives (lib/policy.h).
 *
 * The input is written to hvtuned.conf in a private 0700 directory, beside files it may
 * @include: part.conf, trusted (0600), and files nobody should be able to smuggle in:
 * open.conf, world-writable, also under the names o"pen.conf and o\pen.conf, since libconfig's
 * include syntax has escapes for a quote and a backslash; wide.conf, trusted but holding a
 * literal libconfig 1.5 would truncate. An inotify watch on the directory sees which files
 * were opened: a load that read one of those and did not fail is a hole in the checks.
 *
 * What follows a line "--- drop-in" in the input is a drop-in, hvtuned.conf.d/50-fuzz.conf
 * (trusted, 0600, in a 0700 directory), read over the main file: the merge of two files, and
 * an include from the drop-in directory (part.conf is not there; ../part.conf is).
 *
 * A load that succeeds must give a configuration whose every value is one the kernel
 * accepts, and plans that follow the layering rule; one that fails must say where. */
#include <inttypes.h>
#include <sys/inotify.h>

#include "config.h"
#include "fuzz.h"
#include "policy.h"

#define CONF "hvtuned.conf"
#define DROPIN_MARK "\n--- drop-in\n"
#define DROPIN "50-fuzz.conf"

/* libconfig 1.5's parser drops, without freeing it, a string token that stands where a name
 * should ("x"; at the top level is a syntax error): its grammar has no %destructor. That
 * leak is libconfig's, a few bytes per refused file. Only the scanner's strings are excused
 * (allocated in strbuf_append, or in libconfig_yylex for ""; libconfig has no frame
 * pointers, so those are the frames a stack shows): a configuration hvtuned forgot to
 * destroy would still leak its settings (config_setting_create), which are reported. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) {
        return "leak:strbuf_append\nleak:libconfig_yylex\n";
}

static const char *const untrusted[] = { "open.conf", "o\"pen.conf", "o\\pen.conf" };
#define WIDE "wide.conf"

static char dir[300], path[320];
static int dirfd_ = -1, dropins_fd = -1, inotify_fd = -1;

static void setup(void) {
        const char *tmp = fuzz_scratch();

        snprintf(dir, sizeof(dir), "%s/etc", tmp);
        snprintf(path, sizeof(path), "%s/" CONF, dir);
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                abort();
        dirfd_ = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dirfd_ < 0)
                abort();
        if (mkdirat(dirfd_, CONF ".d", 0700) < 0 && errno != EEXIST)
                abort();
        dropins_fd = openat(dirfd_, CONF ".d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dropins_fd < 0)
                abort();
#define PART "nr_requests = 64;\nscheduler = \"kyber\";\n"
        fuzz_write_file(dirfd_, "part.conf", PART, strlen(PART), 0600);
        for (size_t i = 0; i < ELEMENTSOF(untrusted); i++)
                fuzz_write_file(dirfd_, untrusted[i], PART, strlen(PART), 0666);
#define WIDE_TEXT "read_ahead_kb = 4294967296;\n"
        fuzz_write_file(dirfd_, WIDE, WIDE_TEXT, strlen(WIDE_TEXT), 0600);

        inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (inotify_fd < 0 || inotify_add_watch(inotify_fd, dir, IN_OPEN) < 0)
                abort();
}

/* Which of the watched files were opened since the last call: bit i for untrusted[i], and
 * the bit after them for wide.conf. */
static unsigned opened(void) {
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        unsigned which = 0;
        ssize_t n;

        while ((n = read(inotify_fd, buf, sizeof(buf))) > 0)
                for (char *p = buf; p < buf + n;) {
                        const struct inotify_event *e = (const struct inotify_event *) p;

                        for (size_t i = 0; e->len > 0 && i < ELEMENTSOF(untrusted); i++)
                                if (strcmp(e->name, untrusted[i]) == 0)
                                        which |= 1u << i;
                        if (e->len > 0 && strcmp(e->name, WIDE) == 0)
                                which |= 1u << ELEMENTSOF(untrusted);
                        p += sizeof(*e) + e->len;
                }
        if (n < 0 && errno != EAGAIN)
                abort();
        return which;
}

static void check_setting(const struct hvt_setting *s, enum hvt_attr_id id, const char *where) {
        const struct hvt_attr *a = hvt_attr_get(id);
        char canonical[HVT_VALUE_MAX];

        if (!s->set)
                return;
        fuzz_check(id < _HVT_ATTR_DISK_MAX, "%s: driver attribute %d set by a configuration", where, id);
        if (a->kind == HVT_VALUE_SCHEDULER) {
                fuzz_check(hvt_sched_name_valid(s->text), "%s: scheduler \"%s\"", where, s->text);
                return;
        }
        snprintf(canonical, sizeof(canonical), "%" PRId64, s->num);
        fuzz_check(a->kind == HVT_VALUE_INT && s->num >= a->min && s->num <= a->max &&
                   strcmp(s->text, canonical) == 0, "%s: %s = %" PRId64 " \"%s\"", where, a->name, s->num, s->text);
}

static void check_field(const char *s, size_t size, const char *what) {
        size_t n = strnlen(s, size);

        fuzz_check(n < size && (n == 0 || s[n - 1] != ' '), "match %s \"%.*s\"", what, (int) size, s);
}

static void check_config(const struct hvt_config *c) {
        bool timeout = false, io_timeout = false;

        fuzz_check(c->path && strcmp(c->path, path) == 0, "path");
        fuzz_check(c->verify_interval <= HVT_VERIFY_INTERVAL_MAX, "verify_interval %u", c->verify_interval);
        fuzz_check(c->n_overrides == 0 || c->overrides, "overrides");
        for (size_t i = 0; i < _HVT_ATTR_MAX; i++)
                check_setting(&c->settings[i], (enum hvt_attr_id) i, "top level");
        timeout = c->settings[HVT_ATTR_TIMEOUT].set;
        io_timeout = c->settings[HVT_ATTR_IO_TIMEOUT].set;

        for (size_t o = 0; o < c->n_overrides; o++) {
                const struct hvt_override *ov = &c->overrides[o];
                const struct hvt_match *m = &ov->match;
                char where[32], guid[HVT_GUID_STR_MAX];
                bool sets = false;

                snprintf(where, sizeof(where), "override[%zu]", o);
                fuzz_check((m->fields & ~(unsigned) (HVT_MATCH_KIND | HVT_MATCH_CONTROLLER | HVT_MATCH_LUN |
                                                     HVT_MATCH_HOST | HVT_MATCH_VENDOR | HVT_MATCH_MODEL)) == 0,
                           "%s: fields %#x", where, m->fields);
                if (m->fields & HVT_MATCH_KIND)
                        fuzz_check(m->kind == HVT_KIND_SCSI || m->kind == HVT_KIND_IDE || m->kind == HVT_KIND_FC,
                                   "%s: kind %d", where, m->kind);
                if (m->fields & HVT_MATCH_CONTROLLER)
                        fuzz_check(hvt_guid_normalize(m->controller, guid) == 0 && strcmp(guid, m->controller) == 0,
                                   "%s: controller \"%s\"", where, m->controller);
                if (m->fields & HVT_MATCH_LUN)
                        fuzz_check(m->lun <= UINT32_MAX, "%s: lun", where);
                check_field(m->vendor, sizeof(m->vendor), "vendor");
                check_field(m->model, sizeof(m->model), "model");
                for (size_t i = 0; i < _HVT_ATTR_MAX; i++) {
                        check_setting(&ov->settings[i], (enum hvt_attr_id) i, where);
                        sets = sets || ov->settings[i].set;
                }
                fuzz_check(sets, "%s sets nothing", where);
                timeout = timeout || ov->settings[HVT_ATTR_TIMEOUT].set;
                io_timeout = io_timeout || ov->settings[HVT_ATTR_IO_TIMEOUT].set;
        }
        /* One kernel value (rq_timeout): two layers must never fight over it. */
        fuzz_check(!(timeout && io_timeout), "both device.timeout and queue.io_timeout are set");
}

/* Disks of every kind, on the controllers and with the INQUIRY strings the examples use. */
static const struct hvt_disk disks[] = {
        { .controller = "{f8b3781a-1e82-4818-a1c3-63d806ec15bb}", .kind = HVT_KIND_SCSI, .host = 0, .lun = 0,
          .vendor = "Msft", .model = "Virtual Disk" },
        { .controller = "{f8b3781b-1e82-4818-a1c3-63d806ec15bb}", .kind = HVT_KIND_SCSI, .host = 1, .lun = 2,
          .vendor = "Msft", .model = "Virtual Disk" },
        { .controller = "{00000000-0000-8899-0000-000000000000}", .kind = HVT_KIND_IDE, .host = 0, .lun = 0,
          .vendor = "Msft", .model = "Virtual Disk" },
        { .controller = "{2f9bcc4a-0069-4af3-b76b-6fd0be528cda}", .kind = HVT_KIND_FC, .host = 3, .lun = 7,
          .vendor = "HP", .model = "LOGICAL VOLUME" },
        { .controller = "{a3c7e9f1-52b8-4d06-9e1a-7b4c2d8f0e65}", .kind = HVT_KIND_UNKNOWN, .host = 9, .lun = 4294967295u },
        { .controller = "{0d5b1c3e-7870-4a3b-8d2e-6f1a9c4b7e20}", .kind = HVT_KIND_NVME_ACCELERATOR,
          .role = HVT_ROLE_DATA, .nsid = 3, .lun = 1, .via_hv_pci = true },
        { .controller = "", .kind = HVT_KIND_NVME_DIRECT_V2, .role = HVT_ROLE_LOCAL, .nsid = 1, .lun = HVT_LUN_NONE,
          .multipath_head = true },
};

/* The platform defaults (lib/policy.h), as docs/how-it-works.md's table gives them: the plan's
 * first layer. */
static void platform_default(const struct hvt_disk *d, size_t i, struct hvt_setting *ret) {
        bool nvme = d->kind >= HVT_KIND_NVME_ACCELERATOR;

        *ret = (struct hvt_setting) {};
        if (i == HVT_ATTR_READ_AHEAD_KB)
                *ret = (struct hvt_setting) { .set = true, .at_most = true, .num = 128, .text = "128" };
        else if (i == HVT_ATTR_IO_TIMEOUT && nvme)
                *ret = (struct hvt_setting) { .set = true, .num = 240000, .text = "240000" };
}

/* What is no attribute of the disk at all: SCSI's device/ on NVMe, a request queue's on a
 * multipath head (docs/how-it-works.md, "Native NVMe multipath"). */
static bool not_its(const struct hvt_disk *d, size_t i) {
        bool nvme = d->kind >= HVT_KIND_NVME_ACCELERATOR;

        if (nvme && (i == HVT_ATTR_QUEUE_DEPTH || i == HVT_ATTR_TIMEOUT || i == HVT_ATTR_EH_TIMEOUT))
                return true;
        return d->multipath_head && (i == HVT_ATTR_SCHEDULER || i == HVT_ATTR_NR_REQUESTS || i == HVT_ATTR_RQ_AFFINITY ||
                                     i == HVT_ATTR_WBT_LAT_USEC || i == HVT_ATTR_IO_TIMEOUT);
}

/* "The platform defaults, then the file's layers: a later override wins per attribute, and an
 * attribute no layer sets is not managed." */
static void check_plans(const struct hvt_config *c) {
        for (size_t d = 0; d < ELEMENTSOF(disks); d++) {
                struct hvt_plan p;
                size_t n = 0;

                hvt_policy_plan(c, &disks[d], NULL, &p);
                /* A plan has a disk's attributes only; check_setting() saw no other set. */
                for (size_t i = 0; i < _HVT_ATTR_DISK_MAX; i++) {
                        struct hvt_setting platform;
                        const struct hvt_setting *want = NULL;

                        platform_default(&disks[d], i, &platform);
                        if (c->platform_defaults && platform.set)
                                want = &platform;
                        if (c->settings[i].set)
                                want = &c->settings[i];
                        for (size_t o = 0; o < c->n_overrides; o++)
                                if (c->overrides[o].settings[i].set && hvt_match_disk(&c->overrides[o].match, &disks[d]))
                                        want = &c->overrides[o].settings[i];
                        if (not_its(&disks[d], i))
                                want = NULL;
                        fuzz_check(want ? p.want[i].set && p.want[i].at_most == want->at_most && p.want[i].num == want->num &&
                                                  strcmp(p.want[i].text, want->text) == 0 : !p.want[i].set,
                                   "disk %zu attribute %zu", d, i);
                        fuzz_check(p.kept[i][0] == '\0', "kept filled by the policy");
                        /* Every want names where it comes from, and only a want does. */
                        fuzz_check(p.want[i].set == (p.origin[i].kind != HVT_ORIGIN_NONE) &&
                                           (p.origin[i].kind != HVT_ORIGIN_FILE || (p.origin[i].file && p.origin[i].line > 0)),
                                   "disk %zu attribute %zu: origin %d", d, i, (int) p.origin[i].kind);
                        n += !!want;
                }
                fuzz_check(hvt_plan_count(&p) == n, "plan count %zu, expected %zu", hvt_plan_count(&p), n);
        }
}

static void check_error(const struct hvt_config_error *err) {
        char buf[600];

        fuzz_check(*err->file && *err->message, "error without file or message");
        fuzz_check(err->line >= 0, "line %d", err->line);
        for (size_t size = 1; size <= sizeof(buf); size += 97) {
                memset(buf, 'x', sizeof(buf));
                hvt_config_error_format(err, buf, size);
                fuzz_check(memchr(buf, '\0', size), "format into %zu not terminated", size);
        }
        hvt_config_error_format(err, buf, sizeof(buf));
        fuzz_check(strncmp(buf, err->file, strlen(buf) < strlen(err->file) ? strlen(buf) : strlen(err->file)) == 0,
                   "\"%s\" does not start with the file", buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct hvt_config_error err = {};
        struct hvt_config *c = NULL;
        unsigned seen;
        int r;

        if (dirfd_ < 0)
                setup();
        const uint8_t *mark = memmem(data, size, DROPIN_MARK, strlen(DROPIN_MARK));
        size_t main_size = mark ? (size_t) (mark - data) : size;

        fuzz_write_file(dirfd_, CONF, (const char *) data, main_size, 0600);
        if (mark)
                fuzz_write_file(dropins_fd, DROPIN, (const char *) mark + strlen(DROPIN_MARK),
                                size - main_size - strlen(DROPIN_MARK), 0600);
        else if (unlinkat(dropins_fd, DROPIN, 0) < 0 && errno != ENOENT)
                abort();
        (void) opened();

        r = hvt_config_load(path, false, &c, &err);
        seen = opened();
        for (size_t i = 0; i < ELEMENTSOF(untrusted); i++)
                fuzz_check(!(seen & (1u << i)) || r == -EPERM,
                           "%s (mode 0666) was opened, and the load returned %d, not -EPERM", untrusted[i], r);
        fuzz_check(!(seen & (1u << ELEMENTSOF(untrusted))) || r != 0,
                   WIDE " (a literal libconfig truncates) was opened, and the load succeeded");

        if (r < 0) {
                fuzz_check(r == -EINVAL || r == -EPERM, "load returned %d", r);
                fuzz_check(!c, "*ret written on failure");
                check_error(&err);
                return 0;
        }
        fuzz_check(c, "no configuration");
        check_config(c);
        check_plans(c);
        hvt_config_free(c);
        return 0;
}
