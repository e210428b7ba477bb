/* libFuzzer target: every dialect's JSON request decoding, driven through
 * the routes' own handlers exactly as the daemon runs them (native, iii's
 * /v1/trigger, Flujo's /execute, the gateway's routes and sessions, MCP's
 * JSON-RPC, the file API's /fs/{op}).
 *
 * The handlers' way out of the dialects (core_*, sandbox_*, the gateway's
 * sessions and turns, the store, the HTTP replies) is replaced at link time
 * (-Wl,--wrap, see CMakeLists.txt) by the stubs below, so no sandbox is ever
 * made; each stub checks what a decoder hands to core:
 *  - every core call acts for the caller's own tenant (NULL, "all tenants",
 *    only for an admin), and a gateway session only for its own tenant
 *    unless admin, with a valid session id;
 *  - an exec has a non-empty argv, env entries "NAME=VALUE" with a valid
 *    name, an absolute workdir, stdin of the length it says;
 *  - a run has an image, lang and code, non-empty file paths;
 *  - a file operation is a known op whose arguments are key=value words
 *    with keys of that op;
 *  - every handler replies exactly once, with a status in 200..599 and a
 *    body that encodes (an answer the server could not encode would be a
 *    500 for a client's mistake), and an error reply has a known S-code.
 * core_exec_run succeeds with the input's bytes as stdout (any bytes, as a
 * program writes them) and core_fs, when the flags say so, with the input as
 * the agent's result text (untrusted, as the agent's output is), so the
 * result encoders and the agent-output parsers run too.
 *
 * With flag 8 sandboxes can be made (core_create succeeds, so the gateway's
 * sessions open), and downloads and uploads succeed: a download's bytes are
 * the input (the gateway's /read windows them by lines, /read_binary
 * encodes them, Flujo reads them as its artifacts' tar), its header line
 * the input too with flag 16 (untrusted, as the agent's is); an archive
 * the daemon builds for the agent's tar-extract (the gateway's files,
 * Flujo's) must read to its end with every name inside the target.
 *
 * Input: byte 0 picks the route, byte 1 holds flags (1 admin, 2 Accept:
 * text/event-stream, 4 core_fs succeeds, 8 and 16 as above); then one
 * NUL-terminated string per {param} of the route's pattern; the rest is
 * the body. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/flujo.h"
#include "api/fs.h"
#include "api/gateway.h"
#include "api/iii.h"
#include "api/mcp.h"
#include "api/native.h"
#include "core/config.h"
#include "core/core.h"
#include "core/typed.h"
#include "http/server.h"
#include "store/store.h"
#include "util/alloc.h"
#include "util/log.h"
#include "util/parse.h"
#include "util/tar.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

/* ---- the current request ------------------------------------------------------ */

static http_ctx *cur;
static const http_route *cur_route;
static int replies;
static const uint8_t *cur_in;
static size_t cur_n;
static unsigned cur_flags;
static const char fake_id[] = "0badc0de-0000-8000-8000-000000000001";
static int fake_sandbox;          /* its address stands for a sandbox */

static void check_tenant(const char *tenant)
{
    /* An admin acts for anyone (NULL: every tenant); others only for
     * their own token's tenant. */
    if (!cur->admin && (!tenant || strcmp(tenant, cur->tenant) != 0))
        abort();
}

/* An exec's env is checked by its decoder (jin_env); a create's and a
 * run's by core (jin_env_shape, then core_env_check in iii's order). */
static void check_env(char *const *env)
{
    for (size_t i = 0; env && env[i]; i++) {
        const char *eq = strchr(env[i], '=');
        if (!eq || !env_name_valid(env[i], (size_t)(eq - env[i])))
            abort();
    }
}

static int stub_fail(core_error *e, core_code code)
{
    return core_fail(e, code, "fuzz: no sandbox here");
}

/* ---- core ------------------------------------------------------------------- */

int __wrap_core_get(core *c, const char *tenant, const char *id, sandbox **out, core_error *e);
int __wrap_core_get(core *c, const char *tenant, const char *id, sandbox **out, core_error *e)
{
    check_tenant(tenant);
    if (!id)
        abort();
    *out = (sandbox *)&fake_sandbox;
    return 0;
}

int __wrap_core_create(core *c, const char *tenant, const core_create_req *r, sandbox **out,
                       core_error *e);
int __wrap_core_create(core *c, const char *tenant, const core_create_req *r, sandbox **out,
                       core_error *e)
{
    check_tenant(tenant);
    if (!r->image || (r->name && strlen(r->name) > 120) ||
        (r->has_memory && (r->memory_mb < 16 || r->memory_mb > (1u << 20))))
        abort();
    if (core_env_check("env", r->env, e) < 0)
        return -1;
    check_env(r->env);
    if (cur_flags & 8) {
        *out = (sandbox *)&fake_sandbox;
        return 0;
    }
    return stub_fail(e, S300);
}

int __wrap_core_run(core *c, const char *tenant, const core_run_req *r, int client_fd,
                    core_exec_result *res, char *sid, core_error *e);
int __wrap_core_run(core *c, const char *tenant, const core_run_req *r, int client_fd,
                    core_exec_result *res, char *sid, core_error *e)
{
    check_tenant(tenant);
    if (!r->image || !r->lang || !r->lang[0] || !r->code || (r->has_timeout && !r->timeout_ms) ||
        (r->n_files && !r->files) || (r->stdin_len && !r->stdin_data))
        abort();
    for (size_t i = 0; i < r->n_files; i++)
        if (!r->files[i].path || !r->files[i].path[0])
            abort();
    sid[0] = '\0';
    if (core_env_check("env", r->env, e) < 0)
        return -1;
    check_env(r->env);
    return stub_fail(e, S300);
}

int __wrap_core_stop(core *c, const char *tenant, const char *id, bool wait, core_error *e);
int __wrap_core_stop(core *c, const char *tenant, const char *id, bool wait, core_error *e)
{
    check_tenant(tenant);
    return e ? stub_fail(e, S002) : -1;
}

int __wrap_core_list(core *c, const char *tenant, sandbox_info **out, size_t *n);
int __wrap_core_list(core *c, const char *tenant, sandbox_info **out, size_t *n)
{
    check_tenant(tenant);
    *out = NULL;
    *n = 0;
    return 0;
}

size_t __wrap_core_catalog(core *c, core_image *out, size_t max);
size_t __wrap_core_catalog(core *c, core_image *out, size_t max) { return 0; }
uint64_t __wrap_core_workspace_quota(core *c);
uint64_t __wrap_core_workspace_quota(core *c) { return 0; }
struct store *__wrap_core_store(core *c);
struct store *__wrap_core_store(core *c) { return NULL; }

static void check_exec(const core_exec_req *r)
{
    if (!r->argv || !r->argv[0] || (r->workdir && r->workdir[0] != '/') ||
        (r->has_timeout && !r->timeout_ms) || (r->stdin_len && !r->stdin_data))
        abort();
    check_env(r->env);
}

int __wrap_core_exec_run(sandbox *s, const core_exec_req *r, int client_fd,
                         core_exec_result *res, core_error *e);
int __wrap_core_exec_run(sandbox *s, const core_exec_req *r, int client_fd,
                         core_exec_result *res, core_error *e)
{
    if (s != (sandbox *)&fake_sandbox)
        abort();
    check_exec(r);
    memset(res, 0, sizeof(*res));
    for (int i = 0; i < 3; i++)
        cbuf_init(&res->out[i]);
    /* What a program may write: any bytes. */
    cbuf_append(&res->out[1], cur_in, cur_n);
    cbuf_append(&res->out[2], cur_in, cur_n / 2);
    res->has_exit_code = true;
    res->exit_code = cur_n & 1;
    res->timed_out = cur_n % 7 == 3;
    res->timeout_ms = r->timeout_ms;
    return 0;
}

int __wrap_core_exec_start(sandbox *s, const core_exec_req *r, core_exec **out, core_error *e);
int __wrap_core_exec_start(sandbox *s, const core_exec_req *r, core_exec **out, core_error *e)
{
    check_exec(r);
    return stub_fail(e, S004);
}

/* An archive the daemon made for the agent's tar-extract (the gateway's
 * files, Flujo's): it reads to its end, and every name stays in the
 * target (relative, no ".." component). */
typedef struct mem_src {
    const uint8_t *p;
    size_t n, off;
} mem_src;

static ssize_t mem_read(void *ctx, void *buf, size_t want)
{
    mem_src *m = ctx;
    size_t k = m->n - m->off < want ? m->n - m->off : want;
    memcpy(buf, m->p + m->off, k);
    m->off += k;
    return (ssize_t)k;
}

static void check_tar(const uint8_t *p, size_t n)
{
    static tar_reader rd;
    static tar_entry te;
    mem_src m = {p, n, 0};
    tar_reader_init(&rd, mem_read, &m);
    int rc;
    while ((rc = tar_next(&rd, &te)) == TAR_OK) {
        const char *nm = te.name;
        if (!nm[0] || nm[0] == '/' || !strcmp(nm, "..") || !strncmp(nm, "../", 3) ||
            strstr(nm, "/../") || (strlen(nm) >= 3 && !strcmp(nm + strlen(nm) - 3, "/..")))
            abort();
    }
    if (rc != TAR_END)
        abort();
}

int __wrap_core_fs(sandbox *s, const core_fs_req *r, int client_fd, cbuf *result, core_error *e);
int __wrap_core_fs(sandbox *s, const core_fs_req *r, int client_fd, cbuf *result, core_error *e)
{
    const char *const *fields = api_fs_fields(r->op);
    for (size_t i = 0; r->args && r->args[i]; i++) {
        const char *eq = strchr(r->args[i], '=');
        if (!eq || eq == r->args[i])
            abort();
        /* Keys are the agent's names, which may differ from the fields';
         * both are plain words. */
        for (const char *k = r->args[i]; k < eq; k++)
            if (!((*k >= 'a' && *k <= 'z') || *k == '_' || *k == '-'))
                abort();
    }
    if (!fields && strcmp(r->op, "cat") != 0 && strcmp(r->op, "tar-create") != 0 &&
        strcmp(r->op, "tar-extract") != 0)
        abort();
    if (!strcmp(r->op, "tar-extract") && r->has_stdin)
        check_tar(r->stdin_data, r->stdin_len);
    if (!(cur_flags & 4))
        return stub_fail(e, S211);
    cbuf_append(result, cur_in, cur_n);   /* the agent's answer: untrusted text */
    return 0;
}

/* A download: its header line, then the file's bytes in pieces. */
typedef struct fake_stream {
    size_t off, piece;
} fake_stream;
static fake_stream stream, upload_stream;

int __wrap_core_fs_download(sandbox *s, const core_fs_req *r, int client_fd,
                            core_fs_stream **out, cbuf *header, core_error *e);
int __wrap_core_fs_download(sandbox *s, const core_fs_req *r, int client_fd,
                            core_fs_stream **out, cbuf *header, core_error *e)
{
    if (!(cur_flags & 8))
        return stub_fail(e, S212);
    if (cur_flags & 16) {
        cbuf_append(header, cur_in, cur_n);
    } else {
        char h[64];
        cbuf_append(header, h, (size_t)snprintf(h, sizeof(h), "{\"size\":%zu}", cur_n));
    }
    stream.off = 0;
    stream.piece = cur_n % 4093 + 1;
    *out = (core_fs_stream *)&stream;
    return 0;
}

ssize_t __wrap_core_fs_read(core_fs_stream *st, void *buf, size_t max, core_error *e);
ssize_t __wrap_core_fs_read(core_fs_stream *st, void *buf, size_t max, core_error *e)
{
    if (st != (core_fs_stream *)&stream)
        abort();
    size_t k = cur_n - stream.off;
    if (k > max)
        k = max;
    if (k > stream.piece)
        k = stream.piece;
    memcpy(buf, cur_in + stream.off, k);
    stream.off += k;
    return (ssize_t)k;
}

void __wrap_core_fs_close(core_fs_stream *st);
void __wrap_core_fs_close(core_fs_stream *st)
{
    if (st && st != (core_fs_stream *)&stream && st != (core_fs_stream *)&upload_stream)
        abort();
}

static cbuf upload_data;

int __wrap_core_fs_upload_begin(sandbox *s, const core_fs_req *r, int client_fd,
                                core_fs_stream **out, core_error *e);
int __wrap_core_fs_upload_begin(sandbox *s, const core_fs_req *r, int client_fd,
                                core_fs_stream **out, core_error *e)
{
    if (!(cur_flags & 8))
        return stub_fail(e, S300);
    cbuf_free(&upload_data);
    cbuf_init(&upload_data);
    *out = (core_fs_stream *)&upload_stream;
    return 0;
}

int __wrap_core_fs_upload_feed(core_fs_stream *st, const void *p, size_t n);
int __wrap_core_fs_upload_feed(core_fs_stream *st, const void *p, size_t n)
{
    if (st != (core_fs_stream *)&upload_stream)
        abort();
    cbuf_append(&upload_data, p, n);
    return 0;
}

int __wrap_core_fs_upload_end(core_fs_stream *st, cbuf *result, core_error *e);
int __wrap_core_fs_upload_end(core_fs_stream *st, cbuf *result, core_error *e)
{
    if (st != (core_fs_stream *)&upload_stream)
        abort();
    check_tar(upload_data.data ? cbuf_head(&upload_data) : (const uint8_t *)"",
              cbuf_avail(&upload_data));
    cbuf_append(result, "{}", 2);
    return 0;
}

int __wrap_core_typed_run(core *c, const char *tenant, const core_typed_req *r, int client_fd,
                          core_typed_result *res, core_error *e);
int __wrap_core_typed_run(core *c, const char *tenant, const core_typed_req *r, int client_fd,
                          core_typed_result *res, core_error *e)
{
    check_tenant(tenant);
    return stub_fail(e, S300);
}

const char *__wrap_sandbox_id(const sandbox *s);
const char *__wrap_sandbox_id(const sandbox *s) { return fake_id; }
void __wrap_sandbox_unref(sandbox *s);
void __wrap_sandbox_unref(sandbox *s) {}
void __wrap_sandbox_get_info(sandbox *s, sandbox_info *out);
void __wrap_sandbox_get_info(sandbox *s, sandbox_info *out)
{
    memset(out, 0, sizeof(*out));
    memcpy(out->id, fake_id, sizeof(fake_id));
    snprintf(out->tenant, sizeof(out->tenant), "%s", cur->tenant);
    snprintf(out->image, sizeof(out->image), "python");
}

/* ---- the gateway's sessions and turns, and the store ------------------------------ */

static void check_session(const char *tenant, const char *sid)
{
    check_tenant(tenant);
    size_t n = strlen(sid);
    if (!n || n > 128)
        abort();
    for (const char *p = sid; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              strchr("._:@+=-", *p)))
            abort();
}

int __wrap_gw_turn_take(http_ctx *c, const char *tenant, const char *sid, int64_t deadline_ns);
int __wrap_gw_turn_take(http_ctx *c, const char *tenant, const char *sid, int64_t deadline_ns)
{
    check_session(tenant, sid);
    return 0;
}
void __wrap_gw_turn_give(const char *tenant, const char *sid);
void __wrap_gw_turn_give(const char *tenant, const char *sid) {}

int __wrap_store_session_get(store *s, const char *tenant, const char *sid, store_session *out,
                             cella_err *err);
int __wrap_store_session_get(store *s, const char *tenant, const char *sid, store_session *out,
                             cella_err *err)
{
    check_session(tenant, sid);
    return 0;
}
int __wrap_store_session_put(store *s, const store_session *ss, cella_err *err);
int __wrap_store_session_put(store *s, const store_session *ss, cella_err *err) { return 0; }
int __wrap_store_session_delete(store *s, const char *tenant, const char *sid,
                                const char *sandbox_id, cella_err *err);
int __wrap_store_session_delete(store *s, const char *tenant, const char *sid,
                                const char *sandbox_id, cella_err *err)
{
    return 0;
}
int __wrap_store_session_list(store *s, store_session **v, size_t *n, cella_err *err);
int __wrap_store_session_list(store *s, store_session **v, size_t *n, cella_err *err)
{
    *v = NULL;
    *n = 0;
    return 0;
}

/* ---- HTTP ------------------------------------------------------------------- */

const char *__wrap_http_header(http_ctx *c, const char *name);
const char *__wrap_http_header(http_ctx *c, const char *name)
{
    return (cur_flags & 2) && !strcasecmp(name, "Accept") ? "text/event-stream" : NULL;
}
const char *__wrap_http_query(http_ctx *c, const char *name);
const char *__wrap_http_query(http_ctx *c, const char *name) { return NULL; }
bool __wrap_http_query_flag(http_ctx *c, const char *name);
bool __wrap_http_query_flag(http_ctx *c, const char *name) { return false; }

static void replied(int status)
{
    if (++replies > 1 || status < 200 || status > 599)
        abort();
}

void __wrap_http_reply_json(http_ctx *c, int status, json_t *json);
void __wrap_http_reply_json(http_ctx *c, int status, json_t *json)
{
    replied(status);
    char *s = json ? json_dumps(json, JSON_COMPACT) : NULL;
    if (!s)
        abort();                  /* the server would answer 500 "could not be encoded" */
    free(s);
    json_decref(json);
}

void __wrap_http_reply_error(http_ctx *c, const core_error *e);
void __wrap_http_reply_error(http_ctx *c, const core_error *e)
{
    const core_code_info *ci = core_code_lookup(e->code);
    if (!ci || !ci->name || !e->message[0])
        abort();
    http_error_fn fn = cur_route->error_fn ? cur_route->error_fn : http_native_error;
    int status;
    json_t *body = fn(e, &status);
    __wrap_http_reply_json(c, status, body);
}

void __wrap_http_reply_text(http_ctx *c, int status, const char *type, char *text, size_t len);
void __wrap_http_reply_text(http_ctx *c, int status, const char *type, char *text, size_t len)
{
    replied(status);
    cella_free(text);
}

void __wrap_http_reply_stream(http_ctx *c, int status, const char *type, http_stream_fn fn,
                              void (*free_fn)(void *), void *arg);
void __wrap_http_reply_stream(http_ctx *c, int status, const char *type, http_stream_fn fn,
                              void (*free_fn)(void *), void *arg)
{
    replied(status);
    if (free_fn)
        free_fn(arg);
}

/* ---- the routes ------------------------------------------------------------- */

static const http_route *routes[64];
static size_t n_routes;
static cella_config cfg;

static void init(void)
{
    const http_route *tables[] = {api_native_routes, api_fs_routes, api_iii_routes,
                                  api_flujo_routes, api_gateway_routes, api_mcp_routes};
    for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
        for (const http_route *r = tables[t]; r->method; r++)
            /* What takes a body or names a sandbox; uploads stream theirs. */
            if ((!strcmp(r->method, "POST") || !strcmp(r->method, "DELETE")) &&
                !(r->flags & ROUTE_STREAM_BODY) && n_routes < 64)
                routes[n_routes++] = r;
    config_init(&cfg);
    log_set_level(LOG_ERROR);     /* the sessions' warnings about the stubs */
    /* FUZZ_ROUTES_LIST=1 prints the index of each route (to write seeds). */
    if (getenv("FUZZ_ROUTES_LIST"))
        for (size_t i = 0; i < n_routes; i++)
            fprintf(stderr, "%zu %s %s\n", i, routes[i]->method, routes[i]->pattern);
}

static size_t params_of(const char *pattern)
{
    size_t k = 0;
    for (const char *p = pattern; *p; p++)
        k += *p == '{';
    return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    if (!n_routes)
        init();
    if (n < 2)
        return 0;
    const http_route *r = routes[d[0] % n_routes];
    unsigned flags = d[1];
    d += 2;
    n -= 2;
    /* The params: NUL-terminated strings, as the router hands them out
     * (already URL-decoded, never holding a NUL). */
    const char *params[HTTP_MAX_PARAMS] = {0};
    char *copy = cella_malloc(n + 1);
    memcpy(copy, d, n);
    copy[n] = '\0';
    size_t off = 0, k = params_of(r->pattern);
    for (size_t i = 0; i < k && i < HTTP_MAX_PARAMS; i++) {
        if (off > n)
            goto out;
        params[i] = copy + off;
        off += strlen(copy + off) + 1;
    }
    if (off > n)
        goto out;

    http_ctx c = {0};
    c.cfg = &cfg;
    c.method = r->method;
    c.path = r->pattern;
    memcpy(c.params, params, sizeof(params));
    c.body = d + off;
    c.body_len = n - off;
    c.tenant = "fuzz-tenant";
    c.admin = flags & 1;
    c.client_fd = -1;
    cur = &c;
    cur_route = r;
    cur_in = c.body;
    cur_n = c.body_len;
    cur_flags = flags;
    replies = 0;
    r->handler(&c);
    if (replies != 1)
        abort();                  /* every request is answered, once */
out:
    cella_free(copy);
    return 0;
}
