#include "core/errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "util/parse.h"

static const core_code_info catalogue[] = {
    {S001, "S001", "validation", false, 400, "invalid request",
     "fix the field named in the message and resend"},
    {S002, "S002", "validation", false, 404, "sandbox not found",
     "create a sandbox first (POST /v1/sandboxes) and use the sandbox_id it returns"},
    {S003, "S003", "validation", false, 429, "exec concurrency cap",
     "wait for a running exec to finish, or run long work in the background, e.g. "
     "`nohup cmd > /tmp/out.log 2>&1 &`"},
    {S004, "S004", "validation", false, 410, "sandbox already stopped",
     "the sandbox was stopped, reaped when idle, or died; create a new one"},
    {S005, "S005", "validation", false, 401, "unauthorized",
     "send `Authorization: Bearer <token>` with a token from the daemon's tokens file"},
    {S006, "S006", "validation", false, 403, "admin only",
     "use a token marked `admin` in the tokens file"},
    {S007, "S007", "validation", false, 403, "browser request refused",
     "call the API from a program, not a web page; or list the page's origin in "
     "allowed_origins"},
    {S100, "S100", "config", false, 400, "image not in catalog",
     "pick an image from GET /v1/catalog, or ask the operator to allow it"},
    {S101, "S101", "internal", false, 500, "image files missing",
     "operator action: install the image's interpreter or restore its root directory"},
    {S102, "S102", "transient", true, 503, "image install failed", "retry later"},
    {S200, "S200", "execution", false, 408, "exec timed out",
     "raise timeout_ms or break the work into smaller steps"},
    {S210, "S210", "filesystem", false, 400, "invalid filesystem request",
     "fix the field named in the message"},
    {S211, "S211", "filesystem", false, 404, "file not found", "check the path"},
    {S212, "S212", "filesystem", false, 400, "wrong file type", "check the path"},
    {S213, "S213", "filesystem", false, 409, "already exists", "pick another path or allow overwriting"},
    {S214, "S214", "filesystem", false, 409, "directory not empty", "pass recursive: true"},
    {S215, "S215", "filesystem", false, 403, "permission denied", "check the file's mode"},
    {S216, "S216", "filesystem", false, 500, "filesystem i/o error", "retry; the disk may be full"},
    {S217, "S217", "filesystem", false, 400, "invalid regex pattern", "fix the pattern"},
    {S218, "S218", "transient", true, 503, "transfer aborted", "retry the transfer"},
    {S219, "S219", "filesystem", false, 501, "operation unsupported", "use another operation"},
    {S300, "S300", "platform", false, 500, "sandbox start failed",
     "read the message; the host may lack a kernel feature or be out of resources"},
    {S301, "S301", "transient", true, 503, "daemon not ready",
     "the daemon is starting or shutting down; retry shortly"},
    {S302, "S302", "internal", false, 500, "internal error",
     "a bug or a host problem in the daemon; the message says what failed"},
    {S400, "S400", "config", false, 429, "resource limit exceeded",
     "stop sandboxes you no longer need, or ask for less"},
    {S500, "S500", "validation", false, 404, "code run not found",
     "start the run again with POST /v1/code/run: paused runs expire after code_run_ttl_secs, "
     "and a run that completed or failed cannot be resumed"},
    {S501, "S501", "transient", true, 409, "code run busy",
     "another request is resuming this run; wait for its answer, then resume with the new "
     "pending calls"},
    {S502, "S502", "execution", false, 410, "code run lost",
     "the run's worker was killed or the run could not be kept; start it again"},
};

const core_code_info *core_code_lookup(core_code c)
{
    for (size_t i = 0; i < sizeof(catalogue) / sizeof(catalogue[0]); i++)
        if (catalogue[i].code == c)
            return &catalogue[i];
    for (size_t i = 0; i < sizeof(catalogue) / sizeof(catalogue[0]); i++)
        if (catalogue[i].code == S302)
            return &catalogue[i];
    return &catalogue[0];
}

int core_fail(core_error *e, core_code c, const char *fmt, ...)
{
    if (!e)
        return -1;
    memset(e, 0, sizeof(*e));
    e->code = c;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof(e->message), fmt, ap);
    va_end(ap);
    return -1;
}

int core_fail_err(core_error *e, core_code c, const cella_err *err, const char *prefix)
{
    return core_fail(e, c, "%s%s%s", prefix ? prefix : "", prefix ? ": " : "", err->msg);
}

static core_fix_field *fix_slot(core_error *e, const char *key)
{
    for (int i = 0; i < e->n_fix; i++)
        if (!strcmp(e->fix[i].key, key))
            return &e->fix[i];
    if (e->n_fix == CORE_FIX_MAX)
        return NULL;
    core_fix_field *f = &e->fix[e->n_fix++];
    f->key = key;
    return f;
}

void core_fix_bool(core_error *e, const char *key, bool v)
{
    core_fix_field *f = fix_slot(e, key);
    if (f) {
        f->kind = FIX_BOOL;
        f->b = v;
    }
}

void core_fix_str(core_error *e, const char *key, const char *v)
{
    core_fix_field *f = fix_slot(e, key);
    if (f) {
        f->kind = FIX_STR;
        snprintf(f->s, sizeof(f->s), "%s", v);
    }
}

int core_http_status(const core_error *e)
{
    return e->http_status ? e->http_status : core_code_lookup(e->code)->http_status;
}

int core_env_bad_names(core_error *e, const char *key, char *const *bad, size_t nb)
{
    char list[300] = "";
    size_t used = 0;
    for (size_t i = 0; i < nb && used < sizeof(list) - 8; i++) {
        int w = snprintf(list + used, sizeof(list) - used, "%s\"%.40s\"", i ? ", " : "", bad[i]);
        if (w > 0)
            used += (size_t)w;
    }
    return core_fail(e, S001, "invalid request: %s contains invalid variable name(s): [%s]", key,
                     list);
}

int core_env_check(const char *key, char *const *env, core_error *e)
{
    char *bad[8];
    size_t nb = 0;
    for (size_t i = 0; env && env[i]; i++) {
        const char *eq = strchr(env[i], '=');
        size_t len = eq ? (size_t)(eq - env[i]) : strlen(env[i]);
        if ((!eq || !env_name_valid(env[i], len)) && nb < 8)
            bad[nb++] = cella_strndup(env[i], len);
    }
    if (!nb)
        return 0;
    core_env_bad_names(e, key, bad, nb);
    for (size_t i = 0; i < nb; i++)
        cella_free(bad[i]);
    return -1;
}
