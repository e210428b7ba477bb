#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "core/id.h"

static void test_new_ids(void **state)
{
    cella_id a, b;
    assert_int_equal(cella_id_new(0xdeadbeef, &a, NULL), 0);
    assert_int_equal(cella_id_new(0xdeadbeef, &b, NULL), 0);
    assert_int_equal(strlen(a.str), CELLA_ID_LEN);
    assert_string_not_equal(a.str, b.str);
    assert_true(strncmp(a.str, "deadbeef-", 9) == 0);      /* node key first */
    assert_int_equal(a.str[14], '8');                        /* version 8 */
    assert_true(strchr("89ab", a.str[19]) != NULL);          /* variant 0b10 */
    uint8_t bytes[16];
    assert_true(cella_id_parse(a.str, bytes));
    assert_int_equal(cella_id_node_key(bytes), 0xdeadbeef);
    assert_int_equal(strlen(cella_id_short(&a)), CELLA_SHORT_ID_LEN);
    assert_string_equal(cella_id_short(&a), a.str + 24);
}

static void test_parse_rejects(void **state)
{
    uint8_t b[16];
    assert_false(cella_id_parse(NULL, b));
    assert_false(cella_id_parse("", b));
    assert_true(cella_id_parse("deadbeef-0000-8000-8000-000000000000", b));
    assert_false(cella_id_parse("DEADBEEF-0000-8000-8000-000000000000", b));  /* canonical only */
    assert_false(cella_id_parse("deadbeef-0000-4000-8000-000000000000", b));  /* version 4 */
    assert_false(cella_id_parse("deadbeef-0000-8000-c000-000000000000", b));  /* variant */
    assert_false(cella_id_parse("deadbeef00000-8000-8000-000000000000", b));
    assert_false(cella_id_parse("deadbeef-0000-8000-8000-00000000000", b));
    assert_false(cella_id_parse("deadbeef-0000-8000-8000-0000000000000", b));
    assert_false(cella_id_parse("../../etc/passwd-aaaa-bbbb-ccccccccccc", b));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_ids),
        cmocka_unit_test(test_parse_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
