/* The evaluator: try/except/else/finally and raise. The exception being
 * handled (ev->handled) is what a bare raise re-raises and what becomes the
 * __context__ of an exception raised while handling it. A limit reached
 * (time, memory, host calls) is fatal: no handler catches it and no finally
 * block runs, so the run ends with it. */
#include "code/code_eval.h"

#include <string.h>

/* A MemoryError is the limit reached when the heap is (nearly) full or the
 * allocation count is used up: then nothing may catch it. One refused
 * oversized request ("x" * 2**40, 7 ** 10**12) leaves the heap as it was and
 * is an ordinary exception, as in CPython. */
bool code_exc_is_fatal(code_vm *vm)
{
    if (vm->ev->fatal)
        return true;
    if (!vm->mem.failed || !code_exc_matches(vm, &code_exc_MemoryError))
        return false;
    const code_mem *m = &vm->mem;
    return (m->max_allocs && m->allocs >= m->max_allocs) ||
           (m->max_bytes && m->bytes >= m->max_bytes - m->max_bytes / 16);
}

static code_exc *exc_of(cv e)
{
    return (code_exc *)cv_obj(e);
}

void code_exc_set_context(code_vm *vm)
{
    struct code_eval *ev = vm->ev;
    cv h = ev->handled;
    if (!vm->exc || !h || vm->exc == h || !cv_obj(vm->exc) || cv_kind(vm->exc) != CODE_K_EXC)
        return;
    code_exc *e = exc_of(vm->exc);
    if (e->context)
        return;
    /* no cycle: h's own chain must not hold the new exception */
    for (cv c = h; c; c = exc_of(c)->context)
        if (c == vm->exc)
            return;
    e->context = code_incref(h);
}

static bool is_exc_type(cv t)
{
    return cv_is(t, &code_type_type) &&
           code_type_is_sub((const code_type *)cv_obj(t), &code_exc_BaseException);
}

/* Does the exception exc match the handler's type value? -1 on error. */
static int handler_matches(code_vm *vm, cv exc, cv t)
{
    const code_type *et = cv_type(exc);
    if (cv_is(t, &code_type_tuple)) {
        const code_tuple *tp = (const code_tuple *)cv_obj(t);
        for (size_t i = 0; i < tp->n; i++) {
            int r = handler_matches(vm, exc, tp->v[i]);
            if (r)
                return r;
        }
        return 0;
    }
    if (!is_exc_type(t))
        return code_raise_i(vm, &code_exc_TypeError,
                            "catching classes that do not inherit from BaseException is not "
                            "allowed");
    return code_type_is_sub(et, (const code_type *)cv_obj(t));
}

static int run_handler(code_vm *vm, code_frame *f, const code_handler *h, cv exc)
{
    struct code_eval *ev = vm->ev;
    uint8_t kind = 0;
    uint32_t slot = 0;
    if (h->name) {
        code_scope_lookup(&ev->prog, f->sc, h->name, &kind, &slot);
        code_store_name(vm, f, kind, slot, exc);
    }
    cv saved = ev->handled;
    ev->handled = code_incref(exc);
    int st = code_exec_block(vm, f, &h->body);
    if (st == CODE_X_ERR)
        code_exc_set_context(vm);
    code_decref(vm, ev->handled);
    ev->handled = saved;
    if (h->name) {
        /* "except E as e" unbinds e after the handler, as CPython */
        cv *slotp;
        if (kind == CODE_NK_LOCAL)
            slotp = &f->fast[slot];
        else if (kind == CODE_NK_GLOBAL)
            slotp = &ev->gv[slot];
        else
            slotp = &((code_cell *)cv_obj(f->fast[slot]))->v;
        code_setref(vm, slotp, CV_NULL);
    }
    return st;
}

int code_exec_try(code_vm *vm, code_frame *f, const code_stmt *s)
{
    struct code_eval *ev = vm->ev;
    int st = code_exec_block(vm, f, &s->u.try_.body);
    if (st == CODE_X_ERR && s->u.try_.nhandlers && !code_exc_is_fatal(vm)) {
        if (!vm->exc)
            /* A failure that set no exception is a bug of the runtime: made
             * an error here rather than a NULL handed to the handlers. */
            code_raise(vm, &code_exc_RuntimeError, "internal error: an operation failed without an exception");
        cv exc = code_exc_fetch(vm);
        int handled = 0;
        for (uint32_t i = 0; i < s->u.try_.nhandlers && !handled; i++) {
            const code_handler *h = &s->u.try_.handlers[i];
            int m = 1;
            if (h->type) {
                vm->line = h->line;
                cv t = code_eval_expr(vm, f, h->type);
                m = t ? handler_matches(vm, exc, t) : -1;
                code_decref(vm, t);
                if (m < 0) {
                    /* the new error happened while exc was being handled */
                    cv saved = ev->handled;
                    ev->handled = exc;
                    code_exc_set_context(vm);
                    ev->handled = saved;
                    code_decref(vm, exc);
                    exc = CV_NULL;
                    handled = -1;
                    break;
                }
            }
            if (m) {
                handled = 1;
                st = run_handler(vm, f, h, exc);
            }
        }
        if (!handled) {
            vm->exc = exc;   /* as it was: its line is where it was raised */
            st = CODE_X_ERR;
        } else {
            code_decref(vm, exc);
            if (handled < 0)
                st = CODE_X_ERR;
        }
    } else if (st == CODE_X_OK) {
        st = code_exec_block(vm, f, &s->u.try_.orelse);
    }
    if (!s->u.try_.finalbody.n || (st == CODE_X_ERR && code_exc_is_fatal(vm)))
        return st;
    /* finally: park the outcome, run the block, then restore it unless the
     * block left by itself */
    cv pending = st == CODE_X_ERR ? code_exc_fetch(vm) : CV_NULL;
    cv retval = st == CODE_X_RETURN ? f->retval : CV_NULL;
    cv saved_handled = ev->handled;
    if (pending)
        ev->handled = pending;
    int fst = code_exec_block(vm, f, &s->u.try_.finalbody);
    if (fst == CODE_X_ERR)
        code_exc_set_context(vm);
    ev->handled = saved_handled;
    if (fst != CODE_X_OK) {
        /* the finally block's own exit wins over the parked one */
        code_decref(vm, pending);
        code_decref(vm, retval);
        return fst;
    }
    if (pending) {
        vm->exc = pending;
        return CODE_X_ERR;
    }
    if (retval)
        f->retval = retval;
    return st;
}

/* An exception instance from a raise operand: a type is called. */
static cv make_exc(code_vm *vm, cv v)
{
    if (is_exc_type(v))
        return code_call(vm, v, NULL, 0, CV_NULL);
    if (cv_kind(v) == CODE_K_EXC)
        return code_incref(v);
    return code_raise(vm, &code_exc_TypeError, "exceptions must derive from BaseException");
}

int code_exec_raise(code_vm *vm, code_frame *f, const code_stmt *s)
{
    struct code_eval *ev = vm->ev;
    if (!s->u.raise.exc) {
        if (!ev->handled) {
            code_raise(vm, &code_exc_RuntimeError, "No active exception to reraise");
            return CODE_X_ERR;
        }
        vm->exc = code_incref(ev->handled);
        return CODE_X_ERR;
    }
    cv v = code_eval_expr(vm, f, s->u.raise.exc);
    if (!v)
        return CODE_X_ERR;
    cv e = make_exc(vm, v);
    code_decref(vm, v);
    if (!e)
        return CODE_X_ERR;
    if (cv_kind(e) != CODE_K_EXC) {
        code_decref(vm, e);
        code_raise(vm, &code_exc_TypeError,
                   "calling an exception type returned a non-exception");
        return CODE_X_ERR;
    }
    if (s->u.raise.cause) {
        cv c = code_eval_expr(vm, f, s->u.raise.cause);
        if (!c) {
            code_decref(vm, e);
            return CODE_X_ERR;
        }
        cv ce = CV_NULL;
        if (c != CODE_NONE) {
            if (!is_exc_type(c) && cv_kind(c) != CODE_K_EXC) {
                code_decref(vm, c);
                code_decref(vm, e);
                code_raise(vm, &code_exc_TypeError,
                           "exception causes must derive from BaseException");
                return CODE_X_ERR;
            }
            ce = make_exc(vm, c);
            if (!ce) {
                code_decref(vm, c);
                code_decref(vm, e);
                return CODE_X_ERR;
            }
        }
        code_decref(vm, c);
        code_setref(vm, &exc_of(e)->cause, ce);
        exc_of(e)->suppress_context = true;
    }
    exc_of(e)->line = vm->line;
    code_raise_obj(vm, e);
    code_exc_set_context(vm);
    return CODE_X_ERR;
}
