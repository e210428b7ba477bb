/* The iii dialect: POST /v1/trigger {function_id, payload} for every
 * sandbox::* function of iii-sandbox, with iii's payloads, results and
 * error objects (BEHAVIOUR-NOTES §2). The payload decoders are the native
 * routes' (iii's field names are cella's); what differs is the envelope,
 * the exact result shapes, the bare error object, and S200 for a timeout. */
#include "api/iii.h"

#include <stdio.h>
#include <string.h>

#include "api/fs.h"
#include "api/jsonin.h"
#include "api/native.h"
#include "util/alloc.h"

typedef int (*iii_fn)(http_ctx *c, const char *fs_op, json_t *payload, json_t **out,
                      core_error *e);

/* sandbox_id, required by every function on one sandbox. */
static int payload_id(json_t *p, const char **id, core_error *e)
{
    int got = jin_str(p, "sandbox_id", id, e);
    if (got < 0)
        return -1;
    return got ? 0 : jin_missing(e, "sandbox_id");
}

static json_t *exec_json(const core_exec_result *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "stdout", api_text_json(&r->out[1]));
    json_object_set_new(o, "stderr", api_text_json(&r->out[2]));
    json_object_set_new(o, "exit_code", r->has_exit_code ? json_integer(r->exit_code) : json_null());
    json_object_set_new(o, "timed_out", json_boolean(r->timed_out));
    json_object_set_new(o, "duration_ms", json_integer((json_int_t)r->duration_ms));
    json_object_set_new(o, "success",
                        json_boolean(r->has_exit_code && r->exit_code == 0 && !r->timed_out));
    return o;
}

/* iii reports a timeout as an error, not as a result. */
static int timed_out(const core_exec_result *r, core_error *e)
{
    return core_fail(e, S200, "exec timed out after %llu ms", (unsigned long long)r->timeout_ms);
}

static int t_create(http_ctx *c, const char *op, json_t *p, json_t **out, core_error *e)
{
    core_create_req r;
    char **env = NULL;
    sandbox *s;
    int rc = -1;
    if (api_create_decode(p, &r, &env, e) == 0 && core_create(c->core, c->tenant, &r, &s, e) == 0) {
        *out = json_pack("{s:s,s:s}", "sandbox_id", sandbox_id(s), "image", r.image);
        sandbox_unref(s);
        rc = 0;
    }
    cella_strv_free(env);
    return rc;
}

static int t_exec(http_ctx *c, const char *op, json_t *p, json_t **out, core_error *e)
{
    api_exec_in x;
    sandbox *s = NULL;
    core_exec_result res;
    int rc = -1;
    if (api_exec_decode(p, &x, e) < 0)
        goto out;
    if (!x.sandbox_id) {
        jin_missing(e, "sandbox_id");
        goto out;
    }
    if (core_get(c->core, c->tenant, x.sandbox_id, &s, e) < 0 ||
        core_exec_run(s, &x.r, c->client_fd, &res, e) < 0)
        goto out;
    if (res.timed_out)
        timed_out(&res, e);
    else
        *out = exec_json(&res);
    rc = res.timed_out ? -1 : 0;
    core_exec_result_free(&res);
out:
    if (s)
        sandbox_unref(s);
    api_exec_in_free(&x);
    return rc;
}

static int t_run(http_ctx *c, const char *op, json_t *p, json_t **out, core_error *e)
{
    api_run_in x;
    core_exec_result res;
    char sid[40];
    int rc = -1;
    if (api_run_decode(p, &x, e) < 0 || core_run(c->core, c->tenant, &x.r, c->client_fd, &res,
                                                  sid, e) < 0)
        goto out;
    if (res.timed_out) {
        /* A step's error keeps its code and says which step (iii's fix). */
        timed_out(&res, e);
        core_fix_str(e, "context", "during sandbox::run step `exec`");
        core_fix_str(e, "sandbox_id", sid);
        core_fix_str(e, "inner_code", "S200");
    } else {
        *out = exec_json(&res);
        json_object_set_new(*out, "sandbox_id",
                            x.r.keep_sandbox ? json_string(sid) : json_null());
        rc = 0;
    }
    core_exec_result_free(&res);
out:
    api_run_in_free(&x);
    return rc;
}

static int t_list(http_ctx *c, const char *op, json_t *p, json_t **out, core_error *e)
{
    static const char *const none[] = {NULL};
    if (jin_known(p, none, e) < 0)
        return -1;
    sandbox_info *v;
    size_t n;
    core_list(c->core, c->tenant, &v, &n);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(
            arr, json_pack("{s:s,s:o,s:s,s:I,s:b,s:I,s:I,s:b}", "sandbox_id", v[i].id, "name",
                           v[i].has_name ? json_string(v[i].name) : json_null(), "image",
                           v[i].image, "age_secs", (json_int_t)v[i].age_secs, "exec_in_progress",
                           v[i].execs_in_flight > 0, "exec_in_flight",
                           (json_int_t)v[i].execs_in_flight, "exec_slots_free",
                           (json_int_t)v[i].exec_slots_free, "stopped", v[i].dead));
    cella_free(v);
    *out = json_pack("{s:o}", "sandboxes", arr);
    return 0;
}

static int t_stop(http_ctx *c, const char *op, json_t *p, json_t **out, core_error *e)
{
    static const char *const fields[] = {"sandbox_id", "wait", NULL};
    const char *id;
    bool wait = false;
    if (jin_known(p, fields, e) < 0 || payload_id(p, &id, e) < 0 ||
        jin_bool(p, "wait", &wait, e) < 0 || core_stop(c->core, c->tenant, id, wait, e) < 0)
        return -1;
    *out = json_pack("{s:s,s:b}", "sandbox_id", id, "stopped", 1);
    return 0;
}

static int t_catalog(http_ctx *c, const char *op, json_t *p, json_t **out, core_error *e)
{
    static const char *const none[] = {NULL};
    if (jin_known(p, none, e) < 0)
        return -1;
    core_image v[64];
    size_t n = core_catalog(c->core, v, 64);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, json_pack("{s:s,s:s,s:s}", "name", v[i].name, "kind",
                                             v[i].kind, "oci_ref", v[i].ref));
    *out = json_pack("{s:o}", "images", arr);
    return 0;
}

/* sandbox::fs::OP: the file API's operation, its payload as is. */
static int t_fs(http_ctx *c, const char *op, json_t *p, json_t **out, core_error *e)
{
    const char *id;
    sandbox *s;
    char base[96];
    if (jin_known(p, api_fs_fields(op), e) < 0 || payload_id(p, &id, e) < 0 ||
        core_get(c->core, c->tenant, id, &s, e) < 0)
        return -1;
    snprintf(base, sizeof(base), "/v1/sandboxes/%s/files", sandbox_id(s));
    int rc = api_fs_call(c->core, s, op, p, c->client_fd, base, out, e);
    sandbox_unref(s);
    return rc;
}

static const struct {
    const char *id;
    iii_fn fn;
    const char *fs_op;
} functions[] = {
    {"sandbox::create", t_create, NULL},      {"sandbox::exec", t_exec, NULL},
    {"sandbox::run", t_run, NULL},            {"sandbox::list", t_list, NULL},
    {"sandbox::stop", t_stop, NULL},          {"sandbox::catalog::list", t_catalog, NULL},
    {"sandbox::fs::ls", t_fs, "ls"},          {"sandbox::fs::stat", t_fs, "stat"},
    {"sandbox::fs::mkdir", t_fs, "mkdir"},    {"sandbox::fs::write", t_fs, "write"},
    {"sandbox::fs::read", t_fs, "read"},      {"sandbox::fs::rm", t_fs, "rm"},
    {"sandbox::fs::chmod", t_fs, "chmod"},    {"sandbox::fs::mv", t_fs, "mv"},
    {"sandbox::fs::grep", t_fs, "grep"},      {"sandbox::fs::sed", t_fs, "sed"},
    /* cella's own, beside iii's ten */
    {"sandbox::fs::glob", t_fs, "glob"},
};

static void h_trigger(http_ctx *c)
{
    /* The envelope as iii's SDKs send it: function_id (the Agent
     * Quickstart's JSON says "trigger"), and the client-side bound as
     * timeoutMs (Node) or timeout_ms (Python): accepted and left to the
     * caller, since each function has its own timeout fields. */
    static const char *const fields[] = {"function_id", "trigger", "payload", "timeoutMs",
                                         "timeout_ms", NULL};
    core_error e;
    json_t *j = NULL, *out = NULL;
    const char *fid = NULL, *alias = NULL;
    uint64_t ignored;
    int got, got_alias;
    if (jin_parse(c->body, c->body_len, &j, &e) < 0 || jin_known(j, fields, &e) < 0 ||
        jin_u64(j, "timeoutMs", 0, UINT64_MAX, &ignored, &e) < 0 ||
        jin_u64(j, "timeout_ms", 0, UINT64_MAX, &ignored, &e) < 0 ||
        (got = jin_str(j, "function_id", &fid, &e)) < 0 ||
        (got_alias = jin_str(j, "trigger", &alias, &e)) < 0)
        goto error;
    if (got && got_alias && strcmp(fid, alias) != 0) {
        core_fail(&e, S001, "invalid request: 'function_id' and 'trigger' name different "
                  "functions; send one of them");
        goto error;
    }
    if (!got && !got_alias) {
        jin_missing(&e, "function_id");
        goto error;
    }
    if (!got)
        fid = alias;
    json_t *p = json_object_get(j, "payload");
    if (p && !json_is_null(p) && !json_is_object(p)) {
        core_fail(&e, S001, "invalid request: field 'payload' must be an object");
        goto error;
    }
    if (!p || json_is_null(p)) {
        p = json_object();
        json_object_set_new(j, "payload", p);
    }
    for (size_t i = 0; i < sizeof(functions) / sizeof(functions[0]); i++) {
        if (strcmp(fid, functions[i].id) != 0)
            continue;
        if (functions[i].fn(c, functions[i].fs_op, p, &out, &e) < 0)
            goto error;
        http_reply_json(c, 200, out);
        json_decref(j);
        return;
    }
    core_fail(&e, S001, "invalid request: unknown function_id '%.64s'; the sandbox::* functions "
              "are create, exec, run, list, stop, catalog::list and fs::{ls, stat, mkdir, write, "
              "read, rm, chmod, mv, grep, sed, glob}", fid);
    e.http_status = 404;
error:
    http_reply_error(c, &e);
    json_decref(j);
}

/* iii's error object as it is, not wrapped: {type, code, message,
 * docs_url, retryable, fix, fix_note}. */
static json_t *iii_error(const core_error *e, int *status)
{
    *status = core_http_status(e);
    return http_error_object(e);
}

const http_route api_iii_routes[] = {
    {"POST", "/v1/trigger", NULL, 0, h_trigger, iii_error},
    {NULL, NULL, NULL, 0, NULL, NULL},
};
