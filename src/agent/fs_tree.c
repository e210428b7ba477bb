/* Trees: rm, chmod and mv, recursive ones included. Symlinks inside a
 * tree are never followed. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent_int.h"
#include "agent/fs_int.h"
#include "agent/fs_quota.h"
#include "util/alloc.h"

/* ---- rm, chmod, mv ---------------------------------------------------------------- */

/* Empties the directory fd (consumed) and its subdirectories; symlinks are
 * unlinked, never followed. */
int fs_rm_tree(int fd, const char *path, int depth)
{
    int rc = BUILTIN_OK;
    DIR *d = fs_open_level(fd, "rm", path, depth, &rc);
    if (!d)
        return rc;
    for (struct dirent *de; rc == BUILTIN_OK && (de = readdir(d));) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (unlinkat(dirfd(d), de->d_name, 0) == 0)
            continue;
        if (errno != EISDIR) {
            rc = errno == ENOENT ? BUILTIN_OK : fs_fail_errno(errno, "rm", de->d_name);
            continue;
        }
        int c = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (c < 0) {
            rc = fs_fail_errno(errno, "rm", de->d_name);
            continue;
        }
        rc = fs_rm_tree(c, de->d_name, depth + 1);
        if (rc == BUILTIN_OK && unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) < 0)
            rc = fs_fail_errno(errno, "rm", de->d_name);
        rewinddir(d);
    }
    closedir(d);
    return rc;
}

/* rm {path, recursive=false} -> {removed: true}. */
int fs_op_rm(const fs_args *a, jsonw *w)
{
    const char *path;
    bool rec;
    if (fs_arg_path(a, "path", &path) < 0 || fs_arg_bool(a, "recursive", false, &rec) < 0)
        return BUILTIN_USAGE;
    /* "lnk/.." is the parent of what lnk points at, reached through the
     * link: refused, as rm(1) refuses it ("lnk/." is "lnk" by now). */
    const char *last = strrchr(path, '/');
    last = last ? last + 1 : path;
    if (!strcmp(last, ".") || !strcmp(last, ".."))
        return fs_fail(BUILTIN_USAGE, "refusing to remove '%s': name the directory itself, not "
                       "'.' or '..'", path);
    /* lstat: a symlink is removed itself, never what it points at. */
    struct stat st;
    if (lstat(path, &st) < 0)
        return fs_fail_errno(errno, "rm", path);
    if (!S_ISDIR(st.st_mode)) {
        if (unlink(path) < 0)
            return fs_fail_errno(errno, "rm", path);
    } else {
        if (rec) {
            int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd < 0)
                return fs_fail_errno(errno, "rm", path);
            int rc = fs_rm_tree(fd, path, 0);
            if (rc)
                return rc;
        }
        if (rmdir(path) < 0) {
            int e = errno;
            if (e == ENOTEMPTY || e == EEXIST)
                return fs_fail(BUILTIN_NOT_EMPTY, "directory not empty: %s (send recursive: "
                               "true to remove it with its contents)", path);
            return fs_fail_errno(e, "rm", path);
        }
    }
    jw_obj(w);
    jw_kbool(w, "removed", true);
    jw_obj_end(w);
    return BUILTIN_OK;
}

typedef struct chmod_req {
    unsigned mode;
    bool chown;
    bool recursive;
    uid_t uid;
    gid_t gid;
    uint64_t updated;
} chmod_req;

static int chmod_tree(int fd, const char *path, int depth, chmod_req *r);

/* chmod through an O_PATH descriptor: fchmod refuses one, and its
 * /proc/self/fd link leads to the very inode (glibc's fchmodat with
 * AT_SYMLINK_NOFOLLOW does the same). */
static int chmod_fd(int fd, const char *shown, chmod_req *r)
{
    char proc[64];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
    if (chmod(proc, r->mode) < 0)
        return fs_fail_errno(errno, "chmod", shown);
    r->updated++;
    return BUILTIN_OK;
}

/* Applies the request to name in dir. It is opened O_PATH without
 * following it, and changed through that descriptor, so what is changed is
 * what was looked at, even if a process in the sandbox swaps a symlink in
 * between (fchmodat with no flags would follow it). A symlink is skipped
 * inside a tree, and refused when it is the path asked for (root): Linux
 * has no symlink modes, and following it is not what naming the link asks. */
static int chmod_one(int dir, const char *name, const char *shown, bool root, int depth,
                     chmod_req *r)
{
    int fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return root || errno != ENOENT ? fs_fail_errno(errno, "chmod", shown) : BUILTIN_OK;
    struct stat st;
    int rc = BUILTIN_OK;
    if (fstat(fd, &st) < 0) {
        rc = fs_fail_errno(errno, "chmod", shown);
        goto out;
    }
    if (S_ISLNK(st.st_mode)) {
        if (root)
            rc = fs_fail(BUILTIN_UNSUPPORTED, "chmod %s: it is a symlink, and Linux has no modes "
                         "for symlinks; chmod the path it points to instead", shown);
        goto out;
    }
    if (r->chown && fchownat(fd, "", r->uid, r->gid, AT_EMPTY_PATH) < 0) {
        rc = fs_fail_errno(errno, "chown", shown);
        goto out;
    }
    /* A directory's mode goes on before its entries are walked when it
     * lets its owner in (so a tree now closed, 0000, can be opened up),
     * after them when it does not (so chmod -R 0000 reaches them). */
    bool tree = r->recursive && S_ISDIR(st.st_mode);
    bool first = !tree || (r->mode & 0500) == 0500;
    if (first && (rc = chmod_fd(fd, shown, r)))
        goto out;
    if (tree) {
        int sub = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        rc = sub < 0 ? fs_fail_errno(errno, "chmod", shown) : chmod_tree(sub, shown, depth, r);
        if (rc == BUILTIN_OK && !first)
            rc = chmod_fd(fd, shown, r);
    }
out:
    close(fd);
    return rc;
}

/* Every entry below the directory fd (consumed). */
static int chmod_tree(int fd, const char *path, int depth, chmod_req *r)
{
    int rc = BUILTIN_OK;
    DIR *d = fs_open_level(fd, "chmod", path, depth, &rc);
    if (!d)
        return rc;
    size_t n;
    char **names = fs_list_dir(d, &n);
    for (size_t i = 0; i < n && rc == BUILTIN_OK; i++)
        rc = chmod_one(dirfd(d), names[i], names[i], false, depth + 1, r);
    fs_free_names(names, n);
    closedir(d);
    return rc;
}

/* chmod {path, mode, uid?, gid?, recursive=false} -> {updated}. */
int fs_op_chmod(const fs_args *a, jsonw *w)
{
    const char *path;
    chmod_req r = {0};
    uint64_t uid, gid;
    if (fs_arg_path(a, "path", &path) < 0 || fs_arg_bool(a, "recursive", false, &r.recursive) < 0 ||
        fs_arg_u64(a, "uid", UINT64_MAX, &uid) < 0 || fs_arg_u64(a, "gid", UINT64_MAX, &gid) < 0)
        return BUILTIN_USAGE;
    if (!fs_arg(a, "mode"))
        return fs_fail(BUILTIN_USAGE, "mode is required");
    if (fs_arg_mode(a, "mode", 0, &r.mode) < 0)
        return BUILTIN_USAGE;
    r.mode &= 01777;              /* no setuid/setgid from a request */
    if (uid != UINT64_MAX || gid != UINT64_MAX) {
        if ((uid != UINT64_MAX && uid > UINT32_MAX - 1) || (gid != UINT64_MAX && gid > UINT32_MAX - 1))
            return fs_fail(BUILTIN_USAGE, "uid and gid must be below 4294967295");
        r.chown = true;
        r.uid = uid == UINT64_MAX ? (uid_t)-1 : (uid_t)uid;
        r.gid = gid == UINT64_MAX ? (gid_t)-1 : (gid_t)gid;
    }
    int rc = chmod_one(AT_FDCWD, path, path, true, 0, &r);
    if (rc)
        return rc;
    jw_obj(w);
    jw_ku64(w, "updated", r.updated);
    jw_obj_end(w);
    return BUILTIN_OK;
}

/* Copies src to dst (a new name) across filesystems: files, symlinks and
 * directories, recursively; other kinds are refused. Each file is written
 * as write writes one, within the workspace quota (q). */
static int copy_tree(const char *src, const char *dst, int depth, fsq *q)
{
    struct stat st;
    if (lstat(src, &st) < 0)
        return fs_fail_errno(errno, "mv", src);
    if (depth > FS_MAX_DEPTH)
        return fs_fail(BUILTIN_IO, "mv %s: deeper than %d levels", src, FS_MAX_DEPTH);
    if (S_ISLNK(st.st_mode)) {
        char target[PATH_MAX];
        ssize_t n = readlink(src, target, sizeof(target) - 1);
        if (n < 0)
            return fs_fail_errno(errno, "mv", src);
        target[n] = '\0';
        return symlink(target, dst) < 0 ? fs_fail_errno(errno, "mv", dst) : BUILTIN_OK;
    }
    if (S_ISREG(st.st_mode)) {
        int in = open(src, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (in < 0)
            return fs_fail_errno(errno, "mv", src);
        uint64_t n;
        int rc = fs_write_atomic(dst, st.st_mode, in, NULL, 0, q, UINT64_MAX, &n);
        close(in);
        return rc;
    }
    if (!S_ISDIR(st.st_mode))
        return fs_fail(BUILTIN_UNSUPPORTED, "mv %s: cannot move a special file across "
                       "filesystems", src);
    if (mkdir(dst, st.st_mode & 01777) < 0)
        return fs_fail_errno(errno, "mv", dst);
    DIR *d = opendir(src);
    if (!d)
        return fs_fail_errno(errno, "mv", src);
    int rc = BUILTIN_OK;
    for (struct dirent *de; rc == BUILTIN_OK && (de = readdir(d));) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        char *s = cella_asprintf("%s/%s", src, de->d_name);
        char *t = cella_asprintf("%s/%s", dst, de->d_name);
        rc = copy_tree(s, t, depth + 1, q);
        cella_free(s);
        cella_free(t);
    }
    closedir(d);
    return rc;
}

/* mv {src, dst, overwrite=false, quota?} -> {moved: true}. */
int fs_op_mv(const fs_args *a, jsonw *w)
{
    const char *src, *dst;
    bool over;
    if (fs_arg_path(a, "src", &src) < 0 || fs_arg_path(a, "dst", &dst) < 0 ||
        fs_arg_bool(a, "overwrite", false, &over) < 0)
        return BUILTIN_USAGE;
    struct stat st;
    if (lstat(src, &st) < 0)
        return fs_fail_errno(errno, "mv", src);
    if (renameat2(AT_FDCWD, src, AT_FDCWD, dst, over ? 0 : RENAME_NOREPLACE) < 0) {
        int e = errno;
        if (e == EEXIST || (e == ENOTEMPTY && !over))
            return fs_fail(BUILTIN_EXISTS, "already exists: %s (send overwrite: true to "
                           "replace it)", dst);
        if (e == ENOENT) {
            char dir[PATH_MAX];
            fs_parent_of(dst, dir, sizeof(dir));
            return fs_fail(BUILTIN_NOT_FOUND, "parent not found: %s", dir);
        }
        if (e == ENOTEMPTY)     /* overwrite onto a directory with entries: dst's fault */
            return fs_fail(BUILTIN_NOT_EMPTY, "directory not empty: %s (mv replaces only an "
                           "empty directory; rm it first)", dst);
        if (e != EXDEV)
            return fs_fail_errno(e, "mv", src);
        /* Another filesystem (/tmp and /workspace): copy beside the
         * target, then rename into place, then remove the source. */
        struct stat dt;
        if (!over && lstat(dst, &dt) == 0)
            return fs_fail(BUILTIN_EXISTS, "already exists: %s (send overwrite: true to "
                           "replace it)", dst);
        char dir[PATH_MAX];
        /* A move that cannot remove its source is a copy: refused before
         * anything is copied (a read-only /etc, say), rather than reporting
         * moved with the source still there. */
        fs_parent_of(src, dir, sizeof(dir));
        if (access(dir, W_OK | X_OK) < 0)
            return fs_fail_errno(errno, "mv", src);
        fs_parent_of(dst, dir, sizeof(dir));
        char *tmp = cella_asprintf("%s/.cella-mv-%d", dir, (int)getpid());
        /* Into /workspace, the copy is what grows it: the quota applies. */
        fsq q;
        int rc = fsq_begin(&q, a);
        if (rc == BUILTIN_OK)
            rc = copy_tree(src, tmp, 0, &q);
        fsq_end(&q);
        /* NOREPLACE: a dst made since the check above is not overwritten. */
        if (rc == BUILTIN_OK &&
            renameat2(AT_FDCWD, tmp, AT_FDCWD, dst, over ? 0 : RENAME_NOREPLACE) < 0)
            rc = errno == EEXIST ? fs_fail(BUILTIN_EXISTS, "already exists: %s (send overwrite: "
                                           "true to replace it)", dst)
                                 : fs_fail_errno(errno, "mv", dst);
        if (rc) {
            int fd = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd >= 0 && fs_rm_tree(fd, tmp, 0) == BUILTIN_OK)
                rmdir(tmp);
            else
                unlink(tmp);
            cella_free(tmp);
            return rc;
        }
        cella_free(tmp);
        /* The copy is in place; a source that will not go (a file in it
         * the sandbox user may not remove) is reported, not hidden. */
        int gone;
        if (S_ISDIR(st.st_mode)) {
            int fd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            gone = fd >= 0 && fs_rm_tree(fd, src, 0) == BUILTIN_OK ? rmdir(src) : -1;
        } else {
            gone = unlink(src);
        }
        if (gone < 0)
            return fs_fail(BUILTIN_IO, "mv: copied to %s, but %s could not be removed "
                           "(part of it may remain)", dst, src);
    }
    jw_obj(w);
    jw_kbool(w, "moved", true);
    jw_obj_end(w);
    return BUILTIN_OK;
}

