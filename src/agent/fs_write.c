/* Writing: mkdir, write (atomic, within the workspace quota) and the file
 * of write-exec. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <unistd.h>

#include "agent/agent_int.h"
#include "agent/fs_int.h"
#include "util/alloc.h"

/* path's parent directory into buf ("." or "/" at the top). */
void fs_parent_of(const char *path, char *buf, size_t n)
{
    size_t l = strlen(path);
    while (l > 1 && path[l - 1] == '/')
        l--;
    while (l > 0 && path[l - 1] != '/')
        l--;
    while (l > 1 && path[l - 1] == '/')
        l--;
    if (l == 0)
        snprintf(buf, n, ".");
    else
        snprintf(buf, n, "%.*s", (int)l, path);
}

/* mkdir -p: every missing directory of path, mode for the last, 0755 above. */
int fs_make_dirs(const char *path, unsigned mode, bool *created)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof(buf), "%s", path);
    size_t n = strlen(buf);
    while (n > 1 && buf[n - 1] == '/')
        buf[--n] = '\0';
    for (char *p = buf + 1;; p++) {
        bool last = !*p;
        if (!last && *p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, last ? mode : 0755) == 0) {
            if (last) {
                *created = true;
                /* The mode asked for, whatever the umask says. */
                if (chmod(buf, mode) < 0)
                    return fs_fail_errno(errno, "chmod", buf);
            }
        } else {
            int e = errno;
            struct stat st;
            if (e != EEXIST)
                return fs_fail_errno(e, "mkdir", buf);
            if (stat(buf, &st) < 0 || !S_ISDIR(st.st_mode))
                return fs_fail(last ? BUILTIN_EXISTS : BUILTIN_WRONG_TYPE, "%s: %s", last ?
                               "already exists and is not a directory" : "not a directory", buf);
        }
        if (last)
            return BUILTIN_OK;
        *p = '/';
    }
}

/* mkdir {path, mode=0755, parents=false} -> {created}. */
int fs_op_mkdir(const fs_args *a, jsonw *w)
{
    const char *path;
    unsigned mode;
    bool parents;
    if (fs_arg_path(a, "path", &path) < 0 || fs_arg_mode(a, "mode", 0755, &mode) < 0 ||
        fs_arg_bool(a, "parents", false, &parents) < 0)
        return BUILTIN_USAGE;
    /* No setuid/setgid from a request (the seccomp filter refuses them too). */
    mode &= 01777;
    bool created = false;
    if (parents) {
        int rc = fs_make_dirs(path, mode, &created);
        if (rc)
            return rc;
    } else if (mkdir(path, mode) < 0) {
        int e = errno;
        if (e == ENOENT) {
            char dir[PATH_MAX];
            fs_parent_of(path, dir, sizeof(dir));
            return fs_fail(BUILTIN_NOT_FOUND, "parent not found: %s", dir);
        }
        return fs_fail_errno(e, "mkdir", path);
    } else {
        created = true;
        if (chmod(path, mode) < 0)
            return fs_fail_errno(errno, "chmod", path);
    }
    jw_obj(w);
    jw_kbool(w, "created", created);
    jw_obj_end(w);
    return BUILTIN_OK;
}

/* ---- writing ------------------------------------------------------------------ */

void fs_tmp_name(char *buf, size_t n, const char *dir, int tries)
{
    uint64_t r = 0;
    if (getrandom(&r, sizeof(r), 0) < 0)
        r = (uint64_t)getpid() * 1000003u + (uint64_t)tries;
    snprintf(buf, n, "%s%s.cella-%016llx.tmp", dir ? dir : "", dir ? "/" : "",
             (unsigned long long)r);
}

static int copy_in(int out, int in_fd, const void *data, size_t n, uint64_t *written)
{
    *written = 0;
    if (in_fd < 0) {
        for (const char *p = data; n;) {
            ssize_t k = write(out, p, n);
            if (k < 0 && errno == EINTR)
                continue;
            if (k < 0)
                return -1;
            p += k;
            n -= (size_t)k;
            *written += (uint64_t)k;
        }
        return 0;
    }
    static char buf[256 << 10];
    for (;;) {
        ssize_t got = read(in_fd, buf, sizeof(buf));
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -1;
        if (got == 0)
            return 0;
        for (ssize_t off = 0; off < got;) {
            ssize_t k = write(out, buf + off, (size_t)(got - off));
            if (k < 0 && errno == EINTR)
                continue;
            if (k < 0)
                return -1;
            off += k;
            *written += (uint64_t)k;
        }
    }
}

int fs_write_atomic(const char *path, unsigned mode, int in_fd, const void *data, size_t n,
                    uint64_t limit, uint64_t expect, uint64_t *written)
{
    char dir[PATH_MAX], tmp[PATH_MAX + 64];
    fs_parent_of(path, dir, sizeof(dir));
    /* lstat: a symlink at path is replaced, like a file, never followed
     * (to a directory or anywhere else). */
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return fs_fail(BUILTIN_WRONG_TYPE, "is a directory: %s", path);
    /* The quota, as a file size limit: the kernel stops the write at the
     * byte that would pass it (EFBIG; SIGXFSZ is ignored). Only lowered,
     * never raised past the sandbox's own limit. */
    struct rlimit rl;
    if (limit != UINT64_MAX && getrlimit(RLIMIT_FSIZE, &rl) == 0 &&
        (rl.rlim_cur == RLIM_INFINITY || limit < rl.rlim_cur)) {
        rl.rlim_cur = limit;
        setrlimit(RLIMIT_FSIZE, &rl);
    }
    /* O_TMPFILE: the file has no name until it is complete, so a kill
     * half-way (a client gone, the sandbox stopped) leaves nothing. */
    bool named = false;
    int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
        /* Filesystems without O_TMPFILE: a hidden sibling, new (O_EXCL) so
         * never a planted link. */
        fs_tmp_name(tmp, sizeof(tmp), dir, 0);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        named = fd >= 0;
    }
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT)
            return fs_fail(BUILTIN_PARENT_MISSING, "parent not found: %s", dir);
        if (e == ENOTDIR)
            return fs_fail(BUILTIN_WRONG_TYPE, "parent is not a directory: %s", dir);
        return fs_fail_errno(e, "write", path);
    }
    if (copy_in(fd, in_fd, data, n, written) < 0)
        goto io_error;
    if (expect != UINT64_MAX && *written != expect) {
        /* A client gone half-way: what arrived replaces nothing. */
        if (named)
            unlink(tmp);
        close(fd);
        return fs_fail(BUILTIN_IO, "transfer aborted: %llu of %llu bytes arrived",
                       (unsigned long long)*written, (unsigned long long)expect);
    }
    if (fsync(fd) < 0 || fchmod(fd, mode & 01777) < 0)
        goto io_error;
    if (!named) {
        /* Give it a name beside the target, then rename over the target:
         * linkat cannot replace, rename can, atomically. */
        char proc[64];
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        for (int tries = 0;; tries++) {
            fs_tmp_name(tmp, sizeof(tmp), dir, tries);
            if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0)
                break;
            if (errno != EEXIST || tries > 8)
                goto io_error;
        }
        named = true;
    }
    if (close(fd) < 0) {
        fd = -1;
        goto io_error;
    }
    fd = -1;
    if (rename(tmp, path) < 0)
        goto io_error;
    return BUILTIN_OK;
io_error: {
        int e = errno;
        if (fd >= 0)
            close(fd);
        if (named)
            unlink(tmp);
        return fs_fail_errno(e, "write", path);
    }
}

/* Adds the allocated bytes under the directory fd (consumed). */
static void usage_walk(int fd, int depth, uint64_t *sum)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    for (struct dirent *de; (de = readdir(d));) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        struct stat st;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        *sum += (uint64_t)st.st_blocks * 512;
        if (S_ISDIR(st.st_mode) && depth < FS_MAX_DEPTH) {
            int c = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (c >= 0)
                usage_walk(c, depth + 1, sum);
        }
    }
    closedir(d);
}

uint64_t fs_workspace_usage(void)
{
    uint64_t sum = 0;
    int fd = open("/workspace", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0)
        usage_walk(fd, 0, &sum);
    return sum;
}

/* What a write into path may add: the quota less what the workspace
 * holds, plus what the file being replaced holds. UINT64_MAX: no quota. */
static uint64_t write_allowance(const fs_args *a, const char *path, int *rc)
{
    uint64_t quota;
    *rc = fs_arg_u64(a, "quota", 0, &quota) < 0 ? BUILTIN_USAGE : 0;
    if (*rc || quota == 0)
        return UINT64_MAX;
    uint64_t used = fs_workspace_usage();
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISREG(st.st_mode))
        used -= (uint64_t)st.st_blocks * 512 > used ? used : (uint64_t)st.st_blocks * 512;
    return used >= quota ? 0 : quota - used;
}

/* write {path, mode=0644, parents=false, size?, quota?} <- stdin
 *   -> {bytes_written, path}. size: the bytes the caller declared; fewer
 *   arriving (a client gone half-way) fails and replaces nothing. */
int fs_op_write(const fs_args *a, jsonw *w)
{
    const char *path;
    unsigned mode;
    bool parents;
    uint64_t size;
    if (fs_arg_path(a, "path", &path) < 0 || fs_arg_mode(a, "mode", 0644, &mode) < 0 ||
        fs_arg_bool(a, "parents", false, &parents) < 0 ||
        fs_arg_u64(a, "size", UINT64_MAX, &size) < 0)
        return BUILTIN_USAGE;
    int rc;
    uint64_t allow = write_allowance(a, path, &rc);
    if (rc)
        return rc;
    if (size != UINT64_MAX && size > allow)
        return fs_fail(BUILTIN_QUOTA, "resource limit exceeded: %llu bytes would pass the "
                       "workspace quota (%llu bytes left)", (unsigned long long)size,
                       (unsigned long long)allow);
    if (parents) {
        char dir[PATH_MAX];
        fs_parent_of(path, dir, sizeof(dir));
        bool created;
        if ((rc = fs_make_dirs(dir, 0755, &created)))
            return rc;
    }
    uint64_t written;
    if ((rc = fs_write_atomic(path, mode, 0, NULL, 0, allow, size, &written)))
        return rc;
    jw_obj(w);
    jw_ku64(w, "bytes_written", written);
    char *abs = fs_abs(path);
    jw_kstr(w, "path", abs);
    cella_free(abs);
    jw_obj_end(w);
    return BUILTIN_OK;
}

/* write-exec's file (builtin.c): parents made, written as write does. */
int agent_builtin_write(const char *path, const char *mode_s, const char *content)
{
    char *end;
    unsigned long mode = strtoul(mode_s, &end, 8);
    if (!*path || !*mode_s || *end || mode > 07777)
        return EINVAL;
    char dir[PATH_MAX];
    fs_parent_of(path, dir, sizeof(dir));
    bool created;
    uint64_t n;
    int rc = fs_make_dirs(dir, 0755, &created);
    if (rc == BUILTIN_OK)
        rc = fs_write_atomic(path, (unsigned)mode, -1, content, strlen(content), UINT64_MAX,
                             UINT64_MAX, &n);
    switch (rc) {
    case BUILTIN_OK:
        return 0;
    case BUILTIN_NOT_FOUND:
    case BUILTIN_PARENT_MISSING:
        return ENOENT;
    case BUILTIN_WRONG_TYPE:
        return EISDIR;
    case BUILTIN_DENIED:
        return EACCES;
    case BUILTIN_QUOTA:
        return EFBIG;
    default:
        return EIO;
    }
}

