/* Code mode's host interface: compile a program, run it in steps, answer its
 * host calls, dump a paused run and load it again.
 *
 * A step ends in one of:
 *  - COMPLETE: the value of the program's last expression statement (None
 *    when the last statement is not an expression), as tagged JSON;
 *  - CALL: the program waits on host calls. `calls` lists the calls made
 *    since the previous step (usually one; several when asyncio.gather or
 *    un-awaited calls in async code issued them); `pending` lists every call
 *    id still unanswered (those plus older ones). The host resumes with a
 *    result for one or more pending ids;
 *  - ERROR: an uncaught exception (type name, message, line), a limit
 *    reached (MemoryError, TimeoutError, RecursionError, RuntimeError for the
 *    host-call limit), or a compile error (SyntaxError, NotImplementedError).
 * Each step also hands over what print() wrote since the previous one.
 *
 * When is a call a host call: when the program calls a name the host
 * declared in `functions`, or, when it declares none, any name that is
 * neither bound in the program nor a builtin. Called from inside an
 * `async def` body (or top-level code under top_level_await) a host function
 * returns an awaitable and the call is issued at once, so asyncio.gather can
 * wait on several; called elsewhere it pauses the run until answered.
 *
 * Values cross as JSON text (code_json.c): null, true, false, numbers,
 * strings, arrays (lists) and objects (dicts with str keys) as themselves;
 * other values tagged as one-key objects so they round-trip:
 *   {"$tuple": [...]}, {"$set": [...]}, {"$frozenset": [...]},
 *   {"$bytes": "<base64>"}, {"$int": "<decimal>"} (beyond +-2^53),
 *   {"$float": "nan"|"inf"|"-inf"}, {"$dict": [[k, v], ...]} (non-str keys,
 *   or a single key beginning with "$"), and on output only
 *   {"$repr": "<repr>"} for values JSON cannot carry (functions, modules).
 *
 * A run is single-threaded and keeps no global state; many runs may live in
 * one process. */
#ifndef CELLA_CODE_RUN_H
#define CELLA_CODE_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "code/code_err.h"
#include "code/code_mem.h"

typedef struct code_run code_run;

typedef struct code_limits {
    uint64_t max_time_us;        /* CPU time interpreting, over all steps */
    size_t max_bytes;            /* live heap bytes */
    size_t max_allocs;           /* allocations, over the whole run */
    uint32_t max_depth;          /* Python call depth (RecursionError) */
    uint32_t max_calls;          /* host calls per run */
    uint32_t max_nesting;        /* parser nesting (SyntaxError) */
} code_limits;

/* Defaults for a 0 field: 10 s, 256 MiB, no allocation limit, depth 1000
 * (CPython's), 10,000 host calls, nesting 200. */
#define CODE_DEFAULT_MAX_TIME_US (10u * 1000 * 1000)
#define CODE_DEFAULT_MAX_BYTES ((size_t)256 << 20)
#define CODE_DEFAULT_MAX_DEPTH 1000u
#define CODE_DEFAULT_MAX_CALLS 10000u
#define CODE_DEFAULT_MAX_NESTING 200u

typedef struct code_input {
    const char *name;            /* a Python identifier */
    const char *json;            /* its value, tagged JSON */
} code_input;

typedef struct code_run_opts {
    code_limits limits;
    const code_input *inputs;    /* bound as globals before the run starts */
    size_t ninputs;
    const char *const *functions;   /* host function names, or NULL */
    size_t nfunctions;
    bool top_level_await;
    code_alloc_fn alloc;         /* NULL: the default hook */
    void *alloc_ud;
    const char *filename;        /* for messages; NULL: "<code>" */
} code_run_opts;

typedef enum code_step_kind {
    CODE_STEP_COMPLETE, CODE_STEP_CALL, CODE_STEP_ERROR,
} code_step_kind;

typedef struct code_hostcall {
    uint64_t id;                 /* unique within the run, from 1 */
    char *function;
    char *args_json;             /* a JSON array */
    char *kwargs_json;           /* a JSON object */
} code_hostcall;

typedef struct code_step {
    code_step_kind kind;
    char *result_json;           /* COMPLETE */
    code_hostcall *calls;           /* CALL: the calls new in this step */
    size_t ncalls;
    uint64_t *pending;           /* CALL: every unanswered call id */
    size_t npending;
    code_error error;            /* ERROR */
    char *out;                   /* print()'s output in this step */
    size_t out_len;
    uint64_t duration_us;        /* CPU time spent interpreting in this step */
} code_step;

/* What the host answers for one call: a value, or an exception by type name
 * (a builtin exception type, else a new Exception subclass of that name) and
 * message. */
typedef struct code_result {
    uint64_t call_id;
    const char *value_json;      /* NULL when exc_type is set */
    const char *exc_type;
    const char *exc_message;
} code_result;

/* Compiles src. On failure returns -1 with err filled (SyntaxError and the
 * like, with the line; or an input whose JSON or name is invalid, as
 * ValueError). */
int code_run_new(const char *src, size_t n, const code_run_opts *opts, code_run **out,
                 code_error *err);
/* Runs until the first step ends. */
void code_run_start(code_run *r, code_step *st);
/* Answers calls and runs until the next step ends. Answering an id that is
 * not pending, or a malformed value, ends the step with ERROR (ValueError)
 * and leaves the run as it was (the host may retry). */
void code_run_resume(code_run *r, const code_result *results, size_t n, code_step *st);
/* A paused run (after a CALL step) as versioned bytes (code_dump.c). */
int code_run_dump(code_run *r, char **buf, size_t *len, code_error *err);
/* A run from dump bytes (untrusted: every field is checked), paused where it
 * was dumped. opts supplies the allocator; the dumped functions are used,
 * and the dumped limits, each capped by opts' limit when that one is not 0
 * (so a forged dump cannot grant itself more time or memory than the host
 * allows). *st (may be NULL) receives every pending call in full as a CALL
 * step with no new output. */
int code_run_load(const char *buf, size_t len, const code_run_opts *opts, code_run **out,
                  code_step *st, code_error *err);
void code_run_free(code_run *r);
void code_step_clear(code_step *st);
/* The run has ended (COMPLETE or ERROR): it cannot be resumed. */
bool code_run_done(const code_run *r);

#endif
