/* The pool's paused runs: run and resume, moving a run out of its worker
 * (dump) and back into any worker (load), expiry, and the background
 * thread. Locking: mu guards the table, each run's state and the workers'
 * busy/resident fields; a thread talks to a worker only while it owns it
 * (busy), without mu, and a run being worked on is ACTIVE or MOVING, so no
 * two threads ever touch the same run or worker. */
#include "core/code_pool_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/alloc.h"
#include "util/fdio.h"
#include "util/log.h"

void prun_free(prun *r)
{
    if (!r)
        return;
    cella_free(r->tenant);
    cella_free(r->dump);
    cella_free(r->pending);
    cella_free(r);
}

static prun *find_run(code_pool *p, const char *id)
{
    for (size_t i = 0; i < p->nruns; i++)
        if (!strcmp(p->runs[i]->id, id))
            return p->runs[i];
    return NULL;
}

/* Takes r out of the table and leaves a tombstone saying why (under mu). */
static void bury(code_pool *p, prun *r, bool lost, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void bury(code_pool *p, prun *r, bool lost, const char *fmt, ...)
{
    for (size_t i = 0; i < p->nruns; i++)
        if (p->runs[i] == r) {
            p->runs[i] = p->runs[--p->nruns];
            break;
        }
    if (r->w && r->w->resident == r)
        r->w->resident = NULL;
    if (r->dump)
        p->dumped_bytes -= r->dump_len;
    tombstone *t = &p->tomb[p->tomb_next++ % CODE_POOL_TOMBSTONES];
    snprintf(t->id, sizeof(t->id), "%s", r->id);
    snprintf(t->tenant, sizeof(t->tenant), "%s", r->tenant);
    t->lost = lost;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->why, sizeof(t->why), fmt, ap);
    va_end(ap);
    log_info("event=code_run_ended run=%s tenant=%s why=\"%s\"", r->id, r->tenant, t->why);
    prun_free(r);
    pthread_cond_broadcast(&p->cv);
}

static void set_pending(prun *r, const code_wire_msg *m)
{
    cella_free(r->pending);
    r->pending = NULL;
    r->npending = m->npending;
    if (m->npending) {
        r->pending = cella_malloc(m->npending * sizeof(uint64_t));
        memcpy(r->pending, m->pending, m->npending * sizeof(uint64_t));
    }
}

/* A FREE of handle in w (owned). */
static void free_in_worker(code_pool *p, cworker *w, uint32_t handle)
{
    if (w->pid <= 0)
        return;
    code_answer a = {0};
    cbuf_init(&a.frame);
    code_wire_msg q = {.type = CW_FREE, .handle = handle};
    cworker_talk(p, w, &q, &a, clock_now_ns() + (int64_t)CODE_POOL_ADMIN_MS * 1000000);
    code_answer_free(&a);
}

/* Dumps r (MOVING) out of its worker (owned by the caller). must: the
 * worker is needed, so a run that cannot be dumped is lost; otherwise it
 * stays where it is. Without mu. */
static void evict(code_pool *p, prun *r, bool must)
{
    cworker *w = r->w;
    code_answer a = {0};
    cbuf_init(&a.frame);
    code_wire_msg q = {.type = CW_DUMP, .handle = r->handle};
    wtalk t = cworker_talk(p, w, &q, &a, clock_now_ns() + (int64_t)CODE_POOL_ADMIN_MS * 1000000);
    bool ok = t == WT_OK && a.m.type == CW_DUMPED;
    char why[200] = "";
    if (t != WT_OK)
        snprintf(why, sizeof(why), "its worker %s while the run was being moved out of it",
                 t == WT_TIMEOUT ? "hung" : "crashed");
    else if (!ok)
        snprintf(why, sizeof(why), "it could not be dumped: %.150s",
                 a.m.err_msg.p ? a.m.err_msg.p : "no answer");
    char *copy = NULL;
    size_t n = ok ? a.m.bytes.n : 0;
    pthread_mutex_lock(&p->mu);
    if (ok && p->dumped_bytes + n > CODE_POOL_DUMP_BUDGET) {
        ok = false;
        snprintf(why, sizeof(why), "the daemon holds %llu bytes of paused runs already",
                 (unsigned long long)p->dumped_bytes);
    }
    if (ok)
        p->dumped_bytes += n;     /* reserved before the copy, outside mu */
    pthread_mutex_unlock(&p->mu);
    if (ok) {
        copy = cella_malloc(n + 1);
        memcpy(copy, a.m.bytes.p, n);
        copy[n] = '\0';
    }
    code_answer_free(&a);
    if (ok || must)
        free_in_worker(p, w, r->handle);
    pthread_mutex_lock(&p->mu);
    if (ok) {
        r->dump = copy;
        r->dump_len = n;
        r->st = PR_DUMPED;
        r->w = NULL;
        w->resident = NULL;
        log_debug("event=code_run_dumped run=%s bytes=%zu", r->id, n);
    } else if (must || t != WT_OK) {
        bury(p, r, true, "%s", why);
    } else {
        r->st = PR_RESIDENT;
        r->undumpable = true;
    }
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

void prun_evict(code_pool *p, prun *r)
{
    evict(p, r, true);
}

static uint32_t tenant_runs(code_pool *p, const char *tenant)
{
    uint32_t n = 0;
    for (size_t i = 0; i < p->nruns; i++)
        n += !strcmp(p->runs[i]->tenant, tenant);
    return n;
}

/* A run's limits with every 0 field (the interpreter's default) made that
 * default, so that capping a dump's limits by them (code_run_load) leaves
 * nothing unbounded that the run did not have unbounded. max_allocs 0 is
 * "no limit" by default, so it stays 0. */
static code_limits resolved_limits(const code_limits *l)
{
    code_limits x = *l;
    if (!x.max_time_us)
        x.max_time_us = CODE_DEFAULT_MAX_TIME_US;
    if (!x.max_bytes)
        x.max_bytes = CODE_DEFAULT_MAX_BYTES;
    if (!x.max_depth)
        x.max_depth = CODE_DEFAULT_MAX_DEPTH;
    if (!x.max_calls)
        x.max_calls = CODE_DEFAULT_MAX_CALLS;
    if (!x.max_nesting)
        x.max_nesting = CODE_DEFAULT_MAX_NESTING;
    return x;
}

/* The end of a step in w (owned): the answer for the caller, the run's new
 * state, and w given back. r is the run resumed, or NULL for a new run. */
static int finish(code_pool *p, cworker *w, prun *r, const char *tenant, uint32_t handle,
                  const code_limits *lim, wtalk t, code_answer *a, core_error *e)
{
    uint64_t max_time_us = lim->max_time_us;
    if (t == WT_OK && a->m.type == CW_FAIL) {
        /* MemoryError: a step too big for a frame; else the worker refused. */
        bool mem = a->m.err_type.p && !strcmp(a->m.err_type.p, "MemoryError");
        code_answer_error(a, mem ? "MemoryError" : "InternalError", "%s%s",
                          mem ? "" : "the code worker refused the request: ",
                          a->m.err_msg.p ? a->m.err_msg.p : "?");
    }
    else if (t == WT_OK && a->m.type != CW_STEP) {
        cworker_kill(p, w, "answered out of turn");
        t = WT_CRASHED;
    }
    if (t == WT_TIMEOUT)
        code_answer_error(a, "TimeoutError",
                          "the run did not finish its step within its time limit (%llu ms) "
                          "plus a grace; its worker was killed",
                          (unsigned long long)(max_time_us / 1000));
    else if (t == WT_CRASHED)
        code_answer_error(a, "InternalError",
                          "the code worker running this step crashed (a bug in the "
                          "interpreter, or a limit of the process); the run is lost");
    pthread_mutex_lock(&p->mu);
    if (t != WT_OK)
        p->replaced++;
    if (a->m.done) {
        if (r)
            bury(p, r, t != WT_OK, t != WT_OK ? "its worker was killed" : "it ended");
    } else if (!r && (p->nruns >= p->o.max_paused ||
                      (p->o.max_paused_per_tenant &&
                       tenant_runs(p, tenant) >= p->o.max_paused_per_tenant))) {
        bool all = p->nruns >= p->o.max_paused;
        pthread_mutex_unlock(&p->mu);
        free_in_worker(p, w, handle);
        pthread_mutex_lock(&p->mu);
        cworker_release(p, w);
        pthread_mutex_unlock(&p->mu);
        return core_fail(e, S400, "resource limit exceeded: %u code runs are paused already "
                         "(%s); resume or let some expire",
                         all ? p->o.max_paused : p->o.max_paused_per_tenant,
                         all ? "code_max_paused_runs" : "code_max_paused_runs_per_tenant, yours");
    } else {
        if (!r) {
            r = cella_calloc(1, sizeof(*r));
            cella_id id;
            cella_err err;
            if (cella_id_new(p->o.node_key, &id, &err) < 0)
                abort();          /* getrandom failing is the machine failing */
            memcpy(r->id, id.str, sizeof(r->id));
            r->tenant = cella_strdup(tenant);
            r->limits = resolved_limits(lim);
            p->runs = cella_realloc(p->runs, (p->nruns + 1) * sizeof(*p->runs));
            p->runs[p->nruns++] = r;
        }
        r->st = PR_RESIDENT;
        r->w = w;
        r->handle = handle;
        r->undumpable = false;
        r->last_ns = clock_now_ns();
        if (a->m.kind == CODE_STEP_CALL)
            set_pending(r, &a->m);
        w->resident = r;
        memcpy(a->run_id, r->id, sizeof(a->run_id));
    }
    cworker_release(p, w);
    pthread_mutex_unlock(&p->mu);
    return 0;
}

static uint32_t next_handle(cworker *w)
{
    if (++w->next_handle == 0)
        w->next_handle = 1;
    return w->next_handle;
}

/* A running worker for a request, its paused run moved out first (without
 * mu). Moving the run out can kill the worker (it crashed answering the
 * dump): then another is taken, a few times at most. */
static int take_worker(code_pool *p, cworker **out, core_error *e)
{
    for (int attempt = 0; attempt < 3; attempt++) {
        cworker *w;
        prun *ev;
        pthread_mutex_lock(&p->mu);
        int rc = cworker_acquire(p, &w, &ev, e);
        pthread_mutex_unlock(&p->mu);
        if (rc < 0)
            return -1;
        if (ev)
            evict(p, ev, true);
        if (w->pid > 0) {
            *out = w;
            return 0;
        }
        pthread_mutex_lock(&p->mu);
        cworker_release(p, w);
        pthread_mutex_unlock(&p->mu);
    }
    return core_fail(e, S302, "internal error: code workers died while runs were moved out "
                     "of them; retry");
}

int code_pool_run(code_pool *p, const char *tenant, const code_pool_run_req *req,
                  code_answer *a, core_error *e)
{
    memset(a, 0, sizeof(*a));
    cbuf_init(&a->frame);
    cworker *w;
    if (take_worker(p, &w, e) < 0)
        return -1;
    code_wire_msg q = {
        .type = CW_RUN,
        .handle = next_handle(w),
        .code = {req->code, req->code_len},
        .inputs = (code_input *)req->inputs,
        .ninputs = req->ninputs,
        .functions = (const char **)req->functions,
        .nfunctions = req->nfunctions,
        .has_functions = req->has_functions,
        .limits = req->limits,
        .top_level_await = req->top_level_await,
        .out_max = p->o.out_max,
    };
    wtalk t = cworker_talk(p, w, &q, a, code_pool_deadline(req->limits.max_time_us, false));
    return finish(p, w, NULL, tenant, q.handle, &req->limits, t, a, e);
}

static int not_found(code_pool *p, const char *tenant, const char *id, core_error *e)
{
    for (size_t i = 0; i < CODE_POOL_TOMBSTONES; i++) {
        const tombstone *t = &p->tomb[i];
        if (t->id[0] && !strcmp(t->id, id) && !strcmp(t->tenant, tenant)) {
            if (t->lost)
                return core_fail(e, S502, "code run lost: %s (%s)", id, t->why);
            return core_fail(e, S500, "code run not found: %s (%s)", id, t->why);
        }
    }
    return core_fail(e, S500, "code run not found: %.100s (unknown, or expired)", id);
}

static int check_results(const prun *r, const code_result *res, size_t n, core_error *e)
{
    if (n == 0)
        return core_fail(e, S001, "invalid request: results is empty");
    for (size_t i = 0; i < n; i++) {
        bool pending = false;
        for (size_t j = 0; j < r->npending && !pending; j++)
            pending = r->pending[j] == res[i].call_id;
        if (!pending)
            return core_fail(e, S001, "invalid request: results[%zu].call_id %llu is not one "
                             "of the run's pending calls", i, (unsigned long long)res[i].call_id);
        for (size_t j = 0; j < i; j++)
            if (res[j].call_id == res[i].call_id)
                return core_fail(e, S001, "invalid request: results[%zu].call_id %llu is "
                                 "answered twice", i, (unsigned long long)res[i].call_id);
    }
    return 0;
}

int code_pool_resume(code_pool *p, const char *tenant, const char *run_id,
                     const code_result *results, size_t n, code_answer *a, core_error *e)
{
    memset(a, 0, sizeof(*a));
    cbuf_init(&a->frame);
    pthread_mutex_lock(&p->mu);
    prun *r;
    for (;;) {
        r = find_run(p, run_id);
        if (!r || strcmp(r->tenant, tenant) != 0) {
            not_found(p, tenant, run_id, e);
            pthread_mutex_unlock(&p->mu);
            return -1;
        }
        if (r->st != PR_MOVING)
            break;
        pthread_cond_wait(&p->cv, &p->mu);
    }
    if (p->draining || r->st == PR_ACTIVE || check_results(r, results, n, e) < 0) {
        if (p->draining)
            core_fail(e, S301, "the daemon is shutting down; retry against another");
        else if (r->st == PR_ACTIVE)
            core_fail(e, S501, "code run busy: %s is being resumed by another request", run_id);
        pthread_mutex_unlock(&p->mu);
        return -1;
    }
    cworker *w = r->w;
    bool loaded = r->st == PR_DUMPED;
    if (!loaded)
        w->busy = true;           /* a worker holding a RESIDENT run is never busy */
    r->st = PR_ACTIVE;
    pthread_mutex_unlock(&p->mu);
    if (loaded && take_worker(p, &w, e) < 0) {
        pthread_mutex_lock(&p->mu);
        r->st = PR_DUMPED;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        return -1;
    }
    uint32_t handle = r->handle;
    if (loaded) {
        handle = next_handle(w);
        /* The run's own limits go with its dump: the worker caps the dumped
         * ones by them, so a dump a compromised worker forged cannot grant a
         * later load more than the API gave the run. */
        code_wire_msg q = {.type = CW_LOAD, .handle = handle, .bytes = {r->dump, r->dump_len},
                           .limits = r->limits, .out_max = p->o.out_max};
        wtalk t = cworker_talk(p, w, &q, a, code_pool_deadline(r->limits.max_time_us, true));
        if (t != WT_OK || a->m.type != CW_STEP || a->m.kind != CODE_STEP_CALL || a->m.done)
            return finish(p, w, r, tenant, handle, &r->limits, t, a, e);
        pthread_mutex_lock(&p->mu);
        p->dumped_bytes -= r->dump_len;
        cella_free(r->dump);
        r->dump = NULL;
        r->dump_len = 0;
        r->w = w;
        r->handle = handle;
        pthread_mutex_unlock(&p->mu);
    }
    code_wire_msg q = {.type = CW_RESUME, .handle = handle, .results = (code_result *)results,
                       .nresults = n, .out_max = p->o.out_max};
    wtalk t = cworker_talk(p, w, &q, a, code_pool_deadline(r->limits.max_time_us, loaded));
    return finish(p, w, r, tenant, handle, &r->limits, t, a, e);
}

void code_pool_discard(code_pool *p, const char *tenant, const char *run_id, const char *why)
{
    pthread_mutex_lock(&p->mu);
    prun *r;
    for (;;) {
        r = find_run(p, run_id);
        if (!r || strcmp(r->tenant, tenant) != 0 || r->st == PR_ACTIVE) {
            pthread_mutex_unlock(&p->mu);
            return;
        }
        /* A RESIDENT run's worker is never busy but while moving it. */
        if (r->st != PR_MOVING && !(r->st == PR_RESIDENT && r->w->busy))
            break;
        pthread_cond_wait(&p->cv, &p->mu);
    }
    if (r->st == PR_RESIDENT) {
        cworker *w = r->w;
        r->st = PR_MOVING;
        w->busy = true;
        pthread_mutex_unlock(&p->mu);
        free_in_worker(p, w, r->handle);
        pthread_mutex_lock(&p->mu);
        bury(p, r, false, "%.150s", why);
        cworker_release(p, w);
    } else {
        bury(p, r, false, "%.150s", why);
    }
    pthread_mutex_unlock(&p->mu);
}

/* ---- the background thread ------------------------------------------------------ */

/* One pass; returns true when it let go of mu (the table may have changed:
 * the caller starts over). Under mu. */
static bool tick_one(code_pool *p, int64_t now)
{
    int64_t ttl = (int64_t)p->o.ttl_ms * 1000000, res = (int64_t)p->o.resident_ms * 1000000;
    for (size_t i = 0; i < p->nruns; i++) {
        prun *r = p->runs[i];
        bool expired = now - r->last_ns >= ttl;
        if (r->st == PR_DUMPED && expired) {
            bury(p, r, false, "expired after %llu s without a resume",
                 (unsigned long long)(p->o.ttl_ms / 1000));
            return false;
        }
        if (r->st != PR_RESIDENT || r->w->busy)
            continue;
        if (expired) {
            cworker *w = r->w;
            r->st = PR_MOVING;
            w->busy = true;
            pthread_mutex_unlock(&p->mu);
            free_in_worker(p, w, r->handle);
            pthread_mutex_lock(&p->mu);
            bury(p, r, false, "expired after %llu s without a resume",
                 (unsigned long long)(p->o.ttl_ms / 1000));
            cworker_release(p, w);
            return true;
        }
        if (now - r->last_ns >= res && !r->undumpable) {
            cworker *w = r->w;
            r->st = PR_MOVING;
            w->busy = true;
            pthread_mutex_unlock(&p->mu);
            evict(p, r, false);
            pthread_mutex_lock(&p->mu);
            cworker_release(p, w);
            return true;
        }
    }
    /* A worker that died while idle: the run it held is lost. */
    for (unsigned i = 0; i < p->o.workers; i++) {
        cworker *w = &p->w[i];
        if (w->busy || w->pid <= 0 || cworker_idle_ok(w))
            continue;
        w->busy = true;
        pthread_mutex_unlock(&p->mu);
        cworker_kill(p, w, "died while idle");
        pthread_mutex_lock(&p->mu);
        p->replaced++;
        if (w->resident)
            bury(p, w->resident, true, "its worker died while the run was paused in it");
        cworker_release(p, w);
        return true;
    }
    /* Workers killed or crashed are started again here, and only here. */
    for (unsigned i = 0; i < p->o.workers; i++) {
        cworker *w = &p->w[i];
        if (w->busy || w->pid > 0 || p->closing || now < w->retry_ns)
            continue;
        w->busy = true;
        pthread_mutex_unlock(&p->mu);
        cella_err err;
        int rc = cworker_start(p, w, &err);
        if (rc < 0)
            log_error("event=code_worker_start_failed worker=%u error=\"%s\"", w->idx, err.msg);
        pthread_mutex_lock(&p->mu);
        p->start_failing = rc < 0;
        if (rc < 0) {
            snprintf(p->start_err, sizeof(p->start_err), "%.255s", err.msg);
            w->retry_ns = now + (int64_t)CODE_POOL_RETRY_MS * 1000000;
        }
        cworker_release(p, w);
        return true;
    }
    return false;
}

void *code_pool_thread(void *arg)
{
    code_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    while (!p->closing) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += CODE_POOL_TICK_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        for (int guard = 0; guard < 1000 && !p->closing && tick_one(p, clock_now_ns()); guard++)
            ;
        if (!p->started_once) {
            p->started_once = true;
            pthread_cond_broadcast(&p->cv);
        }
        pthread_cond_timedwait(&p->cv, &p->mu, &ts);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}
