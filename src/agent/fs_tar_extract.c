/* tar-extract: an archive unpacked into a directory inside the sandbox
 * (the format is util/tar.c's; fs_int.h has the protocol; tar-create is
 * fs_tar_create.c's).
 *
 * tar-extract {path, parents=0, quota=0, atomic=0, follow=0, deadline_ms=0} <- stdin (a plain tar)
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
 * quota (fs_quota.c) reserves each file's declared size before a byte of
 * it is written and checks again as it is renamed into place (with
 * atomic=1, as the batch is).
 *
 * atomic=1 (the gateway's bulk copy: all or nothing) takes regular files
 * and directories only. Each file is written in full under a hidden
 * temporary name beside its target, and none is renamed into place until
 * the whole archive has been read and every target checked again (none may
 * have become a directory); then the renames run, one after the other.
 * Any failure before that point removes the temporaries and the
 * directories the extract made, so nothing the caller can see changed.
 * (A process in the sandbox that turns a target into a directory between
 * the check and its rename fails that rename, after the earlier ones.)
 *
 * follow=1 (the gateway's writes; only with atomic=1, so the archive itself
 * makes no symlink) follows the symlinks already in the target directory,
 * in parents and in the last component alike, as long as they stay beneath
 * it (fs_beneath.c): a file written to out/x where out -> data lands in
 * data/x, one written to link where link -> data/f replaces data/f. A
 * symlink that leads out (an absolute one to another place, or ".." past
 * the top) refuses the entry, and the whole archive with it. Without it
 * (uploads, Flujo's files) a symlink in a parent path is refused even when
 * it stays inside, and a last component that is a symlink is replaced. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "agent/fs_int.h"
#include "agent/fs_quota.h"
#include "agent/fs_walk.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/fdio.h"
#include "util/tar.h"

typedef struct dir_meta {
    char *name;
    uint32_t mode;
    int64_t mtime;
} dir_meta;

/* atomic=1: a file written under tmp in parent, waiting for its rename. */
typedef struct pending_file {
    char *parent;                 /* relative to the target, "" at the top */
    char *leaf;
    char *name;                   /* the entry's cleaned name, for messages */
    char tmp[64];                 /* "" once renamed */
} pending_file;

typedef struct tar_x {
    tar_reader rd;
    tar_entry e;
    int root;                     /* the target directory */
    bool no_openat2;
    fsq q;                        /* the workspace quota (fs_quota.c) */
    uint64_t reserved;            /* atomic: the reservation the files written so far need */
    uint64_t bytes, entries;
    dir_meta *dirs;
    size_t ndirs, capdirs;
    bool atomic;
    bool follow;
    char *root_abs;               /* follow: the target's absolute path */
    pending_file *pend;
    size_t npend, cappend;
    char **made;                  /* atomic: directories made, in order, to undo */
    size_t nmade, capmade;
    char name[PATH_MAX];          /* e.name, cleaned */
    char canon[PATH_MAX + NAME_MAX + 2];  /* where it lands: name, or with follow its symlinks resolved */
    char leaf[NAME_MAX + 1];      /* follow: its last component, resolved */
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
const char *tar_clean_name(const char *in, char *out, size_t cap, bool *slash, unsigned *depth)
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
static void made_dir(tar_x *x, const char *rel)
{
    if (!x->atomic)
        return;
    if (x->nmade == x->capmade) {
        x->capmade = x->capmade ? x->capmade * 2 : 16;
        x->made = cella_realloc(x->made, x->capmade * sizeof(char *));
    }
    x->made[x->nmade++] = cella_strdup(rel);
}

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
            if (mkdirat(cur, comp, 0755) == 0)
                made_dir(x, prefix);
            else if (errno != EEXIST)
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
static void made_cb(void *ctx, const char *rel)
{
    made_dir(ctx, rel);
}

static int open_dir(tar_x *x, const char *rel, bool create, int final)
{
    if (x->follow) {
        fs_beneath b;
        if (fs_resolve_beneath(x->root, x->root_abs, rel, create, made_cb, x, &b) < 0)
            return -1;
        int fd = openat(b.dir, b.leaf, final | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT && create) {
            if (mkdirat(b.dir, b.leaf, 0755) == 0) {
                char full[PATH_MAX + NAME_MAX + 2];
                snprintf(full, sizeof(full), "%s%s%s", b.parent, b.parent[0] ? "/" : "", b.leaf);
                made_dir(x, full);
            }
            fd = openat(b.dir, b.leaf, final | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        int e = errno;
        close(b.dir);
        errno = e;
        return fd;
    }
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

static int path_fail(const tar_x *x, int e, const char *name)
{
    if (x->follow && e == EXDEV)
        return fs_fail(BUILTIN_USAGE, "unsafe path: %s (a symlink in it leads outside %s)", name,
                       x->root_abs);
    if (x->follow && e == ELOOP)
        return fs_fail(BUILTIN_USAGE, "unsafe path: %s (more than 40 symlinks in it)", name);
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

/* Names fd's file (or a new symlink to target) leaf in dir: first under a
 * fresh hidden name, then renamed over leaf, which is replaced, never
 * followed. -1 with errno. */
static int place(int dir, const char *leaf, int fd, const char *target)
{
    char tmp[64], proc[64];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
    for (int tries = 0;; tries++) {
        fs_tmp_name(tmp, sizeof(tmp), NULL, tries);
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

/* The last step of a file (fsq_commit's apply): its name given. */
typedef struct x_commit {
    tar_x *x;
    int dir, fd;
    const char *leaf, *tmp;
    bool named;
} x_commit;

static int x_place(void *arg)
{
    x_commit *c = arg;
    if (c->named ? renameat(c->dir, c->tmp, c->dir, c->leaf) : place(c->dir, c->leaf, c->fd, NULL))
        return fs_fail_errno(errno, "extract", c->x->name);
    return BUILTIN_OK;
}

static uint64_t x_frees(void *arg)
{
    x_commit *c = arg;
    return fsq_freed_at(c->dir, c->leaf);
}

/* The reservation for a file of size bytes about to be written at leaf
 * (fd, its temporary, named or not). */
static int x_reserve(tar_x *x, int dir, const char *leaf, int fd, bool named, uint64_t size)
{
    x->q.hidden_fd = named ? fd : -1;
    if (!x->atomic) {
        x->q.credit = fsq_freed_at(dir, leaf);
        return fsq_reserve(&x->q, fsq_blocks(size), 0, x->name);
    }
    /* atomic: every file waits, named, for the batch's commit. */
    x->q.credit += fsq_freed_at(dir, leaf);
    x->reserved += fsq_blocks(size);
    return fsq_reserve(&x->q, x->reserved, 0, x->name);
}

static int x_file(tar_x *x, int dir, const char *leaf)
{
    uint64_t size = x->e.size;
    if (leaf_type(dir, leaf) == S_IFDIR)
        return fs_fail(BUILTIN_WRONG_TYPE, "is a directory: %s", x->name);
    /* O_TMPFILE: nameless until complete, so a failure or a kill half-way
     * leaves nothing; else a hidden sibling, new (O_EXCL), never a link. */
    char tmp[64];
    bool named = false;
    /* atomic: a name from the start, since the file waits for its rename
     * after this descriptor is closed. */
    int fd = x->atomic ? -1 : openat(dir, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (x->atomic || (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL))) {
        for (int tries = 0; tries < 8; tries++) {
            fs_tmp_name(tmp, sizeof(tmp), NULL, tries);
            fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
            if (fd >= 0 || errno != EEXIST)
                break;
        }
        named = fd >= 0;
    }
    if (fd < 0)
        return fs_fail_errno(errno, "extract", x->name);
    /* A declared size past the quota is refused before a byte is written. */
    bool counts = fsq_counts(&x->q, fd);
    int rc = counts ? x_reserve(x, dir, leaf, fd, named, size) : BUILTIN_OK;
    if (rc)
        goto done;
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
    if (x->atomic) {
        if (x->npend == x->cappend) {
            x->cappend = x->cappend ? x->cappend * 2 : 16;
            x->pend = cella_realloc(x->pend, x->cappend * sizeof(*x->pend));
        }
        pending_file *pf = &x->pend[x->npend++];
        pf->parent = cella_strdup(x->parent);
        pf->leaf = cella_strdup(leaf);
        pf->name = cella_strdup(x->name);
        snprintf(pf->tmp, sizeof(pf->tmp), "%s", tmp);
        named = false;            /* the pending list owns it now */
        x->bytes += size;
        if (counts)
            x->q.hidden += fsq_fd_bytes(fd);
        goto done;
    }
    x_commit c = {x, dir, fd, leaf, tmp, named};
    rc = counts ? fsq_commit(&x->q, fsq_fd_bytes(fd), x_frees, x_place, &c, x->name)
                : x_place(&c);
    if (rc)
        goto done;
    named = false;
    x->bytes += size;
done:
    x->q.hidden_fd = -1;
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
    } else {
        made_dir(x, x->canon);
    }
    if (x->ndirs == x->capdirs) {
        x->capdirs = x->capdirs ? x->capdirs * 2 : 64;
        x->dirs = cella_realloc(x->dirs, x->capdirs * sizeof(dir_meta));
    }
    x->dirs[x->ndirs++] = (dir_meta){cella_strdup(x->canon), x->e.mode & 01777, x->e.mtime};
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
    const char *why = tar_clean_name(x->e.linkname, x->link, sizeof(x->link), &slash, &depth);
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
    const char *why = tar_clean_name(e->name, x->name, sizeof(x->name), &slash, &depth);
    char type = e->type;
    if ((type == '0' || type == '7') && slash)
        type = '5';               /* a v7 directory: a regular entry named "d/" */
    if (!why && !x->name[0] && type != '5')
        why = "empty name";
    if (!why && depth > FS_MAX_DEPTH)
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
    /* A link cannot wait for a commit the way a file's temporary can. */
    if (x->atomic && type != '0' && type != '7' && type != '5')
        return fs_fail(BUILTIN_UNSUPPORTED, "an atomic extract takes regular files and "
                       "directories only: %s", e->name);
    const char *leaf;
    int dir;
    if (x->follow) {
        /* The whole name: its last component may be a symlink to follow. */
        fs_beneath b;
        if (fs_resolve_beneath(x->root, x->root_abs, x->name, true, made_cb, x, &b) < 0)
            return path_fail(x, errno, e->name);
        dir = b.dir;
        snprintf(x->parent, sizeof(x->parent), "%s", b.parent);
        snprintf(x->leaf, sizeof(x->leaf), "%s", b.leaf);
        leaf = x->leaf;
        if (!strcmp(leaf, "."))
            snprintf(x->canon, sizeof(x->canon), "%s", b.parent);
        else
            snprintf(x->canon, sizeof(x->canon), "%s%s%s", b.parent, b.parent[0] ? "/" : "",
                     leaf);
    } else {
        leaf = split_leaf(x->name, x->parent, sizeof(x->parent));
        snprintf(x->canon, sizeof(x->canon), "%s", x->name);
        dir = open_dir(x, x->parent, true, O_PATH);
        if (dir < 0)
            return path_fail(x, errno, e->name);
    }
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

/* atomic: every target checked once more, then every rename. */
static int commit(tar_x *x)
{
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < x->npend; i++) {
            pending_file *pf = &x->pend[i];
            int dir = open_dir(x, pf->parent, false, O_PATH);
            if (dir < 0)
                return path_fail(x, errno, pf->name);
            int rc = BUILTIN_OK;
            if (pass == 0 && leaf_type(dir, pf->leaf) == S_IFDIR)
                rc = fs_fail(BUILTIN_WRONG_TYPE, "is a directory: %s", pf->name);
            else if (pass == 1 && renameat(dir, pf->tmp, dir, pf->leaf) < 0)
                rc = fs_fail_errno(errno, "extract", pf->name);
            else if (pass == 1)
                pf->tmp[0] = '\0';
            close(dir);
            if (rc != BUILTIN_OK)
                return rc;
        }
    }
    return BUILTIN_OK;
}

/* fsq_commit's apply: the batch's renames, under the quota's lock. */
static int commit_apply(void *arg)
{
    return commit(arg);
}

/* atomic: what the renames free (each target a regular file with no
 * other link), looked at under the quota's lock. */
static uint64_t commit_frees(void *arg)
{
    tar_x *x = arg;
    uint64_t sum = 0;
    for (size_t i = 0; i < x->npend; i++) {
        int dir = open_dir(x, x->pend[i].parent, false, O_PATH);
        if (dir >= 0) {
            sum += fsq_freed_at(dir, x->pend[i].leaf);
            close(dir);
        }
    }
    return sum;
}

/* atomic, after a failure: the temporaries not renamed, then the
 * directories made, deepest (latest) first; one that is not empty (a
 * rename went through, or something else wrote there) stays. */
static void rollback(tar_x *x)
{
    for (size_t i = 0; i < x->npend; i++) {
        pending_file *pf = &x->pend[i];
        int dir = pf->tmp[0] ? open_dir(x, pf->parent, false, O_PATH) : -1;
        if (dir >= 0) {
            unlinkat(dir, pf->tmp, 0);
            close(dir);
        }
    }
    for (size_t i = x->nmade; i-- > 0;) {
        char leafbuf[PATH_MAX];
        snprintf(leafbuf, sizeof(leafbuf), "%s", x->made[i]);
        const char *leaf = split_leaf(leafbuf, x->parent, sizeof(x->parent));
        int dir = open_dir(x, x->parent, false, O_PATH);
        if (dir >= 0) {
            unlinkat(dir, leaf, AT_REMOVEDIR);
            close(dir);
        }
    }
}

static void free_atomic(tar_x *x)
{
    for (size_t i = 0; i < x->npend; i++) {
        cella_free(x->pend[i].parent);
        cella_free(x->pend[i].leaf);
        cella_free(x->pend[i].name);
    }
    cella_free(x->pend);
    for (size_t i = 0; i < x->nmade; i++)
        cella_free(x->made[i]);
    cella_free(x->made);
}

/* The target's absolute path, symlinks resolved, as an absolute symlink
 * beneath it would spell it: the kernel's name for the descriptor (from
 * /proc, which every sandbox has), else path made absolute. */
static char *root_path(int root, const char *path)
{
    char proc[64], buf[PATH_MAX];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", root);
    ssize_t n = readlink(proc, buf, sizeof(buf) - 1);
    if (n > 0 && buf[0] == '/') {
        buf[n] = '\0';
        return cella_strdup(buf);
    }
    char *abs = fs_abs(path);
    size_t l = strlen(abs);
    while (l > 1 && abs[l - 1] == '/')
        abs[--l] = '\0';
    return abs;
}

static int past_deadline(const tar_x *x, uint64_t ms)
{
    return fs_fail(BUILTIN_TIMED_OUT, "the extract passed its deadline of %llu ms after %llu "
                   "entries%s", (unsigned long long)ms, (unsigned long long)x->entries,
                   x->atomic ? "; nothing was changed" : "");
}

int fs_op_tar_extract(const fs_args *a, jsonw *w)
{
    const char *path;
    bool parents, atomic, follow;
    uint64_t deadline_ms;
    fsq q;
    if (fs_arg_path(a, "path", &path) < 0 || fs_arg_bool(a, "parents", false, &parents) < 0 ||
        fsq_begin(&q, a) != BUILTIN_OK || fs_arg_bool(a, "atomic", false, &atomic) < 0 ||
        fs_arg_bool(a, "follow", false, &follow) < 0 ||
        fs_arg_u64(a, "deadline_ms", 0, &deadline_ms) < 0)
        return BUILTIN_USAGE;
    uint64_t deadline = fs_deadline_at(deadline_ms);
    /* An archive that may make symlinks is never extracted through them. */
    if (follow && !atomic)
        return fs_fail(BUILTIN_USAGE, "follow=1 goes with atomic=1 only");
    int root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0 && errno == ENOENT && parents) {
        cella_err err;
        if (fs_mkdir_p(path, 0755, &err) < 0)
            return fs_fail(fs_status_for(err.errnum), "%s", err.msg);
        root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
    if (root < 0)
        return fs_fail_opendir(errno, "extract", path);
    tar_x *x = cella_calloc(1, sizeof(*x));
    x->root = root;
    x->atomic = atomic;
    x->follow = follow;
    if (follow)
        x->root_abs = root_path(root, path);
    x->q = q;
    tar_reader_init(&x->rd, read_stdin, NULL);
    int rc;
    for (;;) {
        if (fs_past(deadline)) {
            rc = past_deadline(x, deadline_ms);
            break;
        }
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
    /* Before finish_dirs: a directory it makes read-only would refuse the
     * renames and the clean-up. */
    if (x->atomic && rc == BUILTIN_OK && fs_past(deadline))
        rc = past_deadline(x, deadline_ms);
    if (x->atomic && rc == BUILTIN_OK)
        rc = fsq_commit(&x->q, x->q.hidden, commit_frees, commit_apply, x, "the archive");
    fsq_end(&x->q);
    if (x->atomic && rc != BUILTIN_OK)
        rollback(x);
    free_atomic(x);
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
    cella_free(x->root_abs);
    cella_free(x);
    return rc;
}
