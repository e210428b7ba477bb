/* Small file-descriptor helpers that retry on EINTR and report through cella_err. */
#ifndef CELLA_UTIL_FDIO_H
#define CELLA_UTIL_FDIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/err.h"

/* Writes all n bytes (blocking fd). Returns 0 or -1 with errno set. */
int fd_write_all(int fd, const void *p, size_t n);
/* Reads up to n bytes, stopping early only at EOF. Returns bytes read or -1. */
ssize_t fd_read_full(int fd, void *p, size_t n);
int fd_set_nonblock(int fd, int on);
int fd_set_cloexec(int fd, int on);

/* Writes a short string to an existing file (cgroup knobs, /proc maps):
 * one write(2) call, as those files require. */
int file_write_str_at(int dirfd, const char *path, const char *s, cella_err *err);
/* Reads a small file (up to max bytes) into a NUL-terminated heap string. */
int file_read_str_at(int dirfd, const char *path, size_t max, char **out, cella_err *err);

/* mkdir -p: missing parents get 0755, the last component `mode`. An
 * existing directory is fine. */
int fs_mkdir_p(const char *path, mode_t mode, cella_err *err);

/* Monotonic clock in nanoseconds / milliseconds. */
int64_t clock_now_ns(void);

#endif
