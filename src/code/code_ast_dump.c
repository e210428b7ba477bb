/* The AST as a compact S-expression, for tests and debugging. */
#include "code/code_ast.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code/code_lex.h"

#define DUMP_MAX_DEPTH 3000

typedef struct wr {
    char *buf;
    size_t cap, len;
} wr;

static void put(wr *w, const char *s, size_t n)
{
    if (w->len < w->cap) {
        size_t room = w->cap - w->len;
        memcpy(w->buf + w->len, s, n < room ? n : room);
    }
    w->len += n;
}

static void puts_(wr *w, const char *s)
{
    put(w, s, strlen(s));
}

static void putf(wr *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(wr *w, const char *fmt, ...)
{
    /* straight into the buffer, snprintf-style: what does not fit is counted */
    size_t room = w->len < w->cap ? w->cap - w->len : 0;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(room ? w->buf + w->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        w->len += (size_t)n;
}

static void quoted(wr *w, const char *s, size_t n)
{
    put(w, "'", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\\' || c == '\'')
            putf(w, "\\%c", c);
        else if (c == '\n')
            puts_(w, "\\n");
        else if (c == '\t')
            puts_(w, "\\t");
        else if (c < 0x20 || c == 0x7F)
            putf(w, "\\x%02x", c);
        else
            put(w, (const char *)&c, 1);
    }
    put(w, "'", 1);
}

static void dfloat(wr *w, double f)
{
    char tmp[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof(tmp), "%.*g", prec, f);
        if (strtod(tmp, NULL) == f)
            break;
    }
    puts_(w, tmp);
    if (!strpbrk(tmp, ".eEin"))
        puts_(w, ".0");
}

static void expr(wr *w, const code_expr *e, int d);

static void seq(wr *w, code_expr *const *v, uint32_t n, int d)
{
    for (uint32_t i = 0; i < n; i++) {
        put(w, " ", 1);
        expr(w, v[i], d);
    }
}

static void params(wr *w, const code_params *ps, int d)
{
    puts_(w, "(params");
    for (uint32_t i = 0; i < ps->npos + ps->nkwonly; i++) {
        const code_param *pr = i < ps->npos ? &ps->pos[i] : &ps->kwonly[i - ps->npos];
        if (i == ps->npos && !ps->vararg)
            puts_(w, " *");
        if (i == ps->npos && ps->vararg)
            putf(w, " *%s", ps->vararg->name);
        putf(w, " %s", pr->name);
        if (pr->annotation) {
            put(w, ":", 1);
            expr(w, pr->annotation, d);
        }
        if (pr->def) {
            put(w, "=", 1);
            expr(w, pr->def, d);
        }
        if (ps->nposonly && i + 1 == ps->nposonly)
            puts_(w, " /");
    }
    if (ps->vararg && !ps->nkwonly)
        putf(w, " *%s", ps->vararg->name);
    if (ps->kwarg)
        putf(w, " **%s", ps->kwarg->name);
    put(w, ")", 1);
}

static const char *op_name(int op)
{
    if (op == CODE_CMP_NOT_IN)
        return "not in";
    if (op == CODE_CMP_IS_NOT)
        return "is not";
    return code_tok_name((code_tok_kind)op);
}

static void comp(wr *w, const code_expr *e, int d)
{
    for (uint32_t i = 0; i < e->u.comp.n; i++) {
        const code_comp *g = &e->u.comp.gens[i];
        puts_(w, " (for ");
        expr(w, g->target, d);
        put(w, " ", 1);
        expr(w, g->iter, d);
        for (uint32_t j = 0; j < g->nifs; j++) {
            puts_(w, " (if ");
            expr(w, g->ifs[j], d);
            put(w, ")", 1);
        }
        put(w, ")", 1);
    }
}

static void expr(wr *w, const code_expr *e, int d)
{
    if (!e) {
        put(w, "_", 1);
        return;
    }
    if (++d > DUMP_MAX_DEPTH) {
        puts_(w, "...");
        return;
    }
    switch ((code_expr_kind)e->kind) {
    case CODE_E_NAME:
        puts_(w, e->u.str.text);
        return;
    case CODE_E_NONE: puts_(w, "None"); return;
    case CODE_E_TRUE: puts_(w, "True"); return;
    case CODE_E_FALSE: puts_(w, "False"); return;
    case CODE_E_ELLIPSIS: puts_(w, "..."); return;
    case CODE_E_INT:
        puts_(w, e->base == 16 ? "0x" : e->base == 8 ? "0o" : e->base == 2 ? "0b" : "");
        put(w, e->u.str.text, e->u.str.len);
        return;
    case CODE_E_FLOAT:
        dfloat(w, e->u.f);
        return;
    case CODE_E_STR:
        quoted(w, e->u.str.text, e->u.str.len);
        return;
    case CODE_E_BYTES:
        put(w, "b", 1);
        quoted(w, e->u.str.text, e->u.str.len);
        return;
    case CODE_E_FSTRING:
        puts_(w, "(f");
        seq(w, e->u.seq.v, e->u.seq.n, d);
        break;
    case CODE_E_FORMATTED:
        puts_(w, "(fmt ");
        expr(w, e->u.fmt.value, d);
        if (e->u.fmt.conv)
            putf(w, " !%c", e->u.fmt.conv);
        if (e->u.fmt.spec) {
            put(w, " ", 1);
            expr(w, e->u.fmt.spec, d);
        }
        break;
    case CODE_E_LIST: puts_(w, "(list"); seq(w, e->u.seq.v, e->u.seq.n, d); break;
    case CODE_E_TUPLE: puts_(w, "(tuple"); seq(w, e->u.seq.v, e->u.seq.n, d); break;
    case CODE_E_SET: puts_(w, "(set"); seq(w, e->u.seq.v, e->u.seq.n, d); break;
    case CODE_E_AND: puts_(w, "(and"); seq(w, e->u.seq.v, e->u.seq.n, d); break;
    case CODE_E_OR: puts_(w, "(or"); seq(w, e->u.seq.v, e->u.seq.n, d); break;
    case CODE_E_DICT:
        puts_(w, "(dict");
        for (uint32_t i = 0; i < e->u.dict.n; i++) {
            puts_(w, e->u.dict.keys[i] ? " (" : " (** ");
            if (e->u.dict.keys[i]) {
                expr(w, e->u.dict.keys[i], d);
                put(w, " ", 1);
            }
            expr(w, e->u.dict.values[i], d);
            put(w, ")", 1);
        }
        break;
    case CODE_E_LISTCOMP: case CODE_E_SETCOMP: case CODE_E_GENEXP: case CODE_E_DICTCOMP:
        puts_(w, e->kind == CODE_E_LISTCOMP ? "(listcomp " : e->kind == CODE_E_SETCOMP
                 ? "(setcomp " : e->kind == CODE_E_GENEXP ? "(genexp " : "(dictcomp ");
        expr(w, e->u.comp.elt, d);
        if (e->kind == CODE_E_DICTCOMP) {
            put(w, " ", 1);
            expr(w, e->u.comp.value, d);
        }
        comp(w, e, d);
        break;
    case CODE_E_STARRED: case CODE_E_NOT: case CODE_E_AWAIT: case CODE_E_UNARY:
        puts_(w, e->kind == CODE_E_STARRED ? "(* " : e->kind == CODE_E_NOT ? "(not "
                 : e->kind == CODE_E_AWAIT ? "(await " : e->op == CODE_T_MINUS ? "(neg "
                 : e->op == CODE_T_PLUS ? "(pos " : "(~ ");
        expr(w, e->u.unary.x, d);
        break;
    case CODE_E_WALRUS: case CODE_E_BINOP: case CODE_E_SUBSCRIPT:
        put(w, "(", 1);
        puts_(w, e->kind == CODE_E_WALRUS ? ":=" : e->kind == CODE_E_SUBSCRIPT ? "[]"
                 : code_tok_name((code_tok_kind)e->op));
        put(w, " ", 1);
        expr(w, e->u.bin.l, d);
        put(w, " ", 1);
        expr(w, e->u.bin.r, d);
        break;
    case CODE_E_LAMBDA:
        puts_(w, "(lambda ");
        params(w, e->u.lambda.params, d);
        put(w, " ", 1);
        expr(w, e->u.lambda.body, d);
        break;
    case CODE_E_IFEXP:
        puts_(w, "(ifexp ");
        expr(w, e->u.ifexp.test, d);
        put(w, " ", 1);
        expr(w, e->u.ifexp.body, d);
        put(w, " ", 1);
        expr(w, e->u.ifexp.orelse, d);
        break;
    case CODE_E_COMPARE:
        puts_(w, "(cmp ");
        expr(w, e->u.cmp.left, d);
        for (uint32_t i = 0; i < e->u.cmp.n; i++) {
            putf(w, " %s ", op_name(e->u.cmp.ops[i]));
            expr(w, e->u.cmp.rest[i], d);
        }
        break;
    case CODE_E_CALL:
        puts_(w, "(call ");
        expr(w, e->u.call.fn, d);
        seq(w, e->u.call.args, e->u.call.nargs, d);
        for (uint32_t i = 0; i < e->u.call.nkws; i++) {
            if (e->u.call.kws[i].name)
                putf(w, " (kw %s ", e->u.call.kws[i].name);
            else
                puts_(w, " (** ");
            expr(w, e->u.call.kws[i].value, d);
            put(w, ")", 1);
        }
        break;
    case CODE_E_ATTR:
        puts_(w, "(. ");
        expr(w, e->u.attr.obj, d);
        putf(w, " %s", e->u.attr.name);
        break;
    case CODE_E_SLICE:
        puts_(w, "(slice ");
        expr(w, e->u.slice.lo, d);
        put(w, " ", 1);
        expr(w, e->u.slice.hi, d);
        put(w, " ", 1);
        expr(w, e->u.slice.step, d);
        break;
    }
    put(w, ")", 1);
}

static void stmt(wr *w, const code_stmt *s, int d);

static void block(wr *w, const code_block *b, int d)
{
    put(w, "(", 1);
    for (uint32_t i = 0; i < b->n; i++) {
        if (i)
            put(w, " ", 1);
        stmt(w, b->v[i], d);
    }
    put(w, ")", 1);
}

static void stmt(wr *w, const code_stmt *s, int d)
{
    if (++d > DUMP_MAX_DEPTH) {
        puts_(w, "...");
        return;
    }
    switch ((code_stmt_kind)s->kind) {
    case CODE_S_EXPR:
        puts_(w, "(expr ");
        expr(w, s->u.expr.value, d);
        break;
    case CODE_S_RETURN:
        puts_(w, "(return");
        if (s->u.expr.value) {
            put(w, " ", 1);
            expr(w, s->u.expr.value, d);
        }
        break;
    case CODE_S_ASSIGN:
        puts_(w, "(=");
        seq(w, s->u.assign.targets, s->u.assign.n, d);
        put(w, " ", 1);
        expr(w, s->u.assign.value, d);
        break;
    case CODE_S_AUGASSIGN:
        putf(w, "(%s= ", code_tok_name((code_tok_kind)s->op));
        expr(w, s->u.aug.target, d);
        put(w, " ", 1);
        expr(w, s->u.aug.value, d);
        break;
    case CODE_S_ANNASSIGN:
        puts_(w, "(ann ");
        expr(w, s->u.aug.target, d);
        put(w, " ", 1);
        expr(w, s->u.aug.annotation, d);
        if (s->u.aug.value) {
            put(w, " ", 1);
            expr(w, s->u.aug.value, d);
        }
        break;
    case CODE_S_IF:
        puts_(w, "(if");
        for (uint32_t i = 0; i < s->u.if_.n; i++) {
            put(w, " ", 1);
            expr(w, s->u.if_.tests[i], d);
            put(w, " ", 1);
            block(w, &s->u.if_.bodies[i], d);
        }
        if (s->u.if_.orelse.n) {
            puts_(w, " else ");
            block(w, &s->u.if_.orelse, d);
        }
        break;
    case CODE_S_WHILE:
    case CODE_S_FOR:
        if (s->kind == CODE_S_FOR) {
            puts_(w, "(for ");
            expr(w, s->u.loop.target, d);
        } else {
            puts_(w, "(while");
        }
        put(w, " ", 1);
        expr(w, s->u.loop.test, d);
        put(w, " ", 1);
        block(w, &s->u.loop.body, d);
        if (s->u.loop.orelse.n) {
            puts_(w, " else ");
            block(w, &s->u.loop.orelse, d);
        }
        break;
    case CODE_S_BREAK: puts_(w, "(break"); break;
    case CODE_S_CONTINUE: puts_(w, "(continue"); break;
    case CODE_S_PASS: puts_(w, "(pass"); break;
    case CODE_S_DEF:
        putf(w, "(%sdef %s ", s->is_async ? "async " : "", s->u.def.name);
        params(w, s->u.def.params, d);
        if (s->u.def.returns) {
            puts_(w, " -> ");
            expr(w, s->u.def.returns, d);
        }
        put(w, " ", 1);
        block(w, &s->u.def.body, d);
        break;
    case CODE_S_GLOBAL:
    case CODE_S_NONLOCAL:
        puts_(w, s->kind == CODE_S_GLOBAL ? "(global" : "(nonlocal");
        for (uint32_t i = 0; i < s->u.names.n; i++)
            putf(w, " %s", s->u.names.names[i]);
        break;
    case CODE_S_TRY:
        puts_(w, "(try ");
        block(w, &s->u.try_.body, d);
        for (uint32_t i = 0; i < s->u.try_.nhandlers; i++) {
            const code_handler *h = &s->u.try_.handlers[i];
            puts_(w, " (except ");
            expr(w, h->type, d);
            if (h->name)
                putf(w, " as %s", h->name);
            put(w, " ", 1);
            block(w, &h->body, d);
            put(w, ")", 1);
        }
        if (s->u.try_.orelse.n) {
            puts_(w, " else ");
            block(w, &s->u.try_.orelse, d);
        }
        if (s->u.try_.finalbody.n) {
            puts_(w, " finally ");
            block(w, &s->u.try_.finalbody, d);
        }
        break;
    case CODE_S_RAISE:
        puts_(w, "(raise");
        if (s->u.raise.exc) {
            put(w, " ", 1);
            expr(w, s->u.raise.exc, d);
        }
        if (s->u.raise.cause) {
            puts_(w, " from ");
            expr(w, s->u.raise.cause, d);
        }
        break;
    case CODE_S_ASSERT:
        puts_(w, "(assert ");
        expr(w, s->u.assert_.test, d);
        if (s->u.assert_.msg) {
            put(w, " ", 1);
            expr(w, s->u.assert_.msg, d);
        }
        break;
    case CODE_S_IMPORT:
    case CODE_S_IMPORTFROM:
        if (s->kind == CODE_S_IMPORT)
            puts_(w, "(import");
        else
            putf(w, "(from %s import", s->u.import.module);
        for (uint32_t i = 0; i < s->u.import.n; i++) {
            putf(w, " %s", s->u.import.names[i].name);
            if (s->u.import.names[i].asname)
                putf(w, " as %s", s->u.import.names[i].asname);
        }
        break;
    }
    put(w, ")", 1);
}

static size_t finish(wr *w)
{
    if (w->cap)
        w->buf[w->len < w->cap ? w->len : w->cap - 1] = '\0';
    return w->len;
}

size_t code_ast_dump(const code_module *m, char *buf, size_t cap)
{
    wr w = {buf, cap, 0};
    for (uint32_t i = 0; i < m->body.n; i++) {
        if (i)
            put(&w, "\n", 1);
        stmt(&w, m->body.v[i], 0);
    }
    return finish(&w);
}

size_t code_ast_dump_expr(const code_expr *e, char *buf, size_t cap)
{
    wr w = {buf, cap, 0};
    expr(&w, e, 0);
    return finish(&w);
}
