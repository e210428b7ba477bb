/* Ranges past int64, and the parts of range that must compute with any int
 * (slicing, equality, hashing): see code_range.h. Every value here is an int
 * object or a small int, combined with the int layer's own operations; this
 * is the slow path, taken only for ranges that need it. */
#include "code/code_range.h"

#include "code/code_num.h"
#include "code/code_vm.h"

/* An int or bool as a new int reference (a bool as 0 or 1). */
static cv int_of(cv v)
{
    if (v == CODE_TRUE || v == CODE_FALSE)
        return cv_from_small(v == CODE_TRUE);
    return code_incref(v);
}

/* a op b for ints, consuming neither; CV_NULL on error (MemoryError). */
static cv iop(code_vm *vm, int op, cv a, cv b)
{
    return code_int_binop(vm, op, a, b);
}

/* The length of range(start, stop, step), CPython's compute_range_length. */
static cv length_of(code_vm *vm, cv start, cv stop, cv step)
{
    cv lo = start, hi = stop, st = step, neg = CV_NULL;
    if (code_int_sign(step) < 0) {
        lo = stop;
        hi = start;
        if (!(st = neg = code_int_neg(vm, step)))
            return CV_NULL;
    }
    cv r = CV_NULL;
    if (code_int_cmp(lo, hi) >= 0) {
        r = cv_from_small(0);
    } else {
        /* (hi - lo - 1) // st + 1 */
        cv d = iop(vm, CODE_OP_SUB, hi, lo);
        cv d1 = d ? iop(vm, CODE_OP_SUB, d, cv_from_small(1)) : CV_NULL;
        cv q = d1 ? iop(vm, CODE_OP_FLOORDIV, d1, st) : CV_NULL;
        r = q ? iop(vm, CODE_OP_ADD, q, cv_from_small(1)) : CV_NULL;
        code_decref(vm, d);
        code_decref(vm, d1);
        code_decref(vm, q);
    }
    code_decref(vm, neg);
    return r;
}

cv code_range_new_big(code_vm *vm, cv start, cv stop, cv step)
{
    cv v[3] = { int_of(start), int_of(stop), int_of(step) };
    cv len = length_of(vm, v[0], v[1], v[2]);
    code_range_big *g = len ? code_obj_new(vm, &code_type_range, sizeof(code_range_big)) : NULL;
    if (!g) {
        code_decref(vm, len);
        for (int k = 0; k < 3; k++)
            code_decref(vm, v[k]);
        return CV_NULL;
    }
    g->start = v[0];
    g->stop = v[1];
    g->step = v[2];
    g->len = len;
    return cv_of(g);
}

cv code_range_from_ints(code_vm *vm, cv start, cv stop, cv step)
{
    int64_t a, b, c;
    cv v[3] = { int_of(start), int_of(stop), int_of(step) };
    bool fits = code_int_to_i64(v[0], &a) && code_int_to_i64(v[1], &b) &&
                code_int_to_i64(v[2], &c);
    /* code_range_new makes a big one itself when only the length is past int64 */
    cv r = fits ? code_range_new(vm, a, b, c) : code_range_new_big(vm, v[0], v[1], v[2]);
    for (int k = 0; k < 3; k++)
        code_decref(vm, v[k]);
    return r;
}

int code_range_fields(code_vm *vm, cv r, cv out[4])
{
    if (code_range_is_big(r)) {
        code_range_big *g = (code_range_big *)cv_obj(r);
        out[0] = code_incref(g->start);
        out[1] = code_incref(g->stop);
        out[2] = code_incref(g->step);
        out[3] = code_incref(g->len);
        return 0;
    }
    const code_range *s = (const code_range *)cv_obj(r);
    out[0] = code_int_from_i64(vm, s->start);
    out[1] = code_int_from_i64(vm, s->stop);
    out[2] = code_int_from_i64(vm, s->step);
    out[3] = code_int_from_i64(vm, s->len);
    if (out[0] && out[1] && out[2] && out[3])
        return 0;
    for (int k = 0; k < 4; k++)
        code_decref(vm, out[k]);
    return -1;
}

static void drop4(code_vm *vm, cv f[4])
{
    for (int k = 0; k < 4; k++)
        code_decref(vm, f[k]);
}

void code_range_big_dealloc(code_vm *vm, code_obj *o)
{
    code_range_big *g = (code_range_big *)o;
    if (g->r.step)
        return;                  /* a plain range: nothing owned */
    code_decref(vm, g->start);
    code_decref(vm, g->stop);
    code_decref(vm, g->step);
    code_decref(vm, g->len);
}

cv code_range_big_repr(code_vm *vm, cv self)
{
    code_range_big *g = (code_range_big *)cv_obj(self);
    code_sb b;
    code_sb_init(&b, vm);
    code_sb_addc(&b, "range(");
    code_sb_repr(&b, g->start);
    code_sb_addc(&b, ", ");
    code_sb_repr(&b, g->stop);
    if (!(cv_is_small(g->step) && cv_small(g->step) == 1)) {
        code_sb_addc(&b, ", ");
        code_sb_repr(&b, g->step);
    }
    code_sb_addc(&b, ")");
    if (b.failed || vm->exc) {
        code_sb_free(&b);
        return CV_NULL;
    }
    return code_sb_finish(&b);
}

ssize_t code_range_big_len(code_vm *vm, cv self)
{
    int64_t n;
    if (!code_int_to_i64(((code_range_big *)cv_obj(self))->len, &n))
        return code_raise_i(vm, &code_exc_OverflowError,
                            "Python int too large to convert to C ssize_t");
    return (ssize_t)n;
}

bool code_range_big_nonempty(cv self)
{
    return code_int_sign(((code_range_big *)cv_obj(self))->len) != 0;
}

/* start + i * step */
static cv item_at(code_vm *vm, cv start, cv step, cv i)
{
    cv m = iop(vm, CODE_OP_MUL, i, step);
    cv r = m ? iop(vm, CODE_OP_ADD, start, m) : CV_NULL;
    code_decref(vm, m);
    return r;
}

cv code_range_big_item(code_vm *vm, cv self, cv key)
{
    code_range_big *g = (code_range_big *)cv_obj(self);
    cv i = int_of(key), r = CV_NULL;
    if (code_int_sign(i) < 0) {
        cv j = iop(vm, CODE_OP_ADD, i, g->len);
        code_decref(vm, i);
        if (!(i = j))
            return CV_NULL;
    }
    if (code_int_sign(i) < 0 || code_int_cmp(i, g->len) >= 0)
        code_raise(vm, &code_exc_IndexError, "range object index out of range");
    else
        r = item_at(vm, g->start, g->step, i);
    code_decref(vm, i);
    return r;
}

int code_range_big_find_int(code_vm *vm, cv self, cv x, cv *pos)
{
    code_range_big *g = (code_range_big *)cv_obj(self);
    cv v = int_of(x);
    bool up = code_int_sign(g->step) > 0;
    /* start <= v < stop going up, stop < v <= start going down */
    bool in = up ? code_int_cmp(g->start, v) <= 0 && code_int_cmp(v, g->stop) < 0
                 : code_int_cmp(g->stop, v) < 0 && code_int_cmp(v, g->start) <= 0;
    int rc = 0;
    if (in) {
        cv off = iop(vm, CODE_OP_SUB, v, g->start), rem = CV_NULL;
        cv q = off ? code_int_floordiv(vm, off, g->step, &rem) : CV_NULL;
        if (!q) {
            rc = -1;
        } else if (code_int_sign(rem) == 0) {
            rc = 1;
            if (pos)
                *pos = code_incref(q);
        }
        code_decref(vm, off);
        code_decref(vm, q);
        code_decref(vm, rem);
    }
    code_decref(vm, v);
    return rc;
}

/* ---- iteration ------------------------------------------------------------------ */

static cv iter_new(code_vm *vm, cv first, cv step, cv left)   /* steals all three */
{
    code_longrange_iter *it = code_obj_new(vm, &code_type_longrange_iter, sizeof(*it));
    if (!it || !first || !step || !left) {
        code_decref(vm, first);
        code_decref(vm, step);
        code_decref(vm, left);
        if (it)
            code_decref(vm, cv_of(it));
        return CV_NULL;
    }
    it->next = first;
    it->step = step;
    it->left = left;
    return cv_of(it);
}

cv code_range_big_iter(code_vm *vm, cv self)
{
    code_range_big *g = (code_range_big *)cv_obj(self);
    return iter_new(vm, code_incref(g->start), code_incref(g->step), code_incref(g->len));
}

cv code_range_big_reversed(code_vm *vm, cv self)
{
    code_range_big *g = (code_range_big *)cv_obj(self);
    if (code_int_sign(g->len) == 0)
        return iter_new(vm, code_incref(g->start), code_incref(g->step), cv_from_small(0));
    cv n1 = iop(vm, CODE_OP_SUB, g->len, cv_from_small(1));
    cv last = n1 ? item_at(vm, g->start, g->step, n1) : CV_NULL;
    code_decref(vm, n1);
    return iter_new(vm, last, code_int_neg(vm, g->step), code_incref(g->len));
}

static cv longrange_next(code_vm *vm, cv self)
{
    code_longrange_iter *it = (code_longrange_iter *)cv_obj(self);
    if (code_int_sign(it->left) <= 0)
        return CV_NULL;
    cv nx = iop(vm, CODE_OP_ADD, it->next, it->step);
    cv left = nx ? iop(vm, CODE_OP_SUB, it->left, cv_from_small(1)) : CV_NULL;
    if (!left) {
        code_decref(vm, nx);
        return CV_NULL;
    }
    cv r = it->next;
    it->next = nx;
    code_setref(vm, &it->left, left);
    return r;
}

static void longrange_dealloc(code_vm *vm, code_obj *o)
{
    code_longrange_iter *it = (code_longrange_iter *)o;
    code_decref(vm, it->next);
    code_decref(vm, it->step);
    code_decref(vm, it->left);
}

const code_type code_type_longrange_iter = {
    .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},
    .name = "longrange_iterator",
    .kind = CODE_K_ITER,
    .dealloc = longrange_dealloc,
    .iter = code_iter_self,
    .next = longrange_next,
};

/* ---- slicing, equality, hash: any range ------------------------------------------ */

/* One of a slice's start or stop, clamped as _PySlice_GetLongIndices does;
 * dflt when None. A new reference. */
static cv slice_bound(code_vm *vm, cv v, cv len, cv lower, cv upper, cv dflt)
{
    if (v == CODE_NONE)
        return code_incref(dflt);
    if (!code_is_int(v))
        return code_raise(vm, &code_exc_TypeError,
                          "slice indices must be integers or None or have an __index__ method");
    cv x = int_of(v);
    if (code_int_sign(x) < 0) {
        cv y = iop(vm, CODE_OP_ADD, x, len);
        code_decref(vm, x);
        if (!(x = y))
            return CV_NULL;
        if (code_int_cmp(x, lower) < 0)
            code_setref(vm, &x, code_incref(lower));
    } else if (code_int_cmp(x, upper) > 0) {
        code_setref(vm, &x, code_incref(upper));
    }
    return x;
}

cv code_range_slice_any(code_vm *vm, cv self, cv slice)
{
    code_slice *s = (code_slice *)cv_obj(slice);
    cv step;
    if (s->step == CODE_NONE) {
        step = cv_from_small(1);
    } else {
        if (!code_is_int(s->step))
            return code_raise(vm, &code_exc_TypeError, "slice indices must be integers or None "
                              "or have an __index__ method");
        step = int_of(s->step);
        if (code_int_sign(step) == 0)
            return code_raise(vm, &code_exc_ValueError, "slice step cannot be zero");
    }
    cv f[4];
    if (code_range_fields(vm, self, f) < 0) {
        code_decref(vm, step);
        return CV_NULL;
    }
    bool neg = code_int_sign(step) < 0;
    cv lower = cv_from_small(neg ? -1 : 0);
    cv upper = neg ? iop(vm, CODE_OP_SUB, f[3], cv_from_small(1)) : code_incref(f[3]);
    cv start = CV_NULL, stop = CV_NULL, a = CV_NULL, b = CV_NULL, c = CV_NULL, r = CV_NULL;
    if (upper && (start = slice_bound(vm, s->start, f[3], lower, upper, neg ? upper : lower)) &&
        (stop = slice_bound(vm, s->stop, f[3], lower, upper, neg ? lower : upper)) &&
        (a = item_at(vm, f[0], f[2], start)) && (b = item_at(vm, f[0], f[2], stop)) &&
        (c = iop(vm, CODE_OP_MUL, step, f[2])))
        r = code_range_from_ints(vm, a, b, c);
    code_decref(vm, upper);
    code_decref(vm, start);
    code_decref(vm, stop);
    code_decref(vm, a);
    code_decref(vm, b);
    code_decref(vm, c);
    code_decref(vm, step);
    drop4(vm, f);
    return r;
}

cv code_range_compare_any(code_vm *vm, cv a, cv b, int op)
{
    if (!cv_is(a, &code_type_range) || !cv_is(b, &code_type_range) ||
        (op != CODE_CMP_EQ && op != CODE_CMP_NE))
        return CODE_NOTIMPL;
    cv x[4], y[4];
    if (code_range_fields(vm, a, x) < 0)
        return CV_NULL;
    if (code_range_fields(vm, b, y) < 0) {
        drop4(vm, x);
        return CV_NULL;
    }
    bool eq = code_int_cmp(x[3], y[3]) == 0;
    if (eq && code_int_sign(x[3]) != 0) {
        eq = code_int_cmp(x[0], y[0]) == 0;
        if (eq && !(cv_is_small(x[3]) && cv_small(x[3]) == 1))
            eq = code_int_cmp(x[2], y[2]) == 0;
    }
    drop4(vm, x);
    drop4(vm, y);
    return code_bool(eq == (op == CODE_CMP_EQ));
}

/* CPython's: the hash of (len, start, step), with None for what does not
 * matter (start and step of an empty range, step of a one-item range). */
int code_range_hash_any(code_vm *vm, cv self, uint64_t *h)
{
    cv f[4];
    if (code_range_fields(vm, self, f) < 0)
        return -1;
    bool empty = code_int_sign(f[3]) == 0, one = cv_is_small(f[3]) && cv_small(f[3]) == 1;
    cv t = code_tuple_pack(vm, 3, f[3], empty ? CODE_NONE : f[0],
                           empty || one ? CODE_NONE : f[2]);
    int rc = t ? code_hash(vm, t, h) : -1;
    code_decref(vm, t);
    drop4(vm, f);
    return rc;
}
