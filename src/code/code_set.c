/* set and frozenset: CPython's setobject.c table (linear probes, then
 * perturbation; fill kept under 60%; the same resize sizes), so sets iterate
 * in CPython's order. The layout in a code_set's fields is described in
 * code_cont.h. The algebra and the methods are in code_set_ops.c. */
#include <string.h>

#include "code/code_cont.h"

#define SET_MINSIZE 8
#define LINEAR_PROBES 9
#define PERTURB_SHIFT 5
#define DUMMY_HASH UINT64_MAX

static bool slot_empty(const code_dict_entry *e) { return !e->key && e->hash == 0; }

static code_dict_entry *new_table(code_vm *vm, size_t n)
{
    code_dict_entry *t = code_heap_alloc(vm, n * sizeof(code_dict_entry));
    if (t)
        memset(t, 0, n * sizeof(code_dict_entry));
    return t;
}

cv code_set_new(code_vm *vm, bool frozen)
{
    code_set *s = code_obj_new(vm, frozen ? &code_type_frozenset : &code_type_set,
                               sizeof(code_set));
    if (!s)
        return CV_NULL;
    s->d.e = new_table(vm, SET_MINSIZE);
    if (!s->d.e) {
        code_decref(vm, cv_of(s));
        return CV_NULL;
    }
    s->d.cap = SET_MINSIZE;
    return cv_of(s);
}

/* Empties the set, dropping its keys after it is consistent again. */
static void set_clear_internal(code_vm *vm, code_dict *so)
{
    code_dict_entry *t = so->e;
    size_t n = so->cap;
    code_dict_entry *fresh = new_table(vm, SET_MINSIZE);
    if (fresh) {
        so->e = fresh;
        so->cap = SET_MINSIZE;
    } else {
        code_exc_clear(vm);      /* a set without a table still works: cap 0 */
        so->e = NULL;
        so->cap = 0;
    }
    so->used = so->nentries = 0;   /* the pop() finger stays, as CPython's */
    so->version++;
    code_cont_dealloc_enter(vm);
    for (size_t i = 0; i < n; i++)
        code_cont_release(vm, t[i].key);
    if (t)
        code_heap_free(vm, t, n * sizeof(code_dict_entry));
    code_cont_dealloc_leave(vm);
}

void code_set_clear(code_vm *vm, cv set)
{
    set_clear_internal(vm, &((code_set *)cv_obj(set))->d);
}

static void set_dealloc(code_vm *vm, code_obj *o)
{
    code_dict *so = &((code_set *)o)->d;
    code_dict_entry *t = so->e;
    size_t n = so->cap;
    so->e = NULL;
    so->cap = so->used = so->nentries = 0;
    code_cont_dealloc_enter(vm);
    for (size_t i = 0; i < n; i++)
        code_cont_release(vm, t[i].key);
    if (t)
        code_heap_free(vm, t, n * sizeof(code_dict_entry));
    code_cont_dealloc_leave(vm);
}

static void set_traverse(code_vm *vm, cv self, code_visit_fn visit, void *arg)
{
    const code_dict *so = &((const code_set *)cv_obj(self))->d;
    for (size_t i = 0; i < so->cap; i++)
        if (so->e[i].key)
            visit(vm, so->e[i].key, arg);
}

static void set_gc_clear(code_vm *vm, cv self)
{
    set_dealloc(vm, cv_obj(self));
}

/* The slot holding key, or the empty slot that ends its probe sequence;
 * NULL on error. */
static code_dict_entry *set_lookkey(code_vm *vm, code_dict *so, cv key, uint64_t hash)
{
restart:;
    code_dict_entry *table = so->e;
    size_t mask = so->cap - 1, i = (size_t)hash & mask;
    uint64_t perturb = hash;
    for (;;) {
        code_dict_entry *entry = &table[i];
        size_t probes = i + LINEAR_PROBES <= mask ? LINEAR_PROBES : 0;
        for (;;) {
            if (slot_empty(entry))
                return entry;
            if (entry->hash == hash && entry->key) {
                cv startkey = entry->key;
                if (startkey == key)
                    return entry;
                code_incref(startkey);
                int cmp = code_eq(vm, startkey, key);
                code_decref(vm, startkey);
                if (cmp < 0)
                    return NULL;
                if (table != so->e || entry->key != startkey)
                    goto restart;
                if (cmp)
                    return entry;
            }
            if (!probes--)
                break;
            entry++;
        }
        perturb >>= PERTURB_SHIFT;
        i = (i * 5 + 1 + (size_t)perturb) & mask;
    }
}

static void insert_clean(code_dict_entry *table, size_t mask, cv key, uint64_t hash)
{
    uint64_t perturb = hash;
    size_t i = (size_t)hash & mask;
    for (;;) {
        code_dict_entry *entry = &table[i];
        if (!entry->key)
            goto found;
        if (i + LINEAR_PROBES <= mask) {
            for (size_t j = 0; j < LINEAR_PROBES; j++) {
                entry++;
                if (!entry->key)
                    goto found;
            }
        }
        perturb >>= PERTURB_SHIFT;
        i = (i * 5 + 1 + (size_t)perturb) & mask;
        continue;
    found:
        entry->key = key;
        entry->hash = hash;
        return;
    }
}

static int set_table_resize(code_vm *vm, code_dict *so, size_t minused)
{
    size_t newsize = SET_MINSIZE;
    while (newsize <= minused) {
        if (newsize > SIZE_MAX / sizeof(code_dict_entry) / 8) {
            code_raise_nomem(vm);
            return -1;
        }
        newsize <<= 1;
    }
    code_dict_entry *t = new_table(vm, newsize);
    if (!t)
        return -1;
    code_dict_entry *old = so->e;
    size_t oldn = so->cap;
    for (size_t i = 0; i < oldn; i++)
        if (old[i].key)
            insert_clean(t, newsize - 1, old[i].key, old[i].hash);
    so->e = t;
    so->cap = newsize;
    so->nentries = so->used;
    so->version++;
    if (old)
        code_heap_free(vm, old, oldn * sizeof(code_dict_entry));
    return 0;
}

static int ensure_table(code_vm *vm, code_dict *so)
{
    return so->cap ? 0 : set_table_resize(vm, so, 0);
}

/* set_add_entry: the key's reference is taken only when it is inserted. */
static int set_add_entry(code_vm *vm, code_dict *so, cv key, uint64_t hash)
{
    if (ensure_table(vm, so))
        return -1;
restart:;
    code_dict_entry *table = so->e, *freeslot = NULL, *entry;
    size_t mask = so->cap - 1, i = (size_t)hash & mask;
    uint64_t perturb = hash;
    for (;;) {
        entry = &table[i];
        size_t probes = i + LINEAR_PROBES <= mask ? LINEAR_PROBES : 0;
        for (;;) {
            if (slot_empty(entry))
                goto found_unused_or_dummy;
            if (entry->hash == hash && entry->key) {
                cv startkey = entry->key;
                if (startkey == key)
                    return 0;
                code_incref(startkey);
                int cmp = code_eq(vm, startkey, key);
                code_decref(vm, startkey);
                if (cmp < 0)
                    return -1;
                if (cmp > 0)
                    return 0;
                if (table != so->e || entry->key != startkey)
                    goto restart;
            } else if (entry->hash == DUMMY_HASH && !entry->key) {
                /* The last dummy seen, not the first: CPython 3.11's
                 * choice, which decides where re-added keys go. */
                freeslot = entry;
            }
            if (!probes--)
                break;
            entry++;
        }
        perturb >>= PERTURB_SHIFT;
        i = (i * 5 + 1 + (size_t)perturb) & mask;
    }
found_unused_or_dummy:
    so->version++;
    if (freeslot) {
        so->used++;
        freeslot->key = code_incref(key);
        freeslot->hash = hash;
        return 0;
    }
    so->nentries++;
    so->used++;
    entry->key = code_incref(key);
    entry->hash = hash;
    if (so->nentries * 5 < mask * 3)
        return 0;
    return set_table_resize(vm, so, so->used > 50000 ? so->used * 2 : so->used * 4);
}

int code_set_add_h(code_vm *vm, cv set, cv key, uint64_t hash)
{
    return set_add_entry(vm, &((code_set *)cv_obj(set))->d, key, hash);
}

int code_set_add(code_vm *vm, cv set, cv key)
{
    uint64_t h;
    if (code_hash(vm, key, &h))
        return -1;
    return code_set_add_h(vm, set, key, h);
}

/* 1 present, 0 absent, -1 error. */
int code_set_contains_h(code_vm *vm, cv set, cv key, uint64_t hash)
{
    code_dict *so = &((code_set *)cv_obj(set))->d;
    if (!so->cap)
        return 0;
    code_dict_entry *e = set_lookkey(vm, so, key, hash);
    if (!e)
        return -1;
    return e->key != CV_NULL;
}

int code_set_discard_h(code_vm *vm, cv set, cv key, uint64_t hash)
{
    code_dict *so = &((code_set *)cv_obj(set))->d;
    if (!so->cap)
        return 0;
    code_dict_entry *e = set_lookkey(vm, so, key, hash);
    if (!e)
        return -1;
    if (!e->key)
        return 0;
    cv old = e->key;
    e->key = CV_NULL;
    e->hash = DUMMY_HASH;
    so->used--;
    so->version++;
    code_decref(vm, old);
    return 1;
}

/* The hash of a key for lookups: a set argument stands for the frozenset
 * of its items ({1} in {frozenset({1})}), as CPython allows. *tmp owns it. */
static int lookup_hash(code_vm *vm, cv *key, uint64_t *h, cv *tmp)
{
    *tmp = CV_NULL;
    if (!code_hash(vm, *key, h))
        return 0;
    if (!cv_is(*key, &code_type_set) || !code_exc_matches(vm, &code_exc_TypeError))
        return -1;
    code_exc_clear(vm);
    *tmp = code_set_copy(vm, *key, true);
    if (!*tmp)
        return -1;
    *key = *tmp;
    return code_hash(vm, *key, h);
}

int code_set_contains(code_vm *vm, cv set, cv key)
{
    uint64_t h;
    cv tmp;
    if (lookup_hash(vm, &key, &h, &tmp))
        return -1;
    int r = code_set_contains_h(vm, set, key, h);
    code_decref(vm, tmp);
    return r;
}

int code_set_discard(code_vm *vm, cv set, cv key)
{
    uint64_t h;
    cv tmp;
    if (lookup_hash(vm, &key, &h, &tmp))
        return -1;
    int r = code_set_discard_h(vm, set, key, h);
    code_decref(vm, tmp);
    return r;
}

bool code_set_next(cv set, size_t *pos, cv *key, uint64_t *hash)
{
    code_dict *so = &((code_set *)cv_obj(set))->d;
    while (*pos < so->cap) {
        code_dict_entry *e = &so->e[(*pos)++];
        if (e->key) {
            if (key)
                *key = e->key;
            if (hash)
                *hash = e->hash;
            return true;
        }
    }
    return false;
}

/* set_merge: every key of other (a set or frozenset) into so. */
int code_set_merge(code_vm *vm, cv set, cv other)
{
    code_dict *so = &((code_set *)cv_obj(set))->d;
    code_dict *o = &((code_set *)cv_obj(other))->d;
    if (set == other || o->used == 0)
        return 0;
    if (ensure_table(vm, so))
        return -1;
    if ((so->nentries + o->used) * 5 >= (so->cap - 1) * 3 &&
        set_table_resize(vm, so, (so->used + o->used) * 2))
        return -1;
    /* An empty table of the same size, and no dummies in other's: the
     * slots copy over as they are. */
    if (so->nentries == 0 && so->cap == o->cap && o->nentries == o->used) {
        for (size_t i = 0; i < o->cap; i++) {
            if (o->e[i].key) {
                so->e[i].key = code_incref(o->e[i].key);
                so->e[i].hash = o->e[i].hash;
            }
        }
        so->nentries = so->used = o->used;
        so->version++;
        return 0;
    }
    if (so->nentries == 0) {
        for (size_t i = 0; i < o->cap; i++)
            if (o->e[i].key)
                insert_clean(so->e, so->cap - 1, code_incref(o->e[i].key), o->e[i].hash);
        so->nentries = so->used = o->used;
        so->version++;
        return 0;
    }
    for (size_t i = 0; i < o->cap; i++)
        if (o->e[i].key && set_add_entry(vm, so, o->e[i].key, o->e[i].hash))
            return -1;
    return 0;
}

int code_set_update(code_vm *vm, cv set, cv iterable)
{
    if (code_is_anyset(iterable))
        return code_set_merge(vm, set, iterable);
    code_dict *so = &((code_set *)cv_obj(set))->d;
    if (cv_is(iterable, &code_type_dict)) {
        code_dict *d = (code_dict *)cv_obj(iterable);
        if (ensure_table(vm, so))
            return -1;
        if ((so->nentries + d->used) * 5 >= (so->cap - 1) * 3 &&
            set_table_resize(vm, so, (so->used + d->used) * 2))
            return -1;
        for (size_t i = 0; i < d->nentries; i++)
            if (d->e[i].key && set_add_entry(vm, so, d->e[i].key, d->e[i].hash))
                return -1;
        return 0;
    }
    cv it = code_iter(vm, iterable);
    if (!it)
        return -1;
    for (;;) {
        cv x = code_next(vm, it);
        if (!x)
            break;
        int r = code_set_add(vm, set, x);
        code_decref(vm, x);
        if (r) {
            code_decref(vm, it);
            return -1;
        }
    }
    code_decref(vm, it);
    return vm->exc ? -1 : 0;
}

cv code_set_copy(code_vm *vm, cv iterable, bool frozen)
{
    cv s = code_set_new(vm, frozen);
    if (s && code_set_update(vm, s, iterable)) {
        code_decref(vm, s);
        return CV_NULL;
    }
    return s;
}

cv code_set_from_consts(code_vm *vm, const cv *items, size_t n)
{
    /* The compiler's frozenset, then the copy its constant merging makes
     * (re-added in the first one's slot order), then SET_UPDATE's merge. */
    cv a = code_set_new(vm, true), b = CV_NULL, s = CV_NULL;
    for (size_t i = 0; a && i < n; i++)
        if (code_set_add(vm, a, items[i]))
            goto done;
    if (!a || !(b = code_set_new(vm, true)))
        goto done;
    size_t pos = 0;
    cv k;
    uint64_t h;
    while (code_set_next(a, &pos, &k, &h))
        if (code_set_add_h(vm, b, k, h))
            goto done;
    if ((s = code_set_new(vm, false)) && code_set_merge(vm, s, b)) {
        code_decref(vm, s);
        s = CV_NULL;
    }
done:
    code_decref(vm, a);
    code_decref(vm, b);
    return s;
}

/* pop(): the first live slot from the finger on, as CPython. 0 if empty. */
int code_set_pop(code_vm *vm, cv set, cv *key)
{
    (void)vm;
    code_dict *so = &((code_set *)cv_obj(set))->d;
    if (so->used == 0)
        return 0;
    size_t mask = so->cap - 1, i = so->nindex & mask;
    while (!so->e[i].key)
        i = (i + 1) & mask;
    *key = so->e[i].key;
    so->e[i].key = CV_NULL;
    so->e[i].hash = DUMMY_HASH;
    so->used--;
    so->version++;
    so->nindex = i + 1;
    return 1;
}

/* After many removals: CPython resizes when over a quarter are dummies. */
int code_set_shrink_dummies(code_vm *vm, cv set)
{
    code_dict *so = &((code_set *)cv_obj(set))->d;
    if (!so->cap || so->nentries - so->used <= (so->cap - 1) / 4)
        return 0;
    return set_table_resize(vm, so, so->used > 50000 ? so->used * 2 : so->used * 4);
}

/* Swaps the tables of two sets (intersection_update keeps the result);
 * the pop() fingers stay, as CPython's. */
void code_set_swap_bodies(cv a, cv b)
{
    code_dict *x = &((code_set *)cv_obj(a))->d, *y = &((code_set *)cv_obj(b))->d;
    code_dict t = *x;
    x->used = y->used;
    x->nentries = y->nentries;
    x->cap = y->cap;
    x->e = y->e;
    x->version++;
    y->used = t.used;
    y->nentries = t.nentries;
    y->cap = t.cap;
    y->e = t.e;
    y->version++;
}

/* ---- iterator ----------------------------------------------------------------- */

static void set_iter_dealloc(code_vm *vm, code_obj *o)
{
    code_decref(vm, ((code_set_iter *)o)->s);
}

static void set_iter_traverse(code_vm *vm, cv self, code_visit_fn visit, void *arg)
{
    visit(vm, ((code_set_iter *)cv_obj(self))->s, arg);
}

/* As if exhausted. */
static void set_iter_clear(code_vm *vm, cv self)
{
    code_setref(vm, &((code_set_iter *)cv_obj(self))->s, CV_NULL);
}

static cv set_iter_next(code_vm *vm, cv self)
{
    code_set_iter *it = (code_set_iter *)cv_obj(self);
    if (!it->s)
        return CV_NULL;
    code_dict *so = &((code_set *)cv_obj(it->s))->d;
    if (so->used != it->used) {
        it->used = (size_t)-1;
        return code_raise(vm, &code_exc_RuntimeError, "Set changed size during iteration");
    }
    cv k;
    /* Same size, other keys: CPython walks on through the table. */
    if (!code_set_next(it->s, &it->pos, &k, NULL)) {
        code_setref(vm, &it->s, CV_NULL);
        return CV_NULL;
    }
    if (it->left)
        it->left--;
    return code_incref(k);
}

const code_type code_type_set_iter = {
    .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},
    .name = "set_iterator",
    .kind = CODE_K_ITER,
    .dealloc = set_iter_dealloc,
    .traverse = set_iter_traverse,
    .clear = set_iter_clear,
    .iter = code_iter_self,
    .next = set_iter_next,
};

static cv set_iter(code_vm *vm, cv self)
{
    code_set_iter *it = code_obj_new(vm, &code_type_set_iter, sizeof(code_set_iter));
    if (!it)
        return CV_NULL;
    it->s = code_incref(self);
    it->used = it->left = ((code_set *)cv_obj(self))->d.used;
    return cv_of(it);
}

/* ---- slots ---------------------------------------------------------------------- */

static cv set_repr(code_vm *vm, cv self)
{
    code_dict *so = &((code_set *)cv_obj(self))->d;
    bool frozen = cv_kind(self) == CODE_K_FROZENSET;
    if (so->used == 0)
        return code_str_from_cstr(vm, frozen ? "frozenset()" : "set()");
    int r = code_repr_enter(vm, self);
    if (r < 0)
        return CV_NULL;
    if (r > 0)
        return code_str_fmt(vm, "%s(...)", cv_type(self)->name);
    code_sb b;
    code_sb_init(&b, vm);
    code_sb_addc(&b, frozen ? "frozenset({" : "{");
    size_t pos = 0, n = 0;
    cv k;
    while (!b.failed && code_set_next(self, &pos, &k, NULL)) {
        if (n++)
            code_sb_add(&b, ", ", 2);
        if (code_sb_repr(&b, k))
            break;
    }
    code_repr_leave(vm, self);
    if (b.failed || vm->exc) {
        code_sb_free(&b);
        return CV_NULL;
    }
    code_sb_addc(&b, frozen ? "})" : "}");
    return code_sb_finish(&b);
}

static uint64_t shuffle_bits(uint64_t h)
{
    return ((h ^ 89869747UL) ^ (h << 16)) * 3644798167UL;
}

/* CPython 3.11's frozenset_hash. */
static int frozenset_hash(code_vm *vm, cv self, uint64_t *out)
{
    (void)vm;
    code_set *s = (code_set *)cv_obj(self);
    if (s->hash) {
        *out = s->hash;
        return 0;
    }
    uint64_t hash = 0;
    size_t pos = 0;
    uint64_t h;
    while (code_set_next(self, &pos, NULL, &h))
        hash ^= shuffle_bits(h);
    hash ^= ((uint64_t)s->d.used + 1) * 1927868237UL;
    hash ^= (hash >> 11) ^ (hash >> 25);
    hash = hash * 69069U + 907133923UL;
    if (hash == UINT64_MAX)
        hash = 590923713UL;
    s->hash = hash;
    *out = hash;
    return 0;
}

static ssize_t set_len(code_vm *vm, cv self)
{
    (void)vm;
    return (ssize_t)((code_set *)cv_obj(self))->d.used;
}

static int set_contains_slot(code_vm *vm, cv self, cv x)
{
    return code_set_contains(vm, self, x);
}

static cv set_new(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kwnames)
{
    bool frozen = t == &code_type_frozenset;
    if (kwnames && ((code_tuple *)cv_obj(kwnames))->n)
        return code_raise(vm, &code_exc_TypeError, "%s() takes no keyword arguments", t->name);
    if (code_cont_argn(vm, t->name, 0, 1, nargs, CV_NULL))
        return CV_NULL;
    if (frozen && nargs && cv_is(args[0], &code_type_frozenset))
        return code_incref(args[0]);
    return nargs ? code_set_copy(vm, args[0], frozen) : code_set_new(vm, frozen);
}


const code_type code_type_set = {
    .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},
    .name = "set",
    .kind = CODE_K_SET,
    .dealloc = set_dealloc,
    .traverse = set_traverse,
    .clear = set_gc_clear,
    .repr = set_repr,
    .compare = code_set_compare,
    .binop = code_set_binop,
    .inplace = code_cont_inplace,
    .len = set_len,
    .iter = set_iter,
    .contains = set_contains_slot,
    .methods = code_set_methods,
    .new = set_new,
};

const code_type code_type_frozenset = {
    .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},
    .name = "frozenset",
    .kind = CODE_K_FROZENSET,
    .dealloc = set_dealloc,
    .traverse = set_traverse,
    .clear = set_gc_clear,
    .repr = set_repr,
    .hash = frozenset_hash,
    .compare = code_set_compare,
    .binop = code_set_binop,
    .len = set_len,
    .iter = set_iter,
    .contains = set_contains_slot,
    .methods = code_frozenset_methods,
    .new = set_new,
};
