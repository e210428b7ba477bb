/* The evaluator: function objects (def and lambda), closures, and running a
 * function's body in a frame. A frame's slots are a C array on the running
 * coroutine's stack: Python recursion is C recursion, bounded by the depth
 * limit and by a check of the stack pointer against vm->stack_lo. */
#include "code/code_eval.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* Cells: a closure's shared variables (code_val.h declares the type; the
 * evaluator is its only user). */
static void cell_dealloc(code_vm *vm, code_obj *o)
{
    code_decref(vm, ((code_cell *)o)->v);
}

static void cell_traverse(code_vm *vm, cv self, code_visit_fn visit, void *arg)
{
    visit(vm, ((code_cell *)cv_obj(self))->v, arg);
}

static void cell_clear(code_vm *vm, cv self)
{
    code_setref(vm, &((code_cell *)cv_obj(self))->v, CV_NULL);
}

static cv cell_repr(code_vm *vm, cv self)
{
    const code_cell *c = (const code_cell *)cv_obj(self);
    if (!c->v)
        return code_str_from_cstr(vm, "<cell: empty>");
    return code_str_fmt(vm, "<cell: %s object>", code_type_name(c->v));
}

const code_type code_type_cell = {
    .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},
    .name = "cell",
    .kind = CODE_K_CELL,
    .dealloc = cell_dealloc,
    .traverse = cell_traverse,
    .clear = cell_clear,
    .repr = cell_repr,
};

static void func_dealloc(code_vm *vm, code_obj *o)
{
    code_func *f = (code_func *)o;
    code_decref(vm, f->name);
    code_decref(vm, f->defaults);
    code_decref(vm, f->kwdefaults);
    code_decref(vm, f->closure);
}

/* The name is a str: never part of a cycle. Globals are the evaluator's
 * slots, not the function's. */
static void func_traverse(code_vm *vm, cv self, code_visit_fn visit, void *arg)
{
    const code_func *f = (const code_func *)cv_obj(self);
    visit(vm, f->defaults, arg);
    visit(vm, f->kwdefaults, arg);
    visit(vm, f->closure, arg);
}

static void func_clear(code_vm *vm, cv self)
{
    code_func *f = (code_func *)cv_obj(self);
    code_setref(vm, &f->defaults, CV_NULL);
    code_setref(vm, &f->kwdefaults, CV_NULL);
    code_setref(vm, &f->closure, CV_NULL);
}

static cv func_repr(code_vm *vm, cv self)
{
    const code_func *f = (code_func *)cv_obj(self);
    /* a per-run serial stands for the address, so runs are deterministic */
    return code_str_fmt(vm, "<function %s at 0x7f%010llx>", f->sc->qualname,
                        (unsigned long long)(0x1000 + f->serial * 0x90));
}

static cv func_getattr(code_vm *vm, cv self, const char *name)
{
    const code_func *f = (code_func *)cv_obj(self);
    if (strcmp(name, "__name__") == 0)
        return code_incref(f->name);
    if (strcmp(name, "__qualname__") == 0)
        return code_str_from_cstr(vm, f->sc->qualname);
    if (strcmp(name, "__doc__") == 0)
        return CODE_NONE;
    if (strcmp(name, "__defaults__") == 0)
        return f->defaults ? code_incref(f->defaults) : CODE_NONE;
    if (strcmp(name, "__module__") == 0)
        return code_str_from_cstr(vm, "__main__");
    return CV_NULL;
}

static int func_hash(code_vm *vm, cv self, uint64_t *h)
{
    (void)vm;
    *h = ((const code_func *)cv_obj(self))->serial * 0x9E3779B97F4A7C15ull;
    return 0;
}

const code_type code_type_func = {
    .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},
    .name = "function",
    .kind = CODE_K_FUNC,
    .dealloc = func_dealloc,
    .traverse = func_traverse,
    .clear = func_clear,
    .repr = func_repr,
    .hash = func_hash,
    .call = code_func_call,
    .getattr = func_getattr,
};

cv code_make_function(code_vm *vm, code_frame *f, const code_scope *sc, const code_params *p,
                      const char *name)
{
    size_t ndef = 0;
    for (uint32_t i = 0; i < p->npos; i++)
        ndef += p->pos[i].def != NULL;
    cv defaults = CV_NULL, kwdefaults = CV_NULL, closure = CV_NULL;
    if (ndef) {
        if (!(defaults = code_tuple_new(vm, ndef)))
            return CV_NULL;
        size_t j = 0;
        for (uint32_t i = 0; i < p->npos; i++)
            if (p->pos[i].def) {
                cv v = code_eval_expr(vm, f, p->pos[i].def);
                if (!v)
                    goto fail;
                ((code_tuple *)cv_obj(defaults))->v[j++] = v;
            }
    }
    for (uint32_t i = 0; i < p->nkwonly; i++) {
        if (!p->kwonly[i].def)
            continue;
        if (!kwdefaults && !(kwdefaults = code_dict_new(vm)))
            goto fail;
        cv v = code_eval_expr(vm, f, p->kwonly[i].def);
        if (!v)
            goto fail;
        int rc = code_dict_set(vm, kwdefaults, code_str_intern(vm, p->kwonly[i].name,
                                                               strlen(p->kwonly[i].name)), v);
        code_decref(vm, v);
        if (rc)
            goto fail;
    }
    if (sc->nfree) {
        if (!(closure = code_tuple_new(vm, sc->nfree)))
            goto fail;
        for (uint32_t i = 0; i < sc->nfree; i++)
            ((code_tuple *)cv_obj(closure))->v[i] = code_incref(f->fast[sc->free_from[i]]);
    }
    code_func *fn = code_obj_new(vm, &code_type_func, sizeof(code_func));
    if (!fn)
        goto fail;
    fn->sc = sc;
    fn->name = code_str_intern(vm, name, strlen(name));
    fn->defaults = defaults;
    fn->kwdefaults = kwdefaults;
    fn->closure = closure;
    fn->serial = ++vm->ev->func_serial;
    return cv_of(fn);
fail:
    code_decref(vm, defaults);
    code_decref(vm, kwdefaults);
    code_decref(vm, closure);
    return CV_NULL;
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int code_check_time_only(code_vm *vm)
{
    struct code_eval *ev = vm->ev;
    if (!ev)
        return 0;
    uint64_t now = thread_cpu_ns();
    if (vm->cpu_ns + (now - ev->cpu_start_ns) > ev->max_time_ns) {
        ev->fatal = true;
        ev->tick = CODE_TICKS;
        return code_raise_i(vm, &code_exc_TimeoutError, "time limit exceeded (%llu us)",
                            (unsigned long long)vm->limits.max_time_us);
    }
    return 0;
}

/* The time limit: read the CPU clock now and then, not per node. */
int code_check_time(code_vm *vm)
{
    struct code_eval *ev = vm->ev;
    if (!ev)
        return 0;
    ev->tick = 0;
    /* A safe point: what the evaluator and the builtins up the C stack
     * hold, they hold references for (see code_gc.c). */
    code_gc_maybe(vm);
    uint64_t now = thread_cpu_ns();
    if (vm->cpu_ns + (now - ev->cpu_start_ns) > ev->max_time_ns) {
        ev->fatal = true;
        /* Every later tick checks again, so a handler that swallowed the
         * TimeoutError (a task's, a generator's) cannot keep the run going. */
        ev->tick = CODE_TICKS;
        return code_raise_i(vm, &code_exc_TimeoutError, "time limit exceeded (%llu us)",
                            (unsigned long long)vm->limits.max_time_us);
    }
    return 0;
}

static inline void release_slots(code_vm *vm, cv *fast, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        code_decref(vm, fast[i]);
}

cv code_run_body(code_vm *vm, const code_func *fn, cv *fast)
{
    struct code_eval *ev = vm->ev;
    const code_scope *sc = fn->sc;
    char probe;
    if (ev->depth >= vm->limits.max_depth || &probe < vm->stack_lo) {
        release_slots(vm, fast, sc->nlocals);
        return code_raise(vm, &code_exc_RecursionError, "maximum recursion depth exceeded");
    }
    if (++ev->tick >= CODE_TICKS && code_check_time(vm)) {
        release_slots(vm, fast, sc->nlocals);
        return CV_NULL;
    }
    for (uint32_t i = 0; i < sc->ncells; i++) {
        code_cell *c = code_obj_new(vm, &code_type_cell, sizeof(code_cell));
        if (!c) {
            release_slots(vm, fast, sc->nlocals + i);
            return CV_NULL;
        }
        int32_t p = sc->cell_param[i];
        if (p >= 0) {
            c->v = fast[p];
            fast[p] = CV_NULL;
        }
        fast[sc->nlocals + i] = cv_of(c);
    }
    for (uint32_t i = 0; i < sc->nfree; i++)
        fast[sc->nlocals + sc->ncells + i] = ((code_tuple *)cv_obj(fn->closure))->v[i];
    ev->depth++;
    code_frame fr = {.fast = fast, .sc = sc};
    int line = vm->line;
    cv r;
    if (sc->kind == CODE_SC_LAMBDA) {
        r = code_eval_expr(vm, &fr, ((const code_expr *)sc->node)->u.lambda.body);
    } else {
        int st = code_exec_block(vm, &fr, &((const code_stmt *)sc->node)->u.def.body);
        r = st == CODE_X_RETURN ? fr.retval : st == CODE_X_ERR ? CV_NULL : CODE_NONE;
    }
    ev->depth--;
    vm->line = line;
    release_slots(vm, fast, sc->nlocals + sc->ncells);
    return r;
}

cv code_func_call(code_vm *vm, cv self, cv *args, size_t nargs, cv kwnames)
{
    const code_func *fn = (const code_func *)cv_obj(self);
    const code_scope *sc = fn->sc;
    uint32_t ns = sc->nslots;
    cv *fast = CODE_FRAME_SLOTS(vm, ns);
    if (!fast)
        return code_raise_nomem(vm);
    memset(fast, 0, sizeof(cv) * (ns ? ns : 1));
    if (!kwnames && nargs == sc->nparams && nargs == sc->params->npos) {
        for (size_t i = 0; i < nargs; i++)
            fast[i] = code_incref(args[i]);
    } else if (code_bind_args(vm, fn, fast, args, nargs, kwnames)) {
        release_slots(vm, fast, sc->nparams);
        CODE_FRAME_SLOTS_FREE(vm, fast, ns);
        return CV_NULL;
    }
    cv r = sc->is_async ? code_coro_new(vm, fn, fast) : code_run_body(vm, fn, fast);
    CODE_FRAME_SLOTS_FREE(vm, fast, ns);
    return r;
}
