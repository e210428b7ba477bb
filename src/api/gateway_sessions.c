/* The gateway's sessions: (tenant_id, session_id) -> the sandbox that
 * serves it, kept in the state database (store/sessions.c) so a session
 * outlives a daemon restart as its sandbox does. A session is made on its
 * first use with the dialect's defaults, and ends when its sandbox does
 * (idle cleanup, a stop, DELETE /sessions/...); the next use of its id
 * then makes a new one, with an empty workspace. Also here: the sessions
 * routes and the all-or-nothing writing of files into a workspace. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/gateway_int.h"
#include "api/jsonin.h"
#include "store/store.h"
#include "util/alloc.h"
#include "util/log.h"
#include "util/tar.h"
#include "util/text.h"

/* Sessions being made right now: a second request for one waits for the
 * first rather than making a second sandbox. Only the look-up and the
 * bookkeeping hold the lock, never a sandbox's creation, so one slow start
 * holds up no other session. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t opened = PTHREAD_COND_INITIALIZER;
typedef struct opening {
    char *tenant, *session_id;
} opening;
static opening *openings;
static size_t n_openings, cap_openings;

/* Called with mu held. */
static bool is_opening(const char *tenant, const char *sid)
{
    for (size_t i = 0; i < n_openings; i++)
        if (!strcmp(openings[i].tenant, tenant) && !strcmp(openings[i].session_id, sid))
            return true;
    return false;
}

static void opening_add(const char *tenant, const char *sid)
{
    if (n_openings == cap_openings) {
        cap_openings = cap_openings ? cap_openings * 2 : 8;
        openings = cella_realloc(openings, cap_openings * sizeof(*openings));
    }
    openings[n_openings++] = (opening){cella_strdup(tenant), cella_strdup(sid)};
}

static void opening_remove(const char *tenant, const char *sid)
{
    for (size_t i = 0; i < n_openings; i++)
        if (!strcmp(openings[i].tenant, tenant) && !strcmp(openings[i].session_id, sid)) {
            cella_free(openings[i].tenant);
            cella_free(openings[i].session_id);
            openings[i] = openings[--n_openings];
            break;
        }
    if (!n_openings) {
        cella_free(openings);
        openings = NULL;
        cap_openings = 0;
    }
}

/* The live sandbox of a session row, or NULL. A sandbox that is gone
 * (reaped, stopped) or dead (its restart failed) ends the session: the
 * row goes, and a dead sandbox is stopped. Called with mu held. */
static sandbox *row_sandbox(http_ctx *c, const store_session *row)
{
    sandbox *s;
    core_error e;
    bool dead = false;
    /* Looked up by id alone: the session's key was checked, and the table,
     * not the sandbox's owner, decides who may use a session. (Sessions
     * made before their sandboxes took the session's tenant may have an
     * admin's; migration 5 moved them.) */
    if (core_get(c->core, NULL, row->sandbox_id, &s, &e) == 0) {
        sandbox_info info;
        sandbox_get_info(s, &info);
        if (!info.dead)
            return s;
        sandbox_unref(s);
        core_stop(c->core, NULL, row->sandbox_id, false, NULL);
        dead = true;
    }
    cella_err err;
    if (store_session_delete(core_store(c->core), row->tenant, row->session_id, row->sandbox_id,
                             &err) < 0)
        log_warn("gateway session %s/%s: %s", row->tenant, row->session_id, err.msg);
    log_info("event=gateway_session_ended tenant=%s session=%s sandbox=%s reason=%s",
             row->tenant, row->session_id, row->sandbox_id, dead ? "dead" : "gone");
    return NULL;
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A new session's sandbox: the dialect's defaults (the worker image, no
 * network, gateway_memory_mb, gateway_idle_timeout_secs (at most
 * max_idle_timeout_secs); the user is the sandbox's non-root one, as
 * always), counted against gateway_max_sessions rather than
 * max_concurrent_sandboxes; /workspace/artifacts made, the row written. */
static int create(http_ctx *c, const char *tenant, const char *sid, sandbox **out, core_error *e)
{
    const cella_config *cfg = c->cfg;
    char name[160];
    snprintf(name, sizeof(name), "gateway:%.100s", sid);
    /* The operator's ceiling on idle timeouts holds for sessions too. */
    uint64_t idle = cfg->gateway_idle_timeout_secs < cfg->max_idle_timeout_secs
                        ? cfg->gateway_idle_timeout_secs
                        : cfg->max_idle_timeout_secs;
    core_create_req r = {
        .image = cfg->default_image,
        .has_memory = true,
        .memory_mb = cfg->gateway_memory_mb,
        .has_idle = true,
        .idle_timeout_secs = idle,
        .name = name,
        .cap_class = CORE_CAP_SESSION,
    };
    sandbox *s;
    /* The session's tenant owns it, whoever's token made it (an admin acts
     * for others): its artifact URLs are then served to the session's
     * tenant, and it counts against that tenant's own limits. */
    if (core_create(c->core, tenant, &r, &s, e) < 0)
        return -1;
    /* Programs write their artifacts there without making it first. */
    char *args[] = {"path=/workspace/artifacts", "parents=1", NULL};
    core_fs_req mk = {.op = "mkdir", .args = args};
    cbuf res;
    cbuf_init(&res);
    core_error me;
    if (core_fs(s, &mk, c->client_fd, &res, &me) < 0)
        log_warn("gateway session %s/%s: mkdir /workspace/artifacts: %s", tenant, sid, me.message);
    cbuf_free(&res);
    store_session row = {.tenant = (char *)tenant, .session_id = (char *)sid,
                         .created_at_ms = wall_ms()};
    snprintf(row.sandbox_id, sizeof(row.sandbox_id), "%s", sandbox_id(s));
    cella_err err;
    if (store_session_put(core_store(c->core), &row, &err) < 0) {
        core_stop(c->core, NULL, sandbox_id(s), false, NULL);
        sandbox_unref(s);
        return core_fail_err(e, S302, &err, "internal error: sessions");
    }
    log_info("event=gateway_session_created tenant=%s session=%s sandbox=%s", tenant, sid,
             sandbox_id(s));
    *out = s;
    return 0;
}

int gw_session_open(http_ctx *c, const char *tenant, const char *sid, sandbox **out,
                    core_error *e)
{
    store_session row;
    cella_err err;
    pthread_mutex_lock(&mu);
    while (is_opening(tenant, sid))
        pthread_cond_wait(&opened, &mu);
    int got = store_session_get(core_store(c->core), tenant, sid, &row, &err);
    if (got < 0) {
        pthread_mutex_unlock(&mu);
        return core_fail_err(e, S302, &err, "internal error: sessions");
    }
    if (got) {
        sandbox *s = row_sandbox(c, &row);
        store_session_free(&row);
        if (s) {
            pthread_mutex_unlock(&mu);
            *out = s;
            return 0;
        }
    }
    /* The cap (gateway_max_sessions) is core's: the place is taken under
     * the registry's lock, as every create's, and held by the sandbox
     * until it is gone. */
    opening_add(tenant, sid);
    pthread_mutex_unlock(&mu);
    int rc = create(c, tenant, sid, out, e);
    pthread_mutex_lock(&mu);
    opening_remove(tenant, sid);
    pthread_cond_broadcast(&opened);
    pthread_mutex_unlock(&mu);
    return rc;
}

sandbox *gw_session_peek(http_ctx *c, const char *tenant, const char *sid)
{
    store_session row;
    cella_err err;
    sandbox *s = NULL;
    pthread_mutex_lock(&mu);
    if (store_session_get(core_store(c->core), tenant, sid, &row, &err) == 1) {
        s = row_sandbox(c, &row);
        store_session_free(&row);
    }
    pthread_mutex_unlock(&mu);
    return s;
}

/* ---- files in, all or nothing --------------------------------------------------------- */

void gw_files_free(gw_files *f)
{
    for (size_t i = 0; i < f->n; i++)
        cbuf_free(&f->v[i].data);
    cella_free(f->v);
    f->v = NULL;
    f->n = 0;
}

static int cmp_rel(const void *a, const void *b)
{
    return strcmp((*(gw_file_in *const *)a)->rel, (*(gw_file_in *const *)b)->rel);
}

/* One entry: its path and its bytes (text, or base64 decoded). */
static int file_in(gw_file_in *fi, const char *name, const char *path, size_t plen, json_t *text,
                   json_t *b64, core_error *e)
{
    char abs[GW_PATH_MAX];
    if (gw_path_str(name, path, plen, false, abs, fi->rel, e) < 0)
        return -1;
    if (!!text == !!b64)
        return core_fail(e, S001, "invalid request: %s must have exactly one of content (text) "
                         "and content_b64", name);
    if ((text && !json_is_string(text)) || (b64 && !json_is_string(b64)))
        return core_fail(e, S001, "invalid request: %s: content and content_b64 are strings",
                         name);
    if (text) {
        cbuf_append(&fi->data, json_string_value(text), json_string_length(text));
        return 0;
    }
    cella_err err;
    if (base64_decode(&fi->data, json_string_value(b64), json_string_length(b64), &err) < 0)
        return core_fail(e, S001, "invalid request: %s.content_b64: %s", name, err.msg);
    return 0;
}

int gw_files_decode(json_t *j, const char *key, gw_files *f, core_error *e)
{
    json_t *v = json_object_get(j, key);
    f->v = NULL;
    f->n = 0;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_array(v) && !json_is_object(v))
        return core_fail(e, S001, "invalid request: field '%s' must be a list of {path, content "
                         "| content_b64} or an object of path: content", key);
    size_t n = json_is_array(v) ? json_array_size(v) : json_object_size(v);
    f->v = cella_calloc(n + 1, sizeof(gw_file_in));
    char name[96];
    if (json_is_array(v)) {
        size_t i;
        json_t *it;
        json_array_foreach(v, i, it) {
            gw_file_in *fi = &f->v[f->n++];
            cbuf_init(&fi->data);
            snprintf(name, sizeof(name), "%s[%zu]", key, i);
            json_t *p = json_object_get(it, "path");
            if (!json_is_object(it) || !json_is_string(p))
                return core_fail(e, S001, "invalid request: %s must be {path, content | "
                                 "content_b64}", name);
            if (file_in(fi, name, json_string_value(p), json_string_length(p),
                        json_object_get(it, "content"), json_object_get(it, "content_b64"), e) < 0)
                return -1;
        }
    } else {
        const char *k;
        json_t *it;
        json_object_foreach(v, k, it) {
            gw_file_in *fi = &f->v[f->n++];
            cbuf_init(&fi->data);
            snprintf(name, sizeof(name), "%s.%.64s", key, k);
            if (!json_is_string(it))
                return core_fail(e, S001, "invalid request: %s must be a string (UTF-8 text)",
                                 name);
            if (file_in(fi, name, k, strlen(k), it, NULL, e) < 0)
                return -1;
        }
    }
    /* The same file twice would leave which one wins to the order. */
    gw_file_in **by = cella_calloc(f->n + 1, sizeof(*by));
    for (size_t i = 0; i < f->n; i++)
        by[i] = &f->v[i];
    qsort(by, f->n, sizeof(*by), cmp_rel);
    int rc = 0;
    for (size_t i = 1; i < f->n && rc == 0; i++)
        if (!strcmp(by[i - 1]->rel, by[i]->rel))
            rc = core_fail(e, S001, "invalid request: %s names %.200s twice", key, by[i]->rel);
    cella_free(by);
    return rc;
}

int gw_files_write(http_ctx *c, sandbox *s, const gw_files *f, uint64_t timeout_ms,
                   core_error *e)
{
    if (!f->n)
        return 0;
    /* One archive, one call: the agent writes every file under a
     * temporary name and renames them in only once all are there
     * (tar-extract atomic=1), so a failure anywhere changes nothing. */
    cbuf tar;
    cbuf_init(&tar);
    tar_entry *te = cella_calloc(1, sizeof(*te));
    static const uint8_t zeros[2 * TAR_BLOCK];
    int rc = -1;
    for (size_t i = 0; i < f->n; i++) {
        memset(te, 0, sizeof(*te));
        size_t nl = strlen(f->v[i].rel);
        if (nl >= sizeof(te->name)) {
            core_fail(e, S001, "invalid request: a path is longer than %zu bytes",
                      sizeof(te->name) - 1);
            goto out;
        }
        memcpy(te->name, f->v[i].rel, nl + 1);
        te->size = cbuf_avail(&f->v[i].data);
        te->mode = 0644;
        te->mtime = (int64_t)time(NULL);
        te->type = '0';
        if (tar_encode(&tar, te) < 0) {
            core_fail(e, S001, "invalid request: %.200s cannot be written", f->v[i].rel);
            goto out;
        }
        cbuf_append(&tar, cbuf_head(&f->v[i].data), te->size);
        cbuf_append(&tar, zeros, (TAR_BLOCK - te->size % TAR_BLOCK) % TAR_BLOCK);
    }
    cbuf_append(&tar, zeros, sizeof(zeros));
    char quota[48];
    snprintf(quota, sizeof(quota), "quota=%llu", (unsigned long long)core_workspace_quota(c->core));
    /* follow=1: symlinks in the workspace are followed while they stay in
     * it (ln -s data out; a write to out/x lands in data/x), as a user of a
     * workspace expects; one that leads out refuses the batch (S210). The
     * agent resolves them inside the sandbox, as its user, without ever
     * letting the kernel follow one (agent/fs_beneath.c). The native
     * uploads keep refusing any symlink in a path. */
    /* A deadline is the extract's own (deadline_ms): it stops between
     * entries and rolls the batch back, so a timed-out call changes
     * nothing. The kill a little later only backs that up (one entry
     * stuck), and would leave the batch's hidden temporaries behind. */
    char deadline[48];
    snprintf(deadline, sizeof(deadline), "deadline_ms=%llu", (unsigned long long)timeout_ms);
    char *args[] = {"path=/workspace", "atomic=1", "follow=1", quota, deadline, NULL};
    core_fs_req r = {.op = "tar-extract", .args = args, .has_stdin = true,
                     .stdin_data = cbuf_head(&tar), .stdin_len = cbuf_avail(&tar),
                     .timeout_ms = timeout_ms ? timeout_ms + GW_STAGE_KILL_GRACE_MS : 0};
    cbuf res;
    cbuf_init(&res);
    rc = core_fs(s, &r, c->client_fd, &res, e);
    cbuf_free(&res);
out:
    cella_free(te);
    cbuf_free(&tar);
    return rc;
}

/* ---- the sessions routes --------------------------------------------------------------- */

static json_t *iso_time(int64_t ms)
{
    char buf[40];
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    size_t n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, sizeof(buf) - n, ".%03dZ", (int)(ms % 1000));
    return json_string(buf);
}

/* GET /sessions[?tenant_id=T] (admin): every open session. */
void gw_h_sessions(http_ctx *c)
{
    core_error e;
    store_session *v;
    size_t n;
    cella_err err;
    const char *only = http_query(c, "tenant_id");
    pthread_mutex_lock(&mu);
    if (store_session_list(core_store(c->core), &v, &n, &err) < 0) {
        pthread_mutex_unlock(&mu);
        core_fail_err(&e, S302, &err, "internal error: sessions");
        http_reply_error(c, &e);
        return;
    }
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        sandbox *s = only && strcmp(only, v[i].tenant) ? NULL : row_sandbox(c, &v[i]);
        if (s) {
            sandbox_info info;
            sandbox_get_info(s, &info);
            json_array_append_new(
                arr, json_pack("{s:s,s:s,s:s,s:o,s:o}", "tenant_id", v[i].tenant, "session_id",
                               v[i].session_id, "sandbox_id", v[i].sandbox_id, "created_at",
                               iso_time(v[i].created_at_ms), "last_used_at",
                               iso_time(info.last_used_at_ms)));
            sandbox_unref(s);
        }
        store_session_free(&v[i]);
    }
    pthread_mutex_unlock(&mu);
    cella_free(v);
    http_reply_json(c, 200, json_pack("{s:o}", "sessions", arr));
}

/* DELETE /sessions/{tenant_id}/{session_id} (admin): the session and its
 * sandbox, workspace included. */
void gw_h_session_delete(http_ctx *c)
{
    core_error e;
    const char *tenant = c->params[0], *sid = c->params[1];
    store_session row;
    cella_err err;
    if (gw_who_check(c, tenant, sid, &e) < 0)
        goto error;
    pthread_mutex_lock(&mu);
    while (is_opening(tenant, sid))
        pthread_cond_wait(&opened, &mu);
    int got = store_session_get(core_store(c->core), tenant, sid, &row, &err);
    if (got == 1 && store_session_delete(core_store(c->core), tenant, sid, NULL, &err) < 0) {
        store_session_free(&row);
        got = -1;
    }
    pthread_mutex_unlock(&mu);
    if (got < 0) {
        core_fail_err(&e, S302, &err, "internal error: sessions");
        goto error;
    }
    if (!got) {
        core_fail(&e, S002, "session not found: %s/%s", tenant, sid);
        goto error;
    }
    /* Waited for: once answered, the workspace is gone. A sandbox already
     * gone (reaped) is no error: the session still ended here. */
    core_stop(c->core, NULL, row.sandbox_id, true, NULL);
    log_info("event=gateway_session_ended tenant=%s session=%s sandbox=%s reason=deleted",
             tenant, sid, row.sandbox_id);
    http_reply_json(c, 200, json_pack("{s:s,s:s,s:s,s:b}", "tenant_id", tenant, "session_id",
                                      sid, "sandbox_id", row.sandbox_id, "deleted", 1));
    store_session_free(&row);
    return;
error:
    http_reply_error(c, &e);
}

/* POST /sessions/{tenant_id}/{session_id}/copy {files: [{path, content |
 * content_b64}]} -> {written: N}: all of them or none. */
void gw_h_session_copy(http_ctx *c)
{
    core_error e;
    json_t *j = NULL;
    gw_files f = {0};
    sandbox *s = NULL;
    const char *tenant = c->params[0], *sid = c->params[1];
    if (gw_who_check(c, tenant, sid, &e) < 0 || jin_parse(c->body, c->body_len, &j, &e) < 0)
        goto error;
    if (!json_is_array(json_object_get(j, "files"))) {
        core_fail(&e, S001, "invalid request: field 'files' must be a list of {path, content | "
                  "content_b64}");
        goto error;
    }
    /* Every entry checked before the session is touched. */
    if (gw_files_decode(j, "files", &f, &e) < 0 ||
        gw_session_open(c, tenant, sid, &s, &e) < 0 || gw_files_write(c, s, &f, 0, &e) < 0)
        goto error;
    http_reply_json(c, 200, json_pack("{s:I}", "written", (json_int_t)f.n));
    goto out;
error:
    http_reply_error(c, &e);
out:
    if (s)
        sandbox_unref(s);
    gw_files_free(&f);
    json_decref(j);
}
