#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli/httpc.h"
#include "util/alloc.h"

/* ---- helpers ---------------------------------------------------------------- */

/* Events as "name=data|" in arrival order, so one string comparison checks
 * names, data, boundaries and count. */
typedef struct rec {
    cbuf log;
    int stop_after;               /* > 0: ask to stop after this many events */
    int count;
} rec;

static int rec_fn(void *arg, const char *event, const char *data, size_t len, cella_err *err)
{
    rec *r = arg;
    assert_int_equal(strlen(data) <= len, 1);
    assert_int_equal(data[len], '\0');
    cbuf_append(&r->log, event, strlen(event));
    cbuf_append(&r->log, "=", 1);
    cbuf_append(&r->log, data, len);
    cbuf_append(&r->log, "|", 1);
    r->count++;
    return r->stop_after && r->count >= r->stop_after ? 1 : 0;
}

static const char *rec_str(rec *r)
{
    cbuf_append(&r->log, "", 1);
    r->log.len--;
    return (const char *)cbuf_head(&r->log);
}

/* Feeds s to the SSE splitter in pieces of `step` bytes (0: one piece). */
static int sse_run(const char *s, size_t step, rec *r)
{
    httpc_sse sse;
    httpc_sse_init(&sse, rec_fn, r);
    cella_err err;
    size_t n = strlen(s), i = 0;
    int ret = 0;
    if (step == 0)
        step = n ? n : 1;
    while (i < n && ret == 0) {
        size_t k = n - i < step ? n - i : step;
        ret = httpc_sse_feed(&sse, (const uint8_t *)s + i, k, &err);
        i += k;
    }
    if (n == 0)
        ret = httpc_sse_feed(&sse, (const uint8_t *)"", 0, &err);
    httpc_sse_free(&sse);
    return ret;
}

static void expect_events(const char *stream, const char *want)
{
    size_t n = strlen(stream);
    for (size_t step = 0; step <= n; step++) {
        rec r = {0};
        cbuf_init(&r.log);
        assert_true(sse_run(stream, step, &r) >= 0);
        if (strcmp(rec_str(&r), want) != 0)
            fail_msg("step %zu: got '%s', want '%s'", step, rec_str(&r), want);
        cbuf_free(&r.log);
    }
}

/* Feeds a whole response split at `cut` (and, when cut is 0, byte by byte),
 * then EOF when it is not complete yet. Returns the last result. */
static int http_run(const char *s, size_t len, size_t cut, httpc_response *res, httpc_sse *sse,
                    cella_err *err)
{
    httpc_parser p;
    httpc_response_init(res);
    httpc_parser_init(&p, res, sse);
    int r = 0;
    if (cut == 0) {
        for (size_t i = 0; i < len && r == 0; i++)
            r = httpc_parser_feed(&p, (const uint8_t *)s + i, 1, err);
    } else {
        r = httpc_parser_feed(&p, (const uint8_t *)s, cut, err);
        if (r == 0)
            r = httpc_parser_feed(&p, (const uint8_t *)s + cut, len - cut, err);
    }
    if (r == 0)
        r = httpc_parser_eof(&p, err);
    httpc_parser_free(&p);
    return r;
}

/* Every split point gives the same status and body. */
static void expect_body(const char *s, int status, const char *body)
{
    size_t len = strlen(s);
    for (size_t cut = 0; cut < len; cut++) {
        httpc_response res;
        cella_err err = {0};
        int r = http_run(s, len, cut, &res, NULL, &err);
        if (r != 1)
            fail_msg("cut %zu: failed: %s", cut, err.msg);
        assert_int_equal(res.status, status);
        assert_int_equal(cbuf_avail(&res.body), strlen(body));
        assert_string_equal(httpc_body_str(&res), body);
        httpc_response_free(&res);
    }
}

static void expect_http_error(const char *s, const char *needle)
{
    size_t len = strlen(s);
    for (size_t cut = 0; cut < len; cut++) {
        httpc_response res;
        cella_err err = {0};
        int r = http_run(s, len, cut, &res, NULL, &err);
        if (r != -1)
            fail_msg("cut %zu: '%s' was accepted", cut, s);
        if (!strstr(err.msg, needle))
            fail_msg("cut %zu: error '%s' lacks '%s'", cut, err.msg, needle);
        httpc_response_free(&res);
    }
}

/* ---- HTTP framing ------------------------------------------------------------------ */

static void test_content_length(void **state)
{
    expect_body("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n"
                "\r\n{\"a\": true}",
                200, "{\"a\": true}");
    /* Bytes past the length (there should be none) are ignored. */
    expect_body("HTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\nokEXTRA", 201, "ok");
    expect_body("HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n", 404, "");
    /* bare LF line ends, no reason phrase, spaces around the value */
    expect_body("HTTP/1.1 200\nCONTENT-LENGTH:   3  \n\nabc", 200, "abc");

    httpc_response res;
    cella_err err;
    const char *s = "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\n"
                    "Content-Length: 1\r\n\r\nx";
    assert_int_equal(http_run(s, strlen(s), 5, &res, NULL, &err), 1);
    assert_string_equal(res.content_type, "text/plain; charset=utf-8");
    assert_false(res.streamed);
    httpc_response_free(&res);
}

static void test_chunked(void **state)
{
    expect_body("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                "5\r\nhello\r\n1;ext=1\r\n,\r\nA \r\n 012345678\r\n0\r\nX-Trailer: y\r\n\r\n",
                200, "hello, 012345678");
    /* chunked wins over a Content-Length; upper-case hex; LF-only framing */
    expect_body("HTTP/1.1 200 OK\nContent-Length: 3\nTransfer-Encoding: Chunked\n\n"
                "B\nhello world\n0\n\n",
                200, "hello world");
    expect_body("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 200, "");
}

static void test_until_eof(void **state)
{
    expect_body("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"x\":1}\n", 200,
                "{\"x\":1}\n");
    expect_body("HTTP/1.1 204 No Content\r\n\r\n", 204, "");
    /* an interim answer first */
    expect_body("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi",
                200, "hi");
}

static void test_bad_responses(void **state)
{
    expect_http_error("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "before its answer");
    expect_http_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
                      "before its answer");
    expect_http_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello",
                      "before its answer");
    expect_http_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "chunk size");
    expect_http_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n", "chunk size");
    expect_http_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\n", "chunk size");
    expect_http_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5 5\r\n", "chunk size");
    expect_http_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "1000000000000000\r\n",
                      "too large");
    expect_http_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "2\r\nhello\r\n0\r\n\r\n",
                      "does not end");
    expect_http_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
                      "does not support");
    expect_http_error("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                      "conflicting");
    expect_http_error("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "Content-Length");
    expect_http_error("HTTP/1.1 200 OK\r\nContent-Length: 1e3\r\n\r\n", "Content-Length");
    expect_http_error("HTTP/1.1 200 OK\r\nContent-Length: 67108865\r\n\r\n", "64 MiB");
    expect_http_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4000001\r\n",
                      "64 MiB");
    expect_http_error("SSH-2.0-OpenSSH_9.2\r\n", "status line");
    expect_http_error("HTTP/1.1 20 OK\r\n\r\n", "status line");
    expect_http_error("HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "without a name");
    expect_http_error("HTTP/1.1 200 OK\r\nA: b\r\n folded\r\n\r\n", "folded");

    httpc_response res;
    cella_err err;
    assert_int_equal(http_run("", 0, 0, &res, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "without answering"));
    httpc_response_free(&res);
}

static void test_header_bounds(void **state)
{
    size_t n = HTTPC_MAX_HEADER_LINE + 100;
    char *s = cella_malloc(n + 64);
    int k = snprintf(s, n + 64, "HTTP/1.1 200 OK\r\nX-Big: ");
    memset(s + k, 'a', n - (size_t)k);
    strcpy(s + n, "\r\n\r\n");
    httpc_response res;
    cella_err err;
    assert_int_equal(http_run(s, strlen(s), 4096, &res, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "too long"));
    httpc_response_free(&res);
    cella_free(s);
}

static void test_body_cap_until_eof(void **state)
{
    httpc_response res;
    httpc_parser p;
    cella_err err;
    httpc_response_init(&res);
    httpc_parser_init(&p, &res, NULL);
    const char *h = "HTTP/1.1 200 OK\r\n\r\n";
    assert_int_equal(httpc_parser_feed(&p, (const uint8_t *)h, strlen(h), &err), 0);
    size_t piece = 1 << 20;
    uint8_t *zeros = cella_calloc(1, piece);
    int r = 0;
    for (int i = 0; i < 65 && r == 0; i++)
        r = httpc_parser_feed(&p, zeros, piece, &err);
    assert_int_equal(r, -1);
    assert_non_null(strstr(err.msg, "64 MiB"));
    cella_free(zeros);
    httpc_parser_free(&p);
    httpc_response_free(&res);
}

/* ---- Server-Sent Events ---------------------------------------------------------- */

static void test_sse_basic(void **state)
{
    expect_events("event: stdout\ndata: {\"data\": \"hi\\n\"}\n\n"
                  "event: exit\ndata: {\"exit_code\": 0}\n\n",
                  "stdout={\"data\": \"hi\\n\"}|exit={\"exit_code\": 0}|");
    /* several data lines join with \n; no space after the colon; default name */
    expect_events("data:a\ndata: b\ndata\n\n", "message=a\nb\n|");
    /* comments (keep-alives), ignored fields, an event name without data */
    expect_events(": keep-alive\n\nid: 7\nretry: 10\nevent: x\n\ndata: y\n\n", "message=y|");
    /* only the first space after the colon is dropped */
    expect_events("data:  two\n\n", "message= two|");
    /* an empty data field still makes an event */
    expect_events("event: e\ndata:\n\n", "e=|");
    /* the last event name wins; a colon in the value stays */
    expect_events("event: a\nevent: b\ndata: k: v\n\n", "b=k: v|");
    /* an unfinished event at the end is not delivered */
    expect_events("data: done\n\ndata: half", "message=done|");
    expect_events("", "");
}

static void test_sse_line_ends(void **state)
{
    expect_events("event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\rdata: 3\n\r\n",
                  "a=1|b=2|message=3|");
    /* CR LF split across pieces is one line end, not two */
    expect_events("data: x\r\n\r\n", "message=x|");
}

static void test_sse_stop_and_errors(void **state)
{
    rec r = {0};
    cbuf_init(&r.log);
    r.stop_after = 1;
    assert_int_equal(sse_run("data: 1\n\ndata: 2\n\n", 3, &r), 1);
    assert_string_equal(rec_str(&r), "message=1|");
    cbuf_free(&r.log);

    httpc_sse sse;
    cbuf_init(&r.log);
    httpc_sse_init(&sse, rec_fn, &r);
    cella_err err;
    uint8_t *big = cella_malloc(1 << 20);
    memset(big, 'x', 1 << 20);
    assert_int_equal(httpc_sse_feed(&sse, (const uint8_t *)"data: ", 6, &err), 0);
    int ret = 0;
    for (int i = 0; i < 17 && ret == 0; i++)
        ret = httpc_sse_feed(&sse, big, 1 << 20, &err);
    assert_int_equal(ret, -1);
    assert_non_null(strstr(err.msg, "larger than"));
    cella_free(big);
    httpc_sse_free(&sse);
    cbuf_free(&r.log);
}

/* An event stream inside a chunked 200 answer, cut everywhere. */
static void test_sse_over_http(void **state)
{
    const char *s = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                    "Transfer-Encoding: chunked\r\n\r\n"
                    "1c\r\nevent: stdout\ndata: {\"a\":1}\n\r\n"
                    "3\r\n\nev\r\n"
                    "1c\r\nent: exit\ndata: {\"exit\":0}\n\n\r\n"
                    "0\r\n\r\n";
    size_t len = strlen(s);
    for (size_t cut = 0; cut < len; cut++) {
        rec r = {0};
        cbuf_init(&r.log);
        httpc_sse sse;
        httpc_sse_init(&sse, rec_fn, &r);
        httpc_response res;
        cella_err err = {0};
        if (http_run(s, len, cut, &res, &sse, &err) != 1)
            fail_msg("cut %zu: %s", cut, err.msg);
        assert_true(res.streamed);
        assert_int_equal(cbuf_avail(&res.body), 0);
        assert_string_equal(rec_str(&r), "stdout={\"a\":1}|exit={\"exit\":0}|");
        httpc_sse_free(&sse);
        httpc_response_free(&res);
        cbuf_free(&r.log);
    }
}

/* The client stops reading once it has the final event. */
static void test_sse_stop_over_http(void **state)
{
    const char *s = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
                    "event: exit\ndata: {}\n\n: more that is never read\n";
    rec r = {0};
    r.stop_after = 1;
    cbuf_init(&r.log);
    httpc_sse sse;
    httpc_sse_init(&sse, rec_fn, &r);
    httpc_response res;
    httpc_parser p;
    cella_err err;
    httpc_response_init(&res);
    httpc_parser_init(&p, &res, &sse);
    assert_int_equal(httpc_parser_feed(&p, (const uint8_t *)s, strlen(s), &err), 1);
    assert_string_equal(rec_str(&r), "exit={}|");
    assert_int_equal(httpc_parser_eof(&p, &err), 1);
    httpc_parser_free(&p);
    httpc_sse_free(&sse);
    httpc_response_free(&res);
    cbuf_free(&r.log);
}

/* An error answer to a streaming request is buffered, to be read as JSON. */
static void test_sse_error_answer_buffered(void **state)
{
    const char *s = "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
                    "Content-Length: 13\r\n\r\n{\"error\":{}}\n";
    rec r = {0};
    cbuf_init(&r.log);
    httpc_sse sse;
    httpc_sse_init(&sse, rec_fn, &r);
    httpc_response res;
    cella_err err;
    assert_int_equal(http_run(s, strlen(s), 7, &res, &sse, &err), 1);
    assert_false(res.streamed);
    assert_int_equal(res.status, 404);
    assert_string_equal(httpc_body_str(&res), "{\"error\":{}}\n");
    assert_int_equal(r.count, 0);
    httpc_sse_free(&sse);
    httpc_response_free(&res);
    cbuf_free(&r.log);

    /* an event stream with a non-2xx status is not treated as the answer */
    s = "HTTP/1.1 500 Oops\r\nContent-Type: text/event-stream\r\n\r\ndata: x\n\n";
    cbuf_init(&r.log);
    httpc_sse_init(&sse, rec_fn, &r);
    assert_int_equal(http_run(s, strlen(s), 3, &res, &sse, &err), 1);
    assert_false(res.streamed);
    assert_string_equal(httpc_body_str(&res), "data: x\n\n");
    assert_int_equal(r.count, 0);
    httpc_sse_free(&sse);
    httpc_response_free(&res);
    cbuf_free(&r.log);
}

/* ---- answer bodies to a write callback ------------------------------------------------ */

typedef struct sink {
    cbuf got;
    int calls;
    bool fail;                    /* refuse the first piece */
} sink;

static int sink_fn(void *arg, const uint8_t *p, size_t n, cella_err *err)
{
    sink *k = arg;
    k->calls++;
    if (k->fail)
        return cella_err_set(err, 28, "writing out.bin");
    cbuf_append(&k->got, p, n);
    return 0;
}

/* Feeds s cut at `cut` (0: byte by byte) to a parser whose 2xx bodies go
 * to k. Returns the last result. */
static int sink_run(const char *s, size_t len, size_t cut, httpc_response *res, sink *k,
                    cella_err *err)
{
    httpc_parser p;
    httpc_response_init(res);
    httpc_parser_init(&p, res, NULL);
    p.body_fn = sink_fn;
    p.body_arg = k;
    int r = 0;
    if (cut == 0) {
        for (size_t i = 0; i < len && r == 0; i++)
            r = httpc_parser_feed(&p, (const uint8_t *)s + i, 1, err);
    } else {
        r = httpc_parser_feed(&p, (const uint8_t *)s, cut, err);
        if (r == 0)
            r = httpc_parser_feed(&p, (const uint8_t *)s + cut, len - cut, err);
    }
    if (r == 0)
        r = httpc_parser_eof(&p, err);
    httpc_parser_free(&p);
    return r;
}

static void test_sink_bodies(void **state)
{
    /* Literals, so sizeof counts the NUL inside one. */
#define CASE(r, b, hl) {r, sizeof(r) - 1, b, sizeof(b) - 1, hl}
    static const struct {
        const char *resp;
        size_t len;
        const char *body;
        size_t blen;
        bool has_length;
    } cases[] = {
        CASE("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", "hello", true),
        CASE("HTTP/1.1 206 Partial Content\r\nContent-Length: 3\r\n\r\nabcEXTRA", "abc", true),
        CASE("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
             "3\r\nab\0\r\n2\r\n\r\n\r\n0\r\n\r\n",
             "ab\0\r\n", false),
        CASE("HTTP/1.1 200 OK\r\n\r\nuntil the end", "until the end", false),
        CASE("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", "", true),
    };
#undef CASE
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        size_t len = cases[c].len, blen = cases[c].blen;
        for (size_t cut = 0; cut < len; cut++) {
            sink k = {0};
            cbuf_init(&k.got);
            httpc_response res;
            cella_err err = {0};
            if (sink_run(cases[c].resp, len, cut, &res, &k, &err) != 1)
                fail_msg("case %zu cut %zu: %s", c, cut, err.msg);
            assert_true(res.sunk);
            assert_int_equal(cbuf_avail(&res.body), 0);
            assert_int_equal(cbuf_avail(&k.got), blen);
            if (blen)
                assert_memory_equal(cbuf_head(&k.got), cases[c].body, blen);
            assert_int_equal(res.has_length, cases[c].has_length);
            if (cases[c].has_length)
                assert_int_equal(res.content_length, blen);
            httpc_response_free(&res);
            cbuf_free(&k.got);
        }
    }
}

static void test_sink_errors(void **state)
{
    /* An error answer is buffered for the caller to report, not written. */
    const char *s = "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
                    "Content-Length: 13\r\n\r\n{\"error\":{}}\n";
    sink k = {0};
    cbuf_init(&k.got);
    httpc_response res;
    cella_err err = {0};
    assert_int_equal(sink_run(s, strlen(s), 9, &res, &k, &err), 1);
    assert_false(res.sunk);
    assert_int_equal(k.calls, 0);
    assert_string_equal(httpc_body_str(&res), "{\"error\":{}}\n");
    httpc_response_free(&res);

    /* A short body is a failure, whatever arrived of it. */
    s = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort";
    assert_int_equal(sink_run(s, strlen(s), 20, &res, &k, &err), -1);
    assert_non_null(strstr(err.msg, "before its answer was complete"));
    assert_int_equal(cbuf_avail(&k.got), 5);
    httpc_response_free(&res);
    s = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n";
    assert_int_equal(sink_run(s, strlen(s), 3, &res, &k, &err), -1);
    httpc_response_free(&res);

    /* The writer's failure ends the request with its message. */
    k.fail = true;
    s = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
    assert_int_equal(sink_run(s, strlen(s), 40, &res, &k, &err), -1);
    assert_non_null(strstr(err.msg, "writing out.bin"));
    httpc_response_free(&res);
    cbuf_free(&k.got);

    /* No 64 MiB cap on what goes to a writer (it is never held), though
     * the cap stays for buffered answers. */
    httpc_parser p;
    k.fail = false;
    cbuf_init(&k.got);
    httpc_response_init(&res);
    httpc_parser_init(&p, &res, NULL);
    p.body_fn = sink_fn;
    p.body_arg = &k;
    s = "HTTP/1.1 200 OK\r\nContent-Length: 68719476736\r\n\r\n";
    assert_int_equal(httpc_parser_feed(&p, (const uint8_t *)s, strlen(s), &err), 0);
    assert_true(res.has_length);
    assert_true(res.content_length == 68719476736ull);
    httpc_parser_free(&p);
    httpc_response_free(&res);
    httpc_response_init(&res);
    httpc_parser_init(&p, &res, NULL);
    p.body_fn = sink_fn;
    p.body_arg = &k;
    s = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4000001\r\n";
    assert_int_equal(httpc_parser_feed(&p, (const uint8_t *)s, strlen(s), &err), 0);
    httpc_parser_free(&p);
    httpc_response_free(&res);
    s = "HTTP/1.1 500 Oops\r\nContent-Length: 67108865\r\n\r\n";
    assert_int_equal(sink_run(s, strlen(s), 5, &res, &k, &err), -1);
    assert_non_null(strstr(err.msg, "64 MiB"));
    httpc_response_free(&res);
    cbuf_free(&k.got);
}

static void test_chunk_head(void **state)
{
    char b[HTTPC_CHUNK_HEAD_MAX];
    assert_int_equal(httpc_chunk_head(b, 0), 3);
    assert_memory_equal(b, "0\r\n", 3);
    assert_int_equal(httpc_chunk_head(b, 255), 4);
    assert_memory_equal(b, "ff\r\n", 4);
    assert_int_equal(httpc_chunk_head(b, 0x40000), 7);
    assert_memory_equal(b, "40000\r\n", 7);
    /* The largest size still fits, CRLF included. */
    assert_int_equal(httpc_chunk_head(b, SIZE_MAX), 18);
}

/* ---- streamed requests against a little server ------------------------------------------ */

/* One connection: reads the request (a chunked or Content-Length body,
 * decoded into body), then answers. refuse: answer 413 as soon as the
 * headers are in, and close without reading the body, as a daemon that
 * refuses an upload does. */
typedef struct server {
    int lfd;
    int port;
    bool refuse;
    char head[4096];
    cbuf body;
    bool body_complete;
    pthread_t th;
} server;

static bool srv_read(int fd, cbuf *in, size_t want)
{
    while (cbuf_avail(in) < want) {
        uint8_t *p = cbuf_reserve(in, 65536);
        ssize_t r = read(fd, p, 65536);
        if (r <= 0)
            return false;
        cbuf_commit(in, (size_t)r);
    }
    return true;
}

/* A line (without CRLF) from in, reading more as needed. */
static bool srv_line(int fd, cbuf *in, char *out, size_t max)
{
    for (;;) {
        const uint8_t *h = cbuf_head(in);
        const uint8_t *nl = memchr(h, '\n', cbuf_avail(in));
        if (nl) {
            size_t n = (size_t)(nl - h);
            if (n > 0 && h[n - 1] == '\r')
                n--;
            if (n >= max)
                return false;
            memcpy(out, h, n);
            out[n] = '\0';
            cbuf_consume(in, (size_t)(nl - h) + 1);
            return true;
        }
        if (!srv_read(fd, in, cbuf_avail(in) + 1))
            return false;
    }
}

static void *server_main(void *arg)
{
    server *s = arg;
    int fd = accept(s->lfd, NULL, NULL);
    if (fd < 0)
        return NULL;
    cbuf in;
    cbuf_init(&in);
    char line[512];
    size_t used = 0;
    while (srv_line(fd, &in, line, sizeof(line)) && line[0]) {
        used += (size_t)snprintf(s->head + used, sizeof(s->head) - used, "%s\n", line);
        if (used >= sizeof(s->head))
            break;
    }
    if (s->refuse) {
        const char *a = "HTTP/1.1 413 Payload Too Large\r\nContent-Type: application/json\r\n"
                        "Content-Length: 13\r\n\r\n{\"error\":{}}\n";
        (void)!write(fd, a, strlen(a));
        close(fd);
        cbuf_free(&in);
        return NULL;
    }
    const char *cl = strcasestr(s->head, "content-length: ");
    if (strcasestr(s->head, "transfer-encoding: chunked")) {
        for (;;) {
            if (!srv_line(fd, &in, line, sizeof(line)))
                goto out;
            size_t n = strtoul(line, NULL, 16);
            if (!srv_read(fd, &in, n + 2))
                goto out;
            cbuf_append(&s->body, cbuf_head(&in), n);
            cbuf_consume(&in, n + 2);
            if (n == 0)
                break;
        }
    } else if (cl) {
        size_t n = strtoul(cl + 16, NULL, 10);
        if (!srv_read(fd, &in, n))
            goto out;
        cbuf_append(&s->body, cbuf_head(&in), n);
    }
    s->body_complete = true;
    /* The body back, as a download's answer. */
    char h[128];
    snprintf(h, sizeof(h), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n",
             cbuf_avail(&s->body));
    (void)!write(fd, h, strlen(h));
    (void)!write(fd, cbuf_head(&s->body), cbuf_avail(&s->body));
out:
    close(fd);
    cbuf_free(&in);
    return NULL;
}

static void server_start(server *s, bool refuse)
{
    memset(s, 0, sizeof(*s));
    s->refuse = refuse;
    cbuf_init(&s->body);
    s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(s->lfd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    assert_int_equal(bind(s->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(s->lfd, 1), 0);
    assert_int_equal(getsockname(s->lfd, (struct sockaddr *)&a, &al), 0);
    s->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&s->th, NULL, server_main, s), 0);
}

static void server_join(server *s)
{
    pthread_join(s->th, NULL);
    close(s->lfd);
    cbuf_free(&s->body);
}

/* A body that exists nowhere whole: byte i is i % 251, handed out in
 * pieces of varying size. */
typedef struct gen {
    uint64_t total;
    uint64_t at;
    uint64_t stop_at;             /* end early here (a file that shrank) */
    unsigned calls;
} gen;

static ssize_t gen_read(void *arg, uint8_t *buf, size_t max, cella_err *err)
{
    gen *g = arg;
    uint64_t end = g->stop_at ? g->stop_at : g->total;
    size_t n = max / (1 + g->calls++ % 3) + 1;
    if (n > max)
        n = max;
    if (n > end - g->at)
        n = (size_t)(end - g->at);
    for (size_t i = 0; i < n; i++)
        buf[i] = (uint8_t)((g->at + i) % 251);
    g->at += n;
    return (ssize_t)n;
}

static void check_pattern(const cbuf *b, uint64_t n)
{
    assert_int_equal(cbuf_avail(b), n);
    const uint8_t *p = cbuf_head(b);
    for (uint64_t i = 0; i < n; i++)
        if (p[i] != (uint8_t)(i % 251))
            fail_msg("byte %llu differs", (unsigned long long)i);
}

static void test_stream_round_trip(void **state)
{
    /* Known length (Content-Length), then unknown (chunked). */
    for (int chunked = 0; chunked <= 1; chunked++) {
        server s;
        server_start(&s, false);
        char url[64];
        snprintf(url, sizeof(url), "http://127.0.0.1:%d", s.port);
        uint64_t n = (3u << 20) + 17;
        gen g = {.total = n};
        sink k = {0};
        cbuf_init(&k.got);
        httpc_stream st = {.read = gen_read, .read_arg = &g, .length = chunked ? -1 : (int64_t)n,
                           .write = sink_fn, .write_arg = &k};
        httpc_opts o = {.token = "tok", .cancel_fd = -1};
        httpc_response res;
        cella_err err = {0};
        int r = httpc_do_stream(url, "PUT", "/v1/x/files/a%20b", &o, &st, &res, &err);
        server_join(&s);
        if (r != 0)
            fail_msg("chunked=%d: %s", chunked, err.msg);
        assert_int_equal(res.status, 200);
        assert_true(res.sunk);
        assert_false(res.cut_short);
        assert_non_null(strstr(s.head, "PUT /v1/x/files/a%20b HTTP/1.1\n"));
        assert_non_null(strstr(s.head, "Authorization: Bearer tok\n"));
        assert_non_null(strstr(s.head, "Content-Type: application/octet-stream\n"));
        if (chunked) {
            assert_non_null(strstr(s.head, "Transfer-Encoding: chunked\n"));
            assert_null(strcasestr(s.head, "content-length"));
        } else {
            assert_non_null(strstr(s.head, "Content-Length: 3145745\n"));
        }
        check_pattern(&k.got, n);
        httpc_response_free(&res);
        cbuf_free(&k.got);
    }
}

static void test_stream_failures(void **state)
{
    /* A daemon that refuses at the headers: its answer, not our EPIPE, and
     * the rest of the 64 MiB is never sent. */
    server s;
    server_start(&s, true);
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", s.port);
    gen g = {.total = 64u << 20};
    httpc_stream st = {.read = gen_read, .read_arg = &g, .length = (int64_t)g.total,
                       .content_type = "application/x-tar"};
    httpc_opts o = {.cancel_fd = -1};
    httpc_response res;
    cella_err err = {0};
    int r = httpc_do_stream(url, "PUT", "/up", &o, &st, &res, &err);
    server_join(&s);
    if (r != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(res.status, 413);
    assert_true(res.cut_short);
    assert_string_equal(httpc_body_str(&res), "{\"error\":{}}\n");
    assert_non_null(strstr(s.head, "Content-Type: application/x-tar\n"));
    assert_true(g.at < g.total);
    httpc_response_free(&res);

    /* A body that ends before its declared length: the request is dropped,
     * so the server never gets a complete body. */
    server_start(&s, false);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", s.port);
    gen g2 = {.total = 100000, .stop_at = 5000};
    st = (httpc_stream){.read = gen_read, .read_arg = &g2, .length = 100000};
    r = httpc_do_stream(url, "PUT", "/up", &o, &st, &res, &err);
    server_join(&s);
    assert_int_equal(r, -1);
    assert_non_null(strstr(err.msg, "ended after 5000 of 100000 bytes"));
    assert_false(s.body_complete);
    httpc_response_free(&res);
}

/* ---- URLs ---------------------------------------------------------------------------- */

static void test_url(void **state)
{
    httpc_url u;
    cella_err err;
    assert_int_equal(httpc_url_parse("http://127.0.0.1:7878", &u, &err), 0);
    assert_string_equal(u.host, "127.0.0.1");
    assert_string_equal(u.port, "7878");
    assert_string_equal(u.hostport, "127.0.0.1:7878");
    assert_string_equal(u.prefix, "");

    assert_int_equal(httpc_url_parse("HTTP://[::1]:80/cella/", &u, &err), 0);
    assert_string_equal(u.host, "::1");
    assert_string_equal(u.port, "80");
    assert_string_equal(u.hostport, "[::1]:80");
    assert_string_equal(u.prefix, "/cella");

    assert_int_equal(httpc_url_parse("http://sandbox.internal/", &u, &err), 0);
    assert_string_equal(u.port, "80");
    assert_string_equal(u.hostport, "sandbox.internal");
    assert_string_equal(u.prefix, "");

    assert_int_equal(httpc_url_parse("https://x:443", &u, &err), -1);
    assert_non_null(strstr(err.msg, "https is not supported by the cella client yet"));
    static const char *const bad[] = {"127.0.0.1:7878", "http://", "http://:80", "http://h:0",
                                      "http://h:65536", "http://h:80x", "http://h:",
                                      "http://[::1", "http://u@h", "http://h/?q", "ftp://h"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (httpc_url_parse(bad[i], &u, &err) != -1)
            fail_msg("'%s' was accepted", bad[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_content_length),
        cmocka_unit_test(test_chunked),
        cmocka_unit_test(test_until_eof),
        cmocka_unit_test(test_bad_responses),
        cmocka_unit_test(test_header_bounds),
        cmocka_unit_test(test_body_cap_until_eof),
        cmocka_unit_test(test_sse_basic),
        cmocka_unit_test(test_sse_line_ends),
        cmocka_unit_test(test_sse_stop_and_errors),
        cmocka_unit_test(test_sse_over_http),
        cmocka_unit_test(test_sse_stop_over_http),
        cmocka_unit_test(test_sse_error_answer_buffered),
        cmocka_unit_test(test_url),
        cmocka_unit_test(test_sink_bodies),
        cmocka_unit_test(test_sink_errors),
        cmocka_unit_test(test_chunk_head),
        cmocka_unit_test(test_stream_round_trip),
        cmocka_unit_test(test_stream_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
