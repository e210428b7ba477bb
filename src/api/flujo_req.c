/* Flujo's request body, decoded and checked: pure (no sandbox, no I/O), so
 * that tests/unit/test_flujo.c and fuzz/fuzz_http.c drive every byte of
 * it. The order of the checks is the reference provider's where it has
 * one: the language before the files. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "api/flujo.h"
#include "api/jsonin.h"
#include "util/alloc.h"

static const struct {
    const char *names[3];
    flujo_lang lang;
} langs[] = {
    {{"python", "python3", "py"}, {"python", "/usr/bin/python3", "main.py"}},
    {{"node", "javascript", "js"}, {"node", "/usr/bin/node", "main.js"}},
    {{"bash", NULL, NULL}, {"shell", "/bin/bash", "main.sh"}},
    {{"shell", "sh", NULL}, {"shell", "/bin/sh", "main.sh"}},
};

const flujo_lang *flujo_lang_find(const char *name)
{
    for (size_t i = 0; i < sizeof(langs) / sizeof(langs[0]); i++)
        for (int k = 0; k < 3 && langs[i].names[k]; k++)
            if (!strcasecmp(name, langs[i].names[k]))
                return &langs[i].lang;
    return NULL;
}

int flujo_path_clean(const char *in, char *out, size_t n)
{
    if (n == 0)
        return -1;
    out[0] = '\0';
    if (!in[0] || in[0] == '/')
        return -1;
    size_t used = 0;
    const char *p = in;
    while (*p) {
        size_t len = strcspn(p, "/");
        if (len == 2 && p[0] == '.' && p[1] == '.')
            return -1;
        if (len && !(len == 1 && p[0] == '.')) {
            /* The separator, the component and the NUL must fit. */
            if (used + (used ? 1 : 0) + len + 1 > n)
                return -1;
            if (used)
                out[used++] = '/';
            memcpy(out + used, p, len);
            used += len;
            out[used] = '\0';
        }
        p += len;
        while (*p == '/')
            p++;
    }
    return used ? 0 : -1;
}

/* The messages quote what the caller sent; core_error bounds them. */
static int invalid_path(core_error *e, const char *name)
{
    return core_fail(e, S001, "Invalid file path: %.400s", name);
}

static int parse_files(json_t *j, flujo_req *r, core_error *e)
{
    json_t *v = json_object_get(j, "files");
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_object(v))
        return core_fail(e, S001, "invalid request: field 'files' must be an object of "
                                  "path -> text");
    r->files = cella_calloc(json_object_size(v) + 1, sizeof(*r->files));
    char *clean = cella_malloc(FLUJO_PATH_MAX);
    const char *name;
    json_t *content;
    int rc = 0;
    json_object_foreach(v, name, content) {
        if (!json_is_string(content)) {
            rc = core_fail(e, S001, "invalid request: files[%.200s] must be a string (UTF-8 text)",
                           name);
            break;
        }
        /* A key holding a NUL would be cut short here: jansson refuses
         * \u0000 without JSON_ALLOW_NUL, and this keeps it so. */
        if (flujo_path_clean(name, clean, FLUJO_PATH_MAX) < 0) {
            rc = invalid_path(e, name);
            break;
        }
        flujo_file *f = &r->files[r->n_files++];
        f->path = cella_strdup(clean);
        f->content = json_string_value(content);
        f->len = json_string_length(content);
    }
    cella_free(clean);
    return rc;
}

static int parse_timeout(json_t *j, flujo_req *r, core_error *e)
{
    json_t *v = json_object_get(j, "timeout_s");
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_number(v))
        return core_fail(e, S001, "invalid request: field 'timeout_s' must be a number of seconds");
    double s = json_number_value(v);
    if (!(s >= 0) || !isfinite(s))
        return core_fail(e, S001, "invalid request: field 'timeout_s' must be a positive number "
                                  "of seconds");
    if (s == 0)
        return 0;                 /* `timeout_s or default`, as the reference reads it */
    /* Rounded up, never down; anything past a year is clamped later anyway. */
    double ms = ceil(s * 1000.0);
    r->has_timeout = true;
    r->timeout_ms = ms > 365.0 * 86400 * 1000 ? (uint64_t)365 * 86400 * 1000 : (uint64_t)ms;
    if (r->timeout_ms == 0)
        r->timeout_ms = 1;
    return 0;
}

bool flujo_is_session(json_t *j)
{
    json_t *sid = json_object_get(j, "session_id");
    return sid && !json_is_null(sid);
}

int flujo_session_refused(core_error *e)
{
    core_fail(e, S219, "the gateway dialect is not built yet: /execute with a session_id runs "
                       "in the gateway's persistent session; send no session_id for a one-shot "
                       "run");
    e->http_status = 501;
    return -1;
}

int flujo_req_parse(const uint8_t *body, size_t n, flujo_req *r, core_error *e)
{
    json_t *j;
    memset(r, 0, sizeof(*r));
    if (jin_parse(body, n, &j, e) < 0)
        return -1;
    if (flujo_is_session(j)) {
        json_decref(j);
        return flujo_session_refused(e);
    }
    return flujo_req_decode(j, r, e);
}

int flujo_req_decode(json_t *j, flujo_req *r, core_error *e)
{
    memset(r, 0, sizeof(*r));
    r->json = j;
    static const char *const required[] = {"code", "language"};
    const char **slots[] = {&r->code, &r->language};
    for (int i = 0; i < 2; i++) {
        int got = jin_str(j, required[i], slots[i], e);
        if (got < 0)
            goto error;
        if (!got) {
            jin_missing(e, required[i]);
            goto error;
        }
    }
    r->code_len = json_string_length(json_object_get(j, "code"));
    r->lang = flujo_lang_find(r->language);
    if (!r->lang) {
        core_fail(e, S001, "Unsupported language: %.200s", r->language);
        goto error;
    }
    if (parse_files(j, r, e) < 0)
        goto error;
    json_t *env = json_object_get(j, "environment");
    if (env && !json_is_null(env) && !json_is_object(env)) {
        core_fail(e, S001, "invalid request: field 'environment' must be an object of strings");
        goto error;
    }
    if (jin_env(j, "environment", &r->env, e) < 0 || jin_strv(j, "arguments", &r->args, e) < 0 ||
        parse_timeout(j, r, e) < 0)
        goto error;
    return 0;
error:
    flujo_req_free(r);
    return -1;
}

void flujo_req_free(flujo_req *r)
{
    for (size_t i = 0; i < r->n_files; i++)
        cella_free(r->files[i].path);
    cella_free(r->files);
    cella_strv_free(r->env);
    cella_strv_free(r->args);
    json_decref(r->json);
    memset(r, 0, sizeof(*r));
}
