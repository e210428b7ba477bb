#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "util/glob.h"

#define YES(p, s) assert_true(glob_match(p, s, false))
#define NO(p, s) assert_false(glob_match(p, s, false))
#define YES_DIR(p, s) assert_true(glob_match(p, s, true))
#define NO_DIR(p, s) assert_false(glob_match(p, s, true))

static void test_basename(void **state)
{
    /* No "/": the last segment, at any depth. */
    YES("*.c", "main.c");
    YES("*.c", "src/main.c");
    YES("*.c", "a/b/c/d.c");
    NO("*.c", "main.h");
    NO("*.c", "main.c/x");
    YES("main.c", "src/main.c");
    NO("main.c", "src/main.cc");
    YES("Makefile", "Makefile");
    NO("makefile", "Makefile");           /* case matters */
    YES("*", "anything/at/all");
    YES("*", ".hidden");                  /* gitignore: "*" matches dotfiles */
    YES("**", "a/b");
    YES("a**b", "axyb");                  /* "**" inside a segment is "*" */
    NO("a**b", "ax/yb");
    YES("src", "src");
    YES("src", "a/src");
    /* A trailing "/" does not anchor. */
    YES_DIR("build/", "build");
    YES_DIR("build/", "x/y/build");
}

static void test_anchored(void **state)
{
    YES("src/*.c", "src/main.c");
    NO("src/*.c", "lib/src/main.c");      /* a "/" anchors to the root */
    NO("src/*.c", "src/a/main.c");        /* "*" never crosses "/" */
    YES("/main.c", "main.c");
    NO("/main.c", "src/main.c");          /* a leading "/" anchors */
    YES("a/b/c", "a/b/c");
    NO("a/b/c", "a/b");
    NO("a/b", "a/b/c");
    YES("a//b", "a/b");                   /* runs of "/" are one */
    YES("a/b", "a//b/");
    YES("a/?/c", "a/x/c");
    NO("a/?/c", "a/xy/c");
    NO("a?b", "a/b");                     /* "?" never matches "/" */
    NO("a*b", "a/b");
}

static void test_globstar(void **state)
{
    /* A leading "**" matches at any depth, zero included. */
    YES("**/foo", "foo");
    YES("**/foo", "a/foo");
    YES("**/foo", "a/b/c/foo");
    NO("**/foo", "a/foo/b");
    YES("**/*.js", "x.js");
    YES("**/*.js", "src/lib/x.js");
    NO("**/*.js", "src/lib/x.ts");
    YES("**/foo/bar", "foo/bar");
    YES("**/foo/bar", "x/y/foo/bar");
    /* A trailing globstar matches everything inside, not the directory. */
    YES("abc/**", "abc/x");
    YES("abc/**", "abc/x/y/z");
    NO("abc/**", "abc");
    NO_DIR("abc/**", "abc");
    NO("abc/**", "xabc/x");
    NO("abc/**", "x/abc/y");
    /* A globstar between slashes is zero or more directories. */
    YES("a/**/b", "a/b");
    YES("a/**/b", "a/x/b");
    YES("a/**/b", "a/x/y/z/b");
    NO("a/**/b", "a/x/y/z/c");
    NO("a/**/b", "b");
    YES("a/**/**/b", "a/b");
    YES("a/**/**/b", "a/x/y/b");
    YES("**/a/**/b/**", "x/a/y/b/z");
    NO("**/a/**/b/**", "x/a/y/b");
    YES("/**", "a");
    YES_DIR("**/", "x");                  /* "**" dir-only: a directory */
    NO("**/", "x");
}

static void test_dir_only(void **state)
{
    YES_DIR("build/", "build");
    NO("build/", "build");
    YES_DIR("src/gen/", "src/gen");
    NO("src/gen/", "src/gen");
    YES_DIR("*/", "any");
    NO("*/", "file");
    YES_DIR("a/**/", "a/b/c");
    /* Without a trailing "/", both kinds match. */
    YES_DIR("build", "build");
    YES("build", "build");
}

static void test_classes(void **state)
{
    YES("[abc].txt", "a.txt");
    YES("[abc].txt", "c.txt");
    NO("[abc].txt", "d.txt");
    YES("[a-z]x", "qx");
    NO("[a-z]x", "Qx");
    YES("[!a-z]x", "Qx");
    NO("[!a-z]x", "qx");
    YES("[^a-z]x", "Qx");
    YES("[]]", "]");                      /* "]" first is a member */
    YES("[!]]", "a");
    NO("[!]]", "]");
    YES("[a-]", "-");
    YES("[a-]", "a");
    NO("[a-]", "b");
    YES("[\\]]", "]");
    YES("[[:digit:]][[:alpha:]]", "1a");
    NO("[[:digit:]]", "a");
    YES("[[:upper:][:digit:]]", "Q");
    YES("[[:space:]]", " ");
    YES("[[:xdigit:]]", "f");
    NO("[[:xdigit:]]", "g");
    YES("[[:punct:]]", "!");
    /* Unterminated: the "[" is an ordinary character. */
    YES("[abc", "[abc");
    NO("[abc", "a");
    YES("a[", "a[");
    /* Unicode: one class member, one character. */
    YES("[é]", "é");
    YES("caf[é]", "café");
    YES("[α-ω]", "λ");
    NO("[α-ω]", "a");
    YES("caf?", "café");                  /* "?" is one character, not one byte */
    NO("caf??", "café");
    YES("?", "\xff");                     /* a stray byte is one character */
    NO("[a-z]", "\xff");
    YES("*.c", "\xfe\xff.c");
}

static void test_escapes(void **state)
{
    YES("\\*.c", "*.c");
    NO("\\*.c", "x.c");
    YES("a\\?", "a?");
    NO("a\\?", "ab");
    YES("\\[x]", "[x]");
    NO("\\[x]", "x");
    YES("a\\\\b", "a\\b");
    YES("trail\\", "trail\\");            /* a trailing "\" is itself */
    YES("\\é", "é");
}

static void test_wildcards(void **state)
{
    YES("*", "x");
    YES("a*", "a");
    YES("a*", "abc");
    YES("*c", "abc");
    YES("a*c", "ac");
    YES("a*b*c", "aXbYc");
    YES("a*b*c", "abbbc");
    NO("a*b*c", "acb");
    YES("*a*a*", "banana");
    YES("???", "abc");
    NO("???", "ab");
    NO("???", "abcd");
    YES("*?", "a");
    NO("*?", "");
    YES("a***b", "ab");
    YES(".*", ".env");
    NO(".*", "env");
}

static void test_check(void **state)
{
    const char *why = NULL;
    assert_int_equal(glob_check("*.c", &why), 0);
    assert_int_equal(glob_check("", &why), -1);
    assert_string_equal(why, "empty pattern");
    assert_int_equal(glob_check("///", &why), -1);
    assert_non_null(strstr(why, "slashes"));
    char big[GLOB_MAX_PATTERN + 2];
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(glob_check(big, &why), -1);
    assert_non_null(strstr(why, "longer"));
    /* Refused patterns match nothing. */
    NO("", "x");
    NO("/", "x");
    NO_DIR("/", "x");
    NO(big, big);
    big[GLOB_MAX_PATTERN] = '\0';         /* exactly the limit: fine */
    assert_int_equal(glob_check(big, &why), 0);
    YES(big, big);
    /* An empty path matches nothing. */
    NO("*", "");
    NO("**", "");
}

static void test_may_match_under(void **state)
{
    assert_true(glob_may_match_under("*.c", "anything"));    /* basename: any depth */
    assert_true(glob_may_match_under("src/*.c", "src"));
    assert_false(glob_may_match_under("src/*.c", "lib"));
    assert_false(glob_may_match_under("src/*.c", "src/a"));
    assert_true(glob_may_match_under("src/**/*.c", "src/a/b"));
    assert_false(glob_may_match_under("src/**/*.c", "node_modules"));
    assert_true(glob_may_match_under("**/x", "a/b"));
    assert_true(glob_may_match_under("a/**", "a"));
    assert_true(glob_may_match_under("a/*/c", "a/b"));
    assert_false(glob_may_match_under("a/b", "a/b"));        /* a/b itself, nothing below */
    assert_false(glob_may_match_under("", "a"));
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Patterns that make a backtracking matcher exponential finish at once. */
static void test_pathological(void **state)
{
    static char s[4001], p[4097];
    memset(s, 'a', 4000);
    s[4000] = '\0';
    double t0 = now_ms();
    NO("*a*a*a*a*a*a*a*a*b", s);
    NO("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", s);
    /* Many stars against a long name: O(|p| x |s|), not exponential. */
    size_t n = 0;
    for (; n + 2 < 4000; n += 2)
        p[n] = '*', p[n + 1] = 'a';
    p[n++] = 'b';
    p[n] = '\0';
    NO(p, s);
    /* Many "**" segments against a deep path. */
    static char deep[8001], stars[4097];
    for (size_t i = 0; i < 4000; i++)
        deep[2 * i] = 'a', deep[2 * i + 1] = '/';
    deep[7999] = '\0';
    size_t m = 0;
    for (; m + 3 < 4090; m += 3)
        memcpy(stars + m, "**/", 3);
    memcpy(stars + m, "b", 2);
    NO(stars, deep);
    assert_false(glob_may_match_under("a/a/a/a/a/a/x", deep));
    double took = now_ms() - t0;
    print_message("pathological cases: %.1f ms\n", took);
    assert_true(took < 2000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basename),     cmocka_unit_test(test_anchored),
        cmocka_unit_test(test_globstar),     cmocka_unit_test(test_dir_only),
        cmocka_unit_test(test_classes),      cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_wildcards),    cmocka_unit_test(test_check),
        cmocka_unit_test(test_may_match_under), cmocka_unit_test(test_pathological),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
