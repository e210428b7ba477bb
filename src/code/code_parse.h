/* The parser of code mode's Python subset: source text to an AST (code_ast.h)
 * allocated in the caller's arena. Errors are Python exceptions (code_err.h):
 * SyntaxError, IndentationError and TabError as CPython raises them,
 * NotImplementedError naming a construct the subset refuses (class, yield,
 * match, del, with, decorators, ...), MemoryError when the arena's memory
 * limit is reached, and RecursionError when the C-stack guard trips.
 * Thread-safe: the parser keeps no global state. */
#ifndef CELLA_CODE_PARSE_H
#define CELLA_CODE_PARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "code/code_ast.h"
#include "code/code_err.h"
#include "code/code_mem.h"

typedef struct code_parse_opts {
    /* Open brackets, nested expressions and nested blocks, each counted as
     * a level; past it, SyntaxError. 0: CODE_PARSE_MAX_NESTING. */
    int max_nesting;
    /* The height of an expression's tree (a + b + ... counts each operator);
     * past it, SyntaxError. 0: CODE_PARSE_MAX_HEIGHT. */
    unsigned max_height;
    /* Bytes of C stack the parser may use below its entry; past it,
     * RecursionError. 0: CODE_PARSE_MAX_C_STACK. */
    size_t max_c_stack;
    /* Allow "await" outside functions (CPython does not). */
    bool top_level_await;
} code_parse_opts;

#define CODE_PARSE_MAX_NESTING 200
#define CODE_PARSE_MAX_HEIGHT 1000
#define CODE_PARSE_MAX_C_STACK (1024 * 1024)

/* Parses src (n bytes, UTF-8; need not be NUL-terminated). opts may be NULL.
 * On success *out is a module in arena a and 0 is returned; on failure -1 with
 * err filled (err must start zeroed). */
int code_parse(const char *src, size_t n, const code_parse_opts *opts, code_arena *a,
               code_module **out, code_error *err);

/* The modules "import" may name: json, math, re, datetime, asyncio. The
 * parser accepts any module name; importing another one raises
 * ModuleNotFoundError when the statement runs, as in CPython, so that
 * "try: import x / except ImportError:" works. */
bool code_module_known(const char *dotted_name);

#endif
