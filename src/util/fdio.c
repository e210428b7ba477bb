#include "util/fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cleanup.h"

int fd_write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

ssize_t fd_read_full(int fd, void *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)p + got, n - got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

int fd_set_nonblock(int fd, int on)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0)
        return -1;
    fl = on ? (fl | O_NONBLOCK) : (fl & ~O_NONBLOCK);
    return fcntl(fd, F_SETFL, fl);
}

int fd_set_cloexec(int fd, int on)
{
    int fl = fcntl(fd, F_GETFD);
    if (fl < 0)
        return -1;
    fl = on ? (fl | FD_CLOEXEC) : (fl & ~FD_CLOEXEC);
    return fcntl(fd, F_SETFD, fl);
}

int file_write_str_at(int dirfd, const char *path, const char *s, cella_err *err)
{
    _cleanup_close_ int fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return cella_err_set(err, errno, "open %s", path);
    size_t n = strlen(s);
    ssize_t w;
    do
        w = write(fd, s, n);
    while (w < 0 && errno == EINTR);
    if (w < 0)
        return cella_err_set(err, errno, "write '%s' to %s", s, path);
    if ((size_t)w != n)
        return cella_err_set(err, 0, "short write to %s", path);
    return 0;
}

int file_read_str_at(int dirfd, const char *path, size_t max, char **out, cella_err *err)
{
    _cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return cella_err_set(err, errno, "open %s", path);
    char *buf = cella_malloc(max + 1);
    ssize_t r = fd_read_full(fd, buf, max);
    if (r < 0) {
        int e = errno;
        cella_free(buf);
        return cella_err_set(err, e, "read %s", path);
    }
    buf[r] = '\0';
    *out = buf;
    return 0;
}

int fs_mkdir_p(const char *path, mode_t mode, cella_err *err)
{
    _cleanup_free_ char *p = cella_strdup(path);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        int rc = mkdir(p, 0755);
        *s = '/';
        if (rc < 0 && errno != EEXIST)
            return cella_err_set(err, errno, "mkdir %.*s", (int)(s - p), p);
    }
    if (mkdir(p, mode) < 0 && errno != EEXIST)
        return cella_err_set(err, errno, "mkdir %s", p);
    return 0;
}

int64_t clock_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
