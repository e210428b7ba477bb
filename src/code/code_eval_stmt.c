/* The evaluator: statements and assignment targets. A statement returns
 * CODE_X_OK, or how control leaves it (return, break, continue), or
 * CODE_X_ERR with vm->exc set. try/except/finally, raise and the exception
 * being handled (for bare raise and the implicit __context__) live in
 * code_eval_try.c. */
#include "code/code_eval.h"

#include <string.h>

#include "code/code_dunder.h"
#include "code/code_lex.h"
#include "code/code_range.h"

/* ---- assignment targets ------------------------------------------------- */

static int setattr_value(code_vm *vm, cv o, const char *name, cv v)
{
    if (cv_is(o, &code_type_module)) {
        cv d = ((code_module_obj *)cv_obj(o))->dict;
        cv k = code_str_from_cstr(vm, name);
        int rc = k ? code_dict_set(vm, d, k, v) : -1;
        code_decref(vm, k);
        return rc;
    }
    /* CPython: a method is read-only, a data attribute (int.real, exc.args)
     * not writable */
    if (code_type_method(cv_type(o), name) || code_dunder_method(cv_type(o), name))
        return code_raise_i(vm, &code_exc_AttributeError, "'%s' object attribute '%s' is read-only",
                            code_type_name(o), name);
    cv cur = code_getattr(vm, o, name);
    if (cur) {
        code_decref(vm, cur);
        return code_raise_i(vm, &code_exc_AttributeError,
                            "attribute '%s' of '%s' objects is not writable", name,
                            code_type_name(o));
    }
    code_exc_clear(vm);
    return code_raise_i(vm, &code_exc_AttributeError, "'%s' object has no attribute '%s'",
                        code_type_name(o), name);
}

/* The items of v for a target list of n names (one starred at star, or -1). */
static int unpack(code_vm *vm, code_frame *f, const code_expr *t, cv v)
{
    uint32_t n = t->u.seq.n;
    int star = -1;
    for (uint32_t i = 0; i < n; i++)
        if (t->u.seq.v[i]->kind == CODE_E_STARRED)
            star = (int)i;
    cv *items;
    size_t count;
    cv list = CV_NULL;
    if (cv_is(v, &code_type_tuple)) {
        items = ((code_tuple *)cv_obj(v))->v;
        count = ((code_tuple *)cv_obj(v))->n;
    } else if (cv_is(v, &code_type_list) && star < 0) {
        items = ((code_list *)cv_obj(v))->v;
        count = ((code_list *)cv_obj(v))->n;
    } else {
        if (!cv_type(v)->iter)
            return code_raise_i(vm, &code_exc_TypeError, "cannot unpack non-iterable %s object",
                                code_type_name(v));
        if (star < 0) {
            /* stop one past n, as CPython, so a long iterator is not drained */
            cv it = code_iter(vm, v);
            if (!it)
                return -1;
            if (!(list = code_list_new(vm, n)))
                goto iter_fail;
            cv x;
            while ((x = code_next(vm, it))) {
                int rc = code_list_append(vm, list, x);
                code_decref(vm, x);
                if (rc)
                    goto iter_fail;
                if (((code_list *)cv_obj(list))->n > n) {
                    code_decref(vm, it);
                    code_decref(vm, list);
                    return code_raise_i(vm, &code_exc_ValueError,
                                        "too many values to unpack (expected %u)", n);
                }
            }
            code_decref(vm, it);
            if (vm->exc) {
                code_decref(vm, list);
                return -1;
            }
            goto have_list;
        iter_fail:
            code_decref(vm, it);
            code_decref(vm, list);
            return -1;
        }
        if (!(list = code_list_from(vm, v)))
            return -1;
    have_list:
        items = ((code_list *)cv_obj(list))->v;
        count = ((code_list *)cv_obj(list))->n;
    }
    int rc = -1;
    if (star < 0 && count != n) {
        if (count > n)
            code_raise(vm, &code_exc_ValueError, "too many values to unpack (expected %u)", n);
        else
            code_raise(vm, &code_exc_ValueError, "not enough values to unpack (expected %u, got %zu)",
                       n, count);
        goto out;
    }
    if (star >= 0 && count < n - 1) {
        code_raise(vm, &code_exc_ValueError,
                   "not enough values to unpack (expected at least %u, got %zu)", n - 1, count);
        goto out;
    }
    /* hold the items while assigning: a target may drop the container */
    code_incref(v);
    size_t after = star < 0 ? 0 : n - 1 - (size_t)star;
    for (uint32_t i = 0; i < n; i++) {
        const code_expr *ti = t->u.seq.v[i];
        int r;
        if ((int)i == star) {
            size_t k = count - after - (size_t)star;
            cv l = code_list_new(vm, k);
            r = l ? 0 : -1;
            for (size_t j = 0; j < k && !r; j++)
                r = code_list_append(vm, l, items[(size_t)star + j]);
            if (!r)
                r = code_assign(vm, f, ti->u.unary.x, l);
            code_decref(vm, l);
        } else {
            size_t idx = star >= 0 && (int)i > star ? count - (n - i) : i;
            r = code_assign(vm, f, ti, items[idx]);
        }
        if (r) {
            code_decref(vm, v);
            goto out;
        }
    }
    code_decref(vm, v);
    rc = 0;
out:
    code_decref(vm, list);
    return rc;
}

int code_assign(code_vm *vm, code_frame *f, const code_expr *t, cv v)
{
    switch (t->kind) {
    case CODE_E_NAME:
        return code_store_name(vm, f, t->op, t->height, v);
    case CODE_E_ATTR: {
        cv o = code_eval_expr(vm, f, t->u.attr.obj);
        if (!o)
            return -1;
        int rc = setattr_value(vm, o, t->u.attr.name, v);
        code_decref(vm, o);
        return rc;
    }
    case CODE_E_SUBSCRIPT: {
        cv o = code_eval_expr(vm, f, t->u.bin.l);
        if (!o)
            return -1;
        cv k = code_eval_expr(vm, f, t->u.bin.r);
        int rc = -1;
        if (k) {
            if (cv_is_small(k) && cv_is(o, &code_type_list)) {
                code_list *l = (code_list *)cv_obj(o);
                int64_t i = cv_small(k);
                if (i < 0)
                    i += (int64_t)l->n;
                if (i >= 0 && (size_t)i < l->n) {
                    code_setref(vm, &l->v[i], code_incref(v));
                    code_decref(vm, o);
                    return 0;
                }
            }
            rc = code_setitem(vm, o, k, v);
        }
        code_decref(vm, k);
        code_decref(vm, o);
        return rc;
    }
    case CODE_E_TUPLE: case CODE_E_LIST:
        return unpack(vm, f, t, v);
    default:
        return code_raise_i(vm, &code_exc_SyntaxError, "cannot assign to expression");
    }
}

static int exec_augassign(code_vm *vm, code_frame *f, const code_stmt *s)
{
    const code_expr *t = s->u.aug.target;
    int op = code_tok_to_binop(s->op);
    cv obj = CV_NULL, key = CV_NULL, cur = CV_NULL, r = CV_NULL;
    int rc = -1;
    if (t->kind == CODE_E_NAME) {
        if (!(cur = code_eval_expr(vm, f, t)))
            return -1;
    } else if (t->kind == CODE_E_ATTR) {
        if (!(obj = code_eval_expr(vm, f, t->u.attr.obj)) ||
            !(cur = code_getattr(vm, obj, t->u.attr.name)))
            goto out;
    } else {
        if (!(obj = code_eval_expr(vm, f, t->u.bin.l)) ||
            !(key = code_eval_expr(vm, f, t->u.bin.r)) || !(cur = code_getitem(vm, obj, key)))
            goto out;
    }
    cv v = code_eval_fast(vm, f, s->u.aug.value);
    if (!v)
        goto out;
    if (cv_is_small(cur) && cv_is_small(v))
        r = code_binop_fast(vm, op, cur, v);
    else
        r = code_binop_inplace(vm, op, cur, v);
    code_decref(vm, v);
    if (!r)
        goto out;
    if (t->kind == CODE_E_NAME)
        rc = code_store_name(vm, f, t->op, t->height, r);
    else if (t->kind == CODE_E_ATTR)
        rc = setattr_value(vm, obj, t->u.attr.name, r);
    else
        rc = code_setitem(vm, obj, key, r);
out:
    code_decref(vm, r);
    code_decref(vm, cur);
    code_decref(vm, key);
    code_decref(vm, obj);
    return rc;
}

/* ---- loops ---------------------------------------------------------------- */

static inline int tick(code_vm *vm)
{
    if (++vm->ev->tick >= CODE_TICKS)
        return code_check_time(vm);
    return 0;
}

/* The body's outcome inside a loop: -1 error, 0 go on, 1 leave (break), 2
 * leave with the outcome (return). */
static int loop_body(code_vm *vm, code_frame *f, const code_block *b, int *out)
{
    int st = code_exec_block(vm, f, b);
    switch (st) {
    case CODE_X_OK: case CODE_X_CONTINUE:
        return tick(vm) ? (*out = CODE_X_ERR, 2) : 0;
    case CODE_X_BREAK:
        return 1;
    default:
        *out = st;
        return 2;
    }
}

static int exec_while(code_vm *vm, code_frame *f, const code_stmt *s)
{
    int out;
    for (;;) {
        vm->line = s->line;   /* the test is the while line's, after the body */
        int t = code_eval_truth(vm, f, s->u.loop.test);
        if (t < 0)
            return CODE_X_ERR;
        if (!t)
            break;
        int r = loop_body(vm, f, &s->u.loop.body, &out);
        if (r == 1)
            return CODE_X_OK;
        if (r == 2)
            return out;
    }
    return code_exec_block(vm, f, &s->u.loop.orelse);
}

static int exec_for(code_vm *vm, code_frame *f, const code_stmt *s)
{
    cv src = code_eval_expr(vm, f, s->u.loop.test);
    if (!src)
        return CODE_X_ERR;
    const code_expr *t = s->u.loop.target;
    int out = CODE_X_OK, r = 0;
    if (cv_is(src, &code_type_range) && !code_range_is_big(src)) {
        const code_range *rg = (const code_range *)cv_obj(src);
        int64_t i = rg->start, step = rg->step;
        for (int64_t k = 0; k < rg->len; k++, i += step) {
            cv v = code_int_from_i64(vm, i);
            if (!v || code_assign(vm, f, t, v)) {
                code_decref(vm, v);
                code_decref(vm, src);
                return CODE_X_ERR;
            }
            code_decref(vm, v);
            if ((r = loop_body(vm, f, &s->u.loop.body, &out)))
                break;
        }
    } else if (cv_is(src, &code_type_list)) {
        /* as the list iterator: the length is read again at each step */
        const code_list *l = (const code_list *)cv_obj(src);
        for (size_t k = 0; k < l->n; k++) {
            cv v = code_incref(l->v[k]);
            int rc = code_assign(vm, f, t, v);
            code_decref(vm, v);
            if (rc) {
                code_decref(vm, src);
                return CODE_X_ERR;
            }
            if ((r = loop_body(vm, f, &s->u.loop.body, &out)))
                break;
        }
    } else {
        cv it = code_iter(vm, src);
        if (!it) {
            code_decref(vm, src);
            return CODE_X_ERR;
        }
        cv v;
        while ((vm->line = s->line, v = code_next(vm, it))) {
            int rc = code_assign(vm, f, t, v);
            code_decref(vm, v);
            if (rc) {
                code_decref(vm, it);
                code_decref(vm, src);
                return CODE_X_ERR;
            }
            if ((r = loop_body(vm, f, &s->u.loop.body, &out)))
                break;
        }
        code_decref(vm, it);
        if (!r && vm->exc) {
            code_decref(vm, src);
            return CODE_X_ERR;
        }
    }
    code_decref(vm, src);
    if (r == 1)
        return CODE_X_OK;
    if (r == 2)
        return out;
    return code_exec_block(vm, f, &s->u.loop.orelse);
}

/* ---- imports ---------------------------------------------------------------- */

static int store_by_name(code_vm *vm, code_frame *f, const char *name, cv v)
{
    uint8_t kind;
    uint32_t slot;
    if (code_scope_lookup(&vm->ev->prog, f->sc, name, &kind, &slot))
        return code_raise_i(vm, &code_exc_RuntimeError, "no slot for '%s'", name);
    return code_store_name(vm, f, kind, slot, v);
}

static int exec_import(code_vm *vm, code_frame *f, const code_stmt *s)
{
    for (uint32_t i = 0; i < s->u.import.n; i++) {
        const code_alias *al = &s->u.import.names[i];
        vm->line = al->line;
        if (s->kind == CODE_S_IMPORT) {
            cv m = code_import(vm, al->name);
            if (!m)
                return -1;
            const char *bind = al->asname ? al->asname : al->name;
            char top[256];
            const char *dot = strchr(al->name, '.');
            int rc;
            if (!al->asname && dot) {
                size_t k = (size_t)(dot - al->name);
                if (k >= sizeof(top))
                    k = sizeof(top) - 1;
                memcpy(top, al->name, k);
                top[k] = 0;
                cv tm = code_import(vm, top);
                rc = tm ? store_by_name(vm, f, top, tm) : -1;
                code_decref(vm, tm);
            } else {
                rc = store_by_name(vm, f, bind, m);
            }
            code_decref(vm, m);
            if (rc)
                return -1;
            continue;
        }
        cv m = code_import(vm, s->u.import.module);
        if (!m)
            return -1;
        cv v = code_getattr(vm, m, al->name);
        if (!v) {
            code_exc_clear(vm);
            code_raise(vm, &code_exc_ImportError,
                       "cannot import name '%s' from '%s' (unknown location)", al->name,
                       s->u.import.module);
            code_decref(vm, m);
            return -1;
        }
        int rc = store_by_name(vm, f, al->asname ? al->asname : al->name, v);
        code_decref(vm, v);
        code_decref(vm, m);
        if (rc)
            return -1;
    }
    return 0;
}

/* ---- statements --------------------------------------------------------------- */

static int assign_all(code_vm *vm, code_frame *f, const code_stmt *s, cv v)
{
    for (uint32_t i = 0; i < s->u.assign.n; i++)
        if (code_assign(vm, f, s->u.assign.targets[i], v))
            return -1;
    return 0;
}

/* The statements that are not hot, out of line so the hot path's frame
 * stays small. */
__attribute__((noinline)) static int exec_stmt_rest(code_vm *vm, code_frame *f,
                                                   const code_stmt *s)
{
    switch ((code_stmt_kind)s->kind) {
    case CODE_S_EXPR: case CODE_S_ASSIGN: case CODE_S_IF: case CODE_S_RETURN:
        return CODE_X_OK;   /* exec_stmt's own */
    case CODE_S_AUGASSIGN:
        return exec_augassign(vm, f, s) ? CODE_X_ERR : CODE_X_OK;
    case CODE_S_ANNASSIGN: {
        if (!s->u.aug.value)
            return CODE_X_OK;
        cv v = code_eval_expr(vm, f, s->u.aug.value);
        if (!v)
            return CODE_X_ERR;
        int rc = code_assign(vm, f, s->u.aug.target, v);
        code_decref(vm, v);
        return rc ? CODE_X_ERR : CODE_X_OK;
    }
    case CODE_S_WHILE:
        return exec_while(vm, f, s);
    case CODE_S_FOR:
        return exec_for(vm, f, s);
    case CODE_S_BREAK:
        return CODE_X_BREAK;
    case CODE_S_CONTINUE:
        return CODE_X_CONTINUE;
    case CODE_S_PASS: case CODE_S_GLOBAL: case CODE_S_NONLOCAL:
        return CODE_X_OK;
    case CODE_S_DEF: {
        const code_scope *sc = vm->ev->prog.scopes[s->col];
        cv fn = code_make_function(vm, f, sc, s->u.def.params, s->u.def.name);
        if (!fn)
            return CODE_X_ERR;
        code_store_name(vm, f, sc->bind_kind, sc->bind_slot, fn);
        code_decref(vm, fn);
        return CODE_X_OK;
    }
    case CODE_S_TRY:
        return code_exec_try(vm, f, s);
    case CODE_S_RAISE:
        return code_exec_raise(vm, f, s);
    case CODE_S_ASSERT: {
        int t = code_eval_truth(vm, f, s->u.assert_.test);
        if (t < 0)
            return CODE_X_ERR;
        if (t)
            return CODE_X_OK;
        cv args = CODE_EMPTY_TUPLE;
        if (s->u.assert_.msg) {
            cv m = code_eval_expr(vm, f, s->u.assert_.msg);
            if (!m)
                return CODE_X_ERR;
            args = code_tuple_pack(vm, 1, m);
            code_decref(vm, m);
            if (!args)
                return CODE_X_ERR;
        }
        cv e = code_exc_new(vm, &code_exc_AssertionError, args);
        if (e)
            code_raise_obj(vm, e);
        return CODE_X_ERR;
    }
    case CODE_S_IMPORT: case CODE_S_IMPORTFROM:
        return exec_import(vm, f, s) ? CODE_X_ERR : CODE_X_OK;
    }
    return CODE_X_OK;
}

static inline __attribute__((always_inline)) int exec_stmt(code_vm *vm, code_frame *f,
                                                         const code_stmt *s)
{
    vm->line = s->line;
    switch ((code_stmt_kind)s->kind) {
    case CODE_S_EXPR: {
        cv v = code_eval_expr(vm, f, s->u.expr.value);
        if (!v)
            return CODE_X_ERR;
        code_decref(vm, v);
        return CODE_X_OK;
    }
    case CODE_S_ASSIGN: {
        cv v = code_eval_fast(vm, f, s->u.assign.value);
        if (!v)
            return CODE_X_ERR;
        const code_expr *t = s->u.assign.targets[0];
        int rc = s->u.assign.n == 1 && t->kind == CODE_E_NAME
                     ? code_store_name(vm, f, t->op, t->height, v)
                     : assign_all(vm, f, s, v);
        code_decref(vm, v);
        return rc ? CODE_X_ERR : CODE_X_OK;
    }
    case CODE_S_IF:
        for (uint32_t i = 0; i < s->u.if_.n; i++) {
            if (i)
                vm->line = s->u.if_.tests[i]->line;   /* an elif's own line */
            int t = code_eval_truth(vm, f, s->u.if_.tests[i]);
            if (t < 0)
                return CODE_X_ERR;
            if (t)
                return code_exec_block(vm, f, &s->u.if_.bodies[i]);
        }
        return code_exec_block(vm, f, &s->u.if_.orelse);
    case CODE_S_RETURN: {
        cv v = s->u.expr.value ? code_eval_fast(vm, f, s->u.expr.value) : CODE_NONE;
        if (!v)
            return CODE_X_ERR;
        f->retval = v;
        return CODE_X_RETURN;
    }
    default:
        return exec_stmt_rest(vm, f, s);
    }
}

int code_exec_block(code_vm *vm, code_frame *f, const code_block *b)
{
    for (uint32_t i = 0; i < b->n; i++) {
        int st = exec_stmt(vm, f, b->v[i]);
        if (st != CODE_X_OK)
            return st;
    }
    return CODE_X_OK;
}

int code_eval_module(code_vm *vm, cv *result)
{
    struct code_eval *ev = vm->ev;
    const code_block *b = &ev->prog.mod->body;
    code_frame fr = {.fast = NULL, .sc = ev->prog.scopes[0]};
    *result = CODE_NONE;
    for (uint32_t i = 0; i < b->n; i++) {
        const code_stmt *s = b->v[i];
        if (i + 1 == b->n && s->kind == CODE_S_EXPR) {
            vm->line = s->line;
            cv v = code_eval_expr(vm, &fr, s->u.expr.value);
            if (!v)
                return -1;
            *result = v;
            return 0;
        }
        int st = exec_stmt(vm, &fr, s);
        if (st == CODE_X_ERR)
            return -1;
    }
    return 0;
}
