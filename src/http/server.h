/* The HTTP front: libmicrohttpd with a thread per connection, so a long
 * exec holds only its own connection's thread. Routing, bearer-token auth,
 * bounded request bodies, one logfmt line per request, and the counters
 * /metrics reports. Dialects (api/) register routes; each route renders
 * its errors in its own dialect. */
#ifndef CELLA_HTTP_SERVER_H
#define CELLA_HTTP_SERVER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/core.h"
#include "util/buf.h"

typedef struct http_server http_server;
typedef struct http_ctx http_ctx;

#define HTTP_MAX_PARAMS 4
/* Routes one server can hold. */
#define HTTP_MAX_ROUTES_TOTAL 64
/* The longest URL path a route parameter can take (a {*path}). */
#define HTTP_MAX_PARAM_BYTES 8192

/* What a handler sees of its request. */
struct http_ctx {
    http_server *srv;
    core *core;
    const cella_config *cfg;
    struct MHD_Connection *conn;
    const char *method;
    const char *path;
    const char *params[HTTP_MAX_PARAMS];   /* the {segments} of the route, in order */
    const uint8_t *body;
    size_t body_len;
    const char *tenant;           /* from the token; "default" when open */
    bool admin;
    int client_fd;                /* the connection's socket, to notice a hang-up */
    /* headers added to the reply, set by the handler before replying:
     * {name, value, ...} (a 416's Content-Range) */
    const char *reply_headers[4];
    /* set by the reply */
    int status;
    bool replied;
};

enum {
    ROUTE_PUBLIC = 1 << 0,        /* no token needed (health probes) */
    ROUTE_ADMIN = 1 << 1,         /* an admin token needed */
    /* The body is not buffered: the handler runs once the headers are in
     * (body NULL) and takes the body as it arrives with http_accept_body.
     * max_body_bytes does not apply; the handler bounds what it takes. */
    ROUTE_STREAM_BODY = 1 << 2,
};

/* Where a streamed body goes. end runs after the last byte and replies;
 * abort runs instead when the connection ends first. data returns -1 when
 * the sink takes no more (its operation ended, refused): end then runs at
 * once, its reply goes out before the body's end, with Connection: close,
 * and the connection closes without the rest being read (early.c). arg
 * belongs to the sink: end or abort must free it. */
typedef struct http_body_sink {
    int (*data)(void *arg, const uint8_t *p, size_t n);
    void (*end)(void *arg, http_ctx *c);
    void (*abort)(void *arg);
    void *arg;
} http_body_sink;
void http_accept_body(http_ctx *c, const http_body_sink *sink);

typedef void (*http_handler)(http_ctx *c);
/* Renders an error in the route's dialect: the body, and the status to use. */
typedef json_t *(*http_error_fn)(const core_error *e, int *status);

typedef struct http_route {
    const char *method;           /* "GET", "POST", "PUT", "DELETE" */
    /* "/v1/sandboxes/{id}/exec": {x} is one segment; a last {*x} takes the
     * rest of the path, slashes and all (possibly nothing) */
    const char *pattern;
    const char *name;             /* for logs and metrics (the pattern if NULL) */
    unsigned flags;
    http_handler handler;
    http_error_fn error_fn;       /* NULL: the native error shape */
} http_route;

typedef struct http_opts {
    const cella_config *cfg;
    core *core;
    const cfg_tokens *tokens;     /* NULL or empty: open (tenant "default") */
    const http_route *routes;     /* terminated by a route with a NULL method */
} http_opts;

int http_start(const http_opts *o, http_server **out, cella_err *err);
/* The address actually bound ("127.0.0.1:7878"). */
const char *http_bound_addr(const http_server *s);
/* Stops accepting; returns when every connection is closed. */
void http_stop(http_server *s);

/* Replies (each handler replies exactly once). json is stolen. */
void http_reply_json(http_ctx *c, int status, json_t *json);
void http_reply_error(http_ctx *c, const core_error *e);
void http_reply_text(http_ctx *c, int status, const char *content_type, char *text, size_t len);
/* A streamed reply: the reader is called from the connection's own thread
 * and may block; it returns bytes written to buf, 0 never, -1 at the end,
 * -2 to abort. free_fn runs once, whatever happened. */
typedef ssize_t (*http_stream_fn)(void *arg, char *buf, size_t max);
void http_reply_stream(http_ctx *c, int status, const char *content_type, http_stream_fn fn,
                       void (*free_fn)(void *arg), void *arg);
/* The same with a known length (UINT64_MAX: unknown, chunked) and extra
 * headers: {name, value, name, value, ..., NULL}. A reader that ends
 * before length bytes makes the server close the connection. */
void http_reply_stream_ex(http_ctx *c, int status, const char *content_type, uint64_t length,
                          const char *const *headers, http_stream_fn fn,
                          void (*free_fn)(void *arg), void *arg);
/* Percent-decodes s in place (the URL path and query arguments), as
 * libmicrohttpd would, except that %00 is kept as the three characters and
 * *had_nul set: the server refuses such a request (S001) rather than let
 * a C string end early. Returns the new length. */
size_t http_url_unescape(char *s, bool *had_nul);
/* A request header, or NULL. */
const char *http_header(http_ctx *c, const char *name);
/* A query argument, or NULL (also for a bare "?name" with no value). */
const char *http_query(http_ctx *c, const char *name);
/* A query argument as a switch: "?name", "?name=", "?name=1", "?name=true"
 * and "?name=yes" are on; absent or anything else is off. */
bool http_query_flag(http_ctx *c, const char *name);

/* The native error shape: {"error": {type, code, message, docs_url, retryable, fix, fix_note}}. */
json_t *http_native_error(const core_error *e, int *status);
json_t *http_error_object(const core_error *e);

/* Per-route request counts for /metrics, appended as Prometheus text. */
void http_metrics_text(http_server *s, cbuf *out);

#endif
