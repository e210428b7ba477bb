/* File operations and transfers: each is an agent built-in (`fs OP ...`,
 * agent/fs_int.h) run as an exec of its own kind, so it resolves paths
 * inside the sandbox with the sandbox user's rights, and the daemon only
 * moves bytes and maps exit statuses to S-codes. */
#include <stdio.h>
#include <string.h>

#include "agent/builtin.h"
#include "box/mux.h"
#include "core/core_int.h"
#include "util/alloc.h"
#include "util/fdio.h"
#include "util/log.h"

/* A file operation that is not a transfer gets this long. grep and sed
 * have their own, shorter deadline inside. */
#define CORE_FS_TIMEOUT_MS 120000
/* A download's first line (its JSON header) must fit in this. */
#define CORE_FS_HEADER_MAX (64u << 10)
/* Transfers bump the idle clock at most this often. */
#define CORE_FS_TOUCH_NS (1000ll * 1000000)
/* How long an upload waits for the verdict of an operation that stopped
 * reading its body early (its exit follows at once). */
#define CORE_FS_VERDICT_MS 5000

struct core_fs_stream {
    sandbox *s;
    core_exec *x;
    cbuf pending;                 /* stdout taken from the mux, not yet read */
    cbuf err;                     /* stderr: the message of a failure */
    bool done;
    bool verdict_waited;          /* an upload's early end was waited for once */
    bool caller_deadline;         /* started with the caller's timeout_ms */
    int client_fd;
    int64_t touched_ns;
};

uint64_t core_workspace_quota(core *c)
{
    return c->cfg->workspace_quota_bytes;
}

/* "fs" OP args... */
static char **fs_argv(const core_fs_req *r)
{
    size_t n = r->args ? cella_strv_len(r->args) : 0;
    char **v = cella_calloc(n + 3, sizeof(char *));
    v[0] = "fs";
    v[1] = (char *)r->op;
    for (size_t i = 0; i < n; i++)
        v[2 + i] = r->args[i];
    return v;
}

/* The failure an operation's exit status and stderr describe. */
static int fs_failed(const core_exec_result *res, const cbuf *err, const char *op,
                     bool caller_deadline, core_error *e)
{
    /* stderr is a byte queue, not a string: find its first line by length. */
    const uint8_t *nl = memchr(cbuf_head(err), '\n', cbuf_avail(err));
    size_t first = nl ? (size_t)(nl - cbuf_head(err)) : cbuf_avail(err);
    int len = first > 4096 ? 4096 : (int)first;
    const char *msg = (const char *)cbuf_head(err);
    /* The caller's own deadline is a timeout it answers as such (S200);
     * the default one means the operation is stuck (S216). */
    if (res->timed_out && caller_deadline)
        return core_fail(e, S200, "%s was stopped at the call's deadline (%llu ms)", op,
                         (unsigned long long)res->timeout_ms);
    if (res->timed_out)
        return core_fail(e, S216, "%s took longer than %llu ms and was stopped", op,
                         (unsigned long long)res->timeout_ms);
    if (!res->has_exit_code)
        return core_fail(e, res->oom_killed ? S400 : S216, "%s was killed by signal %d%s", op,
                         res->signal, res->oom_killed ? " (the sandbox ran out of memory)" : "");
    if (!len) {
        msg = "the operation failed";
        len = (int)strlen(msg);
    }
    switch (res->exit_code) {
    case BUILTIN_USAGE:
        return core_fail(e, S210, "%.*s", len, msg);
    case BUILTIN_NOT_FOUND:
        return core_fail(e, S211, "%.*s", len, msg);
    case BUILTIN_PARENT_MISSING:
        core_fail(e, S211, "%.*s", len, msg);
        core_fix_bool(e, "parents", true);
        e->fix_note = "the parent directory does not exist: resend with parents: true to "
                      "create it";
        return -1;
    case BUILTIN_WRONG_TYPE:
        return core_fail(e, S212, "%.*s", len, msg);
    case BUILTIN_EXISTS:
        return core_fail(e, S213, "%.*s", len, msg);
    case BUILTIN_NOT_EMPTY:
        return core_fail(e, S214, "%.*s", len, msg);
    case BUILTIN_DENIED:
        return core_fail(e, S215, "%.*s", len, msg);
    case BUILTIN_BAD_REGEX:
        return core_fail(e, S217, "%.*s", len, msg);
    case BUILTIN_UNSUPPORTED:
        return core_fail(e, S219, "%.*s", len, msg);
    case BUILTIN_QUOTA:
        core_fail(e, S400, "%.*s", len, msg);
        e->http_status = 413;     /* the body is what is too large */
        e->fix_note = "free space in the workspace, or ask the operator for a larger "
                      "workspace_quota_bytes";
        return -1;
    case BUILTIN_IO:
        return core_fail(e, S216, "%.*s", len, msg);
    case BUILTIN_TIMED_OUT:
        return core_fail(e, S200, "%.*s", len, msg);
    default:
        /* Something in the sandbox stood in for the operation. */
        return core_fail(e, S216, "%s failed (status %d): %.*s", op, res->exit_code, len, msg);
    }
}

int core_fs(sandbox *s, const core_fs_req *r, int client_fd, cbuf *result, core_error *e)
{
    char **argv = fs_argv(r);
    core_exec_req xr = {
        .argv = argv,
        .builtin = true,
        .fs_call = true,
        .has_timeout = true,
        .timeout_ms = r->timeout_ms ? r->timeout_ms : CORE_FS_TIMEOUT_MS,
        .has_stdin = r->has_stdin,
        .stdin_data = r->stdin_data,
        .stdin_len = r->stdin_len,
    };
    core_exec_result res;
    int rc = core_exec_run(s, &xr, client_fd, &res, e);
    cella_free(argv);
    if (rc < 0)
        return -1;
    if (res.has_exit_code && res.exit_code == BUILTIN_OK && !res.timed_out) {
        if (res.stdout_truncated)
            rc = core_fail(e, S216, "%s: the result is larger than %u bytes; narrow the request",
                           r->op, CORE_FS_RESULT_MAX);
        else
            cbuf_append(result, cbuf_head(&res.out[1]), cbuf_avail(&res.out[1]));
    } else {
        rc = fs_failed(&res, &res.out[2], r->op, r->timeout_ms != 0, e);
    }
    core_exec_result_free(&res);
    return rc;
}

/* ---- transfers ------------------------------------------------------------- */

static int stream_start(sandbox *s, const core_fs_req *r, int client_fd, bool upload,
                        core_fs_stream **out, core_error *e)
{
    char **argv = fs_argv(r);
    core_exec_req xr = {
        .argv = argv,
        .builtin = true,
        .fs_call = true,
        .has_timeout = r->timeout_ms != 0,
        .timeout_ms = r->timeout_ms,
        .no_timeout = r->timeout_ms == 0,
        .stream = true,
        .window = !upload,
        .stdin_stream = upload,
    };
    core_fs_stream *st = cella_calloc(1, sizeof(*st));
    st->s = s;
    st->client_fd = client_fd;
    st->caller_deadline = r->timeout_ms != 0;
    cbuf_init(&st->pending);
    cbuf_init(&st->err);
    int rc = core_exec_start(s, &xr, &st->x, e);
    cella_free(argv);
    if (rc < 0) {
        cella_free(st);
        return -1;
    }
    st->touched_ns = clock_now_ns();
    *out = st;
    return 0;
}

static void touch(core_fs_stream *st)
{
    int64_t now = clock_now_ns();
    if (now - st->touched_ns >= CORE_FS_TOUCH_NS) {
        st->touched_ns = now;
        sandbox_touch(st->s);
    }
}

/* Moves queued output into pending (stdout) and err (stderr, kept short),
 * until pending holds at least `until` bytes. Taking acknowledges: a
 * download's window reopens as its bytes are taken, so taking more than the
 * client is about to read would let the agent refill the window while
 * pending grows. Downloads take one chunk at a time. */
static void take(core_fs_stream *st, size_t until)
{
    int stream;
    cbuf chunk;
    cbuf_init(&chunk);
    while (cbuf_avail(&st->pending) < until && core_exec_take(st->x, &stream, &chunk)) {
        if (stream == PROTO_STREAM_STDOUT)
            cbuf_append(&st->pending, cbuf_head(&chunk), cbuf_avail(&chunk));
        else if (cbuf_avail(&st->err) < 4096)
            cbuf_append(&st->err, cbuf_head(&chunk), cbuf_avail(&chunk));
        cbuf_reset(&chunk);
    }
    cbuf_free(&chunk);
}

/* The operation is over: 0 when it succeeded, else -1 and e. */
static int stream_result(core_fs_stream *st, const char *op, cbuf *result, core_error *e)
{
    core_exec_result res;
    if (core_exec_finish(st->x, &res, e) < 0)
        return -1;
    take(st, SIZE_MAX);
    int rc = 0;
    if (!res.has_exit_code || res.exit_code != BUILTIN_OK || res.timed_out)
        rc = fs_failed(&res, &st->err, op, st->caller_deadline, e);
    else if (result)
        cbuf_append(result, cbuf_head(&st->pending), cbuf_avail(&st->pending));
    core_exec_result_free(&res);
    return rc;
}

/* Waits for output or the end. 1: something to look at; -1: client gone. */
static int stream_wait(core_fs_stream *st)
{
    int f = core_exec_wait(st->x, st->client_fd, -1);
    if (f & MUX_DONE)
        st->done = true;
    if (f & MUX_CLIENT_GONE)
        return -1;
    return 1;
}

int core_fs_download(sandbox *s, const core_fs_req *r, int client_fd, core_fs_stream **out,
                     cbuf *header, core_error *e)
{
    core_fs_stream *st;
    if (stream_start(s, r, client_fd, false, &st, e) < 0)
        return -1;
    for (;;) {
        take(st, cbuf_avail(&st->pending) + 1);
        const uint8_t *nl = memchr(cbuf_head(&st->pending), '\n', cbuf_avail(&st->pending));
        if (nl) {
            size_t n = (size_t)(nl - cbuf_head(&st->pending));
            cbuf_append(header, cbuf_head(&st->pending), n);
            cbuf_consume(&st->pending, n + 1);
            *out = st;
            return 0;
        }
        if (cbuf_avail(&st->pending) > CORE_FS_HEADER_MAX) {
            core_fail(e, S216, "%s: the sandbox sent no header", r->op);
            break;
        }
        if (st->done) {
            if (stream_result(st, r->op, NULL, e) == 0)
                core_fail(e, S216, "%s: the sandbox sent no header", r->op);
            break;
        }
        if (stream_wait(st) < 0) {
            core_fail(e, S218, "transfer aborted: the client went away");
            break;
        }
    }
    core_fs_close(st);
    return -1;
}

ssize_t core_fs_read(core_fs_stream *st, void *buf, size_t max, core_error *e)
{
    for (;;) {
        if (cbuf_avail(&st->pending)) {
            size_t n = cbuf_avail(&st->pending) < max ? cbuf_avail(&st->pending) : max;
            memcpy(buf, cbuf_head(&st->pending), n);
            cbuf_consume(&st->pending, n);
            touch(st);
            return (ssize_t)n;
        }
        take(st, 1);
        if (cbuf_avail(&st->pending))
            continue;
        if (st->done)
            return stream_result(st, "download", NULL, e) < 0 ? -1 : 0;
        if (stream_wait(st) < 0)
            return core_fail(e, S218, "transfer aborted: the client went away");
    }
}

int core_fs_upload_begin(sandbox *s, const core_fs_req *r, int client_fd, core_fs_stream **out,
                         core_error *e)
{
    return stream_start(s, r, client_fd, true, out, e);
}

int core_fs_upload_feed(core_fs_stream *st, const void *p, size_t n)
{
    if (st->done)
        return -1;
    mux_exec *mx = core_exec_mux(st->x);
    int f = mux_exec_feed(mx, p, n, st->client_fd);
    touch(st);
    if (!f && !st->verdict_waited && mux_exec_stdin_closed(mx)) {
        /* The operation stopped reading its body before the end: it is
         * ending (refused: over the quota, say), and its exit follows at
         * once. It is waited for now, while the caller can still answer:
         * once the client has sent its last byte, no call would come back
         * to notice it, and the answer would wait for the connection's
         * idle timeout. */
        st->verdict_waited = true;
        int64_t end = clock_now_ns() + (int64_t)CORE_FS_VERDICT_MS * 1000000;
        while (!st->done && !(f & MUX_CLIENT_GONE)) {
            int64_t left = (end - clock_now_ns()) / 1000000;
            if (left <= 0)
                break;
            take(st, SIZE_MAX);   /* output taken, so the wait waits */
            f = core_exec_wait(st->x, st->client_fd, (int)left) & (MUX_DONE | MUX_CLIENT_GONE);
            if (f & MUX_DONE)
                st->done = true;
        }
    }
    if (f & MUX_DONE)
        st->done = true;
    return f ? -1 : 0;
}

int core_fs_upload_end(core_fs_stream *st, cbuf *result, core_error *e)
{
    mux_exec_feed_end(core_exec_mux(st->x));
    while (!st->done) {
        take(st, SIZE_MAX);
        if (stream_wait(st) < 0)
            return core_fail(e, S218, "transfer aborted: the client went away");
    }
    return stream_result(st, "upload", result, e);
}

void core_fs_close(core_fs_stream *st)
{
    if (!st)
        return;
    core_exec_end(st->x);
    cbuf_free(&st->pending);
    cbuf_free(&st->err);
    cella_free(st);
}
