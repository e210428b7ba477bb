/* A run's heap: small blocks from size classes carved out of 64 KiB pages,
 * large blocks individually. Everything is counted against the run's
 * code_mem (pages and large blocks in bytes; every block against the
 * allocation limit), and code_heap_destroy gives it all back at once, so a
 * run that ends, however it ends, leaves nothing behind, cycles included.
 *
 * Small freed blocks go back to their class's free list and are reused; the
 * pages themselves are only returned at the end (a run is short-lived, and a
 * page count is a good enough bound for its memory limit). */
#include "code/code_vm.h"

#include <string.h>

#define HEAP_GRAN 16
#ifdef CODE_HEAP_DEBUG
/* The sanitizer build gives every block its own malloc, so AddressSanitizer
 * sees each use after free (a pooled block would hide it). */
#define HEAP_SMALL_MAX 0
#else
#define HEAP_SMALL_MAX 512
#endif
#define HEAP_NCLASS (512 / HEAP_GRAN)
#define HEAP_PAGE (64 * 1024)

typedef struct heap_page {
    struct heap_page *next;
    max_align_t align[];
} heap_page;

typedef struct heap_large {
    struct heap_large *prev, *next;
    size_t size;
    max_align_t data[];
} heap_large;

typedef struct heap_free { struct heap_free *next; } heap_free;

struct code_heap {
    heap_free *free[HEAP_NCLASS];
    heap_page *pages;
    char *bump, *bump_end;
    heap_large *large;
};

static size_t class_of(size_t n) { return (n + HEAP_GRAN - 1) / HEAP_GRAN - 1; }

int code_heap_create(code_vm *vm)
{
    vm->heap = code_mem_alloc(&vm->mem, sizeof(struct code_heap));
    if (!vm->heap)
        return -1;
    memset(vm->heap, 0, sizeof(*vm->heap));
    return 0;
}

void code_heap_destroy(code_vm *vm)
{
    struct code_heap *h = vm->heap;
    if (!h)
        return;
    for (heap_page *p = h->pages, *n; p; p = n) {
        n = p->next;
        code_mem_free(&vm->mem, p, HEAP_PAGE);
    }
    for (heap_large *l = h->large, *n; l; l = n) {
        n = l->next;
        code_mem_free(&vm->mem, l, sizeof(*l) + l->size);
    }
    code_mem_free(&vm->mem, h, sizeof(*h));
    vm->heap = NULL;
}

/* The allocation limit counts blocks handed to the program, not pages. */
static bool count_alloc(code_vm *vm)
{
    if (vm->mem.max_allocs && vm->mem.allocs >= vm->mem.max_allocs) {
        vm->mem.failed = true;
        return false;
    }
    vm->mem.allocs++;
    return true;
}

static void *small_alloc(code_vm *vm, size_t n)
{
    struct code_heap *h = vm->heap;
    size_t c = class_of(n);
    heap_free *f = h->free[c];
    if (f) {
        h->free[c] = f->next;
        return f;
    }
    size_t sz = (c + 1) * HEAP_GRAN;
    if ((size_t)(h->bump_end - h->bump) < sz) {
        /* code_mem_alloc counts one allocation per page; the blocks in it
         * are counted by count_alloc instead. */
        size_t allocs = vm->mem.allocs;
        heap_page *p = code_mem_alloc(&vm->mem, HEAP_PAGE);
        vm->mem.allocs = allocs;
        if (!p)
            return NULL;
        p->next = h->pages;
        h->pages = p;
        h->bump = (char *)p->align;
        h->bump_end = (char *)p + HEAP_PAGE;
    }
    void *r = h->bump;
    h->bump += sz;
    return r;
}

static void *raw_alloc(code_vm *vm, size_t n)
{
    if (!vm->heap || !count_alloc(vm))
        return NULL;
    if (n == 0)
        n = 1;
    if (n <= HEAP_SMALL_MAX)
        return small_alloc(vm, n);
    if (n > SIZE_MAX - sizeof(heap_large))
        return NULL;
    size_t allocs = vm->mem.allocs;
    heap_large *l = code_mem_alloc(&vm->mem, sizeof(*l) + n);
    vm->mem.allocs = allocs;
    if (!l)
        return NULL;
    l->size = n;
    l->prev = NULL;
    l->next = vm->heap->large;
    if (l->next)
        l->next->prev = l;
    vm->heap->large = l;
    return l->data;
}

void *code_heap_alloc(code_vm *vm, size_t n)
{
    void *p = raw_alloc(vm, n);
    if (!p)
        code_raise_nomem(vm);
    return p;
}

void code_heap_free(code_vm *vm, void *p, size_t n)
{
    if (!p || !vm->heap)
        return;
    if (n == 0)
        n = 1;
    if (n <= HEAP_SMALL_MAX) {
        heap_free *f = p;
        size_t c = class_of(n);
        f->next = vm->heap->free[c];
        vm->heap->free[c] = f;
        return;
    }
    heap_large *l = (heap_large *)((char *)p - offsetof(heap_large, data));
    if (l->prev)
        l->prev->next = l->next;
    else
        vm->heap->large = l->next;
    if (l->next)
        l->next->prev = l->prev;
    code_mem_free(&vm->mem, l, sizeof(*l) + l->size);
}

void *code_heap_realloc(code_vm *vm, void *p, size_t osize, size_t nsize)
{
    if (!p)
        return code_heap_alloc(vm, nsize);
    if (nsize == 0) {
        code_heap_free(vm, p, osize);
        return NULL;
    }
    /* Same size class: nothing to move. */
    if (osize <= HEAP_SMALL_MAX && nsize <= HEAP_SMALL_MAX &&
        class_of(osize ? osize : 1) == class_of(nsize))
        return p;
    void *q = code_heap_alloc(vm, nsize);
    if (!q)
        return NULL;
    memcpy(q, p, osize < nsize ? osize : nsize);
    code_heap_free(vm, p, osize);
    return q;
}
