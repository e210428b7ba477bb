/* Host calls: host-function objects, the futures that hold a call's answer,
 * issuing a call (encoded to JSON at once, recorded for the step and for
 * replay), waiting for answers (a switch back to the host), and the
 * exception types a host names that are not builtin. */
#include "code/code_eval.h"

#include <stdlib.h>
#include <string.h>

#include "code/code_json.h"

/* ---- host functions ------------------------------------------------------- */

static void hostfn_dealloc(code_vm *vm, code_obj *o)
{
    code_decref(vm, ((code_hostfn *)o)->name);
}

static cv hostfn_repr(code_vm *vm, cv self)
{
    return code_str_fmt(vm, "<host function %s>",
                        code_str_cstr(((code_hostfn *)cv_obj(self))->name));
}

/* Called outside async code: the call pauses the run until answered. */
static cv hostfn_call(code_vm *vm, cv self, cv *args, size_t nargs, cv kwnames)
{
    cv fut = code_host_issue(vm, ((code_hostfn *)cv_obj(self))->name, args, nargs, kwnames);
    if (!fut)
        return CV_NULL;
    code_future *f = (code_future *)cv_obj(fut);
    while (!f->done)
        if (code_host_wait(vm)) {
            code_decref(vm, fut);
            return CV_NULL;
        }
    cv r = code_future_take(vm, f);
    code_decref(vm, fut);
    return r;
}

const code_type code_type_hostfn = {
    .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},
    .name = "function",
    .kind = CODE_K_FUNC,
    .dealloc = hostfn_dealloc,
    .repr = hostfn_repr,
    .call = hostfn_call,
};

cv code_hostfn_new(code_vm *vm, cv name)
{
    code_hostfn *h = code_obj_new(vm, &code_type_hostfn, sizeof(code_hostfn));
    if (!h)
        return CV_NULL;
    h->name = code_incref(name);
    return cv_of(h);
}

/* ---- futures ------------------------------------------------------------------- */

static void future_dealloc(code_vm *vm, code_obj *o)
{
    code_future *f = (code_future *)o;
    code_decref(vm, f->value);
    code_decref(vm, f->exc);
    code_waitq_release(vm, &f->waiters);
}

static cv future_repr(code_vm *vm, cv self)
{
    const code_future *f = (const code_future *)cv_obj(self);
    return code_str_fmt(vm, "<Future call_id=%llu %s>", (unsigned long long)f->id,
                        f->done ? "finished" : "pending");
}

const code_type code_type_future = {
    .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},
    .name = "Future",
    .kind = CODE_K_CORO,
    .dealloc = future_dealloc,
    .repr = future_repr,
};

cv code_future_take(code_vm *vm, code_future *f)
{
    if (f->exc) {
        cv e = code_incref(f->exc);
        ((code_exc *)cv_obj(e))->line = vm->line;
        code_setref(vm, &vm->exc, e);
        return CV_NULL;
    }
    return code_incref(f->value);
}

/* ---- issuing and waiting ------------------------------------------------------- */

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

cv code_host_issue(code_vm *vm, cv name, cv *args, size_t nargs, cv kwnames)
{
    struct code_eval *ev = vm->ev;
    if (ev->ncalls >= vm->limits.max_calls) {
        ev->fatal = true;
        return code_raise(vm, &code_exc_RuntimeError, "host call limit reached (max_calls=%u)",
                          vm->limits.max_calls);
    }
    cv a = code_tuple_new(vm, nargs), kw = CV_NULL;
    if (!a)
        return CV_NULL;
    for (size_t i = 0; i < nargs; i++)
        ((code_tuple *)cv_obj(a))->v[i] = code_incref(args[i]);
    /* positional arguments cross as a JSON array: a list */
    cv al = code_list_from(vm, a);
    code_decref(vm, a);
    if (!al || !(kw = code_dict_new(vm))) {
        code_decref(vm, al);
        return CV_NULL;
    }
    size_t nk = kwnames ? ((code_tuple *)cv_obj(kwnames))->n : 0;
    for (size_t i = 0; i < nk; i++)
        if (code_dict_set(vm, kw, ((code_tuple *)cv_obj(kwnames))->v[i], args[nargs + i])) {
            code_decref(vm, al);
            code_decref(vm, kw);
            return CV_NULL;
        }
    size_t n1, n2;
    char *ja = code_json_encode(vm, al, &n1);
    char *jk = ja ? code_json_encode(vm, kw, &n2) : NULL;
    code_decref(vm, al);
    code_decref(vm, kw);
    if (!jk) {
        free(ja);
        return CV_NULL;
    }
    /* The texts live outside the run's heap until the step hands them over,
     * and async code may issue many calls before it does: together with the
     * heap they stay within the memory limit. */
    size_t add = n1 + n2;
    if (vm->mem.max_bytes && (add > vm->mem.max_bytes ||
                              ev->newcall_bytes > vm->mem.max_bytes - add ||
                              vm->mem.bytes > vm->mem.max_bytes - add - ev->newcall_bytes)) {
        free(ja);
        free(jk);
        return code_raise(vm, &code_exc_MemoryError,
                          "the arguments of the host calls issued in one step exceed the "
                          "memory limit");
    }
    ev->newcall_bytes += add;
    code_future *f = code_obj_new(vm, &code_type_future, sizeof(code_future));
    char *fname = dup_str(code_str_cstr(name));
    if (!f || !fname || code_host_note_call(vm, fname, ja, jk)) {
        free(ja);
        free(jk);
        free(fname);
        code_decref(vm, f ? cv_of(f) : CV_NULL);
        return f ? code_raise_nomem(vm) : CV_NULL;
    }
    f->id = ev->next_call_id;
    /* the pending list holds a reference until the answer arrives */
    if (ev->nfuts == ev->capfuts) {
        size_t nc = ev->capfuts ? ev->capfuts * 2 : 8;
        code_future **nv = realloc(ev->futs, nc * sizeof(*nv));
        if (!nv)
            abort();
        ev->futs = nv;
        ev->capfuts = nc;
    }
    code_incref(cv_of(f));
    ev->futs[ev->nfuts++] = f;
    return cv_of(f);
}

int code_host_wait(code_vm *vm)
{
    struct code_eval *ev = vm->ev;
    code_ctx *self = ev->cur;
    char *lo = vm->stack_lo;
    ev->waiting = self;
    code_ctx_switch(self, &ev->host, false);
    ev->cur = self;
    vm->stack_lo = lo;
    return 0;
}

/* ---- exception types a host names ------------------------------------------------- */

typedef struct dyn_type {
    code_type t;
    char name[];
} dyn_type;

cv code_exc_type_dynamic(code_vm *vm, const char *name)
{
    struct code_eval *ev = vm->ev;
    for (size_t i = 0; i < ev->ndyn; i++)
        if (strcmp(((const code_type *)cv_obj(ev->dyn[i]))->name, name) == 0)
            return code_incref(ev->dyn[i]);
    size_t n = strlen(name);
    dyn_type *d = code_obj_new(vm, &code_type_type, sizeof(dyn_type) + n + 1);
    if (!d)
        return CV_NULL;
    code_obj hdr = d->t.ob;
    d->t = code_exc_Exception;   /* every slot of Exception */
    d->t.ob = hdr;
    /* immortal for the run: instances point at their type without a
     * reference, and type(e) hands it out as it does static types; the
     * heap frees it with the run */
    d->t.ob.rc = CODE_RC_IMMORTAL;
    memcpy(d->name, name, n + 1);
    d->t.name = d->name;
    d->t.base = &code_exc_Exception;
    cv *nv = realloc(ev->dyn, (ev->ndyn + 1) * sizeof(cv));
    if (!nv)
        abort();
    ev->dyn = nv;
    ev->dyn[ev->ndyn++] = cv_of(d);
    return cv_of(d);
}
