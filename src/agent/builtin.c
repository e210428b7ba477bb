/* Built-in file operations, run in an exec's child: the sandbox user's
 * rights, its rlimits, its mount namespace. The daemon never resolves a
 * sandbox path on the host (DESIGN rule 3); it asks the agent, and the
 * agent does it as the sandbox user would.
 *
 *   write PATH MODE PARENTS   stdin -> PATH, atomically (temporary sibling,
 *                             fsync, chmod, rename); PARENTS "1" makes the
 *                             missing directories (0755) first. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

/* mkdir -p of path's parent directories. */
static int make_parents(const char *path)
{
    char buf[PATH_MAX];
    size_t n = strlen(path);
    if (n >= sizeof(buf))
        return fail(ENAMETOOLONG, "path", path);
    memcpy(buf, path, n + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
            return fail(errno, "mkdir", buf);
        *p = '/';
    }
    return 0;
}

static int op_write(const char *path, const char *mode_s, const char *parents)
{
    char *end;
    long mode = strtol(mode_s, &end, 8);
    if (!*path || *end || mode < 0 || mode > 07777)
        return BUILTIN_USAGE;
    /* No setuid/setgid bits from a request: workspace files live on the
     * host's disk (the seccomp filter refuses them too). */
    mode &= 01777;
    if (!strcmp(parents, "1")) {
        int rc = make_parents(path);
        if (rc)
            return rc;
    }
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return fail(EISDIR, "write", path);
    char dir[PATH_MAX], tmp[PATH_MAX];
    const char *slash = strrchr(path, '/');
    int dl = slash ? (int)(slash - path) : 1;
    snprintf(dir, sizeof(dir), "%.*s", slash ? (dl ? dl : 1) : 1, slash ? path : ".");
    if (stat(dir, &st) < 0)
        return fail(errno, "parent not found:", dir);
    if (!S_ISDIR(st.st_mode))
        return fail(ENOTDIR, "parent is not a directory:", dir);
    uint64_t r = 0;
    if (getrandom(&r, sizeof(r), 0) < 0)
        r = (uint64_t)getpid();
    int n = snprintf(tmp, sizeof(tmp), "%s/.%s.cella-%016llx", dir, slash ? slash + 1 : path,
                     (unsigned long long)r);
    if (n < 0 || (size_t)n >= sizeof(tmp))
        return fail(ENAMETOOLONG, "write", path);
    /* O_EXCL|O_NOFOLLOW: the temporary name is new, never a planted link. */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return fail(errno, "write", path);
    char buf[65536];
    for (;;) {
        ssize_t got = read(0, buf, sizeof(buf));
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
        return fail(e, "write", path);
    }
    return BUILTIN_OK;
io_error: {
        int e = errno;
        if (fd >= 0)
            close(fd);
        unlink(tmp);
        return fail(e, "write", path);
    }
}

int agent_builtin_main(char *const argv[])
{
    size_t argc = 0;
    while (argv[argc])
        argc++;
    if (argc == 4 && !strcmp(argv[0], "write"))
        return op_write(argv[1], argv[2], argv[3]);
    fprintf(stderr, "unknown built-in operation '%s'\n", argc ? argv[0] : "");
    return BUILTIN_USAGE;
}
