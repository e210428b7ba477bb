/* The parser: compound statements (if, while, for, try, def). */
#include "code/code_parse_int.h"

/* if_stmt: 'if' named_expression ':' block ('elif' named_expression ':' block)*
 *          ['else' ':' block] */
code_stmt *cp_if_stmt(code_parser *p)
{
    code_stmt *s = cp_new_stmt(p, CODE_S_IF, p->tok.line, p->tok.col);
    if (!s)
        return NULL;
    uint32_t tcap = 0, bcap = 0;
    do {
        int line = p->tok.line;
        const char *what = CP_IS(p, IF) ? "'if' statement" : "'elif' statement";
        if (cp_advance(p))
            return NULL;
        code_expr *test = cp_named(p);
        if (!test)
            return NULL;
        uint32_t n = s->u.if_.n, n2 = n;
        if (cp_push_expr(p, &s->u.if_.tests, &n, &tcap, test))
            return NULL;
        code_block *body = cp_push(p, &s->u.if_.bodies, &n2, &bcap, sizeof(*body));
        if (!body)
            return NULL;
        s->u.if_.n = n;
        if (cp_block(p, body, what, line))
            return NULL;
    } while (CP_IS(p, ELIF));
    if (CP_IS(p, ELSE)) {
        int line = p->tok.line;
        if (cp_advance(p) || cp_block(p, &s->u.if_.orelse, "'else' statement", line))
            return NULL;
    }
    return s;
}

static int loop_body(code_parser *p, code_stmt *s, const char *what, int line)
{
    p->in_loop++;
    int r = cp_block(p, &s->u.loop.body, what, line);
    p->in_loop--;
    if (r)
        return -1;
    if (CP_IS(p, ELSE)) {
        int eline = p->tok.line;
        if (cp_advance(p) || cp_block(p, &s->u.loop.orelse, "'else' statement", eline))
            return -1;
    }
    return 0;
}

/* while_stmt: 'while' named_expression ':' block ['else' ':' block]
 * for_stmt: 'for' star_targets 'in' star_expressions ':' block ['else' ':' block] */
code_stmt *cp_loop_stmt(code_parser *p)
{
    bool is_for = CP_IS(p, FOR);
    int line = p->tok.line;
    code_stmt *s = cp_new_stmt(p, is_for ? CODE_S_FOR : CODE_S_WHILE, line, p->tok.col);
    if (!s || cp_advance(p))
        return NULL;
    if (is_for) {
        if (!(s->u.loop.target = cp_targets(p)) || cp_check_target(p, s->u.loop.target, 0) ||
            cp_expect(p, CODE_T_IN) || !(s->u.loop.test = cp_exprlist(p, false)))
            return NULL;
        if (s->u.loop.test->kind == CODE_E_STARRED)
            return cp_syntax(p, "can't use starred expression here"), NULL;
    } else if (!(s->u.loop.test = cp_named(p))) {
        return NULL;
    }
    if (loop_body(p, s, is_for ? "'for' statement" : "'while' statement", line))
        return NULL;
    return s;
}

/* try_stmt: 'try' ':' block (except_block+ ['else' ':' block] ['finally' ':' block]
 *                            | 'finally' ':' block)
 * except_block: 'except' [expression ['as' NAME]] ':' block */
code_stmt *cp_try_stmt(code_parser *p)
{
    int line = p->tok.line;
    code_stmt *s = cp_new_stmt(p, CODE_S_TRY, line, p->tok.col);
    if (!s || cp_advance(p) || cp_block(p, &s->u.try_.body, "'try' statement", line))
        return NULL;
    uint32_t cap = 0;
    int bare = 0;                /* the line of a bare "except:" */
    while (CP_IS(p, EXCEPT)) {
        if (bare)
            return code_error_set(p->err, "SyntaxError", bare, 1,
                                  "default 'except:' must be last"), NULL;
        code_handler *h = cp_push(p, &s->u.try_.handlers, &s->u.try_.nhandlers, &cap,
                                  sizeof(*h));
        if (!h)
            return NULL;
        h->line = p->tok.line;
        if (cp_advance(p))
            return NULL;
        if (CP_IS(p, STAR))
            return cp_refuse(p, "'except*' (exception groups) is not supported"), NULL;
        if (CP_IS(p, COLON)) {
            bare = h->line;
        } else {
            if (!(h->type = cp_expr(p)))
                return NULL;
            if (CP_IS(p, COMMA))
                return cp_syntax(p, "multiple exception types must be parenthesized"), NULL;
            if (CP_IS(p, AS) && (cp_advance(p) || !(h->name = cp_name(p))))
                return NULL;
        }
        if (cp_block(p, &h->body, "'except' statement", h->line))
            return NULL;
    }
    if (CP_IS(p, ELSE)) {
        if (!s->u.try_.nhandlers)
            return cp_syntax(p, "expected 'except' or 'finally' block"), NULL;
        int eline = p->tok.line;
        if (cp_advance(p) || cp_block(p, &s->u.try_.orelse, "'else' statement", eline))
            return NULL;
    }
    if (CP_IS(p, FINALLY)) {
        int fline = p->tok.line;
        if (cp_advance(p) || cp_block(p, &s->u.try_.finalbody, "'finally' statement", fline))
            return NULL;
    } else if (!s->u.try_.nhandlers) {
        return cp_syntax(p, "expected 'except' or 'finally' block"), NULL;
    }
    return s;
}

/* function_def: ['async'] 'def' NAME '(' [params] ')' ['->' expression] ':' block */
code_stmt *cp_def_stmt(code_parser *p, bool is_async, int line, int col)
{
    code_stmt *s = cp_new_stmt(p, CODE_S_DEF, line, col);
    if (!s || cp_advance(p))
        return NULL;
    s->is_async = is_async;
    if (!(s->u.def.name = cp_name(p)) || cp_expect(p, CODE_T_LPAR) ||
        !(s->u.def.params = cp_params(p, false)) || cp_expect(p, CODE_T_RPAR))
        return NULL;
    if (CP_IS(p, ARROW) && (cp_advance(p) || !(s->u.def.returns = cp_expr(p))))
        return NULL;
    int saved_loop = p->in_loop;
    bool saved_async = p->in_async;
    p->in_func++;
    p->in_async = is_async;
    p->in_loop = 0;
    int r = cp_block(p, &s->u.def.body, "function definition", line);
    p->in_func--;
    p->in_async = saved_async;
    p->in_loop = saved_loop;
    return r ? NULL : s;
}
