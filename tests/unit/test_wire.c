#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "agent/wire.h"
#include "util/alloc.h"

static void test_roundtrip(void **state)
{
    cbuf b;
    cbuf_init(&b);
    wire_put_u8(&b, 7);
    wire_put_u32(&b, 0xdeadbeef);
    wire_put_u64(&b, 0x0123456789abcdefull);
    wire_put_i64(&b, -5);
    wire_put_str(&b, "hello");
    wire_put_str(&b, NULL);
    char *v[] = {"a", "", "ccc", NULL};
    wire_put_strv(&b, v);
    wire_rd r;
    wire_rd_init(&r, cbuf_head(&b), cbuf_avail(&b));
    assert_int_equal(wire_get_u8(&r), 7);
    assert_int_equal(wire_get_u32(&r), 0xdeadbeef);
    assert_true(wire_get_u64(&r) == 0x0123456789abcdefull);
    assert_true(wire_get_i64(&r) == -5);
    char *s = wire_get_str(&r);
    assert_string_equal(s, "hello");
    cella_free(s);
    s = wire_get_str(&r);
    assert_string_equal(s, "");
    cella_free(s);
    char **got = wire_get_strv(&r, 10);
    assert_non_null(got);
    assert_string_equal(got[0], "a");
    assert_string_equal(got[1], "");
    assert_string_equal(got[2], "ccc");
    assert_null(got[3]);
    cella_strv_free(got);
    assert_true(wire_rd_done(&r));
    cbuf_free(&b);
}

static void test_truncated_input_is_sticky_error(void **state)
{
    uint8_t two[2] = {1, 2};
    wire_rd r;
    wire_rd_init(&r, two, sizeof(two));
    assert_int_equal(wire_get_u32(&r), 0);
    assert_true(r.err);
    assert_int_equal(wire_get_u8(&r), 0);   /* stays failed */
    assert_false(wire_rd_done(&r));
}

static void test_lengths_are_not_trusted(void **state)
{
    /* A string claiming 4 GiB with 3 bytes behind it. */
    uint8_t lie[7] = {0xff, 0xff, 0xff, 0xff, 'a', 'b', 'c'};
    wire_rd r;
    wire_rd_init(&r, lie, sizeof(lie));
    assert_null(wire_get_str(&r));
    assert_true(r.err);
    /* A vector claiming a million entries: refused before allocating them. */
    uint8_t many[8] = {0x40, 0x42, 0x0f, 0x00, 0, 0, 0, 0};
    wire_rd_init(&r, many, sizeof(many));
    assert_null(wire_get_strv(&r, 2000000));
    assert_true(r.err);
    /* More entries than the caller allows. */
    cbuf b;
    cbuf_init(&b);
    char *v[] = {"a", "b", "c", NULL};
    wire_put_strv(&b, v);
    wire_rd_init(&r, cbuf_head(&b), cbuf_avail(&b));
    assert_null(wire_get_strv(&r, 2));
    cbuf_free(&b);
}

static void test_nul_in_string_refused(void **state)
{
    cbuf b;
    cbuf_init(&b);
    wire_put_bytes(&b, "a\0b", 3);
    wire_rd r;
    wire_rd_init(&r, cbuf_head(&b), cbuf_avail(&b));
    assert_null(wire_get_str(&r));
    assert_true(r.err);
    cbuf_free(&b);
}

static void test_leftover_bytes_not_done(void **state)
{
    uint8_t five[5] = {1, 0, 0, 0, 9};
    wire_rd r;
    wire_rd_init(&r, five, sizeof(five));
    assert_int_equal(wire_get_u32(&r), 1);
    assert_false(wire_rd_done(&r));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_truncated_input_is_sticky_error),
        cmocka_unit_test(test_lengths_are_not_trusted),
        cmocka_unit_test(test_nul_in_string_refused),
        cmocka_unit_test(test_leftover_bytes_not_done),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
