/* Code mode's values: the object model every part of the interpreter shares.
 *
 * A value (cv) is one machine word: a small int tagged in its low bit, or a
 * pointer to a reference-counted object whose header names its type. A run
 * owns one heap (code_heap.c) and every object in it; freeing the run frees
 * the heap at once. Reference cycles, which counting never frees, are found
 * by the cycle collector (code_gc.c) at the evaluator's safe points.
 *
 * Conventions (CPython's, so they are familiar):
 *  - functions returning cv return a NEW reference, or CV_NULL with the
 *    exception set in vm->exc (code_raise); functions returning int return
 *    -1 with the exception set, else 0 (or 0/1 for predicates);
 *  - arguments are BORROWED unless a function's comment says it steals;
 *  - calls pass (args, nargs, kwnames): args holds nargs positional values
 *    followed by one value per keyword name; kwnames is a tuple of str, or
 *    CV_NULL when there are no keywords (vectorcall);
 *  - static objects (None, True, False, NotImplemented, the empty tuple, type
 *    objects, builtin functions, interned constant strings) are immortal:
 *    code_incref/code_decref leave them alone, so they are shared by every run
 *    in a process and never written.
 *
 * Who implements what is said at each group of declarations. */
#ifndef CELLA_CODE_VAL_H
#define CELLA_CODE_VAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "code/code_mem.h"

typedef uintptr_t cv;
typedef struct code_vm code_vm;
typedef struct code_obj code_obj;
typedef struct code_type code_type;

#define CV_NULL ((cv)0)

/* ---- small ints: 62-bit signed, low bit 1 ------------------------------ */

#define CV_SMALL_MAX (((int64_t)1 << 61) - 1)
#define CV_SMALL_MIN (-((int64_t)1 << 61))
static inline bool cv_is_small(cv v) { return (v & 1) != 0; }
static inline int64_t cv_small(cv v) { return (int64_t)(intptr_t)v >> 1; }
static inline bool cv_fits_small(int64_t i) { return i >= CV_SMALL_MIN && i <= CV_SMALL_MAX; }
/* Only for i with cv_fits_small(i); code_int_from_i64 takes any int64. */
static inline cv cv_from_small(int64_t i) { return (cv)(((uint64_t)i << 1) | 1u); }

/* ---- objects ------------------------------------------------------------ */

#define CODE_RC_IMMORTAL 0x80000000u

struct code_obj {
    const code_type *type;
    uint32_t rc;                 /* CODE_RC_IMMORTAL for static objects */
    uint32_t size;               /* bytes of the block (code_heap), 0 if static;
                                  * CODE_OBJ_GC set: tracked by the collector,
                                  * its header before the object (code_gc.c) */
};
#define CODE_OBJ_GC 0x80000000u

static inline code_obj *cv_obj(cv v) { return (code_obj *)v; }
static inline cv cv_of(const void *o) { return (cv)o; }

/* Layout kinds: what struct an object of a type is. */
enum code_kind {
    CODE_K_NONE, CODE_K_BOOL, CODE_K_INT /* small or code_bigint */, CODE_K_FLOAT,
    CODE_K_STR, CODE_K_BYTES, CODE_K_LIST, CODE_K_TUPLE, CODE_K_DICT, CODE_K_SET,
    CODE_K_FROZENSET, CODE_K_RANGE, CODE_K_SLICE, CODE_K_TYPE, CODE_K_EXC,
    CODE_K_FUNC, CODE_K_CFUNC, CODE_K_METHOD, CODE_K_MODULE, CODE_K_CELL,
    CODE_K_ITER /* any iterator (code_iterobj) */, CODE_K_CORO, CODE_K_NOTIMPL,
    CODE_K_ELLIPSIS, CODE_K_OTHER /* datetime, re objects...: their own structs */,
};

/* Binary operators (code_binop's op): the parser's token kinds are not used
 * here so this header stands alone. In-place forms are the same op with
 * code_binop_inplace. */
enum code_binop_kind {
    CODE_OP_ADD, CODE_OP_SUB, CODE_OP_MUL, CODE_OP_TRUEDIV, CODE_OP_FLOORDIV,
    CODE_OP_MOD, CODE_OP_POW, CODE_OP_LSHIFT, CODE_OP_RSHIFT, CODE_OP_AND,
    CODE_OP_OR, CODE_OP_XOR, CODE_OP_MATMUL, CODE_OP__COUNT,
};
enum code_unop_kind { CODE_UOP_NEG, CODE_UOP_POS, CODE_UOP_INVERT };
/* Rich comparison (code_compare's op). */
enum code_cmp_kind { CODE_CMP_LT, CODE_CMP_LE, CODE_CMP_EQ, CODE_CMP_NE, CODE_CMP_GT, CODE_CMP_GE };

typedef cv (*code_cfunc)(code_vm *vm, cv *args, size_t nargs, cv kwnames);
/* The cycle collector's visitor (code_gc.c): called once per reference. */
typedef void (*code_visit_fn)(code_vm *vm, cv v, void *arg);

/* A method table entry: args[0] is self. */
typedef struct code_method {
    const char *name;
    code_cfunc fn;
} code_method;

/* A type: its slots. A NULL slot means "not supported" and the generic
 * operation raises CPython's TypeError for it. */
struct code_type {
    code_obj ob;                 /* types are objects (of type "type") */
    const char *name;            /* "int", "ValueError", "datetime.date" */
    const code_type *base;       /* exceptions and bool: the parent; else NULL */
    uint8_t kind;                /* enum code_kind */
    /* Frees what the object owns (its references, its buffers), not the
     * object's own block, which code_decref gives back. NULL: nothing. */
    void (*dealloc)(code_vm *vm, code_obj *o);
    cv (*repr)(code_vm *vm, cv self);             /* a str */
    cv (*str)(code_vm *vm, cv self);              /* NULL: repr */
    /* 0 and *h set, or -1 (TypeError "unhashable type" when NULL). */
    int (*hash)(code_vm *vm, cv self, uint64_t *h);
    /* Rich comparison: a new bool (or any value), or CODE_NOTIMPL (borrowed
     * sentinel, not a reference) to let the other side try, or CV_NULL. */
    cv (*compare)(code_vm *vm, cv a, cv b, int op);
    /* a op b where a or b has this type: CODE_NOTIMPL when unsupported. */
    cv (*binop)(code_vm *vm, int op, cv a, cv b);
    /* a op= b in place (list +=, set |=, dict |=): the same a, increfed, or
     * CODE_NOTIMPL to fall back to binop. NULL: always binop. */
    cv (*inplace)(code_vm *vm, int op, cv a, cv b);
    cv (*unop)(code_vm *vm, int op, cv a);
    int (*truth)(code_vm *vm, cv self);           /* NULL: len if any, else true */
    ssize_t (*len)(code_vm *vm, cv self);
    cv (*iter)(code_vm *vm, cv self);
    /* An iterator's next value; CV_NULL with NO exception set at the end. */
    cv (*next)(code_vm *vm, cv self);
    cv (*getitem)(code_vm *vm, cv self, cv key);
    int (*setitem)(code_vm *vm, cv self, cv key, cv value);
    int (*delitem)(code_vm *vm, cv self, cv key);
    int (*contains)(code_vm *vm, cv self, cv x);  /* 1, 0 or -1 */
    cv (*call)(code_vm *vm, cv self, cv *args, size_t nargs, cv kwnames);
    /* Attributes that are not methods (exc.args, module members, d.year);
     * CV_NULL with NO exception set when absent (methods are looked up next). */
    cv (*getattr)(code_vm *vm, cv self, const char *name);
    const code_method *methods;  /* NULL-terminated, or NULL */
    /* Calling the type itself: int("3"), ValueError("x"), dict(a=1). NULL:
     * TypeError "cannot create 'X' instances". */
    cv (*new)(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kwnames);
    /* The cycle collector (code_gc.c). traverse calls visit on every
     * reference the object OWNS (one counted in the referent's rc; never a
     * borrowed one); objects of a type that has it are tracked. clear drops
     * those references to break a cycle of garbage (the object is freed
     * right after); NULL: the other objects of the cycle break it. */
    void (*traverse)(code_vm *vm, cv self, code_visit_fn visit, void *arg);
    void (*clear)(code_vm *vm, cv self);
};

extern const code_type code_type_type;

static inline const code_type *cv_type(cv v);

/* ---- the objects' layouts ----------------------------------------------- */

typedef struct code_float { code_obj ob; double v; } code_float;

/* Arbitrary-precision int, beyond the small range: sign and magnitude in
 * 32-bit limbs, least significant first, no leading zero limbs. */
typedef struct code_bigint {
    code_obj ob;
    int32_t sign;                /* -1 or 1 (a bigint is never 0) */
    uint32_t n;                  /* limbs used */
    uint32_t limb[];
} code_bigint;

/* str: UTF-8, NUL-terminated for convenience (may also hold NULs). */
typedef struct code_str {
    code_obj ob;
    size_t len;                  /* bytes */
    size_t nchars;               /* code points */
    uint64_t hash;               /* 0: not computed yet */
    bool ascii;
    char s[];
} code_str;

typedef struct code_bytes {
    code_obj ob;
    size_t len;
    uint64_t hash;
    unsigned char s[];           /* NUL-terminated too */
} code_bytes;

typedef struct code_list {
    code_obj ob;
    size_t n, cap;
    cv *v;                       /* code_heap block of cap entries */
} code_list;

typedef struct code_tuple {
    code_obj ob;
    size_t n;
    uint64_t hash;
    cv v[];
} code_tuple;

/* dict: CPython's compact layout. entries in insertion order (deleted
 * entries have key CV_NULL until a resize compacts them); index is an
 * open-addressing table of entry numbers (-1 empty, -2 deleted). */
typedef struct code_dict_entry { uint64_t hash; cv key, value; } code_dict_entry;
typedef struct code_dict {
    code_obj ob;
    size_t used;                 /* live entries */
    size_t nentries, cap;        /* entries written / allocated */
    size_t nindex;               /* power of two, 0 when small and linear */
    int64_t *index;
    code_dict_entry *e;
    uint64_t version;            /* bumped on every change: iterators check it */
} code_dict;

/* set and frozenset: a dict whose values are unused. */
typedef struct code_set { code_dict d; uint64_t hash; /* frozenset */ } code_set;

typedef struct code_range { code_obj ob; int64_t start, stop, step, len; } code_range;
typedef struct code_slice { code_obj ob; cv start, stop, step; } code_slice;   /* None for absent */

/* An exception instance. */
typedef struct code_exc {
    code_obj ob;
    cv args;                     /* tuple */
    cv cause, context;           /* exception or CV_NULL */
    bool suppress_context;       /* raise ... from ... */
    int line;                    /* where it was raised, 0 if unknown */
    /* A dict of the attributes some types carry besides args (str keys:
     * JSONDecodeError.pos, UnicodeDecodeError.start...), or CV_NULL. */
    cv attrs;
} code_exc;

/* A builtin function or a bound builtin method (self != CV_NULL: passed as
 * args[0]). */
typedef struct code_cfunc_obj {
    code_obj ob;
    const char *name;
    code_cfunc fn;
    cv self;
} code_cfunc_obj;

typedef struct code_module_obj {
    code_obj ob;
    const char *name;
    cv dict;                     /* a dict of its members */
} code_module_obj;

typedef struct code_cell { code_obj ob; cv v; } code_cell;   /* v CV_NULL: empty */

/* Every builtin iterator: a state struct of its own after this header. */
typedef struct code_iterobj { code_obj ob; } code_iterobj;

/* ---- immortal singletons ------------------------------------------------ */

extern code_obj code_none_obj, code_true_obj, code_false_obj, code_notimpl_obj,
    code_ellipsis_obj;
#define CODE_NONE cv_of(&code_none_obj)
#define CODE_TRUE cv_of(&code_true_obj)
#define CODE_FALSE cv_of(&code_false_obj)
#define CODE_NOTIMPL cv_of(&code_notimpl_obj)
#define CODE_ELLIPSIS cv_of(&code_ellipsis_obj)
static inline cv code_bool(bool b) { return b ? CODE_TRUE : CODE_FALSE; }

extern const code_type code_type_none, code_type_bool, code_type_int, code_type_float,
    code_type_str, code_type_bytes, code_type_list, code_type_tuple, code_type_dict,
    code_type_set, code_type_frozenset, code_type_range, code_type_slice,
    code_type_cfunc, code_type_module, code_type_cell, code_type_notimpl,
    code_type_ellipsis;

static inline const code_type *cv_type(cv v)
{
    return cv_is_small(v) ? &code_type_int : cv_obj(v)->type;
}
static inline bool cv_is(cv v, const code_type *t) { return !cv_is_small(v) && cv_obj(v)->type == t; }
static inline int cv_kind(cv v) { return cv_type(v)->kind; }

/* ---- references and the heap (code_heap.c, code_obj.c) ------------------- */

void code_obj_free(code_vm *vm, code_obj *o);   /* rc reached 0 */
/* The vm a heap object belongs to is needed to free it: decref takes it. */
static inline cv code_incref(cv v)
{
    if (v && !cv_is_small(v) && !(cv_obj(v)->rc & CODE_RC_IMMORTAL))
        cv_obj(v)->rc++;
    return v;
}
static inline void code_decref(code_vm *vm, cv v)
{
    if (v && !cv_is_small(v) && !(cv_obj(v)->rc & CODE_RC_IMMORTAL) && --cv_obj(v)->rc == 0)
        code_obj_free(vm, cv_obj(v));
}
/* Replace *slot with v (stealing v), dropping the old value. */
static inline void code_setref(code_vm *vm, cv *slot, cv v)
{
    cv old = *slot;
    *slot = v;
    code_decref(vm, old);
}

/* A new object of type t, size bytes (>= sizeof(code_obj)), zeroed past the
 * header, rc 1. CV_NULL + MemoryError past the run's limits. */
void *code_obj_new(code_vm *vm, const code_type *t, size_t size);
/* Raw blocks from the run's heap (buffers of lists, dicts, ...), counted
 * against its limits; MemoryError raised on failure. */
void *code_heap_alloc(code_vm *vm, size_t n);
void *code_heap_realloc(code_vm *vm, void *p, size_t osize, size_t nsize);
void code_heap_free(code_vm *vm, void *p, size_t n);

/* ---- exceptions (code_exc.c) ---------------------------------------------- */

extern const code_type code_exc_BaseException, code_exc_Exception,
    code_exc_ArithmeticError, code_exc_ZeroDivisionError, code_exc_OverflowError,
    code_exc_LookupError, code_exc_IndexError, code_exc_KeyError,
    code_exc_ValueError, code_exc_UnicodeError, code_exc_UnicodeDecodeError,
    code_exc_UnicodeEncodeError, code_exc_TypeError, code_exc_NameError,
    code_exc_UnboundLocalError, code_exc_AttributeError, code_exc_RuntimeError,
    code_exc_NotImplementedError, code_exc_RecursionError, code_exc_MemoryError,
    code_exc_OSError, code_exc_TimeoutError, code_exc_AssertionError,
    code_exc_StopIteration, code_exc_StopAsyncIteration, code_exc_ImportError,
    code_exc_ModuleNotFoundError, code_exc_SyntaxError, code_exc_KeyboardInterrupt,
    code_exc_GeneratorExit, code_exc_SystemExit, code_exc_FileNotFoundError,
    code_exc_PermissionError, code_exc_JSONDecodeError, code_exc_re_error;

/* Sets vm->exc to a new exception of type t with the formatted message as its
 * one argument; returns CV_NULL (so "return code_raise(...)" works). */
cv code_raise(code_vm *vm, const code_type *t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same, returning -1. */
int code_raise_i(code_vm *vm, const code_type *t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Raises exc (an exception instance or type; steals the reference). */
cv code_raise_obj(code_vm *vm, cv exc);
cv code_raise_nomem(code_vm *vm);      /* MemoryError, allocation-free */
/* A new exception instance of t with args (a tuple; stolen). */
cv code_exc_new(code_vm *vm, const code_type *t, cv args);
/* t is t2 or derives from it. */
bool code_type_is_sub(const code_type *t, const code_type *t2);
/* vm->exc's type is (a subtype of) t. */
bool code_exc_matches(code_vm *vm, const code_type *t);
/* Takes vm->exc (the caller owns it; vm->exc becomes CV_NULL). */
cv code_exc_fetch(code_vm *vm);
void code_exc_clear(code_vm *vm);
/* Sets the extra attribute name of exc (an exception instance) to value
 * (borrowed): exc.name reads it. 0, or -1 with MemoryError. */
int code_exc_set_attr(code_vm *vm, cv exc, const char *name, cv value);
/* str(exc): "" for no args, the arg for one, the args tuple's repr else. */
cv code_exc_str(code_vm *vm, cv exc);
/* An exception type by its builtin name ("ValueError"), or NULL. */
const code_type *code_exc_type_by_name(const char *name);
/* A type object for a host-given exception name that is not builtin: a new
 * heap type deriving Exception (see code_host.c). */
cv code_exc_type_dynamic(code_vm *vm, const char *name);

/* ---- generic operations (code_ops.c) -------------------------------------- */

cv code_repr(code_vm *vm, cv v);
cv code_str_of(code_vm *vm, cv v);                 /* str(v) */
int code_hash(code_vm *vm, cv v, uint64_t *h);
/* 1, 0 or -1: v == w by Python's rules (identity first, then compare). */
int code_eq(code_vm *vm, cv v, cv w);
cv code_compare(code_vm *vm, cv a, cv b, int op);  /* a op b, any value */
int code_compare_bool(code_vm *vm, cv a, cv b, int op);   /* 1, 0 or -1 */
cv code_binop(code_vm *vm, int op, cv a, cv b);
/* a op= b: lists extend in place, everything else is code_binop. */
cv code_binop_inplace(code_vm *vm, int op, cv a, cv b);
cv code_unop(code_vm *vm, int op, cv a);
int code_truth(code_vm *vm, cv v);                 /* 1, 0 or -1 */
ssize_t code_len(code_vm *vm, cv v);
cv code_iter(code_vm *vm, cv v);
cv code_next(code_vm *vm, cv it);                  /* CV_NULL, no exception: done */
/* The iter slot of every iterator: an iterator is its own iterator. */
cv code_iter_self(code_vm *vm, cv self);
cv code_getitem(code_vm *vm, cv v, cv key);
int code_setitem(code_vm *vm, cv v, cv key, cv value);
int code_delitem(code_vm *vm, cv v, cv key);
int code_contains(code_vm *vm, cv container, cv x);
cv code_getattr(code_vm *vm, cv v, const char *name);   /* bound methods too */
/* obj.name(*args) without making the bound method. */
cv code_call_method(code_vm *vm, cv obj, const char *name, cv *args, size_t nargs,
                    cv kwnames);
cv code_call(code_vm *vm, cv callable, cv *args, size_t nargs, cv kwnames);
const char *code_type_name(cv v);
/* A hash of a C string that is the same in every process (for identity
 * hashes that must not depend on addresses: replays must iterate sets the
 * same way). */
uint64_t code_hash_cstr(const char *s);
/* A builtin function (self CV_NULL) or a bound builtin method (self
 * increfed, passed as args[0]) (code_obj.c). */
cv code_cfunc_new(code_vm *vm, const char *name, code_cfunc fn, cv self);
/* fn(self, *args, **kw) with self put in front of the arguments. */
cv code_call_with_self(code_vm *vm, code_cfunc fn, cv self, cv *args, size_t nargs, cv kw);
/* A type's method by name, looked up along its bases; NULL if none. */
const code_method *code_type_method(const code_type *t, const char *name);
/* Symbols of the binary operators, "+", "//", ... for messages. */
const char *code_binop_symbol(int op);

/* Argument parsing for builtins (code_args.c). spec lists the parameters
 * separated by commas, as a Python signature would: "/" after the
 * positional-only ones, "*" before the keyword-only ones, and a '|' before
 * the first optional name (it and every later one are optional). Outputs are
 * cv* in order; optional ones not given are left as they were. Borrowed
 * references. Raises CPython's TypeErrors ("f() takes at most 2 arguments (3
 * given)", "f() got an unexpected keyword argument 'x'").
 *   code_args(vm, "sorted", args, nargs, kw, "iterable,/,*,|key,reverse", &it, &key, &rev) */
int code_args(code_vm *vm, const char *fname, cv *args, size_t nargs, cv kwnames,
              const char *spec, ...);
/* No keywords allowed; between min and max positional arguments. */
int code_args_nokw(code_vm *vm, const char *fname, size_t nargs, cv kwnames, size_t min,
                   size_t max);
/* The index value of v (int or bool, or __index__-like): -1 with TypeError. */
int code_as_i64(code_vm *vm, cv v, int64_t *out);
/* Clamped for indices: big ints become INT64_MIN/MAX. */
int code_as_index(code_vm *vm, cv v, ssize_t *out);

/* ---- numbers (code_int.c, code_float.c) ------------------------------------ */

cv code_int_from_i64(code_vm *vm, int64_t i);
cv code_int_from_u64(code_vm *vm, uint64_t u);
/* digits in base (2..36, no prefix or '_'), with sign; CV_NULL + error. */
cv code_int_from_digits(code_vm *vm, const char *digits, size_t n, int base, bool negative);
/* 1 if it fits int64 (*out set), 0 if not. */
int code_int_to_i64(cv v, int64_t *out);
/* Nearest double; OverflowError "int too large to convert to float". */
int code_int_to_double(code_vm *vm, cv v, double *out);
cv code_int_repr(code_vm *vm, cv v);               /* decimal str */
int code_int_sign(cv v);                           /* -1, 0, 1 */
cv code_float_new(code_vm *vm, double d);
/* The shortest repr that round-trips, as CPython's float.__repr__. */
cv code_float_repr(code_vm *vm, double d);
/* int, float or bool to double (TypeError otherwise). */
int code_as_double(code_vm *vm, cv v, double *out);
/* round(x[, ndigits]): ndigits CV_NULL or None for an int result; banker's
 * rounding, floats rounded correctly in decimal. */
cv code_num_round(code_vm *vm, cv x, cv ndigits);
cv code_num_divmod(code_vm *vm, cv a, cv b);         /* a tuple */
cv code_num_abs(code_vm *vm, cv x);
/* pow(base, exp, mod): mod CV_NULL or None is base ** exp; else all ints,
 * a negative exp takes the modular inverse. */
cv code_num_pow3(code_vm *vm, cv base, cv exp, cv mod);
/* bin/oct/hex (base 2, 8, 16; 10 is repr): "0x1f", "-0b101". */
cv code_int_to_str_base(code_vm *vm, cv v, int base);

/* ---- str and bytes (code_str.c, code_bytes.c) -------------------------------- */

/* A new str from UTF-8 (checked by the caller: s must be valid UTF-8). */
cv code_str_new(code_vm *vm, const char *s, size_t n);
cv code_str_from_cstr(code_vm *vm, const char *s);
cv code_str_fmt(code_vm *vm, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same string, an immortal static for the process (names of builtins,
 * attribute names): see code_intern.c. */
cv code_str_intern(code_vm *vm, const char *s, size_t n);
static inline const char *code_str_cstr(cv s) { return ((code_str *)cv_obj(s))->s; }
static inline size_t code_str_len(cv s) { return ((code_str *)cv_obj(s))->len; }
bool code_str_eq_cstr(cv s, const char *c);
cv code_bytes_new(code_vm *vm, const void *s, size_t n);
/* format(value, spec): the format-spec mini-language (code_format.c). */
cv code_format(code_vm *vm, cv value, cv spec);
/* Strict UTF-8 (no overlongs, surrogates or code points past U+10FFFF), as
 * CPython's decoder accepts it. */
bool code_utf8_valid(const char *s, size_t n);
/* ascii(v): repr(v) with every non-ASCII character escaped (f-strings' !a). */
cv code_ascii_of(code_vm *vm, cv v);

/* A growing UTF-8 buffer on the run's heap, for repr, join, format... */
typedef struct code_sb {
    code_vm *vm;
    char *p;
    size_t len, cap;
    bool failed;                 /* MemoryError raised */
} code_sb;
void code_sb_init(code_sb *b, code_vm *vm);
int code_sb_add(code_sb *b, const char *s, size_t n);
int code_sb_addc(code_sb *b, const char *s);
int code_sb_printf(code_sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends repr(v) / str(v). */
int code_sb_repr(code_sb *b, cv v);
int code_sb_str(code_sb *b, cv v);
/* The buffer as a str (freeing it); CV_NULL on failure. */
cv code_sb_finish(code_sb *b);
void code_sb_free(code_sb *b);

/* ---- containers (code_list.c, code_tuple.c, code_dict.c, code_set.c) ---------- */

cv code_list_new(code_vm *vm, size_t cap);
int code_list_append(code_vm *vm, cv list, cv v);         /* borrows v */
cv code_list_from(code_vm *vm, cv iterable);             /* list(iterable) */
/* Sorts in place, stable (merge sort), key may be CV_NULL. */
int code_list_sort(code_vm *vm, cv list, cv key, bool reverse);
cv code_tuple_new(code_vm *vm, size_t n);                 /* n slots, CV_NULL-filled */
cv code_tuple_pack(code_vm *vm, size_t n, ...);           /* borrows each */
cv code_tuple_from(code_vm *vm, cv iterable);
/* A code_tuple (not a bare code_obj) so reading its n is in bounds. */
extern code_tuple code_empty_tuple_obj;
#define CODE_EMPTY_TUPLE cv_of(&code_empty_tuple_obj)
cv code_dict_new(code_vm *vm);
/* Borrowed value or CV_NULL (no exception) when absent; -1/error on unhashable. */
int code_dict_get(code_vm *vm, cv d, cv key, cv *out);
int code_dict_get_cstr(code_vm *vm, cv d, const char *key, cv *out);
int code_dict_set(code_vm *vm, cv d, cv key, cv value);  /* borrows both */
int code_dict_del(code_vm *vm, cv d, cv key);            /* KeyError if absent */
/* Iteration by position: returns false at the end; *pos starts at 0. */
bool code_dict_next(cv d, size_t *pos, cv *key, cv *value);
cv code_set_new(code_vm *vm, bool frozen);
int code_set_add(code_vm *vm, cv set, cv key);
cv code_range_new(code_vm *vm, int64_t start, int64_t stop, int64_t step);
cv code_slice_new(code_vm *vm, cv start, cv stop, cv step);   /* borrows */
/* Resolves a slice against a length, as PySlice_AdjustIndices. */
int code_slice_indices(code_vm *vm, cv slice, ssize_t len, ssize_t *start, ssize_t *stop,
                       ssize_t *step, ssize_t *count);

/* ---- builtins and modules (code_builtins.c, code_mod_*.c) ----------------------- */

/* Each module fills its members into a fresh dict: code_import calls these.
 * math: code_mod_math.c (numbers); json, re, datetime: code_mod_*.c
 * (builtins); asyncio: the evaluator. */
int code_mod_math_init(code_vm *vm, cv dict);
int code_mod_json_init(code_vm *vm, cv dict);
int code_mod_re_init(code_vm *vm, cv dict);
int code_mod_datetime_init(code_vm *vm, cv dict);
int code_mod_asyncio_init(code_vm *vm, cv dict);

/* A class attribute of a library type (timezone.utc, date.min,
 * timedelta.max): a new reference, or CV_NULL with no exception when the
 * type has none. The type of types' getattr asks it (code_mod_datetime.c). */
cv code_lib_type_attr(code_vm *vm, const code_type *t, const char *name);
/* A builtin name's value (borrowed, immortal) or CV_NULL. */
cv code_builtin_lookup(const char *name);
/* import: the module object (new reference), or ModuleNotFoundError. */
cv code_import(code_vm *vm, const char *dotted_name);

#endif
