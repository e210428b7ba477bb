/* The parser: strings (implicit concatenation, f-strings), parenthesised
 * forms, and list, dict and set displays with their comprehensions. */
#include "code/code_parse_int.h"

#include <string.h>

/* ---- strings ---- */

typedef struct textbuf {
    char *s;
    size_t n, cap;
} textbuf;

static int text_add(code_parser *p, textbuf *t, const char *s, size_t n)
{
    if (n == 0)
        return 0;                /* t->s may still be NULL */
    if (n > t->cap - t->n) {
        size_t nc = t->cap ? t->cap : 64;
        while (nc - t->n < n) {
            if (nc > SIZE_MAX / 2)
                return cp_nomem(p);
            nc *= 2;
        }
        char *ns = cp_alloc(p, nc + 1);
        if (!ns)
            return -1;
        if (t->n)
            memcpy(ns, t->s, t->n);
        t->s = ns;
        t->cap = nc;
    }
    memcpy(t->s + t->n, s, n);
    t->n += n;
    return 0;
}

/* The text gathered so far becomes a STR part of fs. */
static int flush(code_parser *p, code_expr *fs, uint32_t *cap, textbuf *t, int line, int col)
{
    if (t->n == 0)
        return 0;
    code_expr *s = cp_new(p, CODE_E_STR, line, col);
    if (!s)
        return -1;
    s->u.str.text = t->s;
    s->u.str.len = t->n;
    t->s[t->n] = '\0';
    memset(t, 0, sizeof(*t));
    return cp_push_expr(p, &fs->u.seq.v, &fs->u.seq.n, cap, s);
}

/* An f-string field's expression, parsed by a parser of its own over the
 * source slice, as if in parentheses. */
static code_expr *field_expr(code_parser *p, const code_fstr_part *part)
{
    code_parser sp;
    memset(&sp, 0, sizeof(sp));
    sp.a = p->a;
    sp.err = p->err;
    sp.opts = p->opts;
    sp.depth = p->depth;
    sp.stack_base = p->stack_base;
    sp.in_func = p->in_func;
    sp.in_async = p->in_async;
    sp.in_loop = p->in_loop;
    sp.final = p->final;
    sp.later = p->later;
    if (cp_enter(&sp) ||
        code_lex_init_sub(&sp.lx, part->s, part->len, part->line, part->col, p->a, p->err,
                          p->opts.max_nesting) ||
        cp_advance(&sp))
        return NULL;
    code_expr *e = cp_exprlist(&sp, true);
    if (!e)
        return NULL;
    if (e->kind == CODE_E_STARRED)
        return cp_syntax(&sp, "f-string: can't use starred expression here"), NULL;
    if (!CP_IS(&sp, END)) {
        cp_close(&sp, CODE_T_END);
        return NULL;
    }
    return e;
}

/* Appends the parts of an f-string body to fs (an FSTRING). */
static int fstr_parts(code_parser *p, code_expr *fs, uint32_t *cap, textbuf *t,
                      const char *body, size_t n, int line, int col, int spec_depth, bool raw)
{
    code_fstr_iter it;
    code_fstr_begin(&it, body, n, line, col, spec_depth, raw);
    for (;;) {
        code_fstr_part part;
        int r = code_fstr_next(&it, &part, p->err);
        if (r <= 0)
            return r;
        if (!part.is_expr) {
            const char *s;
            size_t sn;
            if (code_str_decode(part.s, part.len, raw ? CODE_STR_RAW : 0, true, part.line,
                                p->a, p->err, &s, &sn) ||
                text_add(p, t, s, sn))
                return -1;
            continue;
        }
        if (part.debug && text_add(p, t, part.s, part.debug_len))
            return -1;
        if (flush(p, fs, cap, t, part.line, part.col))
            return -1;
        code_expr *f = cp_new(p, CODE_E_FORMATTED, part.line, part.col);
        if (!f || !(f->u.fmt.value = field_expr(p, &part)))
            return -1;
        f->u.fmt.conv = part.conv;
        if (part.debug && !part.conv && !part.has_spec)
            f->u.fmt.conv = 'r';
        if (part.has_spec &&
            !(f->u.fmt.spec = cp_fstring_body(p, part.spec, part.spec_len, part.spec_line,
                                              part.spec_col, spec_depth + 1, raw)))
            return -1;
        if (!cp_finish(p, f) || cp_push_expr(p, &fs->u.seq.v, &fs->u.seq.n, cap, f))
            return -1;
    }
}

code_expr *cp_fstring_body(code_parser *p, const char *body, size_t n, int line, int col,
                           int spec_depth, bool raw)
{
    code_expr *fs = cp_new(p, CODE_E_FSTRING, line, col);
    if (!fs || cp_enter(p))
        return NULL;
    uint32_t cap = 0;
    textbuf t = {0};
    if (fstr_parts(p, fs, &cap, &t, body, n, line, col, spec_depth, raw) ||
        flush(p, fs, &cap, &t, line, col))
        return NULL;
    cp_leave(p);
    return cp_finish(p, fs);
}

/* strings: STRING+ (adjacent literals are one) */
code_expr *cp_strings(code_parser *p)
{
    int line = p->tok.line, col = p->tok.col;
    bool bytes = p->tok.sflags & CODE_STR_BYTES;
    code_expr *fs = NULL;
    uint32_t cap = 0;
    textbuf t = {0};
    const char *single = NULL;   /* the one plain literal, not yet copied */
    size_t single_len = 0;
    int count = 0;
    while (CP_IS(p, STRING)) {
        const code_tok *tk = &p->tok;
        if ((bool)(tk->sflags & CODE_STR_BYTES) != bytes)
            return cp_syntax(p, "cannot mix bytes and nonbytes literals"), NULL;
        if (single && text_add(p, &t, single, single_len))
            return NULL;
        single = NULL;
        if (tk->sflags & CODE_STR_F) {
            if (!fs && !(fs = cp_new(p, CODE_E_FSTRING, line, col)))
                return NULL;
            if (cp_enter(p) ||
                fstr_parts(p, fs, &cap, &t, tk->s, tk->len, tk->body_line, tk->body_col, 0,
                           tk->sflags & CODE_STR_RAW))
                return NULL;
            cp_leave(p);
        } else if (count == 0) {
            single = tk->s;
            single_len = tk->len;
        } else if (text_add(p, &t, tk->s, tk->len)) {
            return NULL;
        }
        count++;
        if (cp_advance(p))
            return NULL;
    }
    if (fs) {
        if (flush(p, fs, &cap, &t, line, col))
            return NULL;
        return cp_finish(p, fs);
    }
    code_expr *e = cp_new(p, bytes ? CODE_E_BYTES : CODE_E_STR, line, col);
    if (!e)
        return NULL;
    if (single) {
        e->u.str.text = single;
        e->u.str.len = single_len;
    } else {
        if (!t.s && !(t.s = cp_alloc(p, 1)))   /* only empty literals */
            return NULL;
        t.s[t.n] = '\0';
        e->u.str.text = t.s;
        e->u.str.len = t.n;
    }
    return e;
}

/* ---- displays ---- */

/* for_if_clauses: ('for' star_targets 'in' disjunction ('if' disjunction)*)+ */
int cp_comp_clauses(code_parser *p, code_expr *e)
{
    uint32_t cap = 0;
    p->last = NULL;
    while (CP_IS(p, FOR) || CP_IS(p, ASYNC)) {
        if (CP_IS(p, ASYNC))
            return cp_refuse(p, "asynchronous comprehensions ('async for') are not supported");
        code_comp *g = cp_push(p, &e->u.comp.gens, &e->u.comp.n, &cap, sizeof(*g));
        if (!g || cp_advance(p) || !(g->target = cp_targets(p)) ||
            cp_check_target(p, g->target, 0) || cp_expect(p, CODE_T_IN) ||
            !(g->iter = cp_disjunction(p)))
            return -1;
        uint32_t icap = 0;
        while (CP_IS(p, IF)) {
            code_expr *c;
            if (cp_advance(p) || !(c = cp_disjunction(p)) ||
                cp_push_expr(p, &g->ifs, &g->nifs, &icap, c))
                return -1;
        }
    }
    return 0;
}

/* One element of a display: '*' bitwise_or | named_expression */
static code_expr *element(code_parser *p)
{
    if (!CP_IS(p, STAR))
        return cp_named(p);
    code_expr *x = cp_new(p, CODE_E_STARRED, p->tok.line, p->tok.col);
    if (!x || cp_enter(p) || cp_advance(p) || !(x->u.unary.x = cp_bitor(p)))
        return NULL;
    cp_leave(p);
    return cp_finish(p, x);
}

/* The rest of a sequence display after its first element, up to close:
 * (',' element)* [','] close */
static code_expr *sequence(code_parser *p, code_expr *e, code_expr *first, code_tok_kind close)
{
    uint32_t cap = 0;
    if (cp_push_expr(p, &e->u.seq.v, &e->u.seq.n, &cap, first))
        return NULL;
    while (CP_IS(p, COMMA)) {
        if (cp_advance(p))
            return NULL;
        if (p->tok.kind == close)
            break;
        code_expr *x = element(p);
        if (!x || cp_push_expr(p, &e->u.seq.v, &e->u.seq.n, &cap, x))
            return NULL;
    }
    if (cp_close(p, close))
        return NULL;
    return cp_finish(p, e);
}

/* listcomp, setcomp, genexp after their element: for_if_clauses close */
static code_expr *comprehension(code_parser *p, code_expr_kind kind, code_expr *elt,
                                code_tok_kind close)
{
    if (elt->kind == CODE_E_STARRED)
        return code_error_set(p->err, "SyntaxError", elt->line, elt->col,
                              "iterable unpacking cannot be used in comprehension"), NULL;
    code_expr *e = cp_new(p, kind, elt->line, elt->col);
    if (!e)
        return NULL;
    e->u.comp.elt = elt;
    if (cp_comp_clauses(p, e) || cp_expect(p, close))
        return NULL;
    return cp_finish(p, e);
}

/* tuple | group | genexp */
code_expr *cp_paren(code_parser *p)
{
    int line = p->tok.line, col = p->tok.col;
    if (cp_advance(p))
        return NULL;
    code_expr *e;
    if (CP_IS(p, RPAR)) {
        if (!(e = cp_new(p, CODE_E_TUPLE, line, col)) || cp_advance(p))
            return NULL;
    } else if (CP_IS(p, YIELD)) {
        return cp_refuse(p, "'yield' is not supported (generators are not part of code mode)"),
               NULL;
    } else {
        code_expr *first = element(p);
        if (!first)
            return NULL;
        if (CP_IS(p, FOR) || CP_IS(p, ASYNC)) {
            e = comprehension(p, CODE_E_GENEXP, first, CODE_T_RPAR);
        } else if (CP_IS(p, COMMA)) {
            code_expr *t = cp_new(p, CODE_E_TUPLE, line, col);
            e = t ? sequence(p, t, first, CODE_T_RPAR) : NULL;
        } else {
            if (cp_close(p, CODE_T_RPAR))
                return NULL;
            if (first->kind == CODE_E_STARRED)
                return code_error_set(p->err, "SyntaxError", first->line, first->col,
                                      "cannot use starred expression here"), NULL;
            e = first;
        }
        if (!e)
            return NULL;
    }
    e->parens = true;
    return e;
}

/* list | listcomp */
code_expr *cp_list(code_parser *p)
{
    int line = p->tok.line, col = p->tok.col;
    if (cp_advance(p))
        return NULL;
    code_expr *e;
    if (CP_IS(p, RSQB)) {
        if (!(e = cp_new(p, CODE_E_LIST, line, col)) || cp_advance(p))
            return NULL;
    } else {
        code_expr *first = element(p);
        if (!first)
            return NULL;
        if (CP_IS(p, FOR) || CP_IS(p, ASYNC)) {
            e = comprehension(p, CODE_E_LISTCOMP, first, CODE_T_RSQB);
        } else {
            code_expr *l = cp_new(p, CODE_E_LIST, line, col);
            e = l ? sequence(p, l, first, CODE_T_RSQB) : NULL;
        }
        if (!e)
            return NULL;
    }
    return e;
}

static int dict_push(code_parser *p, code_expr *d, uint32_t *kcap, uint32_t *vcap,
                     code_expr *k, code_expr *v)
{
    uint32_t n = d->u.dict.n, n2 = n;
    if (cp_push_expr(p, &d->u.dict.keys, &n, kcap, k) ||
        cp_push_expr(p, &d->u.dict.values, &n2, vcap, v))
        return -1;
    d->u.dict.n = n;
    return 0;
}

/* One "key: value" or "**mapping" of a dict display into k, v. */
static int dict_item(code_parser *p, code_expr **k, code_expr **v)
{
    if (CP_IS(p, DSTAR)) {
        *k = NULL;
        if (cp_enter(p) || cp_advance(p) || !(*v = cp_bitor(p)))
            return -1;
        cp_leave(p);
        return 0;
    }
    if (!(*k = cp_expr(p)) || cp_expect(p, CODE_T_COLON) || !(*v = cp_expr(p)))
        return -1;
    return 0;
}

/* dict | set | dictcomp | setcomp */
code_expr *cp_brace(code_parser *p)
{
    int line = p->tok.line, col = p->tok.col;
    if (cp_advance(p))
        return NULL;
    code_expr *e = NULL;
    if (CP_IS(p, RBRACE)) {
        if (!(e = cp_new(p, CODE_E_DICT, line, col)) || cp_advance(p))
            return NULL;
        return e;
    }
    code_expr *k = NULL, *v = NULL;
    if (CP_IS(p, DSTAR)) {
        if (dict_item(p, &k, &v))
            return NULL;
    } else {
        if (!(k = element(p)))
            return NULL;
        if (!CP_IS(p, COLON)) {
            if (CP_IS(p, FOR) || CP_IS(p, ASYNC)) {
                e = comprehension(p, CODE_E_SETCOMP, k, CODE_T_RBRACE);
            } else {
                code_expr *s = cp_new(p, CODE_E_SET, line, col);
                e = s ? sequence(p, s, k, CODE_T_RBRACE) : NULL;
            }
            if (!e)
                return NULL;
            return e;
        }
        if (k->kind == CODE_E_STARRED)
            return cp_syntax(p, "cannot use a starred expression in a dictionary value"), NULL;
        if (cp_advance(p) || !(v = cp_expr(p)))
            return NULL;
        if (CP_IS(p, FOR) || CP_IS(p, ASYNC)) {
            if (!(e = cp_new(p, CODE_E_DICTCOMP, line, col)))
                return NULL;
            e->u.comp.elt = k;
            e->u.comp.value = v;
            if (cp_comp_clauses(p, e) || cp_close(p, CODE_T_RBRACE) || !cp_finish(p, e))
                return NULL;
            return e;
        }
    }
    if (!(e = cp_new(p, CODE_E_DICT, line, col)))
        return NULL;
    uint32_t kcap = 0, vcap = 0;
    if (dict_push(p, e, &kcap, &vcap, k, v))
        return NULL;
    while (CP_IS(p, COMMA)) {
        if (cp_advance(p))
            return NULL;
        if (CP_IS(p, RBRACE))
            break;
        if (dict_item(p, &k, &v) || dict_push(p, e, &kcap, &vcap, k, v))
            return NULL;
    }
    if (cp_close(p, CODE_T_RBRACE))
        return NULL;
    return cp_finish(p, e);
}
