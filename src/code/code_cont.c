/* What the container types share: the repr cycle guard, unbound-method
 * checks, index resolution, lexicographic comparison, and the entry points
 * the core calls for in-place operators and reversed(). */
#include <stdio.h>
#include <string.h>

#include "code/code_cont.h"

int code_repr_enter(code_vm *vm, cv v)
{
    /* code_repr has made the depth check: only cycles are left to find. */
    if (!vm->repr_active) {
        vm->repr_active = code_list_new(vm, 8);
        if (!vm->repr_active)
            return -1;
    }
    code_list *l = (code_list *)cv_obj(vm->repr_active);
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i] == v)
            return 1;
    return code_list_append(vm, vm->repr_active, v);
}

void code_repr_leave(code_vm *vm, cv v)
{
    code_list *l = (code_list *)cv_obj(vm->repr_active);
    /* Entries are nested, so v is the last one. */
    if (l->n && l->v[l->n - 1] == v) {
        l->n--;
        code_decref(vm, v);
    }
}

int code_cont_self(code_vm *vm, const char *tname, const char *meth, cv *args, size_t nargs,
                   const code_type *t, const code_type *t2)
{
    if (nargs == 0)
        return code_raise_i(vm, &code_exc_TypeError, "unbound method %s.%s() needs an argument",
                            tname, meth);
    const code_type *at = cv_type(args[0]);
    if (at != t && (!t2 || at != t2))
        return code_raise_i(vm, &code_exc_TypeError,
                            "descriptor '%s' for '%s' objects doesn't apply to a '%s' object",
                            meth, tname, at->name);
    return 0;
}

bool code_is_int(cv v)
{
    if (cv_is_small(v))
        return true;
    int k = cv_kind(v);
    return k == CODE_K_INT || k == CODE_K_BOOL;
}

int code_seq_index(code_vm *vm, const char *what, cv key, ssize_t len, ssize_t *out)
{
    if (!code_is_int(key))
        return code_raise_i(vm, &code_exc_TypeError,
                            "%s indices must be integers or slices, not %s", what,
                            code_type_name(key));
    ssize_t i;
    int64_t big;
    if (!cv_is_small(key) && cv_kind(key) == CODE_K_INT && !code_int_to_i64(key, &big))
        return code_raise_i(vm, &code_exc_IndexError,
                            "cannot fit 'int' into an index-sized integer");
    if (code_as_index(vm, key, &i))
        return -1;
    if (i < 0)
        i += len;
    *out = i;
    return 0;
}

static cv cmp_sizes(size_t a, size_t b, int op)
{
    bool r = false;
    switch (op) {
    case CODE_CMP_LT: r = a < b; break;
    case CODE_CMP_LE: r = a <= b; break;
    case CODE_CMP_EQ: r = a == b; break;
    case CODE_CMP_NE: r = a != b; break;
    case CODE_CMP_GT: r = a > b; break;
    case CODE_CMP_GE: r = a >= b; break;
    }
    return code_bool(r);
}

cv code_seq_compare(code_vm *vm, const cv *a, size_t na, const cv *b, size_t nb, int op)
{
    if ((op == CODE_CMP_EQ || op == CODE_CMP_NE) && na != nb)
        return code_bool(op == CODE_CMP_NE);
    /* code_compare, which called here, has made the depth check. */
    size_t i = 0;
    for (; i < na && i < nb; i++) {
        int r = code_eq(vm, a[i], b[i]);
        if (r < 0)
            return CV_NULL;
        if (!r)
            break;
    }
    cv res;
    if (i >= na || i >= nb)
        res = cmp_sizes(na, nb, op);
    else if (op == CODE_CMP_EQ)
        res = CODE_FALSE;
    else if (op == CODE_CMP_NE)
        res = CODE_TRUE;
    else
        res = code_compare(vm, a[i], b[i], op);
    return res;
}

int code_seq_repr_items(code_sb *b, const cv *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i && code_sb_add(b, ", ", 2))
            return -1;
        if (code_sb_repr(b, v[i]))
            return -1;
    }
    return 0;
}

cv code_cont_inplace(code_vm *vm, int op, cv a, cv b)
{
    if (cv_is_small(a))
        return CODE_NOTIMPL;
    switch (cv_kind(a)) {
    case CODE_K_LIST:
        if (op == CODE_OP_ADD)
            return code_list_inplace_add(vm, a, b);
        if (op == CODE_OP_MUL)
            return code_list_inplace_mul(vm, a, b);
        return CODE_NOTIMPL;
    case CODE_K_SET:
        return code_set_inplace(vm, op, a, b);
    case CODE_K_DICT:
        if (op == CODE_OP_OR)
            return code_dict_inplace_or(vm, a, b);
        return CODE_NOTIMPL;
    default:
        return CODE_NOTIMPL;
    }
}

static bool has_kw(cv kwnames)
{
    return kwnames && ((code_tuple *)cv_obj(kwnames))->n > 0;
}

static int no_kw(code_vm *vm, const char *name, cv kwnames)
{
    if (has_kw(kwnames))
        return code_raise_i(vm, &code_exc_TypeError, "%s() takes no keyword arguments", name);
    return 0;
}

int code_cont_arg0(code_vm *vm, const char *name, size_t nargs, cv kwnames)
{
    if (no_kw(vm, name, kwnames))
        return -1;
    if (nargs != 0)
        return code_raise_i(vm, &code_exc_TypeError, "%s() takes no arguments (%zu given)", name,
                            nargs);
    return 0;
}

int code_cont_arg1(code_vm *vm, const char *name, size_t nargs, cv kwnames)
{
    if (no_kw(vm, name, kwnames))
        return -1;
    if (nargs != 1)
        return code_raise_i(vm, &code_exc_TypeError,
                            "%s() takes exactly one argument (%zu given)", name, nargs);
    return 0;
}

int code_cont_argn(code_vm *vm, const char *name, size_t min, size_t max, size_t nargs,
                   cv kwnames)
{
    if (no_kw(vm, name, kwnames))
        return -1;
    if (nargs >= min && nargs <= max)
        return 0;
    /* The short name, as argument clinic's messages have it. */
    const char *dot = strrchr(name, '.');
    const char *shortname = dot ? dot + 1 : name;
    size_t want = nargs < min ? min : max;
    const char *how = min == max ? "" : nargs < min ? "at least " : "at most ";
    return code_raise_i(vm, &code_exc_TypeError, "%s expected %s%zu argument%s, got %zu",
                        shortname, how, want, want == 1 ? "" : "s", nargs);
}

cv code_cont_reversed(code_vm *vm, cv v)
{
    if (cv_is_small(v))
        return CV_NULL;
    switch (cv_kind(v)) {
    case CODE_K_LIST:
    case CODE_K_TUPLE:
        return code_seq_iter_new(vm, v, true);
    case CODE_K_RANGE:
        return code_range_reversed(vm, v);
    case CODE_K_DICT:
        return code_dict_iter_new(vm, v, 0, true);
    default:
        break;
    }
    const code_type *t = cv_type(v);
    if (t == &code_type_dict_keys || t == &code_type_dict_values || t == &code_type_dict_items) {
        int kind;
        cv d = code_dict_view_dict(v, &kind);
        return code_dict_iter_new(vm, d, kind, true);
    }
    return CV_NULL;
}

/* ---- the trashcan --------------------------------------------------------------- */

#define TRASH_DEPTH 100

void code_cont_dealloc_enter(code_vm *vm)
{
    vm->trash_depth++;
}

void code_cont_dealloc_leave(code_vm *vm)
{
    if (--vm->trash_depth || vm->trash_draining || !vm->ntrash)
        return;
    vm->trash_draining = true;
    while (vm->ntrash) {
        cv v = vm->trash[--vm->ntrash];
        code_decref(vm, v);
    }
    code_heap_free(vm, vm->trash, vm->trash_cap * sizeof(cv));
    vm->trash = NULL;
    vm->trash_cap = 0;
    vm->trash_draining = false;
}

static bool trash_push(code_vm *vm, cv v)
{
    if (vm->ntrash == vm->trash_cap) {
        size_t cap = vm->trash_cap ? vm->trash_cap * 2 : 64;
        /* Freeing must not disturb an exception being raised: an
         * allocation that fails here only means recursing instead. */
        cv saved = vm->exc;
        vm->exc = CV_NULL;
        cv *t = vm->trash ? code_heap_realloc(vm, vm->trash, vm->trash_cap * sizeof(cv),
                                              cap * sizeof(cv))
                          : code_heap_alloc(vm, cap * sizeof(cv));
        if (!t)
            code_exc_clear(vm);
        vm->exc = saved;
        if (!t)
            return false;
        vm->trash = t;
        vm->trash_cap = cap;
    }
    vm->trash[vm->ntrash++] = v;
    return true;
}

void code_cont_release(code_vm *vm, cv v)
{
    if (vm->trash_depth >= TRASH_DEPTH && v && !cv_is_small(v) && cv_obj(v)->rc == 1) {
        int k = cv_kind(v);
        if ((k == CODE_K_LIST || k == CODE_K_TUPLE || k == CODE_K_DICT || k == CODE_K_SET ||
             k == CODE_K_FROZENSET) &&
            trash_push(vm, v))
            return;
    }
    code_decref(vm, v);
}

/* ---- the dunder methods code sometimes calls by name ---------------------------
 * sorted(d, key=d.__getitem__), x.__len__(): the slots under their Python
 * names, shared by the container types' method tables. */

static int dunder_args(code_vm *vm, const char *meth, cv *args, size_t nargs, cv kwnames,
                       size_t want)
{
    char name[48];
    const char *tname = nargs ? cv_type(args[0])->name : "object";
    snprintf(name, sizeof name, "%s.%s", tname, meth);
    if (nargs == 0)
        return code_raise_i(vm, &code_exc_TypeError, "unbound method %s() needs an argument",
                            name);
    return want ? code_cont_arg1(vm, name, nargs - 1, kwnames)
                : code_cont_arg0(vm, name, nargs - 1, kwnames);
}

cv code_cont_dunder_len(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (dunder_args(vm, "__len__", args, nargs, kwnames, 0))
        return CV_NULL;
    ssize_t n = code_len(vm, args[0]);
    return n < 0 ? CV_NULL : code_int_from_i64(vm, n);
}

cv code_cont_dunder_getitem(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (dunder_args(vm, "__getitem__", args, nargs, kwnames, 1))
        return CV_NULL;
    return code_getitem(vm, args[0], args[1]);
}

cv code_cont_dunder_contains(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (dunder_args(vm, "__contains__", args, nargs, kwnames, 1))
        return CV_NULL;
    int r = code_contains(vm, args[0], args[1]);
    return r < 0 ? CV_NULL : code_bool(r);
}

cv code_cont_dunder_iter(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (dunder_args(vm, "__iter__", args, nargs, kwnames, 0))
        return CV_NULL;
    return code_iter(vm, args[0]);
}
