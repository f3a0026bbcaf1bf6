/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: fuzzing the records of originals (lib/records.h) with whatever a file under a disk's name
 * in the runtime directory may hold after a restart: the input, byte for byte, is that file.
 *
 * The disk it is loaded for is the one the record names (its first syspath=, dev= and diskseq=
 * lines, as the daemon would have classified it; the record's name is the syspath's last
 * component), so records that match are as reachable as the ones that do not. Each step starts
 * from the input written again, and is checked against what the header promises, restated here
 * from a parse of the input's lines of its own:
 *
 *   - hvt_records_remove() for a disk of the same name at another path leaves a record that names
 *     a single other syspath, and a file without the header, and deletes a record with the
 *     header that names this disk's or none;
 *   - hvt_records_prune() deletes the record of a disk not kept when its header says it is
 *     hvtuned's, and counts it as foreign otherwise;
 *   - hvt_records_load() for another instance (the next diskseq) never accepts it, and deletes it;
 *   - hvt_records_load() for the disk returns 0 with the originals of its attribute lines, or
 *     -ENOENT (another instance's) / -EBADMSG (longer than HVT_RECORD_MAX, a line that is no
 *     key=value, a value that is none, an instance line missing; a NUL byte, which no text
 *     hvtuned writes holds), and then the record is gone; a name no record can have is
 *     -EINVAL and nothing is touched;
 *   - what was accepted round-trips: hvt_records_save() of it writes a record (or, with nothing
 *     recorded, deletes it) of at most HVT_RECORD_MAX bytes that starts with the header, and
 *     -ENOBUFS only when the record would be longer (a name of any length: hvt_write_atomic()
 *     cuts its temporary's), and leaves no temporary; loaded again it gives the same originals. */
#include <inttypes.h>
#include <limits.h>

#include "fuzz.h"
#include "records.h"

/* The first line of every record hvtuned writes: what prune goes by. The on-disk format is an
 * interface (an operator reads it, an older or newer hvtuned loads it), so it is stated here
 * again rather than taken from records.c. */
#define HEADER "# hvtuned: values before hvtuned first wrote them\n"

static int dir_fd = -1;

static void setup(void) {
        int fd = open(fuzz_scratch(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0 || mkdirat(fd, "run", 0700) < 0)
                abort();
        dir_fd = openat(fd, "run", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0)
                abort();
        close(fd);
}

/* One line of the input: [start, start + len), without its newline. */
struct line {
        const char *start;
        size_t len;
};

static bool line_next(const uint8_t *data, size_t size, size_t *pos, struct line *ret) {
        const char *p = (const char *) data + *pos, *nl;

        if (*pos >= size)
                return false;
        nl = memchr(p, '\n', size - *pos);
        ret->start = p;
        ret->len = nl ? (size_t) (nl - p) : size - *pos;
        *pos += ret->len + 1;
        return true;
}

/* The value of a line "key=value" as a C string in buf, or NULL when the line has another key. */
static const char *line_value(const struct line *l, const char *key, char *buf, size_t size) {
        size_t n = strlen(key);

        if (l->len <= n || strncmp(l->start, key, n) != 0 || l->start[n] != '=' || l->len - n - 1 >= size)
                return NULL;
        memcpy(buf, l->start + n + 1, l->len - n - 1);
        buf[l->len - n - 1] = '\0';
        return buf;
}

/* The disk the record names, as classify would describe it. */
struct named {
        char syspath[HVT_RECORD_MAX + 1];
        char sysname[NAME_MAX + 1];
        struct hvt_disk disk;
};

static bool creatable_name(const char *s) {
        return *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0 && strlen(s) <= NAME_MAX;
}

static bool decimal_u64(const char *s, uint64_t *ret) {
        uint64_t v = 0;

        if (!*s)
                return false;
        for (; *s; s++) {
                if (*s < '0' || *s > '9' || v > (UINT64_MAX - (uint64_t) (*s - '0')) / 10)
                        return false;
                v = v * 10 + (uint64_t) (*s - '0');
        }
        *ret = v;
        return true;
}

static void named_disk(const uint8_t *data, size_t size, struct named *n) {
        bool syspath = false, dev = false, seq = false, ino = false;
        char buf[HVT_RECORD_MAX + 1];
        struct line l;
        size_t pos = 0;
        const char *v;

        *n = (struct named) { .syspath = "/sys/devices/vmbus/block/sda" };
        while (line_next(data, size, &pos, &l)) {
                if (memchr(l.start, '\0', l.len))
                        continue;
                if (!syspath && (v = line_value(&l, "syspath", buf, sizeof(buf))))
                        syspath = hvt_strscpy(n->syspath, sizeof(n->syspath), v);
                else if (!dev && (v = line_value(&l, "dev", buf, sizeof(buf)))) {
                        (void) hvt_strscpy(n->disk.dev, sizeof(n->disk.dev), v);  /* cut: another dev */
                        dev = true;
                } else if (!seq && (v = line_value(&l, "diskseq", buf, sizeof(buf))))
                        seq = decimal_u64(v, &n->disk.diskseq);
                else if (!ino && (v = line_value(&l, "ino", buf, sizeof(buf))))
                        ino = decimal_u64(v, &n->disk.ino);
        }
        if (!dev)
                strcpy(n->disk.dev, "8:0");
        v = strrchr(n->syspath, '/');
        (void) hvt_strscpy(n->sysname, sizeof(n->sysname), v ? v + 1 : n->syspath);
        if (!creatable_name(n->sysname))
                strcpy(n->sysname, "sda");
        n->disk.syspath = n->syspath;
        n->disk.sysname = n->sysname;
}

/* What the header promises for this input and disk, from the lines alone. */
struct expect {
        bool readable;      /* a regular file that fits, with no NUL byte */
        bool stale, damaged;
        /* Every value an attribute was given, normalized: the loaded one is one of them. */
        char values[_HVT_ATTR_MAX][4][HVT_VALUE_MAX];
        size_t n_values[_HVT_ATTR_MAX];
        bool syspath_seen;
        int elsewhere;      /* remove(): 1 another syspath named, 0 this one or none, -1 both */
};

static int attr_of_key(const char *key) {
        for (size_t i = 0; i < _HVT_ATTR_MAX; i++) {
                char path[64];

                if (hvt_attr_format_path((enum hvt_attr_id) i, path, sizeof(path)) >= 0 && strcmp(path, key) == 0)
                        return (int) i;
        }
        return -ENOENT;
}

static void expect_line(struct expect *e, const struct line *l, const struct hvt_disk *d, const char *other) {
        char text[HVT_RECORD_MAX + 1], seq[24];
        const char *eq = memchr(l->start, '=', l->len), *key = text, *value;
        struct hvt_setting s;
        uint64_t ino;
        int id;

        if (l->len == 0 || l->start[0] == '#')
                return;  /* blank lines and comments: the header */
        if (!eq) {
                e->damaged = true;
                return;
        }
        memcpy(text, l->start, l->len);
        text[l->len] = '\0';
        text[eq - l->start] = '\0';
        value = text + (eq - l->start) + 1;

        snprintf(seq, sizeof(seq), "%" PRIu64, d->diskseq);
        if (strcmp(key, "syspath") == 0) {
                int away = strcmp(value, other) != 0;

                e->stale = e->stale || strcmp(value, d->syspath) != 0;
                e->elsewhere = !e->syspath_seen || e->elsewhere == away ? away : -1;
                e->syspath_seen = true;
        } else if (strcmp(key, "dev") == 0)
                e->stale = e->stale || strcmp(value, d->dev) != 0;
        else if (strcmp(key, "diskseq") == 0)
                e->stale = e->stale || strcmp(value, seq) != 0;
        else if (strcmp(key, "ino") == 0) {
                /* Optional; compared only where both sides know it (not 0). */
                if (!decimal_u64(value, &ino))
                        e->damaged = true;
                else
                        e->stale = e->stale || (ino != 0 && d->ino != 0 && ino != d->ino);
        }
        else if ((id = attr_of_key(key)) >= 0) {
                /* A known attribute's value is what the kernel could have shown, and it is
                 * a disk's: the driver's parameter or bind file is damage in a disk's record. */
                if (id >= _HVT_ATTR_DISK_MAX || hvt_setting_from_kernel(&s, (enum hvt_attr_id) id, value) < 0)
                        e->damaged = true;
                else if (e->n_values[id] < ELEMENTSOF(e->values[id]))
                        strcpy(e->values[id][e->n_values[id]++], s.text);
        }
        /* Any other key is an attribute of a newer hvtuned: skipped. */
}

static void expect(const uint8_t *data, size_t size, const struct hvt_disk *d, const char *other, struct expect *e) {
        bool syspath = false, dev = false, seq = false;
        struct line l;
        size_t pos = 0;

        *e = (struct expect) {};
        e->readable = size <= HVT_RECORD_MAX && !memchr(data, '\0', size);
        if (!e->readable) {
                e->damaged = true;
                return;
        }
        while (line_next(data, size, &pos, &l)) {
                expect_line(e, &l, d, other);
                syspath = syspath || (l.len >= 8 && strncmp(l.start, "syspath=", 8) == 0);
                dev = dev || (l.len >= 4 && strncmp(l.start, "dev=", 4) == 0);
                seq = seq || (l.len >= 8 && strncmp(l.start, "diskseq=", 8) == 0);
        }
        e->damaged = e->damaged || !syspath || !dev || !seq;
}

static bool exists(const char *name) {
        return faccessat(dir_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

static void put(const char *name, const uint8_t *data, size_t size) {
        fuzz_write_file(dir_fd, name, (const char *) data, size, 0644);
}

static bool keep_none(const char *sysname, void *userdata) {
        (void) sysname;
        (void) userdata;
        return false;
}

/* How long format_record()'s output is, from the format alone. */
static size_t record_size(const struct hvt_disk *d, const struct hvt_originals *o) {
        char seq[24];
        size_t n;

        snprintf(seq, sizeof(seq), "%" PRIu64, d->diskseq);
        n = strlen(HEADER) + strlen("syspath=\ndev=\ndiskseq=\n") + strlen(d->syspath) + strlen(d->dev) + strlen(seq);
        snprintf(seq, sizeof(seq), "%" PRIu64, d->ino);
        n += strlen("ino=\n") + strlen(seq);
        for (size_t i = 0; i < _HVT_ATTR_MAX; i++) {
                char path[64];

                if (!o->value[i].set)
                        continue;
                fuzz_check(hvt_attr_format_path((enum hvt_attr_id) i, path, sizeof(path)) >= 0, "attribute %zu", i);
                n += strlen(path) + 1 + strlen(o->value[i].text) + 1;
        }
        return n;
}

static bool any_set(const struct hvt_originals *o) {
        for (size_t i = 0; i < _HVT_ATTR_MAX; i++)
                if (o->value[i].set)
                        return true;
        return false;
}

static void check_same(const struct hvt_originals *a, const struct hvt_originals *b) {
        for (size_t i = 0; i < _HVT_ATTR_MAX; i++) {
                fuzz_check(a->value[i].set == b->value[i].set, "attribute %zu recorded once, not again", i);
                if (a->value[i].set)
                        fuzz_check(strcmp(a->value[i].text, b->value[i].text) == 0 && a->value[i].num == b->value[i].num,
                                   "attribute %zu: \"%s\", then \"%s\"", i, a->value[i].text, b->value[i].text);
        }
}

static void check_loaded(const struct expect *e, const struct hvt_originals *o) {
        for (size_t i = 0; i < _HVT_ATTR_MAX; i++) {
                bool found = false;

                fuzz_check(o->value[i].set == (e->n_values[i] > 0), "attribute %zu: set %d, %zu values in the record",
                           i, o->value[i].set, e->n_values[i]);
                for (size_t k = 0; k < e->n_values[i]; k++)
                        found = found || strcmp(e->values[i][k], o->value[i].text) == 0;
                fuzz_check(!o->value[i].set || found || e->n_values[i] == ELEMENTSOF(e->values[i]),
                           "attribute %zu loaded as \"%s\", which the record does not say", i, o->value[i].text);
        }
}

/* A name no record has: every call refuses it, and the file under it stays as it was. */
static void check_refused_name(const struct hvt_disk *d) {
        struct hvt_originals o = {};

        fuzz_check(hvt_records_load(dir_fd, FUZZ_SUBJECT(d), &o) == -EINVAL, "load of \"%s\"", d->sysname);
        fuzz_check(hvt_setting_set_int(&o.value[HVT_ATTR_NOMERGES], HVT_ATTR_NOMERGES, 1) == 0, "set");
        fuzz_check(hvt_records_save(dir_fd, FUZZ_SUBJECT(d), &o, 0) == -EINVAL, "save of \"%s\"", d->sysname);
        fuzz_check(hvt_records_remove(dir_fd, FUZZ_SUBJECT(d)) == -EINVAL, "remove of \"%s\"", d->sysname);
        fuzz_check(exists(d->sysname), "\"%s\" was touched", d->sysname);
}

/* A file hvtuned can prove its own: readable, starting with the header. */
static bool ours(const uint8_t *data, size_t size, const struct expect *e) {
        return e->readable && size >= strlen(HEADER) && memcmp(data, HEADER, strlen(HEADER)) == 0;
}

static void check_remove_elsewhere(const uint8_t *data, size_t size, const struct named *n, const char *other,
                                   const struct expect *e) {
        struct hvt_disk moved = n->disk;

        moved.syspath = (char *) other;
        put(n->sysname, data, size);
        fuzz_check(hvt_records_remove(dir_fd, FUZZ_SUBJECT(&moved)) == 0, "remove");
        if (!ours(data, size, e))
                fuzz_check(exists(n->sysname), "a file without hvtuned's header was removed");
        else if (e->elsewhere == 1)
                fuzz_check(exists(n->sysname), "the record of %s was removed for a disk at %s", n->syspath, other);
        else if (e->elsewhere == 0)
                fuzz_check(!exists(n->sysname), "a record naming no other path stayed at remove()");
}

/* Whether a temporary of hvt_write_atomic() is in the directory. */
static bool temporary_left(void) {
        int fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 3);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *de;
        bool found = false;

        fuzz_check(d, "opendir: %m");
        rewinddir(d);
        while ((de = readdir(d)))
                found = found || strncmp(de->d_name, ".#", 2) == 0;
        closedir(d);
        return found;
}

static void check_prune(const uint8_t *data, size_t size, const struct named *n, const struct expect *e) {
        bool ours_ = ours(data, size, e);
        int r;

        put(n->sysname, data, size);
        r = hvt_records_prune(dir_fd, keep_none, NULL);
        fuzz_check(r == (ours_ ? 0 : 1), "prune returned %d", r);
        fuzz_check(exists(n->sysname) == !ours_, "prune %s a %s file", ours_ ? "left" : "deleted",
                   ours_ ? "hvtuned's" : "foreign");
}

static void check_other_instance(const uint8_t *data, size_t size, const struct named *n) {
        struct hvt_disk again = n->disk;
        struct hvt_originals o;
        int r;

        again.diskseq++;
        put(n->sysname, data, size);
        r = hvt_records_load(dir_fd, FUZZ_SUBJECT(&again), &o);
        fuzz_check(r == -ENOENT || r == -EBADMSG, "load for diskseq %" PRIu64 " of a record: %d", again.diskseq, r);
        fuzz_check(!exists(n->sysname), "a record refused with %d is still there", r);
}

/* Save what was loaded, load it again: the same. */
static void check_round_trip(const struct named *n, const struct hvt_originals *o) {
        char text[HVT_RECORD_MAX + 2];
        struct hvt_originals again;
        size_t want = record_size(&n->disk, o);
        ssize_t len;
        int fd, r;

        r = hvt_records_save(dir_fd, FUZZ_SUBJECT(&n->disk), o, 0);
        if (!any_set(o)) {
                fuzz_check(r == 0 && !exists(n->sysname), "save of nothing: %d, the record %s", r,
                           exists(n->sysname) ? "stays" : "gone");
                return;
        }
        if (want > HVT_RECORD_MAX) {
                fuzz_check(r == -ENOBUFS, "a record of %zu bytes saved: %d", want, r);
                return;
        }
        fuzz_check(r == 0, "save of %zu bytes: %d", want, r);

        fd = openat(dir_fd, n->sysname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        fuzz_check(fd >= 0, "saved record: %m");
        len = read(fd, text, sizeof(text));
        close(fd);
        fuzz_check(len >= 0 && (size_t) len == want, "saved %zd bytes, the format says %zu", len, want);
        fuzz_check(strncmp(text, HEADER, strlen(HEADER)) == 0, "a saved record without the header");
        fuzz_check(!temporary_left(), "a temporary left");

        r = hvt_records_load(dir_fd, FUZZ_SUBJECT(&n->disk), &again);
        fuzz_check(r == 0, "a saved record loads with %d", r);
        check_same(o, &again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static char other[HVT_RECORD_MAX + 64];
        struct hvt_originals o;
        struct named n;
        struct expect e;
        int r;

        if (dir_fd < 0)
                setup();
        named_disk(data, size, &n);
        snprintf(other, sizeof(other), "/sys/devices/elsewhere/%s", n.sysname);
        expect(data, size, &n.disk, other, &e);

        if (n.sysname[0] == '.') {
                put(n.sysname, data, size);
                check_refused_name(&n.disk);
                fuzz_empty_dir(dir_fd);
                return 0;
        }

        check_remove_elsewhere(data, size, &n, other, &e);
        check_prune(data, size, &n, &e);
        check_other_instance(data, size, &n);

        put(n.sysname, data, size);
        r = hvt_records_load(dir_fd, FUZZ_SUBJECT(&n.disk), &o);
        if (r == 0) {
                fuzz_check(!e.stale && !e.damaged, "a record %s was loaded", e.stale ? "of another instance" : "damaged");
                fuzz_check(exists(n.sysname), "a loaded record is gone");
                check_loaded(&e, &o);
                check_round_trip(&n, &o);
        } else {
                fuzz_check(r == -ENOENT || r == -EBADMSG, "load returned %d", r);
                fuzz_check(e.stale || e.damaged, "a good record refused with %d", r);
                /* Both stale and damaged: either answer is right. */
                fuzz_check(r == -ENOENT ? e.stale : e.damaged, "refused with %d, %s", r,
                           e.stale ? "but it is another instance's" : "but it is damaged");
                fuzz_check(!exists(n.sysname), "a record refused with %d is still there", r);
        }
        fuzz_empty_dir(dir_fd);
        return 0;
}
