/* The builtins that compute: over an iterable (sum, min, max, sorted, all,
 * any) and over numbers (abs, round, divmod, pow, which hand the arithmetic
 * to the numbers part). Key functions are called with code_call: the run is
 * on its own coroutine stack, so a host call inside a key pauses it. */
#include "code/code_dt.h"

static int exactly_one(code_vm *vm, const char *fname, size_t nargs, cv kwnames)
{
    if (kwnames)
        return code_raise_i(vm, &code_exc_TypeError, "%s() takes no keyword arguments", fname);
    if (nargs != 1)
        return code_raise_i(vm, &code_exc_TypeError,
                            "%s() takes exactly one argument (%zu given)", fname, nargs);
    return 0;
}

cv code_bi_sum(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    cv it_arg, start = cv_from_small(0);
    if (code_args(vm, "sum", args, nargs, kwnames, "iterable,/,|start", &it_arg, &start) < 0)
        return CV_NULL;
    if (cv_is(start, &code_type_str))
        return code_raise(vm, &code_exc_TypeError,
                          "sum() can't sum strings [use ''.join(seq) instead]");
    if (cv_is(start, &code_type_bytes))
        return code_raise(vm, &code_exc_TypeError,
                          "sum() can't sum bytes [use b''.join(seq) instead]");
    cv it = code_iter(vm, it_arg);
    if (!it)
        return CV_NULL;
    cv acc = code_incref(start), x;
    while ((x = code_next(vm, it))) {
        cv r;
        if (cv_is_small(acc) && cv_is_small(x))   /* no overflow: 62-bit operands */
            r = code_int_from_i64(vm, cv_small(acc) + cv_small(x));
        else
            r = code_binop(vm, CODE_OP_ADD, acc, x);
        code_decref(vm, x);
        code_decref(vm, acc);
        acc = r;
        if (!acc)
            break;
    }
    code_decref(vm, it);
    if (vm->exc) {
        code_decref(vm, acc);
        return CV_NULL;
    }
    return acc;
}

/* min and max: one iterable (with default=), or two or more values. */
static cv minmax(code_vm *vm, cv *args, size_t nargs, cv kwnames, int op, const char *fname)
{
    static const char *const names[] = { "key", "default", NULL };
    cv kw[2] = { CV_NULL, CV_NULL };
    if (code_lib_kw(vm, fname, args, nargs, kwnames, names, kw) < 0)
        return CV_NULL;
    if (nargs == 0)
        return code_raise(vm, &code_exc_TypeError, "%s expected at least 1 argument, got 0",
                          fname);
    if (nargs > 1 && kw[1])
        return code_raise(vm, &code_exc_TypeError,
                          "Cannot specify a default for %s() with multiple positional "
                          "arguments", fname);
    cv key = kw[0] == CODE_NONE ? CV_NULL : kw[0];
    cv it;
    if (nargs == 1) {
        it = code_iter(vm, args[0]);
    } else {
        cv tu = code_tuple_new(vm, nargs);
        if (!tu)
            return CV_NULL;
        for (size_t i = 0; i < nargs; i++)
            ((code_tuple *)cv_obj(tu))->v[i] = code_incref(args[i]);
        it = code_iter(vm, tu);
        code_decref(vm, tu);
    }
    if (!it)
        return CV_NULL;
    cv best = CV_NULL, best_k = CV_NULL, x;
    while ((x = code_next(vm, it))) {
        cv k = key ? code_call(vm, key, &x, 1, CV_NULL) : code_incref(x);
        if (!k) {
            code_decref(vm, x);
            break;
        }
        if (!best) {
            best = x;
            best_k = k;
            continue;
        }
        int c = code_compare_bool(vm, k, best_k, op);
        if (c < 0) {
            code_decref(vm, x);
            code_decref(vm, k);
            break;
        }
        if (c) {
            code_setref(vm, &best, x);
            code_setref(vm, &best_k, k);
        } else {
            code_decref(vm, x);
            code_decref(vm, k);
        }
    }
    code_decref(vm, it);
    code_decref(vm, best_k);
    if (vm->exc) {
        code_decref(vm, best);
        return CV_NULL;
    }
    if (!best) {
        if (kw[1])
            return code_incref(kw[1]);
        return code_raise(vm, &code_exc_ValueError, "%s() arg is an empty sequence", fname);
    }
    return best;
}

cv code_bi_min(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    return minmax(vm, args, nargs, kwnames, CODE_CMP_LT, "min");
}

cv code_bi_max(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    return minmax(vm, args, nargs, kwnames, CODE_CMP_GT, "max");
}

cv code_bi_sorted(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    static const char *const names[] = { "key", "reverse", NULL };
    cv kw[2] = { CV_NULL, CV_NULL };
    if (nargs != 1)
        return code_raise(vm, &code_exc_TypeError, "sorted expected 1 argument, got %zu",
                          nargs);
    /* CPython checks the keywords in list.sort, hence "for sort()". */
    if (code_lib_kw(vm, "sort", args, nargs, kwnames, names, kw) < 0)
        return CV_NULL;
    int64_t rev = 0;
    if (kw[1] && code_as_i64(vm, kw[1], &rev) < 0)
        return CV_NULL;
    cv l = code_list_from(vm, args[0]);
    if (!l)
        return CV_NULL;
    cv key = kw[0] == CODE_NONE ? CV_NULL : kw[0];
    if (code_list_sort(vm, l, key, rev != 0) < 0) {
        code_decref(vm, l);
        return CV_NULL;
    }
    return l;
}

static cv allany(code_vm *vm, cv *args, size_t nargs, cv kwnames, bool any)
{
    if (exactly_one(vm, any ? "any" : "all", nargs, kwnames) < 0)
        return CV_NULL;
    cv it = code_iter(vm, args[0]);
    if (!it)
        return CV_NULL;
    cv x, r = code_bool(!any);
    while ((x = code_next(vm, it))) {
        int t = code_truth(vm, x);
        code_decref(vm, x);
        if (t < 0)
            break;
        if (t == any) {
            r = code_bool(any);
            break;
        }
    }
    code_decref(vm, it);
    return vm->exc ? CV_NULL : r;
}

cv code_bi_all(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    return allany(vm, args, nargs, kwnames, false);
}

cv code_bi_any(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    return allany(vm, args, nargs, kwnames, true);
}

cv code_bi_abs(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (exactly_one(vm, "abs", nargs, kwnames) < 0)
        return CV_NULL;
    if (cv_is(args[0], &code_type_dt_timedelta)) {   /* the one non-number with abs() */
        __int128 us = code_dt_delta_us(args[0]);
        return code_dt_delta_from_us(vm, us < 0 ? -us : us);
    }
    return code_num_abs(vm, args[0]);
}

cv code_bi_round(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    cv x, nd = CODE_NONE;
    if (code_args(vm, "round", args, nargs, kwnames, "number,|ndigits", &x, &nd) < 0)
        return CV_NULL;
    return code_num_round(vm, x, nd == CODE_NONE ? CV_NULL : nd);
}

cv code_bi_divmod(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "divmod", nargs, kwnames, 2, 2) < 0)
        return CV_NULL;
    if (cv_is(args[0], &code_type_dt_timedelta) && cv_is(args[1], &code_type_dt_timedelta)) {
        cv q = code_binop(vm, CODE_OP_FLOORDIV, args[0], args[1]);
        cv r = q ? code_binop(vm, CODE_OP_MOD, args[0], args[1]) : CV_NULL;
        cv t = r ? code_tuple_pack(vm, 2, q, r) : CV_NULL;
        code_decref(vm, q);
        code_decref(vm, r);
        return t;
    }
    return code_num_divmod(vm, args[0], args[1]);
}

cv code_bi_pow(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    cv b, e, m = CODE_NONE;
    if (code_args(vm, "pow", args, nargs, kwnames, "base,exp,|mod", &b, &e, &m) < 0)
        return CV_NULL;
    if (m == CODE_NONE)
        return code_binop(vm, CODE_OP_POW, b, e);
    return code_num_pow3(vm, b, e, m);
}
