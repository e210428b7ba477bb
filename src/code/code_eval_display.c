/* The evaluator: displays. List, tuple, set and dict displays, with
 * starred elements ([*a, *b]) and ** merges ({**m, 'k': v}). */
#include "code/code_eval.h"

#include "code/code_cont.h"

/* Appends the items of a starred element's iterable. */
static int extend_from(code_vm *vm, cv list, cv it_src)
{
    if (cv_is(it_src, &code_type_list) || cv_is(it_src, &code_type_tuple)) {
        size_t n;
        cv *v;
        if (cv_is(it_src, &code_type_list)) {
            n = ((code_list *)cv_obj(it_src))->n;
            v = ((code_list *)cv_obj(it_src))->v;
        } else {
            n = ((code_tuple *)cv_obj(it_src))->n;
            v = ((code_tuple *)cv_obj(it_src))->v;
        }
        for (size_t i = 0; i < n; i++)
            if (code_list_append(vm, list, v[i]))
                return -1;
        return 0;
    }
    if (!cv_type(it_src)->iter)
        return code_raise_i(vm, &code_exc_TypeError, "Value after * must be an iterable, not %s",
                            code_type_name(it_src));
    cv it = code_iter(vm, it_src);
    if (!it)
        return -1;
    cv x;
    while ((x = code_next(vm, it))) {
        int rc = code_list_append(vm, list, x);
        code_decref(vm, x);
        if (rc) {
            code_decref(vm, it);
            return -1;
        }
    }
    code_decref(vm, it);
    return vm->exc ? -1 : 0;
}

cv code_eval_list(code_vm *vm, code_frame *f, const code_expr *e)
{
    cv list = code_list_new(vm, e->u.seq.n);
    if (!list)
        return CV_NULL;
    for (uint32_t i = 0; i < e->u.seq.n; i++) {
        const code_expr *x = e->u.seq.v[i];
        bool star = x->kind == CODE_E_STARRED;
        cv v = code_eval_expr(vm, f, star ? x->u.unary.x : x);
        if (!v)
            goto fail;
        int rc = star ? extend_from(vm, list, v) : code_list_append(vm, list, v);
        code_decref(vm, v);
        if (rc)
            goto fail;
    }
    return list;
fail:
    code_decref(vm, list);
    return CV_NULL;
}

static bool has_starred(const code_expr *e)
{
    for (uint32_t i = 0; i < e->u.seq.n; i++)
        if (e->u.seq.v[i]->kind == CODE_E_STARRED)
            return true;
    return false;
}

cv code_eval_tuple(code_vm *vm, code_frame *f, const code_expr *e)
{
    if (e->u.seq.n == 0)
        return CODE_EMPTY_TUPLE;
    if (has_starred(e)) {
        cv l = code_eval_list(vm, f, e);
        if (!l)
            return CV_NULL;
        cv t = code_tuple_from(vm, l);
        code_decref(vm, l);
        return t;
    }
    cv t = code_tuple_new(vm, e->u.seq.n);
    if (!t)
        return CV_NULL;
    code_tuple *tp = (code_tuple *)cv_obj(t);
    for (uint32_t i = 0; i < e->u.seq.n; i++) {
        cv v = code_eval_expr(vm, f, e->u.seq.v[i]);
        if (!v) {
            code_decref(vm, t);
            return CV_NULL;
        }
        tp->v[i] = v;
    }
    return t;
}

/* What CPython's compiler folds to a constant: literals, and a sign on a
 * number literal. */
static bool is_const(const code_expr *x)
{
    switch (x->kind) {
    case CODE_E_INT: case CODE_E_FLOAT: case CODE_E_STR: case CODE_E_BYTES: case CODE_E_NONE:
    case CODE_E_TRUE: case CODE_E_FALSE: case CODE_E_ELLIPSIS:
        return true;
    case CODE_E_UNARY:
        return x->u.unary.x->kind == CODE_E_INT || x->u.unary.x->kind == CODE_E_FLOAT;
    default:
        return false;
    }
}

cv code_eval_set(code_vm *vm, code_frame *f, const code_expr *e)
{
    cv l = code_eval_list(vm, f, e);
    if (!l)
        return CV_NULL;
    bool consts = e->u.seq.n > 2;
    for (uint32_t i = 0; i < e->u.seq.n && consts; i++)
        consts = is_const(e->u.seq.v[i]);
    if (consts) {
        /* built as CPython's compiler does, so colliding keys print in its
         * order */
        code_list *lp = (code_list *)cv_obj(l);
        cv s = code_set_from_consts(vm, lp->v, lp->n);
        code_decref(vm, l);
        return s;
    }
    cv s = code_set_new(vm, false);
    if (s) {
        code_list *lp = (code_list *)cv_obj(l);
        for (size_t i = 0; i < lp->n; i++)
            if (code_set_add(vm, s, lp->v[i])) {
                code_decref(vm, s);
                s = CV_NULL;
                break;
            }
    }
    code_decref(vm, l);
    return s;
}

/* {**m}: m must be a mapping (a dict here). */
int code_dict_merge(code_vm *vm, cv d, cv m)
{
    if (!cv_is(m, &code_type_dict))
        return code_raise_i(vm, &code_exc_TypeError, "'%s' object is not a mapping",
                            code_type_name(m));
    size_t pos = 0;
    cv k, v;
    while (code_dict_next(m, &pos, &k, &v))
        if (code_dict_set(vm, d, k, v))
            return -1;
    return 0;
}

cv code_eval_dict(code_vm *vm, code_frame *f, const code_expr *e)
{
    cv d = code_dict_new(vm);
    if (!d)
        return CV_NULL;
    for (uint32_t i = 0; i < e->u.dict.n; i++) {
        if (!e->u.dict.keys[i]) {
            cv m = code_eval_expr(vm, f, e->u.dict.values[i]);
            int rc = m ? code_dict_merge(vm, d, m) : -1;
            code_decref(vm, m);
            if (rc)
                goto fail;
            continue;
        }
        cv k = code_eval_expr(vm, f, e->u.dict.keys[i]);
        if (!k)
            goto fail;
        cv v = code_eval_expr(vm, f, e->u.dict.values[i]);
        int rc = v ? code_dict_set(vm, d, k, v) : -1;
        code_decref(vm, k);
        code_decref(vm, v);
        if (rc)
            goto fail;
    }
    return d;
fail:
    code_decref(vm, d);
    return CV_NULL;
}

