#include "core/statedir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/fdio.h"

#define NODE_KEY_FILE "node-key"

char *statedir_default_path(void)
{
    const char *env = getenv("CELLA_STATE_DIR");
    if (env && *env)
        return cella_strdup(env);
    if (geteuid() == 0)
        return cella_strdup("/var/lib/cella");
    const char *xdg = getenv("XDG_STATE_HOME");
    if (xdg && *xdg)
        return cella_asprintf("%s/cella", xdg);
    const char *home = getenv("HOME");
    return cella_asprintf("%s/.local/state/cella", home && *home ? home : "/tmp");
}

/* The node key is made once and kept: a file written whole to a temporary
 * name and linked into place, so concurrent first runs agree on one key. */
static int load_node_key(int dfd, uint32_t *key, cella_err *err)
{
    _cleanup_free_ char *txt = NULL;
    for (int attempt = 0; attempt < 2; attempt++) {
        cella_err e2;
        if (file_read_str_at(dfd, NODE_KEY_FILE, 64, &txt, &e2) == 0) {
            char *end;
            unsigned long v = strtoul(txt, &end, 16);
            if (end == txt + 8 && (*end == '\n' || *end == '\0')) {
                *key = (uint32_t)v;
                return 0;
            }
            return cella_err_set(err, 0, "%s: malformed node key", NODE_KEY_FILE);
        }
        if (e2.errnum != ENOENT)
            return cella_err_set(err, e2.errnum, "%s", e2.msg);
        uint32_t k;
        if (getrandom(&k, sizeof(k), 0) != (ssize_t)sizeof(k))
            return cella_err_set(err, errno, "getrandom");
        char tmp[64], line[16];
        snprintf(tmp, sizeof(tmp), ".node-key.%d", (int)getpid());
        snprintf(line, sizeof(line), "%08x\n", k);
        _cleanup_close_ int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0)
            return cella_err_set(err, errno, "create %s", tmp);
        if (fd_write_all(fd, line, strlen(line)) < 0 || fsync(fd) < 0) {
            int e = errno;
            unlinkat(dfd, tmp, 0);
            return cella_err_set(err, e, "write %s", tmp);
        }
        if (linkat(dfd, tmp, dfd, NODE_KEY_FILE, 0) < 0 && errno != EEXIST) {
            int e = errno;
            unlinkat(dfd, tmp, 0);
            return cella_err_set(err, e, "link %s", NODE_KEY_FILE);
        }
        unlinkat(dfd, tmp, 0);
    }
    return cella_err_set(err, 0, "could not settle on a node key");
}

int statedir_open(const char *path, statedir *sd, cella_err *err)
{
    memset(sd, 0, sizeof(*sd));
    sd->fd = -1;
    if (!path || path[0] != '/')
        return cella_err_set(err, 0, "state directory must be an absolute path (got '%s')",
                             path ? path : "");
    if (fs_mkdir_p(path, 0700, err) < 0)
        return -1;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return cella_err_set(err, errno, "open state directory %s", path);
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_uid != geteuid()) {
        close(fd);
        return cella_err_set(err, 0, "state directory %s is not owned by uid %d", path,
                             (int)geteuid());
    }
    /* Nobody else may traverse it: workspaces below hold sandbox-written files. */
    if ((st.st_mode & 077) && fchmod(fd, 0700) < 0) {
        int e = errno;
        close(fd);
        return cella_err_set(err, e, "chmod 0700 %s", path);
    }
    if (load_node_key(fd, &sd->node_key, err) < 0) {
        close(fd);
        return cella_err_prefix(err, "state directory %s", path);
    }
    sd->fd = fd;
    sd->path = cella_strdup(path);
    return 0;
}

void statedir_close(statedir *sd)
{
    if (sd->fd >= 0)
        close(sd->fd);
    cella_free(sd->path);
    sd->fd = -1;
    sd->path = NULL;
}

int statedir_subdir(statedir *sd, const char *name, cella_err *err)
{
    if (mkdirat(sd->fd, name, 0700) < 0 && errno != EEXIST)
        return cella_err_set(err, errno, "mkdir %s/%s", sd->path, name);
    int fd = openat(sd->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return cella_err_set(err, errno, "open %s/%s", sd->path, name);
    return fd;
}
