/* POST /execute, Flujo's one-shot run (flujo.h says what it promises).
 * One sandbox per call, from the warm pool: the files (and code too large
 * to ride in the exec) go in as one tar stream, the program runs with the
 * code written by the same exec (write-exec), the artifacts come out as one
 * tar stream read here with util/tar.c's reader, and the sandbox is stopped
 * whatever happened. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api/flujo.h"
#include "api/gateway.h"
#include "api/jsonin.h"
#include "util/alloc.h"
#include "util/log.h"
#include "util/fdio.h"
#include "util/tar.h"
#include "util/text.h"

/* ---- the response shape ------------------------------------------------------- */

/* Output and messages are bytes from outside: JSON strings must be UTF-8. */
static json_t *text_json(const void *p, size_t n)
{
    cbuf t;
    cbuf_init(&t);
    utf8_lossy(&t, p, n);
    json_t *s = json_stringn_nocheck((const char *)cbuf_head(&t), cbuf_avail(&t));
    cbuf_free(&t);
    return s;
}

/* Every field, always: the client reads exit_code with int() and error as
 * a string or null, so neither may ever be missing or of another type. */
static json_t *flujo_body(void)
{
    return json_pack("{s:s,s:s,s:i,s:b,s:n,s:n,s:n,s:b}", "stdout", "", "stderr", "",
                     "exit_code", 1, "timed_out", 0, "error", "sandbox_id", "artifacts",
                     "truncated", 0);
}

static void set_error(json_t *o, const char *prefix, const char *msg)
{
    char *s = cella_asprintf("%s%s", prefix, msg);
    json_object_set_new(o, "error", text_json(s, strlen(s)));
    cella_free(s);
}

/* The error_fn of the route: failures the server answers itself (no or a
 * wrong token, a body too large) come out in Flujo's shape too. */
static json_t *flujo_error(const core_error *e, int *status)
{
    *status = core_http_status(e);
    json_t *o = flujo_body();
    set_error(o, "", e->message);
    /* And the S-code beside it (code, type, docs_url, ...; keys Flujo's
     * client ignores): the gateway's clients share this route (a
     * session_id makes a call theirs), and a failure answered before the
     * body is read (no or an unknown token, a body too large) cannot know
     * whose call it was, so it carries what both read. */
    json_t *full = http_error_object(e);
    json_object_del(full, "message");
    json_object_update_missing(o, full);
    json_decref(full);
    return o;
}

/* A failure after the sandbox exists: Flujo's shape, the status of the code. */
static int failed(json_t *o, const core_error *e, const char *prefix)
{
    set_error(o, prefix, e->message);
    json_object_set_new(o, "exit_code", json_integer(1));
    return core_http_status(e);
}

/* ---- files in ---------------------------------------------------------------- */

static const uint8_t zeros[2 * TAR_BLOCK];

/* One member: header, content, padding. -1 when the extraction stopped
 * taking bytes (core_fs_upload_end says why). */
static int put_member(core_fs_stream *st, tar_entry *te, cbuf *hdr, const char *name,
                      const char *data, size_t len, int64_t now)
{
    memset(te, 0, sizeof(*te));
    snprintf(te->name, sizeof(te->name), "%s", name);
    te->size = len;
    te->mode = 0644;
    te->mtime = now;
    te->type = '0';
    cbuf_reset(hdr);
    if (tar_encode(hdr, te) < 0)  /* cannot happen: names are cleaned and bounded */
        return -1;
    size_t pad = (TAR_BLOCK - len % TAR_BLOCK) % TAR_BLOCK;
    if (core_fs_upload_feed(st, cbuf_head(hdr), cbuf_avail(hdr)) < 0 ||
        (len && core_fs_upload_feed(st, data, len) < 0) ||
        (pad && core_fs_upload_feed(st, zeros, pad) < 0))
        return -1;
    return 0;
}

/* The code and then the files, in that order, as the reference writes
 * them: a file named like the entry point replaces the code. Parents are
 * made by the extraction. timeout_ms is what the run's budget leaves: the
 * extraction is killed past it (S200), since many small files take the
 * agent a while and the answer must still come within timeout_s. */
static int upload(http_ctx *c, sandbox *s, const flujo_req *r, uint64_t timeout_ms,
                  core_error *e)
{
    uint64_t quota = core_workspace_quota(c->core);
    char *a_quota = cella_asprintf("quota=%" PRIu64, quota);
    char *args[] = {"path=/workspace", "parents=1", a_quota, NULL};
    core_fs_req fr = {.op = "tar-extract", .args = args, .timeout_ms = timeout_ms};
    core_fs_stream *st = NULL;
    tar_entry *te = cella_malloc(sizeof(*te));
    cbuf hdr, out;
    cbuf_init(&hdr);
    cbuf_init(&out);
    int rc = -1;
    if (core_fs_upload_begin(s, &fr, c->client_fd, &st, e) < 0)
        goto out;
    int64_t now = (int64_t)time(NULL);
    bool fed = put_member(st, te, &hdr, r->lang->entry, r->code, r->code_len, now) == 0;
    for (size_t i = 0; fed && i < r->n_files; i++)
        fed = put_member(st, te, &hdr, r->files[i].path, r->files[i].content, r->files[i].len,
                         now) == 0;
    if (fed)
        fed = core_fs_upload_feed(st, zeros, sizeof(zeros)) == 0;
    rc = core_fs_upload_end(st, &out, e);
    if (rc == 0 && !fed)
        rc = core_fail(e, S216, "the sandbox stopped taking the files");
out:
    core_fs_close(st);
    cbuf_free(&hdr);
    cbuf_free(&out);
    cella_free(te);
    cella_free(a_quota);
    return rc;
}

/* ---- artifacts out ----------------------------------------------------------- */

typedef struct art_src {
    core_fs_stream *st;
    core_error e;
    bool failed;
} art_src;

static ssize_t art_read(void *ctx, void *buf, size_t n)
{
    art_src *a = ctx;
    ssize_t k = core_fs_read(a->st, buf, n, &a->e);
    if (k < 0) {
        a->failed = true;
        errno = EIO;
    }
    return k;
}

/* Names are bytes; JSON keys must be UTF-8 (two names that differ only in
 * invalid bytes would then collide: the later one wins). */
static void set_key(json_t *o, const char *name, json_t *v)
{
    cbuf t;
    cbuf_init(&t);
    utf8_lossy(&t, (const uint8_t *)name, strlen(name));
    cbuf_append(&t, "", 1);
    json_object_set_new_nocheck(o, (const char *)cbuf_head(&t), v);
    cbuf_free(&t);
}

/* One regular file's content, base64'd, as {"base64": ...}. */
static int art_file(tar_reader *rd, uint64_t size, json_t **out)
{
    cbuf raw, b64;
    cbuf_init(&raw);
    cbuf_init(&b64);
    uint8_t *p = size ? cbuf_reserve(&raw, (size_t)size) : NULL;
    uint64_t got = 0;
    while (got < size) {
        ssize_t k = tar_read(rd, p + got, (size_t)(size - got));
        if (k <= 0) {
            cbuf_free(&raw);
            return k < 0 ? (int)k : TAR_ETRUNC;
        }
        got += (uint64_t)k;
    }
    cbuf_commit(&raw, (size_t)size);
    base64_encode(&b64, cbuf_head(&raw), cbuf_avail(&raw));
    cbuf_free(&raw);
    /* base64 is ASCII: no need to check it. */
    *out = json_pack("{s:o}", "base64",
                     json_stringn_nocheck((const char *)cbuf_head(&b64), cbuf_avail(&b64)));
    cbuf_free(&b64);
    return 0;
}

/* Every regular file under /workspace/artifacts, keyed by its path
 * relative to it. No such directory (or a file in its place): {}. The
 * directory itself may be a symlink: the walk then archives what it leads
 * to inside the sandbox, which the limits bound like anything else.
 * Symlinks beneath it are not followed (they would lead to what the program did not
 * leave there), so they are left out, as directories, FIFOs and devices
 * are. Past the limits: -1 and a message naming them; nothing is kept.
 * Past deadline_ns likewise: Flujo's client stops waiting at timeout_s, so
 * an answer without artifacts beats one that comes too late. */
static int artifacts(http_ctx *c, sandbox *s, int64_t deadline_ns, json_t **out, core_error *e)
{
    char *args[] = {"path=/workspace/artifacts", NULL};
    core_fs_req fr = {.op = "tar-create", .args = args};
    art_src src = {0};
    cbuf header;
    cbuf_init(&header);
    *out = NULL;
    int rc = core_fs_download(s, &fr, c->client_fd, &src.st, &header, e);
    cbuf_free(&header);
    if (rc < 0) {
        if (e->code != S211 && e->code != S212)
            return -1;
        *out = json_object();
        return 0;
    }
    *out = json_object();
    tar_reader *rd = cella_malloc(sizeof(*rd));
    tar_entry *te = cella_malloc(sizeof(*te));
    tar_reader_init(rd, art_read, &src);
    uint64_t total = 0, entries = 0;
    for (;;) {
        if (clock_now_ns() > deadline_ns) {
            rc = core_fail(e, S200, "the run's timeout was reached while they were read "
                           "(%llu files so far)", (unsigned long long)entries);
            break;
        }
        int t = tar_next(rd, te);
        if (t == TAR_END)
            break;
        if (t == TAR_OK && ++entries > FLUJO_ARTIFACTS_MAX_ENTRIES) {
            rc = core_fail(e, S400, "artifacts exceed the limit of %u files and directories",
                           FLUJO_ARTIFACTS_MAX_ENTRIES);
            break;
        }
        if (t == TAR_OK && (te->type == '0' || te->type == '7')) {
            if (te->size > FLUJO_ARTIFACTS_MAX_BYTES - total) {
                rc = core_fail(e, S400, "artifacts exceed the limit of %u MiB (%u bytes)",
                               FLUJO_ARTIFACTS_MAX_BYTES >> 20, FLUJO_ARTIFACTS_MAX_BYTES);
                break;
            }
            total += te->size;
            json_t *v = NULL;
            if ((t = art_file(rd, te->size, &v)) == TAR_OK)
                set_key(*out, te->name, v);
        }
        if (t != TAR_OK) {
            if (src.failed)
                rc = core_fail(e, src.e.code, "%s", src.e.message);
            else
                rc = core_fail(e, S216, "the artifacts archive is malformed: %s", tar_strerror(t));
            break;
        }
    }
    /* Closing kills a walk still running (one stopped at a limit). */
    core_fs_close(src.st);
    cella_free(rd);
    cella_free(te);
    if (rc < 0) {
        json_decref(*out);
        *out = NULL;
    }
    return rc;
}

/* ---- the run ------------------------------------------------------------------ */

/* What staging and the program may use of the budget: the answer must
 * leave within timeout_s of the request's arrival, so the setup already
 * spent counts, and a reserve is kept for the artifacts and the reply.
 * 0 when nothing is left. */
static uint64_t time_left(uint64_t budget_ms, int64_t t0_ns)
{
    uint64_t reserve = budget_ms / 20 < FLUJO_REPLY_RESERVE_MS ? budget_ms / 20
                                                              : FLUJO_REPLY_RESERVE_MS;
    int64_t spent = (clock_now_ns() - t0_ns) / 1000000;
    uint64_t left = budget_ms - reserve;
    if (spent > 0)
        left = (uint64_t)spent < left ? left - (uint64_t)spent : 0;
    return left;
}

/* The program's timeout: an exec needs one of at least 1 ms, and a program
 * started with nothing left times out at once, as the contract words it. */
static uint64_t exec_timeout(uint64_t budget_ms, int64_t t0_ns)
{
    uint64_t left = time_left(budget_ms, t0_ns);
    return left ? left : 1;
}

static void set_result(json_t *o, const core_exec_result *res)
{
    int code = res->timed_out       ? 124
               : res->has_exit_code ? res->exit_code
               : res->signal > 0    ? 128 + res->signal   /* the shell's and Docker's 137 */
                                    : 1;
    json_object_set_new(o, "stdout", text_json(cbuf_head(&res->out[1]), cbuf_avail(&res->out[1])));
    json_object_set_new(o, "stderr", text_json(cbuf_head(&res->out[2]), cbuf_avail(&res->out[2])));
    json_object_set_new(o, "exit_code", json_integer(code));
    json_object_set_new(o, "timed_out", json_boolean(res->timed_out));
    json_object_set_new(o, "truncated",
                        json_boolean(res->stdout_truncated || res->stderr_truncated));
    if (res->timed_out)
        set_error(o, "", "Execution timed out");
    else if (!res->has_exit_code && res->oom_killed)
        set_error(o, "", "Out of memory: the program was killed at the sandbox's memory limit");
}

/* The program: the interpreter on the entry point, the code written by
 * the same exec when inline_code. res is filled when it returns 0. */
static int program(http_ctx *c, sandbox *s, const flujo_req *r, bool inline_code,
                   uint64_t budget_ms, int64_t t0_ns, core_exec_result *res, core_error *e)
{
    size_t na = r->args ? cella_strv_len(r->args) : 0;
    char **argv = cella_calloc(na + 7, sizeof(char *));
    char entry_path[64];
    snprintf(entry_path, sizeof(entry_path), "/workspace/%s", r->lang->entry);
    size_t k = 0;
    if (inline_code) {
        argv[k++] = "write-exec";
        argv[k++] = entry_path;
        argv[k++] = "0644";
        argv[k++] = (char *)r->code;
    }
    argv[k++] = (char *)r->lang->interpreter;
    argv[k++] = (char *)r->lang->entry;    /* relative, as `python main.py` names it */
    for (size_t i = 0; i < na; i++)
        argv[k++] = r->args[i];
    core_exec_req xr = {
        .argv = argv,
        .builtin = inline_code,
        .env = r->env,
        .has_timeout = true,
        .timeout_ms = exec_timeout(budget_ms, t0_ns),
    };
    int rc = core_exec_run(s, &xr, c->client_fd, res, e);
    cella_free(argv);
    return rc;
}

/* Fills o; returns the HTTP status. */
static int run(http_ctx *c, sandbox *s, const flujo_req *r, uint64_t budget_ms, int64_t t0_ns,
               json_t *o)
{
    core_error e;
    core_exec_result res;
    /* Small code with no files: one round trip, the exec writes the code. */
    bool inline_code = r->n_files == 0 && r->code_len <= FLUJO_INLINE_CODE_MAX;
    int staged = 0;
    if (!inline_code) {
        /* Staging counts against the budget as the program does: many
         * small files take the agent a while, and the answer must still
         * come within timeout_s. */
        uint64_t left = time_left(budget_ms, t0_ns);
        staged = left ? upload(c, s, r, left, &e)
                      : core_fail(&e, S200, "the timeout passed before the files were staged");
        if (staged < 0 && e.code != S200)
            return failed(o, &e, "Failed to prepare files: ");
    }
    if (staged < 0) {
        /* Staging took the whole budget: the client reads it as a run that
         * timed out (nothing ran), so it is answered as one, with what the
         * reserve still collects of the artifacts. */
        log_info("event=flujo_staging_timed_out sandbox=%s files=%zu", sandbox_id(s),
                 r->n_files);
        memset(&res, 0, sizeof(res));
        for (int i = 0; i < 3; i++)
            cbuf_init(&res.out[i]);
        res.timed_out = true;
    } else if (program(c, s, r, inline_code, budget_ms, t0_ns, &res, &e) < 0) {
        return failed(o, &e, e.code == S216 ? "Failed to prepare files: " : "");
    }
    set_result(o, &res);
    core_exec_result_free(&res);
    json_t *art;
    if (artifacts(c, s, t0_ns + (int64_t)budget_ms * 1000000, &art, &e) < 0) {
        /* The run's own result stands; only the artifacts are missing. A
         * run's own error (a timeout's "Execution timed out") is kept as
         * the contract words it; null artifacts then say they are missing. */
        if (json_is_null(json_object_get(o, "error")))
            set_error(o, "Failed to collect artifacts: ", e.message);
        else
            log_info("event=flujo_artifacts_dropped sandbox=%s error=%s", sandbox_id(s),
                     core_code_lookup(e.code)->name);
        return 200;
    }
    json_object_set_new(o, "artifacts", art);
    return 200;
}

static void h_execute(http_ctx *c)
{
    int64_t t0 = clock_now_ns();
    core_error e;
    flujo_req r;
    json_t *j;
    if (jin_parse(c->body, c->body_len, &j, &e) < 0) {
        http_reply_error(c, &e);
        return;
    }
    /* /execute serves both dialects: a session_id makes it the gateway's. */
    if (flujo_is_session(j)) {
        api_gateway_execute(c, j);
        json_decref(j);
        return;
    }
    if (flujo_req_decode(j, &r, &e) < 0) {
        http_reply_error(c, &e);
        return;
    }
    uint64_t budget = r.has_timeout ? r.timeout_ms : FLUJO_DEFAULT_TIMEOUT_MS;
    if (budget > c->cfg->max_exec_timeout_ms)
        budget = c->cfg->max_exec_timeout_ms;
    /* No network (the default), the caller's tenant, never recorded: a
     * crash must not bring a one-shot run back. */
    core_create_req cr = {.image = r.lang->image, .ephemeral = true};
    sandbox *s;
    if (core_create(c->core, c->tenant, &cr, &s, &e) < 0) {
        http_reply_error(c, &e);
        flujo_req_free(&r);
        return;
    }
    json_t *o = flujo_body();
    json_object_set_new(o, "sandbox_id", json_string(sandbox_id(s)));
    int status = run(c, s, &r, budget, t0, o);
    core_stop(c->core, c->tenant, sandbox_id(s), false, NULL);
    sandbox_unref(s);
    flujo_req_free(&r);
    http_reply_json(c, status, o);
}

const http_route api_flujo_routes[] = {
    {"POST", "/execute", NULL, 0, h_execute, flujo_error},
    /* The gateway strips /v1/sandbox before forwarding: the same route. */
    {"POST", "/v1/sandbox/execute", NULL, 0, h_execute, flujo_error},
    {NULL, NULL, NULL, 0, NULL, NULL},
};
