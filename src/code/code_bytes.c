/* Code mode's bytes: immutable byte strings (code_bytes in code_val.h), the
 * type's slots and the methods LLM-written code uses, with CPython 3.11's
 * behaviour and messages. The searching, splitting and replacing engines
 * are shared with str (code_str_methods.c). */
#include "code/code_strutil.h"

#include <string.h>

#define B(v) code_bytes_p(v)

cv code_bytes_new(code_vm *vm, const void *s, size_t n)
{
    if (n > SIZE_MAX / 2)
        return code_raise_nomem(vm);
    code_bytes *o = code_obj_new(vm, &code_type_bytes, sizeof(code_bytes) + n + 1);
    if (!o)
        return CV_NULL;
    o->len = n;
    if (n)
        memcpy(o->s, s, n);
    o->s[n] = 0;
    return cv_of(o);
}

static code_bytes *bytes_alloc(code_vm *vm, size_t n)
{
    if (n > SIZE_MAX / 2) {
        code_raise_nomem(vm);
        return NULL;
    }
    code_bytes *o = code_obj_new(vm, &code_type_bytes, sizeof(code_bytes) + n + 1);
    if (!o)
        return NULL;
    o->len = n;
    o->s[n] = 0;
    return o;
}

/* ---- slots ---- */

static cv bytes_repr(code_vm *vm, cv self)
{
    code_bytes *b = B(self);
    bool sq = memchr(b->s, '\'', b->len) != NULL, dq = memchr(b->s, '"', b->len) != NULL;
    char q = sq && !dq ? '"' : '\'';
    code_sb sb;
    code_sb_init(&sb, vm);
    code_sb_add(&sb, "b", 1);
    code_sb_add(&sb, &q, 1);
    for (size_t i = 0; i < b->len; i++) {
        unsigned char c = b->s[i];
        if (c == '\\' || c == (unsigned char)q) {
            char e[2] = {'\\', (char)c};
            code_sb_add(&sb, e, 2);
        } else if (c == '\t')
            code_sb_add(&sb, "\\t", 2);
        else if (c == '\n')
            code_sb_add(&sb, "\\n", 2);
        else if (c == '\r')
            code_sb_add(&sb, "\\r", 2);
        else if (c < 0x20 || c >= 0x7f)
            code_sb_printf(&sb, "\\x%02x", c);
        else
            code_sb_add(&sb, (const char *)&c, 1);
    }
    code_sb_add(&sb, &q, 1);
    if (sb.failed) {
        code_sb_free(&sb);
        return CV_NULL;
    }
    return code_sb_finish(&sb);
}

static int bytes_hash(code_vm *vm, cv self, uint64_t *h)
{
    (void)vm;
    code_bytes *b = B(self);
    if (b->hash) {
        *h = b->hash;
        return 0;
    }
    /* Not the str hash of the same bytes: b'a' == 'a' is False anyway. */
    uint64_t v = code_siphash13(b->s, b->len) ^ 0x62797465ull;
    if (!(b->ob.rc & CODE_RC_IMMORTAL))
        b->hash = v;
    *h = v;
    return 0;
}

static cv bytes_compare(code_vm *vm, cv a, cv b, int op)
{
    (void)vm;
    if (!cv_is(a, &code_type_bytes) || !cv_is(b, &code_type_bytes))
        return CODE_NOTIMPL;
    code_bytes *x = B(a), *y = B(b);
    if (op == CODE_CMP_EQ || op == CODE_CMP_NE) {
        bool eq = x->len == y->len && memcmp(x->s, y->s, x->len) == 0;
        return code_bool(eq == (op == CODE_CMP_EQ));
    }
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->s, y->s, n);
    if (!c)
        c = x->len < y->len ? -1 : x->len > y->len;
    switch (op) {
    case CODE_CMP_LT: return code_bool(c < 0);
    case CODE_CMP_LE: return code_bool(c <= 0);
    case CODE_CMP_GT: return code_bool(c > 0);
    default: return code_bool(c >= 0);
    }
}

static bool is_int(cv v)
{
    int k = cv_kind(v);
    return k == CODE_K_INT || k == CODE_K_BOOL;
}

static cv bytes_binop(code_vm *vm, int op, cv a, cv b)
{
    bool ab = cv_is(a, &code_type_bytes), bb = cv_is(b, &code_type_bytes);
    if (op == CODE_OP_ADD) {
        if (!ab)
            return CODE_NOTIMPL;
        if (!bb)
            return code_raise(vm, &code_exc_TypeError, "can't concat %s to bytes", code_type_name(b));
        code_bytes *o = bytes_alloc(vm, B(a)->len + B(b)->len);
        if (!o)
            return CV_NULL;
        memcpy(o->s, B(a)->s, B(a)->len);
        memcpy(o->s + B(a)->len, B(b)->s, B(b)->len);
        return cv_of(o);
    }
    if (op == CODE_OP_MUL) {
        cv s = ab ? a : b, n = ab ? b : a;
        if (!is_int(n))
            return code_raise(vm, &code_exc_TypeError,
                              "can't multiply sequence by non-int of type '%s'", code_type_name(n));
        size_t k;
        if (code_repeat_count(vm, n, B(s)->len, &k))
            return CV_NULL;
        if (k == 1)
            return code_incref(s);
        code_bytes *o = bytes_alloc(vm, B(s)->len * k);
        if (!o)
            return CV_NULL;
        for (size_t i = 0; i < k; i++)
            memcpy(o->s + i * B(s)->len, B(s)->s, B(s)->len);
        return cv_of(o);
    }
    if (op == CODE_OP_MOD && ab)
        return code_bytes_printf(vm, a, b);
    return CODE_NOTIMPL;
}

/* b += x, b *= n: bytes' own errors ("can't concat str to bytes"), which
 * CPython reports for the augmented forms too. */
static cv bytes_inplace(code_vm *vm, int op, cv a, cv b)
{
    return bytes_binop(vm, op, a, b);
}

static ssize_t bytes_len(code_vm *vm, cv self)
{
    (void)vm;
    return (ssize_t)B(self)->len;
}

/* A byte value argument: -1 on error. */
static int byte_value(code_vm *vm, cv v)
{
    int64_t i;
    if (cv_kind(v) == CODE_K_BOOL)
        return v == CODE_TRUE;
    if (!code_int_to_i64(v, &i) || i < 0 || i > 255)
        return code_raise_i(vm, &code_exc_ValueError, "byte must be in range(0, 256)");
    return (int)i;
}

static int bytes_contains(code_vm *vm, cv self, cv x)
{
    code_bytes *b = B(self);
    if (is_int(x)) {
        int c = byte_value(vm, x);
        if (c < 0)
            return -1;
        return memchr(b->s, c, b->len) != NULL;
    }
    if (!cv_is(x, &code_type_bytes))
        return code_raise_i(vm, &code_exc_TypeError, "a bytes-like object is required, not '%s'",
                            code_type_name(x));
    return code_find_bytes((const char *)b->s, b->len, (const char *)B(x)->s, B(x)->len) >= 0;
}

static cv bytes_getitem(code_vm *vm, cv self, cv key)
{
    code_bytes *b = B(self);
    if (is_int(key)) {
        ssize_t i;
        if (code_as_index(vm, key, &i))
            return CV_NULL;
        if (i < 0)
            i += (ssize_t)b->len;
        if (i < 0 || (size_t)i >= b->len)
            return code_raise(vm, &code_exc_IndexError, "index out of range");
        return cv_from_small(b->s[i]);
    }
    if (cv_is(key, &code_type_slice)) {
        ssize_t start, stop, step, count;
        if (code_slice_indices(vm, key, (ssize_t)b->len, &start, &stop, &step, &count))
            return CV_NULL;
        if (count <= 0)
            return code_bytes_new(vm, "", 0);
        if (step == 1) {
            if ((size_t)count == b->len)
                return code_incref(self);
            return code_bytes_new(vm, b->s + start, (size_t)count);
        }
        code_bytes *o = bytes_alloc(vm, (size_t)count);
        if (!o)
            return CV_NULL;
        for (ssize_t k = 0, i = start; k < count; k++, i += step)
            o->s[k] = b->s[i];
        return cv_of(o);
    }
    return code_raise(vm, &code_exc_TypeError, "byte indices must be integers or slices, not %s",
                      code_type_name(key));
}

typedef struct bytes_iterobj {
    code_iterobj it;
    cv b;
    size_t i;
} bytes_iterobj;

static void bytes_iter_dealloc(code_vm *vm, code_obj *o)
{
    code_decref(vm, ((bytes_iterobj *)o)->b);
}

static cv bytes_iter_next(code_vm *vm, cv self)
{
    bytes_iterobj *it = (bytes_iterobj *)cv_obj(self);
    if (!it->b)
        return CV_NULL;
    if (it->i >= B(it->b)->len) {
        code_setref(vm, &it->b, CV_NULL);
        return CV_NULL;
    }
    return cv_from_small(B(it->b)->s[it->i++]);
}

static const code_type code_type_bytes_iter = {
    .ob = {&code_type_type, CODE_RC_IMMORTAL, 0},
    .name = "bytes_iterator",
    .kind = CODE_K_ITER,
    .dealloc = bytes_iter_dealloc,
    .iter = code_iter_self,
    .next = bytes_iter_next,
};

static cv bytes_iter(code_vm *vm, cv self)
{
    bytes_iterobj *it = code_obj_new(vm, &code_type_bytes_iter, sizeof(bytes_iterobj));
    if (!it)
        return CV_NULL;
    it->b = code_incref(self);
    return cv_of(it);
}

/* bytes(), bytes(n), bytes(iterable of ints), bytes(str, encoding[, errors]) */
static cv bytes_new(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kwnames)
{
    (void)t;
    cv src = CV_NULL, enc = CV_NULL, err = CV_NULL;
    if (code_args(vm, "bytes", args, nargs, kwnames, "|source,encoding,errors", &src, &enc, &err))
        return CV_NULL;
    if (!src) {
        if (enc || err)
            return code_raise(vm, &code_exc_TypeError,
                              enc ? "encoding without a string argument"
                                  : "errors without a string argument");
        return code_bytes_new(vm, "", 0);
    }
    if (cv_is(src, &code_type_str)) {
        if (!enc)
            return code_raise(vm, &code_exc_TypeError, "string argument without an encoding");
        const char *e, *r = "strict";
        if (code_arg_cstr(vm, enc, "bytes() argument 'encoding'", &e) ||
            (err && code_arg_cstr(vm, err, "bytes() argument 'errors'", &r)))
            return CV_NULL;
        return code_codec_encode(vm, src, e, r);
    }
    if (enc || err)
        return code_raise(vm, &code_exc_TypeError,
                          enc ? "encoding without a string argument" : "errors without a string argument");
    if (cv_is(src, &code_type_bytes))
        return code_incref(src);
    if (is_int(src)) {
        int64_t n;
        if (cv_kind(src) == CODE_K_BOOL)
            n = src == CODE_TRUE;
        else if (!code_int_to_i64(src, &n))
            return code_raise(vm, &code_exc_OverflowError,
                              "cannot fit 'int' into an index-sized integer");
        if (n < 0)
            return code_raise(vm, &code_exc_ValueError, "negative count");
        code_bytes *o = bytes_alloc(vm, (size_t)n);
        if (!o)
            return CV_NULL;
        memset(o->s, 0, (size_t)n);
        return cv_of(o);
    }
    if (!cv_is(src, &code_type_list) && !cv_is(src, &code_type_tuple) && !cv_type(src)->iter)
        return code_raise(vm, &code_exc_TypeError, "cannot convert '%s' object to bytes",
                          code_type_name(src));
    cv tmp, *items;
    size_t n;
    if (code_str_seq_items(vm, src, &tmp, &items, &n, "cannot convert to bytes"))
        return CV_NULL;
    code_bytes *o = bytes_alloc(vm, n);
    for (size_t i = 0; o && i < n; i++) {
        int64_t v;
        if (!is_int(items[i])) {
            code_raise(vm, &code_exc_TypeError, "'%s' object cannot be interpreted as an integer",
                       code_type_name(items[i]));
        } else if (cv_kind(items[i]) == CODE_K_BOOL) {
            o->s[i] = items[i] == CODE_TRUE;
            continue;
        } else if (!code_int_to_i64(items[i], &v) || v < 0 || v > 255)
            code_raise(vm, &code_exc_ValueError, "bytes must be in range(0, 256)");
        else {
            o->s[i] = (unsigned char)v;
            continue;
        }
        code_decref(vm, cv_of(o));
        o = NULL;
    }
    code_decref(vm, tmp);
    return o ? cv_of(o) : CV_NULL;
}

/* Methods: code_bytes_methods.c. */
const code_type code_type_bytes = {
    .ob = {&code_type_type, CODE_RC_IMMORTAL, 0},
    .name = "bytes",
    .kind = CODE_K_BYTES,
    .repr = bytes_repr,
    .hash = bytes_hash,
    .compare = bytes_compare,
    .binop = bytes_binop,
    .inplace = bytes_inplace,
    .len = bytes_len,
    .iter = bytes_iter,
    .getitem = bytes_getitem,
    .contains = bytes_contains,
    .methods = code_bytes_methods,
    .new = bytes_new,
};
