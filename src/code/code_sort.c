/* list.sort: CPython 3.11's timsort (runs, binary insertion, galloping
 * merges, the powersort merge policy), so that even comparisons that are not
 * a total order (nan, sets) give CPython's order, with CPython's contract:
 * keys are computed once, first; the list is empty while it sorts (a key or
 * comparison that touches it sees []), and a change made meanwhile is thrown
 * away with "list modified during sort"; an exception from a key or a
 * comparison leaves the list holding all its items, in some order. */
#include <string.h>

#include "code/code_cont.h"

typedef struct pair { cv k, v; } pair;

#define MIN_GALLOP 7
#define MAX_MERGE_PENDING 85

typedef struct run {
    pair *base;
    ssize_t len;
    int power;
} run;

typedef struct merge_state {
    code_vm *vm;
    ssize_t min_gallop;
    pair *tmp;                   /* n/2 + 1 entries: enough for any merge */
    pair *basekeys;
    ssize_t listlen;
    int n;
    run pending[MAX_MERGE_PENDING];
} merge_state;

/* 1 if a < b, 0 if not, -1 on error. */
static int lt(code_vm *vm, const pair *a, const pair *b)
{
    return code_compare_bool(vm, a->k, b->k, CODE_CMP_LT);
}

#define ISLT(ms, x, y) lt((ms)->vm, (x), (y))

/* Binary insertion of a[start..n) into the sorted a[0..start): every
 * element stays in the array when a comparison fails, since it moves only
 * once its place is known. */
static int binarysort(code_vm *vm, pair *a, ssize_t n, ssize_t start)
{
    for (ssize_t i = start ? start : 1; i < n; i++) {
        pair x = a[i];
        ssize_t lo = 0, hi = i;
        while (lo < hi) {
            ssize_t mid = lo + ((hi - lo) >> 1);
            int r = lt(vm, &x, &a[mid]);
            if (r < 0)
                return -1;
            if (r)
                hi = mid;
            else
                lo = mid + 1;
        }
        memmove(a + lo + 1, a + lo, (size_t)(i - lo) * sizeof(pair));
        a[lo] = x;
    }
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

/* The leading run: ascending, or strictly descending (*desc). */
static ssize_t count_run(merge_state *ms, pair *lo, pair *hi, bool *desc)
{
    *desc = false;
    if (lo + 1 == hi)
        return 1;
    int r = ISLT(ms, lo + 1, lo);
    if (r < 0)
        return -1;
    *desc = r;
    ssize_t n = 2;
    for (pair *p = lo + 2; p < hi; p++, n++) {
        r = ISLT(ms, p, p - 1);
        if (r < 0)
            return -1;
        if (r != *desc)
            break;
    }
    return n;
}

/* k with a[k-1] < key <= a[k], searched from hint. */
static ssize_t gallop_left(merge_state *ms, const pair *key, pair *a, ssize_t n, ssize_t hint)
{
    ssize_t ofs = 1, lastofs = 0, k;
    int r;
    a += hint;
    if ((r = ISLT(ms, a, key)) < 0)
        return -1;
    if (r) {
        const ssize_t maxofs = n - hint;
        while (ofs < maxofs) {
            if ((r = ISLT(ms, a + ofs, key)) < 0)
                return -1;
            if (!r)
                break;
            lastofs = ofs;
            ofs = (ofs << 1) + 1;
        }
        if (ofs > maxofs)
            ofs = maxofs;
        lastofs += hint;
        ofs += hint;
    } else {
        const ssize_t maxofs = hint + 1;
        while (ofs < maxofs) {
            if ((r = ISLT(ms, a - ofs, key)) < 0)
                return -1;
            if (r)
                break;
            lastofs = ofs;
            ofs = (ofs << 1) + 1;
        }
        if (ofs > maxofs)
            ofs = maxofs;
        k = lastofs;
        lastofs = hint - ofs;
        ofs = hint - k;
    }
    a -= hint;
    ++lastofs;
    while (lastofs < ofs) {
        ssize_t m = lastofs + ((ofs - lastofs) >> 1);
        if ((r = ISLT(ms, a + m, key)) < 0)
            return -1;
        if (r)
            lastofs = m + 1;
        else
            ofs = m;
    }
    return ofs;
}

/* k with a[k-1] <= key < a[k], searched from hint. */
static ssize_t gallop_right(merge_state *ms, const pair *key, pair *a, ssize_t n,
                            ssize_t hint)
{
    ssize_t ofs = 1, lastofs = 0, k;
    int r;
    a += hint;
    if ((r = ISLT(ms, key, a)) < 0)
        return -1;
    if (r) {
        const ssize_t maxofs = hint + 1;
        while (ofs < maxofs) {
            if ((r = ISLT(ms, key, a - ofs)) < 0)
                return -1;
            if (!r)
                break;
            lastofs = ofs;
            ofs = (ofs << 1) + 1;
        }
        if (ofs > maxofs)
            ofs = maxofs;
        k = lastofs;
        lastofs = hint - ofs;
        ofs = hint - k;
    } else {
        const ssize_t maxofs = n - hint;
        while (ofs < maxofs) {
            if ((r = ISLT(ms, key, a + ofs)) < 0)
                return -1;
            if (r)
                break;
            lastofs = ofs;
            ofs = (ofs << 1) + 1;
        }
        if (ofs > maxofs)
            ofs = maxofs;
        lastofs += hint;
        ofs += hint;
    }
    a -= hint;
    ++lastofs;
    while (lastofs < ofs) {
        ssize_t m = lastofs + ((ofs - lastofs) >> 1);
        if ((r = ISLT(ms, key, a + m)) < 0)
            return -1;
        if (r)
            ofs = m;
        else
            lastofs = m + 1;
    }
    return ofs;
}

/* Merges the adjacent runs a (na) and b (nb), na <= nb, through tmp. On
 * error what is left of a is copied into the gap, so nothing is lost. */
static int merge_lo(merge_state *ms, pair *ssa, ssize_t na, pair *ssb, ssize_t nb)
{
    int result = -1;
    ssize_t k, min_gallop;
    memcpy(ms->tmp, ssa, (size_t)na * sizeof(pair));
    pair *dest = ssa;
    ssa = ms->tmp;

    *dest++ = *ssb++;
    --nb;
    if (nb == 0)
        goto succeed;
    if (na == 1)
        goto copy_b;

    min_gallop = ms->min_gallop;
    for (;;) {
        ssize_t acount = 0, bcount = 0;
        for (;;) {
            k = ISLT(ms, ssb, ssa);
            if (k) {
                if (k < 0)
                    goto fail;
                *dest++ = *ssb++;
                ++bcount;
                acount = 0;
                --nb;
                if (nb == 0)
                    goto succeed;
                if (bcount >= min_gallop)
                    break;
            } else {
                *dest++ = *ssa++;
                ++acount;
                bcount = 0;
                --na;
                if (na == 1)
                    goto copy_b;
                if (acount >= min_gallop)
                    break;
            }
        }
        ++min_gallop;
        do {
            min_gallop -= min_gallop > 1;
            ms->min_gallop = min_gallop;
            k = gallop_right(ms, ssb, ssa, na, 0);
            acount = k;
            if (k) {
                if (k < 0)
                    goto fail;
                memcpy(dest, ssa, (size_t)k * sizeof(pair));
                dest += k;
                ssa += k;
                na -= k;
                if (na == 1)
                    goto copy_b;
                if (na == 0)
                    goto succeed;
            }
            *dest++ = *ssb++;
            --nb;
            if (nb == 0)
                goto succeed;

            k = gallop_left(ms, ssa, ssb, nb, 0);
            bcount = k;
            if (k) {
                if (k < 0)
                    goto fail;
                memmove(dest, ssb, (size_t)k * sizeof(pair));
                dest += k;
                ssb += k;
                nb -= k;
                if (nb == 0)
                    goto succeed;
            }
            *dest++ = *ssa++;
            --na;
            if (na == 1)
                goto copy_b;
        } while (acount >= MIN_GALLOP || bcount >= MIN_GALLOP);
        ++min_gallop;
        ms->min_gallop = min_gallop;
    }
succeed:
    result = 0;
fail:
    if (na)
        memcpy(dest, ssa, (size_t)na * sizeof(pair));
    return result;
copy_b:
    /* The last of a belongs after everything left of b. */
    memmove(dest, ssb, (size_t)nb * sizeof(pair));
    dest[nb] = *ssa;
    return 0;
}

/* The same with na > nb, from the right ends, b copied to tmp. */
static int merge_hi(merge_state *ms, pair *ssa, ssize_t na, pair *ssb, ssize_t nb)
{
    int result = -1;
    ssize_t k, min_gallop;
    pair *dest = ssb + nb - 1;
    memcpy(ms->tmp, ssb, (size_t)nb * sizeof(pair));
    pair *basea = ssa, *baseb = ms->tmp;
    ssb = ms->tmp + nb - 1;
    ssa += na - 1;

    *dest-- = *ssa--;
    --na;
    if (na == 0)
        goto succeed;
    if (nb == 1)
        goto copy_a;

    min_gallop = ms->min_gallop;
    for (;;) {
        ssize_t acount = 0, bcount = 0;
        for (;;) {
            k = ISLT(ms, ssb, ssa);
            if (k) {
                if (k < 0)
                    goto fail;
                *dest-- = *ssa--;
                ++acount;
                bcount = 0;
                --na;
                if (na == 0)
                    goto succeed;
                if (acount >= min_gallop)
                    break;
            } else {
                *dest-- = *ssb--;
                ++bcount;
                acount = 0;
                --nb;
                if (nb == 1)
                    goto copy_a;
                if (bcount >= min_gallop)
                    break;
            }
        }
        ++min_gallop;
        do {
            min_gallop -= min_gallop > 1;
            ms->min_gallop = min_gallop;
            k = gallop_right(ms, ssb, basea, na, na - 1);
            if (k < 0)
                goto fail;
            k = na - k;
            acount = k;
            if (k) {
                dest -= k;
                ssa -= k;
                memmove(dest + 1, ssa + 1, (size_t)k * sizeof(pair));
                na -= k;
                if (na == 0)
                    goto succeed;
            }
            *dest-- = *ssb--;
            --nb;
            if (nb == 1)
                goto copy_a;

            k = gallop_left(ms, ssa, baseb, nb, nb - 1);
            if (k < 0)
                goto fail;
            k = nb - k;
            bcount = k;
            if (k) {
                dest -= k;
                ssb -= k;
                memcpy(dest + 1, ssb + 1, (size_t)k * sizeof(pair));
                nb -= k;
                if (nb == 1)
                    goto copy_a;
                if (nb == 0)
                    goto succeed;
            }
            *dest-- = *ssa--;
            --na;
            if (na == 0)
                goto succeed;
        } while (acount >= MIN_GALLOP || bcount >= MIN_GALLOP);
        ++min_gallop;
        ms->min_gallop = min_gallop;
    }
succeed:
    result = 0;
fail:
    if (nb)
        memcpy(dest - (nb - 1), baseb, (size_t)nb * sizeof(pair));
    return result;
copy_a:
    /* The first of b belongs before everything left of a. */
    memmove(dest + 1 - na, ssa + 1 - na, (size_t)na * sizeof(pair));
    dest -= na;
    ssa -= na;
    *dest = *ssb;
    return 0;
}

/* Merges pending runs i and i + 1. */
static int merge_at(merge_state *ms, int i)
{
    pair *ssa = ms->pending[i].base, *ssb = ms->pending[i + 1].base;
    ssize_t na = ms->pending[i].len, nb = ms->pending[i + 1].len;
    ms->pending[i].len = na + nb;
    if (i == ms->n - 3)
        ms->pending[i + 1] = ms->pending[i + 2];
    --ms->n;

    /* Where b starts in a: what is before is in place already. */
    ssize_t k = gallop_right(ms, ssb, ssa, na, 0);
    if (k < 0)
        return -1;
    ssa += k;
    na -= k;
    if (na == 0)
        return 0;
    /* Where a ends in b: what is after is in place already. */
    nb = gallop_left(ms, ssa + na - 1, ssb, nb, nb - 1);
    if (nb <= 0)
        return (int)nb;
    return na <= nb ? merge_lo(ms, ssa, na, ssb, nb) : merge_hi(ms, ssa, na, ssb, nb);
}

/* Powersort's node power of the boundary between two adjacent runs. */
static int powerloop(ssize_t s1, ssize_t n1, ssize_t n2, ssize_t n)
{
    int result = 0;
    ssize_t a = 2 * s1 + n1, b = a + n1 + n2;
    for (;;) {
        ++result;
        if (a >= n) {
            a -= n;
            b -= n;
        } else if (b >= n) {
            break;
        }
        a <<= 1;
        b <<= 1;
    }
    return result;
}

static int found_new_run(merge_state *ms, ssize_t n2)
{
    if (ms->n) {
        run *p = ms->pending;
        ssize_t s1 = p[ms->n - 1].base - ms->basekeys, n1 = p[ms->n - 1].len;
        int power = powerloop(s1, n1, n2, ms->listlen);
        while (ms->n > 1 && p[ms->n - 2].power > power)
            if (merge_at(ms, ms->n - 2) < 0)
                return -1;
        p[ms->n - 1].power = power;
    }
    return 0;
}

static int merge_force_collapse(merge_state *ms)
{
    run *p = ms->pending;
    while (ms->n > 1) {
        int n = ms->n - 2;
        if (n > 0 && p[n - 1].len < p[n + 1].len)
            --n;
        if (merge_at(ms, n) < 0)
            return -1;
    }
    return 0;
}

static ssize_t compute_minrun(ssize_t n)
{
    ssize_t r = 0;
    while (n >= 64) {
        r |= n & 1;
        n >>= 1;
    }
    return n + r;
}

static int timsort(code_vm *vm, pair *a, ssize_t n, pair *tmp)
{
    merge_state ms = {.vm = vm, .min_gallop = MIN_GALLOP, .tmp = tmp, .basekeys = a,
                      .listlen = n};
    ssize_t minrun = compute_minrun(n), left = n;
    pair *lo = a;
    do {
        bool desc;
        ssize_t k = count_run(&ms, lo, lo + left, &desc);
        if (k < 0)
            return -1;
        if (desc)
            reverse_pairs(lo, (size_t)k);
        if (k < minrun) {
            ssize_t force = left <= minrun ? left : minrun;
            if (binarysort(vm, lo, force, k))
                return -1;
            k = force;
        }
        if (found_new_run(&ms, k) < 0)
            return -1;
        ms.pending[ms.n].base = lo;
        ms.pending[ms.n].len = k;
        ++ms.n;
        lo += k;
        left -= k;
    } while (left);
    return merge_force_collapse(&ms);
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
        if (n > 1)
            rc = timsort(vm, p, (ssize_t)n, tmp);
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
