/* Code mode's interpreter instance: one per run. The parts of the runtime
 * (values, evaluator, host interface) share it; each owns its own fields. */
#ifndef CELLA_CODE_VM_H
#define CELLA_CODE_VM_H

#include "code/code_mem.h"
#include "code/code_run.h"
#include "code/code_val.h"

struct code_heap;      /* code_heap.c: size-class pages and large blocks */
struct code_eval;      /* code_eval*.c: frames, coroutines, the scheduler */

struct code_vm {
    code_mem mem;                /* the run's byte and allocation limits */
    struct code_heap *heap;
    cv exc;                      /* the exception being raised, or CV_NULL */
    code_limits limits;          /* defaults applied */
    uint64_t cpu_ns;             /* interpreting time so far */
    code_sb out;                 /* print()'s output not yet handed over */
    struct code_eval *ev;
    int line;                    /* the line being run, for errors */
    /* Nested-container recursion (repr, ==, hash, JSON of nested lists):
     * code_guard_enter counts it and checks the C stack. */
    unsigned depth, max_depth;
    char *stack_lo;              /* the running coroutine's stack: lowest usable */
    cv builtins_cache;           /* optional: owned by code_builtins.c */
    /* code_cont.c: a list of the containers whose repr is being built, so a
     * container holding itself prints [...] or {...}; CV_NULL until needed. */
    cv repr_active;
    /* code_cont.c: containers whose release is put off while freeing a
     * deeply nested one, so that does not recurse on the C stack (CPython's
     * trashcan); a code_heap block of trash_cap entries, NULL when empty. */
    cv *trash;
    size_t ntrash, trash_cap;
    unsigned trash_depth;
    bool trash_draining;
    cv modules;                  /* dict name -> module, owned by code_import */
    void *hostdata;              /* code_run.c */
    cv nomem;                    /* a MemoryError made in advance: raising it
                                  * needs no memory */
    uint64_t next_id;            /* id() and reprs: deterministic numbers */
    uint64_t guard_ticks;        /* code_guard_enter's count, for the time limit */
    struct code_gc *gc;          /* code_gc.c: the cycle collector's state */
};

/* The run's heap (code_heap.c): code_vm_init creates it. */
int code_heap_create(code_vm *vm);
void code_heap_destroy(code_vm *vm);

/* Creates/destroys a vm and its heap (code_obj.c). limits as given: 0
 * fields get code_run.h's defaults. */
int code_vm_init(code_vm *vm, const code_limits *limits, code_alloc_fn alloc, void *ud);
void code_vm_destroy(code_vm *vm);

/* The run's CPU-time limit (code_eval_func.c): the evaluator calls it every
 * few thousand loop iterations and calls; a builtin that loops long on its
 * own (sum over a huge range, a long sort) may call it too. -1 with
 * TimeoutError once the limit is used up; 0 outside a run. */
int code_check_time(code_vm *vm);

/* The cycle collector (code_gc.c). code_gc_collect frees the unreachable
 * cycles now and returns how many objects it found; it must only run where
 * no C code holds a pointer into an object without a reference of its own
 * (code_check_time runs it, when allocations ask for it). */
size_t code_gc_collect(code_vm *vm);
/* A collection is due: run it (code_check_time calls this). */
void code_gc_maybe(code_vm *vm);

/* The time limit alone, for long loops in C (bignum kernels, math folds,
 * nested comparisons): no collection, so callable anywhere. 0, or -1 with
 * TimeoutError raised (code_eval_func.c). */
int code_check_time_only(code_vm *vm);

/* Guards every recursive C path over values (repr of nested lists, ==,
 * hashing tuples, JSON encoding, deep copies): RecursionError past
 * vm->max_depth levels or when the C stack is nearly used up. */
int code_guard_enter(code_vm *vm, const char *what);
static inline void code_guard_leave(code_vm *vm) { vm->depth--; }

#endif
