#include "cli/httpc.h"

#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util/alloc.h"

/* ---- URLs ------------------------------------------------------------------ */

int httpc_url_parse(const char *url, httpc_url *u, cella_err *err)
{
    memset(u, 0, sizeof(*u));
    if (!strncasecmp(url, "https://", 8))
        return cella_err_set(err, 0, "%s: https is not supported by the cella client yet", url);
    if (strncasecmp(url, "http://", 7) != 0)
        return cella_err_set(err, 0, "'%s' is not an http:// URL (e.g. http://127.0.0.1:7878)",
                             url);
    const char *h = url + 7;
    size_t auth_len = strcspn(h, "/?#");
    const char *path = h + auth_len;
    if (memchr(h, '@', auth_len))
        return cella_err_set(err, 0, "%s: user names in the URL are not supported; the token "
                                     "goes in CELLA_TOKEN",
                             url);
    const char *host = h, *port = NULL;
    size_t host_len;
    if (h[0] == '[') {
        const char *close = memchr(h, ']', auth_len);
        if (!close)
            return cella_err_set(err, 0, "%s: unbalanced '[' in the host", url);
        host = h + 1;
        host_len = (size_t)(close - host);
        if (close + 1 < path) {
            if (close[1] != ':')
                return cella_err_set(err, 0, "%s: unexpected text after ']'", url);
            port = close + 2;
        }
    } else {
        const char *colon = memchr(h, ':', auth_len);
        host_len = colon ? (size_t)(colon - h) : auth_len;
        if (colon)
            port = colon + 1;
    }
    if (host_len == 0)
        return cella_err_set(err, 0, "%s: no host", url);
    if (host_len >= sizeof(u->host))
        return cella_err_set(err, 0, "%s: the host name is too long", url);
    memcpy(u->host, host, host_len);
    for (size_t i = 0; i < host_len; i++)
        if (!isgraph((unsigned char)host[i]))
            return cella_err_set(err, 0, "%s: bad character in the host", url);
    if (port) {
        size_t plen = (size_t)(path - port);
        unsigned long v = 0;
        if (plen == 0 || plen > 5)
            return cella_err_set(err, 0, "%s: bad port", url);
        for (size_t i = 0; i < plen; i++) {
            if (!isdigit((unsigned char)port[i]))
                return cella_err_set(err, 0, "%s: bad port", url);
            v = v * 10 + (unsigned long)(port[i] - '0');
        }
        if (v == 0 || v > 65535)
            return cella_err_set(err, 0, "%s: port out of range", url);
        snprintf(u->port, sizeof(u->port), "%lu", v);
    } else {
        snprintf(u->port, sizeof(u->port), "80");
    }
    /* The Host header names the port only when the URL did, as browsers do. */
    bool v6 = h[0] == '[';
    snprintf(u->hostport, sizeof(u->hostport), "%s%s%s%s%s", v6 ? "[" : "", u->host,
             v6 ? "]" : "", port ? ":" : "", port ? u->port : "");
    if (*path == '?' || *path == '#')
        return cella_err_set(err, 0, "%s: a base URL takes no query or fragment", url);
    size_t plen = strlen(path);
    while (plen > 0 && path[plen - 1] == '/')
        plen--;
    if (plen >= sizeof(u->prefix))
        return cella_err_set(err, 0, "%s: the path is too long", url);
    for (size_t i = 0; i < plen; i++)
        if (!isgraph((unsigned char)path[i]) || path[i] == '?' || path[i] == '#')
            return cella_err_set(err, 0, "%s: bad character in the path", url);
    memcpy(u->prefix, path, plen);
    return 0;
}

/* ---- Server-Sent Events -------------------------------------------------------- */

void httpc_sse_init(httpc_sse *s, httpc_sse_fn fn, void *arg)
{
    memset(s, 0, sizeof(*s));
    s->fn = fn;
    s->arg = arg;
    cbuf_init(&s->line);
    cbuf_init(&s->data);
}

void httpc_sse_free(httpc_sse *s)
{
    cbuf_free(&s->line);
    cbuf_free(&s->data);
    cella_free(s->event);
    s->event = NULL;
}

static int sse_dispatch(httpc_sse *s, cella_err *err)
{
    int r = 0;
    /* Per the SSE spec, an event without a data field is not dispatched. */
    if (s->has_data) {
        cbuf_append(&s->data, "", 1);
        r = s->fn(s->arg, s->event ? s->event : "message", (const char *)cbuf_head(&s->data),
                  cbuf_avail(&s->data) - 1, err);
    }
    cbuf_reset(&s->data);
    s->has_data = false;
    cella_free(s->event);
    s->event = NULL;
    return r;
}

static int sse_line(httpc_sse *s, const char *l, size_t n, cella_err *err)
{
    if (n == 0)
        return sse_dispatch(s, err);
    if (l[0] == ':')
        return 0;                               /* a comment: keep-alives */
    const char *colon = memchr(l, ':', n);
    size_t flen = colon ? (size_t)(colon - l) : n;
    const char *v = colon ? colon + 1 : l + n;
    size_t vlen = (size_t)(l + n - v);
    if (vlen > 0 && v[0] == ' ') {
        v++;
        vlen--;
    }
    if (flen == 5 && !memcmp(l, "event", 5)) {
        cella_free(s->event);
        s->event = cella_strndup(v, vlen);
    } else if (flen == 4 && !memcmp(l, "data", 4)) {
        if (s->has_data)
            cbuf_append(&s->data, "\n", 1);
        cbuf_append(&s->data, v, vlen);
        s->has_data = true;
    }
    /* id and retry matter to a reconnecting browser, not to us. */
    return 0;
}

int httpc_sse_feed(httpc_sse *s, const uint8_t *p, size_t n, cella_err *err)
{
    while (n > 0 && !s->stopped) {
        if (s->after_cr) {
            s->after_cr = false;
            if (p[0] == '\n') {
                p++;
                n--;
                continue;
            }
        }
        size_t i = 0;
        while (i < n && p[i] != '\n' && p[i] != '\r')
            i++;
        if (cbuf_avail(&s->line) + i + cbuf_avail(&s->data) > HTTPC_MAX_EVENT)
            return cella_err_set(err, 0, "an event from the daemon is larger than %u MiB",
                                 HTTPC_MAX_EVENT >> 20);
        cbuf_append(&s->line, p, i);
        if (i == n)
            return 0;                           /* the line goes on in the next piece */
        s->after_cr = p[i] == '\r';
        int r = sse_line(s, s->line.data ? (const char *)cbuf_head(&s->line) : "",
                         cbuf_avail(&s->line), err);
        cbuf_reset(&s->line);
        if (r < 0)
            return -1;
        if (r > 0)
            s->stopped = true;
        p += i + 1;
        n -= i + 1;
    }
    return s->stopped ? 1 : 0;
}

/* ---- responses ------------------------------------------------------------------- */

void httpc_response_init(httpc_response *r)
{
    memset(r, 0, sizeof(*r));
    cbuf_init(&r->body);
}

void httpc_response_free(httpc_response *r)
{
    cella_free(r->content_type);
    cbuf_free(&r->body);
    httpc_response_init(r);
}

const char *httpc_body_str(httpc_response *r)
{
    cbuf_append(&r->body, "", 1);
    r->body.len--;
    return (const char *)cbuf_head(&r->body);
}

enum {
    ST_STATUS,
    ST_HEADERS,
    ST_BODY_LEN,
    ST_BODY_EOF,
    ST_CHUNK_SIZE,
    ST_CHUNK_DATA,
    ST_CHUNK_END,
    ST_TRAILERS,
    ST_DONE,
};

void httpc_parser_init(httpc_parser *p, httpc_response *res, httpc_sse *sse)
{
    memset(p, 0, sizeof(*p));
    p->state = ST_STATUS;
    p->res = res;
    p->sse = sse;
    cbuf_init(&p->line);
}

void httpc_parser_free(httpc_parser *p)
{
    cbuf_free(&p->line);
}

static int bad(cella_err *err, const char *what)
{
    return cella_err_set(err, 0, "the daemon's answer is not valid HTTP: %s", what);
}

/* Collects one line (without its CRLF or LF) into p->line. Returns 1 when
 * the line is complete, 0 when it needs more input, -1 when too long. */
static int take_line(httpc_parser *p, const uint8_t **data, size_t *n, cella_err *err)
{
    const uint8_t *nl = memchr(*data, '\n', *n);
    size_t take = nl ? (size_t)(nl - *data) : *n;
    if (cbuf_avail(&p->line) + take > HTTPC_MAX_HEADER_LINE)
        return bad(err, "a header line is too long");
    p->header_bytes += take + (nl ? 1 : 0);
    if (p->header_bytes > HTTPC_MAX_HEADERS)
        return bad(err, "the headers are too long");
    cbuf_append(&p->line, *data, take);
    *data += take + (nl ? 1 : 0);
    *n -= take + (nl ? 1 : 0);
    if (!nl)
        return 0;
    if (cbuf_avail(&p->line) && p->line.data[p->line.len - 1] == '\r')
        p->line.len--;
    cbuf_append(&p->line, "", 1);           /* NUL-terminated, for the parsers below */
    p->line.len--;
    return 1;
}

static int parse_status(httpc_parser *p, const char *l, size_t n, cella_err *err)
{
    if (n < 12 || memcmp(l, "HTTP/1.", 7) != 0 || !isdigit((unsigned char)l[7]) ||
        l[8] != ' ' || !isdigit((unsigned char)l[9]) || !isdigit((unsigned char)l[10]) ||
        !isdigit((unsigned char)l[11]) || (n > 12 && l[12] != ' '))
        return bad(err, "malformed status line");
    int status = (l[9] - '0') * 100 + (l[10] - '0') * 10 + (l[11] - '0');
    if (status < 100 || status > 599)
        return bad(err, "status code out of range");
    p->res->status = status;
    return 0;
}

static bool header_is(const char *l, size_t nlen, const char *name)
{
    return strlen(name) == nlen && !strncasecmp(l, name, nlen);
}

static int parse_header(httpc_parser *p, char *l, size_t n, cella_err *err)
{
    if (l[0] == ' ' || l[0] == '\t')
        return bad(err, "folded header lines are obsolete");
    char *colon = memchr(l, ':', n);
    if (!colon || colon == l)
        return bad(err, "a header line without a name");
    size_t nlen = (size_t)(colon - l);
    for (size_t i = 0; i < nlen; i++)
        if (!isgraph((unsigned char)l[i]))
            return bad(err, "bad character in a header name");
    char *v = colon + 1, *end = l + n;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    *end = '\0';
    if (header_is(l, nlen, "Content-Length")) {
        uint64_t len = 0;
        size_t digits = strlen(v);
        if (digits == 0 || digits > 18 || strspn(v, "0123456789") != digits)
            return bad(err, "bad Content-Length");
        for (const char *c = v; *c; c++)
            len = len * 10 + (uint64_t)(*c - '0');
        if (p->has_length && p->remaining != len)
            return bad(err, "conflicting Content-Length headers");
        p->has_length = true;
        p->remaining = len;
    } else if (header_is(l, nlen, "Transfer-Encoding")) {
        if (strcasecmp(v, "chunked") != 0)
            return cella_err_set(err, 0, "the daemon used transfer coding '%s', which the cella "
                                         "client does not support",
                                 v);
        p->chunked = true;
    } else if (header_is(l, nlen, "Content-Type")) {
        cella_free(p->res->content_type);
        p->res->content_type = cella_strdup(v);
    }
    return 0;
}

static bool is_event_stream(const char *ct)
{
    if (!ct)
        return false;
    size_t n = strcspn(ct, "; \t");
    return n == 17 && !strncasecmp(ct, "text/event-stream", 17);
}

/* After the blank line that ends the headers: how the body is framed and
 * where it goes. */
static int headers_done(httpc_parser *p, cella_err *err)
{
    httpc_response *r = p->res;
    if (r->status < 200) {
        /* Interim answers (100 Continue) precede the real one. */
        if (r->status == 101)
            return bad(err, "unexpected protocol switch");
        r->status = 0;
        cella_free(r->content_type);
        r->content_type = NULL;
        p->chunked = p->has_length = false;
        p->remaining = 0;
        p->state = ST_STATUS;
        return 0;
    }
    bool ok = r->status >= 200 && r->status < 300;
    r->streamed = p->sse && ok && is_event_stream(r->content_type);
    r->sunk = p->body_fn && ok && !r->streamed;
    r->has_length = p->has_length && !p->chunked;
    r->content_length = r->has_length ? p->remaining : 0;
    if (p->head_only || r->status == 204 || r->status == 304) {
        p->state = ST_DONE;
        return 1;
    }
    if (p->chunked) {
        p->has_length = false;          /* chunked framing wins over a Content-Length */
        p->state = ST_CHUNK_SIZE;
        return 0;
    }
    if (p->has_length) {
        if (!r->streamed && !r->sunk && p->remaining > HTTPC_MAX_BODY)
            return cella_err_set(err, 0, "the daemon's answer is larger than %u MiB",
                                 HTTPC_MAX_BODY >> 20);
        p->state = p->remaining ? ST_BODY_LEN : ST_DONE;
        return p->remaining ? 0 : 1;
    }
    p->state = ST_BODY_EOF;
    return 0;
}

static int deliver(httpc_parser *p, const uint8_t *d, size_t n, cella_err *err)
{
    if (p->res->streamed) {
        int r = httpc_sse_feed(p->sse, d, n, err);
        if (r > 0)
            p->state = ST_DONE;
        return r;
    }
    if (p->res->sunk)
        return p->body_fn(p->body_arg, d, n, err) < 0 ? -1 : 0;
    if (cbuf_avail(&p->res->body) + n > HTTPC_MAX_BODY)
        return cella_err_set(err, 0, "the daemon's answer is larger than %u MiB",
                             HTTPC_MAX_BODY >> 20);
    cbuf_append(&p->res->body, d, n);
    return 0;
}

static int parse_chunk_size(httpc_parser *p, const char *l, cella_err *err)
{
    uint64_t v = 0;
    size_t i = 0;
    for (; isxdigit((unsigned char)l[i]); i++) {
        if (i == 15)
            return bad(err, "chunk size too large");
        int c = tolower((unsigned char)l[i]);
        v = v * 16 + (uint64_t)(isdigit(c) ? c - '0' : c - 'a' + 10);
    }
    if (i == 0)
        return bad(err, "bad chunk size");
    while (l[i] == ' ' || l[i] == '\t')
        i++;
    if (l[i] != '\0' && l[i] != ';')
        return bad(err, "bad chunk size");
    /* Chunk extensions (after ';') mean nothing to us. */
    if (v && !p->res->streamed && !p->res->sunk && cbuf_avail(&p->res->body) + v > HTTPC_MAX_BODY)
        return cella_err_set(err, 0, "the daemon's answer is larger than %u MiB",
                             HTTPC_MAX_BODY >> 20);
    p->remaining = v;
    p->state = v ? ST_CHUNK_DATA : ST_TRAILERS;
    return 0;
}

int httpc_parser_feed(httpc_parser *p, const uint8_t *data, size_t n, cella_err *err)
{
    while (p->state != ST_DONE) {
        if (n == 0)
            return 0;
        switch (p->state) {
        case ST_STATUS:
        case ST_HEADERS:
        case ST_CHUNK_SIZE:
        case ST_CHUNK_END:
        case ST_TRAILERS: {
            int r = take_line(p, &data, &n, err);
            if (r <= 0)
                return r;
            char *l = (char *)cbuf_head(&p->line);     /* NUL-terminated by take_line */
            size_t len = cbuf_avail(&p->line);
            if (p->state == ST_STATUS) {
                r = parse_status(p, l, len, err);
                p->state = ST_HEADERS;
            } else if (p->state == ST_HEADERS) {
                r = len ? parse_header(p, l, len, err) : headers_done(p, err);
            } else if (p->state == ST_CHUNK_SIZE) {
                r = parse_chunk_size(p, l, err);
            } else if (p->state == ST_CHUNK_END) {
                r = len ? bad(err, "a chunk does not end where its size says") : 0;
                p->state = ST_CHUNK_SIZE;
            } else if (len == 0) {
                p->state = ST_DONE;             /* trailers are ignored */
                r = 1;
            }
            cbuf_reset(&p->line);
            if (r < 0)
                return -1;
            break;
        }
        case ST_BODY_LEN:
        case ST_CHUNK_DATA: {
            size_t take = p->remaining < n ? (size_t)p->remaining : n;
            int r = deliver(p, data, take, err);
            if (r != 0)
                return r;
            data += take;
            n -= take;
            p->remaining -= take;
            if (p->remaining == 0)
                p->state = p->state == ST_BODY_LEN ? ST_DONE : ST_CHUNK_END;
            break;
        }
        case ST_BODY_EOF:
            return deliver(p, data, n, err);
        default:
            return bad(err, "internal parser state");
        }
    }
    return 1;
}

int httpc_parser_eof(httpc_parser *p, cella_err *err)
{
    if (p->state == ST_DONE)
        return 1;
    if (p->state == ST_BODY_EOF) {
        p->state = ST_DONE;
        return 1;
    }
    if (p->state == ST_STATUS && p->res->status == 0 && cbuf_avail(&p->line) == 0)
        return cella_err_set(err, 0, "the daemon closed the connection without answering");
    return cella_err_set(err, 0, "the daemon closed the connection before its answer was "
                                 "complete");
}

/* ---- requests ---------------------------------------------------------------------- */

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until fd is ready for `events`. Returns 1 when ready (*revents,
 * when not NULL, says for what), 0 at the deadline (-1: none), -1 with err
 * when cancelled or poll fails. */
static int wait_fd(int fd, short events, int64_t deadline, const httpc_opts *o, short *revents,
                   cella_err *err)
{
    for (;;) {
        struct pollfd pf[2] = {{.fd = fd, .events = events},
                               {.fd = o->cancel_fd, .events = POLLIN}};
        int timeout = -1;
        if (deadline >= 0) {
            int64_t left = deadline - now_ms();
            if (left <= 0)
                return 0;
            timeout = left > 60000 ? 60000 : (int)left;
        }
        int r = poll(pf, o->cancel_fd >= 0 ? 2 : 1, timeout);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return cella_err_set(err, errno, "poll");
        }
        if (o->cancel_fd >= 0 && (pf[1].revents & POLLIN)) {
            if (!o->cancel_fn || o->cancel_fn(o->cancel_arg))
                return cella_err_set(err, EINTR, "the request to the daemon was cancelled");
        }
        /* Errors and hang-ups count as ready: the next call reports them. */
        if (pf[0].revents) {
            if (revents)
                *revents = pf[0].revents;
            return 1;
        }
    }
}

static int dial(const httpc_url *u, const char *base_url, const httpc_opts *o, int *out,
                cella_err *err)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *ai = NULL;
    int rc = getaddrinfo(u->host, u->port, &hints, &ai);
    if (rc != 0) {
        if (rc == EAI_SYSTEM)
            return cella_err_set(err, errno, "cannot reach the daemon at %s", base_url);
        return cella_err_set(err, 0, "cannot reach the daemon at %s: %s", base_url,
                             gai_strerror(rc));
    }
    /* One deadline for all addresses: "localhost" may have two that fail. */
    int64_t deadline = now_ms() + HTTPC_CONNECT_TIMEOUT_MS;
    int last = ECONNREFUSED;
    for (struct addrinfo *a = ai; a; a = a->ai_next) {
        int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                        a->ai_protocol);
        if (fd < 0) {
            last = errno;
            continue;
        }
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            freeaddrinfo(ai);
            *out = fd;
            return 0;
        }
        if (errno != EINPROGRESS) {
            last = errno;
            close(fd);
            continue;
        }
        int r = wait_fd(fd, POLLOUT, deadline, o, NULL, err);
        if (r < 0) {
            close(fd);
            freeaddrinfo(ai);
            return -1;
        }
        if (r == 0) {
            close(fd);
            last = ETIMEDOUT;
            break;
        }
        int soerr = 0;
        socklen_t sl = sizeof(soerr);
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
            soerr = errno;
        if (soerr == 0) {
            freeaddrinfo(ai);
            *out = fd;
            return 0;
        }
        last = soerr;
        close(fd);
    }
    freeaddrinfo(ai);
    return cella_err_set(err, last, "cannot reach the daemon at %s", base_url);
}

/* Sends everything. Returns 0, or -1 with errno (EPIPE, ECONNRESET) and
 * err when the connection broke, or -2 with err when cancelled. */
static int send_all(int fd, const uint8_t *p, size_t n, const httpc_opts *o, cella_err *err)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                if (wait_fd(fd, POLLOUT, -1, o, NULL, err) < 0)
                    return -2;
                continue;
            }
            int e = errno;
            cella_err_set(err, e, "sending the request to the daemon");
            errno = e;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static bool has_ctl(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return true;
    return false;
}

static void head_add(cbuf *b, const char *name, const char *value)
{
    cbuf_append(b, name, strlen(name));
    cbuf_append(b, ": ", 2);
    cbuf_append(b, value, strlen(value));
    cbuf_append(b, "\r\n", 2);
}

/* The request line and headers. A body of ctype (NULL: none) has len
 * bytes, or len < 0: it is sent chunked. */
static void build_head(cbuf *b, const httpc_url *u, const char *method, const char *path,
                       const httpc_opts *o, const char *ctype, int64_t len)
{
    cbuf_append(b, method, strlen(method));
    cbuf_append(b, " ", 1);
    cbuf_append(b, u->prefix, strlen(u->prefix));
    cbuf_append(b, path, strlen(path));
    cbuf_append(b, " HTTP/1.1\r\n", 11);
    head_add(b, "Host", u->hostport);
#ifdef CELLA_VERSION
    head_add(b, "User-Agent", "cella/" CELLA_VERSION);
#else
    head_add(b, "User-Agent", "cella");
#endif
    head_add(b, "Connection", "close");
    if (o->accept)
        head_add(b, "Accept", o->accept);
    if (o->token && o->token[0]) {
        cbuf_append(b, "Authorization: Bearer ", 22);
        cbuf_append(b, o->token, strlen(o->token));
        cbuf_append(b, "\r\n", 2);
    }
    char lenstr[24];
    snprintf(lenstr, sizeof(lenstr), "%lld", (long long)len);
    if (ctype) {
        head_add(b, "Content-Type", ctype);
        if (len < 0)
            head_add(b, "Transfer-Encoding", "chunked");
        else
            head_add(b, "Content-Length", lenstr);
    } else if (!strcmp(method, "POST") || !strcmp(method, "PUT") || !strcmp(method, "PATCH")) {
        head_add(b, "Content-Length", "0");    /* some servers want a length on every POST */
    }
    cbuf_append(b, "\r\n", 2);
}

/* Reads the answer into the parser until it is complete or the connection
 * ends. Returns 0 or -1 with err. */
static int read_answer(int fd, httpc_parser *p, const httpc_opts *o, cella_err *err)
{
    uint8_t buf[16384];
    for (;;) {
        ssize_t r = recv(fd, buf, sizeof(buf), 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                if (wait_fd(fd, POLLIN, -1, o, NULL, err) < 0)
                    return -1;
                continue;
            }
            return cella_err_set(err, errno, "reading the daemon's answer");
        }
        if (r == 0)
            return httpc_parser_eof(p, err) < 0 ? -1 : 0;
        int f = httpc_parser_feed(p, buf, (size_t)r, err);
        if (f < 0)
            return -1;
        if (f > 0)
            return 0;
    }
}

size_t httpc_chunk_head(char *buf, size_t n)
{
    int k = snprintf(buf, HTTPC_CHUNK_HEAD_MAX, "%zx\r\n", n);
    return k > 0 ? (size_t)k : 0;
}

/* Sends p[0..n) while watching for an answer: a daemon that refuses a body
 * answers and closes before reading it, and pushing on would only earn a
 * reset that can take its answer with it. Returns 0 when sent, 1 when the
 * daemon is answering (or closed), and -1 / -2 as send_all. */
static int send_watch(int fd, const uint8_t *p, size_t n, const httpc_opts *o, cella_err *err)
{
    while (n > 0) {
        short rev = 0;
        if (wait_fd(fd, POLLOUT | POLLIN, -1, o, &rev, err) < 0)
            return -2;
        if (rev & POLLIN)
            return 1;
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
                continue;
            int e = errno;
            cella_err_set(err, e, "sending the request to the daemon");
            errno = e;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Sends a streamed body, framed as chunks when its length is unknown.
 * Returns as send_watch; a failure of our own (the reader's, or a body
 * that ends before its declared length) is -1 with errno 0, so the
 * connection is dropped rather than the answer awaited: the daemon then
 * keeps nothing of a body it got only part of. */
static int send_stream(int fd, const httpc_stream *st, const httpc_opts *o, cella_err *err)
{
    enum { BLOCK = 256u << 10 };
    uint8_t *buf = cella_malloc(HTTPC_CHUNK_HEAD_MAX + BLOCK + 2);
    uint8_t *data = buf + HTTPC_CHUNK_HEAD_MAX;
    bool chunked = st->length < 0;
    uint64_t sent = 0;
    int r = 0;
    for (;;) {
        size_t want = BLOCK;
        if (!chunked) {
            if (sent == (uint64_t)st->length)
                break;
            if ((uint64_t)st->length - sent < want)
                want = (size_t)((uint64_t)st->length - sent);
        }
        ssize_t n = st->read(st->read_arg, data, want, err);
        if (n < 0 || (size_t)n > want) {
            if (n > 0)
                cella_err_set(err, 0, "internal error: a body reader overran its buffer");
            r = -1;
            errno = 0;
            break;
        }
        if (n == 0 && !chunked) {
            cella_err_set(err, 0, "the data to send ended after %llu of %lld bytes (did the "
                                  "file shrink?)",
                          (unsigned long long)sent, (long long)st->length);
            r = -1;
            errno = 0;
            break;
        }
        if (n == 0) {
            r = send_watch(fd, (const uint8_t *)"0\r\n\r\n", 5, o, err);
            break;
        }
        const uint8_t *p = data;
        size_t len = (size_t)n;
        if (chunked) {
            char head[HTTPC_CHUNK_HEAD_MAX];
            size_t hl = httpc_chunk_head(head, len);
            memcpy(data - hl, head, hl);
            memcpy(data + len, "\r\n", 2);
            p = data - hl;
            len += hl + 2;
        }
        r = send_watch(fd, p, len, o, err);
        if (r != 0)
            break;
        sent += (uint64_t)n;
    }
    int e = errno;
    cella_free(buf);
    errno = e;
    return r;
}

/* httpc_do and httpc_do_stream: a body from memory (body, or NULL) or from
 * st (NULL: none). */
static int do_request(const char *base_url, const char *method, const char *path,
                      const httpc_opts *o, const void *body, size_t body_len,
                      const httpc_stream *st, httpc_response *res, cella_err *err)
{
    httpc_response_init(res);
    httpc_url u;
    if (httpc_url_parse(base_url, &u, err) < 0)
        return -1;
    if (has_ctl(method) || has_ctl(path) || path[0] != '/')
        return cella_err_set(err, 0, "bad request line: %s %s", method, path);
    if (o->token && has_ctl(o->token))
        return cella_err_set(err, 0, "the token holds a control character (a line break?)");
    if (o->accept && has_ctl(o->accept))
        return cella_err_set(err, 0, "bad Accept value");
    int fd = -1;
    if (dial(&u, base_url, o, &fd, err) < 0)
        return -1;
    res->connected = true;

    cbuf head;
    cbuf_init(&head);
    if (st && st->read)
        build_head(&head, &u, method, path, o,
                   st->content_type ? st->content_type : "application/octet-stream",
                   st->length < 0 ? -1 : st->length);
    else
        build_head(&head, &u, method, path, o, body ? "application/json" : NULL,
                   (int64_t)body_len);
    int s = send_all(fd, cbuf_head(&head), cbuf_avail(&head), o, err);
    cbuf_free(&head);
    if (s == 0 && body && body_len)
        s = send_all(fd, body, body_len, o, err);
    if (s == 0 && st && st->read)
        s = send_stream(fd, st, o, err);
    if (s == 1) {
        res->cut_short = true;
        s = 0;
    }
    if (s == -2) {
        close(fd);
        return -1;
    }
    cella_err send_err = {0};
    if (s < 0) {
        /* The daemon may have answered early (a body too large, a bad token)
         * and closed: its answer says more than our EPIPE. */
        send_err = *err;
        if (errno != EPIPE && errno != ECONNRESET) {
            close(fd);
            return -1;
        }
    }

    httpc_sse sse;
    if (o->sse_fn)
        httpc_sse_init(&sse, o->sse_fn, o->sse_arg);
    httpc_parser p;
    httpc_parser_init(&p, res, o->sse_fn ? &sse : NULL);
    p.head_only = !strcmp(method, "HEAD");
    if (st && st->write) {
        p.body_fn = st->write;
        p.body_arg = st->write_arg;
    }
    int r = read_answer(fd, &p, o, err);
    if (r < 0 && s < 0 && res->status == 0 && err->errnum != EINTR)
        *err = send_err;
    httpc_parser_free(&p);
    if (o->sse_fn)
        httpc_sse_free(&sse);
    close(fd);
    return r;
}

int httpc_do(const char *base_url, const char *method, const char *path, const httpc_opts *o,
             const void *body, size_t body_len, httpc_response *res, cella_err *err)
{
    return do_request(base_url, method, path, o, body, body_len, NULL, res, err);
}

int httpc_do_stream(const char *base_url, const char *method, const char *path,
                    const httpc_opts *o, const httpc_stream *s, httpc_response *res,
                    cella_err *err)
{
    return do_request(base_url, method, path, o, NULL, 0, s, res, err);
}

int httpc_request(const char *base_url, const char *method, const char *path, const char *token,
                  const char *accept, const void *body, size_t body_len, httpc_response *res,
                  cella_err *err)
{
    httpc_opts o = {.token = token, .accept = accept, .cancel_fd = -1};
    return httpc_do(base_url, method, path, &o, body, body_len, res, err);
}

int httpc_request_sse(const char *base_url, const char *method, const char *path,
                      const char *token, const void *body, size_t body_len, httpc_sse_fn fn,
                      void *arg, httpc_response *res, cella_err *err)
{
    httpc_opts o = {.token = token, .accept = "text/event-stream", .cancel_fd = -1,
                    .sse_fn = fn, .sse_arg = arg};
    return httpc_do(base_url, method, path, &o, body, body_len, res, err);
}
