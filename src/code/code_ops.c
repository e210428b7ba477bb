/* The generic operations: each dispatches through the type slots of its
 * operands, with CPython's order of attempts and its error messages. */
#include "code/code_dunder.h"
#include "code/code_vm.h"

#include <string.h>

const char *code_type_name(cv v) { return cv_type(v)->name; }

static const char *const binop_sym[CODE_OP__COUNT] = {
    [CODE_OP_ADD] = "+", [CODE_OP_SUB] = "-", [CODE_OP_MUL] = "*", [CODE_OP_TRUEDIV] = "/",
    [CODE_OP_FLOORDIV] = "//", [CODE_OP_MOD] = "%", [CODE_OP_POW] = "** or pow()",
    [CODE_OP_LSHIFT] = "<<", [CODE_OP_RSHIFT] = ">>", [CODE_OP_AND] = "&",
    [CODE_OP_OR] = "|", [CODE_OP_XOR] = "^", [CODE_OP_MATMUL] = "@",
};

const char *code_binop_symbol(int op)
{
    return op >= 0 && op < CODE_OP__COUNT ? binop_sym[op] : "?";
}

cv code_repr(code_vm *vm, cv v)
{
    const code_type *t = cv_type(v);
    if (!t->repr)
        return code_str_fmt(vm, "<%s object>", t->name);
    if (code_guard_enter(vm, "while getting the repr of an object"))
        return CV_NULL;
    cv r = t->repr(vm, v);
    code_guard_leave(vm);
    return r;
}

cv code_str_of(code_vm *vm, cv v)
{
    const code_type *t = cv_type(v);
    if (t == &code_type_str)
        return code_incref(v);
    if (!t->str)
        return code_repr(vm, v);
    if (code_guard_enter(vm, "while getting the str of an object"))
        return CV_NULL;
    cv r = t->str(vm, v);
    code_guard_leave(vm);
    return r;
}

int code_hash(code_vm *vm, cv v, uint64_t *h)
{
    const code_type *t = cv_type(v);
    if (!t->hash)
        return code_raise_i(vm, &code_exc_TypeError, "unhashable type: '%s'", t->name);
    if (code_guard_enter(vm, "while hashing"))
        return -1;
    int r = t->hash(vm, v, h);
    code_guard_leave(vm);
    return r;
}

static int swapped_op(int op)
{
    switch (op) {
    case CODE_CMP_LT: return CODE_CMP_GT;
    case CODE_CMP_LE: return CODE_CMP_GE;
    case CODE_CMP_GT: return CODE_CMP_LT;
    case CODE_CMP_GE: return CODE_CMP_LE;
    default: return op;
    }
}

static const char *const cmp_sym[] = {"<", "<=", "==", "!=", ">", ">="};

cv code_compare(code_vm *vm, cv a, cv b, int op)
{
    const code_type *ta = cv_type(a), *tb = cv_type(b);
    if (code_guard_enter(vm, "in comparison"))
        return CV_NULL;
    cv r = CODE_NOTIMPL;
    bool tried_b = false;
    /* A subclass on the right gets the first word (bool vs int). */
    if (ta != tb && code_type_is_sub(tb, ta) && tb->compare) {
        tried_b = true;
        r = tb->compare(vm, b, a, swapped_op(op));
    }
    if (r == CODE_NOTIMPL && ta->compare)
        r = ta->compare(vm, a, b, op);
    if (r == CODE_NOTIMPL && !tried_b && tb->compare && tb != ta)
        r = tb->compare(vm, b, a, swapped_op(op));
    code_guard_leave(vm);
    if (r != CODE_NOTIMPL)
        return r;
    if (op == CODE_CMP_EQ)
        return code_bool(a == b);
    if (op == CODE_CMP_NE)
        return code_bool(a != b);
    return code_raise(vm, &code_exc_TypeError,
                      "'%s' not supported between instances of '%s' and '%s'", cmp_sym[op],
                      ta->name, tb->name);
}

int code_compare_bool(code_vm *vm, cv a, cv b, int op)
{
    /* Small ints: no dispatch. */
    if (cv_is_small(a) && cv_is_small(b)) {
        int64_t x = cv_small(a), y = cv_small(b);
        switch (op) {
        case CODE_CMP_LT: return x < y;
        case CODE_CMP_LE: return x <= y;
        case CODE_CMP_EQ: return x == y;
        case CODE_CMP_NE: return x != y;
        case CODE_CMP_GT: return x > y;
        default: return x >= y;
        }
    }
    cv r = code_compare(vm, a, b, op);
    if (!r)
        return -1;
    int t = code_truth(vm, r);
    code_decref(vm, r);
    return t;
}

int code_eq(code_vm *vm, cv v, cv w)
{
    /* Identity implies equality, as CPython's containers assume (nan in a
     * list is found by identity). */
    if (v == w)
        return 1;
    return code_compare_bool(vm, v, w, CODE_CMP_EQ);
}

/* a op b by the slots, CPython's order: CODE_NOTIMPL when neither side
 * supports it. */
static cv binop_try(code_vm *vm, int op, cv a, cv b)
{
    const code_type *ta = cv_type(a), *tb = cv_type(b);
    cv r = CODE_NOTIMPL;
    bool tried_b = false;
    if (ta != tb && tb->binop && tb->binop != ta->binop && code_type_is_sub(tb, ta)) {
        tried_b = true;
        r = tb->binop(vm, op, a, b);
    }
    if (r == CODE_NOTIMPL && ta->binop)
        r = ta->binop(vm, op, a, b);
    if (r == CODE_NOTIMPL && !tried_b && tb->binop && tb->binop != ta->binop)
        r = tb->binop(vm, op, a, b);
    return r;
}

cv code_binop(code_vm *vm, int op, cv a, cv b)
{
    cv r = binop_try(vm, op, a, b);
    if (r != CODE_NOTIMPL)
        return r;
    return code_raise(vm, &code_exc_TypeError, "unsupported operand type(s) for %s: '%s' and '%s'",
                      code_binop_symbol(op), code_type_name(a), code_type_name(b));
}

cv code_binop_inplace(code_vm *vm, int op, cv a, cv b)
{
    const code_type *ta = cv_type(a);
    if (ta->inplace) {
        cv r = ta->inplace(vm, op, a, b);
        if (r != CODE_NOTIMPL)
            return r;
    }
    cv r = binop_try(vm, op, a, b);
    if (r != CODE_NOTIMPL)
        return r;
    /* CPython names the augmented operator: "+=", "**=". */
    return code_raise(vm, &code_exc_TypeError, "unsupported operand type(s) for %s=: '%s' and '%s'",
                      op == CODE_OP_POW ? "**" : code_binop_symbol(op), ta->name,
                      code_type_name(b));
}

cv code_unop(code_vm *vm, int op, cv a)
{
    const code_type *t = cv_type(a);
    if (t->unop) {
        cv r = t->unop(vm, op, a);
        if (r != CODE_NOTIMPL)
            return r;
    }
    static const char *const sym[] = {"-", "+", "~"};
    return code_raise(vm, &code_exc_TypeError, "bad operand type for unary %s: '%s'", sym[op],
                      t->name);
}

int code_truth(code_vm *vm, cv v)
{
    if (v == CODE_TRUE)
        return 1;
    if (v == CODE_FALSE || v == CODE_NONE)
        return 0;
    if (cv_is_small(v))
        return cv_small(v) != 0;
    const code_type *t = cv_type(v);
    if (t->truth)
        return t->truth(vm, v);
    if (t->len) {
        ssize_t n = t->len(vm, v);
        return n < 0 ? -1 : n > 0;
    }
    return 1;
}

ssize_t code_len(code_vm *vm, cv v)
{
    const code_type *t = cv_type(v);
    if (!t->len) {
        code_raise(vm, &code_exc_TypeError, "object of type '%s' has no len()", t->name);
        return -1;
    }
    return t->len(vm, v);
}

cv code_iter(code_vm *vm, cv v)
{
    const code_type *t = cv_type(v);
    if (t->iter)
        return t->iter(vm, v);
    return code_raise(vm, &code_exc_TypeError, "'%s' object is not iterable", t->name);
}

cv code_iter_self(code_vm *vm, cv self)
{
    (void)vm;
    return code_incref(self);
}

cv code_next(code_vm *vm, cv it)
{
    const code_type *t = cv_type(it);
    if (t->next)
        return t->next(vm, it);
    return code_raise(vm, &code_exc_TypeError, "'%s' object is not an iterator", t->name);
}

cv code_getitem(code_vm *vm, cv v, cv key)
{
    const code_type *t = cv_type(v);
    if (t->getitem)
        return t->getitem(vm, v, key);
    if (t == &code_type_type)
        return code_raise(vm, &code_exc_NotImplementedError,
                          "subscripting a type (generic aliases) is not supported");
    return code_raise(vm, &code_exc_TypeError, "'%s' object is not subscriptable", t->name);
}

int code_setitem(code_vm *vm, cv v, cv key, cv value)
{
    const code_type *t = cv_type(v);
    if (t->setitem)
        return t->setitem(vm, v, key, value);
    return code_raise_i(vm, &code_exc_TypeError,
                        "'%s' object does not support item assignment", t->name);
}

int code_delitem(code_vm *vm, cv v, cv key)
{
    const code_type *t = cv_type(v);
    if (t->delitem)
        return t->delitem(vm, v, key);
    return code_raise_i(vm, &code_exc_TypeError, "'%s' object doesn't support item deletion",
                        t->name);
}

int code_contains(code_vm *vm, cv container, cv x)
{
    const code_type *t = cv_type(container);
    if (t->contains)
        return t->contains(vm, container, x);
    if (!t->iter)
        return code_raise_i(vm, &code_exc_TypeError, "argument of type '%s' is not iterable",
                            t->name);
    cv it = code_iter(vm, container);
    if (!it)
        return -1;
    int found = 0;
    for (;;) {
        cv item = code_next(vm, it);
        if (!item) {
            if (vm->exc)
                found = -1;
            break;
        }
        found = code_eq(vm, item, x);
        code_decref(vm, item);
        if (found)
            break;
    }
    code_decref(vm, it);
    return found;
}

const code_method *code_type_method(const code_type *t, const char *name)
{
    for (; t; t = t->base) {
        if (!t->methods)
            continue;
        for (const code_method *m = t->methods; m->name; m++)
            if (m->name[0] == name[0] && !strcmp(m->name, name))
                return m;
    }
    return NULL;
}

cv code_getattr(code_vm *vm, cv v, const char *name)
{
    const code_type *t = cv_type(v);
    if (t->getattr) {
        cv r = t->getattr(vm, v, name);
        if (r || vm->exc)
            return r;
    }
    /* x.__class__ is type(x) (a reference: host-named exception types are
     * on the heap) */
    if (name[0] == '_' && !strcmp(name, "__class__"))
        return code_incref(cv_of(t));
    if (t == &code_type_type) {
        /* int.from_bytes, str.join, dict.fromkeys: the function itself; a
         * method called through its type gets self as its first argument. */
        const code_type *self_t = (const code_type *)cv_obj(v);
        const code_method *m = code_type_method(self_t, name);
        if (!m && name[0] == '_') {
            if (code_dunder_hash_none(self_t, name))
                return CODE_NONE;
            m = code_dunder_method(self_t, name);
        }
        if (m)
            return code_cfunc_new(vm, m->name, m->fn, CV_NULL);
        return code_raise(vm, &code_exc_AttributeError, "type object '%s' has no attribute '%s'",
                          self_t->name, name);
    }
    const code_method *m = code_type_method(t, name);
    if (!m && name[0] == '_') {
        if (code_dunder_hash_none(t, name))
            return CODE_NONE;
        m = code_dunder_method(t, name);
    }
    if (m)
        return code_cfunc_new(vm, m->name, m->fn, v);
    return code_raise(vm, &code_exc_AttributeError, "'%s' object has no attribute '%s'", t->name,
                      name);
}

cv code_call_method(code_vm *vm, cv obj, const char *name, cv *args, size_t nargs, cv kwnames)
{
    const code_type *t = cv_type(obj);
    if (t != &code_type_type) {
        cv attr = CV_NULL;
        if (t->getattr) {
            attr = t->getattr(vm, obj, name);
            if (!attr && vm->exc)
                return CV_NULL;
        }
        if (!attr) {
            const code_method *m = code_type_method(t, name);
            if (!m && name[0] == '_')
                m = code_dunder_method(t, name);
            if (m)
                return code_call_with_self(vm, m->fn, obj, args, nargs, kwnames);
        } else {
            cv r = code_call(vm, attr, args, nargs, kwnames);
            code_decref(vm, attr);
            return r;
        }
    }
    cv f = code_getattr(vm, obj, name);
    if (!f)
        return CV_NULL;
    cv r = code_call(vm, f, args, nargs, kwnames);
    code_decref(vm, f);
    return r;
}

cv code_call(code_vm *vm, cv callable, cv *args, size_t nargs, cv kwnames)
{
    const code_type *t = cv_type(callable);
    if (t->call)
        return t->call(vm, callable, args, nargs, kwnames);
    return code_raise(vm, &code_exc_TypeError, "'%s' object is not callable", t->name);
}

int code_as_i64(code_vm *vm, cv v, int64_t *out)
{
    if (cv_is_small(v)) {
        *out = cv_small(v);
        return 0;
    }
    if (v == CODE_TRUE || v == CODE_FALSE) {
        *out = v == CODE_TRUE;
        return 0;
    }
    if (cv_kind(v) == CODE_K_INT) {
        if (code_int_to_i64(v, out) == 1)
            return 0;
        return code_raise_i(vm, &code_exc_OverflowError,
                            "Python int too large to convert to C ssize_t");
    }
    return code_raise_i(vm, &code_exc_TypeError, "'%s' object cannot be interpreted as an integer",
                        code_type_name(v));
}

int code_as_index(code_vm *vm, cv v, ssize_t *out)
{
    if (cv_is_small(v)) {
        *out = (ssize_t)cv_small(v);
        return 0;
    }
    if (v == CODE_TRUE || v == CODE_FALSE) {
        *out = v == CODE_TRUE;
        return 0;
    }
    if (cv_kind(v) == CODE_K_INT) {
        int64_t i;
        if (code_int_to_i64(v, &i) == 1)
            *out = (ssize_t)i;
        else
            *out = code_int_sign(v) < 0 ? INT64_MIN : INT64_MAX;
        return 0;
    }
    return code_raise_i(vm, &code_exc_TypeError,
                        "'%s' object cannot be interpreted as an integer", code_type_name(v));
}
