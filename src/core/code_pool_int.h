/* The pool's internals, shared by code_pool.c (workers: spawning, talking,
 * killing) and code_pool_runs.c (the paused runs, run and resume, the
 * background thread). */
#ifndef CELLA_CORE_CODE_POOL_INT_H
#define CELLA_CORE_CODE_POOL_INT_H

#include <pthread.h>

#include "core/code_pool.h"

/* A worker that does not say READY this long after its start is killed. */
#define CODE_POOL_START_MS 10000
/* Past a request's own time limit, how long its worker may still take
 * (CPU contention, the replay of a loaded run): 1 s plus half the limit. */
#define CODE_POOL_GRACE_MS 1000
/* Dump, load and free of one run (no interpreting): their deadline. */
#define CODE_POOL_ADMIN_MS 10000
/* How long a request waits for a free worker before S301. */
#define CODE_POOL_QUEUE_WAIT_MS 60000
/* The background thread's period. */
#define CODE_POOL_TICK_MS 250
/* What dumped runs may hold in the daemon's memory at once. */
#define CODE_POOL_DUMP_BUDGET (1ull << 30)
/* Ended runs remembered (to say "expired" or "lost" rather than "unknown"). */
#define CODE_POOL_TOMBSTONES 256

typedef struct prun prun;

typedef struct cworker {
    unsigned idx;
    pid_t pid;                    /* 0: not running */
    int fd;                       /* the daemon's end of its socket */
    bool busy;                    /* a thread owns it (talking to it, or (re)starting it) */
    prun *resident;               /* a paused run held in it */
    uint32_t next_handle;
    cbuf io;                      /* frames out (the owner's) */
    int64_t retry_ns;             /* a failed start is retried after this (monotonic) */
} cworker;

typedef enum prun_state {
    PR_RESIDENT,                  /* paused, in w */
    PR_DUMPED,                    /* paused, as bytes in the daemon */
    PR_ACTIVE,                    /* being resumed (by one thread) */
    PR_MOVING,                    /* being dumped out of w, or freed in it */
} prun_state;

struct prun {
    char id[CELLA_ID_LEN + 1];
    char *tenant;
    prun_state st;
    cworker *w;                   /* RESIDENT, MOVING, ACTIVE: the worker holding it */
    uint32_t handle;
    char *dump;                   /* DUMPED */
    size_t dump_len;
    bool undumpable;              /* a dump failed: it stays where it is */
    uint64_t *pending;            /* call ids it waits on */
    size_t npending;
    code_limits limits;           /* the run's limits as the API resolved them (each 0
                                   * field made its default, allocations excepted): its
                                   * time bounds a step's wall clock, and every LOAD
                                   * carries them, capping the limits in the dump (which
                                   * a worker wrote, so is not trusted) */
    int64_t last_ns;              /* its last step (monotonic) */
};

typedef struct tombstone {
    char id[CELLA_ID_LEN + 1];
    char tenant[80];
    bool lost;                    /* S502, else S500 with why */
    char why[160];
} tombstone;

struct code_pool {
    code_pool_opts o;
    char *exe;
    pthread_mutex_t mu;
    pthread_cond_t cv;            /* a worker freed, a run's state changed */
    cworker *w;
    prun **runs;                  /* paused runs, any state */
    size_t nruns;
    tombstone tomb[CODE_POOL_TOMBSTONES];
    size_t tomb_next;
    unsigned waiting;
    uint64_t dumped_bytes;
    uint64_t replaced;
    bool draining, closing;
    bool started_once;            /* the pool's thread tried every worker once */
    bool start_failing;           /* the last start failed (start_err says why) */
    char start_err[256];
    pthread_t thread;
    bool thread_started;
};

/* How a talk with a worker ended. */
typedef enum wtalk {
    WT_OK = 0,                    /* an answer is in a->m */
    WT_TIMEOUT = -1,              /* past the deadline: killed */
    WT_CRASHED = -2,              /* the socket ended or the framing broke: killed */
} wtalk;

/* A failed start is retried after this long. */
#define CODE_POOL_RETRY_MS 5000

/* code_pool.c. The caller owns w (busy) for all of these. Only the pool's
 * thread starts workers: a worker asks for SIGKILL when the thread that
 * created it ends (PR_SET_PDEATHSIG), so none outlives the daemon, and the
 * HTTP server's threads end with their connections. */
int cworker_start(code_pool *p, cworker *w, cella_err *err);
void cworker_kill(code_pool *p, cworker *w, const char *why);
/* An idle worker never speaks first: anything to read on its socket (its
 * end, or garbage) means it is dead or broken. */
bool cworker_idle_ok(const cworker *w);
/* Sends req, reads one answer into a (frame and m) before deadline. On
 * failure the worker is killed (and not restarted). */
wtalk cworker_talk(code_pool *p, cworker *w, const code_wire_msg *req, code_answer *a,
                   int64_t deadline);
/* A worker for a request (under mu): idle and empty first, then idle
 * with a run to move out (*evict, now MOVING). Stopped workers are started
 * by the pool's thread only (see cworker_start). Waits in the queue; -1
 * with e when it may not. */
int cworker_acquire(code_pool *p, cworker **out, prun **evict, core_error *e);
/* Gives w back (under mu). */
void cworker_release(code_pool *p, cworker *w);

/* code_pool_runs.c */
/* Moves r (MOVING, in its worker, which the caller owns) into the daemon's
 * memory, or loses it; frees it in the worker either way. Without mu. */
void prun_evict(code_pool *p, prun *r);
void *code_pool_thread(void *arg);
void prun_free(prun *r);

/* A synthesized ERROR step in a. */
void code_answer_error(code_answer *a, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int64_t code_pool_deadline(uint64_t max_time_us, bool loaded);

#endif
