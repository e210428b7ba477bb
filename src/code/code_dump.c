/* A paused run as bytes, and back (code_run_dump, code_run_load).
 *
 * What is written is not the interpreter's memory but the run's record
 * (code_run_int.h): its source, options and the host's answers in order.
 * Loading recompiles the source and replays the answers; since a run is
 * deterministic, it pauses exactly where it was dumped. So nothing read from
 * a dump ever becomes a pointer, an index into the heap or bytecode: hostile
 * bytes can at worst describe another program with other answers, which
 * runs under the same limits as any program would. The loader still checks
 * every length and count against the bytes that remain and against sane
 * caps before it allocates anything, and that every text is UTF-8 without
 * NUL, and it checks while replaying that the run makes the recorded calls.
 *
 * Layout (integers little-endian; a "str" is a u32 length and its bytes):
 *   "CELLACD\x01"  u32 format version  str build identity
 *   str source
 *   u64 max_time_us u64 max_bytes u64 max_allocs u32 max_depth u32 max_calls
 *   u32 max_nesting
 *   u8 flags (1: top_level_await, 2: functions declared)
 *   u32 ninputs, each: str name, str json
 *   u32 nfunctions, each: str
 *   u32 ncalls, each: str function (call ids are 1..ncalls)
 *   u32 nbatches, each: u32 n, each: u64 call_id, u8 kind,
 *       kind 0: str value_json; kind 1: str exc_type, str exc_message
 *   u64 out_len
 *   u64 FNV-1a of everything before it (integrity against accidents, not
 *       forgery: a forged dump is just another program)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code/code_dump_int.h"
#include "code/code_json_int.h"
#include "code/code_run_int.h"

const char *code_dump_identity(char *buf, size_t cap)
{
    /* The record is replayed, not mapped, so layouts do not matter; the
     * version does (another build may run the same program differently),
     * and the sizes catch a dump carried to a different ABI. */
    snprintf(buf, cap, "cella %s code-dump; ptr %zu; limits %zu; double %zu", CELLA_VERSION,
             sizeof(void *), sizeof(code_limits), sizeof(double));
    return buf;
}

uint64_t code_dump_fnv1a(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* ---- writing ---- */

typedef struct wbuf {
    char *p;
    size_t len, cap;
    bool too_big;                /* a text past a u32 length */
} wbuf;

static void w_raw(wbuf *b, const void *s, size_t n)
{
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len < n)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p)
            abort();             /* real out-of-memory */
        b->p = p;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void w_le(wbuf *b, uint64_t v, int bytes)
{
    unsigned char o[8];
    for (int i = 0; i < bytes; i++)
        o[i] = (unsigned char)(v >> (8 * i));
    w_raw(b, o, (size_t)bytes);
}

static void w_str(wbuf *b, const char *s, size_t n)
{
    if (n > UINT32_MAX) {
        b->too_big = true;
        n = 0;
    }
    w_le(b, n, 4);
    w_raw(b, s, n);
}

static void w_cstr(wbuf *b, const char *s) { w_str(b, s ? s : "", s ? strlen(s) : 0); }

static void w_count(wbuf *b, size_t n)
{
    if (n > UINT32_MAX)
        b->too_big = true;
    w_le(b, n, 4);
}

int code_dump_write(const code_run_record *rec, char **buf, size_t *len, code_error *err)
{
    *buf = NULL;
    *len = 0;
    wbuf b = {0};
    char ident[128];
    w_raw(&b, CODE_DUMP_MAGIC, CODE_DUMP_MAGIC_LEN);
    w_le(&b, CODE_DUMP_VERSION, 4);
    w_cstr(&b, code_dump_identity(ident, sizeof(ident)));
    w_str(&b, rec->src, rec->src_len);
    w_le(&b, rec->limits.max_time_us, 8);
    w_le(&b, rec->limits.max_bytes, 8);
    w_le(&b, rec->limits.max_allocs, 8);
    w_le(&b, rec->limits.max_depth, 4);
    w_le(&b, rec->limits.max_calls, 4);
    w_le(&b, rec->limits.max_nesting, 4);
    w_le(&b, (rec->top_level_await ? 1u : 0u) | (rec->functions ? 2u : 0u), 1);
    w_count(&b, rec->ninputs);
    for (size_t i = 0; i < rec->ninputs; i++) {
        w_cstr(&b, rec->inputs[i].name);
        w_cstr(&b, rec->inputs[i].json);
    }
    w_count(&b, rec->functions ? rec->nfunctions : 0);
    for (size_t i = 0; rec->functions && i < rec->nfunctions; i++)
        w_cstr(&b, rec->functions[i]);
    w_count(&b, rec->ncalls);
    for (size_t i = 0; i < rec->ncalls; i++)
        w_cstr(&b, rec->calls[i].function);
    w_count(&b, rec->nbatches);
    for (size_t i = 0; i < rec->nbatches; i++) {
        const code_rec_batch *bt = &rec->batches[i];
        w_count(&b, bt->n);
        for (size_t k = 0; k < bt->n; k++) {
            const code_rec_result *res = &bt->results[k];
            w_le(&b, res->call_id, 8);
            w_le(&b, res->exc_type ? 1 : 0, 1);
            if (res->exc_type) {
                w_cstr(&b, res->exc_type);
                w_cstr(&b, res->exc_message);
            } else {
                w_cstr(&b, res->value_json);
            }
        }
    }
    w_le(&b, rec->out_len, 8);
    if (b.too_big) {
        free(b.p);
        return code_error_set(err, "ValueError", 0, 0, "the run is too large to dump");
    }
    w_le(&b, code_dump_fnv1a(b.p, b.len), 8);
    *buf = b.p;
    *len = b.len;
    return 0;
}
