#include "api/native.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/jsonin.h"
#include "api/run_typed.h"
#include "box/mux.h"
#include "core/code_pool.h"
#include "util/alloc.h"
#include "util/text.h"

static http_server *server;

void api_native_set_server(http_server *s)
{
    server = s;
}

/* ---- helpers ------------------------------------------------------------- */

json_t *api_text_json(const cbuf *b)
{
    cbuf t;
    cbuf_init(&t);
    utf8_lossy(&t, cbuf_head(b), cbuf_avail(b));
    json_t *s = json_stringn(t.data ? (const char *)cbuf_head(&t) : "", cbuf_avail(&t));
    cbuf_free(&t);
    return s;
}

/* Text that may hold bytes from outside (paths in messages), as valid UTF-8. */
static json_t *text_json_str(const char *s)
{
    cbuf b;
    cbuf_init(&b);
    cbuf_append(&b, s, strlen(s));
    json_t *j = api_text_json(&b);
    cbuf_free(&b);
    return j;
}

static json_t *time_json(int64_t ms)
{
    char buf[40];
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    size_t n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, sizeof(buf) - n, ".%03dZ", (int)(ms % 1000));
    return json_string(buf);
}

static json_t *info_json(const sandbox_info *i, bool with_tenant)
{
    json_t *o = json_object();
    json_object_set_new(o, "sandbox_id", json_string(i->id));
    json_object_set_new(o, "name", i->has_name ? json_string(i->name) : json_null());
    json_object_set_new(o, "image", json_string(i->image));
    json_object_set_new(o, "age_secs", json_integer((json_int_t)i->age_secs));
    json_object_set_new(o, "exec_in_progress", json_boolean(i->execs_in_flight > 0));
    json_object_set_new(o, "exec_in_flight", json_integer(i->execs_in_flight));
    json_object_set_new(o, "exec_slots_free", json_integer(i->exec_slots_free));
    json_object_set_new(o, "stopped", json_boolean(i->dead));
    json_object_set_new(o, "state", json_string(i->dead ? "dead" : "running"));
    if (i->dead)
        json_object_set_new(o, "dead_reason", text_json_str(i->dead_reason));
    json_object_set_new(o, "cpus", json_real(i->cpus_milli / 1000.0));
    json_object_set_new(o, "memory_mb", json_integer((json_int_t)i->memory_mb));
    json_object_set_new(o, "idle_timeout_secs", json_integer((json_int_t)i->idle_timeout_secs));
    json_object_set_new(o, "created_at", time_json(i->created_at_ms));
    json_object_set_new(o, "last_used_at", time_json(i->last_used_at_ms));
    if (with_tenant)
        json_object_set_new(o, "tenant", json_string(i->tenant));
    return o;
}

static json_t *result_json(const core_exec_result *r, bool with_output)
{
    json_t *o = json_object();
    if (with_output) {
        json_object_set_new(o, "stdout", api_text_json(&r->out[1]));
        json_object_set_new(o, "stderr", api_text_json(&r->out[2]));
    }
    json_object_set_new(o, "exit_code", r->has_exit_code ? json_integer(r->exit_code) : json_null());
    json_object_set_new(o, "timed_out", json_boolean(r->timed_out));
    json_object_set_new(o, "duration_ms", json_integer((json_int_t)r->duration_ms));
    json_object_set_new(o, "success",
                        json_boolean(r->has_exit_code && r->exit_code == 0 && !r->timed_out));
    json_object_set_new(o, "truncated", json_boolean(r->stdout_truncated || r->stderr_truncated));
    json_object_set_new(o, "stdout_truncated", json_boolean(r->stdout_truncated));
    json_object_set_new(o, "stderr_truncated", json_boolean(r->stderr_truncated));
    if (r->signal && !r->timed_out)
        json_object_set_new(o, "signal", json_integer(r->signal));
    if (r->oom_killed)
        json_object_set_new(o, "oom_killed", json_true());
    return o;
}

json_t *api_exec_result_json(const core_exec_result *r)
{
    return result_json(r, true);
}

static bool wants_true(const char *v)
{
    return v && (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes"));
}

/* ---- health, metrics, catalog --------------------------------------------- */

static void h_healthz(http_ctx *c)
{
    http_reply_json(c, 200, json_pack("{s:s}", "status", "ok"));
}

static void h_readyz(http_ctx *c)
{
    bool ready = core_ready(c->core);
    http_reply_json(c, ready ? 200 : 503, json_pack("{s:s}", "status", ready ? "ready" : "not ready"));
}

static void metric(cbuf *b, const char *name, const char *type, const char *help)
{
    char line[256];
    int n = snprintf(line, sizeof(line), "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
    cbuf_append(b, line, (size_t)n);
}

static void value(cbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void value(cbuf *b, const char *fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n > 0)
        cbuf_append(b, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

static void h_metrics(http_ctx *c)
{
    core_metrics m;
    core_get_metrics(c->core, &m);
    cbuf b;
    cbuf_init(&b);
    metric(&b, "cella_sandboxes", "gauge", "Sandboxes in the registry by state.");
    value(&b, "cella_sandboxes{state=\"running\"} %u\n", m.sandboxes_live);
    value(&b, "cella_sandboxes{state=\"dead\"} %u\n", m.sandboxes_dead);
    metric(&b, "cella_pool_depth", "gauge", "Warm sandboxes ready to hand out.");
    value(&b, "cella_pool_depth %u\n", m.pool_depth);
    metric(&b, "cella_pool_target", "gauge", "Warm sandboxes the pool keeps.");
    value(&b, "cella_pool_target %u\n", m.pool_target);
    metric(&b, "cella_creates_total", "counter", "Sandbox creations by result.");
    value(&b, "cella_creates_total{result=\"ok\"} %llu\n", (unsigned long long)m.creates_ok);
    value(&b, "cella_creates_total{result=\"failed\"} %llu\n", (unsigned long long)m.creates_failed);
    metric(&b, "cella_execs_total", "counter", "Execs by result.");
    value(&b, "cella_execs_total{result=\"ok\"} %llu\n", (unsigned long long)m.execs_ok);
    value(&b, "cella_execs_total{result=\"nonzero\"} %llu\n", (unsigned long long)m.execs_nonzero);
    value(&b, "cella_execs_total{result=\"timed_out\"} %llu\n", (unsigned long long)m.execs_timed_out);
    value(&b, "cella_execs_total{result=\"error\"} %llu\n", (unsigned long long)m.execs_failed);
    metric(&b, "cella_exec_duration_seconds", "histogram", "Exec durations, as the daemon saw them.");
    uint64_t cum = 0, total = 0;
    for (int i = 0; i <= CORE_EXEC_BUCKETS; i++)
        total += m.exec_hist[i];
    for (int i = 0; i < CORE_EXEC_BUCKETS; i++) {
        cum += m.exec_hist[i];
        value(&b, "cella_exec_duration_seconds_bucket{le=\"%g\"} %llu\n", core_exec_bucket_secs[i],
              (unsigned long long)cum);
    }
    value(&b, "cella_exec_duration_seconds_bucket{le=\"+Inf\"} %llu\n", (unsigned long long)total);
    value(&b, "cella_exec_duration_seconds_sum %.6f\n", m.exec_sum_secs);
    value(&b, "cella_exec_duration_seconds_count %llu\n", (unsigned long long)total);
    metric(&b, "cella_oom_kills_total", "counter", "Execs during which the memory limit killed a process.");
    value(&b, "cella_oom_kills_total %llu\n", (unsigned long long)m.oom_kills);
    metric(&b, "cella_reaps_total", "counter", "Sandboxes stopped for being idle.");
    value(&b, "cella_reaps_total %llu\n", (unsigned long long)m.reaped);
    metric(&b, "cella_stops_total", "counter", "Sandboxes stopped on request.");
    value(&b, "cella_stops_total %llu\n", (unsigned long long)m.stops);
    if (core_code_pool(c->core)) {
        code_pool_stats cs;
        code_pool_get_stats(core_code_pool(c->core), &cs);
        metric(&b, "cella_code_workers", "gauge", "Code mode's worker processes by state.");
        value(&b, "cella_code_workers{state=\"busy\"} %u\n", cs.workers_busy);
        value(&b, "cella_code_workers{state=\"alive\"} %u\n", cs.workers_alive);
        metric(&b, "cella_code_runs_paused", "gauge", "Paused code runs by where they are kept.");
        value(&b, "cella_code_runs_paused{where=\"worker\"} %u\n", cs.runs_resident);
        value(&b, "cella_code_runs_paused{where=\"daemon\"} %u\n", cs.runs_dumped);
        metric(&b, "cella_code_dumped_bytes", "gauge", "Bytes of paused runs held by the daemon.");
        value(&b, "cella_code_dumped_bytes %llu\n", (unsigned long long)cs.dumped_bytes);
        metric(&b, "cella_code_waiting", "gauge", "Code requests waiting for a worker.");
        value(&b, "cella_code_waiting %u\n", cs.waiting);
        metric(&b, "cella_code_workers_replaced_total", "counter",
               "Code workers killed (deadline) or crashed, and replaced.");
        value(&b, "cella_code_workers_replaced_total %llu\n",
              (unsigned long long)cs.workers_replaced);
    }
    if (server)
        http_metrics_text(server, &b);
    size_t n = cbuf_avail(&b);
    char *text = cella_malloc(n + 1);
    memcpy(text, cbuf_head(&b), n);
    text[n] = '\0';
    cbuf_free(&b);
    http_reply_text(c, 200, "text/plain; version=0.0.4", text, n);
}

static void h_catalog(http_ctx *c)
{
    core_image v[64];
    size_t n = core_catalog(c->core, v, 64);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(v[i].name));
        json_object_set_new(o, "kind", json_string(v[i].kind));
        json_object_set_new(o, "oci_ref", json_string(v[i].ref));
        if (v[i].interpreter)
            json_object_set_new(o, "interpreter", json_string(v[i].interpreter));
        json_object_set_new(o, "available", json_boolean(v[i].available));
        json_object_set_new(o, "allowed", json_boolean(v[i].allowed));
        json_array_append_new(arr, o);
    }
    http_reply_json(c, 200, json_pack("{s:o}", "images", arr));
}

/* ---- sandboxes ------------------------------------------------------------ */

int api_create_decode(json_t *j, core_create_req *r, char ***env, core_error *e)
{
    static const char *const fields[] = {"image", "cpus", "memory_mb", "name", "network",
                                         "idle_timeout_secs", "env", NULL};
    memset(r, 0, sizeof(*r));
    *env = NULL;
    uint64_t mem = 0, idle = 0;
    int got;
    if (jin_known(j, fields, e) < 0 || (got = jin_str(j, "image", &r->image, e)) < 0)
        return -1;
    if (!got)
        return jin_missing(e, "image");
    if ((got = jin_cpus(j, "cpus", &r->cpus_milli, e)) < 0)
        return -1;
    r->has_cpus = got;
    if ((got = jin_u64(j, "memory_mb", 16, 1 << 20, &mem, e)) < 0)
        return -1;
    r->has_memory = got;
    r->memory_mb = mem;
    if (jin_str(j, "name", &r->name, e) < 0)
        return -1;
    if (r->name && strlen(r->name) > 120)
        return core_fail(e, S001, "invalid request: field 'name' is longer than 120 bytes");
    if (jin_bool(j, "network", &r->network, e) < 0)
        return -1;
    if ((got = jin_u64(j, "idle_timeout_secs", 1, 365ull * 86400, &idle, e)) < 0)
        return -1;
    r->has_idle = got;
    r->idle_timeout_secs = idle;
    if (jin_env_shape(j, "env", env, e) < 0)
        return -1;
    r->env = *env;
    return 0;
}

static void h_create(http_ctx *c)
{
    core_error e;
    json_t *j = NULL;
    char **env = NULL;
    core_create_req r;
    if (jin_parse(c->body, c->body_len, &j, &e) < 0 || api_create_decode(j, &r, &env, &e) < 0)
        goto error;
    sandbox *s;
    if (core_create(c->core, c->tenant, &r, &s, &e) < 0)
        goto error;
    sandbox_info info;
    sandbox_get_info(s, &info);
    sandbox_unref(s);
    http_reply_json(c, 201, info_json(&info, false));
    json_decref(j);
    cella_strv_free(env);
    return;
error:
    http_reply_error(c, &e);
    json_decref(j);
    cella_strv_free(env);
}

static void h_list(http_ctx *c)
{
    sandbox_info *v;
    size_t n;
    /* Every tenant's for an admin who asks (?all=1), else the caller's own. */
    bool all = c->admin && wants_true(http_query(c, "all"));
    core_list(c->core, all ? NULL : c->tenant, &v, &n);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, info_json(&v[i], all));
    cella_free(v);
    http_reply_json(c, 200, json_pack("{s:o}", "sandboxes", arr));
}

static void h_get(http_ctx *c)
{
    core_error e;
    sandbox *s;
    if (core_get(c->core, c->tenant, c->params[0], &s, &e) < 0) {
        http_reply_error(c, &e);
        return;
    }
    sandbox_info info;
    sandbox_get_info(s, &info);
    sandbox_unref(s);
    http_reply_json(c, 200, info_json(&info, false));
}

static void h_stop(http_ctx *c)
{
    core_error e;
    bool wait = wants_true(http_query(c, "wait"));
    if (core_stop(c->core, c->tenant, c->params[0], wait, &e) < 0) {
        http_reply_error(c, &e);
        return;
    }
    http_reply_json(c, 200, json_pack("{s:s,s:b}", "sandbox_id", c->params[0], "stopped", 1));
}

/* ---- exec ----------------------------------------------------------------- */

/* iii's three command shapes: argv; cmd + args; cmd alone, shlex-split when
 * it holds whitespace. Anything ambiguous is refused rather than guessed. */
static int command_argv(json_t *j, char ***out, core_error *e)
{
    const char *cmd = "";
    char **args = NULL, **argv = NULL;
    if (jin_str(j, "cmd", &cmd, e) < 0 || jin_strv(j, "args", &args, e) < 0 ||
        jin_strv(j, "argv", &argv, e) < 0)
        goto error;
    size_t na = args ? cella_strv_len(args) : 0;
    if (argv && argv[0]) {
        if (cmd[0] || na) {
            core_fail(e, S001, "invalid request: give either argv or cmd/args, not both");
            goto error;
        }
        cella_strv_free(args);
        *out = argv;
        return 0;
    }
    cella_strv_free(argv);
    argv = NULL;
    if (!cmd[0]) {
        core_fail(e, S001, "invalid request: empty command: give cmd (with optional args) or argv");
        goto error;
    }
    if (text_has_space(cmd)) {
        if (na) {
            core_fail(e, S001, "invalid request: ambiguous command: cmd holds whitespace and args "
                               "is set; put the arguments in args only, or use argv");
            goto error;
        }
        cella_err err;
        if (shlex_split(cmd, &argv, &err) < 0) {
            core_fail(e, S001, "invalid request: cmd: %s", err.msg);
            goto error;
        }
        if (!argv[0]) {
            core_fail(e, S001, "invalid request: empty command");
            goto error;
        }
        cella_strv_free(args);
        *out = argv;
        return 0;
    }
    argv = cella_calloc(na + 2, sizeof(char *));
    argv[0] = cella_strdup(cmd);
    for (size_t i = 0; i < na; i++)
        argv[i + 1] = cella_strdup(args[i]);
    cella_strv_free(args);
    *out = argv;
    return 0;
error:
    cella_strv_free(args);
    cella_strv_free(argv);
    return -1;
}

typedef struct sse {
    core_exec *x;
    int client_fd;
    cbuf out;
    cbuf carry[3];                /* an incomplete UTF-8 sequence kept for the next chunk */
    bool finished;
} sse;

static void sse_event(sse *st, const char *event, json_t *data)
{
    char *s = json_dumps(data, JSON_COMPACT);
    json_decref(data);
    cbuf_append(&st->out, "event: ", 7);
    cbuf_append(&st->out, event, strlen(event));
    cbuf_append(&st->out, "\ndata: ", 7);
    if (s)
        cbuf_append(&st->out, s, strlen(s));
    cbuf_append(&st->out, "\n\n", 2);
    free(s);
}

static void sse_output(sse *st, int stream, const uint8_t *p, size_t n, bool flush)
{
    cbuf *cb = &st->carry[stream];
    cbuf_append(cb, p, n);
    size_t whole = flush ? cbuf_avail(cb) : utf8_complete_prefix(cbuf_head(cb), cbuf_avail(cb));
    if (!whole)
        return;
    cbuf t;
    cbuf_init(&t);
    utf8_lossy(&t, cbuf_head(cb), whole);
    cbuf_consume(cb, whole);
    json_t *d = json_pack("{s:s%}", "data", (const char *)cbuf_head(&t), cbuf_avail(&t));
    cbuf_free(&t);
    sse_event(st, stream == 2 ? "stderr" : "stdout", d);
}

static ssize_t sse_read(void *arg, char *buf, size_t max)
{
    sse *st = arg;
    for (;;) {
        if (cbuf_avail(&st->out)) {
            size_t n = cbuf_avail(&st->out) < max ? cbuf_avail(&st->out) : max;
            memcpy(buf, cbuf_head(&st->out), n);
            cbuf_consume(&st->out, n);
            return (ssize_t)n;
        }
        if (st->finished)
            return -1;
        /* A comment every 15 s keeps proxies from closing a quiet stream. */
        int f = core_exec_wait(st->x, st->client_fd, 15000);
        if (f & MUX_CLIENT_GONE)
            return -2;            /* the free callback kills the command */
        int stream;
        cbuf chunk;
        cbuf_init(&chunk);
        while (core_exec_take(st->x, &stream, &chunk)) {
            sse_output(st, stream, cbuf_head(&chunk), cbuf_avail(&chunk), false);
            cbuf_reset(&chunk);
        }
        cbuf_free(&chunk);
        if (f & MUX_DONE) {
            sse_output(st, 1, NULL, 0, true);
            sse_output(st, 2, NULL, 0, true);
            core_exec_result res;
            core_error e;
            if (core_exec_finish(st->x, &res, &e) < 0) {
                json_t *err = json_object();
                json_object_set_new(err, "error", http_error_object(&e));
                sse_event(st, "error", err);
            } else {
                sse_event(st, "exit", result_json(&res, false));
                core_exec_result_free(&res);
            }
            st->finished = true;
            /* The exec's slot goes now, before the client can read the
             * last event: held until MHD frees the response (after the
             * stream's end is sent), a client that went on at once on
             * another connection found it still taken, and a fourth
             * concurrent exec was refused S003 (found by bench/load). */
            core_exec_end(st->x);
            st->x = NULL;
        } else if (f == 0) {
            cbuf_append(&st->out, ": keep-alive\n\n", 14);
        }
    }
}

static void sse_free(void *arg)
{
    sse *st = arg;
    core_exec_end(st->x);
    cbuf_free(&st->out);
    for (int i = 0; i < 3; i++)
        cbuf_free(&st->carry[i]);
    cella_free(st);
}

int api_exec_decode(json_t *j, api_exec_in *x, core_error *e)
{
    static const char *const fields[] = {"sandbox_id", "cmd", "args", "argv", "stdin", "env",
                                         "timeout_ms", "workdir", NULL};
    memset(x, 0, sizeof(*x));
    cbuf_init(&x->in);
    core_exec_req *r = &x->r;
    if (jin_known(j, fields, e) < 0 || jin_str(j, "sandbox_id", &x->sandbox_id, e) < 0 ||
        command_argv(j, &x->argv, e) < 0 || jin_env(j, "env", &x->env, e) < 0)
        return -1;
    int got = jin_u64(j, "timeout_ms", 1, UINT32_MAX * 1000ull, &r->timeout_ms, e);
    if (got < 0)
        return -1;
    r->has_timeout = got;
    if (jin_str(j, "workdir", &r->workdir, e) < 0 ||
        jin_base64(j, "stdin", &x->in, &r->has_stdin, e) < 0)
        return -1;
    if (r->workdir && r->workdir[0] != '/')
        return core_fail(e, S001, "invalid request: workdir must be an absolute path inside the "
                         "sandbox");
    r->argv = x->argv;
    r->env = x->env;
    r->stdin_data = cbuf_head(&x->in);
    r->stdin_len = cbuf_avail(&x->in);
    return 0;
}

void api_exec_in_free(api_exec_in *x)
{
    cella_strv_free(x->argv);
    cella_strv_free(x->env);
    cbuf_free(&x->in);
}

static void h_exec(http_ctx *c)
{
    core_error e;
    json_t *j = NULL;
    sandbox *s = NULL;
    api_exec_in x = {0};
    cbuf_init(&x.in);
    core_exec_req r;
    if (jin_parse(c->body, c->body_len, &j, &e) < 0 || api_exec_decode(j, &x, &e) < 0)
        goto error;
    if (x.sandbox_id && strcasecmp(x.sandbox_id, c->params[0]) != 0) {
        core_fail(&e, S001, "invalid request: sandbox_id in the body differs from the one in the path");
        goto error;
    }
    r = x.r;
    if (core_get(c->core, c->tenant, c->params[0], &s, &e) < 0)
        goto error;
    const char *accept = http_header(c, "Accept");
    if (accept && strstr(accept, "text/event-stream")) {
        r.stream = true;
        core_exec *ex;
        if (core_exec_start(s, &r, &ex, &e) < 0)
            goto error;
        sse *st = cella_calloc(1, sizeof(*st));
        st->x = ex;
        st->client_fd = c->client_fd;
        cbuf_init(&st->out);
        for (int i = 0; i < 3; i++)
            cbuf_init(&st->carry[i]);
        http_reply_stream(c, 200, "text/event-stream", sse_read, sse_free, st);
    } else {
        core_exec_result res;
        if (core_exec_run(s, &r, c->client_fd, &res, &e) < 0)
            goto error;
        http_reply_json(c, 200, result_json(&res, true));
        core_exec_result_free(&res);
    }
    sandbox_unref(s);
    json_decref(j);
    api_exec_in_free(&x);
    return;
error:
    http_reply_error(c, &e);
    sandbox_unref(s);
    json_decref(j);
    api_exec_in_free(&x);
}

/* ---- one-shot run ----------------------------------------------------------- */

int api_run_decode(json_t *j, api_run_in *x, core_error *e)
{
    return api_run_decode_ex(j, x, 0, e);
}

int api_run_decode_ex(json_t *j, api_run_in *x, unsigned flags, core_error *e)
{
    static const char *const fields[] = {"image", "lang", "code", "files", "env", "stdin",
                                         "timeout_ms", "keep_sandbox", NULL};
    memset(x, 0, sizeof(*x));
    cbuf_init(&x->in);
    core_run_req *r = &x->r;
    if (!(flags & API_RUN_MORE_FIELDS) && jin_known(j, fields, e) < 0)
        return -1;
    static const char *const required[] = {"image", "lang", "code"};
    const char **slots[] = {&r->image, &r->lang, &r->code};
    for (int i = 0; i < 3; i++) {
        int got = jin_str(j, required[i], slots[i], e);
        if (got < 0)
            return -1;
        if (i > 0 && (flags & API_RUN_NO_CODE)) {
            if (got)
                return core_fail(e, S001, "invalid request: '%s' and 'command' are exclusive: "
                                 "a run is code or a command", required[i]);
            continue;
        }
        if (!got && i == 1 && (flags & API_RUN_LANG_PYTHON)) {
            r->lang = "python";
            continue;
        }
        if (!got)
            return jin_missing(e, required[i]);
    }
    if (flags & API_RUN_NO_CODE)
        r->lang = r->code = NULL;
    r->code_len = r->code ? json_string_length(json_object_get(j, "code")) : 0;
    if (r->lang && !r->lang[0])
        return core_fail(e, S001, "invalid request: lang is empty (node, python, shell, or an "
                         "interpreter path)");
    json_t *fa = json_object_get(j, "files");
    if (fa && !json_is_null(fa)) {
        if (!json_is_array(fa))
            return core_fail(e, S001, "invalid request: field 'files' must be an array of "
                             "{path, content}");
        r->n_files = json_array_size(fa);
        x->files = cella_calloc(r->n_files + 1, sizeof(*x->files));
        for (size_t i = 0; i < r->n_files; i++) {
            json_t *f = json_array_get(fa, i);
            json_t *p = json_object_get(f, "path"), *ct = json_object_get(f, "content");
            if (!json_is_object(f) || !json_is_string(p) || !json_is_string(ct) ||
                json_object_size(f) != 2)
                return core_fail(e, S001, "invalid request: files[%zu] must be {path, content} "
                                 "strings", i);
            x->files[i].path = json_string_value(p);
            x->files[i].content = (const uint8_t *)json_string_value(ct);
            x->files[i].len = json_string_length(ct);
            if (!x->files[i].path[0])
                return core_fail(e, S001, "invalid request: files[%zu].path is empty", i);
        }
        r->files = x->files;
    }
    /* Names are checked by core_create: iii checks a run's env in its create step. */
    if (jin_env_shape(j, "env", &x->env, e) < 0 ||
        jin_base64(j, "stdin", &x->in, &r->has_stdin, e) < 0)
        return -1;
    r->env = x->env;
    r->stdin_data = cbuf_head(&x->in);
    r->stdin_len = cbuf_avail(&x->in);
    int got = jin_u64(j, "timeout_ms", 1, UINT32_MAX * 1000ull, &r->timeout_ms, e);
    if (got < 0)
        return -1;
    r->has_timeout = got;
    return jin_bool(j, "keep_sandbox", &r->keep_sandbox, e) < 0 ? -1 : 0;
}

void api_run_in_free(api_run_in *x)
{
    cella_strv_free(x->env);
    cella_free(x->files);
    cbuf_free(&x->in);
}

static void h_run(http_ctx *c)
{
    core_error e;
    json_t *j = NULL;
    api_run_in x = {0};
    cbuf_init(&x.in);
    if (jin_parse(c->body, c->body_len, &j, &e) < 0)
        goto error;
    /* Flyte-style fields make it a typed run (api/run_typed.c). */
    if (api_run_is_typed(j)) {
        api_run_typed(c, j);
        goto out;
    }
    if (api_run_decode(j, &x, &e) < 0)
        goto error;
    core_exec_result res;
    char sid[40];
    if (core_run(c->core, c->tenant, &x.r, c->client_fd, &res, sid, &e) < 0)
        goto error;
    json_t *o = result_json(&res, true);
    json_object_set_new(o, "sandbox_id", x.r.keep_sandbox ? json_string(sid) : json_null());
    core_exec_result_free(&res);
    http_reply_json(c, 200, o);
    goto out;
error:
    http_reply_error(c, &e);
out:
    json_decref(j);
    api_run_in_free(&x);
}

const http_route api_native_routes[] = {
    {"GET", "/healthz", NULL, ROUTE_PUBLIC, h_healthz, NULL},
    {"GET", "/readyz", NULL, ROUTE_PUBLIC, h_readyz, NULL},
    /* Counts across every tenant: for operators (admin tokens) only. */
    {"GET", "/metrics", NULL, ROUTE_ADMIN, h_metrics, NULL},
    {"GET", "/v1/catalog", NULL, 0, h_catalog, NULL},
    {"POST", "/v1/sandboxes", NULL, 0, h_create, NULL},
    {"GET", "/v1/sandboxes", NULL, 0, h_list, NULL},
    {"GET", "/v1/sandboxes/{id}", NULL, 0, h_get, NULL},
    {"DELETE", "/v1/sandboxes/{id}", NULL, 0, h_stop, NULL},
    {"POST", "/v1/sandboxes/{id}/exec", NULL, 0, h_exec, NULL},
    {"POST", "/v1/run", NULL, 0, h_run, NULL},
    {NULL, NULL, NULL, 0, NULL, NULL},
};
