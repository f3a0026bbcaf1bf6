/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Records of originals: what is saved loads back, a record of another instance of the disk
 * (removed and added again) or a damaged one is never trusted, and pruning keeps only the
 * disks asked for. */
#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "fs-util.h"
#include "macro.h"
#include "records.h"
#include "state.h"
#include "sysfs.h"
#include "testutil.h"

static char dir[PATH_MAX];

/* A disk's subject; the strings are the caller's. */
static struct hvt_subject disk(const char *syspath, const char *dev, uint64_t diskseq) {
        return (struct hvt_subject) {
                .name = strrchr(syspath, '/') + 1,
                .syspath = syspath,
                .controller = "",
                .dev = dev,
                .diskseq = diskseq,
        };
}

static int open_dir(void) {
        free(test_write_file(dir, ".keep-dir", ""));
        return open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static bool exists(const char *name) {
        char path[PATH_MAX * 2];

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        return access(path, F_OK) == 0;
}

/* The entries of the directory whose names start with prefix. */
static unsigned count_prefixed(const char *prefix) {
        _cleanup_(closedirp) DIR *d = opendir(dir);
        struct dirent *de;
        unsigned n = 0;

        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d)))
                n += strncmp(de->d_name, prefix, strlen(prefix)) == 0;
        return n;
}

static bool keep_sdd(const char *name, void *userdata) {
        (*(unsigned *) userdata)++;
        return strcmp(name, "sdd") == 0;
}

START_TEST(test_roundtrip) {
        struct hvt_subject d = disk("/sys/devices/x/host0/target0:0:0/0:0:0:0/block/sda", "8:0", 9);
        struct hvt_originals o = {}, back;
        int fd = open_dir();

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(hvt_records_load(fd, &d, &back), -ENOENT);
        ck_assert_int_eq(hvt_setting_from_kernel(&o.value[HVT_ATTR_SCHEDULER], HVT_ATTR_SCHEDULER, "mq-deadline"), 0);
        ck_assert_int_eq(hvt_setting_from_kernel(&o.value[HVT_ATTR_NR_REQUESTS], HVT_ATTR_NR_REQUESTS, "2534"), 0);
        ck_assert_int_eq(hvt_setting_from_kernel(&o.value[HVT_ATTR_TIMEOUT], HVT_ATTR_TIMEOUT, "180"), 0);
        ck_assert_int_eq(hvt_records_save(fd, &d, &o, 0), 0);
        ck_assert(exists("sda"));
        ck_assert_uint_eq(count_prefixed(".#"), 0);

        ck_assert_int_eq(hvt_records_load(fd, &d, &back), 0);
        ck_assert_str_eq(back.value[HVT_ATTR_SCHEDULER].text, "mq-deadline");
        ck_assert_int_eq(back.value[HVT_ATTR_NR_REQUESTS].num, 2534);
        ck_assert_str_eq(back.value[HVT_ATTR_TIMEOUT].text, "180");
        ck_assert(!back.value[HVT_ATTR_READ_AHEAD_KB].set);

        /* Nothing left to restore: no record. */
        ck_assert_int_eq(hvt_records_save(fd, &d, &(struct hvt_originals) {}, 0), 0);
        ck_assert(!exists("sda"));
        close(fd);
}
END_TEST

START_TEST(test_other_instance) {
        struct hvt_subject d = disk("/sys/devices/x/host0/target0:0:0/0:0:0:1/block/sdb", "8:16", 10);
        struct hvt_subject again = disk("/sys/devices/x/host0/target0:0:0/0:0:0:1/block/sdb", "8:16", 11);
        struct hvt_subject moved = disk("/sys/devices/x/host1/target1:0:0/1:0:0:0/block/sdb", "8:16", 10);
        struct hvt_originals o = {}, back;
        int fd = open_dir();

        ck_assert_int_eq(hvt_setting_from_kernel(&o.value[HVT_ATTR_NOMERGES], HVT_ATTR_NOMERGES, "0"), 0);
        ck_assert_int_eq(hvt_records_save(fd, &d, &o, 0), 0);
        /* The same name, a new diskseq: a disk added again is a new disk. */
        ck_assert_int_eq(hvt_records_load(fd, &again, &back), -ENOENT);
        ck_assert(!exists("sdb"));

        ck_assert_int_eq(hvt_records_save(fd, &d, &o, 0), 0);
        ck_assert_int_eq(hvt_records_load(fd, &moved, &back), -ENOENT);
        ck_assert(!exists("sdb"));

        /* Forgetting a disk leaves the record of another disk that now has its name at
         * another path; at the same path the record goes, whatever instance wrote it. */
        ck_assert_int_eq(hvt_records_save(fd, &moved, &o, 0), 0);
        ck_assert_int_eq(hvt_records_remove(fd, &d), 0);
        ck_assert(exists("sdb"));
        ck_assert_int_eq(hvt_records_remove(fd, &moved), 0);
        ck_assert(!exists("sdb"));
        ck_assert_int_eq(hvt_records_save(fd, &again, &o, 0), 0);
        ck_assert_int_eq(hvt_records_remove(fd, &d), 0);
        ck_assert(!exists("sdb"));
        close(fd);
}
END_TEST

/* Without diskseq (kernels before 5.15 write 0), a disk removed and added again at the same
 * LUN has the same path and often the same dev: only the inode of its sysfs directory (a new
 * kernfs node) says it is another instance. */
START_TEST(test_other_inode) {
        struct hvt_subject d = disk("/sys/devices/x/host0/target0:0:0/0:0:0:1/block/sdb", "8:16", 0);
        struct hvt_subject again = d, unknown = d;
        struct hvt_originals o = {}, back;
        _cleanup_free_ char *text = NULL;
        char path[PATH_MAX * 2];
        int fd = open_dir();

        d.ino = 4242;
        again.ino = 4243;
        ck_assert_int_eq(hvt_setting_from_kernel(&o.value[HVT_ATTR_NOMERGES], HVT_ATTR_NOMERGES, "2"), 0);
        ck_assert_int_eq(hvt_records_save(fd, &d, &o, 0), 0);
        snprintf(path, sizeof(path), "%s/sdb", dir);
        ck_assert_int_ge(hvt_read_file(path, &text), 0);
        ck_assert_ptr_nonnull(strstr(text, "\nino=4242\n"));
        ck_assert_int_eq(hvt_records_load(fd, &d, &back), 0);
        ck_assert_int_eq(back.value[HVT_ATTR_NOMERGES].num, 2);

        /* Another directory at the same path, same dev, diskseq 0 on both: another disk. */
        ck_assert_int_eq(hvt_records_load(fd, &again, &back), -ENOENT);
        ck_assert(!exists("sdb"));

        /* An inode nobody could read (0) on either side leaves the other keys to decide. */
        ck_assert_int_eq(hvt_records_save(fd, &d, &o, 0), 0);
        ck_assert_int_eq(hvt_records_load(fd, &unknown, &back), 0);
        ck_assert_int_eq(back.value[HVT_ATTR_NOMERGES].num, 2);

        /* With diskseq too, both keys are compared: either differing is another instance. */
        d.diskseq = again.diskseq = 7;
        ck_assert_int_eq(hvt_records_save(fd, &d, &o, 0), 0);
        ck_assert_int_eq(hvt_records_load(fd, &again, &back), -ENOENT);
        ck_assert(!exists("sdb"));
        again.ino = d.ino;
        again.diskseq = 8;
        ck_assert_int_eq(hvt_records_save(fd, &d, &o, 0), 0);
        ck_assert_int_eq(hvt_records_load(fd, &again, &back), -ENOENT);
        ck_assert(!exists("sdb"));

        /* A value that is no inode number is damage. */
        free(test_write_file(dir, "sdb", "syspath=/sys/devices/x/host0/target0:0:0/0:0:0:1/block/sdb\n"
                                         "dev=8:16\ndiskseq=7\nino=12x\nqueue/nomerges=2\n"));
        ck_assert_int_eq(hvt_records_load(fd, &d, &back), -EBADMSG);
        ck_assert(!exists("sdb"));
        close(fd);
}
END_TEST

/* A record of an hvtuned before ino= (records survive an upgrade restart) still loads for the
 * instance its other keys name, whatever inode the disk has now. */
START_TEST(test_record_without_ino) {
        struct hvt_subject d = disk("/sys/devices/x/block/sdc", "8:32", 0);
        struct hvt_originals back;
        int fd = open_dir();

        d.ino = 4242;
        free(test_write_file(dir, "sdc", "syspath=/sys/devices/x/block/sdc\ndev=8:32\ndiskseq=0\n"
                                         "queue/nomerges=1\n"));
        ck_assert_int_eq(hvt_records_load(fd, &d, &back), 0);
        ck_assert_int_eq(back.value[HVT_ATTR_NOMERGES].num, 1);
        close(fd);
}
END_TEST

START_TEST(test_damaged) {
        struct hvt_subject d = disk("/sys/devices/x/block/sdc", "8:32", 0);
        struct hvt_originals back;
        int fd = open_dir();

        free(test_write_file(dir, "sdc", "syspath=/sys/devices/x/block/sdc\ndev=8:32\ndiskseq=0\n"
                                         "queue/scheduler=../../etc\n"));
        ck_assert_int_eq(hvt_records_load(fd, &d, &back), -EBADMSG);
        ck_assert(!exists("sdc"));

        free(test_write_file(dir, "sdc", "syspath=/sys/devices/x/block/sdc\ndev=8:32\ndiskseq=0\n"
                                         "queue/nomerges\n"));
        ck_assert_int_eq(hvt_records_load(fd, &d, &back), -EBADMSG);

        /* An attribute this version does not know (a newer hvtuned's) is skipped, the rest kept. */
        free(test_write_file(dir, "sdc", "syspath=/sys/devices/x/block/sdc\ndev=8:32\ndiskseq=0\n"
                                         "queue/io_poll=1\nqueue/nomerges=2\n"));
        ck_assert_int_eq(hvt_records_load(fd, &d, &back), 0);
        ck_assert_int_eq(back.value[HVT_ATTR_NOMERGES].num, 2);

        /* Without the instance lines nobody can tell whose record it is. */
        free(test_write_file(dir, "sdc", "queue/nomerges=0\n"));
        ck_assert_int_eq(hvt_records_load(fd, &d, &back), -EBADMSG);

        free(test_write_file(dir, "sdc", "syspath=/sys/devices/x/block/sdc\ndev=8:32\ndiskseq=0\n"
                                         "device/timeout=180\n"));
        ck_assert_int_eq(hvt_records_load(fd, &d, &back), 0);
        ck_assert_str_eq(back.value[HVT_ATTR_TIMEOUT].text, "180");
        close(fd);
}
END_TEST

/* A record holds its own subject's attributes only: a disk's never the driver's parameter or
 * its bind file (which would be "restored" at every pass and fail), the driver's never a
 * disk's. What says otherwise is damage; a save leaves another subject's original out. */
START_TEST(test_subject_attributes) {
        struct hvt_subject d = disk("/sys/devices/x/block/sdh", "8:112", 3), driver = hvt_subject_driver();
        struct hvt_originals o = {}, back;
        char path[PATH_MAX * 2];
        _cleanup_free_ char *text = NULL;
        int fd = open_dir();

        free(test_write_file(dir, "sdh", "syspath=/sys/devices/x/block/sdh\ndev=8:112\ndiskseq=3\n"
                                         "queue/nomerges=0\nparameters/storvsc_max_hw_queues=0\n"));
        ck_assert_int_eq(hvt_records_load(fd, &d, &back), -EBADMSG);
        ck_assert(!exists("sdh"));
        free(test_write_file(dir, "sdh", "syspath=/sys/devices/x/block/sdh\ndev=8:112\ndiskseq=3\n"
                                         "hv_storvsc/bind=f8b3781b-1e82-4818-a1c3-63d806ec15bb\n"));
        ck_assert_int_eq(hvt_records_load(fd, &d, &back), -EBADMSG);
        free(test_write_file(dir, "hv_storvsc", "syspath=/sys/module/hv_storvsc\ndev=\ndiskseq=0\n"
                                                "queue/scheduler=none\n"));
        ck_assert_int_eq(hvt_records_load(fd, &driver, &back), -EBADMSG);

        ck_assert_int_eq(hvt_setting_set_int(&o.value[HVT_ATTR_MAX_HW_QUEUES], HVT_ATTR_MAX_HW_QUEUES, 0), 0);
        ck_assert_int_eq(hvt_records_save(fd, &d, &o, 0), 0);
        ck_assert(!exists("sdh"));  /* nothing of its own to record */
        ck_assert_int_eq(hvt_setting_set_int(&o.value[HVT_ATTR_NOMERGES], HVT_ATTR_NOMERGES, 1), 0);
        ck_assert_int_eq(hvt_records_save(fd, &d, &o, 0), 0);
        snprintf(path, sizeof(path), "%s/sdh", dir);
        ck_assert_int_ge(hvt_read_file(path, &text), 0);
        ck_assert_ptr_null(strstr(text, "parameters/"));
        ck_assert_int_eq(hvt_records_load(fd, &d, &back), 0);
        ck_assert(!back.value[HVT_ATTR_MAX_HW_QUEUES].set);

        ck_assert_int_eq(hvt_records_save(fd, &driver, &o, 0), 0);
        ck_assert_int_eq(hvt_records_load(fd, &driver, &back), 0);
        ck_assert(back.value[HVT_ATTR_MAX_HW_QUEUES].set);
        ck_assert(!back.value[HVT_ATTR_NOMERGES].set);
        close(fd);
}
END_TEST

/* Writer and reader agree on one limit: a record of HVT_RECORD_MAX bytes loads back, one more
 * is not written. A FIFO or a link under a record's name is a damaged record, never a hang. */
START_TEST(test_limits_and_odd_files) {
        char syspath[HVT_RECORD_MAX + 64], path[PATH_MAX * 2];
        struct hvt_originals o = {}, back;
        struct hvt_subject d;
        struct stat st;
        int fd = open_dir();
        size_t base;

        ck_assert_int_eq(hvt_setting_set_sched(&o.value[HVT_ATTR_SCHEDULER], "mq-deadline"), 0);
        snprintf(syspath, sizeof(syspath), "/sys/block/sdg");
        d = disk(syspath, "8:96", 7);
        ck_assert_int_eq(hvt_records_save(fd, &d, &o, 0), 0);
        snprintf(path, sizeof(path), "%s/sdg", dir);
        ck_assert_int_eq(stat(path, &st), 0);
        base = (size_t) st.st_size;

        /* The syspath grown so that the record is exactly the limit, then one byte more. */
        for (size_t extra = HVT_RECORD_MAX - base; extra <= HVT_RECORD_MAX - base + 1; extra++) {
                memset(syspath, 'x', extra);
                snprintf(syspath + extra, sizeof(syspath) - extra, "/sys/block/sdg");
                d = disk(syspath, "8:96", 7);
                if (extra == HVT_RECORD_MAX - base) {
                        ck_assert_int_eq(hvt_records_save(fd, &d, &o, 0), 0);
                        ck_assert_int_eq(stat(path, &st), 0);
                        ck_assert_int_eq(st.st_size, HVT_RECORD_MAX);
                        ck_assert_int_eq(hvt_records_load(fd, &d, &back), 0);
                        ck_assert_str_eq(back.value[HVT_ATTR_SCHEDULER].text, "mq-deadline");
                } else
                        ck_assert_int_eq(hvt_records_save(fd, &d, &o, 0), -ENOBUFS);
        }

        ck_assert_int_eq(unlink(path), 0);
        ck_assert_int_eq(mkfifo(path, 0600), 0);
        d = disk("/sys/block/sdg", "8:96", 7);
        ck_assert_int_eq(hvt_records_load(fd, &d, &back), -EBADMSG);
        /* Saving replaces it with a record. */
        ck_assert_int_eq(hvt_records_save(fd, &d, &o, 0), 0);
        ck_assert_int_eq(hvt_records_load(fd, &d, &back), 0);
        ck_assert_int_eq(unlink(path), 0);
        ck_assert_int_eq(symlink("/etc/passwd", path), 0);
        ck_assert_int_eq(hvt_records_load(fd, &d, &back), -EBADMSG);
        close(fd);
}
END_TEST

/* A record that cannot be read is dropped as a damaged one is (found by fuzz-records: it stayed,
 * while the daemon said it was dropped): one byte past the limit, a FIFO, a link. */
START_TEST(test_unreadable_dropped) {
        char text[HVT_RECORD_MAX + 2], path[PATH_MAX * 2];
        struct hvt_subject d = disk("/sys/block/sdh", "8:112", 3);
        struct hvt_originals back;
        int fd = open_dir();
        size_t n;

        n = (size_t) snprintf(text, sizeof(text), "syspath=/sys/block/sdh\ndev=8:112\ndiskseq=3\n");
        memset(text + n, '#', sizeof(text) - n - 1);
        text[HVT_RECORD_MAX] = '\n';
        text[HVT_RECORD_MAX + 1] = '\0';
        free(test_write_file(dir, "sdh", text));
        ck_assert_int_eq(hvt_records_load(fd, &d, &back), -EBADMSG);
        ck_assert(!exists("sdh"));

        snprintf(path, sizeof(path), "%s/sdh", dir);
        ck_assert_int_eq(mkfifo(path, 0600), 0);
        ck_assert_int_eq(hvt_records_load(fd, &d, &back), -EBADMSG);
        ck_assert(!exists("sdh"));

        ck_assert_int_eq(symlink("/etc/passwd", path), 0);
        ck_assert_int_eq(hvt_records_load(fd, &d, &back), -EBADMSG);
        ck_assert(!exists("sdh"));
        ck_assert_int_eq(access("/etc/passwd", F_OK), 0);

        /* A directory is no record, and no save can replace it: it stays. */
        ck_assert_int_eq(mkdir(path, 0700), 0);
        ck_assert_int_eq(hvt_records_load(fd, &d, &back), -EISDIR);
        ck_assert(exists("sdh"));
        ck_assert_int_eq(rmdir(path), 0);
        close(fd);
}
END_TEST

/* A NUL byte is in no text hvtuned writes: the C string before it could pass for a whole record
 * ("nr_requests=12" of "nr_requests=12\08"), so the record is damaged (found by fuzz-records). */
START_TEST(test_nul_byte) {
        static const char text[] = "# hvtuned: values before hvtuned first wrote them\n"
                                   "syspath=/sys/block/sdi\ndev=8:128\ndiskseq=4\nqueue/nr_requests=12\0" "8\n";
        struct hvt_subject d = disk("/sys/block/sdi", "8:128", 4);
        struct hvt_originals back;
        char path[PATH_MAX * 2], buf[256];
        int fd = open_dir(), f;

        snprintf(path, sizeof(path), "%s/sdi", dir);
        f = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ck_assert_int_ge(f, 0);
        ck_assert_int_eq(write(f, text, sizeof(text) - 1), (ssize_t) sizeof(text) - 1);
        ck_assert_int_eq(close(f), 0);
        ck_assert_int_eq(hvt_read_small(fd, "sdi", buf, sizeof(buf)), -EBADMSG);
        ck_assert_int_eq(hvt_records_load(fd, &d, &back), -EBADMSG);
        ck_assert(!exists("sdi"));
        close(fd);
}
END_TEST

/* remove() reads a record's syspath as load() does, on any line (found by fuzz-records): a
 * record of the disk's name at another path stays, one at this path goes. */
START_TEST(test_remove_syspath_first) {
        struct hvt_subject d = disk("/sys/devices/y/block/sdj", "8:144", 5);
        int fd = open_dir();

        free(test_write_file(dir, "sdj", "# hvtuned: values before hvtuned first wrote them\n"
                                         "syspath=/sys/devices/x/block/sdj\ndev=8:144\ndiskseq=5\n"));
        ck_assert_int_eq(hvt_records_remove(fd, &d), 0);
        ck_assert(exists("sdj"));
        free(test_write_file(dir, "sdj", "# hvtuned: values before hvtuned first wrote them\n"
                                         "syspath=/sys/devices/y/block/sdj\ndev=8:144\ndiskseq=5\n"));
        ck_assert_int_eq(hvt_records_remove(fd, &d), 0);
        ck_assert(!exists("sdj"));
        close(fd);
}
END_TEST

/* Only a record proven hvtuned's by its header goes at remove(): a remove event for a disk
 * hvtuned never managed must not take an operator's file of that name, nor a file without
 * the header that names the disk. A save for a disk hvtuned manages replaces such a file (its
 * load has dropped it as damaged before, see records.h). */
START_TEST(test_remove_only_proven) {
        struct hvt_subject d = disk("/sys/devices/x/block/sdz", "8:400", 2);
        struct hvt_originals o = {}, back;
        char path[PATH_MAX * 2], buf[64];
        int fd = open_dir();

        free(test_write_file(dir, "sdz", "my notes on sdz\n"));
        ck_assert_int_eq(hvt_records_remove(fd, &d), 0);
        ck_assert_int_eq(hvt_read_small(fd, "sdz", buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "my notes on sdz\n");
        free(test_write_file(dir, "sdz", "syspath=/sys/devices/x/block/sdz\ndev=8:400\ndiskseq=2\n"));
        ck_assert_int_eq(hvt_records_remove(fd, &d), 0);
        ck_assert(exists("sdz"));
        snprintf(path, sizeof(path), "%s/sdz", dir);
        ck_assert_int_eq(unlink(path), 0);
        ck_assert_int_eq(mkfifo(path, 0600), 0);
        ck_assert_int_eq(hvt_records_remove(fd, &d), 0);
        ck_assert(exists("sdz"));

        ck_assert_int_eq(hvt_setting_set_int(&o.value[HVT_ATTR_NOMERGES], HVT_ATTR_NOMERGES, 1), 0);
        ck_assert_int_eq(hvt_records_save(fd, &d, &o, 0), 0);
        ck_assert_int_eq(hvt_records_load(fd, &d, &back), 0);
        ck_assert_int_eq(hvt_records_remove(fd, &d), 0);
        ck_assert(!exists("sdz"));
        /* A save of nothing is the managed disk's too (found by fuzz-records): what its load
         * took for a record goes, header or not. */
        free(test_write_file(dir, "sdz", "syspath=/sys/devices/x/block/sdz\ndev=8:400\ndiskseq=2\n"));
        ck_assert_int_eq(hvt_records_load(fd, &d, &back), 0);
        ck_assert_int_eq(hvt_records_save(fd, &d, &(struct hvt_originals) {}, 0), 0);
        ck_assert(!exists("sdz"));
        close(fd);
}
END_TEST

/* The temporary is a file hvtuned creates, never one it finds: a FIFO at an older version's
 * fixed temporary name (".#sdk", ".#.reload") blocked the open, and a hard link there had the
 * file it names elsewhere emptied and overwritten with the record. */
START_TEST(test_temporary_made_not_found) {
        struct hvt_subject d = disk("/sys/devices/x/block/sdk", "8:160", 6);
        struct hvt_originals o = {}, back;
        char path[PATH_MAX * 2], victim[] = "/tmp/hvtuned-victim.XXXXXX", buf[64];
        _cleanup_free_ char *text = NULL;
        struct stat st;
        int fd = open_dir(), v;

        ck_assert_int_eq(hvt_setting_set_int(&o.value[HVT_ATTR_NOMERGES], HVT_ATTR_NOMERGES, 2), 0);
        snprintf(path, sizeof(path), "%s/.#sdk", dir);
        ck_assert_int_eq(mkfifo(path, 0600), 0);
        ck_assert_int_eq(hvt_records_save(fd, &d, &o, 0), 0);
        ck_assert_int_eq(hvt_records_load(fd, &d, &back), 0);
        ck_assert_int_eq(back.value[HVT_ATTR_NOMERGES].num, 2);
        ck_assert_int_eq(lstat(path, &st), 0);
        ck_assert(S_ISFIFO(st.st_mode));
        snprintf(path, sizeof(path), "%s/.#.reload", dir);
        ck_assert_int_eq(mkfifo(path, 0600), 0);
        ck_assert_int_eq(hvt_write_atomic(fd, ".reload", "0 0 ok\n", 7, 0, NULL), 0);
        ck_assert_int_eq(hvt_read_small(fd, ".reload", buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "0 0 ok\n");

        v = mkstemp(victim);
        ck_assert_int_ge(v, 0);
        ck_assert_int_eq(write(v, "precious\n", 9), 9);
        ck_assert_int_eq(close(v), 0);
        snprintf(path, sizeof(path), "%s/.#sdk", dir);
        ck_assert_int_eq(unlink(path), 0);
        ck_assert_int_eq(link(victim, path), 0);
        ck_assert_int_eq(hvt_records_save(fd, &d, &o, 0), 0);
        ck_assert_int_ge(hvt_read_file(victim, &text), 0);
        ck_assert_str_eq(text, "precious\n");
        ck_assert_int_eq(unlink(victim), 0);

        /* Every temporary was renamed into place: none is left. */
        ck_assert_uint_eq(count_prefixed(".#hvtuned."), 0);
        close(fd);
}
END_TEST

/* hvtuned's temporaries have a name only hvtuned uses: a leftover of any type goes (unlinkat()
 * never opens it), a directory, which is none of its making, stays, counted. Names that only
 * look alike are not its own; other dot files are never counted. */
START_TEST(test_prune_temporaries) {
        static const char *const near[] = {
                ".#hvtuned.sda.0123456789abcde",     /* 15 digits */
                ".#hvtuned.sda.0123456789abcdeg",
                ".#hvtuned.sda.0123456789ABCDEF",
                ".#hvtuned..0123456789abcdef",       /* no name */
                ".#hvtuned.sda-0123456789abcdef",
        };
        char path[PATH_MAX * 2];
        unsigned asked = 0;
        struct stat st;
        int fd = open_dir();

        free(test_write_file(dir, ".#hvtuned.sda.0123456789abcdef", "half a record"));
        free(test_write_file(dir, ".#hvtuned..reload.0123456789abcdef", "0 0"));
        snprintf(path, sizeof(path), "%s/.#hvtuned.sdb.fedcba9876543210", dir);
        ck_assert_int_eq(mkfifo(path, 0600), 0);
        snprintf(path, sizeof(path), "%s/.#hvtuned.sdc.0000000000000000", dir);
        ck_assert_int_eq(symlink("/etc/passwd", path), 0);
        snprintf(path, sizeof(path), "%s/.#hvtuned.sdd.1111111111111111", dir);
        ck_assert_int_eq(mkdir(path, 0700), 0);
        /* FIFOs: an older hvtuned's temporaries (".#NAME") go when regular files. Nor is a
         * FIFO there an older hvtuned's. */
        for (size_t i = 0; i < ELEMENTSOF(near); i++) {
                snprintf(path, sizeof(path), "%s/%s", dir, near[i]);
                ck_assert_int_eq(mkfifo(path, 0600), 0);
        }
        snprintf(path, sizeof(path), "%s/.#sde", dir);
        ck_assert_int_eq(mkfifo(path, 0600), 0);

        ck_assert_int_eq(hvt_records_prune(fd, keep_sdd, &asked), 1);
        ck_assert(!exists(".#hvtuned.sda.0123456789abcdef"));
        ck_assert(!exists(".#hvtuned..reload.0123456789abcdef"));
        ck_assert(!exists(".#hvtuned.sdb.fedcba9876543210"));
        snprintf(path, sizeof(path), "%s/.#hvtuned.sdc.0000000000000000", dir);
        ck_assert_int_lt(lstat(path, &st), 0);
        ck_assert_int_eq(access("/etc/passwd", F_OK), 0);
        ck_assert(exists(".#hvtuned.sdd.1111111111111111"));
        for (size_t i = 0; i < ELEMENTSOF(near); i++)
                ck_assert_msg(exists(near[i]), "%s was pruned", near[i]);
        ck_assert(exists(".#sde"));
        ck_assert_uint_eq(asked, 0);
        close(fd);
}
END_TEST

START_TEST(test_state_no_record_name) {
        struct hvt_subject s = { .name = HVT_STATE_FILE, .syspath = "/sys/block/x", .dev = "8:0" };
        struct hvt_originals o = {};
        int fd = open_dir();

        /* No disk can be named so: its record would be the state file. */
        o.value[HVT_ATTR_SCHEDULER] = (struct hvt_setting) { .set = true, .text = "none" };
        ck_assert_int_eq(hvt_records_save(fd, &s, &o, 0), -EINVAL);
        close(fd);
}
END_TEST

START_TEST(test_prune) {
        int fd = open_dir();
        unsigned asked = 0;
        char link[PATH_MAX * 2];
        struct stat st;

        free(test_write_file(dir, "sdd", "x"));
        free(test_write_file(dir, "sde", "# hvtuned: values before hvtuned first wrote them\nsyspath=/sys/block/sde\n"));
        free(test_write_file(dir, ".#sdf", "x"));
        /* The daemon's own files: the state of --status (lib/state.h), the reload's record. */
        free(test_write_file(dir, HVT_STATE_FILE, "hvtuned-state\t1\nend\t1\n"));
        free(test_write_file(dir, ".reload", "1 2 3 ok\n"));
        /* Not hvtuned's: an operator's notes, a FIFO, an editor's lock link. */
        free(test_write_file(dir, "notes.txt", "mine\n"));
        snprintf(link, sizeof(link), "%s/fifo", dir);
        ck_assert_int_eq(mkfifo(link, 0600), 0);
        snprintf(link, sizeof(link), "%s/.#notes.txt", dir);
        ck_assert_int_eq(symlink("root@host.1234", link), 0);
        ck_assert_int_eq(hvt_records_prune(fd, keep_sdd, &asked), 2);
        ck_assert(exists("sdd"));
        ck_assert(!exists("sde"));
        ck_assert(!exists(".#sdf"));
        ck_assert(exists(".keep-dir"));
        ck_assert(exists(HVT_STATE_FILE) && exists(".reload"));
        ck_assert(exists("notes.txt") && exists("fifo"));
        ck_assert_int_eq(lstat(link, &st), 0);  /* the lock link stays, dangling as it was */
        ck_assert_uint_eq(asked, 4);
        close(fd);
}
END_TEST

/* --restore's view: the records only (by header, no dot file, no operator's file), in the
 * kernel's order of names; a delete takes a record and nothing else. */
START_TEST(test_list_and_delete) {
        static const char header[] = "# hvtuned: values before hvtuned first wrote them\nsyspath=/sys/block/x\n";
        int fd = open_dir();
        char **names = NULL, path[PATH_MAX + 8];
        size_t n = 0;

        free(test_write_file(dir, "sdaa", header));
        free(test_write_file(dir, "sdz", header));
        free(test_write_file(dir, "hv_storvsc", header));
        free(test_write_file(dir, ".#hvtuned.sdb.0123456789abcdef", header));
        free(test_write_file(dir, "notes.txt", "mine\n"));
        /* A record that cannot be read may be one: listed, for its load to say why. */
        ck_assert_int_eq(mkdir(strcat(strcpy(path, dir), "/sdc"), 0755), 0);
        ck_assert_int_eq(hvt_records_list(fd, &names, &n), 0);
        ck_assert_uint_eq(n, 4);
        ck_assert_str_eq(names[0], "sdc");
        ck_assert_str_eq(names[1], "sdz");
        ck_assert_str_eq(names[2], "sdaa");
        ck_assert_str_eq(names[3], "hv_storvsc");
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);

        ck_assert_int_eq(hvt_records_delete(fd, "sdz"), 0);
        ck_assert(!exists("sdz"));
        ck_assert_int_eq(hvt_records_delete(fd, "notes.txt"), 0);
        ck_assert(exists("notes.txt"));
        ck_assert_int_eq(hvt_records_delete(fd, "gone"), 0);
        ck_assert_int_eq(hvt_records_delete(fd, "../x"), -EINVAL);
        ck_assert_int_eq(hvt_records_delete(fd, ".#hvtuned.sdb.0123456789abcdef"), -EINVAL);
        ck_assert_int_eq(hvt_records_delete(fd, "sdc"), -EISDIR);
        ck_assert(exists("sdc"));
        close(fd);
}
END_TEST

/* A dry run's read: another instance's record and a damaged one are told, and stay. */
START_TEST(test_read_deletes_nothing) {
        struct hvt_subject d = disk("/sys/devices/x/host0/target0:0:0/0:0:0:0/block/sda", "8:0", 9);
        struct hvt_subject other = disk("/sys/devices/x/host0/target0:0:0/0:0:0:0/block/sda", "8:0", 10);
        struct hvt_originals o = {}, back;
        int fd = open_dir();

        ck_assert_int_eq(hvt_setting_from_kernel(&o.value[HVT_ATTR_SCHEDULER], HVT_ATTR_SCHEDULER, "bfq"), 0);
        ck_assert_int_eq(hvt_records_save(fd, &d, &o, 0), 0);
        ck_assert_int_eq(hvt_records_read(fd, &other, &back), -ENOENT);
        ck_assert(exists("sda"));
        ck_assert_int_eq(hvt_records_read(fd, &d, &back), 0);
        ck_assert_str_eq(back.value[HVT_ATTR_SCHEDULER].text, "bfq");
        free(test_write_file(dir, "sda", "# hvtuned: values before hvtuned first wrote them\nnonsense\n"));
        ck_assert_int_eq(hvt_records_read(fd, &d, &back), -EBADMSG);
        ck_assert(exists("sda"));
        close(fd);
}
END_TEST

int main(void) {
        Suite *s = suite_create("records");
        TCase *tc = tcase_create("records");

        tcase_add_test(tc, test_roundtrip);
        tcase_add_test(tc, test_other_instance);
        tcase_add_test(tc, test_other_inode);
        tcase_add_test(tc, test_record_without_ino);
        tcase_add_test(tc, test_damaged);
        tcase_add_test(tc, test_subject_attributes);
        tcase_add_test(tc, test_prune);
        tcase_add_test(tc, test_list_and_delete);
        tcase_add_test(tc, test_read_deletes_nothing);
        tcase_add_test(tc, test_state_no_record_name);
        tcase_add_test(tc, test_limits_and_odd_files);
        tcase_add_test(tc, test_unreadable_dropped);
        tcase_add_test(tc, test_nul_byte);
        tcase_add_test(tc, test_remove_syspath_first);
        tcase_add_test(tc, test_remove_only_proven);
        tcase_add_test(tc, test_temporary_made_not_found);
        tcase_add_test(tc, test_prune_temporaries);
        suite_add_tcase(s, tc);
        return test_run(s);
}
