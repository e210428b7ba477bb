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
    uid_t uid;
    gid_t gid;
    uint64_t updated;
} chmod_req;

/* Applies the request to name in dir (a symlink is skipped: its mode
 * means nothing and chmod would follow it). */
static int chmod_one(int dir, const char *name, const char *shown, chmod_req *r)
{
    if (r->chown && fchownat(dir, name, r->uid, r->gid, AT_SYMLINK_NOFOLLOW) < 0)
        return fs_fail_errno(errno, "chown", shown);
    if (fchmodat(dir, name, r->mode, 0) < 0)
        return fs_fail_errno(errno, "chmod", shown);
    r->updated++;
    return BUILTIN_OK;
}

static int chmod_tree(int fd, const char *path, int depth, chmod_req *r)
{
    int rc = BUILTIN_OK;
    DIR *d = fs_open_level(fd, "chmod", path, depth, &rc);
    if (!d)
        return rc;
    for (struct dirent *de; rc == BUILTIN_OK && (de = readdir(d));) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        struct stat st;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || S_ISLNK(st.st_mode))
            continue;
        if ((rc = chmod_one(dirfd(d), de->d_name, de->d_name, r)))
            break;
        if (S_ISDIR(st.st_mode)) {
            int c = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            rc = c < 0 ? fs_fail_errno(errno, "chmod", de->d_name)
                       : chmod_tree(c, de->d_name, depth + 1, r);
        }
    }
    closedir(d);
    return rc;
}

/* chmod {path, mode, uid?, gid?, recursive=false} -> {updated}. */
int fs_op_chmod(const fs_args *a, jsonw *w)
{
    const char *path;
    chmod_req r = {0};
    bool rec;
    uint64_t uid, gid;
    if (fs_arg_path(a, "path", &path) < 0 || fs_arg_bool(a, "recursive", false, &rec) < 0 ||
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
    struct stat st;
    if (stat(path, &st) < 0)
        return fs_fail_errno(errno, "chmod", path);
    int rc = chmod_one(AT_FDCWD, path, path, &r);
    if (rc == BUILTIN_OK && rec && S_ISDIR(st.st_mode)) {
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        rc = fd < 0 ? fs_fail_errno(errno, "chmod", path) : chmod_tree(fd, path, 0, &r);
    }
    if (rc)
        return rc;
    jw_obj(w);
    jw_ku64(w, "updated", r.updated);
    jw_obj_end(w);
    return BUILTIN_OK;
}

/* Copies src to dst (a new name) across filesystems: files, symlinks and
 * directories, recursively; other kinds are refused. */
static int copy_tree(const char *src, const char *dst, int depth)
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
        int rc = fs_write_atomic(dst, st.st_mode, in, NULL, 0, UINT64_MAX, UINT64_MAX, &n);
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
        rc = copy_tree(s, t, depth + 1);
        cella_free(s);
        cella_free(t);
    }
    closedir(d);
    return rc;
}

/* mv {src, dst, overwrite=false} -> {moved: true}. */
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
        if (e != EXDEV)
            return fs_fail_errno(e, "mv", src);
        /* Another filesystem (/tmp and /workspace): copy beside the
         * target, then rename into place, then remove the source. */
        struct stat dt;
        if (!over && lstat(dst, &dt) == 0)
            return fs_fail(BUILTIN_EXISTS, "already exists: %s (send overwrite: true to "
                           "replace it)", dst);
        char dir[PATH_MAX];
        fs_parent_of(dst, dir, sizeof(dir));
        char *tmp = cella_asprintf("%s/.cella-mv-%d", dir, (int)getpid());
        int rc = copy_tree(src, tmp, 0);
        if (rc == BUILTIN_OK && rename(tmp, dst) < 0)
            rc = fs_fail_errno(errno, "mv", dst);
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
        if (S_ISDIR(st.st_mode)) {
            int fd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd >= 0 && fs_rm_tree(fd, src, 0) == BUILTIN_OK)
                rmdir(src);
        } else {
            unlink(src);
        }
    }
    jw_obj(w);
    jw_kbool(w, "moved", true);
    jw_obj_end(w);
    return BUILTIN_OK;
}

