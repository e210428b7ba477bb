/* Loading a dump (the format is described in code_dump.c): the bytes are
 * hostile, so they are parsed into an owned record with every length and
 * count checked first, then the record is replayed through the ordinary
 * host interface (code_run_new, code_run_start, code_run_resume), checking
 * at each step that the run makes the calls the record says it made. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code/code_dump_int.h"
#include "code/code_json_int.h"

typedef struct rd {
    const unsigned char *p;
    size_t n, pos;               /* n: where the checksum begins */
    code_error *err;
} rd;

static int bad(rd *r, const char *what)
{
    return code_error_set(r->err, "ValueError", 0, 0, "invalid code dump at byte %zu: %s",
                          r->pos, what);
}

static int r_le(rd *r, int bytes, uint64_t *v)
{
    if (r->n - r->pos < (size_t)bytes)
        return bad(r, "truncated");
    uint64_t x = 0;
    for (int i = bytes - 1; i >= 0; i--)
        x = x << 8 | r->p[r->pos + (size_t)i];
    r->pos += (size_t)bytes;
    *v = x;
    return 0;
}

static int r_u32(rd *r, uint32_t *v)
{
    uint64_t x = 0;
    if (r_le(r, 4, &x) < 0)
        return -1;
    *v = (uint32_t)x;
    return 0;
}

/* A count of items of at least min_size bytes each: no more than the bytes
 * left could hold, nor than cap. */
static int r_count(rd *r, size_t min_size, size_t cap, size_t *out)
{
    uint32_t n = 0;
    if (r_u32(r, &n) < 0)
        return -1;
    if (n > cap || n > (r->n - r->pos) / min_size)
        return bad(r, "a count larger than the dump can hold");
    *out = n;
    return 0;
}

/* A text: well-formed UTF-8 without NUL (they are C strings to the host
 * interface), copied and NUL-terminated. */
static int r_str(rd *r, size_t cap, char **out, size_t *outlen)
{
    uint32_t n = 0;
    if (r_u32(r, &n) < 0)
        return -1;
    if (n > cap || n > r->n - r->pos)
        return bad(r, "a length larger than the dump can hold");
    const char *s = (const char *)r->p + r->pos;
    if (memchr(s, 0, n) || !code_json_utf8_valid(s, n))
        return bad(r, "a text that is not UTF-8 without NUL");
    char *c = malloc((size_t)n + 1);
    if (!c)
        abort();
    memcpy(c, s, n);
    c[n] = 0;
    r->pos += n;
    *out = c;
    if (outlen)
        *outlen = n;
    return 0;
}

void code_dump_record_free(code_run_record *rec)
{
    free(rec->src);
    for (size_t i = 0; i < rec->ninputs; i++) {
        free((char *)rec->inputs[i].name);
        free((char *)rec->inputs[i].json);
    }
    free(rec->inputs);
    for (size_t i = 0; rec->functions && i < rec->nfunctions; i++)
        free(rec->functions[i]);
    free(rec->functions);
    for (size_t i = 0; i < rec->ncalls; i++)
        free(rec->calls[i].function);
    free(rec->calls);
    for (size_t i = 0; i < rec->nbatches; i++) {
        code_rec_batch *b = &rec->batches[i];
        for (size_t k = 0; k < b->n; k++) {
            free(b->results[k].value_json);
            free(b->results[k].exc_type);
            free(b->results[k].exc_message);
        }
        free(b->results);
    }
    free(rec->batches);
    memset(rec, 0, sizeof(*rec));
}

static void *calloc_or_die(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        abort();
    return p;
}

static int parse_limits(rd *r, code_limits *l)
{
    uint64_t t = 0, b = 0, a = 0, d = 0, c = 0, n = 0;
    if (r_le(r, 8, &t) < 0 || r_le(r, 8, &b) < 0 || r_le(r, 8, &a) < 0 || r_le(r, 4, &d) < 0 ||
        r_le(r, 4, &c) < 0 || r_le(r, 4, &n) < 0)
        return -1;
    if (b > SIZE_MAX || a > SIZE_MAX)
        return bad(r, "a limit out of range");
    *l = (code_limits){.max_time_us = t, .max_bytes = (size_t)b, .max_allocs = (size_t)a,
                       .max_depth = (uint32_t)d, .max_calls = (uint32_t)c,
                       .max_nesting = (uint32_t)n};
    return 0;
}

static int parse_batches(rd *r, code_run_record *rec)
{
    /* each batch answers at least one call, and each call is answered once */
    if (r_count(r, 4 + 13, rec->ncalls, &rec->nbatches) < 0)
        return -1;
    rec->batches = calloc_or_die(rec->nbatches, sizeof(*rec->batches));
    size_t answered = 0;
    for (size_t i = 0; i < rec->nbatches; i++) {
        code_rec_batch *b = &rec->batches[i];
        size_t n = 0;
        if (r_count(r, 13, rec->ncalls - answered, &n) < 0)
            return -1;
        if (n == 0)
            return bad(r, "an empty batch of answers");
        b->results = calloc_or_die(n, sizeof(*b->results));
        while (b->n < n) {
            /* counted before it is filled: freed whatever happens */
            code_rec_result *res = &b->results[b->n++];
            uint64_t id = 0, kind = 0;
            if (r_le(r, 8, &id) < 0 || r_le(r, 1, &kind) < 0)
                return -1;
            if (id == 0 || id > rec->ncalls)
                return bad(r, "an answer to a call that was never made");
            res->call_id = id;
            if (kind == 0) {
                if (r_str(r, CODE_DUMP_MAX_TEXT, &res->value_json, NULL) < 0)
                    return -1;
            } else if (kind == 1) {
                if (r_str(r, 256, &res->exc_type, NULL) < 0 ||
                    r_str(r, CODE_DUMP_MAX_TEXT, &res->exc_message, NULL) < 0)
                    return -1;
            } else {
                return bad(r, "an answer of unknown kind");
            }
        }
        answered += n;
    }
    return 0;
}

static int parse_body(rd *r, code_run_record *rec)
{
    char ident[128], *theirs;
    if (r_str(r, 256, &theirs, NULL) < 0)
        return -1;
    if (strcmp(theirs, code_dump_identity(ident, sizeof(ident))) != 0) {
        code_error_set(r->err, "ValueError", 0, 0,
                       "the dump was made by another build (%.100s; this is %.100s)", theirs,
                       ident);
        free(theirs);
        return -1;
    }
    free(theirs);
    uint64_t flags = 0;
    if (r_str(r, CODE_DUMP_MAX_SRC, &rec->src, &rec->src_len) < 0 ||
        parse_limits(r, &rec->limits) < 0 || r_le(r, 1, &flags) < 0)
        return -1;
    if (flags & ~3u)
        return bad(r, "unknown flags");
    rec->top_level_await = flags & 1;
    if (r_count(r, 8, CODE_DUMP_MAX_COUNT, &rec->ninputs) < 0)
        return -1;
    rec->inputs = calloc_or_die(rec->ninputs, sizeof(*rec->inputs));
    for (size_t i = 0; i < rec->ninputs; i++) {
        char *name = NULL, *json = NULL;
        int rc = r_str(r, 256, &name, NULL);
        if (rc == 0)
            rc = r_str(r, CODE_DUMP_MAX_TEXT, &json, NULL);
        rec->inputs[i] = (code_input){.name = name, .json = json};
        if (rc < 0) {
            rec->ninputs = i + 1;
            return -1;
        }
    }
    size_t nf = 0;
    if (r_count(r, 4, CODE_DUMP_MAX_COUNT, &nf) < 0)
        return -1;
    if (nf && !(flags & 2))
        return bad(r, "functions listed but not declared");
    if (flags & 2) {
        rec->functions = calloc_or_die(nf, sizeof(*rec->functions));
        for (; rec->nfunctions < nf; rec->nfunctions++)
            if (r_str(r, 256, &rec->functions[rec->nfunctions], NULL) < 0)
                return -1;
    }
    size_t nc = 0;
    if (r_count(r, 4, CODE_DUMP_MAX_COUNT, &nc) < 0)
        return -1;
    rec->calls = calloc_or_die(nc, sizeof(*rec->calls));
    for (; rec->ncalls < nc; rec->ncalls++)
        if (r_str(r, 256, &rec->calls[rec->ncalls].function, NULL) < 0)
            return -1;
    if (parse_batches(r, rec) < 0 || r_le(r, 8, &rec->out_len) < 0)
        return -1;
    if (r->pos != r->n)
        return bad(r, "bytes after the record");
    return 0;
}

int code_dump_parse(const char *buf, size_t len, code_run_record *rec, code_error *err)
{
    memset(rec, 0, sizeof(*rec));
    rd r = {.p = (const unsigned char *)buf, .n = len, .err = err};
    if (len < CODE_DUMP_MAGIC_LEN + 4 + 8 || memcmp(buf, CODE_DUMP_MAGIC, CODE_DUMP_MAGIC_LEN) != 0)
        return code_error_set(err, "ValueError", 0, 0, "not a code dump (no CELLACD magic)");
    r.pos = CODE_DUMP_MAGIC_LEN;
    uint64_t version = 0;
    r_le(&r, 4, &version);
    if (version != CODE_DUMP_VERSION)
        return code_error_set(err, "ValueError", 0, 0,
                              "code dump format version %llu is not supported (this build "
                              "reads version %u)",
                              (unsigned long long)version, CODE_DUMP_VERSION);
    r.n = len - 8;
    rd sum = {.p = r.p, .n = len, .pos = r.n, .err = err};
    uint64_t want = 0;
    r_le(&sum, 8, &want);
    if (code_dump_fnv1a(buf, len - 8) != want)
        return code_error_set(err, "ValueError", 0, 0,
                              "the code dump is corrupted (checksum mismatch)");
    if (parse_body(&r, rec) < 0) {
        code_dump_record_free(rec);
        return -1;
    }
    return 0;
}
