/* The agent's life: receive SETUP (with its descriptors), build the sandbox,
 * answer READY, then serve exec requests until the parent goes away. It
 * never exits on a bad request; when the parent's socket closes it exits at
 * once, and being PID 1, takes every process of the sandbox with it. */
#include "agent/agent.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent_int.h"
#include "agent/fs_quota.h"
#include "util/fdio.h"

#define MAX_SETUP_FDS 8

void agent_send(agent *a, uint16_t type, uint16_t flags, uint32_t id, const void *p, size_t n)
{
    proto_put_frame(&a->out, type, flags, id, p, n);
}

void agent_send_error(agent *a, uint32_t id, uint32_t code, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    proto_error e = {.code = code, .message = msg};
    size_t mark = proto_begin_frame(&a->out, code == PERR_SETUP ? PROTO_FAIL : PROTO_ERROR, 0, id);
    proto_put_error(&a->out, &e);
    proto_end_frame(&a->out, mark);
}

/* The parent is gone: so is the sandbox, once PID 1 exits. Its file
 * operations are cancelled and waited for first (exec.c): the kernel's
 * SIGKILL to everything left would cut an upload half-way, and what it had
 * not undone would stay in /workspace, which outlives a daemon restart. */
__attribute__((noreturn)) static void parent_gone(agent *a)
{
    if (a->sigfd >= 0)
        agent_exec_parent_gone(a);
    _exit(0);
}

/* Sends what is queued. Non-blocking in the loop; blocking (bounded: a
 * parent that stops reading must not hold a dying agent forever) before the
 * loop starts and before exiting. */
static void flush(agent *a, bool block)
{
    int64_t deadline = clock_now_ns() + 2 * 1000000000LL;
    while (cbuf_avail(&a->out)) {
        ssize_t w = send(a->sock, cbuf_head(&a->out), cbuf_avail(&a->out),
                         MSG_NOSIGNAL | (block ? 0 : MSG_DONTWAIT));
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN) {
            if (!block)
                return;
            int left = (int)((deadline - clock_now_ns()) / 1000000);
            if (left <= 0)
                _exit(1);
            struct pollfd p = {.fd = a->sock, .events = POLLOUT};
            poll(&p, 1, left);
            continue;
        }
        if (w <= 0)
            parent_gone(a);
        cbuf_consume(&a->out, (size_t)w);
    }
}

/* Fatal: tell the parent why, then end the sandbox. */
__attribute__((noreturn)) static void die(agent *a, const char *msg)
{
    agent_send_error(a, 0, PERR_SETUP, "%s", msg);
    flush(a, true);
    _exit(1);
}

/* Reads until a whole SETUP frame is in, collecting attached descriptors. */
static int read_setup(agent *a, int *fds, size_t *nfds, proto_hdr *h, const uint8_t **payload,
                      cella_err *err)
{
    for (;;) {
        int got = proto_peek_frame(&a->in, h, payload, err);
        if (got < 0)
            return -1;
        if (got)
            return h->type == PROTO_SETUP ? 0 : cella_err_set(err, 0, "expected SETUP first");
        union {
            struct cmsghdr h;
            char buf[CMSG_SPACE(sizeof(int) * MAX_SETUP_FDS)];
        } ctl;
        struct iovec iov = {.iov_base = cbuf_reserve(&a->in, 64 << 10), .iov_len = 64 << 10};
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                             .msg_controllen = sizeof(ctl.buf)};
        ssize_t r = recvmsg(a->sock, &msg, MSG_CMSG_CLOEXEC);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return cella_err_set(err, r < 0 ? errno : 0, "reading setup");
        cbuf_commit(&a->in, (size_t)r);
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
            if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                continue;
            size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < k; i++) {
                int fd;
                memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                if (*nfds < MAX_SETUP_FDS)
                    fds[(*nfds)++] = fd;
                else
                    close(fd);
            }
        }
    }
}

static void dispatch(agent *a, const proto_hdr *h, const uint8_t *p)
{
    switch (h->type) {
    case PROTO_EXEC:
        agent_exec_start(a, h->id, p, h->len);
        break;
    case PROTO_STDIN:
        agent_exec_stdin(a, h->id, h->flags, p, h->len);
        break;
    case PROTO_SIGNAL:
        agent_exec_signal(a, h->id, p, h->len);
        break;
    case PROTO_OUTPUT_ACK:
        agent_exec_output_ack(a, h->id, p, h->len);
        break;
    default:
        agent_send_error(a, h->id, PERR_BAD_REQUEST, "unexpected %s frame",
                         proto_type_name(h->type));
    }
}

static void read_socket(agent *a)
{
    for (;;) {
        uint8_t *p = cbuf_reserve(&a->in, 64 << 10);
        ssize_t r = recv(a->sock, p, 64 << 10, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EAGAIN)
            break;
        if (r <= 0)
            parent_gone(a);
        cbuf_commit(&a->in, (size_t)r);
    }
    for (;;) {
        proto_hdr h;
        const uint8_t *payload;
        cella_err err;
        int got = proto_peek_frame(&a->in, &h, &payload, &err);
        if (got < 0)
            die(a, err.msg);   /* a corrupt stream cannot be resynchronised */
        if (!got)
            break;
        dispatch(a, &h, payload);
        cbuf_consume(&a->in, PROTO_HDR_SIZE + h.len);
    }
}

static void loop(agent *a)
{
    struct pollfd pfd[2 + 4 * AGENT_MAX_EXECS];
    int owner[2 + 4 * AGENT_MAX_EXECS];   /* exec slot */
    int stream[2 + 4 * AGENT_MAX_EXECS];  /* index into its fd[] */
    for (;;) {
        int64_t now = clock_now_ns();
        int timeout = -1;
        for (int i = 0; i < AGENT_MAX_EXECS; i++) {
            if (!a->execs[i])
                continue;
            int t = agent_exec_tick(a, i, now);
            if (t >= 0 && (timeout < 0 || t < timeout))
                timeout = t;
        }
        flush(a, false);
        bool throttled = agent_throttled(a);
        int n = 0;
        pfd[n++] = (struct pollfd){.fd = a->sock,
                                   .events = (short)(POLLIN | (cbuf_avail(&a->out) ? POLLOUT : 0))};
        pfd[n++] = (struct pollfd){.fd = a->sigfd, .events = POLLIN};
        /* Start reports first, so STARTED goes out before any output. */
        static const int order[4] = {EXEC_REPORT, 0, 1, 2};
        for (int k = 0; k < 4; k++)
            for (int i = 0; i < AGENT_MAX_EXECS; i++) {
                agent_exec *e = a->execs[i];
                int s = order[k];
                if (!e || e->fd[s] < 0)
                    continue;
                short ev = s == 0 ? (cbuf_avail(&e->stdin_buf) ? POLLOUT : 0)
                           : s == EXEC_REPORT ? POLLIN
                           : throttled || (s == 1 && agent_exec_window_full(e)) ? 0 : POLLIN;
                if (!ev)
                    continue;
                owner[n] = i;
                stream[n] = s;
                pfd[n++] = (struct pollfd){.fd = e->fd[s], .events = ev};
            }
        if (poll(pfd, (nfds_t)n, timeout) < 0 && errno != EINTR)
            _exit(1);
        if (pfd[1].revents & POLLIN) {
            struct signalfd_siginfo si;
            while (read(a->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
                ;
            agent_reap(a);
        }
        for (int i = 2; i < n; i++) {
            agent_exec *e = a->execs[owner[i]];
            /* An earlier entry may have ended this exec (a failed start). */
            if (!pfd[i].revents || !e || e->fd[stream[i]] != pfd[i].fd)
                continue;
            if (stream[i] == EXEC_REPORT)
                agent_exec_started(a, owner[i]);
            else if (stream[i] == 0)
                agent_exec_write_stdin(a, e);
            else
                agent_exec_pump(a, e, stream[i]);
        }
        if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR))
            read_socket(a);
        /* Reap again: a child may have exited between the signal and now. */
        agent_reap(a);
    }
}

int agent_main(void)
{
    agent a;
    memset(&a, 0, sizeof(a));
    a.sock = AGENT_SOCK_FD;
    a.devnull = a.sigfd = -1;
    cbuf_init(&a.in);
    cbuf_init(&a.out);
    struct stat st;
    if (getpid() != 1 || fstat(a.sock, &st) < 0 || !S_ISSOCK(st.st_mode)) {
        fprintf(stderr, "cella: __agent is run by cella itself, as PID 1 of a sandbox\n");
        return 2;
    }
    /* The socket arrives without close-on-exec (dup2 clears it); no command
     * may ever inherit it, or it could forge frames to the parent. */
    if (fd_set_cloexec(a.sock, 1) < 0)
        return 2;
    signal(SIGPIPE, SIG_IGN);
    /* SIGCHLD arrives through a descriptor, so the loop is one poll(). */
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);

    int fds[MAX_SETUP_FDS];
    size_t nfds = 0;
    proto_hdr h;
    const uint8_t *payload;
    proto_setup setup;
    cella_err err;
    if (read_setup(&a, fds, &nfds, &h, &payload, &err) < 0 ||
        proto_get_setup(payload, h.len, &setup, &err) < 0)
        die(&a, err.msg);
    cbuf_consume(&a.in, PROTO_HDR_SIZE + h.len);
    int rc = agent_setup(&a, &setup, fds, nfds, &err);
    for (size_t i = 0; i < nfds; i++)
        close(fds[i]);
    proto_setup_free(&setup);
    if (rc < 0)
        die(&a, err.msg);
    a.sigfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
    if (a.sigfd < 0 || fd_set_nonblock(a.sock, 1) < 0) {
        snprintf(err.msg, sizeof(err.msg), "signalfd: %s", strerror(errno));
        die(&a, err.msg);
    }
    /* Before the first child: every file operation inherits this page. */
    if (fs_quota_init() < 0) {
        snprintf(err.msg, sizeof(err.msg), "the workspace quota's shared page: %s", strerror(errno));
        die(&a, err.msg);
    }
    agent_send(&a, PROTO_READY, 0, 0, NULL, 0);
    loop(&a);
    return 0;
}
