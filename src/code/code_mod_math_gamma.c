/* math.gamma and math.lgamma as CPython computes them (mathmodule.c's
 * Lanczos approximation, g = 6.02..., 13 terms, and its reflection for
 * negative arguments), so results agree to the last bit rather than with
 * whatever the C library's tgamma does. */
#include <errno.h>
#include <math.h>

#include "code/code_mod_math.h"

#define LANCZOS_N 13
static const double lanczos_g = 6.024680040776729583740234375;
static const double lanczos_g_minus_half = 5.524680040776729583740234375;
static const double lanczos_num_coeffs[LANCZOS_N] = {
    23531376880.410759688572007674451636754734846804940,
    42919803642.649098768957899047001988850926355848959,
    35711959237.355668049440185451547166705960488635843,
    17921034426.037209699919755754458931112671403265390,
    6039542586.3520280050642916443072979210699388420708,
    1439720407.3117216736632230727949123939715485786772,
    248874557.86205415651146038641322942321632125127801,
    31426415.585400194380614231628318205362874684987640,
    2876370.6289353724412254090516208496135991145378768,
    186056.26539522349504029498971604569928220784236328,
    8071.6720023658162106380029022722506138218516325024,
    210.82427775157934587250973392071336271166969580291,
    2.5066282746310002701649081771338373386264310793408,
};
/* the coefficients of x (x + 1) ... (x + 11) */
static const double lanczos_den_coeffs[LANCZOS_N] = {
    0.0, 39916800.0, 120543840.0, 150917976.0, 105258076.0, 45995730.0,
    13339535.0, 2637558.0, 357423.0, 32670.0, 1925.0, 66.0, 1.0,
};
static const double logpi = 1.144729885849400174143427351353058711647;

static double lanczos_sum(double x)
{
    double num = 0.0, den = 0.0;
    if (x < 5.0) {
        for (int i = LANCZOS_N; --i >= 0;) {
            num = num * x + lanczos_num_coeffs[i];
            den = den * x + lanczos_den_coeffs[i];
        }
    } else {
        for (int i = 0; i < LANCZOS_N; i++) {
            num = num / x + lanczos_num_coeffs[i];
            den = den / x + lanczos_den_coeffs[i];
        }
    }
    return num / den;
}

/* sin(pi x), exact at the integers and half-integers. */
static double sinpi(double x)
{
    double y = fmod(fabs(x), 2.0), r;
    switch ((int)round(2.0 * y)) {
    case 0: r = sin(M_PI * y); break;
    case 1: r = cos(M_PI * (y - 0.5)); break;
    case 2: r = sin(M_PI * (1.0 - y)); break;   /* not -sin(pi (y - 1)): 0.0, not -0.0 */
    case 3: r = -cos(M_PI * (y - 1.5)); break;
    default: r = sin(M_PI * (y - 2.0)); break;
    }
    return copysign(1.0, x) * r;
}

static double tgamma_py(double x, int *err)
{
    if (!isfinite(x)) {
        if (isnan(x) || x > 0.0)
            return x;
        *err = EDOM;
        return NAN;
    }
    if (x == 0.0) {
        *err = EDOM;
        return copysign(HUGE_VAL, x);
    }
    if (x == floor(x)) {
        if (x < 0.0) {
            *err = EDOM;
            return NAN;
        }
        if (x <= 23) {                  /* (x - 1)! exactly */
            double f = 1;
            for (int i = 2; i < (int)x; i++)
                f *= i;
            return f;
        }
    }
    double absx = fabs(x), r, y, z, sqrtpow;
    if (absx < 1e-20) {
        r = 1.0 / x;
        if (isinf(r))
            *err = ERANGE;
        return r;
    }
    if (absx > 200.0) {
        if (x < 0.0)
            return 0.0 / sinpi(x);
        *err = ERANGE;
        return HUGE_VAL;
    }
    y = absx + lanczos_g_minus_half;
    /* the rounding error of y, to correct the result with */
    if (absx > lanczos_g_minus_half) {
        double q = y - absx;
        z = q - lanczos_g_minus_half;
    } else {
        double q = y - lanczos_g_minus_half;
        z = q - absx;
    }
    z = z * lanczos_g / y;
    if (x < 0.0) {
        r = -M_PI / sinpi(absx) / absx * exp(y) / lanczos_sum(absx);
        r -= z * r;
        if (absx < 140.0)
            r /= pow(y, absx - 0.5);
        else {
            sqrtpow = pow(y, absx / 2.0 - 0.25);
            r /= sqrtpow;
            r /= sqrtpow;
        }
    } else {
        r = lanczos_sum(absx) / exp(y);
        r += z * r;
        if (absx < 140.0)
            r *= pow(y, absx - 0.5);
        else {
            sqrtpow = pow(y, absx / 2.0 - 0.25);
            r *= sqrtpow;
            r *= sqrtpow;
        }
    }
    if (isinf(r))
        *err = ERANGE;
    return r;
}

static double lgamma_py(double x, int *err)
{
    if (!isfinite(x))
        return isnan(x) ? x : HUGE_VAL;
    if (x == floor(x) && x <= 2.0) {
        if (x <= 0.0) {
            *err = EDOM;
            return HUGE_VAL;
        }
        return 0.0;
    }
    double absx = fabs(x);
    if (absx < 1e-20)
        return -log(absx);
    double r = log(lanczos_sum(absx)) - lanczos_g;
    r += (absx - 0.5) * (log(absx + lanczos_g - 0.5) - 1);
    if (x < 0.0)
        r = logpi - log(fabs(sinpi(absx))) - log(absx) - r;
    if (isinf(r))
        *err = ERANGE;
    return r;
}

/* CPython's math_1a: errors only from the function's own errno. */
static cv gamma_call(code_vm *vm, const char *name, cv *args, size_t nargs, cv kwnames,
                     double (*fn)(double, int *))
{
    double x;
    if ((kwnames && ((code_tuple *)cv_obj(kwnames))->n) || nargs != 1)
        return code_raise(vm, &code_exc_TypeError,
                          "math.%s() takes exactly one argument (%zu given)", name, nargs);
    if (code_as_double(vm, args[0], &x))
        return CV_NULL;
    int err = 0;
    double r = fn(x, &err);
    if (err == EDOM)
        return code_raise(vm, &code_exc_ValueError, "math domain error");
    if (err == ERANGE && fabs(r) >= 1.5)
        return code_raise(vm, &code_exc_OverflowError, "math range error");
    return code_float_new(vm, r);
}

cv code_math_gamma(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    return gamma_call(vm, "gamma", args, nargs, kwnames, tgamma_py);
}

cv code_math_lgamma(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    return gamma_call(vm, "lgamma", args, nargs, kwnames, lgamma_py);
}
