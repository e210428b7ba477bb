#include "box/mux.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "agent/wire.h"
#include "util/alloc.h"
#include "util/log.h"

/* Stdin bytes sent but not yet taken by the command (the agent accepts up
 * to 1 MiB; keeping well under it means its buffer never overruns). */
#define MUX_STDIN_WINDOW (256u << 10)
/* The reader's own stack: it only parses frames. */
#define MUX_READER_STACK (128u << 10)

struct mux_exec {
    mux_box *m;
    uint32_t id;
    int efd;                      /* written by the reader when something happens */
    bool stream;
    cbuf out[3];                  /* stream mode: out[0] queues [u8 stream][u32 len][bytes] */
    bool done, failed;
    cella_err err;
    uint32_t refused;
    proto_exit exit;
    uint64_t oom_before;
    /* stdin: the caller's bytes, how many went out, how many the agent has
     * not acknowledged yet */
    cbuf stdin_data;
    bool has_stdin, stdin_closed, stdin_eof_sent;
    bool stdin_more;              /* streamed stdin: more may be fed */
    bool window;                  /* stdout flows in PROTO_OUTPUT_WINDOW */
    uint64_t acked;               /* stdout bytes handed on (and acknowledged) */
    size_t inflight;
    bool killed;
    uint64_t cap[3];              /* output kept at most, per stream: the agent's caps, enforced again */
    uint64_t kept[3];
    mux_exec *next;
};

struct mux_box {
    box *b;                       /* NULL once detached */
    pthread_t reader;
    int wake_efd;                 /* tells the reader to stop */
    pthread_mutex_t mu;           /* execs, dead, refs */
    pthread_mutex_t send_mu;      /* one frame at a time on the socket */
    mux_exec *execs;
    uint32_t next_id;
    unsigned refs;                /* the owner's, plus one per exec */
    bool dead, detached;
    char why[256];
    mux_death_fn on_death;
    void *arg;
};

static void wake(int efd)
{
    uint64_t one = 1;
    if (write(efd, &one, sizeof(one)) < 0) {
        /* an eventfd only fails to count when it would overflow: still woken */
    }
}

static void unref(mux_box *m)
{
    pthread_mutex_lock(&m->mu);
    bool last = --m->refs == 0;
    pthread_mutex_unlock(&m->mu);
    if (!last)
        return;
    close(m->wake_efd);
    pthread_mutex_destroy(&m->mu);
    pthread_mutex_destroy(&m->send_mu);
    cella_free(m);
}

/* ---- the reader --------------------------------------------------------- */

static mux_exec *find(mux_box *m, uint32_t id)
{
    for (mux_exec *x = m->execs; x; x = x->next)
        if (x->id == id)
            return x;
    return NULL;
}

/* Every exec still waiting fails with why. Called with mu held. */
static void fail_all(mux_box *m, const char *why)
{
    for (mux_exec *x = m->execs; x; x = x->next) {
        if (x->done)
            continue;
        x->done = x->failed = true;
        cella_err_set(&x->err, 0, "%s", why);
        wake(x->efd);
    }
}

static void dispatch(mux_box *m, const proto_hdr *h, const uint8_t *p)
{
    if (h->type == PROTO_LOG) {
        log_debug("agent %s: %.*s", cella_id_short(&m->b->id), (int)h->len, p);
        return;
    }
    mux_exec *x = find(m, h->id);
    if (!x || x->done)
        return;                   /* late frames of an exec already let go */
    switch (h->type) {
    case PROTO_STARTED:
        return;
    case PROTO_OUTPUT: {
        int s = h->flags == PROTO_STREAM_STDERR ? 2 : 1;
        /* The agent caps output; the daemon does not take its word for it:
         * a subverted agent must not grow the daemon's memory. */
        if (x->kept[s] + h->len > x->cap[s])
            return;
        if (s == 1 && x->window && x->kept[1] - x->acked + h->len > PROTO_OUTPUT_WINDOW) {
            /* Past the window: the agent is not keeping to the protocol,
             * and accepting would let it grow the daemon's memory. */
            x->done = x->failed = true;
            cella_err_set(&x->err, 0, "the agent overran its output window");
            break;
        }
        x->kept[s] += h->len;
        if (x->stream) {
            uint8_t hdr[5] = {(uint8_t)s};
            wire_le32(hdr + 1, h->len);
            cbuf_append(&x->out[0], hdr, sizeof(hdr));
            cbuf_append(&x->out[0], p, h->len);
        } else {
            cbuf_append(&x->out[s], p, h->len);
        }
        break;
    }
    case PROTO_STDIN_ACK: {
        wire_rd r;
        wire_rd_init(&r, p, h->len);
        uint32_t n = wire_get_u32(&r);
        x->inflight = n > x->inflight ? 0 : x->inflight - n;
        if (h->flags & PROTO_ACK_CLOSED)
            x->stdin_closed = true;
        break;
    }
    case PROTO_EXIT:
        if (proto_get_exit(p, h->len, &x->exit, &x->err) < 0)
            x->failed = true;
        x->done = true;
        break;
    case PROTO_ERROR: {
        proto_error e;
        if (proto_get_error(p, h->len, &e, NULL) == 0) {
            x->refused = e.code;
            proto_error_free(&e);
        }
        proto_error_to_err(p, h->len, &x->err);
        x->done = x->failed = true;
        break;
    }
    default:
        return;
    }
    wake(x->efd);
}

static void die(mux_box *m, const char *why)
{
    pthread_mutex_lock(&m->mu);
    bool first = !m->dead;
    m->dead = true;
    if (first)
        snprintf(m->why, sizeof(m->why), "%s", why);
    fail_all(m, m->why);
    pthread_mutex_unlock(&m->mu);
    if (first && m->on_death)
        m->on_death(m->arg, why);
}

static const char *death_reason(box *b)
{
    uint64_t kills = 0;
    if (b->cg && cg_box_oom_kills(b->cg, &kills, NULL) == 0 && kills > 0)
        return "the sandbox ran out of memory and its agent was killed";
    return "the sandbox's agent exited unexpectedly";
}

static void *reader_main(void *arg)
{
    mux_box *m = arg;
    box *b = m->b;
    for (;;) {
        struct pollfd p[3] = {{.fd = b->sock, .events = POLLIN},
                              {.fd = b->pidfd, .events = POLLIN},
                              {.fd = m->wake_efd, .events = POLLIN}};
        if (poll(p, 3, -1) < 0) {
            if (errno == EINTR)
                continue;
            die(m, "poll on the agent failed");
            return NULL;
        }
        if (p[2].revents)
            return NULL;          /* detached */
        if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            cella_err err;
            ssize_t n = box_recv(b, &err);
            if (n <= 0) {
                die(m, n == 0 ? death_reason(b) : err.msg);
                return NULL;
            }
            pthread_mutex_lock(&m->mu);
            for (;;) {
                proto_hdr h;
                const uint8_t *payload;
                int got = proto_peek_frame(&b->in, &h, &payload, &err);
                if (got <= 0) {
                    if (got < 0) {
                        pthread_mutex_unlock(&m->mu);
                        die(m, err.msg);
                        return NULL;
                    }
                    break;
                }
                if (h.type == PROTO_FAIL) {
                    proto_error_to_err(payload, h.len, &err);
                    pthread_mutex_unlock(&m->mu);
                    die(m, err.msg);
                    return NULL;
                }
                dispatch(m, &h, payload);
                cbuf_consume(&b->in, PROTO_HDR_SIZE + h.len);
            }
            pthread_mutex_unlock(&m->mu);
            continue;
        }
        /* The pidfd says the agent died even if its socket is still held
         * open by something else. */
        if (p[1].revents & POLLIN) {
            die(m, death_reason(b));
            return NULL;
        }
    }
}

int mux_attach(box *b, mux_death_fn on_death, void *arg, mux_box **out, cella_err *err)
{
    mux_box *m = cella_calloc(1, sizeof(*m));
    m->b = b;
    m->refs = 1;
    m->next_id = 1;
    m->on_death = on_death;
    m->arg = arg;
    pthread_mutex_init(&m->mu, NULL);
    pthread_mutex_init(&m->send_mu, NULL);
    m->wake_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (m->wake_efd < 0) {
        cella_err_set(err, errno, "eventfd");
        goto error;
    }
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, MUX_READER_STACK);
    /* The reader must not take signals meant for the daemon's main thread. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&m->reader, &at, reader_main, m);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&at);
    if (rc != 0) {
        cella_err_set(err, rc, "start the sandbox's reader thread");
        goto error;
    }
    *out = m;
    return 0;
error:
    if (m->wake_efd >= 0)
        close(m->wake_efd);
    pthread_mutex_destroy(&m->mu);
    pthread_mutex_destroy(&m->send_mu);
    cella_free(m);
    return -1;
}

void mux_detach(mux_box *m)
{
    if (!m || m->detached)
        return;
    wake(m->wake_efd);
    pthread_join(m->reader, NULL);
    pthread_mutex_lock(&m->send_mu);
    pthread_mutex_lock(&m->mu);
    m->detached = true;
    m->b = NULL;
    fail_all(m, "the sandbox was stopped");
    pthread_mutex_unlock(&m->mu);
    pthread_mutex_unlock(&m->send_mu);
}

void mux_free(mux_box *m)
{
    if (m)
        unref(m);
}

bool mux_dead(mux_box *m)
{
    pthread_mutex_lock(&m->mu);
    bool d = m->dead || m->detached;
    pthread_mutex_unlock(&m->mu);
    return d;
}

/* ---- execs -------------------------------------------------------------- */

static int send_frame(mux_box *m, uint16_t type, uint16_t flags, uint32_t id, const void *p,
                      size_t n, cella_err *err)
{
    cbuf f;
    cbuf_init(&f);
    proto_put_frame(&f, type, flags, id, p, n);
    pthread_mutex_lock(&m->send_mu);
    int rc = m->b ? box_send(m->b, cbuf_head(&f), cbuf_avail(&f), err)
                  : cella_err_set(err, 0, "the sandbox was stopped");
    pthread_mutex_unlock(&m->send_mu);
    cbuf_free(&f);
    return rc;
}

/* Sends as much stdin as the window allows, then end-of-file. */
static int pump_stdin(mux_exec *x, cella_err *err)
{
    mux_box *m = x->m;
    for (;;) {
        pthread_mutex_lock(&m->mu);
        bool closed = x->stdin_closed || x->done;
        size_t room = x->inflight < MUX_STDIN_WINDOW ? MUX_STDIN_WINDOW - x->inflight : 0;
        pthread_mutex_unlock(&m->mu);
        if (closed || x->stdin_eof_sent)
            return 0;
        size_t left = cbuf_avail(&x->stdin_data);
        if (left == 0 && x->stdin_more)
            return 0;             /* the feeder has more to come */
        if (left == 0) {
            x->stdin_eof_sent = true;
            return send_frame(m, PROTO_STDIN, PROTO_STDIN_EOF, x->id, NULL, 0, err);
        }
        size_t n = left < room ? left : room;
        if (n > PROTO_CHUNK)
            n = PROTO_CHUNK;
        if (n == 0)
            return 0;             /* the window is full: wait for an ack */
        pthread_mutex_lock(&m->mu);
        x->inflight += n;
        pthread_mutex_unlock(&m->mu);
        if (send_frame(m, PROTO_STDIN, 0, x->id, cbuf_head(&x->stdin_data), n, err) < 0)
            return -1;
        cbuf_consume(&x->stdin_data, n);
    }
}

int mux_exec_start(mux_box *m, const mux_exec_req *r, mux_exec **out, cella_err *err)
{
    mux_exec *x = cella_calloc(1, sizeof(*x));
    x->stream = r->stream;
    x->window = r->stream && r->window;
    x->has_stdin = r->has_stdin || r->stdin_stream;
    x->stdin_more = r->stdin_stream;
    x->cap[1] = r->exec->stdout_cap;
    x->cap[2] = r->exec->stderr_cap;
    for (int i = 0; i < 3; i++)
        cbuf_init(&x->out[i]);
    cbuf_init(&x->stdin_data);
    if (r->has_stdin)
        cbuf_append(&x->stdin_data, r->stdin_data, r->stdin_len);
    x->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (x->efd < 0) {
        cella_err_set(err, errno, "eventfd");
        cbuf_free(&x->stdin_data);
        cella_free(x);
        return -1;
    }
    proto_exec req = *r->exec;
    if (x->has_stdin)
        req.flags |= EXEC_STDIN;
    if (x->window)
        req.flags |= EXEC_OUTPUT_WINDOW;
    cbuf f;
    cbuf_init(&f);
    pthread_mutex_lock(&m->mu);
    bool gone = m->dead || m->detached;
    if (!gone) {
        x->m = m;
        m->refs++;
        x->id = m->next_id++;
        if (m->next_id == 0)
            m->next_id = 1;
        x->next = m->execs;
        m->execs = x;
        /* Read now, not remembered from the last exec: a background
         * process killed in between must not be blamed on this exec. */
        if (m->b->cg)
            cg_box_oom_kills(m->b->cg, &x->oom_before, NULL);
    }
    pthread_mutex_unlock(&m->mu);
    if (gone) {
        cella_err_set(err, 0, "%s", m->why[0] ? m->why : "the sandbox was stopped");
        close(x->efd);
        cbuf_free(&x->stdin_data);
        cella_free(x);
        return -1;
    }
    *out = x;
    size_t mark = proto_begin_frame(&f, PROTO_EXEC, 0, x->id);
    proto_put_exec(&f, &req);
    proto_end_frame(&f, mark);
    /* The agent ends a sandbox whose stream it cannot parse: an oversized
     * request is refused here, before it is sent. */
    int rc;
    if (cbuf_avail(&f) - PROTO_HDR_SIZE > PROTO_MAX_PAYLOAD) {
        rc = cella_err_set(err, 0, "command and environment exceed %u bytes", PROTO_MAX_PAYLOAD);
    } else {
        pthread_mutex_lock(&m->send_mu);
        rc = m->b ? box_send(m->b, cbuf_head(&f), cbuf_avail(&f), err)
                  : cella_err_set(err, 0, "the sandbox was stopped");
        pthread_mutex_unlock(&m->send_mu);
    }
    cbuf_free(&f);
    if (rc == 0 && x->has_stdin)
        rc = pump_stdin(x, err);
    if (rc < 0) {
        /* Nothing will answer this exec: the caller frees it. */
        pthread_mutex_lock(&m->mu);
        x->done = x->failed = true;
        x->err = *err;
        pthread_mutex_unlock(&m->mu);
        x->killed = true;
    }
    return 0;
}

static int state_flags(mux_exec *x)
{
    int f = 0;
    pthread_mutex_lock(&x->m->mu);
    if (x->done)
        f |= MUX_DONE;
    if (x->stream && cbuf_avail(&x->out[0]))
        f |= MUX_OUTPUT;
    pthread_mutex_unlock(&x->m->mu);
    return f;
}

int mux_exec_wait(mux_exec *x, int client_fd, int timeout_ms)
{
    for (;;) {
        if (x->has_stdin) {
            cella_err err;
            if (pump_stdin(x, &err) < 0)
                log_debug("stdin: %s", err.msg);
        }
        int f = state_flags(x);
        if (f)
            return f;
        struct pollfd p[2] = {{.fd = x->efd, .events = POLLIN},
                              {.fd = client_fd, .events = POLLRDHUP}};
        int pr = poll(p, client_fd >= 0 ? 2 : 1, timeout_ms);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            return state_flags(x);
        if (p[0].revents & POLLIN) {
            uint64_t v;
            if (read(x->efd, &v, sizeof(v)) < 0) {
                /* EAGAIN: another wake already consumed it */
            }
        }
        if (client_fd >= 0 && (p[1].revents & (POLLRDHUP | POLLHUP | POLLERR)))
            return state_flags(x) | MUX_CLIENT_GONE;
    }
}

bool mux_exec_take(mux_exec *x, int *stream, cbuf *out)
{
    pthread_mutex_lock(&x->m->mu);
    cbuf *q = &x->out[0];
    bool got = cbuf_avail(q) >= 5;
    uint32_t n = 0;
    if (got) {
        const uint8_t *h = cbuf_head(q);
        *stream = h[0];
        n = (uint32_t)h[1] | (uint32_t)h[2] << 8 | (uint32_t)h[3] << 16 | (uint32_t)h[4] << 24;
        cbuf_append(out, h + 5, n);
        cbuf_consume(q, 5 + (size_t)n);
        if (x->window && *stream == PROTO_STREAM_STDOUT)
            x->acked += n;
        else
            n = 0;
    }
    pthread_mutex_unlock(&x->m->mu);
    if (n && !x->killed) {
        /* Handed on: the agent may send that much more. */
        uint8_t b[4];
        wire_le32(b, n);
        cella_err err;
        if (send_frame(x->m, PROTO_OUTPUT_ACK, 0, x->id, b, sizeof(b), &err) < 0)
            log_debug("output ack %u: %s", x->id, err.msg);
    }
    return got;
}

int mux_exec_feed(mux_exec *x, const void *p, size_t n, int client_fd)
{
    cbuf_append(&x->stdin_data, p, n);
    for (;;) {
        cella_err err;
        if (pump_stdin(x, &err) < 0)
            log_debug("stdin: %s", err.msg);
        if (state_flags(x) & MUX_DONE)
            return MUX_DONE;
        pthread_mutex_lock(&x->m->mu);
        bool closed = x->stdin_closed;
        pthread_mutex_unlock(&x->m->mu);
        /* Closed by the command: the rest is dropped (its result says why). */
        if (closed)
            cbuf_reset(&x->stdin_data);
        if (cbuf_avail(&x->stdin_data) <= MUX_FEED_HIGH)
            return 0;
        /* Wait for an ack, which wakes the exec's eventfd. */
        struct pollfd pf[2] = {{.fd = x->efd, .events = POLLIN},
                               {.fd = client_fd, .events = POLLRDHUP}};
        int pr = poll(pf, client_fd >= 0 ? 2 : 1, 1000);
        if (pr < 0 && errno != EINTR)
            return MUX_DONE;
        if (pr > 0 && (pf[0].revents & POLLIN)) {
            uint64_t v;
            if (read(x->efd, &v, sizeof(v)) < 0) {
                /* EAGAIN: another wake already consumed it */
            }
        }
        if (pr > 0 && client_fd >= 0 && (pf[1].revents & (POLLRDHUP | POLLHUP | POLLERR)))
            return MUX_CLIENT_GONE;
    }
}

void mux_exec_feed_end(mux_exec *x)
{
    x->stdin_more = false;
    cella_err err;
    if (pump_stdin(x, &err) < 0)
        log_debug("stdin: %s", err.msg);
}

bool mux_exec_stdin_closed(mux_exec *x)
{
    pthread_mutex_lock(&x->m->mu);
    bool closed = x->stdin_closed;
    pthread_mutex_unlock(&x->m->mu);
    return closed;
}

void mux_exec_kill(mux_exec *x)
{
    if (x->killed || !x->m)
        return;
    x->killed = true;
    uint8_t sig[4];
    wire_le32(sig, SIGKILL);
    cella_err err;
    if (send_frame(x->m, PROTO_SIGNAL, 0, x->id, sig, sizeof(sig), &err) < 0)
        log_debug("kill exec %u: %s", x->id, err.msg);
}

int mux_exec_result(mux_exec *x, mux_result *res, cella_err *err)
{
    memset(res, 0, sizeof(*res));
    mux_box *m = x->m;
    pthread_mutex_lock(&m->mu);
    int rc = 0;
    if (!x->done) {
        rc = cella_err_set(err, 0, "the exec has not finished");
    } else if (x->failed) {
        *err = x->err;
        res->refused = x->refused;
        rc = -1;
    } else {
        res->exit = x->exit;
        memset(&x->exit, 0, sizeof(x->exit));
        for (int i = 1; i < 3; i++) {
            res->out[i] = x->out[i];
            cbuf_init(&x->out[i]);
        }
    }
    box *b = m->b;
    uint64_t after = 0;
    if (rc == 0 && b && b->cg && cg_box_oom_kills(b->cg, &after, NULL) == 0)
        res->oom_killed = after > x->oom_before;
    pthread_mutex_unlock(&m->mu);
    return rc;
}

void mux_result_free(mux_result *r)
{
    proto_exit_free(&r->exit);
    for (int i = 0; i < 3; i++)
        cbuf_free(&r->out[i]);
}

void mux_exec_free(mux_exec *x)
{
    if (!x)
        return;
    mux_box *m = x->m;
    if (m) {
        pthread_mutex_lock(&m->mu);
        bool running = !x->done;
        pthread_mutex_unlock(&m->mu);
        if (running)
            mux_exec_kill(x);
        pthread_mutex_lock(&m->mu);
        for (mux_exec **pp = &m->execs; *pp; pp = &(*pp)->next)
            if (*pp == x) {
                *pp = x->next;
                break;
            }
        pthread_mutex_unlock(&m->mu);
        unref(m);
    }
    close(x->efd);
    for (int i = 0; i < 3; i++)
        cbuf_free(&x->out[i]);
    cbuf_free(&x->stdin_data);
    proto_exit_free(&x->exit);
    cella_free(x);
}
