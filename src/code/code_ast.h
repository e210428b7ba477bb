/* The abstract syntax tree of code mode's Python subset, allocated in one
 * arena (code_mem.h) and freed with it. Close to CPython's ast module, with
 * fewer node kinds: elif chains are flat (one If with several tests), and an
 * f-string's replacement field is a FORMATTED node. Every node carries its
 * line and column (1-based); every expression its height (1 for a leaf), which
 * the parser bounds so a tree walker's recursion is bounded too. */
#ifndef CELLA_CODE_AST_H
#define CELLA_CODE_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct code_expr code_expr;
typedef struct code_stmt code_stmt;

typedef enum code_expr_kind {
    CODE_E_NAME, CODE_E_NONE, CODE_E_TRUE, CODE_E_FALSE, CODE_E_ELLIPSIS,
    CODE_E_INT,        /* text: digits without prefix or '_'; base */
    CODE_E_FLOAT,      /* f */
    CODE_E_STR,        /* text: UTF-8 */
    CODE_E_BYTES,      /* text */
    CODE_E_FSTRING,    /* seq: STR and FORMATTED parts */
    CODE_E_FORMATTED,  /* fmt */
    CODE_E_LIST, CODE_E_TUPLE, CODE_E_SET,   /* seq (elements may be STARRED) */
    CODE_E_DICT,       /* dict (a NULL key: "**value") */
    CODE_E_LISTCOMP, CODE_E_SETCOMP, CODE_E_GENEXP, CODE_E_DICTCOMP,   /* comp */
    CODE_E_STARRED,    /* unary.x */
    CODE_E_WALRUS,     /* bin: l the NAME, r the value */
    CODE_E_LAMBDA,     /* lambda */
    CODE_E_IFEXP,      /* ifexp */
    CODE_E_AND, CODE_E_OR,   /* seq: two or more operands */
    CODE_E_NOT,        /* unary */
    CODE_E_UNARY,      /* unary; op: CODE_T_MINUS, CODE_T_PLUS or CODE_T_TILDE */
    CODE_E_BINOP,      /* bin; op: the operator's token kind (CODE_T_PLUS ...) */
    CODE_E_COMPARE,    /* cmp */
    CODE_E_AWAIT,      /* unary */
    CODE_E_CALL,       /* call */
    CODE_E_ATTR,       /* attr */
    CODE_E_SUBSCRIPT,  /* bin: l the object, r the index (a SLICE, or a TUPLE of them) */
    CODE_E_SLICE,      /* slice: absent parts are NULL */
} code_expr_kind;

/* Comparison operators (cmp.ops): token kinds, plus these two. */
#define CODE_CMP_NOT_IN 250
#define CODE_CMP_IS_NOT 251

typedef struct code_comp {      /* one "for target in iter if cond..." */
    code_expr *target, *iter;
    code_expr **ifs;
    uint32_t nifs;
} code_comp;

typedef struct code_kw {        /* a keyword argument; name NULL for "**value" */
    const char *name;
    code_expr *value;
    int line;
} code_kw;

typedef struct code_param {
    const char *name;
    code_expr *annotation;      /* NULL when absent */
    code_expr *def;             /* the default value, NULL when absent */
    int line, col;
} code_param;

typedef struct code_params {
    code_param *pos;            /* positional (the first nposonly before "/") */
    uint32_t npos, nposonly;
    code_param *vararg;         /* "*args", or NULL */
    code_param *kwonly;
    uint32_t nkwonly;
    code_param *kwarg;          /* "**kwargs", or NULL */
} code_params;

struct code_expr {
    uint8_t kind;               /* code_expr_kind */
    uint8_t op;                 /* see the kinds */
    uint8_t base;               /* INT */
    bool parens;                /* written inside parentheses */
    uint32_t height;
    int line, col;
    union {
        struct { const char *text; size_t len; } str;     /* NAME INT STR BYTES */
        double f;
        struct { code_expr **v; uint32_t n; } seq;
        struct { code_expr **keys, **values; uint32_t n; } dict;
        struct { code_expr *elt, *value; code_comp *gens; uint32_t n; } comp;
        struct { code_expr *x; } unary;
        struct { code_expr *l, *r; } bin;
        struct { code_expr *left; uint8_t *ops; code_expr **rest; uint32_t n; } cmp;
        struct { code_expr *test, *body, *orelse; } ifexp;
        struct {
            code_expr *fn;
            code_expr **args;   /* positional; may be STARRED */
            uint32_t nargs;
            code_kw *kws;
            uint32_t nkws;
        } call;
        struct { code_expr *obj; const char *name; } attr;
        struct { code_expr *lo, *hi, *step; } slice;
        struct { code_params *params; code_expr *body; } lambda;
        /* conv: 0, 's', 'r' or 'a'; spec: an FSTRING or NULL */
        struct { code_expr *value; code_expr *spec; char conv; } fmt;
    } u;
};

typedef struct code_block {
    code_stmt **v;
    uint32_t n;
} code_block;

typedef struct code_handler {   /* "except type as name:" */
    code_expr *type;            /* NULL for a bare except */
    const char *name;           /* NULL without "as" */
    code_block body;
    int line;
} code_handler;

typedef struct code_alias {     /* "name as asname" in imports */
    const char *name;           /* dotted for "import a.b" */
    const char *asname;         /* NULL without "as" */
    int line;
} code_alias;

typedef enum code_stmt_kind {
    CODE_S_EXPR, CODE_S_ASSIGN, CODE_S_AUGASSIGN, CODE_S_ANNASSIGN,
    CODE_S_IF, CODE_S_WHILE, CODE_S_FOR,
    CODE_S_BREAK, CODE_S_CONTINUE, CODE_S_PASS,
    CODE_S_DEF, CODE_S_RETURN, CODE_S_GLOBAL, CODE_S_NONLOCAL,
    CODE_S_TRY, CODE_S_RAISE, CODE_S_ASSERT,
    CODE_S_IMPORT, CODE_S_IMPORTFROM,
} code_stmt_kind;

struct code_stmt {
    uint8_t kind;               /* code_stmt_kind */
    uint8_t op;                 /* AUGASSIGN: the binary operator's token kind */
    bool is_async;              /* DEF */
    int line, col;
    union {
        struct { code_expr *value; } expr;                 /* EXPR RETURN (value may be NULL) */
        /* ASSIGN: targets[0] = targets[1] = ... = value */
        struct { code_expr **targets; uint32_t n; code_expr *value; } assign;
        /* AUGASSIGN, ANNASSIGN (annotation; value may be NULL) */
        struct { code_expr *target, *annotation, *value; } aug;
        /* IF: "if tests[0]: bodies[0] elif tests[1]: bodies[1] ... else: orelse" */
        struct { code_expr **tests; code_block *bodies; uint32_t n; code_block orelse; } if_;
        /* WHILE (target NULL) and FOR */
        struct { code_expr *target, *test; code_block body, orelse; } loop;
        struct {
            const char *name;
            code_params *params;
            code_expr *returns;
            code_block body;
        } def;
        struct { const char **names; uint32_t n; } names;  /* GLOBAL NONLOCAL */
        struct {
            code_block body;
            code_handler *handlers;
            uint32_t nhandlers;
            code_block orelse, finalbody;
        } try_;
        struct { code_expr *exc, *cause; } raise;          /* both may be NULL */
        struct { code_expr *test, *msg; } assert_;
        /* IMPORT: the aliases; IMPORTFROM: module plus the aliases */
        struct { const char *module; code_alias *names; uint32_t n; } import;
    } u;
};

typedef struct code_module {
    code_block body;
} code_module;

/* A compact S-expression of the tree, for tests and debugging: snprintf's
 * contract (returns the length it needed; writes at most cap bytes with a
 * NUL). Nodes deeper than a bound are written as "...". */
size_t code_ast_dump(const code_module *m, char *buf, size_t cap);
size_t code_ast_dump_expr(const code_expr *e, char *buf, size_t cap);

#endif
