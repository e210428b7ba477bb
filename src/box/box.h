/* One sandbox: its namespaces, cgroup, uid range and agent.
 *
 * box_create clones a child into new user, PID, mount, network, IPC and UTS
 * namespaces (the cgroup namespace follows once it is in its cgroup), maps
 * its ids, puts it in its cgroup, and lets it re-execute this binary as the
 * agent. The agent builds the root, drops privileges, loads seccomp and
 * answers READY. box_destroy kills everything and frees every resource. */
#ifndef CELLA_BOX_BOX_H
#define CELLA_BOX_BOX_H

#include <stdint.h>
#include <sys/types.h>

#include "box/cgroup.h"
#include "box/runtime.h"
#include "box/userns.h"
#include "core/id.h"
#include "util/buf.h"
#include "util/err.h"

#define BOX_DEFAULT_MEMORY (512ull << 20)
#define BOX_DEFAULT_PIDS 256u
#define BOX_DEFAULT_CPU_MILLI 1000u
#define BOX_DEFAULT_TMP (64ull << 20)
#define BOX_DEFAULT_SHM (64ull << 20)
#define BOX_DEFAULT_FSIZE (1ull << 30)
/* Open files per process. Files are host-wide (fs.file-max); the memory
 * limit bounds the total, this keeps one process from holding a large part. */
#define BOX_DEFAULT_NOFILE 1024u
#define BOX_SETUP_TIMEOUT_MS 10000

typedef struct box_spec {
    const char *image;           /* "host", or NULL with rootfs set */
    const char *rootfs;          /* a custom image: its root directory (absolute) */
    cg_limits limits;
    uint64_t tmp_bytes;          /* size of /tmp */
    uint64_t shm_bytes;          /* size of /dev/shm */
    uint64_t fsize_bytes;        /* largest file a process may write */
    uint32_t nofile;             /* open files per process */
    int workspace_dirfd;         /* bound at /workspace; the caller keeps it */
    const cella_id *id;          /* NULL: a new id (a restarted sandbox keeps its own) */
} box_spec;

void box_spec_init(box_spec *s);

typedef struct box {
    box_runtime *rt;
    cella_id id;
    pid_t pid;                   /* the agent, in our PID namespace */
    int pidfd;
    int sock;                    /* to the agent: agent/proto.h frames */
    cbuf in;                     /* bytes read from sock, not yet handled */
    cg_box *cg;
    userns_slot slot;
} box;

/* Threads may create and destroy different boxes at once. One box is not
 * locked: its user serialises box_run/box_destroy on it. Reaping uses the
 * box's pidfd, so the process must not ignore SIGCHLD or wait for any
 * child (waitpid(-1)) on its own. Destroying can wait up to ~2 s per cgroup
 * controller for the kernel to let go of a dying sandbox. */
int box_create(box_runtime *rt, const box_spec *spec, box **out, cella_err *err);
/* Kills every process of the sandbox, removes its cgroup, frees its uid
 * range. Never fails; problems are logged. */
void box_destroy(box *b);
/* Sends bytes to the agent (blocking). */
int box_send(box *b, const void *p, size_t n, cella_err *err);
/* Reads whatever the agent sent into b->in; 0 at EOF (the agent is gone). */
ssize_t box_recv(box *b, cella_err *err);

#endif
