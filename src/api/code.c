/* Code mode's routes: POST /v1/code/run and POST /v1/code/resume. The
 * bodies are decoded strictly (api/jsonin.h); values (inputs, results) are
 * handed to the worker as JSON text in the tagged form of code/code_run.h,
 * and the worker's JSON texts (result, call arguments) are embedded in the
 * answer. A Python error is an answer (200, status "error"), not an HTTP
 * failure; HTTP errors are the request's own (S001, S500...). */
#include "api/code.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/jsonin.h"
#include "api/native.h"
#include "core/code_pool.h"
#include "util/alloc.h"

/* The bounds of limits' fields besides the configured time and memory. */
#define CODE_API_MIN_MEMORY (1u << 20)
#define CODE_API_MAX_ALLOCS (1ull << 40)
#define CODE_API_MAX_DEPTH 100000u
#define CODE_API_MAX_CALLS 1000000u
#define CODE_API_MAX_NESTING 1000u
/* How deep a value (an input, a call's answer, a result) may nest. jansson
 * recurses to write and read JSON, on an HTTP thread's 512 KiB stack; a
 * value a few thousand levels deep would overflow it. */
#define CODE_API_MAX_VALUE_DEPTH 256

static bool is_identifier(const char *s)
{
    if (!*s || (*s >= '0' && *s <= '9'))
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return false;
    return true;
}

/* Whether v nests deeper than left levels (recursion bounded by left). */
static bool too_deep(json_t *v, int left)
{
    if (!json_is_array(v) && !json_is_object(v))
        return false;
    if (left == 0)
        return true;
    size_t i;
    const char *k;
    json_t *x;
    if (json_is_array(v)) {
        json_array_foreach(v, i, x)
            if (too_deep(x, left - 1))
                return true;
    } else {
        json_object_foreach(v, k, x)
            if (too_deep(x, left - 1))
                return true;
    }
    return false;
}

/* How many values a value from the worker (a result, a call's arguments)
 * may hold. The worker's text may be as big as a frame (64 MiB) from a tiny
 * heap (a list holding one list 21,000 times), and jansson spends 50 to 250
 * bytes on each value it parses (an empty object's hash table): 63 MB of
 * "[{},{},...]" would cost the daemon some 5 GB. A million values cost at
 * most a few hundred MB, briefly. */
#define CODE_API_MAX_VALUES 1000000u

typedef enum text_verdict { TEXT_OK, TEXT_TOO_DEEP, TEXT_TOO_MANY } text_verdict;

/* JSON text, before jansson parses it, in one pass: whether it nests deeper
 * than max_depth (brackets outside strings) or holds more values (arrays,
 * objects, strings that are not keys, numbers, literals) than *budget, which
 * it then spends. Malformed text is left to jansson. */
static text_verdict text_check(const char *s, size_t n, int max_depth, uint64_t *budget)
{
    char stack[CODE_API_MAX_VALUE_DEPTH + 1];
    int depth = 0;
    uint64_t values = 0;
    char prev = 0;                /* the last token: [ { , : or v (a value's end) */
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            continue;
        if (c == '"') {
            bool key = depth > 0 && stack[depth - 1] == '{' && (prev == '{' || prev == ',');
            values += !key;
            for (i++; i < n && s[i] != '"'; i++)
                if (s[i] == '\\')
                    i++;
            prev = 'v';
        } else if (c == '[' || c == '{') {
            values++;
            if (depth >= max_depth || depth >= CODE_API_MAX_VALUE_DEPTH)
                return TEXT_TOO_DEEP;
            stack[depth++] = c;
            prev = c;
        } else if (c == ']' || c == '}') {
            depth -= depth > 0;
            prev = 'v';
        } else if (c == ',' || c == ':') {
            prev = c;
        } else {
            values += prev != 'v';   /* a number or literal's first character */
            prev = 'v';
        }
        if (values > *budget)
            return TEXT_TOO_MANY;
    }
    *budget -= values;
    return TEXT_OK;
}

/* Any JSON value as compact text (malloc'd, free()). */
static char *dump_value(json_t *v)
{
    return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
}

typedef struct run_in {
    code_pool_run_req r;
    code_input *inputs;
    const char **functions;
} run_in;

static void run_in_free(run_in *x)
{
    for (size_t i = 0; i < x->r.ninputs; i++)
        free((char *)x->inputs[i].json);
    cella_free(x->inputs);
    cella_free(x->functions);
}

static int decode_limits(http_ctx *c, json_t *j, code_limits *l, core_error *e)
{
    const cella_config *cfg = c->cfg;
    uint64_t max_bytes = cfg->code_max_memory_mb << 20;
    l->max_time_us = (CODE_DEFAULT_MAX_TIME_US / 1000 < cfg->code_max_time_ms
                          ? CODE_DEFAULT_MAX_TIME_US / 1000
                          : cfg->code_max_time_ms) * 1000;
    l->max_bytes = CODE_DEFAULT_MAX_BYTES < max_bytes ? CODE_DEFAULT_MAX_BYTES : max_bytes;
    json_t *o = json_object_get(j, "limits");
    if (!o || json_is_null(o))
        return 0;
    if (!json_is_object(o))
        return core_fail(e, S001, "invalid request: field 'limits' must be an object");
    static const char *const known[] = {"max_time_ms", "max_memory_bytes", "max_allocations",
                                        "max_recursion_depth", "max_host_calls", "max_nesting",
                                        NULL};
    uint64_t v;
    int r;
    if (jin_known(o, known, e) < 0)
        return -1;
    if ((r = jin_u64(o, "max_time_ms", 1, cfg->code_max_time_ms, &v, e)) < 0)
        return -1;
    if (r)
        l->max_time_us = v * 1000;
    if ((r = jin_u64(o, "max_memory_bytes", CODE_API_MIN_MEMORY, max_bytes, &v, e)) < 0)
        return -1;
    if (r)
        l->max_bytes = (size_t)v;
    if ((r = jin_u64(o, "max_allocations", 1, CODE_API_MAX_ALLOCS, &v, e)) < 0)
        return -1;
    if (r)
        l->max_allocs = (size_t)v;
    if ((r = jin_u64(o, "max_recursion_depth", 1, CODE_API_MAX_DEPTH, &v, e)) < 0)
        return -1;
    if (r)
        l->max_depth = (uint32_t)v;
    if ((r = jin_u64(o, "max_host_calls", 1, CODE_API_MAX_CALLS, &v, e)) < 0)
        return -1;
    if (r)
        l->max_calls = (uint32_t)v;
    if ((r = jin_u64(o, "max_nesting", 1, CODE_API_MAX_NESTING, &v, e)) < 0)
        return -1;
    if (r)
        l->max_nesting = (uint32_t)v;
    return 0;
}

static int decode_run(http_ctx *c, json_t *j, run_in *x, core_error *e)
{
    static const char *const known[] = {"code", "inputs", "functions", "limits",
                                        "top_level_await", NULL};
    if (jin_known(j, known, e) < 0)
        return -1;
    const char *code = NULL;
    int r = jin_str(j, "code", &code, e);
    if (r < 0)
        return -1;
    if (r == 0)
        return jin_missing(e, "code");
    x->r.code = code;
    x->r.code_len = json_string_length(json_object_get(j, "code"));
    json_t *in = json_object_get(j, "inputs");
    if (in && !json_is_null(in)) {
        if (!json_is_object(in))
            return core_fail(e, S001, "invalid request: field 'inputs' must be an object of "
                             "name: value");
        x->inputs = cella_calloc(json_object_size(in) + 1, sizeof(*x->inputs));
        const char *name;
        json_t *v;
        json_object_foreach(in, name, v) {
            if (!is_identifier(name))
                return core_fail(e, S001, "invalid request: inputs key '%.80s' is not a Python "
                                 "identifier", name);
            if (too_deep(v, CODE_API_MAX_VALUE_DEPTH))
                return core_fail(e, S001, "invalid request: inputs.%.80s nests deeper than %d "
                                 "levels", name, CODE_API_MAX_VALUE_DEPTH);
            char *text = dump_value(v);
            if (!text)
                return core_fail(e, S001, "invalid request: inputs.%.80s cannot be encoded", name);
            x->inputs[x->r.ninputs++] = (code_input){name, text};
        }
        x->r.inputs = x->inputs;
    }
    json_t *fn = json_object_get(j, "functions");
    if (fn && !json_is_null(fn)) {
        if (!json_is_array(fn))
            return core_fail(e, S001, "invalid request: field 'functions' must be an array of "
                             "names");
        x->functions = cella_calloc(json_array_size(fn) + 1, sizeof(*x->functions));
        size_t i;
        json_t *v;
        json_array_foreach(fn, i, v) {
            if (!json_is_string(v) || !is_identifier(json_string_value(v)))
                return core_fail(e, S001, "invalid request: functions[%zu] must be a Python "
                                 "identifier", i);
            x->functions[i] = json_string_value(v);
        }
        x->r.functions = x->functions;
        x->r.nfunctions = json_array_size(fn);
        x->r.has_functions = x->r.nfunctions > 0;
    }
    if (decode_limits(c, j, &x->r.limits, e) < 0)
        return -1;
    return jin_bool(j, "top_level_await", &x->r.top_level_await, e) < 0 ? -1 : 0;
}

/* A JSON text from the worker as a value; NULL when it nests too deeply,
 * holds more values than are left in *budget (one answer's, shared by all
 * its texts; *too_many set), or is not JSON (a worker bug): the caller
 * answers an error. */
static json_t *load_value(code_wire_str s, uint64_t *budget, bool *too_many)
{
    if (!s.p)
        return NULL;
    text_verdict v = text_check(s.p, s.n, CODE_API_MAX_VALUE_DEPTH, budget);
    if (v == TEXT_TOO_MANY)
        *too_many = true;
    if (v != TEXT_OK)
        return NULL;
    /* A Python str may hold NUL ("\\u0000" in JSON). */
    return json_loadb(s.p, s.n, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
}

static json_t *too_many_values(const char *what)
{
    char msg[200];
    snprintf(msg, sizeof(msg), "%s too large to send: more than %u JSON values",
             what, CODE_API_MAX_VALUES);
    return json_pack("{s:s, s:s, s:n}", "type", "MemoryError", "message", msg, "line");
}

/* The answer to a step. *discard: the run paused on calls whose arguments
 * cannot be sent, so it must be ended (the caller frees it in the pool):
 * the client gets an error and no run_id. */
static json_t *answer_json(const code_answer *a, bool *discard)
{
    const code_wire_msg *m = &a->m;
    bool too_many = false;
    uint64_t budget = CODE_API_MAX_VALUES;
    *discard = false;
    json_t *o = json_object();
    json_t *err = NULL;
    if (m->kind == CODE_STEP_COMPLETE) {
        json_t *v = load_value(m->result_json, &budget, &too_many);
        if (v) {
            json_object_set_new(o, "status", json_string("complete"));
            json_object_set_new(o, "result", v);
        } else if (too_many) {
            err = too_many_values("the result is");
        } else {
            err = json_pack("{s:s, s:s, s:n}", "type", "ValueError", "message",
                            "the result cannot be sent: it nests deeper than 256 levels, or "
                            "is not JSON", "line");
        }
    } else if (m->kind == CODE_STEP_CALL) {
        json_t *calls = json_array();
        for (size_t i = 0; i < m->ncalls && !err; i++) {
            json_t *args = load_value(m->calls[i].args_json, &budget, &too_many);
            json_t *kwargs = args ? load_value(m->calls[i].kwargs_json, &budget, &too_many) : NULL;
            if (!json_is_array(args) || !json_is_object(kwargs)) {
                json_decref(args);
                json_decref(kwargs);
                if (too_many)
                    err = too_many_values("a call's arguments are");
                else
                    err = json_pack("{s:s, s:s, s:n}", "type", "ValueError", "message",
                                    "a call's arguments cannot be sent: they nest deeper than "
                                    "256 levels, or are not JSON", "line");
                /* The client cannot answer calls it was not sent. */
                *discard = a->run_id[0] != 0;
                break;
            }
            cbuf name;
            cbuf_init(&name);
            cbuf_append(&name, m->calls[i].function.p, m->calls[i].function.n);
            json_t *call = json_object();
            json_object_set_new(call, "call_id", json_integer((json_int_t)m->calls[i].id));
            json_object_set_new(call, "function", api_text_json(&name));
            json_object_set_new(call, "args", args);
            json_object_set_new(call, "kwargs", kwargs);
            json_array_append_new(calls, call);
            cbuf_free(&name);
        }
        if (!err) {
            json_t *pending = json_array();
            for (size_t i = 0; i < m->npending; i++)
                json_array_append_new(pending, json_integer((json_int_t)m->pending[i]));
            json_object_set_new(o, "status", json_string("call"));
            json_object_set_new(o, "run_id", json_string(a->run_id));
            json_object_set_new(o, "calls", calls);
            json_object_set_new(o, "pending", pending);
        } else {
            json_decref(calls);
        }
    } else {
        cbuf t, msg;
        cbuf_init(&t);
        cbuf_init(&msg);
        cbuf_append(&t, m->err_type.p ? m->err_type.p : "Exception",
                    m->err_type.p ? m->err_type.n : 9);
        cbuf_append(&msg, m->err_msg.p ? m->err_msg.p : "", m->err_msg.p ? m->err_msg.n : 0);
        err = json_object();
        json_object_set_new(err, "type", api_text_json(&t));
        json_object_set_new(err, "message", api_text_json(&msg));
        json_object_set_new(err, "line", m->err_line > 0 ? json_integer(m->err_line) : json_null());
        cbuf_free(&t);
        cbuf_free(&msg);
        /* An answer the run refused (a malformed value) leaves it paused. */
        if (a->run_id[0])
            json_object_set_new(o, "run_id", json_string(a->run_id));
    }
    if (err) {
        json_object_set_new(o, "status", json_string("error"));
        json_object_set_new(o, "error", err);
    }
    cbuf out;
    cbuf_init(&out);
    if (m->out.p)
        cbuf_append(&out, m->out.p, m->out.n);
    json_object_set_new(o, "stdout", api_text_json(&out));
    cbuf_free(&out);
    if (m->out_truncated)
        json_object_set_new(o, "stdout_truncated", json_true());
    json_object_set_new(o, "duration_us", json_integer((json_int_t)m->duration_us));
    return o;
}

/* A step's answer; a run paused on calls that cannot be sent is ended. */
static json_t *step_answer(http_ctx *c, const code_answer *a)
{
    bool discard;
    json_t *o = answer_json(a, &discard);
    if (discard)
        code_pool_discard(core_code_pool(c->core), c->tenant, a->run_id,
                          "its calls' arguments could not be sent");
    return o;
}

int api_code_run_json(http_ctx *c, json_t *body, json_t **out, core_error *e)
{
    run_in x = {0};
    code_answer a = {0};
    cbuf_init(&a.frame);
    int rc = -1;
    if (decode_run(c, body, &x, e) == 0 &&
        code_pool_run(core_code_pool(c->core), c->tenant, &x.r, &a, e) == 0) {
        *out = step_answer(c, &a);
        rc = 0;
    }
    code_answer_free(&a);
    run_in_free(&x);
    return rc;
}

static void h_code_run(http_ctx *c)
{
    core_error e;
    json_t *j = NULL, *out = NULL;
    if (jin_parse(c->body, c->body_len, &j, &e) < 0 || api_code_run_json(c, j, &out, &e) < 0)
        http_reply_error(c, &e);
    else
        http_reply_json(c, 200, out);
    json_decref(j);
}

typedef struct resume_in {
    const char *run_id;
    code_result *results;
    size_t n;
} resume_in;

static void resume_in_free(resume_in *x)
{
    for (size_t i = 0; i < x->n; i++)
        free((char *)x->results[i].value_json);
    cella_free(x->results);
}

static int decode_result(json_t *v, size_t i, code_result *r, core_error *e)
{
    if (!json_is_object(v))
        return core_fail(e, S001, "invalid request: results[%zu] must be an object", i);
    static const char *const known[] = {"call_id", "value", "error", NULL};
    char key[40];
    snprintf(key, sizeof(key), "results[%zu]", i);
    if (jin_known(v, known, e) < 0)
        return -1;
    json_t *id = json_object_get(v, "call_id");
    if (!json_is_integer(id) || json_integer_value(id) < 1)
        return core_fail(e, S001, "invalid request: %s.call_id must be a call id (a whole "
                         "number from 1)", key);
    r->call_id = (uint64_t)json_integer_value(id);
    json_t *val = json_object_get(v, "value");
    json_t *err = json_object_get(v, "error");
    if (!val == !err)
        return core_fail(e, S001, "invalid request: %s needs exactly one of 'value' and "
                         "'error'", key);
    if (val) {
        if (too_deep(val, CODE_API_MAX_VALUE_DEPTH))
            return core_fail(e, S001, "invalid request: %s.value nests deeper than %d levels",
                             key, CODE_API_MAX_VALUE_DEPTH);
        /* null is a value here: Python's None. */
        if (!(r->value_json = dump_value(val)))
            return core_fail(e, S001, "invalid request: %s.value cannot be encoded", key);
        return 0;
    }
    static const char *const eknown[] = {"type", "message", NULL};
    if (!json_is_object(err) || jin_known(err, eknown, e) < 0)
        return json_is_object(err) ? -1
                                   : core_fail(e, S001, "invalid request: %s.error must be an "
                                               "object {type, message}", key);
    json_t *t = json_object_get(err, "type"), *m = json_object_get(err, "message");
    if (!json_is_string(t) || !is_identifier(json_string_value(t)))
        return core_fail(e, S001, "invalid request: %s.error.type must be an exception type "
                         "name such as ValueError", key);
    if (m && !json_is_null(m) && !json_is_string(m))
        return core_fail(e, S001, "invalid request: %s.error.message must be a string", key);
    r->exc_type = json_string_value(t);
    r->exc_message = json_is_string(m) ? json_string_value(m) : "";
    return 0;
}

static int decode_resume(json_t *j, resume_in *x, core_error *e)
{
    static const char *const known[] = {"run_id", "results", NULL};
    if (jin_known(j, known, e) < 0)
        return -1;
    int r = jin_str(j, "run_id", &x->run_id, e);
    if (r <= 0)
        return r < 0 ? -1 : jin_missing(e, "run_id");
    uint8_t b[16];
    if (!cella_id_parse(x->run_id, b))
        return core_fail(e, S001, "invalid request: run_id '%.60s' is not a run id (a UUID)",
                         x->run_id);
    json_t *res = json_object_get(j, "results");
    if (!res || json_is_null(res))
        return jin_missing(e, "results");
    if (!json_is_array(res) || json_array_size(res) == 0)
        return core_fail(e, S001, "invalid request: field 'results' must be a non-empty array");
    x->results = cella_calloc(json_array_size(res), sizeof(*x->results));
    size_t i;
    json_t *v;
    json_array_foreach(res, i, v) {
        x->n = i + 1;
        if (decode_result(v, i, &x->results[i], e) < 0)
            return -1;
    }
    return 0;
}

int api_code_resume_json(http_ctx *c, json_t *body, json_t **out, core_error *e)
{
    resume_in x = {0};
    code_answer a = {0};
    cbuf_init(&a.frame);
    int rc = -1;
    if (decode_resume(body, &x, e) == 0 &&
        code_pool_resume(core_code_pool(c->core), c->tenant, x.run_id, x.results, x.n, &a,
                         e) == 0) {
        *out = step_answer(c, &a);
        rc = 0;
    }
    code_answer_free(&a);
    resume_in_free(&x);
    return rc;
}

static void h_code_resume(http_ctx *c)
{
    core_error e;
    json_t *j = NULL, *out = NULL;
    if (jin_parse(c->body, c->body_len, &j, &e) < 0 || api_code_resume_json(c, j, &out, &e) < 0)
        http_reply_error(c, &e);
    else
        http_reply_json(c, 200, out);
    json_decref(j);
}

const http_route api_code_routes[] = {
    {"POST", "/v1/code/run", NULL, 0, h_code_run, NULL},
    {"POST", "/v1/code/resume", NULL, 0, h_code_resume, NULL},
    {NULL, NULL, NULL, 0, NULL, NULL},
};
