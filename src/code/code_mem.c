#include "code/code_mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *default_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    (void)ud;
    (void)osize;
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    void *r = realloc(ptr, nsize);
    if (!r) {
        /* No allocation, no stdio: the heap may be what failed. */
        static const char msg[] = "cella code: out of memory\n";
        ssize_t w = write(2, msg, sizeof(msg) - 1);
        (void)w;
        abort();
    }
    return r;
}

void code_mem_init(code_mem *m, code_alloc_fn fn, void *ud, size_t max_bytes,
                   size_t max_allocs)
{
    memset(m, 0, sizeof(*m));
    m->fn = fn ? fn : default_alloc;
    m->ud = ud;
    m->max_bytes = max_bytes;
    m->max_allocs = max_allocs;
}

void *code_mem_realloc(code_mem *m, void *p, size_t osize, size_t nsize)
{
    if (nsize == 0) {
        code_mem_free(m, p, osize);
        return NULL;
    }
    if (nsize > osize) {
        size_t grow = nsize - osize;
        if ((m->max_bytes && (grow > m->max_bytes || m->bytes > m->max_bytes - grow)) ||
            (m->max_allocs && m->allocs >= m->max_allocs)) {
            m->failed = true;
            return NULL;
        }
    }
    void *r = m->fn(m->ud, p, osize, nsize);
    if (!r) {
        m->failed = true;
        return NULL;
    }
    m->bytes = m->bytes - osize + nsize;
    m->allocs++;
    return r;
}

void *code_mem_alloc(code_mem *m, size_t n)
{
    return code_mem_realloc(m, NULL, 0, n ? n : 1);
}

void code_mem_free(code_mem *m, void *p, size_t n)
{
    if (!p)
        return;
    m->fn(m->ud, p, n, 0);
    m->bytes -= n <= m->bytes ? n : m->bytes;
}

/* ---- arena ---- */

struct code_arena_chunk {
    code_arena_chunk *next;
    size_t size;                 /* of the whole block, header included */
    max_align_t align[];
};

#define ARENA_FIRST 4096
#define ARENA_MAX_STEP (256 * 1024)

void code_arena_init(code_arena *a, code_mem *m)
{
    memset(a, 0, sizeof(*a));
    a->mem = m;
}

void *code_arena_alloc(code_arena *a, size_t n)
{
    n = (n + 7) & ~(size_t)7;
    if (n == 0)
        n = 8;
    if ((size_t)(a->end - a->p) < n) {
        size_t step = a->total < ARENA_FIRST ? ARENA_FIRST : a->total;
        if (step > ARENA_MAX_STEP)
            step = ARENA_MAX_STEP;
        size_t hdr = offsetof(code_arena_chunk, align);
        if (n > SIZE_MAX - hdr - 16)
            return NULL;
        size_t size = hdr + (n > step ? n : step);
        code_arena_chunk *c = code_mem_alloc(a->mem, size);
        if (!c)
            return NULL;
        c->next = a->head;
        c->size = size;
        a->head = c;
        a->total += size;
        a->p = (char *)c + hdr;
        a->end = (char *)c + size;
    }
    void *r = a->p;
    a->p += n;
    memset(r, 0, n);
    return r;
}

char *code_arena_strndup(code_arena *a, const char *s, size_t n)
{
    if (n == SIZE_MAX)
        return NULL;
    char *d = code_arena_alloc(a, n + 1);
    if (!d)
        return NULL;
    if (n)
        memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

void code_arena_free(code_arena *a)
{
    code_arena_chunk *c = a->head;
    while (c) {
        code_arena_chunk *next = c->next;
        code_mem_free(a->mem, c, c->size);
        c = next;
    }
    a->head = NULL;
    a->p = a->end = NULL;
    a->total = 0;
}
