/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: what every libFuzzer target needs: the entry point's prototype, a NUL-terminated
 * copy of the input, a check that stops the run on a broken promise, and private scratch
 * directories that go away with the process. */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"
#include "subject.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A promise of the library that the input broke: libFuzzer keeps the input as a crash. */
/* The subject of records of a disk (a pointer), as the daemon makes it. */
#define FUZZ_SUBJECT(disk) (&(struct hvt_subject[1]) { hvt_subject_disk(disk) }[0])

#define fuzz_check(cond, ...)                                                           \
        do {                                                                            \
                if (!(cond)) {                                                          \
                        fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond);      \
                        fprintf(stderr, __VA_ARGS__);                                   \
                        fputc('\n', stderr);                                            \
                        abort();                                                        \
                }                                                                       \
        } while (0)

/* The input as a C string. NULs inside it end the string early, as they would for any
 * text the daemon reads with its string functions. */
static inline char *fuzz_strndup(const uint8_t *data, size_t size) {
        char *s = malloc(size + 1);

        if (!s)
                abort();
        memcpy(s, data, size);
        s[size] = '\0';
        return s;
}

/* Removes everything below dirfd, keeping dirfd's own directory. Subdirectories are emptied
 * after the stream is closed, so that a deep tree (fuzz-classify makes 120 levels) holds one
 * stream open at a time, not one per level. */
static inline void fuzz_empty_dir(int dirfd) {
        int fd = dup(dirfd);
        DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
        char **names = NULL;
        size_t n = 0;
        struct dirent *de;

        if (!dir)
                abort();
        rewinddir(dir);
        while ((de = readdir(dir))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (unlinkat(dirfd, de->d_name, 0) == 0)
                        continue;
                if (errno != EISDIR)
                        abort();
                names = realloc(names, (n + 1) * sizeof(*names));
                if (!names || !(names[n++] = strdup(de->d_name)))
                        abort();
        }
        closedir(dir);
        for (size_t i = 0; i < n; i++) {
                int sub = openat(dirfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                if (sub < 0)
                        abort();
                fuzz_empty_dir(sub);
                close(sub);
                if (unlinkat(dirfd, names[i], AT_REMOVEDIR) < 0)
                        abort();
                free(names[i]);
        }
        free(names);
}

static char fuzz_scratch_path[256];

static inline void fuzz_scratch_remove(void) {
        int fd = open(fuzz_scratch_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0)
                return;
        fuzz_empty_dir(fd);
        close(fd);
        (void) rmdir(fuzz_scratch_path);
}

/* The process's own 0700 directory, on tmpfs where there is one: the targets write files on
 * every run, and records are fsync()ed. Removed at exit. */
static inline const char *fuzz_scratch(void) {
        const char *base = getenv("HVTUNED_FUZZ_TMPDIR");

        if (*fuzz_scratch_path)
                return fuzz_scratch_path;
        if (!base)
                base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(fuzz_scratch_path, sizeof(fuzz_scratch_path), "%s/hvtuned-fuzz.XXXXXX", base);
        if (!mkdtemp(fuzz_scratch_path)) {
                perror("mkdtemp");
                abort();
        }
        atexit(fuzz_scratch_remove);
        return fuzz_scratch_path;
}

/* Writes len bytes of text to name below dirfd with mode, replacing what was there. */
static inline void fuzz_write_file(int dirfd, const char *name, const char *text, size_t len, mode_t mode) {
        int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);

        if (fd < 0 || write(fd, text, len) != (ssize_t) len || fchmod(fd, mode) < 0 || close(fd) < 0) {
                perror(name);
                abort();
        }
}
