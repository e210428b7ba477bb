#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "util/parse.h"

static void test_u64(void **state)
{
    uint64_t v;
    assert_int_equal(parse_u64("42", 0, 100, &v, NULL), 0);
    assert_int_equal(v, 42);
    assert_int_equal(parse_u64("0", 0, 100, &v, NULL), 0);
    assert_int_equal(parse_u64("101", 0, 100, &v, NULL), -1);
    assert_int_equal(parse_u64("", 0, 100, &v, NULL), -1);
    assert_int_equal(parse_u64("-1", 0, 100, &v, NULL), -1);
    assert_int_equal(parse_u64("12a", 0, 100, &v, NULL), -1);
    assert_int_equal(parse_u64(" 1", 0, 100, &v, NULL), -1);
    assert_int_equal(parse_u64("18446744073709551615", 0, UINT64_MAX, &v, NULL), 0);
    assert_int_equal(parse_u64("18446744073709551616", 0, UINT64_MAX, &v, NULL), -1);
    cella_err err;
    assert_int_equal(parse_u64("7", 10, 20, &v, &err), -1);
    assert_non_null(strstr(err.msg, "out of range"));
}

static void test_duration(void **state)
{
    uint64_t ms;
    cella_err err;
    assert_int_equal(parse_duration_ms("5s", 1000000, &ms, NULL), 0);
    assert_int_equal(ms, 5000);
    assert_int_equal(parse_duration_ms("500ms", 1000000, &ms, NULL), 0);
    assert_int_equal(ms, 500);
    assert_int_equal(parse_duration_ms("1.5s", 1000000, &ms, NULL), 0);
    assert_int_equal(ms, 1500);
    assert_int_equal(parse_duration_ms("2m", 1000000, &ms, NULL), 0);
    assert_int_equal(ms, 120000);
    assert_int_equal(parse_duration_ms("1h", 10000000, &ms, NULL), 0);
    assert_int_equal(ms, 3600000);
    assert_int_equal(parse_duration_ms("3", 1000000, &ms, NULL), 0);   /* bare: seconds */
    assert_int_equal(ms, 3000);
    assert_int_equal(parse_duration_ms("0.0001s", 1000000, &ms, NULL), 0);
    assert_int_equal(ms, 0);   /* below the precision kept: zero, refused by callers */
    assert_int_equal(parse_duration_ms("0.5ms", 1000000, &ms, NULL), 0);
    assert_int_equal(ms, 1);   /* a positive value never rounds to 0 */
    assert_int_equal(parse_duration_ms("5x", 1000000, &ms, &err), -1);
    assert_non_null(strstr(err.msg, "unknown unit"));
    assert_int_equal(parse_duration_ms("s", 1000000, &ms, NULL), -1);
    assert_int_equal(parse_duration_ms("1.s", 1000000, &ms, NULL), -1);
    assert_int_equal(parse_duration_ms("-1s", 1000000, &ms, NULL), -1);
    assert_int_equal(parse_duration_ms("", 1000000, &ms, NULL), -1);
    assert_int_equal(parse_duration_ms("2h", 1000, &ms, &err), -1);
    assert_non_null(strstr(err.msg, "maximum"));
    assert_int_equal(parse_duration_ms("99999999999999999999h", UINT64_MAX, &ms, NULL), -1);
}

static void test_cpus(void **state)
{
    uint32_t m;
    assert_int_equal(parse_cpus_milli("1", 64000, &m, NULL), 0);
    assert_int_equal(m, 1000);
    assert_int_equal(parse_cpus_milli("0.5", 64000, &m, NULL), 0);
    assert_int_equal(m, 500);
    assert_int_equal(parse_cpus_milli("2.25", 64000, &m, NULL), 0);
    assert_int_equal(m, 2250);
    assert_int_equal(parse_cpus_milli("0.001", 64000, &m, NULL), -1);  /* below 0.01 */
    assert_int_equal(parse_cpus_milli("65", 64000, &m, NULL), -1);
    assert_int_equal(parse_cpus_milli("abc", 64000, &m, NULL), -1);
    assert_int_equal(parse_cpus_milli("", 64000, &m, NULL), -1);
}

static void test_size(void **state)
{
    uint64_t v;
    assert_int_equal(parse_size("1048576", UINT64_MAX, &v, NULL), 0);
    assert_int_equal(v, 1048576);
    assert_int_equal(parse_size("64K", UINT64_MAX, &v, NULL), 0);
    assert_int_equal(v, 65536);
    assert_int_equal(parse_size("1M", UINT64_MAX, &v, NULL), 0);
    assert_int_equal(v, 1 << 20);
    assert_int_equal(parse_size("2GiB", UINT64_MAX, &v, NULL), 0);
    assert_int_equal(v, 2ull << 30);
    assert_int_equal(parse_size("1m", UINT64_MAX, &v, NULL), 0);
    assert_int_equal(parse_size("1T", UINT64_MAX, &v, NULL), -1);
    assert_int_equal(parse_size("1Mx", UINT64_MAX, &v, NULL), -1);
    assert_int_equal(parse_size("M", UINT64_MAX, &v, NULL), -1);
    assert_int_equal(parse_size("2G", 1 << 30, &v, NULL), -1);
    assert_int_equal(parse_size("99999999999999999999G", UINT64_MAX, &v, NULL), -1);
}

static void test_env_names(void **state)
{
    assert_true(env_assignment_valid("A=1"));
    assert_true(env_assignment_valid("_x9=")); /* empty value is fine */
    assert_true(env_assignment_valid("K=a=b"));
    assert_false(env_assignment_valid("=1"));
    assert_false(env_assignment_valid("9A=1"));
    assert_false(env_assignment_valid("A-B=1"));
    assert_false(env_assignment_valid("NOEQUALS"));
    assert_false(env_assignment_valid("A B=1"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_u64),  cmocka_unit_test(test_duration),
        cmocka_unit_test(test_cpus), cmocka_unit_test(test_size),
        cmocka_unit_test(test_env_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
