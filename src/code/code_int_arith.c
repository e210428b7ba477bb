/* Code mode's int arithmetic: + - * / // % ** << >> & | ^ ~ with Python's
 * floor semantics and CPython's messages. Sizes known in advance (products,
 * powers, left shifts) are checked against the run's memory before the work. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "code/code_num.h"

static cv add_views(code_vm *vm, const code_intview *a, const code_intview *b, int bsign)
{
    if (b->n == 0)
        return code_int_from_mag(vm, a->sign, a->d, a->n);
    if (a->n == 0)
        return code_int_from_mag(vm, bsign, b->d, b->n);
    if (a->sign == bsign) {
        const code_intview *x = a->n >= b->n ? a : b, *y = a->n >= b->n ? b : a;
        code_bigint *r = code_bigint_alloc(vm, x->n + 1);
        if (!r)
            return CV_NULL;
        code_mag_add(r->limb, x->d, x->n, y->d, y->n);
        r->sign = a->sign;
        return code_bigint_finish(vm, r);
    }
    int c = code_mag_cmp(a->d, a->n, b->d, b->n);
    if (c == 0)
        return cv_from_small(0);
    const code_intview *x = c > 0 ? a : b, *y = c > 0 ? b : a;
    code_bigint *r = code_bigint_alloc(vm, x->n);
    if (!r)
        return CV_NULL;
    code_mag_sub(r->limb, x->d, x->n, y->d, y->n);
    r->sign = c > 0 ? a->sign : bsign;
    return code_bigint_finish(vm, r);
}

cv code_int_mul(code_vm *vm, cv a, cv b)
{
    if (cv_is_small(a) && cv_is_small(b)) {
        int64_t r;
        if (!__builtin_mul_overflow(cv_small(a), cv_small(b), &r))
            return code_int_from_i64(vm, r);
    }
    code_intview x, y;
    code_intview_of(&x, a);
    code_intview_of(&y, b);
    if (x.n == 0 || y.n == 0)
        return cv_from_small(0);
    code_bigint *r = code_bigint_alloc(vm, x.n + y.n);
    if (!r)
        return CV_NULL;
    if (code_mag_mul(vm, r->limb, x.d, x.n, y.d, y.n)) {
        code_decref(vm, cv_of(r));
        return CV_NULL;
    }
    r->sign = x.sign * y.sign;
    return code_bigint_finish(vm, r);
}

/* Floor division and modulo: q (if wanted) and *rem (if rem). */
cv code_int_floordiv(code_vm *vm, cv a, cv b, cv *rem)
{
    if (cv_is_small(a) && cv_is_small(b) && cv_small(b) != 0) {
        int64_t x = cv_small(a), y = cv_small(b), q = x / y, r = x % y;
        if (r != 0 && ((r < 0) != (y < 0))) {
            q--;
            r += y;
        }
        if (rem)
            *rem = cv_from_small(r);
        return code_int_from_i64(vm, q);
    }
    code_intview x, y;
    code_intview_of(&x, a);
    code_intview_of(&y, b);
    if (y.n == 0)
        return code_raise(vm, &code_exc_ZeroDivisionError, "integer division or modulo by zero");
    code_bigint *q = NULL, *r = NULL;
    size_t nq = x.n >= y.n ? x.n - y.n + 2 : 1;
    if (!(q = code_bigint_alloc(vm, nq)) || !(r = code_bigint_alloc(vm, y.n + 1)))
        goto fail;
    if (x.n < y.n)
        memcpy(r->limb, x.d, x.n * 4);
    else if (y.n == 1)
        r->limb[0] = code_mag_divrem1(q->limb, x.d, x.n, y.d[0]);
    else if (code_mag_divmod(vm, q->limb, r->limb, x.d, x.n, y.d, y.n))
        goto fail;
    bool rzero = code_mag_norm(r->limb, y.n) == 0;
    if (x.sign != y.sign && !rzero) {
        /* floor: q = -(q0 + 1), r = sign(b) * (|b| - r0) */
        for (size_t i = 0; i < nq; i++)
            if (++q->limb[i] != 0)
                break;
        code_mag_sub(r->limb, y.d, y.n, r->limb, y.n);
    }
    q->sign = x.sign * y.sign < 0 ? -1 : 1;
    r->sign = y.sign;
    cv qv = code_bigint_finish(vm, q);
    cv rv = code_bigint_finish(vm, r);
    if (rem)
        *rem = rv;
    else
        code_decref(vm, rv);
    return qv;
fail:
    if (q)
        code_decref(vm, cv_of(q));
    if (r)
        code_decref(vm, cv_of(r));
    return CV_NULL;
}

static cv lshift(code_vm *vm, cv a, int64_t n);

/* Correctly rounded a / b: scale so the integer quotient has at least 55
 * significant bits, fold a nonzero remainder into a sticky bit, convert. */
static cv truediv(code_vm *vm, cv a, cv b)
{
    code_intview x, y;
    code_intview_of(&x, a);
    code_intview_of(&y, b);
    if (y.n == 0)
        return code_raise(vm, &code_exc_ZeroDivisionError, "division by zero");
    bool negate = (x.sign < 0) != (y.sign < 0);
    if (x.n == 0)
        return code_float_new(vm, negate ? -0.0 : 0.0);
    uint64_t xb = code_mag_bits(x.d, x.n), yb = code_mag_bits(y.d, y.n);
    if (xb <= 53 && yb <= 53) {
        double dx, dy;
        code_int_to_double(vm, a, &dx);
        code_int_to_double(vm, b, &dy);
        return code_float_new(vm, dx / dy);
    }
    int64_t diff = (int64_t)xb - (int64_t)yb;
    if (diff > 1025)
        return code_raise(vm, &code_exc_OverflowError,
                          "integer division result too large for a float");
    if (diff < -1080)
        return code_float_new(vm, negate ? -0.0 : 0.0);
    int64_t shift = diff - 55;    /* quotient of a / 2^shift by b has 55-56 bits */
    cv num = CV_NULL, den = CV_NULL, q = CV_NULL, r = CV_NULL;
    cv aa = code_int_from_mag(vm, 1, x.d, x.n), bb = CV_NULL;
    if (!aa)
        return CV_NULL;
    bb = code_int_from_mag(vm, 1, y.d, y.n);
    if (!bb)
        goto fail;
    if (shift < 0) {
        num = lshift(vm, aa, -shift);
        den = code_incref(bb);
    } else {
        num = code_incref(aa);
        den = lshift(vm, bb, shift);
    }
    if (!num || !den)
        goto fail;
    q = code_int_floordiv(vm, num, den, &r);
    if (!q)
        goto fail;
    int64_t qi;
    if (!code_int_to_i64(q, &qi))
        goto fail;                     /* cannot happen: 56 bits at most */
    uint64_t qu = (uint64_t)qi | (code_int_sign(r) != 0);
    double res = ldexp((double)qu, (int)shift);
    code_decref(vm, aa);
    code_decref(vm, bb);
    code_decref(vm, num);
    code_decref(vm, den);
    code_decref(vm, q);
    code_decref(vm, r);
    if (isinf(res))
        return code_raise(vm, &code_exc_OverflowError,
                          "integer division result too large for a float");
    return code_float_new(vm, negate ? -res : res);
fail:
    code_decref(vm, aa);
    code_decref(vm, bb);
    code_decref(vm, num);
    code_decref(vm, den);
    code_decref(vm, q);
    code_decref(vm, r);
    return CV_NULL;
}

cv code_int_neg(code_vm *vm, cv a)
{
    if (cv_is_small(a))
        return code_int_from_i64(vm, -cv_small(a));
    code_intview x;
    code_intview_of(&x, a);
    return code_int_from_mag(vm, -x.sign, x.d, x.n);
}

cv code_int_pow(code_vm *vm, cv a, cv b)
{
    int sb = code_int_sign(b);
    if (sb < 0) {
        double da, db;
        if (code_int_sign(a) == 0)
            return code_raise(vm, &code_exc_ZeroDivisionError,
                              "0.0 cannot be raised to a negative power");
        if (code_int_to_double(vm, a, &da) || code_int_to_double(vm, b, &db))
            return CV_NULL;
        return code_float_pow(vm, da, db);
    }
    code_intview x;
    code_intview_of(&x, a);
    if (sb == 0)
        return cv_from_small(1);
    if (x.n == 0)
        return cv_from_small(0);
    uint64_t abits = code_mag_bits(x.d, x.n);
    int64_t e;
    bool odd = false;
    if (abits == 1) {                  /* |a| == 1 */
        code_intview y;
        code_intview_of(&y, b);
        odd = y.d[0] & 1;
        return cv_from_small(x.sign < 0 && odd ? -1 : 1);
    }
    /* The result has more than (abits - 1) * e bits: refuse what cannot fit. */
    if (!code_int_to_i64(b, &e) || (uint64_t)e > UINT64_MAX / 2 / abits)
        return code_raise_nomem(vm);
    if (code_int_check_size(vm, ((abits - 1) * (uint64_t)e + 1) / 32 + 1))
        return CV_NULL;
    cv result = cv_from_small(1), base = code_incref(a);
    for (int k = 63 - __builtin_clzll((uint64_t)e); k >= 0; k--) {
        cv t = code_int_mul(vm, result, result);
        code_decref(vm, result);
        result = t;
        if (t && ((uint64_t)e >> k) & 1) {
            t = code_int_mul(vm, result, base);
            code_decref(vm, result);
            result = t;
        }
        if (!result)
            break;
    }
    code_decref(vm, base);
    return result;
}

static int shift_count(code_vm *vm, cv b, int64_t *n)
{
    if (code_int_sign(b) < 0)
        return code_raise_i(vm, &code_exc_ValueError, "negative shift count");
    if (!code_int_to_i64(b, n))
        *n = INT64_MAX;
    return 0;
}

static cv lshift(code_vm *vm, cv a, int64_t n)
{
    code_intview x;
    code_intview_of(&x, a);
    if (x.n == 0)
        return cv_from_small(0);
    if (n < 62 && cv_is_small(a)) {
        int64_t v = cv_small(a);
        if (llabs(v) < ((int64_t)1 << (62 - n)))
            return code_int_from_i64(vm, v * ((int64_t)1 << n));
    }
    uint64_t limbs = (uint64_t)n / 32;
    if (n == INT64_MAX)
        return code_raise_nomem(vm);
    code_bigint *r = code_bigint_alloc(vm, x.n + limbs + 1);
    if (!r)
        return CV_NULL;
    int s = (int)(n % 32);
    uint32_t carry = 0;
    for (size_t i = 0; i < x.n; i++) {
        r->limb[limbs + i] = (x.d[i] << s) | carry;
        carry = s ? (uint32_t)((uint64_t)x.d[i] >> (32 - s)) : 0;
    }
    r->limb[limbs + x.n] = carry;
    r->sign = x.sign;
    return code_bigint_finish(vm, r);
}

/* Magnitude m >> n into a new bigint (unnormalised, sign 1). */
static code_bigint *mag_rshift(code_vm *vm, const uint32_t *d, size_t nd, uint64_t n)
{
    uint64_t limbs = n / 32;
    size_t nr = nd > limbs ? nd - limbs : 0;
    code_bigint *r = code_bigint_alloc(vm, nr + 1);
    if (!r)
        return NULL;
    int s = (int)(n % 32);
    for (size_t i = 0; i < nr; i++) {
        uint32_t lo = d[limbs + i] >> s;
        uint32_t hi = 0;
        if (s && limbs + i + 1 < nd)
            hi = (uint32_t)((uint64_t)d[limbs + i + 1] << (32 - s));
        r->limb[i] = lo | hi;
    }
    return r;
}

static cv rshift(code_vm *vm, cv a, int64_t n)
{
    if (cv_is_small(a))
        return cv_from_small(n >= 63 ? (cv_small(a) < 0 ? -1 : 0) : cv_small(a) >> n);
    code_intview x;
    code_intview_of(&x, a);
    if ((uint64_t)n >= code_mag_bits(x.d, x.n))
        return cv_from_small(x.sign < 0 ? -1 : 0);
    if (x.sign > 0) {
        code_bigint *r = mag_rshift(vm, x.d, x.n, (uint64_t)n);
        return r ? code_bigint_finish(vm, r) : CV_NULL;
    }
    /* floor: -((|a| - 1) >> n) - 1 */
    code_bigint *m = code_bigint_alloc(vm, x.n);
    if (!m)
        return CV_NULL;
    uint32_t one = 1;
    code_mag_sub(m->limb, x.d, x.n, &one, 1);
    code_bigint *r = mag_rshift(vm, m->limb, x.n, (uint64_t)n);
    code_decref(vm, cv_of(m));
    if (!r)
        return CV_NULL;
    size_t nr = r->n;
    for (size_t i = 0; i < nr; i++)
        if (++r->limb[i] != 0)
            break;
    r->sign = -1;
    return code_bigint_finish(vm, r);
}

/* Two's complement of a view over n limbs into out. */
static void to_twos(uint32_t *out, const code_intview *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = i < x->n ? x->d[i] : 0;
    if (x->sign < 0) {
        uint64_t c = 1;
        for (size_t i = 0; i < n; i++) {
            c += (uint32_t)~out[i];
            out[i] = (uint32_t)c;
            c >>= 32;
        }
    }
}

static cv bitwise(code_vm *vm, int op, cv a, cv b)
{
    if (cv_is_small(a) && cv_is_small(b)) {
        int64_t x = cv_small(a), y = cv_small(b);
        return cv_from_small(op == CODE_OP_AND ? x & y : op == CODE_OP_OR ? x | y : x ^ y);
    }
    code_intview x, y;
    code_intview_of(&x, a);
    code_intview_of(&y, b);
    size_t n = (x.n > y.n ? x.n : y.n) + 1;
    code_bigint *r = code_bigint_alloc(vm, 2 * n);
    if (!r)
        return CV_NULL;
    uint32_t *u = r->limb, *v = r->limb + n;
    to_twos(u, &x, n);
    to_twos(v, &y, n);
    for (size_t i = 0; i < n; i++)
        u[i] = op == CODE_OP_AND ? u[i] & v[i] : op == CODE_OP_OR ? u[i] | v[i] : u[i] ^ v[i];
    r->n = (uint32_t)n;
    if (u[n - 1] >> 31) {
        uint64_t c = 1;
        for (size_t i = 0; i < n; i++) {   /* magnitude = ~u + 1 */
            c += (uint32_t)~u[i];
            u[i] = (uint32_t)c;
            c >>= 32;
        }
        r->sign = -1;
    }
    return code_bigint_finish(vm, r);
}

cv code_int_binop(code_vm *vm, int op, cv a, cv b)
{
    bool small = cv_is_small(a) && cv_is_small(b);
    int64_t r;
    switch (op) {
    case CODE_OP_ADD:
    case CODE_OP_SUB: {
        if (small) {
            int64_t x = cv_small(a), y = cv_small(b);
            return code_int_from_i64(vm, op == CODE_OP_ADD ? x + y : x - y);
        }
        code_intview x, y;
        code_intview_of(&x, a);
        code_intview_of(&y, b);
        return add_views(vm, &x, &y, op == CODE_OP_ADD ? y.sign : -y.sign);
    }
    case CODE_OP_MUL:
        return code_int_mul(vm, a, b);
    case CODE_OP_TRUEDIV:
        return truediv(vm, a, b);
    case CODE_OP_FLOORDIV:
        return code_int_floordiv(vm, a, b, NULL);
    case CODE_OP_MOD: {
        if (code_int_sign(b) == 0)
            return code_raise(vm, &code_exc_ZeroDivisionError, "integer modulo by zero");
        cv rem = CV_NULL, q = code_int_floordiv(vm, a, b, &rem);
        if (!q)
            return CV_NULL;
        code_decref(vm, q);
        return rem;
    }
    case CODE_OP_POW:
        return code_int_pow(vm, a, b);
    case CODE_OP_LSHIFT:
    case CODE_OP_RSHIFT:
        if (shift_count(vm, b, &r))
            return CV_NULL;
        return op == CODE_OP_LSHIFT ? lshift(vm, a, r) : rshift(vm, a, r);
    case CODE_OP_AND:
    case CODE_OP_OR:
    case CODE_OP_XOR:
        return bitwise(vm, op, a, b);
    default:
        return CODE_NOTIMPL;
    }
}
