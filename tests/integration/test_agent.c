/* The agent protocol against a real sandbox: several commands at once,
 * stdin, signals, refusals (duplicate ids, malformed requests, the exec cap),
 * zombie reaping, and the sandbox dying under a running command. This is the
 * path the daemon will drive; `cella box` uses only one exec at a time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/builtin.h"
#include "agent/proto.h"
#include "agent/wire.h"
#include "box/box.h"
#include "box/run.h"
#include "box/workspace.h"
#include "util/alloc.h"
#include "util/rmtree.h"
#include "util/tar.h"

#define WAIT_MS 30000   /* bound on any one wait: a hang fails, never blocks CI */

static box_runtime *rt;
static char state[] = "/tmp/cella-agent-test-XXXXXX";

typedef struct frame {
    proto_hdr h;
    uint8_t *p;
} frame;

static int setup(void **st)
{
    if (geteuid() != 0) {
        fprintf(stderr, "test_agent needs root\n");
        return -1;
    }
    assert_non_null(mkdtemp(state));
    box_runtime_opts o = {.state_dir = state};
    cella_err err;
    if (box_runtime_open(&o, &rt, &err) < 0) {
        fprintf(stderr, "runtime: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static int teardown(void **st)
{
    box_runtime_close(rt);
    rmtree_at(AT_FDCWD, state, NULL);
    return 0;
}

static box *start(char *ws, size_t wsn)
{
    int fd;
    cella_err err;
    assert_int_equal(workspace_create_temp(rt, ws, &fd, &err), 0);
    box_spec spec;
    box_spec_init(&spec);
    spec.workspace_dirfd = fd;
    box *b;
    if (box_create(rt, &spec, &b, &err) < 0)
        fail_msg("box_create: %s", err.msg);
    close(fd);
    return b;
}

static void stop(box *b, const char *ws)
{
    box_destroy(b);
    workspace_remove(rt, ws, NULL);
}

static void send_raw(box *b, uint16_t type, uint16_t flags, uint32_t id, const void *p, size_t n)
{
    cbuf f;
    cbuf_init(&f);
    proto_put_frame(&f, type, flags, id, p, n);
    assert_int_equal(box_send(b, cbuf_head(&f), cbuf_avail(&f), NULL), 0);
    cbuf_free(&f);
}

static void send_req(box *b, uint32_t id, const proto_exec *e)
{
    cbuf f;
    cbuf_init(&f);
    proto_put_exec(&f, e);
    send_raw(b, PROTO_EXEC, 0, id, cbuf_head(&f), cbuf_avail(&f));
    cbuf_free(&f);
}

static void send_exec(box *b, uint32_t id, char **argv, uint32_t flags)
{
    proto_exec e = {.argv = argv, .cwd = "", .stdout_cap = 1 << 20, .stderr_cap = 1 << 20,
                    .flags = flags};
    send_req(b, id, &e);
}

/* Next frame of any kind other than STARTED/STDIN_ACK/LOG; false at EOF. */
static bool next(box *b, frame *out)
{
    for (;;) {
        const uint8_t *p;
        int got = proto_peek_frame(&b->in, &out->h, &p, NULL);
        assert_true(got >= 0);
        if (got) {
            out->p = cella_malloc(out->h.len + 1);
            memcpy(out->p, p, out->h.len);
            cbuf_consume(&b->in, PROTO_HDR_SIZE + out->h.len);
            if (out->h.type == PROTO_STARTED || out->h.type == PROTO_STDIN_ACK ||
                out->h.type == PROTO_LOG) {
                cella_free(out->p);
                continue;
            }
            return true;
        }
        struct pollfd pf = {.fd = b->sock, .events = POLLIN};
        int pr = poll(&pf, 1, WAIT_MS);
        assert_true(pr > 0);  /* a hang fails the test */
        ssize_t n = box_recv(b, NULL);
        assert_true(n >= 0);
        if (n == 0)
            return false;
    }
}

/* Collects one exec's output until its EXIT (or ERROR). */
static uint16_t wait_exec(box *b, uint32_t id, char *out, size_t outn, proto_exit *x)
{
    size_t used = 0;
    frame f;
    while (next(b, &f)) {
        uint16_t type = f.h.type;
        if (f.h.id == id && type == PROTO_OUTPUT && f.h.flags == PROTO_STREAM_STDOUT && out) {
            size_t k = f.h.len < outn - 1 - used ? f.h.len : outn - 1 - used;
            memcpy(out + used, f.p, k);
            used += k;
            out[used] = '\0';
        }
        if (f.h.id == id && type == PROTO_EXIT && x)
            assert_int_equal(proto_get_exit(f.p, f.h.len, x, NULL), 0);
        cella_free(f.p);
        if (f.h.id == id && (type == PROTO_EXIT || type == PROTO_ERROR))
            return type;
    }
    fail_msg("the agent went away while exec %u was pending", id);
    return 0;
}

static uint32_t expect_error(box *b, uint32_t id)
{
    frame f;
    assert_true(next(b, &f));
    assert_int_equal(f.h.type, PROTO_ERROR);
    assert_int_equal(f.h.id, id);
    proto_error pe;
    assert_int_equal(proto_get_error(f.p, f.h.len, &pe, NULL), 0);
    uint32_t code = pe.code;
    proto_error_free(&pe);
    cella_free(f.p);
    return code;
}

static void test_commands_run_concurrently(void **st)
{
    char ws[32];
    box *b = start(ws, sizeof(ws));
    /* 1 waits for stdin we have not sent; 2 must still finish first. */
    send_exec(b, 1, (char *[]){"cat", NULL}, EXEC_STDIN);
    send_exec(b, 2, (char *[]){"echo", "two", NULL}, 0);
    char out[64];
    proto_exit x;
    assert_int_equal(wait_exec(b, 2, out, sizeof(out), &x), PROTO_EXIT);
    assert_string_equal(out, "two\n");
    assert_int_equal(x.exit_code, 0);
    proto_exit_free(&x);
    send_raw(b, PROTO_STDIN, 0, 1, "one\n", 4);
    send_raw(b, PROTO_STDIN, PROTO_STDIN_EOF, 1, NULL, 0);
    assert_int_equal(wait_exec(b, 1, out, sizeof(out), &x), PROTO_EXIT);
    assert_string_equal(out, "one\n");
    proto_exit_free(&x);
    stop(b, ws);
}

static void test_refusals_keep_the_agent_serving(void **st)
{
    char ws[32];
    box *b = start(ws, sizeof(ws));
    send_exec(b, 7, (char *[]){"cat", NULL}, EXEC_STDIN);
    send_exec(b, 7, (char *[]){"true", NULL}, 0);
    assert_int_equal(expect_error(b, 7), PERR_DUPLICATE_ID);
    send_raw(b, PROTO_EXEC, 0, 8, "\x01\x02\x03", 3);            /* malformed */
    assert_int_equal(expect_error(b, 8), PERR_BAD_REQUEST);
    proto_exec bad_env = {.argv = (char *[]){"true", NULL}, .env = (char *[]){"1X=y", NULL}};
    send_req(b, 9, &bad_env);
    assert_int_equal(expect_error(b, 9), PERR_BAD_REQUEST);
    send_raw(b, PROTO_READY, 0, 10, NULL, 0);                     /* wrong direction */
    assert_int_equal(expect_error(b, 10), PERR_BAD_REQUEST);
    /* Signals for unknown execs and out-of-range signals are ignored. */
    uint8_t sig[4] = {0xff, 0, 0, 0};
    send_raw(b, PROTO_SIGNAL, 0, 7, sig, 4);
    send_raw(b, PROTO_SIGNAL, 0, 999, sig, 4);
    send_raw(b, PROTO_STDIN, PROTO_STDIN_EOF, 7, NULL, 0);
    proto_exit x;
    assert_int_equal(wait_exec(b, 7, NULL, 0, &x), PROTO_EXIT);
    assert_int_equal(x.exit_code, 0);
    proto_exit_free(&x);
    send_exec(b, 11, (char *[]){"echo", "still here", NULL}, 0);
    char out[64];
    assert_int_equal(wait_exec(b, 11, out, sizeof(out), NULL), PROTO_EXIT);
    assert_string_equal(out, "still here\n");
    stop(b, ws);
}

static void test_signal_and_not_started(void **st)
{
    char ws[32];
    box *b = start(ws, sizeof(ws));
    send_exec(b, 1, (char *[]){"sleep", "1000", NULL}, 0);
    uint8_t sig[4] = {SIGTERM, 0, 0, 0};
    send_raw(b, PROTO_SIGNAL, 0, 1, sig, 4);
    proto_exit x;
    assert_int_equal(wait_exec(b, 1, NULL, 0, &x), PROTO_EXIT);
    assert_int_equal(x.exit_code, -1);
    assert_int_equal(x.signal, SIGTERM);
    proto_exit_free(&x);
    proto_exec e = {.argv = (char *[]){"pwd", NULL}, .cwd = "/nonexistent"};
    send_req(b, 2, &e);
    assert_int_equal(wait_exec(b, 2, NULL, 0, &x), PROTO_EXIT);
    assert_true(x.flags & EXIT_NOT_STARTED);
    assert_non_null(strstr(x.error, "/nonexistent"));
    proto_exit_free(&x);
    stop(b, ws);
}

static void test_exec_cap(void **st)
{
    char ws[32];
    box *b = start(ws, sizeof(ws));
    for (uint32_t id = 1; id <= 64; id++)
        send_exec(b, id, (char *[]){"cat", NULL}, EXEC_STDIN);
    send_exec(b, 65, (char *[]){"true", NULL}, 0);
    assert_int_equal(expect_error(b, 65), PERR_BUSY);
    for (uint32_t id = 1; id <= 64; id++)
        send_raw(b, PROTO_STDIN, PROTO_STDIN_EOF, id, NULL, 0);
    /* They finish in any order: collect every EXIT. */
    bool done[65] = {false};
    int n = 0;
    frame f;
    while (n < 64 && next(b, &f)) {
        if (f.h.type == PROTO_EXIT) {
            assert_true(f.h.id >= 1 && f.h.id <= 64 && !done[f.h.id]);
            proto_exit x;
            assert_int_equal(proto_get_exit(f.p, f.h.len, &x, NULL), 0);
            assert_int_equal(x.exit_code, 0);
            proto_exit_free(&x);
            done[f.h.id] = true;
            n++;
        }
        cella_free(f.p);
    }
    assert_int_equal(n, 64);
    stop(b, ws);
}

static void test_orphans_are_reaped(void **st)
{
    char ws[32];
    box *b = start(ws, sizeof(ws));
    /* Orphans reparent to the agent (PID 1); none may stay a zombie. */
    send_exec(b, 1,
              (char *[]){"sh", "-c",
                         "for i in 1 2 3 4 5; do sh -c 'true &'; done; sleep 0.5; "
                         "grep -l '^State:.*Z' /proc/[0-9]*/status | wc -l",
                         NULL},
              0);
    char out[64];
    assert_int_equal(wait_exec(b, 1, out, sizeof(out), NULL), PROTO_EXIT);
    assert_string_equal(out, "0\n");
    stop(b, ws);
}

static void test_sandbox_dies_mid_exec(void **st)
{
    char ws[32];
    box *b = start(ws, sizeof(ws));
    send_exec(b, 1, (char *[]){"sleep", "1000", NULL}, 0);
    syscall(SYS_pidfd_send_signal, b->pidfd, SIGKILL, NULL, 0);
    frame f;
    bool got_exit = false;
    while (next(b, &f)) {
        got_exit |= f.h.type == PROTO_EXIT;
        cella_free(f.p);
    }
    assert_false(got_exit);          /* the caller learns it from EOF, not a fake result */
    stop(b, ws);                     /* and teardown still works */
}

static void test_stopped_starter_cannot_wedge_the_agent(void **st)
{
    char ws[32];
    box *b = start(ws, sizeof(ws));
    /* Sandboxed code stops every process it may signal, over and over:
     * a command between fork and exec included. */
    send_exec(b, 1,
              (char *[]){"sh", "-c",
                         /* kill -1 spares the caller and PID 1: all else stops */
                         "echo go; while :; do kill -STOP -1 2>/dev/null; done", NULL},
              0);
    frame f;
    bool going = false;
    while (!going && next(b, &f)) {
        going = f.h.type == PROTO_OUTPUT && f.h.id == 1;
        cella_free(f.p);
    }
    assert_true(going);
    proto_exec e = {.argv = (char *[]){"true", NULL}, .cwd = "", .timeout_ms = 1000,
                    .stdout_cap = 1 << 20, .stderr_cap = 1 << 20};
    send_req(b, 2, &e);
    /* The agent keeps answering: a refusal right away, and exec 2 ends (by
     * its timeout if it was caught stopped) instead of hanging the agent. */
    send_exec(b, 1, (char *[]){"true", NULL}, 0);
    bool refused = false, ended = false;
    while ((!refused || !ended) && next(b, &f)) {
        refused |= f.h.type == PROTO_ERROR && f.h.id == 1;
        ended |= f.h.type == PROTO_EXIT && f.h.id == 2;
        cella_free(f.p);
    }
    assert_true(refused && ended);
    stop(b, ws);
}

static void test_oversized_request_is_refused_before_sending(void **st)
{
    char ws[32];
    box *b = start(ws, sizeof(ws));
    size_t big = PROTO_MAX_PAYLOAD + 16;
    char *arg = cella_malloc(big + 1);
    memset(arg, 'x', big);
    arg[big] = '\0';
    proto_exec req = {.argv = (char *[]){"true", arg, NULL}, .cwd = ""};
    int null = open("/dev/null", O_RDWR);
    box_io io = {.stdin_fd = -1, .stdout_fd = null, .stderr_fd = null, .cancel_fd = -1};
    box_result res;
    cella_err err;
    assert_int_equal(box_run(b, 5, &req, &io, &res, &err), -1);
    assert_non_null(strstr(err.msg, "exceed"));
    cella_free(arg);
    close(null);
    /* The sandbox is still alive and serving. */
    send_exec(b, 6, (char *[]){"echo", "ok", NULL}, 0);
    char out[16];
    assert_int_equal(wait_exec(b, 6, out, sizeof(out), NULL), PROTO_EXIT);
    assert_string_equal(out, "ok\n");
    stop(b, ws);
}

static void test_stdin_overrun_closes_stdin(void **st)
{
    char ws[32];
    box *b = start(ws, sizeof(ws));
    send_exec(b, 3, (char *[]){"wc", "-c", NULL}, EXEC_STDIN);
    size_t n = (1u << 20) + 1;       /* one byte past the agent's window */
    uint8_t *p = cella_calloc(1, n);
    send_raw(b, PROTO_STDIN, PROTO_STDIN_EOF, 3, p, n);
    cella_free(p);
    char out[32];
    assert_int_equal(wait_exec(b, 3, out, sizeof(out), NULL), PROTO_EXIT);
    assert_string_equal(out, "0\n");   /* nothing half-delivered: stdin was ended */
    stop(b, ws);
}

/* EXEC_OUTPUT_WINDOW: with nothing acknowledged the agent sends one
 * window of stdout and no more; acknowledgements let the rest through. */
static void test_output_window(void **st)
{
    char ws[32];
    box *b = start(ws, sizeof(ws));
    proto_exec e = {.argv = (char *[]){"head", "-c", "5000000", "/dev/zero", NULL}, .cwd = "",
                    .stdout_cap = UINT64_MAX, .stderr_cap = 1 << 20,
                    .flags = EXEC_OUTPUT_WINDOW};
    send_req(b, 4, &e);
    uint64_t got = 0;
    frame f;
    /* Take what comes until it stops coming for a moment. */
    for (;;) {
        const uint8_t *p;
        int r = proto_peek_frame(&b->in, &f.h, &p, NULL);
        assert_true(r >= 0);
        if (r) {
            if (f.h.type == PROTO_OUTPUT && f.h.id == 4)
                got += f.h.len;
            assert_int_not_equal(f.h.type, PROTO_EXIT);
            cbuf_consume(&b->in, PROTO_HDR_SIZE + f.h.len);
            continue;
        }
        struct pollfd pf = {.fd = b->sock, .events = POLLIN};
        if (poll(&pf, 1, 500) == 0)
            break;
        assert_true(box_recv(b, NULL) > 0);
    }
    assert_int_equal(got, PROTO_OUTPUT_WINDOW);
    /* Acknowledge as it comes: everything arrives, then the exit. */
    uint8_t ack[4];
    wire_le32(ack, (uint32_t)got);
    send_raw(b, PROTO_OUTPUT_ACK, 0, 4, ack, sizeof(ack));
    proto_exit x;
    for (;;) {
        assert_true(next(b, &f));
        if (f.h.type == PROTO_OUTPUT && f.h.id == 4) {
            got += f.h.len;
            wire_le32(ack, f.h.len);
            send_raw(b, PROTO_OUTPUT_ACK, 0, 4, ack, sizeof(ack));
        }
        bool done = f.h.type == PROTO_EXIT && f.h.id == 4;
        if (done)
            assert_int_equal(proto_get_exit(f.p, f.h.len, &x, NULL), 0);
        cella_free(f.p);
        if (done)
            break;
    }
    assert_int_equal(got, 5000000);
    assert_int_equal(x.exit_code, 0);
    assert_false(x.flags & EXIT_STDOUT_TRUNCATED);
    proto_exit_free(&x);
    stop(b, ws);
}

/* Runs argv (flags: EXEC_BUILTIN for an agent built-in) with in as its
 * whole stdin (NULL: none); returns the exit code, stdout into out. */
static int run_cmd(box *b, uint32_t id, char **argv, uint32_t flags, const cbuf *in, char *out,
                   size_t outn)
{
    send_exec(b, id, argv, flags | (in ? EXEC_STDIN : 0));
    if (in)
        send_raw(b, PROTO_STDIN, PROTO_STDIN_EOF, id, cbuf_head(in), cbuf_avail(in));
    proto_exit x;
    assert_int_equal(wait_exec(b, id, out, outn, &x), PROTO_EXIT);
    int code = x.exit_code;
    proto_exit_free(&x);
    return code;
}

static void tar_file(cbuf *t, const char *name, char type, const char *content)
{
    static const uint8_t zeros[TAR_BLOCK];
    tar_entry *e = cella_calloc(1, sizeof(*e));
    snprintf(e->name, sizeof(e->name), "%s", name);
    e->type = type;
    e->mode = 0644;
    e->size = type == '0' ? strlen(content) : 0;
    if (type == '2')
        snprintf(e->linkname, sizeof(e->linkname), "%s", content);
    assert_int_equal(tar_encode(t, e), 0);
    cbuf_append(t, content, e->size);
    cbuf_append(t, zeros, (TAR_BLOCK - e->size % TAR_BLOCK) % TAR_BLOCK);
    cella_free(e);
}

static void tar_end(cbuf *t)
{
    static const uint8_t zeros[2 * TAR_BLOCK];
    cbuf_append(t, zeros, sizeof(zeros));
}

/* glob stat=1: one call lists a tree with each entry's type, size, mtime
 * and inode (the gateway's artifacts). */
static void test_glob_stat(void **st)
{
    char ws[32], out[4096];
    box *b = start(ws, sizeof(ws));
    assert_int_equal(run_cmd(b, 1, (char *[]){"sh", "-c",
                                              "mkdir -p /workspace/art/sub && printf abc > "
                                              "/workspace/art/sub/f && ln -s f /workspace/art/l "
                                              "&& printf x > /workspace/art/.h", NULL},
                             0, NULL, out, sizeof(out)), 0);
    assert_int_equal(run_cmd(b, 2, (char *[]){"fs", "glob", "path=/workspace/art", "pattern=*",
                                              "include_hidden=1", "stat=1", NULL},
                             EXEC_BUILTIN, NULL, out, sizeof(out)), 0);
    assert_non_null(strstr(out, "{\"entries\":[{\"path\":\"/workspace/art/.h\",\"type\":\"file\","
                                "\"size\":1,\"mtime_ns\":"));
    assert_non_null(strstr(out, "{\"path\":\"/workspace/art/l\",\"type\":\"symlink\","));
    assert_non_null(strstr(out, "{\"path\":\"/workspace/art/sub\",\"type\":\"dir\","));
    assert_non_null(strstr(out, "{\"path\":\"/workspace/art/sub/f\",\"type\":\"file\","
                                "\"size\":3,\"mtime_ns\":"));
    assert_non_null(strstr(out, "\"ino\":"));
    assert_non_null(strstr(out, "],\"truncated\":false}"));
    /* Without stat=1: paths, as before. */
    assert_int_equal(run_cmd(b, 3, (char *[]){"fs", "glob", "path=/workspace/art", "pattern=*",
                                              NULL},
                             EXEC_BUILTIN, NULL, out, sizeof(out)), 0);
    assert_string_equal(out, "{\"paths\":[\"/workspace/art/l\",\"/workspace/art/sub\","
                             "\"/workspace/art/sub/f\"],\"truncated\":false}\n");
    stop(b, ws);
}

/* tar-extract atomic=1: every file or none. */
static void test_tar_extract_atomic(void **st)
{
    char ws[32], out[4096];
    box *b = start(ws, sizeof(ws));
    char *extract[] = {"fs", "tar-extract", "path=/workspace", "atomic=1", NULL};
    char *ls[] = {"sh", "-c", "cd /workspace && find . | sort | tr '\\n' ' '", NULL};
    assert_int_equal(run_cmd(b, 1, (char *[]){"mkdir", "-p", "/workspace/taken/dir", NULL}, 0,
                             NULL, out, sizeof(out)), 0);
    cbuf t;
    cbuf_init(&t);
    tar_file(&t, "a/b.txt", '0', "one");
    tar_file(&t, "c.txt", '0', "two");
    tar_end(&t);
    assert_int_equal(run_cmd(b, 2, extract, EXEC_BUILTIN, &t, out, sizeof(out)), BUILTIN_OK);
    assert_non_null(strstr(out, "\"entries\":2,\"bytes\":6"));
    assert_int_equal(run_cmd(b, 3, ls, 0, NULL, out, sizeof(out)), 0);
    assert_string_equal(out, ". ./a ./a/b.txt ./c.txt ./taken ./taken/dir ");
    /* A directory where the last file goes: found after the others are
     * written under their temporaries; they and the directories made for
     * them go, and c.txt keeps its old content. */
    struct {
        const char *names[3], *last;
        char type;
        int status;
    } bad[] = {
        {{"x.txt", "new/deep/y.txt", "c.txt"}, "taken/dir", '0', BUILTIN_WRONG_TYPE},
        {{"x.txt", "new/deep/y.txt", "c.txt"}, "c.txt/z", '0', BUILTIN_WRONG_TYPE},
        {{"x.txt", "p", "c.txt"}, "p/q", '0', BUILTIN_WRONG_TYPE},
        {{"x.txt", "new/deep/y.txt", "c.txt"}, "link", '2', BUILTIN_UNSUPPORTED},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cbuf_reset(&t);
        for (int k = 0; k < 3; k++)
            tar_file(&t, bad[i].names[k], '0', "new");
        tar_file(&t, bad[i].last, bad[i].type, "x");
        tar_end(&t);
        assert_int_equal(run_cmd(b, 10 + (uint32_t)i, extract, EXEC_BUILTIN, &t, out,
                                 sizeof(out)), bad[i].status);
        assert_int_equal(run_cmd(b, 20 + (uint32_t)i, ls, 0, NULL, out, sizeof(out)), 0);
        assert_string_equal(out, ". ./a ./a/b.txt ./c.txt ./taken ./taken/dir ");
        assert_int_equal(run_cmd(b, 30 + (uint32_t)i, (char *[]){"cat", "/workspace/c.txt", NULL},
                                 0, NULL, out, sizeof(out)), 0);
        assert_string_equal(out, "two");
    }
    cbuf_free(&t);
    stop(b, ws);
}

/* Runs argv with stdin t sent in two parts, the second after a pause
 * longer than any deadline_ms=1: the extract, waiting for it, passes its
 * deadline for certain, whatever the machine's speed. */
static int run_paused(box *b, uint32_t id, char **argv, const cbuf *t, size_t first, char *out,
                      size_t outn)
{
    send_exec(b, id, argv, EXEC_BUILTIN | EXEC_STDIN);
    send_raw(b, PROTO_STDIN, 0, id, cbuf_head(t), first);
    usleep(50 * 1000);
    send_raw(b, PROTO_STDIN, PROTO_STDIN_EOF, id, cbuf_head(t) + first, cbuf_avail(t) - first);
    proto_exit x;
    assert_int_equal(wait_exec(b, id, out, outn, &x), PROTO_EXIT);
    int code = x.exit_code;
    proto_exit_free(&x);
    return code;
}

/* tar-extract deadline_ms (the gateway's /execute stages its files within
 * the call's timeout): past it the extract stops by itself between
 * entries, and an atomic batch leaves nothing behind, not even its hidden
 * temporaries. */
static void test_tar_extract_deadline(void **st)
{
    char ws[32], out[4096];
    box *b = start(ws, sizeof(ws));
    char *ls[] = {"sh", "-c", "cd /workspace && find . | sort | tr '\\n' ' '", NULL};
    cbuf t;
    cbuf_init(&t);
    char name[32];
    for (int i = 0; i < 20; i++) {
        snprintf(name, sizeof(name), "d%d/f%d", i % 4, i);
        tar_file(&t, name, '0', "x");
    }
    tar_end(&t);
    size_t first = 10 * 2 * TAR_BLOCK;    /* ten entries, then the pause */
    char *atomic[] = {"fs", "tar-extract", "path=/workspace", "atomic=1", "follow=1",
                      "deadline_ms=1", NULL};
    assert_int_equal(run_paused(b, 1, atomic, &t, first, out, sizeof(out)), BUILTIN_TIMED_OUT);
    assert_int_equal(run_cmd(b, 2, ls, 0, NULL, out, sizeof(out)), 0);
    assert_string_equal(out, ". ");
    /* Not atomic (a plain upload): it stops too, keeping what it wrote. */
    char *plain[] = {"fs", "tar-extract", "path=/workspace", "deadline_ms=1", NULL};
    assert_int_equal(run_paused(b, 3, plain, &t, first, out, sizeof(out)), BUILTIN_TIMED_OUT);
    assert_int_equal(run_cmd(b, 4, (char *[]){"test", "-f", "/workspace/d0/f0", NULL}, 0, NULL,
                             out, sizeof(out)), 0);
    /* A deadline that is not reached changes nothing. */
    char *roomy[] = {"fs", "tar-extract", "path=/workspace", "atomic=1", "deadline_ms=600000",
                     NULL};
    assert_int_equal(run_paused(b, 5, roomy, &t, first, out, sizeof(out)), BUILTIN_OK);
    assert_non_null(strstr(out, "\"entries\":20,"));
    cbuf_free(&t);
    stop(b, ws);
}

/* follow=1 (the gateway's writes): symlinks in the target are followed
 * while they stay beneath it, in parents and in the last component; one
 * that leads out refuses the whole batch, and what it made goes. */
static void test_tar_extract_follow(void **st)
{
    char ws[32], out[4096];
    box *b = start(ws, sizeof(ws));
    char *extract[] = {"fs", "tar-extract", "path=/workspace", "atomic=1", "follow=1", NULL};
    char *setup[] = {"sh", "-c", "cd /workspace && mkdir -p real/sub && ln -s real link && "
                     "ln -s /workspace/real abs && ln -s l2 l1 && ln -s link/sub l2 && "
                     "ln -s real/../real/sub inner && ln -s real/f leaf && ln -s /tmp out && "
                     "ln -s .. up && ln -s me me", NULL};
    assert_int_equal(run_cmd(b, 1, setup, 0, NULL, out, sizeof(out)), 0);
    cbuf t;
    cbuf_init(&t);
    tar_file(&t, "link/a", '0', "a");
    tar_file(&t, "abs/new/b", '0', "b");
    tar_file(&t, "l1/c", '0', "c");
    tar_file(&t, "inner/d", '0', "d");
    tar_file(&t, "leaf", '0', "f");
    tar_end(&t);
    assert_int_equal(run_cmd(b, 2, extract, EXEC_BUILTIN, &t, out, sizeof(out)), BUILTIN_OK);
    char *ls[] = {"sh", "-c", "cd /workspace && find real | sort | tr '\\n' ' ' && "
                  "cat real/a real/new/b real/sub/c real/sub/d real/f && test -L leaf", NULL};
    assert_int_equal(run_cmd(b, 3, ls, 0, NULL, out, sizeof(out)), 0);
    assert_string_equal(out, "real real/a real/f real/new real/new/b real/sub real/sub/c "
                             "real/sub/d abcdf");
    const char *bad[] = {"out/x", "up/x", "me/x", "link/../../x"};
    const int status[] = {BUILTIN_USAGE, BUILTIN_USAGE, BUILTIN_USAGE, BUILTIN_USAGE};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cbuf_reset(&t);
        tar_file(&t, "link/made/z", '0', "z");
        tar_file(&t, bad[i], '0', "x");
        tar_end(&t);
        assert_int_equal(run_cmd(b, 10 + (uint32_t)i, extract, EXEC_BUILTIN, &t, out,
                                 sizeof(out)), status[i]);
        char *gone[] = {"sh", "-c", "test ! -e /workspace/real/made && test ! -e /tmp/x && "
                        "test ! -e /x && echo clean", NULL};
        assert_int_equal(run_cmd(b, 20 + (uint32_t)i, gone, 0, NULL, out, sizeof(out)), 0);
        assert_string_equal(out, "clean\n");
    }
    /* Only with atomic=1: an archive that makes symlinks is not extracted
     * through them. */
    char *plain[] = {"fs", "tar-extract", "path=/workspace", "follow=1", NULL};
    assert_int_equal(run_cmd(b, 40, plain, EXEC_BUILTIN, &t, out, sizeof(out)), BUILTIN_USAGE);
    cbuf_free(&t);
    stop(b, ws);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_commands_run_concurrently),
        cmocka_unit_test(test_refusals_keep_the_agent_serving),
        cmocka_unit_test(test_signal_and_not_started),
        cmocka_unit_test(test_exec_cap),
        cmocka_unit_test(test_orphans_are_reaped),
        cmocka_unit_test(test_sandbox_dies_mid_exec),
        cmocka_unit_test(test_stopped_starter_cannot_wedge_the_agent),
        cmocka_unit_test(test_oversized_request_is_refused_before_sending),
        cmocka_unit_test(test_stdin_overrun_closes_stdin),
        cmocka_unit_test(test_output_window),
        cmocka_unit_test(test_tar_extract_follow),
        cmocka_unit_test(test_glob_stat),
        cmocka_unit_test(test_tar_extract_atomic),
        cmocka_unit_test(test_tar_extract_deadline),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
