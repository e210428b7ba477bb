/* The scope pass: CPython's symbol table, done once over the tree so that the
 * evaluator never looks a local up by name. Pass 1 collects, per scope, the
 * names bound, used, declared global or nonlocal (raising the symbol table's
 * SyntaxErrors in source order); resolution decides local, cell, free or
 * global, and gives slots; pass 2 walks the tree again in the same order and
 * writes each NAME's kind and slot into the node (see code_eval.h), and makes
 * the constants. The tree's height is bounded by the parser, so recursing on
 * it is bounded too. */
#include "code/code_scope_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "code/code_lex.h"

int code_sp_error(sp *p, int line, int col, const char *fmt, ...)
{
    if (p->err->type)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    p->err->type = "SyntaxError";
    p->err->line = line;
    p->err->col = col;
    vsnprintf(p->err->msg, sizeof(p->err->msg), fmt, ap);
    va_end(ap);
    return -1;
}

int code_sp_nomem(sp *p)
{
    return code_error_set(p->err, "MemoryError", 0, 0, "out of memory compiling");
}

static void *sp_grow(sp *p, void *v, uint32_t n, uint32_t *cap, size_t elem)
{
    if (n < *cap)
        return v;
    uint32_t nc = *cap ? *cap * 2 : 8;
    void *nv = code_arena_alloc(p->a, (size_t)nc * elem);
    if (!nv)
        return NULL;
    if (n)
        memcpy(nv, v, (size_t)n * elem);
    *cap = nc;
    return nv;
}

/* ---- name indexes: a generated program may hold many thousands of names,
 * so symbols and globals are found by hash, not by scanning --------------- */

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 16777619u;
    return h;
}

static void idx_put(uint32_t *idx, uint32_t cap, const char *name, uint32_t entry)
{
    uint32_t h = name_hash(name) & (cap - 1);
    while (idx[h])
        h = (h + 1) & (cap - 1);
    idx[h] = entry + 1;   /* 0 marks an empty slot */
}

static int64_t sym_lookup(const code_scope *sc, const char *name)
{
    if (sc->symcap == 0) {
        for (uint32_t i = 0; i < sc->nsyms; i++)
            if (strcmp(sc->syms[i].name, name) == 0)
                return i;
        return -1;
    }
    for (uint32_t h = name_hash(name) & (sc->symcap - 1);; h = (h + 1) & (sc->symcap - 1)) {
        uint32_t e = sc->symidx[h];
        if (!e)
            return -1;
        if (strcmp(sc->syms[e - 1].name, name) == 0)
            return e - 1;
    }
}

code_sym *code_sym_find(const code_scope *sc, const char *name)
{
    int64_t i = sym_lookup(sc, name);
    return i < 0 ? NULL : &sc->syms[i];
}

/* Past a few names a scope gets its index, rebuilt when half full. */
static int sym_index(sp *p, code_scope *sc)
{
    if (sc->nsyms < 16 || sc->nsyms * 2 < sc->symcap)
        return 0;
    uint32_t cap = sc->symcap ? sc->symcap * 2 : 64;
    uint32_t *idx = code_arena_alloc(p->a, cap * sizeof(uint32_t));
    if (!idx)
        return code_sp_nomem(p);
    for (uint32_t i = 0; i < sc->nsyms; i++)
        idx_put(idx, cap, sc->syms[i].name, i);
    sc->symidx = idx;
    sc->symcap = cap;
    return 0;
}

code_sym *code_sym_add(sp *p, code_scope *sc, const char *name)
{
    code_sym *s = code_sym_find(sc, name);
    if (s)
        return s;
    code_sym *nv = sp_grow(p, sc->syms, sc->nsyms, &sc->capsyms, sizeof(code_sym));
    if (!nv)
        return code_sp_nomem(p), NULL;
    sc->syms = nv;
    if (sc->symcap && (sc->nsyms + 1) * 2 < sc->symcap)
        idx_put(sc->symidx, sc->symcap, name, sc->nsyms);
    s = &sc->syms[sc->nsyms++];
    memset(s, 0, sizeof(*s));
    s->name = name;
    s->slot = -1;
    s->param = -1;
    if (sc->nsyms >= 16 && sc->nsyms * 2 >= sc->symcap && sym_index(p, sc))
        return NULL;
    return &sc->syms[sc->nsyms - 1];
}

/* ---- constants and globals ------------------------------------------------- */

/* A literal that could not be made: its exception as the compile error. A
 * decimal literal past the int/str conversion limit is a SyntaxError at
 * compile time, with CPython's hint. */
static int const_failed(sp *p, const code_expr *e)
{
    code_vm *vm = p->vm;
    cv exc = code_exc_fetch(vm);
    if (!exc)
        return code_error_set(p->err, "MemoryError", e->line, e->col, "out of memory compiling");
    const code_type *t = cv_type(exc);
    cv msg = code_exc_str(vm, exc);
    code_exc_clear(vm);
    const char *m = msg ? code_str_cstr(msg) : "";
    if (e->kind == CODE_E_INT && t == &code_exc_ValueError)
        code_error_set(p->err, "SyntaxError", e->line, e->col,
                       "%s - Consider hexadecimal for huge integer literals to avoid decimal "
                       "conversion limits.",
                       m);
    else
        code_error_set(p->err, code_exc_type_by_name(t->name) ? t->name : "MemoryError", e->line,
                       e->col, "%s", m);
    code_decref(vm, msg);
    code_decref(vm, exc);
    return -1;
}

static int const_add(sp *p, cv v)
{
    if (!v)
        return -1;
    code_prog *pr = p->prog;
    cv *nv = sp_grow(p, pr->consts, pr->nconsts, &p->capconsts, sizeof(cv));
    if (!nv) {
        code_decref(p->vm, v);
        return code_sp_nomem(p);
    }
    pr->consts = nv;
    pr->consts[pr->nconsts] = v;
    return (int)pr->nconsts++;
}

static int64_t global_lookup(const code_prog *prog, const char *name)
{
    if (!prog->gcap)
        return -1;
    for (uint32_t h = name_hash(name) & (prog->gcap - 1);; h = (h + 1) & (prog->gcap - 1)) {
        uint32_t e = prog->gidx[h];
        if (!e)
            return -1;
        if (strcmp(prog->gnames[e - 1], name) == 0)
            return e - 1;
    }
}

int code_prog_global(const code_prog *prog, const char *name)
{
    return (int)global_lookup(prog, name);
}

static int global_index(sp *p, const char *name)
{
    int i = code_prog_global(p->prog, name);
    if (i >= 0)
        return i;
    code_prog *pr = p->prog;
    if (pr->nglobals == p->capglobals) {
        uint32_t nc = p->capglobals ? p->capglobals * 2 : 16;
        const char **nv = code_arena_alloc(p->a, nc * sizeof(char *));
        cv *ns = code_arena_alloc(p->a, nc * sizeof(cv));
        if (!nv || !ns)
            return code_sp_nomem(p);
        if (pr->nglobals) {
            memcpy(nv, pr->gnames, pr->nglobals * sizeof(char *));
            memcpy(ns, pr->gname_str, pr->nglobals * sizeof(cv));
        }
        pr->gnames = nv;
        pr->gname_str = ns;
        p->capglobals = nc;
    }
    cv s = code_str_intern(p->vm, name, strlen(name));
    if (!s)
        return code_sp_nomem(p);
    pr->gnames[pr->nglobals] = name;
    pr->gname_str[pr->nglobals] = s;
    if ((pr->nglobals + 1) * 2 > pr->gcap) {
        uint32_t cap = pr->gcap ? pr->gcap * 2 : 64;
        uint32_t *idx = code_arena_alloc(p->a, cap * sizeof(uint32_t));
        if (!idx)
            return code_sp_nomem(p);
        for (uint32_t k = 0; k <= pr->nglobals; k++)
            idx_put(idx, cap, pr->gnames[k], k);
        pr->gidx = idx;
        pr->gcap = cap;
    } else {
        idx_put(pr->gidx, pr->gcap, name, pr->nglobals);
    }
    return (int)pr->nglobals++;
}

/* ---- scopes ---------------------------------------------------------------- */

static code_scope *scope_enter(sp *p, int kind, const char *name, const void *node)
{
    code_prog *pr = p->prog;
    if (p->pass == 2) {
        code_scope *sc = pr->scopes[p->next_scope++];
        p->sc = sc;
        return sc;
    }
    code_scope **nv = sp_grow(p, pr->scopes, pr->nscopes, &p->capscopes, sizeof(*nv));
    code_scope *sc = nv ? code_arena_alloc(p->a, sizeof(*sc)) : NULL;
    if (!sc)
        return code_sp_nomem(p), NULL;
    pr->scopes = nv;
    sc->kind = (uint8_t)kind;
    sc->name = name;
    sc->node = node;
    sc->parent = p->sc;
    sc->qualname = name;
    if (sc->parent && sc->parent->kind != CODE_SC_MODULE) {
        size_t n1 = strlen(sc->parent->qualname), n2 = strlen(name);
        char *q = code_arena_alloc(p->a, n1 + n2 + 11);
        if (!q)
            return code_sp_nomem(p), NULL;
        memcpy(q, sc->parent->qualname, n1);
        memcpy(q + n1, ".<locals>.", 10);
        memcpy(q + n1 + 10, name, n2 + 1);
        sc->qualname = q;
    }
    if (kind == CODE_SC_COMP || kind == CODE_SC_GENEXP)
        sc->async_ctx = sc->parent->async_ctx;
    pr->scopes[pr->nscopes++] = sc;
    p->sc = sc;
    return sc;
}

static uint32_t scope_index(const sp *p, const code_scope *sc)
{
    for (uint32_t i = 0; i < p->prog->nscopes; i++)
        if (p->prog->scopes[i] == sc)
            return i;
    return 0;
}

/* ---- pass 1: what each scope does with each name --------------------------- */

static int note_bind(sp *p, const char *name, int line, int col)
{
    code_sym *s = code_sym_add(p, p->sc, name);
    if (!s)
        return -1;
    (void)line, (void)col;
    s->flags |= SYM_BOUND;
    return 0;
}

static int note_use(sp *p, const char *name)
{
    code_sym *s = code_sym_add(p, p->sc, name);
    if (!s)
        return -1;
    s->flags |= SYM_USED;
    return 0;
}

static int note_decl(sp *p, const code_stmt *st, bool global)
{
    for (uint32_t i = 0; i < st->u.names.n; i++) {
        const char *n = st->u.names.names[i];
        code_sym *s = code_sym_find(p->sc, n);
        const char *what = global ? "global" : "nonlocal";
        if (s && (s->flags & SYM_PARAM))
            return code_sp_error(p, st->line, st->col, "name '%s' is parameter and %s", n, what);
        if (s && global && (s->flags & SYM_NONLOCAL))
            return code_sp_error(p, st->line, st->col, "name '%s' is nonlocal and global", n);
        if (s && !global && (s->flags & SYM_GLOBAL))
            return code_sp_error(p, st->line, st->col, "name '%s' is nonlocal and global", n);
        if (s && (s->flags & SYM_BOUND) && !(s->flags & (SYM_GLOBAL | SYM_NONLOCAL)))
            return code_sp_error(p, st->line, st->col, "name '%s' is assigned to before %s declaration",
                            n, what);
        if (s && (s->flags & SYM_USED) && !(s->flags & (SYM_GLOBAL | SYM_NONLOCAL)))
            return code_sp_error(p, st->line, st->col, "name '%s' is used prior to %s declaration", n,
                            what);
        if (!(s = code_sym_add(p, p->sc, n)))
            return -1;
        s->flags |= global ? SYM_GLOBAL : SYM_NONLOCAL;
        s->line = st->line;
        s->col = st->col;
    }
    return 0;
}

/* ---- pass 2: NAME nodes ---------------------------------------------------- */

static int name_node(sp *p, code_expr *e, bool store)
{
    const char *n = e->u.str.text;
    if (p->pass == 1)
        return store ? note_bind(p, n, e->line, e->col) : note_use(p, n);
    code_sym *s = code_sym_find(p->sc, n);
    if (!s || s->kind == CODE_NK_GLOBAL || !s->kind) {
        int g = global_index(p, n);
        if (g < 0)
            return -1;
        e->op = CODE_NK_GLOBAL;
        e->height = (uint32_t)g;
        return 0;
    }
    e->op = s->kind;
    e->height = (uint32_t)s->slot;
    return 0;
}

/* Pass 2 at a binding site that is not a NAME node (def, import, except-as):
 * a global name gets its slot now, so the evaluator finds it. */
static int bind_site(sp *p, code_scope *sc, const char *name)
{
    const code_sym *y = sc->kind == CODE_SC_MODULE ? NULL : code_sym_find(sc, name);
    if (y && y->kind && y->kind != CODE_NK_GLOBAL)
        return 0;
    return global_index(p, name) < 0 ? -1 : 0;
}

static int walk_expr(sp *p, code_expr *e);
static int walk_block(sp *p, const code_block *b);

static int walk_target(sp *p, code_expr *e)
{
    switch (e->kind) {
    case CODE_E_NAME:
        return name_node(p, e, true);
    case CODE_E_TUPLE: case CODE_E_LIST:
        for (uint32_t i = 0; i < e->u.seq.n; i++)
            if (walk_target(p, e->u.seq.v[i]))
                return -1;
        return 0;
    case CODE_E_STARRED:
        return walk_target(p, e->u.unary.x);
    default:
        return walk_expr(p, e);
    }
}

static int walk_seq(sp *p, code_expr **v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (v[i] && walk_expr(p, v[i]))
            return -1;
    return 0;
}

static int walk_defaults(sp *p, const code_params *ps)
{
    for (uint32_t i = 0; i < ps->npos; i++)
        if (ps->pos[i].def && walk_expr(p, ps->pos[i].def))
            return -1;
    for (uint32_t i = 0; i < ps->nkwonly; i++)
        if (ps->kwonly[i].def && walk_expr(p, ps->kwonly[i].def))
            return -1;
    return 0;
}

static int add_params(sp *p, const code_params *ps)
{
    code_scope *sc = p->sc;
    sc->params = ps;
    if (p->pass == 2)
        return 0;
    const code_param *order[4096];
    uint32_t n = 0;
    for (uint32_t i = 0; i < ps->npos && n < 4096; i++)
        order[n++] = &ps->pos[i];
    for (uint32_t i = 0; i < ps->nkwonly && n < 4096; i++)
        order[n++] = &ps->kwonly[i];
    if (ps->vararg && n < 4096)
        order[n++] = ps->vararg;
    if (ps->kwarg && n < 4096)
        order[n++] = ps->kwarg;
    if (n >= 4096)
        return code_sp_error(p, order[0]->line, order[0]->col, "too many parameters");
    for (uint32_t i = 0; i < n; i++) {
        code_sym *s = code_sym_add(p, sc, order[i]->name);
        if (!s)
            return -1;
        s->flags |= SYM_PARAM | SYM_BOUND;
        s->param = (int32_t)i;
    }
    sc->nparams = n;
    return 0;
}

/* A comprehension: its first iterable in the enclosing scope, the rest in
 * its own. */
static int walk_comp(sp *p, code_expr *e)
{
    code_comp *g = e->u.comp.gens;
    bool saved = p->in_comp_iter;
    p->in_comp_iter = true;
    if (walk_expr(p, g[0].iter))
        return -1;
    p->in_comp_iter = saved;
    code_scope *outer = p->sc;
    static const char *names[] = {
        [CODE_E_LISTCOMP] = "<listcomp>", [CODE_E_SETCOMP] = "<setcomp>",
        [CODE_E_GENEXP] = "<genexpr>", [CODE_E_DICTCOMP] = "<dictcomp>",
    };
    code_scope *sc = scope_enter(p, e->kind == CODE_E_GENEXP ? CODE_SC_GENEXP : CODE_SC_COMP,
                                 names[e->kind], e);
    if (!sc)
        return -1;
    if (p->pass == 2)
        e->height = scope_index(p, sc);
    for (uint32_t i = 0; i < e->u.comp.n; i++) {
        if (i > 0) {
            p->in_comp_iter = true;
            if (walk_expr(p, g[i].iter))
                return -1;
            p->in_comp_iter = saved;
        }
        if (walk_target(p, g[i].target))
            return -1;
        for (uint32_t j = 0; j < g[i].nifs; j++)
            if (walk_expr(p, g[i].ifs[j]))
                return -1;
    }
    if (walk_expr(p, e->u.comp.elt))
        return -1;
    if (e->u.comp.value && walk_expr(p, e->u.comp.value))
        return -1;
    p->sc = outer;
    return 0;
}

/* Is name an iteration variable of the comprehensions we are in? */
static bool comp_iter_var(const sp *p, const char *name)
{
    for (const code_scope *s = p->sc; s && (s->kind == CODE_SC_COMP || s->kind == CODE_SC_GENEXP);
         s = s->parent) {
        const code_sym *y = code_sym_find(s, name);
        if (y && (y->flags & SYM_BOUND) && !(y->flags & SYM_IMPLICIT_GLOBAL))
            return true;
    }
    return false;
}

static int walk_walrus(sp *p, code_expr *e)
{
    code_expr *t = e->u.bin.l;
    if (walk_expr(p, e->u.bin.r))
        return -1;
    if (p->pass == 1 && p->in_comp_iter)
        return code_sp_error(p, e->line, e->col,
                        "assignment expression cannot be used in a comprehension iterable "
                        "expression");
    if (p->sc->kind != CODE_SC_COMP && p->sc->kind != CODE_SC_GENEXP)
        return name_node(p, t, true);
    if (p->pass == 1) {
        if (comp_iter_var(p, t->u.str.text))
            return code_sp_error(p, e->line, e->col,
                            "assignment expression cannot rebind comprehension iteration "
                            "variable '%s'",
                            t->u.str.text);
        /* binds in the nearest enclosing function (or the module) */
        code_scope *target = p->sc;
        while (target->kind == CODE_SC_COMP || target->kind == CODE_SC_GENEXP)
            target = target->parent;
        code_sym *s = code_sym_add(p, target, t->u.str.text);
        if (!s)
            return -1;
        s->flags |= SYM_BOUND;
        for (code_scope *c = p->sc; c != target; c = c->parent) {
            code_sym *y = code_sym_add(p, c, t->u.str.text);
            if (!y)
                return -1;
            y->flags |= SYM_USED;
            if (target->kind == CODE_SC_MODULE)
                y->flags |= SYM_GLOBAL | SYM_IMPLICIT_GLOBAL;
        }
        return 0;
    }
    return name_node(p, t, false);
}

static int walk_expr(sp *p, code_expr *e)
{
    switch ((code_expr_kind)e->kind) {
    case CODE_E_NAME:
        return name_node(p, e, false);
    case CODE_E_NONE: case CODE_E_TRUE: case CODE_E_FALSE: case CODE_E_ELLIPSIS:
        return 0;
    case CODE_E_INT:
        if (p->pass == 2) {
            int i = const_add(p, code_int_from_digits(p->vm, e->u.str.text, e->u.str.len, e->base,
                                                      false));
            if (i < 0)
                return p->err->type ? -1 : const_failed(p, e);
            e->height = (uint32_t)i;
        }
        return 0;
    case CODE_E_FLOAT:
        if (p->pass == 2) {
            int i = const_add(p, code_float_new(p->vm, e->u.f));
            if (i < 0)
                return p->err->type ? -1 : const_failed(p, e);
            e->height = (uint32_t)i;
        }
        return 0;
    case CODE_E_STR: case CODE_E_BYTES:
        if (p->pass == 2) {
            cv v = e->kind == CODE_E_STR ? code_str_new(p->vm, e->u.str.text, e->u.str.len)
                                         : code_bytes_new(p->vm, e->u.str.text, e->u.str.len);
            int i = const_add(p, v);
            if (i < 0)
                return p->err->type ? -1 : const_failed(p, e);
            e->height = (uint32_t)i;
        }
        return 0;
    case CODE_E_FSTRING: case CODE_E_LIST: case CODE_E_TUPLE: case CODE_E_SET:
    case CODE_E_AND: case CODE_E_OR:
        return walk_seq(p, e->u.seq.v, e->u.seq.n);
    case CODE_E_FORMATTED:
        if (walk_expr(p, e->u.fmt.value))
            return -1;
        return e->u.fmt.spec ? walk_expr(p, e->u.fmt.spec) : 0;
    case CODE_E_DICT:
        if (walk_seq(p, e->u.dict.keys, e->u.dict.n))
            return -1;
        return walk_seq(p, e->u.dict.values, e->u.dict.n);
    case CODE_E_LISTCOMP: case CODE_E_SETCOMP: case CODE_E_GENEXP: case CODE_E_DICTCOMP:
        return walk_comp(p, e);
    case CODE_E_STARRED: case CODE_E_NOT: case CODE_E_UNARY: case CODE_E_AWAIT:
        return walk_expr(p, e->u.unary.x);
    case CODE_E_WALRUS:
        return walk_walrus(p, e);
    case CODE_E_LAMBDA: {
        if (walk_defaults(p, e->u.lambda.params))
            return -1;
        code_scope *outer = p->sc;
        code_scope *sc = scope_enter(p, CODE_SC_LAMBDA, "<lambda>", e);
        if (!sc || add_params(p, e->u.lambda.params))
            return -1;
        if (p->pass == 2)
            e->height = scope_index(p, sc);
        bool saved = p->in_comp_iter;
        p->in_comp_iter = false;
        int rc = walk_expr(p, e->u.lambda.body);
        p->in_comp_iter = saved;
        p->sc = outer;
        return rc;
    }
    case CODE_E_IFEXP:
        if (walk_expr(p, e->u.ifexp.test) || walk_expr(p, e->u.ifexp.body))
            return -1;
        return walk_expr(p, e->u.ifexp.orelse);
    case CODE_E_BINOP: case CODE_E_SUBSCRIPT:
        if (walk_expr(p, e->u.bin.l))
            return -1;
        return walk_expr(p, e->u.bin.r);
    case CODE_E_COMPARE:
        if (walk_expr(p, e->u.cmp.left))
            return -1;
        return walk_seq(p, e->u.cmp.rest, e->u.cmp.n);
    case CODE_E_CALL: {
        if (walk_expr(p, e->u.call.fn) || walk_seq(p, e->u.call.args, e->u.call.nargs))
            return -1;
        bool dstar = false;
        for (uint32_t i = 0; i < e->u.call.nkws; i++) {
            if (walk_expr(p, e->u.call.kws[i].value))
                return -1;
            if (!e->u.call.kws[i].name)
                dstar = true;
        }
        if (p->pass == 2) {
            /* op: 1 when the call has *args or **kwargs (the general path) */
            e->op = dstar;
            for (uint32_t i = 0; i < e->u.call.nargs; i++)
                if (e->u.call.args[i]->kind == CODE_E_STARRED)
                    e->op = 1;
            e->height = 0;
            if (e->u.call.nkws && !dstar) {
                cv t = code_tuple_new(p->vm, e->u.call.nkws);
                if (!t)
                    return code_sp_nomem(p);
                for (uint32_t i = 0; i < e->u.call.nkws; i++) {
                    const char *n = e->u.call.kws[i].name;
                    cv s = code_str_intern(p->vm, n, strlen(n));
                    if (!s) {
                        code_decref(p->vm, t);
                        return code_sp_nomem(p);
                    }
                    ((code_tuple *)cv_obj(t))->v[i] = s;
                }
                int ci = const_add(p, t);
                if (ci < 0)
                    return -1;
                e->height = (uint32_t)ci + 1;
            }
        }
        return 0;
    }
    case CODE_E_ATTR:
        return walk_expr(p, e->u.attr.obj);
    case CODE_E_SLICE:
        if (e->u.slice.lo && walk_expr(p, e->u.slice.lo))
            return -1;
        if (e->u.slice.hi && walk_expr(p, e->u.slice.hi))
            return -1;
        return e->u.slice.step ? walk_expr(p, e->u.slice.step) : 0;
    }
    return 0;
}

static int walk_stmt(sp *p, code_stmt *s)
{
    switch ((code_stmt_kind)s->kind) {
    case CODE_S_EXPR: case CODE_S_RETURN:
        return s->u.expr.value ? walk_expr(p, s->u.expr.value) : 0;
    case CODE_S_ASSIGN:
        if (walk_expr(p, s->u.assign.value))
            return -1;
        for (uint32_t i = 0; i < s->u.assign.n; i++)
            if (walk_target(p, s->u.assign.targets[i]))
                return -1;
        return 0;
    case CODE_S_AUGASSIGN:
        if (walk_expr(p, s->u.aug.value))
            return -1;
        if (s->u.aug.target->kind == CODE_E_NAME && p->pass == 1 &&
            note_use(p, s->u.aug.target->u.str.text))
            return -1;
        return walk_target(p, s->u.aug.target);
    case CODE_S_ANNASSIGN:
        if (s->u.aug.value && walk_expr(p, s->u.aug.value))
            return -1;
        if (s->u.aug.target->kind == CODE_E_NAME && p->pass == 1) {
            code_sym *y = code_sym_find(p->sc, s->u.aug.target->u.str.text);
            if (y && (y->flags & (SYM_GLOBAL | SYM_NONLOCAL)))
                return code_sp_error(p, s->line, s->col, "annotated name '%s' can't be %s",
                                s->u.aug.target->u.str.text,
                                (y->flags & SYM_GLOBAL) ? "global" : "nonlocal");
        }
        return walk_target(p, s->u.aug.target);
    case CODE_S_IF:
        for (uint32_t i = 0; i < s->u.if_.n; i++)
            if (walk_expr(p, s->u.if_.tests[i]) || walk_block(p, &s->u.if_.bodies[i]))
                return -1;
        return walk_block(p, &s->u.if_.orelse);
    case CODE_S_WHILE: case CODE_S_FOR:
        if (walk_expr(p, s->u.loop.test))
            return -1;
        if (s->u.loop.target && walk_target(p, s->u.loop.target))
            return -1;
        if (walk_block(p, &s->u.loop.body))
            return -1;
        return walk_block(p, &s->u.loop.orelse);
    case CODE_S_BREAK: case CODE_S_CONTINUE: case CODE_S_PASS:
        return 0;
    case CODE_S_DEF: {
        if (walk_defaults(p, s->u.def.params))
            return -1;
        code_scope *outer = p->sc;
        code_scope *sc = scope_enter(p, CODE_SC_FUNC, s->u.def.name, s);
        if (!sc)
            return -1;
        sc->is_async = sc->async_ctx = s->is_async;
        if (add_params(p, s->u.def.params))
            return -1;
        if (p->pass == 2)
            s->col = (int)scope_index(p, sc);
        bool saved = p->in_comp_iter;
        p->in_comp_iter = false;
        int rc = walk_block(p, &s->u.def.body);
        p->in_comp_iter = saved;
        p->sc = outer;
        if (rc)
            return -1;
        if (p->pass == 1)
            return note_bind(p, s->u.def.name, s->line, s->col);
        if (bind_site(p, outer, s->u.def.name))
            return -1;
        return code_scope_lookup(p->prog, outer, s->u.def.name, &sc->bind_kind, &sc->bind_slot);
    }
    case CODE_S_GLOBAL: case CODE_S_NONLOCAL:
        return p->pass == 1 ? note_decl(p, s, s->kind == CODE_S_GLOBAL) : 0;
    case CODE_S_TRY:
        if (walk_block(p, &s->u.try_.body))
            return -1;
        for (uint32_t i = 0; i < s->u.try_.nhandlers; i++) {
            code_handler *h = &s->u.try_.handlers[i];
            if (h->type && walk_expr(p, h->type))
                return -1;
            if (h->name && (p->pass == 1 ? note_bind(p, h->name, h->line, 0)
                                         : bind_site(p, p->sc, h->name)))
                return -1;
            if (walk_block(p, &h->body))
                return -1;
        }
        if (walk_block(p, &s->u.try_.orelse))
            return -1;
        return walk_block(p, &s->u.try_.finalbody);
    case CODE_S_RAISE:
        if (s->u.raise.exc && walk_expr(p, s->u.raise.exc))
            return -1;
        return s->u.raise.cause ? walk_expr(p, s->u.raise.cause) : 0;
    case CODE_S_ASSERT:
        if (walk_expr(p, s->u.assert_.test))
            return -1;
        return s->u.assert_.msg ? walk_expr(p, s->u.assert_.msg) : 0;
    case CODE_S_IMPORT: case CODE_S_IMPORTFROM:
        for (uint32_t i = 0; i < s->u.import.n; i++) {
                const code_alias *al = &s->u.import.names[i];
                const char *n = al->asname ? al->asname : al->name;
                char buf[256];
                if (!al->asname && s->kind == CODE_S_IMPORT && strchr(n, '.')) {
                    size_t k = (size_t)(strchr(n, '.') - n);
                    if (k >= sizeof(buf))
                        k = sizeof(buf) - 1;
                    memcpy(buf, n, k);
                    buf[k] = 0;
                    n = code_arena_strndup(p->a, buf, k);
                    if (!n)
                        return code_sp_nomem(p);
                }
                if (p->pass == 1 ? note_bind(p, n, al->line, 0) : bind_site(p, p->sc, n))
                    return -1;
            }
        return 0;
    }
    return 0;
}

static int walk_block(sp *p, const code_block *b)
{
    for (uint32_t i = 0; i < b->n; i++)
        if (walk_stmt(p, b->v[i]))
            return -1;
    return 0;
}

int code_scope_pass(code_vm *vm, code_module *m, code_arena *a, bool top_level_await,
                    code_prog *prog, code_error *err)
{
    memset(prog, 0, sizeof(*prog));
    prog->mod = m;
    sp p = {.vm = vm, .a = a, .err = err, .prog = prog, .pass = 1};
    if (!scope_enter(&p, CODE_SC_MODULE, "<module>", m))
        return -1;
    prog->scopes[0]->async_ctx = top_level_await;
    if (walk_block(&p, &m->body) || code_scope_resolve(&p))
        return -1;
    p.pass = 2;
    p.sc = NULL;
    if (!scope_enter(&p, CODE_SC_MODULE, "<module>", m) || walk_block(&p, &m->body))
        goto fail;
    return 0;
fail:
    code_prog_release(vm, prog);
    return -1;
}

