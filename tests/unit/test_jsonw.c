/* The agent's JSON writer (util/jsonw.c): commas, escapes, and bytes that
 * are not UTF-8, which must still make a valid document. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "util/jsonw.h"
#include "util/text.h"

static void expect(cbuf *b, const char *want)
{
    assert_int_equal(cbuf_avail(b), strlen(want));
    assert_memory_equal(cbuf_head(b), want, strlen(want));
    assert_true(utf8_valid(cbuf_head(b), cbuf_avail(b)));
}

static void test_shapes(void **state)
{
    cbuf b;
    cbuf_init(&b);
    jsonw w;
    jw_init(&w, &b);
    jw_obj(&w);
    jw_kstr(&w, "a", "x");
    jw_ku64(&w, "n", 18446744073709551615ull);
    jw_ki64(&w, "m", -5);
    jw_kbool(&w, "t", true);
    jw_key(&w, "l");
    jw_arr(&w);
    jw_null(&w);
    jw_obj(&w);
    jw_obj_end(&w);
    jw_arr(&w);
    jw_arr_end(&w);
    jw_arr_end(&w);
    jw_kmode(&w, "mode", 0100644);
    jw_obj_end(&w);
    expect(&b, "{\"a\":\"x\",\"n\":18446744073709551615,\"m\":-5,\"t\":true,"
               "\"l\":[null,{},[]],\"mode\":\"0644\"}");
    cbuf_free(&b);
}

static void test_escapes(void **state)
{
    cbuf b;
    cbuf_init(&b);
    jsonw w;
    jw_init(&w, &b);
    jw_strn(&w, "q\"b\\n\n\t\r\x01\x7f\xc3\xa9", 12);
    expect(&b, "\"q\\\"b\\\\n\\n\\t\\r\\u0001\\u007f\xc3\xa9\"");
    cbuf_reset(&b);
    jw_init(&w, &b);
    /* A lone continuation byte, a truncated sequence, an overlong NUL:
     * each bad byte one U+FFFD (util/text.h's utf8_lossy). */
    jw_strn(&w, "a\x80" "b\xe2\x82" "c\xc0\x80", 8);
    expect(&b, "\"a\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd" "c\xef\xbf\xbd\xef\xbf\xbd\"");
    cbuf_reset(&b);
    jw_init(&w, &b);
    jw_strn(&w, "nul\0byte", 8);          /* never ends the string early */
    expect(&b, "\"nul\\u0000byte\"");
    cbuf_free(&b);
}

static void test_depth_is_bounded(void **state)
{
    cbuf b;
    cbuf_init(&b);
    jsonw w;
    jw_init(&w, &b);
    for (int i = 0; i < JSONW_MAX_DEPTH * 2; i++)
        jw_arr(&w);
    for (int i = 0; i < JSONW_MAX_DEPTH * 2; i++)
        jw_arr_end(&w);
    assert_int_equal(cbuf_avail(&b), (size_t)JSONW_MAX_DEPTH * 4);
    cbuf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_depth_is_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
