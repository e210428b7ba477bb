/* The evaluator: expressions. A switch over the node kind, recursing on the
 * tree (whose height the parser bounds). Names were resolved to slots by the
 * scope pass; small-int arithmetic and comparisons take a fast path before
 * the generic operations. Every function returns a new reference, or CV_NULL
 * with vm->exc set. */
#include "code/code_eval.h"

#include <string.h>

#include "code/code_lex.h"

/* Token kinds PLUS..RSHIFT (their order in code_lex.h) to code_binop's ops. */
static const uint8_t tok_binop[] = {
    CODE_OP_ADD, CODE_OP_SUB, CODE_OP_MUL, CODE_OP_TRUEDIV, CODE_OP_FLOORDIV, CODE_OP_MOD,
    CODE_OP_POW, CODE_OP_MATMUL, CODE_OP_AND, CODE_OP_OR, CODE_OP_XOR, CODE_OP_LSHIFT,
    CODE_OP_RSHIFT,
};

int code_tok_to_binop(int tok)
{
    return tok_binop[tok - CODE_T_PLUS];
}

cv code_name_error(code_vm *vm, const char *name)
{
    return code_raise(vm, &code_exc_NameError, "name '%s' is not defined", name);
}

static cv unbound(code_vm *vm, const code_frame *f, const code_expr *e)
{
    const char *n = e->u.str.text;
    (void)f;
    if (e->op == CODE_NK_FREE)
        return code_raise(vm, &code_exc_NameError,
                          "cannot access free variable '%s' where it is not associated with a "
                          "value in enclosing scope",
                          n);
    return code_raise(vm, &code_exc_UnboundLocalError,
                      "cannot access local variable '%s' where it is not associated with a value",
                      n);
}

/* A global slot that is unbound: a builtin, or NameError; or, for a call's
 * callee or a bare-name argument when the host declared no functions, a host
 * function (other references to an unknown name are NameErrors). */
static cv load_global_slow(code_vm *vm, uint32_t i, bool callee)
{
    struct code_eval *ev = vm->ev;
    const char *name = ev->prog.gnames[i];
    cv b = code_builtin_lookup(name);
    if (b) {
        ev->gcache[i] = b;
        return b;
    }
    if (callee && ev->host_any) {
        if (!ev->hcache[i] && !(ev->hcache[i] = code_hostfn_new(vm, ev->prog.gname_str[i])))
            return CV_NULL;
        return code_incref(ev->hcache[i]);
    }
    return code_name_error(vm, name);
}

cv code_load_callee(code_vm *vm, code_frame *f, const code_expr *e)
{
    if (e->op != CODE_NK_GLOBAL)
        return code_eval_expr(vm, f, e);
    struct code_eval *ev = vm->ev;
    cv v = ev->gv[e->height];
    if (v)
        return code_incref(v);
    v = ev->gcache[e->height];
    if (v)
        return v;
    return load_global_slow(vm, e->height, true);
}

static inline cv load_name(code_vm *vm, code_frame *f, const code_expr *e)
{
    cv v;
    switch (e->op) {
    case CODE_NK_LOCAL:
        v = f->fast[e->height];
        return v ? code_incref(v) : unbound(vm, f, e);
    case CODE_NK_CELL: case CODE_NK_FREE:
        v = ((code_cell *)cv_obj(f->fast[e->height]))->v;
        return v ? code_incref(v) : unbound(vm, f, e);
    default: {
        struct code_eval *ev = vm->ev;
        v = ev->gv[e->height];
        if (v)
            return code_incref(v);
        v = ev->gcache[e->height];
        if (v)
            return v;
        return load_global_slow(vm, e->height, false);
    }
    }
}

int code_store_name(code_vm *vm, code_frame *f, uint8_t kind, uint32_t slot, cv v)
{
    code_incref(v);
    switch (kind) {
    case CODE_NK_LOCAL:
        code_setref(vm, &f->fast[slot], v);
        return 0;
    case CODE_NK_CELL: case CODE_NK_FREE:
        code_setref(vm, &((code_cell *)cv_obj(f->fast[slot]))->v, v);
        return 0;
    default:
        code_setref(vm, &vm->ev->gv[slot], v);
        return 0;
    }
}

/* ---- operators ------------------------------------------------------------ */

static inline cv binop_fast(code_vm *vm, int op, cv a, cv b, int line)
{
    if (cv_is_small(a) && cv_is_small(b)) {
        int64_t x = cv_small(a), y = cv_small(b), r;
        switch (op) {
        case CODE_OP_ADD:
            r = x + y;
            if (cv_fits_small(r))
                return cv_from_small(r);
            break;
        case CODE_OP_SUB:
            r = x - y;
            if (cv_fits_small(r))
                return cv_from_small(r);
            break;
        case CODE_OP_MUL:
            if (!__builtin_mul_overflow(x, y, &r) && cv_fits_small(r))
                return cv_from_small(r);
            break;
        case CODE_OP_AND:
            return cv_from_small(x & y);
        case CODE_OP_OR:
            return cv_from_small(x | y);
        case CODE_OP_XOR:
            return cv_from_small(x ^ y);
        case CODE_OP_FLOORDIV: case CODE_OP_MOD:
            if (y > 0) {
                int64_t q = x / y, m = x % y;
                if (m && ((m < 0) != (y < 0))) {
                    q--;
                    m += y;
                }
                return cv_from_small(op == CODE_OP_MOD ? m : q);
            }
            break;
        default:
            break;
        }
    }
    if (line)
        vm->line = line;   /* an error names the operator's line */
    return code_binop(vm, op, a, b);
}

cv code_binop_fast(code_vm *vm, int op, cv a, cv b)
{
    return binop_fast(vm, op, a, b, 0);
}

static int cmp_op(int tok)
{
    switch (tok) {
    case CODE_T_LT: return CODE_CMP_LT;
    case CODE_T_LE: return CODE_CMP_LE;
    case CODE_T_EQ: return CODE_CMP_EQ;
    case CODE_T_NE: return CODE_CMP_NE;
    case CODE_T_GT: return CODE_CMP_GT;
    default: return CODE_CMP_GE;
    }
}

/* a op b for one link of a comparison chain: a new value. */
static cv compare_one(code_vm *vm, int tok, cv a, cv b)
{
    if (cv_is_small(a) && cv_is_small(b)) {
        intptr_t x = (intptr_t)a, y = (intptr_t)b;   /* the tag keeps the order */
        switch (tok) {
        case CODE_T_LT: return code_bool(x < y);
        case CODE_T_LE: return code_bool(x <= y);
        case CODE_T_EQ: return code_bool(x == y);
        case CODE_T_NE: return code_bool(x != y);
        case CODE_T_GT: return code_bool(x > y);
        case CODE_T_GE: return code_bool(x >= y);
        default: break;
        }
    }
    switch (tok) {
    case CODE_T_IS: return code_bool(a == b);
    case CODE_CMP_IS_NOT: return code_bool(a != b);
    case CODE_T_IN: case CODE_CMP_NOT_IN: {
        int r = code_contains(vm, b, a);
        if (r < 0)
            return CV_NULL;
        return code_bool(tok == CODE_T_IN ? r : !r);
    }
    default:
        return code_compare(vm, a, b, cmp_op(tok));
    }
}

static cv eval_compare(code_vm *vm, code_frame *f, const code_expr *e)
{
    cv a = code_eval_fast(vm, f, e->u.cmp.left);
    if (!a)
        return CV_NULL;
    for (uint32_t i = 0; i < e->u.cmp.n; i++) {
        cv b = code_eval_fast(vm, f, e->u.cmp.rest[i]);
        if (!b) {
            code_decref(vm, a);
            return CV_NULL;
        }
        cv r = compare_one(vm, e->u.cmp.ops[i], a, b);
        code_decref(vm, a);
        if (!r || i + 1 == e->u.cmp.n) {
            code_decref(vm, b);
            return r;
        }
        int t = code_truth(vm, r);
        if (t <= 0) {
            code_decref(vm, b);
            if (t < 0) {
                code_decref(vm, r);
                return CV_NULL;
            }
            return r;
        }
        code_decref(vm, r);
        a = b;
    }
    return a;   /* not reached: n >= 1 */
}

/* Truth of an expression without materialising True/False when it is a
 * comparison of small ints. -1 on error. */
int code_eval_truth(code_vm *vm, code_frame *f, const code_expr *e)
{
    if (e->kind == CODE_E_COMPARE && e->u.cmp.n == 1) {
        cv a = code_eval_fast(vm, f, e->u.cmp.left);
        if (!a)
            return -1;
        cv b = code_eval_fast(vm, f, e->u.cmp.rest[0]);
        if (!b) {
            code_decref(vm, a);
            return -1;
        }
        if (cv_is_small(a) && cv_is_small(b)) {
            intptr_t x = (intptr_t)a, y = (intptr_t)b;   /* the tag keeps the order */
            switch (e->u.cmp.ops[0]) {
            case CODE_T_LT: return x < y;
            case CODE_T_LE: return x <= y;
            case CODE_T_EQ: return x == y;
            case CODE_T_NE: return x != y;
            case CODE_T_GT: return x > y;
            case CODE_T_GE: return x >= y;
            default: break;
            }
        }
        cv r = compare_one(vm, e->u.cmp.ops[0], a, b);
        code_decref(vm, a);
        code_decref(vm, b);
        if (!r)
            return -1;
        if (r == CODE_TRUE)
            return 1;
        if (r == CODE_FALSE)
            return 0;
        int t = code_truth(vm, r);
        code_decref(vm, r);
        return t;
    }
    cv v = code_eval_expr(vm, f, e);
    if (!v)
        return -1;
    if (v == CODE_TRUE)
        return 1;
    if (v == CODE_FALSE || v == CODE_NONE)
        return 0;
    if (cv_is_small(v))
        return v != cv_from_small(0);
    int t = code_truth(vm, v);
    code_decref(vm, v);
    return t;
}

static cv eval_andor(code_vm *vm, code_frame *f, const code_expr *e)
{
    bool is_and = e->kind == CODE_E_AND;
    cv v = CV_NULL;
    for (uint32_t i = 0; i < e->u.seq.n; i++) {
        code_decref(vm, v);
        v = code_eval_expr(vm, f, e->u.seq.v[i]);
        if (!v || i + 1 == e->u.seq.n)
            return v;
        int t = code_truth(vm, v);
        if (t < 0) {
            code_decref(vm, v);
            return CV_NULL;
        }
        if (is_and ? !t : t)
            return v;
    }
    return v;
}

static cv eval_unary(code_vm *vm, code_frame *f, const code_expr *e)
{
    cv v = code_eval_expr(vm, f, e->u.unary.x);
    if (!v)
        return CV_NULL;
    int op = e->op == CODE_T_MINUS ? CODE_UOP_NEG : e->op == CODE_T_PLUS ? CODE_UOP_POS
                                                                         : CODE_UOP_INVERT;
    if (cv_is_small(v)) {
        int64_t x = cv_small(v);
        if (op == CODE_UOP_POS)
            return v;
        if (op == CODE_UOP_INVERT)
            return cv_from_small(~x);
        if (x != CV_SMALL_MIN)
            return cv_from_small(-x);
    }
    cv r = code_unop(vm, op, v);
    code_decref(vm, v);
    return r;
}

static cv eval_subscript(code_vm *vm, code_frame *f, const code_expr *e)
{
    cv o = code_eval_fast(vm, f, e->u.bin.l);
    if (!o)
        return CV_NULL;
    cv k = code_eval_fast(vm, f, e->u.bin.r);
    if (!k) {
        code_decref(vm, o);
        return CV_NULL;
    }
    cv r;
    if (cv_is_small(k) && cv_is(o, &code_type_list)) {
        code_list *l = (code_list *)cv_obj(o);
        int64_t i = cv_small(k);
        if (i < 0)
            i += (int64_t)l->n;
        if (i >= 0 && (size_t)i < l->n) {
            r = code_incref(l->v[i]);
            code_decref(vm, o);
            return r;
        }
    }
    vm->line = e->line;
    r = code_getitem(vm, o, k);
    code_decref(vm, o);
    code_decref(vm, k);
    return r;
}

static cv eval_slice(code_vm *vm, code_frame *f, const code_expr *e)
{
    cv p[3] = {CODE_NONE, CODE_NONE, CODE_NONE};
    const code_expr *x[3] = {e->u.slice.lo, e->u.slice.hi, e->u.slice.step};
    for (int i = 0; i < 3; i++)
        if (x[i] && !(p[i] = code_eval_expr(vm, f, x[i]))) {
            for (int j = 0; j < i; j++)
                code_decref(vm, p[j]);
            return CV_NULL;
        }
    cv s = code_slice_new(vm, p[0], p[1], p[2]);
    for (int i = 0; i < 3; i++)
        code_decref(vm, p[i]);
    return s;
}

/* The expression kinds that are not hot, out of line so the hot path's
 * frame stays small. */
__attribute__((noinline)) static cv eval_rest(code_vm *vm, code_frame *f, const code_expr *e)
{
    switch ((code_expr_kind)e->kind) {
    case CODE_E_NAME: case CODE_E_INT: case CODE_E_FLOAT: case CODE_E_STR: case CODE_E_BYTES:
    case CODE_E_BINOP: case CODE_E_CALL:
        break;   /* code_eval_expr's own */
    case CODE_E_COMPARE:
        return eval_compare(vm, f, e);
    case CODE_E_NONE: return CODE_NONE;
    case CODE_E_TRUE: return CODE_TRUE;
    case CODE_E_FALSE: return CODE_FALSE;
    case CODE_E_ELLIPSIS: return CODE_ELLIPSIS;
    case CODE_E_FSTRING:
        return code_eval_fstring(vm, f, e);
    case CODE_E_FORMATTED:
        return code_raise(vm, &code_exc_RuntimeError, "a format field outside an f-string");
    case CODE_E_LIST:
        return code_eval_list(vm, f, e);
    case CODE_E_TUPLE:
        return code_eval_tuple(vm, f, e);
    case CODE_E_SET:
        return code_eval_set(vm, f, e);
    case CODE_E_DICT:
        return code_eval_dict(vm, f, e);
    case CODE_E_LISTCOMP: case CODE_E_SETCOMP: case CODE_E_GENEXP: case CODE_E_DICTCOMP:
        return code_eval_comp(vm, f, e);
    case CODE_E_STARRED:
        return code_raise(vm, &code_exc_SyntaxError, "can't use starred expression here");
    case CODE_E_WALRUS: {
        cv v = code_eval_expr(vm, f, e->u.bin.r);
        if (v && code_assign(vm, f, e->u.bin.l, v)) {
            code_decref(vm, v);
            return CV_NULL;
        }
        return v;
    }
    case CODE_E_LAMBDA:
        return code_make_function(vm, f, vm->ev->prog.scopes[e->height], e->u.lambda.params,
                                  "<lambda>");
    case CODE_E_IFEXP: {
        int t = code_eval_truth(vm, f, e->u.ifexp.test);
        if (t < 0)
            return CV_NULL;
        return code_eval_expr(vm, f, t ? e->u.ifexp.body : e->u.ifexp.orelse);
    }
    case CODE_E_AND: case CODE_E_OR:
        return eval_andor(vm, f, e);
    case CODE_E_NOT: {
        int t = code_eval_truth(vm, f, e->u.unary.x);
        return t < 0 ? CV_NULL : code_bool(!t);
    }
    case CODE_E_UNARY:
        return eval_unary(vm, f, e);
    case CODE_E_AWAIT: {
        cv v = code_eval_expr(vm, f, e->u.unary.x);
        if (!v)
            return CV_NULL;
        cv r = code_await(vm, v);
        code_decref(vm, v);
        return r;
    }
    case CODE_E_ATTR: {
        cv o = code_eval_expr(vm, f, e->u.attr.obj);
        if (!o)
            return CV_NULL;
        vm->line = e->line;
        cv r = code_getattr(vm, o, e->u.attr.name);
        code_decref(vm, o);
        return r;
    }
    case CODE_E_SUBSCRIPT:
        return eval_subscript(vm, f, e);
    case CODE_E_SLICE:
        return eval_slice(vm, f, e);
    }
    return code_raise(vm, &code_exc_RuntimeError, "bad expression node");
}

cv code_eval_expr(code_vm *vm, code_frame *f, const code_expr *e)
{
    /* an expression up to the parser's height limit inside each of many
     * Python frames: the stack is checked here too, not only at calls */
    if (__builtin_expect((char *)__builtin_frame_address(0) < vm->stack_lo, 0))
        return code_raise(vm, &code_exc_RecursionError, "maximum recursion depth exceeded");
    switch ((code_expr_kind)e->kind) {
    case CODE_E_NAME:
        return load_name(vm, f, e);
    case CODE_E_INT: case CODE_E_FLOAT: case CODE_E_STR: case CODE_E_BYTES:
        return code_incref(vm->ev->prog.consts[e->height]);
    case CODE_E_BINOP: {
        cv a = code_eval_fast(vm, f, e->u.bin.l);
        if (!a)
            return CV_NULL;
        cv b = code_eval_fast(vm, f, e->u.bin.r);
        if (!b) {
            code_decref(vm, a);
            return CV_NULL;
        }
        cv r = binop_fast(vm, tok_binop[e->op - CODE_T_PLUS], a, b, e->line);
        code_decref(vm, a);
        code_decref(vm, b);
        return r;
    }
    case CODE_E_CALL:
        return code_eval_call(vm, f, e);
    default:
        return eval_rest(vm, f, e);
    }
}
