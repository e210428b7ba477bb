/* A minimal HTTP/1.1 client for the command-line tools that talk to
 * `cella serve`: one request per connection (Connection: close), plain
 * http:// only, the whole answer buffered, or a text/event-stream answer
 * handed over event by event as it arrives, or (file transfers) a request
 * body read and an answer body written piece by piece, never held whole.
 *
 * The response parser and the Server-Sent Events splitter are incremental
 * and free of I/O, so tests feed them byte strings cut at any point. */
#ifndef CELLA_CLI_HTTPC_H
#define CELLA_CLI_HTTPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/buf.h"
#include "util/err.h"

#define HTTPC_MAX_BODY (64u << 20)         /* a buffered body */
#define HTTPC_MAX_EVENT (16u << 20)        /* one SSE line or event's data */
#define HTTPC_MAX_HEADER_LINE (16u << 10)
#define HTTPC_MAX_HEADERS (64u << 10)      /* the whole header section */
#define HTTPC_CONNECT_TIMEOUT_MS 10000

/* ---- URLs ------------------------------------------------------------------ */

typedef struct httpc_url {
    char host[256];               /* without brackets, for getaddrinfo */
    char port[8];
    char hostport[272];           /* as the Host header wants it */
    char prefix[512];             /* the base URL's path without a trailing '/' */
} httpc_url;

/* "http://HOST[:PORT][/PREFIX]"; HOST may be "[v6addr]". */
int httpc_url_parse(const char *url, httpc_url *u, cella_err *err);

/* ---- Server-Sent Events -------------------------------------------------------- */

/* One event: its name ("message" when the stream gave none) and its data
 * lines joined with '\n' (NUL-terminated; len excludes the NUL). Returns 0 to
 * go on, 1 to stop reading (the caller has what it wanted), -1 to abort with
 * err filled. */
typedef int (*httpc_sse_fn)(void *arg, const char *event, const char *data, size_t len,
                            cella_err *err);

typedef struct httpc_sse {
    httpc_sse_fn fn;
    void *arg;
    cbuf line;                    /* the line being assembled */
    cbuf data;                    /* the event's data so far */
    char *event;                  /* the event's name, or NULL */
    bool has_data;                /* a data field was seen (even an empty one) */
    bool after_cr;                /* a '\n' right after a '\r' is the same line end */
    bool stopped;                 /* the callback returned 1 */
} httpc_sse;

void httpc_sse_init(httpc_sse *s, httpc_sse_fn fn, void *arg);
void httpc_sse_free(httpc_sse *s);
/* Feeds stream bytes. Returns 0, or 1 once the callback asked to stop (the
 * rest is ignored), or -1 with err. An event the stream ends inside is
 * dropped, as the SSE spec says. */
int httpc_sse_feed(httpc_sse *s, const uint8_t *p, size_t n, cella_err *err);

/* ---- responses ------------------------------------------------------------------- */

/* Takes n bytes of a 2xx answer's body (a download). Returns 0, or -1 with
 * err to abort the request. */
typedef int (*httpc_write_fn)(void *arg, const uint8_t *p, size_t n, cella_err *err);

typedef struct httpc_response {
    int status;                   /* 0 until a status line was read */
    char *content_type;           /* NULL when absent */
    cbuf body;                    /* the body, unless it went to an SSE or write callback */
    bool streamed;                /* the body went to the SSE callback */
    bool sunk;                    /* the body went to the write callback */
    bool has_length;              /* the body's size is known (Content-Length, not chunked) */
    uint64_t content_length;      /* ... and is this */
    bool cut_short;               /* the daemon answered before the request body was all
                                     sent (a refusal, usually) */
    bool connected;               /* the TCP connection was made */
} httpc_response;

void httpc_response_init(httpc_response *r);
void httpc_response_free(httpc_response *r);
/* The body as a NUL-terminated string (appends a NUL past the end, not counted). */
const char *httpc_body_str(httpc_response *r);

/* The response parser: status line, headers, then the body framed by
 * Content-Length, chunked transfer coding, or the end of the connection. */
typedef struct httpc_parser {
    int state;
    httpc_response *res;
    httpc_sse *sse;               /* NULL: always buffer the body */
    httpc_write_fn body_fn;       /* not NULL: a 2xx body goes here (set after init) */
    void *body_arg;
    cbuf line;
    size_t header_bytes;
    bool head_only;               /* the request was HEAD: no body follows */
    bool chunked;
    bool has_length;
    uint64_t remaining;           /* of the Content-Length body or of the current chunk */
} httpc_parser;

/* A 2xx text/event-stream body goes to sse (when not NULL); any other 2xx
 * body goes to body_fn when that is set (of any size: the parser counts
 * Content-Length and chunk sizes, so a short body is an error, not an end);
 * any other body is buffered in res->body, at most HTTPC_MAX_BODY bytes. */
void httpc_parser_init(httpc_parser *p, httpc_response *res, httpc_sse *sse);
void httpc_parser_free(httpc_parser *p);
/* Returns 0 (more wanted), 1 (the response is complete, or the SSE callback
 * asked to stop; bytes after it are ignored), or -1 with err. */
int httpc_parser_feed(httpc_parser *p, const uint8_t *data, size_t n, cella_err *err);
/* The connection ended. Returns 1 when that completes the response (a body
 * delimited by the close, or one already complete), else -1 with err. */
int httpc_parser_eof(httpc_parser *p, cella_err *err);

/* ---- requests ---------------------------------------------------------------------- */

/* Called when cancel_fd becomes readable: return true to give up the
 * request, false to keep going (after consuming what made the fd readable). */
typedef bool (*httpc_cancel_fn)(void *arg);

typedef struct httpc_opts {
    const char *token;            /* Authorization: Bearer, or NULL */
    const char *accept;           /* Accept header, or NULL */
    int cancel_fd;                /* -1: none */
    httpc_cancel_fn cancel_fn;    /* NULL: give up as soon as cancel_fd is readable */
    void *cancel_arg;
    httpc_sse_fn sse_fn;          /* not NULL: a 2xx text/event-stream answer goes here */
    void *sse_arg;
} httpc_opts;

/* One request to base_url + path. A body is sent as application/json.
 * Fills res (free it with httpc_response_free, also after a failure) and
 * returns 0 whatever the status, or -1 with err when no complete answer
 * came: res->connected tells whether the daemon could be reached at all;
 * err->errnum is EINTR when the request was cancelled. */
int httpc_do(const char *base_url, const char *method, const char *path, const httpc_opts *o,
             const void *body, size_t body_len, httpc_response *res, cella_err *err);

/* Shorthands: the whole answer buffered; and the streaming form, where a
 * 2xx text/event-stream answer goes to fn event by event (res->streamed) and
 * any other answer (an error) is buffered as usual. */
int httpc_request(const char *base_url, const char *method, const char *path, const char *token,
                  const char *accept, const void *body, size_t body_len, httpc_response *res,
                  cella_err *err);
int httpc_request_sse(const char *base_url, const char *method, const char *path,
                      const char *token, const void *body, size_t body_len, httpc_sse_fn fn,
                      void *arg, httpc_response *res, cella_err *err);

/* ---- streamed transfers ------------------------------------------------------------ */

/* Fills buf with up to max bytes of a request body. Returns the count, 0
 * at the end, or -1 with err. */
typedef ssize_t (*httpc_read_fn)(void *arg, uint8_t *buf, size_t max, cella_err *err);

typedef struct httpc_stream {
    httpc_read_fn read;           /* NULL: no request body */
    void *read_arg;
    int64_t length;               /* the body's size (sent as Content-Length; the reader
                                     must give exactly this), or -1: unknown, sent with
                                     chunked transfer coding (a pipe) */
    const char *content_type;     /* of the request body; NULL: application/octet-stream */
    httpc_write_fn write;         /* not NULL: a 2xx answer's body goes here */
    void *write_arg;
} httpc_stream;

/* One request whose body comes from s->read and whose 2xx answer's body
 * goes to s->write, both in pieces; an answer that is not 2xx is buffered in
 * res->body (an error to report). Returns as httpc_do does. When the daemon
 * answers before the whole body was sent, the rest is not sent
 * (res->cut_short); its answer is still read. */
int httpc_do_stream(const char *base_url, const char *method, const char *path,
                    const httpc_opts *o, const httpc_stream *s, httpc_response *res,
                    cella_err *err);

/* The line that starts a chunk of n bytes in chunked transfer coding
 * ("1a2b\r\n"), written to buf (at least HTTPC_CHUNK_HEAD_MAX bytes); returns its
 * length. A chunk ends with "\r\n"; the body ends with a chunk of 0 bytes
 * and an empty line ("0\r\n\r\n"). */
#define HTTPC_CHUNK_HEAD_MAX 20
size_t httpc_chunk_head(char *buf, size_t n);

#endif
