/* The file operations' entry point, their shared helpers, and the simple
 * ones: ls stat mkdir write read cat rm chmod mv (fs_int.h has the
 * protocol). Each runs once in a child that exits after it: no state to
 * keep, and a failure cannot leak into the next call. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include "agent/agent_int.h"
#include "agent/fs_int.h"
#include "util/alloc.h"
#include "util/text.h"

/* read inlines a body below this size (iii's INLINE_BUFFER_CAP). */
#define FS_INLINE_MAX (1u << 20)

/* ---- arguments ------------------------------------------------------------ */

const char *fs_arg(const fs_args *a, const char *key)
{
    size_t kl = strlen(key);
    const char *v = NULL;
    for (char *const *p = a->kv; *p; p++)
        if (!strncmp(*p, key, kl) && (*p)[kl] == '=')
            v = *p + kl + 1;
    return v;
}

size_t fs_arg_all(const fs_args *a, const char *key, const char **out, size_t max)
{
    size_t kl = strlen(key), n = 0;
    for (char *const *p = a->kv; *p && n < max; p++)
        if (!strncmp(*p, key, kl) && (*p)[kl] == '=')
            out[n++] = *p + kl + 1;
    return n;
}

size_t fs_arg_count(const fs_args *a, const char *key)
{
    size_t kl = strlen(key), n = 0;
    for (char *const *p = a->kv; *p; p++)
        if (!strncmp(*p, key, kl) && (*p)[kl] == '=')
            n++;
    return n;
}

int fs_arg_bool(const fs_args *a, const char *key, bool def, bool *out)
{
    const char *v = fs_arg(a, key);
    *out = def;
    if (!v)
        return 0;
    if (!strcmp(v, "1") || !strcmp(v, "true"))
        *out = true;
    else if (!strcmp(v, "0") || !strcmp(v, "false"))
        *out = false;
    else
        return fs_fail(BUILTIN_USAGE, "%s must be a boolean", key), -1;
    return 0;
}

int fs_arg_u64(const fs_args *a, const char *key, uint64_t def, uint64_t *out)
{
    const char *v = fs_arg(a, key);
    *out = def;
    if (!v)
        return 0;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (!*v || *end || errno || *v == '-')
        return fs_fail(BUILTIN_USAGE, "%s must be a non-negative integer", key), -1;
    *out = x;
    return 0;
}

int fs_arg_mode(const fs_args *a, const char *key, unsigned def, unsigned *out)
{
    const char *v = fs_arg(a, key);
    *out = def;
    if (!v)
        return 0;
    char *end;
    unsigned long x = strtoul(v, &end, 8);
    if (!*v || *end || *v == '-' || *v == '+' || strlen(v) > 6 || x > 07777)
        return fs_fail(BUILTIN_USAGE, "invalid mode '%.16s': an octal number such as \"0644\"", v),
               -1;
    *out = (unsigned)x;
    return 0;
}

int fs_arg_path(const fs_args *a, const char *key, const char **out)
{
    *out = fs_arg(a, key);
    if (!*out || !**out)
        return fs_fail(BUILTIN_USAGE, "%s is required", key), -1;
    if (strlen(*out) >= PATH_MAX)
        return fs_fail(BUILTIN_USAGE, "%s is longer than %d bytes", key, PATH_MAX - 1), -1;
    return 0;
}

/* ---- failures ------------------------------------------------------------- */

int fs_fail(int status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    /* One line: the host takes the first as the message. */
    for (char *p = msg; *p; p++)
        if (*p == '\n')
            *p = ' ';
    fprintf(stderr, "%s\n", msg);
    return status;
}

int fs_status_for(int e)
{
    switch (e) {
    case ENOENT:
        return BUILTIN_NOT_FOUND;
    case ENOTDIR:
    case EISDIR:
    case ELOOP:
        return BUILTIN_WRONG_TYPE;
    case EEXIST:
        return BUILTIN_EXISTS;
    case ENOTEMPTY:
        return BUILTIN_NOT_EMPTY;
    case EACCES:
    case EPERM:
    case EROFS:
    case ETXTBSY:
        return BUILTIN_DENIED;
    case EFBIG:
    case EDQUOT:
        return BUILTIN_QUOTA;
    case ENAMETOOLONG:
    case EINVAL:
        return BUILTIN_USAGE;
    default:
        return BUILTIN_IO;
    }
}

int fs_fail_errno(int e, const char *what, const char *path)
{
    switch (e) {
    case ENOENT:
        return fs_fail(BUILTIN_NOT_FOUND, "file not found: %s", path);
    case EEXIST:
        return fs_fail(BUILTIN_EXISTS, "already exists: %s", path);
    case ENOTEMPTY:
        return fs_fail(BUILTIN_NOT_EMPTY, "directory not empty: %s", path);
    case EACCES:
    case EPERM:
        return fs_fail(BUILTIN_DENIED, "permission denied: %s (%s)", path, what);
    case EFBIG:
    case EDQUOT:
        return fs_fail(BUILTIN_QUOTA, "resource limit exceeded: %s %s: the file would pass the "
                                      "workspace quota or the sandbox's file size limit", what, path);
    default:
        return fs_fail(fs_status_for(e), "%s %s: %s", what, path, strerror(e));
    }
}

int fs_fail_opendir(int e, const char *what, const char *path)
{
    if (e == ENOTDIR)
        return fs_fail(BUILTIN_WRONG_TYPE, "not a directory: %s", path);
    return fs_fail_errno(e, what, path);
}

char *fs_abs(const char *path)
{
    if (path[0] == '/')
        return cella_strdup(path);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof(cwd)))
        snprintf(cwd, sizeof(cwd), "/workspace");
    if (!strcmp(path, "."))
        return cella_strdup(cwd);
    return cella_asprintf("%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", path);
}

int fs_stdout(const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(1, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

/* ---- directories ------------------------------------------------------------- */

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void fs_sort_names(char **names, size_t n)
{
    if (n)
        qsort(names, n, sizeof(char *), cmp_names);
}

void fs_free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cella_free(names[i]);
    cella_free(names);
}

char **fs_list_dir(DIR *d, size_t *count)
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
    fs_sort_names(names, n);
    *count = n;
    return names;
}

/* The first step of a walk's level: the directory fd (consumed) as a DIR,
 * or NULL with *rc the status (deeper than FS_MAX_DEPTH, or fdopendir
 * failing), its message naming what and path. */
static DIR *open_level(int fd, const char *what, const char *path, int depth, int *rc)
{
    if (depth > FS_MAX_DEPTH) {
        close(fd);
        *rc = fs_fail(BUILTIN_IO, "%s %s: deeper than %d levels", what, path, FS_MAX_DEPTH);
        return NULL;
    }
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = errno;
        close(fd);
        *rc = fs_fail_errno(e, what, path);
    }
    return d;
}

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

/* ls {path}: the directory's entries by name, each lstat'ed. */
static int op_ls(const fs_args *a, jsonw *w)
{
    const char *path;
    if (fs_arg_path(a, "path", &path) < 0)
        return BUILTIN_USAGE;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return fs_fail_opendir(errno, "ls", path);
    int rc = BUILTIN_OK;
    DIR *d = open_level(fd, "ls", path, 0, &rc);
    if (!d)
        return rc;
    size_t n;
    char **names = fs_list_dir(d, &n);
    jw_obj(w);
    jw_key(w, "entries");
    jw_arr(w);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        /* Gone since readdir: it is simply not listed. */
        if (fstatat(dirfd(d), names[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
            put_entry(w, names[i], &st);
    }
    jw_arr_end(w);
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
static int op_stat(const fs_args *a, jsonw *w)
{
    const char *path;
    if (fs_arg_path(a, "path", &path) < 0)
        return BUILTIN_USAGE;
    struct stat st;
    if (lstat(path, &st) < 0)
        return fs_fail_errno(errno, "stat", path);
    char name[NAME_MAX + 2];
    const char *b = base_name(path);
    snprintf(name, sizeof(name), "%.*s", (int)strcspn(b, "/"), b);
    put_entry(w, name[0] ? name : "/", &st);
    return BUILTIN_OK;
}

/* path's parent directory into buf ("." or "/" at the top). */
static void parent_of(const char *path, char *buf, size_t n)
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
static int make_dirs(const char *path, unsigned mode, bool *created)
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
static int op_mkdir(const fs_args *a, jsonw *w)
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
        int rc = make_dirs(path, mode, &created);
        if (rc)
            return rc;
    } else if (mkdir(path, mode) < 0) {
        int e = errno;
        if (e == ENOENT) {
            char dir[PATH_MAX];
            parent_of(path, dir, sizeof(dir));
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
    parent_of(path, dir, sizeof(dir));
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
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
static int op_write(const fs_args *a, jsonw *w)
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
        parent_of(path, dir, sizeof(dir));
        bool created;
        if ((rc = make_dirs(dir, 0755, &created)))
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
static int op_read(const fs_args *a, jsonw *w)
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
static int op_cat(const fs_args *a, jsonw *w)
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

/* ---- rm, chmod, mv ---------------------------------------------------------------- */

/* Empties the directory fd (consumed) and its subdirectories; symlinks are
 * unlinked, never followed. */
static int rm_tree(int fd, const char *path, int depth)
{
    int rc = BUILTIN_OK;
    DIR *d = open_level(fd, "rm", path, depth, &rc);
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
        rc = rm_tree(c, de->d_name, depth + 1);
        if (rc == BUILTIN_OK && unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) < 0)
            rc = fs_fail_errno(errno, "rm", de->d_name);
        rewinddir(d);
    }
    closedir(d);
    return rc;
}

/* rm {path, recursive=false} -> {removed: true}. */
static int op_rm(const fs_args *a, jsonw *w)
{
    const char *path;
    bool rec;
    if (fs_arg_path(a, "path", &path) < 0 || fs_arg_bool(a, "recursive", false, &rec) < 0)
        return BUILTIN_USAGE;
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
            int rc = rm_tree(fd, path, 0);
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
    DIR *d = open_level(fd, "chmod", path, depth, &rc);
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
static int op_chmod(const fs_args *a, jsonw *w)
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
static int op_mv(const fs_args *a, jsonw *w)
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
            parent_of(dst, dir, sizeof(dir));
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
        parent_of(dst, dir, sizeof(dir));
        char *tmp = cella_asprintf("%s/.cella-mv-%d", dir, (int)getpid());
        int rc = copy_tree(src, tmp, 0);
        if (rc == BUILTIN_OK && rename(tmp, dst) < 0)
            rc = fs_fail_errno(errno, "mv", dst);
        if (rc) {
            int fd = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd >= 0 && rm_tree(fd, tmp, 0) == BUILTIN_OK)
                rmdir(tmp);
            else
                unlink(tmp);
            cella_free(tmp);
            return rc;
        }
        cella_free(tmp);
        if (S_ISDIR(st.st_mode)) {
            int fd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd >= 0 && rm_tree(fd, src, 0) == BUILTIN_OK)
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

/* write-exec's file (builtin.c): parents made, written as write does. */
int agent_builtin_write(const char *path, const char *mode_s, const char *content)
{
    char *end;
    unsigned long mode = strtoul(mode_s, &end, 8);
    if (!*path || !*mode_s || *end || mode > 07777)
        return EINVAL;
    char dir[PATH_MAX];
    parent_of(path, dir, sizeof(dir));
    bool created;
    uint64_t n;
    int rc = make_dirs(dir, 0755, &created);
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

/* ---- entry point ------------------------------------------------------------------ */

static const struct {
    const char *name;
    fs_op_fn fn;
    bool streams;                 /* writes its own stdout */
} ops[] = {
    {"ls", op_ls, false},          {"stat", op_stat, false},
    {"mkdir", op_mkdir, false},    {"write", op_write, false},
    {"read", op_read, false},      {"cat", op_cat, true},
    {"rm", op_rm, false},          {"chmod", op_chmod, false},
    {"mv", op_mv, false},          {"grep", fs_op_grep, false},
    {"sed", fs_op_sed, false},     {"glob", fs_op_glob, false},
    {"tar-create", fs_op_tar_create, true},
    {"tar-extract", fs_op_tar_extract, false},
};

int agent_fs_main(char *const argv[])
{
    /* EFBIG from a write past the quota, not a signal that kills us. */
    signal(SIGXFSZ, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    if (!argv[0])
        return fs_fail(BUILTIN_USAGE, "no file operation named");
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        if (strcmp(argv[0], ops[i].name))
            continue;
        for (char *const *p = argv + 1; *p; p++)
            if (!strchr(*p, '='))
                return fs_fail(BUILTIN_USAGE, "malformed argument '%.64s'", *p);
        fs_args a = {.kv = argv + 1};
        cbuf out;
        cbuf_init(&out);
        jsonw w;
        jw_init(&w, &out);
        int rc = ops[i].fn(&a, &w);
        if (rc == BUILTIN_OK && !ops[i].streams) {
            cbuf_append(&out, "\n", 1);
            if (fs_stdout(cbuf_head(&out), cbuf_avail(&out)) < 0)
                rc = BUILTIN_IO;
        }
        cbuf_free(&out);
        return rc;
    }
    return fs_fail(BUILTIN_UNSUPPORTED, "unknown file operation '%.64s'", argv[0]);
}
