/* The scope pass's private state, shared by its walker (code_scope.c) and
 * its resolution (code_scope_resolve.c). */
#ifndef CELLA_CODE_SCOPE_INT_H
#define CELLA_CODE_SCOPE_INT_H

#include "code/code_eval.h"

enum {
    SYM_BOUND = 1, SYM_PARAM = 2, SYM_GLOBAL = 4, SYM_NONLOCAL = 8, SYM_USED = 16,
    SYM_FREE_PASS = 32,  /* a child needs it from further out */
    SYM_CELL_NEEDED = 64,
    SYM_IMPLICIT_GLOBAL = 128,
};

typedef struct code_sym {
    const char *name;
    uint32_t flags;
    uint8_t kind;                /* CODE_NK_* once resolved */
    int32_t slot;                /* slot, or global index */
    int32_t param;               /* parameter slot, -1 */
    int line, col;               /* a nonlocal declaration's */
} code_sym;

typedef struct sp {
    code_vm *vm;
    code_arena *a;
    code_error *err;
    code_prog *prog;
    int pass;                    /* 1 collect, 2 annotate */
    uint32_t next_scope;         /* pass 2: scopes in creation order */
    code_scope *sc;              /* the current scope */
    bool in_comp_iter;           /* walking a comprehension's iterable */
    uint32_t capconsts, capglobals, capscopes;
} sp;

int code_sp_error(sp *p, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int code_sp_nomem(sp *p);
code_sym *code_sym_find(const code_scope *sc, const char *name);
code_sym *code_sym_add(sp *p, code_scope *sc, const char *name);
/* Decides local, cell, free or global for every name, and gives slots. */
int code_scope_resolve(sp *p);

#endif
