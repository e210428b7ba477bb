#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
