/* The Flujo dialect's request decoding (src/api/flujo_req.c): file paths,
 * languages, every field's types, timeouts, and the session_id refusal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "api/flujo.h"

static void test_path_clean(void **state)
{
    static const struct {
        const char *in, *out;
    } good[] = {
        {"a", "a"},
        {"a/b/c.txt", "a/b/c.txt"},
        {"./a//b/", "a/b"},
        {"a/./b", "a/b"},
        {"...", "..."},
        {"..a/b..", "..a/b.."},
        {"a\\..\\..\\x", "a\\..\\..\\x"},       /* a backslash is a name's byte here */
        {"main.py", "main.py"},
        {" ", " "},
    };
    char out[FLUJO_PATH_MAX];
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        assert_int_equal(flujo_path_clean(good[i].in, out, sizeof(out)), 0);
        assert_string_equal(out, good[i].out);
    }
    static const char *const bad[] = {"", "/", "/etc/passwd", "//x", "..", "../x", "a/..",
                                      "a/../b", "a/../../x", "./../x", "x/..", ".", "./",
                                      ".//.", "a/b/../../../c"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(flujo_path_clean(bad[i], out, sizeof(out)), -1);
    /* Bounded by the output: a cleaned path that would not fit is refused. */
    assert_int_equal(flujo_path_clean("abc/def", out, 8), 0);
    assert_string_equal(out, "abc/def");
    assert_int_equal(flujo_path_clean("abc/defg", out, 8), -1);
    assert_int_equal(flujo_path_clean("a", out, 0), -1);
    static char longp[FLUJO_PATH_MAX + 8];
    memset(longp, 'x', sizeof(longp) - 1);
    assert_int_equal(flujo_path_clean(longp, out, sizeof(out)), -1);
}

static void test_languages(void **state)
{
    const flujo_lang *l = flujo_lang_find("python");
    assert_non_null(l);
    assert_string_equal(l->image, "python");
    assert_string_equal(l->entry, "main.py");
    assert_ptr_equal(flujo_lang_find("PYTHON"), l);
    assert_string_equal(flujo_lang_find("node")->entry, "main.js");
    assert_string_equal(flujo_lang_find("bash")->interpreter, "/bin/bash");
    assert_string_equal(flujo_lang_find("shell")->interpreter, "/bin/sh");
    assert_string_equal(flujo_lang_find("sh")->image, "shell");
    assert_null(flujo_lang_find("cobol"));
    assert_null(flujo_lang_find(""));
    assert_null(flujo_lang_find("python "));
}

static int parse(const char *s, flujo_req *r, core_error *e)
{
    return flujo_req_parse((const uint8_t *)s, strlen(s), r, e);
}

static void test_full_request(void **state)
{
    flujo_req r;
    core_error e;
    assert_int_equal(parse("{\"code\":\"print(1)\",\"language\":\"python\","
                           "\"files\":{\"./a//b.txt\":\"x\",\"c\":\"\"},"
                           "\"environment\":{\"Z\":\"1\",\"A\":\"2\"},"
                           "\"arguments\":[\"--f\",\"v\"],\"timeout_s\":1.0001,"
                           "\"tenant_id\":\"ignored\",\"session_id\":null}",
                           &r, &e), 0);
    assert_string_equal(r.code, "print(1)");
    assert_int_equal(r.code_len, 8);
    assert_string_equal(r.lang->entry, "main.py");
    assert_int_equal(r.n_files, 2);
    assert_string_equal(r.files[0].path, "a/b.txt");
    assert_int_equal(r.files[0].len, 1);
    assert_string_equal(r.files[1].path, "c");
    assert_int_equal(r.files[1].len, 0);
    assert_string_equal(r.env[0], "A=2");       /* by name, whatever the order sent */
    assert_string_equal(r.env[1], "Z=1");
    assert_null(r.env[2]);
    assert_string_equal(r.args[0], "--f");
    assert_true(r.has_timeout);
    assert_int_equal(r.timeout_ms, 1001);       /* rounded up */
    flujo_req_free(&r);

    /* The smallest: optional fields absent or null. */
    assert_int_equal(parse("{\"code\":\"\",\"language\":\"node\",\"files\":null,"
                           "\"timeout_s\":null}", &r, &e), 0);
    assert_int_equal(r.n_files, 0);
    assert_null(r.env);
    assert_null(r.args);
    assert_false(r.has_timeout);
    flujo_req_free(&r);
}

static void test_timeouts(void **state)
{
    static const struct {
        const char *v;
        bool has;
        uint64_t ms;
    } cases[] = {
        {"60", true, 60000},   {"60.0", true, 60000}, {"0.0001", true, 1},
        {"0", false, 0},       {"0.0", false, 0},     {"1e30", true, 365ull * 86400 * 1000},
        {"2.5", true, 2500},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char body[128];
        snprintf(body, sizeof(body), "{\"code\":\"\",\"language\":\"python\",\"timeout_s\":%s}",
                 cases[i].v);
        flujo_req r;
        core_error e;
        assert_int_equal(parse(body, &r, &e), 0);
        assert_int_equal(r.has_timeout, cases[i].has);
        if (cases[i].has)
            assert_int_equal(r.timeout_ms, cases[i].ms);
        flujo_req_free(&r);
    }
}

static void refused(const char *body, core_code code, const char *want)
{
    flujo_req r;
    core_error e;
    assert_int_equal(parse(body, &r, &e), -1);
    assert_int_equal(e.code, code);
    if (!strstr(e.message, want))
        fail_msg("%s: '%s' lacks '%s'", body, e.message, want);
    assert_null(r.json);
    assert_null(r.files);
}

static void test_refusals(void **state)
{
    refused("{", S001, "malformed JSON");
    refused("[]", S001, "JSON object");
    refused("", S001, "missing field 'code'");
    refused("{\"code\":\"x\"}", S001, "missing field 'language'");
    refused("{\"code\":1,\"language\":\"python\"}", S001, "'code' must be a string");
    refused("{\"code\":\"x\",\"language\":\"cobol\"}", S001, "Unsupported language: cobol");
    /* The language first, the files after, as the reference checks them. */
    refused("{\"code\":\"x\",\"language\":\"ruby\",\"files\":{\"/a\":\"x\"}}", S001,
            "Unsupported language: ruby");
    refused("{\"code\":\"x\",\"language\":\"python\",\"files\":{\"ok\":\"x\",\"a/../../b\":\"x\"}}",
            S001, "Invalid file path: a/../../b");
    refused("{\"code\":\"x\",\"language\":\"python\",\"files\":{\"\":\"x\"}}", S001,
            "Invalid file path: ");
    refused("{\"code\":\"x\",\"language\":\"python\",\"files\":{\"a\\u0000b\":\"x\"}}", S001,
            "invalid request");
    refused("{\"code\":\"x\",\"language\":\"python\",\"files\":[\"a\"]}", S001, "'files'");
    refused("{\"code\":\"x\",\"language\":\"python\",\"files\":{\"a\":1}}", S001, "files[a]");
    refused("{\"code\":\"x\",\"language\":\"python\",\"environment\":[\"A=B\"]}", S001,
            "'environment'");
    refused("{\"code\":\"x\",\"language\":\"python\",\"environment\":{\"A\":1}}", S001,
            "environment.A");
    refused("{\"code\":\"x\",\"language\":\"python\",\"environment\":{\"A=B\":\"1\"}}", S001,
            "invalid variable name");
    refused("{\"code\":\"x\",\"language\":\"python\",\"arguments\":\"x\"}", S001, "'arguments'");
    refused("{\"code\":\"x\",\"language\":\"python\",\"arguments\":[null]}", S001, "'arguments'");
    refused("{\"code\":\"x\",\"language\":\"python\",\"timeout_s\":\"60\"}", S001, "'timeout_s'");
    refused("{\"code\":\"x\",\"language\":\"python\",\"timeout_s\":true}", S001, "'timeout_s'");
    refused("{\"code\":\"x\",\"language\":\"python\",\"timeout_s\":-0.5}", S001, "'timeout_s'");
    /* A session_id is the gateway's: 501 before anything else is looked at. */
    flujo_req r;
    core_error e;
    assert_int_equal(parse("{\"session_id\":\"s\",\"code\":5}", &r, &e), -1);
    assert_int_equal(e.code, S219);
    assert_int_equal(core_http_status(&e), 501);
    assert_non_null(strstr(e.message, "gateway dialect is not built yet"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_path_clean),
        cmocka_unit_test(test_languages),
        cmocka_unit_test(test_full_request),
        cmocka_unit_test(test_timeouts),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
