/* The set algebra (as setobject.c computes it, so results iterate in the
 * same order), the operators, the comparisons and the methods of set and
 * frozenset. */
#include <stdio.h>

#include "code/code_cont.h"


static size_t set_used(cv s) { return ((code_set *)cv_obj(s))->d.used; }
static bool is_frozen(cv s) { return cv_kind(s) == CODE_K_FROZENSET; }

/* set_intersection: a new set of so's type. */
static cv set_intersection(code_vm *vm, cv so, cv other)
{
    if (so == other)
        return code_set_copy(vm, so, is_frozen(so));
    cv result = code_set_new(vm, is_frozen(so));
    if (!result)
        return CV_NULL;
    if (code_is_anyset(other)) {
        /* Walk the smaller, look up in the larger. */
        cv a = so, b = other;
        if (set_used(b) > set_used(a)) {
            a = other;
            b = so;
        }
        size_t pos = 0;
        cv k;
        uint64_t h;
        while (code_set_next(b, &pos, &k, &h)) {
            int r = code_set_contains_h(vm, a, k, h);
            if (r < 0 || (r && code_set_add_h(vm, result, k, h))) {
                code_decref(vm, result);
                return CV_NULL;
            }
        }
        return result;
    }
    cv it = code_iter(vm, other);
    if (!it) {
        code_decref(vm, result);
        return CV_NULL;
    }
    for (;;) {
        cv k = code_next(vm, it);
        if (!k)
            break;
        uint64_t h;
        int r = code_hash(vm, k, &h);
        if (!r) {
            r = code_set_contains_h(vm, so, k, h);
            if (r > 0)
                r = code_set_add_h(vm, result, k, h);
        }
        code_decref(vm, k);
        if (r < 0)
            break;
    }
    code_decref(vm, it);
    if (vm->exc) {
        code_decref(vm, result);
        return CV_NULL;
    }
    return result;
}

static int set_difference_update(code_vm *vm, cv so, cv other)
{
    if (so == other) {
        code_set_clear(vm, so);
        return 0;
    }
    if (code_is_anyset(other)) {
        size_t pos = 0;
        cv k;
        uint64_t h;
        while (code_set_next(other, &pos, &k, &h))
            if (code_set_discard_h(vm, so, k, h) < 0)
                return -1;
    } else {
        cv it = code_iter(vm, other);
        if (!it)
            return -1;
        for (;;) {
            cv k = code_next(vm, it);
            if (!k)
                break;
            int r = code_set_discard(vm, so, k);
            code_decref(vm, k);
            if (r < 0)
                break;
        }
        code_decref(vm, it);
        if (vm->exc)
            return -1;
    }
    return code_set_shrink_dummies(vm, so);
}

static cv set_difference(code_vm *vm, cv so, cv other)
{
    bool frozen = is_frozen(so);
    size_t other_size = code_is_anyset(other)                 ? set_used(other)
                        : cv_is(other, &code_type_dict) ? ((code_dict *)cv_obj(other))->used
                                                              : 0;
    /* Other much smaller: copying so and discarding is cheaper (and gives
     * CPython's table). */
    if ((!code_is_anyset(other) && !cv_is(other, &code_type_dict)) ||
        (set_used(so) >> 2) > other_size) {
        cv r = code_set_copy(vm, so, frozen);
        if (r && set_difference_update(vm, r, other)) {
            code_decref(vm, r);
            return CV_NULL;
        }
        return r;
    }
    cv result = code_set_new(vm, frozen);
    if (!result)
        return CV_NULL;
    size_t pos = 0;
    cv k;
    uint64_t h;
    while (code_set_next(so, &pos, &k, &h)) {
        int r;
        if (code_is_anyset(other)) {
            r = code_set_contains_h(vm, other, k, h);
        } else {
            ssize_t ix = code_dict_lookup(vm, (code_dict *)cv_obj(other), k, h);
            r = ix == -2 ? -1 : ix >= 0;
        }
        if (r < 0 || (!r && code_set_add_h(vm, result, k, h))) {
            code_decref(vm, result);
            return CV_NULL;
        }
    }
    return result;
}

static int set_symmetric_difference_update(code_vm *vm, cv so, cv other)
{
    if (so == other) {
        code_set_clear(vm, so);
        return 0;
    }
    cv otherset;
    if (code_is_anyset(other) || cv_is(other, &code_type_dict))
        otherset = code_incref(other);
    else if (!(otherset = code_set_copy(vm, other, false)))
        return -1;
    size_t pos = 0;
    cv k, v;
    int rc = 0;
    while (!rc && code_dict_next(otherset, &pos, &k, &v)) {
        uint64_t h;
        if (code_hash(vm, k, &h)) {
            rc = -1;
            break;
        }
        int r = code_set_discard_h(vm, so, k, h);
        if (r < 0 || (r == 0 && code_set_add_h(vm, so, k, h)))
            rc = -1;
    }
    code_decref(vm, otherset);
    return rc;
}

static cv set_symmetric_difference(code_vm *vm, cv so, cv other)
{
    cv r = code_set_copy(vm, other, is_frozen(so));
    if (r && set_symmetric_difference_update(vm, r, so)) {
        code_decref(vm, r);
        return CV_NULL;
    }
    return r;
}

/* 1 if every key of so is in other (a set), 0 if not, -1 on error. */
static int set_issubset(code_vm *vm, cv so, cv other)
{
    if (!code_is_anyset(other)) {
        cv tmp = code_set_copy(vm, other, false);
        if (!tmp)
            return -1;
        int r = set_issubset(vm, so, tmp);
        code_decref(vm, tmp);
        return r;
    }
    if (set_used(so) > set_used(other))
        return 0;
    size_t pos = 0;
    cv k;
    uint64_t h;
    while (code_set_next(so, &pos, &k, &h)) {
        int r = code_set_contains_h(vm, other, k, h);
        if (r <= 0)
            return r;
    }
    return 1;
}

static int set_issuperset(code_vm *vm, cv so, cv other)
{
    if (code_is_anyset(other))
        return set_issubset(vm, other, so);
    cv it = code_iter(vm, other);
    if (!it)
        return -1;
    int r = 1;
    for (;;) {
        cv k = code_next(vm, it);
        if (!k)
            break;
        r = code_set_contains(vm, so, k);
        code_decref(vm, k);
        if (r <= 0)
            break;
    }
    code_decref(vm, it);
    return vm->exc ? -1 : r;
}

static int set_isdisjoint(code_vm *vm, cv so, cv other)
{
    if (so == other)
        return set_used(so) == 0;
    if (code_is_anyset(other)) {
        cv a = so, b = other;
        if (set_used(b) > set_used(a)) {
            a = other;
            b = so;
        }
        size_t pos = 0;
        cv k;
        uint64_t h;
        while (code_set_next(b, &pos, &k, &h)) {
            int r = code_set_contains_h(vm, a, k, h);
            if (r)
                return r < 0 ? -1 : 0;
        }
        return 1;
    }
    cv it = code_iter(vm, other);
    if (!it)
        return -1;
    int r = 1;
    for (;;) {
        cv k = code_next(vm, it);
        if (!k)
            break;
        int c = code_set_contains(vm, so, k);
        code_decref(vm, k);
        if (c) {
            r = c < 0 ? -1 : 0;
            break;
        }
    }
    code_decref(vm, it);
    return vm->exc ? -1 : r;
}

static int set_intersection_update(code_vm *vm, cv so, cv other)
{
    cv tmp = set_intersection(vm, so, other);
    if (!tmp)
        return -1;
    code_set_swap_bodies(so, tmp);
    code_decref(vm, tmp);
    return 0;
}

/* ---- operators -------------------------------------------------------------------- */

cv code_set_op(code_vm *vm, int op, cv a, cv b, bool frozen)
{
    cv r = code_set_copy(vm, a, frozen);
    if (!r)
        return CV_NULL;
    int rc = 0;
    switch (op) {
    case CODE_OP_OR: rc = code_set_update(vm, r, b); break;
    case CODE_OP_AND: rc = set_intersection_update(vm, r, b); break;
    case CODE_OP_SUB: rc = set_difference_update(vm, r, b); break;
    case CODE_OP_XOR: rc = set_symmetric_difference_update(vm, r, b); break;
    }
    if (rc) {
        code_decref(vm, r);
        return CV_NULL;
    }
    return r;
}

cv code_set_binop(code_vm *vm, int op, cv a, cv b)
{
    if (!code_is_anyset(a) || !code_is_anyset(b))
        return CODE_NOTIMPL;
    switch (op) {
    case CODE_OP_OR: {
        cv r = code_set_copy(vm, a, is_frozen(a));
        if (r && code_set_merge(vm, r, b)) {
            code_decref(vm, r);
            return CV_NULL;
        }
        return r;
    }
    case CODE_OP_AND: return set_intersection(vm, a, b);
    case CODE_OP_SUB: return set_difference(vm, a, b);
    case CODE_OP_XOR: return set_symmetric_difference(vm, a, b);
    default: return CODE_NOTIMPL;
    }
}

cv code_set_inplace(code_vm *vm, int op, cv set, cv other)
{
    if (!code_is_anyset(other))
        return CODE_NOTIMPL;
    int rc;
    switch (op) {
    case CODE_OP_OR: rc = code_set_merge(vm, set, other); break;
    case CODE_OP_AND: rc = set_intersection_update(vm, set, other); break;
    case CODE_OP_SUB: rc = set_difference_update(vm, set, other); break;
    case CODE_OP_XOR: rc = set_symmetric_difference_update(vm, set, other); break;
    default: return CODE_NOTIMPL;
    }
    return rc ? CV_NULL : code_incref(set);
}

static cv bool_or_null(int r)
{
    return r < 0 ? CV_NULL : code_bool(r);
}

cv code_set_compare(code_vm *vm, cv a, cv b, int op)
{
    if (!code_is_anyset(a) || !code_is_anyset(b))
        return CODE_NOTIMPL;
    size_t na = set_used(a), nb = set_used(b);
    switch (op) {
    case CODE_CMP_EQ:
    case CODE_CMP_NE: {
        if (na != nb)
            return code_bool(op == CODE_CMP_NE);
        code_set *x = (code_set *)cv_obj(a), *y = (code_set *)cv_obj(b);
        if (is_frozen(a) && is_frozen(b) && x->hash && y->hash && x->hash != y->hash)
            return code_bool(op == CODE_CMP_NE);
        int r = set_issubset(vm, a, b);
        return r < 0 ? CV_NULL : code_bool((r == 1) == (op == CODE_CMP_EQ));
    }
    case CODE_CMP_LE: return bool_or_null(set_issubset(vm, a, b));
    case CODE_CMP_GE: return bool_or_null(set_issuperset(vm, a, b));
    case CODE_CMP_LT: return na >= nb ? CODE_FALSE : bool_or_null(set_issubset(vm, a, b));
    default: return na <= nb ? CODE_FALSE : bool_or_null(set_issuperset(vm, a, b));
    }
}

/* every item of a in b (for views: anything with len and in). */
static int all_contained_in(code_vm *vm, cv a, cv b)
{
    cv it = code_iter(vm, a);
    if (!it)
        return -1;
    int r = 1;
    for (;;) {
        cv x = code_next(vm, it);
        if (!x)
            break;
        r = code_contains(vm, b, x);
        code_decref(vm, x);
        if (r <= 0)
            break;
    }
    code_decref(vm, it);
    return vm->exc ? -1 : r;
}

cv code_set_compare_any(code_vm *vm, cv a, cv b, int op)
{
    ssize_t na = code_len(vm, a), nb = code_len(vm, b);
    if (na < 0 || nb < 0)
        return CV_NULL;
    int r;
    switch (op) {
    case CODE_CMP_EQ:
    case CODE_CMP_NE:
        r = na == nb ? all_contained_in(vm, a, b) : 0;
        if (r < 0)
            return CV_NULL;
        return code_bool((r == 1) == (op == CODE_CMP_EQ));
    case CODE_CMP_LT: r = na < nb ? all_contained_in(vm, a, b) : 0; break;
    case CODE_CMP_LE: r = na <= nb ? all_contained_in(vm, a, b) : 0; break;
    case CODE_CMP_GT: r = na > nb ? all_contained_in(vm, b, a) : 0; break;
    default: r = na >= nb ? all_contained_in(vm, b, a) : 0; break;
    }
    return bool_or_null(r);
}

/* ---- methods ------------------------------------------------------------------------ */

#define SELF_ANY(meth)                                                                        \
    if (code_cont_self(vm, nargs && code_is_anyset(args[0]) ? cv_type(args[0])->name : "set", \
                       meth, args, nargs, &code_type_set, &code_type_frozenset))             \
        return CV_NULL;                                                                       \
    cv self = args[0];                                                                        \
    args++;                                                                                   \
    nargs--

#define SELF_SET(meth)                                                                        \
    if (code_cont_self(vm, "set", meth, args, nargs, &code_type_set, NULL))                  \
        return CV_NULL;                                                                       \
    cv self = args[0];                                                                        \
    args++;                                                                                   \
    nargs--

/* "set.union" or "frozenset.union", for messages. */
static int check_noargs_name(code_vm *vm, cv self, const char *meth, size_t want, size_t nargs,
                             cv kwnames)
{
    char name[64];
    snprintf(name, sizeof name, "%s.%s", cv_type(self)->name, meth);
    if (want == 0)
        return code_cont_arg0(vm, name, nargs, kwnames);
    if (want == 1)
        return code_cont_arg1(vm, name, nargs, kwnames);
    return code_cont_argn(vm, name, 0, SIZE_MAX, nargs, kwnames);   /* keywords only */
}

static cv set_add(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF_SET("add");
    if (check_noargs_name(vm, self, "add", 1, nargs, kwnames) || code_set_add(vm, self, args[0]))
        return CV_NULL;
    return CODE_NONE;
}

static cv set_remove(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF_SET("remove");
    if (check_noargs_name(vm, self, "remove", 1, nargs, kwnames))
        return CV_NULL;
    int r = code_set_discard(vm, self, args[0]);
    if (r < 0)
        return CV_NULL;
    if (r == 0) {
        code_dict_raise_key(vm, args[0]);
        return CV_NULL;
    }
    return CODE_NONE;
}

static cv set_discard(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF_SET("discard");
    if (check_noargs_name(vm, self, "discard", 1, nargs, kwnames) ||
        code_set_discard(vm, self, args[0]) < 0)
        return CV_NULL;
    return CODE_NONE;
}

static cv set_pop(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF_SET("pop");
    if (check_noargs_name(vm, self, "pop", 0, nargs, kwnames))
        return CV_NULL;
    cv k;
    if (!code_set_pop(vm, self, &k))
        return code_raise(vm, &code_exc_KeyError, "pop from an empty set");
    return k;
}

static cv set_clear(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF_SET("clear");
    if (check_noargs_name(vm, self, "clear", 0, nargs, kwnames))
        return CV_NULL;
    code_set_clear(vm, self);
    return CODE_NONE;
}

static cv set_copy(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF_ANY("copy");
    if (check_noargs_name(vm, self, "copy", 0, nargs, kwnames))
        return CV_NULL;
    if (is_frozen(self))
        return code_incref(self);
    return code_set_copy(vm, self, false);
}

static cv set_update(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF_SET("update");
    if (check_noargs_name(vm, self, "update", 2, nargs, kwnames))
        return CV_NULL;
    for (size_t i = 0; i < nargs; i++)
        if (code_set_update(vm, self, args[i]))
            return CV_NULL;
    return CODE_NONE;
}

static cv set_union(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF_ANY("union");
    if (check_noargs_name(vm, self, "union", 2, nargs, kwnames))
        return CV_NULL;
    cv r = code_set_copy(vm, self, is_frozen(self));
    for (size_t i = 0; r && i < nargs; i++)
        if (code_set_update(vm, r, args[i])) {
            code_decref(vm, r);
            r = CV_NULL;
        }
    return r;
}

static cv set_intersection_m(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF_ANY("intersection");
    if (check_noargs_name(vm, self, "intersection", 2, nargs, kwnames))
        return CV_NULL;
    if (nargs == 0)
        return code_set_copy(vm, self, is_frozen(self));
    cv r = code_incref(self);
    for (size_t i = 0; r && i < nargs; i++) {
        cv t = set_intersection(vm, r, args[i]);
        code_decref(vm, r);
        r = t;
    }
    return r;
}

static cv set_intersection_update_m(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF_SET("intersection_update");
    if (check_noargs_name(vm, self, "intersection_update", 2, nargs, kwnames))
        return CV_NULL;
    for (size_t i = 0; i < nargs; i++)
        if (set_intersection_update(vm, self, args[i]))
            return CV_NULL;
    return CODE_NONE;
}

static cv set_difference_m(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF_ANY("difference");
    if (check_noargs_name(vm, self, "difference", 2, nargs, kwnames))
        return CV_NULL;
    if (nargs == 0)
        return code_set_copy(vm, self, is_frozen(self));
    cv r = set_difference(vm, self, args[0]);
    for (size_t i = 1; r && i < nargs; i++)
        if (set_difference_update(vm, r, args[i])) {
            code_decref(vm, r);
            r = CV_NULL;
        }
    return r;
}

static cv set_difference_update_m(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF_SET("difference_update");
    if (check_noargs_name(vm, self, "difference_update", 2, nargs, kwnames))
        return CV_NULL;
    for (size_t i = 0; i < nargs; i++)
        if (set_difference_update(vm, self, args[i]))
            return CV_NULL;
    return CODE_NONE;
}

static cv set_symdiff_m(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF_ANY("symmetric_difference");
    if (check_noargs_name(vm, self, "symmetric_difference", 1, nargs, kwnames))
        return CV_NULL;
    return set_symmetric_difference(vm, self, args[0]);
}

static cv set_symdiff_update_m(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF_SET("symmetric_difference_update");
    if (check_noargs_name(vm, self, "symmetric_difference_update", 1, nargs, kwnames) ||
        set_symmetric_difference_update(vm, self, args[0]))
        return CV_NULL;
    return CODE_NONE;
}

static cv set_issubset_m(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF_ANY("issubset");
    if (check_noargs_name(vm, self, "issubset", 1, nargs, kwnames))
        return CV_NULL;
    return bool_or_null(set_issubset(vm, self, args[0]));
}

static cv set_issuperset_m(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF_ANY("issuperset");
    if (check_noargs_name(vm, self, "issuperset", 1, nargs, kwnames))
        return CV_NULL;
    return bool_or_null(set_issuperset(vm, self, args[0]));
}

static cv set_isdisjoint_m(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF_ANY("isdisjoint");
    if (check_noargs_name(vm, self, "isdisjoint", 1, nargs, kwnames))
        return CV_NULL;
    return bool_or_null(set_isdisjoint(vm, self, args[0]));
}

const code_method code_set_methods[] = {
    {"add", set_add},
    {"remove", set_remove},
    {"discard", set_discard},
    {"pop", set_pop},
    {"clear", set_clear},
    {"copy", set_copy},
    {"update", set_update},
    {"union", set_union},
    {"intersection", set_intersection_m},
    {"intersection_update", set_intersection_update_m},
    {"difference", set_difference_m},
    {"difference_update", set_difference_update_m},
    {"symmetric_difference", set_symdiff_m},
    {"symmetric_difference_update", set_symdiff_update_m},
    {"issubset", set_issubset_m},
    {"issuperset", set_issuperset_m},
    {"isdisjoint", set_isdisjoint_m},
    /* no __getitem__: sets are not subscriptable (code_dunder.c adds the rest) */
    {NULL, NULL},
};

const code_method code_frozenset_methods[] = {
    {"copy", set_copy},
    {"union", set_union},
    {"intersection", set_intersection_m},
    {"difference", set_difference_m},
    {"symmetric_difference", set_symdiff_m},
    {"issubset", set_issubset_m},
    {"issuperset", set_issuperset_m},
    {"isdisjoint", set_isdisjoint_m},
    /* no __getitem__: sets are not subscriptable (code_dunder.c adds the rest) */
    {NULL, NULL},
};
