/* dict: CPython's compact layout. Entries are kept in insertion order; small
 * dicts (8 entries or fewer) find keys by scanning them, larger ones through
 * an open-addressing index of entry numbers probed as CPython probes. A
 * deleted entry keeps its place (key CV_NULL) until the entries are full,
 * when they are compacted into a table sized for the live ones.
 * The methods are in code_dict_meth.c, views and iterators in
 * code_dict_views.c. */
#include <string.h>

#include "code/code_cont.h"

#define DICT_MINCAP 8
#define IX_EMPTY (-1)
#define IX_DUMMY (-2)

static void free_tables(code_vm *vm, code_dict *d)
{
    if (d->e)
        code_heap_free(vm, d->e, d->cap * sizeof(code_dict_entry));
    if (d->index)
        code_heap_free(vm, d->index, d->nindex * sizeof(int64_t));
    d->e = NULL;
    d->index = NULL;
    d->cap = d->nindex = d->nentries = d->used = 0;
}

void code_dict_clear(code_vm *vm, code_dict *d)
{
    code_dict_entry *e = d->e;
    size_t n = d->nentries, cap = d->cap;
    /* Detach first: releasing a value must find the dict empty. */
    d->e = NULL;
    d->cap = 0;
    free_tables(vm, d);
    d->version++;
    code_cont_dealloc_enter(vm);
    for (size_t i = 0; i < n; i++) {
        if (e[i].key) {
            code_cont_release(vm, e[i].key);
            code_cont_release(vm, e[i].value);
        }
    }
    if (e)
        code_heap_free(vm, e, cap * sizeof(code_dict_entry));
    code_cont_dealloc_leave(vm);
}

cv code_dict_new(code_vm *vm)
{
    return cv_of(code_obj_new(vm, &code_type_dict, sizeof(code_dict)));
}

static void index_insert(code_dict *d, uint64_t hash, int64_t ix)
{
    size_t mask = d->nindex - 1, i = (size_t)hash & mask;
    uint64_t perturb = hash;
    while (d->index[i] >= 0) {
        perturb >>= 5;
        i = (i * 5 + (size_t)perturb + 1) & mask;
    }
    d->index[i] = ix;
}

/* The index slot that holds entry ix. */
static size_t index_slot(code_dict *d, uint64_t hash, int64_t ix)
{
    size_t mask = d->nindex - 1, i = (size_t)hash & mask;
    uint64_t perturb = hash;
    while (d->index[i] != ix) {
        perturb >>= 5;
        i = (i * 5 + (size_t)perturb + 1) & mask;
    }
    return i;
}

/* New tables for at least minused live entries, the live ones compacted
 * into them in order. */
static int dict_resize(code_vm *vm, code_dict *d, size_t minused)
{
    size_t cap = DICT_MINCAP;
    while (cap < minused + minused / 2 + 1) {
        if (cap > SIZE_MAX / sizeof(code_dict_entry) / 8) {
            code_raise_nomem(vm);
            return -1;
        }
        cap <<= 1;
    }
    code_dict_entry *e = code_heap_alloc(vm, cap * sizeof(code_dict_entry));
    if (!e)
        return -1;
    size_t nindex = cap > DICT_MINCAP ? cap * 2 : 0;
    int64_t *index = NULL;
    if (nindex) {
        index = code_heap_alloc(vm, nindex * sizeof(int64_t));
        if (!index) {
            code_heap_free(vm, e, cap * sizeof(code_dict_entry));
            return -1;
        }
        memset(index, 0xff, nindex * sizeof(int64_t));   /* IX_EMPTY */
    }
    size_t n = 0;
    for (size_t i = 0; i < d->nentries; i++)
        if (d->e[i].key)
            e[n++] = d->e[i];
    if (d->e)
        code_heap_free(vm, d->e, d->cap * sizeof(code_dict_entry));
    if (d->index)
        code_heap_free(vm, d->index, d->nindex * sizeof(int64_t));
    d->e = e;
    d->cap = cap;
    d->index = index;
    d->nindex = nindex;
    d->nentries = n;
    for (size_t i = 0; nindex && i < n; i++)
        index_insert(d, e[i].hash, (int64_t)i);
    return 0;
}

ssize_t code_dict_lookup(code_vm *vm, code_dict *d, cv key, uint64_t hash)
{
restart:;
    uint64_t version = d->version;
    if (!d->nindex) {
        for (size_t i = 0; i < d->nentries; i++) {
            code_dict_entry *e = &d->e[i];
            if (e->key == key)
                return (ssize_t)i;
            if (!e->key || e->hash != hash)
                continue;
            cv k = code_incref(e->key);
            int r = code_eq(vm, k, key);
            code_decref(vm, k);
            if (r < 0)
                return -2;
            if (d->version != version)
                goto restart;
            if (r)
                return (ssize_t)i;
        }
        return -1;
    }
    size_t mask = d->nindex - 1, i = (size_t)hash & mask;
    uint64_t perturb = hash;
    for (;;) {
        int64_t ix = d->index[i];
        if (ix == IX_EMPTY)
            return -1;
        if (ix >= 0) {
            code_dict_entry *e = &d->e[ix];
            if (e->key == key)
                return (ssize_t)ix;
            if (e->hash == hash) {
                cv k = code_incref(e->key);
                int r = code_eq(vm, k, key);
                code_decref(vm, k);
                if (r < 0)
                    return -2;
                if (d->version != version)
                    goto restart;
                if (r)
                    return (ssize_t)ix;
            }
        }
        perturb >>= 5;
        i = (i * 5 + (size_t)perturb + 1) & mask;
    }
}

/* Appends an entry for a key known to be absent (references taken). */
static int insert_new(code_vm *vm, code_dict *d, cv key, uint64_t hash, cv value)
{
    if (d->nentries == d->cap && dict_resize(vm, d, d->used + 1))
        return -1;
    size_t ix = d->nentries++;
    d->e[ix] = (code_dict_entry){hash, code_incref(key), code_incref(value)};
    if (d->nindex)
        index_insert(d, hash, (int64_t)ix);
    d->used++;
    d->version++;
    return 0;
}

int code_dict_set_h(code_vm *vm, cv dv, cv key, uint64_t hash, cv value)
{
    code_dict *d = (code_dict *)cv_obj(dv);
    ssize_t ix = code_dict_lookup(vm, d, key, hash);
    if (ix == -2)
        return -1;
    if (ix >= 0) {
        d->version++;
        code_setref(vm, &d->e[ix].value, code_incref(value));
        return 0;
    }
    return insert_new(vm, d, key, hash, value);
}

int code_dict_set(code_vm *vm, cv d, cv key, cv value)
{
    uint64_t h;
    if (code_hash(vm, key, &h))
        return -1;
    return code_dict_set_h(vm, d, key, h, value);
}

int code_dict_get(code_vm *vm, cv dv, cv key, cv *out)
{
    uint64_t h;
    *out = CV_NULL;
    if (code_hash(vm, key, &h))
        return -1;
    code_dict *d = (code_dict *)cv_obj(dv);
    ssize_t ix = code_dict_lookup(vm, d, key, h);
    if (ix == -2)
        return -1;
    if (ix >= 0)
        *out = d->e[ix].value;
    return 0;
}

int code_dict_get_cstr(code_vm *vm, cv dv, const char *key, cv *out)
{
    code_dict *d = (code_dict *)cv_obj(dv);
    *out = CV_NULL;
    size_t n = strlen(key);
    if (d->used > 16) {
        cv k = code_str_new(vm, key, n);
        if (!k)
            return -1;
        int r = code_dict_get(vm, dv, k, out);
        code_decref(vm, k);
        return r;
    }
    /* Small dicts: no str to make, the bytes compared in place. */
    for (size_t i = 0; i < d->nentries; i++) {
        cv k = d->e[i].key;
        if (k && cv_is(k, &code_type_str) && code_str_len(k) == n &&
            memcmp(code_str_cstr(k), key, n) == 0) {
            *out = d->e[i].value;
            return 0;
        }
    }
    return 0;
}

/* Removes entry ix, giving its key and value references to the caller. */
static void remove_entry(code_dict *d, size_t ix, cv *key, cv *value)
{
    code_dict_entry *e = &d->e[ix];
    if (d->nindex)
        d->index[index_slot(d, e->hash, (int64_t)ix)] = IX_DUMMY;
    *key = e->key;
    *value = e->value;
    e->key = e->value = CV_NULL;
    d->used--;
    d->version++;
}

int code_dict_pop_h(code_vm *vm, cv dv, cv key, uint64_t hash, cv *value)
{
    code_dict *d = (code_dict *)cv_obj(dv);
    ssize_t ix = code_dict_lookup(vm, d, key, hash);
    if (ix == -2)
        return -1;
    if (ix == -1)
        return 0;
    cv k, v;
    remove_entry(d, (size_t)ix, &k, &v);
    code_decref(vm, k);
    if (value)
        *value = v;
    else
        code_decref(vm, v);
    return 1;
}

int code_dict_raise_key(code_vm *vm, cv key)
{
    cv args = code_tuple_pack(vm, 1, key);
    if (!args)
        return -1;
    cv e = code_exc_new(vm, &code_exc_KeyError, args);
    if (!e)
        return -1;
    code_raise_obj(vm, e);
    return -1;
}

int code_dict_del(code_vm *vm, cv d, cv key)
{
    uint64_t h;
    if (code_hash(vm, key, &h))
        return -1;
    int r = code_dict_pop_h(vm, d, key, h, NULL);
    if (r < 0)
        return -1;
    if (r == 0)
        return code_dict_raise_key(vm, key);
    return 0;
}

/* The last live entry, removed (popitem). 0 when empty. */
int code_dict_pop_last(code_vm *vm, cv dv, cv *key, cv *value)
{
    (void)vm;
    code_dict *d = (code_dict *)cv_obj(dv);
    while (d->nentries && !d->e[d->nentries - 1].key)
        d->nentries--;
    if (!d->nentries)
        return 0;
    remove_entry(d, d->nentries - 1, key, value);
    /* The slot in the index stays a dummy, which still names this entry
     * number; dummies are never followed to an entry, so reusing it is safe. */
    d->nentries--;
    return 1;
}

bool code_dict_next(cv dv, size_t *pos, cv *key, cv *value)
{
    if (cv_kind(dv) != CODE_K_DICT) {
        uint64_t h;
        if (value)
            *value = CV_NULL;
        return code_set_next(dv, pos, key, &h);
    }
    code_dict *d = (code_dict *)cv_obj(dv);
    while (*pos < d->nentries) {
        code_dict_entry *e = &d->e[(*pos)++];
        if (e->key) {
            if (key)
                *key = e->key;
            if (value)
                *value = e->value;
            return true;
        }
    }
    return false;
}

cv code_dict_copy(code_vm *vm, cv src)
{
    code_dict *s = (code_dict *)cv_obj(src);
    cv r = code_dict_new(vm);
    if (!r)
        return CV_NULL;
    code_dict *d = (code_dict *)cv_obj(r);
    if (s->used && dict_resize(vm, d, s->used)) {
        code_decref(vm, r);
        return CV_NULL;
    }
    for (size_t i = 0; i < s->nentries; i++)
        if (s->e[i].key && insert_new(vm, d, s->e[i].key, s->e[i].hash, s->e[i].value)) {
            code_decref(vm, r);
            return CV_NULL;
        }
    return r;
}

/* Makes room for n more entries before a merge, so it resizes once. */
int code_dict_reserve(code_vm *vm, cv dv, size_t n)
{
    code_dict *d = (code_dict *)cv_obj(dv);
    if (d->cap - d->nentries >= n)
        return 0;
    return dict_resize(vm, d, d->used + n);
}
