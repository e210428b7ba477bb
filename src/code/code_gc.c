/* The cycle collector: CPython's algorithm (Modules/gcmodule.c) with one
 * generation. Reference counting frees everything but cycles; this finds the
 * objects that only cycles keep alive and frees them.
 *
 * Objects of the types that have a traverse slot (the containers) carry a
 * header in front of them linking them into the vm's ring. A collection:
 *  1. refs = rc for every tracked object;
 *  2. every tracked object's traverse subtracts 1 from the refs of each
 *     tracked object it references: what is left counts references from
 *     outside the tracked objects (C locals, frames, globals, untracked
 *     objects such as generators);
 *  3. objects with refs 0 move to a tentative list; the ring, walked from
 *     its head while objects are appended at its tail, is the work list of
 *     a breadth-first walk that moves back every tentative object a
 *     reachable one references (no recursion on the C stack, no memory);
 *  4. what stays tentative is garbage: every object of it is increfed, each
 *     type's clear drops its references, then the extra references are
 *     dropped, so the objects are freed by the usual deallocs and none is
 *     freed while another's clear still looks at it.
 * Collections run only at safe points (code_check_time, from the
 * evaluator's loop back-edges and calls), never inside an allocation: C code
 * holding pointers it has no reference for must not see objects vanish. */
#include "code/code_gc.h"

#include <string.h>

#include "code/code_eval.h"

#define GC_TENTATIVE 1u

static inline code_gc_hdr *hdr_of(const code_obj *o) { return (code_gc_hdr *)o - 1; }
static inline code_obj *obj_of(code_gc_hdr *h) { return (code_obj *)(h + 1); }

static inline void ring_init(code_gc_hdr *r) { r->prev = r->next = r; }

static inline void ring_unlink(code_gc_hdr *h)
{
    h->prev->next = h->next;
    h->next->prev = h->prev;
}

static inline void ring_append(code_gc_hdr *r, code_gc_hdr *h)
{
    h->prev = r->prev;
    h->next = r;
    r->prev->next = h;
    r->prev = h;
}

/* The heap may grow by an eighth of the memory limit before a collection,
 * or by half the room left under it when that is less (so garbage is found
 * before an allocation fails), but by a 64th at least (so a heap full of
 * live data is not walked at every safe point). */
static void set_bytes_trigger(code_vm *vm, struct code_gc *g)
{
    size_t max = vm->mem.max_bytes, now = vm->mem.bytes;
    if (!max) {
        g->bytes_trigger = SIZE_MAX;
        return;
    }
    size_t room = max > now ? max - now : 0;
    size_t step = room / 2 < max / 8 ? room / 2 : max / 8;
    if (step < max / 64)
        step = max / 64;
    g->bytes_trigger = now + step;
}

int code_gc_init(code_vm *vm)
{
    struct code_gc *g = code_mem_alloc(&vm->mem, sizeof(*g));
    if (!g)
        return -1;
    memset(g, 0, sizeof(*g));
    ring_init(&g->head);
    g->threshold = CODE_GC_THRESHOLD;
    vm->gc = g;
    set_bytes_trigger(vm, g);
    return 0;
}

void code_gc_destroy(code_vm *vm)
{
    /* The objects themselves go with the heap. */
    if (vm->gc)
        code_mem_free(&vm->mem, vm->gc, sizeof(*vm->gc));
    vm->gc = NULL;
}

/* Asks the evaluator for a safe point soon: its next tick reads the clock,
 * and code_check_time collects. */
static void request(code_vm *vm, struct code_gc *g)
{
    g->pending = true;
    if (vm->ev && vm->ev->tick < CODE_TICKS - 1)
        vm->ev->tick = CODE_TICKS - 1;
}

void *code_gc_obj_new(code_vm *vm, const code_type *t, size_t size)
{
    struct code_gc *g = vm->gc;
    if (size >= CODE_OBJ_GC - sizeof(code_gc_hdr)) {
        code_raise_nomem(vm);
        return NULL;
    }
    code_gc_hdr *h = code_heap_alloc(vm, sizeof(*h) + size);
    if (!h)
        return NULL;
    code_obj *o = obj_of(h);
    memset(o, 0, size);
    o->type = t;
    o->rc = 1;
    o->size = (uint32_t)size | CODE_OBJ_GC;
    h->refs = 0;
    h->flags = 0;
    ring_append(&g->head, h);
    g->tracked++;
    /* Due after enough new containers (CPython's 700, growing with what
     * survived, so a collection's cost is spread over as many allocations
     * as it walks), or after the heap grew (big containers, few of them). */
    if (++g->allocs >= g->threshold || vm->mem.bytes > g->bytes_trigger)
        request(vm, g);
    return o;
}

void code_gc_obj_free(code_vm *vm, code_obj *o)
{
    struct code_gc *g = vm->gc;
    code_gc_hdr *h = hdr_of(o);
    ring_unlink(h);
    g->tracked--;
    if (g->allocs)
        g->allocs--;
    code_heap_free(vm, h, sizeof(*h) + (o->size & ~CODE_OBJ_GC));
}

/* ---- the collection -------------------------------------------------------------- */

static void visit_decref(code_vm *vm, cv v, void *arg)
{
    (void)vm;
    (void)arg;
    if (code_gc_is_tracked(v))
        hdr_of(cv_obj(v))->refs--;
}

/* A reachable object references v: v is reachable too. */
static void visit_reach(code_vm *vm, cv v, void *arg)
{
    (void)vm;
    if (!code_gc_is_tracked(v))
        return;
    code_gc_hdr *h = hdr_of(cv_obj(v));
    if (h->flags & GC_TENTATIVE) {
        h->flags &= ~(uint64_t)GC_TENTATIVE;
        ring_unlink(h);
        ring_append(arg, h);
    }
}

static inline void traverse(code_vm *vm, code_gc_hdr *h, code_visit_fn visit, void *arg)
{
    code_obj *o = obj_of(h);
    o->type->traverse(vm, cv_of(o), visit, arg);
}

size_t code_gc_collect(code_vm *vm)
{
    struct code_gc *g = vm->gc;
    if (!g || g->collecting)
        return 0;
    g->collecting = true;
    g->pending = false;
    code_gc_hdr *ring = &g->head;
    for (code_gc_hdr *h = ring->next; h != ring; h = h->next) {
        h->refs = obj_of(h)->rc;
        h->flags = 0;
    }
    for (code_gc_hdr *h = ring->next; h != ring; h = h->next)
        traverse(vm, h, visit_decref, NULL);

    code_gc_hdr garbage;
    ring_init(&garbage);
    for (code_gc_hdr *h = ring->next, *n; h != ring; h = n) {
        n = h->next;
        if (h->refs <= 0) {
            h->flags |= GC_TENTATIVE;
            ring_unlink(h);
            ring_append(&garbage, h);
        }
    }
    /* What is left in the ring is reachable from outside; the walk appends
     * what it reaches, so it reaches those too before it ends. */
    for (code_gc_hdr *h = ring->next; h != ring; h = h->next)
        traverse(vm, h, visit_reach, ring);

    size_t n = 0;
    for (code_gc_hdr *h = garbage.next; h != &garbage; h = h->next) {
        obj_of(h)->rc++;
        n++;
    }
    if (n) {
        /* Deallocs may run code (a suspended generator's finally): keep
         * the exception being raised, if any, out of their way. */
        cv saved = vm->exc;
        vm->exc = CV_NULL;
        for (code_gc_hdr *h = garbage.next; h != &garbage; h = h->next) {
            code_obj *o = obj_of(h);
            if (o->type->clear)
                o->type->clear(vm, cv_of(o));
        }
        while (garbage.next != &garbage) {
            code_gc_hdr *h = garbage.next;
            ring_unlink(h);
            h->flags = 0;
            ring_append(ring, h);
            code_decref(vm, cv_of(obj_of(h)));
        }
        if (vm->exc)
            code_exc_clear(vm);
        vm->exc = saved;
    }
    g->collections++;
    g->collected += n;
    g->allocs = 0;
    g->threshold = CODE_GC_THRESHOLD + g->tracked;
    set_bytes_trigger(vm, g);
    g->collecting = false;
    return n;
}

void code_gc_maybe(code_vm *vm)
{
    struct code_gc *g = vm->gc;
    if (g && g->pending && !g->disabled)
        code_gc_collect(vm);
}
