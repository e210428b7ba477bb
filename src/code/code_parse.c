/* The parser: the entry point, blocks, simple statements and the statement
 * dispatch. Recursive descent over the grammar of CPython 3.11 restricted to
 * code mode's subset; the rule a function parses is written above it. */
#include "code/code_parse_int.h"

#include <string.h>

/* ---- blocks ---- */

static int statement(code_parser *p, code_block *b, uint32_t *cap);

/* block: NEWLINE INDENT statements DEDENT | simple_stmts
 * (after the ':', which this expects) */
int cp_block(code_parser *p, code_block *b, const char *what, int line)
{
    if (cp_expect(p, CODE_T_COLON))
        return -1;
    uint32_t cap = 0;
    if (cp_enter(p))
        return -1;
    if (CP_IS(p, NEWLINE)) {
        if (cp_advance(p))
            return -1;
        /* an indented line that holds nothing (a lone line continuation)
         * opens no block either */
        if (!CP_IS(p, INDENT) || cp_advance(p) || CP_IS(p, DEDENT) || CP_IS(p, END))
            return code_error_set(p->err, "IndentationError", p->tok.line, p->tok.col,
                                  "expected an indented block after %s on line %d", what, line);
        while (!CP_IS(p, DEDENT) && !CP_IS(p, END))
            if (statement(p, b, &cap))
                return -1;
        if (CP_IS(p, DEDENT) && cp_advance(p))
            return -1;
    } else if (cp_simple_stmts(p, b, &cap)) {
        return -1;
    }
    cp_leave(p);
    return 0;
}

/* ---- simple statements ---- */

static bool is_augassign(code_tok_kind k)
{
    return k >= CODE_T_PLUSEQ && k <= CODE_T_RSHIFTEQ;
}

/* assignment: (star_targets '=')+ star_expressions
 *           | single_target augassign star_expressions
 *           | single_target ':' expression ['=' star_expressions]
 * expression statement: star_expressions */
static code_stmt *expr_stmt(code_parser *p, bool match_kw)
{
    int line = p->tok.line, col = p->tok.col;
    code_expr *first = cp_exprlist(p, false);
    if (!first)
        return NULL;
    if (CP_IS(p, ASSIGN)) {
        code_stmt *s = cp_new_stmt(p, CODE_S_ASSIGN, line, col);
        if (!s)
            return NULL;
        uint32_t cap = 0;
        code_expr *e = first;
        while (CP_IS(p, ASSIGN)) {
            if (cp_check_target(p, e, 0) ||
                cp_push_expr(p, &s->u.assign.targets, &s->u.assign.n, &cap, e) ||
                cp_advance(p))
                return NULL;
            if (CP_IS(p, YIELD))
                return cp_refuse(p, "'yield' is not supported (generators are not part of "
                                    "code mode)"), NULL;
            if (!(e = cp_exprlist(p, false)))
                return NULL;
        }
        if (e->kind == CODE_E_STARRED)
            return cp_syntax(p, "can't use starred expression here"), NULL;
        s->u.assign.value = e;
        return s;
    }
    if (is_augassign(p->tok.kind)) {
        if (p->tok.kind == CODE_T_ATEQ)
            return cp_refuse(p, "the '@=' operator (matrix multiplication) is not supported"),
                   NULL;
        code_stmt *s = cp_new_stmt(p, CODE_S_AUGASSIGN, line, col);
        if (!s || cp_check_target(p, first, 1))
            return NULL;
        s->op = (uint8_t)(p->tok.kind - CODE_T_PLUSEQ + CODE_T_PLUS);
        if (cp_advance(p))
            return NULL;
        if (CP_IS(p, YIELD))
            return cp_refuse(p, "'yield' is not supported"), NULL;
        s->u.aug.target = first;
        if (!(s->u.aug.value = cp_exprlist(p, false)))
            return NULL;
        if (s->u.aug.value->kind == CODE_E_STARRED)
            return cp_syntax(p, "can't use starred expression here"), NULL;
        return s;
    }
    if (CP_IS(p, COLON)) {
        const code_tok *nx = cp_peek(p);
        if (!nx)
            return NULL;
        if (match_kw && nx->kind == CODE_T_NEWLINE)
            return code_error_set(p->err, "NotImplementedError", line, col,
                                  "'match' statements are not supported"), NULL;
        if (first->kind == CODE_E_TUPLE && !first->parens)
            return cp_syntax(p, "only single target (not tuple) can be annotated"), NULL;
        if (first->kind != CODE_E_NAME && first->kind != CODE_E_ATTR &&
            first->kind != CODE_E_SUBSCRIPT)
            return cp_syntax(p, "illegal target for annotation"), NULL;
        code_stmt *s = cp_new_stmt(p, CODE_S_ANNASSIGN, line, col);
        if (!s || cp_advance(p))
            return NULL;
        s->u.aug.target = first;
        if (!(s->u.aug.annotation = cp_expr(p)))
            return NULL;
        if (CP_IS(p, ASSIGN)) {
            if (cp_advance(p) || !(s->u.aug.value = cp_exprlist(p, false)))
                return NULL;
        }
        return s;
    }
    if (first->kind == CODE_E_STARRED)
        return cp_syntax(p, "can't use starred expression here"), NULL;
    code_stmt *s = cp_new_stmt(p, CODE_S_EXPR, line, col);
    if (s)
        s->u.expr.value = first;
    return s;
}

/* 'global' NAME (',' NAME)* | 'nonlocal' ... */
static code_stmt *names_stmt(code_parser *p, code_stmt_kind kind)
{
    code_stmt *s = cp_new_stmt(p, kind, p->tok.line, p->tok.col);
    if (!s)
        return NULL;
    if (kind == CODE_S_NONLOCAL && p->in_func == 0)
        cp_later(p, p->tok.line, p->tok.col, "nonlocal declaration not allowed at module level");
    if (cp_advance(p))
        return NULL;
    uint32_t cap = 0;
    for (;;) {
        const char *n = cp_name(p);
        if (!n)
            return NULL;
        const char **slot = cp_push(p, &s->u.names.names, &s->u.names.n, &cap, sizeof(*slot));
        if (!slot)
            return NULL;
        *slot = n;
        if (!CP_IS(p, COMMA))
            return s;
        if (cp_advance(p))
            return NULL;
    }
}

/* dotted_name: NAME ('.' NAME)* */
static const char *dotted(code_parser *p)
{
    const char *first = cp_name(p);
    if (!first || !CP_IS(p, DOT))
        return first;
    size_t len = strlen(first), cap = len + 1;
    char *buf = cp_alloc(p, cap);
    if (!buf)
        return NULL;
    memcpy(buf, first, len + 1);
    while (CP_IS(p, DOT)) {
        if (cp_advance(p))
            return NULL;
        const char *n = cp_name(p);
        if (!n)
            return NULL;
        size_t nl = strlen(n);
        char *nb = cp_alloc(p, len + nl + 2);
        if (!nb)
            return NULL;
        memcpy(nb, buf, len);
        nb[len] = '.';
        memcpy(nb + len + 1, n, nl + 1);
        buf = nb;
        len += nl + 1;
    }
    return buf;
}

/* dotted_as_name: dotted_name ['as' NAME]
 * import_from_as_name: NAME ['as' NAME] */
static int alias(code_parser *p, code_stmt *s, uint32_t *cap, bool dotted_name)
{
    code_alias *al = cp_push(p, &s->u.import.names, &s->u.import.n, cap, sizeof(*al));
    if (!al)
        return -1;
    al->line = p->tok.line;
    if (!(al->name = dotted_name ? dotted(p) : cp_name(p)))
        return -1;
    if (CP_IS(p, AS)) {
        if (cp_advance(p) || !(al->asname = cp_name(p)))
            return -1;
    }
    return 0;
}

/* import_name: 'import' dotted_as_names
 * import_from: 'from' dotted_name 'import' ('(' import_from_as_names ')' | import_from_as_names) */
static code_stmt *import_stmt(code_parser *p)
{
    bool from = CP_IS(p, FROM);
    code_stmt *s = cp_new_stmt(p, from ? CODE_S_IMPORTFROM : CODE_S_IMPORT, p->tok.line, p->tok.col);
    if (!s || cp_advance(p))
        return NULL;
    uint32_t cap = 0;
    if (!from) {
        do {
            if (s->u.import.n && cp_advance(p))
                return NULL;
            if (alias(p, s, &cap, true))
                return NULL;
        } while (CP_IS(p, COMMA));
        return s;
    }
    if (CP_IS(p, DOT) || CP_IS(p, ELLIPSIS))
        return cp_refuse(p, "relative imports are not supported"), NULL;
    if (!(s->u.import.module = dotted(p)) || cp_expect(p, CODE_T_IMPORT))
        return NULL;
    if (CP_IS(p, STAR))
        return cp_refuse(p, "'from %s import *' is not supported; import the names you use",
                         s->u.import.module), NULL;
    bool paren = CP_IS(p, LPAR);
    if (paren && cp_advance(p))
        return NULL;
    for (;;) {
        if (alias(p, s, &cap, false))
            return NULL;
        if (!CP_IS(p, COMMA))
            break;
        if (cp_advance(p))
            return NULL;
        if (paren && CP_IS(p, RPAR))
            break;
        if (!paren && !CP_IS(p, NAME))
            return cp_syntax(p, "trailing comma not allowed without surrounding parentheses"),
                   NULL;
    }
    if (paren && cp_expect(p, CODE_T_RPAR))
        return NULL;
    return s;
}

static bool ends_simple(code_parser *p)
{
    return CP_IS(p, NEWLINE) || CP_IS(p, SEMI) || CP_IS(p, END);
}

/* simple_stmt: assignment | star_expressions | 'return' [star_expressions]
 *            | import_stmt | 'raise' [expression ['from' expression]] | 'pass'
 *            | 'assert' expression [',' expression] | 'break' | 'continue'
 *            | 'global' NAME (',' NAME)* | 'nonlocal' NAME (',' NAME)*
 * ('del' and 'yield' are refused) */
static code_stmt *simple_stmt(code_parser *p)
{
    int line = p->tok.line, col = p->tok.col;
    code_stmt *s;
    switch (p->tok.kind) {
    case CODE_T_PASS:
    case CODE_T_BREAK:
    case CODE_T_CONTINUE:
        if (CP_IS(p, BREAK) && !p->in_loop)
            cp_later(p, line, col, "'break' outside loop");
        if (CP_IS(p, CONTINUE) && !p->in_loop)
            cp_later(p, line, col, "'continue' not properly in loop");
        s = cp_new_stmt(p, CP_IS(p, PASS) ? CODE_S_PASS : CP_IS(p, BREAK) ? CODE_S_BREAK
                                                                       : CODE_S_CONTINUE,
                     line, col);
        return s && !cp_advance(p) ? s : NULL;
    case CODE_T_RETURN:
        if (!p->in_func)
            cp_later(p, line, col, "'return' outside function");
        if (!(s = cp_new_stmt(p, CODE_S_RETURN, line, col)) || cp_advance(p))
            return NULL;
        if (!ends_simple(p) && !(s->u.expr.value = cp_exprlist(p, false)))
            return NULL;
        if (s->u.expr.value && s->u.expr.value->kind == CODE_E_STARRED)
            return cp_syntax(p, "can't use starred expression here"), NULL;
        return s;
    case CODE_T_RAISE:
        if (!(s = cp_new_stmt(p, CODE_S_RAISE, line, col)) || cp_advance(p))
            return NULL;
        if (ends_simple(p))
            return s;
        if (!(s->u.raise.exc = cp_expr(p)))
            return NULL;
        if (CP_IS(p, FROM) && (cp_advance(p) || !(s->u.raise.cause = cp_expr(p))))
            return NULL;
        return s;
    case CODE_T_ASSERT:
        if (!(s = cp_new_stmt(p, CODE_S_ASSERT, line, col)) || cp_advance(p) ||
            !(s->u.assert_.test = cp_expr(p)))
            return NULL;
        if (CP_IS(p, COMMA) && (cp_advance(p) || !(s->u.assert_.msg = cp_expr(p))))
            return NULL;
        return s;
    case CODE_T_GLOBAL:
        return names_stmt(p, CODE_S_GLOBAL);
    case CODE_T_NONLOCAL:
        return names_stmt(p, CODE_S_NONLOCAL);
    case CODE_T_IMPORT:
    case CODE_T_FROM:
        return import_stmt(p);
    case CODE_T_DEL:
        return cp_refuse(p, "'del' statements are not supported"), NULL;
    case CODE_T_YIELD:
        return cp_refuse(p, "'yield' is not supported (generators are not part of code mode)"),
               NULL;
    default:
        break;
    }
    bool match_kw = false;
    if (CP_IS(p, NAME) && strcmp(p->tok.s, "match") == 0) {
        const code_tok *nx = cp_peek(p);
        if (!nx)
            return NULL;
        switch (nx->kind) {
        case CODE_T_NAME: case CODE_T_INT: case CODE_T_FLOAT: case CODE_T_STRING:
        case CODE_T_LBRACE: case CODE_T_TRUE: case CODE_T_FALSE: case CODE_T_NONE:
        case CODE_T_NOT: case CODE_T_LAMBDA: case CODE_T_AWAIT: case CODE_T_TILDE:
        case CODE_T_ELLIPSIS:
            return cp_refuse(p, "'match' statements are not supported"), NULL;
        default:
            match_kw = true;     /* "match(x):" and "match [a]:" are found after */
        }
    }
    return expr_stmt(p, match_kw);
}

/* simple_stmts: simple_stmt (';' simple_stmt)* [';'] NEWLINE */
int cp_simple_stmts(code_parser *p, code_block *b, uint32_t *cap)
{
    for (;;) {
        code_stmt *s = simple_stmt(p);
        if (!s || !cp_block_push(p, b, cap, s))
            return -1;
        if (CP_IS(p, SEMI)) {
            if (cp_advance(p))
                return -1;
            if (CP_IS(p, NEWLINE))
                break;
            continue;
        }
        break;
    }
    if (CP_IS(p, END))
        return 0;
    if (!CP_IS(p, NEWLINE)) {
        if (p->tok.kind == CODE_T_WALRUS)
            return cp_syntax(p, "invalid syntax (an assignment expression needs "
                                "parentheses here)");
        return cp_syntax(p, "invalid syntax");
    }
    return cp_advance(p);
}

/* ---- compound statements ---- */

/* statement: compound_stmt | simple_stmts */
static int statement(code_parser *p, code_block *b, uint32_t *cap)
{
    code_stmt *s;
    int line = p->tok.line, col = p->tok.col;
    switch (p->tok.kind) {
    case CODE_T_IF:
        s = cp_if_stmt(p);
        break;
    case CODE_T_WHILE:
    case CODE_T_FOR:
        s = cp_loop_stmt(p);
        break;
    case CODE_T_TRY:
        s = cp_try_stmt(p);
        break;
    case CODE_T_DEF:
        s = cp_def_stmt(p, false, line, col);
        break;
    case CODE_T_ASYNC: {
        const code_tok *nx = cp_peek(p);
        if (!nx)
            return -1;
        if (nx->kind == CODE_T_FOR)
            return cp_refuse(p, "'async for' is not supported");
        if (nx->kind == CODE_T_WITH)
            return cp_refuse(p, "'async with' is not supported");
        if (nx->kind != CODE_T_DEF)
            return cp_syntax(p, "invalid syntax");
        if (cp_advance(p))
            return -1;
        s = cp_def_stmt(p, true, line, col);
        break;
    }
    case CODE_T_CLASS:
        return cp_refuse(p, "class definitions are not supported; use dicts or tuples");
    case CODE_T_WITH:
        return cp_refuse(p, "'with' statements are not supported");
    case CODE_T_AT:
        return cp_refuse(p, "decorators are not supported");
    case CODE_T_INDENT:
        return cp_unexpected_indent(p);
    case CODE_T_ELSE:
    case CODE_T_ELIF:
    case CODE_T_EXCEPT:
    case CODE_T_FINALLY:
        return cp_syntax(p, "invalid syntax ('%s' without a matching statement)",
                         code_tok_name(p->tok.kind));
    default:
        return cp_simple_stmts(p, b, cap);
    }
    return s && cp_block_push(p, b, cap, s) ? 0 : -1;
}

/* After the parser's own error, CPython tokenizes the rest of the source and
 * reports a tokenizer error found there instead (an unterminated string, an
 * unmatched bracket, a bad character...), and a bracket left open at the end
 * when it was opened before the parser's error line. So does cella, for
 * SyntaxErrors and refusals alike: a source with a later tokenizer error is not
 * Python, whatever construct came first. Not for "unexpected indent", nor for
 * the tokenizer errors CPython reports only when its parser reaches them
 * (indentation, a line continuation). A literal's bad escape counts as the
 * parser's error: CPython decodes literals in its parser. */
static void recheck_tokens(code_parser *p)
{
    code_error tokerr;
    memset(&tokerr, 0, sizeof(tokerr));
    p->lx.err = &tokerr;
    p->lx.failed = false;        /* after a literal's decoding error, lexing goes on */
    code_tok t;
    do {
        if (code_lex_next(&p->lx, &t)) {
            if (strcmp(tokerr.type, "MemoryError") == 0 || p->lx.soft ||
                (p->lx.unclosed_line && p->err->line <= p->lx.unclosed_line))
                break;
            *p->err = tokerr;
            break;
        }
    } while (t.kind != CODE_T_END);
    p->lx.err = p->err;
}

static int failed(code_parser *p)
{
    const char *ty = p->err->type;
    if ((!p->lx.failed || p->lx.decode) && !*p->final && ty &&
        (strcmp(ty, "SyntaxError") == 0 || strcmp(ty, "IndentationError") == 0 ||
         strcmp(ty, "NotImplementedError") == 0))
        recheck_tokens(p);
    return -1;
}

/* file: [statements] ENDMARKER */
int code_parse(const char *src, size_t n, const code_parse_opts *opts, code_arena *a,
               code_module **out, code_error *err)
{
    code_parser p;
    memset(&p, 0, sizeof(p));
    if (opts)
        p.opts = *opts;
    if (p.opts.max_nesting <= 0)
        p.opts.max_nesting = CODE_PARSE_MAX_NESTING;
    if (p.opts.max_height == 0)
        p.opts.max_height = CODE_PARSE_MAX_HEIGHT;
    if (p.opts.max_c_stack == 0)
        p.opts.max_c_stack = CODE_PARSE_MAX_C_STACK;
    char probe;
    bool final = false;
    code_error later;
    memset(&later, 0, sizeof(later));
    p.later = &later;
    p.stack_base = (uintptr_t)&probe;
    p.final = &final;
    p.a = a;
    p.err = err;
    *out = NULL;
    if (code_lex_init(&p.lx, src, n, a, err, p.opts.max_nesting) || cp_advance(&p))
        return -1;
    code_module *m = cp_alloc(&p, sizeof(*m));
    if (!m)
        return -1;
    uint32_t cap = 0;
    while (!CP_IS(&p, END)) {
        if (CP_IS(&p, NEWLINE)) {
            if (cp_advance(&p))
                return failed(&p);
            continue;
        }
        if (statement(&p, &m->body, &cap))
            return failed(&p);
    }
    if (later.type) {
        *err = later;
        return -1;
    }
    *out = m;
    return 0;
}

bool code_module_known(const char *name)
{
    static const char *const mods[] = {"json", "math", "re", "datetime", "asyncio"};
    for (size_t i = 0; i < sizeof(mods) / sizeof(mods[0]); i++)
        if (strcmp(name, mods[i]) == 0)
            return true;
    return false;
}
