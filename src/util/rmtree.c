#include "util/rmtree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RMTREE_MAX_DEPTH 512

static int rmtree_depth(int parent, const char *name, int depth, cella_err *err)
{
    if (unlinkat(parent, name, 0) == 0 || errno == ENOENT)
        return 0;
    if (errno != EISDIR && errno != EPERM)
        return cella_err_set(err, errno, "unlink %s", name);
    if (depth >= RMTREE_MAX_DEPTH)
        return cella_err_set(err, 0, "directory tree deeper than %d levels", RMTREE_MAX_DEPTH);
    /* O_NOFOLLOW|O_DIRECTORY: a symlink swapped in here fails instead of being entered. */
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
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
        if (rmtree_depth(dirfd(d), de->d_name, depth + 1, err) < 0) {
            rc = -1;
            break;
        }
    }
    closedir(d);
    if (rc == 0 && unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
        rc = cella_err_set(err, errno, "rmdir %s", name);
    return rc;
}

int rmtree_at(int dirfd, const char *name, cella_err *err)
{
    return rmtree_depth(dirfd, name, 0, err);
}
