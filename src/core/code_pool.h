/* Code mode's worker pool, on the daemon's side: pre-started `cella
 * code-worker` processes (core/code_worker.h), each serving one request at
 * a time over its socketpair, and the table of paused runs.
 *
 * Threads: the HTTP server runs a thread per connection, so a request's
 * thread takes a worker (waiting in a bounded queue when all are busy),
 * talks to it with a deadline, and gives it back; one background thread
 * expires paused runs and moves idle ones out of their workers.
 *
 * A paused run stays in the worker that ran it, so resuming it soon costs
 * one round trip. When that worker is needed by another request, or the run
 * has been idle for resident_ms, the run is dumped (code_run_dump) into the
 * daemon's memory and freed in the worker; a later resume loads it into any
 * free worker. A run idle for ttl_ms is freed. A worker that overruns its
 * deadline (the run's time limit plus a grace) is SIGKILLed, one that
 * crashes is noticed by its socket's end; either is replaced at once, and
 * the run it held ends with a TimeoutError or InternalError answer. */
#ifndef CELLA_CORE_CODE_POOL_H
#define CELLA_CORE_CODE_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/code_wire.h"
#include "core/errors.h"
#include "core/id.h"

typedef struct code_pool code_pool;

/* A worker's address space past its interpreter's memory limit: the binary
 * and its libraries, malloc's slack, the coroutine stacks. */
#define CODE_WORKER_AS_HEADROOM ((uint64_t)256 << 20)

typedef struct code_pool_opts {
    const char *exe;              /* run as `exe code-worker ...`; NULL: /proc/self/exe */
    uint32_t workers;             /* processes kept running */
    uint32_t queue_max;           /* requests waiting for a worker; past it S301 */
    uint32_t max_paused;          /* paused runs held at once; past it S400 */
    uint32_t max_paused_per_tenant;   /* the same for one tenant (0: no cap of its own) */
    uint64_t ttl_ms;              /* a paused run is freed this long after its last step */
    uint64_t resident_ms;         /* ... and moved out of its worker after this long */
    uint64_t as_bytes;            /* each worker's RLIMIT_AS (0: none) */
    uint64_t out_max;             /* print() output kept per step */
    uint32_t node_key;            /* run ids are cella ids of this node */
} code_pool_opts;

/* Starts the workers and the background thread. */
int code_pool_open(const code_pool_opts *o, code_pool **out, cella_err *err);
/* Kills the workers and frees every run. No request may be in flight. */
void code_pool_close(code_pool *p);
/* From now on new requests get S301. */
void code_pool_drain(code_pool *p);

typedef struct code_pool_run_req {
    const char *code;
    size_t code_len;
    const code_input *inputs;
    size_t ninputs;
    const char *const *functions;
    size_t nfunctions;
    bool has_functions;           /* false: every unbound name is a host call */
    code_limits limits;           /* max_time_us must be set: it bounds the wall clock */
    bool top_level_await;
} code_pool_run_req;

/* A step's answer. m holds the step as the worker sent it (kind, result,
 * calls, pending, output, error, duration) or, when the worker failed, an
 * ERROR step the pool made (TimeoutError, InternalError). */
typedef struct code_answer {
    code_wire_msg m;
    char run_id[CELLA_ID_LEN + 1];   /* set while the run is paused (it may be resumed) */
    cbuf frame;                   /* m's strings point into it, or into why */
    char why[320];
} code_answer;

void code_answer_free(code_answer *a);

/* 0 with *a filled (a Python error is an answer too), or -1 with e: S301
 * (draining, queue full), S400 (too many paused runs), S302 (no worker
 * could be started). */
int code_pool_run(code_pool *p, const char *tenant, const code_pool_run_req *r, code_answer *a,
                  core_error *e);
/* The same for a paused run of tenant's: S500 (unknown, expired, finished,
 * or another tenant's), S501 (being resumed by another request), S502
 * (lost), S001 (a call_id that is not pending, or answered twice). */
int code_pool_resume(code_pool *p, const char *tenant, const char *run_id,
                     const code_result *results, size_t n, code_answer *a, core_error *e);

/* Ends a paused run of tenant's (freed in its worker, or its dump dropped)
 * after a step whose answer could not be sent: the client never got its
 * run_id. Later resumes of it get S500 with why. No-op when the run is gone
 * or being resumed. */
void code_pool_discard(code_pool *p, const char *tenant, const char *run_id, const char *why);

typedef struct code_pool_stats {
    unsigned workers_alive, workers_busy;
    unsigned runs_resident, runs_dumped;
    unsigned waiting;
    uint64_t dumped_bytes;
    uint64_t workers_replaced;
} code_pool_stats;
void code_pool_get_stats(code_pool *p, code_pool_stats *s);
/* Worker i's pid (0 when it is not running): for tests and metrics. */
pid_t code_pool_worker_pid(code_pool *p, unsigned i);

#endif
