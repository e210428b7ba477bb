/* Code mode's str and bytes: every method, format(), str.format and
 * printf-style %, checked against CPython 3.11 expression by expression
 * (test_code_str_cases.h, generated from code_str_cases.txt by running each
 * expression in CPython: the same repr, or the same exception type and
 * message), plus the C interface (construction, UTF-8 validity, hashing,
 * the Unicode tables) and memory-limit failures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code/code_strutil.h"
#include "code/code_vm.h"

static code_vm *V;
static int failures;

static int setup(void **state)
{
    (void)state;
    V = calloc(1, sizeof(*V));
    assert_int_equal(code_vm_init(V, NULL, NULL, NULL), 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    code_vm_destroy(V);
    free(V);
    V = NULL;
    return 0;
}

/* ---- building values: every helper steals its arguments and propagates
 * a failure (CV_NULL) with the exception left in V->exc ---- */

#define S(lit) code_str_new(V, lit, sizeof(lit) - 1)
#define BY(lit) code_bytes_new(V, lit, sizeof(lit) - 1)
#define NONE CODE_NONE
#define TRUE CODE_TRUE
#define FALSE CODE_FALSE
#define TYPE(t) cv_of(t)

__attribute__((unused)) static cv I(long long i) { return code_int_from_i64(V, i); }
__attribute__((unused)) static cv FL(double d) { return code_float_new(V, d); }

static void drop(cv *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        code_decref(V, v[i]);
}

static bool any_null(cv *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!v[i])
            return true;
    return false;
}

static cv seq(bool tuple, size_t n, va_list ap)
{
    cv items[16];
    for (size_t i = 0; i < n; i++)
        items[i] = va_arg(ap, cv);
    cv r = CV_NULL;
    if (!any_null(items, n)) {
        if (tuple) {
            r = code_tuple_new(V, n);
            for (size_t i = 0; r && i < n; i++)
                ((code_tuple *)cv_obj(r))->v[i] = code_incref(items[i]);
        } else {
            r = code_list_new(V, 0);
            for (size_t i = 0; r && i < n; i++)
                code_list_append(V, r, items[i]);
        }
    }
    drop(items, n);
    return r;
}

__attribute__((unused)) static cv TUP(size_t n, ...)
{
    va_list ap;
    va_start(ap, n);
    cv r = seq(true, n, ap);
    va_end(ap);
    return r;
}

__attribute__((unused)) static cv LST(size_t n, ...)
{
    va_list ap;
    va_start(ap, n);
    cv r = seq(false, n, ap);
    va_end(ap);
    return r;
}

__attribute__((unused)) static cv DCT(size_t n, ...)
{
    va_list ap;
    va_start(ap, n);
    cv d = code_dict_new(V);
    for (size_t i = 0; i < n; i++) {
        cv k = va_arg(ap, cv), v = va_arg(ap, cv);
        if (d && k && v)
            code_dict_set(V, d, k, v);
        code_decref(V, k);
        code_decref(V, v);
    }
    va_end(ap);
    return d;
}

/* self.name(pos..., kw=...): npos values, nkw values, then nkw names. */
static cv M(cv self, const char *name, size_t npos, size_t nkw, ...)
{
    va_list ap;
    va_start(ap, nkw);
    cv args[16], kwnames = CV_NULL;
    for (size_t i = 0; i < npos + nkw; i++)
        args[i] = va_arg(ap, cv);
    const char *names[8];
    for (size_t i = 0; i < nkw; i++)
        names[i] = va_arg(ap, const char *);
    va_end(ap);
    cv r = CV_NULL;
    if (self && !any_null(args, npos + nkw)) {
        if (nkw) {
            kwnames = code_tuple_new(V, nkw);
            for (size_t i = 0; i < nkw; i++)
                ((code_tuple *)cv_obj(kwnames))->v[i] = code_str_from_cstr(V, names[i]);
        }
        r = code_call_method(V, self, name, args, npos, kwnames);
    }
    code_decref(V, kwnames);
    drop(args, npos + nkw);
    code_decref(V, self);
    return r;
}

/* t(pos..., kw=...) */
__attribute__((unused)) static cv NEW(const code_type *t, size_t npos, size_t nkw, ...)
{
    va_list ap;
    va_start(ap, nkw);
    cv args[16], kwnames = CV_NULL;
    for (size_t i = 0; i < npos + nkw; i++)
        args[i] = va_arg(ap, cv);
    const char *names[8];
    for (size_t i = 0; i < nkw; i++)
        names[i] = va_arg(ap, const char *);
    va_end(ap);
    cv r = CV_NULL;
    if (!any_null(args, npos + nkw)) {
        if (nkw) {
            kwnames = code_tuple_new(V, nkw);
            for (size_t i = 0; i < nkw; i++)
                ((code_tuple *)cv_obj(kwnames))->v[i] = code_str_from_cstr(V, names[i]);
        }
        r = t->new(V, t, args, npos, kwnames);
    }
    code_decref(V, kwnames);
    drop(args, npos + nkw);
    return r;
}

static cv two(cv a, cv b, cv (*f)(cv, cv))
{
    cv r = a && b ? f(a, b) : CV_NULL;
    code_decref(V, a);
    code_decref(V, b);
    return r;
}

static cv fmt2(cv a, cv b) { return code_format(V, a, b); }
static cv gi2(cv a, cv b) { return code_getitem(V, a, b); }
__attribute__((unused)) static cv FMT(cv v, cv spec) { return two(v, spec, fmt2); }
__attribute__((unused)) static cv GI(cv a, cv k) { return two(a, k, gi2); }

static int g_op;
static cv bin2(cv a, cv b) { return code_binop(V, g_op, a, b); }
static cv cmp2(cv a, cv b) { return code_compare(V, a, b, g_op); }
__attribute__((unused)) static cv BIN(int op, cv a, cv b)
{
    g_op = op;
    return two(a, b, bin2);
}
__attribute__((unused)) static cv CMP(int op, cv a, cv b)
{
    g_op = op;
    return two(a, b, cmp2);
}

static cv cont2(cv x, cv c)
{
    int r = code_contains(V, c, x);
    return r < 0 ? CV_NULL : code_bool(r);
}
__attribute__((unused)) static cv CONT(cv x, cv c) { return two(x, c, cont2); }

__attribute__((unused)) static cv SL(cv lo, cv hi, cv st)
{
    cv r = lo && hi && st ? code_slice_new(V, lo, hi, st) : CV_NULL;
    code_decref(V, lo);
    code_decref(V, hi);
    code_decref(V, st);
    return r;
}

static cv one(cv a, cv (*f)(code_vm *, cv))
{
    cv r = a ? f(V, a) : CV_NULL;
    code_decref(V, a);
    return r;
}

static cv len1(code_vm *vm, cv a)
{
    ssize_t n = code_len(vm, a);
    return n < 0 ? CV_NULL : code_int_from_i64(vm, n);
}
__attribute__((unused)) static cv REPR(cv a) { return one(a, code_repr); }
__attribute__((unused)) static cv ASCII(cv a) { return one(a, code_ascii_of); }
__attribute__((unused)) static cv LEN(cv a) { return one(a, len1); }
__attribute__((unused)) static cv LIST(cv a) { return one(a, code_list_from); }

/* ---- checking ---- */

static void check(cv r, const char *want, const char *src)
{
    char got[4096];
    if (!r && !V->exc) {
        print_error("%s\n  a failure with no exception set\n", src);
        failures++;
        return;
    }
    if (!r) {
        cv e = code_exc_fetch(V);
        cv m = code_exc_str(V, e);
        snprintf(got, sizeof(got), "!%s: %s", cv_type(e)->name, m ? code_str_cstr(m) : "?");
        code_decref(V, m);
        code_decref(V, e);
    } else {
        if (V->exc) {
            print_error("%s\n  a value returned with an exception set\n", src);
            failures++;
            code_exc_clear(V);
        }
        cv s = code_repr(V, r);
        snprintf(got, sizeof(got), "=%s", s ? code_str_cstr(s) : "?");
        code_decref(V, s);
        code_decref(V, r);
    }
    if (strcmp(got, want) != 0) {
        print_error("%s\n  got:  %s\n  want: %s\n", src, got, want);
        failures++;
    }
}

#define CASE(expr, want, src) check(expr, want, src);

static void test_cases(void **state)
{
    (void)state;
    failures = 0;
#include "test_code_str_cases.h"
    if (failures)
        print_error("%d cases differ from CPython\n", failures);
    assert_int_equal(failures, 0);
}

/* ---- the C interface ---- */

static void test_utf8_valid(void **state)
{
    (void)state;
    assert_true(code_utf8_valid("", 0));
    assert_true(code_utf8_valid("abc", 3));
    assert_true(code_utf8_valid("\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80", 9));
    assert_true(code_utf8_valid("\xf4\x8f\xbf\xbf", 4));         /* U+10FFFF */
    assert_false(code_utf8_valid("\xf4\x90\x80\x80", 4));        /* past U+10FFFF */
    assert_false(code_utf8_valid("\xed\xa0\x80", 3));            /* a surrogate */
    assert_false(code_utf8_valid("\xc0\x80", 2));                /* overlong NUL */
    assert_false(code_utf8_valid("\xe0\x80\x80", 3));            /* overlong */
    assert_false(code_utf8_valid("\xc3", 1));                    /* truncated */
    assert_false(code_utf8_valid("\x80", 1));
    assert_false(code_utf8_valid("\xff", 1));
    assert_true(code_utf8_valid("a\0b", 3));
}

static void test_construct(void **state)
{
    (void)state;
    cv s = code_str_new(V, "h\xc3\xa9llo", 6);
    code_str *p = code_str_p(s);
    assert_int_equal(p->len, 6);
    assert_int_equal(p->nchars, 5);
    assert_false(p->ascii);
    assert_true(code_str_eq_cstr(s, "h\xc3\xa9llo"));
    assert_false(code_str_eq_cstr(s, "hello"));
    assert_false(code_str_eq_cstr(CODE_NONE, "None"));
    code_decref(V, s);
    s = code_str_fmt(V, "%d-%s", 42, "x");
    assert_true(code_str_eq_cstr(s, "42-x"));
    assert_true(code_str_p(s)->ascii);
    code_decref(V, s);
    /* Longer than code_str_fmt's first buffer. */
    char big[600];
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = 0;
    s = code_str_fmt(V, "%s!", big);
    assert_int_equal(code_str_len(s), 600);
    code_decref(V, s);
    s = code_str_intern(V, "name", 4);
    assert_true(code_str_eq_cstr(s, "name"));
    code_decref(V, s);
    s = code_str_new(V, "a\0b", 3);
    assert_int_equal(code_str_p(s)->nchars, 3);
    cv r = code_repr(V, s);
    assert_string_equal(code_str_cstr(r), "'a\\x00b'");
    code_decref(V, r);
    code_decref(V, s);
}

static void test_hash(void **state)
{
    (void)state;
    cv a = S("h\xc3\xa9llo"), b = S("h\xc3\xa9llo"), c = S("hello");
    uint64_t ha, hb, hc, ha2;
    assert_int_equal(code_hash(V, a, &ha), 0);
    assert_int_equal(code_hash(V, b, &hb), 0);
    assert_int_equal(code_hash(V, c, &hc), 0);
    assert_int_equal(code_hash(V, a, &ha2), 0);
    assert_true(ha == hb && ha == ha2);
    assert_true(ha != hc);
    /* Fixed key: the same in every run and process. */
    assert_true(code_siphash13("", 0) == code_siphash13("", 0));
    cv x = BY("hello"), y = BY("hello");
    uint64_t hx, hy;
    assert_int_equal(code_hash(V, x, &hx), 0);
    assert_int_equal(code_hash(V, y, &hy), 0);
    assert_true(hx == hy);
    code_decref(V, a);
    code_decref(V, b);
    code_decref(V, c);
    code_decref(V, x);
    code_decref(V, y);
}

static void test_unicode_tables(void **state)
{
    (void)state;
    char out[16];
    assert_int_equal(code_ucase(0xDF, CODE_UC_UPPER, out), 2);   /* ß -> SS */
    assert_memory_equal(out, "SS", 2);
    assert_int_equal(code_ucase('a', CODE_UC_UPPER, out), 1);
    assert_int_equal(out[0], 'A');
    assert_int_equal(code_ucase(0x3A3, CODE_UC_LOWER, out), 2);  /* Σ -> σ */
    assert_memory_equal(out, "\xcf\x83", 2);
    assert_true(code_uprop(0x4E00, CODE_UP_ALPHA));
    assert_false(code_uprop(0xA0, CODE_UP_PRINTABLE));
    assert_true(code_uprop(0x3000, CODE_UP_SPACE));
    assert_int_equal(code_udecimal(0x663), 3);
    assert_int_equal(code_udecimal('7'), 7);
    assert_int_equal(code_udecimal('a'), -1);
}

static void test_format_api(void **state)
{
    (void)state;
    cv v = I(255), spec = S("#x");
    cv r = code_format(V, v, spec);
    assert_string_equal(code_str_cstr(r), "0xff");
    code_decref(V, r);
    code_decref(V, spec);
    r = code_ascii_of(V, v);
    assert_string_equal(code_str_cstr(r), "255");
    code_decref(V, r);
    cv f = S("{}-{x}"), x = S("\xc3\xa9");
    cv args[3] = {f, v, x};
    cv kw = code_tuple_new(V, 1);
    ((code_tuple *)cv_obj(kw))->v[0] = code_str_from_cstr(V, "x");
    r = code_str_method_format(V, args, 2, kw);
    assert_string_equal(code_str_cstr(r), "255-\xc3\xa9");
    code_decref(V, r);
    code_decref(V, kw);
    code_decref(V, f);
    code_decref(V, x);
}

/* Ints beyond 64 bits: hex, octal and binary come from the limbs. */
static void test_bigint_digits(void **state)
{
    (void)state;
    /* -(2**70 + 0xabc) */
    code_bigint *b = code_obj_new(V, &code_type_int, sizeof(code_bigint) + 3 * sizeof(uint32_t));
    b->sign = -1;
    b->n = 3;
    b->limb[0] = 0xabc;
    b->limb[1] = 0;
    b->limb[2] = 0x40;
    cv v = cv_of(b);
    static const struct { const char *spec, *want; } cases[] = {
        {"x", "-400000000000000abc"},
        {"#X", "-0X400000000000000ABC"},
        {"_x", "-40_0000_0000_0000_0abc"},
        {"o", "-200000000000000000005274"},
        {"b", "-10000000000000000000000000000000000000000000000000000000000101010111100"},
        {"#026x", "-0x00000400000000000000abc"},
        {">25x", "      -400000000000000abc"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cv spec = code_str_from_cstr(V, cases[i].spec);
        cv r = code_format(V, v, spec);
        assert_non_null((void *)r);
        assert_string_equal(code_str_cstr(r), cases[i].want);
        code_decref(V, r);
        code_decref(V, spec);
    }
    cv fmt = S("%x|%#o");
    cv r = code_binop(V, CODE_OP_MOD, fmt, TUP(2, code_incref(v), code_incref(v)));
    assert_string_equal(code_str_cstr(r), "-400000000000000abc|-0o200000000000000000005274");
    code_decref(V, r);
    code_decref(V, fmt);
    code_decref(V, v);
}

/* s += t: appended in place only when the caller holds the only
 * reference, and never visibly to another holder. */
static void test_inplace_append(void **state)
{
    (void)state;
    cv s = S("");
    cv piece = S("0123456789\xc3\xa9");
    for (int i = 0; i < 5000; i++) {
        cv r = code_binop_inplace(V, CODE_OP_ADD, s, piece);
        assert_non_null((void *)r);
        code_decref(V, s);
        s = r;
    }
    assert_int_equal(code_str_len(s), 5000 * 12);
    assert_int_equal(code_str_p(s)->nchars, 5000 * 11);
    assert_false(code_str_p(s)->ascii);
    uint64_t h1, h2;
    assert_int_equal(code_hash(V, s, &h1), 0);
    /* A second holder: the result is a new string, the old one unchanged. */
    cv keep = code_incref(s);
    cv r = code_binop_inplace(V, CODE_OP_ADD, s, piece);
    assert_true(r != s);
    assert_int_equal(code_str_len(keep), 5000 * 12);
    assert_int_equal(code_str_len(r), 5001 * 12);
    assert_int_equal(code_hash(V, keep, &h2), 0);
    assert_true(h1 == h2);
    code_decref(V, r);
    code_decref(V, keep);
    /* With the only reference again, the hash cached before is dropped. */
    r = code_binop_inplace(V, CODE_OP_ADD, s, piece);
    code_decref(V, s);
    s = r;
    assert_int_equal(code_hash(V, s, &h2), 0);
    assert_true(h1 != h2);
    cv want = code_str_new(V, code_str_cstr(s), code_str_len(s));
    uint64_t h3;
    assert_int_equal(code_hash(V, want, &h3), 0);
    assert_true(h2 == h3);
    code_decref(V, want);
    /* CPython's messages for +=, not the generic one. */
    r = code_binop_inplace(V, CODE_OP_ADD, s, cv_from_small(1));
    assert_true(r == CV_NULL);
    cv e = code_exc_fetch(V), m = code_exc_str(V, e);
    assert_string_equal(code_str_cstr(m), "can only concatenate str (not \"int\") to str");
    code_decref(V, m);
    code_decref(V, e);
    code_decref(V, s);
    code_decref(V, piece);
    /* bytes too. */
    cv b = BY("a");
    r = code_binop_inplace(V, CODE_OP_ADD, b, cv_from_small(1));
    assert_true(r == CV_NULL);
    e = code_exc_fetch(V);
    m = code_exc_str(V, e);
    assert_string_equal(code_str_cstr(m), "can't concat int to bytes");
    code_decref(V, m);
    code_decref(V, e);
    r = code_binop_inplace(V, CODE_OP_SUB, b, b);
    assert_true(r == CV_NULL);
    e = code_exc_fetch(V);
    m = code_exc_str(V, e);
    assert_string_equal(code_str_cstr(m), "unsupported operand type(s) for -=: 'bytes' and 'bytes'");
    code_decref(V, m);
    code_decref(V, e);
    code_decref(V, b);
}

/* Iterating a str by code points, and its iterator's end. */
static void test_iter(void **state)
{
    (void)state;
    cv s = S("a\xc3\xa9\xe6\x97\xa5");
    cv it = code_iter(V, s);
    const char *want[] = {"a", "\xc3\xa9", "\xe6\x97\xa5"};
    for (int i = 0; i < 3; i++) {
        cv c = code_next(V, it);
        assert_non_null((void *)c);
        assert_string_equal(code_str_cstr(c), want[i]);
        assert_int_equal(code_str_p(c)->nchars, 1);
        code_decref(V, c);
    }
    assert_true(code_next(V, it) == CV_NULL);
    assert_true(V->exc == CV_NULL);
    assert_true(code_next(V, it) == CV_NULL);
    code_decref(V, it);
    code_decref(V, s);
}

/* Past the run's memory limit a big result is a MemoryError, never a
 * crash; the run goes on after it. */
static void test_memory_limit(void **state)
{
    (void)state;
    code_vm_destroy(V);
    code_limits lim = {.max_bytes = 1 << 20};
    assert_int_equal(code_vm_init(V, &lim, NULL, NULL), 0);
    cv r = BIN(CODE_OP_MUL, S("ab"), I(1 << 20));
    assert_true(r == CV_NULL);
    assert_true(code_exc_matches(V, &code_exc_MemoryError));
    code_exc_clear(V);
    r = M(S("a"), "center", 1, 0, I(2 << 20));
    assert_true(r == CV_NULL);
    assert_true(code_exc_matches(V, &code_exc_MemoryError));
    code_exc_clear(V);
    r = FMT(I(1), S("3000000"));
    assert_true(r == CV_NULL);
    assert_true(code_exc_matches(V, &code_exc_MemoryError));
    code_exc_clear(V);
    r = M(S(","), "join", 1, 0, LST(2, S("a"), S("b")));
    assert_string_equal(code_str_cstr(r), "a,b");
    code_decref(V, r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_utf8_valid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_construct, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hash, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unicode_tables, setup, teardown),
        cmocka_unit_test_setup_teardown(test_format_api, setup, teardown),
        cmocka_unit_test_setup_teardown(test_iter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inplace_append, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bigint_digits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory_limit, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
