/* The parser: expressions, by CPython's precedence, lowest first. */
#include "code/code_parse_int.h"

#include <string.h>

/* ---- the precedence ladder ---- */

/* expression: disjunction ['if' disjunction 'else' expression] | lambdef */
code_expr *cp_expr(code_parser *p)
{
    if (cp_enter(p))
        return NULL;
    code_expr *e;
    if (CP_IS(p, LAMBDA)) {
        e = cp_lambda(p);
    } else {
        e = cp_disjunction(p);
        if (e && CP_IS(p, IF)) {
            code_expr *c = cp_new(p, CODE_E_IFEXP, e->line, e->col);
            if (!c || cp_advance(p))
                return NULL;
            c->u.ifexp.body = e;
            if (!(c->u.ifexp.test = cp_disjunction(p)))
                return NULL;
            if (!CP_IS(p, ELSE))
                return cp_syntax(p, "expected 'else' after 'if' expression"), NULL;
            if (cp_advance(p) || !(c->u.ifexp.orelse = cp_expr(p)))
                return NULL;
            e = cp_finish(p, c);
        }
    }
    cp_leave(p);
    if (e)
        p->last = e;
    return e;
}

/* named_expression: NAME ':=' expression | expression */
code_expr *cp_named(code_parser *p)
{
    code_expr *e = cp_expr(p);
    if (!e || !CP_IS(p, WALRUS))
        return e;
    if (e->kind != CODE_E_NAME || e->parens)
        return code_error_set(p->err, "SyntaxError", e->line, e->col,
                              "cannot use assignment expressions with %s", cp_describe(e)),
               NULL;
    code_expr *w = cp_new(p, CODE_E_WALRUS, e->line, e->col);
    if (!w || cp_advance(p))
        return NULL;
    w->u.bin.l = e;
    if (!(w->u.bin.r = cp_expr(p)))
        return NULL;
    return cp_finish(p, w);
}

/* disjunction: conjunction ('or' conjunction)*
 * conjunction: inversion ('and' inversion)* */
static code_expr *inversion(code_parser *p);

static code_expr *boolop(code_parser *p, bool is_or)
{
    code_expr *first = is_or ? boolop(p, false) : inversion(p);
    code_tok_kind k = is_or ? CODE_T_OR : CODE_T_AND;
    if (!first || p->tok.kind != k)
        return first;
    code_expr *e = cp_new(p, is_or ? CODE_E_OR : CODE_E_AND, first->line, first->col);
    uint32_t cap = 0;
    if (!e || cp_push_expr(p, &e->u.seq.v, &e->u.seq.n, &cap, first))
        return NULL;
    while (p->tok.kind == k) {
        code_expr *x;
        if (cp_advance(p) || !(x = is_or ? boolop(p, false) : inversion(p)) ||
            cp_push_expr(p, &e->u.seq.v, &e->u.seq.n, &cap, x))
            return NULL;
    }
    return cp_finish(p, e);
}

code_expr *cp_disjunction(code_parser *p)
{
    return boolop(p, true);
}

static code_expr *comparison(code_parser *p);

/* inversion: 'not' inversion | comparison */
static code_expr *inversion(code_parser *p)
{
    if (!CP_IS(p, NOT))
        return comparison(p);
    code_expr *e = cp_new(p, CODE_E_NOT, p->tok.line, p->tok.col);
    if (!e || cp_enter(p) || cp_advance(p) || !(e->u.unary.x = inversion(p)))
        return NULL;
    cp_leave(p);
    return cp_finish(p, e);
}

/* comparison: bitwise_or (compare_op bitwise_or)* */
static code_expr *comparison(code_parser *p)
{
    code_expr *left = cp_bitor(p);
    if (!left)
        return NULL;
    code_expr *e = NULL;
    uint32_t cap = 0, ocap = 0, on = 0;
    for (;;) {
        int op;
        switch (p->tok.kind) {
        case CODE_T_EQ: case CODE_T_NE: case CODE_T_LT: case CODE_T_LE: case CODE_T_GT:
        case CODE_T_GE: case CODE_T_IN:
            op = p->tok.kind;
            break;
        case CODE_T_IS: {
            const code_tok *nx = cp_peek(p);
            if (!nx)
                return NULL;
            op = nx->kind == CODE_T_NOT ? CODE_CMP_IS_NOT : CODE_T_IS;
            break;
        }
        case CODE_T_NOT: {
            const code_tok *nx = cp_peek(p);
            if (!nx)
                return NULL;
            if (nx->kind != CODE_T_IN)
                return cp_syntax(p, "invalid syntax"), NULL;
            op = CODE_CMP_NOT_IN;
            break;
        }
        default:
            return e ? cp_finish(p, e) : left;
        }
        if (!e) {
            if (!(e = cp_new(p, CODE_E_COMPARE, left->line, left->col)))
                return NULL;
            e->u.cmp.left = left;
        }
        if (cp_advance(p))
            return NULL;
        if ((op == CODE_CMP_IS_NOT || op == CODE_CMP_NOT_IN) && cp_advance(p))
            return NULL;
        uint8_t *slot = cp_push(p, &e->u.cmp.ops, &on, &ocap, 1);
        code_expr *r;
        if (!slot || !(r = cp_bitor(p)) ||
            cp_push_expr(p, &e->u.cmp.rest, &e->u.cmp.n, &cap, r))
            return NULL;
        *slot = (uint8_t)op;
    }
}

static code_expr *factor(code_parser *p);

/* The left-associative binary levels, lowest first:
 * bitwise_or '|', bitwise_xor '^', bitwise_and '&', shift_expr '<<' '>>',
 * sum '+' '-', term '*' '/' '//' '%' '@'. */
static int level_of(code_tok_kind k)
{
    switch (k) {
    case CODE_T_PIPE: return 0;
    case CODE_T_CARET: return 1;
    case CODE_T_AMP: return 2;
    case CODE_T_LSHIFT: case CODE_T_RSHIFT: return 3;
    case CODE_T_PLUS: case CODE_T_MINUS: return 4;
    case CODE_T_STAR: case CODE_T_SLASH: case CODE_T_DSLASH: case CODE_T_PERCENT:
    case CODE_T_AT:
        return 5;
    default: return -1;
    }
}

/* Precedence climbing over those levels: the right operand of a level-k
 * operator binds at level k + 1 (all are left-associative), so one frame
 * serves an operand however many levels it skips. */
static code_expr *binary(code_parser *p, int min_level)
{
    code_expr *l = factor(p);
    int lv;
    while (l && (lv = level_of(p->tok.kind)) >= min_level) {
        if (CP_IS(p, AT))
            return cp_refuse(p, "the '@' operator (matrix multiplication) is not supported"),
                   NULL;
        code_expr *e = cp_new(p, CODE_E_BINOP, l->line, l->col);
        if (!e)
            return NULL;
        e->op = (uint8_t)p->tok.kind;
        e->u.bin.l = l;
        if (cp_advance(p) || !(e->u.bin.r = binary(p, lv + 1)))
            return NULL;
        l = cp_finish(p, e);
    }
    return l;
}

code_expr *cp_bitor(code_parser *p)
{
    return binary(p, 0);
}

static code_expr *power(code_parser *p);

/* factor: ('+' | '-' | '~') factor | power */
static code_expr *factor(code_parser *p)
{
    if (!CP_IS(p, PLUS) && !CP_IS(p, MINUS) && !CP_IS(p, TILDE))
        return power(p);
    code_expr *e = cp_new(p, CODE_E_UNARY, p->tok.line, p->tok.col);
    if (!e || cp_enter(p))
        return NULL;
    e->op = (uint8_t)p->tok.kind;
    if (cp_advance(p) || !(e->u.unary.x = factor(p)))
        return NULL;
    cp_leave(p);
    return cp_finish(p, e);
}

static code_expr *primary(code_parser *p);

/* power: await_primary ['**' factor]
 * await_primary: 'await' primary | primary */
static code_expr *power(code_parser *p)
{
    code_expr *base;
    if (CP_IS(p, AWAIT)) {
        if (!p->in_async && !(p->in_func == 0 && p->opts.top_level_await))
            cp_later(p, p->tok.line, p->tok.col, p->in_func ? "'await' outside async function"
                                                            : "'await' outside function");
        code_expr *a = cp_new(p, CODE_E_AWAIT, p->tok.line, p->tok.col);
        if (!a || cp_advance(p) || !(a->u.unary.x = primary(p)))
            return NULL;
        base = cp_finish(p, a);
    } else {
        base = primary(p);
    }
    if (!base || !CP_IS(p, DSTAR))
        return base;
    code_expr *e = cp_new(p, CODE_E_BINOP, base->line, base->col);
    if (!e || cp_enter(p))
        return NULL;
    e->op = CODE_T_DSTAR;
    e->u.bin.l = base;
    if (cp_advance(p) || !(e->u.bin.r = factor(p)))
        return NULL;
    cp_leave(p);
    return cp_finish(p, e);
}

static code_expr *atom(code_parser *p);

/* primary: atom ('.' NAME | '(' [args] ')' | '[' slices ']')* */
static code_expr *primary(code_parser *p)
{
    code_expr *e = atom(p);
    while (e) {
        if (CP_IS(p, DOT)) {
            code_expr *a = cp_new(p, CODE_E_ATTR, e->line, e->col);
            if (!a || cp_advance(p))
                return NULL;
            if (!CP_IS(p, NAME))
                return cp_syntax(p, "invalid syntax"), NULL;
            a->u.attr.obj = e;
            a->u.attr.name = p->tok.s;
            if (cp_advance(p))
                return NULL;
            e = cp_finish(p, a);
        } else if (CP_IS(p, LPAR)) {
            e = cp_call(p, e);
        } else if (CP_IS(p, LSQB)) {
            e = cp_subscript(p, e);
        } else {
            break;
        }
    }
    return e;
}

/* atom: NAME | 'True' | 'False' | 'None' | strings | NUMBER | tuple | group
 *     | genexp | list | listcomp | dict | set | dictcomp | setcomp | '...' */
static code_expr *atom(code_parser *p)
{
    code_expr *e;
    code_expr_kind k;
    switch (p->tok.kind) {
    case CODE_T_NAME:
    case CODE_T_INT:
        k = CP_IS(p, NAME) ? CODE_E_NAME : CODE_E_INT;
        if (!(e = cp_new(p, k, p->tok.line, p->tok.col)))
            return NULL;
        e->u.str.text = p->tok.s;
        e->u.str.len = p->tok.len;
        e->base = p->tok.base;
        return cp_advance(p) ? NULL : e;
    case CODE_T_FLOAT:
        if (!(e = cp_new(p, CODE_E_FLOAT, p->tok.line, p->tok.col)))
            return NULL;
        e->u.f = p->tok.f;
        return cp_advance(p) ? NULL : e;
    case CODE_T_TRUE: k = CODE_E_TRUE; goto constant;
    case CODE_T_FALSE: k = CODE_E_FALSE; goto constant;
    case CODE_T_NONE: k = CODE_E_NONE; goto constant;
    case CODE_T_ELLIPSIS: k = CODE_E_ELLIPSIS;
    constant:
        if (!(e = cp_new(p, k, p->tok.line, p->tok.col)))
            return NULL;
        return cp_advance(p) ? NULL : e;
    case CODE_T_STRING:
        return cp_strings(p);
    case CODE_T_LPAR:
        return cp_paren(p);
    case CODE_T_LSQB:
        return cp_list(p);
    case CODE_T_LBRACE:
        return cp_brace(p);
    case CODE_T_YIELD:
        return cp_refuse(p, "'yield' is not supported (generators are not part of code mode)"),
               NULL;
    case CODE_T_STAR:
        return cp_syntax(p, "can't use starred expression here"), NULL;
    case CODE_T_INDENT:
        return cp_unexpected_indent(p), NULL;
    case CODE_T_END:
        return cp_syntax(p, p->lx.sub ? "f-string: invalid syntax" : "unexpected end of input"),
               NULL;
    default:
        return cp_syntax(p, "invalid syntax"), NULL;
    }
}

/* star_expressions / star_named_expressions: (('*' bitwise_or) | expression)
 * (',' ...)* [','] */
code_expr *cp_exprlist(code_parser *p, bool named)
{
    int line = p->tok.line, col = p->tok.col;
    code_expr *t = NULL;
    uint32_t cap = 0;
    for (;;) {
        code_expr *x;
        if (CP_IS(p, STAR)) {
            if (!(x = cp_new(p, CODE_E_STARRED, p->tok.line, p->tok.col)) || cp_enter(p) ||
                cp_advance(p) || !(x->u.unary.x = cp_bitor(p)))
                return NULL;
            cp_leave(p);
            if (!(x = cp_finish(p, x)))
                return NULL;
        } else if (!(x = named ? cp_named(p) : cp_expr(p))) {
            return NULL;
        }
        if (!t && !CP_IS(p, COMMA))
            return x;
        if (!t && !(t = cp_new(p, CODE_E_TUPLE, line, col)))
            return NULL;
        if (cp_push_expr(p, &t->u.seq.v, &t->u.seq.n, &cap, x))
            return NULL;
        if (!CP_IS(p, COMMA))
            break;
        if (cp_advance(p))
            return NULL;
        if (!cp_starts_expr(p->tok.kind) || CP_IS(p, YIELD))
            break;
    }
    return cp_finish(p, t);
}

/* star_targets: star_target (',' star_target)* [','], each a bitwise_or
 * (so that "in" ends them) */
code_expr *cp_targets(code_parser *p)
{
    int line = p->tok.line, col = p->tok.col;
    code_expr *t = NULL;
    uint32_t cap = 0;
    for (;;) {
        code_expr *x;
        if (CP_IS(p, STAR)) {
            if (!(x = cp_new(p, CODE_E_STARRED, p->tok.line, p->tok.col)) || cp_enter(p) ||
                cp_advance(p) || !(x->u.unary.x = cp_bitor(p)))
                return NULL;
            cp_leave(p);
            if (!(x = cp_finish(p, x)))
                return NULL;
        } else if (!(x = cp_bitor(p))) {
            return NULL;
        }
        if (!t && !CP_IS(p, COMMA))
            return x;
        if (!t && !(t = cp_new(p, CODE_E_TUPLE, line, col)))
            return NULL;
        if (cp_push_expr(p, &t->u.seq.v, &t->u.seq.n, &cap, x))
            return NULL;
        if (!CP_IS(p, COMMA))
            break;
        if (cp_advance(p))
            return NULL;
        if (CP_IS(p, IN))
            break;
    }
    return cp_finish(p, t);
}
