/* The builtin iterator types: enumerate, zip, map, filter, reversed. They are
 * types (as in CPython: type(enumerate) is type), created by calling them, and
 * lazy: each next() pulls from the underlying iterators. */
#include "code/code_cont.h"
#include "code/code_lib.h"

/* ---- enumerate -------------------------------------------------------------- */

typedef struct enum_obj {
    code_obj ob;
    cv it;
    cv count;                    /* an int, small or big */
} enum_obj;

static void enum_dealloc(code_vm *vm, code_obj *o)
{
    enum_obj *e = (enum_obj *)o;
    code_decref(vm, e->it);
    code_decref(vm, e->count);
}

/* The iterators here have no clear: a cycle through one goes through a
 * container, a cell or a function too, whose clear breaks it. */
static void enum_traverse(code_vm *vm, cv self, code_visit_fn visit, void *arg)
{
    visit(vm, ((enum_obj *)cv_obj(self))->it, arg);
}

static cv enum_next(code_vm *vm, cv self)
{
    enum_obj *e = (enum_obj *)cv_obj(self);
    cv x = code_next(vm, e->it);
    if (!x)
        return CV_NULL;
    cv next = code_binop(vm, CODE_OP_ADD, e->count, cv_from_small(1));
    cv r = next ? code_tuple_pack(vm, 2, e->count, x) : CV_NULL;
    code_decref(vm, x);
    if (!r) {
        code_decref(vm, next);
        return CV_NULL;
    }
    code_setref(vm, &e->count, next);
    return r;
}

static cv enum_new(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kwnames)
{
    cv iterable, start = cv_from_small(0);
    if (code_args(vm, "enumerate", args, nargs, kwnames, "iterable,|start", &iterable, &start) < 0)
        return CV_NULL;
    int k = cv_kind(start);
    if (k != CODE_K_INT && k != CODE_K_BOOL)
        return code_raise(vm, &code_exc_TypeError,
                          "'%s' object cannot be interpreted as an integer",
                          code_type_name(start));
    cv it = code_iter(vm, iterable);
    if (!it)
        return CV_NULL;
    enum_obj *e = code_obj_new(vm, t, sizeof *e);
    if (!e) {
        code_decref(vm, it);
        return CV_NULL;
    }
    e->it = it;
    /* enumerate(x, True) counts from 1 as an int, not a bool */
    e->count = k == CODE_K_BOOL ? cv_from_small(start == CODE_TRUE) : code_incref(start);
    return cv_of(e);
}

const code_type code_type_enumerate = {
    .ob = CODE_STATIC_HDR(&code_type_type),
    .name = "enumerate",
    .kind = CODE_K_ITER,
    .dealloc = enum_dealloc,
    .traverse = enum_traverse,
    .iter = code_iter_self,
    .next = enum_next,
    .new = enum_new,
};

/* ---- zip -------------------------------------------------------------------------- */

typedef struct zip_obj {
    code_obj ob;
    bool strict, done;
    size_t n;
    cv its[];
} zip_obj;

static void zip_dealloc(code_vm *vm, code_obj *o)
{
    zip_obj *z = (zip_obj *)o;
    for (size_t i = 0; i < z->n; i++)
        code_decref(vm, z->its[i]);
}

static void zip_traverse(code_vm *vm, cv self, code_visit_fn visit, void *arg)
{
    const zip_obj *z = (const zip_obj *)cv_obj(self);
    for (size_t i = 0; i < z->n; i++)
        visit(vm, z->its[i], arg);
}

static cv zip_strict_error(code_vm *vm, size_t i, const char *how)
{
    if (i == 1)
        return code_raise(vm, &code_exc_ValueError, "zip() argument 2 is %s than argument 1",
                          how);
    return code_raise(vm, &code_exc_ValueError,
                      "zip() argument %zu is %s than arguments 1-%zu", i + 1, how, i);
}

static cv zip_next(code_vm *vm, cv self)
{
    zip_obj *z = (zip_obj *)cv_obj(self);
    if (z->done || z->n == 0)
        return CV_NULL;
    cv tu = code_tuple_new(vm, z->n);
    if (!tu)
        return CV_NULL;
    code_tuple *t = (code_tuple *)cv_obj(tu);
    for (size_t i = 0; i < z->n; i++) {
        cv x = code_next(vm, z->its[i]);
        if (x) {
            t->v[i] = x;
            continue;
        }
        z->done = true;
        if (vm->exc || !z->strict)
            goto fail;
        if (i > 0) {
            zip_strict_error(vm, i, "shorter");
            goto fail;
        }
        /* the first ran out: every other one must end here too */
        for (size_t j = 1; j < z->n; j++) {
            cv y = code_next(vm, z->its[j]);
            if (y) {
                code_decref(vm, y);
                zip_strict_error(vm, j, "longer");
                goto fail;
            }
            if (vm->exc)
                goto fail;
        }
        goto fail;
    }
    return tu;
fail:
    /* the slots not filled are CV_NULL: the tuple's dealloc must skip them */
    code_decref(vm, tu);
    return CV_NULL;
}

static cv zip_new(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kwnames)
{
    static const char *const names[] = { "strict", NULL };
    cv kw[1] = { CV_NULL };
    if (code_lib_kw(vm, "zip", args, nargs, kwnames, names, kw) < 0)
        return CV_NULL;
    int strict = 0;
    if (kw[0] && (strict = code_truth(vm, kw[0])) < 0)
        return CV_NULL;
    zip_obj *z = code_obj_new(vm, t, sizeof *z + nargs * sizeof(cv));
    if (!z)
        return CV_NULL;
    z->strict = strict;
    for (size_t i = 0; i < nargs; i++) {
        if (!(z->its[i] = code_iter(vm, args[i]))) {
            code_decref(vm, cv_of(z));
            return CV_NULL;
        }
        z->n = i + 1;
    }
    return cv_of(z);
}

const code_type code_type_zip = {
    .ob = CODE_STATIC_HDR(&code_type_type),
    .name = "zip",
    .kind = CODE_K_ITER,
    .dealloc = zip_dealloc,
    .traverse = zip_traverse,
    .iter = code_iter_self,
    .next = zip_next,
    .new = zip_new,
};

/* ---- map ------------------------------------------------------------------------- */

typedef struct map_obj {
    code_obj ob;
    cv fn;
    size_t n;
    cv its[];
} map_obj;

static void map_dealloc(code_vm *vm, code_obj *o)
{
    map_obj *m = (map_obj *)o;
    code_decref(vm, m->fn);
    for (size_t i = 0; i < m->n; i++)
        code_decref(vm, m->its[i]);
}

static void map_traverse(code_vm *vm, cv self, code_visit_fn visit, void *arg)
{
    const map_obj *m = (const map_obj *)cv_obj(self);
    visit(vm, m->fn, arg);
    for (size_t i = 0; i < m->n; i++)
        visit(vm, m->its[i], arg);
}

static cv map_next(code_vm *vm, cv self)
{
    map_obj *m = (map_obj *)cv_obj(self);
    cv small[4], *xs = small;
    if (m->n > 4 && !(xs = code_heap_alloc(vm, m->n * sizeof(cv))))
        return CV_NULL;
    size_t got = 0;
    cv r = CV_NULL;
    for (; got < m->n; got++)
        if (!(xs[got] = code_next(vm, m->its[got])))
            break;
    if (got == m->n)
        r = code_call(vm, m->fn, xs, m->n, CV_NULL);
    for (size_t i = 0; i < got; i++)
        code_decref(vm, xs[i]);
    if (xs != small)
        code_heap_free(vm, xs, m->n * sizeof(cv));
    return r;
}

static cv map_new(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kwnames)
{
    if (kwnames)
        return code_raise(vm, &code_exc_TypeError, "map() takes no keyword arguments");
    if (nargs < 2)
        return code_raise(vm, &code_exc_TypeError, "map() must have at least two arguments.");
    map_obj *m = code_obj_new(vm, t, sizeof *m + (nargs - 1) * sizeof(cv));
    if (!m)
        return CV_NULL;
    m->fn = code_incref(args[0]);
    for (size_t i = 1; i < nargs; i++) {
        if (!(m->its[i - 1] = code_iter(vm, args[i]))) {
            code_decref(vm, cv_of(m));
            return CV_NULL;
        }
        m->n = i;
    }
    return cv_of(m);
}

const code_type code_type_map = {
    .ob = CODE_STATIC_HDR(&code_type_type),
    .name = "map",
    .kind = CODE_K_ITER,
    .dealloc = map_dealloc,
    .traverse = map_traverse,
    .iter = code_iter_self,
    .next = map_next,
    .new = map_new,
};

/* ---- filter ------------------------------------------------------------------------ */

typedef struct filter_obj {
    code_obj ob;
    cv fn;                       /* None: truth of the item itself */
    cv it;
} filter_obj;

static void filter_dealloc(code_vm *vm, code_obj *o)
{
    filter_obj *f = (filter_obj *)o;
    code_decref(vm, f->fn);
    code_decref(vm, f->it);
}

static void filter_traverse(code_vm *vm, cv self, code_visit_fn visit, void *arg)
{
    const filter_obj *f = (const filter_obj *)cv_obj(self);
    visit(vm, f->fn, arg);
    visit(vm, f->it, arg);
}

static cv filter_next(code_vm *vm, cv self)
{
    filter_obj *f = (filter_obj *)cv_obj(self);
    cv x;
    while ((x = code_next(vm, f->it))) {
        int t;
        if (f->fn == CODE_NONE) {
            t = code_truth(vm, x);
        } else {
            cv r = code_call(vm, f->fn, &x, 1, CV_NULL);
            t = r ? code_truth(vm, r) : -1;
            code_decref(vm, r);
        }
        if (t > 0)
            return x;
        code_decref(vm, x);
        if (t < 0)
            return CV_NULL;
    }
    return CV_NULL;
}

static cv filter_new(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kwnames)
{
    if (kwnames)
        return code_raise(vm, &code_exc_TypeError, "filter() takes no keyword arguments");
    if (nargs != 2)
        return code_raise(vm, &code_exc_TypeError, "filter expected 2 arguments, got %zu",
                          nargs);
    cv it = code_iter(vm, args[1]);
    if (!it)
        return CV_NULL;
    filter_obj *f = code_obj_new(vm, t, sizeof *f);
    if (!f) {
        code_decref(vm, it);
        return CV_NULL;
    }
    f->fn = code_incref(args[0]);
    f->it = it;
    return cv_of(f);
}

const code_type code_type_filter = {
    .ob = CODE_STATIC_HDR(&code_type_type),
    .name = "filter",
    .kind = CODE_K_ITER,
    .dealloc = filter_dealloc,
    .traverse = filter_traverse,
    .iter = code_iter_self,
    .next = filter_next,
    .new = filter_new,
};

/* ---- reversed ------------------------------------------------------------------------ */

/* Any sequence with len and integer getitem (list, tuple, str, bytes, range),
 * walked by index from the end; a dict through a snapshot of its keys. As
 * CPython's, an index past a shrunken list ends the walk. */
typedef struct rev_obj {
    code_obj ob;
    cv seq;
    ssize_t i;
} rev_obj;

static void rev_dealloc(code_vm *vm, code_obj *o)
{
    code_decref(vm, ((rev_obj *)o)->seq);
}

static void rev_traverse(code_vm *vm, cv self, code_visit_fn visit, void *arg)
{
    visit(vm, ((rev_obj *)cv_obj(self))->seq, arg);
}

static cv rev_next(code_vm *vm, cv self)
{
    rev_obj *r = (rev_obj *)cv_obj(self);
    if (r->i < 0)
        return CV_NULL;
    ssize_t n = code_len(vm, r->seq);
    if (n < 0)
        return CV_NULL;
    if (r->i >= n) {
        r->i = -1;
        return CV_NULL;
    }
    cv idx = cv_from_small(r->i--);
    return code_getitem(vm, r->seq, idx);
}

static cv rev_new(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "reversed", nargs, kwnames, 1, 1) < 0)
        return CV_NULL;
    cv seq = args[0];
    const code_type *st = cv_type(seq);
    cv keep;
    /* a range's own reverse iterator (range_iterator, as CPython's): it
     * needs no len(), which a range past ssize_t has not */
    if (st->kind == CODE_K_RANGE)
        return code_cont_reversed(vm, seq);
    if (st->kind == CODE_K_DICT) {
        keep = code_list_from(vm, seq);
    } else if (st->len && st->getitem && st->kind != CODE_K_SET &&
               st->kind != CODE_K_FROZENSET) {
        keep = code_incref(seq);
    } else {
        return code_raise(vm, &code_exc_TypeError, "'%s' object is not reversible",
                          code_type_name(seq));
    }
    if (!keep)
        return CV_NULL;
    ssize_t n = code_len(vm, keep);
    rev_obj *r = n < 0 ? NULL : code_obj_new(vm, t, sizeof *r);
    if (!r) {
        code_decref(vm, keep);
        return CV_NULL;
    }
    r->seq = keep;
    r->i = n - 1;
    return cv_of(r);
}

const code_type code_type_reversed = {
    .ob = CODE_STATIC_HDR(&code_type_type),
    .name = "reversed",
    .kind = CODE_K_ITER,
    .dealloc = rev_dealloc,
    .traverse = rev_traverse,
    .iter = code_iter_self,
    .next = rev_next,
    .new = rev_new,
};

/* ---- iter(callable, sentinel) -------------------------------------------------------- */

typedef struct calliter_obj {
    code_obj ob;
    cv fn, sentinel;             /* fn CV_NULL once exhausted */
} calliter_obj;

static void calliter_dealloc(code_vm *vm, code_obj *o)
{
    calliter_obj *c = (calliter_obj *)o;
    code_decref(vm, c->fn);
    code_decref(vm, c->sentinel);
}

static void calliter_traverse(code_vm *vm, cv self, code_visit_fn visit, void *arg)
{
    const calliter_obj *c = (const calliter_obj *)cv_obj(self);
    visit(vm, c->fn, arg);
    visit(vm, c->sentinel, arg);
}

static cv calliter_next(code_vm *vm, cv self)
{
    calliter_obj *c = (calliter_obj *)cv_obj(self);
    if (!c->fn)
        return CV_NULL;
    cv v = code_call(vm, c->fn, NULL, 0, CV_NULL);
    if (!v) {
        /* a StopIteration from the callable ends the iteration too */
        if (code_exc_matches(vm, &code_exc_StopIteration)) {
            code_exc_clear(vm);
            code_setref(vm, &c->fn, CV_NULL);
        }
        return CV_NULL;
    }
    int eq = code_eq(vm, v, c->sentinel);
    if (eq != 0) {
        code_decref(vm, v);
        if (eq > 0)
            code_setref(vm, &c->fn, CV_NULL);
        return CV_NULL;
    }
    return v;
}

static const code_type code_type_calliter = {
    .ob = CODE_STATIC_HDR(&code_type_type),
    .name = "callable_iterator",
    .kind = CODE_K_ITER,
    .dealloc = calliter_dealloc,
    .traverse = calliter_traverse,
    .iter = code_iter_self,
    .next = calliter_next,
};

cv code_lib_calliter_new(code_vm *vm, cv fn, cv sentinel)
{
    if (!cv_type(fn)->call)
        return code_raise(vm, &code_exc_TypeError, "iter(v, w): v must be callable");
    calliter_obj *c = code_obj_new(vm, &code_type_calliter, sizeof *c);
    if (!c)
        return CV_NULL;
    c->fn = code_incref(fn);
    c->sentinel = code_incref(sentinel);
    return cv_of(c);
}
