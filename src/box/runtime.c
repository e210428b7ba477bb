#include "box/runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "box/userns.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/fdio.h"
#include "util/parse.h"

static int open_slots_dir(int *out, cella_err *err)
{
    if (mkdir("/run/cella", 0755) < 0 && errno != EEXIST)
        return cella_err_set(err, errno, "mkdir /run/cella");
    if (mkdir(BOX_SLOTS_DIR, 0700) < 0 && errno != EEXIST)
        return cella_err_set(err, errno, "mkdir %s", BOX_SLOTS_DIR);
    int fd = open(BOX_SLOTS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return cella_err_set(err, errno, "open %s", BOX_SLOTS_DIR);
    *out = fd;
    return 0;
}

extern const unsigned char cella_agent_image[], cella_agent_image_end[];

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

/* The agent executable, embedded in this binary, in a sealed memfd: an
 * upgrade of the file on disk cannot mix versions within one process, and
 * nothing (sandboxed code reaching /proc/<agent>/exe included) can modify
 * the image the kernel runs as each sandbox's PID 1. */
static int agent_image_open(cella_err *err)
{
    size_t n = (size_t)(cella_agent_image_end - cella_agent_image);
    int fd = memfd_create("cella-agent", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
    if (fd < 0 && errno == EINVAL)      /* kernels before 6.3 know no MFD_EXEC */
        fd = memfd_create("cella-agent", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return cella_err_set(err, errno, "memfd for the agent");
    if (fd_write_all(fd, cella_agent_image, n) < 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
        int e = errno;
        close(fd);
        return cella_err_set(err, e, "write the agent's image");
    }
    return fd;
}

static int env_u32(const char *name, uint32_t *v, cella_err *err)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return 0;
    uint64_t x;
    if (parse_u64(s, 0, UINT32_MAX, &x, err) < 0)
        return cella_err_prefix(err, "%s", name);
    *v = (uint32_t)x;
    return 0;
}

/* A "u<uid>" cgroup whose uid range is not locked belongs to a sandbox
 * whose owner was killed before it could clean up: kill what is left in it
 * and remove it. */
static void sweep_one(const char *name, void *arg)
{
    box_runtime *rt = arg;
    unsigned host_base;
    char tail;
    if (sscanf(name, "u%u%c", &host_base, &tail) != 1 || host_base % USERNS_RANGE)
        return;
    userns_slot s;
    if (userns_slot_try(rt->slots_fd, host_base, &s, NULL) != 1)
        return;
    cg_box_reclaim(rt->cg, name, NULL);
    userns_slot_release(&s);
}

int box_runtime_open(const box_runtime_opts *o, box_runtime **out, cella_err *err)
{
    box_runtime *rt = cella_calloc(1, sizeof(*rt));
    rt->sd.fd = rt->slots_fd = rt->exe_fd = rt->workspaces_fd = -1;
    _cleanup_free_ char *sdpath = o->state_dir ? cella_strdup(o->state_dir) : statedir_default_path();
    if (statedir_open(sdpath, &rt->sd, err) < 0)
        goto error;
    if ((rt->workspaces_fd = statedir_subdir(&rt->sd, "workspaces", err)) < 0)
        goto error;

    rt->root_mode = geteuid() == 0;
    rt->host_uid = geteuid();
    rt->host_gid = getegid();
    rt->uid_base = o->uid_base ? o->uid_base : USERNS_DEFAULT_BASE;
    rt->uid_slots = o->uid_slots ? o->uid_slots : USERNS_DEFAULT_SLOTS;
    if (!o->uid_base && env_u32("CELLA_UID_BASE", &rt->uid_base, err) < 0)
        goto error;
    if (rt->root_mode) {
        if (userns_check_range(rt->uid_base, rt->uid_slots, err) < 0 ||
            open_slots_dir(&rt->slots_fd, err) < 0)
            goto error;
    }

    if ((rt->exe_fd = agent_image_open(err)) < 0)
        goto error;

    cg_open_opts co = {.force = o->cgroup_version, .parent = o->cgroup_parent,
                       .require_limits = true};
    const char *env_parent = getenv("CELLA_CGROUP_PARENT");
    if (!co.parent && env_parent && *env_parent)
        co.parent = env_parent;
    const char *env_ver = getenv("CELLA_CGROUP_VERSION");
    if (co.force == CG_AUTO && env_ver && (!strcmp(env_ver, "1") || !strcmp(env_ver, "2")))
        co.force = env_ver[0] == '1' ? CG_V1 : CG_V2;
    if (cg_host_open(&co, &rt->cg, err) < 0)
        goto error;
    if (rt->root_mode)
        cg_host_each(rt->cg, sweep_one, rt);
    if (host_image_load(&rt->host_img, err) < 0)
        goto error;
    *out = rt;
    return 0;
error:
    box_runtime_close(rt);
    return -1;
}

void box_runtime_close(box_runtime *rt)
{
    if (!rt)
        return;
    host_image_free(&rt->host_img);
    cg_host_free(rt->cg);
    if (rt->exe_fd >= 0)
        close(rt->exe_fd);
    if (rt->slots_fd >= 0)
        close(rt->slots_fd);
    if (rt->workspaces_fd >= 0)
        close(rt->workspaces_fd);
    statedir_close(&rt->sd);
    cella_free(rt);
}
