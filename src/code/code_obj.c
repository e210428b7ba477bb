/* The object core: the immortal singletons, the types of types, None,
 * NotImplemented, Ellipsis and builtin functions, object allocation and
 * release, and the vm's life cycle. */
#include "code/code_gc.h"
#include "code/code_vm.h"

#include <stdio.h>
#include <string.h>

extern cv code_lib_type_attr(code_vm *vm, const code_type *t, const char *name)
    __attribute__((weak));

#define IMMORTAL(t) { .type = (t), .rc = CODE_RC_IMMORTAL, .size = 0 }

code_obj code_none_obj = IMMORTAL(&code_type_none);
code_obj code_true_obj = IMMORTAL(&code_type_bool);
code_obj code_false_obj = IMMORTAL(&code_type_bool);
code_obj code_notimpl_obj = IMMORTAL(&code_type_notimpl);
code_obj code_ellipsis_obj = IMMORTAL(&code_type_ellipsis);

/* ---- allocation ---- */

void *code_obj_new(code_vm *vm, const code_type *t, size_t size)
{
    if (t->traverse)
        return code_gc_obj_new(vm, t, size);
    if (size >= CODE_OBJ_GC) {
        code_raise_nomem(vm);
        return NULL;
    }
    code_obj *o = code_heap_alloc(vm, size);
    if (!o)
        return NULL;
    memset(o, 0, size);
    o->type = t;
    o->rc = 1;
    o->size = (uint32_t)size;
    return o;
}

void code_obj_free(code_vm *vm, code_obj *o)
{
    /* Keep it alive while its dealloc drops what it owns. */
    o->rc = 1;
    if (o->type->dealloc)
        o->type->dealloc(vm, o);
    if (o->size & CODE_OBJ_GC)
        code_gc_obj_free(vm, o);
    else
        code_heap_free(vm, o, o->size);
}

/* ---- the vm ---- */

int code_vm_init(code_vm *vm, const code_limits *limits, code_alloc_fn alloc, void *ud)
{
    memset(vm, 0, sizeof(*vm));
    if (limits)
        vm->limits = *limits;
    if (!vm->limits.max_time_us)
        vm->limits.max_time_us = CODE_DEFAULT_MAX_TIME_US;
    if (!vm->limits.max_bytes)
        vm->limits.max_bytes = CODE_DEFAULT_MAX_BYTES;
    if (!vm->limits.max_depth)
        vm->limits.max_depth = CODE_DEFAULT_MAX_DEPTH;
    if (!vm->limits.max_calls)
        vm->limits.max_calls = CODE_DEFAULT_MAX_CALLS;
    code_mem_init(&vm->mem, alloc, ud, vm->limits.max_bytes, vm->limits.max_allocs);
    /* Nested containers (repr, ==, hash, JSON): deeper than Python's own
     * recursion limit is never needed, and the C stack is checked too. */
    vm->max_depth = vm->limits.max_depth + 50;
    if (code_heap_create(vm))
        return -1;
    if (code_gc_init(vm)) {
        code_heap_destroy(vm);
        return -1;
    }
    code_sb_init(&vm->out, vm);
    /* The reserve MemoryError: made while memory is surely available. */
    vm->nomem = code_exc_new(vm, &code_exc_MemoryError, CODE_EMPTY_TUPLE);
    if (!vm->nomem) {
        code_gc_destroy(vm);
        code_heap_destroy(vm);
        return -1;
    }
    return 0;
}

void code_vm_destroy(code_vm *vm)
{
    /* Everything lives in the heap: no need to walk the references. */
    code_heap_destroy(vm);
    code_gc_destroy(vm);
    memset(vm, 0, sizeof(*vm));
}

int code_guard_enter(code_vm *vm, const char *what)
{
    /* 64 KiB of stack stays in reserve for the code that unwinds and
     * reports the error. */
    char here;
    if (vm->depth >= vm->max_depth || (vm->stack_lo && &here < vm->stack_lo + 64 * 1024)) {
        code_raise(vm, &code_exc_RecursionError, "maximum recursion depth exceeded%s%s",
                   what ? " " : "", what ? what : "");
        return -1;
    }
    vm->depth++;
    /* Nested comparisons and reprs can run long without a Python-level
     * loop (two shared lists a = [a, a] compared 2**80 times): the time
     * limit is read every 64K entries. */
    if ((++vm->guard_ticks & 0xffff) == 0 && code_check_time_only(vm)) {
        vm->depth--;
        return -1;
    }
    return 0;
}

/* ---- None, NotImplemented, Ellipsis ---- */

static cv const_repr(code_vm *vm, cv self)
{
    const char *s = self == CODE_NONE ? "None"
                    : self == CODE_NOTIMPL ? "NotImplemented" : "Ellipsis";
    return code_str_from_cstr(vm, s);
}

static int none_truth(code_vm *vm, cv self)
{
    (void)vm;
    (void)self;
    return 0;
}

/* Identity hashes must not depend on addresses: a dumped run is replayed in
 * another process (with other addresses), and a set's iteration order must
 * come out the same there. Singletons and types hash by name; builtin
 * functions by name and their self's type. Equal hashes only cost probes. */
uint64_t code_hash_cstr(const char *s)
{
    uint64_t h = 1469598103934665603ull;   /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h >> 2;
}

static int ident_hash(code_vm *vm, cv self, uint64_t *h)
{
    (void)vm;
    const code_type *t = cv_type(self);
    if (t == &code_type_type)
        *h = code_hash_cstr(((const code_type *)cv_obj(self))->name);
    else if (t == &code_type_cfunc)
        *h = code_hash_cstr(((const code_cfunc_obj *)cv_obj(self))->name) ^
             (((const code_cfunc_obj *)cv_obj(self))->self
                  ? code_hash_cstr(code_type_name(((const code_cfunc_obj *)cv_obj(self))->self))
                  : 0);
    else
        *h = code_hash_cstr(t->name);
    return 0;
}

static cv ident_compare(code_vm *vm, cv a, cv b, int op)
{
    (void)vm;
    if (op == CODE_CMP_EQ)
        return code_bool(a == b);
    if (op == CODE_CMP_NE)
        return code_bool(a != b);
    return CODE_NOTIMPL;
}

static cv none_new(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kw)
{
    (void)t;
    (void)args;
    if (code_args_nokw(vm, "NoneType", nargs, kw, 0, 0))
        return CV_NULL;
    return CODE_NONE;
}

#define TYPE_HEAD IMMORTAL(&code_type_type)

const code_type code_type_none = {
    .ob = TYPE_HEAD, .name = "NoneType", .kind = CODE_K_NONE, .repr = const_repr,
    .hash = ident_hash, .compare = ident_compare, .truth = none_truth, .new = none_new,
};
const code_type code_type_notimpl = {
    .ob = TYPE_HEAD, .name = "NotImplementedType", .kind = CODE_K_NOTIMPL,
    .repr = const_repr, .hash = ident_hash, .compare = ident_compare,
};
const code_type code_type_ellipsis = {
    .ob = TYPE_HEAD, .name = "ellipsis", .kind = CODE_K_ELLIPSIS, .repr = const_repr,
    .hash = ident_hash, .compare = ident_compare,
};

/* ---- type ---- */

static cv type_repr(code_vm *vm, cv self)
{
    const code_type *t = (const code_type *)cv_obj(self);
    return code_str_fmt(vm, "<class '%s'>", t->name);
}

static cv type_call(code_vm *vm, cv self, cv *args, size_t nargs, cv kw)
{
    const code_type *t = (const code_type *)cv_obj(self);
    if (!t->new)
        return code_raise(vm, &code_exc_TypeError, "cannot create '%s' instances", t->name);
    return t->new(vm, t, args, nargs, kw);
}

/* type(x): the type of x. (The three-argument form makes classes: refused.) */
static cv type_new(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kw)
{
    (void)t;
    if (kw || nargs != 1) {
        if (nargs == 3)
            return code_raise(vm, &code_exc_NotImplementedError,
                              "type() with three arguments (making a class) is not supported");
        return code_raise(vm, &code_exc_TypeError, "type() takes 1 or 3 arguments");
    }
    /* Host-named exception types live on the heap: a reference. */
    return code_incref(cv_of(cv_type(args[0])));
}

static cv type_getattr(code_vm *vm, cv self, const char *name)
{
    const code_type *t = (const code_type *)cv_obj(self);
    if (!strcmp(name, "__name__") || !strcmp(name, "__qualname__"))
        return code_str_from_cstr(vm, t->name);
    /* Class attributes of the library's types (timezone.utc, date.min). A
     * weak reference, so the core alone does not pull the library into a
     * link (unit tests with stand-ins); any program that imports has it. */
    if (code_lib_type_attr)
        return code_lib_type_attr(vm, t, name);
    return CV_NULL;
}

const code_type code_type_type = {
    .ob = TYPE_HEAD, .name = "type", .kind = CODE_K_TYPE, .repr = type_repr,
    .hash = ident_hash, .compare = ident_compare, .call = type_call, .getattr = type_getattr,
    .new = type_new,
};

/* ---- builtin functions and bound builtin methods ---- */

static void cfunc_dealloc(code_vm *vm, code_obj *o)
{
    code_decref(vm, ((code_cfunc_obj *)o)->self);
}

/* No clear: a cycle through a bound method goes through its self's
 * container, whose clear breaks it. */
static void cfunc_traverse(code_vm *vm, cv self, code_visit_fn visit, void *arg)
{
    visit(vm, ((code_cfunc_obj *)cv_obj(self))->self, arg);
}

static cv cfunc_repr(code_vm *vm, cv self)
{
    const code_cfunc_obj *f = (const code_cfunc_obj *)cv_obj(self);
    if (f->self)
        return code_str_fmt(vm, "<built-in method %s of %s object>", f->name,
                            code_type_name(f->self));
    return code_str_fmt(vm, "<built-in function %s>", f->name);
}

/* Calls fn with self in front of the arguments: on the C stack when few. */
cv code_call_with_self(code_vm *vm, code_cfunc fn, cv self, cv *args, size_t nargs, cv kw)
{
    size_t total = nargs + (kw ? ((code_tuple *)cv_obj(kw))->n : 0);
    cv small[16];
    cv *a = small;
    if (total + 1 > 16) {
        a = code_heap_alloc(vm, (total + 1) * sizeof(cv));
        if (!a)
            return CV_NULL;
    }
    a[0] = self;
    if (total)
        memcpy(a + 1, args, total * sizeof(cv));
    cv r = fn(vm, a, nargs + 1, kw);
    if (a != small)
        code_heap_free(vm, a, (total + 1) * sizeof(cv));
    return r;
}

static cv cfunc_call(code_vm *vm, cv self, cv *args, size_t nargs, cv kw)
{
    const code_cfunc_obj *f = (const code_cfunc_obj *)cv_obj(self);
    if (!f->self)
        return f->fn(vm, args, nargs, kw);
    return code_call_with_self(vm, f->fn, f->self, args, nargs, kw);
}

static cv cfunc_getattr(code_vm *vm, cv self, const char *name)
{
    const code_cfunc_obj *f = (const code_cfunc_obj *)cv_obj(self);
    if (!strcmp(name, "__name__") || !strcmp(name, "__qualname__"))
        return code_str_from_cstr(vm, f->name);
    if (!strcmp(name, "__self__") && f->self)
        return code_incref(f->self);
    return CV_NULL;
}

const code_type code_type_cfunc = {
    .ob = TYPE_HEAD, .name = "builtin_function_or_method", .kind = CODE_K_CFUNC,
    .dealloc = cfunc_dealloc, .traverse = cfunc_traverse, .repr = cfunc_repr, .hash = ident_hash,
    .compare = ident_compare, .call = cfunc_call, .getattr = cfunc_getattr,
};

cv code_cfunc_new(code_vm *vm, const char *name, code_cfunc fn, cv self)
{
    code_cfunc_obj *f = code_obj_new(vm, &code_type_cfunc, sizeof(*f));
    if (!f)
        return CV_NULL;
    f->name = name;
    f->fn = fn;
    f->self = code_incref(self);
    return cv_of(f);
}
