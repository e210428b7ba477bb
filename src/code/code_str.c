/* Code mode's str: UTF-8 with a cached length in code points and an ASCII
 * flag (code_str in code_val.h). The type and its slots and construction;
 * the UTF-8, hashing and repr helpers are in code_str_util.c, the methods in
 * code_str_methods.c, code_str_split.c and code_str_case.c, formatting in
 * code_format.c, code_strformat.c and code_printf.c. */
#include "code/code_strutil.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* ---- construction ---- */

code_str *code_str_alloc(code_vm *vm, size_t n)
{
    if (n > SIZE_MAX / 2) {
        code_raise_nomem(vm);
        return NULL;
    }
    code_str *s = code_obj_new(vm, &code_type_str, sizeof(code_str) + n + 1);
    if (!s)
        return NULL;
    s->len = n;
    s->s[n] = '\0';
    return s;
}

cv code_str_done(code_str *s)
{
    s->ascii = code_ascii_only(s->s, s->len);
    s->nchars = s->ascii ? s->len : code_utf8_count(s->s, s->len);
    return cv_of(s);
}

cv code_str_new(code_vm *vm, const char *s, size_t n)
{
    code_str *o = code_str_alloc(vm, n);
    if (!o)
        return CV_NULL;
    if (n)
        memcpy(o->s, s, n);
    return code_str_done(o);
}

cv code_str_new_n(code_vm *vm, const char *s, size_t n, size_t nchars)
{
    code_str *o = code_str_alloc(vm, n);
    if (!o)
        return CV_NULL;
    if (n)
        memcpy(o->s, s, n);
    o->nchars = nchars;
    o->ascii = nchars == n;
    return cv_of(o);
}

cv code_str_from_cstr(code_vm *vm, const char *s)
{
    return code_str_new(vm, s, strlen(s));
}

cv code_str_fmt(code_vm *vm, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0)
        return code_raise(vm, &code_exc_ValueError, "bad format");
    if ((size_t)n < sizeof(small))
        return code_str_new(vm, small, (size_t)n);
    code_str *o = code_str_alloc(vm, (size_t)n);
    if (!o)
        return CV_NULL;
    va_start(ap, fmt);
    vsnprintf(o->s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return code_str_done(o);
}

/* A plain new string for now; a per-run cache of names may replace it. */
cv code_str_intern(code_vm *vm, const char *s, size_t n)
{
    return code_str_new(vm, s, n);
}

bool code_str_eq_cstr(cv s, const char *c)
{
    if (!cv_is(s, &code_type_str))
        return false;
    size_t n = strlen(c);
    return code_str_len(s) == n && memcmp(code_str_cstr(s), c, n) == 0;
}

static int str_hash(code_vm *vm, cv self, uint64_t *h)
{
    (void)vm;
    code_str *s = code_str_p(self);
    if (s->hash) {
        *h = s->hash;
        return 0;
    }
    uint64_t v = code_siphash13(s->s, s->len);
    /* Static strings are shared by every run and never written. */
    if (!(s->ob.rc & CODE_RC_IMMORTAL))
        s->hash = v;
    *h = v;
    return 0;
}

/* ---- repr ---- */

static cv str_repr(code_vm *vm, cv self)
{
    code_sb b;
    code_sb_init(&b, vm);
    if (code_sb_str_repr(&b, code_str_cstr(self), code_str_len(self), false)) {
        code_sb_free(&b);
        return CV_NULL;
    }
    return code_sb_finish(&b);
}

static cv str_str(code_vm *vm, cv self)
{
    (void)vm;
    return code_incref(self);
}

/* ---- comparison, operators ---- */

static int str_cmp3(cv a, cv b)
{
    code_str *x = code_str_p(a), *y = code_str_p(b);
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->s, y->s, n);
    if (c)
        return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

static cv str_compare(code_vm *vm, cv a, cv b, int op)
{
    (void)vm;
    if (!cv_is(a, &code_type_str) || !cv_is(b, &code_type_str))
        return CODE_NOTIMPL;
    if (op == CODE_CMP_EQ || op == CODE_CMP_NE) {
        code_str *x = code_str_p(a), *y = code_str_p(b);
        bool eq = x->len == y->len && memcmp(x->s, y->s, x->len) == 0;
        return code_bool(eq == (op == CODE_CMP_EQ));
    }
    int c = str_cmp3(a, b);
    switch (op) {
    case CODE_CMP_LT: return code_bool(c < 0);
    case CODE_CMP_LE: return code_bool(c <= 0);
    case CODE_CMP_GT: return code_bool(c > 0);
    default: return code_bool(c >= 0);
    }
}

static cv str_concat(code_vm *vm, cv a, cv b)
{
    code_str *x = code_str_p(a), *y = code_str_p(b);
    if (!y->len)
        return code_incref(a);
    if (!x->len)
        return code_incref(b);
    code_str *o = code_str_alloc(vm, x->len + y->len);
    if (!o)
        return CV_NULL;
    memcpy(o->s, x->s, x->len);
    memcpy(o->s + x->len, y->s, y->len);
    o->nchars = x->nchars + y->nchars;
    o->ascii = x->ascii && y->ascii;
    return cv_of(o);
}

/* n copies, for str and bytes: the count's checks and messages as CPython. */
int code_repeat_count(code_vm *vm, cv n, size_t len, size_t *count)
{
    int64_t k;
    if (cv_is(n, &code_type_bool))
        k = n == CODE_TRUE;
    else if (!code_int_to_i64(n, &k))
        return code_raise_i(vm, &code_exc_OverflowError,
                            "cannot fit 'int' into an index-sized integer");
    if (k <= 0 || len == 0) {
        *count = 0;
        return 0;
    }
    if ((uint64_t)k > (uint64_t)INT64_MAX / len)
        return code_raise_i(vm, &code_exc_OverflowError, "repeated string is too long");
    *count = (size_t)k;
    return 0;
}

static cv str_repeat(code_vm *vm, cv s, cv n)
{
    code_str *x = code_str_p(s);
    size_t k;
    if (code_repeat_count(vm, n, x->len, &k))
        return CV_NULL;
    if (k == 1)
        return code_incref(s);
    code_str *o = code_str_alloc(vm, x->len * k);
    if (!o)
        return CV_NULL;
    if (x->len == 1)
        memset(o->s, x->s[0], k);
    else
        for (size_t i = 0; i < k; i++)
            memcpy(o->s + i * x->len, x->s, x->len);
    o->nchars = x->nchars * k;
    o->ascii = x->ascii;
    return cv_of(o);
}

static bool is_int(cv v)
{
    int k = cv_kind(v);
    return k == CODE_K_INT || k == CODE_K_BOOL;
}

static cv str_binop(code_vm *vm, int op, cv a, cv b)
{
    bool as = cv_is(a, &code_type_str), bs = cv_is(b, &code_type_str);
    switch (op) {
    case CODE_OP_ADD:
        if (as && bs)
            return str_concat(vm, a, b);
        if (as)
            return code_raise(vm, &code_exc_TypeError,
                              "can only concatenate str (not \"%s\") to str", code_type_name(b));
        return CODE_NOTIMPL;
    case CODE_OP_MUL:
        if (as && is_int(b))
            return str_repeat(vm, a, b);
        if (bs && is_int(a))
            return str_repeat(vm, b, a);
        /* Sequence repetition by anything else is an error right away, as
         * CPython's sq_repeat fallback reports it. */
        return code_raise(vm, &code_exc_TypeError, "can't multiply sequence by non-int of type '%s'",
                          code_type_name(as ? b : a));
    case CODE_OP_MOD:
        if (as)
            return code_str_printf(vm, a, b);
        return CODE_NOTIMPL;
    default:
        return CODE_NOTIMPL;
    }
}

/* s += t (and *=, %=). Strings are immutable, but one whose only reference
 * is the caller's cannot be seen changing: it is appended to in place when
 * its block has room, and otherwise grows into a new string with room to
 * spare, so a loop of += costs amortised linear time (the evaluator has to
 * hand over the variable's reference for this; with two references it is a
 * plain concatenation). Errors are str's own ("can only concatenate str"),
 * which CPython reports for += too. */
static cv str_inplace(code_vm *vm, int op, cv a, cv b)
{
    if (op != CODE_OP_ADD)
        return str_binop(vm, op, a, b);
    if (!cv_is(b, &code_type_str))
        return code_raise(vm, &code_exc_TypeError, "can only concatenate str (not \"%s\") to str",
                          code_type_name(b));
    code_str *x = code_str_p(a), *y = code_str_p(b);
    if (x->ob.rc != 1 || !y->len || !x->len || x->len + y->len < 64)
        return str_concat(vm, a, b);
    size_t need = x->len + y->len, cap = x->ob.size - offsetof(code_str, s) - 1;
    if (need <= cap) {
        memcpy(x->s + x->len, y->s, y->len);
        x->s[need] = '\0';
        x->len = need;
        x->nchars += y->nchars;
        x->ascii = x->ascii && y->ascii;
        x->hash = 0;
        return code_incref(a);
    }
    code_str *o = code_str_alloc(vm, need + need / 2);
    if (!o)
        return CV_NULL;
    memcpy(o->s, x->s, x->len);
    memcpy(o->s + x->len, y->s, y->len);
    o->s[need] = '\0';
    o->len = need;
    o->nchars = x->nchars + y->nchars;
    o->ascii = x->ascii && y->ascii;
    return cv_of(o);
}

static ssize_t str_len(code_vm *vm, cv self)
{
    (void)vm;
    return (ssize_t)code_str_p(self)->nchars;
}

static int str_contains(code_vm *vm, cv self, cv x)
{
    if (!cv_is(x, &code_type_str))
        return code_raise_i(vm, &code_exc_TypeError,
                            "'in <string>' requires string as left operand, not %s",
                            code_type_name(x));
    return code_find_bytes(code_str_cstr(self), code_str_len(self), code_str_cstr(x),
                           code_str_len(x)) >= 0;
}

/* ---- indexing ---- */

static cv str_char_at(code_vm *vm, code_str *s, size_t off)
{
    size_t n = code_utf8_seqlen((unsigned char)s->s[off]);
    return code_str_new_n(vm, s->s + off, n, 1);
}

static cv str_slice(code_vm *vm, cv self, cv key)
{
    code_str *s = code_str_p(self);
    ssize_t start, stop, step, count;
    if (code_slice_indices(vm, key, (ssize_t)s->nchars, &start, &stop, &step, &count))
        return CV_NULL;
    if (count <= 0)
        return code_str_new(vm, "", 0);
    if (step == 1) {
        if ((size_t)count == s->nchars)
            return code_incref(self);
        size_t a = code_str_offset(s, (size_t)start);
        size_t b = s->ascii ? (size_t)stop : a;
        if (!s->ascii)
            for (ssize_t k = 0; k < count; k++)
                b += code_utf8_seqlen((unsigned char)s->s[b]);
        return code_str_new_n(vm, s->s + a, b - a, (size_t)count);
    }
    code_sb b;
    code_sb_init(&b, vm);
    if (s->ascii) {
        for (ssize_t k = 0, i = start; k < count; k++, i += step)
            if (code_sb_add(&b, s->s + i, 1))
                break;
    } else {
        /* Walk from pick to pick, forwards or backwards: no table of
         * offsets, so a slice costs no more memory than its result. */
        size_t off = code_str_offset(s, (size_t)start);
        for (ssize_t k = 0; k < count; k++) {
            size_t len = code_utf8_seqlen((unsigned char)s->s[off]);
            if (code_sb_add(&b, s->s + off, len))
                break;
            if (k + 1 == count)
                break;
            if (step > 0) {
                for (ssize_t j = 0; j < step; j++)
                    off += code_utf8_seqlen((unsigned char)s->s[off]);
            } else {
                for (ssize_t j = 0; j < -step; j++) {
                    off--;
                    while (((unsigned char)s->s[off] & 0xC0) == 0x80)
                        off--;
                }
            }
        }
    }
    if (b.failed) {
        code_sb_free(&b);
        return CV_NULL;
    }
    return code_sb_finish(&b);
}

static cv str_getitem(code_vm *vm, cv self, cv key)
{
    code_str *s = code_str_p(self);
    if (is_int(key)) {
        ssize_t i;
        if (code_as_index(vm, key, &i))
            return CV_NULL;
        if (i < 0)
            i += (ssize_t)s->nchars;
        if (i < 0 || (size_t)i >= s->nchars)
            return code_raise(vm, &code_exc_IndexError, "string index out of range");
        return str_char_at(vm, s, code_str_offset(s, (size_t)i));
    }
    if (cv_is(key, &code_type_slice))
        return str_slice(vm, self, key);
    return code_raise(vm, &code_exc_TypeError, "string indices must be integers, not '%s'",
                      code_type_name(key));
}

/* ---- iteration ---- */

typedef struct str_iterobj {
    code_iterobj it;
    cv s;
    size_t off;
} str_iterobj;

static void str_iter_dealloc(code_vm *vm, code_obj *o)
{
    code_decref(vm, ((str_iterobj *)o)->s);
}

static cv str_iter_next(code_vm *vm, cv self)
{
    str_iterobj *it = (str_iterobj *)cv_obj(self);
    if (!it->s)
        return CV_NULL;
    code_str *s = code_str_p(it->s);
    if (it->off >= s->len) {
        code_setref(vm, &it->s, CV_NULL);
        return CV_NULL;
    }
    cv c = str_char_at(vm, s, it->off);
    if (c)
        it->off += code_str_len(c);
    return c;
}

static const code_type code_type_str_iter = {
    .ob = {&code_type_type, CODE_RC_IMMORTAL, 0},
    .name = "str_iterator",
    .kind = CODE_K_ITER,
    .dealloc = str_iter_dealloc,
    .iter = code_iter_self,
    .next = str_iter_next,
};

static cv str_iter(code_vm *vm, cv self)
{
    str_iterobj *it = code_obj_new(vm, &code_type_str_iter, sizeof(str_iterobj));
    if (!it)
        return CV_NULL;
    it->s = code_incref(self);
    return cv_of(it);
}

/* ---- str(...) ---- */

static cv str_new(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kwnames)
{
    (void)t;
    cv obj = CV_NULL, enc = CV_NULL, err = CV_NULL;
    if (code_args(vm, "str", args, nargs, kwnames, "|object,encoding,errors", &obj, &enc, &err))
        return CV_NULL;
    if (!enc && !err)
        return obj ? code_str_of(vm, obj) : code_str_new(vm, "", 0);
    const char *e = "utf-8", *r = "strict";
    if (enc && code_arg_cstr(vm, enc, "str() argument 'encoding'", &e))
        return CV_NULL;
    if (err && code_arg_cstr(vm, err, "str() argument 'errors'", &r))
        return CV_NULL;
    if (!obj)
        return code_str_new(vm, "", 0);
    if (cv_is(obj, &code_type_str))
        return code_raise(vm, &code_exc_TypeError, "decoding str is not supported");
    if (!cv_is(obj, &code_type_bytes))
        return code_raise(vm, &code_exc_TypeError,
                          "decoding to str: need a bytes-like object, %s found", code_type_name(obj));
    code_bytes *b = code_bytes_p(obj);
    return code_codec_decode(vm, b->s, b->len, e, r);
}

const code_type code_type_str = {
    .ob = {&code_type_type, CODE_RC_IMMORTAL, 0},
    .name = "str",
    .kind = CODE_K_STR,
    .repr = str_repr,
    .str = str_str,
    .hash = str_hash,
    .compare = str_compare,
    .binop = str_binop,
    .inplace = str_inplace,
    .len = str_len,
    .iter = str_iter,
    .getitem = str_getitem,
    .contains = str_contains,
    .methods = code_str_methods,
    .new = str_new,
};
