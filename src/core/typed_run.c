/* Typed one-shot runs (core/typed.h): the cache, the attempts, and in each
 * attempt the staging of inputs and the collection of outputs. Everything
 * inside the sandbox goes through the agent's file operations, as the
 * sandbox user: the daemon never resolves /var/inputs or /var/outputs. */
#include "core/typed.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/core_int.h"
#include "util/alloc.h"
#include "util/log.h"

/* Code up to this size rides in the exec (write-exec), as core_run's does. */
#define TYPED_INLINE_CODE_MAX (1u << 20)
/* A scalar output's file may hold this much (whitespace around the value). */
#define TYPED_SCALAR_FILE_MAX (64u << 10)
/* The cache: entries larger than this are not kept; beyond the totals the
 * least recently used go. */
#define TYPED_CACHE_ENTRY_MAX (16u << 20)
#define TYPED_CACHE_MAX_BYTES (256ull << 20)
#define TYPED_CACHE_MAX_ENTRIES 10000

/* Flyte's script modes run under bash with `set -o pipefail` (BEHAVIOUR-NOTES
 * §5), so a typed run's shell code does too: a failing stage of a pipeline
 * fails it. iii's plain sandbox::run keeps the /bin/sh its spec names. The
 * interpreter's text is part of the cache key, so the two never share
 * entries. */
#define TYPED_SHELL "/bin/bash"
#define TYPED_SHELL_KEY "/bin/bash -o pipefail"

static bool shell_lang(const char *lang)
{
    return lang && (!strcmp(lang, "shell") || !strcmp(lang, "sh") || !strcmp(lang, "bash"));
}

/* Auto-IO: the user's code and the wrapper that runs it, side by side. */
#define AUTO_CODE_PATH "/tmp/run.py"
#define AUTO_WRAPPER_PATH "/tmp/run_io.py"

static bool attempt_ok(const core_exec_result *x)
{
    return x->has_exit_code && x->exit_code == 0 && !x->timed_out;
}

static void outputs_error(core_typed_result *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void outputs_error(core_typed_result *res, const char *fmt, ...)
{
    /* Every problem, joined, as far as the message holds them. */
    size_t used = strlen(res->outputs_error);
    if (used && used + 2 < sizeof(res->outputs_error)) {
        memcpy(res->outputs_error + used, "; ", 3);
        used += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->outputs_error + used, sizeof(res->outputs_error) - used, fmt, ap);
    va_end(ap);
    res->has_outputs_error = true;
}

/* A dir input: its archive extracted into /var/inputs/<name>/ (made) by the
 * agent's tar-extract, the one uploads use, with all its refusals (names
 * that climb out, symlinks in a parent path, devices...); /var/inputs is a
 * tmpfs of its own size. No archive at all is an empty directory. */
static int stage_dir(sandbox *s, const char *path, const typed_value *v, int client_fd,
                     core_error *e)
{
    static const uint8_t end[1024];           /* an archive with no entries */
    return core_fs_feed(s, "tar-extract", path, "parents=1", NULL, v->len ? v->data : end,
                        v->len ? v->len : sizeof(end), client_fd, e);
}

static int stage_inputs(sandbox *s, const core_typed_req *r, int client_fd, core_error *e)
{
    for (size_t i = 0; i < r->n_inputs; i++) {
        const typed_value *v = &r->inputs[i];
        char path[32 + TYPED_NAME_MAX];
        snprintf(path, sizeof(path), "/var/inputs/%s", v->name);
        if (v->type == TT_DIR ? stage_dir(s, path, v, client_fd, e) < 0
                              : core_write_in_sandbox(s, path, v->data, v->len, client_fd, e) < 0)
            return -1;
    }
    return 0;
}

/* The program of the run's mode, executed; step names the step that failed. */
static int run_program(sandbox *s, const core_typed_req *r, const char *interp, const char *ext,
                       unsigned attempt, int client_fd, core_exec_result *x, const char **step,
                       core_error *e)
{
    /* The attempt's number beside the request's environment (the
     * sandbox's own, set at create): a program may behave differently on
     * a retry (a flaky test that must pass once). */
    char attempt_var[32];
    snprintf(attempt_var, sizeof(attempt_var), "CELLA_ATTEMPT=%u", attempt);
    char *env[] = {attempt_var, NULL};
    core_exec_req xr = {
        .env = env,
        .has_timeout = r->run.has_timeout,
        .timeout_ms = r->run.timeout_ms,
        .has_stdin = r->run.has_stdin,
        .stdin_data = r->run.stdin_data,
        .stdin_len = r->run.stdin_len,
    };
    char code_path[32];
    snprintf(code_path, sizeof(code_path), "/tmp/run.%s", ext);
    cbuf wrapper;
    cbuf_init(&wrapper);
    char *argv[10] = {0};
    int rc = -1;
    *step = "write";
    if (r->mode == TM_COMMAND) {
        xr.argv = r->argv;
    } else if (r->mode == TM_AUTO_IO) {
        /* The code as a file of its own, so tracebacks show its lines; the
         * wrapper (small, always) rides in the exec. */
        if (core_write_in_sandbox(s, AUTO_CODE_PATH, (const uint8_t *)r->run.code,
                                  r->run.code_len, client_fd, e) < 0)
            goto out;
        typed_wrapper(r, AUTO_CODE_PATH, &wrapper);
        cbuf_append(&wrapper, "", 1);
        char *w[] = {"write-exec", AUTO_WRAPPER_PATH, "0644", (char *)cbuf_head(&wrapper),
                     (char *)interp, AUTO_WRAPPER_PATH, NULL};
        memcpy(argv, w, sizeof(w));
        xr.builtin = true;
    } else {
        /* Verbatim: as a plain run does it. */
        bool inline_code = r->run.code_len <= TYPED_INLINE_CODE_MAX &&
                           !memchr(r->run.code, '\0', r->run.code_len);
        if (!inline_code &&
            core_write_in_sandbox(s, code_path, (const uint8_t *)r->run.code, r->run.code_len,
                                  client_fd, e) < 0)
            goto out;
        bool sh = shell_lang(r->run.lang);
        char *w[] = {"write-exec", code_path, "0644", (char *)r->run.code,
                     sh ? TYPED_SHELL : (char *)interp, sh ? "-o" : code_path,
                     sh ? "pipefail" : NULL, sh ? code_path : NULL, NULL};
        char *plain[] = {sh ? TYPED_SHELL : (char *)interp, sh ? "-o" : code_path,
                         sh ? "pipefail" : NULL, sh ? code_path : NULL, NULL};
        if (inline_code)
            memcpy(argv, w, sizeof(w));
        else
            memcpy(argv, plain, sizeof(plain));
        xr.builtin = inline_code;
    }
    if (!xr.argv)
        xr.argv = argv;
    *step = "exec";
    rc = core_exec_run(s, &xr, client_fd, x, e);
    /* write-exec's own write failing is S216: the step is the write. */
    if (rc < 0 && e->code == S216)
        *step = "write";
out:
    cbuf_free(&wrapper);
    return rc;
}

/* /var/outputs/<name> into out: a file's bytes, or for a dir a tar archive
 * of the directory's contents (the agent's tar-create: files, directories
 * and symlinks, never followed), read no further than limit + 1 bytes. 1:
 * read; 0: absent or unreadable (why says, for the caller to report); -1:
 * e (the client left, the sandbox failed). */
static int read_output(sandbox *s, const char *name, bool dir, size_t limit, int client_fd,
                       cbuf *out, char *why, size_t why_n, core_error *e)
{
    char *pa = cella_asprintf("path=/var/outputs/%s", name);
    char *len = dir ? NULL : cella_asprintf("length=%zu", limit + 1);
    char *args[] = {pa, len, NULL};
    core_fs_req fr = {.op = dir ? "tar-create" : "cat", .args = args};
    core_fs_stream *st;
    cbuf header;
    cbuf_init(&header);
    int rc = core_fs_download(s, &fr, client_fd, &st, &header, e);
    cbuf_free(&header);
    cella_free(pa);
    cella_free(len);
    if (rc < 0) {
        if (e->code == S211) {
            snprintf(why, why_n, "missing");
            return 0;
        }
        if (e->code >= S212 && e->code <= S216) {
            snprintf(why, why_n, "%s", e->message);
            return 0;
        }
        return -1;
    }
    /* Past the limit the reading stops: closing kills what is still
     * running (a tar-create of a large tree). */
    while (cbuf_avail(out) <= limit) {
        uint8_t *p = cbuf_reserve(out, 64 << 10);
        ssize_t n = core_fs_read(st, p, 64 << 10, e);
        if (n < 0) {
            core_fs_close(st);
            /* What the output holds stopped the reading (a tree deeper
             * than a walk goes): the output's problem, not the run's. */
            if (e->code >= S212 && e->code <= S217) {
                snprintf(why, why_n, "%s", e->message);
                return 0;
            }
            return -1;
        }
        if (n == 0)
            break;
        cbuf_commit(out, (size_t)n);
    }
    core_fs_close(st);
    if (cbuf_avail(out) > limit) {
        snprintf(why, why_n, "larger than %zu bytes", limit);
        return 0;
    }
    return 1;
}

/* Reads every declared output. required: the program succeeded, so each
 * must be there and of its type (else outputs_error); after a failure,
 * whatever is readable is returned and the rest is left out quietly. */
static int collect(sandbox *s, const core_typed_req *r, bool required, int client_fd,
                   core_typed_result *res, core_error *e)
{
    res->outputs = cella_calloc(r->n_outputs + 1, sizeof(*res->outputs));
    size_t total = 0;
    for (size_t i = 0; i < r->n_outputs; i++) {
        const typed_decl *d = &r->outputs[i];
        bool big = d->type == TT_STR || d->type == TT_FILE || d->type == TT_DIR;
        cbuf raw;
        cbuf_init(&raw);
        char why[CELLA_ERR_MAX];
        int got = read_output(s, d->name, d->type == TT_DIR,
                              big ? TYPED_OUTPUT_MAX : TYPED_SCALAR_FILE_MAX, client_fd, &raw, why,
                              sizeof(why), e);
        if (got < 0) {
            cbuf_free(&raw);
            return -1;
        }
        typed_out *o = &res->outputs[res->n_outputs];
        cbuf_init(&o->data);
        if (got == 0) {
            if (required && !strcmp(why, "missing"))
                outputs_error(res, r->mode == TM_AUTO_IO && d->type != TT_FILE &&
                                           d->type != TT_DIR && typed_name_is_var(d->name) &&
                                           strcmp(d->name, "exit_code") != 0
                                       ? "declared output '%s' was not set by the code"
                                       : "declared output '%s' was not written to "
                                         "/var/outputs/%s",
                              d->name, d->name);
            else if (required)
                outputs_error(res, "declared output '%s': %s", d->name, why);
        } else if (typed_parse(d->type, cbuf_head(&raw), cbuf_avail(&raw), &o->data, why,
                               sizeof(why)) < 0) {
            if (required)
                outputs_error(res, "declared output '%s' (%s): %s", d->name,
                              typed_type_name(d->type), why);
        } else if (total + cbuf_avail(&o->data) > TYPED_OUTPUTS_MAX) {
            if (required)
                outputs_error(res, "declared output '%s': the outputs together are larger "
                                   "than %u bytes", d->name, TYPED_OUTPUTS_MAX);
        } else {
            total += cbuf_avail(&o->data);
            o->name = cella_strdup(d->name);
            o->type = d->type;
            res->n_outputs++;
            cbuf_free(&raw);
            continue;
        }
        cbuf_free(&o->data);
        cbuf_free(&raw);
    }
    return 0;
}

/* One attempt in a fresh sandbox. -1: a step failed (e has its fix). */
static int attempt(core *c, const char *tenant, const core_typed_req *r, const char *interp,
                   const char *ext, unsigned n, bool last, int client_fd, core_typed_result *res,
                   core_error *e)
{
    /* The env is the sandbox's, so its names are checked in the create step. */
    core_create_req cr = {.image = r->run.image, .env = r->run.env,
                          .ephemeral = !r->run.keep_sandbox};
    sandbox *s;
    if (core_create(c, tenant, &cr, &s, e) < 0)
        return core_run_step_failed(e, "create", NULL);
    int rc = -1;
    bool final = last;
    const char *step = "write";
    for (size_t i = 0; i < r->run.n_files; i++)
        if (core_write_in_sandbox(s, r->run.files[i].path, r->run.files[i].content,
                                  r->run.files[i].len, client_fd, e) < 0)
            goto failed;
    step = "stage";
    if (stage_inputs(s, r, client_fd, e) < 0)
        goto failed;
    if (run_program(s, r, interp, ext, n, client_fd, &res->exec, &step, e) < 0)
        goto failed;
    bool ok = attempt_ok(&res->exec);
    final = ok || last;
    /* The exit status as a file, as Flyte's sandboxes leave it: a program
     * that wants it as an output declares exit_code. It replaces whatever
     * the program wrote there. Not being able to write it (the program put
     * a directory in its place) shows as that output's problem. */
    const core_exec_result *x = &res->exec;
    char status[16];
    int len = snprintf(status, sizeof(status), "%d",
                       x->has_exit_code ? x->exit_code : 128 + x->signal);
    core_error ignored;
    core_write_in_sandbox(s, "/var/outputs/exit_code", (const uint8_t *)status, (size_t)len,
                          client_fd, &ignored);
    step = "collect";
    if (final && collect(s, r, ok, client_fd, res, e) < 0)
        goto failed;
    rc = 0;
    goto out;
failed:
    core_run_step_failed(e, step, sandbox_id(s));
    final = true;
out:
    if (r->run.keep_sandbox && final)
        snprintf(res->sandbox_id, sizeof(res->sandbox_id), "%s", sandbox_id(s));
    else
        core_stop(c, NULL, sandbox_id(s), false, NULL);
    sandbox_unref(s);
    return rc;
}

static bool cache_lookup(core *c, const uint8_t key[32], core_typed_result *res)
{
    cbuf v;
    cbuf_init(&v);
    cella_err err;
    int got = store_cache_get(c->st, key, core_wall_ms(), &v, &err);
    bool hit = false;
    if (got < 0) {
        log_warn("event=run_cache_error op=get msg=\"%s\"", err.msg);
    } else if (got == 1) {
        core_typed_result_free(res);
        if (typed_result_decode(cbuf_head(&v), cbuf_avail(&v), res) == 0)
            hit = true;
        else
            log_warn("event=run_cache_error op=decode msg=\"a damaged entry was ignored\"");
    }
    cbuf_free(&v);
    return hit;
}

static void cache_store(core *c, const uint8_t key[32], const core_typed_result *res)
{
    cbuf v;
    cbuf_init(&v);
    typed_result_encode(res, &v);
    cella_err err;
    if (cbuf_avail(&v) <= TYPED_CACHE_ENTRY_MAX &&
        store_cache_put(c->st, key, cbuf_head(&v), cbuf_avail(&v), core_wall_ms(),
                        TYPED_CACHE_MAX_ENTRIES, TYPED_CACHE_MAX_BYTES, &err) < 0)
        log_warn("event=run_cache_error op=put msg=\"%s\"", err.msg);
    cbuf_free(&v);
}

int core_typed_run(core *c, const char *tenant, const core_typed_req *r, int client_fd,
                   core_typed_result *res, core_error *e)
{
    core_typed_result_init(res);
    const char *ext = "txt", *interp = NULL;
    if (r->mode != TM_COMMAND)
        interp = core_run_interp(r->run.lang, &ext);
    if (r->mode != TM_COMMAND && shell_lang(r->run.lang))
        interp = TYPED_SHELL_KEY;
    /* The image first, as a create would check it: an answer from the
     * cache must not outlive the operator's allowlist (an image taken out
     * of it answers nothing, cached or not). */
    if (!catalog_check(c, r->run.image, e))
        return core_run_step_failed(e, "create", NULL);
    uint8_t key[32];
    bool caching = r->cache != TC_DISABLE;
    if (caching)
        typed_cache_key(tenant, r, interp, key);
    if (r->cache == TC_AUTO && cache_lookup(c, key, res)) {
        res->cached = true;
        return 0;
    }
    unsigned retries = r->retries > TYPED_MAX_RETRIES ? TYPED_MAX_RETRIES : r->retries;
    for (unsigned n = 1;; n++) {
        if (n > 1) {
            core_exec_result_free(&res->exec);
            memset(&res->exec, 0, sizeof(res->exec));
        }
        res->attempts = n;
        bool last = n > retries;
        if (attempt(c, tenant, r, interp, ext, n, last, client_fd, res, e) < 0)
            return -1;
        if (attempt_ok(&res->exec) || last)
            break;
        log_info("event=run_retry attempt=%u exit_code=%d timed_out=%d", n, res->exec.exit_code,
                 res->exec.timed_out);
    }
    if (caching && core_typed_success(res))
        cache_store(c, key, res);
    return 0;
}
