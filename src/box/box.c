#include "box/box.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/proto.h"
#include "box/ops.h"
#include "box/seccomp.h"
#include "box/workspace.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/fdio.h"
#include "util/log.h"
#include "util/sig.h"

#define AGENT_SOCK_FD 3
#define AGENT_EXE_FD 4

void box_spec_init(box_spec *s)
{
    memset(s, 0, sizeof(*s));
    s->image = "host";
    s->limits.memory_bytes = BOX_DEFAULT_MEMORY;
    s->limits.pids_max = BOX_DEFAULT_PIDS;
    s->limits.cpu_milli = BOX_DEFAULT_CPU_MILLI;
    s->tmp_bytes = BOX_DEFAULT_TMP;
    s->shm_bytes = BOX_DEFAULT_SHM;
    s->fsize_bytes = BOX_DEFAULT_FSIZE;
    s->nofile = BOX_DEFAULT_NOFILE;
    s->workspace_dirfd = -1;
}

/* ---- the child, between clone and exec ---------------------------------
 * It is a copy of a possibly multi-threaded parent, so it may only make
 * async-signal-safe calls: raw syscalls, no malloc, no stdio, no glibc
 * set*id wrappers (they signal threads that do not exist here). It reports
 * failure as a FAIL frame on the socket and exits; success is the exec. */

struct child_ctx {
    int parent_sock;   /* the parent's end: the child's copy must go first */
    int sock;
    int exe_fd;
    int root_mode;
    int keep_stderr;
};

__attribute__((noreturn)) static void child_fail(int sock, const char *what, int errnum)
{
    uint8_t frame[256];
    size_t n = proto_encode_fail_static(frame, sizeof(frame), errnum, what);
    if (n && write(sock, frame, n) < 0) {
        /* nothing left to tell */
    }
    _exit(127);
}

/* Unprivileged: the sandbox user is the only mapped id, and execve as a
 * non-root user drops capabilities. Raising them as ambient keeps them
 * across the exec; the agent drops every one of them after setup. */
static int raise_ambient_caps(void)
{
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    if (syscall(SYS_capget, &h, d) < 0)
        return -1;
    d[0].inheritable = d[0].permitted;
    d[1].inheritable = d[1].permitted;
    if (syscall(SYS_capset, &h, d) < 0)
        return -1;
    for (unsigned long cap = 0; cap <= 63; cap++)
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) < 0 && errno != EINVAL &&
            errno != EPERM)
            return -1;
    return 0;
}

__attribute__((noreturn)) static void box_child(const struct child_ctx *c)
{
    /* Our copy of the parent's end would keep the read below from ever
     * seeing end-of-file if the parent died before sending "G". */
    close(c->parent_sock);
    char go;
    ssize_t r;
    do
        r = read(c->sock, &go, 1);
    while (r < 0 && errno == EINTR);
    if (r != 1)
        _exit(127);     /* the parent gave up on us */
    /* A session of its own: no controlling terminal, so nothing inside can
     * reach the caller's terminal (CVE-2017-5226). */
    if (setsid() < 0)
        child_fail(c->sock, "setsid", errno);
    if (c->root_mode) {
        if (syscall(SYS_setresgid, 0, 0, 0) < 0)
            child_fail(c->sock, "setresgid", errno);
        if (syscall(SYS_setgroups, 0, NULL) < 0)
            child_fail(c->sock, "setgroups", errno);
        if (syscall(SYS_setresuid, 0, 0, 0) < 0)
            child_fail(c->sock, "setresuid", errno);
    } else if (raise_ambient_caps() < 0) {
        child_fail(c->sock, "raise ambient capabilities", errno);
    }
    /* Signals blocked or ignored by the parent would be inherited across exec. */
    sig_reset_all();
    /* Descriptors: the agent gets its socket (3) and its binary (4, close on
     * exec) and /dev/null as stdio; nothing else of the parent's survives. */
    int s2 = fcntl(c->sock, F_DUPFD_CLOEXEC, 10);
    int e2 = fcntl(c->exe_fd, F_DUPFD_CLOEXEC, 10);
    if (s2 < 0 || e2 < 0)
        child_fail(c->sock, "dup", errno);
    int nul = open("/dev/null", O_RDWR);
    if (nul < 0)
        child_fail(s2, "open /dev/null", errno);
    if (dup2(nul, 0) < 0 || dup2(nul, 1) < 0 || (!c->keep_stderr && dup2(nul, 2) < 0) ||
        dup2(s2, AGENT_SOCK_FD) < 0 || dup2(e2, AGENT_EXE_FD) < 0 ||
        fcntl(AGENT_EXE_FD, F_SETFD, FD_CLOEXEC) < 0)
        child_fail(s2, "dup2", errno);
    syscall(SYS_close_range, AGENT_EXE_FD + 1, ~0U, 0);
    char *argv[] = {"cella-agent", "__agent", NULL};
    char *envp[] = {NULL};
    syscall(SYS_execveat, AGENT_EXE_FD, "", argv, envp, AT_EMPTY_PATH);
    child_fail(AGENT_SOCK_FD, "exec the agent", errno);
}

/* ---- the parent ------------------------------------------------------- */

int box_send(box *b, const void *p, size_t n, cella_err *err)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = send(b->sock, c, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN)
                return cella_err_set(err, 0, "sandbox %s: the agent stopped reading",
                                     cella_id_short(&b->id));
            return cella_err_set(err, errno, "sandbox %s: send to agent", cella_id_short(&b->id));
        }
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

ssize_t box_recv(box *b, cella_err *err)
{
    for (;;) {
        uint8_t *p = cbuf_reserve(&b->in, 64 << 10);
        ssize_t r = recv(b->sock, p, 64 << 10, 0);
        if (r < 0 && errno == EINTR)
            continue;
        /* An agent killed with our bytes unread resets the connection: that
         * is its death, the same as end-of-file. */
        if (r < 0 && errno == ECONNRESET)
            return 0;
        if (r < 0)
            return cella_err_set(err, errno, "sandbox %s: read from agent", cella_id_short(&b->id));
        cbuf_commit(&b->in, (size_t)r);
        return r;
    }
}

static int send_setup(box *b, const box_spec *spec, int ws_fd, uint32_t ws_kind, cella_err *err)
{
    box_runtime *rt = b->rt;
    opv ops = {0};
    /* A custom image's root goes along as a descriptor: its entries are
     * bound through it. */
    _cleanup_close_ int root_fd = -1;
    if (spec->rootfs) {
        root_fd = open(spec->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0)
            return cella_err_set(err, errno, "image root %s", spec->rootfs);
    }
    image_params ip = {
        .hostname = cella_id_short(&b->id),
        .tmp_bytes = spec->tmp_bytes,
        .shm_bytes = spec->shm_bytes,
        .workspace_kind = ws_kind,
        .workspace_fd = 0,
        .rootfs_fd = 1,
    };
    if (spec->rootfs) {
        if (rootfs_image_ops(spec->rootfs, &ip, &ops, err) < 0) {
            opv_free(&ops);
            return -1;
        }
    } else {
        host_image_ops(&rt->host_img, &ip, &ops);
    }
    proto_setup s = {
        .version = PROTO_VERSION,
        .flags = rt->root_mode ? SETUP_ROOT_MAPPED : 0,
        .hostname = (char *)cella_id_short(&b->id),
        .uid = SANDBOX_UID,
        .gid = SANDBOX_GID,
        .rlimit_fsize = spec->fsize_bytes,
        .rlimit_nofile = spec->nofile,
        .bpf = (uint8_t *)box_seccomp_bpf,
        .bpf_len = box_seccomp_bpf_len,
        .ops = ops.v,
        .n_ops = ops.n,
    };
    cbuf frame;
    cbuf_init(&frame);
    size_t mark = proto_begin_frame(&frame, PROTO_SETUP, 0, 0);
    proto_put_setup(&frame, &s);
    proto_end_frame(&frame, mark);
    opv_free(&ops);

    /* The workspace descriptor rides along with the frame's first bytes. */
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(2 * sizeof(int))];
    } ctl;
    memset(&ctl, 0, sizeof(ctl));
    struct iovec iov = {.iov_base = (void *)cbuf_head(&frame), .iov_len = cbuf_avail(&frame)};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                         .msg_controllen = sizeof(ctl.buf)};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    int fds[2] = {ws_fd, root_fd};
    int nfds = root_fd >= 0 ? 2 : 1;
    msg.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
    cm->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
    memcpy(CMSG_DATA(cm), fds, (size_t)nfds * sizeof(int));
    ssize_t w;
    do
        w = sendmsg(b->sock, &msg, MSG_NOSIGNAL);
    while (w < 0 && errno == EINTR);
    int rc = 0;
    if (w < 0)
        rc = cella_err_set(err, errno, "send setup to the agent");
    else if ((size_t)w < cbuf_avail(&frame))
        rc = box_send(b, cbuf_head(&frame) + w, cbuf_avail(&frame) - (size_t)w, err);
    cbuf_free(&frame);
    return rc;
}

/* Waits for READY; a FAIL frame or the agent's death is a setup failure. */
static int wait_ready(box *b, cella_err *err)
{
    int64_t deadline = clock_now_ns() + (int64_t)BOX_SETUP_TIMEOUT_MS * 1000000;
    for (;;) {
        proto_hdr h;
        const uint8_t *payload;
        int got = proto_peek_frame(&b->in, &h, &payload, err);
        if (got < 0)
            return -1;
        if (got) {
            int rc = 1;
            if (h.type == PROTO_READY) {
                rc = 0;
            } else if (h.type == PROTO_FAIL) {
                rc = proto_error_to_err(payload, h.len, err);
            } else if (h.type == PROTO_LOG) {
                log_debug("agent %s: %.*s", cella_id_short(&b->id), (int)h.len, payload);
            } else {
                rc = cella_err_set(err, 0, "agent sent %s before READY", proto_type_name(h.type));
            }
            cbuf_consume(&b->in, PROTO_HDR_SIZE + h.len);
            if (rc <= 0)
                return rc;
            continue;
        }
        int64_t left = (deadline - clock_now_ns()) / 1000000;
        if (left <= 0)
            return cella_err_set(err, 0, "sandbox setup took longer than %d ms",
                                 BOX_SETUP_TIMEOUT_MS);
        struct pollfd p = {.fd = b->sock, .events = POLLIN};
        int pr = poll(&p, 1, (int)left);
        if (pr < 0 && errno != EINTR)
            return cella_err_set(err, errno, "poll");
        if (pr <= 0)
            continue;
        ssize_t r = box_recv(b, err);
        if (r < 0)
            return -1;
        if (r == 0)
            return cella_err_set(err, 0, "the agent exited during setup");
    }
}

int box_create(box_runtime *rt, const box_spec *spec, box **out, cella_err *err)
{
    if (!spec->rootfs && spec->image && strcmp(spec->image, "host") != 0)
        return cella_err_set(err, 0, "unknown image '%s' (available: host)", spec->image);
    if (spec->workspace_dirfd < 0)
        return cella_err_set(err, 0, "a sandbox needs a workspace directory");
    box *b = cella_calloc(1, sizeof(*b));
    b->rt = rt;
    b->pid = -1;
    b->pidfd = b->sock = -1;
    b->slot.lock_fd = -1;
    cbuf_init(&b->in);
    int sv[2] = {-1, -1};
    _cleanup_close_ int ws_fd = -1;

    if (spec->id)
        b->id = *spec->id;
    else if (cella_id_new(rt->sd.node_key, &b->id, err) < 0)
        goto error;
    if (rt->root_mode) {
        uint32_t start = 0;
        if (getrandom(&start, sizeof(start), 0) < 0)
            start = (uint32_t)getpid();
        if (userns_slot_acquire(rt->slots_fd, rt->uid_base, rt->uid_slots, start, &b->slot, err) < 0)
            goto error;
    }
    /* In root mode the cgroup is named after the uid range: holding the
     * range means owning the name, so one left by a holder that died
     * (SIGKILL) is known stale and reclaimed. Without ranges, the short id. */
    char cg_name[32];
    if (rt->root_mode)
        snprintf(cg_name, sizeof(cg_name), "u%u", b->slot.host_base);
    else
        snprintf(cg_name, sizeof(cg_name), "%s", cella_id_short(&b->id));
    /* v2 starts the child inside its cgroup, which must exist first; v1
     * attaches it afterwards, while the agent is busy exec'ing (see below). */
    bool v2 = rt->cg->version == CG_V2;
    if (v2 && cg_box_create(rt->cg, cg_name, &spec->limits, rt->root_mode, &b->cg, err) < 0)
        goto error;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        cella_err_set(err, errno, "socketpair");
        goto error;
    }
    b->sock = sv[0];

    /* Never block forever on a wedged agent: sends give up after 10 s. */
    struct timeval sndto = {.tv_sec = 10};
    if (setsockopt(sv[0], SOL_SOCKET, SO_SNDTIMEO, &sndto, sizeof(sndto)) < 0) {
        cella_err_set(err, errno, "SO_SNDTIMEO");
        goto error;
    }
    struct child_ctx cc = {
        .parent_sock = sv[0],
        .sock = sv[1],
        .exe_fd = rt->exe_fd,
        .root_mode = rt->root_mode,
#ifdef CELLA_SANITIZE
        .keep_stderr = 1,   /* test builds: sanitizer reports from the agent must be seen */
#endif
    };
    /* The cgroup namespace is left for the agent to unshare once it is
     * inside its cgroup, so that cgroup becomes its root. */
    struct clone_args ca = {
        .flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC |
                 CLONE_NEWUTS | CLONE_PIDFD,
        .pidfd = (uint64_t)(uintptr_t)&b->pidfd,
        .exit_signal = SIGCHLD,
    };
    if (v2) {
        ca.flags |= CLONE_INTO_CGROUP;
        ca.cgroup = (uint64_t)cg_box_clone_fd(b->cg);
    }
    /* All signals blocked across the clone, so no handler of the parent's
     * ever runs in the child; the child unblocks after resetting them. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    /* A user namespace belongs to the euid that creates it, and the kernel
     * charges per-user counts made inside (inotify instances, fanotify
     * groups, pending signals, POSIX queues) to that owner too, shared with
     * everything else it runs. Made as root, every sandbox would draw on
     * host root's allowance. So this thread alone (the raw syscall is
     * per-thread) takes the slot's first uid as its euid for the clone,
     * keeping fsuid 0 for the file checks of CLONE_INTO_CGROUP. */
    if (rt->root_mode) {
        if (syscall(SYS_setresuid, -1, b->slot.host_base, -1) < 0) {
            pthread_sigmask(SIG_SETMASK, &old, NULL);
            cella_err_set(err, errno, "take the sandbox's uid to create its namespaces");
            goto error;
        }
        syscall(SYS_setfsuid, 0);   /* returns the previous fsuid; it cannot fail here */
    }
    long pid = syscall(SYS_clone3, &ca, sizeof(ca));
    if (pid == 0)
        box_child(&cc);
    int clone_errno = errno;
    if (rt->root_mode && syscall(SYS_setresuid, -1, 0, -1) < 0) {
        /* Cannot happen with ruid 0; if it did, this thread would go on
         * without root, and every later check would be wrong. */
        log_error("could not return to euid 0: %s", strerror(errno));
        abort();
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = clone_errno;
    close(sv[1]);
    if (pid < 0) {
        cella_err_set(err, errno, "clone the sandbox");
        goto error;
    }
    b->pid = (pid_t)pid;

    char um[64], gm[64];
    if (rt->root_mode) {
        userns_map_text(true, b->slot.host_base, 0, 0, um, sizeof(um));
        memcpy(gm, um, sizeof(gm));
    } else {
        userns_map_text(false, 0, SANDBOX_UID, rt->host_uid, um, sizeof(um));
        userns_map_text(false, 0, SANDBOX_GID, rt->host_gid, gm, sizeof(gm));
    }
    if (userns_write_maps(b->pid, um, gm, !rt->root_mode, err) < 0)
        goto error;
    /* The agent sets RLIMIT_CORE to 1 (agent/setup.c says why), which it
     * cannot when our hard limit is 0 (`ulimit -Hc 0`): raising it takes
     * CAP_SYS_RESOURCE in the host's namespace. Then we try for it. */
    struct rlimit core;
    if (getrlimit(RLIMIT_CORE, &core) == 0 && core.rlim_max < 1) {
        struct rlimit core1 = {1, 1};
        if (prlimit(b->pid, RLIMIT_CORE, &core1, NULL) < 0)
            log_warn("sandbox %s: cannot raise RLIMIT_CORE to 1 (%s): start the daemon with a "
                     "hard core limit of 1 or more, or a crash inside runs a piped core_pattern's "
                     "helper", cella_id_short(&b->id), strerror(errno));
    }
    /* Let the child exec the agent now; the rest of our work overlaps with
     * that. The agent does nothing until SETUP arrives, and SETUP goes only
     * once it is in its cgroup. */
    if (box_send(b, "G", 1, err) < 0)
        goto error;
    if (!v2 && (cg_box_create(rt->cg, cg_name, &spec->limits, rt->root_mode, &b->cg, err) < 0 ||
                cg_box_attach(b->cg, b->pid, err) < 0))
        goto error;
    uint32_t ws_kind;
    if (workspace_mount_fd(rt, spec->workspace_dirfd, b->slot.host_base, b->pid, &ws_fd, &ws_kind,
                           err) < 0)
        goto error;
    if (send_setup(b, spec, ws_fd, ws_kind, err) < 0 || wait_ready(b, err) < 0)
        goto error;
    *out = b;
    return 0;
error:
    cella_err_prefix(err, "sandbox start failed");
    box_destroy(b);
    return -1;
}

void box_destroy(box *b)
{
    if (!b)
        return;
    if (b->cg)
        cg_box_kill(b->cg);
    if (b->pidfd >= 0) {
        /* The agent is PID 1 of its namespace: when it dies, the kernel kills
         * every other process in it before waitid returns. */
        syscall(SYS_pidfd_send_signal, b->pidfd, SIGKILL, NULL, 0);
        siginfo_t si;
        while (waitid((idtype_t)P_PIDFD, (id_t)b->pidfd, &si, WEXITED) < 0 && errno == EINTR)
            ;
        close(b->pidfd);
    }
    if (b->sock >= 0)
        close(b->sock);
    cella_err e;
    if (b->cg && cg_box_destroy(b->cg, &e) < 0)
        log_warn("sandbox %s: %s", cella_id_short(&b->id), e.msg);
    userns_slot_release(&b->slot);
    cbuf_free(&b->in);
    cella_free(b);
}
