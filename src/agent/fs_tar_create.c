/* tar-create: an archive of a directory inside the sandbox (the format is
 * util/tar.c's; fs_int.h has the protocol).
 *
 * tar-create {path}: stdout gets {"format":"tar"} on one line, then a
 *   ustar/pax archive of the directory's contents, names relative to it,
 *   sorted, ending with two zero blocks. Regular files, directories and
 *   symlinks (never followed) are archived; FIFOs, sockets and devices are
 *   skipped, never opened. Once the first byte is out, a status can no
 *   longer replace the archive, so what cannot be read (a file without
 *   read permission, a directory we may not list, a name past PATH_MAX)
 *   is skipped with a line on stderr and the archive stays well-formed.
 *   Hard-linked files are archived once per name, as regular files. Only
 *   a failure to write stdout or a tree deeper than FS_MAX_DEPTH stop it:
 *   the archive then ends without its zero blocks and the status says so.
 *
 * tar-extract is fs_tar_extract.c's. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/fs_int.h"
#include "util/alloc.h"
#include "util/tar.h"

typedef struct tar_out {
    uint8_t *buf;
    size_t len;
    cbuf hdr;
    tar_entry e;
    char rel[PATH_MAX];           /* the current directory, "" or ending in '/' */
    uint64_t skipped;
} tar_out;

/* The stream's own failure: the status that ends the op. */
static int out_failed(void)
{
    return fs_fail(BUILTIN_IO, "tar: writing the archive: %s", strerror(errno));
}

static int out_flush(tar_out *o)
{
    if (o->len && fs_stdout(o->buf, o->len) < 0)
        return -1;
    o->len = 0;
    return 0;
}

/* Appends n bytes of p, or n zeros when p is NULL. */
static int out_put(tar_out *o, const void *p, uint64_t n)
{
    while (n) {
        if (o->len == TAR_CHUNK && out_flush(o) < 0)
            return -1;
        size_t k = TAR_CHUNK - o->len < n ? TAR_CHUNK - o->len : (size_t)n;
        if (p) {
            memcpy(o->buf + o->len, p, k);
            p = (const char *)p + k;
        } else {
            memset(o->buf + o->len, 0, k);
        }
        o->len += k;
        n -= k;
    }
    return 0;
}

static void skipped(tar_out *o, const char *name, const char *why)
{
    o->skipped++;
    fprintf(stderr, "tar: skipped %s%s: %s\n", o->rel, name, why);
}

/* The header(s) of one member named rel+name (+ "/" for a directory).
 * 1: skipped (a name longer than a tar entry may carry), nothing written. */
static int put_header(tar_out *o, const char *name, const struct stat *st, char type,
                      const char *link, uint64_t size)
{
    tar_entry *e = &o->e;
    int k = snprintf(e->name, sizeof(e->name), "%s%s%s", o->rel, name, type == '5' ? "/" : "");
    if (k < 0 || (size_t)k >= sizeof(e->name)) {
        skipped(o, name, "name too long");
        return 1;
    }
    snprintf(e->linkname, sizeof(e->linkname), "%s", link ? link : "");
    e->size = size;
    e->mode = st->st_mode & 07777;
    e->mtime = (int64_t)st->st_mtim.tv_sec;
    e->uid = st->st_uid;
    e->gid = st->st_gid;
    e->type = type;
    cbuf_reset(&o->hdr);
    if (tar_encode(&o->hdr, e) < 0)
        return errno = EINVAL, -1;
    return out_put(o, cbuf_head(&o->hdr), cbuf_avail(&o->hdr));
}

/* A regular file: the size its header announces is the size sent. A file
 * that shrinks while read is padded with zeros, one that grows is cut,
 * so the archive stays well-formed whatever happens to it. */
static int put_file(tar_out *o, int dir, const char *name)
{
    /* A symlink swapped in since the fstatat is not followed, a FIFO
     * swapped in cannot block the open (fs_open_regular). */
    struct stat st;
    int fd = fs_open_regular(dir, name, false, &st);
    if (fd < 0) {
        skipped(o, name, errno == EINVAL ? "not a regular file any more" : strerror(errno));
        return 0;
    }
    uint64_t size = (uint64_t)st.st_size, left = size;
    int h = put_header(o, name, &st, '0', NULL, size);
    if (h < 0)
        goto error;
    if (h > 0) {
        close(fd);
        return 0;
    }
    while (left) {
        if (o->len == TAR_CHUNK && out_flush(o) < 0)
            goto error;
        size_t want = TAR_CHUNK - o->len < left ? TAR_CHUNK - o->len : (size_t)left;
        ssize_t k = read(fd, o->buf + o->len, want);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            fprintf(stderr, "tar: %s%s: %s; padded with zeros\n", o->rel, name,
                    k < 0 ? strerror(errno) : "shrank while it was read");
            if (out_put(o, NULL, left) < 0)
                goto error;
            break;
        }
        o->len += (size_t)k;
        left -= (uint64_t)k;
    }
    close(fd);
    return out_put(o, NULL, (TAR_BLOCK - size % TAR_BLOCK) % TAR_BLOCK);
error:
    close(fd);
    return -1;
}

/* Archives the entries of dir (consumed), whose path is o->rel. Returns a
 * BUILTIN_* status: only the stream failing or the depth guard stop it. */
static int put_dir(tar_out *o, int dir, int depth)
{
    if (depth > FS_MAX_DEPTH) {
        close(dir);
        return fs_fail(BUILTIN_IO, "tar: %s is deeper than %d levels", o->rel, FS_MAX_DEPTH);
    }
    DIR *d = fdopendir(dir);
    if (!d) {
        close(dir);
        skipped(o, "", strerror(errno));
        return BUILTIN_OK;
    }
    size_t n, rl = strlen(o->rel);
    char **names = fs_list_dir(d, &n);
    int rc = BUILTIN_OK;
    for (size_t i = 0; i < n && rc == BUILTIN_OK; i++) {
        const char *name = names[i];
        struct stat st;
        /* Never follow: a symlink is archived as one, wherever it points. */
        if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;             /* gone since readdir */
        if (rl + strlen(name) + 2 > PATH_MAX) {
            skipped(o, name, "path longer than PATH_MAX");
            continue;
        }
        if (S_ISREG(st.st_mode)) {
            if (put_file(o, dirfd(d), name) < 0)
                rc = out_failed();
        } else if (S_ISLNK(st.st_mode)) {
            char target[PATH_MAX];
            ssize_t k = readlinkat(dirfd(d), name, target, sizeof(target) - 1);
            if (k < 0) {
                skipped(o, name, strerror(errno));
                continue;
            }
            target[k] = '\0';
            if (put_header(o, name, &st, '2', target, 0) < 0)
                rc = out_failed();
        } else if (S_ISDIR(st.st_mode)) {
            int c = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (c >= 0)
                fstat(c, &st);
            int h = put_header(o, name, &st, '5', NULL, 0);
            if (h < 0) {
                rc = out_failed();
            } else if (h > 0) {
                /* skipped, and so is what it holds */
            } else if (c < 0) {
                skipped(o, name, strerror(errno));
            } else {
                snprintf(o->rel + rl, sizeof(o->rel) - rl, "%s/", name);
                rc = put_dir(o, c, depth + 1);
                c = -1;
                o->rel[rl] = '\0';
            }
            if (c >= 0)
                close(c);
        }
        /* FIFOs, sockets, devices: nothing a workspace archive should carry. */
    }
    fs_free_names(names, n);
    closedir(d);
    return rc;
}

int fs_op_tar_create(const fs_args *a, jsonw *w)
{
    const char *path;
    if (fs_arg_path(a, "path", &path) < 0)
        return BUILTIN_USAGE;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return fs_fail_opendir(errno, "tar", path);
    static const char head[] = "{\"format\":\"tar\"}\n";
    if (fs_stdout(head, sizeof(head) - 1) < 0) {
        close(fd);
        return out_failed();
    }
    tar_out *o = cella_calloc(1, sizeof(*o));
    o->buf = cella_malloc(TAR_CHUNK);
    cbuf_init(&o->hdr);
    int rc = put_dir(o, fd, 0);
    if (rc == BUILTIN_OK && (out_put(o, NULL, 2 * TAR_BLOCK) < 0 || out_flush(o) < 0))
        rc = out_failed();
    else if (rc != BUILTIN_OK)
        out_flush(o);     /* what was archived goes out; the status tells it is cut */
    cbuf_free(&o->hdr);
    cella_free(o->buf);
    cella_free(o);
    (void)w;
    return rc;
}
