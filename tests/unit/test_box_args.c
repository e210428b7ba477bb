#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "cli/box_args.h"

#define ARGS(...) (char *[]){__VA_ARGS__, NULL}


static int parse(char **argv, int argc, box_opts *o, cella_err *err)
{
    return box_args_parse(argc, argv, o, err);
}

static void test_defaults(void **state)
{
    char **a = ARGS("true");
    box_opts o;
    assert_int_equal(parse(a, 1, &o, NULL), 0);
    assert_string_equal(o.image, "host");
    assert_int_equal(o.memory_mb, 512);
    assert_int_equal(o.pids, 256);
    assert_int_equal(o.cpu_milli, 1000);
    assert_int_equal(o.timeout_ms, 0);
    assert_int_equal(o.output_limit, 1 << 20);
    assert_null(o.workspace);
    assert_string_equal(o.argv[0], "true");
    box_opts_free(&o);
}

static void test_all_options(void **state)
{
    char *a[] = {"--memory-mb", "64", "--pids=32", "--cpus", "0.5", "--timeout", "1.5s",
                 "-e", "A=1", "--env=B=2", "-eC=3", "--workspace", "/tmp/w", "--workdir",
                 "/workspace/sub", "--tmp-mb", "16", "--output-limit", "64K", "--result-json",
                 "r.json", "--state-dir", "/tmp/s", "-v", "--", "python3", "-c", "x", NULL};
    box_opts o;
    cella_err err;
    assert_int_equal(parse(a, 28, &o, &err), 0);
    assert_int_equal(o.memory_mb, 64);
    assert_int_equal(o.pids, 32);
    assert_int_equal(o.cpu_milli, 500);
    assert_int_equal(o.timeout_ms, 1500);
    assert_string_equal(o.env[0], "A=1");
    assert_string_equal(o.env[1], "B=2");
    assert_string_equal(o.env[2], "C=3");
    assert_null(o.env[3]);
    assert_string_equal(o.workspace, "/tmp/w");
    assert_string_equal(o.workdir, "/workspace/sub");
    assert_int_equal(o.tmp_mb, 16);
    assert_int_equal(o.output_limit, 65536);
    assert_string_equal(o.result_json, "r.json");
    assert_string_equal(o.state_dir, "/tmp/s");
    assert_int_equal(o.verbose, 1);
    assert_string_equal(o.argv[0], "python3");
    assert_string_equal(o.argv[2], "x");
    box_opts_free(&o);
}

static void test_command_options_are_not_ours(void **state)
{
    /* Without "--", the first non-option starts the command; its own flags
     * stay its own. */
    char **a = ARGS("ls", "-la", "--memory-mb", "5");
    box_opts o;
    assert_int_equal(parse(a, 4, &o, NULL), 0);
    assert_string_equal(o.argv[0], "ls");
    assert_string_equal(o.argv[1], "-la");
    assert_int_equal(o.memory_mb, 512);
    box_opts_free(&o);
}

static void expect_error(char **a, int n, const char *needle)
{
    box_opts o;
    cella_err err;
    assert_int_equal(parse(a, n, &o, &err), -1);
    if (!strstr(err.msg, needle))
        fail_msg("error '%s' does not mention '%s'", err.msg, needle);
    box_opts_free(&o);
}

static void test_bad_input(void **state)
{
    expect_error(ARGS("--memory-mb"), 1, "needs a value");
    expect_error(ARGS("--memory-mb", "lots", "true"), 3, "--memory-mb");
    expect_error(ARGS("--memory-mb", "0", "true"), 3, "out of range");
    expect_error(ARGS("--pids", "-1", "true"), 3, "--pids");
    expect_error(ARGS("--cpus", "many", "true"), 3, "CPU count");
    expect_error(ARGS("--timeout", "5 s", "true"), 3, "--timeout");
    expect_error(ARGS("--timeout", "0", "true"), 3, "more than zero");
    expect_error(ARGS("--timeout", "30d", "true"), 3, "unknown unit");
    expect_error(ARGS("-e", "1A=x", "true"), 3, "NAME=VALUE");
    expect_error(ARGS("-e", "NOVALUE", "true"), 3, "NAME=VALUE");
    expect_error(ARGS("--workdir", "rel/dir", "true"), 3, "absolute");
    expect_error(ARGS("--output-limit", "2G", "true"), 3, "maximum");
    expect_error(ARGS("--bogus", "true"), 2, "unknown option '--bogus'");
    expect_error(ARGS("--memory-mb", "8"), 2, "no command");
    expect_error(ARGS("--"), 1, "no command");
    expect_error(ARGS("--tmp-mb", "100", "--memory-mb", "50", "true"), 5, "cannot exceed");
}

static void test_help(void **state)
{
    char **a = ARGS("--memory-mb", "64", "--help");
    box_opts o;
    assert_int_equal(parse(a, 3, &o, NULL), 0);
    assert_true(o.help);
    assert_non_null(strstr(box_usage, "--timeout"));
    assert_non_null(strstr(box_usage, "Exit status"));
    box_opts_free(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_all_options),
        cmocka_unit_test(test_command_options_are_not_ours),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_help),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
