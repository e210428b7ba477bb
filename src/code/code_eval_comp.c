/* The evaluator: comprehensions, generator expressions and f-strings.
 *
 * A comprehension has its own scope (its loop variables do not leak) and
 * runs at once in a frame of its own. A generator expression is lazy: its
 * body runs on a small stack of its own (code_coro.c) and switches back to
 * the consumer at each item, so it can be abandoned half way, and a host call
 * inside it pauses the whole run like any other. */
#include "code/code_eval.h"

#include <string.h>

#include "code/code_range.h"

typedef struct comp_run {
    code_vm *vm;
    code_frame *f;
    const code_expr *e;
    cv acc;                      /* list, set or dict; CV_NULL for a generator */
    code_gen *gen;
} comp_run;

static int gen_yield(code_vm *vm, code_gen *g, cv v);
static int comp_level(comp_run *c, uint32_t lvl, cv x, bool is_iter);

static int emit(comp_run *c)
{
    code_vm *vm = c->vm;
    const code_expr *e = c->e;
    cv v = code_eval_fast(vm, c->f, e->u.comp.elt);
    if (!v)
        return -1;
    int rc;
    switch (e->kind) {
    case CODE_E_LISTCOMP:
        rc = code_list_append(vm, c->acc, v);
        break;
    case CODE_E_SETCOMP:
        rc = code_set_add(vm, c->acc, v);
        break;
    case CODE_E_DICTCOMP: {
        cv w = code_eval_expr(vm, c->f, e->u.comp.value);
        rc = w ? code_dict_set(vm, c->acc, v, w) : -1;
        code_decref(vm, w);
        break;
    }
    default:
        rc = gen_yield(vm, c->gen, v);
        break;
    }
    code_decref(vm, v);
    return rc;
}

/* One item of level lvl: bind it, test the conditions, then go deeper or
 * emit. */
static int comp_item(comp_run *c, uint32_t lvl, cv v)
{
    code_vm *vm = c->vm;
    const code_comp *g = &c->e->u.comp.gens[lvl];
    const code_expr *t = g->target;
    int rc = t->kind == CODE_E_NAME ? code_store_name(vm, c->f, t->op, t->height, v)
                                    : code_assign(vm, c->f, t, v);
    if (rc)
        return -1;
    for (uint32_t i = 0; i < g->nifs; i++) {
        int k = code_eval_truth(vm, c->f, g->ifs[i]);
        if (k <= 0)
            return k;
    }
    if (++vm->ev->tick >= CODE_TICKS && code_check_time(vm))
        return -1;
    if (lvl + 1 < c->e->u.comp.n) {
        cv src = code_eval_expr(vm, c->f, c->e->u.comp.gens[lvl + 1].iter);
        if (!src)
            return -1;
        rc = comp_level(c, lvl + 1, src, false);
        code_decref(vm, src);
        return rc;
    }
    return emit(c);
}

/* Level lvl over x: an iterable (a range or a list walked directly, as the
 * for statement does), or, when is_iter, an iterator already made. */
static int comp_level(comp_run *c, uint32_t lvl, cv x, bool is_iter)
{
    code_vm *vm = c->vm;
    if (!is_iter && cv_is(x, &code_type_range) && !code_range_is_big(x)) {
        const code_range *rg = (const code_range *)cv_obj(x);
        int64_t i = rg->start;
        for (int64_t k = 0; k < rg->len; k++, i += rg->step) {
            cv v = code_int_from_i64(vm, i);
            int rc = v ? comp_item(c, lvl, v) : -1;
            code_decref(vm, v);
            if (rc)
                return -1;
        }
        return 0;
    }
    if (!is_iter && cv_is(x, &code_type_list)) {
        const code_list *l = (const code_list *)cv_obj(x);
        for (size_t k = 0; k < l->n; k++) {
            cv v = code_incref(l->v[k]);
            int rc = comp_item(c, lvl, v);
            code_decref(vm, v);
            if (rc)
                return -1;
        }
        return 0;
    }
    cv it = is_iter ? code_incref(x) : code_iter(vm, x);
    if (!it)
        return -1;
    cv v;
    int rc = 0;
    while (!rc && (v = code_next(vm, it))) {
        rc = comp_item(c, lvl, v);
        code_decref(vm, v);
    }
    code_decref(vm, it);
    return rc || vm->exc ? -1 : 0;
}

/* Sets up a comprehension's frame slots: cells, and frees from `from` (the
 * enclosing frame's slots, or a closure tuple's items). */
static int comp_slots(code_vm *vm, const code_scope *sc, cv *fast, cv *from_fast,
                      const cv *closure)
{
    memset(fast, 0, sizeof(cv) * sc->nslots);
    for (uint32_t i = 0; i < sc->ncells; i++) {
        code_cell *cell = code_obj_new(vm, &code_type_cell, sizeof(code_cell));
        if (!cell) {
            for (uint32_t j = 0; j < i; j++)
                code_decref(vm, fast[sc->nlocals + j]);
            return -1;
        }
        fast[sc->nlocals + i] = cv_of(cell);
    }
    for (uint32_t i = 0; i < sc->nfree; i++)
        fast[sc->nlocals + sc->ncells + i] =
            closure ? closure[i] : from_fast[sc->free_from[i]];
    return 0;
}

static void comp_release(code_vm *vm, const code_scope *sc, cv *fast)
{
    for (uint32_t i = 0; i < sc->nlocals + sc->ncells; i++)
        code_decref(vm, fast[i]);
}

static cv gen_new(code_vm *vm, code_frame *f, const code_scope *sc, cv it0);

cv code_eval_comp(code_vm *vm, code_frame *f, const code_expr *e)
{
    const code_scope *sc = vm->ev->prog.scopes[e->height];
    cv src = code_eval_expr(vm, f, e->u.comp.gens[0].iter);
    if (!src)
        return CV_NULL;
    if (e->kind == CODE_E_GENEXP) {
        /* CPython takes the first iterator at once, in the enclosing scope */
        cv it0 = code_iter(vm, src);
        code_decref(vm, src);
        if (!it0)
            return CV_NULL;
        cv g = gen_new(vm, f, sc, it0);
        code_decref(vm, it0);
        return g;
    }
    /* a range or a list is walked directly, anything else iterated (an
     * iterator's iter() is itself: whether one was taken is not identity) */
    bool direct = cv_is(src, &code_type_range) || cv_is(src, &code_type_list);
    cv it = direct ? src : code_iter(vm, src);
    if (!direct)
        code_decref(vm, src);
    if (!it)
        return CV_NULL;
    cv acc = e->kind == CODE_E_LISTCOMP  ? code_list_new(vm, 0)
             : e->kind == CODE_E_SETCOMP ? code_set_new(vm, false)
                                         : code_dict_new(vm);
    cv *fast = CODE_FRAME_SLOTS(vm, sc->nslots);
    if (!acc || !fast || comp_slots(vm, sc, fast, f->fast, NULL)) {
        if (fast)
            CODE_FRAME_SLOTS_FREE(vm, fast, sc->nslots);
        code_decref(vm, acc);
        code_decref(vm, it);
        return fast ? CV_NULL : code_raise_nomem(vm);
    }
    code_frame fr = {.fast = fast, .sc = sc};
    comp_run c = {.vm = vm, .f = &fr, .e = e, .acc = acc};
    int rc = comp_level(&c, 0, it, !direct);
    comp_release(vm, sc, fast);
    CODE_FRAME_SLOTS_FREE(vm, fast, sc->nslots);
    code_decref(vm, it);
    if (rc) {
        code_decref(vm, acc);
        return CV_NULL;
    }
    return acc;
}

/* ---- generator expressions -------------------------------------------------- */

static void gen_unlink(code_gen *g)
{
    struct code_eval *ev = g->vm->ev;
    if (g->prev)
        g->prev->next = g->next;
    else if (ev->gens == g)
        ev->gens = g->next;
    if (g->next)
        g->next->prev = g->prev;
    g->next = g->prev = NULL;
}

static void gen_entry(void *arg)
{
    code_gen *g = arg;
    code_vm *vm = g->vm;
    const code_scope *sc = g->sc;
    cv *fast = CODE_FRAME_SLOTS(vm, sc->nslots);
    const cv *clo = g->closure ? ((code_tuple *)cv_obj(g->closure))->v : NULL;
    if (!fast)
        code_raise_nomem(vm);
    else if (!comp_slots(vm, sc, fast, NULL, clo)) {
        code_frame fr = {.fast = fast, .sc = sc};
        comp_run c = {.vm = vm, .f = &fr, .e = sc->node, .gen = g};
        comp_level(&c, 0, g->iter0, true);
        comp_release(vm, sc, fast);
    }
    if (fast)
        CODE_FRAME_SLOTS_FREE(vm, fast, sc->nslots);
    g->state = CODE_GEN_DONE;
    if (g->closing && vm->exc)
        code_exc_clear(vm);
    code_ctx_switch(&g->ctx, g->caller, true);
}

/* Switches into g and back; the caller restores the bookkeeping. */
static void gen_switch_in(code_vm *vm, code_gen *g)
{
    struct code_eval *ev = vm->ev;
    code_ctx *caller = ev->cur;
    char *lo = vm->stack_lo;
    cv handled = ev->handled;   /* a generator has its own, as in CPython */
    g->caller = caller;
    ev->cur = &g->ctx;
    ev->handled = g->handled;
    g->handled = CV_NULL;
    vm->stack_lo = code_ctx_lo(&g->ctx);
    g->state = CODE_GEN_RUNNING;
    code_ctx_switch(caller, &g->ctx, false);
    g->handled = ev->handled;
    ev->handled = handled;
    ev->cur = caller;
    vm->stack_lo = lo;
    if (g->state == CODE_GEN_DONE) {
        gen_unlink(g);
        code_ctx_release(&g->ctx);
        code_stack_uncharge(vm);
    }
}

static int gen_yield(code_vm *vm, code_gen *g, cv v)
{
    (void)vm;
    g->yielded = code_incref(v);
    g->state = CODE_GEN_SUSPENDED;
    code_ctx_switch(&g->ctx, g->caller, false);
    return g->closing ? -1 : 0;
}

static cv gen_next(code_vm *vm, cv self)
{
    code_gen *g = (code_gen *)cv_obj(self);
    if (g->state == CODE_GEN_DONE)
        return CV_NULL;
    if (g->state == CODE_GEN_RUNNING)
        return code_raise(vm, &code_exc_ValueError, "generator already executing");
    if (g->state == CODE_GEN_NEW) {
        if (code_stack_charge(vm))
            return CV_NULL;
        if (code_ctx_make(&g->ctx, CODE_STACK_SMALL, gen_entry, g)) {
            code_stack_uncharge(vm);
            return code_raise_nomem(vm);
        }
        struct code_eval *ev = vm->ev;
        g->next = ev->gens;
        if (ev->gens)
            ev->gens->prev = g;
        ev->gens = g;
    }
    g->ob.rc++;   /* alive while it runs */
    gen_switch_in(vm, g);
    cv v = g->yielded;
    g->yielded = CV_NULL;
    if (--g->ob.rc == 0)
        code_obj_free(vm, &g->ob);
    return v;   /* CV_NULL at the end, with the exception set if it failed */
}

static void gen_dealloc(code_vm *vm, code_obj *o)
{
    code_gen *g = (code_gen *)o;
    if (g->state == CODE_GEN_SUSPENDED) {
        /* unwind its frames so what they hold is released */
        cv exc = vm->exc;
        vm->exc = CV_NULL;
        g->closing = true;
        gen_switch_in(vm, g);
        vm->exc = exc;
    }
    code_decref(vm, g->closure);
    code_decref(vm, g->iter0);
    code_decref(vm, g->handled);
}

/* What its frames hold on its stack is not visited, so it counts as
 * reachable from outside; yielded is the consumer's once handed over. No
 * clear: the containers, cells and functions of a cycle break it, and a
 * suspended generator freed then unwinds as any freed one does. */
static void gen_traverse(code_vm *vm, cv self, code_visit_fn visit, void *arg)
{
    const code_gen *g = (const code_gen *)cv_obj(self);
    visit(vm, g->closure, arg);
    visit(vm, g->iter0, arg);
    visit(vm, g->handled, arg);
}

static cv gen_repr(code_vm *vm, cv self)
{
    const code_gen *g = (const code_gen *)cv_obj(self);
    return code_str_fmt(vm, "<generator object %s at 0x7f%010llx>", g->sc->qualname,
                        (unsigned long long)(0x1000 + g->serial * 0x90));
}

const code_type code_type_gen = {
    .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},
    .name = "generator",
    .kind = CODE_K_ITER,
    .dealloc = gen_dealloc,
    .traverse = gen_traverse,
    .repr = gen_repr,
    .iter = code_iter_self,
    .next = gen_next,
};

static cv gen_new(code_vm *vm, code_frame *f, const code_scope *sc, cv it0)
{
    cv closure = CV_NULL;
    if (sc->nfree) {
        if (!(closure = code_tuple_new(vm, sc->nfree)))
            return CV_NULL;
        for (uint32_t i = 0; i < sc->nfree; i++)
            ((code_tuple *)cv_obj(closure))->v[i] = code_incref(f->fast[sc->free_from[i]]);
    }
    code_gen *g = code_obj_new(vm, &code_type_gen, sizeof(code_gen));
    if (!g) {
        code_decref(vm, closure);
        return CV_NULL;
    }
    g->vm = vm;
    g->sc = sc;
    g->closure = closure;
    g->iter0 = code_incref(it0);
    g->serial = ++vm->ev->func_serial;
    return cv_of(g);
}

/* At the run's end: stacks of generators never finished go back. */
void code_gens_release(code_vm *vm)
{
    struct code_eval *ev = vm->ev;
    while (ev->gens) {
        code_gen *g = ev->gens;
        gen_unlink(g);
        code_ctx_abandon(&g->ctx);
        g->state = CODE_GEN_DONE;
    }
}

/* ---- f-strings --------------------------------------------------------------- */

static cv ascii_of(code_vm *vm, cv v)
{
    cv fn = code_builtin_lookup("ascii");
    if (fn)
        return code_call(vm, fn, &v, 1, CV_NULL);
    return code_repr(vm, v);
}

cv code_eval_fstring(code_vm *vm, code_frame *f, const code_expr *e)
{
    code_sb b;
    code_sb_init(&b, vm);
    for (uint32_t i = 0; i < e->u.seq.n; i++) {
        const code_expr *p = e->u.seq.v[i];
        cv piece;
        if (p->kind != CODE_E_FORMATTED) {
            piece = code_eval_expr(vm, f, p);
        } else {
            cv v = code_eval_expr(vm, f, p->u.fmt.value);
            if (!v)
                goto fail;
            if (p->u.fmt.conv) {
                cv c = p->u.fmt.conv == 'r'   ? code_repr(vm, v)
                       : p->u.fmt.conv == 's' ? code_str_of(vm, v)
                                              : ascii_of(vm, v);
                code_decref(vm, v);
                if (!(v = c))
                    goto fail;
            }
            if (p->u.fmt.spec) {
                cv spec = code_eval_fstring(vm, f, p->u.fmt.spec);
                piece = spec ? code_format(vm, v, spec) : CV_NULL;
                code_decref(vm, spec);
            } else if (cv_is(v, &code_type_str)) {
                piece = code_incref(v);
            } else {
                /* format(v, '') is str(v) for every type the runtime has */
                piece = code_str_of(vm, v);
            }
            code_decref(vm, v);
        }
        if (!piece)
            goto fail;
        int rc = cv_is(piece, &code_type_str)
                     ? code_sb_add(&b, code_str_cstr(piece), code_str_len(piece))
                     : code_sb_str(&b, piece);
        code_decref(vm, piece);
        if (rc)
            goto fail;
    }
    return code_sb_finish(&b);
fail:
    code_sb_free(&b);
    return CV_NULL;
}
