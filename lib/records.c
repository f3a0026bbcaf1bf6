/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: reading and writing the per-disk records of originals.
 *
 * A record is a small text file named after the disk (its sysname), so an operator can read
 * it: the disk instance it belongs to, then one "group/attribute=value" line per original.
 * It is written before the first write to an attribute, so a crash between the two leaves
 * the true original on disk. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs-util.h"
#include "macro.h"
#include "records.h"

#define HEADER "# hvtuned: values before hvtuned first wrote them\n"

/* Sysnames of block devices are plain names; refuse anything that could leave the dir. */
static int record_name(const struct hvt_subject *s) {
        if (!*s->name || strchr(s->name, '/') || s->name[0] == '.')
                return -EINVAL;
        return 0;
}

static int format_record(const struct hvt_subject *s, const struct hvt_originals *o, char *buf, size_t size) {
        size_t off;
        int n;

        n = snprintf(buf, size, HEADER "syspath=%s\ndev=%s\ndiskseq=%" PRIu64 "\nino=%" PRIu64 "\n", s->syspath,
                     s->dev, s->diskseq, s->ino);
        if (n < 0 || (size_t) n >= size)
                return -ENOBUFS;
        off = (size_t) n;
        for (size_t i = 0; i < _HVT_ATTR_MAX; i++) {
                const struct hvt_attr *a = hvt_attr_get((enum hvt_attr_id) i);

                if (!o->value[i].set || !hvt_subject_has(s, (enum hvt_attr_id) i))
                        continue;
                /* The key as hvt_attr_format_path() makes it, in the same snprintf(). */
                n = snprintf(buf + off, size - off, "%s/%s=%s\n", hvt_group_name(a->group), a->name,
                             o->value[i].text);
                if (n < 0 || (size_t) n >= size - off)
                        return -ENOBUFS;
                off += (size_t) n;
        }
        return (int) off;
}

static bool any_recorded(const struct hvt_subject *s, const struct hvt_originals *o) {
        for (size_t i = 0; i < _HVT_ATTR_MAX; i++)
                if (o->value[i].set && hvt_subject_has(s, (enum hvt_attr_id) i))
                        return true;
        return false;
}

/* One "key=value" line: the instance keys must match s, the rest are originals. */
static int parse_line(char *line, const struct hvt_subject *s, struct hvt_originals *o, unsigned *identity) {
        char *eq = strchr(line, '='), *key = line, *value;
        char seq[24];

        if (!eq)
                return -EBADMSG;
        *eq = '\0';
        value = eq + 1;

        if (strcmp(key, "syspath") == 0) {
                *identity |= 1;
                return strcmp(value, s->syspath) == 0 ? 0 : -ESTALE;
        }
        if (strcmp(key, "dev") == 0) {
                *identity |= 2;
                return strcmp(value, s->dev) == 0 ? 0 : -ESTALE;
        }
        if (strcmp(key, "diskseq") == 0) {
                *identity |= 4;
                snprintf(seq, sizeof(seq), "%" PRIu64, s->diskseq);
                return strcmp(value, seq) == 0 ? 0 : -ESTALE;
        }
        /* Optional: a record of an older hvtuned (kept across an upgrade restart) has none,
         * and 0 is an identity nobody could read. Either way the other keys decide. */
        if (strcmp(key, "ino") == 0) {
                uint64_t ino;
                char *end;

                /* Digits only: strtoull() would take blanks, a sign and wrap a negative. */
                errno = 0;
                ino = strtoull(value, &end, 10);
                if (value[0] < '0' || value[0] > '9' || errno != 0 || *end != '\0')
                        return -EBADMSG;
                return ino == 0 || s->ino == 0 || ino == s->ino ? 0 : -ESTALE;
        }

        char *slash = strchr(key, '/');
        int id = -ENOENT;

        if (slash) {
                *slash = '\0';
                for (int g = 0; g < _HVT_GROUP_MAX && id < 0; g++)
                        if (strcmp(key, hvt_group_name((enum hvt_group) g)) == 0)
                                id = hvt_attr_lookup((enum hvt_group) g, slash + 1);
        }
        /* An attribute this version does not know (a record of a newer hvtuned) is skipped:
         * the others are still true. A value that is not one is damage. */
        if (id < 0)
                return 0;
        /* Another subject's attribute (a disk's record with the driver's parameter, or the
         * reverse) is no original of this one, and hvtuned never writes it there. */
        if (!hvt_subject_has(s, (enum hvt_attr_id) id))
                return -EBADMSG;
        if (hvt_setting_from_kernel(&o->value[id], (enum hvt_attr_id) id, value) < 0)
                return -EBADMSG;
        return 0;
}

/* 0, -ESTALE (another instance's record) or -EBADMSG. */
static int parse_record(char *buf, const struct hvt_subject *s, struct hvt_originals *o) {
        char *line, *save = NULL;
        unsigned identity = 0;
        int r = 0;

        *o = (struct hvt_originals) {};
        for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                if (line[0] == '#')
                        continue;
                r = parse_line(line, s, o, &identity);
                if (r < 0)
                        return r;
        }
        return identity == 7 ? 0 : -EBADMSG;
}

static int unlink_record(int dirfd, const struct hvt_subject *s) {
        if (unlinkat(dirfd, s->name, 0) < 0 && errno != ENOENT)
                return negative_errno();
        return 0;
}

/* Whether the record's first syspath line names another path. That line may be the file's
 * first, as parse_line() reads it too. */
static bool record_elsewhere(const char *buf, const char *syspath) {
        const char *p = strncmp(buf, "syspath=", strlen("syspath=")) == 0 ? buf : strstr(buf, "\nsyspath=");
        size_t len = strlen(syspath);

        if (!p)
                return false;
        p = strchr(p, '=') + 1;
        return strncmp(p, syspath, len) != 0 || (p[len] != '\n' && p[len] != '\0');
}

/* Deletes what is under the subject's name, but a record of a disk at another path; with
 * proven, only a record hvtuned can prove its own by the header. */
static int remove_record(int dirfd, const struct hvt_subject *s, bool proven) {
        char buf[HVT_RECORD_MAX + 2];
        int r;

        /* The record under this name may be another disk's by now (a disk that took the name
         * while events were lost, at another path): that one stays. At the same path it is
         * this disk's, or a stale one of an earlier instance: either way it goes. */
        r = hvt_read_small(dirfd, s->name, buf, sizeof(buf));
        if (r == -ENOENT)
                return 0;
        if (r >= 0 && record_elsewhere(buf, s->syspath))
                return 0;
        if (proven && (r < 0 || strncmp(buf, HEADER, strlen(HEADER)) != 0))
                return r == -EBADMSG || r >= 0 ? 0 : r;
        return unlink_record(dirfd, s);
}

int hvt_records_remove(int dirfd, const struct hvt_subject *s) {
        int r = record_name(s);

        /* A remove event for a disk hvtuned never managed must not take an operator's file of
         * that name. */
        return r < 0 ? r : remove_record(dirfd, s, true);
}

int hvt_records_save(int dirfd, const struct hvt_subject *s, const struct hvt_originals *o, unsigned write_flags) {
        char buf[HVT_RECORD_MAX + 1];  /* what format_record() fits is what a load reads */
        int len, r;

        r = record_name(s);
        if (r < 0)
                return r;
        if (!any_recorded(s, o))
                return remove_record(dirfd, s, false);
        len = format_record(s, o, buf, sizeof(buf));
        if (len < 0)
                return len;
        return hvt_write_atomic(dirfd, s->name, buf, (size_t) len, write_flags, NULL);
}

/* 0, -ESTALE (another instance's), -EBADMSG or -errno, touching nothing. */
static int read_record(int dirfd, const struct hvt_subject *s, struct hvt_originals *ret) {
        char buf[HVT_RECORD_MAX + 2];  /* + 2: the NUL, and a byte to tell "too long" */
        int r;

        r = record_name(s);
        if (r < 0)
                return r;
        r = hvt_read_small(dirfd, s->name, buf, sizeof(buf));
        return r < 0 ? r : parse_record(buf, s, ret);
}

int hvt_records_read(int dirfd, const struct hvt_subject *s, struct hvt_originals *ret) {
        int r = read_record(dirfd, s, ret);

        return r == -ESTALE ? -ENOENT : r;
}

int hvt_records_load(int dirfd, const struct hvt_subject *s, struct hvt_originals *ret) {
        struct hvt_originals o;
        int r;

        r = read_record(dirfd, s, &o);
        /* What cannot be read as a record (too long, no regular file) goes as a damaged one
         * does; a directory (-EISDIR), which no save could replace, stays. */
        if (r == -EBADMSG || r == -ESTALE) {
                (void) unlink_record(dirfd, s);
                return r == -ESTALE ? -ENOENT : r;
        }
        if (r < 0)
                return r;
        *ret = o;
        return 0;
}

/* A record hvtuned wrote: a regular file that starts as format_record() starts. */
static bool is_record(int dirfd, const char *name) {
        char buf[HVT_RECORD_MAX + 2];

        return hvt_read_small(dirfd, name, buf, sizeof(buf)) >= 0 && strncmp(buf, HEADER, strlen(HEADER)) == 0;
}

int hvt_records_prune(int dirfd, bool (*keep)(const char *sysname, void *userdata), void *userdata) {
        _cleanup_(closedirp) DIR *dir = NULL;
        unsigned foreign = 0;
        int r;

        /* Left-over temporaries are never wanted, an older hvtuned's too. */
        r = hvt_prune_temporaries(dirfd, HVT_TEMPORARY_OLD_RECORD, &foreign);
        if (r >= 0)
                r = hvt_opendirat(dirfd, ".", &dir);
        if (r < 0)
                return r;
        for (struct dirent *de; (de = readdir(dir)); ) {
                /* The daemon's own dot files are not records. */
                if (de->d_name[0] == '.' || keep(de->d_name, userdata))
                        continue;
                if (!is_record(dirfd, de->d_name)) {
                        foreign++;
                        continue;
                }
                if (unlinkat(dirfd, de->d_name, 0) < 0 && errno != ENOENT && r == 0)
                        r = negative_errno();
        }
        return r < 0 ? r : (int) foreign;
}

/* A record of hvtuned's, or a file that cannot be read (a directory, an I/O error), which
 * may be one: the caller's load says why, and it is not taken for another's file. */
static bool maybe_record(int dirfd, const char *name) {
        char buf[HVT_RECORD_MAX + 2];
        int r = hvt_read_small(dirfd, name, buf, sizeof(buf));

        if (r >= 0)
                return strncmp(buf, HEADER, strlen(HEADER)) == 0;
        return r != -EBADMSG && r != -ENOENT;
}

int hvt_disk_name_cmp(const void *a, const void *b) {
        const char *x = *(const char *const *) a, *y = *(const char *const *) b;
        size_t lx = strlen(x), ly = strlen(y);

        return lx != ly ? (lx < ly ? -1 : 1) : strcmp(x, y);
}

int hvt_records_list(int dirfd, char ***ret, size_t *ret_n) {
        _cleanup_(closedirp) DIR *dir = NULL;
        char **names = NULL;
        size_t n = 0;
        int r;

        r = hvt_opendirat(dirfd, ".", &dir);
        if (r < 0)
                return r;
        errno = 0;
        for (struct dirent *de; (de = readdir(dir)); errno = 0) {
                char **more;

                /* The daemon's own dot files and the temporaries are not records. */
                if (de->d_name[0] == '.' || !maybe_record(dirfd, de->d_name))
                        continue;
                more = reallocarray(names, n + 1, sizeof(*names));
                if (!more || !(more[n] = strdup(de->d_name))) {
                        hvt_strv_free(more ?: names, n);
                        return -ENOMEM;
                }
                names = more;
                n++;
        }
        if (errno != 0) {
                r = negative_errno();
                hvt_strv_free(names, n);
                return r;
        }
        if (n > 0)
                qsort(names, n, sizeof(*names), hvt_disk_name_cmp);
        *ret = names;
        *ret_n = n;
        return 0;
}

int hvt_records_delete(int dirfd, const char *name) {
        char buf[HVT_RECORD_MAX + 2];
        int r;

        if (!*name || strchr(name, '/') || name[0] == '.')
                return -EINVAL;
        r = hvt_read_small(dirfd, name, buf, sizeof(buf));
        /* Not there, or provably not hvtuned's: nothing of hvtuned's to delete. */
        if (r == -ENOENT || r == -EBADMSG || (r >= 0 && strncmp(buf, HEADER, strlen(HEADER)) != 0))
                return 0;
        if (r < 0)
                return r;
        if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
                return negative_errno();
        return 0;
}
