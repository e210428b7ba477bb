/* The parser's state and its functions, shared by its files: helpers
 * (code_parse_util.c), simple and compound statements (code_parse.c,
 * code_parse_stmt.c), nodes and targets (code_parse_node.c), expressions
 * (code_parse_expr.c), parameters, calls and subscripts (code_parse_call.c),
 * literals and displays (code_parse_lit.c). */
#ifndef CELLA_CODE_PARSE_INT_H
#define CELLA_CODE_PARSE_INT_H

#include <stdint.h>

#include "code/code_lex.h"
#include "code/code_parse.h"

typedef struct code_parser {
    code_lexer lx;
    code_tok tok;                /* the current token */
    code_tok next;               /* one token of lookahead, when has_next */
    bool has_next;
    code_arena *a;
    code_error *err;
    code_parse_opts opts;
    int depth;
    uintptr_t stack_base;
    int in_func;                 /* def or lambda bodies we are in */
    bool in_async;               /* the innermost function is async def */
    int in_loop;                 /* loops in the current function */
    /* the error is final: no tokenizer recheck (a limit's, "unexpected
     * indent"); shared with f-string parsers */
    bool *final;
    /* the first of the errors CPython finds only after parsing (in its symbol
     * table and compiler: 'return' outside function, duplicate arguments...):
     * reported when the whole source parses; shared with f-string parsers */
    code_error *later;
    code_expr *last;             /* the last expression parsed, for "forgot a comma?" */
} code_parser;

#define CP_IS(p, k) ((p)->tok.kind == CODE_T_##k)

int cp_advance(code_parser *p);
const code_tok *cp_peek(code_parser *p);
int cp_expect(code_parser *p, code_tok_kind k);
/* A closing bracket: like cp_expect, but an expression where it should be
 * is CPython's "invalid syntax. Perhaps you forgot a comma?" */
int cp_close(code_parser *p, code_tok_kind k);
int cp_syntax(code_parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cp_refuse(code_parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cp_nomem(code_parser *p);
int cp_unexpected_indent(code_parser *p);
/* Records a SyntaxError for after the parse (see later); parsing goes on. */
void cp_later(code_parser *p, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int cp_enter(code_parser *p);
void cp_leave(code_parser *p);
void *cp_alloc(code_parser *p, size_t n);
/* Appends a zeroed element to a growing array (*v, *n, *cap) of elsize-byte
 * elements; NULL (MemoryError set) when memory runs out. */
void *cp_push(code_parser *p, void *v, uint32_t *n, uint32_t *cap, size_t elsize);
int cp_push_expr(code_parser *p, code_expr ***v, uint32_t *n, uint32_t *cap, code_expr *e);

code_stmt *cp_new_stmt(code_parser *p, code_stmt_kind kind, int line, int col);
code_block *cp_block_push(code_parser *p, code_block *b, uint32_t *cap, code_stmt *s);
const char *cp_name(code_parser *p);             /* a NAME token's text, advancing */

/* statements (code_parse.c, code_parse_stmt.c) */
/* block: ':' (NEWLINE INDENT statements DEDENT | simple_stmts); what and line
 * name the statement for "expected an indented block after ..." */
int cp_block(code_parser *p, code_block *b, const char *what, int line);
int cp_simple_stmts(code_parser *p, code_block *b, uint32_t *cap);
code_stmt *cp_if_stmt(code_parser *p);
code_stmt *cp_loop_stmt(code_parser *p);         /* while and for */
code_stmt *cp_try_stmt(code_parser *p);
code_stmt *cp_def_stmt(code_parser *p, bool is_async, int line, int col);

/* nodes and targets (code_parse_node.c) */
code_expr *cp_new(code_parser *p, code_expr_kind kind, int line, int col);
/* Sets e's height from its children; NULL (SyntaxError set) past the limit. */
code_expr *cp_finish(code_parser *p, code_expr *e);
bool cp_starts_expr(code_tok_kind k);
/* 0: assignment (and for), 1: augmented assignment. */
int cp_check_target(code_parser *p, const code_expr *e, int ctx);
const char *cp_describe(const code_expr *e);

/* expressions (code_parse_expr.c) */
code_expr *cp_expr(code_parser *p);             /* expression */
code_expr *cp_named(code_parser *p);            /* named_expression */
code_expr *cp_disjunction(code_parser *p);
code_expr *cp_bitor(code_parser *p);
/* A comma list; a tuple when there is a comma. named: elements may be
 * walruses. Elements may be starred. */
code_expr *cp_exprlist(code_parser *p, bool named);
/* for-loop and comprehension targets (stops before "in"). */
code_expr *cp_targets(code_parser *p);

/* parameters, calls, subscripts (code_parse_call.c) */
code_params *cp_params(code_parser *p, bool lambda);
code_expr *cp_lambda(code_parser *p);                   /* at 'lambda' */
code_expr *cp_call(code_parser *p, code_expr *fn);      /* at '(' */
code_expr *cp_subscript(code_parser *p, code_expr *obj); /* at '[' */

/* literals and displays (code_parse_lit.c) */
code_expr *cp_strings(code_parser *p);
code_expr *cp_paren(code_parser *p);
code_expr *cp_list(code_parser *p);
code_expr *cp_brace(code_parser *p);
int cp_comp_clauses(code_parser *p, code_expr *e);
code_expr *cp_fstring_body(code_parser *p, const char *body, size_t n, int line, int col,
                           int spec_depth, bool raw);

#endif
