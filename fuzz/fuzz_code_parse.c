/* libFuzzer target: code mode's front end (src/code/), which sees
 * LLM-written and hostile Python source. Input: the source. Invariants
 * checked beyond "no crash" (and, by libFuzzer's timeout, "no blow-up"):
 *  - a failure names an exception type and a message;
 *  - a success dumps to a tree (code_ast_dump), whose length is the same
 *    whatever the buffer it is written into;
 *  - every byte taken from the memory hook is given back when the arena is
 *    freed, and the byte limit holds;
 *  - the same source fails the same way under a tight limit or parses. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "code/code_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

#define LIMIT (32u << 20)

static char dump[1 << 16];
static size_t peak;

static void *counting_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    size_t *live = ud;
    if (nsize == 0) {
        free(ptr);
        *live -= osize;
        return NULL;
    }
    void *r = realloc(ptr, nsize);
    if (r) {
        *live += nsize - osize;
        if (*live > peak)
            peak = *live;
    }
    return r;
}

static int parse(const uint8_t *d, size_t n, const code_parse_opts *o, size_t limit,
                 code_error *err)
{
    size_t live = 0;
    peak = 0;
    code_mem m;
    code_mem_init(&m, counting_alloc, &live, limit, 0);
    code_arena a;
    code_arena_init(&a, &m);
    memset(err, 0, sizeof(*err));
    code_module *mod;
    int rc = code_parse((const char *)d, n, o, &a, &mod, err);
    if (rc == 0) {
        size_t need = code_ast_dump(mod, dump, sizeof(dump));
        char small[16];
        if (code_ast_dump(mod, small, sizeof(small)) != need)
            abort();
        if (need < sizeof(dump) && strlen(dump) != need)
            abort();
        if (mod->body.n && need == 0)
            abort();
    } else {
        if (!err->type || !err->msg[0] || err->line < 0)
            abort();
    }
    code_arena_free(&a);
    if (live != 0 || m.bytes != 0 || peak > limit)
        abort();
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    if (n > 1 << 16)
        return 0;
    code_error err;
    int rc = parse(d, n, NULL, LIMIT, &err);
    /* under small limits: the same outcome, or a limit's exception */
    code_parse_opts o = {.max_nesting = 12, .max_height = 40};
    code_error err2;
    int rc2 = parse(d, n, &o, 64 * 1024, &err2);
    if (rc2 == 0 && rc != 0)
        abort();
    if (rc2 != 0 && rc == 0 && strcmp(err2.type, "MemoryError") != 0 &&
        strcmp(err2.type, "SyntaxError") != 0 && strcmp(err2.type, "RecursionError") != 0)
        abort();
    return 0;
}
