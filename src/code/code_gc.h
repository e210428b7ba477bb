/* The cycle collector's private interface (code_gc.c): what the object core
 * (code_obj.c) and the tests use. */
#ifndef CELLA_CODE_GC_H
#define CELLA_CODE_GC_H

#include "code/code_vm.h"

/* Before every tracked object: its links in the vm's list and the
 * collector's scratch. 32 bytes, so the object keeps the heap's 16-byte
 * alignment. */
typedef struct code_gc_hdr {
    struct code_gc_hdr *prev, *next;
    int64_t refs;                /* during a collection: references from outside */
    uint64_t flags;
} code_gc_hdr;

struct code_gc {
    code_gc_hdr head;            /* every tracked object (a ring) */
    size_t tracked;              /* objects in the ring */
    size_t allocs;               /* tracked allocations since the last collection */
    size_t threshold;            /* allocs that make a collection due */
    size_t bytes_trigger;        /* heap bytes that make a collection due */
    bool pending;                /* due: the next safe point collects */
    bool collecting;
    bool disabled;               /* tests */
    uint64_t collections, collected;   /* totals, for tests and reports */
};

/* First tracked allocations before a collection (CPython's generation 0). */
#define CODE_GC_THRESHOLD 700

int code_gc_init(code_vm *vm);
void code_gc_destroy(code_vm *vm);
/* code_obj_new for a type with traverse: the block has the header in front. */
void *code_gc_obj_new(code_vm *vm, const code_type *t, size_t size);
/* code_obj_free's end for a tracked object: unlinks it, frees its block. */
void code_gc_obj_free(code_vm *vm, code_obj *o);

static inline bool code_gc_is_tracked(cv v)
{
    return v && !cv_is_small(v) && (cv_obj(v)->size & CODE_OBJ_GC);
}

#endif
