/* The evaluator's private declarations: the scope pass's results, frames,
 * function and generator objects, coroutine stacks, tasks.
 *
 * The evaluator walks the AST directly. The scope pass (code_scope.c) runs
 * once over the tree and rewrites it in place for speed: after it, a NAME
 * node's `op` says where the name lives (CODE_NK_*) and its `height` is the
 * slot or global index; a literal's (INT FLOAT STR BYTES) `height` is its
 * index in the constant table; a lambda's, comprehension's or call's
 * `height` indexes the scope or keyword-name table, and a def statement's
 * `col` its scope. The tree is never dumped after that pass. */
#ifndef CELLA_CODE_EVAL_H
#define CELLA_CODE_EVAL_H

#include <stdbool.h>
#include <stdint.h>

#include "code/code_ast.h"
#include "code/code_err.h"
#include "code/code_val.h"
#include "code/code_vm.h"

/* Where a name lives (a NAME node's op after the scope pass). */
enum code_name_kind {
    CODE_NK_LOCAL = 1,     /* fast[i] */
    CODE_NK_CELL,          /* fast[i] is a cell this frame created */
    CODE_NK_FREE,          /* fast[i] is a cell from the closure */
    CODE_NK_GLOBAL,        /* the module's global slot i */
};

enum code_scope_kind { CODE_SC_MODULE, CODE_SC_FUNC, CODE_SC_LAMBDA, CODE_SC_COMP, CODE_SC_GENEXP };

/* One function, lambda, comprehension or the module. Slots: locals
 * [0, nlocals) (parameters first, in CPython's order: positional, keyword-only,
 * *args, **kwargs), cells [nlocals, nlocals+ncells), frees after. */
typedef struct code_scope {
    uint8_t kind;
    bool is_async;
    bool async_ctx;              /* host calls here return awaitables */
    const char *name;            /* "f", "<lambda>", "<listcomp>", "<module>" */
    const char *qualname;        /* "outer.<locals>.f" */
    const code_params *params;   /* NULL for comprehensions and the module */
    uint32_t nparams;            /* slots taken by parameters */
    uint32_t nlocals, ncells, nfree, nslots;
    const char **slot_names;     /* nslots names */
    int32_t *cell_param;         /* per cell: the parameter slot it starts from, or -1 */
    uint32_t *free_from;         /* per free: the slot in the enclosing scope */
    const void *node;            /* the DEF stmt, LAMBDA or comprehension expr */
    struct code_scope *parent;
    uint8_t bind_kind;           /* a def: where its name is stored */
    uint32_t bind_slot;
    /* scope pass bookkeeping */
    struct code_sym *syms;
    uint32_t nsyms, capsyms;
    uint32_t *symidx, symcap;    /* hash index of syms once there are many */
    bool has_walrus_target;
} code_scope;

/* A compiled program: the tree plus what the scope pass derived. */
typedef struct code_prog {
    code_module *mod;
    code_scope **scopes;         /* [0] is the module */
    uint32_t nscopes;
    cv *consts;                  /* literals and kwnames tuples (owned) */
    uint32_t nconsts;
    const char **gnames;         /* the module's global names */
    cv *gname_str;               /* the same as interned str */
    uint32_t nglobals;
    uint32_t *gidx, gcap;        /* hash index of gnames */
} code_prog;

/* The scope pass: resolves every name, makes the constants. -1 with err
 * filled (SyntaxError of the symbol table, MemoryError). The tables live in
 * arena a; constants on vm's heap. */
int code_scope_pass(code_vm *vm, code_module *m, code_arena *a, bool top_level_await,
                    code_prog *prog, code_error *err);
void code_prog_release(code_vm *vm, code_prog *prog);
/* Where name is stored in scope sc (imports, except-as, def names); -1 if
 * nowhere (cannot happen for names the pass saw). */
int code_scope_lookup(const code_prog *prog, const code_scope *sc, const char *name,
                      uint8_t *kind, uint32_t *slot);
/* The slot of a global name, or -1. */
int code_prog_global(const code_prog *prog, const char *name);

/* ---- coroutine stacks (code_coro.c) -------------------------------------- */

typedef struct code_ctx {
    void *sp;                    /* saved stack pointer (x86-64 switch) */
    void *stack;                 /* base of the mapping, NULL for the host */
    size_t size;                 /* usable bytes above the guard page */
    void (*entry)(void *);
    void *arg;
    /* ASan fiber bookkeeping */
    void *fake;
    const void *bottom;
    size_t bsize;
    struct code_ctx *from;       /* who switched to it last */
} code_ctx;

/* Stack sizes. Reserved address space counts against a worker's
 * RLIMIT_AS even untouched, and a paused run keeps its main stack, so they
 * are modest: the main one holds the default depth (1000 calls) several
 * times over (about 300 to 600 bytes of C stack a Python call, 850 under
 * ASan); a generator's or a task's holds a few hundred calls, past which
 * the stack check raises RecursionError before the depth limit would. */
#define CODE_STACK_BIG ((size_t)8 << 20)
#define CODE_STACK_SMALL ((size_t)256 << 10)

/* Prepares ctx to run entry(arg) on a fresh (cached) stack of size bytes. */
int code_ctx_make(code_ctx *ctx, size_t size, void (*entry)(void *), void *arg);
/* Gives the stack back to the cache: after its entry ended, or abandoned
 * with frames still on it. */
void code_ctx_release(code_ctx *ctx);
void code_ctx_abandon(code_ctx *ctx);
/* Releases what switching away from the host saved (nothing on x86-64). */
void code_ctx_host_done(code_ctx *ctx);
/* Saves the running context into from and runs to. dying: from never runs
 * again (its entry has returned its last value). */
void code_ctx_switch(code_ctx *from, code_ctx *to, bool dying);
/* Counts a coroutine stack against the run's memory limit (MemoryError
 * past it), and gives it back. */
int code_stack_charge(code_vm *vm);
void code_stack_uncharge(code_vm *vm);
/* The lowest address a running coroutine may use (for vm->stack_lo). */
static inline char *code_ctx_lo(const code_ctx *c)
{
    /* a reserve above the guard page for the code that raises and unwinds
     * (code_guard_enter keeps 64 KiB more for its own paths) */
    size_t reserve = c->size / 8 < 128 * 1024 ? c->size / 8 : 128 * 1024;
    return c->stack ? (char *)c->stack + 4096 + reserve : NULL;
}

/* ---- objects -------------------------------------------------------------- */

typedef struct code_func {
    code_obj ob;
    const code_scope *sc;
    cv name;                     /* str */
    cv defaults;                 /* tuple or CV_NULL */
    cv kwdefaults;               /* dict or CV_NULL */
    cv closure;                  /* tuple of cells or CV_NULL */
    uint64_t serial;             /* for the repr */
} code_func;

/* A host function: calling it is a host call. */
typedef struct code_hostfn {
    code_obj ob;
    cv name;                     /* str */
} code_hostfn;

/* A generator expression: its body runs on its own stack. */
typedef struct code_gen {
    code_obj ob;
    code_vm *vm;
    const code_scope *sc;
    cv closure;                  /* tuple of cells or CV_NULL */
    cv iter0;                    /* the first iterator */
    code_ctx ctx, *caller;
    cv yielded;                  /* the value handed over */
    uint8_t state;               /* CODE_GEN_* */
    bool closing;                /* unwinding for good (freed while suspended) */
    uint64_t serial;             /* for the repr */
    cv handled;                  /* its exception being handled, while suspended */
    struct code_gen *next, *prev;   /* suspended generators of the run */
} code_gen;
enum { CODE_GEN_NEW, CODE_GEN_SUSPENDED, CODE_GEN_RUNNING, CODE_GEN_DONE };

/* Tasks blocked on an awaitable (malloc'd array). */
typedef struct code_waitq {
    struct code_task **v;
    size_t n, cap;
} code_waitq;

/* A host call's outcome holder; the awaitable of an async host call. */
typedef struct code_future {
    code_obj ob;
    uint64_t id;
    cv value, exc;               /* set when answered */
    bool done;
    uint64_t done_seq;           /* completion order, for gather's first error */
    code_waitq waiters;
} code_future;

/* A coroutine object: an async def called, not yet awaited. */
typedef struct code_coro {
    code_obj ob;
    cv func;
    cv *argv;                    /* the bound parameter slots (heap, nslots) */
    uint32_t nslots;
    uint8_t state;               /* CODE_GEN_NEW, _RUNNING or _DONE */
    uint64_t serial;             /* for the repr */
} code_coro;

/* An asyncio task: a coroutine run on a stack of its own by the scheduler. */
typedef struct code_task {
    code_obj ob;
    code_vm *vm;
    cv coro;
    cv result, exc;
    bool done, blocked, queued, started;
    uint64_t done_seq;
    code_ctx ctx, *caller;
    cv handled;                  /* its exception being handled, while parked */
    uint32_t depth;
    code_waitq waiters;
    struct code_task *next, *prev;   /* tasks with a stack */
    uint64_t serial;
} code_task;

extern const code_type code_type_func, code_type_hostfn, code_type_gen, code_type_future,
    code_type_coro, code_type_task;

/* A frame's slots live on the running coroutine's stack (alloca: pause and
 * resume never unwind it); very large frames go to the run's heap, which
 * frees them with the run if it is abandoned while paused. */
#define CODE_FRAME_ALLOCA_MAX 2048
#define CODE_FRAME_SLOTS(vm, n)                                                          \
    ((n) <= CODE_FRAME_ALLOCA_MAX ? (cv *)__builtin_alloca(((n) ? (n) : 1) * sizeof(cv)) \
                                  : (cv *)code_heap_alloc((vm), (n) * sizeof(cv)))
#define CODE_FRAME_SLOTS_FREE(vm, p, n)                   \
    do {                                                  \
        if ((n) > CODE_FRAME_ALLOCA_MAX)                  \
            code_heap_free((vm), (p), (n) * sizeof(cv));  \
    } while (0)

/* ---- the evaluator's state (struct code_eval) ----------------------------- */

typedef struct code_frame {
    cv *fast;
    const code_scope *sc;
    cv retval;                   /* set by a return statement */
} code_frame;

/* Loop iterations and calls between two reads of the CPU clock. */
#define CODE_TICKS 4096

/* Statement outcomes. */
enum { CODE_X_OK = 0, CODE_X_ERR = -1, CODE_X_RETURN = 1, CODE_X_BREAK = 2, CODE_X_CONTINUE = 3 };

struct code_task;

struct code_eval {
    code_prog prog;
    cv *gv;                      /* global slots (owned refs) */
    cv *gcache;                  /* builtins found for unbound globals (immortal) */
    cv *hcache;                  /* host functions made for unknown callees */
    bool host_any;               /* no functions declared: unknown names are host calls */
    bool top_level_await;
    uint64_t func_serial;
    uint32_t depth;              /* Python call depth */
    uint32_t tick;               /* loop iterations and calls since the last clock read */
    uint64_t cpu_start_ns;       /* thread CPU time when the step started */
    uint64_t max_time_ns;
    cv handled;                  /* the exception being handled (owned) or CV_NULL */
    bool fatal;                  /* a limit was reached: no handler may catch it */
    /* coroutines */
    code_ctx host;               /* the context that called start/resume */
    code_ctx main;               /* the module's coroutine */
    code_ctx *cur;               /* the running coroutine */
    /* host calls */
    code_ctx *waiting;           /* the coroutine that waits on the host */
    cv *dyn;                     /* exception types named by the host (malloc) */
    size_t ndyn;
    uint64_t next_call_id;
    uint32_t ncalls;
    struct code_future **futs;   /* pending calls (owned refs), by insertion */
    size_t nfuts, capfuts;
    struct code_newcall { uint64_t id; char *function, *args, *kwargs; } *newcalls;
    size_t nnew, capnew;
    size_t newcall_bytes;        /* JSON text of the calls not yet handed over */
    /* async */
    struct code_task **ready;
    size_t nready, capready;
    struct code_task *task;      /* the running task, NULL on the main coroutine */
    struct code_task *tasks;     /* tasks with a stack */
    uint64_t done_seq, task_serial;
    code_gen *gens;              /* generators with a stack */
    /* the run's outcome */
    cv result;
    bool finished;
    void *run;                   /* the code_run */
};

/* ---- evaluation (code_eval*.c) ------------------------------------------ */

cv code_eval_expr(code_vm *vm, code_frame *f, const code_expr *e);
/* code_eval_expr with the commonest leaves (a local, a literal) taken inline
 * at the call site: a tree walker's cost is mostly its dispatch. */
static inline cv code_eval_fast(code_vm *vm, code_frame *f, const code_expr *e)
{
    if (e->kind == CODE_E_NAME) {
        if (e->op == CODE_NK_LOCAL && f->fast[e->height])
            return code_incref(f->fast[e->height]);
    } else if (e->kind == CODE_E_INT || e->kind == CODE_E_STR || e->kind == CODE_E_FLOAT) {
        return code_incref(vm->ev->prog.consts[e->height]);
    }
    return code_eval_expr(vm, f, e);
}
/* The truth of e's value: 1, 0, or -1 with the exception set. */
int code_eval_truth(code_vm *vm, code_frame *f, const code_expr *e);
cv code_eval_call(code_vm *vm, code_frame *f, const code_expr *e);
/* A NAME as a call's callee: as code_eval_expr, except that an unknown
 * global is a host function when the host declared none. */
cv code_load_callee(code_vm *vm, code_frame *f, const code_expr *e);
int code_store_name(code_vm *vm, code_frame *f, uint8_t kind, uint32_t slot, cv v);
int code_tok_to_binop(int tok);
cv code_binop_fast(code_vm *vm, int op, cv a, cv b);
int code_dict_merge(code_vm *vm, cv d, cv m);
/* Displays (code_eval_display.c). */
cv code_eval_list(code_vm *vm, code_frame *f, const code_expr *e);
cv code_eval_tuple(code_vm *vm, code_frame *f, const code_expr *e);
cv code_eval_set(code_vm *vm, code_frame *f, const code_expr *e);
cv code_eval_dict(code_vm *vm, code_frame *f, const code_expr *e);
int code_exec_block(code_vm *vm, code_frame *f, const code_block *b);
int code_assign(code_vm *vm, code_frame *f, const code_expr *target, cv v);
/* Runs the module body; the last expression statement's value into *result. */
int code_eval_module(code_vm *vm, cv *result);
/* Calls a Python function (the type's call slot). */
cv code_func_call(code_vm *vm, cv self, cv *args, size_t nargs, cv kwnames);
/* Binds args into fast (nslots, zeroed) per sc's parameters. */
int code_bind_args(code_vm *vm, const code_func *fn, cv *fast, cv *args, size_t nargs,
                   cv kwnames);
/* Runs a function body on a prepared fast array (steals its references). */
cv code_run_body(code_vm *vm, const code_func *fn, cv *fast);
cv code_make_function(code_vm *vm, code_frame *f, const code_scope *sc, const code_params *p,
                      const char *name);
cv code_eval_comp(code_vm *vm, code_frame *f, const code_expr *e);
int code_exec_try(code_vm *vm, code_frame *f, const code_stmt *s);
int code_exec_raise(code_vm *vm, code_frame *f, const code_stmt *s);
void code_gens_release(code_vm *vm);
cv code_eval_fstring(code_vm *vm, code_frame *f, const code_expr *e);
cv code_name_error(code_vm *vm, const char *name);
/* The exception set now: chain the handled one as its context. */
void code_exc_set_context(code_vm *vm);

/* host calls (code_run.c) */
cv code_hostfn_new(code_vm *vm, cv name);
/* Issues a call: a new future (pending), recorded in the step. */
cv code_host_issue(code_vm *vm, cv name, cv *args, size_t nargs, cv kwnames);
/* Switches to the host until at least one answer arrives. */
int code_host_wait(code_vm *vm);
/* Records a new call (code_run.c): its id becomes ev->next_call_id; takes
 * the three malloc'd strings. */
int code_host_note_call(code_vm *vm, char *function, char *args_json, char *kwargs_json);
/* A done future's value (new reference), or CV_NULL with its exception set. */
cv code_future_take(code_vm *vm, code_future *f);

/* async (code_sched.c) */
/* asyncio.gather's awaitable: the children (tasks and futures) in order. */
typedef struct code_gather {
    code_obj ob;
    cv children;                 /* tuple of tasks and futures */
    bool return_exceptions;
} code_gather;
/* asyncio.sleep's awaitable. */
typedef struct code_sleep { code_obj ob; cv result; } code_sleep;
extern const code_type code_type_gather, code_type_sleep;
/* A new task running coro, queued to run. */
cv code_task_new(code_vm *vm, cv coro);
/* Awaits a future or task: its value (new reference) or its exception. */
cv code_await_one(code_vm *vm, cv a);
cv code_await(code_vm *vm, cv aw);
cv code_coro_new(code_vm *vm, const code_func *fn, cv *fast);
void code_sched_destroy(code_vm *vm);
/* Drops a wait queue's tasks and its array (an awaitable's dealloc). */
void code_waitq_release(code_vm *vm, code_waitq *q);
/* f was answered: its waiters become ready. */
void code_sched_wake(code_vm *vm, code_future *f);
/* A limit's exception, or a MemoryError once the memory limit was hit: no
 * handler catches it. */
bool code_exc_is_fatal(code_vm *vm);

#endif
