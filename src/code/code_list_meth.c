/* list's methods, and the index()/count() helpers tuple shares. */
#include <string.h>

#include "code/code_cont.h"

#define SELF(meth)                                                                            \
    if (code_cont_self(vm, "list", meth, args, nargs, &code_type_list, NULL))                \
        return CV_NULL;                                                                       \
    cv self = args[0];                                                                        \
    code_list *l = (code_list *)cv_obj(self);                                                 \
    args++;                                                                                   \
    nargs--;                                                                                  \
    (void)l;                                                                                  \
    (void)self

ssize_t code_seq_find(code_vm *vm, const cv *v, size_t n, cv x, ssize_t start, ssize_t stop)
{
    for (ssize_t i = start; i < stop && (size_t)i < n; i++) {
        int r = code_eq(vm, v[i], x);
        if (r < 0)
            return -2;
        if (r)
            return i;
    }
    return -1;
}

static int slice_index_not_none(code_vm *vm, cv v, ssize_t *out)
{
    if (!code_is_int(v))
        return code_raise_i(vm, &code_exc_TypeError,
                            "slice indices must be integers or have an __index__ method");
    return code_as_index(vm, v, out);
}

int code_seq_index_bounds(code_vm *vm, cv *args, size_t nargs, size_t n, ssize_t *start,
                          ssize_t *stop)
{
    *start = 0;
    *stop = SSIZE_MAX;
    if (nargs > 0 && slice_index_not_none(vm, args[0], start))
        return -1;
    if (nargs > 1 && slice_index_not_none(vm, args[1], stop))
        return -1;
    if (*start < 0) {
        *start += (ssize_t)n;
        if (*start < 0)
            *start = 0;
    }
    if (*stop < 0) {
        *stop += (ssize_t)n;
        if (*stop < 0)
            *stop = 0;
    }
    return 0;
}

ssize_t code_seq_count(code_vm *vm, const cv *v, size_t n, cv x)
{
    ssize_t c = 0;
    for (size_t i = 0; i < n; i++) {
        int r = code_eq(vm, v[i], x);
        if (r < 0)
            return -1;
        c += r;
    }
    return c;
}

static cv list_append(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF("append");
    if (code_cont_arg1(vm, "list.append", nargs, kwnames) || code_list_append(vm, self, args[0]))
        return CV_NULL;
    return CODE_NONE;
}

static cv list_extend(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF("extend");
    if (code_cont_arg1(vm, "list.extend", nargs, kwnames) || code_list_extend(vm, self, args[0]))
        return CV_NULL;
    return CODE_NONE;
}

static cv list_insert(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF("insert");
    ssize_t i;
    if (code_cont_argn(vm, "list.insert", 2, 2, nargs, kwnames) ||
        code_as_index(vm, args[0], &i))
        return CV_NULL;
    if (code_list_reserve(vm, l, 1))
        return CV_NULL;
    ssize_t n = (ssize_t)l->n;
    if (i < 0) {
        i += n;
        if (i < 0)
            i = 0;
    }
    if (i > n)
        i = n;
    memmove(l->v + i + 1, l->v + i, (size_t)(n - i) * sizeof(cv));
    l->v[i] = code_incref(args[1]);
    l->n++;
    return CODE_NONE;
}

static cv list_pop(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF("pop");
    ssize_t i = -1;
    if (code_cont_argn(vm, "list.pop", 0, 1, nargs, kwnames) ||
        (nargs && code_as_index(vm, args[0], &i)))
        return CV_NULL;
    if (l->n == 0)
        return code_raise(vm, &code_exc_IndexError, "pop from empty list");
    if (i < 0)
        i += (ssize_t)l->n;
    if (i < 0 || (size_t)i >= l->n)
        return code_raise(vm, &code_exc_IndexError, "pop index out of range");
    cv v = l->v[i];
    memmove(l->v + i, l->v + i + 1, (l->n - (size_t)i - 1) * sizeof(cv));
    l->n--;
    return v;   /* the list's reference becomes the caller's */
}

static cv list_remove(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF("remove");
    if (code_cont_arg1(vm, "list.remove", nargs, kwnames))
        return CV_NULL;
    ssize_t i = code_seq_find(vm, l->v, l->n, args[0], 0, SSIZE_MAX);
    if (i == -2)
        return CV_NULL;
    if (i < 0)
        return code_raise(vm, &code_exc_ValueError, "list.remove(x): x not in list");
    cv v = l->v[i];
    memmove(l->v + i, l->v + i + 1, (l->n - (size_t)i - 1) * sizeof(cv));
    l->n--;
    code_decref(vm, v);
    return CODE_NONE;
}

static cv list_index(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF("index");
    ssize_t start, stop;
    if (code_cont_argn(vm, "list.index", 1, 3, nargs, kwnames) ||
        code_seq_index_bounds(vm, args + 1, nargs - 1, l->n, &start, &stop))
        return CV_NULL;
    ssize_t i = code_seq_find(vm, l->v, l->n, args[0], start, stop);
    if (i == -2)
        return CV_NULL;
    if (i < 0) {
        cv r = code_repr(vm, args[0]);
        if (!r)
            return CV_NULL;
        code_raise(vm, &code_exc_ValueError, "%s is not in list", code_str_cstr(r));
        code_decref(vm, r);
        return CV_NULL;
    }
    return code_int_from_i64(vm, i);
}

static cv list_count(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF("count");
    if (code_cont_arg1(vm, "list.count", nargs, kwnames))
        return CV_NULL;
    ssize_t c = code_seq_count(vm, l->v, l->n, args[0]);
    return c < 0 ? CV_NULL : code_int_from_i64(vm, c);
}

static cv list_clear(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF("clear");
    if (code_cont_arg0(vm, "list.clear", nargs, kwnames))
        return CV_NULL;
    code_list_clear(vm, l);
    return CODE_NONE;
}

static cv list_copy(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF("copy");
    if (code_cont_arg0(vm, "list.copy", nargs, kwnames))
        return CV_NULL;
    return code_list_slice(vm, l, 0, 1, (ssize_t)l->n);
}

static cv list_reverse(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF("reverse");
    if (code_cont_arg0(vm, "list.reverse", nargs, kwnames))
        return CV_NULL;
    for (size_t i = 0, j = l->n; i + 1 < j; i++, j--) {
        cv t = l->v[i];
        l->v[i] = l->v[j - 1];
        l->v[j - 1] = t;
    }
    return CODE_NONE;
}

static cv list_sort(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    SELF("sort");
    if (nargs)
        return code_raise(vm, &code_exc_TypeError, "sort() takes no positional arguments");
    cv key = CV_NULL;
    int64_t reverse = 0;
    size_t nkw = kwnames ? ((code_tuple *)cv_obj(kwnames))->n : 0;
    for (size_t k = 0; k < nkw; k++) {
        cv name = ((code_tuple *)cv_obj(kwnames))->v[k];
        cv val = args[k];
        if (code_str_eq_cstr(name, "key"))
            key = val == CODE_NONE ? CV_NULL : val;
        else if (code_str_eq_cstr(name, "reverse")) {
            if (code_as_i64(vm, val, &reverse))
                return CV_NULL;
        } else
            return code_raise(vm, &code_exc_TypeError,
                              "'%s' is an invalid keyword argument for sort()",
                              code_str_cstr(name));
    }
    if (code_list_sort(vm, self, key, reverse != 0))
        return CV_NULL;
    return CODE_NONE;
}

const code_method code_list_methods[] = {
    {"append", list_append},
    {"extend", list_extend},
    {"insert", list_insert},
    {"pop", list_pop},
    {"remove", list_remove},
    {"index", list_index},
    {"count", list_count},
    {"clear", list_clear},
    {"copy", list_copy},
    {"reverse", list_reverse},
    {"sort", list_sort},
    CODE_CONT_DUNDERS,
    {NULL, NULL},
};
