/* The parser's helpers: tokens, errors, the nesting and C-stack guards,
 * allocation and growing arrays. */
#include "code/code_parse_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int cp_advance(code_parser *p)
{
    if (p->has_next) {
        p->tok = p->next;
        p->has_next = false;
        return 0;
    }
    return code_lex_next(&p->lx, &p->tok);
}

const code_tok *cp_peek(code_parser *p)
{
    if (!p->has_next) {
        if (code_lex_next(&p->lx, &p->next))
            return NULL;
        p->has_next = true;
    }
    return &p->next;
}

__attribute__((format(printf, 3, 0)))
static int verr(code_parser *p, const char *type, const char *fmt, va_list ap)
{
    char msg[sizeof(p->err->msg)];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    return code_error_set(p->err, type, p->tok.line, p->tok.col, "%s", msg);
}

int cp_syntax(code_parser *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verr(p, "SyntaxError", fmt, ap);
    va_end(ap);
    return -1;
}

int cp_refuse(code_parser *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verr(p, "NotImplementedError", fmt, ap);
    va_end(ap);
    return -1;
}

int cp_nomem(code_parser *p)
{
    *p->final = true;
    return code_error_set(p->err, "MemoryError", p->tok.line, 0,
                          "memory limit exceeded while parsing");
}

void cp_later(code_parser *p, int line, int col, const char *fmt, ...)
{
    if (p->later->type)
        return;
    char msg[sizeof(p->later->msg)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    code_error_set(p->later, "SyntaxError", line, col, "%s", msg);
}

int cp_unexpected_indent(code_parser *p)
{
    *p->final = true;            /* CPython reports it without a tokenizer recheck */
    return code_error_set(p->err, "IndentationError", p->tok.line, p->tok.col,
                          "unexpected indent");
}

int cp_expect(code_parser *p, code_tok_kind k)
{
    if (p->tok.kind != k) {
        if (p->tok.kind == CODE_T_INDENT)
            return cp_unexpected_indent(p);
        if (k == CODE_T_COLON)   /* the one "expected" message CPython 3.11 has */
            return cp_syntax(p, "expected ':'");
        return cp_syntax(p, "invalid syntax");
    }
    return cp_advance(p);
}

int cp_close(code_parser *p, code_tok_kind k)
{
    code_tok_kind t = p->tok.kind;
    const code_expr *a = p->last;
    if (t != k && a && cp_starts_expr(t) && t != CODE_T_STAR && t != CODE_T_YIELD &&
        !(a->kind == CODE_E_NAME && !a->parens && t == CODE_T_STRING))
        return code_error_set(p->err, "SyntaxError", a->line, a->col, "%sinvalid syntax. "
                              "Perhaps you forgot a comma?", p->lx.sub ? "f-string: " : "");
    if (k == CODE_T_END && t != k)
        return cp_syntax(p, "f-string: invalid syntax");   /* the end of a field's expression */
    return cp_expect(p, k);
}

int cp_enter(code_parser *p)
{
    if (++p->depth > p->opts.max_nesting) {
        *p->final = true;
        return cp_syntax(p, "too deeply nested (the parser's limit is %d levels)",
                         p->opts.max_nesting);
    }
    char probe;
    uintptr_t here = (uintptr_t)&probe;
    uintptr_t used = here < p->stack_base ? p->stack_base - here : here - p->stack_base;
    if (used > p->opts.max_c_stack) {
        *p->final = true;
        return code_error_set(p->err, "RecursionError", p->tok.line, p->tok.col,
                              "maximum recursion depth exceeded during parsing");
    }
    return 0;
}

void cp_leave(code_parser *p)
{
    p->depth--;
}

void *cp_alloc(code_parser *p, size_t n)
{
    void *r = code_arena_alloc(p->a, n);
    if (!r)
        cp_nomem(p);
    return r;
}

void *cp_push(code_parser *p, void *v, uint32_t *n, uint32_t *cap, size_t elsize)
{
    char **arr = v;
    if (*n == *cap) {
        uint32_t nc = *cap ? *cap * 2 : 4;
        if (nc < *cap || (size_t)nc > SIZE_MAX / elsize)
            return cp_nomem(p), NULL;
        char *na = cp_alloc(p, (size_t)nc * elsize);
        if (!na)
            return NULL;
        if (*n)
            memcpy(na, *arr, (size_t)*n * elsize);
        *arr = na;
        *cap = nc;
    }
    char *slot = *arr + (size_t)(*n)++ * elsize;
    memset(slot, 0, elsize);
    return slot;
}

int cp_push_expr(code_parser *p, code_expr ***v, uint32_t *n, uint32_t *cap, code_expr *e)
{
    code_expr **slot = cp_push(p, v, n, cap, sizeof(*slot));
    if (!slot)
        return -1;
    *slot = e;
    return 0;
}

code_block *cp_block_push(code_parser *p, code_block *b, uint32_t *cap, code_stmt *s)
{
    code_stmt **slot = cp_push(p, &b->v, &b->n, cap, sizeof(*slot));
    if (!slot)
        return NULL;
    *slot = s;
    return b;
}

code_stmt *cp_new_stmt(code_parser *p, code_stmt_kind kind, int line, int col)
{
    code_stmt *s = cp_alloc(p, sizeof(*s));
    if (s) {
        s->kind = (uint8_t)kind;
        s->line = line;
        s->col = col;
    }
    return s;
}

const char *cp_name(code_parser *p)
{
    if (!CP_IS(p, NAME)) {
        cp_syntax(p, "invalid syntax");
        return NULL;
    }
    const char *s = p->tok.s;
    return cp_advance(p) ? NULL : s;
}
