/* cella-bench-load: many clients against one daemon for a bounded time.
 *
 * Each client thread holds one keep-alive connection and loops a cycle of
 * the native API: create a sandbox, four execs (one streamed as SSE), every
 * fourth cycle six execs at once on new connections (four may run), the
 * file operations (mkdir, write, read, ls, grep, stat, glob, and a read of a
 * missing file, which must answer its own error), a 64 KiB upload and its
 * download through /files/, then in turn clients that hang up part-way (an
 * exec; an upload cut short, whose file must never appear; a 4 MiB download
 * and an endless SSE stream read for a moment), the stop (every fourth with
 * an exec in flight on another connection, which must answer S004 or S002),
 * and a one-shot /v1/run. Defaults: 16 clients for 60 s in 3 rounds, after
 * a 5 s warm-up. It reports
 *
 *   - every call's latency (p50, p90, p99, max) and the throughput, against
 *     the bare fork+exec rate of /bin/true by the same threads, measured in
 *     the same invocation;
 *   - every error by its S-code. Only the limits' own are expected: S400
 *     (max_concurrent_sandboxes, 1.5 times the number of clients, so that the
 *     cap is met now and then) and S003; anything else, a wrong answer, a
 *     closed connection or a call without an answer for 120 s fails the run;
 *   - the daemon's descriptors, threads, RSS and PSS, its agents and the
 *     state directory's workspaces, once idle: before, after a warm-up, and
 *     after each of --rounds parts of the run (memory that keeps growing
 *     round after round is a leak; a step that stops is the allocator's
 *     arenas filling). Descriptors or threads that grew past --fd-slack fail
 *     the run; so does a daemon that is not idle again within 120 s, or that
 *     does not exit 0 on SIGTERM with nothing a sanitizer said in its log.
 *
 *   cella-bench-load [--cella PATH] [--clients N] [--seconds S] [--warmup S]
 *                    [--ref-seconds S] [--rounds N] [--cap N] [--fd-slack N]
 *                    [--hook CMD] [--write FILE]
 *
 * CTest runs it short (bench_load_smoke): it asserts on errors and growth,
 * never on speed. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_http.h"
#include "bench_util.h"

#define BEGIN_MARK "<!-- bench:load:begin -->"
#define END_MARK "<!-- bench:load:end -->"
#define BLOB_BYTES (64 * 1024)
#define IO_TIMEOUT_S 120
#define SETTLE_S 120

enum op {
    OP_CREATE, OP_EXEC, OP_SSE, OP_BURST, OP_WRITE, OP_READ, OP_LS, OP_GREP, OP_FS_OTHER, OP_MISSING,
    OP_PUT, OP_GET, OP_STOP, OP_RUN, OP_N
};
static const char *const op_name[OP_N] = {
    "`POST /v1/sandboxes`",
    "`POST .../exec`",
    "`POST .../exec`, SSE",
    "`POST .../exec` of `sleep 0.1`, 6 at once in one sandbox",
    "`POST .../fs/write`",
    "`POST .../fs/read`",
    "`POST .../fs/ls`",
    "`POST .../fs/grep`",
    "`POST .../fs/mkdir`, `stat`, `glob`",
    "`POST .../fs/read` or `stat`, missing file (404)",
    "`PUT .../files/...`, 64 KiB",
    "`GET .../files/...`, 64 KiB",
    "`DELETE /v1/sandboxes/{id}`",
    "`POST /v1/run`, shell",
};

/* The daemon, stopped by die() so that no failure leaves it running. */
static bench_daemon *the_daemon;

static void die(const char *what)
{
    perror(what);
    if (the_daemon)
        bench_daemon_stop(the_daemon);
    exit(1);
}

/* ---- errors, by kind ------------------------------------------------------------ */

typedef struct err_kind {
    char key[96];
    long n;
    bool expected;
} err_kind;

static pthread_mutex_t err_mu = PTHREAD_MUTEX_INITIALIZER;
static err_kind errs[64];
static int n_errs;

/* Counts one error under key; the first of each unexpected kind is shown
 * with what answered it. */
static void note_error(const char *key, bool expected, const char *detail)
{
    pthread_mutex_lock(&err_mu);
    int i = 0;
    while (i < n_errs && strcmp(errs[i].key, key))
        i++;
    if (i == n_errs && n_errs < (int)(sizeof(errs) / sizeof(errs[0]))) {
        snprintf(errs[i].key, sizeof(errs[i].key), "%s", key);
        errs[i].expected = expected;
        n_errs++;
        if (!expected)
            fprintf(stderr, "bench: unexpected: %s: %.400s\n", key, detail ? detail : "");
    }
    if (i < n_errs)
        errs[i].n++;
    pthread_mutex_unlock(&err_mu);
}

/* ---- a connection -------------------------------------------------------------- */

typedef struct conn {
    int fd;
    char *buf;
    size_t len, cap;
} conn;

typedef struct resp {
    int status;
    char *body; /* malloc'd, NUL-terminated */
    size_t len;
    bool close;
} resp;

static bool conn_open(conn *c)
{
    c->len = 0;
    c->fd = http_try_connect();
    if (c->fd < 0)
        return false;
    struct timeval tv = {.tv_sec = IO_TIMEOUT_S};
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    return true;
}

static void conn_close(conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->len = 0;
}

static bool send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* Reads more of the answer into c->buf; false at end of stream or error. */
static bool fill(conn *c)
{
    if (c->cap - c->len < 4096) {
        size_t cap = c->cap ? c->cap * 2 : 1 << 16;
        char *b = realloc(c->buf, cap + 1);
        if (!b)
            die("realloc");
        c->buf = b;
        c->cap = cap;
    }
    for (;;) {
        ssize_t r = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        c->len += (size_t)r;
        c->buf[c->len] = '\0';
        return true;
    }
}

/* The offset just past the first CRLF at or after from, filling as
 * needed; 0 when the stream ends first. */
static size_t line_end(conn *c, size_t from)
{
    for (;;) {
        for (size_t i = from; i + 1 < c->len; i++)
            if (c->buf[i] == '\r' && c->buf[i + 1] == '\n')
                return i + 2;
        if (!fill(c))
            return 0;
    }
}

static bool head_has(const char *head, const char *name, const char *value)
{
    const char *h = strcasestr(head, name);
    if (!h)
        return false;
    const char *eol = strstr(h + strlen(name), "\r\n");
    const char *v = strcasestr(h + strlen(name), value);
    return v && (!eol || v < eol);
}

/* Sends one request; false (with *why) when the connection failed. */
static bool send_req(conn *c, const char *method, const char *path, const char *extra_head,
                     const void *body, size_t blen, const char **why)
{
    char head[1024];
    int n = snprintf(head, sizeof(head),
                     "%s %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: %s\r\n"
                     "Content-Length: %zu\r\n%s\r\n",
                     method, path, !strcmp(method, "PUT") ? "application/octet-stream" :
                                                             "application/json",
                     blen, extra_head ? extra_head : "");
    if (n < 0 || (size_t)n >= sizeof(head)) {
        fprintf(stderr, "bench: request head too long: %s\n", path);
        exit(1);
    }
    char *req = malloc((size_t)n + blen);
    if (!req)
        die("malloc");
    memcpy(req, head, (size_t)n);
    if (blen)
        memcpy(req + n, body, blen);
    bool sent = send_all(c->fd, req, (size_t)n + blen);
    free(req);
    if (!sent)
        *why = errno == EAGAIN ? "send timed out" : "send failed";
    return sent;
}

/* Reads one answer (Content-Length, chunked, or to the end of the stream).
 * false when the connection failed; *why says how. */
static bool read_resp(conn *c, resp *r, const char **why)
{
    *r = (resp){0};
    char *end;
    while (!(end = c->len ? memmem(c->buf, c->len, "\r\n\r\n", 4) : NULL))
        if (!fill(c))
            goto broken;
    size_t hl = (size_t)(end + 4 - c->buf);
    char *h = strndup(c->buf, hl);
    if (!h)
        die("strndup");
    r->status = atoi(h + 9);
    r->close = head_has(h, "\r\nConnection:", "close");
    bool chunked = head_has(h, "\r\nTransfer-Encoding:", "chunked");
    char *cl = strcasestr(h, "\r\nContent-Length:");
    long long clen = cl ? atoll(cl + 17) : -1;
    free(h);
    size_t cap = 4096, len = 0, pos = hl;
    char *out = malloc(cap);
    if (!out)
        die("malloc");
    if (chunked) {
        for (;;) {
            size_t le = line_end(c, pos);
            if (!le)
                goto broken_out;
            size_t sz = strtoul(c->buf + pos, NULL, 16);
            pos = le;
            if (sz == 0) {
                for (;;) { /* trailers, then the empty line */
                    le = line_end(c, pos);
                    if (!le)
                        goto broken_out;
                    bool empty = le == pos + 2;
                    pos = le;
                    if (empty)
                        break;
                }
                break;
            }
            while (c->len < pos + sz + 2)
                if (!fill(c))
                    goto broken_out;
            if (len + sz + 1 > cap) {
                while (len + sz + 1 > cap)
                    cap *= 2;
                out = realloc(out, cap);
                if (!out)
                    die("realloc");
            }
            memcpy(out + len, c->buf + pos, sz);
            len += sz;
            pos += sz + 2;
        }
    } else {
        if (clen < 0) { /* to the end of the stream */
            r->close = true;
            while (fill(c))
                ;
        } else {
            while (c->len < pos + (size_t)clen)
                if (!fill(c))
                    goto broken_out;
        }
        len = clen < 0 ? c->len - pos : (size_t)clen;
        if (len + 1 > cap) {
            cap = len + 1;
            out = realloc(out, cap);
            if (!out)
                die("realloc");
        }
        memcpy(out, c->buf + pos, len);
        pos += len;
    }
    out[len] = '\0';
    r->body = out;
    r->len = len;
    memmove(c->buf, c->buf + pos, c->len - pos);
    c->len -= pos;
    return true;
broken_out:
    free(out);
broken:
    *why = errno == EAGAIN || errno == EWOULDBLOCK ? "no answer within 120 s"
                                                   : "connection closed mid-answer";
    return false;
}

/* One request and its answer. */
static bool call(conn *c, const char *method, const char *path, const char *extra_head,
                 const void *body, size_t blen, resp *r, const char **why)
{
    *r = (resp){0};
    return send_req(c, method, path, extra_head, body, blen, why) && read_resp(c, r, why);
}

/* ---- a client -------------------------------------------------------------------- */

typedef struct samples {
    double *v;
    size_t n, cap;
} samples;

static void add_sample(samples *s, double ms)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 1024;
        s->v = realloc(s->v, s->cap * sizeof(double));
        if (!s->v)
            die("realloc");
    }
    s->v[s->n++] = ms;
}

typedef struct client {
    int id;
    double until;
    bool record;
    conn c;
    samples s[OP_N];
    long cycles, calls, execs;
    unsigned seed;
    unsigned char *blob;
} client;

/* Counts an answer that was not the one wanted, by its S-code. */
static void note_status(enum op op, const resp *r)
{
    char code[16], key[96];
    json_field(r->body, "code", code, sizeof(code));
    snprintf(key, sizeof(key), "%s on %s (HTTP %d)", code[0] ? code : "no S-code", op_name[op],
             r->status);
    note_error(key, !strcmp(code, "S400") || !strcmp(code, "S003"), r->body);
}

/* One call, timed. true when it answered want; otherwise the error is
 * counted (by S-code when the answer has one) and r->status is what
 * answered (0 when the connection failed, which is then reopened). */
static bool timed(client *cl, enum op op, const char *method, const char *path,
                  const char *extra_head, const void *body, size_t blen, int want, resp *r)
{
    const char *why = "";
    char key[96];
    if (cl->c.fd < 0 && !conn_open(&cl->c)) {
        snprintf(key, sizeof(key), "connect failed (%s)", strerror(errno));
        note_error(key, false, NULL);
        *r = (resp){0};
        usleep(100000);
        return false;
    }
    double t0 = now_ms();
    bool ok = call(&cl->c, method, path, extra_head, body, blen, r, &why);
    double ms = now_ms() - t0;
    if (!ok) {
        snprintf(key, sizeof(key), "%s: %s", op_name[op], why);
        note_error(key, false, path);
        conn_close(&cl->c);
        *r = (resp){0};
        return false;
    }
    cl->calls++;
    if (r->close)
        conn_close(&cl->c);
    if (r->status == want) {
        if (cl->record)
            add_sample(&cl->s[op], ms);
        return true;
    }
    note_status(op, r);
    return false;
}

/* An answer that came with the right status but the wrong content. */
static bool check(bool ok, enum op op, const resp *r, const char *what)
{
    if (!ok) {
        char key[96];
        snprintf(key, sizeof(key), "wrong answer from %s: %s", op_name[op], what);
        note_error(key, false, r->body);
    }
    return ok;
}

static void done(resp *r)
{
    free(r->body);
    r->body = NULL;
}

/* POST a JSON body. */
static bool post(client *cl, enum op op, const char *path, const char *json, int want, resp *r)
{
    return timed(cl, op, "POST", path, NULL, json, strlen(json), want, r);
}

#define BURST 6

/* BURST execs at once in one sandbox, each on a new connection: four run
 * (max_execs_per_sandbox), the others may be S003, the limit's own. */
static void burst(client *cl, const char *path)
{
    const char *b = "{\"argv\":[\"/bin/sleep\",\"0.1\"]}", *why = "";
    conn c[BURST];
    double t0[BURST];
    char key[96];
    for (int i = 0; i < BURST; i++) {
        c[i] = (conn){.fd = -1};
        if (!conn_open(&c[i])) {
            snprintf(key, sizeof(key), "connect failed (%s)", strerror(errno));
            note_error(key, false, NULL);
            continue;
        }
        t0[i] = now_ms();
        if (!send_req(&c[i], "POST", path, NULL, b, strlen(b), &why)) {
            snprintf(key, sizeof(key), "%s: %s", op_name[OP_BURST], why);
            note_error(key, false, path);
            conn_close(&c[i]);
        }
    }
    int ran = 0;
    for (int i = 0; i < BURST; i++) {
        resp r = {0};
        if (c[i].fd >= 0 && !read_resp(&c[i], &r, &why)) {
            snprintf(key, sizeof(key), "%s: %s", op_name[OP_BURST], why);
            note_error(key, false, path);
        } else if (c[i].fd >= 0) {
            cl->calls++;
            if (r.status == 200 && strstr(r.body, "\"exit_code\":0")) {
                ran++;
                if (cl->record)
                    add_sample(&cl->s[OP_BURST], now_ms() - t0[i]);
            } else {
                note_status(OP_BURST, &r);
            }
        }
        free(r.body);
        conn_close(&c[i]);
        free(c[i].buf);
    }
    if (ran < 4)
        note_error("fewer than 4 of 6 execs at once ran", false, path);
    cl->execs += ran;
}

/* An exec whose client hangs up before the answer: the daemon must kill the
 * command and let go of everything the call held. */
static void abandon_exec(const char *path)
{
    int fd = http_try_connect();
    if (fd < 0) {
        note_error("connect failed (abandoned exec)", false, NULL);
        return;
    }
    const char *b = "{\"argv\":[\"/bin/sleep\",\"30\"]}";
    char req[512];
    int n = snprintf(req, sizeof(req),
                     "POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\n\r\n%s",
                     path, strlen(b), b);
    if (!send_all(fd, req, (size_t)n))
        note_error("send failed (abandoned exec)", false, NULL);
    usleep(20000);
    close(fd);
}

/* Sends a request on a new connection, reads until want_bytes of the
 * answer came (0: reads nothing), and hangs up. */
static void hang_up(const char *what, const char *method, const char *path,
                    const char *extra_head, const void *body, size_t blen, size_t declared,
                    size_t want_bytes)
{
    conn c = {.fd = -1};
    char key[96], head[512];
    if (!conn_open(&c)) {
        snprintf(key, sizeof(key), "connect failed (%s)", what);
        note_error(key, false, strerror(errno));
        return;
    }
    snprintf(head, sizeof(head), "%sContent-Length: %zu\r\n", extra_head ? extra_head : "",
             declared);
    /* Built here rather than by send_req: the length declared may be more
     * than what is sent. */
    char req[1024];
    int n = snprintf(req, sizeof(req),
                     "%s %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: %s\r\n%s\r\n",
                     method, path, !strcmp(method, "PUT") ? "application/octet-stream" :
                                                             "application/json", head);
    bool sent = send_all(c.fd, req, (size_t)n) && (!blen || send_all(c.fd, body, blen));
    if (!sent) {
        snprintf(key, sizeof(key), "%s: send failed", what);
        note_error(key, false, path);
    }
    while (sent && c.len < want_bytes && fill(&c))
        ;
    if (sent && c.len < want_bytes) {
        snprintf(key, sizeof(key), "%s: closed or silent before %zu bytes", what, want_bytes);
        note_error(key, false, path);
    }
    if (!want_bytes)
        usleep(20000);
    conn_close(&c);
    free(c.buf);
}

/* Clients that go away part-way: an upload that declares 1 MiB and sends
 * 64 KiB, a 4 MiB download read for its first 64 KiB, an SSE exec of an
 * endless producer read for its first events. Each must leave nothing
 * behind in the daemon or the sandbox (checked by the growth figures, and
 * the upload by its file never appearing). */
static void hang_ups(client *cl, const char *id, const char *exec)
{
    char path[200];
    resp r;
    snprintf(path, sizeof(path), "/v1/sandboxes/%s/files/workspace/partial", id);
    hang_up("upload cut short", "PUT", path, NULL, cl->blob, BLOB_BYTES, 1 << 20, 0);
    if (post(cl, OP_EXEC, exec, "{\"argv\":[\"/bin/sh\",\"-c\",\"head -c 4194304 /dev/zero "
             "> /workspace/big\"]}", 200, &r) && check(strstr(r.body, "\"exit_code\":0"),
                                                     OP_EXEC, &r, "exit_code 0")) {
        cl->execs++;
        snprintf(path, sizeof(path), "/v1/sandboxes/%s/files/workspace/big", id);
        hang_up("download cut short", "GET", path, NULL, NULL, 0, 0, BLOB_BYTES);
    }
    done(&r);
    const char *sse = "{\"argv\":[\"/bin/sh\",\"-c\",\"while :; do echo tick; sleep 0.01; "
                      "done\"]}";
    hang_up("SSE stream cut short", "POST", exec, "Accept: text/event-stream\r\n", sse,
            strlen(sse), strlen(sse), 512);
    snprintf(path, sizeof(path), "/v1/sandboxes/%s/fs/stat", id);
    if (post(cl, OP_MISSING, path, "{\"path\":\"/workspace/partial\"}", 404, &r))
        check(strstr(r.body, "\"code\":\"S2"), OP_MISSING, &r, "an S2xx code");
    done(&r);
}

static void one_cycle(client *cl)
{
    char path[256], body[1024], id[64], want[256];
    resp r = {0};
    bool ok;
    long k = cl->cycles;
    const char *create = k % 4 == 3 ? "{\"image\":\"python\",\"cpus\":0.5,\"memory_mb\":256}"
                                    : "{\"image\":\"shell\"}";
    if (!post(cl, OP_CREATE, "/v1/sandboxes", create, 201, &r)) {
        done(&r);
        /* Refused by the cap (or failed): back off a little, with jitter. */
        usleep(10000 + (useconds_t)(rand_r(&cl->seed) % 20000));
        return;
    }
    json_field(r.body, "sandbox_id", id, sizeof(id));
    ok = check(id[0] != '\0', OP_CREATE, &r, "no sandbox_id");
    done(&r);
    if (!ok)
        return;

    char exec[160], fs[200];
    snprintf(exec, sizeof(exec), "/v1/sandboxes/%s/exec", id);
    /* Execs: an argv, a shell command line with both streams and a status,
     * stdin, and the same over SSE. */
    snprintf(body, sizeof(body), "{\"argv\":[\"/bin/echo\",\"load\",\"%d\",\"%ld\"]}", cl->id, k);
    snprintf(want, sizeof(want), "\"stdout\":\"load %d %ld\\n\"", cl->id, k);
    if (!post(cl, OP_EXEC, exec, body, 200, &r) || !check(strstr(r.body, want), OP_EXEC, &r, "stdout"))
        goto stop;
    done(&r);
    cl->execs++;
    if (!post(cl, OP_EXEC, exec, "{\"cmd\":\"sh -c 'echo out; echo err >&2; exit 3'\"}", 200, &r) ||
        !check(strstr(r.body, "\"exit_code\":3") && strstr(r.body, "\"stderr\":\"err\\n\""),
               OP_EXEC, &r, "exit_code 3, stderr"))
        goto stop;
    done(&r);
    cl->execs++;
    /* "hello load\n" */
    if (!post(cl, OP_EXEC, exec, "{\"argv\":[\"/bin/cat\"],\"stdin\":\"aGVsbG8gbG9hZAo=\"}", 200,
              &r) ||
        !check(strstr(r.body, "\"stdout\":\"hello load\\n\""), OP_EXEC, &r, "stdin echoed"))
        goto stop;
    done(&r);
    cl->execs++;
    const char *sse = "{\"argv\":[\"/bin/sh\",\"-c\",\"echo a; echo b >&2\"]}";
    if (!timed(cl, OP_SSE, "POST", exec, "Accept: text/event-stream\r\n", sse, strlen(sse), 200,
               &r) ||
        !check(strstr(r.body, "event: stdout") && strstr(r.body, "event: exit") &&
                   strstr(r.body, "\"exit_code\":0"),
               OP_SSE, &r, "stdout and exit events"))
        goto stop;
    done(&r);
    cl->execs++;

    if (k % 4 == 2)
        burst(cl, exec);

    /* The file operations. */
#define FS(op) snprintf(fs, sizeof(fs), "/v1/sandboxes/%s/fs/%s", id, op)
    FS("mkdir");
    if (!post(cl, OP_FS_OTHER, fs, "{\"path\":\"/workspace/d/e\",\"parents\":true}", 200, &r))
        goto stop;
    done(&r);
    FS("write");
    snprintf(body, sizeof(body),
             "{\"path\":\"/workspace/d/a.txt\",\"content\":\"alpha\\nneedle 7 %d %ld\\nomega\\n\"}",
             cl->id, k);
    if (!post(cl, OP_WRITE, fs, body, 200, &r))
        goto stop;
    done(&r);
    FS("read");
    snprintf(want, sizeof(want), "needle 7 %d %ld", cl->id, k);
    if (!post(cl, OP_READ, fs, "{\"path\":\"/workspace/d/a.txt\"}", 200, &r) ||
        !check(strstr(r.body, want), OP_READ, &r, "the written text"))
        goto stop;
    done(&r);
    if (!post(cl, OP_MISSING, fs, "{\"path\":\"/workspace/d/missing\"}", 404, &r) ||
        !check(strstr(r.body, "\"code\":\"S2"), OP_MISSING, &r, "an S2xx code"))
        goto stop;
    done(&r);
    FS("ls");
    if (!post(cl, OP_LS, fs, "{\"path\":\"/workspace/d\"}", 200, &r) ||
        !check(strstr(r.body, "\"name\":\"a.txt\"") && strstr(r.body, "\"name\":\"e\""), OP_LS,
               &r, "a.txt and e"))
        goto stop;
    done(&r);
    FS("grep");
    if (!post(cl, OP_GREP, fs, "{\"path\":\"/workspace/d\",\"pattern\":\"needle [0-9]\"}", 200,
              &r) ||
        !check(strstr(r.body, want) && strstr(r.body, "\"line\":2"), OP_GREP, &r, "one match"))
        goto stop;
    done(&r);
    FS("stat");
    if (!post(cl, OP_FS_OTHER, fs, "{\"path\":\"/workspace/d/a.txt\"}", 200, &r))
        goto stop;
    done(&r);
    FS("glob");
    if (!post(cl, OP_FS_OTHER, fs, "{\"path\":\"/workspace\",\"pattern\":\"**/*.txt\"}", 200,
              &r) ||
        !check(strstr(r.body, "d/a.txt"), OP_FS_OTHER, &r, "d/a.txt"))
        goto stop;
    done(&r);
#undef FS

    /* Raw bytes up and down, stamped with the cycle so a stale file shows. */
    snprintf(fs, sizeof(fs), "/v1/sandboxes/%s/files/workspace/d/blob", id);
    memcpy(cl->blob, &k, sizeof(k));
    if (!timed(cl, OP_PUT, "PUT", fs, NULL, cl->blob, BLOB_BYTES, 200, &r))
        goto stop;
    done(&r);
    if (!timed(cl, OP_GET, "GET", fs, NULL, NULL, 0, 200, &r) ||
        !check(r.len == BLOB_BYTES && !memcmp(r.body, cl->blob, BLOB_BYTES), OP_GET, &r,
               "the uploaded bytes"))
        goto stop;
    done(&r);

    if (k % 4 == 1)
        abandon_exec(exec);
    if (k % 4 == 0)
        hang_ups(cl, id, exec);
stop:
    done(&r);
    snprintf(path, sizeof(path), "/v1/sandboxes/%s", id);
    if (k % 4 == 0) {
        /* A stop with an exec in flight on another connection: the exec
         * answers S004 (or S002, when the stop came first). */
        conn e = {.fd = -1};
        const char *why = "", *b = "{\"argv\":[\"/bin/sleep\",\"5\"]}";
        bool sent = conn_open(&e) && send_req(&e, "POST", exec, NULL, b, strlen(b), &why);
        if (!sent)
            note_error("exec before a stop: connect or send failed", false, exec);
        usleep(30000);
        timed(cl, OP_STOP, "DELETE", path, NULL, NULL, 0, 200, &r);
        done(&r);
        if (sent && !read_resp(&e, &r, &why)) {
            snprintf(want, sizeof(want), "exec in flight at a stop: %s", why);
            note_error(want, false, exec);
        } else if (sent) {
            check(r.status != 200 && (strstr(r.body, "\"code\":\"S004\"") ||
                                      strstr(r.body, "\"code\":\"S002\"")),
                  OP_STOP, &r, "the exec in flight answers S004 or S002");
        }
        conn_close(&e);
        free(e.buf);
    } else {
        timed(cl, OP_STOP, "DELETE", path, NULL, NULL, 0, 200, &r);
    }
    done(&r);
    snprintf(body, sizeof(body),
             "{\"image\":\"shell\",\"lang\":\"shell\",\"code\":\"echo run %d %ld\"}", cl->id, k);
    snprintf(want, sizeof(want), "\"stdout\":\"run %d %ld\\n\"", cl->id, k);
    if (post(cl, OP_RUN, "/v1/run", body, 200, &r))
        check(strstr(r.body, want), OP_RUN, &r, "stdout");
    done(&r);
    cl->cycles++;
}

static void *client_main(void *arg)
{
    client *cl = arg;
    while (now_ms() < cl->until)
        one_cycle(cl);
    conn_close(&cl->c);
    return NULL;
}

/* ---- the reference: fork+exec by the same threads ------------------------------ */

typedef struct bare_thread {
    double until;
    long runs;
    samples ms;
} bare_thread;

static void *bare_main(void *arg)
{
    bare_thread *b = arg;
    char *argv[] = {"/bin/true", NULL};
    while (now_ms() < b->until) {
        long rss;
        double ms = run_once(argv, &rss);
        if (ms < 0)
            die("bench: /bin/true");
        add_sample(&b->ms, ms);
        b->runs++;
    }
    return NULL;
}

/* fork+exec of /bin/true by n threads for secs: the rate, and each run's
 * time into all. */
static double bare_rate(int n, double secs, samples *all)
{
    bare_thread *b = calloc((size_t)n, sizeof(bare_thread));
    pthread_t *th = calloc((size_t)n, sizeof(pthread_t));
    if (!b || !th)
        die("calloc");
    double t0 = now_ms();
    for (int i = 0; i < n; i++) {
        b[i].until = t0 + secs * 1000;
        pthread_create(&th[i], NULL, bare_main, &b[i]);
    }
    long total = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
        total += b[i].runs;
        for (size_t j = 0; j < b[i].ms.n; j++)
            add_sample(all, b[i].ms.v[j]);
        free(b[i].ms.v);
    }
    double rate = (double)total / ((now_ms() - t0) / 1000);
    free(b);
    free(th);
    return rate;
}

/* ---- the daemon's resources ------------------------------------------------------- */

typedef struct snap {
    int fds, threads, agents, workspaces;
    long rss_kb, pss_kb;
} snap;

static int count_dir(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}


/* `cella code-worker`: a child of the daemon that is not an agent. */
static bool is_code_worker(const char *pid)
{
    char path[300], cmd[64];
    snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t got = fread(cmd, 1, sizeof(cmd) - 1, f);
    fclose(f);
    cmd[got] = '\0';
    size_t first = strlen(cmd);
    return first + 1 < got && !strcmp(cmd + first + 1, "code-worker");
}

/* Processes whose parent is pid: the sandboxes' agents (code mode's
 * workers, also its children, are not counted). */
static int children_of(pid_t pid)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    char path[300], buf[512];
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t got = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[got] = '\0';
        char *p = strrchr(buf, ')');
        int ppid;
        if (p && sscanf(p + 1, " %*c %d", &ppid) == 1 && ppid == pid &&
            !is_code_worker(e->d_name))
            n++;
    }
    closedir(d);
    return n;
}

static void take(snap *s, const bench_daemon *d)
{
    char path[160];
    snprintf(path, sizeof(path), "/proc/%d/fd", (int)d->pid);
    s->fds = count_dir(path);
    snprintf(path, sizeof(path), "/proc/%d/status", (int)d->pid);
    s->threads = (int)proc_field_kb(path, "Threads:");
    s->rss_kb = proc_field_kb(path, "VmRSS:");
    snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)d->pid);
    s->pss_kb = proc_field_kb(path, "Pss:");
    s->agents = children_of(d->pid);
    snprintf(path, sizeof(path), "%s/workspaces", d->state);
    s->workspaces = count_dir(path);
}

static long metric(const char *text, const char *name)
{
    const char *p = text;
    size_t nl = strlen(name);
    while ((p = strstr(p, name))) {
        if ((p == text || p[-1] == '\n') && p[nl] == ' ')
            return atol(p + nl + 1);
        p += nl;
    }
    return -1;
}

/* Waits until the daemon is idle: no sandboxes, the pool full, an agent and a
 * workspace for each pooled sandbox only, and descriptors and threads
 * unchanged for 1 s. false when that does not come within SETTLE_S. */
static bool settle(const bench_daemon *d, conn *mon, snap *s)
{
    double t0 = now_ms();
    snap prev = {0};
    int steady = 0;
    while (now_ms() - t0 < SETTLE_S * 1000.0) {
        const char *why;
        resp r;
        /* The connection is idle during the run, and the daemon closes
         * connections idle for 60 s: one retry on a new connection. */
        bool got = false;
        for (int try = 0; try < 2 && !got; try++) {
            if (mon->fd < 0 && !conn_open(mon))
                die("bench: connect for /metrics");
            got = call(mon, "GET", "/metrics", NULL, NULL, 0, &r, &why);
            if (!got)
                conn_close(mon);
        }
        if (!got) {
            fprintf(stderr, "bench: /metrics: %s\n", why);
            die("bench: /metrics");
        }
        long running = metric(r.body, "cella_sandboxes{state=\"running\"}");
        long dead = metric(r.body, "cella_sandboxes{state=\"dead\"}");
        long depth = metric(r.body, "cella_pool_depth"), target = metric(r.body, "cella_pool_target");
        free(r.body);
        take(s, d);
        bool idle = running == 0 && dead == 0 && depth == target && s->agents == target &&
                    s->workspaces == target;
        steady = idle && s->fds == prev.fds && s->threads == prev.threads ? steady + 1 : 0;
        prev = *s;
        if (steady >= 10)
            return true;
        usleep(100000);
    }
    return false;
}

/* ---- a run of the load ------------------------------------------------------------ */

typedef struct totals {
    double secs;
    long cycles, calls, execs;
    samples s[OP_N];
} totals;

/* n clients for secs; what they did is added to t. */
static void load(int n, double secs, bool record, unsigned char *blobs, totals *t)
{
    client *cl = calloc((size_t)n, sizeof(client));
    pthread_t *th = calloc((size_t)n, sizeof(pthread_t));
    if (!cl || !th)
        die("calloc");
    double t0 = now_ms();
    for (int i = 0; i < n; i++) {
        cl[i] = (client){.id = i, .until = t0 + secs * 1000, .record = record, .c = {.fd = -1},
                         .seed = (unsigned)i * 7919u + 1, .blob = blobs + (size_t)i * BLOB_BYTES};
        pthread_create(&th[i], NULL, client_main, &cl[i]);
    }
    for (int i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
        t->cycles += cl[i].cycles;
        t->calls += cl[i].calls;
        t->execs += cl[i].execs;
        for (int o = 0; o < OP_N; o++) {
            for (size_t j = 0; j < cl[i].s[o].n; j++)
                add_sample(&t->s[o], cl[i].s[o].v[j]);
            free(cl[i].s[o].v);
        }
        free(cl[i].c.buf);
    }
    t->secs += (now_ms() - t0) / 1000;
    free(cl);
    free(th);
}

/* SIGTERM; true when the daemon exited 0 and its log holds nothing a
 * sanitizer said. The throwaway directory is removed either way. */
static bool stop_daemon(bench_daemon *d)
{
    char log[160], line[1024];
    snprintf(log, sizeof(log), "%s/serve.log", d->dir);
    kill(d->pid, SIGTERM);
    int status = 0;
    while (waitpid(d->pid, &status, 0) < 0 && errno == EINTR)
        ;
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok)
        fprintf(stderr, "bench: cella serve ended with status 0x%x\n", status);
    FILE *f = fopen(log, "r");
    while (f && fgets(line, sizeof(line), f))
        if (strstr(line, "Sanitizer") || strstr(line, "runtime error:") ||
            strstr(line, "level=error")) {
            fprintf(stderr, "bench: serve.log: %s", line);
            if (!strstr(line, "level=error"))
                ok = false;
        }
    if (f)
        fclose(f);
    char rm[160];
    snprintf(rm, sizeof(rm), "rm -rf %s", d->dir);
    if (system(rm) != 0)
        fprintf(stderr, "bench: could not remove %s\n", d->dir);
    return ok;
}

/* --hook CMD: run by sh on the idle daemon after each round, with
 * CELLA_DAEMON_PID, CELLA_DAEMON_DIR (its serve.log is there) and
 * CELLA_ROUND set, e.g. to have gdb dump its heap's statistics. */
static void run_hook(const char *cmd, const bench_daemon *d, int round)
{
    char v[32];
    snprintf(v, sizeof(v), "%d", (int)d->pid);
    setenv("CELLA_DAEMON_PID", v, 1);
    setenv("CELLA_DAEMON_DIR", d->dir, 1);
    snprintf(v, sizeof(v), "%d", round);
    setenv("CELLA_ROUND", v, 1);
    if (system(cmd) != 0)
        fprintf(stderr, "bench: the hook failed: %s\n", cmd);
}

/* ---- the report --------------------------------------------------------------------- */

static size_t add(char *b, size_t off, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static size_t add(char *b, size_t off, size_t cap, const char *fmt, ...)
{
    if (off >= cap)
        return off;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(b + off, cap - off, fmt, ap);
    va_end(ap);
    return w < 0 ? off : off + (size_t)w < cap ? off + (size_t)w : cap - 1;
}

#define MAX_ROUNDS 10

/* One resource across the snapshots: before, after the warm-up, after each
 * round; then the growth over the rounds (last minus after the warm-up). */
static size_t snap_row(char *b, size_t off, size_t cap, const char *what, const long *v, int n,
                       const char *unit)
{
    off = add(b, off, cap, "| %s |", what);
    for (int i = 0; i < n; i++)
        off = add(b, off, cap, " %ld%s |", v[i], unit);
    return add(b, off, cap, " %+ld%s |\n", v[n - 1] - v[1], unit);
}

int main(int argc, char **argv)
{
    const char *cella = "./build/cella", *out = NULL, *hook = NULL;
    int clients = 16, cap = 0, fd_slack = 4, rounds = 3;
    double secs = 60, warmup = 5, ref_secs = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cella") && i + 1 < argc)
            cella = argv[++i];
        else if (!strcmp(argv[i], "--clients") && i + 1 < argc)
            clients = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            secs = atof(argv[++i]);
        else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
            warmup = atof(argv[++i]);
        else if (!strcmp(argv[i], "--ref-seconds") && i + 1 < argc)
            ref_secs = atof(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cap") && i + 1 < argc)
            cap = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--fd-slack") && i + 1 < argc)
            fd_slack = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--write") && i + 1 < argc)
            out = argv[++i];
        else if (!strcmp(argv[i], "--hook") && i + 1 < argc)
            hook = argv[++i];
        else {
            fprintf(stderr,
                    "usage: %s [--cella PATH] [--clients N] [--seconds S] [--warmup S] "
                    "[--ref-seconds S] [--rounds N] [--cap N] [--fd-slack N] [--hook CMD] "
                    "[--write FILE]\n",
                    argv[0]);
            return 2;
        }
    }
    if (clients < 1)
        clients = 1;
    if (cap < 1)
        cap = clients + clients / 2;
    if (secs < 1)
        secs = 1;
    if (rounds < 1 || rounds > MAX_ROUNDS)
        rounds = rounds < 1 ? 1 : MAX_ROUNDS;
    signal(SIGPIPE, SIG_IGN);

    unsigned char *blobs = malloc((size_t)clients * BLOB_BYTES);
    if (!blobs)
        die("malloc");
    unsigned seed = 12345;
    for (size_t i = 0; i < (size_t)clients * BLOB_BYTES; i++)
        blobs[i] = (unsigned char)rand_r(&seed);

    char cfg[256];
    snprintf(cfg, sizeof(cfg), "max_concurrent_sandboxes: %d\npool_size: 4\n", cap);
    bench_daemon d;
    bench_daemon_start(&d, "load", cella, cfg);
    the_daemon = &d;
    conn mon = {.fd = -1};
    snap sn[2 + MAX_ROUNDS];
    bool idle = settle(&d, &mon, &sn[0]);
    fprintf(stderr, "bench: before: %d fds, %d threads, %ld KiB RSS\n", sn[0].fds,
            sn[0].threads, sn[0].rss_kb);

    fprintf(stderr, "bench: fork+exec of /bin/true by %d threads for %.0f s\n", clients, ref_secs);
    samples bare_ms = {0};
    double bare = ref_secs > 0 ? bare_rate(clients, ref_secs, &bare_ms) : 0;

    totals t = {0};
    fprintf(stderr, "bench: warm-up, %d clients for %.0f s\n", clients, warmup);
    if (warmup > 0)
        load(clients, warmup, false, blobs, &t);
    t = (totals){0};
    idle = settle(&d, &mon, &sn[1]) && idle;
    fprintf(stderr, "bench: after the warm-up: %d fds, %d threads, %ld KiB RSS\n", sn[1].fds,
            sn[1].threads, sn[1].rss_kb);
    for (int r = 0; r < rounds; r++) {
        fprintf(stderr, "bench: round %d of %d, %d clients for %.0f s\n", r + 1, rounds, clients,
                secs / rounds);
        load(clients, secs / rounds, true, blobs, &t);
        idle = settle(&d, &mon, &sn[2 + r]) && idle;
        fprintf(stderr, "bench: after round %d: %d fds, %d threads, %ld KiB RSS\n", r + 1,
                sn[2 + r].fds, sn[2 + r].threads, sn[2 + r].rss_kb);
        if (hook)
            run_hook(hook, &d, r + 1);
    }
    conn_close(&mon);
    free(mon.buf);
    the_daemon = NULL;
    bool clean = stop_daemon(&d);

    /* The verdict. */
    long unexpected = 0, expected = 0;
    for (int i = 0; i < n_errs; i++)
        *(errs[i].expected ? &expected : &unexpected) += errs[i].n;
    const snap *warm = &sn[1], *last = &sn[1 + rounds];
    bool fds_ok = last->fds - warm->fds <= fd_slack && last->threads - warm->threads <= fd_slack;
    bool ok = unexpected == 0 && fds_ok && idle && clean && t.cycles > 0;

    char block[16384];
    struct utsname u;
    uname(&u);
    time_t now = time(NULL);
    char date[32];
    strftime(date, sizeof(date), "%Y-%m-%d", gmtime(&now));
    size_t off = add(block, 0, sizeof(block),
                     "Measured %s on Linux %s, %ld CPUs: %d clients for %.0f s after a %.0f s "
                     "warm-up, `max_concurrent_sandboxes: %d`, a pool of 4 (`make bench`).\n\n",
                     date, u.release, sysconf(_SC_NPROCESSORS_ONLN), clients, secs, warmup, cap);
    off = add(block, off, sizeof(block),
              "| call | count | p50 ms | p90 ms | p99 ms | max ms |\n"
              "|---|---:|---:|---:|---:|---:|\n");
    double exec_p50 = 0, bare_p50 = 0;
    for (int o = -1; o < OP_N; o++) {
        samples *s = o < 0 ? &bare_ms : &t.s[o];
        const char *name = o < 0 ? "reference: fork+exec `/bin/true`, as many threads" : op_name[o];
        if (!s->n) {
            off = add(block, off, sizeof(block), "| %s | 0 | | | | |\n", name);
            continue;
        }
        qsort(s->v, s->n, sizeof(double), cmp_double);
        int n = (int)s->n;
        off = add(block, off, sizeof(block), "| %s | %d | %.2f | %.2f | %.2f | %.1f |\n", name,
                  n, pct(s->v, n, .5), pct(s->v, n, .9), pct(s->v, n, .99), s->v[n - 1]);
        if (o < 0)
            bare_p50 = pct(s->v, n, .5);
        if (o == OP_EXEC)
            exec_p50 = pct(s->v, n, .5);
        free(s->v);
    }
    double cyc = (double)t.cycles / t.secs, calls = (double)t.calls / t.secs,
           execs = (double)t.execs / t.secs;
    off = add(block, off, sizeof(block),
              "\n- throughput: **%.1f cycles/s, %.0f calls/s** (%ld cycles, %ld calls), of "
              "which %.0f execs/s; the same %d threads alone ran %.0f fork+exec of "
              "`/bin/true` a second\n"
              "- an exec's median under the mix / a bare fork+exec's with as many threads: "
              "**%.2fx**\n",
              cyc, calls, t.cycles, t.calls, execs, clients, bare,
              bare_p50 > 0 ? exec_p50 / bare_p50 : 0);
    off = add(block, off, sizeof(block), "- errors: ");
    if (!n_errs)
        off = add(block, off, sizeof(block), "**none**");
    for (int i = 0; i < n_errs; i++)
        off = add(block, off, sizeof(block), "%s%s%s x %ld%s", i ? "; " : "",
                  errs[i].expected ? "" : "**unexpected** ", errs[i].key, errs[i].n,
                  errs[i].expected ? " (the limit's own)" : "");
    off = add(block, off, sizeof(block), " (warm-up included)\n");
    int ns = 2 + rounds;
    off = add(block, off, sizeof(block),
              "- the daemon when idle (no sandboxes, the pool full, descriptors and threads "
              "unchanged for 1 s), before, after the warm-up and after each of %d rounds of "
              "%.0f s:\n\n| | before | warm-up |", rounds, secs / rounds);
    for (int r = 0; r < rounds; r++)
        off = add(block, off, sizeof(block), " round %d |", r + 1);
    off = add(block, off, sizeof(block), " growth in the rounds |\n|---|");
    for (int i = 0; i <= ns; i++)
        off = add(block, off, sizeof(block), "---:|");
    off = add(block, off, sizeof(block), "\n");
    long v[2 + MAX_ROUNDS];
#define ROW(field, what, unit)                                                                  \
    do {                                                                                        \
        for (int i = 0; i < ns; i++)                                                            \
            v[i] = sn[i].field;                                                                 \
        off = snap_row(block, off, sizeof(block), what, v, ns, unit);                           \
    } while (0)
    ROW(fds, "open descriptors", "");
    ROW(threads, "threads", "");
    ROW(rss_kb, "RSS", " KiB");
    ROW(pss_kb, "PSS", " KiB");
    ROW(agents, "agents (its children)", "");
    ROW(workspaces, "workspaces in the state dir", "");
#undef ROW
    if (!idle)
        off = add(block, off, sizeof(block), "\n**The daemon was not idle within %d s.**\n",
                  SETTLE_S);
    if (!clean)
        add(block, off, sizeof(block), "\n**cella serve did not exit cleanly.**\n");
    fputs(block, stdout);
    free(blobs);
    if (!ok) {
        fprintf(stderr, "bench: FAILED:%s%s%s%s%s\n", unexpected ? " unexpected errors" : "",
                fds_ok ? "" : " descriptors or threads grew",
                idle ? "" : " not idle", clean ? "" : " unclean exit",
                t.cycles ? "" : " no cycle completed");
        return 1;
    }
    if (out && write_block(out, BEGIN_MARK, END_MARK, block) < 0) {
        perror(out);
        return 1;
    }
    return 0;
}
