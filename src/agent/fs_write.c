/* Writing: mkdir, write (atomic, within the workspace quota: fs_quota.c)
 * and the file of write-exec. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "agent/agent_int.h"
#include "agent/fs_int.h"
#include "agent/fs_quota.h"
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

/* Writes all of p to out; -1 with errno. */
static int write_all(int out, const char *p, size_t n)
{
    while (n) {
        ssize_t k = write(out, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* The bytes of in_fd (or data) into out, each piece reserved against the
 * quota (q, when the file counts) before it is written. A status. */
static int copy_in(int out, int in_fd, const void *data, size_t n, fsq *q, const char *path,
                   uint64_t *written)
{
    *written = 0;
    int rc;
    if (in_fd < 0) {
        if ((rc = fsq_reserve(q, fsq_blocks(n), 0, path)))
            return rc;
        if (write_all(out, data, n) < 0)
            return fs_fail_errno(errno, "write", path);
        *written = n;
        return BUILTIN_OK;
    }
    static char buf[256 << 10];
    for (;;) {
        ssize_t got = fs_read_in(in_fd, buf, sizeof(buf));
        if (got < 0)
            return fs_fail_errno(errno, "write", path);
        if (got == 0)
            return BUILTIN_OK;
        if ((rc = fsq_reserve(q, fsq_blocks(*written + (uint64_t)got), FSQ_AHEAD, path)))
            return rc;
        if (write_all(out, buf, (size_t)got) < 0)
            return fs_fail_errno(errno, "write", path);
        *written += (uint64_t)got;
    }
}

/* The last step of a write, run under the quota's lock when the file
 * counts (fsq_commit): name the finished file beside the target, then
 * rename it over the target (linkat cannot replace; rename can,
 * atomically). Both in dir, the directory resolved once at the start. */
typedef struct commit_arg {
    int dir;                      /* O_PATH: the target's directory */
    int fd;                       /* the file; closed here */
    bool named;                   /* tmp already names it (no O_TMPFILE) */
    char *tmp;                    /* its name in dir */
    const char *leaf, *path;
} commit_arg;

static int commit_file(void *arg)
{
    commit_arg *c = arg;
    int e = 0;
    if (!c->named) {
        char proc[64];
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", c->fd);
        for (int tries = 0;; tries++) {
            fs_tmp_name(c->tmp, FS_TMP_NAME_MAX, NULL, tries);
            if (linkat(AT_FDCWD, proc, c->dir, c->tmp, AT_SYMLINK_FOLLOW) == 0)
                break;
            if (errno != EEXIST || tries > 8) {
                e = errno;
                break;
            }
        }
        c->named = e == 0;
    }
    if (close(c->fd) < 0 && !e)
        e = errno;
    c->fd = -1;
    if (!e && renameat(c->dir, c->tmp, c->dir, c->leaf) < 0)
        e = errno;
    if (e) {
        if (c->named)
            unlinkat(c->dir, c->tmp, 0);
        c->named = false;
        return fs_fail_errno(e, "write", c->path);
    }
    c->named = false;             /* renamed: nothing left to clean up */
    return BUILTIN_OK;
}

static uint64_t commit_frees(void *arg)
{
    commit_arg *c = arg;
    return fsq_freed_at(c->dir, c->leaf);
}

/* path's last component (path is normalised: no trailing "/"). */
static const char *leaf_of(const char *path)
{
    const char *s = strrchr(path, '/');
    return s && s[1] ? s + 1 : s ? "." : path;
}

int fs_write_atomic(const char *path, unsigned mode, int in_fd, const void *data, size_t n,
                    fsq *q, uint64_t expect, uint64_t *written)
{
    char parent[PATH_MAX], tmp[FS_TMP_NAME_MAX];
    fs_parent_of(path, parent, sizeof(parent));
    const char *leaf = leaf_of(path);
    /* The directory is resolved once, and every step after is relative to
     * it: a process in the sandbox that swaps a symlink in the path
     * meanwhile cannot split the write across two directories. */
    int dir = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) {
        int e = errno;
        if (e == ENOENT)
            return fs_fail(BUILTIN_PARENT_MISSING, "parent not found: %s", parent);
        if (e == ENOTDIR)
            return fs_fail(BUILTIN_WRONG_TYPE, "parent is not a directory: %s", parent);
        return fs_fail_errno(e, "write", path);
    }
    /* No follow: a symlink at path is replaced, like a file, never
     * followed (to a directory or anywhere else). */
    struct stat st;
    if (fstatat(dir, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
        close(dir);
        return fs_fail(BUILTIN_WRONG_TYPE, "is a directory: %s", path);
    }
    /* O_TMPFILE: the file has no name until it is complete, so a kill
     * half-way (a client gone, the sandbox stopped) leaves nothing. */
    bool named = false;
    int fd = openat(dir, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
        /* Filesystems without O_TMPFILE: a hidden sibling, new (O_EXCL) so
         * never a planted link. */
        fs_tmp_name(tmp, sizeof(tmp), NULL, 0);
        fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        named = fd >= 0;
    }
    if (fd < 0) {
        int e = errno;
        close(dir);
        return fs_fail_errno(e, "write", path);
    }
    /* Only a file on the workspace's mount is the quota's (not /tmp). */
    if (!fsq_counts(q, fd))
        q = NULL;
    int rc = BUILTIN_OK;
    if (q) {
        /* A named temporary is in the tree while it grows; its bytes are
         * reserved, so the walks of this call leave them out. */
        q->hidden_fd = named ? fd : -1;
        q->credit = fsq_freed_at(dir, leaf);
        /* A declared length is refused before a byte of it is read. */
        if (expect != UINT64_MAX && (rc = fsq_reserve(q, fsq_blocks(expect), 0, path)))
            goto fail;
    }
    if ((rc = copy_in(fd, in_fd, data, n, q, path, written)))
        goto fail;
    if (expect != UINT64_MAX && *written != expect) {
        /* A client gone half-way: what arrived replaces nothing. */
        rc = fs_fail(BUILTIN_IO, "transfer aborted: %llu of %llu bytes arrived",
                     (unsigned long long)*written, (unsigned long long)expect);
        goto fail;
    }
    if (fsync(fd) < 0 || fchmod(fd, mode & 01777) < 0) {
        rc = fs_fail_errno(errno, "write", path);
        goto fail;
    }
    commit_arg c = {.dir = dir, .fd = fd, .named = named, .tmp = tmp, .leaf = leaf, .path = path};
    rc = q ? fsq_commit(q, fsq_fd_bytes(fd), commit_frees, commit_file, &c, path)
           : commit_file(&c);
    fd = c.fd;                    /* -1 once commit_file ran */
    named = c.named;
fail:
    if (q)
        q->hidden_fd = -1;
    if (fd >= 0)
        close(fd);
    if (named)
        unlinkat(dir, tmp, 0);
    close(dir);
    return rc;
}

/* write {path, mode=0644, parents=false, size?, quota?} <- stdin
 *   -> {bytes_written, path}. size: the bytes the caller declared; fewer
 *   arriving (a client gone half-way) fails and replaces nothing. quota:
 *   the workspace quota (fs_quota.c), 0 or absent for none. */
int fs_op_write(const fs_args *a, jsonw *w)
{
    const char *path;
    unsigned mode;
    bool parents;
    uint64_t size;
    fsq q;
    if (fs_arg_path(a, "path", &path) < 0 || fs_arg_mode(a, "mode", 0644, &mode) < 0 ||
        fs_arg_bool(a, "parents", false, &parents) < 0 ||
        fs_arg_u64(a, "size", UINT64_MAX, &size) < 0 || fsq_begin(&q, a) != BUILTIN_OK)
        return BUILTIN_USAGE;
    int rc;
    if (parents) {
        char dir[PATH_MAX];
        fs_parent_of(path, dir, sizeof(dir));
        bool created;
        if ((rc = fs_make_dirs(dir, 0755, &created)))
            return rc;
    }
    uint64_t written;
    rc = fs_write_atomic(path, mode, 0, NULL, 0, &q, size, &written);
    fsq_end(&q);
    if (rc)
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
        rc = fs_write_atomic(path, (unsigned)mode, -1, content, strlen(content), NULL,
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

