/* The scope pass, resolution: after pass 1 has seen every scope, each name
 * becomes local, cell, free or global as CPython's symbol table decides, and
 * gets its slot (parameters first, then other locals, cells, frees). */
#include "code/code_scope_int.h"

#include <string.h>

static bool is_funclike(const code_scope *sc)
{
    return sc->kind != CODE_SC_MODULE;
}

/* ---- resolution ------------------------------------------------------------ */

/* Marks name free in every scope from sc up to (not including) owner. */
static int pass_through(sp *p, code_scope *sc, code_scope *owner, const char *name)
{
    for (code_scope *c = sc; c != owner; c = c->parent) {
        code_sym *y = code_sym_add(p, c, name);
        if (!y)
            return -1;
        if (!y->kind)
            y->kind = CODE_NK_FREE;
    }
    code_sym *o = code_sym_find(owner, name);
    if (o && (o->kind == CODE_NK_LOCAL || !o->kind))
        o->kind = CODE_NK_CELL;
    return 0;
}

/* The scope that binds name for a free use in sc, or NULL (global). */
static code_scope *find_owner(code_scope *sc, const char *name, bool *global)
{
    *global = false;
    for (code_scope *c = sc->parent; c && is_funclike(c); c = c->parent) {
        code_sym *y = code_sym_find(c, name);
        if (!y)
            continue;
        if (y->flags & SYM_GLOBAL) {
            *global = true;
            return NULL;
        }
        if ((y->flags & SYM_BOUND) && !(y->flags & SYM_NONLOCAL))
            return c;
    }
    return NULL;
}

int code_scope_resolve(sp *p)
{
    code_prog *pr = p->prog;
    /* parents are created before their children: top-down */
    for (uint32_t k = 0; k < pr->nscopes; k++) {
        code_scope *sc = pr->scopes[k];
        for (uint32_t i = 0; i < sc->nsyms; i++) {
            code_sym *y = &sc->syms[i];
            if (sc->kind == CODE_SC_MODULE || (y->flags & SYM_GLOBAL)) {
                y->kind = CODE_NK_GLOBAL;
                continue;
            }
            if ((y->flags & SYM_BOUND) && !(y->flags & SYM_NONLOCAL)) {
                if (!y->kind)
                    y->kind = CODE_NK_LOCAL;
                continue;
            }
            if (y->kind == CODE_NK_FREE)
                continue;
            bool global;
            code_scope *owner = find_owner(sc, y->name, &global);
            if (!owner) {
                if (y->flags & SYM_NONLOCAL)
                    return code_sp_error(p, y->line, y->col, "no binding for nonlocal '%s' found",
                                    y->name);
                y->kind = CODE_NK_GLOBAL;
                continue;
            }
            y->kind = CODE_NK_FREE;
            if (pass_through(p, sc, owner, y->name))
                return -1;
        }
    }
    /* slots: parameters, other locals, cells, frees */
    for (uint32_t k = 0; k < pr->nscopes; k++) {
        code_scope *sc = pr->scopes[k];
        if (sc->kind == CODE_SC_MODULE)
            continue;
        uint32_t nl = sc->nparams, nc = 0, nf = 0;
        for (uint32_t i = 0; i < sc->nsyms; i++) {
            code_sym *y = &sc->syms[i];
            if (y->kind == CODE_NK_LOCAL && y->param < 0)
                y->slot = (int32_t)nl++;
            else if (y->kind == CODE_NK_LOCAL)
                y->slot = y->param;
        }
        for (uint32_t i = 0; i < sc->nsyms; i++)
            if (sc->syms[i].kind == CODE_NK_CELL)
                sc->syms[i].slot = (int32_t)(nl + nc++);
        for (uint32_t i = 0; i < sc->nsyms; i++)
            if (sc->syms[i].kind == CODE_NK_FREE)
                sc->syms[i].slot = (int32_t)(nl + nc + nf++);
        sc->nlocals = nl;
        sc->ncells = nc;
        sc->nfree = nf;
        sc->nslots = nl + nc + nf;
        sc->slot_names = code_arena_alloc(p->a, (sc->nslots + 1) * sizeof(char *));
        sc->cell_param = code_arena_alloc(p->a, (nc + 1) * sizeof(int32_t));
        sc->free_from = code_arena_alloc(p->a, (nf + 1) * sizeof(uint32_t));
        if (!sc->slot_names || !sc->cell_param || !sc->free_from)
            return code_sp_nomem(p);
        for (uint32_t i = 0; i < nc; i++)
            sc->cell_param[i] = -1;
        const code_params *ps = sc->params;
        if (ps) {
            uint32_t j = 0;
            for (uint32_t i = 0; i < ps->npos; i++)
                sc->slot_names[j++] = ps->pos[i].name;
            for (uint32_t i = 0; i < ps->nkwonly; i++)
                sc->slot_names[j++] = ps->kwonly[i].name;
            if (ps->vararg)
                sc->slot_names[j++] = ps->vararg->name;
            if (ps->kwarg)
                sc->slot_names[j++] = ps->kwarg->name;
        }
        for (uint32_t i = 0; i < sc->nsyms; i++) {
            code_sym *y = &sc->syms[i];
            if (y->slot < 0)
                continue;
            sc->slot_names[y->slot] = y->name;
            if (y->kind == CODE_NK_CELL)
                sc->cell_param[y->slot - nl] = y->param;
            if (y->kind == CODE_NK_FREE) {
                const code_sym *o = code_sym_find(sc->parent, y->name);
                sc->free_from[y->slot - nl - nc] = o ? (uint32_t)o->slot : 0;
            }
        }
    }
    return 0;
}

int code_scope_lookup(const code_prog *prog, const code_scope *sc, const char *name,
                      uint8_t *kind, uint32_t *slot)
{
    const code_sym *y = sc->kind == CODE_SC_MODULE ? NULL : code_sym_find(sc, name);
    if (y && y->kind && y->kind != CODE_NK_GLOBAL) {
        *kind = y->kind;
        *slot = (uint32_t)y->slot;
        return 0;
    }
    int g = code_prog_global(prog, name);
    if (g < 0)
        return -1;
    *kind = CODE_NK_GLOBAL;
    *slot = (uint32_t)g;
    return 0;
}

void code_prog_release(code_vm *vm, code_prog *prog)
{
    for (uint32_t i = 0; i < prog->nconsts; i++)
        code_decref(vm, prog->consts[i]);
    prog->nconsts = 0;
}
