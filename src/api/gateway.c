/* The gateway dialect: its routes and errors, the fields every request
 * shares (tenant, session, workspace paths), and the two that run code,
 * /execute (with a session_id; the Flujo dialect's route hands it over)
 * and /bash, with the artifacts each call left in /workspace/artifacts. */
#include "api/gateway.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/fs.h"
#include "api/gateway_int.h"
#include "api/jsonin.h"
#include "api/native.h"
#include "util/alloc.h"
#include "util/fdio.h"

/* ---- errors --------------------------------------------------------------------- */

json_t *gw_error_json(const core_error *e, int *status)
{
    *status = core_http_status(e);
    json_t *full = http_error_object(e), *o = json_object();
    /* `error` is a string everywhere in this dialect, as in its execute
     * results; the S-code and the rest ride beside it. */
    json_object_set(o, "error", json_object_get(full, "message"));
    json_object_del(full, "message");
    json_object_update(o, full);
    json_decref(full);
    return o;
}

/* A failure of /execute or /bash: the error, in the shape of their
 * results, so a client reading stdout, exit_code or error finds them. */
static void exec_error(http_ctx *c, const core_error *e, sandbox *s)
{
    int status;
    json_t *o = gw_error_json(e, &status);
    json_object_set_new(o, "stdout", json_string(""));
    json_object_set_new(o, "stderr", json_string(""));
    json_object_set_new(o, "exit_code", json_integer(-1));     /* nothing ran */
    json_object_set_new(o, "timed_out", json_false());
    json_object_set_new(o, "sandbox_id", s ? json_string(sandbox_id(s)) : json_null());
    json_object_set_new(o, "artifacts", json_array());
    http_reply_json(c, status, o);
}

/* ---- request fields ----------------------------------------------------------------- */

/* Tenants as the tokens file spells them. */
static bool tenant_valid(const char *t)
{
    size_t n = strlen(t);
    if (n == 0 || n > 64)
        return false;
    for (const char *p = t; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("._-", *p))
            return false;
    return true;
}

static bool session_valid(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > GW_SESSION_ID_MAX)
        return false;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("._:@+=-", *p))
            return false;
    return true;
}

int gw_who_check(http_ctx *c, const char *tenant, const char *session_id, core_error *e)
{
    if (!tenant_valid(tenant))
        return core_fail(e, S001, "invalid request: tenant_id '%.80s' must be 1 to 64 of "
                         "[A-Za-z0-9._-]", tenant);
    /* The token decides who the caller is; only an admin acts for others. */
    if (strcmp(tenant, c->tenant) != 0 && !c->admin) {
        core_fail(e, S006, "forbidden: tenant_id '%s' is not your token's tenant (%s)", tenant,
                  c->tenant);
        e->fix_note = "send your own tenant_id (or none: the token's is used)";
        return -1;
    }
    if (!session_valid(session_id))
        return core_fail(e, S001, "invalid request: session_id '%.80s' must be 1 to %d of "
                         "[A-Za-z0-9._:@+=-]", session_id, GW_SESSION_ID_MAX);
    return 0;
}

int gw_who_decode(http_ctx *c, json_t *j, gw_who *w, core_error *e)
{
    w->tenant = c->tenant;
    w->session_id = NULL;
    int got;
    if (jin_str(j, "tenant_id", &w->tenant, e) < 0 ||
        (got = jin_str(j, "session_id", &w->session_id, e)) < 0)
        return -1;
    if (!got)
        return jin_missing(e, "session_id");
    return gw_who_check(c, w->tenant, w->session_id, e);
}

int gw_path_str(const char *name, const char *in, size_t len, bool allow_root, char *abs,
                char *rel, core_error *e)
{
    if (strlen(in) != len)
        return core_fail(e, S001, "invalid request: %s holds a NUL byte", name);
    /* The contract's paths are the workspace's; the sandbox could not be
     * left anyway, but a path that tries says the caller is confused. */
    if (in[0] == '/')
        return core_fail(e, S001, "invalid path '%.200s' in %s: paths are relative to "
                         "/workspace; absolute paths are refused", in, name);
    /* Sized so "/workspace/" + buf always fits abs (the compiler checks it). */
    char buf[GW_PATH_MAX - 16];
    size_t n = 0;
    for (const char *p = in; *p;) {
        const char *s = p;
        while (*p && *p != '/')
            p++;
        size_t l = (size_t)(p - s);
        while (*p == '/')
            p++;
        if (l == 0 || (l == 1 && s[0] == '.'))
            continue;
        if (l == 2 && s[0] == '.' && s[1] == '.')
            return core_fail(e, S001, "invalid path '%.200s' in %s: '..' components are "
                             "refused; paths stay inside /workspace", in, name);
        if (n + l + 2 > sizeof(buf))
            return core_fail(e, S001, "invalid path in %s: longer than %zu bytes", name,
                             sizeof(buf) - 2);
        if (n)
            buf[n++] = '/';
        memcpy(buf + n, s, l);
        n += l;
    }
    buf[n] = '\0';
    if (!n && !allow_root)
        return core_fail(e, S001, "invalid path '%.200s' in %s: it names /workspace itself; "
                         "name a file in it", in, name);
    snprintf(abs, GW_PATH_MAX, "/workspace%s%s", n ? "/" : "", buf);
    if (rel)
        snprintf(rel, GW_PATH_MAX, "%s", buf);
    return 0;
}

int gw_path(json_t *j, const char *key, const char *def, bool allow_root, char *abs, char *rel,
            core_error *e)
{
    const char *in = def;
    int got = jin_str(j, key, &in, e);
    if (got < 0)
        return -1;
    if (!in)
        return jin_missing(e, key);
    size_t len = got ? json_string_length(json_object_get(j, key)) : strlen(in);
    return gw_path_str(key, in, len, allow_root, abs, rel, e);
}

const char *gw_rel(const char *abs)
{
    if (!strcmp(abs, "/workspace"))
        return ".";
    return !strncmp(abs, "/workspace/", 11) ? abs + 11 : abs;
}

const char *gw_mime_type(const char *path)
{
    static const struct {
        const char *ext, *type;
    } types[] = {
        {"txt", "text/plain"},        {"log", "text/plain"},
        {"md", "text/markdown"},      {"csv", "text/csv"},
        {"tsv", "text/tab-separated-values"},
        {"html", "text/html"},        {"htm", "text/html"},
        {"css", "text/css"},          {"js", "text/javascript"},
        {"py", "text/x-python"},      {"sh", "text/x-shellscript"},
        {"json", "application/json"}, {"ipynb", "application/x-ipynb+json"},
        {"xml", "application/xml"},   {"yaml", "application/yaml"},
        {"yml", "application/yaml"},  {"pdf", "application/pdf"},
        {"zip", "application/zip"},   {"gz", "application/gzip"},
        {"tar", "application/x-tar"}, {"parquet", "application/vnd.apache.parquet"},
        {"xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
        {"docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
        {"pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"},
        {"png", "image/png"},         {"jpg", "image/jpeg"},
        {"jpeg", "image/jpeg"},       {"gif", "image/gif"},
        {"webp", "image/webp"},       {"bmp", "image/bmp"},
        {"svg", "image/svg+xml"},     {"mp3", "audio/mpeg"},
        {"wav", "audio/wav"},         {"mp4", "video/mp4"},
        {"webm", "video/webm"},
    };
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    if (dot && dot != base)
        for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
            if (!strcasecmp(dot + 1, types[i].ext))
                return types[i].type;
    return "application/octet-stream";
}

char *gw_file_url(sandbox *s, const char *abs)
{
    char base[96];
    snprintf(base, sizeof(base), "/v1/sandboxes/%s/files", sandbox_id(s));
    return api_fs_url(base, abs);
}

/* timeout_s: seconds (an int or a float), rounded up to the millisecond;
 * absent, null or 0: the daemon's default exec timeout. */
static int decode_timeout(json_t *j, core_exec_req *r, core_error *e)
{
    json_t *v = json_object_get(j, "timeout_s");
    if (!v || json_is_null(v))
        return 0;
    double t = json_is_number(v) ? json_number_value(v) : -1;
    if (!(t >= 0 && t <= 30.0 * 86400))
        return core_fail(e, S001, "invalid request: field 'timeout_s' must be a number of "
                         "seconds between 0 and 2592000");
    if (t > 0) {
        r->has_timeout = true;
        r->timeout_ms = (uint64_t)ceil(t * 1000);
    }
    return 0;
}

/* ---- artifacts ----------------------------------------------------------------------- */

typedef struct art {
    char *path;                   /* absolute */
    uint64_t size, ino;
    int64_t mtime_ns;
} art;

typedef struct arts {
    art *v;
    size_t n;
} arts;

static void arts_free(arts *a)
{
    for (size_t i = 0; i < a->n; i++)
        cella_free(a->v[i].path);
    cella_free(a->v);
    a->v = NULL;
    a->n = 0;
}

/* The regular files below /workspace/artifacts, each with its size, mtime
 * and inode: one glob call (stat=1), whatever the tree holds. A listing
 * that fails (no such directory, above all) is empty: artifacts are a
 * by-product, never a reason to fail the call. */
static void arts_list(http_ctx *c, sandbox *s, arts *out)
{
    char max[32], dl[32];
    snprintf(max, sizeof(max), "max_results=%u", GW_ARTIFACTS_MAX);
    snprintf(dl, sizeof(dl), "deadline_ms=%u", GW_ARTIFACTS_DEADLINE_MS);
    char *args[] = {"path=/workspace/artifacts", "pattern=*", "include_hidden=1", "stat=1",
                    max, dl, NULL};
    core_fs_req r = {.op = "glob", .args = args};
    cbuf res;
    cbuf_init(&res);
    core_error e;
    out->v = NULL;
    out->n = 0;
    json_t *j = NULL;
    if (core_fs(s, &r, c->client_fd, &res, &e) < 0)
        goto out;
    /* The agent's words, from inside the sandbox: checked as untrusted. */
    j = json_loadb((const char *)cbuf_head(&res), cbuf_avail(&res), 0, NULL);
    json_t *v = json_object_get(j, "entries");
    if (!json_is_array(v))
        goto out;
    out->v = cella_calloc(json_array_size(v) + 1, sizeof(art));
    size_t i;
    json_t *it;
    json_array_foreach(v, i, it) {
        const char *p = json_string_value(json_object_get(it, "path"));
        const char *type = json_string_value(json_object_get(it, "type"));
        json_t *size = json_object_get(it, "size"), *mt = json_object_get(it, "mtime_ns"),
               *ino = json_object_get(it, "ino");
        if (!p || !type || strcmp(type, "file") || !json_is_integer(size) ||
            !json_is_integer(mt) || !json_is_integer(ino) ||
            strncmp(p, "/workspace/artifacts/", 21) != 0)
            continue;
        out->v[out->n++] = (art){cella_strdup(p), (uint64_t)json_integer_value(size),
                                 (uint64_t)json_integer_value(ino), json_integer_value(mt)};
    }
out:
    json_decref(j);
    cbuf_free(&res);
}

static int art_cmp(const void *a, const void *b)
{
    return strcmp(((const art *)a)->path, ((const art *)b)->path);
}

/* The files of after that before lacks or that changed since (size, mtime
 * or inode: a program that rewrites a file in place, or replaces it). */
static json_t *arts_changed(sandbox *s, arts *before, arts *after)
{
    json_t *o = json_array();
    if (before->n)
        qsort(before->v, before->n, sizeof(art), art_cmp);
    for (size_t i = 0; i < after->n; i++) {
        const art *a = &after->v[i];
        const art *b = before->n ? bsearch(a, before->v, before->n, sizeof(art), art_cmp) : NULL;
        if (b && b->size == a->size && b->mtime_ns == a->mtime_ns && b->ino == a->ino)
            continue;
        char *url = gw_file_url(s, a->path);
        json_array_append_new(o, json_pack("{s:s,s:I,s:s,s:s}", "path", gw_rel(a->path), "size",
                                           (json_int_t)a->size, "mime_type",
                                           gw_mime_type(a->path), "url", url));
        cella_free(url);
    }
    return o;
}

/* ---- /execute and /bash ----------------------------------------------------------------- */

/* Runs r in s between two listings of the artifacts, and replies. */
static void run_and_reply(http_ctx *c, sandbox *s, const core_exec_req *r)
{
    arts before, after;
    core_exec_result res;
    core_error e;
    arts_list(c, s, &before);
    if (core_exec_run(s, r, c->client_fd, &res, &e) < 0) {
        arts_free(&before);
        exec_error(c, &e, s);
        return;
    }
    arts_list(c, s, &after);
    json_t *o = json_object();
    json_object_set_new(o, "stdout", api_text_json(&res.out[1]));
    json_object_set_new(o, "stderr", api_text_json(&res.out[2]));
    /* Always an integer: 124 for a timeout, 128+N for a signal N. */
    int code = res.timed_out ? 124 : res.has_exit_code ? res.exit_code : 128 + res.signal;
    json_object_set_new(o, "exit_code", json_integer(code));
    json_object_set_new(o, "timed_out", json_boolean(res.timed_out));
    json_t *err = json_null();
    if (res.timed_out)
        err = json_string("Execution timed out");
    else if (res.oom_killed)
        err = json_string("Execution ran out of memory");
    else if (!res.has_exit_code)
        err = json_sprintf("Execution killed by signal %d", res.signal);
    json_object_set_new(o, "error", err);
    json_object_set_new(o, "sandbox_id", json_string(sandbox_id(s)));
    json_object_set_new(o, "artifacts", arts_changed(s, &before, &after));
    json_object_set_new(o, "duration_ms", json_integer((json_int_t)res.duration_ms));
    json_object_set_new(o, "truncated", json_boolean(res.stdout_truncated || res.stderr_truncated));
    http_reply_json(c, 200, o);
    core_exec_result_free(&res);
    arts_free(&before);
    arts_free(&after);
}

/* A call whose timeout passed before its program could start: timed out,
 * like a program that ran too long, but nothing of it ran (and nothing
 * changed: a staging that timed out was rolled back). s may be NULL. */
static void timed_out_reply(http_ctx *c, sandbox *s, const char *error, int64_t t0_ns)
{
    json_t *o = json_object();
    json_object_set_new(o, "stdout", json_string(""));
    json_object_set_new(o, "stderr", json_string(""));
    json_object_set_new(o, "exit_code", json_integer(124));
    json_object_set_new(o, "timed_out", json_true());
    json_object_set_new(o, "error", json_string(error));
    json_object_set_new(o, "sandbox_id", s ? json_string(sandbox_id(s)) : json_null());
    json_object_set_new(o, "artifacts", json_array());
    json_object_set_new(o, "duration_ms",
                        json_integer((json_int_t)((clock_now_ns() - t0_ns) / 1000000)));
    json_object_set_new(o, "truncated", json_false());
    http_reply_json(c, 200, o);
}

/* A call that waited its whole timeout for the session's previous call. */
static void busy_reply(http_ctx *c, const gw_who *w, int64_t t0_ns)
{
    sandbox *s = gw_session_peek(c, w->tenant, w->session_id);
    timed_out_reply(c, s, "Execution timed out waiting for the session's previous call to "
                    "finish; nothing ran", t0_ns);
    sandbox_unref(s);
}

/* What is left of a call's budget (ms since t0_ns); 0 when it is spent. */
static uint64_t time_left(uint64_t budget_ms, int64_t t0_ns)
{
    uint64_t spent = (uint64_t)((clock_now_ns() - t0_ns) / 1000000);
    return spent < budget_ms ? budget_ms - spent : 0;
}

/* A call of /execute or /bash, decoded: its turn in the session (one call
 * at a time, gateway_turn.c), then the session, the files, the run and the
 * reply. The wait counts against the call's timeout, so the answer comes
 * within it whether the call waited or not. */
static void call(http_ctx *c, json_t *j, core_exec_req *r, const gw_files *files)
{
    core_error e;
    gw_who w;
    sandbox *s = NULL;
    if (gw_who_decode(c, j, &w, &e) < 0) {
        exec_error(c, &e, NULL);
        return;
    }
    const cella_config *cfg = c->cfg;
    uint64_t budget = r->has_timeout ? r->timeout_ms : cfg->default_exec_timeout_ms;
    if (budget > cfg->max_exec_timeout_ms)
        budget = cfg->max_exec_timeout_ms;
    int64_t t0 = clock_now_ns();
    if (gw_turn_take(c, w.tenant, w.session_id, t0 + (int64_t)budget * 1000000) < 0) {
        busy_reply(c, &w, t0);
        return;
    }
    /* The files are staged within the call's timeout too: thousands of
     * small files take the agent a while, and the answer must still come
     * within the timeout. One that passes during staging is answered as a
     * timed-out run (the batch is rolled back, nothing ran). */
    int rc = gw_session_open(c, w.tenant, w.session_id, &s, &e);
    uint64_t left = time_left(budget, t0);
    if (rc == 0 && files->n)
        rc = left ? gw_files_write(c, s, files, left, &e)
                  : core_fail(&e, S200, "the timeout passed before the files were staged");
    if (rc < 0 && s && e.code == S200) {
        timed_out_reply(c, s, "Execution timed out", t0);
    } else if (rc < 0) {
        exec_error(c, &e, s);
    } else {
        left = time_left(budget, t0);
        r->has_timeout = true;
        r->timeout_ms = left ? left : 1;
        run_and_reply(c, s, r);
    }
    gw_turn_give(w.tenant, w.session_id);
    sandbox_unref(s);
}

/* The languages /execute runs. Code goes to python and node on stdin
 * ("-"), so the program runs in /workspace as if it were a file there
 * (imports of the workspace's modules work) and nothing is left behind;
 * shell code is bash -c's argument, since bash would read a script on
 * stdin only as it runs it, and the program's own reads would eat it. */
static const struct {
    const char *names[3];
    const char *interpreter;
    bool in_arg;
} langs[] = {
    {{"python", "python3", "py"}, "/usr/bin/python3", false},
    {{"bash", "shell", "sh"}, "/bin/bash", true},
    {{"node", "javascript", "js"}, "/usr/bin/node", false},
};

static int find_lang(const char *name, core_error *e)
{
    for (size_t i = 0; i < sizeof(langs) / sizeof(langs[0]); i++)
        for (int k = 0; k < 3; k++)
            if (langs[i].names[k] && !strcasecmp(name, langs[i].names[k]))
                return (int)i;
    core_fail(e, S001, "Unsupported language: %.64s (python, bash or node)", name);
    return -1;
}

void api_gateway_execute(http_ctx *c, json_t *j)
{
    core_error e;
    gw_files files = {0};
    char **args = NULL, **env = NULL, **argv = NULL;
    const char *code = NULL, *language = "python";
    core_exec_req r = {0};
    int got, li;
    if ((got = jin_str(j, "code", &code, &e)) < 0 || jin_str(j, "language", &language, &e) < 0 ||
        jin_strv(j, "arguments", &args, &e) < 0 || jin_env(j, "environment", &env, &e) < 0 ||
        decode_timeout(j, &r, &e) < 0 || gw_files_decode(j, "files", &files, &e) < 0)
        goto error;
    if (!got) {
        jin_missing(&e, "code");
        goto error;
    }
    if ((li = find_lang(language, &e)) < 0)
        goto error;
    size_t code_len = json_string_length(json_object_get(j, "code"));
    if (langs[li].in_arg && (code_len >= GW_ARG_MAX || strlen(code) != code_len)) {
        core_fail(&e, S001, "invalid request: shell code is passed as one argument, which holds "
                  "at most %u bytes and no NUL", GW_ARG_MAX - 1);
        goto error;
    }
    size_t na = args ? cella_strv_len(args) : 0;
    argv = cella_calloc(na + 5, sizeof(char *));
    size_t k = 0;
    argv[k++] = (char *)langs[li].interpreter;
    if (langs[li].in_arg) {
        argv[k++] = "-c";
        argv[k++] = (char *)code;
        argv[k++] = "bash";       /* $0; the arguments are $1... */
    } else {
        argv[k++] = "-";
        r.has_stdin = true;
        r.stdin_data = (const uint8_t *)code;
        r.stdin_len = code_len;
    }
    for (size_t i = 0; i < na; i++)
        argv[k++] = args[i];
    r.argv = argv;
    r.env = env;
    call(c, j, &r, &files);
    goto out;
error:
    exec_error(c, &e, NULL);
out:
    gw_files_free(&files);
    cella_free(argv);
    cella_strv_free(args);
    cella_strv_free(env);
}

static void h_bash(http_ctx *c)
{
    core_error e;
    json_t *j = NULL;
    const char *command = NULL;
    char cwd[GW_PATH_MAX];
    int got;
    core_exec_req r = {0};
    if (jin_parse(c->body, c->body_len, &j, &e) < 0 ||
        (got = jin_str(j, "command", &command, &e)) < 0)
        goto error;
    if (!got) {
        jin_missing(&e, "command");
        goto error;
    }
    size_t len = json_string_length(json_object_get(j, "command"));
    if (len >= GW_ARG_MAX || strlen(command) != len) {
        core_fail(&e, S001, "invalid request: command is passed to bash -c as one argument, "
                  "which holds at most %u bytes and no NUL; write a script with /write and "
                  "run that", GW_ARG_MAX - 1);
        goto error;
    }
    if (!command[0]) {
        core_fail(&e, S001, "invalid request: command is empty");
        goto error;
    }
    if (decode_timeout(j, &r, &e) < 0 || gw_path(j, "cwd", ".", true, cwd, NULL, &e) < 0)
        goto error;
    char *argv[] = {"/bin/bash", "-c", (char *)command, NULL};
    r.argv = argv;
    r.workdir = cwd;
    gw_files none = {0};
    call(c, j, &r, &none);
    goto out;
error:
    exec_error(c, &e, NULL);
out:
    json_decref(j);
}

/* ---- routes ------------------------------------------------------------------------------ */

/* The gateway strips /v1/sandbox before forwarding, so the service answers
 * on both prefixes. /execute (both prefixes) is the Flujo dialect's route,
 * which hands a request with a session_id to api_gateway_execute. */
#define BOTH(method, path, flags, fn)                                                         \
    {method, path, NULL, flags, fn, gw_error_json},                                           \
    {method, "/v1/sandbox" path, NULL, flags, fn, gw_error_json}

const http_route api_gateway_routes[] = {
    BOTH("POST", "/bash", 0, h_bash),
    BOTH("POST", "/read", 0, gw_h_read),
    BOTH("POST", "/read_binary", 0, gw_h_read_binary),
    BOTH("POST", "/write", 0, gw_h_write),
    BOTH("POST", "/grep", 0, gw_h_grep),
    BOTH("POST", "/glob", 0, gw_h_glob),
    /* Every tenant's sessions, and ending anyone's: operators only. */
    BOTH("GET", "/sessions", ROUTE_ADMIN, gw_h_sessions),
    BOTH("DELETE", "/sessions/{tenant_id}/{session_id}", ROUTE_ADMIN, gw_h_session_delete),
    BOTH("POST", "/sessions/{tenant_id}/{session_id}/copy", 0, gw_h_session_copy),
    {NULL, NULL, NULL, 0, NULL, NULL},
};
