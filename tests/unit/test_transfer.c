#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "cli/transfer.h"
#include "util/alloc.h"

static void expect_remote(const char *remote, const char *name, const char *want)
{
    char *got = transfer_remote_path(remote, name);
    if (strcmp(got, want) != 0)
        fail_msg("'%s' + '%s': got '%s', want '%s'", remote, name ? name : "(none)", got, want);
    cella_free(got);
}

static void test_remote_path(void **state)
{
    expect_remote("a.txt", NULL, "/workspace/a.txt");
    expect_remote("a.txt", "x", "/workspace/a.txt");
    expect_remote("dir/sub/f", NULL, "/workspace/dir/sub/f");
    expect_remote("/etc/motd", NULL, "/etc/motd");
    expect_remote("./a", NULL, "/workspace/a");
    expect_remote(".//./a", NULL, "/workspace/a");
    /* a directory: the file keeps its own name in it */
    expect_remote("in/", "data.csv", "/workspace/in/data.csv");
    expect_remote("/tmp/", "data.csv", "/tmp/data.csv");
    expect_remote("/tmp//", "data.csv", "/tmp/data.csv");
    expect_remote(".", "f", "/workspace/f");
    expect_remote("./", "f", "/workspace/f");
    expect_remote("", "f", "/workspace/f");
    expect_remote("/", "f", "/f");
    /* ... or names the directory itself */
    expect_remote("out/", NULL, "/workspace/out");
    expect_remote(".", NULL, "/workspace");
    expect_remote("/", NULL, "/");
    /* only a leading "./" is special */
    expect_remote("a/./b", NULL, "/workspace/a/./b");
    expect_remote("..", NULL, "/workspace/..");

    assert_true(transfer_remote_is_dir("x/"));
    assert_true(transfer_remote_is_dir("."));
    assert_true(transfer_remote_is_dir(""));
    assert_false(transfer_remote_is_dir("x"));
    assert_false(transfer_remote_is_dir(".x"));
}

static void test_basename(void **state)
{
    size_t n;
    const char *b = transfer_basename("/workspace/a b.txt", &n);
    assert_int_equal(n, 7);
    assert_memory_equal(b, "a b.txt", 7);
    b = transfer_basename("dir/sub//", &n);
    assert_int_equal(n, 3);
    assert_memory_equal(b, "sub", 3);
    b = transfer_basename("plain", &n);
    assert_int_equal(n, 5);
    transfer_basename("/", &n);
    assert_int_equal(n, 0);
    transfer_basename("", &n);
    assert_int_equal(n, 0);
}

static void test_url_path(void **state)
{
    char *p = transfer_url_path("ID", "files", "/workspace/a b.txt", NULL);
    assert_string_equal(p, "/v1/sandboxes/ID/files/workspace/a%20b.txt");
    cella_free(p);
    p = transfer_url_path("x/y", "archive", "/w/~a-b_c.d", "parents=1");
    assert_string_equal(p, "/v1/sandboxes/x%2Fy/archive/w/~a-b_c.d?parents=1");
    cella_free(p);
    p = transfer_url_path("ID", "files", "/t/%?#&+\xc3\xa9\x01", "parents=1&mode=0644");
    assert_string_equal(p, "/v1/sandboxes/ID/files/t/%25%3F%23%26%2B%C3%A9%01"
                           "?parents=1&mode=0644");
    cella_free(p);
    p = transfer_url_path("ID", "files", "/", "");
    assert_string_equal(p, "/v1/sandboxes/ID/files/");
    cella_free(p);
}

static void test_mode(void **state)
{
    unsigned m;
    cella_err err;
    assert_int_equal(transfer_parse_mode("0755", &m, &err), 0);
    assert_int_equal(m, 0755);
    assert_int_equal(transfer_parse_mode("644", &m, &err), 0);
    assert_int_equal(m, 0644);
    assert_int_equal(transfer_parse_mode("0", &m, &err), 0);
    assert_int_equal(m, 0);
    assert_int_equal(transfer_parse_mode("7777", &m, &err), 0);
    assert_int_equal(m, 07777);
    static const char *const bad[] = {"", "8", "0x1ff", "rwx", "-1", "17777", "000000", " 644"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (transfer_parse_mode(bad[i], &m, &err) != -1)
            fail_msg("mode '%s' was accepted", bad[i]);
}

static void test_fs_body(void **state)
{
    cella_err err;
    assert_int_equal(transfer_fs_body_check("{\"path\": \"/workspace\"}", 22, &err), 0);
    assert_int_equal(transfer_fs_body_check("{}", 2, &err), 0);
    assert_int_equal(transfer_fs_body_check("{\"content\": \"a\\u0000b\"}", 23, &err), 0);
    assert_int_equal(transfer_fs_body_check("{\"path\": ", 9, &err), -1);
    assert_non_null(strstr(err.msg, "not valid JSON"));
    assert_int_equal(transfer_fs_body_check("[1]", 3, &err), -1);
    assert_non_null(strstr(err.msg, "must be a JSON object"));
    assert_int_equal(transfer_fs_body_check("", 0, &err), -1);
}

static void test_progress(void **state)
{
    char b[160], h[32];
    transfer_human_bytes(h, sizeof(h), 0);
    assert_string_equal(h, "0 B");
    transfer_human_bytes(h, sizeof(h), 1023);
    assert_string_equal(h, "1023 B");
    transfer_human_bytes(h, sizeof(h), 1536);
    assert_string_equal(h, "1.5 KiB");
    transfer_human_bytes(h, sizeof(h), 64ull << 20);
    assert_string_equal(h, "64.0 MiB");
    transfer_human_bytes(h, sizeof(h), 3ull << 40);
    assert_string_equal(h, "3.0 TiB");

    transfer_progress_format(b, sizeof(b), 16ull << 20, 64ull << 20, 2000);
    assert_string_equal(b, "[######..................]  25%  16.0 MiB / 64.0 MiB  8.0 MiB/s");
    transfer_progress_format(b, sizeof(b), 64ull << 20, 64ull << 20, 0);
    assert_string_equal(b, "[########################] 100%  64.0 MiB / 64.0 MiB  -");
    transfer_progress_format(b, sizeof(b), 0, 0, 10);
    assert_string_equal(b, "[########################] 100%  0 B / 0 B  0 B/s");
    transfer_progress_format(b, sizeof(b), 10, 1000, 1000);
    assert_string_equal(b, "[........................]   1%  10 B / 1000 B  10 B/s");
    /* a file that grew while it was sent: never past 100% */
    transfer_progress_format(b, sizeof(b), 2000, 1000, 1000);
    assert_non_null(strstr(b, "100%  2.0 KiB / 2.0 KiB"));
    /* a small buffer truncates, never overflows */
    transfer_progress_format(b, 10, 5, 10, 1);
    assert_int_equal(strlen(b), 9);
}

/* ---- options ------------------------------------------------------------------------------ */

static int parse(const char *cmd, transfer_opts *o, cella_err *err, ...)
{
    char *argv[16];
    int argc = 0;
    va_list ap;
    va_start(ap, err);
    for (const char *a; (a = va_arg(ap, const char *)) && argc < 16;)
        argv[argc++] = (char *)a;
    va_end(ap);
    return transfer_args_parse(cmd, argc, argv, o, err);
}

static void expect_usage_error(const char *cmd, const char *needle, ...)
{
    char *argv[16];
    int argc = 0;
    va_list ap;
    va_start(ap, needle);
    for (const char *a; (a = va_arg(ap, const char *)) && argc < 16;)
        argv[argc++] = (char *)a;
    va_end(ap);
    transfer_opts o;
    cella_err err = {0};
    if (transfer_args_parse(cmd, argc, argv, &o, &err) != -1)
        fail_msg("cella %s: accepted, wanted an error with '%s'", cmd, needle);
    if (!strstr(err.msg, needle))
        fail_msg("cella %s: error '%s' lacks '%s'", cmd, err.msg, needle);
}

static void test_args(void **state)
{
    transfer_opts o;
    cella_err err;
    assert_int_equal(parse("upload", &o, &err, "--parents", "ID", "a.bin", "--mode=0755", "dir/",
                           "--url", "http://h:1", NULL),
                     0);
    assert_string_equal(o.id, "ID");
    assert_string_equal(o.local, "a.bin");
    assert_string_equal(o.remote, "dir/");
    assert_true(o.parents && o.has_mode && !o.tar);
    assert_int_equal(o.mode, 0755);
    assert_string_equal(o.url, "http://h:1");

    assert_int_equal(parse("download", &o, &err, "ID", "/workspace/x", "-", NULL), 0);
    assert_string_equal(o.remote, "/workspace/x");
    assert_string_equal(o.local, "-");
    assert_int_equal(parse("download", &o, &err, "--tar", "ID", "--", "-weird", "out.tar", NULL),
                     0);
    assert_true(o.tar);
    assert_string_equal(o.remote, "-weird");
    assert_int_equal(parse("upload", &o, &err, "-p", "--tar", "ID", "-", "dir", NULL), 0);
    assert_true(o.tar && o.parents);

    assert_int_equal(parse("fs", &o, &err, "ID", "ls", "--json", "{\"path\":\"/\"}", NULL), 0);
    assert_string_equal(o.op, "ls");
    assert_string_equal(o.body, "{\"path\":\"/\"}");
    assert_int_equal(parse("fs", &o, &err, "ID", "stat", NULL), 0);
    assert_null(o.body);
    assert_int_equal(parse("fs", &o, &err, "--json", "-", "ID", "write", NULL), 0);
    assert_string_equal(o.body, "-");

    /* --help wins over everything else */
    assert_int_equal(parse("upload", &o, &err, "--bogus", NULL), -1);
    assert_int_equal(parse("upload", &o, &err, "--help", "--bogus", NULL), 0);
    assert_true(o.help);
    assert_int_equal(parse("fs", &o, &err, "-h", NULL), 0);
    assert_true(o.help);

    expect_usage_error("upload", "no sandbox ID", NULL);
    expect_usage_error("upload", "no LOCAL file", "ID", NULL);
    expect_usage_error("upload", "no REMOTE path", "ID", "a", NULL);
    expect_usage_error("download", "no REMOTE path", "ID", NULL);
    expect_usage_error("download", "no LOCAL file", "ID", "r", NULL);
    expect_usage_error("fs", "no operation", "ID", NULL);
    expect_usage_error("upload", "unexpected argument 'd'", "ID", "a", "b", "d", NULL);
    expect_usage_error("upload", "the sandbox ID is empty", "", "a", "b", NULL);
    expect_usage_error("upload", "unknown option '--force'", "--force", "ID", "a", "b", NULL);
    expect_usage_error("download", "'--parents' does not apply to 'cella download'", "--parents",
                       "ID", "a", "b", NULL);
    expect_usage_error("download", "'--mode' does not apply", "--mode", "0644", "ID", "a", "b",
                       NULL);
    expect_usage_error("fs", "'--tar' does not apply", "--tar", "ID", "ls", NULL);
    expect_usage_error("upload", "'--json' does not apply", "--json", "{}", "ID", "a", "b", NULL);
    expect_usage_error("upload", "--mode: '999' is not an octal mode", "--mode", "999", "ID", "a",
                       "b", NULL);
    expect_usage_error("upload", "option --mode needs a value", "ID", "a", "b", "--mode", NULL);
    expect_usage_error("upload", "--mode does not apply to --tar", "--tar", "--mode", "644", "ID",
                       "-", "d", NULL);
    expect_usage_error("upload", "stdin has no name", "ID", "-", "dir/", NULL);
    expect_usage_error("fs", "unknown operation 'cat'", "ID", "cat", NULL);
    expect_usage_error("fs", "not valid JSON", "ID", "ls", "--json", "{path: 1}", NULL);
    expect_usage_error("fs", "must be a JSON object", "ID", "ls", "--json", "\"x\"", NULL);
    expect_usage_error("fs", "unexpected argument", "ID", "ls", "extra", NULL);

    assert_true(cli_transfer_is_command("upload"));
    assert_true(cli_transfer_is_command("fs"));
    assert_false(cli_transfer_is_command("exec"));
    assert_false(cli_transfer_is_command(NULL));
    assert_non_null(strstr(transfer_usage("download"), "Usage: cella download"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_remote_path),
        cmocka_unit_test(test_basename),
        cmocka_unit_test(test_url_path),
        cmocka_unit_test(test_mode),
        cmocka_unit_test(test_fs_body),
        cmocka_unit_test(test_progress),
        cmocka_unit_test(test_args),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
