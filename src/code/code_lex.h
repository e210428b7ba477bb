/* The tokenizer of code mode's Python subset: CPython's rules for lines,
 * indentation (tabs to multiples of 8, checked against tabs as 1 column for
 * TabError), bracket and backslash line joining, comments, numbers, strings
 * and f-strings. Pull-based: the parser asks for one token at a time.
 *
 * Values: a NAME is an arena copy; an INT is its digits without prefix or
 * underscores plus its base (the bignum layer converts it later); a FLOAT is
 * its double; a STRING is its decoded bytes (UTF-8 for str), except for an
 * f-string, whose raw body (a slice of the source) the parser splits with
 * code_fstr_next(). */
#ifndef CELLA_CODE_LEX_H
#define CELLA_CODE_LEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "code/code_err.h"
#include "code/code_mem.h"

#define CODE_TOKENS(X) \
    X(END, "end of input") X(NEWLINE, "newline") X(INDENT, "indent") X(DEDENT, "dedent") \
    X(NAME, "name") X(INT, "integer") X(FLOAT, "float") X(STRING, "string") \
    /* keywords: keep in alphabetical order, from FALSE to YIELD */ \
    X(FALSE, "False") X(NONE, "None") X(TRUE, "True") X(AND, "and") X(AS, "as") \
    X(ASSERT, "assert") X(ASYNC, "async") X(AWAIT, "await") X(BREAK, "break") \
    X(CLASS, "class") X(CONTINUE, "continue") X(DEF, "def") X(DEL, "del") \
    X(ELIF, "elif") X(ELSE, "else") X(EXCEPT, "except") X(FINALLY, "finally") \
    X(FOR, "for") X(FROM, "from") X(GLOBAL, "global") X(IF, "if") X(IMPORT, "import") \
    X(IN, "in") X(IS, "is") X(LAMBDA, "lambda") X(NONLOCAL, "nonlocal") X(NOT, "not") \
    X(OR, "or") X(PASS, "pass") X(RAISE, "raise") X(RETURN, "return") X(TRY, "try") \
    X(WHILE, "while") X(WITH, "with") X(YIELD, "yield") \
    /* operators and delimiters */ \
    X(LPAR, "(") X(RPAR, ")") X(LSQB, "[") X(RSQB, "]") X(LBRACE, "{") X(RBRACE, "}") \
    X(COLON, ":") X(COMMA, ",") X(SEMI, ";") X(DOT, ".") X(ELLIPSIS, "...") \
    X(ARROW, "->") X(WALRUS, ":=") X(PLUS, "+") X(MINUS, "-") X(STAR, "*") \
    X(SLASH, "/") X(DSLASH, "//") X(PERCENT, "%") X(DSTAR, "**") X(AT, "@") \
    X(AMP, "&") X(PIPE, "|") X(CARET, "^") X(LSHIFT, "<<") X(RSHIFT, ">>") \
    X(TILDE, "~") X(BADCHAR, "an invalid character") X(ASSIGN, "=") X(EQ, "==") X(NE, "!=") X(LT, "<") X(LE, "<=") \
    X(GT, ">") X(GE, ">=") \
    /* augmented assignment: the order of the binary operators PLUS..RSHIFT */ \
    X(PLUSEQ, "+=") X(MINUSEQ, "-=") X(STAREQ, "*=") X(SLASHEQ, "/=") \
    X(DSLASHEQ, "//=") X(PERCENTEQ, "%=") X(DSTAREQ, "**=") X(ATEQ, "@=") \
    X(AMPEQ, "&=") X(PIPEEQ, "|=") X(CARETEQ, "^=") X(LSHIFTEQ, "<<=") X(RSHIFTEQ, ">>=")

typedef enum code_tok_kind {
#define CODE_TOK_ENUM(n, s) CODE_T_##n,
    CODE_TOKENS(CODE_TOK_ENUM)
#undef CODE_TOK_ENUM
    CODE_T__COUNT
} code_tok_kind;

/* String flags. */
#define CODE_STR_BYTES 1
#define CODE_STR_RAW 2
#define CODE_STR_F 4

typedef struct code_tok {
    code_tok_kind kind;
    int line, col;               /* 1-based start */
    const char *s;               /* see above; NUL-terminated except f-string bodies */
    size_t len;
    double f;                    /* FLOAT */
    uint8_t base;                /* INT: 2, 8, 10 or 16 */
    uint8_t sflags;              /* STRING: CODE_STR_* */
    int body_line, body_col;     /* f-string: where its body starts */
} code_tok;

typedef struct code_lexer {
    const char *src, *p, *end;
    int line;
    const char *line_start;
    code_arena *arena;
    code_error *err;
    /* open brackets: their characters and lines */
    char *parens;
    int *paren_lines;
    int nparen, max_paren;
    /* indentation stack: columns with tabs to multiples of 8, and as 1 */
    int indents[101], altindents[101];   /* levels 0..CODE_MAX_INDENT - 1 are used */
    int nindent;
    int pending;                 /* > 0: DEDENTs to emit; < 0: an INDENT */
    bool at_bol;                 /* at the beginning of a logical line */
    bool line_has_tokens;
    bool done;                   /* END emitted */
    bool sub;                    /* an f-string expression: one implicit bracket */
    bool failed;                 /* an error was reported */
    bool soft;                   /* ... one CPython reports only when the parser reaches it */
    bool decode;                 /* ... a literal's escapes or bytes: CPython's parser
                                  * reports it, after which lexing may go on */
    int unclosed_line;           /* the error was a bracket left open there */
} code_lexer;

#define CODE_MAX_INDENT 100

/* src need not be NUL-terminated, and must outlive the tokens. max_nesting
 * bounds open brackets (SyntaxError "too many nested parentheses"). Returns -1
 * (err filled) on a bad encoding or a NUL byte, or when memory runs out. */
int code_lex_init(code_lexer *lx, const char *src, size_t n, code_arena *a, code_error *err,
                  int max_nesting);
/* A lexer over an f-string's expression, as if inside brackets: no NEWLINE,
 * INDENT or DEDENT tokens; line and col are where src starts. */
int code_lex_init_sub(code_lexer *lx, const char *src, size_t n, int line, int col,
                      code_arena *a, code_error *err, int max_nesting);
int code_lex_next(code_lexer *lx, code_tok *t);
const char *code_tok_name(code_tok_kind k);

/* ---- string literals (code_lex_str.c) ---- */

/* Decodes a literal's body (escapes, unless raw; CRLF and CR become LF) into
 * the arena. For an f-string's literal parts, braces=true turns "{{" and "}}"
 * into one brace. line is the body's first line, for errors. */
int code_str_decode(const char *body, size_t n, uint8_t sflags, bool braces, int line,
                    code_arena *a, code_error *err, const char **out, size_t *outn);

/* One piece of an f-string body, as code_fstr_next() finds them. */
typedef struct code_fstr_part {
    bool is_expr;
    /* literal: the raw text (undecoded); expr: the expression's source */
    const char *s;
    size_t len;
    int line, col;               /* where s starts */
    char conv;                   /* 0, 's', 'r' or 'a' */
    bool debug;                  /* "{x=}": s..debug_len is the text to print */
    size_t debug_len;
    /* the format spec's raw body (itself an f-string body), when has_spec */
    bool has_spec;
    const char *spec;
    size_t spec_len;
    int spec_line, spec_col;
} code_fstr_part;

typedef struct code_fstr_iter {
    const char *p, *end;
    int line, col;
    int spec_depth;              /* 0 for the f-string, 1 in a format spec... */
    bool raw;
} code_fstr_iter;

void code_fstr_begin(code_fstr_iter *it, const char *body, size_t n, int line, int col,
                     int spec_depth, bool raw);
/* 1: a part was found; 0: the end; -1: an error (err filled). */
int code_fstr_next(code_fstr_iter *it, code_fstr_part *part, code_error *err);

#endif
