/* Typed one-shot runs on the native POST /v1/run: the JSON of the typed
 * fields in, the typed outputs out. The values' texts are core's
 * (core/typed.h); this file only maps them to and from JSON. */
#include "api/run_typed.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/jsonin.h"
#include "util/alloc.h"
#include "util/text.h"

static const char *const typed_fields[] = {"inputs", "outputs", "auto_io", "command",
                                           "arguments", "retries", "cache", NULL};

bool api_run_is_typed(json_t *j)
{
    for (size_t i = 0; typed_fields[i]; i++) {
        json_t *v = json_object_get(j, typed_fields[i]);
        if (v && !json_is_null(v))
            return true;
    }
    return false;
}

/* Names are file names under /var/inputs and /var/outputs; in auto-IO
 * mode, also variables of the code's namespace when they are identifiers. */
static int check_name(core_error *e, const api_typed_in *x, const char *what, const char *name)
{
    if (!typed_name_ok(name))
        return core_fail(e, S001, "invalid request: %s name '%.64s' is not allowed: a name is "
                         "a file name under /var/%ss, 1 to %d bytes, without '/', and not '.' "
                         "or '..'", what, name, what, TYPED_NAME_MAX);
    /* The code runs in a namespace that holds the wrapper's __name__,
     * __file__ and __builtins__: a name like those would replace them. */
    if (x->r.mode == TM_AUTO_IO && !strncmp(name, "__", 2))
        return core_fail(e, S001, "invalid request: %s name '%.64s' is not allowed in auto-IO "
                         "mode: names starting with '__' are the namespace's own (rename it, "
                         "or set auto_io to false)", what, name);
    return 0;
}

static int bad_type(core_error *e, const char *field, const char *name)
{
    return core_fail(e, S001, "invalid request: %s.%s must name a type: int, float, str, bool, "
                     "datetime, timedelta, file or dir", field, name);
}

/* A JSON value of an input as the canonical text of its type. */
static int input_value(const char *name, typed_type t, json_t *v, cbuf *out, core_error *e)
{
    char buf[64], why[200];
    const uint8_t *p = NULL;
    size_t n = 0;
    cbuf tmp;
    cbuf_init(&tmp);
    int rc = -1;
    const char *want = NULL;
    switch (t) {
    case TT_INT:
        if (!json_is_integer(v)) {
            want = "an integer";
            break;
        }
        n = (size_t)snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
        p = (const uint8_t *)buf;
        break;
    case TT_FLOAT:
        if (!json_is_number(v)) {
            want = "a number";
            break;
        }
        typed_float_text(json_number_value(v), buf, sizeof(buf));
        p = (const uint8_t *)buf;
        n = strlen(buf);
        break;
    case TT_BOOL:
        if (!json_is_boolean(v)) {
            want = "true or false";
            break;
        }
        p = (const uint8_t *)(json_is_true(v) ? "true" : "false");
        n = strlen((const char *)p);
        break;
    case TT_STR:
    case TT_DATETIME:
        if (!json_is_string(v)) {
            want = t == TT_STR ? "a string" : "an ISO 8601 date and time string";
            break;
        }
        p = (const uint8_t *)json_string_value(v);
        n = json_string_length(v);
        break;
    case TT_TIMEDELTA:
        if (json_is_number(v)) {
            /* Seconds, to the microsecond; the bound keeps it in int64 µs. */
            double s = json_number_value(v);
            if (!(fabs(s) < 9.2e12)) {
                want = "a number of seconds below 9.2e12";
                break;
            }
            typed_timedelta_text(llround(s * 1e6), buf, sizeof(buf));
            p = (const uint8_t *)buf;
            n = strlen(buf);
        } else if (json_is_string(v)) {
            p = (const uint8_t *)json_string_value(v);
            n = json_string_length(v);
        } else {
            want = "a number of seconds or an ISO 8601 duration string";
        }
        break;
    case TT_FILE:
    case TT_DIR: {
        /* A file's bytes, or a directory as a tar archive of its contents. */
        const char *key = t == TT_FILE ? "content_b64" : "tar_b64";
        json_t *b = json_object_get(v, key);
        if (!json_is_object(v) || json_object_size(v) != 1 || !json_is_string(b)) {
            want = t == TT_FILE ? "{\"content_b64\": \"<base64>\"}"
                                : "{\"tar_b64\": \"<base64 of a tar archive>\"}";
            break;
        }
        cella_err err;
        if (base64_decode(&tmp, json_string_value(b), json_string_length(b), &err) < 0) {
            core_fail(e, S001, "invalid request: inputs.%s.value.%s: %s", name, key, err.msg);
            goto out;
        }
        p = cbuf_head(&tmp);
        n = cbuf_avail(&tmp);
        break;
    }
    }
    if (want) {
        core_fail(e, S001, "invalid request: inputs.%s.value must be %s", name, want);
        goto out;
    }
    if (typed_parse(t, p, n, out, why, sizeof(why)) < 0) {
        core_fail(e, S001, "invalid request: inputs.%s.value: %s", name, why);
        goto out;
    }
    rc = 0;
out:
    cbuf_free(&tmp);
    return rc;
}

static int decode_inputs(json_t *j, api_typed_in *x, core_error *e)
{
    json_t *in = json_object_get(j, "inputs");
    if (!in || json_is_null(in))
        return 0;
    if (!json_is_object(in))
        return core_fail(e, S001, "invalid request: field 'inputs' must be an object of "
                         "{\"<name>\": {\"type\": ..., \"value\": ...}}");
    size_t n = json_object_size(in);
    if (n > TYPED_MAX_VARS)
        return core_fail(e, S001, "invalid request: at most %d inputs", TYPED_MAX_VARS);
    x->inputs = cella_calloc(n + 1, sizeof(*x->inputs));
    x->values = cella_calloc(n + 1, sizeof(*x->values));
    const char *name;
    json_t *spec;
    json_object_foreach(in, name, spec) {
        if (check_name(e, x, "input", name) < 0)
            return -1;
        json_t *t = json_object_get(spec, "type"), *v = json_object_get(spec, "value");
        if (!json_is_object(spec) || json_object_size(spec) != 2 || !json_is_string(t) || !v)
            return core_fail(e, S001, "invalid request: inputs.%s must be {\"type\": ..., "
                             "\"value\": ...}", name);
        typed_value *tv = &x->inputs[x->r.n_inputs];
        if (typed_type_parse(json_string_value(t), &tv->type) < 0)
            return bad_type(e, "inputs", name);
        cbuf *val = &x->values[x->r.n_inputs];
        cbuf_init(val);
        x->r.n_inputs++;
        if (input_value(name, tv->type, v, val, e) < 0)
            return -1;
        tv->name = name;
        tv->data = cbuf_head(val);
        tv->len = cbuf_avail(val);
    }
    x->r.inputs = x->inputs;
    return 0;
}

static int decode_outputs(json_t *j, api_typed_in *x, core_error *e)
{
    json_t *out = json_object_get(j, "outputs");
    if (!out || json_is_null(out))
        return 0;
    if (!json_is_object(out))
        return core_fail(e, S001, "invalid request: field 'outputs' must be an object of "
                         "{\"<name>\": \"<type>\"}");
    size_t n = json_object_size(out);
    if (n > TYPED_MAX_VARS)
        return core_fail(e, S001, "invalid request: at most %d outputs", TYPED_MAX_VARS);
    x->outputs = cella_calloc(n + 1, sizeof(*x->outputs));
    const char *name;
    json_t *t;
    json_object_foreach(out, name, t) {
        if (check_name(e, x, "output", name) < 0)
            return -1;
        typed_decl *d = &x->outputs[x->r.n_outputs];
        if (!json_is_string(t) || typed_type_parse(json_string_value(t), &d->type) < 0)
            return bad_type(e, "outputs", name);
        d->name = name;
        x->r.n_outputs++;
    }
    x->r.outputs = x->outputs;
    return 0;
}

static int decode_command(json_t *j, api_typed_in *x, core_error *e)
{
    char **cmd = NULL, **args = NULL;
    int rc = -1;
    if (jin_strv(j, "command", &cmd, e) < 0 || jin_strv(j, "arguments", &args, e) < 0)
        goto out;
    size_t nc = cella_strv_len(cmd), na = args ? cella_strv_len(args) : 0;
    if (nc == 0 || !cmd[0][0]) {
        core_fail(e, S001, "invalid request: field 'command' must be a non-empty array whose "
                  "first item names the program");
        goto out;
    }
    if (nc + na > TYPED_MAX_ARGV) {
        core_fail(e, S001, "invalid request: command and arguments hold at most %d items "
                  "together", TYPED_MAX_ARGV);
        goto out;
    }
    x->argv = cella_calloc(nc + na + 1, sizeof(char *));
    for (size_t i = 0; i < nc; i++)
        x->argv[i] = cella_strdup(cmd[i]);
    for (size_t i = 0; i < na; i++)
        x->argv[nc + i] = cella_strdup(args[i]);
    x->r.argv = x->argv;
    rc = 0;
out:
    cella_strv_free(cmd);
    cella_strv_free(args);
    return rc;
}

int api_typed_decode(json_t *j, api_typed_in *x, core_error *e)
{
    static const char *const fields[] = {"image", "lang", "code", "files", "env", "stdin",
                                         "timeout_ms", "keep_sandbox", "inputs", "outputs",
                                         "auto_io", "command", "arguments", "retries", "cache",
                                         NULL};
    memset(x, 0, sizeof(*x));
    cbuf_init(&x->base.in);
    if (jin_known(j, fields, e) < 0)
        return -1;
    json_t *cmd = json_object_get(j, "command");
    bool command = cmd && !json_is_null(cmd);
    bool auto_io = false;
    int has_auto = jin_bool(j, "auto_io", &auto_io, e);
    if (has_auto < 0)
        return -1;
    unsigned flags = API_RUN_MORE_FIELDS | (command ? API_RUN_NO_CODE : API_RUN_LANG_PYTHON);
    if (api_run_decode_ex(j, &x->base, flags, e) < 0)
        return -1;
    x->r.run = x->base.r;
    if (command) {
        if (has_auto && auto_io)
            return core_fail(e, S001, "invalid request: auto_io is for code; a command reads "
                             "/var/inputs and writes /var/outputs itself");
        if (decode_command(j, x, e) < 0)
            return -1;
        x->r.mode = TM_COMMAND;
    } else {
        json_t *a = json_object_get(j, "arguments");
        if (a && !json_is_null(a))
            return core_fail(e, S001, "invalid request: 'arguments' go with 'command'");
        const char *lang = x->r.run.lang;
        bool python = !strcmp(lang, "python") || !strcmp(lang, "py");
        /* Auto-IO generates Python: it is the default for Python code only. */
        if (!has_auto)
            auto_io = python;
        if (auto_io && !python)
            return core_fail(e, S001, "invalid request: auto_io needs lang python (the wrapper "
                             "it generates is Python); set auto_io to false to run the code as "
                             "it is, reading /var/inputs and writing /var/outputs itself");
        x->r.mode = auto_io ? TM_AUTO_IO : TM_VERBATIM;
    }
    uint64_t retries = 0;
    if (jin_u64(j, "retries", 0, TYPED_MAX_RETRIES, &retries, e) < 0)
        return -1;
    x->r.retries = (unsigned)retries;
    const char *cache = NULL;
    if (jin_str(j, "cache", &cache, e) < 0)
        return -1;
    if (!cache || !strcmp(cache, "auto"))
        x->r.cache = TC_AUTO;
    else if (!strcmp(cache, "override"))
        x->r.cache = TC_OVERRIDE;
    else if (!strcmp(cache, "disable"))
        x->r.cache = TC_DISABLE;
    else
        return core_fail(e, S001, "invalid request: field 'cache' must be auto, override or "
                         "disable");
    if (decode_inputs(j, x, e) < 0 || decode_outputs(j, x, e) < 0)
        return -1;
    return 0;
}

void api_typed_in_free(api_typed_in *x)
{
    api_run_in_free(&x->base);
    for (size_t i = 0; x->values && i < x->r.n_inputs; i++)
        cbuf_free(&x->values[i]);
    cella_free(x->values);
    cella_free(x->inputs);
    cella_free(x->outputs);
    cella_strv_free(x->argv);
    memset(x, 0, sizeof(*x));
}

/* ---- the answer ------------------------------------------------------------- */

json_t *api_typed_value_json(typed_type t, const uint8_t *p, size_t n)
{
    char s[TYPED_SCALAR_MAX + 1];
    size_t k = n < TYPED_SCALAR_MAX ? n : TYPED_SCALAR_MAX;
    memcpy(s, p, k);
    s[k] = '\0';
    switch (t) {
    case TT_INT:
        return json_integer(strtoll(s, NULL, 10));
    case TT_FLOAT:
        return json_real(strtod(s, NULL));
    case TT_BOOL:
        return json_boolean(!strcmp(s, "true"));
    case TT_STR:
    case TT_DATETIME:
        return json_stringn((const char *)p, n);
    case TT_TIMEDELTA: {
        int64_t us;
        if (typed_timedelta_us(p, n, &us) < 0)
            return NULL;
        /* Whole seconds as an integer, others as a number with a fraction. */
        if (us % 1000000 == 0)
            return json_integer(us / 1000000);
        return json_real((double)us / 1e6);
    }
    case TT_FILE:
    case TT_DIR: {
        cbuf b;
        cbuf_init(&b);
        base64_encode(&b, p, n);
        json_t *o = json_pack("{s:s%}", t == TT_FILE ? "content_b64" : "tar_b64",
                              b.data ? (const char *)cbuf_head(&b) : "", cbuf_avail(&b));
        cbuf_free(&b);
        return o;
    }
    }
    return NULL;
}

json_t *api_typed_result_json(const core_typed_result *r)
{
    json_t *o = api_exec_result_json(&r->exec);
    json_object_set_new(o, "success", json_boolean(core_typed_success(r)));
    json_object_set_new(o, "sandbox_id", r->sandbox_id[0] ? json_string(r->sandbox_id)
                                                          : json_null());
    json_t *outs = json_object();
    for (size_t i = 0; i < r->n_outputs; i++) {
        const typed_out *t = &r->outputs[i];
        json_t *v = api_typed_value_json(t->type, cbuf_head(&t->data), cbuf_avail(&t->data));
        json_object_set_new(outs, t->name, v ? v : json_null());
    }
    json_object_set_new(o, "outputs", outs);
    if (r->has_outputs_error) {
        /* Messages quote program output, cut short: repaired to valid UTF-8. */
        cbuf m;
        cbuf_init(&m);
        cbuf_append(&m, r->outputs_error, strlen(r->outputs_error));
        json_object_set_new(o, "outputs_error", api_text_json(&m));
        cbuf_free(&m);
    } else {
        json_object_set_new(o, "outputs_error", json_null());
    }
    json_object_set_new(o, "attempts", json_integer(r->attempts));
    json_object_set_new(o, "cached", json_boolean(r->cached));
    return o;
}

void api_run_typed(http_ctx *c, json_t *j)
{
    core_error e;
    api_typed_in x;
    core_typed_result res;
    core_typed_result_init(&res);
    if (api_typed_decode(j, &x, &e) < 0 ||
        core_typed_run(c->core, c->tenant, &x.r, c->client_fd, &res, &e) < 0) {
        http_reply_error(c, &e);
    } else {
        http_reply_json(c, 200, api_typed_result_json(&res));
    }
    core_typed_result_free(&res);
    api_typed_in_free(&x);
}
