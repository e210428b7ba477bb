/* libFuzzer target: bytes that come over HTTP.
 *  - Request bodies (src/api/jsonin.c): jin_parse, then the typed getters on
 *    a few keys. Checked: env results are all "NAME=VALUE" with a valid name,
 *    the CPU count is in range.
 *  - The client's response parser and SSE splitter (src/cli/httpc.c): the
 *    input after the first byte is fed in two pieces, cut where the first
 *    byte says. Checked: the outcome (return codes, status, content type,
 *    body, the events delivered) is the same as when it is fed in one piece.
 *  - The file routes (src/api/fs.c, files.c, http/server.c): a body as an fs
 *    operation's arguments (checked: every word is key=value), a Range
 *    header (checked: a range never ends past 2^64), and URL decoding
 *    (checked: never longer, no NUL inside, %00 always noticed).
 *  - Flujo's /execute body (src/api/flujo_req.c). Checked: a decoded
 *    request has a language, its file paths are clean (relative, no ".."
 *    component, cleaning them again changes nothing), its environment is
 *    "NAME=VALUE" words, a timeout is at least 1 ms.
 *  - Typed runs (src/core/typed_codec.c, src/api/run_typed.c): the input as
 *    a value of every type (checked: a canonical text is its own canonical
 *    text and renders as JSON), as a cache entry (checked: what decodes
 *    encodes and decodes to the same bytes again), and as a /v1/run body
 *    (checked: a decoded request has safe names, bounded counts, canonical
 *    inputs, and a cache key and wrapper can be made from it). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/flujo.h"
#include "api/fs.h"
#include "api/jsonin.h"
#include "api/run_typed.h"
#include "cli/httpc.h"
#include "core/errors.h"
#include "util/alloc.h"
#include "util/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

/* ---- request bodies -------------------------------------------------------- */

static void check_env(char **v)
{
    for (size_t i = 0; v[i]; i++) {
        const char *eq = strchr(v[i], '=');
        if (!eq || !env_name_valid(v[i], (size_t)(eq - v[i])))
            abort();
    }
}

static void fuzz_json(const uint8_t *d, size_t n)
{
    static const char *const keys[] = { "a", "b", "cmd", "env", "image", "stdin", "cpus", "x" };
    static const char *const allowed[] = { "a", "b", "cmd", "env", "image", NULL };
    core_error e;
    json_t *o = NULL;
    if (jin_parse(d, n, &o, &e) < 0)
        return;
    if (!json_is_object(o))
        abort();
    jin_known(o, allowed, &e);
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        const char *k = keys[i];
        const char *s = NULL;
        bool b = false;
        uint64_t u = 0;
        uint32_t milli = 0;
        char **v = NULL;
        if (jin_str(o, k, &s, &e) > 0 && !s)
            abort();
        jin_bool(o, k, &b, &e);
        jin_u64(o, k, 1, 1000000, &u, &e);
        if (jin_cpus(o, k, &milli, &e) > 0 && (milli < 10 || milli > 256000))
            abort();
        if (jin_strv(o, k, &v, &e) > 0)
            cella_strv_free(v);
        v = NULL;
        if (jin_env(o, k, &v, &e) > 0) {
            check_env(v);
            cella_strv_free(v);
        }
        cbuf out;
        cbuf_init(&out);
        bool present = false;
        if (jin_base64(o, k, &out, &present, &e) > 0 && !present)
            abort();
        cbuf_free(&out);
    }
    json_decref(o);
}

/* ---- responses and events -------------------------------------------------- */

/* Every event delivered, as "name\0len:data" records; "stop" and "fail"
 * events exercise the callback's stop and abort returns. */
static int on_event(void *arg, const char *event, const char *data, size_t len, cella_err *err)
{
    cbuf *log = arg;
    if (strlen(data) > len)
        abort();
    cbuf_append(log, event, strlen(event) + 1);
    cbuf_append(log, &len, sizeof(len));
    cbuf_append(log, data, len);
    if (!strcmp(event, "stop"))
        return 1;
    if (!strcmp(event, "fail"))
        return cella_err_set(err, 0, "fail");
    return 0;
}

typedef struct outcome {
    int rc;
    int eof_rc;
    int status;
    bool streamed;
    char *content_type;
    cbuf body;
    cbuf events;
} outcome;

static void outcome_free(outcome *o)
{
    cella_free(o->content_type);
    cbuf_free(&o->body);
    cbuf_free(&o->events);
}

static bool cbuf_same(const cbuf *a, const cbuf *b)
{
    return cbuf_avail(a) == cbuf_avail(b) &&
           (cbuf_avail(a) == 0 || memcmp(cbuf_head(a), cbuf_head(b), cbuf_avail(a)) == 0);
}

static void same_or_abort(const outcome *a, const outcome *b)
{
    if (a->rc != b->rc || a->eof_rc != b->eof_rc || a->status != b->status ||
        a->streamed != b->streamed || !!a->content_type != !!b->content_type ||
        (a->content_type && strcmp(a->content_type, b->content_type) != 0) ||
        !cbuf_same(&a->body, &b->body) || !cbuf_same(&a->events, &b->events))
        abort();
}

static void run_parser(const uint8_t *d, size_t n, size_t cut, outcome *o)
{
    memset(o, 0, sizeof(*o));
    cbuf_init(&o->body);
    cbuf_init(&o->events);
    httpc_response res;
    httpc_response_init(&res);
    httpc_sse sse;
    httpc_sse_init(&sse, on_event, &o->events);
    httpc_parser p;
    httpc_parser_init(&p, &res, &sse);
    cella_err e;
    int rc = httpc_parser_feed(&p, d, cut, &e);
    if (rc == 0)
        rc = httpc_parser_feed(&p, d + cut, n - cut, &e);
    o->rc = rc;
    o->eof_rc = rc == 0 ? httpc_parser_eof(&p, &e) : 2;
    o->status = res.status;
    o->streamed = res.streamed;
    o->content_type = res.content_type ? cella_strdup(res.content_type) : NULL;
    const char *body = httpc_body_str(&res);
    if (body[cbuf_avail(&res.body)] != '\0')
        abort();
    cbuf_append(&o->body, cbuf_head(&res.body), cbuf_avail(&res.body));
    httpc_parser_free(&p);
    httpc_sse_free(&sse);
    httpc_response_free(&res);
}

static void run_sse(const uint8_t *d, size_t n, size_t cut, outcome *o)
{
    memset(o, 0, sizeof(*o));
    cbuf_init(&o->body);
    cbuf_init(&o->events);
    httpc_sse sse;
    httpc_sse_init(&sse, on_event, &o->events);
    cella_err e;
    int rc = httpc_sse_feed(&sse, d, cut, &e);
    if (rc == 0)
        rc = httpc_sse_feed(&sse, d + cut, n - cut, &e);
    o->rc = rc;
    httpc_sse_free(&sse);
}

static void fuzz_httpc(const uint8_t *data, size_t size)
{
    if (size < 1)
        return;
    const uint8_t *d = data + 1;
    size_t n = size - 1;
    /* Small inputs: any cut; larger ones: a cut spread over the whole. */
    size_t cut = n < 256 ? data[0] % (n + 1) : n * data[0] / 255;

    outcome two, one;
    run_parser(d, n, cut, &two);
    run_parser(d, n, n, &one);
    same_or_abort(&two, &one);
    outcome_free(&two);
    outcome_free(&one);

    run_sse(d, n, cut, &two);
    run_sse(d, n, n, &one);
    same_or_abort(&two, &one);
    outcome_free(&two);
    outcome_free(&one);
}

/* ---- the file routes ---------------------------------------------------------- */

static void fuzz_fs_args(const uint8_t *d, size_t n)
{
    static const char *const ops[] = {"ls", "write", "chmod", "grep", "sed", "glob", "mv", "x"};
    if (n < 1)
        return;
    core_error e;
    json_t *o = NULL;
    if (jin_parse(d + 1, n - 1, &o, &e) < 0)
        return;
    char **argv;
    cbuf in;
    cbuf_init(&in);
    if (api_fs_args(ops[d[0] % 8], o, &argv, &in, &e) == 0) {
        for (size_t i = 0; argv[i]; i++) {
            if (!strchr(argv[i], '='))
                abort();
            cella_free(argv[i]);
        }
        cella_free(argv);
    }
    cbuf_free(&in);
    json_decref(o);
}

static void fuzz_url(const uint8_t *d, size_t n)
{
    char *s = cella_malloc(n + 1);
    memcpy(s, d, n);
    s[n] = '\0';
    size_t before = strlen(s);
    bool nul = false;
    bool has00 = false;
    for (size_t i = 0; i + 2 < before && !has00; i++)
        has00 = s[i] == '%' && s[i + 1] == '0' && s[i + 2] == '0';
    uint64_t start, len;
    bool suffix;
    if (api_parse_range(s, &start, &len, &suffix) && !suffix && len != UINT64_MAX &&
        (len == 0 || start > UINT64_MAX - (len - 1)))
        abort();
    size_t after = http_url_unescape(s, &nul);
    if (after > before || strlen(s) != after || (has00 && !nul))
        abort();
    cella_free(s);
}

/* ---- Flujo's /execute ------------------------------------------------------------ */

static void fuzz_flujo(const uint8_t *d, size_t n)
{
    flujo_req r;
    core_error e;
    if (flujo_req_parse(d, n, &r, &e) < 0) {
        if (r.json || r.files)
            abort();
        return;
    }
    if (!r.lang || !r.code || (r.has_timeout && r.timeout_ms == 0))
        abort();
    char again[FLUJO_PATH_MAX];
    for (size_t i = 0; i < r.n_files; i++) {
        const char *p = r.files[i].path;
        if (p[0] == '/' || !strcmp(p, "..") || !strncmp(p, "../", 3) || strstr(p, "/../") ||
            (strlen(p) >= 3 && !strcmp(p + strlen(p) - 3, "/..")))
            abort();
        if (flujo_path_clean(p, again, sizeof(again)) < 0 || strcmp(again, p) != 0)
            abort();
    }
    if (r.env)
        check_env(r.env);
    flujo_req_free(&r);
}

/* ---- typed runs --------------------------------------------------------------- */

static void fuzz_typed_values(const uint8_t *d, size_t n)
{
    for (int t = TT_INT; t <= TT_LAST; t++) {
        cbuf a, b;
        cbuf_init(&a);
        cbuf_init(&b);
        char why[256];
        if (typed_parse((typed_type)t, d, n, &a, why, sizeof(why)) == 0) {
            if (typed_parse((typed_type)t, cbuf_head(&a), cbuf_avail(&a), &b, why,
                            sizeof(why)) != 0 ||
                !cbuf_same(&a, &b))
                abort();
            json_t *v = api_typed_value_json((typed_type)t, cbuf_head(&a), cbuf_avail(&a));
            if (!v)
                abort();
            json_decref(v);
        }
        cbuf_free(&a);
        cbuf_free(&b);
    }
}

static void fuzz_typed_entry(const uint8_t *d, size_t n)
{
    core_typed_result r;
    if (typed_result_decode(d, n, &r) < 0) {
        if (r.n_outputs || r.outputs)
            abort();
        return;
    }
    cbuf one, two;
    cbuf_init(&one);
    cbuf_init(&two);
    typed_result_encode(&r, &one);
    core_typed_result_free(&r);
    if (typed_result_decode(cbuf_head(&one), cbuf_avail(&one), &r) < 0)
        abort();
    typed_result_encode(&r, &two);
    if (!cbuf_same(&one, &two))
        abort();
    core_typed_result_free(&r);
    cbuf_free(&one);
    cbuf_free(&two);
}

static void fuzz_typed_body(const uint8_t *d, size_t n)
{
    core_error e;
    json_t *o = NULL;
    if (jin_parse(d, n, &o, &e) < 0)
        return;
    api_typed_in x;
    if (api_typed_decode(o, &x, &e) == 0) {
        const core_typed_req *r = &x.r;
        if (r->n_inputs > TYPED_MAX_VARS || r->n_outputs > TYPED_MAX_VARS ||
            r->retries > TYPED_MAX_RETRIES || !r->run.image ||
            (r->mode == TM_COMMAND) != (r->argv != NULL) ||
            (r->mode != TM_COMMAND && (!r->run.code || !r->run.lang)))
            abort();
        for (size_t i = 0; i < r->n_inputs; i++) {
            const typed_value *v = &r->inputs[i];
            cbuf again;
            cbuf_init(&again);
            char why[256];
            if (!typed_name_ok(v->name) ||
                typed_parse(v->type, v->data, v->len, &again, why, sizeof(why)) != 0 ||
                cbuf_avail(&again) != v->len || memcmp(cbuf_head(&again), v->data, v->len) != 0)
                abort();
            cbuf_free(&again);
        }
        for (size_t i = 0; i < r->n_outputs; i++)
            if (!typed_name_ok(r->outputs[i].name) || !typed_type_name(r->outputs[i].type))
                abort();
        uint8_t key[32];
        typed_cache_key("tenant", r, r->mode == TM_COMMAND ? NULL : r->run.lang, key);
        cbuf w;
        cbuf_init(&w);
        typed_wrapper(r, "/tmp/run.py", &w);
        cbuf_free(&w);
    }
    api_typed_in_free(&x);
    json_decref(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    fuzz_json(d, n);
    fuzz_httpc(d, n);
    fuzz_fs_args(d, n);
    fuzz_url(d, n);
    fuzz_flujo(d, n);
    fuzz_typed_values(d, n);
    fuzz_typed_entry(d, n);
    fuzz_typed_body(d, n);
    return 0;
}
