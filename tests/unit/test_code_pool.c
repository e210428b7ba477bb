/* Code mode's service: the frame codec (core/code_wire.c), and the worker
 * pool (core/code_pool*.c) driving real worker processes under their real
 * seccomp filter, with a fake interpreter (code_fake_run.c, whose little
 * command language is described there) in place of code_run.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "core/code_pool.h"
#include "core/code_wire.h"
#include "core/code_worker.h"
#include "util/alloc.h"
#include "util/fdio.h"

/* ---- the codec ----------------------------------------------------------- */

static void roundtrip(const code_wire_msg *m, code_wire_msg *out, cbuf *b)
{
    cbuf_init(b);
    assert_int_equal(code_wire_encode(m, b), 0);
    uint32_t len;
    memcpy(&len, cbuf_head(b), 4);
    assert_int_equal(len, cbuf_avail(b) - 4);
    const char *why = NULL;
    assert_int_equal(code_wire_decode(cbuf_head(b) + 4, len, out, &why), 0);
}

static void test_wire_run(void **state)
{
    code_input in[2] = {{"x", "1"}, {"name", "{\"$tuple\":[1,2]}"}};
    const char *fn[2] = {"fetch", "store"};
    code_wire_msg m = {.type = CW_RUN, .handle = 7, .code = {"a\0b", 3}, .inputs = in,
                       .ninputs = 2, .functions = fn, .nfunctions = 2, .has_functions = true,
                       .limits = {1000, 2000, 3, 4, 5, 6}, .top_level_await = true,
                       .out_max = 99};
    code_wire_msg d;
    cbuf b;
    roundtrip(&m, &d, &b);
    assert_int_equal(d.type, CW_RUN);
    assert_int_equal(d.handle, 7);
    assert_int_equal(d.code.n, 3);
    assert_memory_equal(d.code.p, "a\0b", 3);
    assert_int_equal(d.ninputs, 2);
    assert_string_equal(d.inputs[1].name, "name");
    assert_string_equal(d.inputs[1].json, "{\"$tuple\":[1,2]}");
    assert_int_equal(d.nfunctions, 2);
    assert_string_equal(d.functions[1], "store");
    assert_true(d.has_functions && d.top_level_await);
    assert_int_equal(d.limits.max_time_us, 1000);
    assert_int_equal(d.limits.max_nesting, 6);
    assert_int_equal(d.out_max, 99);
    code_wire_msg_free(&d);
    cbuf_free(&b);
}

/* A LOAD carries the run's limits with its bytes. */
static void test_wire_load(void **state)
{
    code_wire_msg m = {.type = CW_LOAD, .handle = 2, .bytes = {"dump", 4},
                       .limits = {1000, 2000, 3, 4, 5, 6}, .out_max = 9};
    code_wire_msg d;
    cbuf b;
    roundtrip(&m, &d, &b);
    assert_int_equal(d.type, CW_LOAD);
    assert_int_equal(d.bytes.n, 4);
    assert_int_equal(d.limits.max_time_us, 1000);
    assert_int_equal(d.limits.max_bytes, 2000);
    assert_int_equal(d.limits.max_allocs, 3);
    assert_int_equal(d.limits.max_depth, 4);
    assert_int_equal(d.limits.max_calls, 5);
    assert_int_equal(d.limits.max_nesting, 6);
    code_wire_msg_free(&d);
    cbuf_free(&b);
}

static void test_wire_resume_and_step(void **state)
{
    code_result res[2] = {{1, "[1]", NULL, NULL}, {2, NULL, "KeyError", "nope"}};
    code_wire_msg m = {.type = CW_RESUME, .handle = 3, .results = res, .nresults = 2};
    code_wire_msg d;
    cbuf b;
    roundtrip(&m, &d, &b);
    assert_int_equal(d.nresults, 2);
    assert_string_equal(d.results[0].value_json, "[1]");
    assert_null(d.results[0].exc_type);
    assert_string_equal(d.results[1].exc_type, "KeyError");
    assert_string_equal(d.results[1].exc_message, "nope");
    code_wire_msg_free(&d);
    cbuf_free(&b);

    code_hostcall calls[1] = {{5, "fetch", "[1, 2]", "{\"k\": 1}"}};
    uint64_t pending[2] = {4, 5};
    code_step st = {.kind = CODE_STEP_CALL, .calls = calls, .ncalls = 1, .pending = pending,
                    .npending = 2, .out = "hello world", .out_len = 11, .duration_us = 12};
    code_wire_msg s;
    code_wire_from_step(&s, &st, false, 5);
    roundtrip(&s, &d, &b);
    code_wire_msg_free(&s);
    assert_int_equal(d.kind, CODE_STEP_CALL);
    assert_false(d.done);
    assert_int_equal(d.ncalls, 1);
    assert_int_equal(d.calls[0].id, 5);
    assert_string_equal(d.calls[0].function.p, "fetch");
    assert_string_equal(d.calls[0].kwargs_json.p, "{\"k\": 1}");
    assert_int_equal(d.npending, 2);
    assert_int_equal(d.pending[1], 5);
    assert_int_equal(d.out.n, 5);             /* cut at out_max */
    assert_true(d.out_truncated);
    assert_int_equal(d.duration_us, 12);
    code_wire_msg_free(&d);
    cbuf_free(&b);

    code_step er = {.kind = CODE_STEP_ERROR, .error = {"ZeroDivisionError", 3, 1, "division by zero"}};
    code_wire_from_step(&s, &er, true, 100);
    roundtrip(&s, &d, &b);
    code_wire_msg_free(&s);
    assert_true(d.done);
    assert_string_equal(d.err_type.p, "ZeroDivisionError");
    assert_string_equal(d.err_msg.p, "division by zero");
    assert_int_equal(d.err_line, 3);
    code_wire_msg_free(&d);
    cbuf_free(&b);
}

static int decode_bytes(const uint8_t *p, size_t n)
{
    code_wire_msg d;
    const char *why = NULL;
    int rc = code_wire_decode(p, n, &d, &why);
    if (rc == 0)
        code_wire_msg_free(&d);
    else
        assert_non_null(why);
    return rc;
}

static void test_wire_malformed(void **state)
{
    static const uint8_t empty[1] = {0};
    assert_int_equal(decode_bytes(empty, 0), -1);
    assert_int_equal(decode_bytes(empty, 1), -1);                       /* type 0 */
    static const uint8_t unknown_tag[] = {CW_OK, 99, 0, 0, 0, 0};
    assert_int_equal(decode_bytes(unknown_tag, sizeof(unknown_tag)), -1);
    static const uint8_t too_long[] = {CW_RUN, 2, 50, 0, 0, 0, 'a', 0};
    assert_int_equal(decode_bytes(too_long, sizeof(too_long)), -1);
    static const uint8_t no_nul[] = {CW_RUN, 2, 1, 0, 0, 0, 'a'};
    assert_int_equal(decode_bytes(no_nul, sizeof(no_nul)), -1);
    static const uint8_t short_num[] = {CW_RUN, 1, 4, 0, 0, 0, 1, 2, 3, 4};
    assert_int_equal(decode_bytes(short_num, sizeof(short_num)), -1);
    static const uint8_t half_header[] = {CW_RUN, 2, 1, 0};
    assert_int_equal(decode_bytes(half_header, sizeof(half_header)), -1);
    /* An input value before any name; a name with a NUL inside. */
    static const uint8_t orphan[] = {CW_RUN, 4, 2, 0, 0, 0, '1', 0};
    assert_int_equal(decode_bytes(orphan, sizeof(orphan)), -1);
    static const uint8_t nul_name[] = {CW_RUN, 3, 3, 0, 0, 0, 'a', 0, 0};
    assert_int_equal(decode_bytes(nul_name, sizeof(nul_name)), -1);
    /* A result with both a value and an exception; one with neither. */
    static const uint8_t both[] = {CW_RESUME, 15, 8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
                                   16, 2, 0, 0, 0, '1', 0, 17, 2, 0, 0, 0, 'E', 0};
    assert_int_equal(decode_bytes(both, sizeof(both)), -1);
    assert_int_equal(decode_bytes(both, 14), -1);
    assert_int_equal(decode_bytes(both, 21), 0);
}

/* Every single-byte change and every truncation of a valid frame decodes
 * or fails cleanly (the sanitizer build checks "cleanly"). */
static void test_wire_mutations(void **state)
{
    code_hostcall calls[2] = {{1, "f", "[1]", "{}"}, {2, "g", "[]", "{\"a\":[]}"}};
    uint64_t pending[2] = {1, 2};
    code_step st = {.kind = CODE_STEP_CALL, .calls = calls, .ncalls = 2, .pending = pending,
                    .npending = 2, .out = "out", .out_len = 3};
    code_wire_msg s;
    code_wire_from_step(&s, &st, false, 100);
    cbuf b;
    cbuf_init(&b);
    assert_int_equal(code_wire_encode(&s, &b), 0);
    code_wire_msg_free(&s);
    size_t n = cbuf_avail(&b) - 4;
    uint8_t *copy = malloc(n);
    for (size_t cut = 0; cut < n; cut++) {
        memcpy(copy, cbuf_head(&b) + 4, n);
        decode_bytes(copy, cut);
    }
    static const uint8_t vals[] = {0, 1, 0x7f, 0x80, 0xff};
    for (size_t i = 0; i < n; i++)
        for (size_t v = 0; v < sizeof(vals); v++) {
            memcpy(copy, cbuf_head(&b) + 4, n);
            copy[i] = vals[v];
            decode_bytes(copy, n);
        }
    free(copy);
    cbuf_free(&b);
}

static void test_wire_limits(void **state)
{
    /* A frame over the limit is refused by the encoder, leaving the buffer. */
    size_t big = CODE_WIRE_MAX_FRAME;
    char *code = malloc(big);
    memset(code, 'x', big);
    code_wire_msg m = {.type = CW_RUN, .code = {code, big}};
    cbuf b;
    cbuf_init(&b);
    cbuf_append(&b, "ab", 2);
    assert_int_equal(code_wire_encode(&m, &b), -1);
    assert_int_equal(cbuf_avail(&b), 2);
    cbuf_free(&b);
    free(code);
    /* A reader refuses a length prefix over its maximum. */
    int sv[2];
    assert_int_equal(pipe(sv), 0);
    uint8_t h[4] = {0xff, 0xff, 0xff, 0x7f};
    assert_int_equal(write(sv[1], h, 4), 4);
    cbuf in;
    cbuf_init(&in);
    assert_int_equal(code_wire_read(sv[0], &in, 1024, 0), -1);
    close(sv[1]);
    assert_int_equal(code_wire_read(sv[0], &in, 1024, 0), 1);   /* clean end */
    close(sv[0]);
    cbuf_free(&in);
}

/* ---- the worker's seccomp filter ---------------------------------------------- */

enum { ACT_OK, ACT_GETPID, ACT_X32, ACT_WRITE_STDOUT, ACT_EXEC_MMAP, ACT_EXEC_MPROTECT,
       ACT_OPENAT, ACT_SOCKET, ACT_FORK, ACT_READ_OTHER };

/* In a child under the filter: does action; exits 0 if it returned. */
static int under_filter(int action)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 || dup2(sv[0], CODE_WORKER_FD) < 0)
            _exit(90);
        struct sock_fprog prog = {
            .len = (unsigned short)(code_seccomp_bpf_len / sizeof(struct sock_filter)),
            .filter = (struct sock_filter *)(uintptr_t)code_seccomp_bpf,
        };
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
            _exit(91);
        void *m;
        struct timespec ts;
        switch (action) {
        case ACT_OK:
            /* What the worker does: memory, the clock, its socket. */
            m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED || mprotect(m, 4096, PROT_NONE) < 0 || munmap(m, 1 << 20) < 0)
                _exit(92);
            free(malloc(10 << 20));
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
            if (write(CODE_WORKER_FD, "x", 1) != 1)
                _exit(93);
            break;
        case ACT_GETPID: syscall(SYS_getpid); break;
        case ACT_X32: syscall(0x40000000 | SYS_getpid); break;
        case ACT_WRITE_STDOUT: syscall(SYS_write, 1, "x", 1); break;
        case ACT_EXEC_MMAP:
            syscall(SYS_mmap, NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            break;
        case ACT_EXEC_MPROTECT: {
            m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            syscall(SYS_mprotect, m, 4096, PROT_READ | PROT_EXEC);
            break;
        }
        case ACT_OPENAT: syscall(SYS_openat, AT_FDCWD, "/etc/passwd", O_RDONLY); break;
        case ACT_SOCKET: syscall(SYS_socket, AF_INET, SOCK_STREAM, 0); break;
        case ACT_FORK: syscall(SYS_fork); break;
        case ACT_READ_OTHER: {
            char c;
            syscall(SYS_read, 0, &c, 1);
            break;
        }
        }
        syscall(SYS_exit_group, 0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return st;
}

static void test_seccomp_filter(void **state)
{
    int st = under_filter(ACT_OK);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    for (int a = ACT_GETPID; a <= ACT_READ_OTHER; a++) {
#ifdef CELLA_SANITIZE
        /* The sanitizer build's filter lets its runtime report (write, open,
         * getpid): those are checked in the normal build only. */
        if (a == ACT_GETPID || a == ACT_WRITE_STDOUT || a == ACT_OPENAT)
            continue;
#endif
        st = under_filter(a);
        if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGSYS)
            fail_msg("action %d was not killed by the filter (status %#x)", a, st);
    }
}

/* ---- the pool --------------------------------------------------------------- */

static code_pool *open_pool(unsigned workers, uint32_t queue_max, uint32_t max_paused,
                            uint64_t ttl_ms, uint64_t resident_ms)
{
    code_pool_opts o = {.exe = CODE_FAKE_WORKER, .workers = workers, .queue_max = queue_max,
                        .max_paused = max_paused, .ttl_ms = ttl_ms, .resident_ms = resident_ms,
                        .as_bytes = 512ull << 20, .out_max = 1 << 20, .node_key = 0x12345678};
    code_pool *p = NULL;
    cella_err err;
    if (code_pool_open(&o, &p, &err) < 0)
        fail_msg("code_pool_open: %s", err.msg);
    return p;
}

static int run(code_pool *p, const char *tenant, const char *code, uint64_t time_ms,
               code_answer *a, core_error *e)
{
    code_pool_run_req r = {.code = code, .code_len = strlen(code),
                           .limits = {.max_time_us = time_ms * 1000}};
    return code_pool_run(p, tenant, &r, a, e);
}

static int resume1(code_pool *p, const char *tenant, const char *id, uint64_t call_id,
                   const char *value, code_answer *a, core_error *e)
{
    code_result r = {call_id, value, value ? NULL : "KeyError", value ? NULL : "missing"};
    return code_pool_resume(p, tenant, id, &r, 1, a, e);
}

static void expect_complete(code_answer *a, const char *json)
{
    if (a->m.kind != CODE_STEP_COMPLETE)
        fail_msg("not complete: %s: %s", a->m.err_type.p ? a->m.err_type.p : "?",
                 a->m.err_msg.p ? a->m.err_msg.p : "?");
    assert_string_equal(a->m.result_json.p, json);
    assert_string_equal(a->run_id, "");
}

static void test_pool_complete_and_errors(void **state)
{
    code_pool *p = open_pool(2, 8, 16, 60000, 60000);
    code_answer a;
    core_error e;
    assert_int_equal(run(p, "t", "print hi\nresult 42", 1000, &a, &e), 0);
    expect_complete(&a, "42");
    assert_int_equal(a.m.out.n, 3);
    assert_string_equal(a.m.out.p, "hi\n");
    code_answer_free(&a);
    assert_int_equal(run(p, "t", "raise ZeroDivisionError division by zero", 1000, &a, &e), 0);
    assert_int_equal(a.m.kind, CODE_STEP_ERROR);
    assert_string_equal(a.m.err_type.p, "ZeroDivisionError");
    assert_string_equal(a.m.err_msg.p, "division by zero");
    assert_int_equal(a.m.err_line, 1);
    code_answer_free(&a);
    assert_int_equal(run(p, "t", "syntax error", 1000, &a, &e), 0);
    assert_string_equal(a.m.err_type.p, "SyntaxError");
    code_answer_free(&a);
    /* Executable memory is refused, not granted. */
    assert_int_equal(run(p, "t", "exec\nresult 1", 1000, &a, &e), 0);
    assert_true(a.m.kind == CODE_STEP_ERROR || !strcmp(a.m.out.p, "refused\n"));
    code_answer_free(&a);
    /* A syscall outside the filter kills the worker: an InternalError,
     * then the pool goes on with a new worker. */
    pid_t before = code_pool_worker_pid(p, 0) + code_pool_worker_pid(p, 1);
    assert_int_equal(run(p, "t", "syscall\nresult 1", 1000, &a, &e), 0);
    assert_int_equal(a.m.kind, CODE_STEP_ERROR);
    assert_string_equal(a.m.err_type.p, "InternalError");
    code_answer_free(&a);
    assert_int_equal(run(p, "t", "crash", 1000, &a, &e), 0);
    assert_string_equal(a.m.err_type.p, "InternalError");
    code_answer_free(&a);
    /* A result too big for a frame: MemoryError, and the worker lives on. */
    code_pool_stats s0;
    code_pool_get_stats(p, &s0);
    assert_int_equal(run(p, "t", "big 70", 5000, &a, &e), 0);
    assert_string_equal(a.m.err_type.p, "MemoryError");
    code_answer_free(&a);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(run(p, "t", "result [1, 2]", 1000, &a, &e), 0);
        expect_complete(&a, "[1, 2]");
        code_answer_free(&a);
    }
    code_pool_stats s;
    code_pool_get_stats(p, &s);
    assert_true(s.workers_replaced >= 2);
    assert_int_equal(s.workers_replaced, s0.workers_replaced);
    assert_int_not_equal(before, code_pool_worker_pid(p, 0) + code_pool_worker_pid(p, 1));
#ifndef CELLA_SANITIZE
    /* The address-space limit (not set under the sanitizers, whose shadow
     * memory needs terabytes): an allocation past it fails inside. */
    assert_int_equal(run(p, "t", "alloc 2048\nresult 1", 5000, &a, &e), 0);
    assert_int_equal(a.m.kind, CODE_STEP_ERROR);
    assert_string_equal(a.m.err_type.p, "MemoryError");
    code_answer_free(&a);
#endif
    code_pool_close(p);
}

static void test_pool_call_resume(void **state)
{
    code_pool *p = open_pool(1, 8, 16, 60000, 60000);
    code_answer a;
    core_error e;
    assert_int_equal(run(p, "t", "print before\ncall fetch [1, \"x\"]\nprint after\nresult $last",
                         1000, &a, &e), 0);
    assert_int_equal(a.m.kind, CODE_STEP_CALL);
    assert_int_equal(a.m.ncalls, 1);
    assert_string_equal(a.m.calls[0].function.p, "fetch");
    assert_string_equal(a.m.calls[0].args_json.p, "[1, \"x\"]");
    assert_string_equal(a.m.out.p, "before\n");
    char id[64];
    snprintf(id, sizeof(id), "%s", a.run_id);
    assert_int_equal(strlen(id), 36);
    uint64_t call = a.m.calls[0].id;
    code_answer_free(&a);
    /* Another tenant's run is unknown; a call id that is not pending is refused. */
    assert_int_equal(resume1(p, "other", id, call, "1", &a, &e), -1);
    assert_int_equal(e.code, S500);
    code_answer_free(&a);
    assert_int_equal(resume1(p, "t", id, call + 5, "1", &a, &e), -1);
    assert_int_equal(e.code, S001);
    code_answer_free(&a);
    assert_int_equal(resume1(p, "t", id, call, "{\"v\": 7}", &a, &e), 0);
    expect_complete(&a, "{\"v\": 7}");
    assert_string_equal(a.m.out.p, "after\n");
    code_answer_free(&a);
    /* It ended: resuming it again is S500. */
    assert_int_equal(resume1(p, "t", id, call, "1", &a, &e), -1);
    assert_int_equal(e.code, S500);
    code_answer_free(&a);
    /* An exception as the answer. */
    assert_int_equal(run(p, "t", "call f []\nresult $last", 1000, &a, &e), 0);
    snprintf(id, sizeof(id), "%s", a.run_id);
    call = a.m.calls[0].id;
    code_answer_free(&a);
    assert_int_equal(resume1(p, "t", id, call, NULL, &a, &e), 0);
    assert_string_equal(a.m.err_type.p, "KeyError");
    code_answer_free(&a);
    code_pool_close(p);
}

static void test_pool_gather(void **state)
{
    code_pool *p = open_pool(1, 8, 16, 60000, 60000);
    code_answer a;
    core_error e;
    assert_int_equal(run(p, "t", "gather 3 f\nresult $last", 1000, &a, &e), 0);
    assert_int_equal(a.m.ncalls, 3);
    assert_int_equal(a.m.npending, 3);
    char id[64];
    snprintf(id, sizeof(id), "%s", a.run_id);
    code_answer_free(&a);
    code_result two[2] = {{1, "1", NULL, NULL}, {3, "3", NULL, NULL}};
    assert_int_equal(code_pool_resume(p, "t", id, two, 2, &a, &e), 0);
    assert_int_equal(a.m.kind, CODE_STEP_CALL);
    assert_int_equal(a.m.ncalls, 0);
    assert_int_equal(a.m.npending, 1);
    assert_int_equal(a.m.pending[0], 2);
    code_answer_free(&a);
    /* Answering the same call twice in one request is refused. */
    code_result dup[2] = {{2, "1", NULL, NULL}, {2, "2", NULL, NULL}};
    assert_int_equal(code_pool_resume(p, "t", id, dup, 2, &a, &e), -1);
    assert_int_equal(e.code, S001);
    code_answer_free(&a);
    assert_int_equal(resume1(p, "t", id, 2, "22", &a, &e), 0);
    expect_complete(&a, "22");
    code_answer_free(&a);
    code_pool_close(p);
}

/* One worker: a second run needs it, so the paused run is dumped into the
 * daemon, and its resume loads it into the worker again. */
static void test_pool_evict_and_load(void **state)
{
    code_pool *p = open_pool(1, 8, 16, 60000, 60000);
    code_answer a;
    core_error e;
    assert_int_equal(run(p, "t", "call f [1]\nprint resumed\nresult $last", 1000, &a, &e), 0);
    char id[64];
    snprintf(id, sizeof(id), "%s", a.run_id);
    code_answer_free(&a);
    assert_int_equal(run(p, "t", "result 5", 1000, &a, &e), 0);
    expect_complete(&a, "5");
    code_answer_free(&a);
    code_pool_stats s;
    code_pool_get_stats(p, &s);
    assert_int_equal(s.runs_dumped, 1);
    assert_true(s.dumped_bytes > 0);
    assert_int_equal(resume1(p, "t", id, 1, "\"back\"", &a, &e), 0);
    expect_complete(&a, "\"back\"");
    assert_string_equal(a.m.out.p, "resumed\n");
    code_answer_free(&a);
    code_pool_get_stats(p, &s);
    assert_int_equal(s.runs_dumped + s.runs_resident, 0);
    assert_int_equal(s.dumped_bytes, 0);
    /* A run that cannot be dumped is lost when its worker is needed. */
    assert_int_equal(run(p, "t", "call f [1]\nresult $last\nnodump", 1000, &a, &e), 0);
    snprintf(id, sizeof(id), "%s", a.run_id);
    code_answer_free(&a);
    assert_int_equal(run(p, "t", "result 6", 1000, &a, &e), 0);
    code_answer_free(&a);
    assert_int_equal(resume1(p, "t", id, 1, "1", &a, &e), -1);
    assert_int_equal(e.code, S502);
    code_answer_free(&a);
    code_pool_close(p);
}

/* A run moved out of its worker and loaded into another gets the limits the
 * API gave it with the LOAD (each default made explicit), whatever its dump
 * says: the fake reports the limits its host passed. */
static void test_pool_load_carries_limits(void **state)
{
    code_pool *p = open_pool(1, 8, 16, 60000, 60000);
    code_answer a;
    core_error e;
    code_pool_run_req req = {.code = "call f [1]\nlimits", .code_len = 17,
                             .limits = {.max_time_us = 2000000, .max_bytes = 5u << 20,
                                        .max_depth = 50}};
    assert_int_equal(code_pool_run(p, "t", &req, &a, &e), 0);
    char id[64];
    snprintf(id, sizeof(id), "%s", a.run_id);
    assert_true(id[0]);
    code_answer_free(&a);
    assert_int_equal(run(p, "t", "result 5", 1000, &a, &e), 0);   /* evicts it */
    code_answer_free(&a);
    code_pool_stats s;
    code_pool_get_stats(p, &s);
    assert_int_equal(s.runs_dumped, 1);
    assert_int_equal(resume1(p, "t", id, 1, "1", &a, &e), 0);
    expect_complete(&a, "[2000000,5242880,0,50,10000,200]");
    code_answer_free(&a);
    code_pool_close(p);
}

static void test_pool_expiry_and_idle_dump(void **state)
{
    code_pool *p = open_pool(1, 8, 16, 800, 100);
    code_answer a;
    core_error e;
    assert_int_equal(run(p, "t", "call f [1]\nresult $last", 1000, &a, &e), 0);
    char id[64];
    snprintf(id, sizeof(id), "%s", a.run_id);
    code_answer_free(&a);
    /* Idle past resident_ms: moved out of its worker, still resumable. */
    usleep(500 * 1000);
    code_pool_stats s;
    code_pool_get_stats(p, &s);
    assert_int_equal(s.runs_dumped, 1);
    assert_int_equal(resume1(p, "t", id, 1, "[1]", &a, &e), -1 + 1);
    expect_complete(&a, "[1]");
    code_answer_free(&a);
    /* Idle past ttl_ms: gone, and the answer says it expired. */
    assert_int_equal(run(p, "t", "call f [1]\nresult $last", 1000, &a, &e), 0);
    snprintf(id, sizeof(id), "%s", a.run_id);
    code_answer_free(&a);
    usleep(1500 * 1000);
    assert_int_equal(resume1(p, "t", id, 1, "1", &a, &e), -1);
    assert_int_equal(e.code, S500);
    assert_non_null(strstr(e.message, "expired"));
    code_answer_free(&a);
    code_pool_get_stats(p, &s);
    assert_int_equal(s.runs_dumped + s.runs_resident, 0);
    code_pool_close(p);
}

static void test_pool_timeout(void **state)
{
    code_pool *p = open_pool(1, 8, 16, 60000, 60000);
    code_answer a;
    core_error e;
    int64_t t0 = clock_now_ns();
    assert_int_equal(run(p, "t", "spin", 200, &a, &e), 0);
    int64_t took_ms = (clock_now_ns() - t0) / 1000000;
    assert_string_equal(a.m.err_type.p, "TimeoutError");
    assert_true(took_ms < 200 + 100 + 1000 + 2000);   /* the deadline, with slack for load */
    code_answer_free(&a);
    assert_int_equal(run(p, "t", "result 1", 1000, &a, &e), 0);
    expect_complete(&a, "1");
    code_answer_free(&a);
    code_pool_close(p);
}

/* A worker killed while it holds a paused run: the run is lost (S502), the
 * worker replaced, and nothing else notices. */
static void test_pool_idle_worker_killed(void **state)
{
    code_pool *p = open_pool(1, 8, 16, 60000, 60000);
    code_answer a;
    core_error e;
    assert_int_equal(run(p, "t", "call f [1]\nresult $last", 1000, &a, &e), 0);
    char id[64];
    snprintf(id, sizeof(id), "%s", a.run_id);
    code_answer_free(&a);
    pid_t pid = code_pool_worker_pid(p, 0);
    assert_int_equal(kill(pid, SIGKILL), 0);
    while (code_pool_worker_pid(p, 0) == pid || code_pool_worker_pid(p, 0) == 0)
        usleep(10 * 1000);
    assert_int_equal(resume1(p, "t", id, 1, "1", &a, &e), -1);
    assert_int_equal(e.code, S502);
    code_answer_free(&a);
    assert_int_equal(run(p, "t", "result 1", 1000, &a, &e), 0);
    expect_complete(&a, "1");
    code_answer_free(&a);
    code_pool_close(p);
}

typedef struct spin_arg {
    code_pool *p;
    int rc;
} spin_arg;

static void *spin_thread(void *arg)
{
    spin_arg *s = arg;
    code_answer a;
    core_error e;
    s->rc = run(s->p, "t", "spin", 300, &a, &e);
    code_answer_free(&a);
    return NULL;
}

static void test_pool_limits(void **state)
{
    /* No queue: while the only worker spins, another request is S301. */
    code_pool *p = open_pool(1, 0, 1, 60000, 60000);
    spin_arg s = {p, -2};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, spin_thread, &s), 0);
    code_pool_stats st;
    do {
        usleep(10 * 1000);
        code_pool_get_stats(p, &st);
    } while (!st.workers_busy);
    code_answer a;
    core_error e;
    assert_int_equal(run(p, "t", "result 1", 1000, &a, &e), -1);
    assert_int_equal(e.code, S301);
    code_answer_free(&a);
    pthread_join(th, NULL);
    assert_int_equal(s.rc, 0);
    /* The killed worker is replaced (by the pool's thread or the next request). */
    do {
        usleep(10 * 1000);
        code_pool_get_stats(p, &st);
    } while (st.workers_busy || !st.workers_alive);
    /* One paused run at most. */
    assert_int_equal(run(p, "t", "call f []\nresult 1", 1000, &a, &e), 0);
    assert_int_equal(a.m.kind, CODE_STEP_CALL);
    code_answer_free(&a);
    assert_int_equal(run(p, "t", "call f []\nresult 1", 1000, &a, &e), -1);
    assert_int_equal(e.code, S400);
    code_answer_free(&a);
    code_pool_close(p);
    /* A tenant's own cap: two each, whatever the others hold. */
    code_pool_opts o = {.exe = CODE_FAKE_WORKER, .workers = 1, .queue_max = 8, .max_paused = 16,
                        .max_paused_per_tenant = 2, .ttl_ms = 60000, .resident_ms = 60000,
                        .as_bytes = 512ull << 20, .out_max = 1 << 20, .node_key = 1};
    cella_err err;
    assert_int_equal(code_pool_open(&o, &p, &err), 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(run(p, "a", "call f []\nresult 1", 1000, &a, &e), i < 2 ? 0 : -1);
        code_answer_free(&a);
    }
    assert_int_equal(e.code, S400);
    assert_non_null(strstr(e.message, "per_tenant"));
    assert_int_equal(run(p, "b", "call f []\nresult 1", 1000, &a, &e), 0);
    assert_int_equal(a.m.kind, CODE_STEP_CALL);
    code_answer_free(&a);
    /* Draining refuses new work. */
    code_pool_drain(p);
    assert_int_equal(run(p, "t", "result 1", 1000, &a, &e), -1);
    assert_int_equal(e.code, S301);
    code_answer_free(&a);
    code_pool_close(p);
}

typedef struct stress_arg {
    code_pool *p;
    int idx;
    int failures;
    char why[600];
} stress_arg;

/* Each thread pauses runs and resumes them later, out of order, while the
 * others do the same: with two workers, runs are dumped and loaded all the
 * time. Every answer must be the right one. */
static void *stress_thread(void *arg)
{
    stress_arg *s = arg;
    char tenant[16];
    snprintf(tenant, sizeof(tenant), "t%d", s->idx % 3);
    for (int round = 0; round < 10; round++) {
        char ids[3][64];
        for (int k = 0; k < 3; k++) {
            char code[64];
            snprintf(code, sizeof(code), "call f [%d]\nresult $last", k);
            code_answer a;
            core_error e;
            if (run(s->p, tenant, code, 2000, &a, &e) < 0 || a.m.kind != CODE_STEP_CALL) {
                snprintf(s->why, sizeof(s->why), "run: %.500s", e.message);
                s->failures++;
                ids[k][0] = '\0';
            } else {
                snprintf(ids[k], sizeof(ids[k]), "%s", a.run_id);
            }
            code_answer_free(&a);
        }
        for (int k = 2; k >= 0; k--) {
            if (!ids[k][0])
                continue;
            char v[32];
            snprintf(v, sizeof(v), "%d", s->idx * 100 + k);
            code_answer a;
            core_error e;
            if (resume1(s->p, tenant, ids[k], 1, v, &a, &e) < 0) {
                snprintf(s->why, sizeof(s->why), "resume: %.500s", e.message);
                s->failures++;
            } else if (a.m.kind != CODE_STEP_COMPLETE || strcmp(a.m.result_json.p, v) != 0) {
                snprintf(s->why, sizeof(s->why), "resume answered %.500s", a.m.result_json.p ? a.m.result_json.p : a.m.err_msg.p);
                s->failures++;
            }
            code_answer_free(&a);
        }
    }
    return NULL;
}

static void test_pool_stress(void **state)
{
    code_pool *p = open_pool(2, 64, 256, 60000, 50);
    stress_arg args[8];
    pthread_t th[8];
    for (int i = 0; i < 8; i++) {
        args[i] = (stress_arg){.p = p, .idx = i};
        assert_int_equal(pthread_create(&th[i], NULL, stress_thread, &args[i]), 0);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        if (args[i].failures)
            fail_msg("thread %d: %d failures, the last: %s", i, args[i].failures, args[i].why);
    }
    code_pool_stats st;
    code_pool_get_stats(p, &st);
    assert_int_equal(st.runs_dumped + st.runs_resident, 0);
    assert_int_equal(st.dumped_bytes, 0);
    assert_int_equal(st.workers_replaced, 0);
    code_pool_close(p);
}

/* Two resumes of one run at once: one answers, the other is S501 (or, if
 * it came second, S500: the run had ended). */
typedef struct race_arg {
    code_pool *p;
    const char *id;
    int rc;
    core_code code;
} race_arg;

static void *race_thread(void *arg)
{
    race_arg *r = arg;
    code_answer a;
    core_error e = {0};
    r->rc = resume1(r->p, "t", r->id, 1, "1", &a, &e);
    r->code = r->rc < 0 ? e.code : S_OK;
    code_answer_free(&a);
    return NULL;
}

static void test_pool_concurrent_resume(void **state)
{
    code_pool *p = open_pool(2, 8, 16, 60000, 60000);
    int busy = 0;
    for (int i = 0; i < 20; i++) {
        code_answer a;
        core_error e;
        assert_int_equal(run(p, "t", "call f []\nbusy 50\nresult 1", 1000, &a, &e), 0);
        char id[64];
        snprintf(id, sizeof(id), "%s", a.run_id);
        code_answer_free(&a);
        race_arg r[2] = {{p, id, 0, S_OK}, {p, id, 0, S_OK}};
        pthread_t th[2];
        for (int k = 0; k < 2; k++)
            pthread_create(&th[k], NULL, race_thread, &r[k]);
        for (int k = 0; k < 2; k++)
            pthread_join(th[k], NULL);
        int ok = (r[0].rc == 0) + (r[1].rc == 0);
        assert_int_equal(ok, 1);
        core_code other = r[0].rc == 0 ? r[1].code : r[0].code;
        assert_true(other == S501 || other == S500);
        busy += other == S501;
    }
    assert_true(busy > 0);
    code_pool_close(p);
}

/* Workers that cannot start: requests hear why (S302) at once, not after
 * the queue's wait. */
static void test_pool_cannot_start(void **state)
{
    code_pool_opts o = {.exe = "/nonexistent/cella", .workers = 1, .queue_max = 8,
                        .max_paused = 1, .ttl_ms = 1000, .resident_ms = 1000};
    code_pool *p = NULL;
    cella_err err;
    assert_int_equal(code_pool_open(&o, &p, &err), 0);
    code_answer a;
    core_error e;
    assert_int_equal(run(p, "t", "result 1", 1000, &a, &e), -1);
    assert_int_equal(e.code, S302);
    assert_non_null(strstr(e.message, "no code worker can be started"));
    code_answer_free(&a);
    code_pool_close(p);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wire_run),
        cmocka_unit_test(test_wire_load),
        cmocka_unit_test(test_wire_resume_and_step),
        cmocka_unit_test(test_wire_malformed),
        cmocka_unit_test(test_wire_mutations),
        cmocka_unit_test(test_wire_limits),
        cmocka_unit_test(test_seccomp_filter),
        cmocka_unit_test(test_pool_complete_and_errors),
        cmocka_unit_test(test_pool_call_resume),
        cmocka_unit_test(test_pool_gather),
        cmocka_unit_test(test_pool_evict_and_load),
        cmocka_unit_test(test_pool_expiry_and_idle_dump),
        cmocka_unit_test(test_pool_timeout),
        cmocka_unit_test(test_pool_idle_worker_killed),
        cmocka_unit_test(test_pool_limits),
        cmocka_unit_test(test_pool_load_carries_limits),
        cmocka_unit_test(test_pool_cannot_start),
        cmocka_unit_test(test_pool_stress),
        cmocka_unit_test(test_pool_concurrent_resume),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
