/* tuple: a fixed array of references; the empty tuple is one static object. */
#include <stdarg.h>
#include <string.h>

#include "code/code_cont.h"

code_tuple code_empty_tuple_obj = {
    .ob = {.type = &code_type_tuple, .rc = CODE_RC_IMMORTAL},
};

cv code_tuple_new(code_vm *vm, size_t n)
{
    if (n == 0)
        return CODE_EMPTY_TUPLE;
    if (n > (SIZE_MAX - sizeof(code_tuple)) / sizeof(cv) / 2)
        return code_raise_nomem(vm);
    code_tuple *t = code_obj_new(vm, &code_type_tuple, sizeof(code_tuple) + n * sizeof(cv));
    if (!t)
        return CV_NULL;
    t->n = n;
    return cv_of(t);
}

cv code_tuple_pack(code_vm *vm, size_t n, ...)
{
    cv r = code_tuple_new(vm, n);
    if (!r)
        return CV_NULL;
    code_tuple *t = (code_tuple *)cv_obj(r);
    va_list ap;
    va_start(ap, n);
    for (size_t i = 0; i < n; i++)
        t->v[i] = code_incref(va_arg(ap, cv));
    va_end(ap);
    return r;
}

cv code_tuple_from_array(code_vm *vm, const cv *v, size_t n)
{
    cv r = code_tuple_new(vm, n);
    if (!r)
        return CV_NULL;
    code_tuple *t = (code_tuple *)cv_obj(r);
    for (size_t i = 0; i < n; i++)
        t->v[i] = code_incref(v[i]);
    return r;
}

cv code_tuple_from(code_vm *vm, cv iterable)
{
    if (cv_is(iterable, &code_type_tuple))
        return code_incref(iterable);
    cv l = code_list_from(vm, iterable);
    if (!l)
        return CV_NULL;
    code_list *x = (code_list *)cv_obj(l);
    cv r = code_tuple_from_array(vm, x->v, x->n);
    code_decref(vm, l);
    return r;
}

static void tuple_dealloc(code_vm *vm, code_obj *o)
{
    code_tuple *t = (code_tuple *)o;
    code_cont_dealloc_enter(vm);
    for (size_t i = 0; i < t->n; i++)
        code_cont_release(vm, t->v[i]);
    code_cont_dealloc_leave(vm);
}

/* No clear: a tuple cannot hold itself, so a cycle through one goes
 * through a mutable container too, whose clear breaks it. */
static void tuple_traverse(code_vm *vm, cv self, code_visit_fn visit, void *arg)
{
    const code_tuple *t = (const code_tuple *)cv_obj(self);
    for (size_t i = 0; i < t->n; i++)
        visit(vm, t->v[i], arg);
}

static cv tuple_repr(code_vm *vm, cv self)
{
    code_tuple *t = (code_tuple *)cv_obj(self);
    if (t->n == 0)
        return code_str_from_cstr(vm, "()");
    int r = code_repr_enter(vm, self);
    if (r < 0)
        return CV_NULL;
    if (r > 0)
        return code_str_from_cstr(vm, "(...)");
    code_sb b;
    code_sb_init(&b, vm);
    code_sb_add(&b, "(", 1);
    int rc = code_seq_repr_items(&b, t->v, t->n);
    code_repr_leave(vm, self);
    if (rc || b.failed) {
        code_sb_free(&b);
        return CV_NULL;
    }
    code_sb_addc(&b, t->n == 1 ? ",)" : ")");
    return code_sb_finish(&b);
}

/* CPython 3.11's tuplehash (xxHash's mixing, 64-bit lanes). */
#define XXPRIME_1 11400714785074694791ULL
#define XXPRIME_2 14029467366897019727ULL
#define XXPRIME_5 2870177450012600261ULL
#define XXROTATE(x) (((x) << 31) | ((x) >> 33))

static int tuple_hash(code_vm *vm, cv self, uint64_t *h)
{
    code_tuple *t = (code_tuple *)cv_obj(self);
    if (t->hash) {
        *h = t->hash;
        return 0;
    }
    /* code_hash, which called here, has made the depth check. */
    uint64_t acc = XXPRIME_5;
    for (size_t i = 0; i < t->n; i++) {
        uint64_t lane;
        if (code_hash(vm, t->v[i], &lane))
            return -1;
        acc += lane * XXPRIME_2;
        acc = XXROTATE(acc);
        acc *= XXPRIME_1;
    }
    acc += t->n ^ (XXPRIME_5 ^ 3527539UL);
    if (acc == UINT64_MAX)
        acc = 1546275796;
    /* Static tuples are shared by every run: never written. */
    if (!(t->ob.rc & CODE_RC_IMMORTAL))
        t->hash = acc;
    *h = acc;
    return 0;
}

static cv tuple_compare(code_vm *vm, cv a, cv b, int op)
{
    if (!cv_is(a, &code_type_tuple) || !cv_is(b, &code_type_tuple))
        return CODE_NOTIMPL;
    code_tuple *x = (code_tuple *)cv_obj(a), *y = (code_tuple *)cv_obj(b);
    return code_seq_compare(vm, x->v, x->n, y->v, y->n, op);
}

static cv tuple_binop(code_vm *vm, int op, cv a, cv b)
{
    bool a_tuple = cv_is(a, &code_type_tuple);
    if (op == CODE_OP_ADD) {
        if (!a_tuple)
            return CODE_NOTIMPL;
        if (!cv_is(b, &code_type_tuple))
            return code_raise(vm, &code_exc_TypeError,
                              "can only concatenate tuple (not \"%s\") to tuple",
                              code_type_name(b));
        code_tuple *x = (code_tuple *)cv_obj(a), *y = (code_tuple *)cv_obj(b);
        if (y->n == 0)
            return code_incref(a);
        if (x->n == 0)
            return code_incref(b);
        cv r = code_tuple_new(vm, x->n + y->n);
        if (!r)
            return CV_NULL;
        code_tuple *o = (code_tuple *)cv_obj(r);
        for (size_t i = 0; i < x->n; i++)
            o->v[i] = code_incref(x->v[i]);
        for (size_t i = 0; i < y->n; i++)
            o->v[x->n + i] = code_incref(y->v[i]);
        return r;
    }
    if (op == CODE_OP_MUL) {
        ssize_t count;
        if (code_seq_repeat_count(vm, a, b, a_tuple, &count))
            return CV_NULL;
        cv self = a_tuple ? a : b;
        code_tuple *t = (code_tuple *)cv_obj(self);
        if (count == 1 || (t->n == 0 && count > 0))
            return code_incref(self);
        if (count <= 0 || t->n == 0)
            return CODE_EMPTY_TUPLE;
        if ((size_t)count > SIZE_MAX / sizeof(cv) / 4 / t->n)
            return code_raise_nomem(vm);
        size_t total = t->n * (size_t)count;
        cv r = code_tuple_new(vm, total);
        if (!r)
            return CV_NULL;
        code_tuple *o = (code_tuple *)cv_obj(r);
        for (size_t i = 0; i < total; i++)
            o->v[i] = code_incref(t->v[i % t->n]);
        return r;
    }
    return CODE_NOTIMPL;
}

static ssize_t tuple_len(code_vm *vm, cv self)
{
    (void)vm;
    return (ssize_t)((code_tuple *)cv_obj(self))->n;
}

static cv tuple_getitem(code_vm *vm, cv self, cv key)
{
    code_tuple *t = (code_tuple *)cv_obj(self);
    if (cv_is(key, &code_type_slice)) {
        ssize_t start, stop, step, count;
        if (code_slice_indices(vm, key, (ssize_t)t->n, &start, &stop, &step, &count))
            return CV_NULL;
        if (step == 1 && start == 0 && (size_t)count == t->n)
            return code_incref(self);
        cv r = code_tuple_new(vm, (size_t)count);
        if (!r)
            return CV_NULL;
        code_tuple *o = (code_tuple *)cv_obj(r);
        for (ssize_t i = 0; i < count; i++)
            o->v[i] = code_incref(t->v[start + i * step]);
        return r;
    }
    ssize_t i;
    if (code_seq_index(vm, "tuple", key, (ssize_t)t->n, &i))
        return CV_NULL;
    if (i < 0 || (size_t)i >= t->n)
        return code_raise(vm, &code_exc_IndexError, "tuple index out of range");
    return code_incref(t->v[i]);
}

static int tuple_contains(code_vm *vm, cv self, cv x)
{
    code_tuple *t = (code_tuple *)cv_obj(self);
    for (size_t i = 0; i < t->n; i++) {
        int r = code_eq(vm, t->v[i], x);
        if (r)
            return r;
    }
    return 0;
}

static cv tuple_iter(code_vm *vm, cv self)
{
    return code_seq_iter_new(vm, self, false);
}

static cv tuple_new(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kwnames)
{
    (void)t;
    if (kwnames && ((code_tuple *)cv_obj(kwnames))->n)
        return code_raise(vm, &code_exc_TypeError, "tuple() takes no keyword arguments");
    if (code_cont_argn(vm, "tuple", 0, 1, nargs, CV_NULL))
        return CV_NULL;
    return nargs ? code_tuple_from(vm, args[0]) : CODE_EMPTY_TUPLE;
}

#define SELF(meth)                                                                            \
    if (code_cont_self(vm, "tuple", meth, args, nargs, &code_type_tuple, NULL))              \
        return CV_NULL;                                                                       \
    code_tuple *t = (code_tuple *)cv_obj(args[0]);                                            \
    args++;                                                                                   \
    nargs--

static cv tuple_index(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF("index");
    ssize_t start, stop;
    if (code_cont_argn(vm, "tuple.index", 1, 3, nargs, kwnames) ||
        code_seq_index_bounds(vm, args + 1, nargs - 1, t->n, &start, &stop))
        return CV_NULL;
    ssize_t i = code_seq_find(vm, t->v, t->n, args[0], start, stop);
    if (i == -2)
        return CV_NULL;
    if (i < 0)
        return code_raise(vm, &code_exc_ValueError, "tuple.index(x): x not in tuple");
    return code_int_from_i64(vm, i);
}

static cv tuple_count(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF("count");
    if (code_cont_arg1(vm, "tuple.count", nargs, kwnames))
        return CV_NULL;
    ssize_t c = code_seq_count(vm, t->v, t->n, args[0]);
    return c < 0 ? CV_NULL : code_int_from_i64(vm, c);
}

static const code_method tuple_methods[] = {
    {"index", tuple_index},
    {"count", tuple_count},
    CODE_CONT_DUNDERS,
    {NULL, NULL},
};

const code_type code_type_tuple = {
    .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},
    .name = "tuple",
    .kind = CODE_K_TUPLE,
    .dealloc = tuple_dealloc,
    .traverse = tuple_traverse,
    .repr = tuple_repr,
    .hash = tuple_hash,
    .compare = tuple_compare,
    .binop = tuple_binop,
    .len = tuple_len,
    .iter = tuple_iter,
    .getitem = tuple_getitem,
    .contains = tuple_contains,
    .methods = tuple_methods,
    .new = tuple_new,
};
