/* Containers' private interface (code_list.c, code_tuple.c, code_dict.c,
 * code_dict_views.c, code_set.c, code_range.c, code_sort.c): what the files
 * share among themselves, and the few entry points the core and the builtins
 * call that code_val.h does not declare.
 *
 * The set layout. code_val.h says a set is "a dict whose values are unused";
 * its fields are reused for CPython's setobject.c table instead, so that sets
 * iterate in CPython's order ({3, 1, 2} is {1, 2, 3}):
 *   d.e       the table of d.cap slots (a power of two, 8 at least);
 *             key CV_NULL and hash 0: never used; key CV_NULL and hash
 *             UINT64_MAX: a deleted ("dummy") slot;
 *   d.used    live keys;  d.nentries  live + dummy slots (CPython's fill);
 *   d.nindex  the pop() finger;  d.index unused (NULL);  values CV_NULL.
 * code_dict_next walks a set too (value CV_NULL). */
#ifndef CELLA_CODE_CONT_H
#define CELLA_CODE_CONT_H

#include <limits.h>

#include "code/code_val.h"
#include "code/code_vm.h"

/* ---- iterators and views: their layouts, for dump/load and heap walks -------- */

/* list_iterator, tuple_iterator and their reversed forms. */
typedef struct code_seq_iter {
    code_iterobj it;
    cv seq;                      /* the list or tuple; CV_NULL once exhausted */
    ssize_t i;                   /* the next index (reversed: counting down) */
} code_seq_iter;
/* The dict iterators (keys, values, items; forward or reversed). */
typedef struct code_dict_iter {
    code_iterobj it;
    cv d;                        /* CV_NULL once exhausted */
    size_t pos;                  /* next entry; reversed: one past it */
    size_t used;                 /* the dict's size when iteration began */
    size_t left;                 /* items still expected */
    int kind;                    /* 0 keys, 1 values, 2 items */
    bool rev;
} code_dict_iter;
/* keys(), values(), items(). */
typedef struct code_dict_view {
    code_obj ob;
    cv d;
} code_dict_view;
typedef struct code_set_iter {
    code_iterobj it;
    cv s;                        /* CV_NULL once exhausted */
    size_t pos, used, left;      /* next slot; size at the start; items left */
} code_set_iter;
/* range_iterator, reversed(range) too: start + i * step while i < len. */
typedef struct code_range_iter {
    code_iterobj it;
    int64_t start, step, len, i;
} code_range_iter;

extern const code_type code_type_list_iter, code_type_list_reviter, code_type_tuple_iter,
    code_type_tuple_reviter, code_type_dict_keyiter, code_type_dict_valueiter,
    code_type_dict_itemiter, code_type_dict_rkeyiter, code_type_dict_rvalueiter,
    code_type_dict_ritemiter, code_type_set_iter, code_type_range_iter;

/* ---- in-place operators: the inplace slot of list, set and dict -------------
 * a op= b: a new reference to a (mutated), or CODE_NOTIMPL (borrowed
 * sentinel) when a's type has no in-place form for op (code_binop_inplace
 * then does code_binop), or CV_NULL with the exception set. frozenset has
 * none: f |= x makes a new frozenset, as CPython. */
cv code_cont_inplace(code_vm *vm, int op, cv a, cv b);
cv code_list_inplace_add(code_vm *vm, cv list, cv iterable);   /* list += it */
cv code_list_inplace_mul(code_vm *vm, cv list, cv n);          /* list *= n */
cv code_set_inplace(code_vm *vm, int op, cv set, cv other);    /* |= &= -= ^= */
cv code_dict_inplace_or(code_vm *vm, cv dict, cv other);       /* dict |= x */

/* reversed(v) for a list, tuple, range, dict or dict view: a new iterator
 * (list_reverseiterator, range_iterator, dict_reversekeyiterator... with
 * CPython's mutation checks); CV_NULL with NO exception set when v is none
 * of these. The reversed() builtin asks here first. */
cv code_cont_reversed(code_vm *vm, cv v);

/* ---- shared helpers ---------------------------------------------------------- */

/* The repr cycle guard ([...] and {...}): 1 when v is already being
 * represented further up (the caller prints the ellipsis), 0 when it was
 * entered (the caller must code_repr_leave), -1 on error. The depth is
 * code_repr's to check, as the other recursive paths are code_compare's
 * and code_hash's: the slots themselves do not add guards. */
int code_repr_enter(code_vm *vm, cv v);
void code_repr_leave(code_vm *vm, cv v);

/* __len__, __getitem__, __contains__, __iter__ for the method tables
 * (CODE_CONT_DUNDERS). */
cv code_cont_dunder_len(code_vm *vm, cv *args, size_t nargs, cv kwnames);
cv code_cont_dunder_getitem(code_vm *vm, cv *args, size_t nargs, cv kwnames);
cv code_cont_dunder_contains(code_vm *vm, cv *args, size_t nargs, cv kwnames);
cv code_cont_dunder_iter(code_vm *vm, cv *args, size_t nargs, cv kwnames);
#define CODE_CONT_DUNDERS                                                                    \
    {"__len__", code_cont_dunder_len}, {"__getitem__", code_cont_dunder_getitem},            \
        {"__contains__", code_cont_dunder_contains}, {"__iter__", code_cont_dunder_iter}

/* Freeing containers without deep C recursion: a container's dealloc
 * brackets the release of its items with enter/leave and releases each with
 * code_cont_release, which, past a nesting depth, puts a dying container on
 * the vm's trash list instead; the outermost leave empties the list. */
void code_cont_dealloc_enter(code_vm *vm);
void code_cont_dealloc_leave(code_vm *vm);
void code_cont_release(code_vm *vm, cv v);

/* For methods reachable unbound through the type (list.append(x, 1)):
 * checks args[0] is an instance of t (or of t2, when not NULL). */
int code_cont_self(code_vm *vm, const char *tname, const char *meth, cv *args, size_t nargs,
                   const code_type *t, const code_type *t2);

/* Resolves an index against len for getitem ("list index out of range" is
 * the caller's): -1 with TypeError "<what> indices must be integers or
 * slices, not X" when key is no int. */
int code_seq_index(code_vm *vm, const char *what, cv key, ssize_t len, ssize_t *out);
bool code_is_int(cv v);   /* int or bool */

/* CPython's argument-count messages for methods (nargs without self): no
 * arguments, exactly one, or between min and max (argument clinic's "pop
 * expected at most 1 argument, got 2"); keywords are refused. name is
 * "list.append". */
int code_cont_arg0(code_vm *vm, const char *name, size_t nargs, cv kwnames);
int code_cont_arg1(code_vm *vm, const char *name, size_t nargs, cv kwnames);
int code_cont_argn(code_vm *vm, const char *name, size_t min, size_t max, size_t nargs,
                   cv kwnames);

/* Lexicographic comparison of two arrays, as list_richcompare. */
cv code_seq_compare(code_vm *vm, const cv *a, size_t na, const cv *b, size_t nb, int op);
/* repr of "open items close" with a cycle already handled by the caller. */
int code_seq_repr_items(code_sb *b, const cv *v, size_t n);

/* Borrowed items of a list or tuple. */
static inline cv *code_seq_items(cv v, size_t *n)
{
    if (cv_kind(v) == CODE_K_LIST) {
        code_list *l = (code_list *)cv_obj(v);
        *n = l->n;
        return l->v;
    }
    code_tuple *t = (code_tuple *)cv_obj(v);
    *n = t->n;
    return t->v;
}

/* ---- list ----------------------------------------------------------------------- */

int code_list_extend(code_vm *vm, cv list, cv iterable);
/* Empties the list (its buffer freed). */
void code_list_clear(code_vm *vm, code_list *l);
/* Grows list to hold n more items; -1 with MemoryError. */
int code_list_reserve(code_vm *vm, code_list *l, size_t more);
cv code_list_slice(code_vm *vm, code_list *l, ssize_t start, ssize_t step, ssize_t count);
/* An iterator over a list or tuple (reversed: from its end). */
cv code_seq_iter_new(code_vm *vm, cv seq, bool reversed);
/* The count of seq * n (a_is_seq: a is the sequence), raising CPython's
 * "can't multiply sequence by non-int of type 'X'". */
int code_seq_repeat_count(code_vm *vm, cv a, cv b, bool a_is_seq, ssize_t *count);
/* The index of x in v[start:stop] by ==, -1 absent, -2 error. */
ssize_t code_seq_find(code_vm *vm, const cv *v, size_t n, cv x, ssize_t start, ssize_t stop);
/* The optional start and stop of index(): slice-index semantics. */
int code_seq_index_bounds(code_vm *vm, cv *args, size_t nargs, size_t n, ssize_t *start,
                          ssize_t *stop);
ssize_t code_seq_count(code_vm *vm, const cv *v, size_t n, cv x);

/* ---- tuple ---------------------------------------------------------------------- */

/* A tuple of the n values (borrowed). */
cv code_tuple_from_array(code_vm *vm, const cv *v, size_t n);

/* ---- dict ----------------------------------------------------------------------- */

/* The entry index of key (hash given), -1 when absent, -2 on error. */
ssize_t code_dict_lookup(code_vm *vm, code_dict *d, cv key, uint64_t hash);
int code_dict_set_h(code_vm *vm, cv d, cv key, uint64_t hash, cv value);
/* Removes key if present: 1 removed (*value, if not NULL, takes its value's
 * reference), 0 absent, -1 error. */
int code_dict_pop_h(code_vm *vm, cv d, cv key, uint64_t hash, cv *value);
/* dict.update(x): a mapping (dict) or an iterable of pairs. */
int code_dict_update(code_vm *vm, cv d, cv other);
cv code_dict_copy(code_vm *vm, cv d);
/* Raises KeyError(key); returns -1. */
int code_dict_raise_key(code_vm *vm, cv key);
/* Removes the last entry (popitem): 1 with both references given, 0 empty. */
int code_dict_pop_last(code_vm *vm, cv d, cv *key, cv *value);
/* Room for n more entries, so a merge resizes once. */
int code_dict_reserve(code_vm *vm, cv d, size_t n);
void code_dict_clear(code_vm *vm, code_dict *d);
/* The dict iterators: kind 0 keys, 1 values, 2 items; reversed. */
cv code_dict_iter_new(code_vm *vm, cv d, int kind, bool reversed);
cv code_dict_view_new(code_vm *vm, cv d, int kind);

cv code_dict_view_dict(cv view, int *kind);   /* borrowed */

extern const code_type code_type_dict_keys, code_type_dict_values, code_type_dict_items;

/* ---- set ------------------------------------------------------------------------ */

/* 1 present, 0 absent, -1 error (unhashable). */
int code_set_contains(code_vm *vm, cv set, cv key);
int code_set_add_h(code_vm *vm, cv set, cv key, uint64_t hash);
/* 1 removed, 0 absent, -1 error. */
int code_set_discard(code_vm *vm, cv set, cv key);
/* Adds every element of iterable (set, dict keys, anything iterable). */
int code_set_update(code_vm *vm, cv set, cv iterable);
/* Iterates a set's live keys by slot. */
bool code_set_next(cv set, size_t *pos, cv *key, uint64_t *hash);
cv code_set_copy(code_vm *vm, cv set, bool frozen);
/* A set display of more than two items that are all constants ({1, 2, 3},
 * {-1, -2, 0.5}): CPython compiles it to a frozenset constant (rebuilt once
 * by the compiler's constant merging) merged into a new set, which puts
 * colliding keys in another order than adding them one by one would. The
 * evaluator builds such displays with this to print as CPython does. */
cv code_set_from_consts(code_vm *vm, const cv *items, size_t n);
int code_set_contains_h(code_vm *vm, cv set, cv key, uint64_t hash);
int code_set_discard_h(code_vm *vm, cv set, cv key, uint64_t hash);
/* Every key of other (a set or frozenset) into set. */
int code_set_merge(code_vm *vm, cv set, cv other);
/* pop(): 1 with the key's reference given, 0 when empty. */
int code_set_pop(code_vm *vm, cv set, cv *key);
/* Resizes away the deleted slots when over a quarter of the table. */
int code_set_shrink_dummies(code_vm *vm, cv set);
void code_set_swap_bodies(cv a, cv b);
void code_set_clear(code_vm *vm, cv set);
cv code_set_binop(code_vm *vm, int op, cv a, cv b);
cv code_set_compare(code_vm *vm, cv a, cv b, int op);
extern const code_method code_set_methods[], code_frozenset_methods[];
static inline bool code_is_anyset(cv v)
{
    return !cv_is_small(v) && (cv_kind(v) == CODE_K_SET || cv_kind(v) == CODE_K_FROZENSET);
}
/* The set operations on any two iterables, the result a new set or frozenset
 * (frozen); op is CODE_OP_OR, AND, SUB or XOR. */
cv code_set_op(code_vm *vm, int op, cv a, cv b, bool frozen);
/* Set comparisons (subset order) of a set with any set-like (views too). */
cv code_set_compare_any(code_vm *vm, cv a, cv b, int op);

/* ---- range ---------------------------------------------------------------------- */

cv code_range_iter_new(code_vm *vm, int64_t start, int64_t step, int64_t len);
cv code_range_reversed(code_vm *vm, cv range);

#endif
