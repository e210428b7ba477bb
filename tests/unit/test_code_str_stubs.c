/* Weak stand-ins for the parts of code mode's runtime that str and bytes
 * use but do not own (numbers, list, tuple, dict, slice), so
 * test_code_str links before those parts land. Each is the least that the
 * tests need; the real definitions, when linked, win over these. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code/code_vm.h"

#define WEAK __attribute__((weak))
#define TYPEHDR {&code_type_type, CODE_RC_IMMORTAL, 0}

/* ---- int (small only) and bool ---- */

static cv int_repr(code_vm *vm, cv v)
{
    if (!cv_is_small(v))
        return code_str_from_cstr(vm, v == CODE_TRUE ? "True" : "False");
    return code_str_fmt(vm, "%lld", (long long)cv_small(v));
}

static int int_hash(code_vm *vm, cv v, uint64_t *h)
{
    (void)vm;
    *h = cv_is_small(v) ? (uint64_t)cv_small(v) : v == CODE_TRUE;
    return 0;
}

static cv int_compare(code_vm *vm, cv a, cv b, int op)
{
    (void)vm;
    int64_t x, y;
    if (!code_int_to_i64(a, &x) || !code_int_to_i64(b, &y))
        return CODE_NOTIMPL;
    switch (op) {
    case CODE_CMP_EQ: return code_bool(x == y);
    case CODE_CMP_NE: return code_bool(x != y);
    case CODE_CMP_LT: return code_bool(x < y);
    case CODE_CMP_LE: return code_bool(x <= y);
    case CODE_CMP_GT: return code_bool(x > y);
    default: return code_bool(x >= y);
    }
}

static cv int_new(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kw)
{
    (void)t;
    (void)kw;
    if (nargs == 1 && cv_kind(args[0]) == CODE_K_FLOAT)
        return code_int_from_i64(vm, (int64_t)((code_float *)cv_obj(args[0]))->v);
    if (nargs == 1 && cv_is_small(args[0]))
        return args[0];
    return code_raise(vm, &code_exc_TypeError, "stub int()");
}

WEAK const code_type code_type_int = {
    .ob = TYPEHDR, .name = "int", .kind = CODE_K_INT, .repr = int_repr, .hash = int_hash,
    .compare = int_compare, .new = int_new,
};
WEAK const code_type code_type_bool = {
    .ob = TYPEHDR, .name = "bool", .base = &code_type_int, .kind = CODE_K_BOOL,
    .repr = int_repr, .hash = int_hash, .compare = int_compare,
};

WEAK cv code_int_from_i64(code_vm *vm, int64_t i)
{
    if (!cv_fits_small(i))
        return code_raise(vm, &code_exc_OverflowError, "stub: big int");
    return cv_from_small(i);
}

WEAK cv code_int_from_u64(code_vm *vm, uint64_t u)
{
    return code_int_from_i64(vm, (int64_t)u);
}

WEAK int code_int_to_i64(cv v, int64_t *out)
{
    if (cv_is_small(v)) {
        *out = cv_small(v);
        return 1;
    }
    if (v == CODE_TRUE || v == CODE_FALSE) {
        *out = v == CODE_TRUE;
        return 1;
    }
    return 0;
}

WEAK int code_int_sign(cv v)
{
    int64_t i = 0;
    if (!cv_is_small(v) && cv_kind(v) == CODE_K_INT)
        return ((code_bigint *)cv_obj(v))->sign;
    code_int_to_i64(v, &i);
    return i < 0 ? -1 : i > 0;
}

WEAK cv code_int_repr(code_vm *vm, cv v)
{
    return int_repr(vm, v);
}

WEAK int code_int_to_double(code_vm *vm, cv v, double *out)
{
    int64_t i;
    if (!code_int_to_i64(v, &i))
        return code_raise_i(vm, &code_exc_OverflowError, "int too large to convert to float");
    *out = (double)i;
    return 0;
}

/* ---- float ---- */

WEAK cv code_float_repr(code_vm *vm, double d)
{
    if (isnan(d))
        return code_str_from_cstr(vm, "nan");
    if (isinf(d))
        return code_str_from_cstr(vm, d < 0 ? "-inf" : "inf");
    char buf[64];
    int prec;
    for (prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof(buf), "%.*e", prec - 1, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    /* CPython's repr: exponent form below 1e-4 and from 1e16. */
    int exp = atoi(strchr(buf, 'e') + 1);
    if (exp < -4 || exp >= 16) {
        char mant[32], *e = strchr(buf, 'e');
        snprintf(mant, sizeof(mant), "%.*s", (int)(e - buf), buf);
        char *dot = strchr(mant, '.');
        if (dot) {
            size_t n = strlen(mant);
            while (n && mant[n - 1] == '0')
                mant[--n] = 0;
            if (mant[n - 1] == '.')
                mant[--n] = 0;
        }
        return code_str_fmt(vm, "%se%c%02d", mant, exp < 0 ? '-' : '+', abs(exp));
    }
    int decimals = prec - 1 - exp;
    snprintf(buf, sizeof(buf), "%.*f", decimals < 1 ? 1 : decimals, d);
    return code_str_from_cstr(vm, buf);
}

static cv float_repr(code_vm *vm, cv v)
{
    return code_float_repr(vm, ((code_float *)cv_obj(v))->v);
}

WEAK const code_type code_type_float = {
    .ob = TYPEHDR, .name = "float", .kind = CODE_K_FLOAT, .repr = float_repr,
};

WEAK cv code_float_new(code_vm *vm, double d)
{
    code_float *f = code_obj_new(vm, &code_type_float, sizeof(code_float));
    if (!f)
        return CV_NULL;
    f->v = d;
    return cv_of(f);
}

WEAK int code_as_double(code_vm *vm, cv v, double *out)
{
    if (cv_kind(v) == CODE_K_FLOAT) {
        *out = ((code_float *)cv_obj(v))->v;
        return 0;
    }
    return code_int_to_double(vm, v, out);
}

/* ---- list, tuple ---- */

static int seq_repr(code_sb *b, const cv *v, size_t n, const char *open, const char *close,
                    bool one_comma)
{
    code_sb_addc(b, open);
    for (size_t i = 0; i < n; i++) {
        if (i)
            code_sb_addc(b, ", ");
        code_sb_repr(b, v[i]);
    }
    if (one_comma && n == 1)
        code_sb_addc(b, ",");
    return code_sb_addc(b, close);
}

static cv list_repr(code_vm *vm, cv v)
{
    code_list *l = (code_list *)cv_obj(v);
    code_sb b;
    code_sb_init(&b, vm);
    seq_repr(&b, l->v, l->n, "[", "]", false);
    return code_sb_finish(&b);
}

static void list_dealloc(code_vm *vm, code_obj *o)
{
    code_list *l = (code_list *)o;
    for (size_t i = 0; i < l->n; i++)
        code_decref(vm, l->v[i]);
    code_heap_free(vm, l->v, l->cap * sizeof(cv));
}

static ssize_t list_len(code_vm *vm, cv v)
{
    (void)vm;
    return (ssize_t)((code_list *)cv_obj(v))->n;
}

static cv list_getitem(code_vm *vm, cv v, cv k)
{
    code_list *l = (code_list *)cv_obj(v);
    if (!cv_is_small(k))
        return code_raise(vm, &code_exc_TypeError, "list indices must be integers or slices, not %s",
                          code_type_name(k));
    int64_t i = cv_small(k);
    if (i < 0)
        i += (int64_t)l->n;
    if (i < 0 || (size_t)i >= l->n)
        return code_raise(vm, &code_exc_IndexError, "list index out of range");
    return code_incref(l->v[i]);
}

WEAK const code_type code_type_list = {
    .ob = TYPEHDR, .name = "list", .kind = CODE_K_LIST, .dealloc = list_dealloc,
    .repr = list_repr, .len = list_len, .getitem = list_getitem,
};

WEAK cv code_list_new(code_vm *vm, size_t cap)
{
    code_list *l = code_obj_new(vm, &code_type_list, sizeof(code_list));
    if (!l)
        return CV_NULL;
    if (cap) {
        l->v = code_heap_alloc(vm, cap * sizeof(cv));
        if (!l->v) {
            code_decref(vm, cv_of(l));
            return CV_NULL;
        }
        l->cap = cap;
    }
    return cv_of(l);
}

WEAK int code_list_append(code_vm *vm, cv list, cv v)
{
    code_list *l = (code_list *)cv_obj(list);
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4;
        cv *p = code_heap_realloc(vm, l->v, l->cap * sizeof(cv), cap * sizeof(cv));
        if (!p)
            return -1;
        l->v = p;
        l->cap = cap;
    }
    l->v[l->n++] = code_incref(v);
    return 0;
}

WEAK cv code_list_from(code_vm *vm, cv iterable)
{
    cv it = code_iter(vm, iterable);
    if (!it)
        return CV_NULL;
    cv l = code_list_new(vm, 0), x;
    while (l && (x = code_next(vm, it))) {
        int rc = code_list_append(vm, l, x);
        code_decref(vm, x);
        if (rc) {
            code_decref(vm, l);
            l = CV_NULL;
        }
    }
    code_decref(vm, it);
    if (l && vm->exc) {
        code_decref(vm, l);
        l = CV_NULL;
    }
    return l;
}

static cv tuple_repr(code_vm *vm, cv v)
{
    code_tuple *t = (code_tuple *)cv_obj(v);
    code_sb b;
    code_sb_init(&b, vm);
    seq_repr(&b, t->v, t->n, "(", ")", true);
    return code_sb_finish(&b);
}

static void tuple_dealloc(code_vm *vm, code_obj *o)
{
    code_tuple *t = (code_tuple *)o;
    for (size_t i = 0; i < t->n; i++)
        code_decref(vm, t->v[i]);
}

WEAK const code_type code_type_tuple = {
    .ob = TYPEHDR, .name = "tuple", .kind = CODE_K_TUPLE, .dealloc = tuple_dealloc,
    .repr = tuple_repr,
};

/* The empty tuple: test_code_str_empty.c (code_val.h declares it as a bare
 * code_obj, but it is read as a tuple). */

WEAK cv code_tuple_new(code_vm *vm, size_t n)
{
    if (!n)
        return CODE_EMPTY_TUPLE;
    code_tuple *t = code_obj_new(vm, &code_type_tuple, sizeof(code_tuple) + n * sizeof(cv));
    if (!t)
        return CV_NULL;
    t->n = n;
    return cv_of(t);
}

WEAK cv code_tuple_pack(code_vm *vm, size_t n, ...)
{
    cv t = code_tuple_new(vm, n);
    if (!t)
        return CV_NULL;
    va_list ap;
    va_start(ap, n);
    for (size_t i = 0; i < n; i++)
        ((code_tuple *)cv_obj(t))->v[i] = code_incref(va_arg(ap, cv));
    va_end(ap);
    return t;
}

/* ---- dict: a linear table ---- */

static void dict_dealloc(code_vm *vm, code_obj *o)
{
    code_dict *d = (code_dict *)o;
    for (size_t i = 0; i < d->nentries; i++) {
        code_decref(vm, d->e[i].key);
        code_decref(vm, d->e[i].value);
    }
    code_heap_free(vm, d->e, d->cap * sizeof(code_dict_entry));
}

static ssize_t dict_find(code_vm *vm, cv d, cv key)
{
    code_dict *x = (code_dict *)cv_obj(d);
    for (size_t i = 0; i < x->nentries; i++) {
        int r = code_eq(vm, x->e[i].key, key);
        if (r < 0)
            return -2;
        if (r)
            return (ssize_t)i;
    }
    return -1;
}

static cv dict_getitem(code_vm *vm, cv d, cv key)
{
    ssize_t i = dict_find(vm, d, key);
    if (i == -2)
        return CV_NULL;
    if (i < 0) {
        cv t = code_tuple_pack(vm, 1, key);
        return code_raise_obj(vm, code_exc_new(vm, &code_exc_KeyError, t));
    }
    return code_incref(((code_dict *)cv_obj(d))->e[i].value);
}

static cv dict_repr(code_vm *vm, cv v)
{
    code_dict *d = (code_dict *)cv_obj(v);
    code_sb b;
    code_sb_init(&b, vm);
    code_sb_addc(&b, "{");
    for (size_t i = 0; i < d->nentries; i++) {
        if (i)
            code_sb_addc(&b, ", ");
        code_sb_repr(&b, d->e[i].key);
        code_sb_addc(&b, ": ");
        code_sb_repr(&b, d->e[i].value);
    }
    code_sb_addc(&b, "}");
    return code_sb_finish(&b);
}

WEAK const code_type code_type_dict = {
    .ob = TYPEHDR, .name = "dict", .kind = CODE_K_DICT, .dealloc = dict_dealloc,
    .repr = dict_repr, .getitem = dict_getitem,
};

WEAK cv code_dict_new(code_vm *vm)
{
    return cv_of(code_obj_new(vm, &code_type_dict, sizeof(code_dict)));
}

WEAK int code_dict_set(code_vm *vm, cv d, cv key, cv value)
{
    code_dict *x = (code_dict *)cv_obj(d);
    ssize_t i = dict_find(vm, d, key);
    if (i == -2)
        return -1;
    if (i >= 0) {
        code_setref(vm, &x->e[i].value, code_incref(value));
        return 0;
    }
    if (x->nentries == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 4;
        code_dict_entry *e = code_heap_realloc(vm, x->e, x->cap * sizeof(*e), cap * sizeof(*e));
        if (!e)
            return -1;
        x->e = e;
        x->cap = cap;
    }
    x->e[x->nentries].key = code_incref(key);
    x->e[x->nentries].value = code_incref(value);
    x->nentries++;
    x->used++;
    return 0;
}

WEAK bool code_dict_next(cv d, size_t *pos, cv *key, cv *value)
{
    code_dict *x = (code_dict *)cv_obj(d);
    if (*pos >= x->nentries)
        return false;
    *key = x->e[*pos].key;
    *value = x->e[*pos].value;
    (*pos)++;
    return true;
}

/* ---- slice ---- */

static void slice_dealloc(code_vm *vm, code_obj *o)
{
    code_slice *s = (code_slice *)o;
    code_decref(vm, s->start);
    code_decref(vm, s->stop);
    code_decref(vm, s->step);
}

WEAK const code_type code_type_slice = {
    .ob = TYPEHDR, .name = "slice", .kind = CODE_K_SLICE, .dealloc = slice_dealloc,
};

WEAK cv code_slice_new(code_vm *vm, cv start, cv stop, cv step)
{
    code_slice *s = code_obj_new(vm, &code_type_slice, sizeof(code_slice));
    if (!s)
        return CV_NULL;
    s->start = code_incref(start);
    s->stop = code_incref(stop);
    s->step = code_incref(step);
    return cv_of(s);
}

WEAK int code_slice_indices(code_vm *vm, cv slice, ssize_t len, ssize_t *start, ssize_t *stop,
                            ssize_t *step, ssize_t *count)
{
    code_slice *s = (code_slice *)cv_obj(slice);
    ssize_t st = s->step == CODE_NONE ? 1 : (ssize_t)cv_small(s->step);
    if (st == 0)
        return code_raise_i(vm, &code_exc_ValueError, "slice step cannot be zero");
    ssize_t lo = st < 0 ? len - 1 : 0, hi = st < 0 ? -1 : len;
    if (s->start != CODE_NONE) {
        lo = (ssize_t)cv_small(s->start);
        if (lo < 0)
            lo += len;
        if (lo < 0)
            lo = st < 0 ? -1 : 0;
        if (lo >= len)
            lo = st < 0 ? len - 1 : len;
    }
    if (s->stop != CODE_NONE) {
        hi = (ssize_t)cv_small(s->stop);
        if (hi < 0)
            hi += len;
        if (hi < 0)
            hi = st < 0 ? -1 : 0;
        if (hi >= len)
            hi = st < 0 ? len - 1 : len;
    }
    ssize_t n = 0;
    if (st > 0 && lo < hi)
        n = (hi - lo - 1) / st + 1;
    else if (st < 0 && hi < lo)
        n = (lo - hi - 1) / (-st) + 1;
    *start = lo;
    *stop = hi;
    *step = st;
    *count = n;
    return 0;
}
