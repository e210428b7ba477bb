/* The parser: parameters and lambda, call arguments, subscripts and slices. */
#include "code/code_parse_int.h"

#include <string.h>

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
                cp_later(p, tmp.line, tmp.col, "duplicate argument '%s' in function definition",
                         tmp.name);
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
                cp_later(p, sp[i]->line, sp[i]->col,
                         "duplicate argument '%s' in function definition", sp[i]->name);
        }
    }
    return ps;
}

/* lambdef: 'lambda' [lambda_params] ':' expression */
code_expr *cp_lambda(code_parser *p)
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

/* args: (starred_expression | named_expression | NAME '=' expression
 *        | '**' expression) (',' ...)* [','], or one generator expression */
code_expr *cp_call(code_parser *p, code_expr *fn)
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
                        cp_later(p, a->line, a->col, "keyword argument repeated: %s",
                                 a->u.str.text);
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
    if (cp_close(p, CODE_T_RPAR))
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
code_expr *cp_subscript(code_parser *p, code_expr *obj)
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
    if (cp_close(p, CODE_T_RSQB))
        return NULL;
    return cp_finish(p, e);
}
