/* The math module: CPython's functions over doubles with its error rules
 * (a nan from a non-nan argument is "math domain error", an infinity from a
 * finite one "math range error" where overflow is possible, else a domain
 * error), integer-valued floor/ceil/trunc, logarithms exact for huge ints.
 * The integer functions (gcd, factorial, comb...) are in code_mod_math_int.c. */
#include <math.h>
#include <string.h>

#include "code/code_mod_math.h"

cv code_math_float1(code_vm *vm, const char *name, cv *args, size_t nargs, cv kwnames,
                    double (*fn)(double), bool can_overflow)
{
    double x;
    if ((kwnames && ((code_tuple *)cv_obj(kwnames))->n) || nargs != 1)
        return code_raise(vm, &code_exc_TypeError,
                          "math.%s() takes exactly one argument (%zu given)", name, nargs);
    if (code_as_double(vm, args[0], &x))
        return CV_NULL;
    double r = fn(x);
    if (isnan(r) && !isnan(x))
        return code_raise(vm, &code_exc_ValueError, "math domain error");
    if (isinf(r) && isfinite(x))
        return can_overflow ? code_raise(vm, &code_exc_OverflowError, "math range error")
                            : code_raise(vm, &code_exc_ValueError, "math domain error");
    return code_float_new(vm, r);
}

int code_math_nargs(code_vm *vm, const char *name, size_t nargs, cv kwnames, size_t n)
{
    if (kwnames && ((code_tuple *)cv_obj(kwnames))->n)
        return code_raise_i(vm, &code_exc_TypeError, "%s() takes no keyword arguments", name);
    if (nargs != n)
        return code_raise_i(vm, &code_exc_TypeError, "%s expected %zu arguments, got %zu", name,
                            n, nargs);
    return 0;
}

static double d_degrees(double x) { return x * (180.0 / M_PI); }
static double d_radians(double x) { return x * (M_PI / 180.0); }

#define MATH1(name, fn, ovf)                                                        \
    static cv m_##name(code_vm *vm, cv *args, size_t nargs, cv kwnames)             \
    {                                                                               \
        return code_math_float1(vm, #name, args, nargs, kwnames, fn, ovf);           \
    }
MATH1(sqrt, sqrt, false)
MATH1(exp, exp, true)
MATH1(exp2, exp2, true)
MATH1(expm1, expm1, true)
MATH1(log1p, log1p, false)
MATH1(sin, sin, false)
MATH1(cos, cos, false)
MATH1(tan, tan, false)
MATH1(asin, asin, false)
MATH1(acos, acos, false)
MATH1(atan, atan, false)
MATH1(sinh, sinh, true)
MATH1(cosh, cosh, true)
MATH1(tanh, tanh, false)
MATH1(asinh, asinh, false)
MATH1(acosh, acosh, false)
MATH1(atanh, atanh, false)
MATH1(erf, erf, false)
MATH1(erfc, erfc, false)
MATH1(cbrt, cbrt, false)
MATH1(fabs, fabs, false)
MATH1(degrees, d_degrees, true)
MATH1(radians, d_radians, false)

/* log of an int or float by fn, ints of any size: beyond a double's range
 * the top 64 bits and a power of two. */
static int log_of(code_vm *vm, cv x, double (*fn)(double), double *out)
{
    if (code_is_int(x)) {
        if (code_int_sign(x) <= 0)
            return code_raise_i(vm, &code_exc_ValueError, "math domain error");
        /* as CPython: the double when it converts, else frexp's mantissa
         * (rounded with a sticky bit) and a power of two */
        double d;
        if (!code_int_to_double(vm, x, &d)) {
            *out = fn(d);
            return 0;
        }
        code_exc_clear(vm);
        uint64_t bits = code_int_bit_length(x), sh = bits - 64, top = 0;
        code_intview v;
        code_intview_of(&v, x);
        for (int k = 0; k < 64; k++) {
            uint64_t bit = sh + (uint64_t)k;
            top |= (uint64_t)((v.d[bit / 32] >> (bit % 32)) & 1) << k;
        }
        bool sticky = false;
        for (uint64_t i = 0; i < sh / 32 && !sticky; i++)
            sticky = v.d[i] != 0;
        if (!sticky && sh % 32)
            sticky = (v.d[sh / 32] & ((1u << (sh % 32)) - 1)) != 0;
        double m = ldexp((double)(top | sticky), -64);   /* in [0.5, 1] */
        *out = fn(m) + fn(2.0) * (double)bits;
        return 0;
    }
    double d;
    if (code_as_double(vm, x, &d))
        return -1;
    if (isnan(d)) {
        *out = d;
        return 0;
    }
    if (d <= 0)
        return code_raise_i(vm, &code_exc_ValueError, "math domain error");
    *out = fn(d);
    return 0;
}

static cv m_log(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if ((kwnames && ((code_tuple *)cv_obj(kwnames))->n) || nargs < 1 || nargs > 2)
        return code_raise(vm, &code_exc_TypeError, "math.log requires 1 to 2 arguments");
    double num, den;
    if (log_of(vm, args[0], log, &num))
        return CV_NULL;
    if (nargs == 2) {
        if (log_of(vm, args[1], log, &den))
            return CV_NULL;
        if (den == 0)
            return code_raise(vm, &code_exc_ZeroDivisionError, "float division by zero");
        num /= den;
    }
    return code_float_new(vm, num);
}

static cv log_1(code_vm *vm, const char *name, cv *args, size_t nargs, cv kwnames,
                double (*fn)(double))
{
    double r;
    if ((kwnames && ((code_tuple *)cv_obj(kwnames))->n) || nargs != 1)
        return code_raise(vm, &code_exc_TypeError,
                          "math.%s() takes exactly one argument (%zu given)", name, nargs);
    if (log_of(vm, args[0], fn, &r))
        return CV_NULL;
    return code_float_new(vm, r);
}

static cv m_log2(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    return log_1(vm, "log2", args, nargs, kwnames, log2);
}

static cv m_log10(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    return log_1(vm, "log10", args, nargs, kwnames, log10);
}

/* floor, ceil: ints stay, floats become ints. */
static cv round_to_int(code_vm *vm, const char *name, cv *args, size_t nargs, cv kwnames,
                       double (*fn)(double))
{
    if ((kwnames && ((code_tuple *)cv_obj(kwnames))->n) || nargs != 1)
        return code_raise(vm, &code_exc_TypeError,
                          "math.%s() takes exactly one argument (%zu given)", name, nargs);
    cv x = args[0];
    if (code_is_int(x))
        return cv_is(x, &code_type_bool) ? cv_from_small(x == CODE_TRUE) : code_incref(x);
    double d;
    if (!code_is_float(x) && !strcmp(name, "trunc"))
        return code_raise(vm, &code_exc_TypeError, "type %s doesn't define __trunc__ method",
                          code_type_name(x));
    if (code_as_double(vm, x, &d))
        return CV_NULL;
    return code_int_from_double(vm, fn(d));
}

static cv m_floor(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    return round_to_int(vm, "floor", args, nargs, kwnames, floor);
}

static cv m_ceil(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    return round_to_int(vm, "ceil", args, nargs, kwnames, ceil);
}

static cv m_trunc(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    return round_to_int(vm, "trunc", args, nargs, kwnames, trunc);
}

/* Two doubles from args, for the two-argument functions. */
static int two_doubles(code_vm *vm, const char *name, cv *args, size_t nargs, cv kwnames,
                       double *x, double *y)
{
    if (code_math_nargs(vm, name, nargs, kwnames, 2) || code_as_double(vm, args[0], x) ||
        code_as_double(vm, args[1], y))
        return -1;
    return 0;
}

static cv m_pow(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    double x, y, r;
    if (two_doubles(vm, "pow", args, nargs, kwnames, &x, &y))
        return CV_NULL;
    if (!isfinite(x) || !isfinite(y)) {
        if (isnan(x))
            r = y == 0.0 ? 1.0 : x;
        else if (isnan(y))
            r = x == 1.0 ? 1.0 : y;
        else if (isinf(x)) {
            bool odd_y = isfinite(y) && fmod(fabs(y), 2.0) == 1.0;
            r = y > 0. ? (odd_y ? x : fabs(x)) : y == 0. ? 1. : (odd_y ? copysign(0., x) : 0.);
        } else {
            r = fabs(x) == 1.0 ? 1. : (y > 0. && fabs(x) > 1.0) ? y
                : (y < 0. && fabs(x) < 1.0) ? -y : 0.;
        }
        return code_float_new(vm, r);
    }
    r = pow(x, y);
    if (isnan(r) || (isinf(r) && x == 0.))
        return code_raise(vm, &code_exc_ValueError, "math domain error");
    if (isinf(r))
        return code_raise(vm, &code_exc_OverflowError, "math range error");
    return code_float_new(vm, r);
}

static cv m_atan2(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    double y, x;
    if (two_doubles(vm, "atan2", args, nargs, kwnames, &y, &x))
        return CV_NULL;
    return code_float_new(vm, atan2(y, x));
}

static cv m_copysign(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    double x, y;
    if (two_doubles(vm, "copysign", args, nargs, kwnames, &x, &y))
        return CV_NULL;
    return code_float_new(vm, copysign(x, y));
}

static cv m_fmod(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    double x, y;
    if (two_doubles(vm, "fmod", args, nargs, kwnames, &x, &y))
        return CV_NULL;
    if (isinf(y) && isfinite(x))
        return code_float_new(vm, x);
    double r = fmod(x, y);
    if (isnan(r) && !isnan(x) && !isnan(y))
        return code_raise(vm, &code_exc_ValueError, "math domain error");
    return code_float_new(vm, r);
}

static cv m_nextafter(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    double x, y;
    if (two_doubles(vm, "nextafter", args, nargs, kwnames, &x, &y))
        return CV_NULL;
    return code_float_new(vm, nextafter(x, y));
}

static double d_ulp(double x)
{
    if (isnan(x))
        return x;
    x = fabs(x);
    if (isinf(x))
        return x;
    double x2 = nextafter(x, INFINITY);
    if (isinf(x2))
        return x - nextafter(x, -INFINITY);
    return x2 - x;
}

static cv m_ulp(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    return code_math_float1(vm, "ulp", args, nargs, kwnames, d_ulp, false);
}

static cv m_remainder(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    double x, y;
    if (two_doubles(vm, "remainder", args, nargs, kwnames, &x, &y))
        return CV_NULL;
    if (isnan(x) || isnan(y))
        return code_float_new(vm, NAN);
    if (isinf(x) || y == 0)
        return code_raise(vm, &code_exc_ValueError, "math domain error");
    if (isinf(y))
        return code_float_new(vm, x);
    return code_float_new(vm, remainder(x, y));
}

static cv pair(code_vm *vm, cv a, cv b)
{
    cv t = a && b ? code_tuple_pack(vm, 2, a, b) : CV_NULL;
    code_decref(vm, a);
    code_decref(vm, b);
    return t;
}

static cv m_modf(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    double x, ip;
    if (code_math_nargs(vm, "modf", nargs, kwnames, 1) || code_as_double(vm, args[0], &x))
        return CV_NULL;
    double fp = isinf(x) ? copysign(0.0, x) : modf(x, &ip);
    if (isinf(x))
        ip = x;
    return pair(vm, code_float_new(vm, fp), code_float_new(vm, ip));
}

static cv m_frexp(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    double x;
    int e = 0;
    if (code_math_nargs(vm, "frexp", nargs, kwnames, 1) || code_as_double(vm, args[0], &x))
        return CV_NULL;
    double m = isfinite(x) ? frexp(x, &e) : x;
    return pair(vm, code_float_new(vm, m), cv_from_small(e));
}

static cv m_ldexp(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    double x;
    if (code_math_nargs(vm, "ldexp", nargs, kwnames, 2) || code_as_double(vm, args[0], &x))
        return CV_NULL;
    if (!code_is_int(args[1]))
        return code_raise(vm, &code_exc_TypeError, "Expected an int as second argument to ldexp.");
    int64_t e;
    if (!code_int_to_i64(args[1], &e))
        e = code_int_sign(args[1]) < 0 ? -100000 : 100000;
    if (e > 100000)
        e = 100000;
    if (e < -100000)
        e = -100000;
    if (x == 0 || !isfinite(x))
        return code_float_new(vm, x);
    double r = ldexp(x, (int)e);
    if (isinf(r))
        return code_raise(vm, &code_exc_OverflowError, "math range error");
    return code_float_new(vm, r);
}

static cv m_isnan(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    double x;
    if (code_math_nargs(vm, "isnan", nargs, kwnames, 1) || code_as_double(vm, args[0], &x))
        return CV_NULL;
    return code_bool(isnan(x));
}

static cv m_isinf(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    double x;
    if (code_math_nargs(vm, "isinf", nargs, kwnames, 1) || code_as_double(vm, args[0], &x))
        return CV_NULL;
    return code_bool(isinf(x));
}

static cv m_isfinite(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    double x;
    if (code_math_nargs(vm, "isfinite", nargs, kwnames, 1) || code_as_double(vm, args[0], &x))
        return CV_NULL;
    return code_bool(isfinite(x));
}

static cv m_isclose(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    cv av = CV_NULL, bv = CV_NULL, rv = CV_NULL, tv = CV_NULL;
    double a, b, rel = 1e-09, abs_tol = 0.0;
    if (code_args(vm, "isclose", args, nargs, kwnames, "a,b,/,*,|rel_tol,abs_tol", &av, &bv, &rv,
                  &tv) ||
        code_as_double(vm, av, &a) || code_as_double(vm, bv, &b) ||
        (rv && code_as_double(vm, rv, &rel)) || (tv && code_as_double(vm, tv, &abs_tol)))
        return CV_NULL;
    if (rel < 0.0 || abs_tol < 0.0)
        return code_raise(vm, &code_exc_ValueError, "tolerances must be non-negative");
    if (a == b)
        return CODE_TRUE;
    if (isinf(a) || isinf(b))
        return CODE_FALSE;
    double diff = fabs(b - a);
    return code_bool(diff <= fabs(rel * b) || diff <= fabs(rel * a) || diff <= abs_tol);
}

/* hypot of many: scaled by the largest magnitude so squares neither
 * overflow nor underflow; inf wins over nan, as in CPython. */
static cv hypot_of(code_vm *vm, const double *v, size_t n)
{
    double max = 0;
    bool found_nan = false;
    for (size_t i = 0; i < n; i++) {
        double a = fabs(v[i]);
        found_nan |= isnan(a);
        if (a > max)
            max = a;
    }
    if (isinf(max))
        return code_float_new(vm, max);
    if (found_nan)
        return code_float_new(vm, NAN);
    if (max == 0 || n <= 1)
        return code_float_new(vm, max);
    if (n == 2)
        return code_float_new(vm, hypot(v[0], v[1]));
    double sum = 0, c = 0;
    for (size_t i = 0; i < n; i++) {
        double x = v[i] / max, y = x * x - c, t = sum + y;
        c = (t - sum) - y;
        sum = t;
    }
    return code_float_new(vm, max * sqrt(sum));
}

static cv m_hypot(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (kwnames && ((code_tuple *)cv_obj(kwnames))->n)
        return code_raise(vm, &code_exc_TypeError, "hypot() takes no keyword arguments");
    double *v = nargs ? code_heap_alloc(vm, nargs * sizeof *v) : NULL;
    if (nargs && !v)
        return CV_NULL;
    cv r = CV_NULL;
    size_t i = 0;
    for (; i < nargs; i++)
        if (code_as_double(vm, args[i], &v[i]))
            break;
    if (i == nargs)
        r = hypot_of(vm, v, nargs);
    if (v)
        code_heap_free(vm, v, nargs * sizeof *v);
    return r;
}

static cv m_dist(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_math_nargs(vm, "dist", nargs, kwnames, 2))
        return CV_NULL;
    cv p = code_tuple_from(vm, args[0]), q = p ? code_tuple_from(vm, args[1]) : CV_NULL;
    cv r = CV_NULL;
    double *v = NULL;
    size_t n = 0;
    if (!q)
        goto out;
    n = ((code_tuple *)cv_obj(p))->n;
    if (((code_tuple *)cv_obj(q))->n != n) {
        code_raise(vm, &code_exc_ValueError, "both points must have the same number of dimensions");
        goto out;
    }
    if (n && !(v = code_heap_alloc(vm, n * sizeof *v)))
        goto out;
    for (size_t i = 0; i < n; i++) {
        double a, b;
        if (code_as_double(vm, ((code_tuple *)cv_obj(p))->v[i], &a) ||
            code_as_double(vm, ((code_tuple *)cv_obj(q))->v[i], &b))
            goto out;
        v[i] = a - b;
    }
    r = hypot_of(vm, v, n);
out:
    if (v)
        code_heap_free(vm, v, n * sizeof *v);
    code_decref(vm, p);
    code_decref(vm, q);
    return r;
}

/* ---- the module's table -------------------------------------------------- */

#define F(name) {{&code_type_cfunc, CODE_RC_IMMORTAL, 0}, #name, m_##name, CV_NULL}
static code_cfunc_obj math_funcs[] = {
    F(sqrt), F(exp), F(exp2), F(expm1), F(log1p), F(sin), F(cos), F(tan), F(asin), F(acos),
    F(atan), F(sinh), F(cosh), F(tanh), F(asinh), F(acosh), F(atanh), F(erf), F(erfc), F(cbrt),
    F(fabs), F(degrees), F(radians), F(log), F(log2), F(log10), F(floor), F(ceil), F(trunc),
    F(pow), F(atan2), F(copysign), F(fmod), F(remainder), F(modf), F(frexp), F(ldexp),
    F(nextafter), F(ulp), F(isnan), F(isinf), F(isfinite), F(isclose), F(hypot), F(dist),
    {{&code_type_cfunc, CODE_RC_IMMORTAL, 0}, "gamma", code_math_gamma, CV_NULL},
    {{&code_type_cfunc, CODE_RC_IMMORTAL, 0}, "lgamma", code_math_lgamma, CV_NULL},
    {{&code_type_cfunc, CODE_RC_IMMORTAL, 0}, "gcd", code_math_gcd, CV_NULL},
    {{&code_type_cfunc, CODE_RC_IMMORTAL, 0}, "lcm", code_math_lcm, CV_NULL},
    {{&code_type_cfunc, CODE_RC_IMMORTAL, 0}, "factorial", code_math_factorial, CV_NULL},
    {{&code_type_cfunc, CODE_RC_IMMORTAL, 0}, "comb", code_math_comb, CV_NULL},
    {{&code_type_cfunc, CODE_RC_IMMORTAL, 0}, "perm", code_math_perm, CV_NULL},
    {{&code_type_cfunc, CODE_RC_IMMORTAL, 0}, "isqrt", code_math_isqrt, CV_NULL},
    {{&code_type_cfunc, CODE_RC_IMMORTAL, 0}, "prod", code_math_prod, CV_NULL},
    {{&code_type_cfunc, CODE_RC_IMMORTAL, 0}, "fsum", code_math_fsum, CV_NULL},
};
#undef F

#define K(name, val) {{&code_type_float, CODE_RC_IMMORTAL, 0}, val}
static code_float math_consts[] = {
    K(pi, M_PI), K(e, M_E), K(tau, 2 * M_PI), K(inf, INFINITY), K(nan, NAN),
};
static const char *const math_const_names[] = {"pi", "e", "tau", "inf", "nan"};
#undef K

static int set_member(code_vm *vm, cv dict, const char *name, cv v)
{
    cv k = code_str_intern(vm, name, strlen(name));
    if (!k)
        return -1;
    int rc = code_dict_set(vm, dict, k, v);
    code_decref(vm, k);
    return rc;
}

int code_mod_math_init(code_vm *vm, cv dict)
{
    for (size_t i = 0; i < sizeof math_funcs / sizeof *math_funcs; i++)
        if (set_member(vm, dict, math_funcs[i].name, cv_of(&math_funcs[i])))
            return -1;
    for (size_t i = 0; i < sizeof math_consts / sizeof *math_consts; i++)
        if (set_member(vm, dict, math_const_names[i], cv_of(&math_consts[i])))
            return -1;
    return 0;
}
