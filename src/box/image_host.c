#include "box/image_host.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/types.h>

#include "util/alloc.h"

/* Top-level links of a merged-/usr system; real directories on older ones. */
static const char *const usr_links[] = {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};

/* What programs read from /etc: the dynamic linker's cache, alternatives
 * (python3, editors...), TLS roots, time zone, protocol tables, shell start-up
 * files, and the config dirs of perl and python. Nothing with secrets. */
static const char *const etc_entries[] = {
    "ld.so.cache", "ld.so.conf",  "ld.so.conf.d", "alternatives", "ssl",
    "ca-certificates", "ca-certificates.conf", "localtime", "timezone", "os-release",
    "protocols",   "services",    "mime.types",   "bash.bashrc",  "profile",
    "inputrc",     "host.conf",   "gai.conf",     "perl",         "magic",
    "magic.mime",  "fonts",       "debian_version",
};

/* Mirrors one path: a symlink as the same symlink (read on the host, made
 * inside), a file or directory as a read-only bind; a missing path is left
 * out. The bind's source is host_path, or, for an image's entries
 * (fd_index >= 0), rel taken relative to that image's root descriptor. */
static void mirror_at(opv *o, const char *host_path, const char *rel, const char *dest,
                      int32_t fd_index)
{
    struct stat st;
    if (lstat(host_path, &st) < 0)
        return;
    if (S_ISLNK(st.st_mode)) {
        char target[PATH_MAX];
        ssize_t n = readlink(host_path, target, sizeof(target) - 1);
        if (n <= 0)
            return;
        target[n] = '\0';
        opv_symlink(o, target, dest);
    } else if (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) {
        uint32_t flags = OPF_RDONLY | OPF_OPTIONAL | (fd_index >= 0 ? OPF_SRC_AT : 0);
        opv_bind(o, fd_index >= 0 ? rel : host_path, dest, flags);
        o->v[o->n - 1].fd_index = fd_index;
    }
}

static void mirror(opv *o, const char *host_path, const char *dest)
{
    mirror_at(o, host_path, NULL, dest, -1);
}

/* /etc's entries are bound from one overlay of the host's /etc, staged
 * where the sandbox's /tmp later covers it and detached once they are made:
 * their inodes are then this sandbox's own, as /usr's (OPF_OWN_INODES). The
 * dynamic linker opens /etc/ld.so.cache at every exec, so a watch on the
 * shared one would show every other sandbox's execs. */
#define ETC_STAGE "/tmp/.image-etc"

static void mirror_etc(opv *o, const char *name)
{
    char host[PATH_MAX], staged[PATH_MAX];
    snprintf(host, sizeof(host), "/etc/%s", name);
    snprintf(staged, sizeof(staged), ETC_STAGE "/%s", name);
    struct stat st;
    if (lstat(host, &st) < 0)
        return;
    /* An entry mounted over the host's /etc (a container's resolv.conf,
     * localtime, a CA bundle) is not in the overlay, which shows only what
     * lies beneath: bound as it is instead, as before the overlay. */
    struct statx sx;
    bool mounted = statx(AT_FDCWD, host, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx) == 0 &&
                   (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
                   (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
    if (S_ISLNK(st.st_mode) || mounted)
        mirror(o, host, host);
    else if (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))
        opv_bind(o, staged, host, OPF_RDONLY | OPF_OPTIONAL | OPF_SRC_IN_ROOT);
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int host_image_load(host_image *img, cella_err *err)
{
    memset(img, 0, sizeof(*img));
    opv *o = &img->fixed;
    struct stat st;
    if (stat("/usr", &st) < 0 || !S_ISDIR(st.st_mode))
        return cella_err_set(err, errno, "image host: the host has no /usr");
    /* An overlay rather than a bind: locks and inotify watches on the
     * image's files stay this sandbox's own (agent/proto.h, OPF_OWN_INODES). */
    opv_bind(o, "/usr", "/usr", OPF_RDONLY | OPF_OWN_INODES);
    for (size_t i = 0; i < sizeof(usr_links) / sizeof(usr_links[0]); i++)
        mirror(o, usr_links[i], usr_links[i]);
    opv_dir(o, "/etc", 0755);
    opv_bind(o, "/etc", ETC_STAGE, OPF_RDONLY | OPF_OWN_INODES);
    for (size_t i = 0; i < sizeof(etc_entries) / sizeof(etc_entries[0]); i++)
        mirror_etc(o, etc_entries[i]);
    /* /etc/python3, /etc/python3.11, ...: sorted, so the list is stable. */
    DIR *d = opendir("/etc");
    if (d) {
        char *names[64];
        size_t n = 0;
        struct dirent *de;
        while ((de = readdir(d)) && n < 64)
            if (!strncmp(de->d_name, "python", 6))
                names[n++] = cella_strdup(de->d_name);
        closedir(d);
        qsort(names, n, sizeof(names[0]), name_cmp);
        for (size_t i = 0; i < n; i++) {
            mirror_etc(o, names[i]);
            cella_free(names[i]);
        }
    }
    opv_simple(o, OP_DETACH, ETC_STAGE, 0);
    return 0;
}

void host_image_free(host_image *img)
{
    opv_free(&img->fixed);
}

static void identity_files(opv *o, const char *hostname)
{
    char buf[512];
    opv_file(o, "/etc/passwd",
             "root:x:0:0:root:/root:/usr/sbin/nologin\n"
             "sandbox:x:1000:1000:sandbox:/workspace:/bin/bash\n"
             "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
             0644);
    opv_file(o, "/etc/group", "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n", 0644);
    snprintf(buf, sizeof(buf),
             "127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\tlocalhost ip6-localhost ip6-loopback\n",
             hostname);
    opv_file(o, "/etc/hosts", buf, 0644);
    snprintf(buf, sizeof(buf), "%s\n", hostname);
    opv_file(o, "/etc/hostname", buf, 0644);
    opv_file(o, "/etc/nsswitch.conf",
             "passwd: files\ngroup: files\nshadow: files\nhosts: files\n"
             "networks: files\nprotocols: files\nservices: files\n",
             0644);
}

static void dev_tree(opv *o, uint64_t shm_bytes)
{
    /* A private /dev: only harmless character devices, bound from the host
     * because a user namespace cannot create device nodes. */
    static const char *const devs[] = {"null", "zero", "full", "random", "urandom", "tty"};
    opv_tmpfs(o, "/dev", 256 << 10, 0755, OPF_NOEXEC);
    for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
        char src[32];
        snprintf(src, sizeof(src), "/dev/%s", devs[i]);
        opv_bind(o, src, src, OPF_DEVICES);
    }
    opv_symlink(o, "/proc/self/fd", "/dev/fd");
    opv_symlink(o, "/proc/self/fd/0", "/dev/stdin");
    opv_symlink(o, "/proc/self/fd/1", "/dev/stdout");
    opv_symlink(o, "/proc/self/fd/2", "/dev/stderr");
    opv_symlink(o, "pts/ptmx", "/dev/ptmx");
    /* Its own pseudo-terminal instance: ptys never reach the host's. */
    opv_simple(o, OP_DEVPTS, "/dev/pts", 0);
    /* Its own /dev/shm, so POSIX shared memory is never shared with others. */
    opv_tmpfs(o, "/dev/shm", shm_bytes, 01777, OPF_NOEXEC);
}

static void proc_tree(opv *o)
{
    opv_simple(o, OP_PROC, "/proc", 0);
    /* Kernel knobs read-only: the sandbox's root could otherwise write the
     * ones its namespaces own (net.*), and sysrq-trigger is host-wide. */
    static const char *const ro[] = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq",
                                     "/proc/bus", "/proc/fs"};
    for (size_t i = 0; i < sizeof(ro) / sizeof(ro[0]); i++)
        opv_bind(o, ro[i], ro[i], OPF_RDONLY | OPF_SRC_IN_ROOT | OPF_OPTIONAL);
    /* Host-wide information with no use inside: kernel memory, keys, timers,
     * scheduler internals, hardware. */
    static const char *const masked[] = {"/proc/kcore",     "/proc/keys",
                                         "/proc/timer_list", "/proc/sched_debug",
                                         "/proc/latency_stats", "/proc/acpi",
                                         "/proc/scsi"};
    for (size_t i = 0; i < sizeof(masked) / sizeof(masked[0]); i++)
        opv_simple(o, OP_MASK, masked[i], OPF_OPTIONAL);
}

/* The parts every image shares: identity files, /dev, /proc, /tmp, /var
 * (unless the image has its own), /var/inputs and /var/outputs (unless the
 * image's /var is not a directory we build), and the workspace. */
static void common_tail(opv *out, const image_params *p, bool own_var, bool io_dirs)
{
    identity_files(out, p->hostname);
    dev_tree(out, p->shm_bytes);
    proc_tree(out);
    opv_tmpfs(out, "/tmp", p->tmp_bytes, 01777, 0);
    if (!own_var) {
        opv_dir(out, "/var", 0755);
        opv_symlink(out, "../tmp", "/var/tmp");
    }
    /* Typed runs stage inputs and collect outputs there (core/typed.h), as
     * the sandbox user, and / is read-only: writable mounts of their own. */
    if (io_dirs) {
        opv_tmpfs(out, "/var/inputs", p->tmp_bytes, 01777, 0);
        opv_tmpfs(out, "/var/outputs", p->tmp_bytes, 01777, 0);
    }
    opv_fd(out, p->workspace_kind, p->workspace_fd, "/workspace", 0);
    opv_simple(out, OP_REMOUNT_RO, "/dev", 0);
}

void host_image_ops(const host_image *img, const image_params *p, opv *out)
{
    opv_extend(out, img->fixed.v, img->fixed.n);
    common_tail(out, p, false, true);
}

/* Top-level names an image's root never provides: the sandbox makes its own
 * (or, for sys, has none: kernel knobs stay out of reach). */
static bool reserved_top(const char *name)
{
    static const char *const skip[] = {".", "..", "dev", "proc", "sys", "tmp", "workspace",
                                       "run", "etc", "mnt", "media", "lost+found"};
    for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
        if (!strcmp(name, skip[i]))
            return true;
    return false;
}

/* The same, and var: an image's /var directory is mirrored entry by entry
 * (var_entry), so /var/inputs and /var/outputs can be made beside them. */
static bool reserved_top_var(const char *name)
{
    return reserved_top(name) || !strcmp(name, "var");
}

/* Entries of an image's /var the sandbox makes for itself. */
static bool var_entry(const char *name)
{
    return !strcmp(name, ".") || !strcmp(name, "..") || !strcmp(name, "inputs") ||
           !strcmp(name, "outputs");
}

/* Files of /etc the sandbox generates for itself. */
static bool generated_etc(const char *name)
{
    static const char *const gen[] = {".", "..", "passwd", "group", "hosts", "hostname",
                                      "nsswitch.conf", "shadow", "gshadow"};
    for (size_t i = 0; i < sizeof(gen) / sizeof(gen[0]); i++)
        if (!strcmp(name, gen[i]))
            return true;
    return false;
}

/* Mirrors every entry of rootfs/sub at dest, sorted, so the op list is the
 * same from one start to the next. */
static void mirror_dir(opv *o, const char *rootfs, const char *sub, const char *dest,
                       int32_t fd_index, bool (*skip)(const char *))
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s%s%s", rootfs, sub[0] ? "/" : "", sub);
    DIR *d = opendir(dir);
    if (!d)
        return;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (skip(de->d_name))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 32;
            names = cella_realloc(names, cap * sizeof(char *));
        }
        names[n++] = cella_strdup(de->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof(names[0]), name_cmp);
    for (size_t i = 0; i < n; i++) {
        char src[PATH_MAX], rel[PATH_MAX], dst[PATH_MAX];
        int a = snprintf(src, sizeof(src), "%s/%s", dir, names[i]);
        int b = snprintf(rel, sizeof(rel), "%s%s%s", sub, sub[0] ? "/" : "", names[i]);
        int c = snprintf(dst, sizeof(dst), "%s/%s", dest, names[i]);
        /* A name too long for a path is left out rather than cut short. */
        if (a > 0 && (size_t)a < sizeof(src) && b > 0 && (size_t)b < sizeof(rel) && c > 0 &&
            (size_t)c < sizeof(dst))
            mirror_at(o, src, rel, dst, fd_index);
        cella_free(names[i]);
    }
    cella_free(names);
}

int rootfs_check_owner(const char *rootfs, cella_err *err)
{
    char path[PATH_MAX];
    if (rootfs[0] != '/' || snprintf(path, sizeof(path), "%s", rootfs) >= (int)sizeof(path))
        return cella_err_set(err, 0, "image root %s is not an absolute path", rootfs);
    uid_t me = geteuid();
    bool top = true;
    for (;;) {
        struct stat st;
        if (stat(path[0] ? path : "/", &st) < 0)
            return cella_err_set(err, errno, "image root %s", path[0] ? path : "/");
        const char *what = path[0] ? path : "/";
        if (!S_ISDIR(st.st_mode))
            return cella_err_set(err, 0, "image root %s: %s is not a directory", rootfs, what);
        if (st.st_uid != 0 && st.st_uid != me)
            return cella_err_set(err, 0, "image root %s: %s belongs to uid %u; it must be root's",
                                 rootfs, what, (unsigned)st.st_uid);
        bool shared = st.st_mode & (S_IWGRP | S_IWOTH);
        if (shared && (top || !(st.st_mode & S_ISVTX)))
            return cella_err_set(err, 0, "image root %s: %s is writable by group or others; "
                                         "it must be writable by root only", rootfs, what);
        char *slash = strrchr(path, '/');
        if (!slash || !path[0])
            return 0;
        *slash = '\0';           /* up one level; "" stands for "/" */
        top = false;
    }
}

int rootfs_image_ops(const char *rootfs, const image_params *p, opv *out, cella_err *err)
{
    struct stat st;
    if (rootfs[0] != '/' || stat(rootfs, &st) < 0 || !S_ISDIR(st.st_mode))
        return cella_err_set(err, 0, "image root %s is not a directory", rootfs);
    if (rootfs_check_owner(rootfs, err) < 0)
        return -1;
    char var[PATH_MAX];
    snprintf(var, sizeof(var), "%s/var", rootfs);
    bool own_var = lstat(var, &st) == 0, var_dir = own_var && S_ISDIR(st.st_mode);
    mirror_dir(out, rootfs, "", "", p->rootfs_fd, var_dir ? reserved_top_var : reserved_top);
    if (var_dir) {
        opv_dir(out, "/var", 0755);
        mirror_dir(out, rootfs, "var", "/var", p->rootfs_fd, var_entry);
    }
    opv_dir(out, "/etc", 0755);
    char etc[PATH_MAX];
    snprintf(etc, sizeof(etc), "%s/etc", rootfs);
    /* Only a real directory: an /etc that is a link (to the host's, say)
     * would hand its files to the sandbox. */
    if (lstat(etc, &st) == 0 && S_ISDIR(st.st_mode))
        mirror_dir(out, rootfs, "etc", "/etc", p->rootfs_fd, generated_etc);
    /* A /var that is a link stays as the image has it: no typed-run dirs. */
    common_tail(out, p, own_var, !own_var || var_dir);
    if (out->n > PROTO_MAX_OPS)
        return cella_err_set(err, 0, "image root %s has too many entries at its top and in its "
                                     "etc and var for one sandbox's setup (at most about %u)",
                             rootfs, PROTO_MAX_OPS - 64);
    return 0;
}
