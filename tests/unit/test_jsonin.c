#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "api/jsonin.h"
#include "util/alloc.h"

static json_t *parse(const char *s)
{
    json_t *j = NULL;
    core_error e;
    assert_int_equal(jin_parse((const uint8_t *)s, strlen(s), &j, &e), 0);
    return j;
}

static void test_parse_refusals(void **state)
{
    static const char *const bad[] = {"{", "[]", "1", "\"x\"", "{\"a\":1,\"a\":2}",
                                      "{\"a\":\"x\\u0000y\"}", "{\"a\":1} trailing"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *j = NULL;
        core_error e;
        assert_int_equal(jin_parse((const uint8_t *)bad[i], strlen(bad[i]), &j, &e), -1);
        assert_int_equal(e.code, S001);
        assert_null(j);
    }
    /* An empty body is an empty object. */
    json_t *j = parse("  \n");
    assert_true(json_is_object(j) && json_object_size(j) == 0);
    json_decref(j);
}

static void test_fields(void **state)
{
    json_t *j = parse("{\"s\":\"v\",\"b\":true,\"n\":7,\"big\":-1,\"f\":0.5,\"nul\":null,"
                      "\"arr\":[\"a\",\"b\"],\"mixed\":[\"a\",1]}");
    core_error e;
    static const char *const known[] = {"s", "b", "n", "f", NULL};
    assert_int_equal(jin_known(j, known, &e), -1);
    assert_non_null(strstr(e.message, "unknown field"));
    const char *s = NULL;
    assert_int_equal(jin_str(j, "s", &s, &e), 1);
    assert_string_equal(s, "v");
    assert_int_equal(jin_str(j, "nul", &s, &e), 0);     /* null is absent */
    assert_int_equal(jin_str(j, "missing", &s, &e), 0);
    assert_int_equal(jin_str(j, "n", &s, &e), -1);
    assert_non_null(strstr(e.message, "'n' must be a string"));
    bool b = false;
    assert_int_equal(jin_bool(j, "b", &b, &e), 1);
    assert_true(b);
    assert_int_equal(jin_bool(j, "s", &b, &e), -1);
    uint64_t u = 0;
    assert_int_equal(jin_u64(j, "n", 1, 10, &u, &e), 1);
    assert_int_equal(u, 7);
    assert_int_equal(jin_u64(j, "n", 8, 10, &u, &e), -1);
    assert_int_equal(jin_u64(j, "big", 0, 10, &u, &e), -1);
    assert_int_equal(jin_u64(j, "f", 0, 10, &u, &e), -1);   /* 0.5 is not whole */
    uint32_t milli = 0;
    assert_int_equal(jin_cpus(j, "f", &milli, &e), 1);
    assert_int_equal(milli, 500);
    assert_int_equal(jin_cpus(j, "big", &milli, &e), -1);
    char **v = NULL;
    assert_int_equal(jin_strv(j, "arr", &v, &e), 1);
    assert_string_equal(v[1], "b");
    cella_strv_free(v);
    assert_int_equal(jin_strv(j, "mixed", &v, &e), -1);
    assert_non_null(strstr(e.message, "item 1"));
    json_decref(j);
}

static void test_env_shapes(void **state)
{
    core_error e;
    char **v = NULL;
    json_t *j = parse("{\"env\":{\"B\":\"2\",\"A\":\"1=x\"}}");
    assert_int_equal(jin_env(j, "env", &v, &e), 1);
    assert_string_equal(v[0], "A=1=x");      /* key order */
    assert_string_equal(v[1], "B=2");
    assert_null(v[2]);
    cella_strv_free(v);
    json_decref(j);

    j = parse("{\"env\":[\"X=1\",\"Y=\"]}");
    assert_int_equal(jin_env(j, "env", &v, &e), 1);
    assert_string_equal(v[1], "Y=");
    cella_strv_free(v);
    json_decref(j);

    j = parse("{\"env\":{\"1X\":\"a\",\"OK\":\"b\",\"A-B\":\"c\"}}");
    assert_int_equal(jin_env(j, "env", &v, &e), -1);
    assert_non_null(strstr(e.message, "invalid variable name(s): [\"1X\", \"A-B\"]"));
    json_decref(j);

    j = parse("{\"env\":[\"NOEQ\",\"=x\"]}");
    assert_int_equal(jin_env(j, "env", &v, &e), -1);
    assert_non_null(strstr(e.message, "[\"NOEQ\", \"\"]"));
    json_decref(j);

    j = parse("{\"env\":{\"A\":1}}");
    assert_int_equal(jin_env(j, "env", &v, &e), -1);
    json_decref(j);
    j = parse("{\"env\":\"A=1\"}");
    assert_int_equal(jin_env(j, "env", &v, &e), -1);
    json_decref(j);
}

static void test_base64_field(void **state)
{
    core_error e;
    cbuf b;
    cbuf_init(&b);
    bool present = false;
    json_t *j = parse("{\"in\":\"aGk=\",\"bad\":\"a!\"}");
    assert_int_equal(jin_base64(j, "in", &b, &present, &e), 1);
    assert_true(present);
    assert_int_equal(cbuf_avail(&b), 2);
    assert_memory_equal(cbuf_head(&b), "hi", 2);
    assert_int_equal(jin_base64(j, "bad", &b, &present, &e), -1);
    assert_non_null(strstr(e.message, "'bad'"));
    cbuf_free(&b);
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_refusals),
        cmocka_unit_test(test_fields),
        cmocka_unit_test(test_env_shapes),
        cmocka_unit_test(test_base64_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
