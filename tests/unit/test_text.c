#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "util/alloc.h"
#include "util/text.h"

static void b64_roundtrip(const char *in, const char *want)
{
    cbuf b;
    cbuf_init(&b);
    base64_encode(&b, (const uint8_t *)in, strlen(in));
    assert_int_equal(cbuf_avail(&b), strlen(want));
    assert_memory_equal(cbuf_head(&b), want, strlen(want));
    cbuf d;
    cbuf_init(&d);
    assert_int_equal(base64_decode(&d, want, strlen(want), NULL), 0);
    assert_int_equal(cbuf_avail(&d), strlen(in));
    if (*in)
        assert_memory_equal(cbuf_head(&d), in, strlen(in));
    cbuf_free(&b);
    cbuf_free(&d);
}

static void test_base64(void **state)
{
    b64_roundtrip("", "");      /* nothing to encode: found by fuzz_text */
    b64_roundtrip("f", "Zg==");
    b64_roundtrip("fo", "Zm8=");
    b64_roundtrip("foo", "Zm9v");
    b64_roundtrip("foobar", "Zm9vYmFy");
    cbuf d;
    cbuf_init(&d);
    cella_err err;
    /* Padding may be left out. */
    assert_int_equal(base64_decode(&d, "Zm8", 3, NULL), 0);
    assert_memory_equal(cbuf_head(&d), "fo", 2);
    cbuf_reset(&d);
    assert_int_equal(base64_decode(&d, "Zm9v!A", 6, &err), -1);
    assert_non_null(strstr(err.msg, "unexpected character"));
    assert_int_equal(base64_decode(&d, "Z", 1, &err), -1);
    assert_int_equal(base64_decode(&d, "Zm9v Zg==", 9, &err), -1);   /* no whitespace */
    assert_int_equal(base64_decode(&d, "Zh==", 4, &err), -1);        /* stray bits */
    assert_int_equal(base64_decode(&d, "Zg=", 3, &err), -1);         /* half padding */
    cbuf_free(&d);
}

static char **split(const char *s)
{
    char **v = NULL;
    cella_err err;
    if (shlex_split(s, &v, &err) < 0)
        return NULL;
    return v;
}

static void test_shlex(void **state)
{
    char **v = split("node /home/app/main.js");
    assert_non_null(v);
    assert_string_equal(v[0], "node");
    assert_string_equal(v[1], "/home/app/main.js");
    assert_null(v[2]);
    cella_strv_free(v);

    v = split("  echo 'a b'  \"c \\\"d\\\" $HOME\" e\\ f ");
    assert_string_equal(v[0], "echo");
    assert_string_equal(v[1], "a b");
    assert_string_equal(v[2], "c \"d\" $HOME");
    assert_string_equal(v[3], "e f");
    assert_null(v[4]);
    cella_strv_free(v);

    /* Shell metacharacters are plain text. */
    v = split("echo $HOME && pwd; ls | wc");
    assert_int_equal(cella_strv_len(v), 7);
    assert_string_equal(v[2], "&&");
    cella_strv_free(v);

    v = split("a''b \"\"");
    assert_string_equal(v[0], "ab");
    assert_string_equal(v[1], "");
    cella_strv_free(v);

    /* Empty words (found by fuzz_text: a buffer never written to). */
    v = split("echo '' \"\"");
    assert_int_equal(cella_strv_len(v), 3);
    assert_string_equal(v[1], "");
    assert_string_equal(v[2], "");
    cella_strv_free(v);

    v = split("   ");
    assert_non_null(v);
    assert_null(v[0]);
    cella_strv_free(v);

    assert_null(split("echo 'unbalanced"));
    assert_null(split("echo \"unbalanced"));
    assert_null(split("echo trailing\\"));
    assert_true(text_has_space("a b"));
    assert_true(text_has_space("a\tb"));
    assert_false(text_has_space("ab"));
}

static void lossy(const char *in, size_t n, const char *want)
{
    cbuf b;
    cbuf_init(&b);
    utf8_lossy(&b, (const uint8_t *)in, n);
    assert_int_equal(cbuf_avail(&b), strlen(want));
    if (*want)
        assert_memory_equal(cbuf_head(&b), want, strlen(want));
    cbuf_free(&b);
}

static void test_utf8(void **state)
{
    lossy("plain", 5, "plain");
    lossy("h\xc3\xa9", 3, "h\xc3\xa9");
    lossy("a\xff" "b", 3, "a\xef\xbf\xbd" "b");
    lossy("\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd");               /* overlong */
    lossy("\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"); /* surrogate */
    lossy("x\xe2\x82", 3, "x\xef\xbf\xbd");                          /* truncated at the end */
    lossy("\xf4\x90\x80\x80", 4,
          "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");        /* > U+10FFFF */
    assert_true(utf8_valid((const uint8_t *)"h\xc3\xa9", 3));
    assert_false(utf8_valid((const uint8_t *)"h\xc3", 2));
    /* A streaming consumer keeps an incomplete tail for the next chunk. */
    assert_int_equal(utf8_complete_prefix((const uint8_t *)"ab\xe2\x82", 4), 2);
    assert_int_equal(utf8_complete_prefix((const uint8_t *)"ab\xe2\x82\xac", 5), 5);
    assert_int_equal(utf8_complete_prefix((const uint8_t *)"ab\xff", 3), 3);
    assert_int_equal(utf8_complete_prefix((const uint8_t *)"\xf0\x9f\x98", 3), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base64),
        cmocka_unit_test(test_shlex),
        cmocka_unit_test(test_utf8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
