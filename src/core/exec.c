/* Execs: the per-sandbox cap, the idle clock, the timeout policy, and the
 * translation of the agent's answers into results and S-codes. And
 * one-shot runs, which are a create, a few writes, an exec and a stop. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "core/core_int.h"
#include "util/alloc.h"
#include "util/fdio.h"
#include "util/log.h"

struct core_exec {
    sandbox *s;
    bool fs_call;
    mux_exec *mx;
    uint64_t timeout_ms;
    int64_t started_ns;
    int64_t deadline_ns;          /* the agent must have answered by then */
    bool hung;
};

int core_exec_start(sandbox *s, const core_exec_req *r, core_exec **out, core_error *e)
{
    core *c = s->c;
    const cella_config *cfg = c->cfg;
    if (!r->argv || !r->argv[0] || !r->argv[0][0])
        return core_fail(e, S001, "invalid request: empty command");
    if (r->has_timeout && r->timeout_ms == 0)
        return core_fail(e, S001, "invalid request: timeout_ms must be at least 1");
    uint64_t timeout = r->has_timeout ? r->timeout_ms : cfg->default_exec_timeout_ms;
    if (timeout > cfg->max_exec_timeout_ms)
        timeout = cfg->max_exec_timeout_ms;
    if (r->no_timeout)
        timeout = 0;

    pthread_mutex_lock(&c->mu);
    int rc = 0;
    if (c->draining)
        rc = core_fail(e, S301, "the daemon is shutting down");
    else if (s->stopped)
        rc = core_fail(e, S004, "sandbox already stopped: %s", s->id.str);
    else if (s->dead)
        rc = core_fail(e, S004, "sandbox already stopped: %s (%s)", s->id.str, s->dead_reason);
    else if (r->fs_call && s->fs_calls >= CORE_FS_MAX_CALLS)
        rc = core_fail(e, S003, "sandbox %s has %u file operations running; wait for one to "
                       "finish", s->id.str, CORE_FS_MAX_CALLS);
    else if (!r->fs_call && s->execs >= cfg->max_execs_per_sandbox)
        rc = core_fail(e, S003, "sandbox %s is at its exec concurrency cap", s->id.str);
    if (rc == 0) {
        if (r->fs_call)
            s->fs_calls++;
        else
            s->execs++;
        s->refs++;
        c->execs_running++;
        s->last_used_ns = clock_now_ns();
    }
    pthread_mutex_unlock(&c->mu);
    if (rc < 0)
        return -1;

    /* The sandbox's own environment first, the request's over it. */
    size_t ns = cella_strv_len(s->env), nr = r->env ? cella_strv_len(r->env) : 0;
    char **env = cella_calloc(ns + nr + 1, sizeof(char *));
    for (size_t i = 0; i < ns; i++)
        env[i] = s->env[i];
    for (size_t i = 0; i < nr; i++)
        env[ns + i] = r->env[i];
    proto_exec pe = {
        .argv = (char **)r->argv,
        .env = env,
        .cwd = (char *)(r->workdir ? r->workdir : ""),
        .timeout_ms = timeout,
        .stdout_cap = r->window ? UINT64_MAX : r->fs_call ? CORE_FS_RESULT_MAX
                                                          : cfg->output_limit_bytes,
        .stderr_cap = cfg->output_limit_bytes,
        .flags = r->builtin ? EXEC_BUILTIN : 0,
    };
    mux_exec_req mr = {
        .exec = &pe,
        .stdin_data = r->stdin_data,
        .stdin_len = r->stdin_len,
        .has_stdin = r->has_stdin,
        .stream = r->stream,
        .window = r->window,
        .stdin_stream = r->stdin_stream,
    };
    core_exec *x = cella_calloc(1, sizeof(*x));
    x->s = s;
    x->fs_call = r->fs_call;
    x->timeout_ms = timeout;
    x->started_ns = clock_now_ns();
    x->deadline_ns = timeout ? x->started_ns + (int64_t)(timeout + CORE_AGENT_GRACE_MS) * 1000000
                             : INT64_MAX;
    cella_err err;
    rc = mux_exec_start(s->mux, &mr, &x->mx, &err);
    cella_free(env);
    if (rc < 0) {
        core_exec_end(x);
        return core_fail(e, S004, "sandbox already stopped: %s (%s)", s->id.str, err.msg);
    }
    *out = x;
    return 0;
}

int core_exec_wait(core_exec *x, int client_fd, int timeout_ms)
{
    if (x->hung)
        return MUX_DONE;
    int64_t left = (x->deadline_ns - clock_now_ns()) / 1000000;
    /* An answer already here wins over the deadline: a slow reader of a
     * stream must not turn a finished exec into a wedged agent. */
    int now = left <= 0 ? mux_exec_wait(x->mx, -1, 0) : 0;
    if (now)
        return now;
    if (left <= 0) {
        /* The agent kills on time; not answering long after means it is wedged. */
        x->hung = true;
        return MUX_DONE;
    }
    int t = timeout_ms < 0 || left < timeout_ms ? (int)(left > 1 << 30 ? 1 << 30 : left) : timeout_ms;
    int f = mux_exec_wait(x->mx, client_fd, t);
    return f;
}

struct mux_exec *core_exec_mux(core_exec *x)
{
    return x->mx;
}

bool core_exec_take(core_exec *x, int *stream, cbuf *out)
{
    return mux_exec_take(x->mx, stream, out);
}

static void count_exec(const core_exec *x, const core_exec_result *res, bool failed,
                       int64_t dur_ns)
{
    if (x->fs_call)
        return;                   /* file operations are not execs in the metrics */
    core *c = x->s->c;
    pthread_mutex_lock(&c->mu);
    if (failed)
        c->m.execs_failed++;
    else if (res->timed_out)
        c->m.execs_timed_out++;
    else if (res->has_exit_code && res->exit_code == 0)
        c->m.execs_ok++;
    else
        c->m.execs_nonzero++;
    if (!failed && res->oom_killed)
        c->m.oom_kills++;
    double secs = (double)dur_ns / 1e9;
    int b = 0;
    while (b < CORE_EXEC_BUCKETS && secs > core_exec_bucket_secs[b])
        b++;
    c->m.exec_hist[b]++;
    c->m.exec_sum_secs += secs;
    pthread_mutex_unlock(&c->mu);
}

int core_exec_finish(core_exec *x, core_exec_result *res, core_error *e)
{
    memset(res, 0, sizeof(*res));
    for (int i = 0; i < 3; i++)
        cbuf_init(&res->out[i]);
    sandbox *s = x->s;
    int64_t dur = clock_now_ns() - x->started_ns;
    if (x->hung) {
        count_exec(x, res, true, dur);
        return core_fail(e, S302, "sandbox %s: its agent stopped answering", s->id.str);
    }
    mux_result mr;
    cella_err err;
    if (mux_exec_result(x->mx, &mr, &err) < 0) {
        count_exec(x, res, true, dur);
        switch (mr.refused) {
        case PERR_BUSY:
            return core_fail(e, S003, "sandbox %s is at its exec concurrency cap", s->id.str);
        case PERR_BAD_REQUEST:
            return core_fail(e, S001, "invalid request: %s", err.msg);
        case PERR_INTERNAL:
            /* fork failing is the process limit (pids cgroup) nearly always. */
            if (err.errnum == EAGAIN || strstr(err.msg, "fork"))
                return core_fail(e, S400, "resource limit exceeded: the sandbox cannot start "
                                          "another process (%s)", err.msg);
            return core_fail(e, S302, "sandbox %s: %s", s->id.str, err.msg);
        case 0:
            return core_fail(e, S004, "sandbox already stopped: %s (%s)", s->id.str, err.msg);
        default:
            return core_fail(e, S302, "sandbox %s: %s", s->id.str, err.msg);
        }
    }
    const proto_exit *px = &mr.exit;
    if (px->flags & EXIT_NOT_STARTED) {
        count_exec(x, res, true, dur);
        const char *msg = px->error ? px->error : "the command could not start";
        int rc = !strncmp(msg, "workdir", 7) ? core_fail(e, S001, "invalid request: %s", msg)
                 : !strncmp(msg, "write", 5) ? core_fail(e, S216, "%s", msg)
                                              : core_fail(e, S400, "resource limit exceeded: %s", msg);
        mux_result_free(&mr);
        return rc;
    }
    res->timed_out = px->flags & EXIT_TIMED_OUT;
    res->timeout_ms = x->timeout_ms;
    res->signal = px->signal;
    if (res->timed_out) {
        res->has_exit_code = true;
        res->exit_code = 124;     /* timeout(1)'s convention */
    } else if (px->signal == 0 && px->exit_code >= 0) {
        res->has_exit_code = true;
        res->exit_code = px->exit_code;
    }
    res->duration_ms = px->duration_us / 1000;
    res->stdout_truncated = px->flags & EXIT_STDOUT_TRUNCATED;
    res->stderr_truncated = px->flags & EXIT_STDERR_TRUNCATED;
    res->oom_killed = mr.oom_killed;
    for (int i = 1; i < 3; i++) {
        res->out[i] = mr.out[i];
        cbuf_init(&mr.out[i]);
    }
    mux_result_free(&mr);
    count_exec(x, res, false, dur);
    return 0;
}

void core_exec_end(core_exec *x)
{
    if (!x)
        return;
    mux_exec_free(x->mx);
    sandbox *s = x->s;
    core *c = s->c;
    pthread_mutex_lock(&c->mu);
    if (x->fs_call)
        s->fs_calls--;
    else
        s->execs--;
    s->last_used_ns = clock_now_ns();
    c->execs_running--;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    sandbox_unref(s);
    cella_free(x);
}

void core_exec_result_free(core_exec_result *r)
{
    for (int i = 0; i < 3; i++)
        cbuf_free(&r->out[i]);
}

int core_exec_run(sandbox *s, const core_exec_req *r, int client_fd, core_exec_result *res,
                  core_error *e)
{
    core_exec *x;
    if (core_exec_start(s, r, &x, e) < 0)
        return -1;
    for (;;) {
        int f = core_exec_wait(x, client_fd, -1);
        if (f & MUX_DONE)
            break;
        if (f & MUX_CLIENT_GONE) {
            /* Nobody is waiting for the answer: the command goes. */
            core_exec_end(x);
            return core_fail(e, S218, "the client went away; the command was killed");
        }
    }
    int rc = core_exec_finish(x, res, e);
    core_exec_end(x);
    return rc;
}

/* ---- one-shot runs -------------------------------------------------------- */

/* Code up to this size travels inside the exec request. */
#define RUN_INLINE_CODE_MAX (1u << 20)

static const struct {
    const char *names[3];
    const char *interp, *ext;
} langs[] = {
    {{"node", "js", "javascript"}, "node", "js"},
    {{"python", "py", NULL}, "python3", "py"},
    {{"shell", "sh", "bash"}, "/bin/sh", "sh"},
};

int core_fs_feed(sandbox *s, const char *op, const char *path, const char *arg1,
                 const char *arg2, const uint8_t *data, size_t n, int client_fd, core_error *e)
{
    char *pa = cella_asprintf("path=%s", path);
    char *args[] = {pa, (char *)arg1, (char *)arg2, NULL};
    core_fs_req r = {.op = op, .args = args, .has_stdin = true, .stdin_data = data,
                     .stdin_len = n};
    cbuf out;
    cbuf_init(&out);
    int rc = core_fs(s, &r, client_fd, &out, e);
    cbuf_free(&out);
    cella_free(pa);
    return rc;
}

int core_write_in_sandbox(sandbox *s, const char *path, const uint8_t *data, size_t n,
                          int client_fd, core_error *e)
{
    return core_fs_feed(s, "write", path, "mode=0644", "parents=1", data, n, client_fd, e);
}

int core_run_step_failed(core_error *e, const char *step, const char *sid)
{
    char ctx[96], code[8];
    snprintf(ctx, sizeof(ctx), "during sandbox::run step `%s`", step);
    snprintf(code, sizeof(code), "%s", core_code_lookup(e->code)->name);
    core_fix_str(e, "context", ctx);
    core_fix_str(e, "sandbox_id", sid ? sid : "");
    core_fix_str(e, "inner_code", code);
    return -1;
}

const char *core_run_interp(const char *lang, const char **ext)
{
    *ext = "txt";
    for (size_t i = 0; i < sizeof(langs) / sizeof(langs[0]); i++)
        for (int k = 0; k < 3 && langs[i].names[k]; k++)
            if (!strcmp(lang, langs[i].names[k])) {
                *ext = langs[i].ext;
                return langs[i].interp;
            }
    return lang;
}

int core_run(core *c, const char *tenant, const core_run_req *r, int client_fd,
             core_exec_result *res, char *sandbox_id_out, core_error *e)
{
    sandbox_id_out[0] = '\0';
    const char *ext, *interp = core_run_interp(r->lang, &ext);
    /* The env is the sandbox's, so its names are checked in the create step. */
    core_create_req cr = {.image = r->image, .env = r->env, .ephemeral = !r->keep_sandbox};
    sandbox *s;
    if (core_create(c, tenant, &cr, &s, e) < 0)
        return core_run_step_failed(e, "create", NULL);
    int rc = -1;
    for (size_t i = 0; i < r->n_files; i++)
        if (core_write_in_sandbox(s, r->files[i].path, r->files[i].content, r->files[i].len,
                                  client_fd, e) < 0) {
            core_run_step_failed(e, "write", sandbox_id(s));
            goto out;
        }
    char code_path[32];
    snprintf(code_path, sizeof(code_path), "/tmp/run.%s", ext);
    /* Code of ordinary size rides in the exec itself (write-exec: the agent
     * writes the file and execs the interpreter, one round trip); larger
     * code is streamed in first. */
    bool inline_code = r->code_len <= RUN_INLINE_CODE_MAX && !memchr(r->code, '\0', r->code_len);
    if (!inline_code &&
        core_write_in_sandbox(s, code_path, (const uint8_t *)r->code, r->code_len, client_fd,
                              e) < 0) {
        core_run_step_failed(e, "write", sandbox_id(s));
        goto out;
    }
    char *inline_argv[] = {"write-exec", code_path, "0644", (char *)r->code, (char *)interp,
                           code_path, NULL};
    char *argv[] = {(char *)interp, code_path, NULL};
    core_exec_req xr = {
        .argv = inline_code ? inline_argv : argv,
        .builtin = inline_code,
        .has_timeout = r->has_timeout,
        .timeout_ms = r->timeout_ms,
        .has_stdin = r->has_stdin,
        .stdin_data = r->stdin_data,
        .stdin_len = r->stdin_len,
    };
    if (core_exec_run(s, &xr, client_fd, res, e) < 0) {
        core_run_step_failed(e, e->code == S216 ? "write" : "exec", sandbox_id(s));
        goto out;
    }
    rc = 0;
out:
    snprintf(sandbox_id_out, 40, "%s", sandbox_id(s));
    if (!r->keep_sandbox)
        core_stop(c, NULL, sandbox_id(s), false, NULL);
    sandbox_unref(s);
    return rc;
}
