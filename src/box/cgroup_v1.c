/* cgroup v1 backend: one directory per controller (memory, pids, cpu), each
 * under our own cgroup in that hierarchy, so the host's accounting of cella
 * itself also covers its sandboxes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "box/cgroup.h"
#include "util/alloc.h"
#include "util/fdio.h"

int cg_v1_host_open(const cg_layout *l, const cg_open_opts *o, cg_host *h, cella_err *err)
{
    for (int c = 0; c < CG_NCTL; c++) {
        if (!l->v1_mount[c])
            return cella_err_set(err, 0,
                                 "cgroups: no cgroup v2 with the %s controller, and no v1 "
                                 "hierarchy for it either; cella needs memory, pids and cpu",
                                 cg_ctl_names[c]);
        char *base = o->parent ? cg_path_join(l->v1_mount[c], "/", o->parent, NULL)
                               : cg_path_join(l->v1_mount[c], l->v1_root[c], l->v1_self[c], "cella");
        if (!base)
            return cella_err_set(err, 0, "cgroups: our %s cgroup lies outside its mount",
                                 cg_ctl_names[c]);
        h->base[c] = base;
        if (fs_mkdir_p(base, 0755, err) < 0)
            return cella_err_prefix(err, "cgroups (v1 %s)", cg_ctl_names[c]);
    }
    h->limits = true;
    char probe[4096];
    snprintf(probe, sizeof(probe), "%s/memory.memsw.limit_in_bytes", h->base[CG_MEMORY]);
    h->have_memsw = access(probe, F_OK) == 0;
    return 0;
}

int cg_v1_box_limits(cg_box *b, const cg_limits *lim, cella_err *err)
{
    char v[32];
    snprintf(v, sizeof(v), "%llu", (unsigned long long)lim->memory_bytes);
    if (file_write_str_at(b->dirfd[CG_MEMORY], "memory.limit_in_bytes", v, err) < 0)
        return -1;
    /* With swap accounting, memory+swap gets the same cap: no swapping past it. */
    if (b->host->have_memsw &&
        file_write_str_at(b->dirfd[CG_MEMORY], "memory.memsw.limit_in_bytes", v, err) < 0)
        return -1;
    snprintf(v, sizeof(v), "%u", lim->pids_max);
    if (file_write_str_at(b->dirfd[CG_PIDS], "pids.max", v, err) < 0)
        return -1;
    if (file_write_str_at(b->dirfd[CG_CPU], "cpu.cfs_period_us", "100000", err) < 0)
        return -1;
    snprintf(v, sizeof(v), "%llu", (unsigned long long)lim->cpu_milli * 100);
    if (file_write_str_at(b->dirfd[CG_CPU], "cpu.cfs_quota_us", v, err) < 0)
        return -1;
    return 0;
}

int cg_v1_oom_kills(cg_box *b, uint64_t *out, cella_err *err)
{
    return cg_read_keyed(b->dirfd[CG_MEMORY], "memory.oom_control", "oom_kill", out, err);
}
