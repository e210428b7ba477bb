#include "util/rmtree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/alloc.h"

/* Deeper subtrees are moved up next to the tree and removed in a later pass:
 * a sandbox cannot make its workspace unremovable by nesting directories. */
#define RMTREE_MAX_DEPTH 256

typedef struct rm_ctx {
    int top;            /* the directory holding the tree */
    const char *base;   /* the tree's own name, for naming moved subtrees */
    char **pending;     /* moved subtrees, names in top */
    size_t npending;
    unsigned moved;
} rm_ctx;

/* Opens a directory for removal; a directory its owner made unreadable
 * (chmod 000) is made readable first: we are its owner or root. */
static int open_dir(int parent, const char *name)
{
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == EACCES && fchmodat(parent, name, 0700, 0) == 0)
        fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return fd;
}

static int unlink_entry(int parent, const char *name, int flags)
{
    if (unlinkat(parent, name, flags) == 0 || errno == ENOENT)
        return 0;
    /* A directory its owner made read-only: make it writable and retry. */
    if (errno == EACCES && fchmod(parent, 0700) == 0 && unlinkat(parent, name, flags) == 0)
        return 0;
    return -1;
}

static int rm_depth(rm_ctx *c, int parent, const char *name, int depth, cella_err *err)
{
    if (unlink_entry(parent, name, 0) == 0)
        return 0;
    if (errno != EISDIR && errno != EPERM)
        return cella_err_set(err, errno, "unlink %s", name);
    if (depth >= RMTREE_MAX_DEPTH) {
        char moved[300];
        snprintf(moved, sizeof(moved), "%.200s.deep-%u", c->base, c->moved++);
        if (renameat(parent, name, c->top, moved) < 0)
            return cella_err_set(err, errno, "move a deep subtree of %s up", c->base);
        c->pending = cella_realloc(c->pending, (c->npending + 1) * sizeof(char *));
        c->pending[c->npending++] = cella_strdup(moved);
        return 0;
    }
    /* O_NOFOLLOW|O_DIRECTORY: a symlink swapped in here fails instead of being entered. */
    int fd = open_dir(parent, name);
    if (fd < 0)
        return cella_err_set(err, errno, "open %s", name);
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = errno;
        close(fd);
        return cella_err_set(err, e, "opendir %s", name);
    }
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (rm_depth(c, dirfd(d), de->d_name, depth + 1, err) < 0) {
            rc = -1;
            break;
        }
    }
    closedir(d);
    if (rc == 0 && unlink_entry(parent, name, AT_REMOVEDIR) < 0)
        rc = cella_err_set(err, errno, "rmdir %s", name);
    return rc;
}

int rmtree_at(int dirfd, const char *name, cella_err *err)
{
    rm_ctx c = {.top = dirfd, .base = name};
    int rc = rm_depth(&c, dirfd, name, 0, err);
    /* Moved subtrees may themselves move deeper parts up: keep going. */
    while (c.npending > 0) {
        char *n = c.pending[--c.npending];
        if (rc == 0 && rm_depth(&c, dirfd, n, 0, err) < 0)
            rc = -1;
        cella_free(n);
    }
    cella_free(c.pending);
    return rc;
}
