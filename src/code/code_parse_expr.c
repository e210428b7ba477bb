/* The parser: expressions, by CPython's precedence, lowest first. */
#include "code/code_parse_int.h"

#include <string.h>

code_expr *cp_new(code_parser *p, code_expr_kind kind, int line, int col)
{
    code_expr *e = cp_alloc(p, sizeof(*e));
    if (e) {
        e->kind = (uint8_t)kind;
        e->line = line;
        e->col = col;
        e->height = 1;
    }
    return e;
}

static uint32_t h(const code_expr *e)
{
    return e ? e->height : 0;
}

static uint32_t hmax(uint32_t a, uint32_t b)
{
    return a > b ? a : b;
}

static uint32_t hseq(code_expr *const *v, uint32_t n)
{
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++)
        m = hmax(m, h(v[i]));
    return m;
}

static uint32_t hparams(const code_params *ps)
{
    uint32_t m = 0;
    for (uint32_t i = 0; i < ps->npos; i++)
        m = hmax(m, hmax(h(ps->pos[i].def), h(ps->pos[i].annotation)));
    for (uint32_t i = 0; i < ps->nkwonly; i++)
        m = hmax(m, hmax(h(ps->kwonly[i].def), h(ps->kwonly[i].annotation)));
    if (ps->vararg)
        m = hmax(m, h(ps->vararg->annotation));
    if (ps->kwarg)
        m = hmax(m, h(ps->kwarg->annotation));
    return m;
}

code_expr *cp_finish(code_parser *p, code_expr *e)
{
    if (!e)
        return NULL;
    uint32_t m = 0;
    switch ((code_expr_kind)e->kind) {
    case CODE_E_FSTRING: case CODE_E_LIST: case CODE_E_TUPLE: case CODE_E_SET:
    case CODE_E_AND: case CODE_E_OR:
        m = hseq(e->u.seq.v, e->u.seq.n);
        break;
    case CODE_E_FORMATTED:
        m = hmax(h(e->u.fmt.value), h(e->u.fmt.spec));
        break;
    case CODE_E_DICT:
        m = hmax(hseq(e->u.dict.keys, e->u.dict.n), hseq(e->u.dict.values, e->u.dict.n));
        break;
    case CODE_E_LISTCOMP: case CODE_E_SETCOMP: case CODE_E_GENEXP: case CODE_E_DICTCOMP:
        m = hmax(h(e->u.comp.elt), h(e->u.comp.value));
        for (uint32_t i = 0; i < e->u.comp.n; i++) {
            const code_comp *g = &e->u.comp.gens[i];
            m = hmax(m, hmax(h(g->target), h(g->iter)));
            m = hmax(m, hseq(g->ifs, g->nifs));
        }
        break;
    case CODE_E_STARRED: case CODE_E_NOT: case CODE_E_UNARY: case CODE_E_AWAIT:
        m = h(e->u.unary.x);
        break;
    case CODE_E_WALRUS: case CODE_E_BINOP: case CODE_E_SUBSCRIPT:
        m = hmax(h(e->u.bin.l), h(e->u.bin.r));
        break;
    case CODE_E_LAMBDA:
        m = hmax(h(e->u.lambda.body), hparams(e->u.lambda.params));
        break;
    case CODE_E_IFEXP:
        m = hmax(h(e->u.ifexp.test), hmax(h(e->u.ifexp.body), h(e->u.ifexp.orelse)));
        break;
    case CODE_E_COMPARE:
        m = hmax(h(e->u.cmp.left), hseq(e->u.cmp.rest, e->u.cmp.n));
        break;
    case CODE_E_CALL:
        m = hmax(h(e->u.call.fn), hseq(e->u.call.args, e->u.call.nargs));
        for (uint32_t i = 0; i < e->u.call.nkws; i++)
            m = hmax(m, h(e->u.call.kws[i].value));
        break;
    case CODE_E_ATTR:
        m = h(e->u.attr.obj);
        break;
    case CODE_E_SLICE:
        m = hmax(h(e->u.slice.lo), hmax(h(e->u.slice.hi), h(e->u.slice.step)));
        break;
    default:
        break;
    }
    e->height = m + 1;
    if (e->height > p->opts.max_height) {
        code_error_set(p->err, "SyntaxError", e->line, e->col,
                       "expression too deeply nested (the parser's limit is %u levels)",
                       p->opts.max_height);
        return NULL;
    }
    return e;
}

bool cp_starts_expr(code_tok_kind k)
{
    switch (k) {
    case CODE_T_NAME: case CODE_T_INT: case CODE_T_FLOAT: case CODE_T_STRING:
    case CODE_T_FALSE: case CODE_T_NONE: case CODE_T_TRUE: case CODE_T_AWAIT:
    case CODE_T_LAMBDA: case CODE_T_NOT: case CODE_T_LPAR: case CODE_T_LSQB:
    case CODE_T_LBRACE: case CODE_T_ELLIPSIS: case CODE_T_PLUS: case CODE_T_MINUS:
    case CODE_T_TILDE: case CODE_T_STAR: case CODE_T_YIELD:
        return true;
    default:
        return false;
    }
}

/* ---- targets ---- */

const char *cp_describe(const code_expr *e)
{
    switch ((code_expr_kind)e->kind) {
    case CODE_E_NAME: return "name";
    case CODE_E_NONE: return "None";
    case CODE_E_TRUE: return "True";
    case CODE_E_FALSE: return "False";
    case CODE_E_ELLIPSIS: return "ellipsis";
    case CODE_E_INT: case CODE_E_FLOAT: case CODE_E_STR: case CODE_E_BYTES: return "literal";
    case CODE_E_FSTRING: case CODE_E_FORMATTED: return "f-string expression";
    case CODE_E_LIST: return "list";
    case CODE_E_TUPLE: return "tuple";
    case CODE_E_SET: return "set display";
    case CODE_E_DICT: return "dict literal";
    case CODE_E_LISTCOMP: return "list comprehension";
    case CODE_E_SETCOMP: return "set comprehension";
    case CODE_E_DICTCOMP: return "dict comprehension";
    case CODE_E_GENEXP: return "generator expression";
    case CODE_E_STARRED: return "starred";
    case CODE_E_WALRUS: return "named expression";
    case CODE_E_LAMBDA: return "lambda";
    case CODE_E_IFEXP: return "conditional expression";
    case CODE_E_COMPARE: return "comparison";
    case CODE_E_AWAIT: return "await expression";
    case CODE_E_CALL: return "function call";
    case CODE_E_ATTR: return "attribute";
    case CODE_E_SUBSCRIPT: return "subscript";
    default: return "expression";
    }
}

int cp_check_target(code_parser *p, const code_expr *e, int ctx)
{
    switch ((code_expr_kind)e->kind) {
    case CODE_E_NAME: case CODE_E_ATTR: case CODE_E_SUBSCRIPT:
        return 0;
    case CODE_E_TUPLE: case CODE_E_LIST: {
        if (ctx == 1)
            break;
        int stars = 0;
        for (uint32_t i = 0; i < e->u.seq.n; i++) {
            const code_expr *x = e->u.seq.v[i];
            if (x->kind == CODE_E_STARRED) {
                if (++stars > 1)
                    return code_error_set(p->err, "SyntaxError", x->line, x->col,
                                          "multiple starred expressions in assignment");
                x = x->u.unary.x;
                if (x->kind == CODE_E_STARRED)
                    return code_error_set(p->err, "SyntaxError", x->line, x->col,
                                          "cannot use starred expression here");
            }
            if (cp_check_target(p, x, 0))
                return -1;
        }
        return 0;
    }
    case CODE_E_STARRED:
        if (ctx == 0)
            return code_error_set(p->err, "SyntaxError", e->line, e->col,
                                  "starred assignment target must be in a list or tuple");
        break;
    default:
        break;
    }
    if (ctx == 1)
        return code_error_set(p->err, "SyntaxError", e->line, e->col,
                              "'%s' is an illegal expression for augmented assignment",
                              cp_describe(e));
    return code_error_set(p->err, "SyntaxError", e->line, e->col, "cannot assign to %s",
                          cp_describe(e));
}

/* ---- lambda and parameters ---- */

static int param(code_parser *p, code_param *pr, bool lambda, bool allow_default)
{
    if (!CP_IS(p, NAME))
        return cp_syntax(p, "invalid syntax");
    pr->name = p->tok.s;
    pr->line = p->tok.line;
    pr->col = p->tok.col;
    if (cp_advance(p))
        return -1;
    if (!lambda && CP_IS(p, COLON)) {
        if (cp_advance(p) || !(pr->annotation = cp_expr(p)))
            return -1;
    }
    if (allow_default && CP_IS(p, ASSIGN)) {
        if (cp_advance(p) || !(pr->def = cp_expr(p)))
            return -1;
    }
    return 0;
}

static bool params_has(const code_params *ps, const char *name)
{
    for (uint32_t i = 0; i < ps->npos; i++)
        if (strcmp(ps->pos[i].name, name) == 0)
            return true;
    for (uint32_t i = 0; i < ps->nkwonly; i++)
        if (strcmp(ps->kwonly[i].name, name) == 0)
            return true;
    return (ps->vararg && strcmp(ps->vararg->name, name) == 0) ||
           (ps->kwarg && strcmp(ps->kwarg->name, name) == 0);
}

/* params: (param ['=' default] | '/' | '*' [param] | '**' param) (',' ...)* [',']
 * up to ')' (def) or ':' (lambda), which is left for the caller. */
code_params *cp_params(code_parser *p, bool lambda)
{
    code_params *ps = cp_alloc(p, sizeof(*ps));
    if (!ps)
        return NULL;
    code_tok_kind close = lambda ? CODE_T_COLON : CODE_T_RPAR;
    uint32_t pcap = 0, kcap = 0;
    bool star = false, slash = false, bare_star = false, defaults = false;
    while (p->tok.kind != close) {
        code_param tmp;
        memset(&tmp, 0, sizeof(tmp));
        if (ps->kwarg)
            return cp_syntax(p, "arguments cannot follow var-keyword argument"), NULL;
        if (CP_IS(p, SLASH)) {
            if (slash)
                return cp_syntax(p, "/ may appear only once"), NULL;
            if (star)
                return cp_syntax(p, "/ must be ahead of *"), NULL;
            if (ps->npos == 0)
                return cp_syntax(p, "at least one argument must precede /"), NULL;
            slash = true;
            ps->nposonly = ps->npos;
            if (cp_advance(p))
                return NULL;
        } else if (CP_IS(p, STAR)) {
            if (star)
                return cp_syntax(p, "* argument may appear only once"), NULL;
            star = true;
            if (cp_advance(p))
                return NULL;
            if (CP_IS(p, COMMA) || p->tok.kind == close) {
                bare_star = true;
            } else {
                if (!(ps->vararg = cp_alloc(p, sizeof(*ps->vararg))) ||
                    param(p, ps->vararg, lambda, false))
                    return NULL;
                if (CP_IS(p, ASSIGN))
                    return cp_syntax(p, "var-positional argument cannot have default value"),
                           NULL;
            }
        } else if (CP_IS(p, DSTAR)) {
            if (cp_advance(p) || !(ps->kwarg = cp_alloc(p, sizeof(*ps->kwarg))) ||
                param(p, ps->kwarg, lambda, false))
                return NULL;
            if (CP_IS(p, ASSIGN))
                return cp_syntax(p, "var-keyword argument cannot have default value"), NULL;
        } else {
            if (param(p, &tmp, lambda, true))
                return NULL;
            if (params_has(ps, tmp.name))
                return code_error_set(p->err, "SyntaxError", tmp.line, tmp.col,
                                      "duplicate argument '%s' in function definition",
                                      tmp.name), NULL;
            code_param *slot;
            if (star) {
                slot = cp_push(p, &ps->kwonly, &ps->nkwonly, &kcap, sizeof(*slot));
                bare_star = false;
            } else {
                if (tmp.def)
                    defaults = true;
                else if (defaults)
                    return code_error_set(p->err, "SyntaxError", tmp.line, tmp.col,
                                          "non-default argument follows default argument"),
                           NULL;
                slot = cp_push(p, &ps->pos, &ps->npos, &pcap, sizeof(*slot));
            }
            if (!slot)
                return NULL;
            *slot = tmp;
        }
        if (!CP_IS(p, COMMA))
            break;
        if (cp_advance(p))
            return NULL;
    }
    if (bare_star)
        return cp_syntax(p, "named arguments must follow bare *"), NULL;
    /* a duplicate among *args and **kwargs and the others */
    if (ps->vararg || ps->kwarg) {
        code_param *sp[2] = {ps->vararg, ps->kwarg};
        for (int i = 0; i < 2; i++) {
            if (!sp[i])
                continue;
            int count = 0;
            for (uint32_t j = 0; j < ps->npos; j++)
                count += strcmp(ps->pos[j].name, sp[i]->name) == 0;
            for (uint32_t j = 0; j < ps->nkwonly; j++)
                count += strcmp(ps->kwonly[j].name, sp[i]->name) == 0;
            if (i == 1 && ps->vararg)
                count += strcmp(ps->vararg->name, sp[i]->name) == 0;
            if (count)
                return code_error_set(p->err, "SyntaxError", sp[i]->line, sp[i]->col,
                                      "duplicate argument '%s' in function definition",
                                      sp[i]->name), NULL;
        }
    }
    return ps;
}

/* lambdef: 'lambda' [lambda_params] ':' expression */
static code_expr *lambda(code_parser *p)
{
    code_expr *e = cp_new(p, CODE_E_LAMBDA, p->tok.line, p->tok.col);
    if (!e || cp_advance(p) || !(e->u.lambda.params = cp_params(p, true)) ||
        cp_expect(p, CODE_T_COLON))
        return NULL;
    int saved_loop = p->in_loop;
    bool saved_async = p->in_async;
    p->in_func++;
    p->in_async = false;
    p->in_loop = 0;
    e->u.lambda.body = cp_expr(p);
    p->in_func--;
    p->in_async = saved_async;
    p->in_loop = saved_loop;
    return e->u.lambda.body ? cp_finish(p, e) : NULL;
}

/* ---- the precedence ladder ---- */

/* expression: disjunction ['if' disjunction 'else' expression] | lambdef */
code_expr *cp_expr(code_parser *p)
{
    if (cp_enter(p))
        return NULL;
    code_expr *e;
    if (CP_IS(p, LAMBDA)) {
        e = lambda(p);
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
            return cp_syntax(p, p->in_func ? "'await' outside async function"
                                           : "'await' outside function"), NULL;
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

/* args: (starred_expression | named_expression | NAME '=' expression
 *        | '**' expression) (',' ...)* [','], or one generator expression */
static code_expr *call(code_parser *p, code_expr *fn)
{
    code_expr *e = cp_new(p, CODE_E_CALL, fn->line, fn->col);
    if (!e || cp_advance(p))
        return NULL;
    e->u.call.fn = fn;
    uint32_t acap = 0, kcap = 0;
    bool dstar = false;
    while (!CP_IS(p, RPAR)) {
        if (CP_IS(p, STAR)) {
            if (dstar)
                return cp_syntax(p, "iterable argument unpacking follows keyword argument "
                                    "unpacking"), NULL;
            code_expr *s = cp_new(p, CODE_E_STARRED, p->tok.line, p->tok.col);
            if (!s || cp_advance(p) || !(s->u.unary.x = cp_expr(p)) || !cp_finish(p, s) ||
                cp_push_expr(p, &e->u.call.args, &e->u.call.nargs, &acap, s))
                return NULL;
        } else if (CP_IS(p, DSTAR)) {
            code_kw *kw = cp_push(p, &e->u.call.kws, &e->u.call.nkws, &kcap, sizeof(*kw));
            if (!kw)
                return NULL;
            kw->line = p->tok.line;
            dstar = true;
            if (cp_advance(p) || !(kw->value = cp_expr(p)))
                return NULL;
        } else {
            code_expr *a = cp_named(p);
            if (!a)
                return NULL;
            if (CP_IS(p, ASSIGN)) {
                if (a->kind != CODE_E_NAME || a->parens)
                    return code_error_set(p->err, "SyntaxError", a->line, a->col,
                                          "expression cannot contain assignment, perhaps you "
                                          "meant \"==\"?"), NULL;
                for (uint32_t i = 0; i < e->u.call.nkws; i++)
                    if (e->u.call.kws[i].name && strcmp(e->u.call.kws[i].name,
                                                        a->u.str.text) == 0)
                        return code_error_set(p->err, "SyntaxError", a->line, a->col,
                                              "keyword argument repeated: %s",
                                              a->u.str.text), NULL;
                code_kw *kw = cp_push(p, &e->u.call.kws, &e->u.call.nkws, &kcap, sizeof(*kw));
                if (!kw || cp_advance(p))
                    return NULL;
                kw->name = a->u.str.text;
                kw->line = a->line;
                if (!(kw->value = cp_expr(p)))
                    return NULL;
            } else {
                if (CP_IS(p, FOR) || CP_IS(p, ASYNC)) {
                    code_expr *g = cp_new(p, CODE_E_GENEXP, a->line, a->col);
                    if (!g)
                        return NULL;
                    g->u.comp.elt = a;
                    if (cp_comp_clauses(p, g) || !(a = cp_finish(p, g)))
                        return NULL;
                    if (e->u.call.nargs || e->u.call.nkws || !CP_IS(p, RPAR))
                        return code_error_set(p->err, "SyntaxError", a->line, a->col,
                                              "Generator expression must be parenthesized"),
                               NULL;
                }
                if (e->u.call.nkws)
                    return code_error_set(p->err, "SyntaxError", a->line, a->col,
                                          dstar ? "positional argument follows keyword "
                                                  "argument unpacking"
                                                : "positional argument follows keyword "
                                                  "argument"), NULL;
                if (cp_push_expr(p, &e->u.call.args, &e->u.call.nargs, &acap, a))
                    return NULL;
            }
        }
        if (!CP_IS(p, COMMA))
            break;
        if (cp_advance(p))
            return NULL;
    }
    if (cp_expect(p, CODE_T_RPAR))
        return NULL;
    return cp_finish(p, e);
}

/* slice: [expression] ':' [expression] [':' [expression]] | named_expression */
static code_expr *slice_item(code_parser *p)
{
    code_expr *lo = NULL;
    int line = p->tok.line, col = p->tok.col;
    if (CP_IS(p, STAR))
        return cp_refuse(p, "starred expressions in subscripts are not supported"), NULL;
    if (!CP_IS(p, COLON)) {
        if (!(lo = cp_named(p)))
            return NULL;
        if (!CP_IS(p, COLON))
            return lo;
    }
    code_expr *s = cp_new(p, CODE_E_SLICE, line, col);
    if (!s || cp_advance(p))
        return NULL;
    s->u.slice.lo = lo;
    if (!CP_IS(p, COLON) && !CP_IS(p, COMMA) && !CP_IS(p, RSQB) &&
        !(s->u.slice.hi = cp_expr(p)))
        return NULL;
    if (CP_IS(p, COLON)) {
        if (cp_advance(p))
            return NULL;
        if (!CP_IS(p, COMMA) && !CP_IS(p, RSQB) && !(s->u.slice.step = cp_expr(p)))
            return NULL;
    }
    return cp_finish(p, s);
}

/* slices: slice !',' | ','.slice+ [','] */
static code_expr *subscript(code_parser *p, code_expr *obj)
{
    code_expr *e = cp_new(p, CODE_E_SUBSCRIPT, obj->line, obj->col);
    if (!e || cp_advance(p))
        return NULL;
    e->u.bin.l = obj;
    int line = p->tok.line, col = p->tok.col;
    code_expr *first = slice_item(p);
    if (!first)
        return NULL;
    if (CP_IS(p, COMMA)) {
        code_expr *t = cp_new(p, CODE_E_TUPLE, line, col);
        uint32_t cap = 0;
        if (!t || cp_push_expr(p, &t->u.seq.v, &t->u.seq.n, &cap, first))
            return NULL;
        while (CP_IS(p, COMMA)) {
            if (cp_advance(p))
                return NULL;
            if (CP_IS(p, RSQB))
                break;
            code_expr *x = slice_item(p);
            if (!x || cp_push_expr(p, &t->u.seq.v, &t->u.seq.n, &cap, x))
                return NULL;
        }
        if (!(first = cp_finish(p, t)))
            return NULL;
    }
    e->u.bin.r = first;
    if (cp_expect(p, CODE_T_RSQB))
        return NULL;
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
                return cp_syntax(p, "invalid syntax (expected a name after '.')"), NULL;
            a->u.attr.obj = e;
            a->u.attr.name = p->tok.s;
            if (cp_advance(p))
                return NULL;
            e = cp_finish(p, a);
        } else if (CP_IS(p, LPAR)) {
            e = call(p, e);
        } else if (CP_IS(p, LSQB)) {
            e = subscript(p, e);
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
        return code_error_set(p->err, "IndentationError", p->tok.line, p->tok.col,
                              "unexpected indent"), NULL;
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
