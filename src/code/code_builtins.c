/* The builtin namespace: a static sorted table of immortal values (builtin
 * functions, the builtin types, the exception types), and the builtins that
 * only look at their arguments. The ones that compute over iterables are in
 * code_builtins_num.c, the iterator types in code_builtins_iter.c.
 *
 * The builtins CPython has but code mode does not (open, eval, class
 * machinery...) are present and raise NotImplementedError naming themselves,
 * so LLM-written code gets a clear refusal instead of a NameError. */
#include <stdlib.h>
#include <string.h>

#include "code/code_lib.h"

/* ---- the builtins -------------------------------------------------------------- */

static cv one_arg(code_vm *vm, const char *fname, size_t nargs, cv kwnames)
{
    if (kwnames)
        return code_raise(vm, &code_exc_TypeError, "%s() takes no keyword arguments", fname);
    if (nargs != 1)
        return code_raise(vm, &code_exc_TypeError,
                          "%s() takes exactly one argument (%zu given)", fname, nargs);
    return CODE_TRUE;
}

static cv bi_len(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (!one_arg(vm, "len", nargs, kwnames))
        return CV_NULL;
    ssize_t n = code_len(vm, args[0]);
    return n < 0 ? CV_NULL : code_int_from_i64(vm, n);
}

static cv bi_repr(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    return one_arg(vm, "repr", nargs, kwnames) ? code_repr(vm, args[0]) : CV_NULL;
}

/* ascii(): repr with every non-ASCII code point escaped as CPython does. */
static cv bi_ascii(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (!one_arg(vm, "ascii", nargs, kwnames))
        return CV_NULL;
    cv r = code_repr(vm, args[0]);
    if (!r || ((code_str *)cv_obj(r))->ascii)
        return r;
    code_sb b;
    code_sb_init(&b, vm);
    const unsigned char *p = (const unsigned char *)code_str_cstr(r);
    size_t n = code_str_len(r);
    for (size_t i = 0; i < n;) {
        uint32_t c;
        size_t k = code_lib_u8_dec(p + i, &c);
        if (c < 0x80)
            code_sb_add(&b, (const char *)p + i, 1);
        else if (c < 0x100)
            code_sb_printf(&b, "\\x%02x", c);
        else if (c < 0x10000)
            code_sb_printf(&b, "\\u%04x", c);
        else
            code_sb_printf(&b, "\\U%08x", c);
        i += k;
    }
    code_decref(vm, r);
    return code_sb_finish(&b);
}

static cv bi_callable(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (!one_arg(vm, "callable", nargs, kwnames))
        return CV_NULL;
    return code_bool(cv_type(args[0])->call != NULL || code_lib_is_type(args[0]));
}

static cv bi_chr(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (!one_arg(vm, "chr", nargs, kwnames))
        return CV_NULL;
    int64_t i;
    if (code_as_i64(vm, args[0], &i) < 0)
        return CV_NULL;
    if (i < 0 || i > 0x10FFFF)
        return code_raise(vm, &code_exc_ValueError, "chr() arg not in range(0x110000)");
    if (i >= 0xD800 && i <= 0xDFFF)   /* strings are UTF-8: no lone surrogates */
        return code_raise(vm, &code_exc_ValueError,
                          "chr() of a surrogate is not supported in code mode");
    char buf[4];
    return code_str_new(vm, buf, code_lib_u8_enc((uint32_t)i, buf));
}

static cv bi_ord(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (!one_arg(vm, "ord", nargs, kwnames))
        return CV_NULL;
    cv c = args[0];
    if (cv_is(c, &code_type_str)) {
        const code_str *s = (const code_str *)cv_obj(c);
        if (s->nchars != 1)
            return code_raise(vm, &code_exc_TypeError,
                              "ord() expected a character, but string of length %zu found",
                              s->nchars);
        uint32_t cp;
        code_lib_u8_dec((const unsigned char *)s->s, &cp);
        return cv_from_small(cp);
    }
    if (cv_is(c, &code_type_bytes)) {
        const code_bytes *b = (const code_bytes *)cv_obj(c);
        if (b->len != 1)
            return code_raise(vm, &code_exc_TypeError,
                              "ord() expected a character, but string of length %zu found",
                              b->len);
        return cv_from_small(b->s[0]);
    }
    return code_raise(vm, &code_exc_TypeError,
                      "ord() expected string of length 1, but %s found", code_type_name(c));
}

static cv int_base(code_vm *vm, const char *fname, cv *args, size_t nargs, cv kwnames,
                   int base)
{
    if (!one_arg(vm, fname, nargs, kwnames))
        return CV_NULL;
    int k = cv_kind(args[0]);
    if (k != CODE_K_INT && k != CODE_K_BOOL)
        return code_raise(vm, &code_exc_TypeError,
                          "'%s' object cannot be interpreted as an integer",
                          code_type_name(args[0]));
    return code_int_to_str_base(vm, args[0], base);
}

static cv bi_bin(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    return int_base(vm, "bin", args, nargs, kwnames, 2);
}

static cv bi_oct(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    return int_base(vm, "oct", args, nargs, kwnames, 8);
}

static cv bi_hex(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    return int_base(vm, "hex", args, nargs, kwnames, 16);
}

static cv bi_format(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "format", nargs, kwnames, 1, 2) < 0)
        return CV_NULL;
    if (nargs == 2 && !cv_is(args[1], &code_type_str))
        return code_raise(vm, &code_exc_TypeError, "format() argument 2 must be str, not %s",
                          code_type_name(args[1]));
    cv spec = nargs == 2 ? code_incref(args[1]) : code_str_new(vm, "", 0);
    if (!spec)
        return CV_NULL;
    cv r = code_format(vm, args[0], spec);
    code_decref(vm, spec);
    return r;
}

static cv attr_name(code_vm *vm, cv name)
{
    if (!cv_is(name, &code_type_str))
        return code_raise(vm, &code_exc_TypeError, "attribute name must be string, not '%s'",
                          code_type_name(name));
    return name;
}

static cv bi_getattr(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "getattr", nargs, kwnames, 2, 3) < 0 || !attr_name(vm, args[1]))
        return CV_NULL;
    cv r = code_getattr(vm, args[0], code_str_cstr(args[1]));
    if (!r && nargs == 3 && code_exc_matches(vm, &code_exc_AttributeError)) {
        code_exc_clear(vm);
        return code_incref(args[2]);
    }
    return r;
}

static cv bi_hasattr(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "hasattr", nargs, kwnames, 2, 2) < 0 || !attr_name(vm, args[1]))
        return CV_NULL;
    cv r = code_getattr(vm, args[0], code_str_cstr(args[1]));
    if (r) {
        code_decref(vm, r);
        return CODE_TRUE;
    }
    if (!code_exc_matches(vm, &code_exc_AttributeError))
        return CV_NULL;
    code_exc_clear(vm);
    return CODE_FALSE;
}

static cv bi_hash(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (!one_arg(vm, "hash", nargs, kwnames))
        return CV_NULL;
    uint64_t h;
    if (code_hash(vm, args[0], &h) < 0)
        return CV_NULL;
    return code_int_from_i64(vm, (int64_t)h);
}

/* id(): numbers handed out in order of first request, kept in a per-run dict
 * keyed by the object's address, so a run (and its replay after load) sees
 * the same ids. Small ints have no address: their id derives from the value. */
static cv bi_id(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (!one_arg(vm, "id", nargs, kwnames))
        return CV_NULL;
    cv v = args[0];
    if (cv_is_small(v))
        return code_int_from_i64(vm, 0x100000 + 32 * cv_small(v));
    if (!code_lib_cache(vm))
        return CV_NULL;
    cv key = code_int_from_u64(vm, (uint64_t)v);
    if (!key)
        return CV_NULL;
    cv found;
    if (code_dict_get(vm, vm->builtins_cache, key, &found) < 0) {
        code_decref(vm, key);
        return CV_NULL;
    }
    if (found) {
        code_decref(vm, key);
        return code_incref(found);
    }
    cv id = code_int_from_i64(vm, (int64_t)(0x7f0000000000 + 16 * ++vm->next_id));
    if (!id || code_dict_set(vm, vm->builtins_cache, key, id) < 0) {
        code_decref(vm, key);
        code_decref(vm, id);
        return CV_NULL;
    }
    code_decref(vm, key);
    return id;
}

/* One class or a (nested) tuple of classes; -1 when cls is neither. */
static int inst_check(code_vm *vm, cv obj, cv cls, bool sub, const char *fname)
{
    if (code_lib_is_type(cls)) {
        const code_type *t = code_lib_as_type(cls);
        if (sub) {
            for (const code_type *c = code_lib_as_type(obj); c; c = c->base)
                if (c == t)
                    return 1;
            return 0;
        }
        return code_lib_isinstance(obj, t);
    }
    if (cv_is(cls, &code_type_tuple)) {
        const code_tuple *tu = (const code_tuple *)cv_obj(cls);
        if (code_guard_enter(vm, fname) < 0)
            return -1;
        int r = 0;
        for (size_t i = 0; i < tu->n && r == 0; i++)
            r = inst_check(vm, obj, tu->v[i], sub, fname);
        code_guard_leave(vm);
        return r;
    }
    return code_raise_i(vm, &code_exc_TypeError,
                        "%s() arg 2 must be a %s, a tuple of %s, or a union", fname,
                        sub ? "class" : "type", sub ? "classes" : "types");
}

static cv bi_isinstance(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "isinstance", nargs, kwnames, 2, 2) < 0)
        return CV_NULL;
    int r = inst_check(vm, args[0], args[1], false, "isinstance");
    return r < 0 ? CV_NULL : code_bool(r);
}

static cv bi_issubclass(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "issubclass", nargs, kwnames, 2, 2) < 0)
        return CV_NULL;
    if (!code_lib_is_type(args[0]))
        return code_raise(vm, &code_exc_TypeError, "issubclass() arg 1 must be a class");
    int r = inst_check(vm, args[0], args[1], true, "issubclass");
    return r < 0 ? CV_NULL : code_bool(r);
}

static cv bi_iter(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "iter", nargs, kwnames, 1, 2) < 0)
        return CV_NULL;
    if (nargs == 2)
        return code_lib_calliter_new(vm, args[0], args[1]);
    return code_iter(vm, args[0]);
}

static cv bi_next(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "next", nargs, kwnames, 1, 2) < 0)
        return CV_NULL;
    if (!cv_type(args[0])->next)
        return code_raise(vm, &code_exc_TypeError, "'%s' object is not an iterator",
                          code_type_name(args[0]));
    cv r = code_next(vm, args[0]);
    if (r || vm->exc)
        return r;
    return nargs == 2 ? code_incref(args[1]) : code_lib_stop(vm);
}

static int print_sep(code_vm *vm, const char *what, cv v)
{
    if (v == CV_NULL || v == CODE_NONE || cv_is(v, &code_type_str))
        return 0;
    return code_raise_i(vm, &code_exc_TypeError, "%s must be None or a string, not %s", what,
                        code_type_name(v));
}

static cv bi_print(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    static const char *const names[] = { "sep", "end", "file", "flush", NULL };
    cv kw[4] = { CV_NULL, CV_NULL, CV_NULL, CV_NULL };
    if (code_lib_kw(vm, "print", args, nargs, kwnames, names, kw) < 0)
        return CV_NULL;
    if (print_sep(vm, "sep", kw[0]) < 0 || print_sep(vm, "end", kw[1]) < 0)
        return CV_NULL;
    if (kw[2] && kw[2] != CODE_NONE)
        return code_raise(vm, &code_exc_NotImplementedError,
                          "print(file=...) is not supported in code mode");
    bool sep_given = kw[0] && kw[0] != CODE_NONE, end_given = kw[1] && kw[1] != CODE_NONE;
    /* The line is built apart and appended whole: str() of an argument may
     * fail (the digit limit, deep data), and the run's output buffer must
     * not be left marked as failed by it. */
    code_sb line;
    code_sb_init(&line, vm);
    for (size_t i = 0; i < nargs; i++) {
        if (i > 0) {
            if (sep_given)
                code_sb_add(&line, code_str_cstr(kw[0]), code_str_len(kw[0]));
            else
                code_sb_add(&line, " ", 1);
        }
        if (code_sb_str(&line, args[i]) < 0) {
            code_sb_free(&line);
            return vm->exc ? CV_NULL : code_raise_nomem(vm);
        }
    }
    if (end_given)
        code_sb_add(&line, code_str_cstr(kw[1]), code_str_len(kw[1]));
    else
        code_sb_add(&line, "\n", 1);
    if (line.failed) {
        code_sb_free(&line);
        return vm->exc ? CV_NULL : code_raise_nomem(vm);
    }
    int rc = code_sb_add(&vm->out, line.p, line.len);
    code_sb_free(&line);
    if (rc < 0) {
        /* Only out of memory gets here: the output buffer may be used again
         * once memory is freed. */
        vm->out.failed = false;
        return vm->exc ? CV_NULL : code_raise_nomem(vm);
    }
    return CODE_NONE;
}

/* ---- refused builtins ----------------------------------------------------------- */

#define REFUSED(name)                                                               \
    static cv bi_no_##name(code_vm *vm, cv *args, size_t nargs, cv kwnames)         \
    {                                                                               \
        return code_lib_refuse(vm, #name);                                          \
    }                                                                               \
    static CODE_CFUNC(f_no_##name, #name, bi_no_##name);

REFUSED(open) REFUSED(eval) REFUSED(exec) REFUSED(compile) REFUSED(input)
REFUSED(__import__) REFUSED(globals) REFUSED(locals) REFUSED(vars) REFUSED(dir)
REFUSED(setattr) REFUSED(delattr) REFUSED(breakpoint) REFUSED(memoryview)
REFUSED(bytearray) REFUSED(complex) REFUSED(object) REFUSED(super) REFUSED(property)
REFUSED(classmethod) REFUSED(staticmethod) REFUSED(help) REFUSED(exit) REFUSED(quit)

static CODE_CFUNC(f_abs, "abs", code_bi_abs);
static CODE_CFUNC(f_all, "all", code_bi_all);
static CODE_CFUNC(f_any, "any", code_bi_any);
static CODE_CFUNC(f_ascii, "ascii", bi_ascii);
static CODE_CFUNC(f_bin, "bin", bi_bin);
static CODE_CFUNC(f_callable, "callable", bi_callable);
static CODE_CFUNC(f_chr, "chr", bi_chr);
static CODE_CFUNC(f_divmod, "divmod", code_bi_divmod);
static CODE_CFUNC(f_format, "format", bi_format);
static CODE_CFUNC(f_getattr, "getattr", bi_getattr);
static CODE_CFUNC(f_hasattr, "hasattr", bi_hasattr);
static CODE_CFUNC(f_hash, "hash", bi_hash);
static CODE_CFUNC(f_hex, "hex", bi_hex);
static CODE_CFUNC(f_id, "id", bi_id);
static CODE_CFUNC(f_isinstance, "isinstance", bi_isinstance);
static CODE_CFUNC(f_issubclass, "issubclass", bi_issubclass);
static CODE_CFUNC(f_iter, "iter", bi_iter);
static CODE_CFUNC(f_len, "len", bi_len);
static CODE_CFUNC(f_max, "max", code_bi_max);
static CODE_CFUNC(f_min, "min", code_bi_min);
static CODE_CFUNC(f_next, "next", bi_next);
static CODE_CFUNC(f_oct, "oct", bi_oct);
static CODE_CFUNC(f_ord, "ord", bi_ord);
static CODE_CFUNC(f_pow, "pow", code_bi_pow);
static CODE_CFUNC(f_print, "print", bi_print);
static CODE_CFUNC(f_repr, "repr", bi_repr);
static CODE_CFUNC(f_round, "round", code_bi_round);
static CODE_CFUNC(f_sorted, "sorted", code_bi_sorted);
static CODE_CFUNC(f_sum, "sum", code_bi_sum);

typedef struct builtin_entry {
    const char *name;
    const void *obj;
} builtin_entry;

/* Sorted by strcmp (the unit test checks every name resolves). Exception
 * types are found by code_exc_type_by_name after this table. */
static const builtin_entry builtins[] = {
    { "Ellipsis", &code_ellipsis_obj },
    { "NotImplemented", &code_notimpl_obj },
    { "__import__", &f_no___import__ },
    { "abs", &f_abs },
    { "all", &f_all },
    { "any", &f_any },
    { "ascii", &f_ascii },
    { "bin", &f_bin },
    { "bool", &code_type_bool },
    { "breakpoint", &f_no_breakpoint },
    { "bytearray", &f_no_bytearray },
    { "bytes", &code_type_bytes },
    { "callable", &f_callable },
    { "chr", &f_chr },
    { "classmethod", &f_no_classmethod },
    { "compile", &f_no_compile },
    { "complex", &f_no_complex },
    { "delattr", &f_no_delattr },
    { "dict", &code_type_dict },
    { "dir", &f_no_dir },
    { "divmod", &f_divmod },
    { "enumerate", &code_type_enumerate },
    { "eval", &f_no_eval },
    { "exec", &f_no_exec },
    { "exit", &f_no_exit },
    { "filter", &code_type_filter },
    { "float", &code_type_float },
    { "format", &f_format },
    { "frozenset", &code_type_frozenset },
    { "getattr", &f_getattr },
    { "globals", &f_no_globals },
    { "hasattr", &f_hasattr },
    { "hash", &f_hash },
    { "help", &f_no_help },
    { "hex", &f_hex },
    { "id", &f_id },
    { "input", &f_no_input },
    { "int", &code_type_int },
    { "isinstance", &f_isinstance },
    { "issubclass", &f_issubclass },
    { "iter", &f_iter },
    { "len", &f_len },
    { "list", &code_type_list },
    { "locals", &f_no_locals },
    { "map", &code_type_map },
    { "max", &f_max },
    { "memoryview", &f_no_memoryview },
    { "min", &f_min },
    { "next", &f_next },
    { "object", &f_no_object },
    { "oct", &f_oct },
    { "open", &f_no_open },
    { "ord", &f_ord },
    { "pow", &f_pow },
    { "print", &f_print },
    { "property", &f_no_property },
    { "quit", &f_no_quit },
    { "range", &code_type_range },
    { "repr", &f_repr },
    { "reversed", &code_type_reversed },
    { "round", &f_round },
    { "set", &code_type_set },
    { "setattr", &f_no_setattr },
    { "slice", &code_type_slice },
    { "sorted", &f_sorted },
    { "staticmethod", &f_no_staticmethod },
    { "str", &code_type_str },
    { "sum", &f_sum },
    { "super", &f_no_super },
    { "tuple", &code_type_tuple },
    { "type", &code_type_type },
    { "vars", &f_no_vars },
    { "zip", &code_type_zip },
};

static int entry_cmp(const void *key, const void *e)
{
    return strcmp(key, ((const builtin_entry *)e)->name);
}

cv code_builtin_lookup(const char *name)
{
    const builtin_entry *e = bsearch(name, builtins, sizeof builtins / sizeof builtins[0],
                                     sizeof builtins[0], entry_cmp);
    if (e)
        return cv_of(e->obj);
    const code_type *t = code_exc_type_by_name(name);
    return t ? cv_of(t) : CV_NULL;
}
