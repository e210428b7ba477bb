/* The agent frame codec: framing, each message's round trip, and refusal of
 * malformed input (truncations at every length, bad types, oversized frames). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "agent/proto.h"
#include "agent/wire.h"
#include "util/alloc.h"

static void test_frame_peek(void **state)
{
    cbuf b;
    cbuf_init(&b);
    proto_put_frame(&b, PROTO_OUTPUT, PROTO_STREAM_STDERR, 77, "abc", 3);
    proto_hdr h;
    const uint8_t *p;
    /* Every prefix of a frame is "need more", never an error or a frame. */
    for (size_t n = 0; n < PROTO_HDR_SIZE + 3; n++) {
        cbuf part;
        cbuf_init(&part);
        cbuf_append(&part, cbuf_head(&b), n);
        assert_int_equal(proto_peek_frame(&part, &h, &p, NULL), 0);
        cbuf_free(&part);
    }
    assert_int_equal(proto_peek_frame(&b, &h, &p, NULL), 1);
    assert_int_equal(h.type, PROTO_OUTPUT);
    assert_int_equal(h.flags, PROTO_STREAM_STDERR);
    assert_int_equal(h.id, 77);
    assert_int_equal(h.len, 3);
    assert_memory_equal(p, "abc", 3);
    cbuf_free(&b);
}

static void test_frame_bad_header(void **state)
{
    cbuf b;
    cbuf_init(&b);
    proto_put_frame(&b, PROTO_READY, 0, 0, NULL, 0);
    b.data[4] = 0;       /* type 0 */
    proto_hdr h;
    const uint8_t *p;
    cella_err err;
    assert_int_equal(proto_peek_frame(&b, &h, &p, &err), -1);
    b.data[4] = 0xff;    /* unknown type */
    assert_int_equal(proto_peek_frame(&b, &h, &p, &err), -1);
    cbuf_reset(&b);
    proto_put_frame(&b, PROTO_READY, 0, 0, NULL, 0);
    uint32_t huge = PROTO_MAX_PAYLOAD + 1;
    memcpy(b.data, &huge, 4);
    assert_int_equal(proto_peek_frame(&b, &h, &p, &err), -1);
    assert_non_null(strstr(err.msg, "exceeds"));
    cbuf_free(&b);
}

static void test_begin_end_survives_compaction(void **state)
{
    cbuf b;
    cbuf_init(&b);
    /* Leave consumed bytes at the front so the next growth compacts. */
    proto_put_frame(&b, PROTO_READY, 0, 0, NULL, 0);
    cbuf_append(&b, "xxxxxxxx", 8);
    cbuf_consume(&b, PROTO_HDR_SIZE);
    size_t mark = proto_begin_frame(&b, PROTO_LOG, 0, 5);
    char big[4000];
    memset(big, 'y', sizeof(big));
    cbuf_append(&b, big, sizeof(big));
    proto_end_frame(&b, mark);
    cbuf_consume(&b, 8);
    proto_hdr h;
    const uint8_t *p;
    assert_int_equal(proto_peek_frame(&b, &h, &p, NULL), 1);
    assert_int_equal(h.type, PROTO_LOG);
    assert_int_equal(h.len, sizeof(big));
    cbuf_free(&b);
}

static void test_reserve_commit(void **state)
{
    cbuf b;
    cbuf_init(&b);
    uint8_t *p = proto_reserve_frame(&b, 100);
    memcpy(p, "hello", 5);
    proto_commit_frame(&b, PROTO_OUTPUT, PROTO_STREAM_STDOUT, 3, 5);
    proto_reserve_frame(&b, 100);      /* reserved, never committed: nothing added */
    proto_hdr h;
    const uint8_t *q;
    assert_int_equal(proto_peek_frame(&b, &h, &q, NULL), 1);
    assert_int_equal(h.len, 5);
    assert_memory_equal(q, "hello", 5);
    assert_int_equal(cbuf_avail(&b), PROTO_HDR_SIZE + 5);
    cbuf_free(&b);
}

static void test_exec_roundtrip(void **state)
{
    char *argv[] = {"python3", "-c", "print(1)", NULL};
    char *env[] = {"A=1", "B=two words", NULL};
    proto_exec e = {.argv = argv, .env = env, .cwd = "/workspace/sub", .timeout_ms = 1500,
                    .stdout_cap = 10, .stderr_cap = 20, .flags = EXEC_STDIN};
    cbuf b;
    cbuf_init(&b);
    proto_put_exec(&b, &e);
    proto_exec d;
    assert_int_equal(proto_get_exec(cbuf_head(&b), cbuf_avail(&b), &d, NULL), 0);
    assert_string_equal(d.argv[2], "print(1)");
    assert_null(d.argv[3]);
    assert_string_equal(d.env[1], "B=two words");
    assert_string_equal(d.cwd, "/workspace/sub");
    assert_int_equal(d.timeout_ms, 1500);
    assert_int_equal(d.stdout_cap, 10);
    assert_int_equal(d.stderr_cap, 20);
    assert_int_equal(d.flags, EXEC_STDIN);
    proto_exec_free(&d);
    /* Every truncation is refused, and leaks nothing (ASan checks). */
    for (size_t n = 0; n < cbuf_avail(&b); n++)
        assert_int_equal(proto_get_exec(cbuf_head(&b), n, &d, NULL), -1);
    /* Trailing garbage is refused. */
    cbuf_append(&b, "z", 1);
    assert_int_equal(proto_get_exec(cbuf_head(&b), cbuf_avail(&b), &d, NULL), -1);
    cbuf_free(&b);
}

static void test_exec_timeout_bounded(void **state)
{
    proto_exec e = {.argv = (char *[]){"true", NULL}, .timeout_ms = PROTO_MAX_TIMEOUT_MS + 1};
    cbuf b;
    cbuf_init(&b);
    proto_put_exec(&b, &e);
    proto_exec d;
    cella_err err;
    assert_int_equal(proto_get_exec(cbuf_head(&b), cbuf_avail(&b), &d, &err), -1);
    assert_non_null(strstr(err.msg, "timeout"));
    cbuf_free(&b);
}

static void test_exec_empty_command(void **state)
{
    char *argv0[] = {NULL};
    char *argv1[] = {"", NULL};
    char **cases[] = {argv0, argv1};
    for (int i = 0; i < 2; i++) {
        proto_exec e = {.argv = cases[i]};
        cbuf b;
        cbuf_init(&b);
        proto_put_exec(&b, &e);
        proto_exec d;
        cella_err err;
        assert_int_equal(proto_get_exec(cbuf_head(&b), cbuf_avail(&b), &d, &err), -1);
        assert_non_null(strstr(err.msg, "empty command"));
        cbuf_free(&b);
    }
}

static void test_exit_roundtrip(void **state)
{
    proto_exit x = {.exit_code = -1, .signal = 9, .flags = EXIT_TIMED_OUT | EXIT_STDOUT_TRUNCATED,
                    .stdout_bytes = 1ull << 33, .stderr_bytes = 5, .duration_us = 123456,
                    .user_us = 1, .sys_us = 2, .max_rss_kb = 3, .error = "boom"};
    cbuf b;
    cbuf_init(&b);
    proto_put_exit(&b, &x);
    proto_exit d;
    assert_int_equal(proto_get_exit(cbuf_head(&b), cbuf_avail(&b), &d, NULL), 0);
    assert_int_equal(d.exit_code, -1);
    assert_int_equal(d.signal, 9);
    assert_int_equal(d.flags, EXIT_TIMED_OUT | EXIT_STDOUT_TRUNCATED);
    assert_true(d.stdout_bytes == 1ull << 33);
    assert_int_equal(d.duration_us, 123456);
    assert_string_equal(d.error, "boom");
    proto_exit_free(&d);
    for (size_t n = 0; n < cbuf_avail(&b); n++)
        assert_int_equal(proto_get_exit(cbuf_head(&b), n, &d, NULL), -1);
    cbuf_free(&b);
}

static void test_setup_roundtrip(void **state)
{
    proto_op ops[2] = {
        {.kind = OP_BIND, .flags = OPF_RDONLY, .fd_index = -1, .src = "/usr", .dest = "/usr"},
        {.kind = OP_FILE, .mode = 0644, .fd_index = -1, .dest = "/etc/hostname",
         .data = (uint8_t *)"box\n", .data_len = 4},
    };
    uint8_t bpf[16] = {1, 2, 3};
    proto_setup s = {.version = PROTO_VERSION, .flags = SETUP_ROOT_MAPPED, .hostname = "abc",
                     .uid = 1000, .gid = 1000, .rlimit_fsize = 1 << 30, .rlimit_nofile = 4096,
                     .bpf = bpf, .bpf_len = sizeof(bpf), .ops = ops, .n_ops = 2};
    cbuf b;
    cbuf_init(&b);
    proto_put_setup(&b, &s);
    proto_setup d;
    assert_int_equal(proto_get_setup(cbuf_head(&b), cbuf_avail(&b), &d, NULL), 0);
    assert_string_equal(d.hostname, "abc");
    assert_int_equal(d.n_ops, 2);
    assert_string_equal(d.ops[0].src, "/usr");
    assert_int_equal(d.ops[0].fd_index, -1);
    assert_int_equal(d.ops[1].data_len, 4);
    assert_memory_equal(d.ops[1].data, "box\n", 4);
    assert_int_equal(d.bpf_len, sizeof(bpf));
    proto_setup_free(&d);
    for (size_t n = 0; n < cbuf_avail(&b); n++)
        assert_int_equal(proto_get_setup(cbuf_head(&b), n, &d, NULL), -1);
    cbuf_free(&b);
}

static void test_setup_rejects_bad_ops(void **state)
{
    proto_op bad[3] = {{.kind = 0, .dest = "/x"},
                       {.kind = OP_KIND_MAX, .dest = "/x"},
                       {.kind = OP_DIR, .dest = ""}};
    for (int i = 0; i < 3; i++) {
        proto_setup s = {.version = PROTO_VERSION, .hostname = "h", .ops = &bad[i], .n_ops = 1};
        cbuf b;
        cbuf_init(&b);
        proto_put_setup(&b, &s);
        proto_setup d;
        assert_int_equal(proto_get_setup(cbuf_head(&b), cbuf_avail(&b), &d, NULL), -1);
        cbuf_free(&b);
    }
}

static void test_error_and_static_fail(void **state)
{
    proto_error e = {.code = PERR_BUSY, .errnum = 11, .message = "too many"};
    cbuf b;
    cbuf_init(&b);
    proto_put_error(&b, &e);
    proto_error d;
    assert_int_equal(proto_get_error(cbuf_head(&b), cbuf_avail(&b), &d, NULL), 0);
    assert_int_equal(d.code, PERR_BUSY);
    assert_int_equal(d.errnum, 11);
    assert_string_equal(d.message, "too many");
    proto_error_free(&d);
    cbuf_free(&b);

    /* The allocation-free encoder used between clone and exec decodes alike. */
    uint8_t frame[64];
    size_t n = proto_encode_fail_static(frame, sizeof(frame), 2, "exec the agent: a long message");
    assert_true(n > PROTO_HDR_SIZE && n <= sizeof(frame));
    cbuf in;
    cbuf_init(&in);
    cbuf_append(&in, frame, n);
    proto_hdr h;
    const uint8_t *p;
    assert_int_equal(proto_peek_frame(&in, &h, &p, NULL), 1);
    assert_int_equal(h.type, PROTO_FAIL);
    assert_int_equal(proto_get_error(p, h.len, &d, NULL), 0);
    assert_int_equal(d.errnum, 2);
    assert_int_equal(d.code, PERR_SETUP);
    assert_true(strncmp(d.message, "exec the agent", 14) == 0);   /* cut to fit */
    proto_error_free(&d);
    cbuf_free(&in);
    assert_int_equal(proto_encode_fail_static(frame, 10, 2, "x"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frame_peek),
        cmocka_unit_test(test_frame_bad_header),
        cmocka_unit_test(test_begin_end_survives_compaction),
        cmocka_unit_test(test_reserve_commit),
        cmocka_unit_test(test_exec_roundtrip),
        cmocka_unit_test(test_exec_empty_command),
        cmocka_unit_test(test_exec_timeout_bounded),
        cmocka_unit_test(test_exit_roundtrip),
        cmocka_unit_test(test_setup_roundtrip),
        cmocka_unit_test(test_setup_rejects_bad_ops),
        cmocka_unit_test(test_error_and_static_fail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
