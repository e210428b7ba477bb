#include "box/workspace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/proto.h"
#include "box/userns.h"
#include "util/cleanup.h"
#include "util/rmtree.h"

int workspace_create(box_runtime *rt, const char *name, int *dirfd, cella_err *err)
{
    if (mkdirat(rt->workspaces_fd, name, 0755) < 0)
        return cella_err_set(err, errno, "create workspace %s/workspaces/%s", rt->sd.path, name);
    if (rt->root_mode &&
        fchownat(rt->workspaces_fd, name, SANDBOX_UID, SANDBOX_GID, AT_SYMLINK_NOFOLLOW) < 0) {
        int e = errno;
        unlinkat(rt->workspaces_fd, name, AT_REMOVEDIR);
        return cella_err_set(err, e, "chown workspace %s", name);
    }
    int fd = openat(rt->workspaces_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        unlinkat(rt->workspaces_fd, name, AT_REMOVEDIR);
        return cella_err_set(err, e, "open workspace %s", name);
    }
    *dirfd = fd;
    return 0;
}

int workspace_remove(box_runtime *rt, const char *name, cella_err *err)
{
    return rmtree_at(rt->workspaces_fd, name, err);
}

#define TEMP_PREFIX "box-"

int workspace_create_temp(box_runtime *rt, char *name, int *dirfd, cella_err *err)
{
    uint64_t r;
    if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
        return cella_err_set(err, errno, "getrandom");
    /* Made under a name the sweeper ignores, locked, then renamed: a
     * workspace is never visible as sweepable while unlocked. */
    char tmp[40];
    snprintf(tmp, sizeof(tmp), "new-%016llx", (unsigned long long)r);
    snprintf(name, 32, TEMP_PREFIX "%016llx", (unsigned long long)r);
    int fd;
    if (workspace_create(rt, tmp, &fd, err) < 0)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) < 0 || renameat(rt->workspaces_fd, tmp, rt->workspaces_fd, name) < 0) {
        int e = errno;
        close(fd);
        unlinkat(rt->workspaces_fd, tmp, AT_REMOVEDIR);
        return cella_err_set(err, e, "lock workspace %s", name);
    }
    *dirfd = fd;
    return 0;
}

int workspace_sweep_temp(box_runtime *rt)
{
    int dfd = openat(rt->workspaces_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return 0;
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return 0;
    }
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        /* A "new-" directory is one being created: stale only once old. */
        if (!strncmp(de->d_name, "new-", 4)) {
            struct stat st;
            if (fstatat(rt->workspaces_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                st.st_mtime < time(NULL) - 60 &&
                rmtree_at(rt->workspaces_fd, de->d_name, NULL) == 0)
                n++;
            continue;
        }
        if (strncmp(de->d_name, TEMP_PREFIX, strlen(TEMP_PREFIX)) != 0)
            continue;
        int fd = openat(rt->workspaces_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            continue;
        if (flock(fd, LOCK_EX | LOCK_NB) == 0 && rmtree_at(rt->workspaces_fd, de->d_name, NULL) == 0)
            n++;
        close(fd);
    }
    closedir(d);
    return n;
}

/* A user namespace whose only mapping is disk_uid/gid -> host_id, made by a
 * short-lived child (a namespace needs a process to be created in). */
static int idmap_userns(uid_t disk_uid, gid_t disk_gid, uint32_t host_id, int *out,
                        cella_err *err)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0)
        return cella_err_set(err, errno, "pipe");
    struct clone_args ca = {.flags = CLONE_NEWUSER, .exit_signal = SIGCHLD};
    long pid = syscall(SYS_clone3, &ca, sizeof(ca));
    if (pid == 0) {
        /* Child: only async-signal-safe calls. Wait for the parent's byte. */
        char c;
        close(pfd[1]);
        while (read(pfd[0], &c, 1) < 0 && errno == EINTR)
            ;
        _exit(0);
    }
    close(pfd[0]);
    if (pid < 0) {
        close(pfd[1]);
        return cella_err_set(err, errno, "clone a user namespace for the workspace");
    }
    char um[64], gm[64], nspath[64];
    snprintf(um, sizeof(um), "%u %u 1\n", (unsigned)disk_uid, host_id);
    snprintf(gm, sizeof(gm), "%u %u 1\n", (unsigned)disk_gid, host_id);
    snprintf(nspath, sizeof(nspath), "/proc/%ld/ns/user", pid);
    int rc = userns_write_maps((pid_t)pid, um, gm, false, err);
    int fd = -1;
    if (rc == 0 && (fd = open(nspath, O_RDONLY | O_CLOEXEC)) < 0)
        rc = cella_err_set(err, errno, "open %s", nspath);
    char c = 1;
    if (write(pfd[1], &c, 1) < 0)
        kill((pid_t)pid, SIGKILL);
    close(pfd[1]);
    while (waitpid((pid_t)pid, NULL, 0) < 0 && errno == EINTR)
        ;
    if (rc == 0)
        *out = fd;
    return rc;
}

int workspace_mount_fd(box_runtime *rt, int dirfd, uint32_t slot_base, pid_t child, int *fd,
                       uint32_t *kind, cella_err *err)
{
    if (!rt->root_mode) {
        /* The caller's own uid is the sandbox user already: a plain bind. */
        int d = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
        if (d < 0)
            return cella_err_set(err, errno, "dup workspace fd");
        *fd = d;
        *kind = OP_BIND_FD;
        return 0;
    }
    struct stat st;
    if (fstat(dirfd, &st) < 0)
        return cella_err_set(err, errno, "stat workspace");
    /* The directory's owner becomes the sandbox user. For root or a system
     * account that would let sandboxed code write their files (think of
     * --workspace /etc): refused. */
    if (st.st_uid < WORKSPACE_MIN_OWNER || st.st_gid < WORKSPACE_MIN_OWNER)
        return cella_err_set(err, 0,
                             "the workspace directory belongs to uid %u gid %u, a system account: "
                             "sandboxed code would write as them; use a directory owned by a "
                             "regular user (uid and gid >= %u)",
                             (unsigned)st.st_uid, (unsigned)st.st_gid, WORKSPACE_MIN_OWNER);
    _cleanup_close_ int userns = -1;
    if (st.st_uid == SANDBOX_UID && st.st_gid == SANDBOX_GID) {
        /* cella's own workspaces: disk ids 0..65535 are the sandbox's own ids,
         * so the sandbox's user namespace is the mapping. */
        char p[64];
        snprintf(p, sizeof(p), "/proc/%d/ns/user", (int)child);
        userns = open(p, O_RDONLY | O_CLOEXEC);
        if (userns < 0)
            return cella_err_set(err, errno, "open %s", p);
    } else if (idmap_userns(st.st_uid, st.st_gid, slot_base + SANDBOX_UID, &userns, err) < 0) {
        return -1;
    }
    _cleanup_close_ int tree =
        (int)syscall(SYS_open_tree, dirfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
    if (tree < 0)
        return cella_err_set(err, errno, "open_tree(workspace)");
    /* nosuid, nodev: a workspace never grants privileges or device access. */
    struct mount_attr attr = {
        .attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
        .userns_fd = (uint64_t)userns,
    };
    if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
        return cella_err_set(err, errno,
                             "idmapped mount of the workspace (needs Linux >= 5.12 and a "
                             "filesystem that supports it)");
    *fd = steal_fd(&tree);
    *kind = OP_ATTACH_FD;
    return 0;
}
