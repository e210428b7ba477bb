/* Code mode's containers: list, tuple, dict and its views, set, frozenset,
 * range, slice, sort. Expected reprs, orders, hashes and messages are
 * CPython 3.11's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "code/code_cont.h"
#include "test_code_cont_expect.h"

static code_vm vm_;
static code_vm *vm = &vm_;

static int setup(void **state)
{
    (void)state;
    return code_vm_init(vm, NULL, NULL, NULL);
}

static int teardown(void **state)
{
    (void)state;
    assert_null(vm->exc);
    code_vm_destroy(vm);
    return 0;
}

/* ---- helpers: constructors steal their arguments ------------------------------- */

static cv I(int64_t i) { return cv_from_small(i); }
static cv S(const char *s) { return code_str_from_cstr(vm, s); }

static cv L(size_t n, ...)
{
    cv l = code_list_new(vm, 0);
    va_list ap;
    va_start(ap, n);
    for (size_t i = 0; i < n; i++) {
        cv v = va_arg(ap, cv);
        assert_int_equal(code_list_append(vm, l, v), 0);
        code_decref(vm, v);
    }
    va_end(ap);
    return l;
}

static cv T(size_t n, ...)
{
    cv t = code_tuple_new(vm, n);
    va_list ap;
    va_start(ap, n);
    for (size_t i = 0; i < n; i++)
        ((code_tuple *)cv_obj(t))->v[i] = va_arg(ap, cv);
    va_end(ap);
    return t;
}

static cv D(size_t n, ...)
{
    cv d = code_dict_new(vm);
    va_list ap;
    va_start(ap, n);
    for (size_t i = 0; i < n; i++) {
        cv k = va_arg(ap, cv), v = va_arg(ap, cv);
        assert_int_equal(code_dict_set(vm, d, k, v), 0);
        code_decref(vm, k);
        code_decref(vm, v);
    }
    va_end(ap);
    return d;
}

static cv ints_set(bool frozen, size_t n, const int64_t *v)
{
    cv s = code_set_new(vm, frozen);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(code_set_add(vm, s, I(v[i])), 0);
    return s;
}

static cv ints_list(size_t n, const int64_t *v)
{
    cv l = code_list_new(vm, 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(code_list_append(vm, l, I(v[i])), 0);
    return l;
}

/* repr(v) is want; v is borrowed. */
static void repr_is(cv v, const char *want)
{
    assert_non_null(v);
    cv r = code_repr(vm, v);
    if (!r) {
        cv e = code_exc_fetch(vm);
        cv m = code_exc_str(vm, e);
        fail_msg("repr raised %s: %s", code_type_name(e), m ? code_str_cstr(m) : "?");
    }
    assert_string_equal(code_str_cstr(r), want);
    code_decref(vm, r);
}

/* The same, v stolen. */
static void repr_is_d(cv v, const char *want)
{
    repr_is(v, want);
    code_decref(vm, v);
}

/* The pending exception is of type tname with message msg (NULL: any). */
static void raised(const char *tname, const char *msg)
{
    assert_non_null(vm->exc);
    cv e = code_exc_fetch(vm);
    assert_string_equal(code_type_name(e), tname);
    if (msg) {
        cv m = code_exc_str(vm, e);
        assert_non_null(m);
        assert_string_equal(code_str_cstr(m), msg);
        code_decref(vm, m);
    }
    code_decref(vm, e);
}

/* obj.name(*args): args borrowed. */
static cv callm(cv obj, const char *name, size_t n, ...)
{
    cv args[8];
    va_list ap;
    va_start(ap, n);
    for (size_t i = 0; i < n; i++)
        args[i] = va_arg(ap, cv);
    va_end(ap);
    return code_call_method(vm, obj, name, args, n, CV_NULL);
}

/* obj.name(*args, **kw) with one keyword. */
static cv callkw(cv obj, const char *name, size_t n, cv *args, const char *kw, cv kwv)
{
    cv all[8];
    memcpy(all, args, n * sizeof(cv));
    all[n] = kwv;
    cv kwn = T(1, S(kw));
    cv r = code_call_method(vm, obj, name, all, n, kwn);
    code_decref(vm, kwn);
    return r;
}

static cv type_call(const code_type *t, size_t n, cv *args, cv kwnames)
{
    return t->new(vm, t, args, n, kwnames);
}

/* ---- list ---------------------------------------------------------------------- */

static void test_list_basics(void **state)
{
    (void)state;
    cv l = L(3, I(1), S("a"), L(0));
    repr_is(l, "[1, 'a', []]");
    assert_int_equal(code_len(vm, l), 3);
    repr_is_d(code_getitem(vm, l, I(-2)), "'a'");
    assert_null(code_getitem(vm, l, I(3)));
    raised("IndexError", "list index out of range");
    assert_null(code_getitem(vm, l, S("x")));
    raised("TypeError", "list indices must be integers or slices, not str");
    assert_int_equal(code_setitem(vm, l, I(5), I(0)), -1);
    raised("IndexError", "list assignment index out of range");
    /* A list holding itself. */
    assert_int_equal(code_list_append(vm, l, l), 0);
    repr_is(l, "[1, 'a', [], [...]]");
    assert_int_equal(code_delitem(vm, l, I(-1)), 0);
    code_decref(vm, l);

    cv a = L(2, I(1), I(2)), b = L(1, I(3));
    repr_is_d(code_binop(vm, CODE_OP_ADD, a, b), "[1, 2, 3]");
    repr_is_d(code_binop(vm, CODE_OP_MUL, a, I(2)), "[1, 2, 1, 2]");
    repr_is_d(code_binop(vm, CODE_OP_MUL, I(2), a), "[1, 2, 1, 2]");
    repr_is_d(code_binop(vm, CODE_OP_MUL, a, I(-1)), "[]");
    cv t = T(0);
    assert_null(code_binop(vm, CODE_OP_ADD, a, t));
    raised("TypeError", "can only concatenate list (not \"tuple\") to list");
    assert_null(code_binop(vm, CODE_OP_MUL, a, a));
    raised("TypeError", "can't multiply sequence by non-int of type 'list'");
    assert_null(code_binop(vm, CODE_OP_SUB, a, b));
    raised("TypeError", "unsupported operand type(s) for -: 'list' and 'list'");
    /* += extends in place with any iterable. */
    cv r = code_binop_inplace(vm, CODE_OP_ADD, a, T(2, I(7), I(8)));
    assert_true(r == a);
    code_decref(vm, r);
    repr_is(a, "[1, 2, 7, 8]");
    assert_null(code_binop_inplace(vm, CODE_OP_ADD, a, I(1)));
    raised("TypeError", "'int' object is not iterable");
    r = code_binop_inplace(vm, CODE_OP_MUL, b, I(3));
    code_decref(vm, r);
    repr_is(b, "[3, 3, 3]");
    code_decref(vm, a);
    code_decref(vm, b);
}

static void test_list_compare(void **state)
{
    (void)state;
    cv a = L(2, I(1), I(2)), b = L(3, I(1), I(2), I(0)), c = L(2, I(1), I(3));
    assert_int_equal(code_compare_bool(vm, a, b, CODE_CMP_LT), 1);
    assert_int_equal(code_compare_bool(vm, c, b, CODE_CMP_GT), 1);
    assert_int_equal(code_compare_bool(vm, a, a, CODE_CMP_EQ), 1);
    assert_int_equal(code_compare_bool(vm, a, c, CODE_CMP_EQ), 0);
    assert_int_equal(code_compare_bool(vm, a, c, CODE_CMP_NE), 1);
    assert_null(code_compare(vm, a, I(1), CODE_CMP_LT));
    raised("TypeError", "'<' not supported between instances of 'list' and 'int'");
    cv d = L(1, S("x"));
    assert_int_equal(code_compare_bool(vm, a, d, CODE_CMP_LT), -1);
    raised("TypeError", "'<' not supported between instances of 'int' and 'str'");
    assert_int_equal(code_contains(vm, a, I(2)), 1);
    assert_int_equal(code_contains(vm, a, I(5)), 0);
    code_decref(vm, a);
    code_decref(vm, b);
    code_decref(vm, c);
    code_decref(vm, d);
}

static void test_list_slices(void **state)
{
    (void)state;
    int64_t ten[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    cv l = ints_list(10, ten);
    cv s = code_slice_new(vm, I(1), I(8), I(3));
    repr_is_d(code_getitem(vm, l, s), "[1, 4, 7]");
    code_decref(vm, s);
    s = code_slice_new(vm, CODE_NONE, CODE_NONE, I(-2));
    repr_is_d(code_getitem(vm, l, s), "[9, 7, 5, 3, 1]");
    /* Extended assignment: sizes must match. */
    cv two = L(2, I(0), I(0));
    assert_int_equal(code_setitem(vm, l, s, two), -1);
    raised("ValueError", "attempt to assign sequence of size 2 to extended slice of size 5");
    assert_int_equal(code_setitem(vm, l, s, I(1)), -1);
    raised("TypeError", "must assign iterable to extended slice");
    cv five = L(5, S("a"), S("b"), S("c"), S("d"), S("e"));
    assert_int_equal(code_setitem(vm, l, s, five), 0);
    repr_is(l, "[0, 'e', 2, 'd', 4, 'c', 6, 'b', 8, 'a']");
    assert_int_equal(code_delitem(vm, l, s), 0);
    repr_is(l, "[0, 2, 4, 6, 8]");
    code_decref(vm, s);
    /* Step 1: any length. */
    s = code_slice_new(vm, I(1), I(3), CODE_NONE);
    assert_int_equal(code_setitem(vm, l, s, five), 0);
    repr_is(l, "[0, 'a', 'b', 'c', 'd', 'e', 6, 8]");
    assert_int_equal(code_setitem(vm, l, s, two), 0);
    repr_is(l, "[0, 0, 0, 'c', 'd', 'e', 6, 8]");
    assert_int_equal(code_setitem(vm, l, s, I(3)), -1);
    raised("TypeError", "can only assign an iterable");
    code_decref(vm, s);
    /* a[:] = a and a[::-1] = a copy first. */
    s = code_slice_new(vm, CODE_NONE, CODE_NONE, CODE_NONE);
    assert_int_equal(code_setitem(vm, two, s, two), 0);
    repr_is(two, "[0, 0]");
    code_decref(vm, s);
    s = code_slice_new(vm, CODE_NONE, CODE_NONE, I(-1));
    assert_int_equal(code_setitem(vm, five, s, five), 0);
    repr_is(five, "['e', 'd', 'c', 'b', 'a']");
    code_decref(vm, s);
    s = code_slice_new(vm, I(2), CODE_NONE, CODE_NONE);
    assert_int_equal(code_delitem(vm, five, s), 0);
    repr_is(five, "['e', 'd']");
    code_decref(vm, s);
    s = code_slice_new(vm, I(0), I(1), I(0));
    assert_null(code_getitem(vm, l, s));
    raised("ValueError", "slice step cannot be zero");
    code_decref(vm, s);
    s = code_slice_new(vm, S("a"), CODE_NONE, CODE_NONE);
    assert_null(code_getitem(vm, l, s));
    raised("TypeError", "slice indices must be integers or None or have an __index__ method");
    code_decref(vm, s);
    code_decref(vm, l);
    code_decref(vm, two);
    code_decref(vm, five);
}

static void test_list_methods(void **state)
{
    (void)state;
    cv l = L(0);
    code_decref(vm, callm(l, "append", 1, I(3)));
    code_decref(vm, callm(l, "extend", 1, T(2, I(1), I(2))));
    code_decref(vm, callm(l, "insert", 2, I(-1), I(9)));
    code_decref(vm, callm(l, "insert", 2, I(100), I(4)));
    repr_is(l, "[3, 1, 9, 2, 4]");
    repr_is_d(callm(l, "pop", 0), "4");
    repr_is_d(callm(l, "pop", 1, I(0)), "3");
    repr_is_d(callm(l, "index", 1, I(2)), "2");
    assert_null(callm(l, "index", 1, I(5)));
    raised("ValueError", "5 is not in list");
    assert_null(callm(l, "index", 2, I(1), S("a")));
    raised("TypeError", "slice indices must be integers or have an __index__ method");
    assert_null(callm(l, "index", 3, I(1), I(1), I(3)));
    raised("ValueError", "1 is not in list");
    repr_is_d(callm(l, "count", 1, I(9)), "1");
    code_decref(vm, callm(l, "remove", 1, I(9)));
    assert_null(callm(l, "remove", 1, I(9)));
    raised("ValueError", "list.remove(x): x not in list");
    assert_null(callm(l, "append", 0));
    raised("TypeError", "list.append() takes exactly one argument (0 given)");
    assert_null(callm(l, "insert", 1, I(0)));
    raised("TypeError", "insert expected 2 arguments, got 1");
    assert_null(callm(l, "pop", 2, I(0), I(0)));
    raised("TypeError", "pop expected at most 1 argument, got 2");
    assert_null(callm(l, "clear", 1, I(0)));
    raised("TypeError", "list.clear() takes no arguments (1 given)");
    cv c = callm(l, "copy", 0);
    code_decref(vm, callm(l, "reverse", 0));
    repr_is(l, "[2, 1]");
    repr_is_d(c, "[1, 2]");
    code_decref(vm, callm(l, "clear", 0));
    assert_null(callm(l, "pop", 0));
    raised("IndexError", "pop from empty list");
    /* Through the type: list.append(x, 1) checks x. */
    cv append = code_getattr(vm, cv_of(&code_type_list), "append");
    cv args[2] = {I(5), I(1)};
    assert_null(code_call(vm, append, args, 2, CV_NULL));
    raised("TypeError", "descriptor 'append' for 'list' objects doesn't apply to a 'int' object");
    args[0] = l;
    code_decref(vm, code_call(vm, append, args, 2, CV_NULL));
    repr_is(l, "[1]");
    code_decref(vm, append);
    code_decref(vm, l);
    /* list(x) */
    cv tup = T(2, I(1), I(2));
    repr_is_d(type_call(&code_type_list, 1, &tup, CV_NULL), "[1, 2]");
    repr_is_d(type_call(&code_type_list, 0, NULL, CV_NULL), "[]");
    cv one = I(1);
    assert_null(type_call(&code_type_list, 1, &one, CV_NULL));
    raised("TypeError", "'int' object is not iterable");
    code_decref(vm, tup);
}

/* ---- sort ----------------------------------------------------------------------- */

static cv key_neg(code_vm *v, cv *args, size_t nargs, cv kw)
{
    (void)kw;
    assert_int_equal(nargs, 1);
    return code_int_from_i64(v, -cv_small(args[0]));
}

static cv key_first(code_vm *v, cv *args, size_t nargs, cv kw)
{
    (void)v, (void)kw, (void)nargs;
    return code_incref(((code_tuple *)cv_obj(args[0]))->v[0]);
}

/* Bound to a list: appends to it while the list sorts. */
static cv key_meddle(code_vm *v, cv *args, size_t nargs, cv kw)
{
    (void)kw, (void)nargs;
    if (code_list_append(v, args[0], args[1]))
        return CV_NULL;
    return code_incref(args[1]);
}

static void test_sort(void **state)
{
    (void)state;
    int64_t v[] = {5, 3, 9, 1, 5, 7, 2, 8, 6, 4, 0, 11, 15, 13, 12, 14, 10, 3, 3, 1};
    cv l = ints_list(20, v);
    assert_int_equal(code_list_sort(vm, l, CV_NULL, false), 0);
    repr_is(l, "[0, 1, 1, 2, 3, 3, 3, 4, 5, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]");
    assert_int_equal(code_list_sort(vm, l, CV_NULL, true), 0);
    repr_is(l, "[15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 5, 4, 3, 3, 3, 2, 1, 1, 0]");
    cv key = code_cfunc_new(vm, "neg", key_neg, CV_NULL);
    cv none = CODE_NONE;
    code_decref(vm, callkw(l, "sort", 0, &none, "key", key));
    repr_is(l, "[15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 5, 4, 3, 3, 3, 2, 1, 1, 0]");
    code_decref(vm, key);
    code_decref(vm, l);

    /* Stability, forward and reversed (CPython keeps equal items in order
     * both ways). */
    cv p = L(6, T(2, I(1), S("a")), T(2, I(0), S("b")), T(2, I(1), S("c")), T(2, I(0), S("d")),
             T(2, I(2), S("e")), T(2, I(1), S("f")));
    key = code_cfunc_new(vm, "first", key_first, CV_NULL);
    assert_int_equal(code_list_sort(vm, p, key, false), 0);
    repr_is(p, "[(0, 'b'), (0, 'd'), (1, 'a'), (1, 'c'), (1, 'f'), (2, 'e')]");
    assert_int_equal(code_list_sort(vm, p, key, true), 0);
    repr_is(p, "[(2, 'e'), (1, 'a'), (1, 'c'), (1, 'f'), (0, 'b'), (0, 'd')]");
    code_decref(vm, key);
    code_decref(vm, p);

    /* A failing comparison leaves every item in the list. */
    cv m = L(20, I(5), I(4), I(3), I(2), I(1), S("x"), I(0), I(9), I(8), I(7), I(6), I(5),
             I(4), I(3), I(2), I(1), I(0), I(9), I(8), I(7));
    assert_int_equal(code_list_sort(vm, m, CV_NULL, false), -1);
    raised("TypeError", NULL);
    assert_int_equal(code_len(vm, m), 20);
    assert_int_equal(code_contains(vm, m, S("x")), 1);
    code_decref(vm, m);

    /* The key changes the list: "list modified during sort", the list as
     * it was. */
    cv q = L(3, I(3), I(1), I(2));
    key = code_cfunc_new(vm, "meddle", key_meddle, q);
    assert_int_equal(code_list_sort(vm, q, key, false), -1);
    raised("ValueError", "list modified during sort");
    repr_is(q, "[1, 2, 3]");
    code_decref(vm, key);   /* the bound method held q */
    code_decref(vm, q);

    cv r = L(0);
    cv one = I(1);
    assert_null(code_call_method(vm, r, "sort", &one, 1, CV_NULL));
    raised("TypeError", "sort() takes no positional arguments");
    assert_null(callkw(r, "sort", 0, &one, "x", one));
    raised("TypeError", "'x' is an invalid keyword argument for sort()");
    code_decref(vm, r);
}

/* ---- tuple ----------------------------------------------------------------------- */

static void test_tuple(void **state)
{
    (void)state;
    repr_is_d(T(0), "()");
    repr_is_d(T(1, I(1)), "(1,)");
    cv t = T(3, I(1), I(2), I(3));
    repr_is(t, "(1, 2, 3)");
    uint64_t h;
    assert_int_equal(code_hash(vm, t, &h), 0);
    assert_int_equal((int64_t)h, 529344067295497451LL);
    assert_int_equal(code_hash(vm, CODE_EMPTY_TUPLE, &h), 0);
    assert_int_equal((int64_t)h, 5740354900026072187LL);
    cv n = T(2, T(2, I(1), I(2)), I(3));
    assert_int_equal(code_hash(vm, n, &h), 0);
    assert_int_equal((int64_t)h, -333907151259015829LL);
    code_decref(vm, n);
    n = T(2, I(-1), I(0));
    assert_int_equal(code_hash(vm, n, &h), 0);
    assert_int_equal((int64_t)h, 2575514064802888272LL);
    code_decref(vm, n);
    n = T(2, I(1), L(0));
    assert_int_equal(code_hash(vm, n, &h), -1);
    raised("TypeError", "unhashable type: 'list'");
    code_decref(vm, n);

    repr_is_d(code_binop(vm, CODE_OP_ADD, t, t), "(1, 2, 3, 1, 2, 3)");
    repr_is_d(code_binop(vm, CODE_OP_MUL, I(2), t), "(1, 2, 3, 1, 2, 3)");
    cv l = L(0);
    assert_null(code_binop(vm, CODE_OP_ADD, t, l));
    raised("TypeError", "can only concatenate tuple (not \"list\") to tuple");
    code_decref(vm, l);
    cv s = code_slice_new(vm, I(-2), CODE_NONE, CODE_NONE);
    repr_is_d(code_getitem(vm, t, s), "(2, 3)");
    code_decref(vm, s);
    assert_null(code_getitem(vm, t, I(3)));
    raised("IndexError", "tuple index out of range");
    repr_is_d(callm(t, "index", 1, I(3)), "2");
    assert_null(callm(t, "index", 1, I(4)));
    raised("ValueError", "tuple.index(x): x not in tuple");
    repr_is_d(callm(t, "count", 1, I(3)), "1");
    cv u = T(3, I(1), I(2), I(4));
    assert_int_equal(code_compare_bool(vm, t, u, CODE_CMP_LT), 1);
    code_decref(vm, u);
    /* A tuple inside a list inside the tuple. */
    cv inner = L(1, I(1));
    cv outer = T(1, code_incref(inner));
    assert_int_equal(code_list_append(vm, inner, outer), 0);
    repr_is(outer, "([1, (...)],)");
    code_decref(vm, callm(inner, "clear", 0));
    code_decref(vm, inner);
    code_decref(vm, outer);
    code_decref(vm, t);
}

/* ---- dict ----------------------------------------------------------------------- */

static void test_dict_basics(void **state)
{
    (void)state;
    cv d = D(3, S("b"), I(1), S("a"), I(2), I(1), S("one"));
    repr_is(d, "{'b': 1, 'a': 2, 1: 'one'}");
    /* True and 1 are the same key. */
    assert_int_equal(code_dict_set(vm, d, CODE_TRUE, S("true")), 0);
    repr_is(d, "{'b': 1, 'a': 2, 1: 'true'}");
    assert_int_equal(code_dict_del(vm, d, S("b")), 0);
    assert_int_equal(code_dict_set(vm, d, S("b"), I(3)), 0);
    repr_is(d, "{'a': 2, 1: 'true', 'b': 3}");
    cv k = S("zz");
    assert_null(code_getitem(vm, d, k));
    assert_non_null(vm->exc);
    cv e = code_exc_fetch(vm);
    assert_string_equal(code_type_name(e), "KeyError");
    code_exc *ex = (code_exc *)cv_obj(e);
    assert_true(((code_tuple *)cv_obj(ex->args))->v[0] == k);
    code_decref(vm, e);
    code_decref(vm, k);
    cv l = L(0);
    assert_null(code_getitem(vm, d, l));
    raised("TypeError", "unhashable type: 'list'");
    assert_int_equal(code_contains(vm, d, S("a")), 1);
    code_decref(vm, l);
    cv v;
    assert_int_equal(code_dict_get_cstr(vm, d, "b", &v), 0);
    repr_is(v, "3");
    /* Holding itself. */
    assert_int_equal(code_dict_set(vm, d, S("me"), d), 0);
    repr_is(d, "{'a': 2, 1: 'true', 'b': 3, 'me': {...}}");
    code_decref(vm, callm(d, "clear", 0));
    repr_is(d, "{}");
    code_decref(vm, d);
}

static void test_dict_big(void **state)
{
    (void)state;
    /* x = {i: i*i for i in range(50)}; del every third; x[3] = 9; x[1000] = 1 */
    cv d = code_dict_new(vm);
    for (int64_t i = 0; i < 50; i++)
        assert_int_equal(code_dict_set(vm, d, I(i), I(i * i)), 0);
    for (int64_t i = 0; i < 50; i += 3)
        assert_int_equal(code_dict_del(vm, d, I(i)), 0);
    assert_int_equal(code_dict_set(vm, d, I(3), I(9)), 0);
    assert_int_equal(code_dict_set(vm, d, I(1000), I(1)), 0);
    cv keys = code_list_from(vm, d);
    cv s = code_slice_new(vm, I(-3), CODE_NONE, CODE_NONE);
    repr_is_d(code_getitem(vm, keys, s), "[49, 3, 1000]");
    code_decref(vm, s);
    code_decref(vm, keys);
    assert_int_equal(code_len(vm, d), 35);
    for (int64_t i = 0; i < 50; i++) {
        cv x;
        assert_int_equal(code_dict_get(vm, d, I(i), &x), 0);
        if (i % 3 == 0 && i != 3)
            assert_null(x);
        else
            assert_int_equal(cv_small(x), i * i);
    }
    /* Many more, many deletions: the table stays consistent. */
    for (int64_t i = 0; i < 5000; i++)
        assert_int_equal(code_dict_set(vm, d, I(i * 7), I(i)), 0);
    for (int64_t i = 0; i < 5000; i += 2)
        assert_int_equal(code_dict_del(vm, d, I(i * 7)), 0);
    for (int64_t i = 0; i < 5000; i++) {
        cv x;
        assert_int_equal(code_dict_get(vm, d, I(i * 7), &x), 0);
        if (i % 2)
            assert_int_equal(cv_small(x), i);
        else if (i * 7 >= 50 && i * 7 != 1000)
            assert_null(x);
    }
    /* popitem takes the last. */
    repr_is_d(callm(d, "popitem", 0), "(34993, 4999)");
    code_decref(vm, d);
}

static void test_dict_methods(void **state)
{
    (void)state;
    cv d = D(2, S("a"), I(1), S("b"), I(2));
    repr_is_d(callm(d, "get", 1, S("a")), "1");
    repr_is_d(callm(d, "get", 1, S("z")), "None");
    repr_is_d(callm(d, "get", 2, S("z"), I(0)), "0");
    assert_null(callm(d, "get", 0));
    raised("TypeError", "get expected at least 1 argument, got 0");
    repr_is_d(callm(d, "setdefault", 2, S("c"), I(3)), "3");
    repr_is_d(callm(d, "setdefault", 2, S("a"), I(9)), "1");
    repr_is_d(callm(d, "pop", 1, S("b")), "2");
    repr_is_d(callm(d, "pop", 2, S("b"), I(7)), "7");
    assert_null(callm(d, "pop", 1, S("b")));
    raised("KeyError", "'b'");
    repr_is_d(callm(d, "keys", 0), "dict_keys(['a', 'c'])");
    repr_is_d(callm(d, "values", 0), "dict_values([1, 3])");
    repr_is_d(callm(d, "items", 0), "dict_items([('a', 1), ('c', 3)])");
    cv pairs = L(2, T(2, S("x"), I(1)), S("yz"));
    code_decref(vm, callkw(d, "update", 1, &pairs, "k", I(5)));
    repr_is(d, "{'a': 1, 'c': 3, 'x': 1, 'y': 'z', 'k': 5}");
    code_decref(vm, pairs);
    pairs = L(1, I(1));
    assert_null(callm(d, "update", 1, pairs));
    raised("TypeError", "cannot convert dictionary update sequence element #0 to a sequence");
    code_decref(vm, pairs);
    pairs = L(2, T(2, I(1), I(1)), T(3, I(1), I(2), I(3)));
    assert_null(callm(d, "update", 1, pairs));
    raised("ValueError", "dictionary update sequence element #1 has length 3; 2 is required");
    code_decref(vm, pairs);
    repr_is_d(callm(d, "popitem", 0), "(1, 1)");
    cv c = callm(d, "copy", 0);
    assert_int_equal(code_compare_bool(vm, c, d, CODE_CMP_EQ), 1);
    assert_int_equal(code_dict_set(vm, c, S("a"), I(0)), 0);
    assert_int_equal(code_compare_bool(vm, c, d, CODE_CMP_EQ), 0);
    assert_null(code_compare(vm, c, d, CODE_CMP_LT));
    raised("TypeError", "'<' not supported between instances of 'dict' and 'dict'");
    repr_is_d(code_binop(vm, CODE_OP_OR, d, c), "{'a': 0, 'c': 3, 'x': 1, 'y': 'z', 'k': 5}");
    cv r = code_binop_inplace(vm, CODE_OP_OR, c, D(1, S("n"), CODE_NONE));
    code_decref(vm, r);
    repr_is(c, "{'a': 0, 'c': 3, 'x': 1, 'y': 'z', 'k': 5, 'n': None}");
    cv lst = L(0);
    assert_null(code_binop(vm, CODE_OP_OR, d, lst));
    raised("TypeError", "unsupported operand type(s) for |: 'dict' and 'list'");
    code_decref(vm, lst);
    code_decref(vm, c);
    code_decref(vm, callm(d, "clear", 0));
    assert_null(callm(d, "popitem", 0));
    raised("KeyError", "'popitem(): dictionary is empty'");
    code_decref(vm, d);

    /* dict(...) and dict.fromkeys */
    cv args[3] = {L(1, T(2, S("a"), I(1))), I(2)};
    cv kwn = T(1, S("b"));
    repr_is_d(type_call(&code_type_dict, 1, args, kwn), "{'a': 1, 'b': 2}");
    code_decref(vm, kwn);
    assert_null(type_call(&code_type_dict, 2, args, CV_NULL));
    raised("TypeError", "dict expected at most 1 argument, got 2");
    code_decref(vm, args[0]);
    cv fk = code_getattr(vm, cv_of(&code_type_dict), "fromkeys");
    args[0] = S("ab");
    args[1] = I(0);
    repr_is_d(code_call(vm, fk, args, 2, CV_NULL), "{'a': 0, 'b': 0}");
    repr_is_d(code_call(vm, fk, args, 1, CV_NULL), "{'a': None, 'b': None}");
    code_decref(vm, fk);
    /* {}.fromkeys(x) is dict.fromkeys(x). */
    cv e = code_dict_new(vm);
    repr_is_d(callm(e, "fromkeys", 1, args[0]), "{'a': None, 'b': None}");
    fk = code_getattr(vm, e, "fromkeys");
    repr_is_d(code_call(vm, fk, args, 2, CV_NULL), "{'a': 0, 'b': 0}");
    code_decref(vm, fk);
    code_decref(vm, e);
    code_decref(vm, args[0]);
}

static void test_dict_iter(void **state)
{
    (void)state;
    cv d = D(3, I(1), I(10), I(2), I(20), I(3), I(30));
    cv it = code_iter(vm, d);
    cv x = code_next(vm, it);
    repr_is_d(x, "1");
    /* Changing a value is fine. */
    assert_int_equal(code_dict_set(vm, d, I(2), I(22)), 0);
    repr_is_d(code_next(vm, it), "2");
    assert_int_equal(code_dict_set(vm, d, I(4), I(40)), 0);
    assert_null(code_next(vm, it));
    raised("RuntimeError", "dictionary changed size during iteration");
    assert_null(code_next(vm, it));
    raised("RuntimeError", "dictionary changed size during iteration");
    code_decref(vm, it);
    /* Same size, other keys. */
    it = code_iter(vm, d);
    code_decref(vm, code_next(vm, it));
    assert_int_equal(code_dict_del(vm, d, I(4)), 0);
    assert_int_equal(code_dict_set(vm, d, I(5), I(50)), 0);
    repr_is_d(code_next(vm, it), "2");
    repr_is_d(code_next(vm, it), "3");
    repr_is_d(code_next(vm, it), "5");
    assert_null(code_next(vm, it));
    assert_null(vm->exc);
    code_decref(vm, it);
    /* reversed, views */
    it = code_cont_reversed(vm, d);
    repr_is_d(code_list_from(vm, it), "[5, 3, 2, 1]");
    code_decref(vm, it);
    cv items = callm(d, "items", 0);
    it = code_cont_reversed(vm, items);
    repr_is_d(code_list_from(vm, it), "[(5, 50), (3, 30), (2, 22), (1, 10)]");
    code_decref(vm, it);
    cv t = T(2, I(2), I(22));
    assert_int_equal(code_contains(vm, items, t), 1);
    code_decref(vm, t);
    code_decref(vm, items);
    cv keys = callm(d, "keys", 0);
    int64_t some[] = {2, 3, 9};
    cv s = ints_set(false, 3, some);
    repr_is_d(code_binop(vm, CODE_OP_AND, keys, s), "{2, 3}");
    repr_is_d(code_binop(vm, CODE_OP_OR, keys, s), "{1, 2, 3, 5, 9}");
    repr_is_d(code_binop(vm, CODE_OP_SUB, keys, s), "{1, 5}");
    repr_is_d(code_binop(vm, CODE_OP_SUB, s, keys), "{9}");
    repr_is_d(code_binop(vm, CODE_OP_XOR, keys, s), "{1, 5, 9}");
    assert_int_equal(code_compare_bool(vm, keys, s, CODE_CMP_EQ), 0);
    assert_int_equal(code_dict_del(vm, d, I(1)), 0);
    assert_int_equal(code_dict_del(vm, d, I(5)), 0);
    assert_int_equal(code_set_add(vm, s, I(1)), 0);
    assert_int_equal(code_compare_bool(vm, keys, s, CODE_CMP_LT), 1);
    assert_int_equal(code_len(vm, keys), 2);
    code_decref(vm, s);
    code_decref(vm, keys);
    code_decref(vm, d);
}

/* ---- set ------------------------------------------------------------------------ */

static void test_set_order(void **state)
{
    (void)state;
    int64_t a[] = {3, 1, 2};
    repr_is_d(ints_set(false, 3, a), "{1, 2, 3}");
    int64_t b[] = {100, 3, 17, 9, 33, 1, 64, 8, 25, 1000, 7, 15, 31, 63, 5};
    cv s = ints_set(false, 15, b);
    repr_is(s, "{64, 33, 1, 3, 100, 5, 7, 8, 9, 1000, 15, 17, 25, 63, 31}");
    code_decref(vm, callm(s, "discard", 1, I(17)));
    code_decref(vm, callm(s, "add", 1, I(41)));
    repr_is(s, "{64, 33, 1, 3, 100, 5, 7, 8, 9, 1000, 41, 15, 25, 63, 31}");
    repr_is_d(callm(s, "pop", 0), "64");
    repr_is_d(callm(s, "pop", 0), "33");
    repr_is(s, "{1, 3, 100, 5, 7, 8, 9, 1000, 41, 15, 25, 63, 31}");
    assert_null(callm(s, "remove", 1, I(2)));
    raised("KeyError", "2");
    code_decref(vm, s);
    cv r = code_range_new(vm, 20, 0, -1);
    repr_is_d(code_set_copy(vm, r, false),
              "{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}");
    code_decref(vm, r);
    repr_is_d(code_set_new(vm, false), "set()");
    repr_is_d(code_set_new(vm, true), "frozenset()");
    int64_t c[] = {2, 1};
    repr_is_d(ints_set(true, 2, c), "frozenset({1, 2})");
}

/* Constant set displays, as CPython's compiler builds them. */
static void test_set_consts(void **state)
{
    (void)state;
    cv a[] = {I(-2), I(-1), I(7)};
    repr_is_d(code_set_from_consts(vm, a, 3), "{-1, -2, 7}");
    cv t = code_tuple_from_array(vm, a, 3);
    repr_is_d(code_set_copy(vm, t, false), "{7, -2, -1}");
    code_decref(vm, t);
    cv b[] = {I(8), I(0), I(16), I(24), I(1)};
    repr_is_d(code_set_from_consts(vm, b, 5), "{0, 1, 16, 8, 24}");
    cv c[] = {I(-1), I(-2), I(7)};
    repr_is_d(code_set_from_consts(vm, c, 3), "{-2, -1, 7}");
}

static void test_set_algebra(void **state)
{
    (void)state;
    int64_t av[] = {1, 2, 3, 4, 5, 40, 17}, bv[] = {4, 5, 6, 7, 40, 9};
    cv a = ints_set(false, 7, av), b = ints_set(false, 6, bv);
    repr_is_d(code_binop(vm, CODE_OP_OR, a, b), "{1, 2, 3, 4, 5, 6, 7, 40, 9, 17}");
    repr_is_d(code_binop(vm, CODE_OP_AND, a, b), "{40, 4, 5}");
    repr_is_d(code_binop(vm, CODE_OP_SUB, a, b), "{1, 2, 3, 17}");
    repr_is_d(code_binop(vm, CODE_OP_XOR, a, b), "{1, 2, 3, 6, 7, 9, 17}");
    repr_is_d(code_binop(vm, CODE_OP_SUB, b, a), "{9, 6, 7}");
    repr_is_d(code_binop(vm, CODE_OP_XOR, b, a), "{1, 2, 3, 6, 7, 9, 17}");
    cv l = L(2, I(1), I(9));
    assert_null(code_binop(vm, CODE_OP_OR, a, l));
    raised("TypeError", "unsupported operand type(s) for |: 'set' and 'list'");
    assert_null(code_binop_inplace(vm, CODE_OP_OR, a, l));
    raised("TypeError", "unsupported operand type(s) for |=: 'set' and 'list'");
    repr_is_d(callm(a, "union", 2, l, b), "{1, 2, 3, 4, 5, 6, 7, 40, 9, 17}");
    repr_is_d(callm(a, "intersection", 1, l), "{1}");
    repr_is_d(callm(a, "difference", 2, l, b), "{17, 2, 3}");
    repr_is_d(callm(a, "symmetric_difference", 1, l), "{2, 3, 4, 5, 40, 9, 17}");
    repr_is_d(callm(a, "issubset", 1, b), "False");
    repr_is_d(callm(a, "isdisjoint", 1, l), "False");
    cv c = code_set_copy(vm, a, false);
    cv r = code_binop_inplace(vm, CODE_OP_AND, c, b);
    code_decref(vm, r);
    repr_is(c, "{40, 4, 5}");
    repr_is_d(callm(c, "issubset", 1, a), "True");
    assert_int_equal(code_compare_bool(vm, c, a, CODE_CMP_LT), 1);
    assert_int_equal(code_compare_bool(vm, a, c, CODE_CMP_GE), 1);
    assert_int_equal(code_compare_bool(vm, c, c, CODE_CMP_LT), 0);
    code_decref(vm, callm(c, "symmetric_difference_update", 1, l));
    repr_is(c, "{1, 4, 5, 40, 9}");
    code_decref(vm, callm(c, "difference_update", 1, b));
    repr_is(c, "{1}");
    /* frozenset results follow the left operand. */
    cv f = code_set_copy(vm, b, true);
    repr_is_d(code_binop(vm, CODE_OP_AND, f, a), "frozenset({40, 4, 5})");
    repr_is_d(code_binop(vm, CODE_OP_AND, a, f), "{40, 4, 5}");
    assert_int_equal(code_compare_bool(vm, f, b, CODE_CMP_EQ), 1);
    assert_null(callm(f, "add", 1, I(1)));
    raised("AttributeError", "'frozenset' object has no attribute 'add'");
    code_decref(vm, f);
    code_decref(vm, c);
    code_decref(vm, l);
    code_decref(vm, a);
    code_decref(vm, b);
}

static void test_set_hash_iter(void **state)
{
    (void)state;
    int64_t v[] = {1, 2, 3};
    cv f = ints_set(true, 3, v);
    uint64_t h;
    assert_int_equal(code_hash(vm, f, &h), 0);
    assert_int_equal((int64_t)h, -272375401224217160LL);
    code_decref(vm, f);
    f = code_set_new(vm, true);
    assert_int_equal(code_hash(vm, f, &h), 0);
    assert_int_equal((int64_t)h, 133146708735736LL);
    cv tp = T(2, I(1), I(2));
    assert_int_equal(code_set_add(vm, f, tp), 0);
    code_decref(vm, tp);
    code_decref(vm, f);
    cv s = ints_set(false, 3, v);
    assert_int_equal(code_hash(vm, s, &h), -1);
    raised("TypeError", "unhashable type: 'set'");
    /* A set looked up in a set of frozensets. */
    cv ff = code_set_new(vm, false);
    cv fz = code_set_copy(vm, s, true);
    assert_int_equal(code_set_add(vm, ff, fz), 0);
    assert_int_equal(code_contains(vm, ff, s), 1);
    code_decref(vm, fz);
    code_decref(vm, ff);
    cv it = code_iter(vm, s);
    repr_is_d(code_next(vm, it), "1");
    assert_int_equal(code_set_add(vm, s, I(9)), 0);
    assert_null(code_next(vm, it));
    raised("RuntimeError", "Set changed size during iteration");
    code_decref(vm, it);
    code_decref(vm, s);
    cv args[1] = {S("abca")};
    cv kwn = T(1, S("x"));
    cv args2[2] = {I(1), I(2)};
    assert_null(type_call(&code_type_set, 0, args2, kwn));
    raised("TypeError", "set() takes no keyword arguments");
    assert_null(type_call(&code_type_frozenset, 2, args2, CV_NULL));
    raised("TypeError", "frozenset expected at most 1 argument, got 2");
    code_decref(vm, kwn);
    cv fs = type_call(&code_type_frozenset, 1, args, CV_NULL);
    assert_int_equal(code_len(vm, fs), 3);
    cv same = type_call(&code_type_frozenset, 1, &fs, CV_NULL);
    assert_true(same == fs);
    code_decref(vm, same);
    code_decref(vm, fs);
    code_decref(vm, args[0]);
}

/* The random workloads of test_code_cont_gen.py, replayed: the same
 * orders, pops and algebra as CPython. */
static uint64_t lcg(uint64_t *x)
{
    *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
    return *x >> 33;
}

static cv small_set(size_t n, const int64_t *v)
{
    return ints_set(false, n, v);
}

static void inplace(int op, cv a, cv b)
{
    cv r = code_binop_inplace(vm, op, a, b);
    assert_true(r == a);
    code_decref(vm, r);
    code_decref(vm, b);
}

static void test_set_random(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof set_cases / sizeof set_cases[0]; c++) {
        const struct set_case *k = &set_cases[c];
        uint64_t x = k->seed;
        cv s = code_set_new(vm, false), t = code_set_new(vm, false);
        long long popsum = 0;
        unsigned npops = 0;
        for (unsigned i = 0; i < k->nops; i++) {
            uint64_t op = lcg(&x) % 100;
            int64_t v = k->lo + (int64_t)(lcg(&x) % (uint64_t)(k->hi - k->lo));
            cv tgt = lcg(&x) % 2 ? s : t, other = tgt == s ? t : s;
            if (op < 55) {
                assert_int_equal(code_set_add(vm, tgt, I(v)), 0);
            } else if (op < 85) {
                code_decref(vm, callm(tgt, "discard", 1, I(v)));
            } else if (op < 92) {
                if (code_len(vm, tgt)) {
                    cv p = callm(tgt, "pop", 0);
                    popsum += cv_small(p);
                    npops++;
                }
            } else if (op < 94) {
                code_incref(other);
                inplace(CODE_OP_OR, tgt, other);
            } else if (op < 96) {
                int64_t w[] = {v, v + 1, v + 2};
                inplace(CODE_OP_SUB, tgt, small_set(3, w));
            } else if (op < 98) {
                int64_t w[] = {v, v + 3};
                inplace(CODE_OP_XOR, tgt, small_set(2, w));
            } else {
                cv r = code_range_new(vm, k->lo, k->hi, 1);
                cv all = code_set_copy(vm, r, false);
                int64_t w[] = {v};
                cv one = small_set(1, w);
                cv m = code_binop(vm, CODE_OP_SUB, all, one);
                inplace(CODE_OP_AND, tgt, m);
                code_decref(vm, one);
                code_decref(vm, all);
                code_decref(vm, r);
            }
        }
        assert_int_equal(npops, k->npops);
        assert_int_equal(popsum, k->popsum);
        repr_is(s, k->s);
        repr_is(t, k->t);
        repr_is_d(code_binop(vm, CODE_OP_OR, s, t), k->or_);
        repr_is_d(code_binop(vm, CODE_OP_AND, s, t), k->and_);
        repr_is_d(code_binop(vm, CODE_OP_SUB, s, t), k->sub);
        repr_is_d(code_binop(vm, CODE_OP_XOR, s, t), k->xor_);
        code_decref(vm, s);
        code_decref(vm, t);
    }
}

static int64_t pymod(int64_t a, int64_t b)
{
    int64_t m = a % b;
    return m < 0 ? m + b : m;
}

static cv rand_slice(uint64_t *x)
{
    /* The order of test_code_cont_gen.py's sl(): step, then start, stop. */
    static const int64_t steps[] = {-3, -2, -1, 1, 2, 3, 0};
    uint64_t st = lcg(x) % 8;
    cv idx[2];
    for (int i = 0; i < 2; i++) {
        int64_t v = (int64_t)(lcg(x) % 33);
        idx[i] = v == 32 ? CODE_NONE : I(v - 16);
    }
    return code_slice_new(vm, idx[0], idx[1], st == 7 ? CODE_NONE : I(steps[st]));
}

static uint64_t fnv(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* test_code_cont_gen.py's run_list, replayed. */
static void test_list_random(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof list_cases / sizeof list_cases[0]; c++) {
        const struct list_case *k = &list_cases[c];
        uint64_t x = k->seed, h = 14695981039346656037ULL;
        int64_t ten[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
        cv a = ints_list(10, ten);
        for (unsigned i = 0; i < k->nops; i++) {
            uint64_t op = lcg(&x) % 100;
            int64_t v = (int64_t)(lcg(&x) % 50) - 10;
            cv res = CODE_NONE, s;
            if (op < 25) {
                uint64_t n = lcg(&x) % 6;
                cv rhs = L(0);
                for (uint64_t j = 0; j < n; j++)
                    code_list_append(vm, rhs, I(v + (int64_t)j));
                s = rand_slice(&x);
                if (code_setitem(vm, a, s, rhs))
                    res = CV_NULL;
                code_decref(vm, s);
                code_decref(vm, rhs);
            } else if (op < 40) {
                s = rand_slice(&x);
                if (code_delitem(vm, a, s))
                    res = CV_NULL;
                code_decref(vm, s);
            } else if (op < 60) {
                s = rand_slice(&x);
                res = code_getitem(vm, a, s);
                code_decref(vm, s);
            } else if (op < 65) {
                code_decref(vm, callm(a, "insert", 2, I(v), I(v)));
            } else if (op < 72) {
                res = callm(a, "pop", 1, I(pymod(v, 25) - 12));
            } else if (op < 77) {
                res = callm(a, "remove", 1, I(v));
                if (res)
                    res = CODE_NONE;
            } else if (op < 82) {
                res = callm(a, "index", 2, I(v), I((int64_t)(lcg(&x) % 20) - 10));
            } else if (op < 87) {
                inplace(CODE_OP_ADD, a, L(2, I(v), I(v + 1)));
                if (code_len(vm, a) > 40) {
                    s = code_slice_new(vm, I(20), CODE_NONE, CODE_NONE);
                    assert_int_equal(code_delitem(vm, a, s), 0);
                    code_decref(vm, s);
                }
            } else if (op < 92) {
                assert_int_equal(code_list_sort(vm, a, CV_NULL, pymod(v, 2) != 0), 0);
            } else if (op < 95) {
                code_decref(vm, callm(a, "reverse", 0));
            } else if (code_setitem(vm, a, I(pymod(v, 30) - 15), I(v))) {
                res = CV_NULL;
            }
            if (!res) {
                cv e = code_exc_fetch(vm);
                h = fnv(h, code_type_name(e));
                code_decref(vm, e);
            } else if (res != CODE_NONE) {
                cv r = code_repr(vm, res);
                h = fnv(h, code_str_cstr(r));
                code_decref(vm, r);
                code_decref(vm, res);
            }
            cv r = code_repr(vm, a);
            h = fnv(h, "|");
            h = fnv(h, code_str_cstr(r));
            h = fnv(h, "\n");
            code_decref(vm, r);
        }
        repr_is(a, k->final);
        assert_true(h == k->hash);
        code_decref(vm, a);
    }
}

/* test_code_cont_gen.py's run_dict, replayed. */
static void test_dict_random(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof dict_cases / sizeof dict_cases[0]; c++) {
        const struct dict_case *k = &dict_cases[c];
        uint64_t x = k->seed, h = 14695981039346656037ULL;
        cv d = code_dict_new(vm);
        for (unsigned i = 0; i < k->nops; i++) {
            int64_t op = (int64_t)(lcg(&x) % 100);
            int64_t key = (int64_t)(lcg(&x) % k->span) - (int64_t)(k->span / 4);
            cv res = CODE_NONE;
            bool show = true;
            if (op < 45) {
                assert_int_equal(code_dict_set(vm, d, I(key), I(op)), 0);
                show = false;
            } else if (op < 70) {
                res = callm(d, "pop", 2, I(key), CODE_NONE);
            } else if (op < 75) {
                if (code_len(vm, d))
                    res = callm(d, "popitem", 0);
                else
                    show = false;
            } else if (op < 85) {
                res = callm(d, "setdefault", 2, I(key), I(-op));
            } else if (op < 95) {
                cv u = D(2, I(key + 1), I(1), I(key + 2), I(2));
                code_decref(vm, callm(d, "update", 1, u));
                code_decref(vm, u);
                show = false;
            } else if (op < 96) {
                code_decref(vm, callm(d, "clear", 0));
                show = false;
            } else {
                int in = code_contains(vm, d, I(key));
                h = fnv(h, in ? "True" : "False");
                res = callm(d, "get", 1, I(key));
            }
            assert_non_null(res);
            if (show) {
                cv r = code_repr(vm, res);
                h = fnv(h, code_str_cstr(r));
                code_decref(vm, r);
            }
            code_decref(vm, res);
            cv r = code_repr(vm, d);
            h = fnv(h, "|");
            h = fnv(h, code_str_cstr(r));
            h = fnv(h, "\n");
            code_decref(vm, r);
        }
        repr_is(d, k->final);
        assert_true(h == k->hash);
        code_decref(vm, d);
    }
}

/* Bound to a list: its i-th item. */
static cv key_index(code_vm *v, cv *args, size_t nargs, cv kw)
{
    (void)kw, (void)nargs;
    return code_getitem(v, args[0], args[1]);
}

/* test_code_cont_gen.py's sort cases: frozensets ordered by inclusion, a
 * partial order, where only CPython's timsort step for step agrees. */
static void test_sort_partial(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof sort_cases / sizeof sort_cases[0]; c++) {
        const struct sort_case *k = &sort_cases[c];
        uint64_t x = k->seed;
        cv items = L(0), idx = L(0);
        for (unsigned i = 0; i < k->n; i++) {
            int64_t a = (int64_t)(lcg(&x) % 4);
            int64_t b = (int64_t)(lcg(&x) % 7);
            cv r = code_range_new(vm, a, b, 1);
            cv f = code_set_copy(vm, r, true);
            assert_int_equal(code_list_append(vm, items, f), 0);
            assert_int_equal(code_list_append(vm, idx, I(i)), 0);
            code_decref(vm, f);
            code_decref(vm, r);
        }
        cv key = code_cfunc_new(vm, "key", key_index, items);
        cv p = code_list_from(vm, idx);
        assert_int_equal(code_list_sort(vm, p, key, false), 0);
        repr_is_d(p, k->perm);
        p = code_list_from(vm, idx);
        assert_int_equal(code_list_sort(vm, p, key, true), 0);
        repr_is_d(p, k->rperm);
        code_decref(vm, key);
        code_decref(vm, items);
        code_decref(vm, idx);
    }
}

/* ---- range and slice ---------------------------------------------------------------- */

static void test_range(void **state)
{
    (void)state;
    cv r = code_range_new(vm, 0, 10, 3);
    repr_is(r, "range(0, 10, 3)");
    assert_int_equal(code_len(vm, r), 4);
    repr_is_d(code_list_from(vm, r), "[0, 3, 6, 9]");
    repr_is_d(code_getitem(vm, r, I(-1)), "9");
    assert_null(code_getitem(vm, r, I(4)));
    raised("IndexError", "range object index out of range");
    assert_null(code_getitem(vm, r, S("a")));
    raised("TypeError", "range indices must be integers or slices, not str");
    cv s = code_slice_new(vm, I(0), I(100), CODE_NONE);
    repr_is_d(code_getitem(vm, r, s), "range(0, 12, 3)");
    code_decref(vm, s);
    assert_int_equal(code_contains(vm, r, I(6)), 1);
    assert_int_equal(code_contains(vm, r, I(7)), 0);
    repr_is_d(callm(r, "index", 1, I(9)), "3");
    assert_null(callm(r, "index", 1, I(7)));
    raised("ValueError", "7 is not in range");
    repr_is_d(callm(r, "count", 1, I(3)), "1");
    repr_is_d(code_getattr(vm, r, "step"), "3");
    cv it = code_cont_reversed(vm, r);
    repr_is_d(code_list_from(vm, it), "[9, 6, 3, 0]");
    code_decref(vm, it);
    cv r2 = code_range_new(vm, 0, 11, 3);
    assert_int_equal(code_compare_bool(vm, r, r2, CODE_CMP_EQ), 1);
    uint64_t h1, h2;
    assert_int_equal(code_hash(vm, r, &h1), 0);
    assert_int_equal(code_hash(vm, r2, &h2), 0);
    assert_true(h1 == h2);
    code_decref(vm, r2);
    code_decref(vm, r);

    r = code_range_new(vm, 0, 10, 1);
    repr_is(r, "range(0, 10)");
    s = code_slice_new(vm, I(5), I(2), CODE_NONE);
    repr_is_d(code_getitem(vm, r, s), "range(5, 2)");
    code_decref(vm, s);
    s = code_slice_new(vm, CODE_NONE, CODE_NONE, I(-1));
    repr_is_d(code_getitem(vm, r, s), "range(9, -1, -1)");
    code_decref(vm, s);
    code_decref(vm, r);
    repr_is_d(code_range_new(vm, 5, 0, -2), "range(5, 0, -2)");
    cv three[4] = {I(1), I(2), I(0), I(0)};
    assert_null(type_call(&code_type_range, 3, three, CV_NULL));
    raised("ValueError", "range() arg 3 must not be zero");
    assert_null(type_call(&code_type_range, 0, three, CV_NULL));
    raised("TypeError", "range expected at least 1 argument, got 0");
    assert_null(type_call(&code_type_range, 4, three, CV_NULL));
    raised("TypeError", "range expected at most 3 arguments, got 4");
    cv str = S("x");
    assert_null(type_call(&code_type_range, 1, &str, CV_NULL));
    raised("TypeError", "'str' object cannot be interpreted as an integer");
    code_decref(vm, str);
    repr_is_d(type_call(&code_type_range, 1, three, CV_NULL), "range(0, 1)");
    r = code_range_new(vm, 0, 0, 1);
    it = code_iter(vm, r);
    assert_null(code_next(vm, it));
    code_decref(vm, it);
    code_decref(vm, r);
}

/* A decimal int of any size (new reference). */
static cv BIG(const char *digits)
{
    bool neg = digits[0] == '-';
    return code_int_from_digits(vm, digits + neg, strlen(digits + neg), 10, neg);
}

/* Ranges past int64 (code_range_big.c), as CPython: everything but len(). */
static void test_range_big(void **state)
{
    (void)state;
    cv e20 = BIG("100000000000000000000"), e19 = BIG("10000000000000000000");
    cv r = type_call(&code_type_range, 1, &e20, CV_NULL);
    repr_is(r, "range(0, 100000000000000000000)");
    assert_int_equal(code_len(vm, r), -1);
    raised("OverflowError", "Python int too large to convert to C ssize_t");
    assert_int_equal(code_truth(vm, r), 1);
    repr_is_d(code_getitem(vm, r, I(-1)), "99999999999999999999");
    repr_is_d(code_getitem(vm, r, e19), "10000000000000000000");
    assert_null(code_getitem(vm, r, e20));
    raised("IndexError", "range object index out of range");
    assert_int_equal(code_contains(vm, r, e19), 1);
    assert_int_equal(code_contains(vm, r, I(-1)), 0);
    repr_is_d(callm(r, "index", 1, e19), "10000000000000000000");
    repr_is_d(callm(r, "count", 1, I(3)), "1");
    repr_is_d(code_getattr(vm, r, "stop"), "100000000000000000000");
    cv s = code_slice_new(vm, CODE_NONE, CODE_NONE, e19);
    cv sl = code_getitem(vm, r, s);
    repr_is(sl, "range(0, 100000000000000000000, 10000000000000000000)");
    assert_int_equal(code_len(vm, sl), 10);
    repr_is_d(code_getitem(vm, sl, I(-1)), "90000000000000000000");
    code_decref(vm, sl);
    code_decref(vm, s);
    s = code_slice_new(vm, I(-2), CODE_NONE, CODE_NONE);
    cv tail = code_getitem(vm, r, s);
    repr_is(tail, "range(99999999999999999998, 100000000000000000000)");
    repr_is_d(code_list_from(vm, tail), "[99999999999999999998, 99999999999999999999]");
    cv it = code_cont_reversed(vm, tail);
    repr_is_d(code_list_from(vm, it), "[99999999999999999999, 99999999999999999998]");
    code_decref(vm, it);
    /* equal to a plain range where length, start and step agree */
    cv args[3] = {I(5), I(6), e20};
    cv one = type_call(&code_type_range, 3, args, CV_NULL), plain = code_range_new(vm, 5, 6, 1);
    assert_int_equal(code_compare_bool(vm, one, plain, CODE_CMP_EQ), 1);
    uint64_t h1, h2;
    assert_int_equal(code_hash(vm, one, &h1), 0);
    assert_int_equal(code_hash(vm, plain, &h2), 0);
    assert_true(h1 == h2);
    assert_int_equal(code_compare_bool(vm, r, tail, CODE_CMP_NE), 1);
    code_decref(vm, one);
    code_decref(vm, plain);
    code_decref(vm, tail);
    code_decref(vm, s);
    code_decref(vm, r);
    /* int64 bounds whose length is past int64; a slice whose step overflows */
    r = code_range_new(vm, INT64_MIN, INT64_MAX, 1);
    repr_is(r, "range(-9223372036854775808, 9223372036854775807)");
    assert_int_equal(code_len(vm, r), -1);
    raised("OverflowError", "Python int too large to convert to C ssize_t");
    repr_is_d(code_getitem(vm, r, I(-1)), "9223372036854775806");
    code_decref(vm, r);
    r = code_range_new(vm, 0, 10, (int64_t)1 << 62);
    s = code_slice_new(vm, CODE_NONE, CODE_NONE, I(4));
    repr_is_d(code_getitem(vm, r, s), "range(0, 4611686018427387904, 18446744073709551616)");
    code_decref(vm, s);
    code_decref(vm, r);
    code_decref(vm, e19);
    code_decref(vm, e20);
}

static void test_slice(void **state)
{
    (void)state;
    cv s = code_slice_new(vm, CODE_NONE, CODE_NONE, I(-1));
    repr_is(s, "slice(None, None, -1)");
    repr_is_d(callm(s, "indices", 1, I(5)), "(4, -1, -1)");
    assert_null(callm(s, "indices", 1, I(-1)));
    raised("ValueError", "length should not be negative");
    uint64_t h;
    assert_int_equal(code_hash(vm, s, &h), -1);
    raised("TypeError", "unhashable type: 'slice'");
    code_decref(vm, s);
    s = code_slice_new(vm, I(-100), I(100), I(-1));
    repr_is_d(callm(s, "indices", 1, I(5)), "(-1, 4, -1)");
    code_decref(vm, s);
    cv args[2] = {I(1), I(2)};
    s = type_call(&code_type_slice, 1, args, CV_NULL);
    repr_is(s, "slice(None, 1, None)");
    repr_is_d(code_getattr(vm, s, "stop"), "1");
    cv s2 = type_call(&code_type_slice, 2, args, CV_NULL);
    assert_int_equal(code_compare_bool(vm, s, s2, CODE_CMP_EQ), 0);
    code_decref(vm, s2);
    code_decref(vm, s);
}

/* Deep nesting: repr, == and hash raise RecursionError, and freeing does
 * not recurse on the C stack. */
static void test_deep(void **state)
{
    (void)state;
    cv l = L(0), t = T(1, I(0)), d = code_dict_new(vm);
    for (int i = 0; i < 300000; i++) {
        l = L(1, l);
        t = T(1, t);
        cv d2 = code_dict_new(vm);
        assert_int_equal(code_dict_set(vm, d2, I(i), d), 0);
        code_decref(vm, d);
        d = d2;
        if (i % 3 == 0) {
            /* Mixed kinds too: a set holding a tuple chain. */
            cv s = code_set_new(vm, true);
            assert_int_equal(code_set_add(vm, s, t), 0);
            code_decref(vm, t);
            t = T(1, s);
        }
    }
    assert_null(code_repr(vm, l));
    raised("RecursionError", "maximum recursion depth exceeded while getting the repr of an object");
    assert_int_equal(code_compare_bool(vm, l, l, CODE_CMP_EQ), 1);   /* identity */
    cv l2 = L(1, L(0));
    for (int i = 0; i < 5000; i++)
        l2 = L(1, l2);
    cv l3 = L(1, L(0));
    for (int i = 0; i < 5000; i++)
        l3 = L(1, l3);
    assert_int_equal(code_compare_bool(vm, l2, l3, CODE_CMP_EQ), -1);
    raised("RecursionError", "maximum recursion depth exceeded in comparison");
    /* The frozensets in t hold their items' hashes: no recursion there. */
    uint64_t h;
    assert_int_equal(code_hash(vm, t, &h), 0);
    cv tt = T(1, I(1));
    for (int i = 0; i < 5000; i++)
        tt = T(1, tt);
    assert_int_equal(code_hash(vm, tt, &h), -1);
    raised("RecursionError", "maximum recursion depth exceeded while hashing");
    code_decref(vm, tt);
    /* A depth CPython handles is fine. */
    cv ok = L(0);
    for (int i = 0; i < 900; i++)
        ok = L(1, ok);
    cv r = code_repr(vm, ok);
    assert_non_null(r);
    assert_int_equal(code_str_len(r), 902 * 2 - 2);
    code_decref(vm, r);
    code_decref(vm, ok);
    code_decref(vm, l2);
    code_decref(vm, l3);
    code_decref(vm, l);
    code_decref(vm, t);
    code_decref(vm, d);
    assert_int_equal(vm->ntrash, 0);
    assert_int_equal(vm->trash_depth, 0);
}

/* Every allocation refused in turn: MemoryError, never a crash or leak. */
static void test_nomem(void **state)
{
    (void)state;
    code_vm_destroy(vm);
    for (size_t lim = 1; lim < 400; lim++) {
        code_limits limits = {.max_allocs = lim};
        if (code_vm_init(vm, &limits, NULL, NULL))
            continue;
        int64_t v[] = {5, 1, 4, 2, 3, 8, 7, 6, 9, 10, 12, 11};
        cv l = ints_list(0, v);
        for (size_t i = 0; l && i < 12; i++)
            if (code_list_append(vm, l, I(v[i])))
                break;
        code_exc_clear(vm);
        cv d = code_dict_new(vm), s = code_set_new(vm, false);
        for (int64_t i = 0; d && s && i < 40; i++) {
            if (code_dict_set(vm, d, I(i), I(i)) || code_set_add(vm, s, I(i)))
                break;
        }
        code_exc_clear(vm);
        if (l && code_list_sort(vm, l, CV_NULL, true))
            code_exc_clear(vm);
        if (l) {
            cv r = code_repr(vm, l);
            code_decref(vm, r);
            code_exc_clear(vm);
        }
        code_decref(vm, l);
        code_decref(vm, d);
        code_decref(vm, s);
        code_vm_destroy(vm);
    }
    code_vm_init(vm, NULL, NULL, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_list_basics, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_compare, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_slices, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_methods, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sort, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tuple, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dict_basics, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dict_big, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dict_methods, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dict_iter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_consts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_algebra, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_hash_iter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_random, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_random, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sort_partial, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dict_random, setup, teardown),
        cmocka_unit_test_setup_teardown(test_range, setup, teardown),
        cmocka_unit_test_setup_teardown(test_range_big, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slice, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deep, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nomem, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
