/* async: coroutine objects, tasks, the scheduler and the asyncio module.
 *
 * Awaiting a coroutine runs its body right there, on the awaiting stack (it
 * is a call). A task runs a coroutine on a stack of its own, so it can park
 * when it awaits something not done (a host call's future, another task, a
 * gather) and let others run. The scheduler runs wherever something awaits
 * outside any task (asyncio.run, a top-level await): it runs ready tasks
 * until what it waits for is done; when no task is ready and host calls are
 * pending, it switches to the host, which gets a CALL step listing them. */
#include "code/code_eval.h"

#include <stdlib.h>
#include <string.h>

/* ---- wait queues ------------------------------------------------------------- */

/* The queue's array is on the run's heap, so a run abandoned while tasks
 * wait frees it with everything else. */
static int waitq_add(code_vm *vm, code_waitq *q, code_task *t)
{
    for (size_t i = 0; i < q->n; i++)
        if (q->v[i] == t)
            return 0;
    if (q->n == q->cap) {
        size_t nc = q->cap ? q->cap * 2 : 4;
        code_task **nv = code_heap_realloc(vm, q->v, q->cap * sizeof(*nv), nc * sizeof(*nv));
        if (!nv)
            return -1;
        q->v = nv;
        q->cap = nc;
    }
    q->v[q->n++] = (code_task *)cv_obj(code_incref(cv_of(t)));   /* held: see waitq_wake */
    return 0;
}

static void ready_push(code_vm *vm, code_task *t)
{
    struct code_eval *ev = vm->ev;
    if (t->queued || t->done)
        return;
    if (ev->nready == ev->capready) {
        size_t nc = ev->capready ? ev->capready * 2 : 8;
        code_task **nv = realloc(ev->ready, nc * sizeof(*nv));
        if (!nv)
            abort();
        ev->ready = nv;
        ev->capready = nc;
    }
    code_incref(cv_of(t));
    ev->ready[ev->nready++] = t;
    t->queued = true;
    t->blocked = false;
}

/* The queue holds its tasks: a waiter may end (its gather failed early)
 * and be dropped by everything else while still listed here. */
static void waitq_wake(code_vm *vm, code_waitq *q)
{
    size_t n = q->n;
    q->n = 0;
    for (size_t i = 0; i < n; i++) {
        code_task *t = q->v[i];
        if (t->blocked)
            ready_push(vm, t);
        code_decref(vm, cv_of(t));
    }
}

void code_waitq_release(code_vm *vm, code_waitq *q)
{
    for (size_t i = 0; i < q->n; i++)
        code_decref(vm, cv_of(q->v[i]));
    code_heap_free(vm, q->v, q->cap * sizeof(code_task *));
    q->v = NULL;
    q->n = q->cap = 0;
}

void code_sched_wake(code_vm *vm, code_future *f)
{
    f->done_seq = ++vm->ev->done_seq;
    waitq_wake(vm, &f->waiters);
}

/* ---- coroutine objects ------------------------------------------------------- */

static void coro_dealloc(code_vm *vm, code_obj *o)
{
    code_coro *c = (code_coro *)o;
    if (c->argv) {
        for (uint32_t i = 0; i < c->nslots; i++)
            code_decref(vm, c->argv[i]);
        code_heap_free(vm, c->argv, c->nslots * sizeof(cv));
    }
    code_decref(vm, c->func);
}

static cv coro_repr(code_vm *vm, cv self)
{
    const code_coro *c = (const code_coro *)cv_obj(self);
    const code_func *fn = (const code_func *)cv_obj(c->func);
    return code_str_fmt(vm, "<coroutine object %s at 0x7f%010llx>", fn->sc->qualname,
                        (unsigned long long)(0x1000 + c->serial * 0x90));
}

const code_type code_type_coro = {
    .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},
    .name = "coroutine",
    .kind = CODE_K_CORO,
    .dealloc = coro_dealloc,
    .repr = coro_repr,
};

cv code_coro_new(code_vm *vm, const code_func *fn, cv *fast)
{
    const code_scope *sc = fn->sc;
    uint32_t n = sc->nslots ? sc->nslots : 1;
    code_coro *c = code_obj_new(vm, &code_type_coro, sizeof(code_coro));
    cv *argv = c ? code_heap_alloc(vm, n * sizeof(cv)) : NULL;
    if (!argv) {
        for (uint32_t i = 0; i < sc->nparams; i++)
            code_decref(vm, fast[i]);
        if (c)
            code_decref(vm, cv_of(c));
        return CV_NULL;
    }
    memcpy(argv, fast, n * sizeof(cv));
    c->argv = argv;
    c->nslots = n;
    c->func = code_incref(cv_of(fn));
    c->serial = ++vm->ev->func_serial;
    return cv_of(c);
}

static cv coro_run(code_vm *vm, code_coro *c)
{
    if (c->state != CODE_GEN_NEW)
        return code_raise(vm, &code_exc_RuntimeError, c->state == CODE_GEN_DONE
                                                          ? "cannot reuse already awaited coroutine"
                                                          : "coroutine is being awaited already");
    c->state = CODE_GEN_RUNNING;
    const code_func *fn = (const code_func *)cv_obj(c->func);
    uint32_t n = c->nslots;
    cv *fast = CODE_FRAME_SLOTS(vm, n);
    if (!fast)
        return code_raise_nomem(vm);
    memcpy(fast, c->argv, n * sizeof(cv));
    memset(c->argv, 0, n * sizeof(cv));
    code_incref(c->func);
    cv r = code_run_body(vm, fn, fast);
    code_decref(vm, c->func);
    CODE_FRAME_SLOTS_FREE(vm, fast, n);
    c->state = CODE_GEN_DONE;
    return r;
}

/* ---- tasks ------------------------------------------------------------------- */

static void task_dealloc(code_vm *vm, code_obj *o)
{
    code_task *t = (code_task *)o;
    code_decref(vm, t->coro);
    code_decref(vm, t->result);
    code_decref(vm, t->exc);
    code_decref(vm, t->handled);
    code_waitq_release(vm, &t->waiters);
}

static cv task_repr(code_vm *vm, cv self)
{
    const code_task *t = (const code_task *)cv_obj(self);
    return code_str_fmt(vm, "<Task %s name='Task-%llu'>", t->done ? "finished" : "pending",
                        (unsigned long long)t->serial);
}

static cv task_done_m(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    if (code_args_nokw(vm, "done", nargs, kw, 1, 1))
        return CV_NULL;
    return code_bool(((code_task *)cv_obj(args[0]))->done);
}

static cv task_result_m(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    if (code_args_nokw(vm, "result", nargs, kw, 1, 1))
        return CV_NULL;
    code_task *t = (code_task *)cv_obj(args[0]);
    if (!t->done)
        return code_raise(vm, &code_exc_RuntimeError, "Result is not set.");
    if (t->exc) {
        code_setref(vm, &vm->exc, code_incref(t->exc));
        return CV_NULL;
    }
    return code_incref(t->result);
}

static const code_method task_methods[] = {
    {"done", task_done_m},
    {"result", task_result_m},
    {NULL, NULL},
};

const code_type code_type_task = {
    .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},
    .name = "Task",
    .kind = CODE_K_CORO,
    .dealloc = task_dealloc,
    .repr = task_repr,
    .methods = task_methods,
};

cv code_task_new(code_vm *vm, cv coro)
{
    code_task *t = code_obj_new(vm, &code_type_task, sizeof(code_task));
    if (!t)
        return CV_NULL;
    t->coro = code_incref(coro);
    t->vm = vm;
    t->serial = ++vm->ev->task_serial;
    ready_push(vm, t);
    return cv_of(t);
}

static void task_unlink(code_vm *vm, code_task *t)
{
    struct code_eval *ev = vm->ev;
    if (t->prev)
        t->prev->next = t->next;
    else if (ev->tasks == t)
        ev->tasks = t->next;
    if (t->next)
        t->next->prev = t->prev;
    t->next = t->prev = NULL;
}

static void task_entry(void *arg)
{
    code_task *t = arg;
    code_vm *vm = t->vm;
    cv r = code_await(vm, t->coro);   /* a coroutine, or a gather */
    if (r)
        t->result = r;
    else
        t->exc = code_exc_fetch(vm);
    t->done = true;
    t->done_seq = ++vm->ev->done_seq;
    waitq_wake(vm, &t->waiters);
    code_ctx_switch(&t->ctx, t->caller, true);
}

/* Runs t until it parks or ends. */
static int task_step(code_vm *vm, code_task *t)
{
    struct code_eval *ev = vm->ev;
    if (!t->started) {
        if (code_stack_charge(vm))
            return -1;
        if (code_ctx_make(&t->ctx, CODE_STACK_SMALL, task_entry, t)) {
            code_stack_uncharge(vm);
            return code_raise_i(vm, &code_exc_MemoryError, "no stack for a task");
        }
        t->started = true;
        t->depth = ev->depth;
        /* the list of tasks with a stack holds them until they end */
        code_incref(cv_of(t));
        t->next = ev->tasks;
        if (ev->tasks)
            ev->tasks->prev = t;
        ev->tasks = t;
    }
    code_ctx *caller = ev->cur;
    code_task *saved_task = ev->task;
    char *lo = vm->stack_lo;
    cv handled = ev->handled;
    uint32_t depth = ev->depth;
    t->caller = caller;
    ev->task = t;
    ev->cur = &t->ctx;
    ev->handled = t->handled;
    t->handled = CV_NULL;
    ev->depth = t->depth;
    vm->stack_lo = code_ctx_lo(&t->ctx);
    code_ctx_switch(caller, &t->ctx, false);
    t->depth = ev->depth;
    t->handled = ev->handled;
    ev->depth = depth;
    ev->handled = handled;
    ev->cur = caller;
    ev->task = saved_task;
    vm->stack_lo = lo;
    if (t->done) {
        task_unlink(vm, t);
        code_ctx_release(&t->ctx);
        code_stack_uncharge(vm);
        code_decref(vm, cv_of(t));
    }
    return 0;
}

/* One round of the scheduler outside any task: a ready task runs, or the host
 * is asked for answers. */
static int sched_step(code_vm *vm)
{
    struct code_eval *ev = vm->ev;
    if (ev->nready) {
        code_task *t = ev->ready[0];
        memmove(ev->ready, ev->ready + 1, (ev->nready - 1) * sizeof(*ev->ready));
        ev->nready--;
        t->queued = false;
        int rc = task_step(vm, t);
        code_decref(vm, cv_of(t));
        return rc;
    }
    if (ev->nfuts)
        return code_host_wait(vm);
    return code_raise_i(vm, &code_exc_RuntimeError,
                        "no task can make progress: the awaited result never arrives");
}

/* ---- awaiting ---------------------------------------------------------------- */

static void gather_dealloc(code_vm *vm, code_obj *o)
{
    code_decref(vm, ((code_gather *)o)->children);
}

static cv gather_repr(code_vm *vm, cv self)
{
    (void)self;
    return code_str_from_cstr(vm, "<_GatheringFuture pending>");
}

const code_type code_type_gather = {
    .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},
    .name = "_GatheringFuture",
    .kind = CODE_K_CORO,
    .dealloc = gather_dealloc,
    .repr = gather_repr,
};


static void sleep_dealloc(code_vm *vm, code_obj *o)
{
    code_decref(vm, ((code_sleep *)o)->result);
}

const code_type code_type_sleep = {
    .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},
    .name = "coroutine",
    .kind = CODE_K_CORO,
    .dealloc = sleep_dealloc,
};

static bool aw_done(cv a, uint64_t *seq, cv *exc)
{
    if (cv_is(a, &code_type_future)) {
        const code_future *f = (const code_future *)cv_obj(a);
        *seq = f->done_seq;
        *exc = f->exc;
        return f->done;
    }
    const code_task *t = (const code_task *)cv_obj(a);
    *seq = t->done_seq;
    *exc = t->exc;
    return t->done;
}

static code_waitq *aw_waitq(cv a)
{
    if (cv_is(a, &code_type_future))
        return &((code_future *)cv_obj(a))->waiters;
    return &((code_task *)cv_obj(a))->waiters;
}

/* Waits until one of the n awaitables (not all done) completes. */
static int wait_any(code_vm *vm, const cv *aws, size_t n)
{
    struct code_eval *ev = vm->ev;
    code_task *t = ev->task;
    if (!t)
        return sched_step(vm);
    uint64_t seq;
    cv exc;
    for (size_t i = 0; i < n; i++)
        if (!aw_done(aws[i], &seq, &exc) && waitq_add(vm, aw_waitq(aws[i]), t))
            return -1;
    t->blocked = true;
    code_ctx_switch(&t->ctx, t->caller, false);
    return 0;
}

cv code_await_one(code_vm *vm, cv a)
{
    uint64_t seq;
    cv exc;
    while (!aw_done(a, &seq, &exc))
        if (wait_any(vm, &a, 1))
            return CV_NULL;
    if (cv_is(a, &code_type_future))
        return code_future_take(vm, (code_future *)cv_obj(a));
    code_task *t = (code_task *)cv_obj(a);
    if (t->exc) {
        code_setref(vm, &vm->exc, code_incref(t->exc));
        return CV_NULL;
    }
    return code_incref(t->result);
}

static cv await_gather(code_vm *vm, code_gather *g)
{
    const code_tuple *ch = (const code_tuple *)cv_obj(g->children);
    for (;;) {
        size_t ndone = 0;
        cv first = CV_NULL;
        uint64_t first_seq = UINT64_MAX;
        for (size_t i = 0; i < ch->n; i++) {
            uint64_t seq;
            cv exc;
            if (aw_done(ch->v[i], &seq, &exc)) {
                ndone++;
                /* A limit reached in a child ends the run: return_exceptions
                 * must not turn it into a value. */
                if (exc && (!g->return_exceptions || vm->ev->fatal) && seq < first_seq) {
                    first = exc;
                    first_seq = seq;
                }
            }
        }
        if (first) {
            code_setref(vm, &vm->exc, code_incref(first));
            return CV_NULL;
        }
        if (ndone == ch->n)
            break;
        if (wait_any(vm, ch->v, ch->n))
            return CV_NULL;
    }
    cv l = code_list_new(vm, ch->n);
    if (!l)
        return CV_NULL;
    for (size_t i = 0; i < ch->n; i++) {
        uint64_t seq;
        cv exc;
        aw_done(ch->v[i], &seq, &exc);
        cv v = exc ? code_incref(exc) : code_await_one(vm, ch->v[i]);
        int rc = v ? code_list_append(vm, l, v) : -1;
        code_decref(vm, v);
        if (rc) {
            code_decref(vm, l);
            return CV_NULL;
        }
    }
    return l;
}

cv code_await(code_vm *vm, cv aw)
{
    struct code_eval *ev = vm->ev;
    if (cv_is(aw, &code_type_coro))
        return coro_run(vm, (code_coro *)cv_obj(aw));
    if (cv_is(aw, &code_type_future) || cv_is(aw, &code_type_task))
        return code_await_one(vm, aw);
    if (cv_is(aw, &code_type_gather))
        return await_gather(vm, (code_gather *)cv_obj(aw));
    if (cv_is(aw, &code_type_sleep)) {
        code_task *t = ev->task;
        if (t) {
            /* to the back of the queue: the others run first */
            ready_push(vm, t);
            code_ctx_switch(&t->ctx, t->caller, false);
        } else if (ev->nready && sched_step(vm)) {
            return CV_NULL;
        }
        return code_incref(((code_sleep *)cv_obj(aw))->result);
    }
    return code_raise(vm, &code_exc_TypeError, "object %s can't be used in 'await' expression",
                      code_type_name(aw));
}

void code_sched_destroy(code_vm *vm)
{
    struct code_eval *ev = vm->ev;
    while (ev->tasks) {
        code_task *t = ev->tasks;
        task_unlink(vm, t);
        code_ctx_abandon(&t->ctx);
    }
    free(ev->ready);
    ev->ready = NULL;
    ev->nready = 0;
}

