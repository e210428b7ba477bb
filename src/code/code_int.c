/* Code mode's ints: small tagged words while they fit 62 bits, else
 * code_bigint (sign and 32-bit limb magnitude). Arithmetic goes through a
 * sign-magnitude view of each operand so small and big ints share one path;
 * the common small-small cases are answered first without it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "code/code_num.h"

void code_intview_of(code_intview *v, cv x)
{
    int64_t i;
    if (cv_is_small(x))
        i = cv_small(x);
    else if (cv_obj(x)->type == &code_type_bool)
        i = x == CODE_TRUE;
    else {
        const code_bigint *b = (const code_bigint *)cv_obj(x);
        v->sign = b->sign;
        v->n = b->n;
        v->d = b->limb;
        return;
    }
    uint64_t m = i < 0 ? -(uint64_t)i : (uint64_t)i;
    v->sign = i < 0 ? -1 : i > 0;
    v->buf[0] = (uint32_t)m;
    v->buf[1] = (uint32_t)(m >> 32);
    v->n = m == 0 ? 0 : v->buf[1] ? 2 : 1;
    v->d = v->buf;
}

int code_int_check_size(code_vm *vm, uint64_t limbs)
{
    uint64_t bytes = sizeof(code_bigint) + limbs * 4;
    if (limbs > UINT32_MAX || limbs > (SIZE_MAX - sizeof(code_bigint)) / 8 ||
        (vm->mem.max_bytes &&
         (vm->mem.bytes > vm->mem.max_bytes || bytes > vm->mem.max_bytes - vm->mem.bytes))) {
        code_raise_nomem(vm);
        return -1;
    }
    return 0;
}

code_bigint *code_bigint_alloc(code_vm *vm, size_t n)
{
    if (code_int_check_size(vm, n))
        return NULL;
    code_bigint *b = code_obj_new(vm, &code_type_int, sizeof(code_bigint) + n * 4);
    if (!b)
        return NULL;
    b->sign = 1;
    b->n = (uint32_t)n;
    return b;
}

cv code_bigint_finish(code_vm *vm, code_bigint *b)
{
    size_t n = code_mag_norm(b->limb, b->n);
    if (n <= 2) {
        uint64_t m = n == 0 ? 0 : n == 1 ? b->limb[0] : ((uint64_t)b->limb[1] << 32) | b->limb[0];
        if (m <= (uint64_t)CV_SMALL_MAX + (b->sign < 0)) {
            int64_t i = b->sign < 0 ? (int64_t)(0 - m) : (int64_t)m;
            code_decref(vm, cv_of(b));
            return cv_from_small(i);
        }
    }
    b->n = (uint32_t)n;
    return cv_of(b);
}

cv code_int_from_mag(code_vm *vm, int sign, const uint32_t *d, size_t n)
{
    n = code_mag_norm(d, n);
    if (n == 0)
        return cv_from_small(0);
    code_bigint *b = code_bigint_alloc(vm, n);
    if (!b)
        return CV_NULL;
    memcpy(b->limb, d, n * 4);
    b->sign = sign < 0 ? -1 : 1;
    return code_bigint_finish(vm, b);
}

cv code_int_from_u64(code_vm *vm, uint64_t u)
{
    if (u <= (uint64_t)CV_SMALL_MAX)
        return cv_from_small((int64_t)u);
    uint32_t d[2] = {(uint32_t)u, (uint32_t)(u >> 32)};
    return code_int_from_mag(vm, 1, d, 2);
}

cv code_int_from_i64(code_vm *vm, int64_t i)
{
    if (cv_fits_small(i))
        return cv_from_small(i);
    uint64_t m = i < 0 ? -(uint64_t)i : (uint64_t)i;
    uint32_t d[2] = {(uint32_t)m, (uint32_t)(m >> 32)};
    return code_int_from_mag(vm, i < 0 ? -1 : 1, d, 2);
}

int code_int_to_i64(cv v, int64_t *out)
{
    code_intview a;
    code_intview_of(&a, v);
    if (a.n > 2)
        return 0;
    uint64_t m = a.n == 0 ? 0 : a.n == 1 ? a.d[0] : ((uint64_t)a.d[1] << 32) | a.d[0];
    if (a.sign >= 0 ? m > (uint64_t)INT64_MAX : m > (uint64_t)INT64_MAX + 1)
        return 0;
    *out = a.sign < 0 ? (int64_t)(0 - m) : (int64_t)m;
    return 1;
}

int code_int_sign(cv v)
{
    code_intview a;
    code_intview_of(&a, v);
    return a.sign;
}

uint64_t code_int_bit_length(cv v)
{
    code_intview a;
    code_intview_of(&a, v);
    return code_mag_bits(a.d, a.n);
}

/* Correctly rounded: the top 64 bits with a sticky bit for the rest convert
 * to the nearest double (ties to even), then are scaled. */
int code_int_to_double(code_vm *vm, cv v, double *out)
{
    if (cv_is_small(v)) {
        *out = (double)cv_small(v);
        return 0;
    }
    code_intview a;
    code_intview_of(&a, v);
    uint64_t bits = code_mag_bits(a.d, a.n);
    double r;
    if (bits <= 64) {
        uint64_t m = a.n == 0 ? 0 : a.n == 1 ? a.d[0] : ((uint64_t)a.d[1] << 32) | a.d[0];
        r = (double)m;
    } else {
        if (bits > 1024)
            goto overflow;
        uint64_t sh = bits - 64, top = 0;
        for (int k = 0; k < 64; k++) {
            uint64_t bit = sh + (uint64_t)k;
            top |= (uint64_t)((a.d[bit / 32] >> (bit % 32)) & 1) << k;
        }
        bool sticky = false;
        for (uint64_t i = 0; i < sh / 32 && !sticky; i++)
            sticky = a.d[i] != 0;
        if (!sticky && sh % 32)
            sticky = (a.d[sh / 32] & ((1u << (sh % 32)) - 1)) != 0;
        r = ldexp((double)(top | sticky), (int)sh);
        if (isinf(r))
            goto overflow;
    }
    *out = a.sign < 0 ? -r : r;
    return 0;
overflow:
    return code_raise_i(vm, &code_exc_OverflowError, "int too large to convert to float");
}

/* The magnitude of trunc(|d|) for finite d into out (33 limbs); its length. */
static size_t mag_from_double(uint32_t *out, double d)
{
    d = trunc(fabs(d));
    if (d < 1)
        return 0;
    int e;
    double m = frexp(d, &e);               /* d = m * 2^e, 0.5 <= m < 1 */
    uint64_t mant = (uint64_t)ldexp(m, 53);
    memset(out, 0, 33 * 4);
    if (e <= 53) {
        mant >>= 53 - e;
        out[0] = (uint32_t)mant;
        out[1] = (uint32_t)(mant >> 32);
        return code_mag_norm(out, 2);
    }
    int sh = e - 53;
    unsigned __int128 w = (unsigned __int128)mant << (sh % 32);
    for (int k = 0; k < 3; k++)
        out[sh / 32 + k] = (uint32_t)(w >> (32 * k));
    return code_mag_norm(out, 33);
}

cv code_int_from_double(code_vm *vm, double d)
{
    if (isnan(d))
        return code_raise(vm, &code_exc_ValueError, "cannot convert float NaN to integer");
    if (isinf(d))
        return code_raise(vm, &code_exc_OverflowError, "cannot convert float infinity to integer");
    if (fabs(d) < 9.2e18)
        return code_int_from_i64(vm, (int64_t)d);
    uint32_t m[33];
    size_t n = mag_from_double(m, d);
    return code_int_from_mag(vm, d < 0 ? -1 : 1, m, n);
}

int code_int_cmp(cv a, cv b)
{
    if (cv_is_small(a) && cv_is_small(b))
        return cv_small(a) < cv_small(b) ? -1 : cv_small(a) > cv_small(b);
    code_intview x, y;
    code_intview_of(&x, a);
    code_intview_of(&y, b);
    if (x.sign != y.sign)
        return x.sign < y.sign ? -1 : 1;
    return x.sign * code_mag_cmp(x.d, x.n, y.d, y.n);
}

int code_int_cmp_double(cv i, double d)
{
    if (isnan(d))
        return 2;
    if (isinf(d))
        return d > 0 ? -1 : 1;
    if (cv_is_small(i) && llabs(cv_small(i)) <= ((int64_t)1 << 53)) {
        double x = (double)cv_small(i);
        return x < d ? -1 : x > d;
    }
    code_intview a;
    code_intview_of(&a, i);
    int ds = d < 0 ? -1 : d > 0;
    if (a.sign != ds)
        return a.sign < ds ? -1 : 1;
    if (a.sign == 0)
        return 0;
    uint32_t m[33];
    size_t n = mag_from_double(m, d);
    int c = code_mag_cmp(a.d, a.n, m, n);
    if (c == 0 && trunc(d) != d)
        c = -1;                            /* |i| == trunc|d| < |d| */
    return a.sign * c;
}

uint64_t code_int_hash(cv v)
{
    if (cv_is_small(v)) {
        int64_t i = cv_small(v);
        uint64_t m = i < 0 ? -(uint64_t)i : (uint64_t)i;
        m %= CODE_HASH_MODULUS;
        int64_t h = i < 0 ? -(int64_t)m : (int64_t)m;
        return (uint64_t)(h == -1 ? -2 : h);
    }
    code_intview a;
    code_intview_of(&a, v);
    uint64_t h = 0;
    for (size_t k = a.n; k-- > 0;)
        h = (uint64_t)((((unsigned __int128)h << 32) | a.d[k]) % CODE_HASH_MODULUS);
    int64_t s = a.sign < 0 ? -(int64_t)h : (int64_t)h;
    return (uint64_t)(s == -1 ? -2 : s);
}
