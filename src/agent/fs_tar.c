/* tar-create and tar-extract: archives of directories inside the sandbox
 * (the format is util/tar.c's; fs_int.h has the protocol).
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
 *   a failure to write stdout or a tree deeper than TAR_MAX_DEPTH stop it:
 *   the archive then ends without its zero blocks and the status says so.
 *
 * tar-extract {path, parents=0, quota=0} <- stdin: see the part below. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "agent/fs_int.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/fdio.h"
#include "util/tar.h"

/* Each level holds a descriptor, a sorted name list and a stack frame. */
#define TAR_MAX_DEPTH 256
/* Output is gathered into writes of this size; files stream through it. */
#define TAR_CHUNK (256u << 10)

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
    /* O_NOFOLLOW: a symlink swapped in since the fstatat is not followed;
     * O_NONBLOCK: a FIFO swapped in cannot block the open. */
    int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        skipped(o, name, strerror(errno));
        return 0;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        skipped(o, name, "not a regular file any more");
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

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted names of the directory d. */
static char **list_dir(DIR *d, size_t *count)
{
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *de; (de = readdir(d));) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            names = cella_realloc(names, cap * sizeof(char *));
        }
        names[n++] = cella_strdup(de->d_name);
    }
    if (n)
        qsort(names, n, sizeof(char *), cmp_names);
    *count = n;
    return names;
}

/* Archives the entries of dir (consumed), whose path is o->rel. Returns a
 * BUILTIN_* status: only the stream failing or the depth guard stop it. */
static int walk(tar_out *o, int dir, int depth)
{
    if (depth > TAR_MAX_DEPTH) {
        close(dir);
        return fs_fail(BUILTIN_IO, "tar: %s is deeper than %d levels", o->rel, TAR_MAX_DEPTH);
    }
    DIR *d = fdopendir(dir);
    if (!d) {
        close(dir);
        skipped(o, "", strerror(errno));
        return BUILTIN_OK;
    }
    size_t n, rl = strlen(o->rel);
    char **names = list_dir(d, &n);
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
                rc = walk(o, c, depth + 1);
                c = -1;
                o->rel[rl] = '\0';
            }
            if (c >= 0)
                close(c);
        }
        /* FIFOs, sockets, devices: nothing a workspace archive should carry. */
    }
    for (size_t i = 0; i < n; i++)
        cella_free(names[i]);
    cella_free(names);
    closedir(d);
    return rc;
}

int fs_op_tar_create(const fs_args *a, jsonw *w)
{
    const char *path;
    if (fs_arg_path(a, "path", &path) < 0)
        return BUILTIN_USAGE;
    /* O_DIRECTORY fails on anything else before it could block (a FIFO). */
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (e == ENOTDIR)
            return fs_fail(BUILTIN_WRONG_TYPE, "not a directory: %s", path);
        return fs_fail_errno(e, "tar", path);
    }
    static const char head[] = "{\"format\":\"tar\"}\n";
    if (fs_stdout(head, sizeof(head) - 1) < 0) {
        close(fd);
        return out_failed();
    }
    tar_out *o = cella_calloc(1, sizeof(*o));
    o->buf = cella_malloc(TAR_CHUNK);
    cbuf_init(&o->hdr);
    int rc = walk(o, fd, 0);
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

/* ---- tar-extract -------------------------------------------------------------
 *
 * tar-extract {path, parents=0, quota=0} <- stdin (a plain tar)
 *   -> {"path":ABS,"entries":N,"bytes":TOTAL}
 *
 * Every entry lands beneath the target directory, whatever the archive or
 * the directory already holds:
 *  - a name that is empty, absolute or holds a ".." component is refused,
 *    and the whole archive with it: it was made to escape;
 *  - parent directories are resolved from the target's descriptor with
 *    openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS), so no "..", absolute
 *    symlink or /proc magic link leads out, whoever planted the symlink (an
 *    earlier entry, or the directory itself). Where openat2 answers ENOSYS
 *    (the sandbox's seccomp filter does, for every openat2) the parents are
 *    walked one component at a time with O_NOFOLLOW: stricter, a symlink in
 *    a parent path is refused even when it stays inside;
 *  - the last component is never followed: files and symlinks are made
 *    under a hidden temporary name and renamed over it, directories with
 *    mkdirat;
 *  - a hard link only to a regular file beneath the target: one to a file
 *    outside would alias it (a read-only file of the image, say);
 *  - no setuid or setgid bit, no device, FIFO or sparse file.
 * Entries are extracted as they arrive: when one is refused, or the archive
 * turns out truncated or over the quota, those before it stay. Directory
 * modes and times are applied at the end (a read-only directory must still
 * take its entries), deepest first, on success and failure alike. The
 * quota counts content bytes, measured against the workspace's usage when
 * the extract starts. */

typedef struct dir_meta {
    char *name;
    uint32_t mode;
    int64_t mtime;
} dir_meta;

typedef struct tar_x {
    tar_reader rd;
    tar_entry e;
    int root;                     /* the target directory */
    bool no_openat2;
    uint64_t allow;               /* content bytes the quota allows, UINT64_MAX: no quota */
    uint64_t bytes, entries;
    dir_meta *dirs;
    size_t ndirs, capdirs;
    char name[PATH_MAX];          /* e.name, cleaned */
    char link[PATH_MAX];          /* e.linkname, cleaned (hard links) */
    char parent[PATH_MAX];
    uint8_t buf[TAR_CHUNK];
} tar_x;

static ssize_t read_stdin(void *ctx, void *buf, size_t n)
{
    for (;;) {
        ssize_t k = read(0, buf, n);
        if (k >= 0 || errno != EINTR)
            return k;
    }
}

static int reader_fail(tar_x *x, int st)
{
    int e = errno;
    unsigned long long at = (unsigned long long)x->rd.headers;
    switch (st) {
    case TAR_ECHECKSUM:
        return fs_fail(BUILTIN_USAGE, "not a tar archive (bad header checksum at entry %llu)", at);
    case TAR_ECOMPRESSED:
        return fs_fail(BUILTIN_UNSUPPORTED,
                       "compressed archives are not supported; send a plain tar");
    case TAR_ETRUNC:
        return fs_fail(BUILTIN_IO, "truncated archive");
    case TAR_EREAD:
        return fs_fail(BUILTIN_IO, "reading the archive: %s", strerror(e));
    default:
        return fs_fail(BUILTIN_USAGE, "malformed archive (%s at entry %llu)", tar_strerror(st), at);
    }
}

/* in, lexically cleaned into out: "." and empty components dropped (out
 * is "" for the target itself). Returns NULL, or why in is unsafe. */
static const char *clean_name(const char *in, char *out, size_t cap, bool *slash, unsigned *depth)
{
    if (!*in)
        return "empty name";
    /* Absolute: it names a place outside whatever the target is. */
    if (*in == '/')
        return "absolute name";
    size_t n = 0;
    *depth = 0;
    for (const char *p = in; *p;) {
        const char *s = p;
        while (*p && *p != '/')
            p++;
        size_t l = (size_t)(p - s);
        while (*p == '/')
            p++;
        if (l == 1 && s[0] == '.')
            continue;
        /* "..": each one climbs towards, then past, the target. */
        if (l == 2 && s[0] == '.' && s[1] == '.')
            return "a \"..\" component";
        if (n + l + 2 > cap)
            return "name too long";
        if (n)
            out[n++] = '/';
        memcpy(out + n, s, l);
        n += l;
        ++*depth;
    }
    out[n] = '\0';
    *slash = in[strlen(in) - 1] == '/';
    return NULL;
}

/* name's last component; its parent goes to parent ("" at the top). */
static const char *split_leaf(const char *name, char *parent, size_t cap)
{
    const char *slash = strrchr(name, '/');
    size_t n = slash ? (size_t)(slash - name) : 0;
    snprintf(parent, cap, "%.*s", (int)n, name);
    return slash ? slash + 1 : name;
}

static int beneath(int root, const char *rel, int flags)
{
    struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC),
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS};
    return (int)syscall(SYS_openat2, root, rel[0] ? rel : ".", &how, sizeof(how));
}

/* rel one component at a time from the target, making what is missing
 * (0755) when create. With openat2 each prefix is resolved beneath the
 * target; without, each component is opened O_NOFOLLOW from its parent. */
static int walk_dirs(tar_x *x, const char *rel, bool create, int final)
{
    int cur = fcntl(x->root, F_DUPFD_CLOEXEC, 0);
    for (const char *p = rel; cur >= 0 && *p;) {
        const char *s = p;
        while (*p && *p != '/')
            p++;
        char comp[NAME_MAX + 1], prefix[PATH_MAX];
        if ((size_t)(p - s) > NAME_MAX) {
            close(cur);
            return errno = ENAMETOOLONG, -1;
        }
        snprintf(comp, sizeof(comp), "%.*s", (int)(p - s), s);
        snprintf(prefix, sizeof(prefix), "%.*s", (int)(p - rel), rel);
        int flags = (*p ? O_PATH : final) | O_DIRECTORY;
        if (*p)
            p++;
        int next;
        for (int tries = 0;; tries++) {
            next = x->no_openat2 ? openat(cur, comp, flags | O_NOFOLLOW | O_CLOEXEC)
                                 : beneath(x->root, prefix, flags);
            if (next >= 0 || errno != ENOENT || !create || tries)
                break;
            if (mkdirat(cur, comp, 0755) < 0 && errno != EEXIST)
                break;
        }
        int e = errno;
        struct stat st;
        if (next < 0 && x->no_openat2 && (e == ENOTDIR || e == ELOOP))
            e = fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode) ? ELOOP
                                                                                       : ENOTDIR;
        close(cur);
        cur = next;
        errno = e;
    }
    return cur;
}

/* The directory rel beneath the target, opened with final (O_PATH for a
 * parent). -1 with errno: EXDEV when the path leads out, ELOOP for a
 * symlink the fallback refuses, ENOTDIR for a file in the way. */
static int open_dir(tar_x *x, const char *rel, bool create, int final)
{
    if (!x->no_openat2) {
        int fd = beneath(x->root, rel, final | O_DIRECTORY);
        if (fd >= 0 || (errno == ENOENT && !create))
            return fd;
        if (errno == ENOSYS)
            x->no_openat2 = true;
        else if (errno != ENOENT)
            return -1;
    }
    return walk_dirs(x, rel, create, final);
}

static int path_fail(int e, const char *name)
{
    switch (e) {
    case EXDEV:
        return fs_fail(BUILTIN_USAGE, "unsafe entry name: %s (its path leads outside the "
                       "target directory)", name);
    case ELOOP:
        return fs_fail(BUILTIN_USAGE, "unsafe entry name: %s (a symlink in its path)", name);
    case ENOTDIR:
        return fs_fail(BUILTIN_WRONG_TYPE, "not a directory: a parent of %s", name);
    default:
        return fs_fail_errno(e, "extract", name);
    }
}

static mode_t leaf_type(int dir, const char *leaf)
{
    struct stat st;
    return fstatat(dir, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 ? st.st_mode & S_IFMT : 0;
}

static void tmp_name(char *buf, size_t n, int tries)
{
    uint64_t r = 0;
    if (getrandom(&r, sizeof(r), 0) < 0)
        r = (uint64_t)getpid() * 1000003u + (uint64_t)tries;
    snprintf(buf, n, ".cella-%016llx.tmp", (unsigned long long)r);
}

/* Names fd's file (or a new symlink to target) leaf in dir: first under a
 * fresh hidden name, then renamed over leaf, which is replaced, never
 * followed. -1 with errno. */
static int place(int dir, const char *leaf, int fd, const char *target)
{
    char tmp[64], proc[64];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
    for (int tries = 0;; tries++) {
        tmp_name(tmp, sizeof(tmp), tries);
        int rc = target ? symlinkat(target, dir, tmp)
                        : linkat(AT_FDCWD, proc, dir, tmp, AT_SYMLINK_FOLLOW);
        if (rc == 0)
            break;
        if (errno != EEXIST || tries > 8)
            return -1;
    }
    int rc = renameat(dir, tmp, dir, leaf), e = errno;
    /* Renaming onto another link of the same file does nothing and keeps
     * both names; after a real rename tmp is gone and this is ENOENT. */
    unlinkat(dir, tmp, 0);
    errno = e;
    return rc;
}

static int x_file(tar_x *x, int dir, const char *leaf)
{
    uint64_t size = x->e.size;
    if (x->allow != UINT64_MAX && size > x->allow - x->bytes)
        return fs_fail(BUILTIN_QUOTA, "resource limit exceeded: the archive would pass the "
                       "workspace quota");
    if (leaf_type(dir, leaf) == S_IFDIR)
        return fs_fail(BUILTIN_WRONG_TYPE, "is a directory: %s", x->name);
    /* O_TMPFILE: nameless until complete, so a failure or a kill half-way
     * leaves nothing; else a hidden sibling, new (O_EXCL), never a link. */
    char tmp[64];
    bool named = false;
    int fd = openat(dir, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
        for (int tries = 0; tries < 8; tries++) {
            tmp_name(tmp, sizeof(tmp), tries);
            fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
            if (fd >= 0 || errno != EEXIST)
                break;
        }
        named = fd >= 0;
    }
    if (fd < 0)
        return fs_fail_errno(errno, "extract", x->name);
    int rc = BUILTIN_OK;
    for (;;) {
        ssize_t k = tar_read(&x->rd, x->buf, sizeof(x->buf));
        if (k == 0)
            break;
        if (k < 0) {
            rc = reader_fail(x, (int)k);
            goto done;
        }
        for (ssize_t off = 0; off < k;) {
            ssize_t wr = write(fd, x->buf + off, (size_t)(k - off));
            if (wr < 0 && errno == EINTR)
                continue;
            if (wr < 0) {
                rc = fs_fail_errno(errno, "extract", x->name);
                goto done;
            }
            off += wr;
        }
    }
    /* Never setuid or setgid: the workspace is on the host's disk. */
    if (fchmod(fd, x->e.mode & 01777) < 0) {
        rc = fs_fail_errno(errno, "extract", x->name);
        goto done;
    }
    struct timespec t[2] = {{0, UTIME_OMIT}, {(time_t)x->e.mtime, 0}};
    futimens(fd, t);              /* a time the filesystem refuses is not worth failing for */
    if (named ? renameat(dir, tmp, dir, leaf) : place(dir, leaf, fd, NULL)) {
        rc = fs_fail_errno(errno, "extract", x->name);
        goto done;
    }
    named = false;
    x->bytes += size;
done:
    if (named)
        unlinkat(dir, tmp, 0);
    close(fd);
    return rc;
}

static int x_dir(tar_x *x, int dir, const char *leaf)
{
    /* Ours to write into until the end, whatever the archive says. */
    if (mkdirat(dir, leaf, (x->e.mode & 0777) | 0700) < 0) {
        if (errno != EEXIST)
            return fs_fail_errno(errno, "extract", x->name);
        if (leaf_type(dir, leaf) != S_IFDIR)
            return fs_fail(BUILTIN_WRONG_TYPE, "not a directory: %s (it exists)", x->name);
    }
    if (x->ndirs == x->capdirs) {
        x->capdirs = x->capdirs ? x->capdirs * 2 : 64;
        x->dirs = cella_realloc(x->dirs, x->capdirs * sizeof(dir_meta));
    }
    x->dirs[x->ndirs++] = (dir_meta){cella_strdup(x->name), x->e.mode & 01777, x->e.mtime};
    return BUILTIN_OK;
}

static int x_symlink(tar_x *x, int dir, const char *leaf)
{
    /* Made as it is: later entries resolve beneath the target, so the
     * link cannot carry them out, and its target is never opened here. */
    if (!x->e.linkname[0])
        return fs_fail(BUILTIN_USAGE, "malformed archive (symlink %s has no target)", x->name);
    if (leaf_type(dir, leaf) == S_IFDIR)
        return fs_fail(BUILTIN_WRONG_TYPE, "is a directory: %s", x->name);
    if (place(dir, leaf, -1, x->e.linkname) < 0)
        return fs_fail_errno(errno, "extract", x->name);
    struct timespec t[2] = {{0, UTIME_OMIT}, {(time_t)x->e.mtime, 0}};
    utimensat(dir, leaf, t, AT_SYMLINK_NOFOLLOW);
    return BUILTIN_OK;
}

static int x_hardlink(tar_x *x, int dir, const char *leaf)
{
    bool slash;
    unsigned depth;
    const char *why = clean_name(x->e.linkname, x->link, sizeof(x->link), &slash, &depth);
    if (!why && !x->link[0])
        why = "empty name";
    if (why)
        goto unsafe;
    const char *tleaf = split_leaf(x->link, x->parent, sizeof(x->parent));
    int tdir = open_dir(x, x->parent, false, O_PATH);
    int src = tdir < 0 ? -1 : openat(tdir, tleaf, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    int e = errno;
    if (tdir >= 0)
        close(tdir);
    if (src < 0) {
        if (e == EXDEV || e == ELOOP) {
            why = "its target's path leads outside the target directory";
            goto unsafe;
        }
        return fs_fail(fs_status_for(e), "extract %s: hard link target %s: %s", x->name,
                       x->e.linkname, strerror(e));
    }
    struct stat st;
    int rc = BUILTIN_OK;
    if (fstat(src, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(src);
        why = "its target is not a regular file";
        goto unsafe;
    }
    if (leaf_type(dir, leaf) == S_IFDIR)
        rc = fs_fail(BUILTIN_WRONG_TYPE, "is a directory: %s", x->name);
    else if (place(dir, leaf, src, NULL) < 0)
        rc = fs_fail_errno(errno, "extract", x->name);
    close(src);
    return rc;
unsafe:
    return fs_fail(BUILTIN_USAGE, "unsafe hard link: %s -> %s (%s; a hard link may only "
                   "point to a file extracted inside the target directory)", x->e.name,
                   x->e.linkname, why);
}

static const char *type_name(char t)
{
    switch (t) {
    case '3':
        return "character device";
    case '4':
        return "block device";
    case '6':
        return "FIFO";
    case 'S':
        return "sparse file";
    case 'D':
        return "GNU dump directory";
    case 'M':
        return "multi-volume continuation";
    case 'V':
        return "volume label";
    default:
        return "unknown";
    }
}

static int x_entry(tar_x *x)
{
    tar_entry *e = &x->e;
    bool slash = false;
    unsigned depth = 0;
    const char *why = clean_name(e->name, x->name, sizeof(x->name), &slash, &depth);
    char type = e->type;
    if ((type == '0' || type == '7') && slash)
        type = '5';               /* a v7 directory: a regular entry named "d/" */
    if (!why && !x->name[0] && type != '5')
        why = "empty name";
    if (!why && depth > TAR_MAX_DEPTH)
        why = "deeper than 256 levels";
    if (why)
        return fs_fail(BUILTIN_USAGE, "unsafe entry name: %s (%s)", e->name, why);
    if (!type || !strchr("01257", type)) {
        unsigned char c = (unsigned char)type;
        return fs_fail(BUILTIN_UNSUPPORTED, c > ' ' && c < 127 ?
                       "unsupported entry type '%c' (%s) in the archive: %s" :
                       "unsupported entry type %#x (%s) in the archive: %s",
                       c, type_name(type), e->name);
    }
    if (!x->name[0])
        return BUILTIN_OK;        /* "./": the target itself, which exists */
    const char *leaf = split_leaf(x->name, x->parent, sizeof(x->parent));
    int dir = open_dir(x, x->parent, true, O_PATH);
    if (dir < 0)
        return path_fail(errno, e->name);
    int rc;
    switch (type) {
    case '5':
        rc = x_dir(x, dir, leaf);
        break;
    case '2':
        rc = x_symlink(x, dir, leaf);
        break;
    case '1':
        rc = x_hardlink(x, dir, leaf);
        break;
    default:
        rc = x_file(x, dir, leaf);
        break;
    }
    close(dir);
    if (rc == BUILTIN_OK)
        x->entries++;
    return rc;
}

/* Directory modes and times, deepest (latest) first: a parent made
 * read-only before its children were done would refuse them. */
static void finish_dirs(tar_x *x)
{
    for (size_t i = x->ndirs; i-- > 0;) {
        dir_meta *d = &x->dirs[i];
        int fd = open_dir(x, d->name, false, O_RDONLY | O_NOFOLLOW);
        if (fd >= 0) {
            struct timespec t[2] = {{0, UTIME_OMIT}, {(time_t)d->mtime, 0}};
            fchmod(fd, d->mode);
            futimens(fd, t);
            close(fd);
        }
        cella_free(d->name);
    }
    cella_free(x->dirs);
}

int fs_op_tar_extract(const fs_args *a, jsonw *w)
{
    const char *path;
    bool parents;
    uint64_t quota;
    if (fs_arg_path(a, "path", &path) < 0 || fs_arg_bool(a, "parents", false, &parents) < 0 ||
        fs_arg_u64(a, "quota", 0, &quota) < 0)
        return BUILTIN_USAGE;
    int root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0 && errno == ENOENT && parents) {
        cella_err err;
        if (fs_mkdir_p(path, 0755, &err) < 0)
            return fs_fail(fs_status_for(err.errnum), "%s", err.msg);
        root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
    if (root < 0) {
        int e = errno;
        if (e == ENOTDIR)
            return fs_fail(BUILTIN_WRONG_TYPE, "not a directory: %s", path);
        return fs_fail_errno(e, "extract", path);
    }
    tar_x *x = cella_calloc(1, sizeof(*x));
    x->root = root;
    x->allow = UINT64_MAX;
    if (quota) {
        uint64_t used = fs_workspace_usage();
        x->allow = used >= quota ? 0 : quota - used;
    }
    tar_reader_init(&x->rd, read_stdin, NULL);
    int rc;
    for (;;) {
        int st = tar_next(&x->rd, &x->e);
        if (st == TAR_END) {
            rc = BUILTIN_OK;
            break;
        }
        if (st != TAR_OK) {
            rc = reader_fail(x, st);
            break;
        }
        if ((rc = x_entry(x)) != BUILTIN_OK)
            break;
    }
    finish_dirs(x);
    if (rc == BUILTIN_OK) {
        /* The rest of the stream (a writer's padding to its record size)
         * is read, so the sender never meets a closed pipe. */
        while (read_stdin(NULL, x->buf, sizeof(x->buf)) > 0)
            ;
        char *abs = fs_abs(path);
        jw_obj(w);
        jw_kstr(w, "path", abs);
        jw_ku64(w, "entries", x->entries);
        jw_ku64(w, "bytes", x->bytes);
        jw_obj_end(w);
        cella_free(abs);
    }
    close(root);
    cella_free(x);
    return rc;
}
