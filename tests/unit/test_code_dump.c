/* Code mode's dumps: the record written and read back field by field, and
 * the loader against hostile bytes (every truncation, every corrupted byte,
 * another version or build, forged lengths and counts, bad text); then real
 * runs dumped and loaded by replay. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code/code_dump_int.h"

/* ---- a record to write ---- */

static code_input inputs[] = {{.name = "n", .json = "3"}, {.name = "cfg", .json = "{\"a\": [1]}"}};
static char *functions[] = {"fetch", "store"};
static code_rec_call calls[] = {{.function = "fetch"}, {.function = "fetch"}, {.function = "store"}};
static code_rec_result batch1[] = {{.call_id = 1, .value_json = "[1, 2]"}};
static code_rec_result batch2[] = {
    {.call_id = 3, .exc_type = "KeyError", .exc_message = "k\xc3\xa9"},
    {.call_id = 2, .value_json = "{\"$int\": \"123456789012345678901234567890\"}"}};
static code_rec_batch batches[] = {{.results = batch1, .n = 1}, {.results = batch2, .n = 2}};

static code_run_record sample(void)
{
    static char src[] = "a = fetch(n)\nb = fetch(a)\nstore(b)\nprint('done')\n";
    return (code_run_record){
        .src = src, .src_len = sizeof(src) - 1,
        .limits = {.max_time_us = 5000000, .max_bytes = 1 << 20, .max_allocs = 77,
                   .max_depth = 50, .max_calls = 9, .max_nesting = 20},
        .inputs = inputs, .ninputs = 2, .functions = functions, .nfunctions = 2,
        .top_level_await = true, .batches = batches, .nbatches = 2, .calls = calls,
        .ncalls = 3, .out_len = 12,
    };
}

static char *dump_of(const code_run_record *rec, size_t *len)
{
    char *buf;
    code_error err = {0};
    assert_int_equal(code_dump_write(rec, &buf, len, &err), 0);
    return buf;
}

/* Parse must fail with a ValueError whose message contains want. */
static void refused(const char *buf, size_t len, const char *want)
{
    code_run_record rec;
    code_error err = {0};
    int rc = code_dump_parse(buf, len, &rec, &err);
    if (rc == 0) {
        code_dump_record_free(&rec);
        fail_msg("accepted, wanted '%s'", want ? want : "an error");
    }
    assert_string_equal(err.type, "ValueError");
    if (want && !strstr(err.msg, want))
        fail_msg("message '%s' lacks '%s'", err.msg, want);
    assert_null(rec.src);
}

static void fix_checksum(char *buf, size_t len)
{
    uint64_t h = code_dump_fnv1a(buf, len - 8);
    for (int i = 0; i < 8; i++)
        buf[len - 8 + i] = (char)(h >> (8 * i));
}

static void put_u32(char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (char)(v >> (8 * i));
}

/* Offsets in sample()'s dump. */
static size_t off_src(void)
{
    char ident[128];
    return CODE_DUMP_MAGIC_LEN + 4 + 4 + strlen(code_dump_identity(ident, sizeof(ident)));
}
static size_t off_ninputs(void) { return off_src() + 4 + sample().src_len + 3 * 8 + 3 * 4 + 1; }

/* The offsets of every u32 length and count in sample()'s dump. */
static size_t fields(size_t *at)
{
    code_run_record r = sample();
    char ident[128];
    size_t n = 0, pos = CODE_DUMP_MAGIC_LEN + 4;
#define STR(len) (at[n++] = pos, pos += 4 + (len))
#define COUNT() (at[n++] = pos, pos += 4)
    STR(strlen(code_dump_identity(ident, sizeof(ident))));
    STR(r.src_len);
    pos += 3 * 8 + 3 * 4 + 1;
    COUNT();
    for (size_t i = 0; i < r.ninputs; i++) {
        STR(strlen(r.inputs[i].name));
        STR(strlen(r.inputs[i].json));
    }
    COUNT();
    for (size_t i = 0; i < r.nfunctions; i++)
        STR(strlen(r.functions[i]));
    COUNT();
    for (size_t i = 0; i < r.ncalls; i++)
        STR(strlen(r.calls[i].function));
    COUNT();
    for (size_t i = 0; i < r.nbatches; i++) {
        COUNT();
        for (size_t k = 0; k < r.batches[i].n; k++) {
            const code_rec_result *x = &r.batches[i].results[k];
            pos += 9;
            if (x->exc_type) {
                STR(strlen(x->exc_type));
                STR(strlen(x->exc_message));
            } else {
                STR(strlen(x->value_json));
            }
        }
    }
#undef STR
#undef COUNT
    return n;
}

static void test_roundtrip(void **state)
{
    (void)state;
    code_run_record in = sample(), out;
    size_t len;
    char *buf = dump_of(&in, &len);
    assert_memory_equal(buf, "CELLACD\x01", 8);
    code_error err = {0};
    assert_int_equal(code_dump_parse(buf, len, &out, &err), 0);
    assert_int_equal(out.src_len, in.src_len);
    assert_memory_equal(out.src, in.src, in.src_len);
    assert_int_equal(out.limits.max_time_us, in.limits.max_time_us);
    assert_int_equal(out.limits.max_bytes, in.limits.max_bytes);
    assert_int_equal(out.limits.max_allocs, in.limits.max_allocs);
    assert_int_equal(out.limits.max_depth, in.limits.max_depth);
    assert_int_equal(out.limits.max_calls, in.limits.max_calls);
    assert_int_equal(out.limits.max_nesting, in.limits.max_nesting);
    assert_true(out.top_level_await);
    assert_int_equal(out.ninputs, 2);
    assert_string_equal(out.inputs[1].name, "cfg");
    assert_string_equal(out.inputs[1].json, "{\"a\": [1]}");
    assert_int_equal(out.nfunctions, 2);
    assert_string_equal(out.functions[1], "store");
    assert_int_equal(out.ncalls, 3);
    assert_string_equal(out.calls[2].function, "store");
    assert_int_equal(out.nbatches, 2);
    assert_int_equal(out.batches[1].n, 2);
    assert_int_equal(out.batches[1].results[0].call_id, 3);
    assert_null(out.batches[1].results[0].value_json);
    assert_string_equal(out.batches[1].results[0].exc_type, "KeyError");
    assert_string_equal(out.batches[1].results[0].exc_message, "k\xc3\xa9");
    assert_string_equal(out.batches[1].results[1].value_json, batch2[1].value_json);
    assert_int_equal(out.out_len, 12);
    /* and it writes back to the same bytes */
    size_t len2;
    char *buf2 = dump_of(&out, &len2);
    assert_int_equal(len, len2);
    assert_memory_equal(buf, buf2, len);
    free(buf2);
    code_dump_record_free(&out);
    free(buf);
}

static void test_functions_declared_or_not(void **state)
{
    (void)state;
    code_run_record in = sample(), out;
    in.functions = NULL;        /* none declared: any unbound name is a host call */
    in.nfunctions = 0;
    size_t len;
    char *buf = dump_of(&in, &len);
    code_error err = {0};
    assert_int_equal(code_dump_parse(buf, len, &out, &err), 0);
    assert_null(out.functions);
    code_dump_record_free(&out);
    free(buf);
    char *none[1] = {NULL};
    in.functions = none;        /* declared, and the list is empty */
    buf = dump_of(&in, &len);
    assert_int_equal(code_dump_parse(buf, len, &out, &err), 0);
    assert_non_null(out.functions);
    assert_int_equal(out.nfunctions, 0);
    code_dump_record_free(&out);
    free(buf);
}

static void test_truncated(void **state)
{
    (void)state;
    code_run_record in = sample();
    size_t len;
    char *buf = dump_of(&in, &len);
    for (size_t n = 0; n < len; n++) {
        char *copy = malloc(n ? n : 1);   /* exactly n bytes: ASan sees any overread */
        memcpy(copy, buf, n);
        refused(copy, n, NULL);
        /* a truncation with its checksum made right again is still refused */
        if (n >= CODE_DUMP_MAGIC_LEN + 4 + 8) {
            fix_checksum(copy, n);
            refused(copy, n, NULL);
        }
        free(copy);
    }
    free(buf);
}

static void test_corrupted(void **state)
{
    (void)state;
    code_run_record in = sample();
    size_t len;
    char *buf = dump_of(&in, &len);
    for (size_t i = 0; i < len; i++) {
        buf[i] ^= 0x5a;
        refused(buf, len, NULL);
        buf[i] ^= 0x5a;
    }
    buf[off_src() + 10] ^= 1;
    refused(buf, len, "checksum");
    free(buf);
}

static void test_not_a_dump(void **state)
{
    (void)state;
    refused("", 0, "not a code dump");
    refused("CELLACD", 7, "not a code dump");
    refused("CELLACD\x02xxxxxxxxxxxxxxxxxxx", 27, "not a code dump");
    refused("PK\x03\x04 something else entirely", 28, "not a code dump");
}

static void test_other_version_or_build(void **state)
{
    (void)state;
    code_run_record in = sample();
    size_t len;
    char *buf = dump_of(&in, &len);
    put_u32(buf + CODE_DUMP_MAGIC_LEN, 2);
    fix_checksum(buf, len);
    refused(buf, len, "version 2 is not supported");
    put_u32(buf + CODE_DUMP_MAGIC_LEN, CODE_DUMP_VERSION);
    buf[CODE_DUMP_MAGIC_LEN + 4 + 4] ^= 0x20;   /* "cella" -> "Cella" */
    fix_checksum(buf, len);
    refused(buf, len, "another build");
    free(buf);
}

static void test_forged_counts(void **state)
{
    (void)state;
    code_run_record in = sample();
    size_t len;
    char *buf = dump_of(&in, &len);
    char *b = malloc(len);
    const uint32_t forged[] = {0xffffffffu, 0x7fffffffu, 1000001u, 100000u, 3u, 1u, 0u};
    /* the source's length, the count of inputs */
    size_t offs[] = {off_src(), off_ninputs()};
    for (size_t o = 0; o < 2; o++)
        for (size_t k = 0; k < sizeof(forged) / sizeof(*forged); k++) {
            memcpy(b, buf, len);
            put_u32(b + offs[o], forged[k]);
            fix_checksum(b, len);
            refused(b, len, NULL);
        }
    /* every length and count in the dump forged, one at a time */
    size_t at[64], n = fields(at);
    assert_true(n > 20);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < sizeof(forged) / sizeof(*forged); k++) {
            uint32_t was = (uint32_t)(unsigned char)buf[at[i]] |
                           (uint32_t)(unsigned char)buf[at[i] + 1] << 8;
            if (forged[k] == was)
                continue;
            memcpy(b, buf, len);
            put_u32(b + at[i], forged[k]);
            fix_checksum(b, len);
            refused(b, len, NULL);
        }
    free(b);
    free(buf);
}

/* A record that is well-formed but says impossible things. */
static void test_impossible_records(void **state)
{
    (void)state;
    code_run_record in = sample();
    size_t len;
    char *buf;
    code_rec_result bad_id[] = {{.call_id = 4, .value_json = "1"}};
    code_rec_batch b1[] = {{.results = bad_id, .n = 1}};
    in.batches = b1;
    in.nbatches = 1;
    buf = dump_of(&in, &len);
    refused(buf, len, "never made");
    free(buf);

    bad_id[0].call_id = 0;
    buf = dump_of(&in, &len);
    refused(buf, len, "never made");
    free(buf);

    code_rec_batch empty[] = {{.results = NULL, .n = 0}};
    in = sample();
    in.batches = empty;
    in.nbatches = 1;
    buf = dump_of(&in, &len);
    refused(buf, len, NULL);    /* too short for a batch, or an empty batch */
    free(buf);

    in = sample();
    char bad_src[] = "x = '\xff'\n";
    in.src = bad_src;
    in.src_len = sizeof(bad_src) - 1;
    buf = dump_of(&in, &len);
    refused(buf, len, "not UTF-8");
    free(buf);

    char nul_src[] = "x = 1\0\n";
    in.src = nul_src;
    in.src_len = sizeof(nul_src) - 1;
    buf = dump_of(&in, &len);
    refused(buf, len, "without NUL");
    free(buf);

    in = sample();
    code_rec_call surrogate[] = {{.function = "f\xed\xa0\x80"}, {.function = "g"}, {.function = "h"}};
    in.calls = surrogate;
    buf = dump_of(&in, &len);
    refused(buf, len, "not UTF-8");
    free(buf);

    /* bytes after the record, checksum made right */
    in = sample();
    buf = dump_of(&in, &len);
    char *longer = malloc(len + 3);
    memcpy(longer, buf, len - 8);
    memcpy(longer + len - 8, "xyz", 3);
    fix_checksum(longer, len + 3);
    refused(longer, len + 3, "after the record");
    free(longer);
    /* unknown flags */
    buf[off_ninputs() - 1] |= 4;
    fix_checksum(buf, len);
    refused(buf, len, "flags");
    free(buf);
}

/* ---- real runs: dumped, loaded by replay ---- */

static const char *const fg[] = {"f", "g"};

static code_run *start(const char *src, const code_run_opts *o, code_step *st)
{
    code_run *r;
    code_error err = {0};
    if (code_run_new(src, strlen(src), o, &r, &err) < 0)
        fail_msg("%s: %s", err.type, err.msg);
    memset(st, 0, sizeof(*st));
    code_run_start(r, st);
    return r;
}

static void resume1(code_run *r, code_step *st, uint64_t id, const char *json)
{
    code_result res = {.call_id = id, .value_json = json};
    code_step_clear(st);
    code_run_resume(r, &res, 1, st);
}

static char *dump_run(code_run *r, size_t *len)
{
    char *buf;
    code_error err = {0};
    if (code_run_dump(r, &buf, len, &err) < 0)
        fail_msg("dump: %s: %s", err.type, err.msg);
    return buf;
}

static code_run *load(const char *buf, size_t len, const code_run_opts *o, code_step *st)
{
    code_run *r;
    code_error err = {0};
    if (code_run_load(buf, len, o, &r, st, &err) < 0)
        fail_msg("load: %s: %s", err.type, err.msg);
    return r;
}

static void load_refused(const char *buf, size_t len, const char *want)
{
    code_run *r = (code_run *)1;
    code_step st;
    code_error err = {0};
    if (code_run_load(buf, len, NULL, &r, &st, &err) == 0)
        fail_msg("loaded, wanted '%s'", want);
    assert_null(r);
    assert_string_equal(err.type, "ValueError");
    if (!strstr(err.msg, want))
        fail_msg("'%s' lacks '%s'", err.msg, want);
}

static const char two_calls[] = "a = f(1)\nprint('x')\nb = g(a, k=2)\nprint('y')\n[a, b]\n";

static void test_replay_two_calls(void **state)
{
    (void)state;
    code_run_opts o = {.functions = fg, .nfunctions = 2};
    code_step st;
    code_run *r = start(two_calls, &o, &st);
    assert_int_equal(st.kind, CODE_STEP_CALL);
    assert_string_equal(st.calls[0].function, "f");
    resume1(r, &st, 1, "10");
    assert_int_equal(st.kind, CODE_STEP_CALL);
    assert_int_equal(st.out_len, 2);
    size_t len;
    char *buf = dump_run(r, &len);
    code_step_clear(&st);
    code_run_free(r);

    r = load(buf, len, NULL, &st);
    assert_int_equal(st.kind, CODE_STEP_CALL);
    assert_int_equal(st.ncalls, 1);
    assert_int_equal(st.npending, 1);
    assert_int_equal(st.calls[0].id, 2);
    assert_string_equal(st.calls[0].function, "g");
    assert_string_equal(st.calls[0].args_json, "[10]");
    assert_string_equal(st.calls[0].kwargs_json, "{\"k\":2}");
    assert_int_equal(st.out_len, 0);
    /* dumped again at once: the same bytes */
    size_t len2;
    char *buf2 = dump_run(r, &len2);
    assert_int_equal(len, len2);
    assert_memory_equal(buf, buf2, len);
    free(buf2);
    resume1(r, &st, 2, "5");
    assert_int_equal(st.kind, CODE_STEP_COMPLETE);
    assert_string_equal(st.result_json, "[10,5]");
    assert_int_equal(st.out_len, 2);           /* "y\n" only: "x\n" was handed over before */
    assert_memory_equal(st.out, "y\n", 2);
    code_step_clear(&st);
    /* a run that has ended is not dumped */
    code_error err = {0};
    char *b3;
    size_t l3;
    assert_int_equal(code_run_dump(r, &b3, &l3, &err), -1);
    code_run_free(r);
    free(buf);
}

static void test_replay_first_call_and_errors(void **state)
{
    (void)state;
    static const char src[] =
        "try:\n    f()\nexcept KeyError as e:\n    print('caught', e)\nx = f()\nx\n";
    code_step st;
    code_run *r = start(src, NULL, &st);
    size_t len;
    char *buf = dump_run(r, &len);            /* at the first call: no answers yet */
    code_result res = {.call_id = 1, .exc_type = "KeyError", .exc_message = "k"};
    code_step_clear(&st);
    code_run_resume(r, &res, 1, &st);
    assert_int_equal(st.kind, CODE_STEP_CALL);
    size_t len2;
    char *buf2 = dump_run(r, &len2);          /* after an exception as the answer */
    code_step_clear(&st);
    code_run_free(r);

    r = load(buf, len, NULL, &st);
    assert_int_equal(st.calls[0].id, 1);
    code_step_clear(&st);
    code_run_free(r);

    r = load(buf2, len2, NULL, &st);
    assert_int_equal(st.calls[0].id, 2);
    resume1(r, &st, 2, "{\"$tuple\": [1]}");
    assert_int_equal(st.kind, CODE_STEP_COMPLETE);
    assert_string_equal(st.result_json, "{\"$tuple\":[1]}");
    code_step_clear(&st);
    code_run_free(r);
    free(buf);
    free(buf2);
}

static void test_replay_gather(void **state)
{
    (void)state;
    static const char src[] = "import asyncio\nr = await asyncio.gather(f(1), f(2), f(3))\nr\n";
    code_run_opts o = {.top_level_await = true};
    code_step st;
    code_run *r = start(src, &o, &st);
    assert_int_equal(st.kind, CODE_STEP_CALL);
    assert_int_equal(st.ncalls, 3);
    resume1(r, &st, 2, "\"b\"");
    assert_int_equal(st.kind, CODE_STEP_CALL);
    assert_int_equal(st.npending, 2);
    size_t len;
    char *buf = dump_run(r, &len);
    code_step_clear(&st);
    code_run_free(r);

    r = load(buf, len, &o, &st);
    assert_int_equal(st.ncalls, 2);
    assert_int_equal(st.npending, 2);
    uint64_t ids[2] = {st.calls[0].id, st.calls[1].id};
    assert_true((ids[0] == 1 && ids[1] == 3) || (ids[0] == 3 && ids[1] == 1));
    for (int i = 0; i < 2; i++) {
        char want[8];
        snprintf(want, sizeof(want), "[%d]", (int)st.calls[i].id);
        assert_string_equal(st.calls[i].args_json, want);
    }
    code_result res[2] = {{.call_id = 3, .value_json = "\"c\""},
                          {.call_id = 1, .value_json = "\"a\""}};
    code_step_clear(&st);
    code_run_resume(r, res, 2, &st);
    assert_int_equal(st.kind, CODE_STEP_COMPLETE);
    assert_string_equal(st.result_json, "[\"a\",\"b\",\"c\"]");
    code_step_clear(&st);
    code_run_free(r);
    free(buf);
}

/* A well-formed record the run does not follow. */
static void test_replay_refused(void **state)
{
    (void)state;
    code_run_opts o = {.functions = fg, .nfunctions = 2};
    code_step st;
    code_run *r = start(two_calls, &o, &st);
    resume1(r, &st, 1, "10");
    code_step_clear(&st);
    code_run_record rec;
    size_t len;
    char *buf = dump_run(r, &len);
    code_run_free(r);
    code_error err = {0};
    assert_int_equal(code_dump_parse(buf, len, &rec, &err), 0);

    char *b2;
    size_t l2;
    /* another function named for call 1 */
    free(rec.calls[0].function);
    rec.calls[0].function = strdup("g");
    b2 = dump_of(&rec, &l2);
    load_refused(b2, l2, "does not replay");
    free(b2);
    free(rec.calls[0].function);
    rec.calls[0].function = strdup("f");
    /* a call more than the run makes */
    code_rec_call *more = calloc(3, sizeof(*more));
    more[0] = rec.calls[0];
    more[1] = rec.calls[1];
    more[2].function = strdup("g");
    code_rec_call *was = rec.calls;
    rec.calls = more;
    rec.ncalls = 3;
    b2 = dump_of(&rec, &l2);
    load_refused(b2, l2, "does not replay");
    free(b2);
    free(more[2].function);
    free(more);
    rec.calls = was;
    rec.ncalls = 2;
    /* the answer's value is not JSON */
    char *v = rec.batches[0].results[0].value_json;
    rec.batches[0].results[0].value_json = "[1,";
    b2 = dump_of(&rec, &l2);
    load_refused(b2, l2, "does not replay");
    free(b2);
    rec.batches[0].results[0].value_json = v;
    /* another program */
    char *src = rec.src;
    rec.src = "f(1)\n";
    rec.src_len = 5;
    b2 = dump_of(&rec, &l2);
    load_refused(b2, l2, "does not replay");
    free(b2);
    rec.src = "f(1\n";
    rec.src_len = 4;
    b2 = dump_of(&rec, &l2);
    load_refused(b2, l2, "SyntaxError");
    free(b2);
    rec.src = src;
    code_dump_record_free(&rec);
    free(buf);
}

static void *counting_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    size_t *live = ud;
    if (nsize == 0) {
        free(ptr);
        *live -= osize;
        return NULL;
    }
    void *p = realloc(ptr, nsize);
    if (p)
        *live += nsize - osize;
    return p;
}

/* The host's allocator is used, everything is given back, and the host's
 * limits cap the dumped ones. */
static void test_replay_alloc_and_caps(void **state)
{
    (void)state;
    static const char src[] = "s = 'x' * 100000\nn = f()\nlen(s) + n\n";
    code_step st;
    code_run *r = start(src, NULL, &st);
    size_t len;
    char *buf = dump_run(r, &len);
    code_step_clear(&st);
    code_run_free(r);

    size_t live = 0;
    code_run_opts o = {.alloc = counting_alloc, .alloc_ud = &live};
    r = load(buf, len, &o, &st);
    assert_true(live > 100000);
    resume1(r, &st, 1, "1");
    assert_string_equal(st.result_json, "100001");
    code_step_clear(&st);
    code_run_free(r);
    assert_int_equal(live, 0);

    /* the host allows 64 KiB: the replay cannot make the string */
    o.limits.max_bytes = 64 * 1024;
    code_error err = {0};
    r = (code_run *)1;
    assert_int_equal(code_run_load(buf, len, &o, &r, &st, &err), -1);
    assert_null(r);
    assert_non_null(strstr(err.msg, "MemoryError"));
    assert_int_equal(live, 0);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_functions_declared_or_not),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_corrupted),
        cmocka_unit_test(test_not_a_dump),
        cmocka_unit_test(test_other_version_or_build),
        cmocka_unit_test(test_forged_counts),
        cmocka_unit_test(test_impossible_records),
        cmocka_unit_test(test_replay_two_calls),
        cmocka_unit_test(test_replay_first_call_and_errors),
        cmocka_unit_test(test_replay_gather),
        cmocka_unit_test(test_replay_refused),
        cmocka_unit_test(test_replay_alloc_and_caps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
