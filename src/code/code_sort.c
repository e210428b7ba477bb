/* list.sort: a stable merge sort with key and reverse, as CPython's contract
 * has it: keys are computed once, first; the list is empty while it sorts
 * (a key or comparison that touches it sees []), and a change made meanwhile
 * is thrown away with "list modified during sort"; an exception from a key or
 * a comparison leaves the list holding all its items, in some order. */
#include <string.h>

#include "code/code_cont.h"

typedef struct pair { cv k, v; } pair;

/* 1 if a < b, 0 if not, -1 on error. */
static int lt(code_vm *vm, const pair *a, const pair *b)
{
    return code_compare_bool(vm, a->k, b->k, CODE_CMP_LT);
}

/* Binary insertion: every element stays in the array when a comparison
 * fails, since it moves only once its place is known. */
static int insertion(code_vm *vm, pair *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        pair x = a[i];
        size_t lo = 0, hi = i;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            int r = lt(vm, &x, &a[mid]);
            if (r < 0)
                return -1;
            if (r)
                hi = mid;
            else
                lo = mid + 1;
        }
        memmove(a + lo + 1, a + lo, (i - lo) * sizeof(pair));
        a[lo] = x;
    }
    return 0;
}

static int merge_sort(code_vm *vm, pair *a, size_t n, pair *tmp)
{
    if (n <= 12)
        return insertion(vm, a, n);
    size_t mid = n / 2;
    if (merge_sort(vm, a, mid, tmp) || merge_sort(vm, a + mid, n - mid, tmp))
        return -1;
    int r = lt(vm, &a[mid], &a[mid - 1]);
    if (r <= 0)
        return r;   /* already in order, or an error */
    memcpy(tmp, a, mid * sizeof(pair));
    size_t i = 0, j = mid, d = 0;
    while (i < mid && j < n) {
        r = lt(vm, &a[j], &tmp[i]);
        if (r < 0) {
            /* The gap a[d..j) is exactly the left items not yet placed. */
            memcpy(a + d, tmp + i, (mid - i) * sizeof(pair));
            return -1;
        }
        a[d++] = r ? a[j++] : tmp[i++];
    }
    memcpy(a + d, tmp + i, (mid - i) * sizeof(pair));
    return 0;
}

static void reverse_pairs(pair *p, size_t n)
{
    for (size_t i = 0, j = n; i + 1 < j; i++, j--) {
        pair t = p[i];
        p[i] = p[j - 1];
        p[j - 1] = t;
    }
}

int code_list_sort(code_vm *vm, cv list, cv key, bool reverse)
{
    code_list *l = (code_list *)cv_obj(list);
    cv *v = l->v;
    size_t n = l->n, cap = l->cap;
    l->v = NULL;
    l->n = l->cap = 0;

    int rc = 0;
    size_t nkeys = 0;
    pair *p = NULL, *tmp = NULL;
    if (n > 1 || (key && n)) {
        p = code_heap_alloc(vm, n * sizeof(pair));
        tmp = p ? code_heap_alloc(vm, (n / 2 + 1) * sizeof(pair)) : NULL;
        if (!tmp) {
            rc = -1;
            goto restore;
        }
        for (size_t i = 0; i < n; i++) {
            p[i].v = v[i];
            p[i].k = v[i];
        }
        if (key) {
            for (; nkeys < n; nkeys++) {
                cv k = code_call(vm, key, &v[nkeys], 1, CV_NULL);
                if (!k) {
                    rc = -1;
                    goto restore;
                }
                p[nkeys].k = k;
            }
        }
        /* Reversing before and after keeps equal items in their order. */
        if (reverse)
            reverse_pairs(p, n);
        rc = merge_sort(vm, p, n, tmp);
        if (reverse)
            reverse_pairs(p, n);
        for (size_t i = 0; i < n; i++)
            v[i] = p[i].v;
    }

restore:
    if (p) {
        for (size_t i = 0; i < nkeys; i++)
            code_decref(vm, p[i].k);
    }
    if (tmp)
        code_heap_free(vm, tmp, (n / 2 + 1) * sizeof(pair));
    if (p)
        code_heap_free(vm, p, n * sizeof(pair));
    bool modified = l->v != NULL || l->n != 0;
    cv *mv = l->v;
    size_t mn = l->n, mcap = l->cap;
    l->v = v;
    l->n = n;
    l->cap = cap;
    for (size_t i = 0; i < mn; i++)
        code_decref(vm, mv[i]);
    if (mv)
        code_heap_free(vm, mv, mcap * sizeof(cv));
    if (modified && rc == 0)
        return code_raise_i(vm, &code_exc_ValueError, "list modified during sort");
    return rc;
}
