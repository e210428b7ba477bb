/* The numeric builtins' cores: round, divmod, abs and three-argument pow,
 * with CPython's results (banker's rounding, correctly rounded decimal
 * rounding of floats) and messages. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code/code_num.h"

/* round(float) to an int: half to even. */
static cv round_float_to_int(code_vm *vm, double x)
{
    double r = round(x);
    if (fabs(x - r) == 0.5)
        r = 2.0 * round(x / 2.0);
    return code_int_from_double(vm, r);
}

/* round(int, -k), k > 0: to a multiple of 10^k, ties to even. */
static cv round_int(code_vm *vm, cv x, int64_t k)
{
    if ((uint64_t)k > code_int_bit_length(x) / 3 + 2)
        return cv_from_small(0);
    cv p = code_int_pow(vm, cv_from_small(10), cv_from_small(k));
    if (!p)
        return CV_NULL;
    cv r = CV_NULL, q = code_int_floordiv(vm, x, p, &r), res = CV_NULL;
    if (!q)
        goto out;
    cv r2 = code_int_binop(vm, CODE_OP_ADD, r, r);
    if (!r2)
        goto out;
    int c = code_int_cmp(r2, p);
    code_decref(vm, r2);
    code_intview qv;
    code_intview_of(&qv, q);
    if (c > 0 || (c == 0 && qv.n && (qv.d[0] & 1))) {
        cv q1 = code_int_binop(vm, CODE_OP_ADD, q, cv_from_small(1));
        if (!q1)
            goto out;
        code_setref(vm, &q, q1);
    }
    res = code_int_mul(vm, q, p);
out:
    code_decref(vm, p);
    code_decref(vm, q);
    code_decref(vm, r);
    return res;
}

/* round(x, -k) for a finite float and k > 0, on x's exact decimal digits:
 * a tie needs x to be an integer (k > 0), so trunc(x) decides the rest. */
static cv round_float_neg(code_vm *vm, double x, int64_t k)
{
    double ax = fabs(x), t = trunc(ax);
    char d[340], out[360];
    int L = snprintf(d, sizeof d, "%.0f", t);
    if (t == 0)
        L = 0;
    if (k > L)
        return code_float_new(vm, copysign(0.0, x));
    int keep = L - (int)k;
    bool up;
    if (d[keep] != '5')
        up = d[keep] > '5';
    else {
        bool rest = ax != t;
        for (int i = keep + 1; i < L && !rest; i++)
            rest = d[i] != '0';
        up = rest || (keep > 0 && ((d[keep - 1] - '0') & 1));
    }
    memcpy(out, d, (size_t)keep);
    int n = keep;
    if (up) {
        int i = n - 1;
        while (i >= 0 && out[i] == '9')
            out[i--] = '0';
        if (i >= 0)
            out[i]++;
        else {
            memmove(out + 1, out, (size_t)n);
            out[0] = '1';
            n++;
        }
    }
    if (n == 0)
        return code_float_new(vm, copysign(0.0, x));
    snprintf(out + n, sizeof out - (size_t)n, "e%lld", (long long)k);
    double r = strtod(out, NULL);
    if (isinf(r))
        return code_raise(vm, &code_exc_OverflowError, "rounded value too large to represent");
    return code_float_new(vm, copysign(r, x));
}

cv code_num_round(code_vm *vm, cv x, cv ndigits)
{
    bool has_nd = ndigits && ndigits != CODE_NONE;
    int64_t nd = 0;
    if (has_nd) {
        if (!code_is_int(ndigits))
            return code_raise(vm, &code_exc_TypeError,
                              "'%s' object cannot be interpreted as an integer",
                              code_type_name(ndigits));
        if (!code_int_to_i64(ndigits, &nd))
            nd = code_int_sign(ndigits) < 0 ? INT64_MIN / 2 : INT64_MAX / 2;
    }
    if (code_is_int(x)) {
        if (!has_nd || nd >= 0)
            return cv_is(x, &code_type_bool) ? cv_from_small(x == CODE_TRUE) : code_incref(x);
        return round_int(vm, x, -nd);
    }
    if (!code_is_float(x))
        return code_raise(vm, &code_exc_TypeError, "type %s doesn't define __round__ method",
                          code_type_name(x));
    double d = code_float_val(x);
    if (!has_nd)
        return round_float_to_int(vm, d);
    if (!isfinite(d) || d == 0 || nd > 323)
        return code_incref(x);
    if (nd < -308)
        return code_float_new(vm, copysign(0.0, d));
    if (nd < 0)
        return round_float_neg(vm, d, -nd);
    /* glibc prints the exact binary value rounded half-even: correct
     * decimal rounding, as CPython's dtoa-based round */
    char buf[720];
    snprintf(buf, sizeof buf, "%.*f", (int)nd, d);
    return code_float_new(vm, copysign(strtod(buf, NULL), d));
}

cv code_num_divmod(code_vm *vm, cv a, cv b)
{
    if (code_is_int(a) && code_is_int(b)) {
        cv r = CV_NULL, q = code_int_floordiv(vm, a, b, &r);
        if (!q)
            return CV_NULL;
        cv t = code_tuple_pack(vm, 2, q, r);
        code_decref(vm, q);
        code_decref(vm, r);
        return t;
    }
    if ((code_is_int(a) || code_is_float(a)) && (code_is_int(b) || code_is_float(b))) {
        double x, y, q, m;
        if (code_as_double(vm, a, &x) || code_as_double(vm, b, &y) ||
            code_float_divmod(vm, x, y, &q, &m, "float divmod()"))
            return CV_NULL;
        cv qv = code_float_new(vm, q), mv = qv ? code_float_new(vm, m) : CV_NULL;
        cv t = mv ? code_tuple_pack(vm, 2, qv, mv) : CV_NULL;
        code_decref(vm, qv);
        code_decref(vm, mv);
        return t;
    }
    return code_raise(vm, &code_exc_TypeError,
                      "unsupported operand type(s) for divmod(): '%s' and '%s'",
                      code_type_name(a), code_type_name(b));
}

cv code_num_abs(code_vm *vm, cv x)
{
    if (code_is_int(x))
        return code_int_sign(x) < 0 ? code_int_neg(vm, x)
               : cv_is(x, &code_type_bool) ? cv_from_small(x == CODE_TRUE)
                                           : code_incref(x);
    if (code_is_float(x))
        return code_float_new(vm, fabs(code_float_val(x)));
    return code_raise(vm, &code_exc_TypeError, "bad operand type for abs(): '%s'",
                      code_type_name(x));
}

/* a mod m for m > 0, as a new reference. */
static cv mod_pos(code_vm *vm, cv a, cv m)
{
    cv r = CV_NULL, q = code_int_floordiv(vm, a, m, &r);
    if (!q)
        return CV_NULL;
    code_decref(vm, q);
    return r;
}

/* The inverse of a modulo m > 0 (extended Euclid), or ValueError. */
static cv mod_inverse(code_vm *vm, cv a, cv m)
{
    cv r0 = mod_pos(vm, a, m), r1 = code_incref(m);
    cv s0 = cv_from_small(1), s1 = cv_from_small(0), res = CV_NULL;
    if (!r0)
        goto out;
    while (code_int_sign(r1) != 0) {
        cv rem = CV_NULL, q = code_int_floordiv(vm, r0, r1, &rem);
        if (!q)
            goto out;
        cv qs = code_int_mul(vm, q, s1);
        code_decref(vm, q);
        cv s2 = qs ? code_int_binop(vm, CODE_OP_SUB, s0, qs) : CV_NULL;
        code_decref(vm, qs);
        if (!s2) {
            code_decref(vm, rem);
            goto out;
        }
        code_setref(vm, &r0, r1);
        r1 = rem;
        code_setref(vm, &s0, s1);
        s1 = s2;
    }
    if (code_int_cmp(r0, cv_from_small(1)) != 0) {
        code_raise(vm, &code_exc_ValueError, "base is not invertible for the given modulus");
        goto out;
    }
    res = mod_pos(vm, s0, m);
out:
    code_decref(vm, r0);
    code_decref(vm, r1);
    code_decref(vm, s0);
    code_decref(vm, s1);
    return res;
}

cv code_num_pow3(code_vm *vm, cv base, cv exp, cv mod)
{
    if (!mod || mod == CODE_NONE)
        return code_binop(vm, CODE_OP_POW, base, exp);
    if (!code_is_int(base) || !code_is_int(exp) || !code_is_int(mod))
        return code_raise(vm, &code_exc_TypeError,
                          "pow() 3rd argument not allowed unless all arguments are integers");
    int ms = code_int_sign(mod);
    if (ms == 0)
        return code_raise(vm, &code_exc_ValueError, "pow() 3rd argument cannot be 0");
    cv m = ms < 0 ? code_int_neg(vm, mod)
           : cv_is(mod, &code_type_bool) ? cv_from_small(1) : code_incref(mod);
    cv b = CV_NULL, e = CV_NULL, result = CV_NULL;
    if (!m)
        return CV_NULL;
    if (code_int_sign(exp) < 0) {
        b = mod_inverse(vm, base, m);
        e = b ? code_int_neg(vm, exp) : CV_NULL;
    } else {
        b = mod_pos(vm, base, m);
        e = code_incref(exp);
    }
    if (!b || !e)
        goto out;
    result = cv_from_small(1);
    code_intview ev;
    code_intview_of(&ev, e);
    for (uint64_t bit = code_mag_bits(ev.d, ev.n); bit-- > 0;) {
        cv t = code_int_mul(vm, result, result);
        code_setref(vm, &result, t ? mod_pos(vm, t, m) : CV_NULL);
        code_decref(vm, t);
        if (result && ((ev.d[bit / 32] >> (bit % 32)) & 1)) {
            t = code_int_mul(vm, result, b);
            code_setref(vm, &result, t ? mod_pos(vm, t, m) : CV_NULL);
            code_decref(vm, t);
        }
        if (!result)
            goto out;
    }
    /* an exponent of 0 leaves 1, which modulo 1 is 0 */
    code_setref(vm, &result, mod_pos(vm, result, m));
    if (result && ms < 0 && code_int_sign(result) != 0)
        code_setref(vm, &result, code_int_binop(vm, CODE_OP_SUB, result, m));
out:
    code_decref(vm, m);
    code_decref(vm, b);
    code_decref(vm, e);
    return result;
}
