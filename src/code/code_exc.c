/* Exceptions: the builtin hierarchy (CPython 3.11's, restricted to what code
 * mode can raise or catch), instances, and raising. */
#include "code/code_lib.h"
#include "code/code_vm.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void exc_dealloc(code_vm *vm, code_obj *o)
{
    code_exc *e = (code_exc *)o;
    code_decref(vm, e->args);
    code_decref(vm, e->cause);
    code_decref(vm, e->context);
    code_decref(vm, e->attrs);
}

int code_exc_set_attr(code_vm *vm, cv exc, const char *name, cv value)
{
    code_exc *e = (code_exc *)cv_obj(exc);
    if (!e->attrs && !(e->attrs = code_dict_new(vm)))
        return -1;
    cv key = code_str_from_cstr(vm, name);
    if (!key)
        return -1;
    int rc = code_dict_set(vm, e->attrs, key, value);
    code_decref(vm, key);
    return rc;
}

/* An extra attribute (borrowed), or CV_NULL. The dict is small (a few
 * str keys), so looking up makes no key object and cannot fail. */
static cv exc_attr(code_vm *vm, cv exc, const char *name)
{
    cv a = ((code_exc *)cv_obj(exc))->attrs, v = CV_NULL;
    if (a && code_dict_get_cstr(vm, a, name, &v) < 0)
        return CV_NULL;          /* not reached: see above */
    return v;
}

/* str() of a UnicodeDecodeError or UnicodeEncodeError made by the codecs:
 * CPython builds it from the attributes, its args being (encoding, object,
 * start, end, reason). CV_NULL with no exception if they are not all there. */
static cv unicode_exc_str(code_vm *vm, cv exc, bool decode)
{
    cv enc = exc_attr(vm, exc, "encoding"), obj = exc_attr(vm, exc, "object");
    cv start = exc_attr(vm, exc, "start"), end = exc_attr(vm, exc, "end");
    cv reason = exc_attr(vm, exc, "reason");
    int64_t s, e;
    if (!enc || !obj || !start || !end || !reason || !cv_is(enc, &code_type_str) ||
        !cv_is(reason, &code_type_str) || !code_int_to_i64(start, &s) ||
        !code_int_to_i64(end, &e))
        return CV_NULL;
    if (decode && cv_is(obj, &code_type_bytes) && e == s + 1 && s >= 0 &&
        (size_t)s < ((code_bytes *)cv_obj(obj))->len)
        return code_str_fmt(vm, "'%s' codec can't decode byte 0x%02x in position %lld: %s",
                            code_str_cstr(enc), ((code_bytes *)cv_obj(obj))->s[s],
                            (long long)s, code_str_cstr(reason));
    if (!decode && cv_is(obj, &code_type_str) && e == s + 1 && s >= 0 &&
        (size_t)s < ((code_str *)cv_obj(obj))->nchars) {
        /* The character at code point s, escaped as CPython does. */
        const unsigned char *p = (const unsigned char *)code_str_cstr(obj);
        for (int64_t k = 0; k < s; k++)
            do
                p++;
            while ((*p & 0xC0) == 0x80);
        uint32_t c = *p < 0x80 ? *p : *p < 0xE0 ? *p & 0x1F : *p < 0xF0 ? *p & 0x0F : *p & 0x07;
        for (int k = 1; k < 4 && (p[k] & 0xC0) == 0x80; k++)
            c = c << 6 | (p[k] & 0x3F);
        char ch[16];
        if (c < 0x100)
            snprintf(ch, sizeof(ch), "\\x%02x", c);
        else if (c < 0x10000)
            snprintf(ch, sizeof(ch), "\\u%04x", c);
        else
            snprintf(ch, sizeof(ch), "\\U%08x", c);
        return code_str_fmt(vm, "'%s' codec can't encode character '%s' in position %lld: %s",
                            code_str_cstr(enc), ch, (long long)s, code_str_cstr(reason));
    }
    return code_str_fmt(vm, "'%s' codec can't %s in position %lld-%lld: %s",
                        code_str_cstr(enc), decode ? "decode bytes" : "encode characters",
                        (long long)s, (long long)(e - 1), code_str_cstr(reason));
}

static void exc_traverse(code_vm *vm, cv self, code_visit_fn visit, void *arg)
{
    const code_exc *e = (const code_exc *)cv_obj(self);
    visit(vm, e->args, arg);
    visit(vm, e->cause, arg);
    visit(vm, e->context, arg);
    visit(vm, e->attrs, arg);
}

static void exc_clear(code_vm *vm, cv self)
{
    code_exc *e = (code_exc *)cv_obj(self);
    code_setref(vm, &e->args, CODE_EMPTY_TUPLE);
    code_setref(vm, &e->cause, CV_NULL);
    code_setref(vm, &e->context, CV_NULL);
    code_setref(vm, &e->attrs, CV_NULL);
}

static size_t exc_nargs(cv exc)
{
    code_exc *e = (code_exc *)cv_obj(exc);
    return e->args ? ((code_tuple *)cv_obj(e->args))->n : 0;
}

static cv exc_arg0(cv exc)
{
    return ((code_tuple *)cv_obj(((code_exc *)cv_obj(exc))->args))->v[0];
}

cv code_exc_str(code_vm *vm, cv exc)
{
    bool dec = code_type_is_sub(cv_type(exc), &code_exc_UnicodeDecodeError);
    if (dec || code_type_is_sub(cv_type(exc), &code_exc_UnicodeEncodeError)) {
        cv s = unicode_exc_str(vm, exc, dec);
        if (s || vm->exc)
            return s;
    }
    size_t n = exc_nargs(exc);
    if (n == 0)
        return code_str_new(vm, "", 0);
    if (n == 1) {
        /* KeyError('a') shows as 'a': the key's repr, as CPython. */
        if (code_type_is_sub(cv_type(exc), &code_exc_KeyError))
            return code_repr(vm, exc_arg0(exc));
        return code_str_of(vm, exc_arg0(exc));
    }
    return code_repr(vm, ((code_exc *)cv_obj(exc))->args);
}

static cv exc_repr(code_vm *vm, cv self)
{
    code_sb b;
    code_sb_init(&b, vm);
    code_sb_addc(&b, cv_type(self)->name);
    size_t n = exc_nargs(self);
    if (n == 1) {
        code_sb_addc(&b, "(");
        code_sb_repr(&b, exc_arg0(self));
        code_sb_addc(&b, ")");
    } else if (n == 0) {
        code_sb_addc(&b, "()");
    } else {
        code_sb_repr(&b, ((code_exc *)cv_obj(self))->args);
    }
    return code_sb_finish(&b);
}

static cv exc_getattr(code_vm *vm, cv self, const char *name)
{
    code_exc *e = (code_exc *)cv_obj(self);
    cv a = exc_attr(vm, self, name);
    if (a)
        return code_incref(a);
    if (!strcmp(name, "args"))
        return code_incref(e->args ? e->args : CODE_EMPTY_TUPLE);
    if (!strcmp(name, "__cause__"))
        return code_incref(e->cause ? e->cause : CODE_NONE);
    if (!strcmp(name, "__context__"))
        return code_incref(e->context ? e->context : CODE_NONE);
    if (!strcmp(name, "__suppress_context__"))
        return code_bool(e->suppress_context);
    if (!strcmp(name, "__class__"))   /* a reference: host-named types are on the heap */
        return code_incref(cv_of(cv_type(self)));
    /* StopIteration.value, and the message of the errors that have one. */
    if (!strcmp(name, "value") && code_type_is_sub(cv_type(self), &code_exc_StopIteration))
        return code_incref(exc_nargs(self) ? exc_arg0(self) : CODE_NONE);
    if (!strcmp(name, "msg") && exc_nargs(self) &&
        (code_type_is_sub(cv_type(self), &code_exc_SyntaxError) ||
         code_type_is_sub(cv_type(self), &code_exc_JSONDecodeError) ||
         code_type_is_sub(cv_type(self), &code_exc_re_error)))
        return code_incref(exc_arg0(self));
    return CV_NULL;
}

static cv exc_type_new(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kw)
{
    if (kw)
        return code_raise(vm, &code_exc_TypeError, "%s() takes no keyword arguments", t->name);
    cv tup = code_tuple_new(vm, nargs);
    if (!tup)
        return CV_NULL;
    for (size_t i = 0; i < nargs; i++)
        ((code_tuple *)cv_obj(tup))->v[i] = code_incref(args[i]);
    return code_exc_new(vm, t, tup);
}

/* Not by address: see code_hash_cstr. */
static int exc_hash(code_vm *vm, cv self, uint64_t *h)
{
    (void)vm;
    *h = code_hash_cstr(cv_type(self)->name) ^ (uint64_t)((code_exc *)cv_obj(self))->line;
    return 0;
}

static cv exc_compare(code_vm *vm, cv a, cv b, int op)
{
    (void)vm;
    if (op == CODE_CMP_EQ)
        return code_bool(a == b);
    if (op == CODE_CMP_NE)
        return code_bool(a != b);
    return CODE_NOTIMPL;
}

/* UnicodeDecodeError(encoding, object, start, end, reason) and
 * UnicodeEncodeError(...) made by the program: checked as CPython checks
 * them, the arguments kept as attributes too (str() is made from them). */
static cv unicode_exc_new(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kw)
{
    if (kw && ((code_tuple *)cv_obj(kw))->n)
        return code_raise(vm, &code_exc_TypeError, "%s() takes no keyword arguments", t->name);
    if (nargs != 5)
        return code_raise(vm, &code_exc_TypeError, "function takes exactly 5 arguments (%zu given)",
                          nargs);
    bool dec = code_type_is_sub(t, &code_exc_UnicodeDecodeError);
    int64_t unused;
    if (!cv_is(args[0], &code_type_str))
        return code_raise(vm, &code_exc_TypeError, "argument 1 must be str, not %s",
                          code_type_name(args[0]));
    if (dec && !cv_is(args[1], &code_type_bytes))
        return code_raise(vm, &code_exc_TypeError, "a bytes-like object is required, not '%s'",
                          code_type_name(args[1]));
    if (!dec && !cv_is(args[1], &code_type_str))
        return code_raise(vm, &code_exc_TypeError, "argument 2 must be str, not %s",
                          code_type_name(args[1]));
    if (code_as_i64(vm, args[2], &unused) < 0 || code_as_i64(vm, args[3], &unused) < 0)
        return CV_NULL;
    if (!cv_is(args[4], &code_type_str))
        return code_raise(vm, &code_exc_TypeError, "argument 5 must be str, not %s",
                          code_type_name(args[4]));
    cv e = exc_type_new(vm, t, args, nargs, CV_NULL);
    static const char *const names[5] = { "encoding", "object", "start", "end", "reason" };
    for (int k = 0; e && k < 5; k++)
        if (code_exc_set_attr(vm, e, names[k], args[k]) < 0) {
            code_decref(vm, e);
            e = CV_NULL;
        }
    return e;
}

#define EXC_NEW(var, pyname, parent, newfn)                                       \
    const code_type var = {                                                       \
        .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},                  \
        .name = pyname, .base = parent, .kind = CODE_K_EXC, .dealloc = exc_dealloc, \
        .traverse = exc_traverse, .clear = exc_clear, \
        .repr = exc_repr, .str = code_exc_str, .hash = exc_hash,                  \
        .compare = exc_compare, .getattr = exc_getattr, .new = newfn,             \
    }
#define EXC(var, pyname, parent) EXC_NEW(var, pyname, parent, exc_type_new)

EXC(code_exc_BaseException, "BaseException", NULL);
EXC(code_exc_Exception, "Exception", &code_exc_BaseException);
EXC(code_exc_KeyboardInterrupt, "KeyboardInterrupt", &code_exc_BaseException);
EXC(code_exc_GeneratorExit, "GeneratorExit", &code_exc_BaseException);
EXC(code_exc_SystemExit, "SystemExit", &code_exc_BaseException);
EXC(code_exc_ArithmeticError, "ArithmeticError", &code_exc_Exception);
EXC(code_exc_ZeroDivisionError, "ZeroDivisionError", &code_exc_ArithmeticError);
EXC(code_exc_OverflowError, "OverflowError", &code_exc_ArithmeticError);
EXC(code_exc_LookupError, "LookupError", &code_exc_Exception);
EXC(code_exc_IndexError, "IndexError", &code_exc_LookupError);
EXC(code_exc_KeyError, "KeyError", &code_exc_LookupError);
EXC(code_exc_ValueError, "ValueError", &code_exc_Exception);
EXC(code_exc_UnicodeError, "UnicodeError", &code_exc_ValueError);
EXC_NEW(code_exc_UnicodeDecodeError, "UnicodeDecodeError", &code_exc_UnicodeError,
        unicode_exc_new);
EXC_NEW(code_exc_UnicodeEncodeError, "UnicodeEncodeError", &code_exc_UnicodeError,
        unicode_exc_new);
EXC(code_exc_TypeError, "TypeError", &code_exc_Exception);
EXC(code_exc_NameError, "NameError", &code_exc_Exception);
EXC(code_exc_UnboundLocalError, "UnboundLocalError", &code_exc_NameError);
EXC(code_exc_AttributeError, "AttributeError", &code_exc_Exception);
EXC(code_exc_RuntimeError, "RuntimeError", &code_exc_Exception);
EXC(code_exc_NotImplementedError, "NotImplementedError", &code_exc_RuntimeError);
EXC(code_exc_RecursionError, "RecursionError", &code_exc_RuntimeError);
EXC(code_exc_MemoryError, "MemoryError", &code_exc_Exception);
EXC(code_exc_OSError, "OSError", &code_exc_Exception);
EXC(code_exc_TimeoutError, "TimeoutError", &code_exc_OSError);
EXC(code_exc_FileNotFoundError, "FileNotFoundError", &code_exc_OSError);
EXC(code_exc_PermissionError, "PermissionError", &code_exc_OSError);
EXC(code_exc_AssertionError, "AssertionError", &code_exc_Exception);
EXC(code_exc_StopIteration, "StopIteration", &code_exc_Exception);
EXC(code_exc_StopAsyncIteration, "StopAsyncIteration", &code_exc_Exception);
EXC(code_exc_ImportError, "ImportError", &code_exc_Exception);
EXC(code_exc_ModuleNotFoundError, "ModuleNotFoundError", &code_exc_ImportError);
EXC(code_exc_SyntaxError, "SyntaxError", &code_exc_Exception);
/* JSONDecodeError(msg, doc, pos) sets attributes (code_mod_json_dec.c). */
EXC_NEW(code_exc_JSONDecodeError, "JSONDecodeError", &code_exc_ValueError, code_json_exc_new);
EXC(code_exc_re_error, "error", &code_exc_Exception);

static const code_type *const exc_all[] = {
    &code_exc_BaseException, &code_exc_Exception, &code_exc_KeyboardInterrupt,
    &code_exc_GeneratorExit, &code_exc_SystemExit, &code_exc_ArithmeticError,
    &code_exc_ZeroDivisionError, &code_exc_OverflowError, &code_exc_LookupError,
    &code_exc_IndexError, &code_exc_KeyError, &code_exc_ValueError, &code_exc_UnicodeError,
    &code_exc_UnicodeDecodeError, &code_exc_UnicodeEncodeError, &code_exc_TypeError,
    &code_exc_NameError, &code_exc_UnboundLocalError, &code_exc_AttributeError,
    &code_exc_RuntimeError, &code_exc_NotImplementedError, &code_exc_RecursionError,
    &code_exc_MemoryError, &code_exc_OSError, &code_exc_TimeoutError,
    &code_exc_FileNotFoundError, &code_exc_PermissionError, &code_exc_AssertionError,
    &code_exc_StopIteration, &code_exc_StopAsyncIteration, &code_exc_ImportError,
    &code_exc_ModuleNotFoundError, &code_exc_SyntaxError,
};

const code_type *code_exc_type_by_name(const char *name)
{
    for (size_t i = 0; i < sizeof(exc_all) / sizeof(exc_all[0]); i++)
        if (!strcmp(exc_all[i]->name, name))
            return exc_all[i];
    return NULL;
}

bool code_type_is_sub(const code_type *t, const code_type *t2)
{
    for (; t; t = t->base)
        if (t == t2)
            return true;
    return false;
}

cv code_exc_new(code_vm *vm, const code_type *t, cv args)
{
    code_exc *e = code_obj_new(vm, t, sizeof(code_exc));
    if (!e) {
        code_decref(vm, args);
        return CV_NULL;
    }
    e->args = args;
    e->line = vm->line;
    return cv_of(e);
}

cv code_raise_obj(code_vm *vm, cv exc)
{
    if (cv_kind(exc) == CODE_K_TYPE) {
        const code_type *t = (const code_type *)cv_obj(exc);
        if (t->kind != CODE_K_EXC) {
            code_decref(vm, exc);
            return code_raise(vm, &code_exc_TypeError,
                              "exceptions must derive from BaseException");
        }
        cv inst = code_exc_new(vm, t, CODE_EMPTY_TUPLE);
        code_decref(vm, exc);
        if (!inst)
            return CV_NULL;
        exc = inst;
    } else if (cv_kind(exc) != CODE_K_EXC) {
        code_decref(vm, exc);
        return code_raise(vm, &code_exc_TypeError, "exceptions must derive from BaseException");
    }
    code_setref(vm, &vm->exc, exc);
    return CV_NULL;
}

cv code_raise_nomem(code_vm *vm)
{
    code_setref(vm, &vm->exc, code_incref(vm->nomem));
    return CV_NULL;
}

static cv raise_v(code_vm *vm, const code_type *t, const char *fmt, va_list ap)
{
    char small[512];
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    cv msg;
    if (n < 0) {
        msg = code_str_from_cstr(vm, "");
    } else if ((size_t)n < sizeof(small)) {
        msg = code_str_new(vm, small, (size_t)n);
    } else {
        char *big = code_heap_alloc(vm, (size_t)n + 1);
        msg = CV_NULL;
        if (big) {
            vsnprintf(big, (size_t)n + 1, fmt, ap2);
            msg = code_str_new(vm, big, (size_t)n);
            code_heap_free(vm, big, (size_t)n + 1);
        }
    }
    va_end(ap2);
    if (!msg)
        return code_raise_nomem(vm);
    cv args = code_tuple_new(vm, 1);
    if (!args) {
        code_decref(vm, msg);
        return code_raise_nomem(vm);
    }
    ((code_tuple *)cv_obj(args))->v[0] = msg;
    cv e = code_exc_new(vm, t, args);
    if (!e)
        return code_raise_nomem(vm);
    return code_raise_obj(vm, e);
}

cv code_raise(code_vm *vm, const code_type *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    raise_v(vm, t, fmt, ap);
    va_end(ap);
    return CV_NULL;
}

int code_raise_i(code_vm *vm, const code_type *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    raise_v(vm, t, fmt, ap);
    va_end(ap);
    return -1;
}

bool code_exc_matches(code_vm *vm, const code_type *t)
{
    return vm->exc && code_type_is_sub(cv_type(vm->exc), t);
}

cv code_exc_fetch(code_vm *vm)
{
    cv e = vm->exc;
    vm->exc = CV_NULL;
    return e;
}

void code_exc_clear(code_vm *vm)
{
    code_setref(vm, &vm->exc, CV_NULL);
}
