/* The parser: expression nodes, their heights (the tree-height limit), and
 * the checks of assignment targets. */
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
        *p->final = true;
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
