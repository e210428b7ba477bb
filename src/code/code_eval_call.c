/* The evaluator: call expressions (positional, keyword, *args and **kwargs
 * at the call site) and the binding of arguments to a Python function's
 * parameters, with CPython's TypeErrors. */
#include "code/code_eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The name CPython's call-site errors use: "__main__.f" for a Python
 * function, "len" for a builtin. */
static void callable_name(cv fn, char *buf, size_t cap)
{
    if (cv_is(fn, &code_type_func))
        snprintf(buf, cap, "__main__.%s", ((code_func *)cv_obj(fn))->sc->qualname);
    else if (cv_is(fn, &code_type_cfunc))
        snprintf(buf, cap, "%s", ((code_cfunc_obj *)cv_obj(fn))->name);
    else if (cv_is(fn, &code_type_hostfn))
        snprintf(buf, cap, "%s", code_str_cstr(((code_hostfn *)cv_obj(fn))->name));
    else
        snprintf(buf, cap, "%s object", code_type_name(fn));
}

static bool async_context(code_vm *vm, const code_frame *f)
{
    (void)vm;
    return f->sc->async_ctx;
}

static cv call_value(code_vm *vm, code_frame *f, cv fn, cv *args, size_t nargs, cv kwnames)
{
    if (cv_is(fn, &code_type_func))
        return code_func_call(vm, fn, args, nargs, kwnames);
    if (cv_is(fn, &code_type_hostfn) && async_context(vm, f))
        return code_host_issue(vm, ((code_hostfn *)cv_obj(fn))->name, args, nargs, kwnames);
    return code_call(vm, fn, args, nargs, kwnames);
}

/* An argument's value. A bare name passed to a call (map(get_user, ids))
 * may be an unknown host function, as a callee may: only other references
 * to an unknown name are NameErrors. */
static cv eval_arg(code_vm *vm, code_frame *f, const code_expr *a)
{
    if (a->kind == CODE_E_NAME && a->op == CODE_NK_GLOBAL)
        return code_load_callee(vm, f, a);
    return code_eval_fast(vm, f, a);
}

/* A call with *args or **kwargs: the positional values into a list, the
 * keywords into a dict, then flattened. */
static cv call_general(code_vm *vm, code_frame *f, const code_expr *e, cv fn)
{
    char fname[200];
    cv pos = code_list_new(vm, e->u.call.nargs), kw = CV_NULL, r = CV_NULL;
    cv *argv = NULL;
    size_t nargv = 0;
    cv names = CV_NULL;
    if (!pos)
        return CV_NULL;
    for (uint32_t i = 0; i < e->u.call.nargs; i++) {
        const code_expr *a = e->u.call.args[i];
        bool star = a->kind == CODE_E_STARRED;
        cv v = star ? code_eval_expr(vm, f, a->u.unary.x) : eval_arg(vm, f, a);
        if (!v)
            goto out;
        int rc;
        if (star && !cv_type(v)->iter) {
            callable_name(fn, fname, sizeof(fname));
            rc = code_raise_i(vm, &code_exc_TypeError,
                              "%s() argument after * must be an iterable, not %s", fname,
                              code_type_name(v));
        } else if (star) {
            cv l = code_list_from(vm, v);
            rc = l ? 0 : -1;
            if (l) {
                code_list *lp = (code_list *)cv_obj(l);
                for (size_t j = 0; j < lp->n && !rc; j++)
                    rc = code_list_append(vm, pos, lp->v[j]);
                code_decref(vm, l);
            }
        } else {
            rc = code_list_append(vm, pos, v);
        }
        code_decref(vm, v);
        if (rc)
            goto out;
    }
    if (e->u.call.nkws && !(kw = code_dict_new(vm)))
        goto out;
    for (uint32_t i = 0; i < e->u.call.nkws; i++) {
        const code_kw *k = &e->u.call.kws[i];
        cv v = k->name ? eval_arg(vm, f, k->value) : code_eval_expr(vm, f, k->value);
        if (!v)
            goto out;
        int rc = 0;
        if (k->name) {
            cv key = code_str_intern(vm, k->name, strlen(k->name));
            cv old = CV_NULL;
            if (!key || code_dict_get(vm, kw, key, &old) < 0)
                rc = -1;
            else if (old) {
                callable_name(fn, fname, sizeof(fname));
                rc = code_raise_i(vm, &code_exc_TypeError,
                                  "%s() got multiple values for keyword argument '%s'", fname,
                                  k->name);
            } else
                rc = code_dict_set(vm, kw, key, v);
        } else if (!cv_is(v, &code_type_dict)) {
            callable_name(fn, fname, sizeof(fname));
            rc = code_raise_i(vm, &code_exc_TypeError,
                              "%s() argument after ** must be a mapping, not %s", fname,
                              code_type_name(v));
        } else {
            size_t p = 0;
            cv mk, mv;
            while (!rc && code_dict_next(v, &p, &mk, &mv)) {
                cv old = CV_NULL;
                if (!cv_is(mk, &code_type_str))
                    rc = code_raise_i(vm, &code_exc_TypeError, "keywords must be strings");
                else if (code_dict_get(vm, kw, mk, &old) < 0)
                    rc = -1;
                else if (old) {
                    callable_name(fn, fname, sizeof(fname));
                    rc = code_raise_i(vm, &code_exc_TypeError,
                                      "%s() got multiple values for keyword argument '%s'",
                                      fname, code_str_cstr(mk));
                } else
                    rc = code_dict_set(vm, kw, mk, mv);
            }
        }
        code_decref(vm, v);
        if (rc)
            goto out;
    }
    code_list *lp = (code_list *)cv_obj(pos);
    size_t nk = kw ? ((code_dict *)cv_obj(kw))->used : 0;
    nargv = lp->n + nk + 1;
    if (!(argv = code_heap_alloc(vm, nargv * sizeof(cv))))
        goto out;
    memcpy(argv, lp->v, lp->n * sizeof(cv));
    if (nk) {
        if (!(names = code_tuple_new(vm, nk)))
            goto out;
        size_t p = 0, j = 0;
        cv mk, mv;
        while (code_dict_next(kw, &p, &mk, &mv)) {
            ((code_tuple *)cv_obj(names))->v[j] = code_incref(mk);
            argv[lp->n + j++] = mv;
        }
    }
    r = call_value(vm, f, fn, argv, lp->n, names);
out:
    if (argv)
        code_heap_free(vm, argv, nargv * sizeof(cv));
    code_decref(vm, names);
    code_decref(vm, kw);
    code_decref(vm, pos);
    return r;
}

static bool call_direct(code_vm *vm, code_frame *f, const code_expr *e, cv fn, cv *out);

static cv call_expr(code_vm *vm, code_frame *f, const code_expr *e)
{
    const code_expr *fe = e->u.call.fn;
    uint32_t na = e->u.call.nargs, nk = e->u.call.nkws;
    bool simple = !e->op;   /* the scope pass marks *args and **kwargs */
    cv self = CV_NULL, fn = CV_NULL, r = CV_NULL;
    bool method = simple && fe->kind == CODE_E_ATTR;
    if (method) {
        if (!(self = code_eval_expr(vm, f, fe->u.attr.obj)))
            return CV_NULL;
        /* a module's function or a host function: call it as a value, so
         * host calls see their context */
        if (cv_is(self, &code_type_module)) {
            fn = code_getattr(vm, self, fe->u.attr.name);
            code_decref(vm, self);
            self = CV_NULL;
            method = false;
            if (!fn)
                return CV_NULL;
        }
    } else if (fe->kind == CODE_E_NAME && fe->op == CODE_NK_GLOBAL &&
               (fn = vm->ev->gv[fe->height])) {
        code_incref(fn);   /* a global function: the common callee */
    } else if (!(fn = fe->kind == CODE_E_NAME ? code_load_callee(vm, f, fe)
                                               : code_eval_expr(vm, f, fe))) {
        return CV_NULL;
    }
    if (!simple) {
        r = call_general(vm, f, e, fn);
        code_decref(vm, fn);
        return r;
    }
    if (!method && nk == 0 && cv_is(fn, &code_type_func) && call_direct(vm, f, e, fn, &r))
        return r;
    cv buf[8];
    size_t n = na + nk;
    cv *argv = n <= 8 ? buf : code_heap_alloc(vm, n * sizeof(cv));
    size_t done = 0;
    if (!argv)
        goto out;   /* MemoryError raised */
    for (uint32_t i = 0; i < na; i++, done++)
        if (!(argv[done] = eval_arg(vm, f, e->u.call.args[i])))
            goto out;
    for (uint32_t i = 0; i < nk; i++, done++)
        if (!(argv[done] = eval_arg(vm, f, e->u.call.kws[i].value)))
            goto out;
    cv kwnames = e->height ? vm->ev->prog.consts[e->height - 1] : CV_NULL;
    int line = vm->line;
    vm->line = e->line;   /* an error of the call itself names its line */
    if (method)
        r = code_call_method(vm, self, fe->u.attr.name, argv, na, kwnames);
    else
        r = call_value(vm, f, fn, argv, na, kwnames);
    vm->line = line;
out:
    for (size_t i = 0; i < done; i++)
        code_decref(vm, argv[i]);
    if (argv && argv != buf)
        code_heap_free(vm, argv, n * sizeof(cv));
    code_decref(vm, self);
    code_decref(vm, fn);
    return r;
}

/* The common call: a Python function with plain positional parameters,
 * called with as many plain positional arguments. They are evaluated
 * straight into the callee's slots. Consumes fn and sets *out (the result or
 * CV_NULL) when the call is of that shape; false (fn kept) when not. (Not a
 * sentinel value: a function may return any value, NotImplemented too.) */
static inline __attribute__((always_inline)) bool call_direct(code_vm *vm, code_frame *f,
                                                              const code_expr *e, cv fn,
                                                              cv *out)
{
    const code_func *fo = (const code_func *)cv_obj(fn);
    const code_scope *sc = fo->sc;
    uint32_t na = e->u.call.nargs;
    if (na != sc->nparams || na != sc->params->npos || sc->is_async)
        return false;
    uint32_t ns = sc->nslots;
    cv *fast = CODE_FRAME_SLOTS(vm, ns);
    cv r = CV_NULL;
    if (!fast) {
        code_decref(vm, fn);
        *out = CV_NULL;
        return true;
    }
    uint32_t i;
    for (i = 0; i < na; i++)
        if (!(fast[i] = eval_arg(vm, f, e->u.call.args[i])))
            break;
    if (i == na) {
        for (uint32_t k = na; k < ns; k++)
            fast[k] = CV_NULL;
        r = code_run_body(vm, fo, fast);   /* it restores vm->line */
    } else {
        while (i--)
            code_decref(vm, fast[i]);
    }
    CODE_FRAME_SLOTS_FREE(vm, fast, ns);
    code_decref(vm, fn);
    *out = r;
    return true;
}

cv code_eval_call(code_vm *vm, code_frame *f, const code_expr *e)
{
    const code_expr *fe = e->u.call.fn;
    /* a global function called with plain positional arguments: first */
    if (fe->kind == CODE_E_NAME && fe->op == CODE_NK_GLOBAL && !e->op && !e->u.call.nkws) {
        cv g = vm->ev->gv[fe->height];
        cv r;
        if (g && cv_is(g, &code_type_func)) {
            if (call_direct(vm, f, e, code_incref(g), &r))
                return r;
            code_decref(vm, g);
        }
    }
    return call_expr(vm, f, e);
}

/* ---- binding arguments to parameters ---------------------------------------- */

static int missing_error(code_vm *vm, const code_func *fn, const char **names, size_t n,
                         bool kwonly)
{
    char list[512];
    size_t len = 0;
    list[0] = 0;
    for (size_t i = 0; i < n && len < sizeof(list) - 64; i++) {
        const char *sep = i == 0 ? "" : n == 2 ? " and " : i + 1 == n ? ", and " : ", ";
        len += (size_t)snprintf(list + len, sizeof(list) - len, "%s'%s'", sep, names[i]);
    }
    return code_raise_i(vm, &code_exc_TypeError, "%s() missing %zu required %s argument%s: %s",
                        fn->sc->qualname, n, kwonly ? "keyword-only" : "positional",
                        n == 1 ? "" : "s", list);
}

static int too_many_error(code_vm *vm, const code_func *fn, size_t nargs, size_t kwonly_given)
{
    const code_params *ps = fn->sc->params;
    size_t ndef = fn->defaults ? ((code_tuple *)cv_obj(fn->defaults))->n : 0;
    char takes[64], given[128];
    if (ndef)
        snprintf(takes, sizeof(takes), "from %u to %u positional arguments",
                 ps->npos - (unsigned)ndef, ps->npos);
    else
        snprintf(takes, sizeof(takes), "%u positional argument%s", ps->npos,
                 ps->npos == 1 ? "" : "s");
    if (kwonly_given)
        snprintf(given, sizeof(given),
                 "%zu positional argument%s (and %zu keyword-only argument%s) were", nargs,
                 nargs == 1 ? "" : "s", kwonly_given, kwonly_given == 1 ? "" : "s");
    else
        snprintf(given, sizeof(given), "%zu %s", nargs, nargs == 1 ? "was" : "were");
    return code_raise_i(vm, &code_exc_TypeError, "%s() takes %s but %s given", fn->sc->qualname,
                        takes, given);
}

int code_bind_args(code_vm *vm, const code_func *fn, cv *fast, cv *args, size_t nargs,
                   cv kwnames)
{
    const code_scope *sc = fn->sc;
    const code_params *ps = sc->params;
    uint32_t npos = ps->npos, nkwo = ps->nkwonly;
    uint32_t varslot = npos + nkwo, kwslot = varslot + (ps->vararg ? 1 : 0);
    size_t ncopy = nargs < npos ? nargs : npos;
    for (size_t i = 0; i < ncopy; i++)
        fast[i] = code_incref(args[i]);
    if (ps->vararg) {
        if (nargs > npos) {
            cv t = code_tuple_new(vm, nargs - npos);
            if (!t)
                return -1;
            for (size_t i = npos; i < nargs; i++)
                ((code_tuple *)cv_obj(t))->v[i - npos] = code_incref(args[i]);
            fast[varslot] = t;
        } else
            fast[varslot] = CODE_EMPTY_TUPLE;
    }
    cv kwd = CV_NULL;
    if (ps->kwarg) {
        if (!(kwd = code_dict_new(vm)))
            return -1;
        fast[kwslot] = kwd;
    }
    size_t nkw = kwnames ? ((code_tuple *)cv_obj(kwnames))->n : 0;
    size_t kwonly_given = 0;
    for (size_t j = 0; j < nkw; j++) {
        cv key = ((code_tuple *)cv_obj(kwnames))->v[j];
        const char *k = code_str_cstr(key);
        cv v = args[nargs + j];
        int64_t idx = -1;
        bool posonly_hit = false;
        for (uint32_t i = 0; i < npos; i++)
            if (strcmp(ps->pos[i].name, k) == 0) {
                if (i < ps->nposonly)
                    posonly_hit = true;
                else
                    idx = i;
                break;
            }
        if (idx < 0)
            for (uint32_t i = 0; i < nkwo; i++)
                if (strcmp(ps->kwonly[i].name, k) == 0) {
                    idx = npos + i;
                    kwonly_given++;
                    break;
                }
        if (idx >= 0) {
            if (fast[idx])
                return code_raise_i(vm, &code_exc_TypeError,
                                    "%s() got multiple values for argument '%s'", sc->qualname, k);
            fast[idx] = code_incref(v);
            continue;
        }
        if (kwd) {
            if (code_dict_set(vm, kwd, key, v))
                return -1;
            continue;
        }
        if (posonly_hit)
            return code_raise_i(vm, &code_exc_TypeError,
                                "%s() got some positional-only arguments passed as keyword "
                                "arguments: '%s'",
                                sc->qualname, k);
        return code_raise_i(vm, &code_exc_TypeError, "%s() got an unexpected keyword argument '%s'",
                            sc->qualname, k);
    }
    if (nargs > npos && !ps->vararg)
        return too_many_error(vm, fn, nargs, kwonly_given);
    /* defaults, and what is still missing */
    size_t ndef = fn->defaults ? ((code_tuple *)cv_obj(fn->defaults))->n : 0;
    const char *miss[64];
    size_t nmiss = 0;
    for (uint32_t i = (uint32_t)ncopy; i < npos; i++) {
        if (fast[i])
            continue;
        if (i >= npos - ndef)
            fast[i] = code_incref(((code_tuple *)cv_obj(fn->defaults))->v[i - (npos - ndef)]);
        else if (nmiss < 64)
            miss[nmiss++] = ps->pos[i].name;
    }
    if (nmiss)
        return missing_error(vm, fn, miss, nmiss, false);
    for (uint32_t i = 0; i < nkwo; i++) {
        if (fast[npos + i])
            continue;
        cv d = CV_NULL;
        if (fn->kwdefaults && code_dict_get_cstr(vm, fn->kwdefaults, ps->kwonly[i].name, &d) < 0)
            return -1;
        if (d)
            fast[npos + i] = code_incref(d);
        else if (nmiss < 64)
            miss[nmiss++] = ps->kwonly[i].name;
    }
    if (nmiss)
        return missing_error(vm, fn, miss, nmiss, true);
    return 0;
}
