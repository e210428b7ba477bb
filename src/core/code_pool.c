/* The pool's workers: starting them (posix_spawn, so a threaded daemon
 * forks nothing it would have to clean up), talking to them with a
 * deadline, killing and replacing them, and handing them to requests. */
#include "core/code_pool_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/code_worker.h"
#include "util/alloc.h"
#include "util/fdio.h"
#include "util/log.h"

int64_t code_pool_deadline(uint64_t max_time_us, bool loaded)
{
    /* A loaded run replays every step so far before it resumes: up to its
     * whole time limit again. */
    uint64_t ms = max_time_us / 1000 * (loaded ? 2 : 1);
    ms += ms / 2 + CODE_POOL_GRACE_MS;
    return clock_now_ns() + (int64_t)ms * 1000000;
}

void code_answer_error(code_answer *a, const char *type, const char *fmt, ...)
{
    code_wire_msg_free(&a->m);
    memset(&a->m, 0, sizeof(a->m));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->why, sizeof(a->why), fmt, ap);
    va_end(ap);
    a->m.type = CW_STEP;
    a->m.kind = CODE_STEP_ERROR;
    a->m.done = true;
    a->m.err_type = (code_wire_str){type, strlen(type)};
    a->m.err_msg = (code_wire_str){a->why, strlen(a->why)};
    a->m.out = (code_wire_str){"", 0};
}

void code_answer_free(code_answer *a)
{
    code_wire_msg_free(&a->m);
    cbuf_free(&a->frame);
}

/* ---- one worker ------------------------------------------------------------ */

extern char **environ;

/* The worker's environment: nothing of the daemon's, except, in the
 * sanitizer build, the sanitizers' own options. */
static char **worker_env(char **buf, size_t max)
{
    size_t n = 0;
#ifdef CELLA_SANITIZE
    for (char **e = environ; e && *e && n + 1 < max; e++)
        if (!strncmp(*e, "ASAN_OPTIONS=", 13) || !strncmp(*e, "UBSAN_OPTIONS=", 14) ||
            !strncmp(*e, "LSAN_OPTIONS=", 13))
            buf[n++] = *e;
#endif
    buf[n] = NULL;
    return buf;
}

int cworker_start(code_pool *p, cworker *w, cella_err *err)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return cella_err_set(err, errno, "socketpair");
    /* dup2 onto itself would leave close-on-exec set. */
    if (sv[1] == CODE_WORKER_FD) {
        int moved = fcntl(sv[1], F_DUPFD_CLOEXEC, CODE_WORKER_FD + 1);
        close(sv[1]);
        if (moved < 0) {
            close(sv[0]);
            return cella_err_set(err, errno, "fcntl");
        }
        sv[1] = moved;
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, sv[1], CODE_WORKER_FD);
    posix_spawnattr_init(&at);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                      POSIX_SPAWN_SETSID);
    char asb[32], ppid[16];
    snprintf(asb, sizeof(asb), "%llu", (unsigned long long)p->o.as_bytes);
    snprintf(ppid, sizeof(ppid), "%d", (int)getpid());
    char *argv[] = {"cella", "code-worker", "--as-bytes", asb, "--ppid", ppid, NULL};
    char *envb[8];
    pid_t pid;
    int rc = posix_spawn(&pid, p->exe, &fa, &at, argv, worker_env(envb, 8));
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(sv[1]);
    if (rc != 0) {
        close(sv[0]);
        return cella_err_set(err, rc, "start a code worker (%s)", p->exe);
    }
    pthread_mutex_lock(&p->mu);
    w->pid = pid;
    pthread_mutex_unlock(&p->mu);
    w->fd = sv[0];
    w->next_handle = 0;
    fd_set_nonblock(w->fd, 1);
    code_answer a = {0};
    cbuf_init(&a.frame);
    int64_t deadline = clock_now_ns() + (int64_t)CODE_POOL_START_MS * 1000000;
    int r = code_wire_read(w->fd, &a.frame, CODE_WIRE_MAX_FRAME, deadline);
    const char *why = "bad frame";
    if (r == 0 && code_wire_decode(cbuf_head(&a.frame), cbuf_avail(&a.frame), &a.m, &why) == 0 &&
        a.m.type == CW_READY) {
        code_answer_free(&a);
        log_debug("event=code_worker_started worker=%u pid=%d", w->idx, (int)pid);
        return 0;
    }
    if (r == 0 && a.m.type == CW_FAIL && a.m.err_msg.p)
        cella_err_set(err, 0, "code worker failed to confine itself: %s", a.m.err_msg.p);
    else
        cella_err_set(err, r < 0 ? errno : 0, "code worker %d did not start", (int)pid);
    code_answer_free(&a);
    cworker_kill(p, w, "start failed");
    return -1;
}

/* Called without mu. */
void cworker_kill(code_pool *p, cworker *w, const char *why)
{
    if (w->pid <= 0)
        return;
    /* Its pid cannot be reused before it is reaped, here. */
    kill(w->pid, SIGKILL);
    int st = 0;
    while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (w->fd >= 0)
        close(w->fd);
    /* A worker stopped for any other reason than the daemon's end is news. */
    log_msg(strcmp(why, "shutdown") ? LOG_INFO : LOG_DEBUG,
              "event=code_worker_stopped worker=%u pid=%d why=\"%s\" %s=%d", w->idx, (int)w->pid,
              why, WIFSIGNALED(st) ? "signal" : "status",
              WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
    pthread_mutex_lock(&p->mu);
    w->pid = 0;
    pthread_mutex_unlock(&p->mu);
    w->fd = -1;
}

bool cworker_idle_ok(const cworker *w)
{
    if (w->pid <= 0)
        return false;
    struct pollfd pf = {.fd = w->fd, .events = POLLIN};
    return poll(&pf, 1, 0) == 0;
}

/* Writes a frame before deadline (the socket is non-blocking). */
static int write_frame(int fd, const cbuf *f, int64_t deadline)
{
    const uint8_t *q = cbuf_head(f);
    size_t n = cbuf_avail(f);
    while (n) {
        ssize_t k = send(fd, q, n, MSG_NOSIGNAL);
        if (k > 0) {
            q += k;
            n -= (size_t)k;
            continue;
        }
        if (k < 0 && errno != EAGAIN && errno != EINTR)
            return -1;
        int64_t left = deadline - clock_now_ns();
        if (left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        struct pollfd pf = {.fd = fd, .events = POLLOUT};
        poll(&pf, 1, (int)(left / 1000000) + 1);
    }
    return 0;
}

wtalk cworker_talk(code_pool *p, cworker *w, const code_wire_msg *req, code_answer *a,
                   int64_t deadline)
{
    code_wire_msg_free(&a->m);
    memset(&a->m, 0, sizeof(a->m));
    cbuf_reset(&w->io);
    if (code_wire_encode(req, &w->io) < 0) {
        /* Cannot happen for requests the routes let through (bodies are
         * smaller than a frame); the worker is fine. */
        code_answer_error(a, "MemoryError", "the request is larger than a worker frame");
        return WT_OK;
    }
    int rc = write_frame(w->fd, &w->io, deadline);
    if (rc == 0)
        rc = code_wire_read(w->fd, &a->frame, CODE_WIRE_MAX_FRAME, deadline);
    const char *why = NULL;
    if (rc == 0 &&
        code_wire_decode(cbuf_head(&a->frame), cbuf_avail(&a->frame), &a->m, &why) == 0)
        return WT_OK;
    bool timeout = rc < 0 && errno == ETIMEDOUT;
    cworker_kill(p, w, timeout ? "deadline" : why ? why : rc > 0 ? "exited" : "crashed");
    return timeout ? WT_TIMEOUT : WT_CRASHED;
}

/* ---- handing workers out ------------------------------------------------------ */

static struct timespec abs_ms(int64_t ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (long)(ms % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    return ts;
}

/* Under mu. A dead idle worker is left to the pool's thread (woken). */
static cworker *pick(code_pool *p, prun **evict)
{
    *evict = NULL;
    bool dead = false;
    for (unsigned i = 0; i < p->o.workers; i++) {
        cworker *w = &p->w[i];
        if (w->busy || w->resident)
            continue;
        if (cworker_idle_ok(w))
            return w;
        dead = true;
    }
    for (unsigned i = 0; i < p->o.workers; i++) {
        cworker *w = &p->w[i];
        if (w->busy || !w->resident || w->resident->st != PR_RESIDENT)
            continue;
        if (!cworker_idle_ok(w)) {
            dead = true;
            continue;
        }
        *evict = w->resident;
        (*evict)->st = PR_MOVING;
        return w;
    }
    if (dead)
        pthread_cond_broadcast(&p->cv);
    return NULL;
}

int cworker_acquire(code_pool *p, cworker **out, prun **evict, core_error *e)
{
    struct timespec until = abs_ms(CODE_POOL_QUEUE_WAIT_MS);
    bool queued = false;
    for (;;) {
        if (p->draining)
            return core_fail(e, S301, "the daemon is shutting down; retry against another");
        cworker *w = pick(p, evict);
        if (w) {
            w->busy = true;
            *out = w;
            if (queued)
                p->waiting--;
            return 0;
        }
        /* Nothing running and nothing starting: say why rather than wait. */
        bool any = false;
        for (unsigned i = 0; i < p->o.workers && !any; i++)
            any = p->w[i].pid > 0 || p->w[i].busy;
        if (!any && p->start_failing) {
            if (queued)
                p->waiting--;
            return core_fail(e, S302, "internal error: no code worker can be started: %s",
                             p->start_err);
        }
        if (!queued) {
            if (p->waiting >= p->o.queue_max)
                return core_fail(e, S301, "every code worker is busy and %u requests are "
                                 "waiting (code_queue_max); retry shortly", p->waiting);
            p->waiting++;
            queued = true;
        }
        if (pthread_cond_timedwait(&p->cv, &p->mu, &until) == ETIMEDOUT) {
            p->waiting--;
            return core_fail(e, S301, "no code worker became free within %d s; retry shortly",
                             CODE_POOL_QUEUE_WAIT_MS / 1000);
        }
    }
}

void cworker_release(code_pool *p, cworker *w)
{
    w->busy = false;
    pthread_cond_broadcast(&p->cv);
}

/* ---- the pool ----------------------------------------------------------------- */

int code_pool_open(const code_pool_opts *o, code_pool **out, cella_err *err)
{
    code_pool *p = cella_calloc(1, sizeof(*p));
    p->o = *o;
    if (!p->o.workers)
        p->o.workers = 1;
    p->exe = cella_strdup(o->exe ? o->exe : "/proc/self/exe");
    pthread_mutex_init(&p->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cv, &ca);
    pthread_condattr_destroy(&ca);
    p->w = cella_calloc(p->o.workers, sizeof(*p->w));
    for (unsigned i = 0; i < p->o.workers; i++) {
        p->w[i].idx = i;
        p->w[i].fd = -1;
        cbuf_init(&p->w[i].io);
    }
    if (pthread_create(&p->thread, NULL, code_pool_thread, p) != 0) {
        cella_err_set(err, errno, "start the code pool's thread");
        goto error;
    }
    p->thread_started = true;
    /* The thread starts the workers. One that cannot start is logged and
     * retried, and requests are answered S302 with why; sandboxes work on. */
    pthread_mutex_lock(&p->mu);
    while (!p->started_once)
        pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
    *out = p;
    return 0;
error:
    code_pool_close(p);
    return -1;
}

void code_pool_drain(code_pool *p)
{
    pthread_mutex_lock(&p->mu);
    p->draining = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

void code_pool_close(code_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->closing = p->draining = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    if (p->thread_started)
        pthread_join(p->thread, NULL);
    for (unsigned i = 0; i < p->o.workers; i++) {
        cworker_kill(p, &p->w[i], "shutdown");
        cbuf_free(&p->w[i].io);
    }
    for (size_t i = 0; i < p->nruns; i++)
        prun_free(p->runs[i]);
    cella_free(p->runs);
    cella_free(p->w);
    cella_free(p->exe);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    cella_free(p);
}

void code_pool_get_stats(code_pool *p, code_pool_stats *s)
{
    memset(s, 0, sizeof(*s));
    pthread_mutex_lock(&p->mu);
    for (unsigned i = 0; i < p->o.workers; i++) {
        s->workers_alive += p->w[i].pid > 0;
        s->workers_busy += p->w[i].busy;
    }
    for (size_t i = 0; i < p->nruns; i++) {
        s->runs_resident += p->runs[i]->st != PR_DUMPED;
        s->runs_dumped += p->runs[i]->st == PR_DUMPED;
    }
    s->waiting = p->waiting;
    s->dumped_bytes = p->dumped_bytes;
    s->workers_replaced = p->replaced;
    pthread_mutex_unlock(&p->mu);
}

pid_t code_pool_worker_pid(code_pool *p, unsigned i)
{
    pthread_mutex_lock(&p->mu);
    pid_t pid = i < p->o.workers ? p->w[i].pid : 0;
    pthread_mutex_unlock(&p->mu);
    return pid;
}
