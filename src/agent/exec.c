/* Commands inside the sandbox: each exec is a child of the agent in a
 * session (and process group) of its own, running as the sandbox user, with
 * its output read into the outgoing queue and its stdin fed from the parent.
 * Nothing here blocks: sandbox code can stop a starting child (kill -STOP
 * -1), so even the start is reported through a polled pipe. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/agent_int.h"
#include "agent/fs_quota.h"
#include "agent/wire.h"
#include "util/alloc.h"
#include "util/cleanup.h"
#include "util/fdio.h"
#include "util/parse.h"
#include "util/sig.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* The fixed environment every command starts from; the request's variables
 * are laid over it. Nothing of the host's environment is ever added. */
static const char *const base_env[] = {
    "PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/workspace", "USER=sandbox", "LOGNAME=sandbox",
    "SHELL=/bin/bash", "LANG=C.UTF-8", "TMPDIR=/tmp",
};

enum { STAGE_SETUP = 1, STAGE_CHDIR, STAGE_EXEC, STAGE_WRITE };

struct child_report {
    int32_t stage;
    int32_t errnum;
};

agent_exec *agent_exec_find(agent *a, uint32_t id)
{
    for (int i = 0; i < AGENT_MAX_EXECS; i++)
        if (a->execs[i] && a->execs[i]->id == id)
            return a->execs[i];
    return NULL;
}

bool agent_throttled(const agent *a)
{
    return cbuf_avail(&a->out) >= AGENT_OUT_HIGH_WATER;
}

static void env_set(char ***env, size_t *n, const char *kv)
{
    size_t nl = strcspn(kv, "=");
    for (size_t i = 0; i < *n; i++)
        if (!strncmp((*env)[i], kv, nl) && (*env)[i][nl] == '=') {
            cella_free((*env)[i]);
            (*env)[i] = cella_strdup(kv);
            return;
        }
    *env = cella_realloc(*env, (*n + 2) * sizeof(char *));
    (*env)[(*n)++] = cella_strdup(kv);
    (*env)[*n] = NULL;
}

static char **build_env(char *const *req_env, const char *cwd)
{
    char **env = cella_calloc(1, sizeof(char *));
    size_t n = 0;
    for (size_t i = 0; i < sizeof(base_env) / sizeof(base_env[0]); i++)
        env_set(&env, &n, base_env[i]);
    _cleanup_free_ char *pwd = cella_asprintf("PWD=%s", cwd);
    env_set(&env, &n, pwd);
    for (size_t i = 0; req_env && req_env[i]; i++)
        env_set(&env, &n, req_env[i]);
    return env;
}

static const char *env_get(char *const *env, const char *name)
{
    size_t nl = strlen(name);
    for (size_t i = 0; env[i]; i++)
        if (!strncmp(env[i], name, nl) && env[i][nl] == '=')
            return env[i] + nl + 1;
    return NULL;
}

/* execvp() with the PATH of the command's own environment (libc's would use
 * the agent's, which is empty). Returns the errno that best explains failure. */
static int exec_search(char *const argv[], char *const envp[])
{
    const char *file = argv[0];
    if (strchr(file, '/')) {
        execve(file, argv, envp);
        return errno;
    }
    const char *path = env_get(envp, "PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    int best = ENOENT;
    for (const char *p = path;;) {
        size_t dl = strcspn(p, ":");
        char full[PATH_MAX];
        int w = snprintf(full, sizeof(full), "%.*s/%s", (int)dl, dl ? p : ".", file);
        if (w > 0 && (size_t)w < sizeof(full)) {
            execve(full, argv, envp);
            if (errno == EACCES)
                best = EACCES;              /* keep looking, but remember it */
            else if (errno != ENOENT && errno != ENOTDIR && errno != ENAMETOOLONG)
                return errno;
        }
        if (!p[dl])
            break;
        p += dl + 1;
    }
    return best;
}

__attribute__((noreturn)) static void child_report(int fd, int stage, int errnum)
{
    struct child_report r = {stage, errnum};
    if (write(fd, &r, sizeof(r)) < 0) {
        /* the agent will see EOF and a non-zero status */
    }
    _exit(errnum == ENOENT && stage == STAGE_EXEC ? 127 : 126);
}

__attribute__((noreturn)) static void exec_child(agent *a, char *const argv[], char *const envp[],
                                                 const char *cwd, const int stdio[3], int report,
                                                 bool builtin)
{
    sig_reset_all();
    /* Its own session and process group: a timeout kills the whole group,
     * and nothing inside shares a group with the agent. */
    setsid();
    for (int i = 0; i < 3; i++)
        if (dup2(stdio[i], i) < 0)
            child_report(report, STAGE_SETUP, errno);
    /* No descriptor of the agent's may survive the exec (its socket would
     * let the command forge frames to the parent). */
    if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
        child_report(report, STAGE_SETUP, errno);
    struct rlimit fsize = {a->rlimit_fsize, a->rlimit_fsize};
    struct rlimit nofile = {a->rlimit_nofile, a->rlimit_nofile};
    /* RLIMIT_CORE is the agent's own (1, set at setup), inherited: the
     * filter refuses changing it, here too. */
    if (setrlimit(RLIMIT_FSIZE, &fsize) < 0 || setrlimit(RLIMIT_NOFILE, &nofile) < 0)
        child_report(report, STAGE_SETUP, errno);
    if (a->root_mapped) {
        /* Become the sandbox user: this also clears every capability the
         * agent kept, and the bounding set is empty, so none come back. */
        gid_t g = a->gid;
        if (setgroups(1, &g) < 0 || setresgid(a->gid, a->gid, a->gid) < 0 ||
            setresuid(a->uid, a->uid, a->uid) < 0)
            child_report(report, STAGE_SETUP, errno);
    }
    if (chdir(cwd) < 0)
        child_report(report, STAGE_CHDIR, errno);
    if (builtin && argv[0] && !strcmp(argv[0], "write-exec")) {
        /* write-exec PATH MODE CONTENT PROG ARG...: the file, then the
         * program, as one command (builtin.c). */
        if (!argv[1] || !argv[2] || !argv[3] || !argv[4])
            child_report(report, STAGE_SETUP, EINVAL);
        int we = agent_builtin_write(argv[1], argv[2], argv[3]);
        if (we)
            child_report(report, STAGE_WRITE, we);
        child_report(report, STAGE_EXEC, exec_search(argv + 4, envp));
    }
    if (builtin) {
        /* No exec will close the agent's descriptors for us (its socket, the
         * write end of this very stdin): close them all now. The start
         * report goes with them, which tells the agent it started. */
        syscall(SYS_close_range, 3, ~0U, 0);
        _exit(agent_builtin_main(argv));
    }
    int e = exec_search(argv, envp);
    child_report(report, STAGE_EXEC, e);
}

static void send_exit(agent *a, uint32_t id, const proto_exit *x)
{
    size_t mark = proto_begin_frame(&a->out, PROTO_EXIT, 0, id);
    proto_put_exit(&a->out, x);
    proto_end_frame(&a->out, mark);
}

static bool env_ok(char *const *env, const char **bad)
{
    for (size_t i = 0; env && env[i]; i++)
        if (!env_assignment_valid(env[i])) {
            *bad = env[i];
            return false;
        }
    return true;
}

static void close_fd(agent_exec *e, int i)
{
    if (e->fd[i] >= 0)
        close(e->fd[i]);
    e->fd[i] = -1;
}

static void free_exec(agent *a, int slot)
{
    agent_exec *e = a->execs[slot];
    for (int i = 0; i < 4; i++)
        close_fd(e, i);
    cbuf_free(&e->stdin_buf);
    cella_free(e->cmd);
    cella_free(e->cwd);
    cella_free(e);
    a->execs[slot] = NULL;
}

void agent_exec_start(agent *a, uint32_t id, const uint8_t *payload, size_t n)
{
    proto_exec req;
    cella_err err;
    if (proto_get_exec(payload, n, &req, &err) < 0) {
        agent_send_error(a, id, PERR_BAD_REQUEST, "%s", err.msg);
        return;
    }
    int slot = -1;
    for (int i = 0; i < AGENT_MAX_EXECS && slot < 0; i++)
        if (!a->execs[i])
            slot = i;
    const char *bad = NULL;
    const char *cwd = req.cwd && req.cwd[0] ? req.cwd : "/workspace";
    char **envp = NULL;
    int p_in[2] = {-1, -1}, p_out[2] = {-1, -1}, p_err[2] = {-1, -1}, p_rep[2] = {-1, -1};
    if (agent_exec_find(a, id)) {
        agent_send_error(a, id, PERR_DUPLICATE_ID, "exec id %u is already running", id);
        goto out;
    }
    if (slot < 0) {
        agent_send_error(a, id, PERR_BUSY, "%d commands are already running", AGENT_MAX_EXECS);
        goto out;
    }
    if (!env_ok(req.env, &bad)) {
        agent_send_error(a, id, PERR_BAD_REQUEST, "invalid environment entry '%.64s'", bad);
        goto out;
    }
    envp = build_env(req.env, cwd);
    /* A pipe belongs to whoever made it, mode 0600: made as the agent's
     * root, the command (the sandbox user) could not reopen its own stdio
     * through /dev/stdin, /dev/stdout or /dev/stderr. So the stdio pipes
     * are made with the sandbox user's fs ids. */
    int pipes_ok = 1;
    if (a->root_mapped) {
        setfsgid(a->gid);
        setfsuid(a->uid);
    }
    if (((req.flags & EXEC_STDIN) && pipe2(p_in, O_CLOEXEC) < 0) || pipe2(p_out, O_CLOEXEC) < 0 ||
        pipe2(p_err, O_CLOEXEC) < 0)
        pipes_ok = 0;
    if (a->root_mapped) {
        int saved = errno;
        setfsuid(0);
        setfsgid(0);
        errno = saved;
    }
    if (!pipes_ok || pipe2(p_rep, O_CLOEXEC) < 0 ||
        (p_in[1] >= 0 && fd_set_nonblock(p_in[1], 1) < 0) || fd_set_nonblock(p_out[0], 1) < 0 ||
        fd_set_nonblock(p_err[0], 1) < 0 || fd_set_nonblock(p_rep[0], 1) < 0) {
        agent_send_error(a, id, PERR_INTERNAL, "pipe: %s", strerror(errno));
        goto out;
    }
    int64_t t0 = clock_now_ns();
    pid_t pid = fork();
    if (pid < 0) {
        /* The process cap (pids cgroup) is the usual reason. */
        agent_send_error(a, id, PERR_INTERNAL, "fork: %s", strerror(errno));
        goto out;
    }
    if (pid == 0) {
        int stdio[3] = {p_in[0] >= 0 ? p_in[0] : a->devnull, p_out[1], p_err[1]};
        exec_child(a, req.argv, envp, cwd, stdio, p_rep[1], req.flags & EXEC_BUILTIN);
    }
    agent_exec *e = cella_calloc(1, sizeof(*e));
    e->id = id;
    e->pid = pid;
    e->fd[0] = p_in[1];
    e->fd[1] = p_out[0];
    e->fd[2] = p_err[0];
    e->fd[EXEC_REPORT] = p_rep[0];
    p_in[1] = p_out[0] = p_err[0] = p_rep[0] = -1;
    e->cap[1] = req.stdout_cap;
    e->cap[2] = req.stderr_cap;
    e->windowed = req.flags & EXEC_OUTPUT_WINDOW;
    /* Start failures name the program; write-exec's is its fifth word. */
    bool write_exec = (req.flags & EXEC_BUILTIN) && !strcmp(req.argv[0], "write-exec") &&
                      cella_strv_len(req.argv) > 4;
    /* write-exec ends as the caller's program: it is killed with its process
     * group like any command, never merely cancelled (its children would
     * outlive the call). */
    e->builtin = (req.flags & EXEC_BUILTIN) && !write_exec;
    e->cmd = cella_strdup(req.argv[write_exec ? 4 : 0]);
    e->cwd = cella_strdup(cwd);
    cbuf_init(&e->stdin_buf);
    e->start_ns = t0;
    if (req.timeout_ms)
        e->deadline_ns = t0 + (int64_t)req.timeout_ms * 1000000;
    a->execs[slot] = e;
out:
    for (int i = 0; i < 2; i++) {
        int *fds[] = {&p_in[i], &p_out[i], &p_err[i], &p_rep[i]};
        for (int k = 0; k < 4; k++)
            if (*fds[k] >= 0)
                close(*fds[k]);
    }
    cella_strv_free(envp);
    proto_exec_free(&req);
}

void agent_exec_started(agent *a, int slot)
{
    agent_exec *e = a->execs[slot];
    struct child_report r;
    ssize_t n = read(e->fd[EXEC_REPORT], &r, sizeof(r));
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    close_fd(e, EXEC_REPORT);
    if (n != (ssize_t)sizeof(r)) {
        /* End of file: the exec happened (or the child died on the way,
         * which its exit status will tell). */
        uint8_t pidb[4];
        wire_le32(pidb, (uint32_t)e->pid);
        agent_send(a, PROTO_STARTED, 0, e->id, pidb, sizeof(pidb));
        return;
    }
    /* It never ran. exec-stage failures look like a shell's (exit 127 "not
     * found", 126 otherwise, message on stderr); earlier ones report
     * not-started with the reason. The child is reaped like any orphan. */
    proto_exit x = {.exit_code = -1, .duration_us = (uint64_t)(clock_now_ns() - e->start_ns) / 1000};
    char msg[512];
    if (r.stage == STAGE_EXEC) {
        int len = snprintf(msg, sizeof(msg), "exec: %s: %s\n", e->cmd,
                           r.errnum == ENOENT ? "not found" : strerror(r.errnum));
        size_t l = len < 0 ? 0 : (size_t)len < sizeof(msg) ? (size_t)len : sizeof(msg) - 1;
        agent_send(a, PROTO_OUTPUT, PROTO_STREAM_STDERR, e->id, msg, l);
        x.stderr_bytes = l;
        x.exit_code = r.errnum == ENOENT ? 127 : 126;
    } else {
        if (r.stage == STAGE_CHDIR)
            snprintf(msg, sizeof(msg), "workdir %s: %s", e->cwd, strerror(r.errnum));
        else if (r.stage == STAGE_WRITE)
            snprintf(msg, sizeof(msg), "write the program's file: %s", strerror(r.errnum));
        else
            snprintf(msg, sizeof(msg), "could not start as the sandbox user: %s",
                     strerror(r.errnum));
        x.flags = EXIT_NOT_STARTED;
        x.error = msg;
    }
    send_exit(a, e->id, &x);
    free_exec(a, slot);
}

static void send_ack(agent *a, agent_exec *e, uint32_t n, uint16_t flags)
{
    uint8_t b[4];
    wire_le32(b, n);
    agent_send(a, PROTO_STDIN_ACK, flags, e->id, b, sizeof(b));
}

/* The command will take no more stdin: drop what is queued, tell the parent. */
static void stdin_gone(agent *a, agent_exec *e, size_t taken)
{
    taken += cbuf_avail(&e->stdin_buf);
    cbuf_reset(&e->stdin_buf);
    close_fd(e, 0);
    e->stdin_closed = true;
    send_ack(a, e, (uint32_t)taken, PROTO_ACK_CLOSED);
}

void agent_exec_write_stdin(agent *a, agent_exec *e)
{
    size_t taken = 0;
    while (e->fd[0] >= 0 && cbuf_avail(&e->stdin_buf)) {
        ssize_t w = write(e->fd[0], cbuf_head(&e->stdin_buf), cbuf_avail(&e->stdin_buf));
        if (w > 0) {
            cbuf_consume(&e->stdin_buf, (size_t)w);
            taken += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN)
            break;
        stdin_gone(a, e, taken);    /* EPIPE: the command closed its stdin */
        return;
    }
    if (taken)
        send_ack(a, e, (uint32_t)taken, 0);
    if (e->stdin_eof && !cbuf_avail(&e->stdin_buf))
        close_fd(e, 0);
}

void agent_exec_stdin(agent *a, uint32_t id, uint16_t flags, const uint8_t *p, size_t n)
{
    agent_exec *e = agent_exec_find(a, id);
    if (!e)
        return;             /* it finished while the bytes were on their way */
    if (e->stdin_closed || e->fd[0] < 0) {
        if (n)
            send_ack(a, e, (uint32_t)n, PROTO_ACK_CLOSED);
        return;
    }
    if (cbuf_avail(&e->stdin_buf) + n > AGENT_STDIN_MAX) {
        /* The parent overran its window. Silently dropping bytes would hand
         * the command corrupt input; ending its stdin is the honest answer. */
        agent_send(a, PROTO_LOG, 0, id, "stdin window overrun: stdin closed", 34);
        stdin_gone(a, e, n);
        return;
    }
    cbuf_append(&e->stdin_buf, p, n);
    if (flags & PROTO_STDIN_EOF)
        e->stdin_eof = true;
    agent_exec_write_stdin(a, e);
}

/* A file operation killed outright would leave behind what it had not
 * yet undone: an atomic batch's hidden temporaries, named in the
 * workspace until its renames (fs_tar_extract.c). SIGTERM makes it fail
 * through its clean-up instead (fs_read_in); it is repeated, since one that
 * lands just before a blocking read is only seen at the next. Past
 * AGENT_CANCEL_GRACE_MS it is killed all the same. */
static void cancel(agent_exec *e, int64_t now)
{
    if (e->reaped)
        return;
    if (!e->cancel_ns)
        e->cancel_ns = now;
    if (now - e->cancel_ns >= (int64_t)AGENT_CANCEL_GRACE_MS * 1000000) {
        kill(-e->pid, SIGKILL);
        kill(e->pid, SIGKILL);
        return;
    }
    if (e->cancel_sent_ns && now - e->cancel_sent_ns < (int64_t)AGENT_CANCEL_REPEAT_MS * 1000000)
        return;
    e->cancel_sent_ns = now;
    kill(e->pid, SIGTERM);
}

void agent_exec_signal(agent *a, uint32_t id, const uint8_t *p, size_t n)
{
    agent_exec *e = agent_exec_find(a, id);
    wire_rd r;
    wire_rd_init(&r, p, n);
    uint32_t sig = wire_get_u32(&r);
    if (!e || e->reaped || !wire_rd_done(&r) || sig == 0 || sig >= _NSIG)
        return;
    if (e->builtin && sig == SIGKILL) {
        /* The parent abandons a file operation (its client went away):
         * cancel it, so that it can undo what it started, and kill it
         * only if it does not end within the grace (agent_exec_tick). */
        cancel(e, clock_now_ns());
        return;
    }
    if (kill(-e->pid, (int)sig) < 0)
        kill(e->pid, (int)sig);
}

bool agent_exec_window_full(const agent_exec *e)
{
    return e->windowed && e->kept[1] - e->acked >= PROTO_OUTPUT_WINDOW;
}

void agent_exec_output_ack(agent *a, uint32_t id, const uint8_t *p, size_t n)
{
    agent_exec *e = agent_exec_find(a, id);
    wire_rd r;
    wire_rd_init(&r, p, n);
    uint32_t k = wire_get_u32(&r);
    if (!e || !wire_rd_done(&r))
        return;
    /* Never past what was sent: a confused parent cannot open the window wider. */
    e->acked = e->acked + k > e->kept[1] ? e->kept[1] : e->acked + k;
}

void agent_exec_pump(agent *a, agent_exec *e, int s)
{
    static uint8_t scratch[64 << 10];
    for (int round = 0; round < 16 && e->fd[s] >= 0; round++) {
        ssize_t r;
        if (s == 1 && agent_exec_window_full(e))
            return;               /* the parent's ack reopens it */
        if (e->kept[s] < e->cap[s]) {
            uint64_t room = e->cap[s] - e->kept[s];
            if (s == 1 && e->windowed && room > PROTO_OUTPUT_WINDOW - (e->kept[1] - e->acked))
                room = PROTO_OUTPUT_WINDOW - (e->kept[1] - e->acked);
            size_t want = room < PROTO_CHUNK ? (size_t)room : PROTO_CHUNK;
            /* Read straight into the outgoing frame: output is copied once. */
            uint8_t *p = proto_reserve_frame(&a->out, want);
            r = read(e->fd[s], p, want);
            if (r > 0) {
                proto_commit_frame(&a->out, PROTO_OUTPUT, (uint16_t)s, e->id, (size_t)r);
                e->kept[s] += (uint64_t)r;
            }
        } else {
            /* Over the cap: count and discard, without copying if possible. */
            r = splice(e->fd[s], NULL, a->devnull, NULL, 1 << 20, SPLICE_F_NONBLOCK);
            if (r < 0 && errno == EINVAL)
                r = read(e->fd[s], scratch, sizeof(scratch));
        }
        if (r > 0) {
            e->total[s] += (uint64_t)r;
            if (agent_throttled(a))
                return;
            continue;
        }
        if (r < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        close_fd(e, s);     /* EOF, or an error that ends this stream */
    }
}

void agent_reap(agent *a)
{
    for (;;) {
        int status;
        struct rusage ru;
        pid_t p = wait4(-1, &status, WNOHANG, &ru);
        if (p <= 0)
            return;
        /* A file operation killed half-way leaves no quota reservation. */
        fs_quota_reaped(p);
        for (int i = 0; i < AGENT_MAX_EXECS; i++) {
            agent_exec *e = a->execs[i];
            if (e && e->pid == p && !e->reaped) {
                e->reaped = true;
                e->status = status;
                e->ru = ru;
                e->end_ns = clock_now_ns();
            }
        }
    }
}

static uint64_t tv_us(struct timeval tv)
{
    return (uint64_t)tv.tv_sec * 1000000 + (uint64_t)tv.tv_usec;
}

/* Closes an output stream for good; bytes still in it count as produced
 * and not kept, so the result says truncated. */
static void abandon_stream(agent_exec *e, int s)
{
    int left = 0;
    if (e->fd[s] >= 0 && ioctl(e->fd[s], FIONREAD, &left) == 0 && left > 0)
        e->total[s] += (uint64_t)left;
    close_fd(e, s);
}

static void finish(agent *a, int slot)
{
    agent_exec *e = a->execs[slot];
    abandon_stream(e, 1);
    abandon_stream(e, 2);
    proto_exit x = {
        .exit_code = WIFEXITED(e->status) ? WEXITSTATUS(e->status) : -1,
        .signal = WIFSIGNALED(e->status) ? WTERMSIG(e->status) : 0,
        .stdout_bytes = e->total[1],
        .stderr_bytes = e->total[2],
        .duration_us = (uint64_t)(e->end_ns - e->start_ns) / 1000,
        .user_us = tv_us(e->ru.ru_utime),
        .sys_us = tv_us(e->ru.ru_stime),
        .max_rss_kb = (uint64_t)e->ru.ru_maxrss,
    };
    if (e->timed_out)
        x.flags |= EXIT_TIMED_OUT;
    if (e->total[1] > e->kept[1])
        x.flags |= EXIT_STDOUT_TRUNCATED;
    if (e->total[2] > e->kept[2])
        x.flags |= EXIT_STDERR_TRUNCATED;
    send_exit(a, e->id, &x);
    free_exec(a, slot);
}

static int ms_until(int64_t t, int64_t now)
{
    int64_t ms = (t - now + 999999) / 1000000;
    return ms < 0 ? 0 : ms > INT_MAX ? INT_MAX : (int)ms;
}

int agent_exec_tick(agent *a, int slot, int64_t now)
{
    agent_exec *e = a->execs[slot];
    int64_t since = e->last_tick_ns ? now - e->last_tick_ns : 0;
    e->last_tick_ns = now;
    if (!e->reaped && e->deadline_ns && !e->timed_out && now >= e->deadline_ns) {
        /* Time is up: the whole process group goes, not just its leader.
         * A file operation is cancelled first, so that an atomic batch can
         * remove its temporaries (killed within the grace all the same). */
        e->timed_out = true;
        if (e->builtin) {
            cancel(e, now);
        } else {
            kill(-e->pid, SIGKILL);
            kill(e->pid, SIGKILL);
        }
    }
    if (e->cancel_ns && !e->reaped) {
        cancel(e, now);
        return AGENT_CANCEL_REPEAT_MS;
    }
    if (!e->reaped || e->fd[EXEC_REPORT] >= 0)
        return e->deadline_ns && !e->timed_out && !e->reaped ? ms_until(e->deadline_ns, now) : -1;
    if (e->fd[1] >= 0 || e->fd[2] >= 0) {
        /* Exited, but something (a background child) still holds its output:
         * give it a moment, then answer with what we have. The moment counts
         * only while the parent keeps up: a throttled queue pauses it, so
         * output already written is not lost to a slow reader. */
        if (!e->drain_deadline_ns)
            e->drain_deadline_ns = now + (int64_t)AGENT_DRAIN_GRACE_MS * 1000000;
        else if (agent_throttled(a) || agent_exec_window_full(e))
            e->drain_deadline_ns += since;
        if (now < e->drain_deadline_ns)
            return agent_throttled(a) || agent_exec_window_full(e)
                       ? -1 : ms_until(e->drain_deadline_ns, now);
    }
    finish(a, slot);
    return -1;
}

void agent_exec_parent_gone(agent *a)
{
    /* Nobody reads their output any more: an operation blocked writing it
     * (a download) meets EPIPE and ends. Stdin stays open until each is
     * gone: EOF would read as the end of a body of unknown length and
     * commit what had come so far. */
    for (int i = 0; i < AGENT_MAX_EXECS; i++) {
        agent_exec *e = a->execs[i];
        if (!e)
            continue;
        close_fd(e, 1);
        close_fd(e, 2);
        if (!e->reaped && !e->builtin) {
            kill(-e->pid, SIGKILL);
            kill(e->pid, SIGKILL);
        }
    }
    for (;;) {
        agent_reap(a);
        int64_t now = clock_now_ns();
        bool left = false;
        for (int i = 0; i < AGENT_MAX_EXECS; i++) {
            agent_exec *e = a->execs[i];
            if (e && !e->reaped && e->builtin) {
                cancel(e, now);   /* a SIGKILL once the grace is over */
                left = true;
            }
        }
        if (!left)
            break;
        struct pollfd p = {.fd = a->sigfd, .events = POLLIN};
        if (poll(&p, 1, AGENT_CANCEL_REPEAT_MS) > 0) {
            struct signalfd_siginfo si;
            while (read(a->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
                ;
        }
    }
}
