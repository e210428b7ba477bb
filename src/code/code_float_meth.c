/* float's methods that convert: hex, fromhex, as_integer_ratio (CPython's
 * algorithms, so the strings and ratios are the same). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code/code_num.h"

cv code_float_method_hex(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "hex", nargs, kwnames, 1, 1))
        return CV_NULL;
    double x = code_float_val(args[0]);
    char s[64];
    if (!isfinite(x))
        return code_float_repr(vm, x);
    if (x == 0)
        return code_str_from_cstr(vm, signbit(x) ? "-0x0.0p+0" : "0x0.0p+0");
    int e;
    double m = frexp(fabs(x), &e);
    int shift = 1 - (DBL_MIN_EXP - e > 0 ? DBL_MIN_EXP - e : 0);
    m = ldexp(m, shift);
    e -= shift;
    const char *hexd = "0123456789abcdef";
    size_t si = 0;
    s[si++] = hexd[(int)m];
    m -= (int)m;
    s[si++] = '.';
    for (int i = 0; i < (DBL_MANT_DIG - 1) / 4 + 1 - 1; i++) {
        m *= 16.0;
        s[si++] = hexd[(int)m];
        m -= (int)m;
    }
    s[si] = 0;
    return code_str_fmt(vm, "%s0x%sp%c%d", x < 0 ? "-" : "", s, e < 0 ? '-' : '+', abs(e));
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = (char)(c | 0x20);
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* float.fromhex(s) or x.fromhex(s): the class or an instance comes first
 * when called as a method; the string is the last positional argument. */
cv code_float_method_fromhex(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "fromhex", nargs, kwnames, 1, 2))
        return CV_NULL;
    cv sv = args[nargs - 1];
    if (!cv_is(sv, &code_type_str))
        return code_raise(vm, &code_exc_TypeError, "fromhex() argument must be str, not %s",
                          code_type_name(sv));
    size_t lo, hi;
    code_num_strip(code_str_cstr(sv), code_str_len(sv), &lo, &hi);
    const char *s = code_str_cstr(sv) + lo;
    size_t n = hi - lo, i = 0;
    bool neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-'))
        neg = s[i++] == '-';
    const char *rest = s + i;
    size_t rn = n - i;
    double r;
    if (rn == 3 && !strncasecmp(rest, "inf", 3))
        r = INFINITY;
    else if (rn == 8 && !strncasecmp(rest, "infinity", 8))
        r = INFINITY;
    else if (rn == 3 && !strncasecmp(rest, "nan", 3))
        r = NAN;
    else {
        if (rn >= 2 && rest[0] == '0' && (rest[1] | 0x20) == 'x')
            i += 2;
        char buf[64];
        size_t o = 0, nd = 0;
        /* keep at most 40 significant hex digits, counting the rest into the
         * exponent, with a sticky digit so rounding is right */
        long exp_adj = 0;
        bool sticky = false, dot = false, any = false;
        buf[o++] = '0';
        buf[o++] = 'x';
        for (; i < n; i++) {
            if (s[i] == '.' && !dot) {
                dot = true;
                continue;
            }
            int v = hexval(s[i]);
            if (v < 0)
                break;
            any = true;
            if (nd == 0 && v == 0) {
                if (dot)
                    exp_adj -= 4;
                continue;
            }
            if (nd < 40) {
                buf[o++] = s[i];
                nd++;
                if (dot)
                    exp_adj -= 4;
            } else {
                sticky |= v != 0;
                if (!dot)
                    exp_adj += 4;
            }
        }
        if (!any)
            goto bad;
        if (sticky)
            buf[o++] = '1', exp_adj -= 4;
        if (nd == 0)
            buf[o++] = '0';
        long e = 0;
        if (i < n && (s[i] | 0x20) == 'p') {
            i++;
            bool eneg = false;
            if (i < n && (s[i] == '+' || s[i] == '-'))
                eneg = s[i++] == '-';
            size_t start = i;
            while (i < n && s[i] >= '0' && s[i] <= '9') {
                if (e < 100000000)
                    e = e * 10 + (s[i] - '0');
                i++;
            }
            if (i == start)
                goto bad;
            if (eneg)
                e = -e;
        }
        e += exp_adj;
        if (e > 100000000)
            e = 100000000;
        if (e < -100000000)
            e = -100000000;
        snprintf(buf + o, sizeof buf - o, "p%ld", e);
        r = strtod(buf, NULL);
        /* CPython finds the overflow before trailing garbage */
        if (isinf(r))
            return code_raise(vm, &code_exc_OverflowError,
                              "hexadecimal value too large to represent as a float");
        if (i != n)
            goto bad;
    }
    return code_float_new(vm, neg ? -r : r);
bad:
    return code_raise(vm, &code_exc_ValueError, "invalid hexadecimal floating-point string");
}

cv code_float_method_as_integer_ratio(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "as_integer_ratio", nargs, kwnames, 1, 1))
        return CV_NULL;
    double x = code_float_val(args[0]);
    if (isinf(x))
        return code_raise(vm, &code_exc_OverflowError, "cannot convert Infinity to integer ratio");
    if (isnan(x))
        return code_raise(vm, &code_exc_ValueError, "cannot convert NaN to integer ratio");
    int e;
    double fp = frexp(x, &e);
    for (int i = 0; i < 300 && fp != floor(fp); i++) {
        fp *= 2.0;
        e--;
    }
    cv num = code_int_from_double(vm, fp), den = cv_from_small(1), t;
    if (!num)
        return CV_NULL;
    if (e > 0) {
        t = code_int_binop(vm, CODE_OP_LSHIFT, num, cv_from_small(e));
        code_decref(vm, num);
        num = t;
    } else {
        den = code_int_binop(vm, CODE_OP_LSHIFT, den, cv_from_small(-e));
    }
    if (!num || !den) {
        code_decref(vm, num);
        code_decref(vm, den);
        return CV_NULL;
    }
    cv r = code_tuple_pack(vm, 2, num, den);
    code_decref(vm, num);
    code_decref(vm, den);
    return r;
}
