/* Dunder methods made from the type slots, so that code calling them by name
 * ('abc'.__len__(), (2).__add__(3), key=d.__getitem__, a.__eq__(b)) works for
 * every type without each listing them. Which names a type answers follows
 * CPython's builtin types (str has __add__ and __rmod__ but no __radd__ or
 * __sub__; only ints have __invert__), so hasattr agrees with CPython's for
 * them. The operator methods call the type's own slot, not the generic
 * operation, and so answer NotImplemented as CPython's do ((1).__add__('a')). */
#include "code/code_dunder.h"

#include <string.h>

#include "code/code_dt.h"
#include "code/code_lib.h"
#include "code/code_num.h"

/* ---- arguments: the messages of CPython's slot wrappers ---------------------- */

/* CPython checks the arguments of __pow__ and __setitem__ with
 * PyArg_UnpackTuple and an empty name, hence the leading space of those
 * messages. */
static int wrap_args(code_vm *vm, const char *name, size_t nargs, cv kwnames, size_t min,
                     size_t max)
{
    const char *sp = min != max || min == 2 ? " " : "";
    if (nargs == 0)
        return code_raise_i(vm, &code_exc_TypeError, "descriptor '%s' needs an argument", name);
    if (kwnames && ((code_tuple *)cv_obj(kwnames))->n)
        return code_raise_i(vm, &code_exc_TypeError, "wrapper %s() takes no keyword arguments",
                            name);
    size_t n = nargs - 1;
    if (n >= min && n <= max)
        return 0;
    if (min == max)
        return code_raise_i(vm, &code_exc_TypeError, "%sexpected %zu argument%s, got %zu", sp,
                            min, min == 1 ? "" : "s", n);
    return code_raise_i(vm, &code_exc_TypeError, "%sexpected at %s %zu argument%s, got %zu", sp,
                        n < min ? "least" : "most", n < min ? min : max,
                        (n < min ? min : max) == 1 ? "" : "s", n);
}

#define ARGS(name, min, max)                                            \
    do {                                                                \
        if (wrap_args(vm, name, nargs, kwnames, min, max) < 0)          \
            return CV_NULL;                                             \
    } while (0)

/* ---- containers and iterators ------------------------------------------------ */

static cv d_len(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    ARGS("__len__", 0, 0);
    ssize_t n = code_len(vm, args[0]);
    return n < 0 ? CV_NULL : code_int_from_i64(vm, n);
}

static cv d_getitem(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    ARGS("__getitem__", 1, 1);
    return code_getitem(vm, args[0], args[1]);
}

static cv d_setitem(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    ARGS("__setitem__", 2, 2);
    return code_setitem(vm, args[0], args[1], args[2]) < 0 ? CV_NULL : CODE_NONE;
}

static cv d_delitem(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    ARGS("__delitem__", 1, 1);
    return code_delitem(vm, args[0], args[1]) < 0 ? CV_NULL : CODE_NONE;
}

static cv d_contains(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    ARGS("__contains__", 1, 1);
    int r = code_contains(vm, args[0], args[1]);
    return r < 0 ? CV_NULL : code_bool(r);
}

static cv d_iter(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    ARGS("__iter__", 0, 0);
    return code_iter(vm, args[0]);
}

static cv d_next(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    ARGS("__next__", 0, 0);
    cv r = code_next(vm, args[0]);
    return r || vm->exc ? r : code_lib_stop(vm);
}

/* ---- every object ------------------------------------------------------------ */

static cv d_repr(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    ARGS("__repr__", 0, 0);
    return code_repr(vm, args[0]);
}

static cv d_str(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    ARGS("__str__", 0, 0);
    return code_str_of(vm, args[0]);
}

static cv d_hash(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    ARGS("__hash__", 0, 0);
    uint64_t h;
    return code_hash(vm, args[0], &h) < 0 ? CV_NULL : code_int_from_i64(vm, (int64_t)h);
}

static cv d_format(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (nargs != 2 || (kwnames && ((code_tuple *)cv_obj(kwnames))->n)) {
        if (nargs == 0 || (kwnames && ((code_tuple *)cv_obj(kwnames))->n))
            return code_raise(vm, &code_exc_TypeError, "__format__() takes no keyword arguments");
        return code_raise(vm, &code_exc_TypeError, "%s.__format__() takes exactly one argument "
                          "(%zu given)", code_type_name(args[0]), nargs - 1);
    }
    if (!cv_is(args[1], &code_type_str))
        return code_raise(vm, &code_exc_TypeError, "__format__() argument must be str, not %s",
                          code_type_name(args[1]));
    return code_format(vm, args[0], args[1]);
}

/* ---- numbers ----------------------------------------------------------------- */

static cv d_bool(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    ARGS("__bool__", 0, 0);
    int r = code_truth(vm, args[0]);
    return r < 0 ? CV_NULL : code_bool(r);
}

static cv d_abs(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    ARGS("__abs__", 0, 0);
    return code_bi_abs(vm, args, 1, CV_NULL);
}

static cv unop_of(code_vm *vm, cv self, int op)
{
    const code_type *t = cv_type(self);
    while (t && !t->unop)
        t = t->base;
    if (!t)
        return code_raise(vm, &code_exc_TypeError, "bad operand type for unary op: '%s'",
                          code_type_name(self));
    return t->unop(vm, op, self);
}

static cv d_neg(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    ARGS("__neg__", 0, 0);
    return unop_of(vm, args[0], CODE_UOP_NEG);
}

static cv d_pos(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    ARGS("__pos__", 0, 0);
    return unop_of(vm, args[0], CODE_UOP_POS);
}

static cv d_invert(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    ARGS("__invert__", 0, 0);
    return unop_of(vm, args[0], CODE_UOP_INVERT);
}

static cv d_int(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    ARGS("__int__", 0, 0);
    return code_call(vm, cv_of(&code_type_int), args, 1, CV_NULL);
}

static cv d_index(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    ARGS("__index__", 0, 0);
    return code_call(vm, cv_of(&code_type_int), args, 1, CV_NULL);
}

static cv d_float(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    ARGS("__float__", 0, 0);
    return code_call(vm, cv_of(&code_type_float), args, 1, CV_NULL);
}

/* ---- comparisons: the type's own slot, NotImplemented when it has no answer
 * (object's __eq__ is identity, its __ne__ the inverse of __eq__). */

static cv compare_of(code_vm *vm, cv *args, size_t nargs, cv kwnames, const char *name, int op)
{
    ARGS(name, 1, 1);
    cv a = args[0], b = args[1];
    const code_type *t = cv_type(a);
    /* int's methods leave floats to float's reflected ones, as CPython's. */
    if ((t->kind == CODE_K_INT || t->kind == CODE_K_BOOL) && code_is_float(b))
        return CODE_NOTIMPL;
    if (!t->compare) {
        if (op == CODE_CMP_EQ || op == CODE_CMP_NE)
            return a == b ? code_bool(op == CODE_CMP_EQ) : CODE_NOTIMPL;
        return CODE_NOTIMPL;
    }
    if (code_guard_enter(vm, "in comparison"))
        return CV_NULL;
    cv r = t->compare(vm, a, b, op);
    if (r == CODE_NOTIMPL && op == CODE_CMP_NE) {
        r = t->compare(vm, a, b, CODE_CMP_EQ);
        if (r && r != CODE_NOTIMPL) {
            int tr = code_truth(vm, r);
            code_decref(vm, r);
            r = tr < 0 ? CV_NULL : code_bool(!tr);
        }
    }
    code_guard_leave(vm);
    return r;
}

#define CMP(fn, name, op)                                                    \
    static cv fn(code_vm *vm, cv *args, size_t nargs, cv kwnames)            \
    {                                                                        \
        return compare_of(vm, args, nargs, kwnames, name, op);               \
    }
CMP(d_eq, "__eq__", CODE_CMP_EQ)
CMP(d_ne, "__ne__", CODE_CMP_NE)
CMP(d_lt, "__lt__", CODE_CMP_LT)
CMP(d_le, "__le__", CODE_CMP_LE)
CMP(d_gt, "__gt__", CODE_CMP_GT)
CMP(d_ge, "__ge__", CODE_CMP_GE)

/* ---- binary operators: self op other, or other op self for the __r*__ forms */

static cv binop_of(code_vm *vm, cv *args, size_t nargs, cv kwnames, const char *name, int op,
                   bool refl)
{
    /* __pow__ and __rpow__ take a modulus too. */
    ARGS(name, 1, op == CODE_OP_POW ? 2 : 1);
    cv self = args[0], other = args[1];
    const code_type *t = cv_type(self);
    if ((t->kind == CODE_K_INT || t->kind == CODE_K_BOOL) && code_is_float(other))
        return CODE_NOTIMPL;
    if (nargs == 3 && args[2] != CODE_NONE)
        return refl ? code_num_pow3(vm, other, self, args[2])
                    : code_num_pow3(vm, self, other, args[2]);
    while (t && !t->binop)
        t = t->base;
    if (!t)
        return CODE_NOTIMPL;
    if (code_guard_enter(vm, "in a binary operation"))
        return CV_NULL;
    cv r = refl ? t->binop(vm, op, other, self) : t->binop(vm, op, self, other);
    code_guard_leave(vm);
    return r;
}

#define BIN(fn, rfn, name, rname, op)                                        \
    static cv fn(code_vm *vm, cv *args, size_t nargs, cv kwnames)            \
    {                                                                        \
        return binop_of(vm, args, nargs, kwnames, name, op, false);          \
    }                                                                        \
    static cv rfn(code_vm *vm, cv *args, size_t nargs, cv kwnames)           \
    {                                                                        \
        return binop_of(vm, args, nargs, kwnames, rname, op, true);          \
    }
BIN(d_add, d_radd, "__add__", "__radd__", CODE_OP_ADD)
BIN(d_sub, d_rsub, "__sub__", "__rsub__", CODE_OP_SUB)
BIN(d_mul, d_rmul, "__mul__", "__rmul__", CODE_OP_MUL)
BIN(d_truediv, d_rtruediv, "__truediv__", "__rtruediv__", CODE_OP_TRUEDIV)
BIN(d_floordiv, d_rfloordiv, "__floordiv__", "__rfloordiv__", CODE_OP_FLOORDIV)
BIN(d_mod, d_rmod, "__mod__", "__rmod__", CODE_OP_MOD)
BIN(d_pow, d_rpow, "__pow__", "__rpow__", CODE_OP_POW)
BIN(d_lshift, d_rlshift, "__lshift__", "__rlshift__", CODE_OP_LSHIFT)
BIN(d_rshift, d_rrshift, "__rshift__", "__rrshift__", CODE_OP_RSHIFT)
BIN(d_and, d_rand, "__and__", "__rand__", CODE_OP_AND)
BIN(d_or, d_ror, "__or__", "__ror__", CODE_OP_OR)
BIN(d_xor, d_rxor, "__xor__", "__rxor__", CODE_OP_XOR)

/* ---- which type has which ------------------------------------------------------ */

enum need {
    N_ANY, N_LEN, N_GETITEM, N_SETITEM, N_DELITEM, N_CONTAINS, N_ITER, N_NEXT, N_HASH,
    N_BOOL, N_ABS, N_NEGPOS, N_INT, N_REAL, N_BINOP,
};

typedef struct dunder {
    code_method m;
    uint8_t need;
    int8_t op;                   /* N_BINOP: the operator */
    bool refl;                   /* N_BINOP: the __r*__ form */
} dunder;

#define B2(name, rname, fn, rfn, op) \
    { { name, fn }, N_BINOP, op, false }, { { rname, rfn }, N_BINOP, op, true }

static const dunder dunders[] = {
    { { "__len__", d_len }, N_LEN, 0, false },
    { { "__getitem__", d_getitem }, N_GETITEM, 0, false },
    { { "__setitem__", d_setitem }, N_SETITEM, 0, false },
    { { "__delitem__", d_delitem }, N_DELITEM, 0, false },
    { { "__contains__", d_contains }, N_CONTAINS, 0, false },
    { { "__iter__", d_iter }, N_ITER, 0, false },
    { { "__next__", d_next }, N_NEXT, 0, false },
    { { "__repr__", d_repr }, N_ANY, 0, false },
    { { "__str__", d_str }, N_ANY, 0, false },
    { { "__hash__", d_hash }, N_HASH, 0, false },
    { { "__format__", d_format }, N_ANY, 0, false },
    { { "__eq__", d_eq }, N_ANY, 0, false },
    { { "__ne__", d_ne }, N_ANY, 0, false },
    { { "__lt__", d_lt }, N_ANY, 0, false },
    { { "__le__", d_le }, N_ANY, 0, false },
    { { "__gt__", d_gt }, N_ANY, 0, false },
    { { "__ge__", d_ge }, N_ANY, 0, false },
    { { "__bool__", d_bool }, N_BOOL, 0, false },
    { { "__abs__", d_abs }, N_ABS, 0, false },
    { { "__neg__", d_neg }, N_NEGPOS, 0, false },
    { { "__pos__", d_pos }, N_NEGPOS, 0, false },
    { { "__invert__", d_invert }, N_INT, 0, false },
    { { "__index__", d_index }, N_INT, 0, false },
    { { "__int__", d_int }, N_REAL, 0, false },
    { { "__float__", d_float }, N_REAL, 0, false },
    B2("__add__", "__radd__", d_add, d_radd, CODE_OP_ADD),
    B2("__sub__", "__rsub__", d_sub, d_rsub, CODE_OP_SUB),
    B2("__mul__", "__rmul__", d_mul, d_rmul, CODE_OP_MUL),
    B2("__truediv__", "__rtruediv__", d_truediv, d_rtruediv, CODE_OP_TRUEDIV),
    B2("__floordiv__", "__rfloordiv__", d_floordiv, d_rfloordiv, CODE_OP_FLOORDIV),
    B2("__mod__", "__rmod__", d_mod, d_rmod, CODE_OP_MOD),
    B2("__pow__", "__rpow__", d_pow, d_rpow, CODE_OP_POW),
    B2("__lshift__", "__rlshift__", d_lshift, d_rlshift, CODE_OP_LSHIFT),
    B2("__rshift__", "__rrshift__", d_rshift, d_rrshift, CODE_OP_RSHIFT),
    B2("__and__", "__rand__", d_and, d_rand, CODE_OP_AND),
    B2("__or__", "__ror__", d_or, d_ror, CODE_OP_OR),
    B2("__xor__", "__rxor__", d_xor, d_rxor, CODE_OP_XOR),
};

#define OPBIT(op) (1u << (op))

/* The operators CPython's type of kind/t defines, as __op__ or as __rop__. */
static unsigned binops_of(const code_type *t, bool refl)
{
    switch (t->kind) {
    case CODE_K_INT:
    case CODE_K_BOOL:
        return (OPBIT(CODE_OP__COUNT) - 1) & ~OPBIT(CODE_OP_MATMUL);
    case CODE_K_FLOAT:
        return OPBIT(CODE_OP_POW + 1) - 1;      /* + - * / // % ** */
    case CODE_K_STR:
    case CODE_K_BYTES:
        return (refl ? 0 : OPBIT(CODE_OP_ADD)) | OPBIT(CODE_OP_MUL) | OPBIT(CODE_OP_MOD);
    case CODE_K_LIST:
    case CODE_K_TUPLE:
        return (refl ? 0 : OPBIT(CODE_OP_ADD)) | OPBIT(CODE_OP_MUL);
    case CODE_K_DICT:
        return OPBIT(CODE_OP_OR);
    case CODE_K_SET:
    case CODE_K_FROZENSET:
        return OPBIT(CODE_OP_SUB) | OPBIT(CODE_OP_AND) | OPBIT(CODE_OP_OR) | OPBIT(CODE_OP_XOR);
    default:
        if (!t->binop)
            return 0;
        if (t == &code_type_dt_timedelta)
            return OPBIT(CODE_OP_MOD + 1) - 1;  /* + - * / // % */
        if (t == &code_type_dt_date || t == &code_type_dt_datetime)
            return OPBIT(CODE_OP_ADD) | OPBIT(CODE_OP_SUB);
        /* the dict views: set operations */
        return OPBIT(CODE_OP_SUB) | OPBIT(CODE_OP_AND) | OPBIT(CODE_OP_OR) | OPBIT(CODE_OP_XOR);
    }
}

static bool has(const code_type *t, const dunder *d)
{
    int k = t->kind;
    bool num = k == CODE_K_INT || k == CODE_K_BOOL || k == CODE_K_FLOAT;
    switch (d->need) {
    case N_ANY: return true;
    case N_LEN: return t->len;
    case N_GETITEM: return t->getitem && k != CODE_K_SET && k != CODE_K_FROZENSET;
    case N_SETITEM: return t->setitem;
    case N_DELITEM: return t->delitem;
    case N_CONTAINS: return t->contains;
    case N_ITER: return t->iter;
    case N_NEXT: return t->next;
    case N_HASH: /* the kinds CPython hashes by identity have one */
        return t->hash || k == CODE_K_ITER || k == CODE_K_FUNC || k == CODE_K_CFUNC ||
               k == CODE_K_METHOD || k == CODE_K_MODULE || k == CODE_K_CORO;
    case N_BOOL: return num || k == CODE_K_NONE || k == CODE_K_RANGE ||
                        t == &code_type_dt_timedelta;
    case N_ABS:
    case N_NEGPOS: return num || t == &code_type_dt_timedelta;
    case N_INT: return k == CODE_K_INT || k == CODE_K_BOOL;
    case N_REAL: return num;
    default: return binops_of(t, d->refl) & OPBIT(d->op);
    }
}

const code_method *code_dunder_method(const code_type *t, const char *name)
{
    if (name[0] != '_' || name[1] != '_')
        return NULL;
    for (size_t i = 0; i < sizeof(dunders) / sizeof(dunders[0]); i++)
        if (!strcmp(dunders[i].m.name, name))
            return has(t, &dunders[i]) ? &dunders[i].m : NULL;
    return NULL;
}

bool code_dunder_hash_none(const code_type *t, const char *name)
{
    /* Not for the kinds CPython hashes by identity (iterators, functions,
     * modules): they have the method (has()). */
    int k = t->kind;
    return !t->hash && k != CODE_K_ITER && k != CODE_K_FUNC && k != CODE_K_CFUNC &&
           k != CODE_K_METHOD && k != CODE_K_MODULE && k != CODE_K_CORO &&
           !strcmp(name, "__hash__");
}
