/* range and its iterator; slice and code_slice_indices. A range whose
 * start, stop, step and length fit int64 computes in int64 here; a bigger
 * one goes to code_range_big.c. */
#include <string.h>

#include "code/code_cont.h"
#include "code/code_range.h"

/* ---- range ---------------------------------------------------------------------- */

/* The loops that compare every item ("a" in range(2 ** 62)) check the run's
 * time every so many items, as the evaluator's loops do: a range may be
 * longer than any time limit. */
#define RANGE_TICK 4095

/* The number of items, or -1 past int64. */
static int64_t range_len(int64_t start, int64_t stop, int64_t step)
{
    uint64_t n;
    if (step > 0 && start < stop)
        n = ((uint64_t)stop - (uint64_t)start - 1) / (uint64_t)step + 1;
    else if (step < 0 && start > stop)
        n = ((uint64_t)start - (uint64_t)stop - 1) / (0 - (uint64_t)step) + 1;
    else
        return 0;
    return n > INT64_MAX ? -1 : (int64_t)n;
}

cv code_range_new(code_vm *vm, int64_t start, int64_t stop, int64_t step)
{
    if (step == 0)
        return code_raise(vm, &code_exc_ValueError, "range() arg 3 must not be zero");
    int64_t len = range_len(start, stop, step);
    if (len < 0) {               /* range(-2 ** 63, 2 ** 63 - 1): only the length is big */
        cv a = code_int_from_i64(vm, start), b = code_int_from_i64(vm, stop);
        cv c = code_int_from_i64(vm, step);
        cv r = a && b && c ? code_range_new_big(vm, a, b, c) : CV_NULL;
        code_decref(vm, a);
        code_decref(vm, b);
        code_decref(vm, c);
        return r;
    }
    code_range *r = code_obj_new(vm, &code_type_range, sizeof(code_range));
    if (!r)
        return CV_NULL;
    r->start = start;
    r->stop = stop;
    r->step = step;
    r->len = len;
    return cv_of(r);
}

static cv range_new(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kwnames)
{
    (void)t;
    if (kwnames && ((code_tuple *)cv_obj(kwnames))->n)
        return code_raise(vm, &code_exc_TypeError, "range() takes no keyword arguments");
    if (code_cont_argn(vm, "range", 1, 3, nargs, CV_NULL))
        return CV_NULL;
    for (size_t i = 0; i < nargs; i++) {
        int64_t unused;
        if (!code_is_int(args[i]) && code_as_i64(vm, args[i], &unused))
            return CV_NULL;      /* its TypeError */
    }
    cv start = nargs == 1 ? cv_from_small(0) : args[0], stop = nargs == 1 ? args[0] : args[1];
    cv step = nargs == 3 ? args[2] : cv_from_small(1);
    if (code_int_sign(step) == 0)
        return code_raise(vm, &code_exc_ValueError, "range() arg 3 must not be zero");
    return code_range_from_ints(vm, start, stop, step);
}

static cv range_repr(code_vm *vm, cv self)
{
    code_range *r = (code_range *)cv_obj(self);
    if (code_range_is_big(self))
        return code_range_big_repr(vm, self);
    if (r->step == 1)
        return code_str_fmt(vm, "range(%lld, %lld)", (long long)r->start, (long long)r->stop);
    return code_str_fmt(vm, "range(%lld, %lld, %lld)", (long long)r->start, (long long)r->stop,
                        (long long)r->step);
}

static int64_t range_item(const code_range *r, int64_t i)
{
    return (int64_t)((uint64_t)r->start + (uint64_t)i * (uint64_t)r->step);
}

static ssize_t range_len_slot(code_vm *vm, cv self)
{
    if (code_range_is_big(self))
        return code_range_big_len(vm, self);
    return (ssize_t)((code_range *)cv_obj(self))->len;
}

/* Not len()'s truth: that overflows for a big range. */
static int range_truth(code_vm *vm, cv self)
{
    (void)vm;
    if (code_range_is_big(self))
        return code_range_big_nonempty(self);
    return ((code_range *)cv_obj(self))->len != 0;
}

static cv range_getitem(code_vm *vm, cv self, cv key)
{
    code_range *r = (code_range *)cv_obj(self);
    if (code_range_is_big(self)) {
        if (cv_is(key, &code_type_slice))
            return code_range_slice_any(vm, self, key);
        ssize_t unused;
        if (!code_is_int(key) && code_seq_index(vm, "range", key, 0, &unused))
            return CV_NULL;      /* its TypeError */
        return code_range_big_item(vm, self, key);
    }
    if (cv_is(key, &code_type_slice)) {
        ssize_t start, stop, step, count;
        if (code_slice_indices(vm, key, (ssize_t)r->len, &start, &stop, &step, &count))
            return CV_NULL;
        int64_t nstart, nstop, nstep;
        if (__builtin_mul_overflow(r->step, (int64_t)step, &nstep) ||
            __builtin_mul_overflow((int64_t)stop, r->step, &nstop) ||
            __builtin_add_overflow(nstop, r->start, &nstop))
            return code_range_slice_any(vm, self, key);   /* computed with big ints */
        nstart = range_item(r, start);
        return code_range_new(vm, nstart, nstop, nstep);
    }
    ssize_t i;
    int64_t big;
    /* range computes with any int: a huge index is only out of range. */
    bool huge = !cv_is_small(key) && cv_kind(key) == CODE_K_INT && !code_int_to_i64(key, &big);
    if (!huge && code_seq_index(vm, "range", key, (ssize_t)r->len, &i))
        return CV_NULL;
    if (huge || i < 0 || i >= r->len)
        return code_raise(vm, &code_exc_IndexError, "range object index out of range");
    return code_int_from_i64(vm, range_item(r, i));
}

/* The position of x in r, -1 if absent (ints only). */
static int64_t range_find_int(const code_range *r, int64_t x)
{
    if (r->len == 0)
        return -1;
    if (r->step > 0 ? (x < r->start || x >= r->stop) : (x > r->start || x <= r->stop))
        return -1;
    uint64_t off = r->step > 0 ? (uint64_t)x - (uint64_t)r->start
                               : (uint64_t)r->start - (uint64_t)x;
    uint64_t st = r->step > 0 ? (uint64_t)r->step : 0 - (uint64_t)r->step;
    return off % st ? -1 : (int64_t)(off / st);
}

/* The position of x (any value, by ==) in a big range: by iteration for
 * a value that is no int, as CPython's; -1 absent, -2 error. */
static int64_t big_find(code_vm *vm, cv self, cv x)
{
    if (code_is_int(x)) {
        cv pos = CV_NULL;
        int rc = code_range_big_find_int(vm, self, x, &pos);
        if (rc <= 0)
            return rc < 0 ? -2 : -1;
        int64_t i;
        bool fits = code_int_to_i64(pos, &i);
        code_decref(vm, pos);
        if (!fits) {
            code_raise(vm, &code_exc_OverflowError, "Python int too large to convert to C ssize_t");
            return -2;
        }
        return i;
    }
    cv it = code_range_big_iter(vm, self), item;
    if (!it)
        return -2;
    int64_t k = 0, found = -1;
    while ((item = code_next(vm, it))) {
        int e = code_eq(vm, item, x);
        code_decref(vm, item);
        if (e) {
            found = e < 0 ? -2 : k;
            break;
        }
        if ((++k & RANGE_TICK) == 0 && code_check_time(vm))
            break;
    }
    code_decref(vm, it);
    return vm->exc ? -2 : found;
}

/* The position of x (any value, by ==), -1 absent, -2 error. */
static int64_t range_find(code_vm *vm, const code_range *r, cv x)
{
    int64_t i;
    if (code_range_is_big(cv_of(r)))
        return big_find(vm, cv_of(r), x);
    if (code_is_int(x)) {
        if (!code_int_to_i64(x, &i))
            return -1;
        return range_find_int(r, i);
    }
    for (int64_t k = 0; k < r->len; k++) {
        cv item = code_int_from_i64(vm, range_item(r, k));
        if (!item)
            return -2;
        int e = code_eq(vm, item, x);
        code_decref(vm, item);
        if (e < 0)
            return -2;
        if (e)
            return k;
        if ((k & RANGE_TICK) == RANGE_TICK && code_check_time(vm))
            return -2;
    }
    return -1;
}

static int range_contains(code_vm *vm, cv self, cv x)
{
    if (code_range_is_big(self) && code_is_int(x))
        return code_range_big_find_int(vm, self, x, NULL);
    int64_t i = range_find(vm, (code_range *)cv_obj(self), x);
    return i == -2 ? -1 : i >= 0;
}

static cv range_compare(code_vm *vm, cv a, cv b, int op)
{
    if (!cv_is(a, &code_type_range) || !cv_is(b, &code_type_range) ||
        (op != CODE_CMP_EQ && op != CODE_CMP_NE))
        return CODE_NOTIMPL;
    if (code_range_is_big(a) || code_range_is_big(b))
        return code_range_compare_any(vm, a, b, op);
    code_range *x = (code_range *)cv_obj(a), *y = (code_range *)cv_obj(b);
    bool eq = x->len == y->len &&
              (x->len == 0 || (x->start == y->start && (x->len == 1 || x->step == y->step)));
    return code_bool(eq == (op == CODE_CMP_EQ));
}

/* CPython's: the hash of (len, start, step), with None for what does not
 * matter (start and step of an empty range, step of a one-item range). */
static int range_hash(code_vm *vm, cv self, uint64_t *h)
{
    code_range *r = (code_range *)cv_obj(self);
    if (code_range_is_big(self))
        return code_range_hash_any(vm, self, h);
    cv len = code_int_from_i64(vm, r->len);
    cv start = r->len ? code_int_from_i64(vm, r->start) : CODE_NONE;
    cv step = r->len > 1 ? code_int_from_i64(vm, r->step) : CODE_NONE;
    int rc = -1;
    if (len && start && step) {
        cv t = code_tuple_pack(vm, 3, len, start, step);
        if (t) {
            rc = code_hash(vm, t, h);
            code_decref(vm, t);
        }
    }
    code_decref(vm, len);
    code_decref(vm, start);
    code_decref(vm, step);
    return rc;
}

static cv range_getattr(code_vm *vm, cv self, const char *name)
{
    code_range *r = (code_range *)cv_obj(self);
    if (code_range_is_big(self)) {
        code_range_big *g = (code_range_big *)r;
        cv v = !strcmp(name, "start") ? g->start : !strcmp(name, "stop") ? g->stop
             : !strcmp(name, "step") ? g->step : CV_NULL;
        return code_incref(v);
    }
    if (strcmp(name, "start") == 0)
        return code_int_from_i64(vm, r->start);
    if (strcmp(name, "stop") == 0)
        return code_int_from_i64(vm, r->stop);
    if (strcmp(name, "step") == 0)
        return code_int_from_i64(vm, r->step);
    return CV_NULL;
}

/* ---- iterator ---------------------------------------------------------------------- */

static cv range_iter_next(code_vm *vm, cv self)
{
    code_range_iter *it = (code_range_iter *)cv_obj(self);
    if (it->i >= it->len)
        return CV_NULL;
    int64_t v = (int64_t)((uint64_t)it->start + (uint64_t)it->i++ * (uint64_t)it->step);
    return code_int_from_i64(vm, v);
}

const code_type code_type_range_iter = {
    .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},
    .name = "range_iterator",
    .kind = CODE_K_ITER,
    .iter = code_iter_self,
    .next = range_iter_next,
};

cv code_range_iter_new(code_vm *vm, int64_t start, int64_t step, int64_t len)
{
    code_range_iter *it = code_obj_new(vm, &code_type_range_iter, sizeof(code_range_iter));
    if (!it)
        return CV_NULL;
    it->start = start;
    it->step = step;
    it->len = len;
    return cv_of(it);
}

static cv range_iter_slot(code_vm *vm, cv self)
{
    if (code_range_is_big(self))
        return code_range_big_iter(vm, self);
    code_range *r = (code_range *)cv_obj(self);
    return code_range_iter_new(vm, r->start, r->step, r->len);
}

/* reversed(range): from the last item down (the step negated in
 * wrapping arithmetic, which the iterator's own arithmetic undoes). */
cv code_range_reversed(code_vm *vm, cv self)
{
    if (code_range_is_big(self))
        return code_range_big_reversed(vm, self);
    code_range *r = (code_range *)cv_obj(self);
    int64_t last = r->len ? range_item(r, r->len - 1) : r->start;
    return code_range_iter_new(vm, last, (int64_t)(0 - (uint64_t)r->step), r->len);
}

/* ---- methods ------------------------------------------------------------------------ */

static cv not_in_range(code_vm *vm, cv x)
{
    cv r = code_repr(vm, x);
    if (!r)
        return CV_NULL;
    code_raise(vm, &code_exc_ValueError, "%s is not in range", code_str_cstr(r));
    code_decref(vm, r);
    return CV_NULL;
}

static cv range_index(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_cont_self(vm, "range", "index", args, nargs, &code_type_range, NULL) ||
        code_cont_arg1(vm, "range.index", nargs - 1, kwnames))
        return CV_NULL;
    if (code_range_is_big(args[0]) && code_is_int(args[1])) {
        cv pos = CV_NULL;        /* the index may be past int64 too */
        int rc = code_range_big_find_int(vm, args[0], args[1], &pos);
        return rc < 0 ? CV_NULL : rc ? pos : not_in_range(vm, args[1]);
    }
    int64_t i = range_find(vm, (code_range *)cv_obj(args[0]), args[1]);
    if (i == -2)
        return CV_NULL;
    return i < 0 ? not_in_range(vm, args[1]) : code_int_from_i64(vm, i);
}

static cv range_count(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_cont_self(vm, "range", "count", args, nargs, &code_type_range, NULL) ||
        code_cont_arg1(vm, "range.count", nargs - 1, kwnames))
        return CV_NULL;
    code_range *r = (code_range *)cv_obj(args[0]);
    if (code_is_int(args[1])) {
        int rc = code_range_is_big(args[0])
                     ? code_range_big_find_int(vm, args[0], args[1], NULL)
                     : range_find(vm, r, args[1]) >= 0;
        return rc < 0 ? CV_NULL : cv_from_small(rc);
    }
    /* Anything else by ==, item after item, as CPython (a big range's
     * items by its iterator, for as long as that takes). */
    cv it = code_iter(vm, args[0]), item;
    if (!it)
        return CV_NULL;
    int64_t c = 0;
    for (int64_t k = 1; (item = code_next(vm, it)); k++) {
        int e = code_eq(vm, item, args[1]);
        code_decref(vm, item);
        if (e < 0 || ((k & RANGE_TICK) == 0 && code_check_time(vm)))
            break;
        c += e;
    }
    code_decref(vm, it);
    return vm->exc ? CV_NULL : code_int_from_i64(vm, c);
}

static const code_method range_methods[] = {
    {"index", range_index},
    {"count", range_count},
    CODE_CONT_DUNDERS,
    {NULL, NULL},
};

const code_type code_type_range = {
    .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},
    .name = "range",
    .kind = CODE_K_RANGE,
    .dealloc = code_range_big_dealloc,
    .repr = range_repr,
    .hash = range_hash,
    .compare = range_compare,
    .len = range_len_slot,
    .truth = range_truth,
    .iter = range_iter_slot,
    .getitem = range_getitem,
    .contains = range_contains,
    .getattr = range_getattr,
    .methods = range_methods,
    .new = range_new,
};

/* ---- slice ---------------------------------------------------------------------------- */

cv code_slice_new(code_vm *vm, cv start, cv stop, cv step)
{
    code_slice *s = code_obj_new(vm, &code_type_slice, sizeof(code_slice));
    if (!s)
        return CV_NULL;
    s->start = code_incref(start ? start : CODE_NONE);
    s->stop = code_incref(stop ? stop : CODE_NONE);
    s->step = code_incref(step ? step : CODE_NONE);
    return cv_of(s);
}

static void slice_dealloc(code_vm *vm, code_obj *o)
{
    code_slice *s = (code_slice *)o;
    code_decref(vm, s->start);
    code_decref(vm, s->stop);
    code_decref(vm, s->step);
}

static int slice_index(code_vm *vm, cv v, ssize_t *out)
{
    if (!code_is_int(v))
        return code_raise_i(vm, &code_exc_TypeError,
                            "slice indices must be integers or None or have an __index__ method");
    return code_as_index(vm, v, out);
}

int code_slice_indices(code_vm *vm, cv slice, ssize_t len, ssize_t *start, ssize_t *stop,
                       ssize_t *step, ssize_t *count)
{
    code_slice *s = (code_slice *)cv_obj(slice);
    /* PySlice_Unpack */
    if (s->step == CODE_NONE) {
        *step = 1;
    } else {
        if (slice_index(vm, s->step, step))
            return -1;
        if (*step == 0)
            return code_raise_i(vm, &code_exc_ValueError, "slice step cannot be zero");
        if (*step < -SSIZE_MAX)
            *step = -SSIZE_MAX;
    }
    if (s->start == CODE_NONE)
        *start = *step < 0 ? SSIZE_MAX : 0;
    else if (slice_index(vm, s->start, start))
        return -1;
    if (s->stop == CODE_NONE)
        *stop = *step < 0 ? -SSIZE_MAX - 1 : SSIZE_MAX;
    else if (slice_index(vm, s->stop, stop))
        return -1;
    /* PySlice_AdjustIndices */
    if (*start < 0) {
        *start += len;
        if (*start < 0)
            *start = *step < 0 ? -1 : 0;
    } else if (*start >= len) {
        *start = *step < 0 ? len - 1 : len;
    }
    if (*stop < 0) {
        *stop += len;
        if (*stop < 0)
            *stop = *step < 0 ? -1 : 0;
    } else if (*stop >= len) {
        *stop = *step < 0 ? len - 1 : len;
    }
    *count = 0;
    if (*step < 0) {
        if (*stop < *start)
            *count = (*start - *stop - 1) / (-*step) + 1;
    } else if (*start < *stop) {
        *count = (*stop - *start - 1) / *step + 1;
    }
    return 0;
}

static cv slice_new_slot(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kwnames)
{
    (void)t;
    if (kwnames && ((code_tuple *)cv_obj(kwnames))->n)
        return code_raise(vm, &code_exc_TypeError, "slice() takes no keyword arguments");
    if (code_cont_argn(vm, "slice", 1, 3, nargs, CV_NULL))
        return CV_NULL;
    if (nargs == 1)
        return code_slice_new(vm, CODE_NONE, args[0], CODE_NONE);
    return code_slice_new(vm, args[0], args[1], nargs > 2 ? args[2] : CODE_NONE);
}

static cv slice_repr(code_vm *vm, cv self)
{
    code_slice *s = (code_slice *)cv_obj(self);
    code_sb b;
    code_sb_init(&b, vm);
    code_sb_addc(&b, "slice(");
    code_sb_repr(&b, s->start);
    code_sb_add(&b, ", ", 2);
    code_sb_repr(&b, s->stop);
    code_sb_add(&b, ", ", 2);
    code_sb_repr(&b, s->step);
    code_sb_add(&b, ")", 1);
    if (b.failed || vm->exc) {
        code_sb_free(&b);
        return CV_NULL;
    }
    return code_sb_finish(&b);
}

static cv slice_compare(code_vm *vm, cv a, cv b, int op)
{
    if (!cv_is(a, &code_type_slice) || !cv_is(b, &code_type_slice))
        return CODE_NOTIMPL;
    code_slice *x = (code_slice *)cv_obj(a), *y = (code_slice *)cv_obj(b);
    cv xa[3] = {x->start, x->stop, x->step}, ya[3] = {y->start, y->stop, y->step};
    return code_seq_compare(vm, xa, 3, ya, 3, op);
}

static cv slice_getattr(code_vm *vm, cv self, const char *name)
{
    (void)vm;
    code_slice *s = (code_slice *)cv_obj(self);
    if (strcmp(name, "start") == 0)
        return code_incref(s->start);
    if (strcmp(name, "stop") == 0)
        return code_incref(s->stop);
    if (strcmp(name, "step") == 0)
        return code_incref(s->step);
    return CV_NULL;
}

static cv slice_indices_m(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_cont_self(vm, "slice", "indices", args, nargs, &code_type_slice, NULL) ||
        code_cont_arg1(vm, "slice.indices", nargs - 1, kwnames))
        return CV_NULL;
    ssize_t len, start, stop, step, count;
    if (code_as_index(vm, args[1], &len))
        return CV_NULL;
    if (len < 0)
        return code_raise(vm, &code_exc_ValueError, "length should not be negative");
    if (code_slice_indices(vm, args[0], len, &start, &stop, &step, &count))
        return CV_NULL;
    cv a = code_int_from_i64(vm, start), b = code_int_from_i64(vm, stop),
       c = code_int_from_i64(vm, step);
    cv t = a && b && c ? code_tuple_pack(vm, 3, a, b, c) : CV_NULL;
    code_decref(vm, a);
    code_decref(vm, b);
    code_decref(vm, c);
    return t;
}

static const code_method slice_methods[] = {
    {"indices", slice_indices_m},
    {NULL, NULL},
};

const code_type code_type_slice = {
    .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},
    .name = "slice",
    .kind = CODE_K_SLICE,
    .dealloc = slice_dealloc,
    .repr = slice_repr,
    .compare = slice_compare,
    .getattr = slice_getattr,
    .methods = slice_methods,
    .new = slice_new_slot,
};
