#include "http/server.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http/early.h"
#include "util/alloc.h"
#include "util/fdio.h"
#include "util/log.h"
#include "util/text.h"

/* Each connection's thread: handlers are straight-line code, with JSON
 * decoding and at most one exec's output on the stack or heap. */
#define HTTP_THREAD_STACK (512u << 10)
/* A connection that sends nothing (an idle keep-alive one, or a caller
 * trickling its headers) is closed after this long. */
#define HTTP_IDLE_TIMEOUT_S 60

/* Request bodies held in memory at once, across connections, as a multiple
 * of max_body_bytes: many callers sending the largest bodies at once get
 * S301 (retry) instead of the daemon's memory. */
#define HTTP_BODY_BUDGET_BODIES 16
#define HTTP_STATUS_SLOTS 8

typedef struct route_stats {
    int status[HTTP_STATUS_SLOTS];
    uint64_t count[HTTP_STATUS_SLOTS];
} route_stats;

struct http_server {
    const cella_config *cfg;
    core *core;
    const cfg_tokens *tokens;
    const http_route *routes;
    size_t n_routes;
    struct MHD_Daemon *d;
    char bound[128];
    pthread_mutex_t mu;           /* stats, body budget */
    uint64_t bodies_held;         /* request bytes buffered across all connections */
    route_stats stats[HTTP_MAX_ROUTES_TOTAL + 1];   /* last: no route matched */
};

typedef struct req {
    http_ctx c;
    cbuf body;
    bool too_large;
    bool over_budget;             /* the daemon holds too many bodies right now */
    size_t held;                  /* bytes of this body counted in the server's budget */
    bool started;
    bool prechecked;
    const http_route *route;
    const http_route *path_route; /* a route on this path, any method: whose error shape to use */
    int64_t start_ns;
    char params_buf[HTTP_MAX_PARAM_BYTES];
    http_body_sink sink;          /* ROUTE_STREAM_BODY: where the body goes */
    bool has_sink;
    /* The sink answered before the body ended: replies go straight to the
     * socket (early.c), then the connection closes. */
    bool early;
} req;

/* Set by the URL decoder when a %00 decodes to a NUL byte, read (and
 * cleared) by the request it belongs to: libmicrohttpd decodes a request's
 * URL and arguments in the connection's own thread just before calling
 * on_request, and a C string would silently end at the NUL (a path
 * "a%00/../b" must not quietly become "a"). */
static _Thread_local bool url_had_nul;

/* ---- replies ------------------------------------------------------------- */

static const char *type_json = "application/json";

static void queue(http_ctx *c, int status, struct MHD_Response *r)
{
    if (!r) {
        log_error("cannot create a response");
        return;
    }
    for (size_t i = 0; i + 1 < 4 && c->reply_headers[i]; i += 2)
        MHD_add_response_header(r, c->reply_headers[i], c->reply_headers[i + 1]);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_queue_response(c->conn, (unsigned)status, r);
    MHD_destroy_response(r);
    c->status = status;
    c->replied = true;
}

void http_reply_text(http_ctx *c, int status, const char *content_type, char *text, size_t len)
{
    if (((req *)c)->early) {
        /* Mid-body: libmicrohttpd cannot queue a reply now (early.c). */
        const char *h[5] = {NULL};
        for (size_t i = 0; i + 1 < 4 && c->reply_headers[i]; i += 2) {
            h[i] = c->reply_headers[i];
            h[i + 1] = c->reply_headers[i + 1];
        }
        if (http_early_reply(c->client_fd, status, content_type, text, len, h) < 0)
            log_info("event=early_reply_failed status=%d error=\"%s\"", status, strerror(errno));
        cella_free(text);
        c->status = status;
        c->replied = true;
        return;
    }
    /* text was allocated with cella's allocator; MHD frees it through us. */
    struct MHD_Response *r =
        MHD_create_response_from_buffer_with_free_callback(len, text, cella_free);
    if (r)
        MHD_add_response_header(r, "Content-Type", content_type);
    else
        cella_free(text);
    queue(c, status, r);
}

void http_reply_json(http_ctx *c, int status, json_t *json)
{
    char *s = json_dumps(json, JSON_COMPACT);
    json_decref(json);
    if (!s) {
        s = cella_strdup("{\"error\":{\"code\":\"S302\",\"message\":\"internal error: the "
                         "response could not be encoded\"}}");
        status = 500;
        http_reply_text(c, status, type_json, s, strlen(s));
        return;
    }
    size_t n = strlen(s);
    char *copy = cella_malloc(n + 2);
    memcpy(copy, s, n);
    copy[n] = '\n';
    copy[n + 1] = '\0';
    free(s);
    http_reply_text(c, status, type_json, copy, n + 1);
}

json_t *http_error_object(const core_error *e)
{
    const core_code_info *ci = core_code_lookup(e->code);
    char url[256];
    snprintf(url, sizeof(url), "%s#s%03d", CORE_DOCS_BASE, (int)e->code);
    json_t *fix = json_null();
    if (e->n_fix) {
        fix = json_object();
        for (int i = 0; i < e->n_fix; i++)
            json_object_set_new(fix, e->fix[i].key,
                                e->fix[i].kind == FIX_BOOL ? json_boolean(e->fix[i].b)
                                                           : json_string(e->fix[i].s));
    }
    json_t *o = json_object();
    json_object_set_new(o, "type", json_string(ci->type));
    json_object_set_new(o, "code", json_string(ci->name));
    /* Messages quote the caller's input (ids, names), which may not be UTF-8
     * or may be cut mid-character: repaired, never dropped. */
    cbuf m;
    cbuf_init(&m);
    utf8_lossy(&m, (const uint8_t *)e->message, strlen(e->message));
    json_object_set_new(o, "message", json_stringn((const char *)cbuf_head(&m), cbuf_avail(&m)));
    cbuf_free(&m);
    json_object_set_new(o, "docs_url", json_string(url));
    json_object_set_new(o, "retryable", json_boolean(ci->retryable));
    json_object_set_new(o, "fix", fix);
    json_object_set_new(o, "fix_note", json_string(e->fix_note ? e->fix_note : ci->fix_note));
    return o;
}

json_t *http_native_error(const core_error *e, int *status)
{
    *status = core_http_status(e);
    json_t *o = json_object();
    json_object_set_new(o, "error", http_error_object(e));
    return o;
}

void http_reply_error(http_ctx *c, const core_error *e)
{
    req *r = (req *)c;
    /* A dialect's clients read errors in its shape, also when the method
     * is wrong or the token is refused on one of its paths. */
    const http_route *shape = r->route ? r->route : r->path_route;
    http_error_fn fn = shape && shape->error_fn ? shape->error_fn : http_native_error;
    int status;
    json_t *body = fn(e, &status);
    http_reply_json(c, status, body);
}

typedef struct stream_ctx {
    http_stream_fn fn;
    void (*free_fn)(void *);
    void *arg;
} stream_ctx;

static ssize_t stream_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    stream_ctx *s = cls;
    ssize_t n = s->fn(s->arg, buf, max);
    if (n == -1)
        return MHD_CONTENT_READER_END_OF_STREAM;
    if (n < 0)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    return n;
}

static void stream_free(void *cls)
{
    stream_ctx *s = cls;
    if (s->free_fn)
        s->free_fn(s->arg);
    cella_free(s);
}

void http_reply_stream_ex(http_ctx *c, int status, const char *content_type, uint64_t length,
                          const char *const *headers, http_stream_fn fn,
                          void (*free_fn)(void *arg), void *arg)
{
    if (((req *)c)->early) {
        /* Nothing streams out in the middle of a body; no handler tries. */
        if (free_fn)
            free_fn(arg);
        core_error e;
        core_fail(&e, S302, "internal error: %s streamed a reply before its body ended", c->path);
        http_reply_error(c, &e);
        return;
    }
    stream_ctx *s = cella_calloc(1, sizeof(*s));
    s->fn = fn;
    s->free_fn = free_fn;
    s->arg = arg;
    struct MHD_Response *r = MHD_create_response_from_callback(
        length == UINT64_MAX ? MHD_SIZE_UNKNOWN : length, 64 << 10, stream_reader, s, stream_free);
    if (!r) {
        stream_free(s);
        log_error("cannot create a streamed response");
        return;
    }
    MHD_add_response_header(r, "Content-Type", content_type);
    for (size_t i = 0; headers && headers[i] && headers[i + 1]; i += 2)
        MHD_add_response_header(r, headers[i], headers[i + 1]);
    queue(c, status, r);
}

void http_reply_stream(http_ctx *c, int status, const char *content_type, http_stream_fn fn,
                       void (*free_fn)(void *arg), void *arg)
{
    /* Proxies must pass events through as they come. */
    static const char *const h[] = {"X-Accel-Buffering", "no", NULL};
    http_reply_stream_ex(c, status, content_type, UINT64_MAX, h, fn, free_fn, arg);
}

void http_accept_body(http_ctx *c, const http_body_sink *sink)
{
    req *r = (req *)c;
    r->sink = *sink;
    r->has_sink = true;
}

const char *http_header(http_ctx *c, const char *name)
{
    return MHD_lookup_connection_value(c->conn, MHD_HEADER_KIND, name);
}

typedef struct arg_find {
    const char *name;
    bool found;
    const char *value;
} arg_find;

static enum MHD_Result find_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                const char *value)
{
    arg_find *f = cls;
    if (strcmp(key, f->name) != 0)
        return MHD_YES;
    f->found = true;
    f->value = value;
    return MHD_NO;
}

bool http_query_flag(http_ctx *c, const char *name)
{
    /* libmicrohttpd hands a bare "?name" over with a NULL value, which a
     * lookup cannot tell from an absent one: walk the arguments instead. */
    arg_find f = {.name = name};
    MHD_get_connection_values(c->conn, MHD_GET_ARGUMENT_KIND, find_arg, &f);
    return f.found && (!f.value || !*f.value || !strcmp(f.value, "1") ||
                       !strcmp(f.value, "true") || !strcmp(f.value, "yes"));
}

const char *http_query(http_ctx *c, const char *name)
{
    return MHD_lookup_connection_value(c->conn, MHD_GET_ARGUMENT_KIND, name);
}

/* ---- routing ------------------------------------------------------------- */

/* Matches path against pattern segment by segment; {x} takes one non-empty
 * segment, copied into buf and pointed at by params. */
static bool match(const char *pattern, const char *path, const char **params, char *buf,
                  size_t bufn)
{
    size_t used = 0;
    int np = 0;
    const char *p = pattern, *q = path;
    while (*p && (*q || (p[0] == '{' && p[1] == '*'))) {
        if (p[0] == '{' && p[1] == '*') {
            /* The rest of the path, whatever it holds. */
            size_t sl = strlen(q);
            if (strcmp(strchr(p, '}') ? strchr(p, '}') : "", "}") != 0 || used + sl + 1 > bufn ||
                np >= HTTP_MAX_PARAMS)
                return false;
            memcpy(buf + used, q, sl + 1);
            params[np++] = buf + used;
            return true;
        }
        if (*p == '{') {
            const char *pe = strchr(p, '}');
            size_t sl = strcspn(q, "/");
            if (!pe || sl == 0 || used + sl + 1 > bufn || np >= HTTP_MAX_PARAMS)
                return false;
            memcpy(buf + used, q, sl);
            buf[used + sl] = '\0';
            params[np++] = buf + used;
            used += sl + 1;
            p = pe + 1;
            q += sl;
            continue;
        }
        if (*p != *q)
            return false;
        p++;
        q++;
    }
    return !*p && !*q;
}

static const http_route *route_find(http_server *s, const char *method, const char *path,
                                    const char **params, char *buf, size_t bufn,
                                    const http_route **on_path)
{
    *on_path = NULL;
    for (size_t i = 0; i < s->n_routes; i++) {
        const char *tmp[HTTP_MAX_PARAMS];
        if (!match(s->routes[i].pattern, path, tmp, buf, bufn))
            continue;
        if (!*on_path)
            *on_path = &s->routes[i];
        if (strcmp(s->routes[i].method, method) != 0)
            continue;
        memcpy(params, tmp, sizeof(tmp));
        return &s->routes[i];
    }
    return NULL;
}

static size_t route_index(http_server *s, const http_route *r)
{
    return r ? (size_t)(r - s->routes) : s->n_routes;
}

static void count(http_server *s, const http_route *r, int status)
{
    route_stats *st = &s->stats[route_index(s, r)];
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < HTTP_STATUS_SLOTS; i++) {
        if (st->status[i] == status || st->status[i] == 0) {
            st->status[i] = status;
            st->count[i]++;
            break;
        }
    }
    pthread_mutex_unlock(&s->mu);
}

void http_metrics_text(http_server *s, cbuf *out)
{
    char line[256];
    const char *h = "# HELP cella_http_requests_total HTTP requests by route and status.\n"
                    "# TYPE cella_http_requests_total counter\n";
    cbuf_append(out, h, strlen(h));
    pthread_mutex_lock(&s->mu);
    for (size_t r = 0; r <= s->n_routes; r++) {
        const route_stats *st = &s->stats[r];
        for (int i = 0; i < HTTP_STATUS_SLOTS && st->status[i]; i++) {
            const char *name = r < s->n_routes ? (s->routes[r].name ? s->routes[r].name
                                                                    : s->routes[r].pattern)
                                               : "unmatched";
            const char *method = r < s->n_routes ? s->routes[r].method : "";
            int n = snprintf(line, sizeof(line),
                             "cella_http_requests_total{method=\"%s\",route=\"%s\",status=\"%d\"} "
                             "%llu\n",
                             method, name, st->status[i], (unsigned long long)st->count[i]);
            if (n > 0)
                cbuf_append(out, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
        }
    }
    pthread_mutex_unlock(&s->mu);
}

/* ---- auth ------------------------------------------------------------------ */

/* Returns 0 and sets tenant/admin, or -1 with the error to answer. */
static int authenticate(http_server *s, req *r, core_error *e)
{
    if (!s->tokens || s->tokens->n == 0) {
        r->c.tenant = "default";
        r->c.admin = true;        /* open mode, on loopback only: one tenant, all routes */
        return 0;
    }
    if (r->route && (r->route->flags & ROUTE_PUBLIC)) {
        r->c.tenant = "default";
        return 0;
    }
    const char *h = http_header(&r->c, "Authorization");
    if (!h || strncasecmp(h, "Bearer ", 7) != 0)
        return core_fail(e, S005, "unauthorized: send Authorization: Bearer <token>");
    const char *tok = h + 7;
    while (*tok == ' ')
        tok++;
    const cfg_token *t = tokens_find(s->tokens, tok);
    if (!t)
        return core_fail(e, S005, "unauthorized: the token is not known");
    r->c.tenant = t->tenant;
    r->c.admin = t->admin;
    if (r->route && (r->route->flags & ROUTE_ADMIN) && !t->admin)
        return core_fail(e, S006, "forbidden: this route is for admin tokens only");
    return 0;
}

/* "localhost", "127.x.y.z" or "[::1]", with or without ":port". */
static bool host_is_loopback(const char *h)
{
    size_t n = strlen(h);
    const char *colon = h[0] == '[' ? strstr(h, "]:") : strrchr(h, ':');
    if (colon && h[0] == '[')
        colon++;
    if (colon)
        n = (size_t)(colon - h);
    if ((n == 9 && !strncasecmp(h, "localhost", 9)) || (n == 5 && !strncmp(h, "[::1]", 5)))
        return true;
    if (n < 9 || n > 15 || strncmp(h, "127.", 4) != 0)
        return false;
    for (size_t i = 4; i < n; i++)
        if (!isdigit((unsigned char)h[i]) && h[i] != '.')
            return false;
    return true;
}

/* Web pages are refused. A page the user visits can post to the daemon on
 * loopback (a cross-site form or fetch needs no preflight for a text
 * body), and with DNS rebinding it can read the answers too: it would run
 * code and read files in the user's name. cella's clients are programs,
 * which send no Origin; browsers always send one on such requests. Without
 * tokens, nothing else stands in a page's way, so there the Host must also
 * name loopback (a rebound name does not). */
static int check_browser(http_server *s, req *r, core_error *e)
{
    const char *origin = http_header(&r->c, "Origin");
    if (origin) {
        bool ok = false;
        for (char **o = s->cfg->allowed_origins; o && *o && !ok; o++)
            ok = !strcmp(*o, "*") || !strcasecmp(*o, origin);
        if (!ok)
            return core_fail(e, S007, "forbidden: requests from web pages are refused (Origin "
                             "%.100s is not in allowed_origins)", origin);
    }
    const char *host = http_header(&r->c, "Host");
    if ((!s->tokens || s->tokens->n == 0) && host && !host_is_loopback(host))
        return core_fail(e, S007, "forbidden: without tokens, only loopback names may be "
                         "used as the Host (got %.100s)", host);
    return 0;
}

/* ---- the request cycle ------------------------------------------------------ */

static void too_large(http_server *s, req *r)
{
    core_error e;
    core_fail(&e, S001, "invalid request: the body is larger than %llu bytes",
              (unsigned long long)s->cfg->max_body_bytes);
    e.http_status = 413;
    http_reply_error(&r->c, &e);
}

/* Everything that can be decided from the headers alone, decided before a
 * byte of the body is read: an unauthenticated or misrouted caller never
 * gets a 16 MiB buffer out of us (nor a 100 Continue). False when answered. */
static bool precheck(http_server *s, req *r)
{
    core_error e;
    r->route = route_find(s, r->c.method, r->c.path, r->c.params, r->params_buf,
                          sizeof(r->params_buf), &r->path_route);
    bool known = r->path_route != NULL;
    if (check_browser(s, r, &e) < 0 || authenticate(s, r, &e) < 0) {
        http_reply_error(&r->c, &e);
        return false;
    }
    if (!r->route) {
        core_fail(&e, S001, known ? "invalid request: method %s is not allowed on %s"
                                  : "invalid request: no route %s %s",
                  r->c.method, r->c.path);
        e.http_status = known ? 405 : 404;
        http_reply_error(&r->c, &e);
        return false;
    }
    if (r->route->flags & ROUTE_STREAM_BODY)
        r->too_large = false;     /* the handler bounds what it takes */
    if (r->too_large) {
        too_large(s, r);
        return false;
    }
    return true;
}

/* A streamed-body route: its handler runs now, before the body; it
 * replies (refusing) or takes the body with http_accept_body. */
static void start_streamed(req *r)
{
    r->c.body = NULL;
    r->c.body_len = 0;
    r->route->handler(&r->c);
    if (r->c.replied)
        r->started = true;
    else if (!r->has_sink) {
        core_error e;
        core_fail(&e, S302, "internal error: %s took no body", r->c.path);
        http_reply_error(&r->c, &e);
        r->started = true;
    }
}

/* After the last byte: the sink replies. */
static void end_streamed(req *r)
{
    r->started = true;
    r->has_sink = false;
    r->sink.end(r->sink.arg, &r->c);
    if (!r->c.replied) {
        core_error e;
        core_fail(&e, S302, "internal error: %s answered nothing", r->c.path);
        http_reply_error(&r->c, &e);
    }
}

static void dispatch(http_server *s, req *r)
{
    core_error e;
    if (!r->prechecked && !precheck(s, r))
        return;
    if (r->too_large) {
        too_large(s, r);
        return;
    }
    if (r->over_budget) {
        core_fail(&e, S301, "the daemon is receiving too many large requests at once; retry");
        http_reply_error(&r->c, &e);
        return;
    }
    if (r->route->flags & ROUTE_STREAM_BODY) {
        /* No body came (GET, or an empty PUT). */
        if (!r->has_sink)
            start_streamed(r);
        if (r->has_sink)
            end_streamed(r);
        return;
    }
    r->c.body = cbuf_head(&r->body);
    r->c.body_len = cbuf_avail(&r->body);
    r->route->handler(&r->c);
    if (!r->c.replied) {
        core_fail(&e, S302, "internal error: %s answered nothing", r->c.path);
        http_reply_error(&r->c, &e);
    }
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_size, void **req_cls)
{
    http_server *s = cls;
    req *r = *req_cls;
    if (!r) {
        r = cella_calloc(1, sizeof(*r));
        r->start_ns = clock_now_ns();
        r->c.srv = s;
        r->c.core = s->core;
        r->c.cfg = s->cfg;
        r->c.conn = conn;
        r->c.method = method;
        r->c.path = url;
        r->c.client_fd = -1;
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (ci)
            r->c.client_fd = ci->connect_fd;
        cbuf_init(&r->body);
        const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
        if (cl && strtoull(cl, NULL, 10) > s->cfg->max_body_bytes)
            r->too_large = true;
        *req_cls = r;
        /* With a body coming, refuse now: the body is then never read into
         * memory (libmicrohttpd closes such a connection). Without one,
         * refuse at the end, which keeps the connection alive for the
         * caller's next request. */
        const char *te = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Transfer-Encoding");
        bool had_nul = url_had_nul;
        url_had_nul = false;
        if (had_nul) {
            core_error e;
            core_fail(&e, S001, "invalid request: the URL holds a NUL byte (%%00)");
            http_reply_error(&r->c, &e);
            r->prechecked = r->started = true;
            return MHD_YES;
        }
        if ((cl && strtoull(cl, NULL, 10) > 0) || te) {
            r->prechecked = true;
            if (!precheck(s, r))
                r->started = true;
            else if (r->route->flags & ROUTE_STREAM_BODY)
                start_streamed(r);
        }
        return MHD_YES;
    }
    if (*upload_size && r->has_sink) {
        int took = r->sink.data(r->sink.arg, (const uint8_t *)upload_data, *upload_size);
        *upload_size = 0;
        if (took < 0) {
            /* The operation ended before the body did (refused half-way:
             * over the quota, say): its answer is known, so it goes out now
             * and the connection closes; the rest of the body is never read,
             * however much the client declared. */
            r->early = true;
            end_streamed(r);
            log_info("event=answered_before_body_end status=%d", r->c.status);
            return MHD_NO;
        }
        return MHD_YES;
    }
    if (!*upload_size && r->has_sink) {
        end_streamed(r);
        return r->c.replied ? MHD_YES : MHD_NO;
    }
    if (*upload_size) {
        /* Answered already (refused from its headers, or too large): the
         * rest of the body is read and dropped, never kept. */
        if (r->started) {
            *upload_size = 0;
            return MHD_YES;
        }
        if (!r->too_large && cbuf_avail(&r->body) + *upload_size > s->cfg->max_body_bytes) {
            /* A body with no declared length that grows past the limit:
             * what came is dropped, the rest is read and dropped too, and
             * the answer is 413. */
            r->too_large = true;
            cbuf_free(&r->body);
        }
        if (!r->too_large && !r->over_budget) {
            uint64_t budget = s->cfg->max_body_bytes * HTTP_BODY_BUDGET_BODIES;
            pthread_mutex_lock(&s->mu);
            bool ok = s->bodies_held + *upload_size <= budget;
            if (ok)
                s->bodies_held += *upload_size;
            pthread_mutex_unlock(&s->mu);
            if (ok) {
                cbuf_append(&r->body, upload_data, *upload_size);
                r->held += *upload_size;
            } else {
                r->over_budget = true;
                cbuf_free(&r->body);
            }
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (r->started)
        return MHD_YES;
    r->started = true;
    dispatch(s, r);
    return r->c.replied ? MHD_YES : MHD_NO;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    http_server *s = cls;
    req *r = *req_cls;
    if (!r)
        return;
    int status = r->c.replied ? r->c.status : 0;
    count(s, r->route, status);
    double ms = (double)(clock_now_ns() - r->start_ns) / 1e6;
    static const char *const endings[] = {"ok", "error", "timeout", "shutdown", "read_error",
                                          "client_abort"};
    /* Method and path are the client's bytes: quoted and escaped. */
    char qm[40], qp[600];
    log_quote(qm, sizeof(qm), r->c.method);
    log_quote(qp, sizeof(qp), r->c.path);
    log_info("event=request method=%s path=%s route=\"%s\" status=%d tenant=%s ms=%.2f end=%s",
             qm, qp,
             r->route ? (r->route->name ? r->route->name : r->route->pattern) : "-", status,
             r->c.tenant ? r->c.tenant : "-", ms,
             (unsigned)toe < sizeof(endings) / sizeof(endings[0]) ? endings[toe] : "?");
    if (r->has_sink)
        r->sink.abort(r->sink.arg);   /* the connection ended mid-body */
    if (r->held) {
        pthread_mutex_lock(&s->mu);
        s->bodies_held -= r->held;
        pthread_mutex_unlock(&s->mu);
    }
    cbuf_free(&r->body);
    cella_free(r);
    *req_cls = NULL;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

size_t http_url_unescape(char *s, bool *had_nul)
{
    char *w = s;
    for (const char *p = s; *p;) {
        int hi, lo;
        if (p[0] == '%' && (hi = hexval(p[1])) >= 0 && (lo = hexval(p[2])) >= 0) {
            char c = (char)(hi << 4 | lo);
            if (c == '\0') {
                *had_nul = true;
                *w++ = *p++;
                continue;
            }
            *w++ = c;
            p += 3;
            continue;
        }
        *w++ = *p++;
    }
    *w = '\0';
    return (size_t)(w - s);
}

static size_t unescape(void *cls, struct MHD_Connection *conn, char *s)
{
    return http_url_unescape(s, &url_had_nul);
}

static void mhd_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    char line[512];
    vsnprintf(line, sizeof(line), fmt, ap);
    size_t n = strlen(line);
    while (n && line[n - 1] == '\n')
        line[--n] = '\0';
    log_debug("http: %s", line);
}

static int listen_socket(const char *addr, char *bound, size_t boundn, cella_err *err)
{
    char *host = NULL;
    uint16_t port;
    if (config_parse_listen(addr, &host, &port, err) < 0)
        return -1;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV | AI_PASSIVE};
    struct addrinfo *res = NULL;
    char portstr[8];
    snprintf(portstr, sizeof(portstr), "%u", port);
    int gr = getaddrinfo(host, portstr, &hints, &res);
    if (gr != 0) {
        cella_err_set(err, 0, "listen address %s: %s", addr, gai_strerror(gr));
        cella_free(host);
        return -1;
    }
    int fd = -1;
    int last_errno = 0;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            last_errno = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 512) < 0) {
            last_errno = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        cella_err_set(err, last_errno, "listen on %s", addr);
        cella_free(host);
        return -1;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    char ip[INET6_ADDRSTRLEN] = "?";
    unsigned p = port;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET) {
            struct sockaddr_in *a = (struct sockaddr_in *)&ss;
            inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
            p = ntohs(a->sin_port);
            snprintf(bound, boundn, "%s:%u", ip, p);
        } else {
            struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
            inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
            p = ntohs(a->sin6_port);
            snprintf(bound, boundn, "[%s]:%u", ip, p);
        }
    }
    cella_free(host);
    return fd;
}

int http_start(const http_opts *o, http_server **out, cella_err *err)
{
    http_server *s = cella_calloc(1, sizeof(*s));
    s->cfg = o->cfg;
    s->core = o->core;
    s->tokens = o->tokens;
    s->routes = o->routes;
    while (s->routes[s->n_routes].method && s->n_routes < HTTP_MAX_ROUTES_TOTAL)
        s->n_routes++;
    pthread_mutex_init(&s->mu, NULL);
    int fd = listen_socket(o->cfg->listen, s->bound, sizeof(s->bound), err);
    if (fd < 0)
        goto error;
    s->d = MHD_start_daemon(
        /* MHD_USE_ITC: a connection's thread wakes the polling thread when
         * it ends, which then closes the socket; without it a connection
         * ended by a handler (an answer before the body's end) stays open
         * until the next connection arrives. */
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
            MHD_USE_ITC | MHD_USE_ERROR_LOG,
        0, NULL, NULL, on_request, s,
        MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
        MHD_OPTION_LISTEN_SOCKET, fd,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)o->cfg->max_connections,
        /* One client address cannot take every connection (and thread). */
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)o->cfg->max_connections_per_ip,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_IDLE_TIMEOUT_S,
        MHD_OPTION_THREAD_STACK_SIZE, (size_t)HTTP_THREAD_STACK,
        MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
        MHD_OPTION_END);
    if (!s->d) {
        close(fd);
        cella_err_set(err, 0, "start the HTTP server on %s", o->cfg->listen);
        goto error;
    }
    *out = s;
    return 0;
error:
    pthread_mutex_destroy(&s->mu);
    cella_free(s);
    return -1;
}

const char *http_bound_addr(const http_server *s)
{
    return s->bound;
}

void http_stop(http_server *s)
{
    if (!s)
        return;
    MHD_stop_daemon(s->d);
    pthread_mutex_destroy(&s->mu);
    cella_free(s);
}
