/* libFuzzer target: loading code mode's dumps (code_run_load), which may
 * come back to the daemon from storage or a client. The first input byte
 * picks how the rest is used:
 *   0: the bytes as they are (the magic, version and checksum checks);
 *   1: the bytes with their checksum made right, so the record's parser
 *      sees them;
 *   2: a real dump (made at start-up from a program with host calls) with
 *      the input applied as patches (u16 offset, u8 xor), checksum made
 *      right: near-valid records, forged counts, other answers and calls;
 *   3: a real dump cut at an input-chosen point, the input appended, the
 *      checksum made right;
 *   4-7: the bytes as tagged JSON (code_json.c), the text every value of a
 *      dump and of the host interface crosses as.
 * Under tight limits (the host's caps, which the dumped limits may not
 * exceed) and a counting allocator. Invariants beyond "no crash":
 *  - a refusal names a ValueError with a message, and hands out no run;
 *  - a load hands out a CALL step listing each pending call in full;
 *  - a record within the caps, loaded, dumps again to the same bytes;
 *  - the loaded run can be answered and freed, and every byte taken from
 *    the memory hook is given back, within the byte limit;
 *  - JSON that decodes encodes to text that decodes again, and encodes to
 *    text of the same length (a set's elements may come in another order);
 *    a refusal is an exception. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "code/code_dump_int.h"
#include "code/code_json.h"
#include "code/code_vm.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

#define LIMIT_BYTES ((size_t)8 << 20)

typedef struct counter {
    size_t live, peak;
} counter;

static void *counting_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    counter *c = ud;
    if (nsize == 0) {
        free(ptr);
        c->live -= osize;
        return NULL;
    }
    /* the hook is the last line: a run must stay within its limit */
    if (nsize > osize && c->live + (nsize - osize) > 2 * LIMIT_BYTES)
        return NULL;
    void *r = realloc(ptr, nsize);
    if (r) {
        c->live += nsize - osize;
        if (c->live > c->peak)
            c->peak = c->live;
    }
    return r;
}

static const code_limits caps = {.max_time_us = 200 * 1000, .max_bytes = LIMIT_BYTES,
                                 .max_allocs = 200000, .max_depth = 100, .max_calls = 50,
                                 .max_nesting = 50};

static char *base;
static size_t base_len;

/* A paused run to mutate: three calls made, two answered. */
static void make_base(void)
{
    static const char src[] =
        "import asyncio\n"
        "def g(x):\n    return [x, (x, 2.5), {'k': x}]\n"
        "a = fetch(n, key='k')\n"
        "print('got', a)\n"
        "try:\n    fetch(g(a))\nexcept KeyError as e:\n    print('err', e)\n"
        "store(a, b'\\x00\\xff', {1, 2})\n";
    static const code_input in[] = {{.name = "n", .json = "{\"$tuple\": [1, 99999999999999999999]}"}};
    static const char *const fns[] = {"fetch", "store"};
    code_run_opts o = {.limits = caps, .inputs = in, .ninputs = 1, .functions = fns,
                       .nfunctions = 2};
    code_run *r;
    code_error err = {0};
    if (code_run_new(src, sizeof(src) - 1, &o, &r, &err) < 0)
        return;
    code_step st;
    memset(&st, 0, sizeof(st));
    code_run_start(r, &st);
    code_result answers[] = {{.call_id = 1, .value_json = "[1, {\"$bytes\": \"AA==\"}]"},
                             {.call_id = 2, .exc_type = "KeyError", .exc_message = "nope"}};
    for (size_t i = 0; i < 2 && st.kind == CODE_STEP_CALL; i++) {
        code_step_clear(&st);
        code_run_resume(r, &answers[i], 1, &st);
    }
    if (st.kind == CODE_STEP_CALL)
        code_run_dump(r, &base, &base_len, &err);
    code_step_clear(&st);
    code_run_free(r);
}

static void fix_checksum(uint8_t *b, size_t len)
{
    if (len < 8)
        return;
    uint64_t h = code_dump_fnv1a(b, len - 8);
    for (int i = 0; i < 8; i++)
        b[len - 8 + i] = (uint8_t)(h >> (8 * i));
}

static bool within_caps(const code_limits *l)
{
    return l->max_time_us && l->max_time_us <= caps.max_time_us && l->max_bytes &&
           l->max_bytes <= caps.max_bytes && l->max_allocs && l->max_allocs <= caps.max_allocs &&
           l->max_depth && l->max_depth <= caps.max_depth && l->max_calls &&
           l->max_calls <= caps.max_calls && l->max_nesting && l->max_nesting <= caps.max_nesting;
}

static void load(const uint8_t *b, size_t len)
{
    counter c = {0};
    code_run_opts o = {.limits = caps, .alloc = counting_alloc, .alloc_ud = &c};
    code_run *r = (code_run *)1;
    code_step st;
    code_error err = {0};
    if (code_run_load((const char *)b, len, &o, &r, &st, &err) < 0) {
        if (r || !err.type || strcmp(err.type, "ValueError") || !err.msg[0])
            abort();
        if (c.live)
            abort();
        return;
    }
    if (!r || st.kind != CODE_STEP_CALL || !st.npending || st.ncalls != st.npending || st.out_len)
        abort();
    for (size_t i = 0; i < st.ncalls; i++)
        if (st.calls[i].id != st.pending[i] || !st.calls[i].function || !st.calls[i].args_json ||
            !st.calls[i].kwargs_json)
            abort();
    code_run_record rec;
    code_error e2 = {0};
    if (code_dump_parse((const char *)b, len, &rec, &e2) < 0)
        abort();
    if (within_caps(&rec.limits)) {
        char *again;
        size_t again_len;
        if (code_run_dump(r, &again, &again_len, &e2) < 0 || again_len != len ||
            memcmp(again, b, len) != 0)
            abort();
        free(again);
    }
    code_dump_record_free(&rec);
    /* answer everything a few times over, then let go */
    for (int round = 0; round < 4 && st.kind == CODE_STEP_CALL && st.npending; round++) {
        code_result res = {.call_id = st.pending[0], .value_json = "[1, \"x\"]"};
        code_step_clear(&st);
        code_run_resume(r, &res, 1, &st);
    }
    code_step_clear(&st);
    code_run_free(r);
    if (c.live || c.peak > 2 * LIMIT_BYTES)
        abort();
}

static void json_round_trip(const uint8_t *d, size_t n)
{
    counter c = {0};
    code_vm vm;
    code_limits l = {.max_bytes = LIMIT_BYTES, .max_depth = 200};
    if (code_vm_init(&vm, &l, counting_alloc, &c) < 0)
        abort();
    cv v = code_json_decode(&vm, (const char *)d, n);
    if (!v) {
        if (!vm.exc)
            abort();
    } else {
        size_t n1, n2;
        char *e1 = code_json_encode(&vm, v, &n1);
        if (e1) {
            cv v2 = code_json_decode(&vm, e1, n1);
            if (!v2 && !code_exc_matches(&vm, &code_exc_MemoryError))
                abort();
            char *e2 = v2 ? code_json_encode(&vm, v2, &n2) : NULL;
            if (e2 && n2 != n1)
                abort();
            free(e2);
            code_decref(&vm, v2);
            free(e1);
        } else if (!vm.exc) {
            abort();
        }
        code_decref(&vm, v);
    }
    code_vm_destroy(&vm);
    if (c.live)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    static bool started;
    if (!started) {
        started = true;
        make_base();
    }
    if (n < 1 || n > (1 << 16))
        return 0;
    int mode = d[0] & 7;
    d++, n--;
    if (mode >= 4) {
        json_round_trip(d, n);
        return 0;
    }
    if (mode == 0) {
        load(d, n);
        return 0;
    }
    if (mode == 1) {
        uint8_t *b = malloc(n ? n : 1);
        memcpy(b, d, n);
        fix_checksum(b, n);
        load(b, n);
        free(b);
        return 0;
    }
    if (!base)
        return 0;
    size_t len = base_len, cut = len;
    if (mode == 3) {
        cut = n >= 2 ? (size_t)(d[0] | d[1] << 8) % (base_len - 7) : base_len - 8;
        d += n >= 2 ? 2 : n;
        n -= n >= 2 ? 2 : n;
        len = cut + n + 8;
    }
    uint8_t *b = malloc(len);
    memcpy(b, base, cut < base_len ? cut : base_len);
    if (mode == 2) {
        for (size_t i = 0; i + 3 <= n; i += 3) {
            size_t at = (size_t)(d[i] | d[i + 1] << 8) % (len - 8);
            b[at] ^= d[i + 2];
        }
    } else {
        memcpy(b + cut, d, n);
    }
    fix_checksum(b, len);
    load(b, len);
    free(b);
    return 0;
}
