/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Owns: the small helpers every file uses (cleanup attributes, array sizes, string copy). */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

static inline void freep(void *p) {
        free(*(void **) p);
}
#define _cleanup_free_ _cleanup_(freep)

/* Keeps errno: a cleanup must not clobber the error being returned. */
static inline void closep(int *fd) {
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
}
#define _cleanup_close_ _cleanup_(closep)

#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)         \
        static inline void func##p(type *p) {           \
                if (*p)                                 \
                        func(*p);                       \
        }

DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir);

/* Hands on what a cleanup owns: the value, with the variable left empty so that its cleanup
 * frees nothing. */
#define TAKE_FD(fd)                             \
        ({                                      \
                int *_fdp_ = &(fd);             \
                int _fd_ = *_fdp_;              \
                *_fdp_ = -EBADF;                \
                _fd_;                           \
        })
#define TAKE_PTR(ptr)                           \
        ({                                      \
                typeof(ptr) *_ptrp_ = &(ptr);   \
                typeof(ptr) _ptr_ = *_ptrp_;    \
                *_ptrp_ = NULL;                 \
                _ptr_;                          \
        })

/* Frees n strings and the array that holds them. */
static inline void hvt_strv_free(char **v, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

/* clock in µs. */
static inline uint64_t hvt_now_usec(clockid_t clock) {
        struct timespec ts = {};

        (void) clock_gettime(clock, &ts);
        return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

/* The process's id, as systemd's raw_getpid() asks it. Not getpid(): its stub is all that
 * hvtuned's start needed from a 64 KiB stretch of libc's text nothing else of it touches, and
 * the kernel's fault-around maps the whole stretch in (64 KiB of the service's peak RSS,
 * docs/performance.md). syscall() is in text that is mapped anyway. */
static inline pid_t hvt_getpid(void) {
        return (pid_t) syscall(SYS_getpid);
}

/* qsort() and bsearch() of strings (char *) in strcmp()'s order. */
static inline int hvt_strcmpp(const void *a, const void *b) {
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* A string that may be NULL (out of memory), for a message. */
static inline const char *strna(const char *s) {
        return s ? s : "n/a";
}

/* errno as a negative return value, never 0 even if a libc call forgot to set it. */
static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}

/* Copies src into dst[size], cut to fit: false when it was cut. Unlike snprintf("%s"), it
 * says so, and optimising compilers do not warn about a cut the caller expects. */
static inline bool hvt_strscpy(char *dst, size_t size, const char *src) {
        size_t n = strlen(src);
        bool whole = n < size;

        if (size == 0)
                return false;
        if (!whole)
                n = size - 1;
        memcpy(dst, src, n);
        dst[n] = '\0';
        return whole;
}
