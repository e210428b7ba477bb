/* list: a growable array of references, its slots, its iterators. The
 * methods are in code_list_meth.c. */
#include <string.h>

#include "code/code_cont.h"

/* ---- storage ------------------------------------------------------------------ */

void code_list_clear(code_vm *vm, code_list *l)
{
    cv *v = l->v;
    size_t n = l->n, cap = l->cap;
    l->v = NULL;
    l->n = l->cap = 0;
    code_cont_dealloc_enter(vm);
    for (size_t i = 0; i < n; i++)
        code_cont_release(vm, v[i]);
    if (v)
        code_heap_free(vm, v, cap * sizeof(cv));
    code_cont_dealloc_leave(vm);
}

static void list_dealloc(code_vm *vm, code_obj *o)
{
    code_list_clear(vm, (code_list *)o);
}

static void list_traverse(code_vm *vm, cv self, code_visit_fn visit, void *arg)
{
    const code_list *l = (const code_list *)cv_obj(self);
    for (size_t i = 0; i < l->n; i++)
        visit(vm, l->v[i], arg);
}

static void list_gc_clear(code_vm *vm, cv self)
{
    code_list_clear(vm, (code_list *)cv_obj(self));
}

cv code_list_new(code_vm *vm, size_t cap)
{
    code_list *l = code_obj_new(vm, &code_type_list, sizeof(code_list));
    if (!l)
        return CV_NULL;
    if (cap) {
        if (cap > SIZE_MAX / sizeof(cv) / 2) {
            code_decref(vm, cv_of(l));
            return code_raise_nomem(vm);
        }
        l->v = code_heap_alloc(vm, cap * sizeof(cv));
        if (!l->v) {
            code_decref(vm, cv_of(l));
            return CV_NULL;
        }
        l->cap = cap;
    }
    return cv_of(l);
}

int code_list_reserve(code_vm *vm, code_list *l, size_t more)
{
    if (l->cap - l->n >= more)
        return 0;
    if (more > SIZE_MAX / sizeof(cv) / 4 - l->n) {
        code_raise_nomem(vm);
        return -1;
    }
    size_t need = l->n + more;
    /* CPython's growth: about 1/8 more, so appends are amortised O(1)
     * without doubling big lists. */
    size_t cap = need + (need >> 3) + 6;
    cap &= ~(size_t)3;
    if (cap < need)
        cap = need;
    cv *v = l->v ? code_heap_realloc(vm, l->v, l->cap * sizeof(cv), cap * sizeof(cv))
                 : code_heap_alloc(vm, cap * sizeof(cv));
    if (!v)
        return -1;
    l->v = v;
    l->cap = cap;
    return 0;
}

int code_list_append(code_vm *vm, cv list, cv v)
{
    code_list *l = (code_list *)cv_obj(list);
    if (l->n == l->cap && code_list_reserve(vm, l, 1))
        return -1;
    l->v[l->n++] = code_incref(v);
    return 0;
}

int code_list_extend(code_vm *vm, cv list, cv iterable)
{
    code_list *l = (code_list *)cv_obj(list);
    if (!cv_is_small(iterable) &&
        (cv_kind(iterable) == CODE_K_LIST || cv_kind(iterable) == CODE_K_TUPLE)) {
        size_t n;
        cv *src = code_seq_items(iterable, &n);
        if (code_list_reserve(vm, l, n))
            return -1;
        /* src may be l->v itself (l.extend(l)): reserve moved it, so read
         * the items again. */
        src = code_seq_items(iterable, &n);
        for (size_t i = 0; i < n; i++)
            l->v[l->n + i] = code_incref(src[i]);
        l->n += n;
        return 0;
    }
    if (cv_is(iterable, &code_type_range)) {
        /* CPython's length hint: room made at once, and a range past ssize_t
         * an OverflowError rather than a list that fills the memory */
        ssize_t n = code_len(vm, iterable);
        if (n < 0 || code_list_reserve(vm, l, (size_t)n))
            return -1;
    }
    cv it = code_iter(vm, iterable);
    if (!it)
        return -1;
    for (;;) {
        cv x = code_next(vm, it);
        if (!x)
            break;
        int r = code_list_append(vm, list, x);
        code_decref(vm, x);
        if (r) {
            code_decref(vm, it);
            return -1;
        }
    }
    code_decref(vm, it);
    return vm->exc ? -1 : 0;
}

cv code_list_from(code_vm *vm, cv iterable)
{
    cv l = code_list_new(vm, 0);
    if (!l)
        return CV_NULL;
    if (code_list_extend(vm, l, iterable)) {
        code_decref(vm, l);
        return CV_NULL;
    }
    return l;
}

cv code_list_slice(code_vm *vm, code_list *l, ssize_t start, ssize_t step, ssize_t count)
{
    cv r = code_list_new(vm, (size_t)count);
    if (!r)
        return CV_NULL;
    code_list *o = (code_list *)cv_obj(r);
    for (ssize_t i = 0; i < count; i++)
        o->v[i] = code_incref(l->v[start + i * step]);
    o->n = (size_t)count;
    return r;
}

/* ---- slots --------------------------------------------------------------------- */

static cv list_repr(code_vm *vm, cv self)
{
    code_list *l = (code_list *)cv_obj(self);
    if (l->n == 0)
        return code_str_from_cstr(vm, "[]");
    int r = code_repr_enter(vm, self);
    if (r < 0)
        return CV_NULL;
    if (r > 0)
        return code_str_from_cstr(vm, "[...]");
    code_sb b;
    code_sb_init(&b, vm);
    code_sb_add(&b, "[", 1);
    /* Item by item: a repr can't shrink the list today, but stay in bounds. */
    for (size_t i = 0; i < l->n && !b.failed; i++) {
        if (i)
            code_sb_add(&b, ", ", 2);
        if (code_sb_repr(&b, l->v[i]))
            break;
    }
    code_repr_leave(vm, self);
    if (b.failed || vm->exc) {
        code_sb_free(&b);
        return CV_NULL;
    }
    code_sb_add(&b, "]", 1);
    return code_sb_finish(&b);
}

static cv list_compare(code_vm *vm, cv a, cv b, int op)
{
    if (!cv_is(a, &code_type_list) || !cv_is(b, &code_type_list))
        return CODE_NOTIMPL;
    code_list *x = (code_list *)cv_obj(a), *y = (code_list *)cv_obj(b);
    return code_seq_compare(vm, x->v, x->n, y->v, y->n, op);
}

/* The repeat count of seq * n, or CODE_NOTIMPL/-1 via *ok. */
int code_seq_repeat_count(code_vm *vm, cv a, cv b, bool a_is_seq, ssize_t *count)
{
    cv n = a_is_seq ? b : a;
    if (!code_is_int(n)) {
        /* 'x' * [1] names the list (str's repeat comes first); 1.5 * [1]
         * the float. */
        cv other = n;
        if (!a_is_seq) {
            int k = cv_kind(a);
            if (k == CODE_K_STR || k == CODE_K_BYTES || k == CODE_K_LIST || k == CODE_K_TUPLE)
                other = b;
        }
        return code_raise_i(vm, &code_exc_TypeError,
                            "can't multiply sequence by non-int of type '%s'",
                            code_type_name(other));
    }
    int64_t big;
    if (!cv_is_small(n) && cv_kind(n) == CODE_K_INT && !code_int_to_i64(n, &big))
        return code_raise_i(vm, &code_exc_OverflowError,
                            "cannot fit 'int' into an index-sized integer");
    return code_as_index(vm, n, count);
}

static cv list_repeat(code_vm *vm, code_list *l, ssize_t count)
{
    if (count <= 0 || l->n == 0)
        return code_list_new(vm, 0);
    if ((size_t)count > SIZE_MAX / sizeof(cv) / 4 / l->n)
        return code_raise_nomem(vm);
    size_t total = l->n * (size_t)count;
    cv r = code_list_new(vm, total);
    if (!r)
        return CV_NULL;
    code_list *o = (code_list *)cv_obj(r);
    for (size_t i = 0; i < total; i++)
        o->v[i] = code_incref(l->v[i % l->n]);
    o->n = total;
    return r;
}

static cv list_binop(code_vm *vm, int op, cv a, cv b)
{
    bool a_list = cv_is(a, &code_type_list);
    if (op == CODE_OP_ADD) {
        if (!a_list)
            return CODE_NOTIMPL;
        if (!cv_is(b, &code_type_list))
            return code_raise(vm, &code_exc_TypeError,
                              "can only concatenate list (not \"%s\") to list",
                              code_type_name(b));
        code_list *x = (code_list *)cv_obj(a), *y = (code_list *)cv_obj(b);
        cv r = code_list_new(vm, x->n + y->n);
        if (!r)
            return CV_NULL;
        code_list *o = (code_list *)cv_obj(r);
        for (size_t i = 0; i < x->n; i++)
            o->v[o->n++] = code_incref(x->v[i]);
        for (size_t i = 0; i < y->n; i++)
            o->v[o->n++] = code_incref(y->v[i]);
        return r;
    }
    if (op == CODE_OP_MUL) {
        ssize_t count;
        if (code_seq_repeat_count(vm, a, b, a_list, &count))
            return CV_NULL;
        return list_repeat(vm, (code_list *)cv_obj(a_list ? a : b), count);
    }
    return CODE_NOTIMPL;
}

cv code_list_inplace_add(code_vm *vm, cv list, cv iterable)
{
    if (code_list_extend(vm, list, iterable))
        return CV_NULL;
    return code_incref(list);
}

cv code_list_inplace_mul(code_vm *vm, cv list, cv times)
{
    ssize_t count;
    if (code_seq_repeat_count(vm, list, times, true, &count))
        return CV_NULL;
    code_list *l = (code_list *)cv_obj(list);
    if (count <= 0) {
        code_list_clear(vm, l);
        return code_incref(list);
    }
    if (count > 1 && l->n) {
        if ((size_t)count > SIZE_MAX / sizeof(cv) / 4 / l->n)
            return code_raise_nomem(vm);
        size_t n = l->n;
        if (code_list_reserve(vm, l, n * ((size_t)count - 1)))
            return CV_NULL;
        for (size_t i = n; i < n * (size_t)count; i++)
            l->v[i] = code_incref(l->v[i - n]);
        l->n = n * (size_t)count;
    }
    return code_incref(list);
}

static ssize_t list_len(code_vm *vm, cv self)
{
    (void)vm;
    return (ssize_t)((code_list *)cv_obj(self))->n;
}

static cv list_getitem(code_vm *vm, cv self, cv key)
{
    code_list *l = (code_list *)cv_obj(self);
    if (cv_is(key, &code_type_slice)) {
        ssize_t start, stop, step, count;
        if (code_slice_indices(vm, key, (ssize_t)l->n, &start, &stop, &step, &count))
            return CV_NULL;
        return code_list_slice(vm, l, start, step, count);
    }
    ssize_t i;
    if (code_seq_index(vm, "list", key, (ssize_t)l->n, &i))
        return CV_NULL;
    if (i < 0 || (size_t)i >= l->n)
        return code_raise(vm, &code_exc_IndexError, "list index out of range");
    return code_incref(l->v[i]);
}

/* The items to assign from v: a new list (a copy when v is the target). */
static cv assign_source(code_vm *vm, cv v, const char *msg)
{
    cv it = code_iter(vm, v);
    if (!it) {
        if (code_exc_matches(vm, &code_exc_TypeError)) {
            code_exc_clear(vm);
            return code_raise(vm, &code_exc_TypeError, "%s", msg);
        }
        return CV_NULL;
    }
    cv r = code_list_from(vm, it);
    code_decref(vm, it);
    return r;
}

/* l[lo:hi] = v (v CV_NULL: delete), as list_ass_slice. */
static int list_ass_slice(code_vm *vm, code_list *l, ssize_t lo, ssize_t hi, cv v)
{
    cv src = CV_NULL;
    size_t nv = 0;
    cv *items = NULL;
    if (v) {
        src = assign_source(vm, v, "can only assign an iterable");
        if (!src)
            return -1;
        items = code_seq_items(src, &nv);
    }
    if (lo < 0)
        lo = 0;
    else if ((size_t)lo > l->n)
        lo = (ssize_t)l->n;
    if (hi < lo)
        hi = lo;
    else if ((size_t)hi > l->n)
        hi = (ssize_t)l->n;
    size_t nold = (size_t)(hi - lo);
    cv *old = NULL;
    if (nold) {
        old = code_heap_alloc(vm, nold * sizeof(cv));
        if (!old) {
            code_decref(vm, src);
            return -1;
        }
        memcpy(old, l->v + lo, nold * sizeof(cv));
    }
    if (nv > nold && code_list_reserve(vm, l, nv - nold)) {
        if (old)
            code_heap_free(vm, old, nold * sizeof(cv));
        code_decref(vm, src);
        return -1;
    }
    size_t tail = l->n - (size_t)hi;
    memmove(l->v + lo + nv, l->v + hi, tail * sizeof(cv));
    for (size_t i = 0; i < nv; i++)
        l->v[lo + (ssize_t)i] = code_incref(items[i]);
    l->n = l->n - nold + nv;
    /* The list is whole again before the old items go (their release can
     * run nothing, but keep the order CPython keeps). */
    for (size_t i = 0; i < nold; i++)
        code_decref(vm, old[i]);
    if (old)
        code_heap_free(vm, old, nold * sizeof(cv));
    code_decref(vm, src);
    return 0;
}

static int list_ass_subscript_slice(code_vm *vm, code_list *l, cv key, cv v)
{
    ssize_t start, stop, step, count;
    if (code_slice_indices(vm, key, (ssize_t)l->n, &start, &stop, &step, &count))
        return -1;
    if (step == 1)
        return list_ass_slice(vm, l, start, stop, v);
    if (!v) {
        if (count <= 0)
            return 0;
        if (step < 0) {
            start = start + step * (count - 1);
            step = -step;
        }
        cv *old = code_heap_alloc(vm, (size_t)count * sizeof(cv));
        if (!old)
            return -1;
        size_t w = (size_t)start, k = 0;
        for (size_t r = (size_t)start; r < l->n; r++) {
            if (k < (size_t)count && r == (size_t)start + k * (size_t)step)
                old[k++] = l->v[r];
            else
                l->v[w++] = l->v[r];
        }
        l->n = w;
        for (size_t i = 0; i < (size_t)count; i++)
            code_decref(vm, old[i]);
        code_heap_free(vm, old, (size_t)count * sizeof(cv));
        return 0;
    }
    cv src = assign_source(vm, v, "must assign iterable to extended slice");
    if (!src)
        return -1;
    size_t nv;
    cv *items = code_seq_items(src, &nv);
    if ((ssize_t)nv != count) {
        code_decref(vm, src);
        return code_raise_i(vm, &code_exc_ValueError,
                            "attempt to assign sequence of size %zu to extended slice of size %zd",
                            nv, count);
    }
    for (ssize_t i = 0; i < count; i++) {
        cv *slot = &l->v[start + i * step];
        cv prev = *slot;
        *slot = code_incref(items[i]);
        code_decref(vm, prev);
    }
    code_decref(vm, src);
    return 0;
}

static int list_setitem(code_vm *vm, cv self, cv key, cv value)
{
    code_list *l = (code_list *)cv_obj(self);
    if (cv_is(key, &code_type_slice))
        return list_ass_subscript_slice(vm, l, key, value);
    ssize_t i;
    if (code_seq_index(vm, "list", key, (ssize_t)l->n, &i))
        return -1;
    if (i < 0 || (size_t)i >= l->n)
        return code_raise_i(vm, &code_exc_IndexError, "list assignment index out of range");
    code_setref(vm, &l->v[i], code_incref(value));
    return 0;
}

static int list_delitem(code_vm *vm, cv self, cv key)
{
    code_list *l = (code_list *)cv_obj(self);
    if (cv_is(key, &code_type_slice))
        return list_ass_subscript_slice(vm, l, key, CV_NULL);
    ssize_t i;
    if (code_seq_index(vm, "list", key, (ssize_t)l->n, &i))
        return -1;
    if (i < 0 || (size_t)i >= l->n)
        return code_raise_i(vm, &code_exc_IndexError, "list assignment index out of range");
    return list_ass_slice(vm, l, i, i + 1, CV_NULL);
}

static int list_contains(code_vm *vm, cv self, cv x)
{
    code_list *l = (code_list *)cv_obj(self);
    for (size_t i = 0; i < l->n; i++) {
        int r = code_eq(vm, l->v[i], x);
        if (r)
            return r;
    }
    return 0;
}

/* ---- iterators -------------------------------------------------------------------- */

static void seq_iter_dealloc(code_vm *vm, code_obj *o)
{
    code_decref(vm, ((code_seq_iter *)o)->seq);
}

static void seq_iter_traverse(code_vm *vm, cv self, code_visit_fn visit, void *arg)
{
    visit(vm, ((code_seq_iter *)cv_obj(self))->seq, arg);
}

/* As if exhausted. */
static void seq_iter_clear(code_vm *vm, cv self)
{
    code_setref(vm, &((code_seq_iter *)cv_obj(self))->seq, CV_NULL);
}

static cv seq_iter_next(code_vm *vm, cv self)
{
    code_seq_iter *it = (code_seq_iter *)cv_obj(self);
    if (!it->seq)
        return CV_NULL;
    size_t n;
    cv *v = code_seq_items(it->seq, &n);
    if (it->i >= 0 && (size_t)it->i < n)
        return code_incref(v[it->i++]);
    code_setref(vm, &it->seq, CV_NULL);
    return CV_NULL;
}

static cv seq_reviter_next(code_vm *vm, cv self)
{
    code_seq_iter *it = (code_seq_iter *)cv_obj(self);
    if (!it->seq)
        return CV_NULL;
    size_t n;
    cv *v = code_seq_items(it->seq, &n);
    if (it->i >= 0 && (size_t)it->i < n)
        return code_incref(v[it->i--]);
    code_setref(vm, &it->seq, CV_NULL);
    return CV_NULL;
}

#define SEQ_ITER_TYPE(var, tname, nextfn)                                                   \
    const code_type var = {                                                          \
        .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},                            \
        .name = tname,                                                                      \
        .kind = CODE_K_ITER,                                                                \
        .dealloc = seq_iter_dealloc,                                                        \
        .traverse = seq_iter_traverse,                                                      \
        .clear = seq_iter_clear,                                                            \
        .iter = code_iter_self,                                                                  \
        .next = nextfn,                                                                     \
    }
SEQ_ITER_TYPE(code_type_list_iter, "list_iterator", seq_iter_next);
SEQ_ITER_TYPE(code_type_list_reviter, "list_reverseiterator", seq_reviter_next);
SEQ_ITER_TYPE(code_type_tuple_iter, "tuple_iterator", seq_iter_next);
SEQ_ITER_TYPE(code_type_tuple_reviter, "reversed", seq_reviter_next);

cv code_seq_iter_new(code_vm *vm, cv seq, bool reversed)
{
    bool list = cv_kind(seq) == CODE_K_LIST;
    const code_type *t = list ? (reversed ? &code_type_list_reviter : &code_type_list_iter)
                              : (reversed ? &code_type_tuple_reviter : &code_type_tuple_iter);
    code_seq_iter *it = code_obj_new(vm, t, sizeof(code_seq_iter));
    if (!it)
        return CV_NULL;
    it->seq = code_incref(seq);
    size_t n;
    code_seq_items(seq, &n);
    it->i = reversed ? (ssize_t)n - 1 : 0;
    return cv_of(it);
}

static cv list_iter(code_vm *vm, cv self)
{
    return code_seq_iter_new(vm, self, false);
}

static cv list_new(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kwnames)
{
    (void)t;
    if (kwnames && ((code_tuple *)cv_obj(kwnames))->n)
        return code_raise(vm, &code_exc_TypeError, "list() takes no keyword arguments");
    if (code_cont_argn(vm, "list", 0, 1, nargs, CV_NULL))
        return CV_NULL;
    return nargs ? code_list_from(vm, args[0]) : code_list_new(vm, 0);
}

extern const code_method code_list_methods[];

const code_type code_type_list = {
    .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},
    .name = "list",
    .kind = CODE_K_LIST,
    .dealloc = list_dealloc,
    .traverse = list_traverse,
    .clear = list_gc_clear,
    .repr = list_repr,
    .compare = list_compare,
    .binop = list_binop,
    .inplace = code_cont_inplace,
    .len = list_len,
    .iter = list_iter,
    .getitem = list_getitem,
    .setitem = list_setitem,
    .delitem = list_delitem,
    .contains = list_contains,
    .methods = code_list_methods,
    .new = list_new,
};
