/* The int and bool types: their slots, int()/bool(), and int's methods. */
#include <stdlib.h>
#include <string.h>

#include "code/code_num.h"

/* int(v) for an int or a bool: bools become plain ints. */
static cv as_plain_int(cv v)
{
    if (cv_is(v, &code_type_bool))
        return cv_from_small(v == CODE_TRUE);
    return code_incref(v);
}

static cv int_repr(code_vm *vm, cv self)
{
    return code_int_repr(vm, self);
}

static int int_hash(code_vm *vm, cv self, uint64_t *h)
{
    (void)vm;
    *h = code_int_hash(self);
    return 0;
}

static cv int_binop(code_vm *vm, int op, cv a, cv b)
{
    if (code_is_int(a) && code_is_int(b)) {
        if (cv_is(a, &code_type_bool) && cv_is(b, &code_type_bool) &&
            (op == CODE_OP_AND || op == CODE_OP_OR || op == CODE_OP_XOR)) {
            bool x = a == CODE_TRUE, y = b == CODE_TRUE;
            return code_bool(op == CODE_OP_AND ? x && y : op == CODE_OP_OR ? x || y : x != y);
        }
        return code_int_binop(vm, op, a, b);
    }
    if ((code_is_float(a) && code_is_int(b)) || (code_is_int(a) && code_is_float(b)))
        return code_float_binop(vm, op, a, b);
    return CODE_NOTIMPL;
}

static cv int_unop(code_vm *vm, int op, cv a)
{
    if (op == CODE_UOP_NEG)
        return code_int_neg(vm, a);
    if (op == CODE_UOP_POS)
        return as_plain_int(a);
    return code_int_binop(vm, CODE_OP_SUB, cv_from_small(-1), a);   /* ~a == -1 - a */
}

static int int_truth(code_vm *vm, cv self)
{
    (void)vm;
    return code_int_sign(self) != 0;
}

static cv int_getattr(code_vm *vm, cv self, const char *name)
{
    (void)vm;
    if (!strcmp(name, "real") || !strcmp(name, "numerator"))
        return as_plain_int(self);
    if (!strcmp(name, "imag"))
        return cv_from_small(0);
    if (!strcmp(name, "denominator"))
        return cv_from_small(1);
    return CV_NULL;
}

static cv int_new(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kwnames)
{
    (void)t;
    cv x = CV_NULL, basev = CV_NULL;
    size_t nkw = kwnames ? ((code_tuple *)cv_obj(kwnames))->n : 0;
    if (nargs + nkw > 2)
        return code_raise(vm, &code_exc_TypeError, "int() takes at most 2 arguments (%zu given)",
                          nargs + nkw);
    for (size_t i = 0; i < nkw; i++) {
        cv k = ((code_tuple *)cv_obj(kwnames))->v[i];
        if (!code_str_eq_cstr(k, "base") || nargs > 1)
            return code_raise(vm, &code_exc_TypeError,
                              code_str_eq_cstr(k, "base")
                                  ? "argument for int() given by name ('base') and position (2)"
                                  : "'%s' is an invalid keyword argument for int()",
                              code_str_cstr(k));
        basev = args[nargs + i];
    }
    if (nargs >= 1)
        x = args[0];
    if (nargs == 2)
        basev = args[1];
    if (!x) {
        if (basev)
            return code_raise(vm, &code_exc_TypeError, "int() missing string argument");
        return cv_from_small(0);
    }
    if (basev) {
        int64_t base;
        if (code_as_i64(vm, basev, &base))
            return CV_NULL;
        if (base != 0 && (base < 2 || base > 36))
            return code_raise(vm, &code_exc_ValueError,
                              "int() base must be >= 2 and <= 36, or 0");
        if (cv_is(x, &code_type_str))
            return code_num_parse_str(vm, x, (int)base, false);
        if (cv_is(x, &code_type_bytes)) {
            code_bytes *b = (code_bytes *)cv_obj(x);
            return code_int_parse(vm, (const char *)b->s, b->len, (int)base, x);
        }
        return code_raise(vm, &code_exc_TypeError,
                          "int() can't convert non-string with explicit base");
    }
    if (code_is_int(x))
        return as_plain_int(x);
    if (code_is_float(x))
        return code_int_from_double(vm, code_float_val(x));
    if (cv_is(x, &code_type_str))
        return code_num_parse_str(vm, x, 10, false);
    if (cv_is(x, &code_type_bytes)) {
        code_bytes *b = (code_bytes *)cv_obj(x);
        return code_int_parse(vm, (const char *)b->s, b->len, 10, x);
    }
    return code_raise(vm, &code_exc_TypeError,
                      "int() argument must be a string, a bytes-like object or a real "
                      "number, not '%s'",
                      code_type_name(x));
}

/* ---- methods --------------------------------------------------------------- */

static cv m_bit_length(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "bit_length", nargs, kwnames, 1, 1))
        return CV_NULL;
    return code_int_from_u64(vm, code_int_bit_length(args[0]));
}

static cv m_bit_count(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "bit_count", nargs, kwnames, 1, 1))
        return CV_NULL;
    code_intview a;
    code_intview_of(&a, args[0]);
    uint64_t c = 0;
    for (size_t i = 0; i < a.n; i++)
        c += (uint64_t)__builtin_popcount(a.d[i]);
    return code_int_from_u64(vm, c);
}

static cv m_self_int(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "conjugate", nargs, kwnames, 1, 1))
        return CV_NULL;
    return as_plain_int(args[0]);
}

static cv m_is_integer(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "is_integer", nargs, kwnames, 1, 1))
        return CV_NULL;
    return CODE_TRUE;
}

static cv m_as_integer_ratio(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "as_integer_ratio", nargs, kwnames, 1, 1))
        return CV_NULL;
    cv n = as_plain_int(args[0]);
    cv r = code_tuple_pack(vm, 2, n, cv_from_small(1));
    code_decref(vm, n);
    return r;
}

static int byteorder_of(code_vm *vm, cv bo, bool *little)
{
    if (!bo) {
        *little = false;
        return 0;
    }
    if (!cv_is(bo, &code_type_str))
        return code_raise_i(vm, &code_exc_TypeError,
                            "to_bytes() argument 'byteorder' must be str, not %s",
                            code_type_name(bo));
    if (code_str_eq_cstr(bo, "little") || code_str_eq_cstr(bo, "big")) {
        *little = code_str_eq_cstr(bo, "little");
        return 0;
    }
    return code_raise_i(vm, &code_exc_ValueError, "byteorder must be either 'little' or 'big'");
}

static cv m_to_bytes(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    cv lenv = CV_NULL, bo = CV_NULL, sg = CV_NULL;
    if (code_args(vm, "to_bytes", args + 1, nargs - 1, kwnames, "|length,byteorder,*,signed",
                  &lenv, &bo, &sg))
        return CV_NULL;
    int64_t len = 1;
    bool little, is_signed = false;
    if (lenv && code_as_i64(vm, lenv, &len))
        return CV_NULL;
    if (len < 0)
        return code_raise(vm, &code_exc_ValueError, "length argument must be non-negative");
    if (byteorder_of(vm, bo, &little))
        return CV_NULL;
    if (sg) {
        int t = code_truth(vm, sg);
        if (t < 0)
            return CV_NULL;
        is_signed = t;
    }
    code_intview a;
    code_intview_of(&a, args[0]);
    if (a.sign < 0 && !is_signed)
        return code_raise(vm, &code_exc_OverflowError, "can't convert negative int to unsigned");
    /* fits: unsigned needs bits <= 8 len; signed -2^(8len-1) <= v < 2^(8len-1) */
    uint64_t bits = code_mag_bits(a.d, a.n);
    bool fits;
    if (!is_signed)
        fits = bits <= (uint64_t)len * 8;
    else if (a.sign >= 0)
        fits = bits < (uint64_t)len * 8 || a.n == 0;
    else {
        /* -2^k is the one negative with k+1 bits that fits in k+1 signed bits */
        bool pow2 = true;
        for (size_t i = 0; i + 1 < a.n; i++)
            pow2 &= a.d[i] == 0;
        pow2 &= (a.d[a.n - 1] & (a.d[a.n - 1] - 1)) == 0;
        fits = bits < (uint64_t)len * 8 || (pow2 && bits == (uint64_t)len * 8);
        fits |= len == 0 && a.n == 1 && a.d[0] == 1;    /* CPython: -1 in no bytes is b'' */
    }
    if (!fits)
        return code_raise(vm, &code_exc_OverflowError, "int too big to convert");
    if (code_int_check_size(vm, (uint64_t)len / 4 + 1))
        return CV_NULL;
    unsigned char *p = code_heap_alloc(vm, (size_t)len + 1);
    if (!p)
        return CV_NULL;
    /* little-endian two's complement, then reversed for big */
    uint64_t borrow = a.sign < 0;
    for (int64_t i = 0; i < len; i++) {
        size_t li = (size_t)i / 4;
        unsigned byte = li < a.n ? (a.d[li] >> (8 * (i % 4))) & 0xff : 0;
        if (a.sign < 0) {
            uint64_t v = (uint64_t)(~byte & 0xff) + borrow;
            byte = (unsigned)(v & 0xff);
            borrow = v >> 8;
        }
        p[i] = (unsigned char)byte;
    }
    if (!little)
        for (int64_t i = 0, j = len - 1; i < j; i++, j--) {
            unsigned char t = p[i];
            p[i] = p[j];
            p[j] = t;
        }
    cv r = code_bytes_new(vm, p, (size_t)len);
    code_heap_free(vm, p, (size_t)len + 1);
    return r;
}

/* int.from_bytes(b, ...) and x.from_bytes(b, ...): a leading type or int is
 * the receiver, not the data. */
static cv m_from_bytes(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (nargs > 0 && (cv_is(args[0], &code_type_type) || code_is_int(args[0]))) {
        args++;
        nargs--;
    }
    cv data = CV_NULL, bo = CV_NULL, sg = CV_NULL;
    if (code_args(vm, "from_bytes", args, nargs, kwnames, "bytes,|byteorder,*,signed", &data,
                  &bo, &sg))
        return CV_NULL;
    bool little, is_signed = false;
    if (byteorder_of(vm, bo, &little))
        return CV_NULL;
    if (sg) {
        int t = code_truth(vm, sg);
        if (t < 0)
            return CV_NULL;
        is_signed = t;
    }
    cv owned = CV_NULL;
    if (!cv_is(data, &code_type_bytes)) {
        /* an iterable of ints in 0..255 (bytes(data), as CPython) */
        cv lst = code_list_from(vm, data);
        if (!lst)
            return CV_NULL;
        code_list *l = (code_list *)cv_obj(lst);
        unsigned char *tmp = code_heap_alloc(vm, l->n + 1);
        if (!tmp) {
            code_decref(vm, lst);
            return CV_NULL;
        }
        for (size_t i = 0; i < l->n; i++) {
            int64_t v;
            if (code_as_i64(vm, l->v[i], &v) || v < 0 || v > 255) {
                if (!vm->exc)
                    code_raise(vm, &code_exc_ValueError, "bytes must be in range(0, 256)");
                code_heap_free(vm, tmp, l->n + 1);
                code_decref(vm, lst);
                return CV_NULL;
            }
            tmp[i] = (unsigned char)v;
        }
        owned = code_bytes_new(vm, tmp, l->n);
        code_heap_free(vm, tmp, l->n + 1);
        code_decref(vm, lst);
        if (!owned)
            return CV_NULL;
        data = owned;
    }
    code_bytes *b = (code_bytes *)cv_obj(data);
    size_t n = b->len;
    code_bigint *r = code_bigint_alloc(vm, n / 4 + 1);
    if (!r) {
        code_decref(vm, owned);
        return CV_NULL;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char byte = little ? b->s[i] : b->s[n - 1 - i];
        r->limb[i / 4] |= (uint32_t)byte << (8 * (i % 4));
    }
    bool neg = is_signed && n > 0 && ((little ? b->s[n - 1] : b->s[0]) & 0x80);
    if (neg) {
        /* magnitude = 2^(8n) - value: complement and add one within n bytes */
        uint64_t c = 1;
        size_t nl = n / 4 + 1;
        for (size_t i = 0; i < nl; i++) {
            uint32_t mask = i < n / 4 ? 0xffffffffu
                            : (n % 4 && i == n / 4) ? (uint32_t)((1ull << (8 * (n % 4))) - 1)
                                                    : 0;
            c += (uint64_t)(~r->limb[i] & mask);
            r->limb[i] = (uint32_t)c & mask;
            c >>= 32;
            if (!mask)
                r->limb[i] = 0;
        }
        r->sign = -1;
    }
    code_decref(vm, owned);
    return code_bigint_finish(vm, r);
}

static const code_method int_methods[] = {
    {"bit_length", m_bit_length},
    {"bit_count", m_bit_count},
    {"to_bytes", m_to_bytes},
    {"from_bytes", m_from_bytes},
    {"as_integer_ratio", m_as_integer_ratio},
    {"conjugate", m_self_int},
    {"is_integer", m_is_integer},
    {NULL, NULL},
};

const code_type code_type_int = {
    .ob = {&code_type_type, CODE_RC_IMMORTAL, 0},
    .name = "int",
    .kind = CODE_K_INT,
    .repr = int_repr,
    .hash = int_hash,
    .compare = code_float_compare,
    .binop = int_binop,
    .unop = int_unop,
    .truth = int_truth,
    .getattr = int_getattr,
    .methods = int_methods,
    .new = int_new,
};

/* ---- bool ------------------------------------------------------------------ */

static cv bool_repr(code_vm *vm, cv self)
{
    return code_str_intern(vm, self == CODE_TRUE ? "True" : "False", self == CODE_TRUE ? 4 : 5);
}

static cv bool_new(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kwnames)
{
    (void)t;
    if (kwnames && ((code_tuple *)cv_obj(kwnames))->n)
        return code_raise(vm, &code_exc_TypeError, "bool() takes no keyword arguments");
    if (nargs > 1)
        return code_raise(vm, &code_exc_TypeError, "bool expected at most 1 argument, got %zu",
                          nargs);
    if (nargs == 0)
        return CODE_FALSE;
    int r = code_truth(vm, args[0]);
    return r < 0 ? CV_NULL : code_bool(r);
}

const code_type code_type_bool = {
    .ob = {&code_type_type, CODE_RC_IMMORTAL, 0},
    .name = "bool",
    .base = &code_type_int,
    .kind = CODE_K_BOOL,
    .repr = bool_repr,
    .hash = int_hash,
    .compare = code_float_compare,
    .binop = int_binop,
    .unop = int_unop,
    .truth = int_truth,
    .getattr = int_getattr,
    .methods = int_methods,
    .new = bool_new,
};
