/* Code mode's int <-> text: decimal repr, bin/oct/hex, and parsing (literal
 * digits and int()'s strings). Decimal conversion is quadratic (chunks of
 * 10^9): CPython's 4300-digit limit on non power-of-two bases, which cella
 * keeps, bounds it at a few hundred limbs, where sub-quadratic methods would
 * not pay off. */
#include <stdio.h>
#include <string.h>

#include "code/code_num.h"
#include "code/code_strutil.h"

#define LIMIT_MSG "Exceeds the limit (4300 digits) for integer string conversion"
#define LIMIT_TAIL "use sys.set_int_max_str_digits() to increase the limit"

cv code_int_repr(code_vm *vm, cv v)
{
    char buf[32];
    int64_t i;
    if (code_int_to_i64(v, &i)) {
        /* by hand: str() of small ints is hot (f-strings, print) */
        char *p = buf + sizeof buf;
        uint64_t m = i < 0 ? 0 - (uint64_t)i : (uint64_t)i;
        do {
            *--p = (char)('0' + m % 10);
            m /= 10;
        } while (m);
        if (i < 0)
            *--p = '-';
        return code_str_new(vm, p, (size_t)(buf + sizeof buf - p));
    }
    code_intview a;
    code_intview_of(&a, v);
    uint64_t bits = code_mag_bits(a.d, a.n);
    /* More than 14300 bits is surely more than 4300 digits. */
    if (bits > 14300)
        return code_raise(vm, &code_exc_ValueError, LIMIT_MSG "; " LIMIT_TAIL);
    size_t nchunks = (size_t)(bits / 29) + 2;
    size_t scratch = (a.n + nchunks) * 4;
    uint32_t *t = code_heap_alloc(vm, scratch);
    if (!t)
        return CV_NULL;
    uint32_t *chunk = t + a.n;
    memcpy(t, a.d, a.n * 4);
    size_t n = a.n, k = 0;
    while (n > 0) {
        chunk[k++] = code_mag_divrem1(t, t, n, 1000000000u);
        n = code_mag_norm(t, n);
    }
    /* 9 digits per chunk, the top one without its leading zeros */
    size_t ndig = (size_t)snprintf(buf, sizeof buf, "%u", chunk[k - 1]) + 9 * (k - 1);
    if (ndig > CODE_INT_MAX_STR_DIGITS) {
        code_heap_free(vm, t, scratch);
        return code_raise(vm, &code_exc_ValueError, LIMIT_MSG "; " LIMIT_TAIL);
    }
    code_sb b;
    code_sb_init(&b, vm);
    if (a.sign < 0)
        code_sb_add(&b, "-", 1);
    code_sb_printf(&b, "%u", chunk[k - 1]);
    for (size_t j = k - 1; j-- > 0;)
        code_sb_printf(&b, "%09u", chunk[j]);
    code_heap_free(vm, t, scratch);
    return code_sb_finish(&b);
}

/* bin, oct, hex: base 2, 8 or 16, with the "0b"/"0o"/"0x" prefix. */
cv code_int_to_str_base(code_vm *vm, cv v, int base)
{
    if (!code_is_int(v))
        return code_raise(vm, &code_exc_TypeError,
                          "'%s' object cannot be interpreted as an integer", code_type_name(v));
    if (base == 10)
        return code_int_repr(vm, v);
    int k = base == 2 ? 1 : base == 8 ? 3 : 4;
    char pc = base == 2 ? 'b' : base == 8 ? 'o' : 'x';
    code_intview a;
    code_intview_of(&a, v);
    uint64_t bits = code_mag_bits(a.d, a.n);
    uint64_t ndig = bits ? (bits + (uint64_t)k - 1) / (uint64_t)k : 1;
    if (code_int_check_size(vm, ndig / 4 + 2))
        return CV_NULL;
    size_t len = (size_t)ndig + 2 + (a.sign < 0);
    char *p = code_heap_alloc(vm, len);
    if (!p)
        return CV_NULL;
    size_t o = 0;
    if (a.sign < 0)
        p[o++] = '-';
    p[o++] = '0';
    p[o++] = pc;
    for (uint64_t d = ndig; d-- > 0;) {
        unsigned val = 0;
        for (int j = k - 1; j >= 0; j--) {
            uint64_t bit = d * (uint64_t)k + (uint64_t)j;
            unsigned b = bit < bits ? (a.d[bit / 32] >> (bit % 32)) & 1 : 0;
            val = (val << 1) | b;
        }
        p[o++] = "0123456789abcdef"[val];
    }
    cv s = code_str_new(vm, p, o);
    code_heap_free(vm, p, len);
    return s;
}

static int digit_val(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'Z')
        return c - 'A' + 10;
    return 99;
}

cv code_int_from_digits(code_vm *vm, const char *digits, size_t n, int base, bool negative)
{
    if (base < 2 || base > 36)
        return code_raise(vm, &code_exc_ValueError, "int() base must be >= 2 and <= 36, or 0");
    /* CPython counts leading zeros against the limit too */
    if ((base & (base - 1)) != 0 && n > CODE_INT_MAX_STR_DIGITS)
        return code_raise(vm, &code_exc_ValueError,
                          LIMIT_MSG ": value has %zu digits; " LIMIT_TAIL, n);
    while (n > 1 && digits[0] == '0') {
        digits++;
        n--;
    }
    for (size_t i = 0; i < n; i++)
        if (digit_val((unsigned char)digits[i]) >= base)
            return code_raise(vm, &code_exc_ValueError, "invalid digit '%c' in base %d",
                              digits[i], base);
    if (n == 0)
        return cv_from_small(0);
    if (n < 18 && base <= 10) {
        int64_t v = 0;
        for (size_t i = 0; i < n; i++)
            v = v * base + digit_val((unsigned char)digits[i]);
        return cv_from_small(negative ? -v : v);
    }
    bool pow2 = (base & (base - 1)) == 0;
    code_bigint *r;
    if (pow2) {
        int k = __builtin_ctz((unsigned)base);
        uint64_t bits = (uint64_t)n * (uint64_t)k;
        if (!(r = code_bigint_alloc(vm, bits / 32 + 1)))
            return CV_NULL;
        uint64_t bit = 0;
        for (size_t i = n; i-- > 0; bit += (uint64_t)k) {
            uint64_t d = (uint64_t)digit_val((unsigned char)digits[i]) << (bit % 32);
            r->limb[bit / 32] |= (uint32_t)d;
            if (d >> 32)
                r->limb[bit / 32 + 1] |= (uint32_t)(d >> 32);
        }
    } else {
        /* digits per chunk: base^c < 2^32 */
        uint32_t c = 1, bc = (uint32_t)base;
        while ((uint64_t)bc * (uint32_t)base < ((uint64_t)1 << 32)) {
            bc *= (uint32_t)base;
            c++;
        }
        if (!(r = code_bigint_alloc(vm, (size_t)(n * 6 / 32) + 2)))   /* log2(36) < 6 */
            return CV_NULL;
        size_t used = 0, i = 0;
        while (i < n) {
            uint32_t chunk = 0, mul = 1;
            for (uint32_t j = 0; j < c && i < n; j++, i++) {
                chunk = chunk * (uint32_t)base + (uint32_t)digit_val((unsigned char)digits[i]);
                mul *= (uint32_t)base;
            }
            /* with no limbs yet, the carry out is the chunk itself */
            uint32_t carry = code_mag_muladd1(r->limb, used, mul, chunk);
            if (carry)
                r->limb[used++] = carry;
        }
    }
    r->sign = negative ? -1 : 1;
    return code_bigint_finish(vm, r);
}

/* Python's whitespace at s (ASCII and the UTF-8 encoded Unicode spaces):
 * its length in bytes, 0 if none. */
static size_t space_len(const unsigned char *s, size_t n)
{
    if (n >= 1 && (s[0] == ' ' || (s[0] >= '\t' && s[0] <= '\r') || (s[0] >= 0x1c && s[0] <= 0x1f)))
        return 1;
    if (n >= 2 && s[0] == 0xc2 && (s[1] == 0x85 || s[1] == 0xa0))
        return 2;
    if (n >= 3 && s[0] == 0xe1 && s[1] == 0x9a && s[2] == 0x80)
        return 3;
    if (n >= 3 && s[0] == 0xe2 && s[1] == 0x80 &&
        ((s[2] >= 0x80 && s[2] <= 0x8a) || s[2] == 0xa8 || s[2] == 0xa9 || s[2] == 0xaf))
        return 3;
    if (n >= 3 && s[0] == 0xe2 && s[1] == 0x81 && s[2] == 0x9f)
        return 3;
    if (n >= 3 && s[0] == 0xe3 && s[1] == 0x80 && s[2] == 0x80)
        return 3;
    return 0;
}

/* s[*lo..*hi) without Python whitespace at either end. */
void code_num_strip(const char *s, size_t n, size_t *lo, size_t *hi)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t a = 0, b = n, k;
    while (a < b && (k = space_len(u + a, b - a)))
        a += k;
    while (b > a) {
        size_t m = 0;
        for (size_t back = 1; back <= 3 && back <= b - a; back++)
            if (space_len(u + b - back, back) == back) {
                m = back;
                break;
            }
        if (!m)
            break;
        b -= m;
    }
    *lo = a;
    *hi = b;
}

/* The message's repr of the original, cut to 200 characters when cut
 * (CPython's "%.200R": the closing quote goes too). */
cv code_num_bad_literal(code_vm *vm, const code_type *t, const char *prefix, cv orig, bool cut)
{
    if (!orig)
        return code_raise(vm, t, "%sthe string", prefix);
    cv r = code_repr(vm, orig);
    if (!r)
        return CV_NULL;
    const char *s = code_str_cstr(r);
    size_t i = 0, chars = 0, len = code_str_len(r);
    while (i < len && (!cut || chars < 200)) {
        i++;
        while (i < len && ((unsigned char)s[i] & 0xc0) == 0x80)
            i++;
        chars++;
    }
    code_raise(vm, t, "%s%.*s", prefix, (int)i, s);
    code_decref(vm, r);
    return CV_NULL;
}

cv code_int_parse(code_vm *vm, const char *s, size_t n, int base, cv orig)
{
    size_t lo, hi;
    int given = base;
    char prefix[64];
    if (base != 0 && (base < 2 || base > 36))
        return code_raise(vm, &code_exc_ValueError, "int() base must be >= 2 and <= 36, or 0");
    code_num_strip(s, n, &lo, &hi);
    bool neg = false;
    if (lo < hi && (s[lo] == '+' || s[lo] == '-'))
        neg = s[lo++] == '-';
    bool prefixed = false;
    if (hi - lo >= 2 && s[lo] == '0') {
        char c = (char)(s[lo + 1] | 0x20);
        int pb = c == 'x' ? 16 : c == 'o' ? 8 : c == 'b' ? 2 : 0;
        if (pb && (base == 0 || base == pb)) {
            base = pb;
            lo += 2;
            prefixed = true;
        }
    }
    bool zero_lead = false;
    if (base == 0) {
        base = 10;
        zero_lead = lo < hi && s[lo] == '0';
    }
    char *d = code_heap_alloc(vm, hi - lo + 1);
    if (!d)
        return CV_NULL;
    size_t nd = 0;
    bool ok = lo < hi, prev_us = !prefixed;   /* "0x_1" is allowed, "_1" not */
    for (size_t i = lo; ok && i < hi; i++) {
        if (s[i] == '_') {
            ok = !prev_us;
            prev_us = true;
            continue;
        }
        if (digit_val((unsigned char)s[i]) >= base || (zero_lead && s[i] != '0'))
            ok = false;
        d[nd++] = s[i];
        prev_us = false;
    }
    if (ok && (prev_us || nd == 0))
        ok = false;
    cv r = CV_NULL;
    if (ok)
        r = code_int_from_digits(vm, d, nd, base, neg);
    code_heap_free(vm, d, hi - lo + 1);
    if (ok)
        return r;
    snprintf(prefix, sizeof prefix, "invalid literal for int() with base %d: ", given);
    return code_num_bad_literal(vm, &code_exc_ValueError, prefix, orig, true);
}

/* A str as int() and float() read it, as CPython's
 * _PyUnicode_TransformDecimalAndSpaceToASCII: Unicode spaces become ' ',
 * decimal digits of every script their ASCII digit, other non-ASCII
 * characters '?' (invalid). ASCII strings are used as they are. */
cv code_num_parse_str(code_vm *vm, cv str, int base, bool is_float)
{
    const code_str *o = (const code_str *)cv_obj(str);
    if (o->ascii)
        return is_float ? code_float_parse(vm, o->s, o->len, str)
                        : code_int_parse(vm, o->s, o->len, base, str);
    char *t = code_heap_alloc(vm, o->len + 1);
    if (!t)
        return CV_NULL;
    size_t i = 0, n = 0;
    while (i < o->len) {
        size_t next;
        if (code_str_space_at(o->s, i, &next)) {
            t[n++] = ' ';
            i = next;
            continue;
        }
        uint32_t cp = code_utf8_next(o->s, &i);
        int dv = cp < 0x80 ? -1 : code_udecimal(cp);
        t[n++] = cp < 0x80 ? (char)cp : dv >= 0 ? (char)('0' + dv) : '?';
    }
    cv r = is_float ? code_float_parse(vm, t, n, str) : code_int_parse(vm, t, n, base, str);
    code_heap_free(vm, t, o->len + 1);
    return r;
}
