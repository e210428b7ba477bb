/* Building a sandbox from inside it: the agent, as root of its fresh user
 * namespace, runs the parent's list of setup operations against a new tmpfs
 * root, pivots into it, and then gives up everything it will not need. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/agent_int.h"
#include "util/cleanup.h"
#include "util/fdio.h"

#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif

/* Where the new root is built. We are in a private mount namespace, so
 * covering this directory is invisible outside (bubblewrap does the same). */
#define NEWROOT "/tmp"
#define ROOT_TMPFS_OPTS "mode=0755,size=8m"

/* dest must be absolute, without "..": the op list is ours, but a path that
 * climbs out of the new root is a bug we refuse to act on. */
static int root_path(char *buf, size_t n, const char *dest, cella_err *err)
{
    if (dest[0] != '/' || strstr(dest, "/../") || !strcmp(dest, "/..") ||
        (strlen(dest) >= 3 && !strcmp(dest + strlen(dest) - 3, "/..")))
        return cella_err_set(err, 0, "setup: bad path '%s'", dest);
    if ((size_t)snprintf(buf, n, NEWROOT "%s", dest) >= n)
        return cella_err_set(err, 0, "setup: path too long '%s'", dest);
    return 0;
}

static int mkdir_parent(const char *path, cella_err *err)
{
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s", path);
    char *slash = strrchr(p, '/');
    if (!slash || slash == p)
        return 0;
    *slash = '\0';
    return fs_mkdir_p(p, 0755, err);
}

static int mountpoint(const char *path, bool dir, cella_err *err)
{
    if (dir)
        return fs_mkdir_p(path, 0755, err);
    if (mkdir_parent(path, err) < 0)
        return -1;
    int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0444);
    if (fd < 0 && errno != EEXIST)
        return cella_err_set(err, errno, "create %s", path);
    if (fd >= 0)
        close(fd);
    return 0;
}

/* A bind remount must repeat the flags the kernel locked on the source
 * mount (nosuid, nodev, noexec, ro, atime), or it is refused in a user ns. */
static unsigned long current_flags(const char *path)
{
    struct statvfs sv;
    if (statvfs(path, &sv) < 0)
        return 0;
    unsigned long fl = 0;
    static const struct {
        unsigned long st, ms;
    } map[] = {{ST_RDONLY, MS_RDONLY},     {ST_NOSUID, MS_NOSUID},
               {ST_NODEV, MS_NODEV},       {ST_NOEXEC, MS_NOEXEC},
               {ST_NOATIME, MS_NOATIME},   {ST_NODIRATIME, MS_NODIRATIME},
               {ST_RELATIME, MS_RELATIME}};
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (sv.f_flag & map[i].st)
            fl |= map[i].ms;
    return fl;
}

static int remount(const char *path, unsigned long add, cella_err *err)
{
    unsigned long fl = MS_REMOUNT | MS_BIND | current_flags(path) | add;
    if (mount(NULL, path, NULL, fl, NULL) < 0)
        return cella_err_set(err, errno, "remount %s", path);
    return 0;
}

static unsigned long op_mount_flags(uint32_t f)
{
    unsigned long fl = MS_NOSUID;                 /* no setuid anywhere inside */
    if (!(f & OPF_DEVICES))
        fl |= MS_NODEV;                           /* device nodes only in /dev */
    if (f & OPF_RDONLY)
        fl |= MS_RDONLY;
    if (f & OPF_NOEXEC)
        fl |= MS_NOEXEC;
    return fl;
}

/* An image entry, opened beneath the image's root descriptor: no symlink
 * and no ".." anywhere in the path, so an entry swapped for a link (by
 * whoever can write the image) cannot lead to a host path; and only a
 * directory or a regular file, never a socket, FIFO or device. Returns an
 * O_PATH descriptor, or -1 (errno ENOENT when the entry is gone). */
static int open_image_entry(int root, const char *rel, cella_err *err)
{
    struct open_how how = {.flags = O_PATH | O_CLOEXEC,
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    int fd = (int)syscall(SYS_openat2, root, rel, &how, sizeof(how));
    if (fd < 0)
        return cella_err_set(err, errno, "image entry %s", rel);
    struct stat st;
    if (fstat(fd, &st) < 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
        close(fd);
        return cella_err_set(err, 0, "image entry %s is neither a directory nor a file", rel);
    }
    return fd;
}

/* A read-only overlay of the directory src at dest (OPF_OWN_INODES says
 * why). Without an upper layer overlayfs wants two lower ones: the second is
 * the new root's /proc directory, empty, which the sandbox's proc covers
 * later (so no stray directory shows in /). Returns -1 where the kernel
 * refuses (no overlayfs, or none in a user namespace): then a bind. */
static int overlay_ro(const char *src, const char *dest)
{
    const char *empty = NEWROOT "/proc";
    if (mkdir(empty, 0555) < 0 && errno != EEXIST)
        return -1;
    char opts[PATH_MAX + 64];
    if ((size_t)snprintf(opts, sizeof(opts), "lowerdir=%s:%s", src, empty) >= sizeof(opts) ||
        strpbrk(src, ",:\\"))   /* the option syntax's own characters */
        return -1;
    return mount("overlay", dest, "overlay", MS_RDONLY | MS_NOSUID | MS_NODEV, opts);
}

static int op_bind(const proto_op *op, const char *dest, const int *fds, size_t nfds,
                   cella_err *err)
{
    char src[PATH_MAX];
    _cleanup_close_ int entry = -1;
    if (op->flags & OPF_SRC_AT) {
        if (op->fd_index < 0 || (size_t)op->fd_index >= nfds || op->src[0] == '/')
            return cella_err_set(err, 0, "setup: bad image path %s", op->src);
        entry = open_image_entry(fds[op->fd_index], op->src, err);
        if (entry < 0)
            return err->errnum == ENOENT && (op->flags & OPF_OPTIONAL) ? 0 : -1;
        snprintf(src, sizeof(src), "/proc/self/fd/%d", entry);
    } else if (op->flags & OPF_SRC_IN_ROOT) {
        if (root_path(src, sizeof(src), op->src, err) < 0)
            return -1;
    } else {
        snprintf(src, sizeof(src), "%s", op->src);
    }
    struct stat st;
    if (stat(src, &st) < 0) {
        if (errno == ENOENT && (op->flags & OPF_OPTIONAL))
            return 0;
        return cella_err_set(err, errno, "bind source %s", op->src);
    }
    if (mountpoint(dest, S_ISDIR(st.st_mode), err) < 0)
        return -1;
    if ((op->flags & OPF_OWN_INODES) && S_ISDIR(st.st_mode) && overlay_ro(src, dest) == 0)
        return 0;
    if (mount(src, dest, NULL, MS_BIND, NULL) < 0)
        return cella_err_set(err, errno, "bind %s", op->src);
    return remount(dest, op_mount_flags(op->flags), err);
}

static int op_fd(const proto_op *op, const char *dest, const int *fds, size_t nfds,
                 cella_err *err)
{
    if (op->fd_index < 0 || (size_t)op->fd_index >= nfds)
        return cella_err_set(err, 0, "setup: %s names a missing descriptor", op->dest);
    int fd = fds[op->fd_index];
    if (mountpoint(dest, true, err) < 0)
        return -1;
    if (op->kind == OP_ATTACH_FD) {
        if (syscall(SYS_move_mount, fd, "", AT_FDCWD, dest, MOVE_MOUNT_F_EMPTY_PATH) < 0)
            return cella_err_set(err, errno, "attach %s", op->dest);
        return 0;
    }
    char src[64];
    snprintf(src, sizeof(src), "/proc/self/fd/%d", fd);
    if (mount(src, dest, NULL, MS_BIND, NULL) < 0)
        return cella_err_set(err, errno, "bind %s", op->dest);
    return remount(dest, op_mount_flags(op->flags), err);
}

/* A descriptor opened in the parent's mount namespace cannot be a bind
 * source here: its mount is not in our namespace. Before anything is mounted
 * over the host's paths, re-open the same path in our copy of the namespace
 * and check it is the very same directory, so the descriptor, not the path,
 * stays the authority. The replacement is bound through /proc/self/fd, which
 * no later mount can shadow. */
static int localize_bind_fds(const proto_setup *s, int *fds, size_t nfds, cella_err *err)
{
    bool done[16] = {false};
    for (uint32_t i = 0; i < s->n_ops; i++) {
        const proto_op *op = &s->ops[i];
        bool by_fd = op->kind == OP_BIND_FD || (op->kind == OP_BIND && (op->flags & OPF_SRC_AT));
        if (!by_fd || op->fd_index < 0 || (size_t)op->fd_index >= nfds ||
            (size_t)op->fd_index >= sizeof(done) || done[op->fd_index])
            continue;
        done[op->fd_index] = true;
        int fd = fds[op->fd_index];
        char link[64], path[PATH_MAX];
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, path, sizeof(path) - 1);
        if (n <= 0 || path[0] != '/')
            return cella_err_set(err, errno, "resolve the %s descriptor", op->dest);
        path[n] = '\0';
        int here = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat a, b;
        if (here < 0 || fstat(fd, &a) < 0 || fstat(here, &b) < 0 || a.st_dev != b.st_dev ||
            a.st_ino != b.st_ino) {
            int e = here < 0 ? errno : 0;
            if (here >= 0)
                close(here);
            return cella_err_set(err, e,
                                 "%s: %s moved, or is unreachable for the sandbox (it and its "
                                 "parents must be searchable by others, as /usr is)",
                                 op->dest, path);
        }
        close(fd);
        fds[op->fd_index] = here;
    }
    return 0;
}

static int op_mask(const proto_op *op, const char *dest, cella_err *err)
{
    struct stat st;
    if (lstat(dest, &st) < 0) {
        if (errno == ENOENT && (op->flags & OPF_OPTIONAL))
            return 0;
        return cella_err_set(err, errno, "mask %s", op->dest);
    }
    if (S_ISDIR(st.st_mode)) {
        if (mount("tmpfs", dest, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                  "size=4k,nr_inodes=2,mode=0555") < 0)
            return cella_err_set(err, errno, "mask %s", op->dest);
        return 0;
    }
    if (mount(NEWROOT "/dev/null", dest, NULL, MS_BIND, NULL) < 0)
        return cella_err_set(err, errno, "mask %s", op->dest);
    return remount(dest, MS_RDONLY | MS_NOSUID | MS_NOEXEC, err);
}

static int run_op(const proto_op *op, const int *fds, size_t nfds, cella_err *err)
{
    char dest[PATH_MAX], opts[128];
    if (root_path(dest, sizeof(dest), op->dest, err) < 0)
        return -1;
    switch (op->kind) {
    case OP_DIR:
        return fs_mkdir_p(dest, op->mode, err);
    case OP_FILE: {
        if (mkdir_parent(dest, err) < 0)
            return -1;
        _cleanup_close_ int fd =
            open(dest, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, op->mode);
        if (fd < 0 || write(fd, op->data, op->data_len) != (ssize_t)op->data_len)
            return cella_err_set(err, errno, "write %s", op->dest);
        return 0;
    }
    case OP_SYMLINK:
        if (mkdir_parent(dest, err) < 0)
            return -1;
        if (symlink(op->src, dest) < 0)
            return cella_err_set(err, errno, "symlink %s", op->dest);
        return 0;
    case OP_BIND:
        return op_bind(op, dest, fds, nfds, err);
    case OP_BIND_FD:
    case OP_ATTACH_FD:
        return op_fd(op, dest, fds, nfds, err);
    case OP_TMPFS:
        if (mountpoint(dest, true, err) < 0)
            return -1;
        snprintf(opts, sizeof(opts), "mode=%04o,size=%llu", op->mode & 07777,
                 (unsigned long long)op->size);
        if (mount("tmpfs", dest, "tmpfs", op_mount_flags(op->flags), opts) < 0)
            return cella_err_set(err, errno, "tmpfs %s", op->dest);
        return 0;
    case OP_PROC:
        if (mountpoint(dest, true, err) < 0)
            return -1;
        /* hidepid: processes of other users are invisible. In root mode that
         * hides the agent (uid 0 inside); unprivileged, the agent shares the
         * sandbox's uid and is shielded only by being non-dumpable. */
        if (mount("proc", dest, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible") < 0)
            return cella_err_set(err, errno, "mount proc (hidepid) at %s", op->dest);
        return 0;
    case OP_DEVPTS:
        if (mountpoint(dest, true, err) < 0)
            return -1;
        /* max: ptys come from one host-wide pool (kernel.pty.max); no
         * sandbox may take more than a few. */
        if (mount("devpts", dest, "devpts", MS_NOSUID | MS_NOEXEC,
                  "newinstance,ptmxmode=0666,mode=620,max=32") < 0)
            return cella_err_set(err, errno, "mount devpts at %s", op->dest);
        return 0;
    case OP_MASK:
        return op_mask(op, dest, err);
    case OP_REMOUNT_RO:
        return remount(dest, MS_RDONLY, err);
    case OP_DETACH:
        if (umount2(dest, MNT_DETACH) < 0)
            return cella_err_set(err, errno, "detach %s", op->dest);
        return 0;
    default:
        return cella_err_set(err, 0, "setup: unknown op %u", op->kind);
    }
}

static int pivot(cella_err *err)
{
    /* pivot_root(".", "."): the old root ends up stacked on the new one and
     * is detached at once, so no directory of the host stays reachable. */
    if (chdir(NEWROOT) < 0)
        return cella_err_set(err, errno, "chdir new root");
    if (syscall(SYS_pivot_root, ".", ".") < 0)
        return cella_err_set(err, errno, "pivot_root");
    if (umount2(".", MNT_DETACH) < 0)
        return cella_err_set(err, errno, "detach the old root");
    if (chdir("/") < 0)
        return cella_err_set(err, errno, "chdir /");
    /* The root itself is read-only: only /tmp, /dev/shm and /workspace take writes. */
    return remount("/", MS_RDONLY | MS_NOSUID | MS_NODEV, err);
}

static int loopback_up(cella_err *err)
{
    _cleanup_close_ int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return cella_err_set(err, errno, "socket");
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
    if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
        return cella_err_set(err, errno, "lo flags");
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
        return cella_err_set(err, errno, "bring lo up");
    return 0;
}

/* After setup the agent keeps only what running commands needs: in root
 * mode CAP_KILL (timeouts kill the command's group, which runs as another
 * uid) and CAP_SETUID/CAP_SETGID (to become the sandbox user in each child).
 * The bounding set is emptied, so nothing exec'd inside can regain any. */
static int drop_caps(bool keep_some, cella_err *err)
{
    if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                                     SECBIT_NO_CAP_AMBIENT_RAISE |
                                     SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) < 0)
        return cella_err_set(err, errno, "securebits");
    for (int cap = 0; cap <= 63; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
            if (errno == EINVAL)
                break;         /* past the kernel's last capability */
            return cella_err_set(err, errno, "drop capability %d from the bounding set", cap);
        }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
        return cella_err_set(err, errno, "clear ambient capabilities");
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    memset(d, 0, sizeof(d));
    if (keep_some)
        d[0].effective = d[0].permitted =
            (1u << CAP_KILL) | (1u << CAP_SETUID) | (1u << CAP_SETGID);
    if (syscall(SYS_capset, &h, d) < 0)
        return cella_err_set(err, errno, "capset");
    return 0;
}

static int load_seccomp(const proto_setup *s, cella_err *err)
{
    if (s->bpf_len == 0 || s->bpf_len % sizeof(struct sock_filter) ||
        s->bpf_len / sizeof(struct sock_filter) > BPF_MAXINSNS)
        return cella_err_set(err, 0, "setup: no usable seccomp program");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return cella_err_set(err, errno, "no_new_privs");
    struct sock_fprog prog = {.len = (unsigned short)(s->bpf_len / sizeof(struct sock_filter)),
                              .filter = (struct sock_filter *)s->bpf};
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
        return cella_err_set(err, errno, "load seccomp filter");
    return 0;
}

int agent_setup(agent *a, const proto_setup *s, int *fds, size_t nfds, cella_err *err)
{
    if (s->version != PROTO_VERSION)
        return cella_err_set(err, 0, "agent speaks protocol %d, parent %u", PROTO_VERSION,
                             s->version);
    umask(022);
    /* Our cgroup becomes the root of what the sandbox can see of cgroups. */
    if (unshare(CLONE_NEWCGROUP) < 0)
        return cella_err_set(err, errno, "unshare cgroup namespace");
    /* Nothing mounted here propagates back to the host, or in from it. */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        return cella_err_set(err, errno, "make mounts private");
    if (localize_bind_fds(s, fds, nfds, err) < 0)
        return -1;
    if (mount("tmpfs", NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV, ROOT_TMPFS_OPTS) < 0)
        return cella_err_set(err, errno, "mount the new root");
    for (uint32_t i = 0; i < s->n_ops; i++)
        if (run_op(&s->ops[i], fds, nfds, err) < 0)
            return -1;
    if (pivot(err) < 0)
        return -1;
    if (sethostname(s->hostname, strlen(s->hostname)) < 0)
        return cella_err_set(err, errno, "sethostname");
    if (loopback_up(err) < 0)
        return -1;
    a->devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (a->devnull < 0)
        return cella_err_set(err, errno, "open /dev/null");
    /* 1, not 0: a core_pattern that pipes to a helper ignores RLIMIT_CORE
     * except the value 1, which the kernel refuses to dump at all (and 1
     * byte is below any core file). So no crash inside runs the host's
     * helper as root outside the sandbox; seccomp keeps it at 1. The parent
     * already set it (box.c) where our hard limit was 0. */
    struct rlimit nocore = {1, 1};
    setrlimit(RLIMIT_CORE, &nocore);
    a->root_mapped = s->flags & SETUP_ROOT_MAPPED;
    a->uid = s->uid;
    a->gid = s->gid;
    a->rlimit_fsize = s->rlimit_fsize;
    a->rlimit_nofile = s->rlimit_nofile;
    if (drop_caps(a->root_mapped, err) < 0)
        return -1;
    /* Nothing inside may read our memory or descriptors through /proc. */
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
        return cella_err_set(err, errno, "set non-dumpable");
    return load_seccomp(s, err);
}
