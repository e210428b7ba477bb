/* dict's slots and methods, on top of the table in code_dict.c. */
#include <string.h>

#include "code/code_cont.h"

static cv dict_repr(code_vm *vm, cv self)
{
    code_dict *d = (code_dict *)cv_obj(self);
    if (d->used == 0)
        return code_str_from_cstr(vm, "{}");
    int r = code_repr_enter(vm, self);
    if (r < 0)
        return CV_NULL;
    if (r > 0)
        return code_str_from_cstr(vm, "{...}");
    code_sb b;
    code_sb_init(&b, vm);
    code_sb_add(&b, "{", 1);
    bool first = true;
    for (size_t i = 0; i < d->nentries && !b.failed; i++) {
        code_dict_entry *e = &d->e[i];
        if (!e->key)
            continue;
        if (!first)
            code_sb_add(&b, ", ", 2);
        first = false;
        cv k = code_incref(e->key), v = code_incref(e->value);
        int bad = code_sb_repr(&b, k) || code_sb_add(&b, ": ", 2) || code_sb_repr(&b, v);
        code_decref(vm, k);
        code_decref(vm, v);
        if (bad)
            break;
    }
    code_repr_leave(vm, self);
    if (b.failed || vm->exc) {
        code_sb_free(&b);
        return CV_NULL;
    }
    code_sb_add(&b, "}", 1);
    return code_sb_finish(&b);
}

static cv dict_compare(code_vm *vm, cv a, cv b, int op)
{
    if (!cv_is(a, &code_type_dict) || !cv_is(b, &code_type_dict) ||
        (op != CODE_CMP_EQ && op != CODE_CMP_NE))
        return CODE_NOTIMPL;
    code_dict *x = (code_dict *)cv_obj(a), *y = (code_dict *)cv_obj(b);
    if (x->used != y->used)
        return code_bool(op == CODE_CMP_NE);
    for (size_t i = 0; i < x->nentries; i++) {
        code_dict_entry *e = &x->e[i];
        if (!e->key)
            continue;
        cv k = code_incref(e->key), v = code_incref(e->value);
        ssize_t ix = code_dict_lookup(vm, y, k, e->hash);
        int r = ix == -2 ? -1 : ix == -1 ? 0 : code_eq(vm, v, y->e[ix].value);
        code_decref(vm, k);
        code_decref(vm, v);
        if (r <= 0)
            return r < 0 ? CV_NULL : code_bool(op == CODE_CMP_NE);
    }
    return code_bool(op == CODE_CMP_EQ);
}

/* One element of an iterable of pairs, as dict_merge_from_seq2. */
static int update_pair(code_vm *vm, cv d, cv item, size_t i)
{
    cv seq;
    if (!cv_is_small(item) && (cv_kind(item) == CODE_K_LIST || cv_kind(item) == CODE_K_TUPLE)) {
        seq = code_incref(item);
    } else {
        cv it = code_iter(vm, item);
        if (!it) {
            if (code_exc_matches(vm, &code_exc_TypeError)) {
                code_exc_clear(vm);
                code_raise(vm, &code_exc_TypeError,
                           "cannot convert dictionary update sequence element #%zu to a sequence",
                           i);
            }
            return -1;
        }
        seq = code_list_from(vm, it);
        code_decref(vm, it);
        if (!seq)
            return -1;
    }
    size_t n;
    cv *v = code_seq_items(seq, &n);
    int r;
    if (n != 2)
        r = code_raise_i(vm, &code_exc_ValueError,
                         "dictionary update sequence element #%zu has length %zu; 2 is required",
                         i, n);
    else
        r = code_dict_set(vm, d, v[0], v[1]);
    code_decref(vm, seq);
    return r;
}

int code_dict_update(code_vm *vm, cv d, cv other)
{
    if (cv_is(other, &code_type_dict)) {
        if (other == d)
            return 0;
        code_dict *o = (code_dict *)cv_obj(other);
        if (code_dict_reserve(vm, d, o->used))
            return -1;
        for (size_t i = 0; i < o->nentries; i++) {
            code_dict_entry *e = &o->e[i];
            if (e->key && code_dict_set_h(vm, d, e->key, e->hash, e->value))
                return -1;
        }
        return 0;
    }
    cv it = code_iter(vm, other);
    if (!it)
        return -1;
    for (size_t i = 0;; i++) {
        cv item = code_next(vm, it);
        if (!item)
            break;
        int r = update_pair(vm, d, item, i);
        code_decref(vm, item);
        if (r) {
            code_decref(vm, it);
            return -1;
        }
    }
    code_decref(vm, it);
    return vm->exc ? -1 : 0;
}

/* The keyword arguments of dict(**kw) and d.update(**kw). */
static int update_kw(code_vm *vm, cv d, cv *kwvals, cv kwnames)
{
    if (!kwnames)
        return 0;
    code_tuple *names = (code_tuple *)cv_obj(kwnames);
    for (size_t i = 0; i < names->n; i++)
        if (code_dict_set(vm, d, names->v[i], kwvals[i]))
            return -1;
    return 0;
}

static cv dict_binop(code_vm *vm, int op, cv a, cv b)
{
    if (op != CODE_OP_OR || !cv_is(a, &code_type_dict) || !cv_is(b, &code_type_dict))
        return CODE_NOTIMPL;
    cv r = code_dict_copy(vm, a);
    if (r && code_dict_update(vm, r, b)) {
        code_decref(vm, r);
        return CV_NULL;
    }
    return r;
}

cv code_dict_inplace_or(code_vm *vm, cv dict, cv other)
{
    if (code_dict_update(vm, dict, other))
        return CV_NULL;
    return code_incref(dict);
}

static ssize_t dict_len(code_vm *vm, cv self)
{
    (void)vm;
    return (ssize_t)((code_dict *)cv_obj(self))->used;
}

static cv dict_getitem(code_vm *vm, cv self, cv key)
{
    cv v;
    if (code_dict_get(vm, self, key, &v))
        return CV_NULL;
    if (!v) {
        code_dict_raise_key(vm, key);
        return CV_NULL;
    }
    return code_incref(v);
}

static int dict_setitem(code_vm *vm, cv self, cv key, cv value)
{
    return code_dict_set(vm, self, key, value);
}

static int dict_delitem(code_vm *vm, cv self, cv key)
{
    return code_dict_del(vm, self, key);
}

static int dict_contains(code_vm *vm, cv self, cv key)
{
    cv v;
    if (code_dict_get(vm, self, key, &v))
        return -1;
    return v != CV_NULL;
}

static cv dict_iter(code_vm *vm, cv self)
{
    return code_dict_iter_new(vm, self, 0, false);
}

static cv dict_new(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kwnames)
{
    (void)t;
    if (nargs > 1)
        return code_raise(vm, &code_exc_TypeError, "dict expected at most 1 argument, got %zu",
                          nargs);
    cv d = code_dict_new(vm);
    if (!d)
        return CV_NULL;
    if ((nargs && code_dict_update(vm, d, args[0])) || update_kw(vm, d, args + nargs, kwnames)) {
        code_decref(vm, d);
        return CV_NULL;
    }
    return d;
}

/* ---- methods ------------------------------------------------------------------ */

#define SELF(meth)                                                                            \
    if (code_cont_self(vm, "dict", meth, args, nargs, &code_type_dict, NULL))                \
        return CV_NULL;                                                                       \
    cv self = args[0];                                                                        \
    args++;                                                                                   \
    nargs--

static cv dict_get(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF("get");
    cv v;
    if (code_cont_argn(vm, "dict.get", 1, 2, nargs, kwnames) ||
        code_dict_get(vm, self, args[0], &v))
        return CV_NULL;
    if (!v)
        v = nargs > 1 ? args[1] : CODE_NONE;
    return code_incref(v);
}

static cv dict_setdefault(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF("setdefault");
    uint64_t h;
    if (code_cont_argn(vm, "dict.setdefault", 1, 2, nargs, kwnames) ||
        code_hash(vm, args[0], &h))
        return CV_NULL;
    code_dict *d = (code_dict *)cv_obj(self);
    ssize_t ix = code_dict_lookup(vm, d, args[0], h);
    if (ix == -2)
        return CV_NULL;
    if (ix >= 0)
        return code_incref(d->e[ix].value);
    cv v = nargs > 1 ? args[1] : CODE_NONE;
    if (code_dict_set_h(vm, self, args[0], h, v))
        return CV_NULL;
    return code_incref(v);
}

static cv dict_pop(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF("pop");
    uint64_t h;
    if (code_cont_argn(vm, "dict.pop", 1, 2, nargs, kwnames) || code_hash(vm, args[0], &h))
        return CV_NULL;
    cv v;
    int r = code_dict_pop_h(vm, self, args[0], h, &v);
    if (r < 0)
        return CV_NULL;
    if (r)
        return v;
    if (nargs > 1)
        return code_incref(args[1]);
    code_dict_raise_key(vm, args[0]);
    return CV_NULL;
}

static cv dict_popitem(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF("popitem");
    if (code_cont_arg0(vm, "dict.popitem", nargs, kwnames))
        return CV_NULL;
    cv k, v;
    if (!code_dict_pop_last(vm, self, &k, &v))
        return code_raise(vm, &code_exc_KeyError, "popitem(): dictionary is empty");
    cv t = code_tuple_pack(vm, 2, k, v);
    code_decref(vm, k);
    code_decref(vm, v);
    return t;
}

static cv dict_update(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF("update");
    if (nargs > 1)
        return code_raise(vm, &code_exc_TypeError, "update expected at most 1 argument, got %zu",
                          nargs);
    if ((nargs && code_dict_update(vm, self, args[0])) || update_kw(vm, self, args + nargs, kwnames))
        return CV_NULL;
    return CODE_NONE;
}

static cv dict_clear(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF("clear");
    if (code_cont_arg0(vm, "dict.clear", nargs, kwnames))
        return CV_NULL;
    code_dict_clear(vm, (code_dict *)cv_obj(self));
    return CODE_NONE;
}

static cv dict_copy(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF("copy");
    if (code_cont_arg0(vm, "dict.copy", nargs, kwnames))
        return CV_NULL;
    return code_dict_copy(vm, self);
}

static cv dict_keys(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF("keys");
    if (code_cont_arg0(vm, "dict.keys", nargs, kwnames))
        return CV_NULL;
    return code_dict_view_new(vm, self, 0);
}

static cv dict_values(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF("values");
    if (code_cont_arg0(vm, "dict.values", nargs, kwnames))
        return CV_NULL;
    return code_dict_view_new(vm, self, 1);
}

static cv dict_items(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF("items");
    if (code_cont_arg0(vm, "dict.items", nargs, kwnames))
        return CV_NULL;
    return code_dict_view_new(vm, self, 2);
}

/* A class method: reached through the type, args[0] is the iterable. */
static cv dict_fromkeys(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_cont_argn(vm, "dict.fromkeys", 1, 2, nargs, kwnames))
        return CV_NULL;
    cv value = nargs > 1 ? args[1] : CODE_NONE;
    cv d = code_dict_new(vm);
    if (!d)
        return CV_NULL;
    cv it = code_iter(vm, args[0]);
    if (!it) {
        code_decref(vm, d);
        return CV_NULL;
    }
    for (;;) {
        cv k = code_next(vm, it);
        if (!k)
            break;
        int r = code_dict_set(vm, d, k, value);
        code_decref(vm, k);
        if (r)
            break;
    }
    code_decref(vm, it);
    if (vm->exc) {
        code_decref(vm, d);
        return CV_NULL;
    }
    return d;
}

/* d.fromkeys(...) on an instance is the class method too: handed out
 * unbound here, before the method table would bind d to it. */
static cv dict_getattr(code_vm *vm, cv self, const char *name)
{
    (void)self;
    if (strcmp(name, "fromkeys") == 0)
        return code_cfunc_new(vm, "fromkeys", dict_fromkeys, CV_NULL);
    return CV_NULL;
}

static const code_method dict_methods[] = {
    {"get", dict_get},
    {"keys", dict_keys},
    {"values", dict_values},
    {"items", dict_items},
    {"pop", dict_pop},
    {"popitem", dict_popitem},
    {"setdefault", dict_setdefault},
    {"update", dict_update},
    {"clear", dict_clear},
    {"copy", dict_copy},
    {"fromkeys", dict_fromkeys},
    CODE_CONT_DUNDERS,
    {NULL, NULL},
};

static void dict_dealloc(code_vm *vm, code_obj *o)
{
    code_dict_clear(vm, (code_dict *)o);
}

static void dict_traverse(code_vm *vm, cv self, code_visit_fn visit, void *arg)
{
    const code_dict *d = (const code_dict *)cv_obj(self);
    for (size_t i = 0; i < d->nentries; i++) {
        if (d->e[i].key) {
            visit(vm, d->e[i].key, arg);
            visit(vm, d->e[i].value, arg);
        }
    }
}

static void dict_gc_clear(code_vm *vm, cv self)
{
    code_dict_clear(vm, (code_dict *)cv_obj(self));
}

const code_type code_type_dict = {
    .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},
    .name = "dict",
    .kind = CODE_K_DICT,
    .dealloc = dict_dealloc,
    .traverse = dict_traverse,
    .clear = dict_gc_clear,
    .repr = dict_repr,
    .compare = dict_compare,
    .binop = dict_binop,
    .inplace = code_cont_inplace,
    .len = dict_len,
    .iter = dict_iter,
    .getitem = dict_getitem,
    .setitem = dict_setitem,
    .delitem = dict_delitem,
    .contains = dict_contains,
    .getattr = dict_getattr,
    .methods = dict_methods,
    .new = dict_new,
};
