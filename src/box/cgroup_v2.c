/* cgroup v2 backend: one directory per sandbox under a parent with the memory,
 * pids and cpu controllers enabled for its children. Children start directly
 * inside it (clone3 CLONE_INTO_CGROUP) and die together (cgroup.kill). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "box/cgroup.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/fdio.h"

#define V2_ENABLE "+memory +pids +cpu"

static int enable_controllers(const char *dir, cella_err *err)
{
    _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return cella_err_set(err, errno, "open %s", dir);
    _cleanup_free_ char *cur = NULL;
    if (file_read_str_at(fd, "cgroup.subtree_control", 4096, &cur, err) < 0)
        return -1;
    if (cg_v2_has_controllers(cur))
        return 0;
    if (file_write_str_at(fd, "cgroup.subtree_control", V2_ENABLE, err) < 0) {
        if (err && err->errnum == EBUSY)
            cella_err_set(err, EBUSY,
                          "cannot enable controllers below %s while it holds processes; run "
                          "cella in a cgroup of its own (systemd: Delegate=yes) or set "
                          "CELLA_CGROUP_PARENT",
                          dir);
        return -1;
    }
    return 0;
}

int cg_v2_host_open(const cg_layout *l, const cg_open_opts *o, cg_host *h, cella_err *err)
{
    if (!l->v2_mount)
        return cella_err_set(err, 0, "cgroups: no cgroup v2 hierarchy is mounted");
    char *base = o->parent ? cg_path_join(l->v2_mount, "/", o->parent, NULL)
                           : cg_path_join(l->v2_mount, l->v2_root, l->v2_self, "cella");
    if (!base)
        return cella_err_set(err, 0, "cgroups: our v2 cgroup lies outside its mount");
    h->base[0] = base;
    _cleanup_free_ char *parent = cella_strdup(base);
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent)
        *slash = '\0';
    _cleanup_free_ char *ctl_path = cella_asprintf("%s/cgroup.controllers", parent);
    _cleanup_free_ char *ctls = NULL;
    if (file_read_str_at(AT_FDCWD, ctl_path, 4096, &ctls, err) < 0)
        return cella_err_prefix(err, "cgroups (v2)");
    h->limits = cg_v2_has_controllers(ctls);
    if (!h->limits && o->require_limits)
        return cella_err_set(err, 0,
                             "cgroups: v2 at %s does not offer memory, pids and cpu (it has: %.*s)",
                             parent, (int)strcspn(ctls, "\n"), ctls);
    if (h->limits && enable_controllers(parent, err) < 0)
        return cella_err_prefix(err, "cgroups (v2)");
    if (mkdir(base, 0755) < 0 && errno != EEXIST)
        return cella_err_set(err, errno, "cgroups: mkdir %s", base);
    if (h->limits && enable_controllers(base, err) < 0)
        return cella_err_prefix(err, "cgroups (v2)");
    return 0;
}

int cg_v2_box_limits(cg_box *b, const cg_limits *lim, cella_err *err)
{
    int fd = b->dirfd[0];
    char v[64];
    snprintf(v, sizeof(v), "%llu", (unsigned long long)lim->memory_bytes);
    if (file_write_str_at(fd, "memory.max", v, err) < 0)
        return -1;
    /* No swapping past the memory cap (the file is absent without swap support). */
    cella_err e2;
    if (file_write_str_at(fd, "memory.swap.max", "0", &e2) < 0 && e2.errnum != ENOENT)
        return cella_err_set(err, e2.errnum, "%s", e2.msg);
    snprintf(v, sizeof(v), "%u", lim->pids_max);
    if (file_write_str_at(fd, "pids.max", v, err) < 0)
        return -1;
    snprintf(v, sizeof(v), "%llu 100000", (unsigned long long)lim->cpu_milli * 100);
    if (file_write_str_at(fd, "cpu.max", v, err) < 0)
        return -1;
    return 0;
}

int cg_v2_oom_kills(cg_box *b, uint64_t *out, cella_err *err)
{
    return cg_read_keyed(b->dirfd[0], "memory.events", "oom_kill", out, err);
}
