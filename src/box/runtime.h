/* What a process that runs sandboxes sets up once: the state directory, the
 * compiled seccomp filter, the cgroup backend, the host image's layout, a
 * handle on its own binary (re-executed as each sandbox's agent), and the
 * uid-range allocator. The daemon holds one for its lifetime; `cella box`
 * holds one per run. Read-only after opening, so threads may share it.
 *
 * The agent is its own small executable embedded in this binary
 * (agent/main.c, box/agent_image.S), run from a sealed memfd. */
#ifndef CELLA_BOX_RUNTIME_H
#define CELLA_BOX_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "box/cgroup.h"
#include "box/image_host.h"
#include "core/statedir.h"
#include "util/err.h"

#define BOX_SLOTS_DIR "/run/cella/uid-slots"

typedef struct box_runtime_opts {
    const char *state_dir;       /* NULL: statedir_default_path() */
    uint32_t uid_base;           /* 0: $CELLA_UID_BASE or USERNS_DEFAULT_BASE */
    uint32_t uid_slots;          /* 0: USERNS_DEFAULT_SLOTS */
    const char *cgroup_parent;   /* NULL: $CELLA_CGROUP_PARENT or "<own cgroup>/cella" */
    cg_version cgroup_version;   /* CG_AUTO unless $CELLA_CGROUP_VERSION says 1 or 2 */
} box_runtime_opts;

typedef struct box_runtime {
    statedir sd;
    bool root_mode;              /* euid 0: a uid range per sandbox */
    uint32_t uid_base, uid_slots;
    int slots_fd;                /* root mode: lock files of the uid slots */
    uid_t host_uid;              /* user mode: shown as the sandbox user */
    gid_t host_gid;
    int exe_fd;                  /* the agent's executable: a sealed memfd */
    cg_host *cg;
    host_image host_img;
    int workspaces_fd;           /* <state>/workspaces */
} box_runtime;

int box_runtime_open(const box_runtime_opts *o, box_runtime **out, cella_err *err);
void box_runtime_close(box_runtime *rt);

#endif
