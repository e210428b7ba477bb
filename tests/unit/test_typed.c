/* Typed runs' pure parts: value texts (core/typed_codec.c), the cache key,
 * cache entries, the auto-IO wrapper, and the JSON decoding of the typed
 * fields (api/run_typed.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "api/jsonin.h"
#include "api/run_typed.h"
#include "core/typed.h"
#include "util/alloc.h"

/* The canonical text of s as type t, or NULL when it is refused. */
static char *canon(typed_type t, const char *s)
{
    static char out[256];
    cbuf b;
    cbuf_init(&b);
    char why[200];
    int rc = typed_parse(t, (const uint8_t *)s, strlen(s), &b, why, sizeof(why));
    if (rc == 0) {
        assert_true(cbuf_avail(&b) < sizeof(out));
        memcpy(out, cbuf_head(&b), cbuf_avail(&b));
        out[cbuf_avail(&b)] = '\0';
    } else {
        assert_true(why[0]);
    }
    cbuf_free(&b);
    return rc == 0 ? out : NULL;
}

#define CANON(t, in, want) assert_string_equal(canon(t, in), want)
#define REFUSED(t, in) assert_null(canon(t, in))

static void test_names_and_types(void **state)
{
    assert_true(typed_name_ok("x") && typed_name_ok("_a1") && typed_name_ok("exit_code"));
    char long_ok[TYPED_NAME_MAX + 2];
    memset(long_ok, 'a', sizeof(long_ok));
    long_ok[TYPED_NAME_MAX] = '\0';
    assert_true(typed_name_ok(long_ok));
    long_ok[TYPED_NAME_MAX] = 'a';
    long_ok[TYPED_NAME_MAX + 1] = '\0';
    assert_false(typed_name_ok(long_ok));
    /* Names are file names: Flyte's own examples name inputs "solution.py". */
    static const char *const files[] = {"1x", "a-b", "solution.py", "a b", "é", "...", "-rf",
                                        "__init__", "a\nb"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        assert_true(typed_name_ok(files[i]));
        assert_false(typed_name_is_var(files[i]) && strcmp(files[i], "__init__"));
    }
    static const char *const bad[] = {"", "a/b", "..", ".", "/", "a/"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_false(typed_name_ok(bad[i]));
    assert_true(typed_name_is_var("x") && typed_name_is_var("_a1") && typed_name_is_var("__x"));
    assert_false(typed_name_is_var("1x") || typed_name_is_var("a.b") || typed_name_is_var(""));
    typed_type t;
    for (int k = TT_INT; k <= TT_LAST; k++) {
        assert_int_equal(typed_type_parse(typed_type_name((typed_type)k), &t), 0);
        assert_int_equal(t, k);
    }
    assert_int_equal(typed_type_parse("dir", &t), 0);
    assert_int_equal(t, TT_DIR);
    assert_int_equal(typed_type_parse("Dir", &t), -1);
    assert_int_equal(typed_type_parse("Int", &t), -1);
    assert_null(typed_type_name((typed_type)0));
}

static void test_scalars(void **state)
{
    CANON(TT_INT, "42", "42");
    CANON(TT_INT, " +007\n", "7");
    CANON(TT_INT, "-0", "0");
    CANON(TT_INT, "-9223372036854775808", "-9223372036854775808");
    CANON(TT_INT, "9223372036854775807", "9223372036854775807");
    REFUSED(TT_INT, "9223372036854775808");
    REFUSED(TT_INT, "-9223372036854775809");
    REFUSED(TT_INT, "1.0");
    REFUSED(TT_INT, "");
    REFUSED(TT_INT, "1_000");
    REFUSED(TT_INT, "0x10");
    REFUSED(TT_INT, "1 2");

    CANON(TT_FLOAT, "0.1", "0.1");
    CANON(TT_FLOAT, "3", "3.0");
    CANON(TT_FLOAT, " -2.50 ", "-2.5");
    CANON(TT_FLOAT, "1e300", "1e+300");
    CANON(TT_FLOAT, "0.30000000000000004", "0.30000000000000004");
    REFUSED(TT_FLOAT, "inf");
    REFUSED(TT_FLOAT, "nan");
    REFUSED(TT_FLOAT, "1e999");
    REFUSED(TT_FLOAT, "0x1p3");
    REFUSED(TT_FLOAT, "abc");
    REFUSED(TT_FLOAT, "");

    CANON(TT_BOOL, "true", "true");
    CANON(TT_BOOL, "True\n", "true");
    CANON(TT_BOOL, "yes", "true");
    CANON(TT_BOOL, "FALSE", "false");
    CANON(TT_BOOL, "0", "false");
    CANON(TT_BOOL, " ", "false");

    CANON(TT_STR, "  kept as is\r\n", "  kept as is\r\n");
    REFUSED(TT_STR, "\xff\xfe");
    CANON(TT_FILE, "\xff\xfe", "\xff\xfe");

    /* A scalar with a NUL, or too long, is refused. */
    cbuf b;
    cbuf_init(&b);
    char why[100];
    assert_int_equal(typed_parse(TT_INT, (const uint8_t *)"1\0002", 3, &b, why, sizeof(why)), -1);
    char big[TYPED_SCALAR_MAX + 2];
    memset(big, '1', sizeof(big));
    assert_int_equal(typed_parse(TT_INT, (const uint8_t *)big, sizeof(big), &b, why,
                                 sizeof(why)), -1);
    cbuf_free(&b);
}

static void test_datetimes(void **state)
{
    CANON(TT_DATETIME, "2024-01-01T12:00:00", "2024-01-01T12:00:00");
    CANON(TT_DATETIME, "2024-01-01", "2024-01-01T00:00:00");
    CANON(TT_DATETIME, "2024-01-01 12:30", "2024-01-01T12:30:00");
    CANON(TT_DATETIME, "2024-01-01T12:00:00Z", "2024-01-01T12:00:00+00:00");
    CANON(TT_DATETIME, "2024-01-01T12:00:00-00:00", "2024-01-01T12:00:00+00:00");
    CANON(TT_DATETIME, "2024-01-01T12:00:00.5+05:30", "2024-01-01T12:00:00.500000+05:30");
    CANON(TT_DATETIME, "2024-01-01T12:00:00,123456789-0800", "2024-01-01T12:00:00.123456-08:00");
    CANON(TT_DATETIME, "2024-01-01T12:00:00+01:02:03", "2024-01-01T12:00:00+01:02:03");
    CANON(TT_DATETIME, "2024-02-29T00:00:00.000000", "2024-02-29T00:00:00");
    CANON(TT_DATETIME, "\n2000-02-29T23:59:59\n", "2000-02-29T23:59:59");
    REFUSED(TT_DATETIME, "2023-02-29");
    REFUSED(TT_DATETIME, "1900-02-29");
    REFUSED(TT_DATETIME, "2024-13-01");
    REFUSED(TT_DATETIME, "0000-01-01");
    REFUSED(TT_DATETIME, "2024-01-01T24:00:00");
    REFUSED(TT_DATETIME, "2024-01-01T12:00:60");
    REFUSED(TT_DATETIME, "2024-01-01T12:00:00+24:00");
    REFUSED(TT_DATETIME, "2024-01-01T12:00:00.1234567890");
    REFUSED(TT_DATETIME, "2024-1-01");
    REFUSED(TT_DATETIME, "yesterday");
    REFUSED(TT_DATETIME, "2024-01-01T");
    REFUSED(TT_DATETIME, "2024-01-01T12:00:00Zjunk");
}

static void test_timedeltas(void **state)
{
    CANON(TT_TIMEDELTA, "86400", "86400");
    CANON(TT_TIMEDELTA, "1.5", "1.5");
    CANON(TT_TIMEDELTA, "-0.000001", "-0.000001");
    CANON(TT_TIMEDELTA, "0.0000005", "0.000001");      /* rounded half away from zero */
    CANON(TT_TIMEDELTA, "1e3", "1000");
    CANON(TT_TIMEDELTA, "P1D", "86400");
    CANON(TT_TIMEDELTA, "PT1H30M", "5400");
    CANON(TT_TIMEDELTA, "P1W", "604800");
    CANON(TT_TIMEDELTA, "-P1DT2H3M4.5S", "-93784.5");
    CANON(TT_TIMEDELTA, "pt0.5s", "0.5");
    CANON(TT_TIMEDELTA, "PT1.5H", "5400");
    CANON(TT_TIMEDELTA, "1 day, 2:03:04.500000", "93784.5");
    CANON(TT_TIMEDELTA, "2 days, 0:00:00", "172800");
    CANON(TT_TIMEDELTA, "-1 day, 23:59:59", "-1");
    CANON(TT_TIMEDELTA, "0:00:00.000001", "0.000001");
    CANON(TT_TIMEDELTA, "12:00:00", "43200");
    REFUSED(TT_TIMEDELTA, "P1Y");
    REFUSED(TT_TIMEDELTA, "P1M");
    REFUSED(TT_TIMEDELTA, "P");
    REFUSED(TT_TIMEDELTA, "PT");
    REFUSED(TT_TIMEDELTA, "P1DT");
    REFUSED(TT_TIMEDELTA, "PT1S1H");                    /* out of order */
    REFUSED(TT_TIMEDELTA, "P1H");                       /* hours need the T */
    REFUSED(TT_TIMEDELTA, "1 day 2:00:00");
    REFUSED(TT_TIMEDELTA, "1:2:3");
    REFUSED(TT_TIMEDELTA, "soon");
    REFUSED(TT_TIMEDELTA, "");
    REFUSED(TT_TIMEDELTA, "1e300");
    REFUSED(TT_TIMEDELTA, "99999999999999999999");
    int64_t us;
    assert_int_equal(typed_timedelta_us((const uint8_t *)"-93784.5", 8, &us), 0);
    assert_true(us == -93784500000ll);
    char buf[48];
    typed_timedelta_text(INT64_MAX, buf, sizeof(buf));
    assert_string_equal(buf, "9223372036854.775807");
    typed_timedelta_text(-INT64_MAX, buf, sizeof(buf));
    assert_string_equal(buf, "-9223372036854.775807");
    assert_string_equal(canon(TT_TIMEDELTA, "9223372036854.775807"), "9223372036854.775807");
}

/* ---- the cache key -------------------------------------------------------- */

static typed_value inputs[] = {
    {"x", TT_INT, (const uint8_t *)"1", 1},
    {"name", TT_STR, (const uint8_t *)"ann", 3},
};
static typed_value inputs_swapped[] = {
    {"name", TT_STR, (const uint8_t *)"ann", 3},
    {"x", TT_INT, (const uint8_t *)"1", 1},
};
static typed_decl outputs[] = {{"y", TT_INT}, {"z", TT_FILE}};
static typed_decl outputs_swapped[] = {{"z", TT_FILE}, {"y", TT_INT}};

static core_typed_req base_req(void)
{
    core_typed_req r = {0};
    r.run.image = "python";
    r.run.lang = "python";
    r.run.code = "y = x";
    r.run.code_len = 5;
    r.mode = TM_AUTO_IO;
    r.inputs = inputs;
    r.n_inputs = 2;
    r.outputs = outputs;
    r.n_outputs = 2;
    return r;
}

static void key_of(const char *tenant, const core_typed_req *r, const char *interp, uint8_t *k)
{
    typed_cache_key(tenant, r, interp, k);
}

static void test_cache_key(void **state)
{
    uint8_t k0[32], k[32];
    core_typed_req r = base_req();
    key_of("t", &r, "python3", k0);
    char hex[65];
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", k0[i]);
    /* The encoding is fixed (checked against an independent implementation
     * of docs/api.md's description): a change would empty every cache. */
    assert_string_equal(hex, "d57ad4539f93c00fe83735d47cb3fa3d"
                             "da859b44a60271cc1ef68b916032226e");

    /* Sets: order does not count. */
    r.inputs = inputs_swapped;
    r.outputs = outputs_swapped;
    key_of("t", &r, "python3", k);
    assert_memory_equal(k, k0, 32);
    /* What does not change the result is not in it. */
    r.retries = 3;
    r.cache = TC_OVERRIDE;
    r.run.timeout_ms = 5;
    r.run.has_timeout = true;
    r.run.keep_sandbox = true;
    key_of("t", &r, "python3", k);
    assert_memory_equal(k, k0, 32);

    /* Everything else is. */
    core_typed_req v;
#define DIFFERS(stmt, tenant, interp)                                                         \
    do {                                                                                      \
        v = base_req();                                                                       \
        stmt;                                                                                 \
        key_of(tenant, &v, interp, k);                                                        \
        assert_memory_not_equal(k, k0, 32);                                                   \
    } while (0)
    DIFFERS((void)0, "u", "python3");
    DIFFERS((void)0, "t", "node");
    DIFFERS(v.run.image = "shell", "t", "python3");
    DIFFERS(v.mode = TM_VERBATIM, "t", "python3");
    DIFFERS(v.run.code_len = 4, "t", "python3");
    DIFFERS(v.n_inputs = 1, "t", "python3");
    DIFFERS(v.n_outputs = 1, "t", "python3");
    static typed_value other[] = {{"x", TT_INT, (const uint8_t *)"2", 1},
                                  {"name", TT_STR, (const uint8_t *)"ann", 3}};
    DIFFERS(v.inputs = other, "t", "python3");
    static typed_value retyped[] = {{"x", TT_STR, (const uint8_t *)"1", 1},
                                    {"name", TT_STR, (const uint8_t *)"ann", 3}};
    DIFFERS(v.inputs = retyped, "t", "python3");
    static typed_decl out_retyped[] = {{"y", TT_FLOAT}, {"z", TT_FILE}};
    DIFFERS(v.outputs = out_retyped, "t", "python3");
    static char *env[] = {"K=V", NULL};
    DIFFERS(v.run.env = env, "t", "python3");
    DIFFERS((v.run.has_stdin = true, v.run.stdin_data = (const uint8_t *)"", v.run.stdin_len = 0),
            "t", "python3");
    static core_run_file files[] = {{"a", (const uint8_t *)"b", 1}};
    DIFFERS((v.run.files = files, v.run.n_files = 1), "t", "python3");
    static char *argv1[] = {"ls", NULL}, *argv2[] = {"ls", "-l", NULL};
    /* Command mode: the argv is the program; "ls -l" is not "ls" "-l". */
    uint8_t c1[32], c2[32];
    v = base_req();
    v.mode = TM_COMMAND;
    v.argv = argv1;
    key_of("t", &v, NULL, c1);
    v.argv = argv2;
    key_of("t", &v, NULL, c2);
    assert_memory_not_equal(c1, c2, 32);
    static char *argv3[] = {"ls -l", NULL};
    v.argv = argv3;
    key_of("t", &v, NULL, k);
    assert_memory_not_equal(k, c2, 32);
    /* Boundaries are encoded: "ab"+"c" is not "a"+"bc". */
    static typed_value ab[] = {{"ab", TT_STR, (const uint8_t *)"c", 1}};
    static typed_value a_bc[] = {{"a", TT_STR, (const uint8_t *)"bc", 2}};
    v = base_req();
    v.inputs = ab;
    v.n_inputs = 1;
    key_of("t", &v, "python3", c1);
    v.inputs = a_bc;
    key_of("t", &v, "python3", c2);
    assert_memory_not_equal(c1, c2, 32);
}

/* ---- cache entries -------------------------------------------------------- */

static void sample_result(core_typed_result *r)
{
    core_typed_result_init(r);
    r->exec.has_exit_code = true;
    r->exec.duration_ms = 12;
    r->exec.timeout_ms = 300000;
    r->exec.stdout_truncated = true;
    cbuf_append(&r->exec.out[1], "out\n", 4);
    cbuf_append(&r->exec.out[2], "err", 3);
    r->outputs = cella_calloc(3, sizeof(*r->outputs));
    r->n_outputs = 2;
    r->outputs[0].name = cella_strdup("y");
    r->outputs[0].type = TT_INT;
    cbuf_init(&r->outputs[0].data);
    cbuf_append(&r->outputs[0].data, "42", 2);
    r->outputs[1].name = cella_strdup("blob");
    r->outputs[1].type = TT_FILE;
    cbuf_init(&r->outputs[1].data);
    cbuf_append(&r->outputs[1].data, "\0\xff", 2);
}

static void test_cache_entries(void **state)
{
    core_typed_result r, back;
    sample_result(&r);
    cbuf enc;
    cbuf_init(&enc);
    typed_result_encode(&r, &enc);
    assert_int_equal(typed_result_decode(cbuf_head(&enc), cbuf_avail(&enc), &back), 0);
    assert_true(back.exec.has_exit_code && back.exec.exit_code == 0 && !back.exec.timed_out);
    assert_true(back.exec.stdout_truncated && !back.exec.stderr_truncated);
    assert_int_equal(back.exec.duration_ms, 12);
    assert_int_equal(back.exec.timeout_ms, 300000);
    assert_int_equal(cbuf_avail(&back.exec.out[1]), 4);
    assert_memory_equal(cbuf_head(&back.exec.out[2]), "err", 3);
    assert_int_equal(back.n_outputs, 2);
    assert_string_equal(back.outputs[1].name, "blob");
    assert_int_equal(back.outputs[1].type, TT_FILE);
    assert_memory_equal(cbuf_head(&back.outputs[1].data), "\0\xff", 2);
    assert_false(back.cached);
    assert_true(core_typed_success(&back));
    core_typed_result_free(&back);

    /* Every shorter prefix, and anything longer, is refused. */
    for (size_t n = 0; n < cbuf_avail(&enc); n++) {
        assert_int_equal(typed_result_decode(cbuf_head(&enc), n, &back), -1);
        assert_int_equal(back.n_outputs, 0);
    }
    cbuf_append(&enc, "x", 1);
    assert_int_equal(typed_result_decode(cbuf_head(&enc), cbuf_avail(&enc), &back), -1);
    cbuf_free(&enc);

    /* An output that is not of its type (a damaged entry) is refused. */
    cbuf_reset(&r.outputs[0].data);
    cbuf_append(&r.outputs[0].data, "4x", 2);
    cbuf_init(&enc);
    typed_result_encode(&r, &enc);
    assert_int_equal(typed_result_decode(cbuf_head(&enc), cbuf_avail(&enc), &back), -1);
    cbuf_free(&enc);
    /* So is a bad name. */
    cbuf_reset(&r.outputs[0].data);
    cbuf_append(&r.outputs[0].data, "4", 1);
    r.outputs[0].name[0] = '/';
    cbuf_init(&enc);
    typed_result_encode(&r, &enc);
    assert_int_equal(typed_result_decode(cbuf_head(&enc), cbuf_avail(&enc), &back), -1);
    cbuf_free(&enc);
    core_typed_result_free(&r);
}

/* ---- the wrapper ------------------------------------------------------------- */

static void test_wrapper(void **state)
{
    core_typed_req r = base_req();
    cbuf w;
    cbuf_init(&w);
    typed_wrapper(&r, "/tmp/run.py", &w);
    cbuf_append(&w, "", 1);
    const char *s = (const char *)cbuf_head(&w);
    assert_non_null(strstr(s, "_IN = [('x', 'int', True), ('name', 'str', True), ]\n"));
    assert_non_null(strstr(s, "_OUT = [('y', 'int', True), ('z', 'file', True), ]\n"));
    assert_non_null(strstr(s, "_CODE = '/tmp/run.py'\n"));
    /* Names that are not identifiers are files only, and any byte of them
     * is escaped: a quote or a backslash cannot end the literal. */
    static const typed_value odd_in[] = {
        {"solution.py", TT_FILE, (const uint8_t *)"", 0},
        {"it's \\ \xc3\xa9", TT_STR, (const uint8_t *)"", 0},
    };
    static const typed_decl odd_out[] = {{"a-b", TT_INT}};
    r.inputs = odd_in;
    r.outputs = odd_out;
    r.n_outputs = 1;
    cbuf_append(&w, "\n", 1);
    size_t at = cbuf_avail(&w);
    typed_wrapper(&r, "/tmp/run.py", &w);
    cbuf_append(&w, "", 1);
    s = (const char *)cbuf_head(&w);
    const char *odd = s + at;
    assert_non_null(strstr(odd, "_IN = [('solution.py', 'file', False), "
                                "(b'it\\x27s\\x20\\x5c\\x20\\xc3\\xa9'.decode('utf-8', "
                                "'surrogateescape'), 'str', False), ]\n"));
    assert_non_null(strstr(odd, "_OUT = [('a-b', 'int', False), ]\n"));
    s = odd;
    /* It is Python: checked by the interpreter when there is one. */
    if (access("/usr/bin/python3", X_OK) == 0) {
        char path[] = "/tmp/cella-wrapper-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
        close(fd);
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "/usr/bin/python3 -m py_compile %s", path);
        assert_int_equal(system(cmd), 0);
        unlink(path);
    }
    cbuf_free(&w);
}

/* ---- decoding the typed fields ----------------------------------------------- */

static int decode(const char *body, api_typed_in *x, core_error *e, json_t **j)
{
    *j = NULL;
    if (jin_parse((const uint8_t *)body, strlen(body), j, e) < 0) {
        memset(x, 0, sizeof(*x));
        return -1;
    }
    return api_typed_decode(*j, x, e);
}

static void test_decode(void **state)
{
    api_typed_in x;
    core_error e;
    json_t *j;
    assert_int_equal(decode("{\"image\":\"python\",\"code\":\"y = x\",\"inputs\":{"
                            "\"x\":{\"type\":\"float\",\"value\":2},"
                            "\"d\":{\"type\":\"timedelta\",\"value\":1.5},"
                            "\"f\":{\"type\":\"file\",\"value\":{\"content_b64\":\"AP8=\"}}},"
                            "\"outputs\":{\"y\":\"float\"},\"retries\":2,\"cache\":\"override\"}",
                            &x, &e, &j), 0);
    assert_int_equal(x.r.mode, TM_AUTO_IO);
    assert_string_equal(x.r.run.lang, "python");
    assert_int_equal(x.r.n_inputs, 3);
    assert_string_equal(x.r.inputs[0].name, "x");
    assert_memory_equal(x.r.inputs[0].data, "2.0", 3);
    assert_memory_equal(x.r.inputs[1].data, "1.5", 3);
    assert_int_equal(x.r.inputs[2].len, 2);
    assert_memory_equal(x.r.inputs[2].data, "\0\xff", 2);
    assert_int_equal(x.r.n_outputs, 1);
    assert_int_equal(x.r.retries, 2);
    assert_int_equal(x.r.cache, TC_OVERRIDE);
    api_typed_in_free(&x);
    json_decref(j);

    assert_int_equal(decode("{\"image\":\"shell\",\"command\":[\"sh\",\"-c\",\"x\"],"
                            "\"arguments\":[\"a\"]}", &x, &e, &j), 0);
    assert_int_equal(x.r.mode, TM_COMMAND);
    assert_null(x.r.run.code);
    assert_string_equal(x.r.argv[3], "a");
    assert_null(x.r.argv[4]);
    api_typed_in_free(&x);
    json_decref(j);

    assert_int_equal(decode("{\"image\":\"shell\",\"lang\":\"shell\",\"code\":\"x\","
                            "\"cache\":\"disable\"}", &x, &e, &j), 0);
    assert_int_equal(x.r.mode, TM_VERBATIM);
    api_typed_in_free(&x);
    json_decref(j);

    static const char *const bad[] = {
        "{\"image\":\"p\",\"code\":\"1\",\"inputs\":{\"a/b\":{\"type\":\"int\",\"value\":1}}}",
        "{\"image\":\"p\",\"code\":\"1\",\"inputs\":{\"..\":{\"type\":\"int\",\"value\":1}}}",
        /* auto-IO: the namespace's own names are refused */
        "{\"image\":\"p\",\"code\":\"1\",\"outputs\":{\"__file__\":\"str\"}}",
        "{\"image\":\"p\",\"code\":\"1\",\"inputs\":{\"x\":{\"type\":\"int\",\"value\":1.5}}}",
        "{\"image\":\"p\",\"code\":\"1\",\"inputs\":{\"x\":{\"type\":\"file\",\"value\":{}}}}",
        "{\"image\":\"p\",\"code\":\"1\",\"outputs\":{\"x\":\"folder\"}}",
        "{\"image\":\"p\",\"code\":\"1\",\"inputs\":{\"x\":{\"type\":\"dir\",\"value\":{\"content_b64\":\"\"}}}}",
        "{\"image\":\"p\",\"code\":\"1\",\"command\":[\"ls\"]}",
        "{\"image\":\"p\",\"command\":[\"ls\"],\"auto_io\":true}",
        "{\"image\":\"p\",\"lang\":\"node\",\"code\":\"1\",\"auto_io\":true}",
        "{\"image\":\"p\",\"code\":\"1\",\"arguments\":[]}",
        "{\"image\":\"p\",\"code\":\"1\",\"retries\":11}",
        "{\"image\":\"p\",\"code\":\"1\",\"cache\":\"never\"}",
        "{\"image\":\"p\",\"code\":\"1\",\"other\":1}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(decode(bad[i], &x, &e, &j), -1);
        assert_int_equal(e.code, S001);
        api_typed_in_free(&x);
        json_decref(j);
    }
}

static void test_value_json(void **state)
{
    json_t *v = api_typed_value_json(TT_TIMEDELTA, (const uint8_t *)"-1.5", 4);
    assert_true(json_is_real(v) && json_real_value(v) == -1.5);
    json_decref(v);
    v = api_typed_value_json(TT_TIMEDELTA, (const uint8_t *)"60", 2);
    assert_true(json_is_integer(v) && json_integer_value(v) == 60);
    json_decref(v);
    v = api_typed_value_json(TT_FILE, (const uint8_t *)"hi", 2);
    assert_string_equal(json_string_value(json_object_get(v, "content_b64")), "aGk=");
    json_decref(v);
    v = api_typed_value_json(TT_DIR, (const uint8_t *)"hi", 2);
    assert_string_equal(json_string_value(json_object_get(v, "tar_b64")), "aGk=");
    assert_int_equal(json_object_size(v), 1);
    json_decref(v);
    v = api_typed_value_json(TT_BOOL, (const uint8_t *)"false", 5);
    assert_true(json_is_false(v));
    json_decref(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_and_types),
        cmocka_unit_test(test_scalars),
        cmocka_unit_test(test_datetimes),
        cmocka_unit_test(test_timedeltas),
        cmocka_unit_test(test_cache_key),
        cmocka_unit_test(test_cache_entries),
        cmocka_unit_test(test_wrapper),
        cmocka_unit_test(test_decode),
        cmocka_unit_test(test_value_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
