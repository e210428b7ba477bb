/* The file operations' entry point and their shared helpers: arguments,
 * failures, directory listings (fs_int.h has the protocol; the operations
 * are in fs_read.c, fs_write.c, fs_tree.c, fs_grep.c, fs_sed.c and
 * fs_tar_*.c). Each runs once in a child that exits after it: no state to
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
#include <unistd.h>

#include "agent/agent_int.h"
#include "agent/fs_int.h"
#include "util/alloc.h"
#include "util/text.h"


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

void fs_norm_path(char *path)
{
    size_t n = strlen(path);
    for (;;) {
        if (n > 1 && path[n - 1] == '/')
            n--;                                  /* "x/" -> "x", never "/" -> "" */
        else if (n > 1 && path[n - 1] == '.' && path[n - 2] == '/')
            n--;                                  /* "x/." -> "x/", "/." -> "/" */
        else
            break;
    }
    path[n] = '\0';
}

int fs_arg_path(const fs_args *a, const char *key, const char **out)
{
    *out = fs_arg(a, key);
    if (!*out || !**out)
        return fs_fail(BUILTIN_USAGE, "%s is required", key), -1;
    if (strlen(*out) >= PATH_MAX)
        return fs_fail(BUILTIN_USAGE, "%s is longer than %d bytes", key, PATH_MAX - 1), -1;
    /* The value lives in this process's own argv, so it may be shortened
     * in place. */
    fs_norm_path((char *)*out);
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

volatile sig_atomic_t fs_cancelled;

static void on_cancel(int sig)
{
    (void)sig;
    fs_cancelled = 1;
}

ssize_t fs_read_in(int fd, void *buf, size_t n)
{
    for (;;) {
        /* A SIGTERM just before read() is not lost for good: the agent
         * repeats it until the operation is gone (exec.c). */
        if (fs_cancelled) {
            errno = ECANCELED;
            return -1;
        }
        ssize_t k = read(fd, buf, n);
        if (k >= 0 || errno != EINTR)
            return k;
    }
}

int fs_stdout(const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(1, c, n);
        if (w < 0 && errno == EINTR && !fs_cancelled)
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

DIR *fs_open_level(int fd, const char *what, const char *path, int depth, int *rc)
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

/* ---- entry point ------------------------------------------------------------------ */

static const struct {
    const char *name;
    fs_op_fn fn;
    bool streams;                 /* writes its own stdout */
} ops[] = {
    {"ls", fs_op_ls, false},          {"stat", fs_op_stat, false},
    {"mkdir", fs_op_mkdir, false},    {"write", fs_op_write, false},
    {"read", fs_op_read, false},      {"cat", fs_op_cat, true},
    {"rm", fs_op_rm, false},          {"chmod", fs_op_chmod, false},
    {"mv", fs_op_mv, false},          {"grep", fs_op_grep, false},
    {"sed", fs_op_sed, false},     {"glob", fs_op_glob, false},
    {"tar-create", fs_op_tar_create, true},
    {"tar-extract", fs_op_tar_extract, false},
};

int agent_fs_main(char *const argv[])
{
    /* EFBIG from a write past the quota, not a signal that kills us. */
    signal(SIGXFSZ, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    /* SIGTERM cancels: a blocked read or write returns EINTR (no
     * SA_RESTART) and the operation fails through its own clean-up. */
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_cancel;
    sigaction(SIGTERM, &sa, NULL);
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

