/* Code mode's tagged JSON (code_json.c, code_json_enc.c): every tag both
 * ways, what is refused and where (byte offsets), nesting past the guard,
 * huge numbers, NUL and surrogates, UTF-8, memory limits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code/code_json.h"
#include "code/code_json_int.h"
#include "code/code_vm.h"

static code_vm vm;

static int setup(void **state)
{
    (void)state;
    code_limits l = {0};
    return code_vm_init(&vm, &l, NULL, NULL);
}

static int teardown(void **state)
{
    (void)state;
    code_vm_destroy(&vm);
    return 0;
}

static char *enc(cv v)
{
    size_t n;
    char *s = code_json_encode(&vm, v, &n);
    if (!s)
        fail_msg("encode failed");
    assert_int_equal(strlen(s), n);
    return s;
}

static cv dec(const char *s)
{
    cv v = code_json_decode(&vm, s, strlen(s));
    if (!v)
        fail_msg("decode of %s failed", s);
    return v;
}

/* decode(in), then encode: want (NULL: the same text). */
#define RT(in, want) rt_at(in, sizeof(in) - 1, want, __LINE__)
static void rt_at(const char *in, size_t n, const char *want, int line)
{
    cv v = code_json_decode(&vm, in, n);
    if (!v) {
        cv s = code_exc_str(&vm, vm.exc);
        fail_msg("line %d: %s: %s", line, in, s ? code_str_cstr(s) : "?");
    }
    char *out = enc(v);
    if (strcmp(out, want ? want : in) != 0)
        fail_msg("line %d: %s\n  got  %s\n  want %s", line, in, out, want ? want : in);
    free(out);
    code_decref(&vm, v);
}

/* decode(in) fails with exc type t and a message containing msg. */
#define BAD(in, t, msg) bad_at(in, sizeof(in) - 1, t, msg, __LINE__)
static void bad_at(const char *in, size_t n, const code_type *t, const char *msg, int line)
{
    cv v = code_json_decode(&vm, in, n);
    if (v) {
        char *out = enc(v);
        fail_msg("line %d: accepted as %s", line, out);
    }
    assert_non_null(vm.exc);
    cv e = code_exc_fetch(&vm);
    cv s = code_exc_str(&vm, e);
    if (cv_type(e) != t || (msg && !strstr(code_str_cstr(s), msg)))
        fail_msg("line %d: %s: %s, wanted %s '%s'", line, code_type_name(e), code_str_cstr(s),
                 t->name, msg ? msg : "");
    code_decref(&vm, s);
    code_decref(&vm, e);
}

static void test_plain(void **state)
{
    (void)state;
    RT("null", NULL);
    RT("true", NULL);
    RT("false", NULL);
    RT("0", NULL);
    RT("-0", "0");
    RT("-17", NULL);
    RT("9007199254740992", NULL);
    RT("-9007199254740992", NULL);
    RT("9007199254740993", "{\"$int\":\"9007199254740993\"}");
    RT("123456789012345678901234567890", "{\"$int\":\"123456789012345678901234567890\"}");
    RT("1.5", NULL);
    RT("-0.0", NULL);
    RT("1e16", "1e+16");
    RT("1E-7", "1e-07");
    RT("0.1", NULL);
    RT("2.5e-300", NULL);
    RT("1e400", "{\"$float\":\"inf\"}");
    RT("-1e400", "{\"$float\":\"-inf\"}");
    RT("\"\"", NULL);
    RT("\"h\\u00e9\\n\\t\\\"\\\\\\/\"", "\"h\xc3\xa9\\n\\t\\\"\\\\/\"");
    RT("\"\\ud83d\\ude00\"", "\"\xf0\x9f\x98\x80\"");
    RT("\"\xe2\x82\xac \xf0\x9f\x98\x80\"", NULL);
    RT("\"a\\u0000b\"", NULL);               /* an escaped NUL is a character */
    RT("\"\\u001f\\u007f\"", "\"\\u001f\x7f\"");
    RT(" [ 1 , [ ] , { } , [ [ null ] ] ] ", "[1,[],{},[[null]]]");
    RT("{\"a\": 1, \"b\": [true, {\"c\": \"d\"}]}", "{\"a\":1,\"b\":[true,{\"c\":\"d\"}]}");
    RT("{\"a\": 1, \"a\": 2}", "{\"a\":2}");
    RT("{\"$a\": 1, \"b\": 2}", "{\"$a\":1,\"b\":2}");   /* two keys: not a tag */
}

static void test_tags(void **state)
{
    (void)state;
    RT("{\"$tuple\": [1, \"a\"]}", "{\"$tuple\":[1,\"a\"]}");
    RT("{\"$tuple\": []}", "{\"$tuple\":[]}");
    RT("{\"$set\": [3]}", "{\"$set\":[3]}");
    RT("{\"$frozenset\": []}", "{\"$frozenset\":[]}");
    RT("{\"$bytes\": \"\"}", "{\"$bytes\":\"\"}");
    RT("{\"$bytes\": \"AA==\"}", "{\"$bytes\":\"AA==\"}");
    RT("{\"$bytes\": \"AAE=\"}", "{\"$bytes\":\"AAE=\"}");
    RT("{\"$bytes\": \"AAEC/+8=\"}", "{\"$bytes\":\"AAEC/+8=\"}");
    RT("{\"$int\": \"5\"}", "5");
    RT("{\"$int\": \"-99999999999999999999\"}", "{\"$int\":\"-99999999999999999999\"}");
    RT("{\"$float\": \"nan\"}", "{\"$float\":\"nan\"}");
    RT("{\"$float\": \"inf\"}", "{\"$float\":\"inf\"}");
    RT("{\"$float\": \"-inf\"}", "{\"$float\":\"-inf\"}");
    RT("{\"$dict\": []}", "{}");
    RT("{\"$dict\": [[\"a\", 1]]}", "{\"a\":1}");
    RT("{\"$dict\": [[\"$a\", 1]]}", "{\"$dict\":[[\"$a\",1]]}");
    RT("{\"$dict\": [[1, 2], [{\"$tuple\": [1, null]}, [3]]]}",
       "{\"$dict\":[[1,2],[{\"$tuple\":[1,null]},[3]]]}");
    RT("{\"$dict\": [[\"$a\", 1], [\"$b\", 2]]}", "{\"$a\":1,\"$b\":2}");
    RT("[{\"$tuple\": [{\"$set\": []}]}]", "[{\"$tuple\":[{\"$set\":[]}]}]");
    RT("{\"\": {\"$tuple\": []}}", "{\"\":{\"$tuple\":[]}}");
    /* the types are the real ones */
    cv v = dec("{\"$frozenset\": [1, 2, 2]}");
    assert_true(cv_is(v, &code_type_frozenset));
    assert_int_equal(code_len(&vm, v), 2);
    code_decref(&vm, v);
    v = dec("{\"$bytes\": \"AGE=\"}");
    assert_true(cv_is(v, &code_type_bytes));
    assert_int_equal(((code_bytes *)cv_obj(v))->len, 2);
    assert_memory_equal(((code_bytes *)cv_obj(v))->s, "\0a", 2);
    code_decref(&vm, v);
    v = dec("-0.0");
    assert_true(cv_is(v, &code_type_float));
    assert_true(signbit(((code_float *)cv_obj(v))->v));
    code_decref(&vm, v);
}

static void test_malformed(void **state)
{
    (void)state;
    const code_type *VE = &code_exc_ValueError;
    BAD("", VE, "at byte 0: unexpected end");
    BAD("   ", VE, "at byte 3");
    BAD("[1,]", VE, "at byte 3");
    BAD("[1 2]", VE, "at byte 3: expected ','");
    BAD("{\"a\"}", VE, "at byte 4: expected ':'");
    BAD("{\"a\":1,}", VE, "at byte 7");
    BAD("{1:2}", VE, "at byte 1");
    BAD("[", VE, "at byte 1");
    BAD("{", VE, "at byte 1");
    BAD("01", VE, "at byte 0: leading zero");
    BAD("1.", VE, "invalid number");
    BAD(".5", VE, "at byte 0");
    BAD("-", VE, "invalid number");
    BAD("+1", VE, "at byte 0");
    BAD("1e", VE, "invalid number");
    BAD("NaN", VE, "at byte 0");
    BAD("Infinity", VE, "at byte 0");
    BAD("tru", VE, "at byte 0");
    BAD("nulls", VE, "at byte 4: extra data");
    BAD("[1] x", VE, "at byte 4: extra data");
    BAD("\"abc", VE, "at byte 0: unterminated string");
    BAD("\"\\x\"", VE, "at byte 1: invalid escape");
    BAD("\"\\u12\"", VE, "invalid \\u escape");
    BAD("\"\\ud800\"", VE, "lone surrogate");
    BAD("\"\\udc00\"", VE, "lone surrogate");
    BAD("\"\\ud800\\u0041\"", VE, "lone surrogate");
    BAD("\"\\ud800x\"", VE, "lone surrogate");
    BAD("\"a\0b\"", VE, "at byte 2: NUL byte");
    BAD("\0", VE, "at byte 0: NUL byte");
    BAD("[1]\0", VE, "at byte 3");
    BAD("\"a\nb\"", VE, "at byte 2: control character");
    BAD("\xef\xbb\xbf[]", VE, "at byte 0");           /* a BOM, as Python's json */
    BAD("\"\xff\"", VE, "at byte 1: invalid UTF-8");
    BAD("\"\xc3\x28\"", VE, "invalid UTF-8");
    BAD("\"\xc0\xaf\"", VE, "invalid UTF-8");          /* overlong '/' */
    BAD("\"\xed\xa0\x80\"", VE, "invalid UTF-8");      /* an encoded surrogate */
    BAD("\"\xf4\x90\x80\x80\"", VE, "invalid UTF-8");  /* past U+10FFFF */
    BAD("\"\xe2\x82\"", VE, "invalid UTF-8");          /* cut short */
    BAD("[] \xe2\x82\xac", VE, "at byte 3");
}

static void test_bad_tags(void **state)
{
    (void)state;
    const code_type *VE = &code_exc_ValueError;
    BAD("{\"$repr\": \"<function f>\"}", VE, "$repr");
    BAD("{\"$foo\": 1}", VE, "at byte 1: unknown tag \"$foo\"");
    BAD("{\"$\": 1}", VE, "unknown tag");
    BAD("[0, {\"$tuple\": 1}]", VE, "at byte 5: the tag's value must be an array");
    BAD("{\"$set\": {}}", VE, "must be an array");
    BAD("{\"$int\": 5}", VE, "$int needs");
    BAD("{\"$int\": \"\"}", VE, "$int needs");
    BAD("{\"$int\": \"-\"}", VE, "$int needs");
    BAD("{\"$int\": \"12a\"}", VE, "$int needs");
    BAD("{\"$int\": \"+1\"}", VE, "$int needs");
    BAD("{\"$int\": \"007\"}", VE, "$int needs");
    BAD("{\"$int\": \" 1\"}", VE, "$int needs");
    BAD("{\"$float\": \"1.5\"}", VE, "$float needs");
    BAD("{\"$float\": \"NaN\"}", VE, "$float needs");
    BAD("{\"$float\": 1}", VE, "$float needs");
    BAD("{\"$bytes\": \"abc\"}", VE, "$bytes needs");
    BAD("{\"$bytes\": \"ab=c\"}", VE, "$bytes needs");
    BAD("{\"$bytes\": \"a===\"}", VE, "$bytes needs");
    BAD("{\"$bytes\": \"ab c\"}", VE, "$bytes needs");
    BAD("{\"$bytes\": [1]}", VE, "$bytes needs");
    BAD("{\"$dict\": [[1]]}", VE, "[key, value] pairs");
    BAD("{\"$dict\": [[1, 2, 3]]}", VE, "[key, value] pairs");
    BAD("{\"$dict\": [1]}", VE, "[key, value] pairs");
    BAD("{\"$dict\": {}}", VE, "must be an array");
    BAD("{\"$dict\": [[[1], 2]]}", &code_exc_TypeError, "unhashable type: 'list'");
    BAD("{\"$set\": [{}]}", &code_exc_TypeError, "unhashable type: 'dict'");
}

static void test_two_keys_after_tag_name(void **state)
{
    (void)state;
    /* a "$" key first, another key after: a plain dict of both */
    RT("{\"$tuple\": [1], \"x\": 2}", "{\"$tuple\":[1],\"x\":2}");
}

static void test_nesting(void **state)
{
    (void)state;
    size_t n = 100000;
    char *s = malloc(2 * n + 1);
    memset(s, '[', n);
    memset(s + n, ']', n);
    cv v = code_json_decode(&vm, s, 2 * n);
    assert_null(v);
    assert_true(code_exc_matches(&vm, &code_exc_RecursionError));
    code_exc_clear(&vm);
    /* objects too, and unterminated */
    for (size_t i = 0; i < n / 5; i++)
        memcpy(s + 5 * i, "{\"a\":", 5);
    assert_null(code_json_decode(&vm, s, n));
    assert_true(code_exc_matches(&vm, &code_exc_RecursionError));
    code_exc_clear(&vm);
    /* within the guard: fine, both ways */
    size_t ok = 100;
    memset(s, '[', ok);
    memset(s + ok, ']', ok);
    v = code_json_decode(&vm, s, 2 * ok);
    assert_non_null(v);
    char *out = enc(v);
    assert_int_equal(strlen(out), 2 * ok);
    free(out);
    code_decref(&vm, v);
    free(s);
}

static void test_huge_numbers(void **state)
{
    (void)state;
    char *s = malloc(5002);
    memset(s, '7', 4000);
    cv v = code_json_decode(&vm, s, 4000);
    assert_non_null(v);
    char *out = enc(v);
    assert_int_equal(strlen(out), 4000 + strlen("{\"$int\":\"\"}"));
    assert_memory_equal(out + 9, s, 4000);
    free(out);
    code_decref(&vm, v);
    /* past CPython's 4300-digit limit on int/str conversion */
    memset(s, '7', 5000);
    assert_null(code_json_decode(&vm, s, 5000));
    assert_true(code_exc_matches(&vm, &code_exc_ValueError));
    code_exc_clear(&vm);
    /* a float with a long mantissa */
    memset(s, '1', 5000);
    s[1] = '.';
    v = code_json_decode(&vm, s, 5000);
    assert_true(cv_is(v, &code_type_float));
    code_decref(&vm, v);
    free(s);
}

static void test_encode_values(void **state)
{
    (void)state;
    /* a dict with keys of several types, a cycle, a value JSON cannot carry */
    cv d = code_dict_new(&vm);
    cv k = code_tuple_pack(&vm, 2, cv_from_small(1), CODE_NONE);
    assert_int_equal(code_dict_set(&vm, d, k, CODE_TRUE), 0);
    assert_int_equal(code_dict_set(&vm, d, cv_from_small(2), CODE_FALSE), 0);
    char *out = enc(d);
    assert_string_equal(out, "{\"$dict\":[[{\"$tuple\":[1,null]},true],[2,false]]}");
    free(out);
    code_decref(&vm, k);
    code_decref(&vm, d);

    cv l = code_list_new(&vm, 0);
    assert_int_equal(code_list_append(&vm, l, l), 0);
    size_t n;
    assert_null(code_json_encode(&vm, l, &n));
    assert_true(code_exc_matches(&vm, &code_exc_RecursionError));
    code_exc_clear(&vm);
    ((code_list *)cv_obj(l))->n = 0;     /* break the cycle so it is freed */
    code_decref(&vm, l);
    code_decref(&vm, l);

    cv ellipsis = CODE_ELLIPSIS;
    out = enc(ellipsis);
    assert_string_equal(out, "{\"$repr\":\"Ellipsis\"}");
    free(out);

    cv big = code_int_from_i64(&vm, INT64_MIN);
    out = enc(big);
    assert_string_equal(out, "{\"$int\":\"-9223372036854775808\"}");
    free(out);
    code_decref(&vm, big);

    cv str = code_str_new(&vm, "a\0\x01\"", 4);
    out = enc(str);
    assert_string_equal(out, "\"a\\u0000\\u0001\\\"\"");
    free(out);
    code_decref(&vm, str);
}

/* A value small on the heap can be huge as text: bounded by the limit. */
static void test_encode_limit(void **state)
{
    (void)state;
    code_vm small;
    code_limits lim = {.max_bytes = 1 << 20};
    assert_int_equal(code_vm_init(&small, &lim, NULL, NULL), 0);
    char *big = malloc(100000);
    memset(big, 'x', 100000);
    cv s = code_str_new(&small, big, 100000);
    free(big);
    cv l = code_list_new(&small, 0);
    for (int i = 0; i < 100; i++)
        assert_int_equal(code_list_append(&small, l, s), 0);
    size_t n;
    assert_null(code_json_encode(&small, l, &n));
    assert_true(code_exc_matches(&small, &code_exc_MemoryError));
    code_exc_clear(&small);
    code_decref(&small, l);
    code_decref(&small, s);
    code_vm_destroy(&small);
}

/* Decoding under every memory limit up to what it needs: MemoryError or
 * the value, never a crash or a leak (ASan). */
static void test_decode_memory(void **state)
{
    (void)state;
    static const char doc[] =
        "{\"a\": [1, 2.5, \"text\", {\"$tuple\": [1, {\"$set\": [1, 2]}]}], "
        "\"b\": {\"$bytes\": \"AAECAwQ=\"}, \"c\": {\"$int\": \"123456789012345678901234567890\"}, "
        "\"d\": {\"$dict\": [[[1], 2]]}}";
    for (size_t lim = 1024; lim < 64 * 1024; lim += 512) {
        code_vm m;
        code_limits l = {.max_bytes = lim};
        if (code_vm_init(&m, &l, NULL, NULL) < 0)
            continue;
        cv v = code_json_decode(&m, doc, sizeof(doc) - 1);
        if (!v) {
            assert_non_null(m.exc);
            code_exc_clear(&m);
        }
        code_decref(&m, v);
        code_vm_destroy(&m);
    }
}

/* Nothing kept across decodes, failed ones included: the heap's free lists
 * are reused, so a leaked reference shows as growth. */
static void test_no_growth(void **state)
{
    (void)state;
    static const char *const docs[] = {
        "{\"a\": [1, 2.5, \"t\\u00e9xt\", {\"$tuple\": [1, {\"$set\": [1, 2]}]}], \"b\": "
        "{\"$bytes\": \"AAECAwQ=\"}, \"c\": {\"$int\": \"123456789012345678901234567890\"}, "
        "\"d\": {\"$dict\": [[{\"$frozenset\": [1]}, 2]]}}",
        "{\"a\": [1, 2, {\"b\": [3, \"x\", tru]}]}",
        "{\"a\": [1, 2, {\"b\": {\"$tuple\": [3, {\"$foo\": 1}]}}]}",
        "{\"a\": [1, {\"$dict\": [[[1], 2]]}]}",
        "{\"$set\": [1, 2, []]}",
        "[\"abc\\n\", \"\\ud800\"]",
        "{\"k\": \"v\", \"k2\": [1, 2, 3], \"k3\" 4}",
    };
    for (size_t d = 0; d < sizeof(docs) / sizeof(*docs); d++) {
        size_t after_first = 0;
        for (int i = 0; i < 200; i++) {
            cv v = code_json_decode(&vm, docs[d], strlen(docs[d]));
            if (v) {
                free(enc(v));
                code_decref(&vm, v);
            } else {
                code_exc_clear(&vm);
            }
            if (i == 0)
                after_first = vm.mem.bytes;
        }
        if (vm.mem.bytes != after_first)
            fail_msg("doc %zu: heap grew from %zu to %zu bytes", d, after_first, vm.mem.bytes);
    }
}

static void test_utf8_and_base64(void **state)
{
    (void)state;
    assert_true(code_json_utf8_valid("", 0));
    assert_true(code_json_utf8_valid("a\0b", 3));
    assert_true(code_json_utf8_valid("\xf4\x8f\xbf\xbf", 4));
    assert_false(code_json_utf8_valid("\xf4\x8f\xbf", 3));
    assert_false(code_json_utf8_valid("\xe0\x80\x80", 3));
    assert_false(code_json_utf8_valid("\x80", 1));
    for (size_t n = 0; n < 40; n++) {
        unsigned char in[40], back[40];
        char text[64];
        for (size_t i = 0; i < n; i++)
            in[i] = (unsigned char)(i * 37 + n);
        code_json_b64_encode(in, n, text);
        size_t m;
        assert_int_equal(code_json_b64_decode(text, code_json_b64_len(n), back, &m), 0);
        assert_int_equal(m, n);
        assert_memory_equal(in, back, n);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain),
        cmocka_unit_test(test_tags),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_bad_tags),
        cmocka_unit_test(test_two_keys_after_tag_name),
        cmocka_unit_test(test_nesting),
        cmocka_unit_test(test_huge_numbers),
        cmocka_unit_test(test_encode_values),
        cmocka_unit_test(test_encode_limit),
        cmocka_unit_test(test_decode_memory),
        cmocka_unit_test(test_no_growth),
        cmocka_unit_test(test_utf8_and_base64),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
