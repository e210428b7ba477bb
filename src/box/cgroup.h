/* cgroups: every sandbox gets its own cgroup with memory, process-count and
 * CPU limits. Two backends behind one interface, chosen at run time by what the
 * host mounts: cgroup v2 (unified), and v1 (one hierarchy per controller), which
 * hybrid hosts such as the development machines still use for memory, pids and
 * cpu. There is no "no cgroup" mode for sandboxes: if neither backend can set
 * all three limits, opening fails. */
#ifndef CELLA_BOX_CGROUP_H
#define CELLA_BOX_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/err.h"

typedef enum cg_version { CG_AUTO = 0, CG_V1 = 1, CG_V2 = 2 } cg_version;

enum { CG_MEMORY, CG_PIDS, CG_CPU, CG_NCTL };
extern const char *const cg_ctl_names[CG_NCTL];

typedef struct cg_limits {
    uint64_t memory_bytes;
    uint32_t pids_max;
    uint32_t cpu_milli;        /* 1000 = one CPU */
} cg_limits;

/* ---- what the host mounts (pure parsing, unit tested) ---------------- */

typedef struct cg_layout {
    char *v2_mount;            /* mount point of a cgroup2 hierarchy, or NULL */
    char *v2_root;             /* that mount's root within the hierarchy */
    char *v2_self;             /* our own cgroup on v2 ("0::" line), or NULL */
    char *v1_mount[CG_NCTL];   /* v1 mount point per controller, or NULL */
    char *v1_root[CG_NCTL];
    char *v1_self[CG_NCTL];    /* our own cgroup per controller, or NULL */
} cg_layout;

int cg_layout_parse(const char *mountinfo, const char *proc_self_cgroup, cg_layout *out,
                    cella_err *err);
void cg_layout_free(cg_layout *l);
/* mount + (self without the mount's root) + "/" + leaf, with single slashes.
 * leaf may be NULL. Returns NULL when self lies outside the mount's root. */
char *cg_path_join(const char *mount, const char *mount_root, const char *self, const char *leaf);

/* ---- the host backend ------------------------------------------------ */

typedef struct cg_open_opts {
    cg_version force;          /* CG_AUTO: v2 if it has the controllers, else v1 */
    const char *parent;        /* directory that sandbox cgroups go under; NULL: default */
    bool require_limits;       /* false only for tests of the v2 mechanics themselves */
} cg_open_opts;

typedef struct cg_host {
    cg_version version;
    bool limits;               /* the controllers are present (always, unless !require_limits) */
    bool have_memsw;           /* v1: memory.memsw.* exists */
    char *base[CG_NCTL];       /* v1: parent dir per controller; v2: base[0] */
} cg_host;

int cg_host_open(const cg_open_opts *o, cg_host **out, cella_err *err);
void cg_host_free(cg_host *h);

/* ---- one sandbox's cgroup -------------------------------------------- */

typedef struct cg_box {
    cg_host *host;
    char *dir[CG_NCTL];        /* v1: per controller; v2: dir[0] */
    int dirfd[CG_NCTL];
} cg_box;

/* With reclaim, an existing cgroup of that name is a leftover of a sandbox
 * whose owner died (the caller holds the name exclusively, see box.c): its
 * processes are killed and it is replaced. Without, an existing one is an error. */
int cg_box_create(cg_host *h, const char *name, const cg_limits *lim, bool reclaim, cg_box **out,
                  cella_err *err);
/* Changes the limits of a live cgroup (a warm sandbox handed out with other
 * limits than it was made with). */
int cg_box_set_limits(cg_box *b, const cg_limits *lim, cella_err *err);
/* Kills and removes a leftover cgroup `name` under every controller. */
int cg_box_reclaim(cg_host *h, const char *name, cella_err *err);
/* Calls fn for each sandbox cgroup name present under any controller. */
void cg_host_each(cg_host *h, void (*fn)(const char *name, void *arg), void *arg);
/* v2: a descriptor for clone3(CLONE_INTO_CGROUP), so the child starts inside
 * its cgroup; v1: -1 (use cg_box_attach). */
int cg_box_clone_fd(const cg_box *b);
int cg_box_attach(cg_box *b, pid_t pid, cella_err *err);
/* How many processes the kernel's OOM killer has killed in this cgroup. */
int cg_box_oom_kills(cg_box *b, uint64_t *out, cella_err *err);
/* Kills every process in the cgroup (v2 cgroup.kill; v1 relies on the PID
 * namespace: when the sandbox's init dies, the kernel kills the rest). */
void cg_box_kill(cg_box *b);
/* Removes the cgroup (waiting briefly for the kernel to let go) and frees b. */
int cg_box_destroy(cg_box *b, cella_err *err);

/* Backends (cgroup_v1.c, cgroup_v2.c). */
int cg_v1_host_open(const cg_layout *l, const cg_open_opts *o, cg_host *h, cella_err *err);
int cg_v1_box_limits(cg_box *b, const cg_limits *lim, cella_err *err);
int cg_v1_oom_kills(cg_box *b, uint64_t *out, cella_err *err);
int cg_v2_host_open(const cg_layout *l, const cg_open_opts *o, cg_host *h, cella_err *err);
int cg_v2_box_limits(cg_box *b, const cg_limits *lim, cella_err *err);
int cg_v2_oom_kills(cg_box *b, uint64_t *out, cella_err *err);
/* Reads "key value" lines (memory.events, memory.oom_control) for one key. */
int cg_read_keyed(int dirfd, const char *file, const char *key, uint64_t *out, cella_err *err);
/* True when a v2 cgroup.controllers text lists every controller cella needs. */
bool cg_v2_has_controllers(const char *controllers_text);

#endif
