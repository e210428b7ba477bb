/* Code mode's cycle collector (code_gc.c): cycles through lists, dicts,
 * sets, tuples, cells, exceptions' __context__ and bound methods are freed;
 * what is reachable from outside is left as it was; a deep structure is
 * collected without recursing on the C stack; and through whole runs, loops
 * that make garbage cycles finish under a memory limit that only a
 * collector lets them meet. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "code/code_gc.h"
#include "code/code_run.h"

static code_vm vm_;
static code_vm *vm = &vm_;
static size_t base_tracked;

static int setup(void **state)
{
    (void)state;
    if (code_vm_init(vm, NULL, NULL, NULL))
        return -1;
    base_tracked = vm->gc->tracked;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    assert_null(vm->exc);
    /* everything a test made is gone, cycles included */
    assert_int_equal(code_gc_collect(vm), 0);
    assert_int_equal(vm->gc->tracked, base_tracked);
    code_vm_destroy(vm);
    return 0;
}

static void append(cv l, cv v)
{
    assert_int_equal(code_list_append(vm, l, v), 0);
}

static cv list0(void)
{
    cv l = code_list_new(vm, 0);
    assert_true(l);
    return l;
}

static void test_list_dict_cycle(void **state)
{
    (void)state;
    cv a = list0(), b = code_dict_new(vm);
    cv k = code_str_from_cstr(vm, "peer");
    append(a, b);
    assert_int_equal(code_dict_set(vm, b, k, a), 0);
    code_decref(vm, k);
    code_decref(vm, a);
    code_decref(vm, b);
    assert_int_equal(vm->gc->tracked, base_tracked + 2);
    assert_int_equal(code_gc_collect(vm), 2);
    assert_int_equal(vm->gc->tracked, base_tracked);
}

static void test_self_reference(void **state)
{
    (void)state;
    cv l = list0();
    append(l, l);
    cv d = code_dict_new(vm);
    assert_int_equal(code_dict_set(vm, d, cv_from_small(1), d), 0);
    code_decref(vm, l);
    code_decref(vm, d);
    assert_int_equal(code_gc_collect(vm), 2);
}

/* A cycle held from outside stays whole; dropped, it goes. */
static void test_reachable_untouched(void **state)
{
    (void)state;
    cv a = list0(), b = list0(), x = list0();
    append(a, b);
    append(b, a);
    append(b, x);
    append(x, cv_from_small(42));
    code_decref(vm, b);
    code_decref(vm, x);
    assert_int_equal(code_gc_collect(vm), 0);
    code_list *la = (code_list *)cv_obj(a);
    assert_int_equal(la->n, 1);
    code_list *lb = (code_list *)cv_obj(la->v[0]);
    assert_int_equal(lb->n, 2);
    assert_true(lb->v[0] == a);
    code_list *lx = (code_list *)cv_obj(lb->v[1]);
    assert_int_equal(lx->n, 1);
    assert_true(lx->v[0] == cv_from_small(42));
    assert_int_equal(cv_obj(a)->rc, 2);
    code_decref(vm, a);
    assert_int_equal(code_gc_collect(vm), 3);
}

/* Garbage that references a live object drops its reference only. */
static void test_garbage_refs_live(void **state)
{
    (void)state;
    cv root = list0(), x = code_dict_new(vm), g1 = list0(), g2 = list0();
    append(root, x);
    append(g1, g2);
    append(g2, g1);
    append(g1, x);
    append(g2, x);
    code_decref(vm, x);
    code_decref(vm, g1);
    code_decref(vm, g2);
    assert_int_equal(cv_obj(x)->rc, 3);
    assert_int_equal(code_gc_collect(vm), 2);
    assert_int_equal(cv_obj(x)->rc, 1);
    assert_int_equal(((code_dict *)cv_obj(x))->used, 0);
    code_decref(vm, root);
    assert_int_equal(code_gc_collect(vm), 0);
}

static void test_tuple_and_cell(void **state)
{
    (void)state;
    cv l = list0();
    cv t = code_tuple_pack(vm, 2, l, cv_from_small(1));
    append(l, t);
    code_decref(vm, t);
    code_cell *c = code_obj_new(vm, &code_type_cell, sizeof(code_cell));
    assert_non_null(c);
    c->v = code_incref(l);
    append(l, cv_of(c));
    code_decref(vm, cv_of(c));
    code_decref(vm, l);
    assert_int_equal(code_gc_collect(vm), 3);
}

/* e1.__context__ is e2, e2's argument is a list holding e1. */
static void test_exception_context(void **state)
{
    (void)state;
    cv box = list0();
    cv args = code_tuple_pack(vm, 1, box);
    cv e2 = code_exc_new(vm, &code_exc_KeyError, args);
    cv e1 = code_exc_new(vm, &code_exc_ValueError, CODE_EMPTY_TUPLE);
    assert_true(e1 && e2);
    ((code_exc *)cv_obj(e1))->context = e2;   /* steals e2 */
    append(box, e1);
    code_decref(vm, e1);
    code_decref(vm, box);
    assert_int_equal(code_gc_collect(vm), 4);
}

static cv set_add_fn(code_vm *v, cv *args, size_t nargs, cv kwnames)
{
    (void)v;
    (void)args;
    (void)nargs;
    (void)kwnames;
    return CODE_NONE;
}

/* s holds s.add (a bound method whose self is s); a dict iterator held by
 * its dict. */
static void test_set_method_iterator(void **state)
{
    (void)state;
    cv s = code_set_new(vm, false);
    cv m = code_cfunc_new(vm, "add", set_add_fn, s);
    assert_true(s && m);
    assert_int_equal(code_set_add(vm, s, m), 0);
    code_decref(vm, m);
    code_decref(vm, s);
    cv d = code_dict_new(vm);
    cv it = code_iter(vm, d);
    assert_true(it);
    assert_int_equal(code_dict_set(vm, d, cv_from_small(0), it), 0);
    code_decref(vm, it);
    code_decref(vm, d);
    assert_int_equal(code_gc_collect(vm), 4);
}

/* A chain of nested lists far deeper than the C stack could recurse:
 * reachable, then one big cycle. */
#define DEEP 300000
static void test_deep(void **state)
{
    (void)state;
    cv first = list0(), cur = code_incref(first);
    for (int i = 1; i < DEEP; i++) {
        cv n = list0();
        append(cur, n);
        code_decref(vm, cur);
        cur = n;
    }
    assert_int_equal(code_gc_collect(vm), 0);
    size_t depth = 0;
    for (cv v = first; ((code_list *)cv_obj(v))->n; v = ((code_list *)cv_obj(v))->v[0])
        depth++;
    assert_int_equal(depth, DEEP - 1);
    append(cur, first);
    code_decref(vm, cur);
    code_decref(vm, first);
    assert_int_equal(code_gc_collect(vm), DEEP);
}

/* ---- whole runs ------------------------------------------------------------- */

static void run_ok(const char *src, size_t max_bytes, const char *want)
{
    code_run_opts o = {.limits = {.max_bytes = max_bytes}};
    code_run *r;
    code_error err = {0};
    assert_int_equal(code_run_new(src, strlen(src), &o, &r, &err), 0);
    code_step st;
    code_run_start(r, &st);
    if (st.kind != CODE_STEP_COMPLETE)
        fail_msg("%s: %s (line %d)\n%s", st.error.type, st.error.msg, st.error.line, src);
    assert_string_equal(st.result_json, want);
    code_step_clear(&st);
    code_run_free(r);
}

static void test_runs(void **state)
{
    (void)state;
    /* closures that hold themselves, each with a 4 KB list */
    run_ok("def outer(i):\n"
           "    x = [i] * 500\n"
           "    def g():\n"
           "        return g, x\n"
           "    return g\n"
           "n = 0\n"
           "for i in range(20000):\n"
           "    n += len(outer(i)()[1])\n"
           "n\n",
           20000000, "10000000");
    /* exceptions whose __context__ is in a cycle */
    run_ok("n = 0\n"
           "for i in range(20000):\n"
           "    box = []\n"
           "    try:\n"
           "        try:\n"
           "            raise ValueError('a' * 2000)\n"
           "        except ValueError:\n"
           "            raise KeyError(box)\n"
           "    except KeyError as k:\n"
           "        box.append(k)\n"
           "        n += k.__context__ is not None\n"
           "n\n",
           20000000, "20000");
    /* the builtin iterators: a list holding a map over itself, a zip, a
     * reversed, an enumerate, a filter and a generator not started (a
     * started one's frames are not traversed: what they hold stays) */
    run_ok("n = 0\n"
           "for i in range(20000):\n"
           "    l = [i] * 100\n"
           "    l.append(map(str, l))\n"
           "    l.append(zip(l, l))\n"
           "    l.append(reversed(l))\n"
           "    l.append(enumerate(l))\n"
           "    l.append(filter(None, l))\n"
           "    g = (x for x in l)\n"
           "    l.append(g)\n"
           "    n += len(l)\n"
           "n\n",
           12000000, "2120000");
    /* few, big cycles: the heap's growth asks for the collections */
    run_ok("for i in range(200):\n"
           "    a = [0] * 100000\n"
           "    a.append(a)\n"
           "len(a)\n",
           20000000, "100001");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_list_dict_cycle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_self_reference, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reachable_untouched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_garbage_refs_live, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tuple_and_cell, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exception_context, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_method_iterator, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deep, setup, teardown),
        cmocka_unit_test(test_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
