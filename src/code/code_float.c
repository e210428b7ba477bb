/* Code mode's floats: IEEE doubles boxed in code_float. Arithmetic, mixed
 * int/float comparison and hashing follow CPython exactly (the hash agrees
 * with ints' so 1 == 1.0 == True hash alike); repr is the shortest string
 * that reads back to the same double. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code/code_num.h"

cv code_float_new(code_vm *vm, double d)
{
    code_float *f = code_obj_new(vm, &code_type_float, sizeof(code_float));
    if (!f)
        return CV_NULL;
    f->v = d;
    return cv_of(f);
}

int code_as_double(code_vm *vm, cv v, double *out)
{
    if (code_is_float(v)) {
        *out = code_float_val(v);
        return 0;
    }
    if (code_is_int(v))
        return code_int_to_double(vm, v, out);
    return code_raise_i(vm, &code_exc_TypeError, "must be real number, not %s",
                        code_type_name(v));
}

/* ---- repr ------------------------------------------------------------- */

size_t code_float_repr_buf(double d, char *buf)
{
    if (isnan(d))
        return (size_t)sprintf(buf, "nan");
    if (isinf(d))
        return (size_t)sprintf(buf, d > 0 ? "inf" : "-inf");
    if (d == 0)
        return (size_t)sprintf(buf, signbit(d) ? "-0.0" : "0.0");
    /* The shortest digits that read back as d. Any string of 15 digits or
     * fewer that does is the 15-digit rounding of d (a double's interval is
     * narrower than half that grid's step), so 15 digits with their trailing
     * zeros dropped answer for every shorter length at once. At 16 and 17
     * the correctly rounded candidate may miss where a neighbour does: next
     * to a power of two the interval is lopsided (2**-97 is
     * 6.310887241768095e-30, not ...094). Subnormals have fewer digits:
     * every length is tried. */
    char tmp[40], dig[24];
    int nd = 0, exp = 0;
    bool neg = signbit(d);
    for (int p = isnormal(d) ? 15 : 1; p <= 17; p++) {
        snprintf(tmp, sizeof tmp, "%.*e", p - 1, fabs(d));
        uint64_t m = 0;
        const char *s = tmp;
        for (; *s != 'e'; s++)
            if (*s != '.')
                m = m * 10 + (uint64_t)(*s - '0');
        int e = atoi(s + 1) - (p - 1);         /* |d| ~ m * 10^e */
        uint64_t cand[3] = {m, m + 1, m - 1};
        int found = -1;
        for (int c = 0; c < 3 && found < 0; c++) {
            if (cand[c] == 0)
                continue;
            snprintf(tmp, sizeof tmp, "%llue%d", (unsigned long long)cand[c], e);
            if (strtod(tmp, NULL) == fabs(d))
                found = c;
        }
        if (found < 0 && p < 17)
            continue;
        if (found < 0)
            found = 0;
        nd = snprintf(dig, sizeof dig, "%llu", (unsigned long long)cand[found]);
        exp = e + nd - 1;
        break;
    }
    while (nd > 1 && dig[nd - 1] == '0')
        nd--;
    int decpt = exp + 1;           /* value = 0.DIGITS * 10^decpt */
    size_t o = 0;
    if (neg)
        buf[o++] = '-';
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) {
            buf[o++] = '0';
            buf[o++] = '.';
            for (int i = 0; i < -decpt; i++)
                buf[o++] = '0';
            memcpy(buf + o, dig, (size_t)nd);
            o += (size_t)nd;
        } else if (decpt >= nd) {
            memcpy(buf + o, dig, (size_t)nd);
            o += (size_t)nd;
            for (int i = nd; i < decpt; i++)
                buf[o++] = '0';
            buf[o++] = '.';
            buf[o++] = '0';
        } else {
            memcpy(buf + o, dig, (size_t)decpt);
            o += (size_t)decpt;
            buf[o++] = '.';
            memcpy(buf + o, dig + decpt, (size_t)(nd - decpt));
            o += (size_t)(nd - decpt);
        }
    } else {
        buf[o++] = dig[0];
        if (nd > 1) {
            buf[o++] = '.';
            memcpy(buf + o, dig + 1, (size_t)(nd - 1));
            o += (size_t)(nd - 1);
        }
        o += (size_t)sprintf(buf + o, "e%c%02d", exp < 0 ? '-' : '+', abs(exp));
    }
    buf[o] = 0;
    return o;
}

cv code_float_repr(code_vm *vm, double d)
{
    char buf[40];
    size_t n = code_float_repr_buf(d, buf);
    return code_str_new(vm, buf, n);
}

static cv float_repr_slot(code_vm *vm, cv self)
{
    return code_float_repr(vm, code_float_val(self));
}

/* ---- hash: CPython's _Py_HashDouble ------------------------------------ */

uint64_t code_float_hash(double v, cv self)
{
    const int bits = 61;
    const uint64_t mod = CODE_HASH_MODULUS;
    if (!isfinite(v)) {
        if (isinf(v))
            return (uint64_t)(v > 0 ? CODE_HASH_INF : -CODE_HASH_INF);
        /* CPython 3.10+ hashes a nan by its address; an address would
         * differ when a dumped run is replayed in another process, so every
         * nan hashes to 0, as before 3.10 (nans are never equal anyway) */
        (void)self;
        return 0;
    }
    int e;
    double m = frexp(v, &e);
    int sign = 1;
    if (m < 0) {
        sign = -1;
        m = -m;
    }
    uint64_t x = 0;
    while (m) {
        x = ((x << 28) & mod) | x >> (bits - 28);
        m *= 268435456.0;
        e -= 28;
        uint64_t y = (uint64_t)m;
        m -= (double)y;
        x += y;
        if (x >= mod)
            x -= mod;
    }
    e = e >= 0 ? e % bits : bits - 1 - ((-1 - e) % bits);
    x = ((x << e) & mod) | x >> (bits - e);
    x = sign < 0 ? (uint64_t)0 - x : x;
    if (x == (uint64_t)-1)
        x = (uint64_t)-2;
    return x;
}

static int float_hash_slot(code_vm *vm, cv self, uint64_t *h)
{
    (void)vm;
    *h = code_float_hash(code_float_val(self), self);
    return 0;
}

/* ---- comparison --------------------------------------------------------- */

static cv cmp_result(int c, int op)
{
    /* c: -1, 0, 1, or 2 for unordered (nan) */
    bool r;
    switch (op) {
    case CODE_CMP_LT: r = c == -1; break;
    case CODE_CMP_LE: r = c == -1 || c == 0; break;
    case CODE_CMP_EQ: r = c == 0; break;
    case CODE_CMP_NE: r = c != 0; break;
    case CODE_CMP_GT: r = c == 1; break;
    default: r = c == 1 || c == 0; break;
    }
    return code_bool(r);
}

cv code_float_compare(code_vm *vm, cv a, cv b, int op)
{
    (void)vm;
    int c;
    if (code_is_float(a) && code_is_float(b)) {
        double x = code_float_val(a), y = code_float_val(b);
        c = isnan(x) || isnan(y) ? 2 : x < y ? -1 : x > y;
    } else if (code_is_float(a) && code_is_int(b)) {
        c = code_int_cmp_double(b, code_float_val(a));
        c = c == 2 ? 2 : -c;
    } else if (code_is_int(a) && code_is_float(b)) {
        c = code_int_cmp_double(a, code_float_val(b));
    } else if (code_is_int(a) && code_is_int(b)) {
        c = code_int_cmp(a, b);
    } else
        return CODE_NOTIMPL;
    return cmp_result(c, op);
}

/* ---- arithmetic --------------------------------------------------------- */

int code_float_divmod(code_vm *vm, double vx, double wx, double *divp, double *modp,
                      const char *zero_msg)
{
    if (wx == 0)
        return code_raise_i(vm, &code_exc_ZeroDivisionError, "%s", zero_msg);
    double mod = fmod(vx, wx), div = (vx - mod) / wx, floordiv;
    if (mod) {
        if ((wx < 0) != (mod < 0)) {
            mod += wx;
            div -= 1.0;
        }
    } else
        mod = copysign(0.0, wx);
    if (div) {
        floordiv = floor(div);
        if (div - floordiv > 0.5)
            floordiv += 1.0;
    } else
        floordiv = copysign(0.0, vx / wx);
    if (divp)
        *divp = floordiv;
    if (modp)
        *modp = mod;
    return 0;
}

static bool is_odd_integer(double x)
{
    return fmod(fabs(x), 2.0) == 1.0;
}

cv code_float_pow(code_vm *vm, double iv, double iw)
{
    if (iw == 0)
        return code_float_new(vm, 1.0);
    if (isnan(iv))
        return code_float_new(vm, iv);
    if (isnan(iw))
        return code_float_new(vm, iv == 1.0 ? 1.0 : iw);
    if (isinf(iw)) {
        iv = fabs(iv);
        if (iv == 1.0)
            return code_float_new(vm, 1.0);
        return code_float_new(vm, (iw > 0.0) == (iv > 1.0) ? fabs(iw) : 0.0);
    }
    if (isinf(iv)) {
        bool odd = is_odd_integer(iw);
        if (iw > 0.)
            return code_float_new(vm, odd ? iv : fabs(iv));
        return code_float_new(vm, odd ? copysign(0.0, iv) : 0.0);
    }
    if (iv == 0.0) {
        if (iw < 0.0)
            return code_raise(vm, &code_exc_ZeroDivisionError,
                              "0.0 cannot be raised to a negative power");
        return code_float_new(vm, is_odd_integer(iw) ? iv : 0.0);
    }
    bool negate = false;
    if (iv < 0.0) {
        if (iw != floor(iw)) {
            /* CPython answers a complex number (cella has none), or fails
             * computing it when its modulus overflows */
            if (isinf(pow(-iv, iw)))
                return code_raise(vm, &code_exc_OverflowError, "complex exponentiation");
            return code_raise(vm, &code_exc_ValueError,
                              "negative number cannot be raised to a fractional power");
        }
        iv = -iv;
        negate = is_odd_integer(iw);
    }
    if (iv == 1.0)
        return code_float_new(vm, negate ? -1.0 : 1.0);
    double ix = pow(iv, iw);
    if (isinf(ix))
        return code_raise(vm, &code_exc_OverflowError, "(34, 'Numerical result out of range')");
    return code_float_new(vm, negate ? -ix : ix);
}

/* a or b is a float, the other a float or an int. */
cv code_float_binop(code_vm *vm, int op, cv a, cv b)
{
    double x, y, r;
    if (!(code_is_float(a) || code_is_int(a)) || !(code_is_float(b) || code_is_int(b)))
        return CODE_NOTIMPL;
    if (op > CODE_OP_POW)
        return CODE_NOTIMPL;
    if (code_as_double(vm, a, &x) || code_as_double(vm, b, &y))
        return CV_NULL;
    switch (op) {
    case CODE_OP_ADD: r = x + y; break;
    case CODE_OP_SUB: r = x - y; break;
    case CODE_OP_MUL: r = x * y; break;
    case CODE_OP_TRUEDIV:
        if (y == 0)
            return code_raise(vm, &code_exc_ZeroDivisionError, "float division by zero");
        r = x / y;
        break;
    case CODE_OP_FLOORDIV:
        if (code_float_divmod(vm, x, y, &r, NULL, "float floor division by zero"))
            return CV_NULL;
        break;
    case CODE_OP_MOD:
        if (code_float_divmod(vm, x, y, NULL, &r, "float modulo"))
            return CV_NULL;
        break;
    case CODE_OP_POW:
        return code_float_pow(vm, x, y);
    default:
        return CODE_NOTIMPL;
    }
    return code_float_new(vm, r);
}

static cv float_unop(code_vm *vm, int op, cv a)
{
    double x = code_float_val(a);
    if (op == CODE_UOP_NEG)
        return code_float_new(vm, -x);
    if (op == CODE_UOP_POS)
        return code_incref(a);
    return code_raise(vm, &code_exc_TypeError, "bad operand type for unary ~: 'float'");
}

static int float_truth(code_vm *vm, cv self)
{
    (void)vm;
    return code_float_val(self) != 0;
}

/* ---- float(x) -------------------------------------------------------------- */

static bool ascii_ieq(const char *s, size_t n, const char *word)
{
    size_t k = strlen(word);
    if (n != k)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((s[i] | 0x20) != word[i])
            return false;
    return true;
}

/* digits with single underscores between them; advances *i; the count. */
static size_t scan_digits(const char *s, size_t n, size_t *i, char *out, size_t *o)
{
    size_t cnt = 0;
    while (*i < n) {
        char c = s[*i];
        if (c >= '0' && c <= '9') {
            out[(*o)++] = c;
            cnt++;
            (*i)++;
        } else if (c == '_' && cnt > 0 && *i + 1 < n && s[*i + 1] >= '0' && s[*i + 1] <= '9') {
            (*i)++;
        } else
            break;
    }
    return cnt;
}

cv code_float_parse(code_vm *vm, const char *str, size_t len, cv orig)
{
    size_t lo, hi;
    code_num_strip(str, len, &lo, &hi);
    const char *s = str + lo;
    size_t n = hi - lo, i = 0, o = 0;
    char *out = code_heap_alloc(vm, n + 2);
    if (!out)
        return CV_NULL;
    bool bad = false, neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) {
        neg = s[i] == '-';
        out[o++] = s[i++];
    }
    double r = 0;
    if (ascii_ieq(s + i, n - i, "inf") || ascii_ieq(s + i, n - i, "infinity")) {
        r = neg ? -INFINITY : INFINITY;
    } else if (ascii_ieq(s + i, n - i, "nan")) {
        r = neg ? -NAN : NAN;
    } else {
        size_t a = scan_digits(s, n, &i, out, &o), b = 0;
        if (i < n && s[i] == '.') {
            out[o++] = s[i++];
            b = scan_digits(s, n, &i, out, &o);
        }
        bad = a + b == 0;
        if (!bad && i < n && (s[i] == 'e' || s[i] == 'E')) {
            out[o++] = s[i++];
            if (i < n && (s[i] == '+' || s[i] == '-'))
                out[o++] = s[i++];
            bad = scan_digits(s, n, &i, out, &o) == 0;
        }
        if (i != n)
            bad = true;
        out[o] = 0;
        if (!bad)
            r = strtod(out, NULL);
    }
    code_heap_free(vm, out, n + 2);
    if (bad)
        return code_num_bad_literal(vm, &code_exc_ValueError,
                                    "could not convert string to float: ", orig, false);
    return code_float_new(vm, r);
}

static cv float_new(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kwnames)
{
    (void)t;
    if (kwnames && ((code_tuple *)cv_obj(kwnames))->n)
        return code_raise(vm, &code_exc_TypeError, "float() takes no keyword arguments");
    if (nargs > 1)
        return code_raise(vm, &code_exc_TypeError, "float expected at most 1 argument, got %zu",
                          nargs);
    if (nargs == 0)
        return code_float_new(vm, 0.0);
    cv x = args[0];
    double d;
    if (cv_is(x, &code_type_float))
        return code_incref(x);
    if (code_is_int(x))
        return code_int_to_double(vm, x, &d) ? CV_NULL : code_float_new(vm, d);
    if (cv_is(x, &code_type_str))
        return code_num_parse_str(vm, x, 0, true);
    if (cv_is(x, &code_type_bytes)) {
        code_bytes *b = (code_bytes *)cv_obj(x);
        return code_float_parse(vm, (const char *)b->s, b->len, x);
    }
    return code_raise(vm, &code_exc_TypeError,
                      "float() argument must be a string or a real number, not '%s'",
                      code_type_name(x));
}

/* ---- methods ------------------------------------------------------------------ */

static cv m_is_integer(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "is_integer", nargs, kwnames, 1, 1))
        return CV_NULL;
    double d = code_float_val(args[0]);
    return code_bool(isfinite(d) && floor(d) == d);
}

static cv m_conjugate(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "conjugate", nargs, kwnames, 1, 1))
        return CV_NULL;
    return code_incref(args[0]);
}

static const code_method float_methods[] = {
    {"is_integer", m_is_integer},
    {"as_integer_ratio", code_float_method_as_integer_ratio},
    {"hex", code_float_method_hex},
    {"fromhex", code_float_method_fromhex},
    {"conjugate", m_conjugate},
    {NULL, NULL},
};

static cv float_getattr(code_vm *vm, cv self, const char *name)
{
    if (!strcmp(name, "real"))
        return code_incref(self);
    if (!strcmp(name, "imag"))
        return code_float_new(vm, 0.0);
    return CV_NULL;
}

const code_type code_type_float = {
    .ob = {&code_type_type, CODE_RC_IMMORTAL, 0},
    .name = "float",
    .kind = CODE_K_FLOAT,
    .repr = float_repr_slot,
    .hash = float_hash_slot,
    .compare = code_float_compare,
    .binop = code_float_binop,
    .unop = float_unop,
    .truth = float_truth,
    .getattr = float_getattr,
    .methods = float_methods,
    .new = float_new,
};
