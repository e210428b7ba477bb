#include "box/run.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "agent/wire.h"
#include "util/fdio.h"
#include "util/log.h"

/* Stdin bytes sent but not yet taken by the command: at most this many. */
#define STDIN_WINDOW (256u << 10)
/* How long past a command's own timeout the agent may take to answer before
 * it is declared unresponsive (it kills on time; this covers a wedged agent). */
#define AGENT_ANSWER_GRACE_MS 10000

typedef struct run_state {
    box *b;
    uint32_t id;
    const box_io *io;
    box_result *res;
    size_t stdin_inflight;
    bool stdin_open;       /* still reading our stdin */
    bool done;
    bool killed;
} run_state;

static int send_frame(run_state *st, uint16_t type, uint16_t flags, const void *p, size_t n,
                      cella_err *err)
{
    cbuf f;
    cbuf_init(&f);
    proto_put_frame(&f, type, flags, st->id, p, n);
    int rc = box_send(st->b, cbuf_head(&f), cbuf_avail(&f), err);
    cbuf_free(&f);
    return rc;
}

static int kill_command(run_state *st, cella_err *err)
{
    if (st->killed)
        return 0;
    st->killed = true;
    uint8_t sig[4] = {SIGKILL, 0, 0, 0};
    return send_frame(st, PROTO_SIGNAL, 0, sig, sizeof(sig), err);
}

/* Writes output to our stdout/stderr without ever becoming deaf to the
 * cancel signal: a reader that stops reading must not make Ctrl-C useless.
 * Writes go in pieces no larger than POLLOUT guarantees room for. */
static int write_cancellable(run_state *st, int fd, const uint8_t *p, size_t n, cella_err *err)
{
    while (n > 0) {
        struct pollfd pf[2] = {{.fd = fd, .events = POLLOUT},
                               {.fd = st->io->cancel_fd, .events = POLLIN}};
        if (poll(pf, st->io->cancel_fd >= 0 ? 2 : 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            return cella_err_set(err, errno, "poll");
        }
        if (pf[1].revents & POLLIN)
            return 1;                         /* cancelled: the caller handles it */
        if (pf[0].revents & (POLLERR | POLLNVAL)) {
            errno = EPIPE;
            return -1;
        }
        ssize_t w = write(fd, p, n < PIPE_BUF ? n : PIPE_BUF);
        if (w < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (w < 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int relay_output(run_state *st, uint16_t stream, const uint8_t *p, size_t n, cella_err *err)
{
    if (st->res->output_closed)
        return 0;
    int fd = stream == PROTO_STREAM_STDERR ? st->io->stderr_fd : st->io->stdout_fd;
    int rc = write_cancellable(st, fd, p, n, err);
    if (rc >= 0)
        return 0;       /* written, or cancelled (the main loop reads the signal next) */
    if (errno != EPIPE)
        return cella_err_set(err, errno, "write command output");
    /* Our reader went away, as `cmd | head` does: end the command the way a
     * pipeline would. */
    st->res->output_closed = true;
    return kill_command(st, err);
}

static int handle_frame(run_state *st, const proto_hdr *h, const uint8_t *p, cella_err *err)
{
    if (h->type == PROTO_LOG) {
        log_debug("agent: %.*s", (int)h->len, p);
        return 0;
    }
    if (h->type == PROTO_FAIL) {
        proto_error_to_err(p, h->len, err);
        return cella_err_prefix(err, "the sandbox failed");
    }
    if (h->id != st->id)
        return 0;
    switch (h->type) {
    case PROTO_STARTED:
        return 0;
    case PROTO_OUTPUT:
        return relay_output(st, h->flags, p, h->len, err);
    case PROTO_STDIN_ACK: {
        wire_rd r;
        wire_rd_init(&r, p, h->len);
        uint32_t n = wire_get_u32(&r);
        st->stdin_inflight = n > st->stdin_inflight ? 0 : st->stdin_inflight - n;
        if (h->flags & PROTO_ACK_CLOSED)
            st->stdin_open = false;
        return 0;
    }
    case PROTO_EXIT:
        if (proto_get_exit(p, h->len, &st->res->exit, err) < 0)
            return -1;
        st->done = true;
        return 0;
    case PROTO_ERROR:
        return proto_error_to_err(p, h->len, err);
    default:
        return cella_err_set(err, 0, "unexpected %s frame from the agent", proto_type_name(h->type));
    }
}

static int pump_stdin(run_state *st, cella_err *err)
{
    uint8_t buf[PROTO_CHUNK];
    size_t want = STDIN_WINDOW - st->stdin_inflight;
    if (want > sizeof(buf))
        want = sizeof(buf);
    ssize_t r = read(st->io->stdin_fd, buf, want);
    if (r < 0) {
        if (errno == EINTR || errno == EAGAIN)
            return 0;
        log_warn("reading stdin: %s; the command gets end-of-file", strerror(errno));
        r = 0;
    }
    if (r == 0) {
        st->stdin_open = false;
        return send_frame(st, PROTO_STDIN, PROTO_STDIN_EOF, NULL, 0, err);
    }
    st->stdin_inflight += (size_t)r;
    return send_frame(st, PROTO_STDIN, 0, buf, (size_t)r, err);
}

int box_run(box *b, uint32_t exec_id, const proto_exec *req, const box_io *io, box_result *res,
            cella_err *err)
{
    memset(res, 0, sizeof(*res));
    run_state st = {.b = b, .id = exec_id, .io = io, .res = res, .stdin_open = io->stdin_fd >= 0};
    uint64_t oom_before = 0, oom_after = 0;
    cg_box_oom_kills(b->cg, &oom_before, NULL);

    proto_exec r = *req;
    if (st.stdin_open)
        r.flags |= EXEC_STDIN;
    cbuf f;
    cbuf_init(&f);
    size_t mark = proto_begin_frame(&f, PROTO_EXEC, 0, exec_id);
    proto_put_exec(&f, &r);
    proto_end_frame(&f, mark);
    /* The agent ends a sandbox whose stream it cannot parse: an oversized
     * request is refused here, before it is sent. */
    int rc = cbuf_avail(&f) - PROTO_HDR_SIZE > PROTO_MAX_PAYLOAD
                 ? cella_err_set(err, 0, "command and environment exceed %u bytes", PROTO_MAX_PAYLOAD)
                 : box_send(b, cbuf_head(&f), cbuf_avail(&f), err);
    cbuf_free(&f);
    if (rc < 0)
        return -1;
    int64_t deadline = req->timeout_ms
                           ? clock_now_ns() + (int64_t)(req->timeout_ms + AGENT_ANSWER_GRACE_MS) * 1000000
                           : 0;

    while (!st.done) {
        proto_hdr h;
        const uint8_t *payload;
        int got = proto_peek_frame(&b->in, &h, &payload, err);
        if (got < 0)
            return -1;
        if (got) {
            rc = handle_frame(&st, &h, payload, err);
            cbuf_consume(&b->in, PROTO_HDR_SIZE + h.len);
            if (rc < 0)
                return -1;
            continue;
        }
        /* The pidfd says the agent died even while another process still
         * holds a copy of its end of the socket. */
        struct pollfd p[4] = {{.fd = b->sock, .events = POLLIN},
                              {.fd = b->pidfd, .events = POLLIN},
                              {.fd = -1}, {.fd = -1}};
        if (st.stdin_open && st.stdin_inflight < STDIN_WINDOW)
            p[2] = (struct pollfd){.fd = io->stdin_fd, .events = POLLIN};
        if (io->cancel_fd >= 0)
            p[3] = (struct pollfd){.fd = io->cancel_fd, .events = POLLIN};
        int wait_ms = -1;
        if (deadline) {
            int64_t left = (deadline - clock_now_ns()) / 1000000;
            if (left <= 0)
                return cella_err_set(err, 0, "the sandbox's agent stopped answering");
            wait_ms = left > INT_MAX ? INT_MAX : (int)left;
        }
        if (poll(p, 4, wait_ms) < 0) {
            if (errno == EINTR)
                continue;
            return cella_err_set(err, errno, "poll");
        }
        if (p[3].revents & POLLIN) {
            struct signalfd_siginfo si;
            if (read(io->cancel_fd, &si, sizeof(si)) == (ssize_t)sizeof(si) && !res->cancel_signal)
                res->cancel_signal = (int)si.ssi_signo;
            if (kill_command(&st, err) < 0)
                return -1;
        }
        if (p[2].revents & POLLNVAL) {
            st.stdin_open = false;           /* not a descriptor: treat as end of input */
            if (send_frame(&st, PROTO_STDIN, PROTO_STDIN_EOF, NULL, 0, err) < 0)
                return -1;
        } else if (p[2].revents & (POLLIN | POLLHUP | POLLERR)) {
            if (pump_stdin(&st, err) < 0)
                return -1;
        }
        ssize_t n = 1;
        if (p[0].revents & (POLLIN | POLLHUP | POLLERR))
            n = box_recv(b, err);
        if (n < 0)
            return -1;
        if (n == 0 || ((p[1].revents & POLLIN) && !(p[0].revents & POLLIN))) {
            /* The agent died under the command: most often the memory
             * limit's OOM killer chose it. */
            cg_box_oom_kills(b->cg, &oom_after, NULL);
            if (oom_after > oom_before)
                return cella_err_set(err, 0, "the sandbox ran out of memory and was killed");
            return cella_err_set(err, 0, "the sandbox's agent exited unexpectedly");
        }
    }
    cg_box_oom_kills(b->cg, &oom_after, NULL);
    res->oom_killed = oom_after > oom_before;
    return 0;
}

void box_result_free(box_result *r)
{
    proto_exit_free(&r->exit);
}
