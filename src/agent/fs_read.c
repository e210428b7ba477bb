/* Reading: ls, stat, read (the inline body) and cat (the bytes of a
 * download). Nothing here writes. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include "agent/agent_int.h"
#include "agent/fs_int.h"
#include "agent/fs_walk.h"
#include "util/alloc.h"
#include "util/text.h"

/* read inlines a body below this size (iii's INLINE_BUFFER_CAP). */
#define FS_INLINE_MAX (1u << 20)

/* ---- entries ----------------------------------------------------------------- */

static void put_entry(jsonw *w, const char *name, const struct stat *st)
{
    jw_obj(w);
    jw_kstr(w, "name", name);
    jw_kbool(w, "is_dir", S_ISDIR(st->st_mode));
    jw_ku64(w, "size", (uint64_t)st->st_size);
    jw_kmode(w, "mode", st->st_mode);
    jw_ki64(w, "mtime", (int64_t)st->st_mtime);
    jw_kbool(w, "is_symlink", S_ISLNK(st->st_mode));
    jw_obj_end(w);
}

/* ls {path}: the directory's entries by name, each lstat'ed
 *   -> {entries: [...], truncated?: true past SEARCH_OUT_CAP bytes}. */
int fs_op_ls(const fs_args *a, jsonw *w)
{
    const char *path;
    if (fs_arg_path(a, "path", &path) < 0)
        return BUILTIN_USAGE;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return fs_fail_opendir(errno, "ls", path);
    int rc = BUILTIN_OK;
    DIR *d = fs_open_level(fd, "ls", path, 0, &rc);
    if (!d)
        return rc;
    size_t n;
    char **names = fs_list_dir(d, &n);
    bool truncated = false;
    jw_obj(w);
    jw_key(w, "entries");
    jw_arr(w);
    for (size_t i = 0; i < n; i++) {
        /* A huge directory is listed up to the cap grep and glob use (the
         * first names in order), rather than answering nothing at all. */
        if (cbuf_avail(w->out) + strlen(names[i]) * 6 + 160 > SEARCH_OUT_CAP) {
            truncated = true;
            break;
        }
        struct stat st;
        /* Gone since readdir: it is simply not listed. */
        if (fstatat(dirfd(d), names[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
            put_entry(w, names[i], &st);
    }
    jw_arr_end(w);
    if (truncated)
        jw_kbool(w, "truncated", true);    /* only then: iii's shape otherwise */
    jw_obj_end(w);
    fs_free_names(names, n);
    closedir(d);
    return BUILTIN_OK;
}

static const char *base_name(const char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    const char *s = path + n;
    while (s > path && s[-1] != '/')
        s--;
    return s;
}

/* stat {path}: lstat, so a symlink is described, not followed. */
int fs_op_stat(const fs_args *a, jsonw *w)
{
    const char *path;
    bool follow;
    if (fs_arg_path(a, "path", &path) < 0 || fs_arg_bool(a, "follow", false, &follow) < 0)
        return BUILTIN_USAGE;
    struct stat st;
    if ((follow ? stat(path, &st) : lstat(path, &st)) < 0)
        return fs_fail_errno(errno, "stat", path);
    char name[NAME_MAX + 2];
    const char *b = base_name(path);
    snprintf(name, sizeof(name), "%.*s", (int)strcspn(b, "/"), b);
    put_entry(w, name[0] ? name : "/", &st);
    return BUILTIN_OK;
}

/* ---- reading -------------------------------------------------------------------- */

int fs_open_regular(int dir, const char *name, bool follow, struct stat *st)
{
    int fd = openat(dir, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
                                   (follow ? 0 : O_NOFOLLOW));
    if (fd < 0)
        return -1;
    if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    return fd;
}

/* Opens path for reading only if it is a regular file: a FIFO would block
 * and a device would be read (stat first, then fs_open_regular for one
 * swapped in between). */
static int open_for_read(const char *path, struct stat *st, int *rc)
{
    if (stat(path, st) < 0) {
        *rc = fs_fail_errno(errno, "read", path);
        return -1;
    }
    if (S_ISDIR(st->st_mode)) {
        *rc = fs_fail(BUILTIN_WRONG_TYPE, "is a directory: %s", path);
        return -1;
    }
    if (!S_ISREG(st->st_mode)) {
        *rc = fs_fail(BUILTIN_WRONG_TYPE, "not a regular file: %s", path);
        return -1;
    }
    int fd = fs_open_regular(AT_FDCWD, path, true, st);
    if (fd < 0)
        *rc = errno == EINVAL ? fs_fail(BUILTIN_WRONG_TYPE, "not a regular file: %s", path)
                              : fs_fail_errno(errno, "read", path);
    return fd;
}

/* read {path} -> {size, mode, mtime, body?}: body for valid UTF-8 under
 * 1 MiB; the bytes themselves come through cat. Follows symlinks. */
int fs_op_read(const fs_args *a, jsonw *w)
{
    const char *path;
    if (fs_arg_path(a, "path", &path) < 0)
        return BUILTIN_USAGE;
    struct stat st;
    int rc;
    int fd = open_for_read(path, &st, &rc);
    if (fd < 0)
        return rc;
    jw_obj(w);
    jw_ku64(w, "size", (uint64_t)st.st_size);
    jw_kmode(w, "mode", st.st_mode);
    jw_ki64(w, "mtime", (int64_t)st.st_mtime);
    if ((uint64_t)st.st_size < FS_INLINE_MAX) {
        cbuf b;
        cbuf_init(&b);
        for (;;) {
            uint8_t *p = cbuf_reserve(&b, 64 << 10);
            ssize_t r = read(fd, p, 64 << 10);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                break;
            cbuf_commit(&b, (size_t)r);
            if (cbuf_avail(&b) >= FS_INLINE_MAX)
                break;
        }
        if (cbuf_avail(&b) < FS_INLINE_MAX && utf8_valid(cbuf_head(&b), cbuf_avail(&b))) {
            jw_key(w, "body");
            jw_strn(w, (const char *)cbuf_head(&b), cbuf_avail(&b));
        }
        cbuf_free(&b);
    }
    jw_obj_end(w);
    close(fd);
    return BUILTIN_OK;
}

/* cat {path, offset=0, length?, tail?}: a header line
 *   {"size":S,"mode":"0644","mtime":T,"offset":O,"length":L}
 * then exactly L bytes from offset O (clamped to the file); tail=N means
 * the last N bytes (a suffix Range, which needs the size). */
int fs_op_cat(const fs_args *a, jsonw *w)
{
    const char *path;
    uint64_t off, len, tail;
    if (fs_arg_path(a, "path", &path) < 0 || fs_arg_u64(a, "offset", 0, &off) < 0 ||
        fs_arg_u64(a, "length", UINT64_MAX, &len) < 0 ||
        fs_arg_u64(a, "tail", UINT64_MAX, &tail) < 0)
        return BUILTIN_USAGE;
    struct stat st;
    int rc;
    int fd = open_for_read(path, &st, &rc);
    if (fd < 0)
        return rc;
    uint64_t size = (uint64_t)st.st_size;
    if (tail != UINT64_MAX)
        off = tail < size ? size - tail : 0;
    if (off > size)
        off = size;
    if (len > size - off)
        len = size - off;
    cbuf hb;
    cbuf_init(&hb);
    jsonw h;
    jw_init(&h, &hb);
    jw_obj(&h);
    jw_ku64(&h, "size", size);
    jw_kmode(&h, "mode", st.st_mode);
    jw_ki64(&h, "mtime", (int64_t)st.st_mtime);
    jw_ku64(&h, "offset", off);
    jw_ku64(&h, "length", len);
    jw_obj_end(&h);
    cbuf_append(&hb, "\n", 1);
    int wr = fs_stdout(cbuf_head(&hb), cbuf_avail(&hb));
    cbuf_free(&hb);
    if (wr < 0) {
        close(fd);
        return BUILTIN_IO;
    }
    off_t pos = (off_t)off;
    while (len) {
        /* sendfile into the stdout pipe: no copy through this process. */
        ssize_t k = sendfile(1, fd, &pos, len > (1u << 30) ? (1u << 30) : (size_t)len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            /* Shrunk under us, or a read error: the stream ends short and
             * the host, which announced the length, aborts it. */
            close(fd);
            return fs_fail(BUILTIN_IO, "read %s: %s", path, k < 0 ? strerror(errno) :
                           "the file shrank while it was read");
        }
        len -= (uint64_t)k;
    }
    close(fd);
    (void)w;
    return BUILTIN_OK;
}

