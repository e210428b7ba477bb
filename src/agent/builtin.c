/* Built-in file operations, run in an exec's child: the sandbox user's
 * rights, its rlimits, its mount namespace. The daemon never resolves a
 * sandbox path on the host (DESIGN rule 3); it asks the agent, and the
 * agent does it as the sandbox user would.
 *
 *   write PATH MODE PARENTS   stdin -> PATH, atomically (temporary sibling,
 *                             fsync, chmod, rename); PARENTS "1" makes the
 *                             missing directories (0755) first.
 *
 * And, run by exec.c rather than here because it ends in an exec:
 *   write-exec PATH MODE CONTENT PROG ARG...
 *                             CONTENT -> PATH as above (parents made), then
 *                             PROG ARG... is exec'd as a command is: a
 *                             one-shot run's code file and its interpreter in
 *                             one round trip instead of two. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent_int.h"
#include "agent/builtin.h"

static int status_for(int e)
{
    switch (e) {
    case ENOENT:
    case ENOTDIR:
        return BUILTIN_NOT_FOUND;
    case EISDIR:
        return BUILTIN_WRONG_TYPE;
    case EACCES:
    case EPERM:
    case EROFS:
        return BUILTIN_DENIED;
    default:
        return BUILTIN_IO;
    }
}

static int fail(int e, const char *what, const char *path)
{
    fprintf(stderr, "%s %s: %s\n", what, path, strerror(e));
    return status_for(e);
}

/* mkdir -p of path's parent directories. *errnum gets the cause of a failure. */
static int make_parents(const char *path, int *errnum)
{
    char buf[PATH_MAX];
    size_t n = strlen(path);
    if (n >= sizeof(buf))
        return *errnum = ENAMETOOLONG, fail(ENAMETOOLONG, "path", path);
    memcpy(buf, path, n + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) < 0 && errno != EEXIST) {
            int e = errno;
            return *errnum = e, fail(e, "mkdir", buf);
        }
        *p = '/';
    }
    return 0;
}

/* Writes data (or, when data is NULL, everything read from in_fd) to path
 * atomically. Returns a BUILTIN_* status; *errnum gets the cause. */
static int write_file(const char *path, const char *mode_s, bool parents, const char *data,
                      size_t n, int in_fd, int *errnum)
{
    char *end;
    long mode = strtol(mode_s, &end, 8);
    *errnum = EINVAL;
    if (!*path || *end || mode < 0 || mode > 07777)
        return BUILTIN_USAGE;
    /* No setuid/setgid bits from a request: workspace files live on the
     * host's disk (the seccomp filter refuses them too). */
    mode &= 01777;
    if (parents) {
        int rc = make_parents(path, errnum);
        if (rc)
            return rc;
    }
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return *errnum = EISDIR, fail(EISDIR, "write", path);
    char dir[PATH_MAX], tmp[PATH_MAX];
    const char *slash = strrchr(path, '/');
    int dl = slash ? (int)(slash - path) : 1;
    snprintf(dir, sizeof(dir), "%.*s", slash ? (dl ? dl : 1) : 1, slash ? path : ".");
    if (stat(dir, &st) < 0) {
        int e = errno;
        return *errnum = e, fail(e, "parent not found:", dir);
    }
    if (!S_ISDIR(st.st_mode))
        return *errnum = ENOTDIR, fail(ENOTDIR, "parent is not a directory:", dir);
    uint64_t r = 0;
    if (getrandom(&r, sizeof(r), 0) < 0)
        r = (uint64_t)getpid();
    int tl = snprintf(tmp, sizeof(tmp), "%s/.%s.cella-%016llx", dir, slash ? slash + 1 : path,
                      (unsigned long long)r);
    if (tl < 0 || (size_t)tl >= sizeof(tmp))
        return *errnum = ENAMETOOLONG, fail(ENAMETOOLONG, "write", path);
    /* O_EXCL|O_NOFOLLOW: the temporary name is new, never a planted link. */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        int e = errno;
        return *errnum = e, fail(e, "write", path);
    }
    char buf[65536];
    for (size_t off = 0; data && off < n;) {
        ssize_t w = write(fd, data + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            goto io_error;
        off += (size_t)w;
    }
    for (; !data;) {
        ssize_t got = read(in_fd, buf, sizeof(buf));
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            goto io_error;
        if (got == 0)
            break;
        for (ssize_t off = 0; off < got;) {
            ssize_t w = write(fd, buf + off, (size_t)(got - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0)
                goto io_error;
            off += w;
        }
    }
    if (fsync(fd) < 0 || fchmod(fd, (mode_t)mode) < 0)
        goto io_error;
    if (close(fd) < 0) {
        fd = -1;
        goto io_error;
    }
    if (rename(tmp, path) < 0) {
        int e = errno;
        unlink(tmp);
        return *errnum = e, fail(e, "write", path);
    }
    *errnum = 0;
    return BUILTIN_OK;
io_error: {
        int e = errno;
        if (fd >= 0)
            close(fd);
        unlink(tmp);
        return *errnum = e, fail(e, "write", path);
    }
}

int agent_builtin_write(const char *path, const char *mode, const char *content)
{
    int e;
    write_file(path, mode, true, content, strlen(content), -1, &e);
    return e;
}

int agent_builtin_main(char *const argv[])
{
    size_t argc = 0;
    while (argv[argc])
        argc++;
    int e;
    if (argc >= 1 && !strcmp(argv[0], "fs"))
        return agent_fs_main(argv + 1);
    if (argc == 4 && !strcmp(argv[0], "write"))
        return write_file(argv[1], argv[2], !strcmp(argv[3], "1"), NULL, 0, 0, &e);
    fprintf(stderr, "unknown built-in operation '%s'\n", argc ? argv[0] : "");
    return BUILTIN_USAGE;
}
