/* Limb arithmetic on magnitudes for code mode's ints: 32-bit limbs, least
 * significant first. Pure functions over caller-provided arrays; only
 * Karatsuba and the division take scratch memory, from the run's heap, so a
 * huge multiplication is counted against the run's limit. */
#include <string.h>

#include "code/code_num.h"

/* Below this many limbs in the smaller operand, schoolbook wins. */
#define KARATSUBA_CUTOFF 48

size_t code_mag_norm(const uint32_t *a, size_t n)
{
    while (n > 0 && a[n - 1] == 0)
        n--;
    return n;
}

int code_mag_cmp(const uint32_t *a, size_t na, const uint32_t *b, size_t nb)
{
    na = code_mag_norm(a, na);
    nb = code_mag_norm(b, nb);
    if (na != nb)
        return na < nb ? -1 : 1;
    for (size_t i = na; i-- > 0;)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

void code_mag_add(uint32_t *r, const uint32_t *a, size_t na, const uint32_t *b, size_t nb)
{
    uint64_t c = 0;
    size_t i = 0;
    for (; i < nb; i++) {
        c += (uint64_t)a[i] + b[i];
        r[i] = (uint32_t)c;
        c >>= 32;
    }
    for (; i < na; i++) {
        c += a[i];
        r[i] = (uint32_t)c;
        c >>= 32;
    }
    r[na] = (uint32_t)c;
}

void code_mag_sub(uint32_t *r, const uint32_t *a, size_t na, const uint32_t *b, size_t nb)
{
    int64_t c = 0;
    size_t i = 0;
    for (; i < nb; i++) {
        c += (int64_t)a[i] - b[i];
        r[i] = (uint32_t)c;
        c >>= 32;            /* arithmetic: -1 on borrow */
    }
    for (; i < na; i++) {
        c += a[i];
        r[i] = (uint32_t)c;
        c >>= 32;
    }
}

/* r[0..na+nb) = a * b, r zeroed by this function. */
static void mul_school(uint32_t *r, const uint32_t *a, size_t na, const uint32_t *b, size_t nb)
{
    memset(r, 0, (na + nb) * sizeof *r);
    for (size_t i = 0; i < nb; i++) {
        uint64_t c = 0, m = b[i];
        if (m == 0)
            continue;
        for (size_t j = 0; j < na; j++) {
            c += m * a[j] + r[i + j];
            r[i + j] = (uint32_t)c;
            c >>= 32;
        }
        r[i + na] = (uint32_t)c;
    }
}

/* r += a at offset; r has room for the carry (the result is known to fit). */
static void add_into(uint32_t *r, size_t nr, const uint32_t *a, size_t na)
{
    uint64_t c = 0;
    size_t i = 0;
    for (; i < na; i++) {
        c += (uint64_t)r[i] + a[i];
        r[i] = (uint32_t)c;
        c >>= 32;
    }
    for (; c && i < nr; i++) {
        c += r[i];
        r[i] = (uint32_t)c;
        c >>= 32;
    }
}

static void sub_into(uint32_t *r, size_t nr, const uint32_t *a, size_t na)
{
    int64_t c = 0;
    size_t i = 0;
    for (; i < na; i++) {
        c += (int64_t)r[i] - a[i];
        r[i] = (uint32_t)c;
        c >>= 32;
    }
    for (; c && i < nr; i++) {
        c += r[i];
        r[i] = (uint32_t)c;
        c >>= 32;
    }
}

static int mul_rec(code_vm *vm, uint32_t *r, const uint32_t *a, size_t na, const uint32_t *b,
                   size_t nb);

/* A much longer a than b: multiply b by slices of a as long as b, so each
 * product is balanced enough for Karatsuba. */
static int mul_unbalanced(code_vm *vm, uint32_t *r, const uint32_t *a, size_t na,
                          const uint32_t *b, size_t nb)
{
    uint32_t *t = code_heap_alloc(vm, 2 * nb * sizeof *t);
    if (!t)
        return -1;
    memset(r, 0, (na + nb) * sizeof *r);
    for (size_t off = 0; off < na; off += nb) {
        size_t k = na - off < nb ? na - off : nb;
        if (mul_rec(vm, t, b, nb, a + off, k)) {
            code_heap_free(vm, t, 2 * nb * sizeof *t);
            return -1;
        }
        add_into(r + off, na + nb - off, t, nb + k);
    }
    code_heap_free(vm, t, 2 * nb * sizeof *t);
    return 0;
}

/* na >= nb > na / 2 and nb >= cutoff: Karatsuba at h = na / 2. */
static int mul_karatsuba(code_vm *vm, uint32_t *r, const uint32_t *a, size_t na,
                         const uint32_t *b, size_t nb)
{
    size_t h = na / 2;
    const uint32_t *a0 = a, *a1 = a + h, *b0 = b, *b1 = b + h;
    size_t na1 = na - h, nb1 = nb - h;
    size_t ns = na1 + 1;                 /* a0 + a1 and b0 + b1 fit here */
    size_t nt = 4 * ns;
    uint32_t *t = code_heap_alloc(vm, nt * sizeof *t);
    if (!t)
        return -1;
    uint32_t *s1 = t, *s2 = t + ns, *z1 = t + 2 * ns;   /* z1: 2 * ns limbs */
    /* z0 = a0 b0 in r[0..2h), z2 = a1 b1 in r[2h..na+nb) */
    int rc = mul_rec(vm, r, a0, h, b0, h);
    if (!rc)
        rc = mul_rec(vm, r + 2 * h, a1, na1, b1, nb1);
    if (!rc) {
        size_t n1, n2;
        code_mag_add(s1, a1, na1, a0, h);
        n1 = code_mag_norm(s1, na1 + 1);
        if (nb1 >= h) {
            code_mag_add(s2, b1, nb1, b0, h);
            n2 = code_mag_norm(s2, nb1 + 1);
        } else {
            code_mag_add(s2, b0, h, b1, nb1);
            n2 = code_mag_norm(s2, h + 1);
        }
        memset(z1, 0, 2 * ns * sizeof *z1);
        if (n1 && n2) {
            if (n1 >= n2)
                rc = mul_rec(vm, z1, s1, n1, s2, n2);
            else
                rc = mul_rec(vm, z1, s2, n2, s1, n1);
        }
        if (!rc) {
            size_t nz = code_mag_norm(z1, 2 * ns);
            sub_into(z1, nz, r, 2 * h);
            sub_into(z1, nz, r + 2 * h, na1 + nb1);
            nz = code_mag_norm(z1, nz);
            add_into(r + h, na + nb - h, z1, nz);
        }
    }
    code_heap_free(vm, t, nt * sizeof *t);
    return rc;
}

/* na >= nb, r has na + nb limbs. */
static int mul_rec(code_vm *vm, uint32_t *r, const uint32_t *a, size_t na, const uint32_t *b,
                   size_t nb)
{
    if (nb < KARATSUBA_CUTOFF) {
        mul_school(r, a, na, b, nb);
        return 0;
    }
    if (2 * nb <= na)
        return mul_unbalanced(vm, r, a, na, b, nb);
    if (code_guard_enter(vm, "multiplication"))
        return -1;
    /* One huge product can take seconds: the time limit is checked at each
     * Karatsuba level large enough to matter. */
    if (nb >= 16 * KARATSUBA_CUTOFF && code_check_time_only(vm)) {
        code_guard_leave(vm);
        return -1;
    }
    int rc = mul_karatsuba(vm, r, a, na, b, nb);
    code_guard_leave(vm);
    return rc;
}

int code_mag_mul(code_vm *vm, uint32_t *r, const uint32_t *a, size_t na, const uint32_t *b,
                 size_t nb)
{
    if (na == 0 || nb == 0) {
        memset(r, 0, (na + nb) * sizeof *r);
        return 0;
    }
    return na >= nb ? mul_rec(vm, r, a, na, b, nb) : mul_rec(vm, r, b, nb, a, na);
}

uint32_t code_mag_muladd1(uint32_t *a, size_t n, uint32_t m, uint32_t add)
{
    uint64_t c = add;
    for (size_t i = 0; i < n; i++) {
        c += (uint64_t)a[i] * m;
        a[i] = (uint32_t)c;
        c >>= 32;
    }
    return (uint32_t)c;
}

uint32_t code_mag_divrem1(uint32_t *q, const uint32_t *a, size_t n, uint32_t d)
{
    uint64_t rem = 0;
    for (size_t i = n; i-- > 0;) {
        uint64_t cur = (rem << 32) | a[i];
        q[i] = (uint32_t)(cur / d);
        rem = cur % d;
    }
    return (uint32_t)rem;
}

uint64_t code_mag_bits(const uint32_t *a, size_t n)
{
    if (n == 0)
        return 0;
    return (uint64_t)(n - 1) * 32 + (32 - (uint64_t)__builtin_clz(a[n - 1]));
}

/* Knuth, TAOCP vol. 2, 4.3.1, algorithm D (after Hacker's Delight's divmnu):
 * normalise so the divisor's top limb has its high bit set, then estimate each
 * quotient limb from the top two limbs and correct it at most twice. */
int code_mag_divmod(code_vm *vm, uint32_t *q, uint32_t *r, const uint32_t *a, size_t na,
                    const uint32_t *b, size_t nb)
{
    size_t nt = (na + 1) + nb;
    uint32_t *un = code_heap_alloc(vm, nt * sizeof *un);
    if (!un)
        return -1;
    uint32_t *vn = un + na + 1;
    int s = __builtin_clz(b[nb - 1]);
    for (size_t i = nb - 1; i > 0; i--)
        vn[i] = (b[i] << s) | (s ? (uint32_t)((uint64_t)b[i - 1] >> (32 - s)) : 0);
    vn[0] = b[0] << s;
    un[na] = s ? (uint32_t)((uint64_t)a[na - 1] >> (32 - s)) : 0;
    for (size_t i = na - 1; i > 0; i--)
        un[i] = (a[i] << s) | (s ? (uint32_t)((uint64_t)a[i - 1] >> (32 - s)) : 0);
    un[0] = a[0] << s;

    const uint64_t B = (uint64_t)1 << 32;
    uint64_t work = 0;
    for (size_t j = na - nb + 1; j-- > 0;) {
        /* Long division is quadratic: the time limit is checked every few
         * million limb steps. */
        work += nb;
        if (work >= ((uint64_t)1 << 24)) {
            work = 0;
            if (code_check_time_only(vm)) {
                code_heap_free(vm, un, nt * sizeof *un);
                return -1;
            }
        }
        uint64_t num = ((uint64_t)un[j + nb] << 32) | un[j + nb - 1];
        uint64_t qhat = num / vn[nb - 1];
        uint64_t rhat = num % vn[nb - 1];
        while (qhat >= B || qhat * vn[nb - 2] > ((rhat << 32) | un[j + nb - 2])) {
            qhat--;
            rhat += vn[nb - 1];
            if (rhat >= B)
                break;
        }
        int64_t borrow = 0;
        uint64_t carry = 0;
        for (size_t i = 0; i < nb; i++) {
            uint64_t p = qhat * vn[i] + carry;
            carry = p >> 32;
            int64_t t = (int64_t)un[i + j] - borrow - (int64_t)(p & 0xffffffffu);
            un[i + j] = (uint32_t)t;
            borrow = t < 0 ? 1 : 0;
        }
        int64_t t = (int64_t)un[j + nb] - borrow - (int64_t)carry;
        un[j + nb] = (uint32_t)t;
        if (t < 0) {              /* qhat was one too big: add back */
            qhat--;
            uint64_t c = 0;
            for (size_t i = 0; i < nb; i++) {
                c += (uint64_t)un[i + j] + vn[i];
                un[i + j] = (uint32_t)c;
                c >>= 32;
            }
            un[j + nb] += (uint32_t)c;
        }
        if (q)
            q[j] = (uint32_t)qhat;
    }
    if (r) {
        for (size_t i = 0; i < nb - 1; i++)
            r[i] = (un[i] >> s) | (s ? (uint32_t)((uint64_t)un[i + 1] << (32 - s)) : 0);
        r[nb - 1] = un[nb - 1] >> s;
    }
    code_heap_free(vm, un, nt * sizeof *un);
    return 0;
}
