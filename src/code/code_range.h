/* Ranges past int64 (code_range_big.c): range(10 ** 20) is a range like any
 * other in CPython, computed with arbitrary ints; only len() overflows when
 * the length is past ssize_t. code_range.c keeps its int64 fast paths and
 * turns to these for a big range, or when an int64 computation on a plain
 * one would overflow (slicing). */
#ifndef CELLA_CODE_RANGE_H
#define CELLA_CODE_RANGE_H

#include "code/code_val.h"

/* A big range: the same type as any range in a bigger block. Its int64
 * fields are all 0: step 0, which no real range has, marks it, and the
 * evaluator's fast loops over r->len items, should they miss the check,
 * walk none. */
typedef struct code_range_big {
    code_range r;
    cv start, stop, step, len;   /* ints (never bools) */
} code_range_big;

static inline bool code_range_is_big(cv r) { return ((const code_range *)cv_obj(r))->step == 0; }

/* range(start, stop, step) of any ints or bools, step not 0 (checked by the
 * caller): a plain range when start, stop, step and the length fit int64,
 * else a big one. */
cv code_range_from_ints(code_vm *vm, cv start, cv stop, cv step);
/* The same, always big (code_range_new's when only the length is past int64). */
cv code_range_new_big(code_vm *vm, cv start, cv stop, cv step);
/* start, stop, step and len of any range, as new references; -1 on error. */
int code_range_fields(code_vm *vm, cv r, cv out[4]);

/* The type's slots for a big range (code_range.c dispatches to them). */
void code_range_big_dealloc(code_vm *vm, code_obj *o);
cv code_range_big_repr(code_vm *vm, cv self);
/* OverflowError past ssize_t, as CPython's len(). */
ssize_t code_range_big_len(code_vm *vm, cv self);
bool code_range_big_nonempty(cv self);
/* self[i] for an int i (bool too): IndexError when out of range. */
cv code_range_big_item(code_vm *vm, cv self, cv i);
/* x in self for an int x: 1, 0, or -1; *pos (when not NULL) gets x's index,
 * a new reference, when found. */
int code_range_big_find_int(code_vm *vm, cv self, cv x, cv *pos);
cv code_range_big_iter(code_vm *vm, cv self);
cv code_range_big_reversed(code_vm *vm, cv self);

/* For any range, with arbitrary ints: self[slice], ==/!= (CPython's: equal
 * lengths, and equal starts and steps where they matter), and the hash. */
cv code_range_slice_any(code_vm *vm, cv self, cv slice);
cv code_range_compare_any(code_vm *vm, cv a, cv b, int op);
int code_range_hash_any(code_vm *vm, cv self, uint64_t *h);

/* The iterator over a big range ("longrange_iterator", as CPython's). */
typedef struct code_longrange_iter {
    code_iterobj it;
    cv next, step, left;         /* the next value, the step, items left (ints) */
} code_longrange_iter;
extern const code_type code_type_longrange_iter;

#endif
