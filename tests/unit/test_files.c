/* The raw file routes' Range parsing (api/files.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "api/fs.h"
#include "util/alloc.h"

static void ok(const char *h, uint64_t start, uint64_t len, bool suffix)
{
    uint64_t s = 7, l = 7;
    bool suf = !suffix;
    assert_true(api_parse_range(h, &s, &l, &suf));
    assert_int_equal(s, start);
    assert_int_equal(l, len);
    assert_int_equal(suf, suffix);
}

static void bad(const char *h)
{
    uint64_t s, l;
    bool suf;
    assert_false(api_parse_range(h, &s, &l, &suf));
}

static void test_ranges(void **state)
{
    ok("bytes=0-0", 0, 1, false);
    ok("bytes=10-19", 10, 10, false);
    ok("bytes=5-", 5, UINT64_MAX, false);
    ok("bytes=-5", 0, 5, true);
    ok("bytes=-0", 0, 0, true);
    ok("bytes=0-18446744073709551615", 0, UINT64_MAX, false);
    bad(NULL);
    bad("");
    bad("bytes=");
    bad("bytes=-");
    bad("bytes=a-b");
    bad("bytes=5-4");                     /* last before first */
    bad("bytes=0-1,4-5");                 /* several: answered whole */
    bad("items=0-1");
    bad("bytes= 0-1");
    bad("bytes=0-1 ");
    bad("bytes=+1-2");
    bad("bytes=1--2");
    bad("bytes=99999999999999999999-");   /* overflow */
    bad("bytes=-99999999999999999999");
}

static void test_urls(void **state)
{
    char *u = api_fs_url("/v1/sandboxes/x/files", "/workspace/a b/\xc3\xa9%?#");
    assert_string_equal(u, "/v1/sandboxes/x/files/workspace/a%20b/%C3%A9%25%3F%23");
    cella_free(u);
    u = api_fs_url("/b", "rel/f.txt");
    assert_string_equal(u, "/b/workspace/rel/f.txt");
    cella_free(u);
    /* ".." keeps its place, but never as a segment of its own: a client
     * removing dot segments (RFC 3986; the WHATWG URL standard of fetch and
     * Node, which reads "%2E%2E" as ".." too) must not climb out of the
     * route. Found by fuzz/fuzz_paths.c. */
    u = api_fs_url("/v1/sandboxes/x/files", "/workspace/../../../v1/sandboxes/y/files/etc/passwd");
    assert_string_equal(u, "/v1/sandboxes/x/files/workspace%2F%2E%2E%2F%2E%2E%2F%2E%2E/v1/"
                           "sandboxes/y/files/etc/passwd");
    cella_free(u);
    u = api_fs_url("/b", "../x/..");
    assert_string_equal(u, "/b/workspace%2F%2E%2E/x%2F%2E%2E");
    cella_free(u);
    u = api_fs_url("/b", "q/..");
    assert_string_equal(u, "/b/workspace/q%2F%2E%2E");
    cella_free(u);
    /* At the root ".." is the root itself. */
    u = api_fs_url("/b", "/../../etc/./../x");
    assert_string_equal(u, "/b/etc%2F%2E%2E/x");
    cella_free(u);
    u = api_fs_url("/b", "/..");
    assert_string_equal(u, "/b/");
    cella_free(u);
    /* Empty and "." segments and trailing slashes name nothing. */
    u = api_fs_url("/b", "/workspace/./a//b/./");
    assert_string_equal(u, "/b/workspace/a/b");
    cella_free(u);
    u = api_fs_url("/b", ".");
    assert_string_equal(u, "/b/workspace");
    cella_free(u);
    u = api_fs_url("/b", "/");
    assert_string_equal(u, "/b/");
    cella_free(u);
    u = api_fs_url("/b", "/w/...x/.../.a..");        /* only "." and ".." are dot segments */
    assert_string_equal(u, "/b/w/...x/.../.a..");
    cella_free(u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ranges),
        cmocka_unit_test(test_urls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
