/* dict's iterators (forward and reversed, over keys, values or items) and its
 * views: keys() and items() are set-like (comparisons and | & - ^ with any
 * iterable give sets), values() is not. */
#include <string.h>

#include "code/code_cont.h"

/* ---- iterators ------------------------------------------------------------------- */

static void dict_iter_dealloc(code_vm *vm, code_obj *o)
{
    code_decref(vm, ((code_dict_iter *)o)->d);
}

static void dict_iter_traverse(code_vm *vm, cv self, code_visit_fn visit, void *arg)
{
    visit(vm, ((code_dict_iter *)cv_obj(self))->d, arg);
}

/* As if exhausted. */
static void dict_iter_clear(code_vm *vm, cv self)
{
    code_setref(vm, &((code_dict_iter *)cv_obj(self))->d, CV_NULL);
}

static cv dict_iter_next(code_vm *vm, cv self)
{
    code_dict_iter *it = (code_dict_iter *)cv_obj(self);
    if (!it->d)
        return CV_NULL;
    code_dict *d = (code_dict *)cv_obj(it->d);
    if (d->used != it->used) {
        it->used = (size_t)-1;   /* stays an error, as CPython's */
        return code_raise(vm, &code_exc_RuntimeError, "dictionary changed size during iteration");
    }
    code_dict_entry *e = NULL;
    if (!it->rev) {
        while (it->pos < d->nentries && !d->e[it->pos].key)
            it->pos++;
        if (it->pos < d->nentries)
            e = &d->e[it->pos++];
    } else {
        if (it->pos > d->nentries)
            it->pos = d->nentries;
        while (it->pos > 0 && !d->e[it->pos - 1].key)
            it->pos--;
        if (it->pos > 0)
            e = &d->e[--it->pos];
    }
    if (!e) {
        code_setref(vm, &it->d, CV_NULL);
        return CV_NULL;
    }
    if (it->left == 0) {
        code_setref(vm, &it->d, CV_NULL);
        return code_raise(vm, &code_exc_RuntimeError, "dictionary keys changed during iteration");
    }
    it->left--;
    switch (it->kind) {
    case 0: return code_incref(e->key);
    case 1: return code_incref(e->value);
    default: return code_tuple_pack(vm, 2, e->key, e->value);
    }
}

#define DICT_ITER_TYPE(var, tname)                                                          \
    const code_type var = {                                                          \
        .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},                            \
        .name = tname,                                                                      \
        .kind = CODE_K_ITER,                                                                \
        .dealloc = dict_iter_dealloc,                                                       \
        .traverse = dict_iter_traverse,                                                     \
        .clear = dict_iter_clear,                                                           \
        .iter = code_iter_self,                                                                  \
        .next = dict_iter_next,                                                             \
    }
DICT_ITER_TYPE(code_type_dict_keyiter, "dict_keyiterator");
DICT_ITER_TYPE(code_type_dict_valueiter, "dict_valueiterator");
DICT_ITER_TYPE(code_type_dict_itemiter, "dict_itemiterator");
DICT_ITER_TYPE(code_type_dict_rkeyiter, "dict_reversekeyiterator");
DICT_ITER_TYPE(code_type_dict_rvalueiter, "dict_reversevalueiterator");
DICT_ITER_TYPE(code_type_dict_ritemiter, "dict_reverseitemiterator");

cv code_dict_iter_new(code_vm *vm, cv dv, int kind, bool reversed)
{
    static const code_type *const types[2][3] = {
        {&code_type_dict_keyiter, &code_type_dict_valueiter, &code_type_dict_itemiter},
        {&code_type_dict_rkeyiter, &code_type_dict_rvalueiter, &code_type_dict_ritemiter},
    };
    code_dict_iter *it = code_obj_new(vm, types[reversed][kind], sizeof(code_dict_iter));
    if (!it)
        return CV_NULL;
    code_dict *d = (code_dict *)cv_obj(dv);
    it->d = code_incref(dv);
    it->pos = reversed ? d->nentries : 0;
    it->used = it->left = d->used;
    it->kind = kind;
    it->rev = reversed;
    return cv_of(it);
}

/* ---- views ------------------------------------------------------------------------ */

static int view_kind(cv v)
{
    const code_type *t = cv_type(v);
    return t == &code_type_dict_keys ? 0 : t == &code_type_dict_values ? 1 : 2;
}

static void view_dealloc(code_vm *vm, code_obj *o)
{
    code_decref(vm, ((code_dict_view *)o)->d);
}

/* No clear: a view always has its dict; the dict's clear breaks a cycle. */
static void view_traverse(code_vm *vm, cv self, code_visit_fn visit, void *arg)
{
    visit(vm, ((code_dict_view *)cv_obj(self))->d, arg);
}

static cv view_repr(code_vm *vm, cv self)
{
    int r = code_repr_enter(vm, self);
    if (r < 0)
        return CV_NULL;
    if (r > 0)
        return code_str_from_cstr(vm, "...");
    cv l = code_list_from(vm, self);
    cv s = CV_NULL;
    if (l) {
        code_sb b;
        code_sb_init(&b, vm);
        code_sb_printf(&b, "%s(", cv_type(self)->name);
        code_sb_repr(&b, l);
        code_sb_add(&b, ")", 1);
        if (b.failed || vm->exc)
            code_sb_free(&b);
        else
            s = code_sb_finish(&b);
        code_decref(vm, l);
    }
    code_repr_leave(vm, self);
    return s;
}

static ssize_t view_len(code_vm *vm, cv self)
{
    (void)vm;
    return (ssize_t)((code_dict *)cv_obj(((code_dict_view *)cv_obj(self))->d))->used;
}

static cv view_iter(code_vm *vm, cv self)
{
    return code_dict_iter_new(vm, ((code_dict_view *)cv_obj(self))->d, view_kind(self), false);
}

static int view_contains(code_vm *vm, cv self, cv x)
{
    cv dv = ((code_dict_view *)cv_obj(self))->d;
    code_dict *d = (code_dict *)cv_obj(dv);
    switch (view_kind(self)) {
    case 0: {
        cv v;
        if (code_dict_get(vm, dv, x, &v))
            return -1;
        return v != CV_NULL;
    }
    case 1:
        for (size_t i = 0; i < d->nentries; i++) {
            if (!d->e[i].key)
                continue;
            cv v = code_incref(d->e[i].value);
            int r = code_eq(vm, v, x);
            code_decref(vm, v);
            if (r)
                return r;
        }
        return 0;
    default: {
        if (!cv_is(x, &code_type_tuple) || ((code_tuple *)cv_obj(x))->n != 2)
            return 0;
        code_tuple *t = (code_tuple *)cv_obj(x);
        cv v;
        if (code_dict_get(vm, dv, t->v[0], &v))
            return -1;
        if (!v)
            return 0;
        code_incref(v);
        int r = code_eq(vm, v, t->v[1]);
        code_decref(vm, v);
        return r;
    }
    }
}

static bool setlike(cv v)
{
    return code_is_anyset(v) || cv_is(v, &code_type_dict_keys) || cv_is(v, &code_type_dict_items);
}

static cv view_compare(code_vm *vm, cv a, cv b, int op)
{
    if (!setlike(a) || !setlike(b))
        return CODE_NOTIMPL;
    return code_set_compare_any(vm, a, b, op);
}

static cv view_binop(code_vm *vm, int op, cv a, cv b)
{
    if (op != CODE_OP_OR && op != CODE_OP_AND && op != CODE_OP_SUB && op != CODE_OP_XOR)
        return CODE_NOTIMPL;
    return code_set_op(vm, op, a, b, false);
}

static cv view_isdisjoint(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (nargs == 0 || (!cv_is(args[0], &code_type_dict_keys) &&
                       !cv_is(args[0], &code_type_dict_items)))
        return code_raise(vm, &code_exc_TypeError, "isdisjoint() needs a dict view");
    if (code_cont_arg1(vm, "isdisjoint", nargs - 1, kwnames))
        return CV_NULL;
    cv it = code_iter(vm, args[1]);
    if (!it)
        return CV_NULL;
    int found = 0;
    for (;;) {
        cv x = code_next(vm, it);
        if (!x)
            break;
        found = view_contains(vm, args[0], x);
        code_decref(vm, x);
        if (found)
            break;
    }
    code_decref(vm, it);
    if (found < 0 || vm->exc)
        return CV_NULL;
    return code_bool(!found);
}

static cv view_getattr(code_vm *vm, cv self, const char *name)
{
    (void)vm;
    if (strcmp(name, "mapping") == 0)
        return code_incref(((code_dict_view *)cv_obj(self))->d);
    return CV_NULL;
}

static const code_method setview_methods[] = {
    {"isdisjoint", view_isdisjoint},
    {NULL, NULL},
};

const code_type code_type_dict_keys = {
    .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},
    .name = "dict_keys",
    .kind = CODE_K_OTHER,
    .dealloc = view_dealloc,
    .traverse = view_traverse,
    .repr = view_repr,
    .compare = view_compare,
    .binop = view_binop,
    .len = view_len,
    .iter = view_iter,
    .contains = view_contains,
    .getattr = view_getattr,
    .methods = setview_methods,
};

const code_type code_type_dict_items = {
    .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},
    .name = "dict_items",
    .kind = CODE_K_OTHER,
    .dealloc = view_dealloc,
    .traverse = view_traverse,
    .repr = view_repr,
    .compare = view_compare,
    .binop = view_binop,
    .len = view_len,
    .iter = view_iter,
    .contains = view_contains,
    .getattr = view_getattr,
    .methods = setview_methods,
};

const code_type code_type_dict_values = {
    .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},
    .name = "dict_values",
    .kind = CODE_K_OTHER,
    .dealloc = view_dealloc,
    .traverse = view_traverse,
    .repr = view_repr,
    .len = view_len,
    .iter = view_iter,
    .contains = view_contains,
    .getattr = view_getattr,
};

cv code_dict_view_new(code_vm *vm, cv d, int kind)
{
    static const code_type *const types[3] = {
        &code_type_dict_keys, &code_type_dict_values, &code_type_dict_items};
    code_dict_view *v = code_obj_new(vm, types[kind], sizeof(code_dict_view));
    if (!v)
        return CV_NULL;
    v->d = code_incref(d);
    return cv_of(v);
}

/* The dict behind a view, for reversed(). */
cv code_dict_view_dict(cv view, int *kind)
{
    *kind = view_kind(view);
    return ((code_dict_view *)cv_obj(view))->d;
}
