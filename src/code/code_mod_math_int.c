/* The math module's integer functions (gcd, lcm, factorial, comb, perm,
 * isqrt) and its folds (prod, fsum). Products of ranges are split in halves
 * so the big multiplications are balanced (Karatsuba then pays), and their
 * size is checked against the run's memory before any work. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "code/code_mod_math.h"

static int need_int(code_vm *vm, cv v)
{
    if (code_is_int(v))
        return 0;
    return code_raise_i(vm, &code_exc_TypeError, "'%s' object cannot be interpreted as an integer",
                        code_type_name(v));
}

static cv abs_int(code_vm *vm, cv v)
{
    if (code_int_sign(v) < 0)
        return code_int_neg(vm, v);
    return cv_is(v, &code_type_bool) ? cv_from_small(v == CODE_TRUE) : code_incref(v);
}

static cv gcd2(code_vm *vm, cv a, cv b)
{
    if (cv_is_small(a) && cv_is_small(b)) {
        int64_t x = llabs(cv_small(a)), y = llabs(cv_small(b));
        while (y) {
            int64_t t = x % y;
            x = y;
            y = t;
        }
        return cv_from_small(x);
    }
    cv x = abs_int(vm, a), y = x ? abs_int(vm, b) : CV_NULL;
    while (x && y && code_int_sign(y) != 0) {
        cv r = CV_NULL, q = code_int_floordiv(vm, x, y, &r);
        code_decref(vm, q);
        code_setref(vm, &x, y);
        y = q ? r : CV_NULL;
    }
    if (!y) {
        code_decref(vm, x);
        return CV_NULL;
    }
    code_decref(vm, y);
    return x;
}

cv code_math_gcd(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (kwnames && ((code_tuple *)cv_obj(kwnames))->n)
        return code_raise(vm, &code_exc_TypeError, "gcd() takes no keyword arguments");
    cv g = cv_from_small(0);
    for (size_t i = 0; i < nargs; i++) {
        if (need_int(vm, args[i])) {
            code_decref(vm, g);
            return CV_NULL;
        }
        cv t = gcd2(vm, g, args[i]);
        code_decref(vm, g);
        if (!(g = t))
            return CV_NULL;
    }
    return g;
}

cv code_math_lcm(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (kwnames && ((code_tuple *)cv_obj(kwnames))->n)
        return code_raise(vm, &code_exc_TypeError, "lcm() takes no keyword arguments");
    cv l = cv_from_small(1);
    for (size_t i = 0; i < nargs; i++) {
        if (need_int(vm, args[i]))
            goto fail;
        if (code_int_sign(args[i]) == 0 || code_int_sign(l) == 0) {
            code_setref(vm, &l, cv_from_small(0));
            continue;
        }
        cv g = gcd2(vm, l, args[i]);
        cv q = g ? code_int_floordiv(vm, l, g, NULL) : CV_NULL;
        code_decref(vm, g);
        cv p = q ? code_int_mul(vm, q, args[i]) : CV_NULL;
        code_decref(vm, q);
        cv a = p ? abs_int(vm, p) : CV_NULL;
        code_decref(vm, p);
        code_setref(vm, &l, a);
        if (!l)
            return CV_NULL;
    }
    return l;
fail:
    code_decref(vm, l);
    return CV_NULL;
}

/* lo * (lo + 1) * ... * (hi - 1), lo < hi. */
static cv range_prod(code_vm *vm, uint64_t lo, uint64_t hi)
{
    if (hi - lo <= 8) {
        cv r = cv_from_small(1);
        for (uint64_t i = lo; i < hi && r; i++) {
            cv f = code_int_from_u64(vm, i);
            cv t = f ? code_int_mul(vm, r, f) : CV_NULL;
            code_decref(vm, f);
            code_setref(vm, &r, t);
        }
        return r;
    }
    if (code_guard_enter(vm, "range product"))
        return CV_NULL;
    uint64_t mid = lo + (hi - lo) / 2;
    cv a = range_prod(vm, lo, mid), b = a ? range_prod(vm, mid, hi) : CV_NULL;
    cv r = b ? code_int_mul(vm, a, b) : CV_NULL;
    code_decref(vm, a);
    code_decref(vm, b);
    code_guard_leave(vm);
    return r;
}

/* Bits of lo * ... * (hi - 1) at most: the memory check before the work. */
static int check_range_prod(code_vm *vm, uint64_t lo, uint64_t hi)
{
    if (hi <= lo)
        return 0;
    double bits = 0;
    /* sum of log2 over the range by the integral, plus one per factor */
    double a = (double)(lo ? lo : 1), b = (double)hi;
    bits = (b * log2(b) - a * log2(a)) - (b - a) / M_LN2 + (double)(hi - lo) + 64;
    return code_int_check_size(vm, bits > 1e18 ? UINT64_MAX : (uint64_t)(bits / 32) + 1);
}

/* factorial's argument: past int64 it could not fit any memory anyway. */
static int factorial_arg(code_vm *vm, cv v, uint64_t *out)
{
    int64_t i = 0;
    if (need_int(vm, v))
        return -1;
    if (code_int_sign(v) < 0) {
        code_raise(vm, &code_exc_ValueError, "factorial() not defined for negative values");
        return -1;
    }
    if (!code_int_to_i64(v, &i)) {
        code_raise(vm, &code_exc_OverflowError,
                   "factorial() argument should not exceed 9223372036854775807");
        return -1;
    }
    *out = (uint64_t)i;
    return 0;
}

cv code_math_factorial(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if ((kwnames && ((code_tuple *)cv_obj(kwnames))->n) || nargs != 1)
        return code_raise(vm, &code_exc_TypeError,
                          "math.factorial() takes exactly one argument (%zu given)", nargs);
    uint64_t n = 0;
    if (factorial_arg(vm, args[0], &n))
        return CV_NULL;
    if (n < 2)
        return cv_from_small(1);
    if (check_range_prod(vm, 2, n + 1))
        return CV_NULL;
    return range_prod(vm, 2, n + 1);
}

/* n and k for comb and perm, CPython's checks in its order: both ints, then
 * signs. 1 when k > n (the answer is 0). */
static int nk_check(code_vm *vm, cv n, cv k)
{
    if (need_int(vm, n) || need_int(vm, k))
        return -1;
    if (code_int_sign(n) < 0)
        return code_raise_i(vm, &code_exc_ValueError, "n must be a non-negative integer");
    if (code_int_sign(k) < 0)
        return code_raise_i(vm, &code_exc_ValueError, "k must be a non-negative integer");
    return code_int_cmp(k, n) > 0;
}

/* n * (n - 1) * ... * (n - k + 1), divided step by step by 1..k for comb:
 * for an n beyond int64. */
static cv falling(code_vm *vm, cv n, int64_t k, bool comb)
{
    if (code_int_check_size(vm, (code_int_bit_length(n) * (uint64_t)k) / 32 + 2))
        return CV_NULL;
    cv r = cv_from_small(1);
    for (int64_t i = 0; i < k && r; i++) {
        /* As prod: the time limit inside the loop. */
        if ((i & 255) == 255 && code_check_time_only(vm)) {
            code_setref(vm, &r, CV_NULL);
            break;
        }
        cv f = code_int_binop(vm, CODE_OP_SUB, n, cv_from_small(i));
        cv t = f ? code_int_mul(vm, r, f) : CV_NULL;
        code_decref(vm, f);
        if (t && comb) {
            cv q = code_int_floordiv(vm, t, cv_from_small(i + 1), NULL);
            code_decref(vm, t);
            t = q;
        }
        code_setref(vm, &r, t);
    }
    return r;
}

cv code_math_perm(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    cv nv = CV_NULL, kv = CV_NULL;
    if (code_args(vm, "perm", args, nargs, kwnames, "n,|k,/", &nv, &kv))
        return CV_NULL;
    if (!kv || kv == CODE_NONE) {
        if (need_int(vm, nv))
            return CV_NULL;
        return code_math_factorial(vm, &nv, 1, CV_NULL);
    }
    int c = nk_check(vm, nv, kv);
    if (c)
        return c < 0 ? CV_NULL : cv_from_small(0);
    int64_t n, k;
    if (!code_int_to_i64(kv, &k))
        return code_raise(vm, &code_exc_OverflowError, "k must not exceed 9223372036854775807");
    if (k == 0)
        return cv_from_small(1);
    if (!code_int_to_i64(nv, &n))
        return falling(vm, nv, k, false);
    if (check_range_prod(vm, (uint64_t)(n - k + 1), (uint64_t)n + 1))
        return CV_NULL;
    return range_prod(vm, (uint64_t)(n - k + 1), (uint64_t)n + 1);
}

cv code_math_comb(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    cv nv = CV_NULL, kv = CV_NULL;
    if (code_args(vm, "comb", args, nargs, kwnames, "n,k,/", &nv, &kv))
        return CV_NULL;
    int c = nk_check(vm, nv, kv);
    if (c)
        return c < 0 ? CV_NULL : cv_from_small(0);
    int64_t n, k;
    cv nk = code_int_binop(vm, CODE_OP_SUB, nv, kv);   /* k = min(k, n - k) */
    if (!nk)
        return CV_NULL;
    bool ok = code_int_to_i64(code_int_cmp(nk, kv) < 0 ? nk : kv, &k);
    code_decref(vm, nk);
    if (!ok)
        return code_raise(vm, &code_exc_OverflowError,
                          "min(n - k, k) must not exceed 9223372036854775807");
    if (k == 0)
        return cv_from_small(1);
    if (!code_int_to_i64(nv, &n))
        return falling(vm, nv, k, true);
    uint64_t un = (uint64_t)n, uk = (uint64_t)k;
    if (check_range_prod(vm, un - uk + 1, un + 1))
        return CV_NULL;
    if (uk < 64) {
        /* r = r * (n - k + i) / i stays an integer at every step */
        cv r = cv_from_small(1);
        for (uint64_t i = 1; i <= uk && r; i++) {
            cv f = code_int_from_u64(vm, un - uk + i);
            cv t = f ? code_int_mul(vm, r, f) : CV_NULL;
            code_decref(vm, f);
            code_setref(vm, &r, t ? code_int_floordiv(vm, t, cv_from_small((int64_t)i), NULL)
                                  : CV_NULL);
            code_decref(vm, t);
        }
        return r;
    }
    cv p = range_prod(vm, un - uk + 1, un + 1), f = p ? range_prod(vm, 1, uk + 1) : CV_NULL;
    cv r = f ? code_int_floordiv(vm, p, f, NULL) : CV_NULL;
    code_decref(vm, p);
    code_decref(vm, f);
    return r;
}

cv code_math_isqrt(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if ((kwnames && ((code_tuple *)cv_obj(kwnames))->n) || nargs != 1)
        return code_raise(vm, &code_exc_TypeError,
                          "math.isqrt() takes exactly one argument (%zu given)", nargs);
    cv nv = args[0];
    if (need_int(vm, nv))
        return CV_NULL;
    if (code_int_sign(nv) < 0)
        return code_raise(vm, &code_exc_ValueError, "isqrt() argument must be nonnegative");
    int64_t small;
    if (code_int_to_i64(nv, &small)) {
        uint64_t u = (uint64_t)small, x = (uint64_t)sqrt((double)u);
        while (x > 0 && (unsigned __int128)x * x > u)
            x--;
        while ((unsigned __int128)(x + 1) * (x + 1) <= u)
            x++;
        return code_int_from_u64(vm, x);
    }
    /* CPython's algorithm: the root's top bits first, their count doubling
     * at each step, so the divisions are small until the last one.
     * Invariant: (a - 1)^2 < (n >> 2(c - d)) < (a + 1)^2 */
    uint64_t c = (code_int_bit_length(nv) - 1) / 2, d = 0;
    cv a = cv_from_small(1);
    for (int sh = 63 - __builtin_clzll(c); sh >= 0 && a; sh--) {
        uint64_t e = d;
        d = c >> sh;
        cv x = code_int_binop(vm, CODE_OP_LSHIFT, a, cv_from_small((int64_t)(d - e - 1)));
        cv y = x ? code_int_binop(vm, CODE_OP_RSHIFT, nv,
                                  cv_from_small((int64_t)(2 * c - e - d + 1)))
                 : CV_NULL;
        cv q = y ? code_int_floordiv(vm, y, a, NULL) : CV_NULL;
        code_setref(vm, &a, q ? code_int_binop(vm, CODE_OP_ADD, x, q) : CV_NULL);
        code_decref(vm, x);
        code_decref(vm, y);
        code_decref(vm, q);
    }
    cv sq = a ? code_int_mul(vm, a, a) : CV_NULL;
    if (sq && code_int_cmp(sq, nv) > 0)
        code_setref(vm, &a, code_int_binop(vm, CODE_OP_SUB, a, cv_from_small(1)));
    if (!sq)
        code_setref(vm, &a, CV_NULL);
    code_decref(vm, sq);
    return a;
}

cv code_math_prod(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    cv it = CV_NULL, start = CV_NULL;
    if (code_args(vm, "prod", args, nargs, kwnames, "iterable,/,*,|start", &it, &start))
        return CV_NULL;
    cv acc = start ? code_incref(start) : cv_from_small(1);
    cv iter = code_iter(vm, it);
    if (!iter) {
        code_decref(vm, acc);
        return CV_NULL;
    }
    cv x;
    unsigned n = 0;
    while ((x = code_next(vm, iter))) {
        cv t = code_binop(vm, CODE_OP_MUL, acc, x);
        code_decref(vm, x);
        code_setref(vm, &acc, t);
        /* A product of big ints grows each step: the time limit is read
         * every 256 of them, not only by the evaluator around the call. */
        if (!acc || ((++n & 255) == 0 && code_check_time_only(vm))) {
            code_setref(vm, &acc, CV_NULL);
            break;
        }
    }
    code_decref(vm, iter);
    if (vm->exc) {
        code_decref(vm, acc);
        return CV_NULL;
    }
    return acc;
}

/* Shewchuk's exact summation with CPython's final half-even correction
 * (math_fsum in mathmodule.c). */
cv code_math_fsum(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_math_nargs(vm, "fsum", nargs, kwnames, 1))
        return CV_NULL;
    cv iter = code_iter(vm, args[0]);
    if (!iter)
        return CV_NULL;
    double ps[32], *p = ps, special_sum = 0.0, inf_sum = 0.0, x, y, t, hi, yr, lo = 0;
    size_t n = 0, m = 32;
    cv item, result = CV_NULL;
    while ((item = code_next(vm, iter))) {
        int rc = code_as_double(vm, item, &x);
        code_decref(vm, item);
        if (rc)
            goto out;
        double xsave = x;
        size_t i = 0;
        for (size_t j = 0; j < n; j++) {
            y = p[j];
            if (fabs(x) < fabs(y)) {
                t = x;
                x = y;
                y = t;
            }
            hi = x + y;
            yr = hi - x;
            lo = y - yr;
            if (lo != 0.0)
                p[i++] = lo;
            x = hi;
        }
        n = i;
        if (x != 0.0) {
            if (!isfinite(x)) {
                if (isfinite(xsave)) {
                    code_raise(vm, &code_exc_OverflowError, "intermediate overflow in fsum");
                    goto out;
                }
                if (isinf(xsave))
                    inf_sum += xsave;
                special_sum += xsave;
                n = 0;
            } else {
                if (n >= m) {
                    double *np = code_heap_alloc(vm, 2 * m * sizeof *np);
                    if (!np)
                        goto out;
                    memcpy(np, p, n * sizeof *np);
                    if (p != ps)
                        code_heap_free(vm, p, m * sizeof *p);
                    p = np;
                    m *= 2;
                }
                p[n++] = x;
            }
        }
    }
    if (vm->exc)
        goto out;
    if (special_sum != 0.0) {
        if (isnan(inf_sum))
            code_raise(vm, &code_exc_ValueError, "-inf + inf in fsum");
        else
            result = code_float_new(vm, special_sum);
        goto out;
    }
    hi = 0.0;
    if (n > 0) {
        hi = p[--n];
        while (n > 0) {
            x = hi;
            y = p[--n];
            hi = x + y;
            yr = hi - x;
            lo = y - yr;
            if (lo != 0.0)
                break;
        }
        if (n > 0 && ((lo < 0.0 && p[n - 1] < 0.0) || (lo > 0.0 && p[n - 1] > 0.0))) {
            y = lo * 2.0;
            x = hi + y;
            yr = x - hi;
            if (y == yr)
                hi = x;
        }
    }
    result = code_float_new(vm, hi);
out:
    if (p != ps)
        code_heap_free(vm, p, m * sizeof *p);
    code_decref(vm, iter);
    return result;
}
