#include "core/code_worker.h"

#include <errno.h>
#include <grp.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/code_wire.h"
#include "util/alloc.h"
#include "util/buf.h"

/* The unprivileged identity a worker started by root takes: a seccomp bypass
 * would leave an attacker as nobody, not root. */
#define CODE_WORKER_UID 65534
#define CODE_WORKER_GID 65534

typedef struct wrun {
    uint32_t handle;
    code_run *r;
} wrun;

typedef struct worker {
    wrun runs[CODE_WORKER_MAX_RUNS];
    size_t n;
    cbuf in, out;
} worker;

static wrun *find(worker *w, uint32_t handle)
{
    for (size_t i = 0; i < w->n; i++)
        if (w->runs[i].handle == handle)
            return &w->runs[i];
    return NULL;
}

static void drop(worker *w, wrun *x)
{
    code_run_free(x->r);
    *x = w->runs[--w->n];
}

/* Sends m; a daemon that went away ends the worker. False when m was too
 * big to send and a FAIL went instead. */
static bool send_msg(worker *w, const code_wire_msg *m)
{
    bool sent = true;
    cbuf_reset(&w->out);
    if (code_wire_encode(m, &w->out) < 0) {
        sent = false;
        /* Too big to send (a result or output past the frame limit): the
         * step becomes an error the caller can read. */
        code_wire_msg f = {.type = CW_FAIL};
        f.err_type = (code_wire_str){"MemoryError", 11};
        static const char why[] = "the step's answer is larger than the worker may send";
        f.err_msg = (code_wire_str){why, sizeof(why) - 1};
        cbuf_reset(&w->out);
        code_wire_encode(&f, &w->out);
    }
    if (code_wire_write(CODE_WORKER_FD, &w->out) < 0)
        _exit(0);
    return sent;
}

static void send_fail(worker *w, const char *type, const char *msg)
{
    code_wire_msg f = {.type = CW_FAIL};
    f.err_type = (code_wire_str){type, strlen(type)};
    f.err_msg = (code_wire_str){msg, strlen(msg)};
    (void)send_msg(w, &f);
}

static void send_error_step(worker *w, const code_error *e)
{
    code_step st = {.kind = CODE_STEP_ERROR, .error = *e};
    code_wire_msg m;
    code_wire_from_step(&m, &st, true, 0);
    (void)send_msg(w, &m);
    code_wire_msg_free(&m);
}

/* Answers a step; a run that ended is freed, a paused one kept. */
static void send_step(worker *w, const code_wire_msg *req, code_run *r, code_step *st)
{
    bool done = code_run_done(r);
    code_wire_msg m;
    code_wire_from_step(&m, st, done, req->out_max);
    /* A step too big to send ends the run: the daemon was told it failed. */
    if (!send_msg(w, &m))
        done = true;
    code_wire_msg_free(&m);
    code_step_clear(st);
    wrun *x = find(w, req->handle);
    if (done) {
        if (x)
            drop(w, x);
        else
            code_run_free(r);
    } else if (!x) {
        w->runs[w->n++] = (wrun){req->handle, r};
    }
}

static void on_run(worker *w, const code_wire_msg *m, bool load)
{
    if (find(w, m->handle) || w->n == CODE_WORKER_MAX_RUNS) {
        send_fail(w, "InternalError", find(w, m->handle) ? "handle in use" : "too many runs");
        return;
    }
    code_run_opts o = {
        .limits = m->limits,
        .inputs = m->inputs,
        .ninputs = m->ninputs,
        .functions = m->has_functions ? m->functions : NULL,
        .nfunctions = m->has_functions ? m->nfunctions : 0,
        .top_level_await = m->top_level_await,
    };
    code_run *r = NULL;
    code_error err = {0};
    code_step st = {0};
    if (load) {
        if (code_run_load(m->bytes.p, m->bytes.n, &o, &r, &st, &err) < 0) {
            send_error_step(w, &err);
            return;
        }
    } else {
        if (code_run_new(m->code.p, m->code.n, &o, &r, &err) < 0) {
            send_error_step(w, &err);
            return;
        }
        code_run_start(r, &st);
    }
    send_step(w, m, r, &st);
}

static void on_resume(worker *w, const code_wire_msg *m)
{
    wrun *x = find(w, m->handle);
    if (!x) {
        send_fail(w, "InternalError", "no run with that handle");
        return;
    }
    code_step st = {0};
    code_run_resume(x->r, m->results, m->nresults, &st);
    send_step(w, m, x->r, &st);
}

static void on_dump(worker *w, const code_wire_msg *m)
{
    wrun *x = find(w, m->handle);
    if (!x) {
        send_fail(w, "InternalError", "no run with that handle");
        return;
    }
    char *buf = NULL;
    size_t len = 0;
    code_error err = {0};
    if (code_run_dump(x->r, &buf, &len, &err) < 0) {
        send_fail(w, err.type ? err.type : "InternalError", err.msg);
        return;
    }
    code_wire_msg d = {.type = CW_DUMPED, .bytes = {buf, len}};
    /* The string convention wants a NUL after the bytes: the encoder adds it. */
    (void)send_msg(w, &d);
    free(buf);
}

static void serve(worker *w)
{
    for (;;) {
        int rc = code_wire_read(CODE_WORKER_FD, &w->in, CODE_WIRE_MAX_FRAME, 0);
        if (rc != 0)
            _exit(rc == 1 ? 0 : 3);   /* the daemon closed the socket, or broke the framing */
        code_wire_msg m;
        const char *why = NULL;
        if (code_wire_decode(cbuf_head(&w->in), cbuf_avail(&w->in), &m, &why) < 0) {
            send_fail(w, "InternalError", why);
            continue;
        }
        switch (m.type) {
        case CW_RUN: on_run(w, &m, false); break;
        case CW_LOAD: on_run(w, &m, true); break;
        case CW_RESUME: on_resume(w, &m); break;
        case CW_DUMP: on_dump(w, &m); break;
        case CW_FREE: {
            wrun *x = find(w, m.handle);
            if (x)
                drop(w, x);
            code_wire_msg ok = {.type = CW_OK, .handle = m.handle};
            (void)send_msg(w, &ok);
            break;
        }
        default:
            send_fail(w, "InternalError", "not a request");
            break;
        }
        code_wire_msg_free(&m);
    }
}

/* ---- the sandbox ------------------------------------------------------------ */

static int set_limit(int res, rlim_t v, cella_err *err)
{
    struct rlimit rl = {v, v};
    if (setrlimit(res, &rl) < 0)
        return cella_err_set(err, errno, "setrlimit(%d)", res);
    return 0;
}

static int confine(uint64_t as_bytes, pid_t ppid, cella_err *err)
{
    /* Nothing of the daemon's survives but the socket: its stdio (the
     * daemon's log) included. */
    if (syscall(SYS_close_range, CODE_WORKER_FD + 1, ~0u, 0) < 0)
        return cella_err_set(err, errno, "close_range");
    for (int fd = 0; fd < CODE_WORKER_FD; fd++)
        close(fd);
    /* A write to a closed socket is an error to see, not a signal. */
    signal(SIGPIPE, SIG_IGN);
    /* RLIMIT_CORE 1, not 0: a core_pattern that pipes to a helper ignores
     * the limit except the value 1, which the kernel refuses to dump at all
     * (as the agent does, agent/setup.c); with PR_SET_DUMPABLE 0 below, a
     * crash runs no host helper whatever suid_dumpable says. */
    if (set_limit(RLIMIT_CORE, 1, err) < 0 ||
        set_limit(RLIMIT_NOFILE, CODE_WORKER_FD + 1, err) < 0 ||
        set_limit(RLIMIT_FSIZE, 0, err) < 0 || set_limit(RLIMIT_NPROC, 0, err) < 0 ||
        set_limit(RLIMIT_MEMLOCK, 0, err) < 0)
        return -1;
#ifndef CELLA_SANITIZE
    /* The sanitizers reserve terabytes of shadow address space. */
    if (as_bytes && set_limit(RLIMIT_AS, as_bytes, err) < 0)
        return -1;
#endif
    if (geteuid() == 0) {
        /* RLIMIT_NPROC is not enforced for root, and root's seccomp
         * bypass would be root's; the filter forbids these calls later. */
        if (setgroups(0, NULL) < 0 ||
            setresgid(CODE_WORKER_GID, CODE_WORKER_GID, CODE_WORKER_GID) < 0 ||
            setresuid(CODE_WORKER_UID, CODE_WORKER_UID, CODE_WORKER_UID) < 0)
            return cella_err_set(err, errno, "drop root");
    }
    /* Dies with the daemon's pool thread, which started it: a worker stuck
     * in a loop must not outlive the daemon. After the identity change,
     * which clears it; then the parent is checked, in case it died first. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
        return cella_err_set(err, errno, "PR_SET_PDEATHSIG");
    if (ppid && getppid() != ppid)
        return cella_err_set(err, 0, "the daemon is gone");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return cella_err_set(err, errno, "PR_SET_NO_NEW_PRIVS");
    /* No core dumps, no ptrace by other processes of the same uid. */
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
        return cella_err_set(err, errno, "PR_SET_DUMPABLE");
    struct sock_fprog prog = {
        .len = (unsigned short)(code_seccomp_bpf_len / sizeof(struct sock_filter)),
        .filter = (struct sock_filter *)(uintptr_t)code_seccomp_bpf,
    };
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
        return cella_err_set(err, errno, "load the seccomp filter");
    return 0;
}

int code_worker_main(int argc, char **argv)
{
    uint64_t as_bytes = 0;
    pid_t ppid = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--as-bytes") && i + 1 < argc)
            as_bytes = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--ppid") && i + 1 < argc)
            ppid = (pid_t)atoi(argv[++i]);
        else {
            fprintf(stderr, "cella code-worker: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    struct stat sb;
    if (fstat(CODE_WORKER_FD, &sb) < 0 || !S_ISSOCK(sb.st_mode)) {
        fprintf(stderr, "cella code-worker: started by cella serve only (fd %d must be its "
                        "socket)\n", CODE_WORKER_FD);
        return 2;
    }
    worker *w = cella_calloc(1, sizeof(*w));
    cbuf_init(&w->in);
    cbuf_init(&w->out);
    cella_err err;
    if (confine(as_bytes, ppid, &err) < 0) {
        /* Unconfined, it must not serve: say why (the daemon logs it). */
        send_fail(w, "InternalError", err.msg);
        _exit(1);
    }
    code_wire_msg ready = {.type = CW_READY};
    (void)send_msg(w, &ready);
    serve(w);
    _exit(0);
}
