/* Weak stand-ins for the parts of code mode's runtime that the numbers'
 * tests touch but that other parts own (str, bytes, tuple, dict): just
 * enough for reprs and error messages. Once those parts are in cella_code
 * and linked, their strong definitions win. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "code/code_vm.h"
#include "code_num_stubs.h"

#define WEAK __attribute__((weak))

static cv str_repr(code_vm *vm, cv self)
{
    code_str *s = (code_str *)cv_obj(self);
    code_sb b;
    code_sb_init(&b, vm);
    code_sb_add(&b, "'", 1);
    for (size_t i = 0; i < s->len; i++) {
        unsigned char c = (unsigned char)s->s[i];
        if (c == '\'' || c == '\\')
            code_sb_printf(&b, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            code_sb_printf(&b, c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\x%02x", c);
        else
            code_sb_add(&b, (const char *)&c, 1);
    }
    code_sb_add(&b, "'", 1);
    return code_sb_finish(&b);
}

WEAK const code_type code_type_str = {
    .ob = {&code_type_type, CODE_RC_IMMORTAL, 0}, .name = "str", .kind = CODE_K_STR,
    .repr = str_repr,
};

WEAK cv code_str_new(code_vm *vm, const char *s, size_t n)
{
    code_str *o = code_obj_new(vm, &code_type_str, sizeof(code_str) + n + 1);
    if (!o)
        return CV_NULL;
    memcpy(o->s, s, n);
    o->s[n] = 0;
    o->len = n;
    o->ascii = true;
    for (size_t i = 0; i < n; i++) {
        if ((unsigned char)s[i] >= 0x80)
            o->ascii = false;
        if (((unsigned char)s[i] & 0xc0) != 0x80)
            o->nchars++;
    }
    return cv_of(o);
}

WEAK cv code_str_from_cstr(code_vm *vm, const char *s) { return code_str_new(vm, s, strlen(s)); }
WEAK cv code_str_intern(code_vm *vm, const char *s, size_t n) { return code_str_new(vm, s, n); }

WEAK cv code_str_fmt(code_vm *vm, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return code_str_new(vm, buf, n < (int)sizeof buf ? (size_t)n : sizeof buf - 1);
}

WEAK bool code_str_eq_cstr(cv s, const char *c)
{
    return cv_is(s, &code_type_str) && code_str_len(s) == strlen(c) &&
           !memcmp(code_str_cstr(s), c, code_str_len(s));
}

static cv bytes_repr(code_vm *vm, cv self)
{
    code_bytes *s = (code_bytes *)cv_obj(self);
    code_sb b;
    code_sb_init(&b, vm);
    code_sb_add(&b, "b'", 2);
    for (size_t i = 0; i < s->len; i++) {
        unsigned char c = s->s[i];
        if (c == '\'' || c == '\\')
            code_sb_printf(&b, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            code_sb_printf(&b, "\\x%02x", c);
        else
            code_sb_add(&b, (const char *)&c, 1);
    }
    code_sb_add(&b, "'", 1);
    return code_sb_finish(&b);
}

WEAK const code_type code_type_bytes = {
    .ob = {&code_type_type, CODE_RC_IMMORTAL, 0}, .name = "bytes", .kind = CODE_K_BYTES,
    .repr = bytes_repr,
};

WEAK cv code_bytes_new(code_vm *vm, const void *s, size_t n)
{
    code_bytes *o = code_obj_new(vm, &code_type_bytes, sizeof(code_bytes) + n + 1);
    if (!o)
        return CV_NULL;
    memcpy(o->s, s, n);
    o->s[n] = 0;
    o->len = n;
    return cv_of(o);
}

static void tuple_dealloc(code_vm *vm, code_obj *o)
{
    code_tuple *t = (code_tuple *)o;
    for (size_t i = 0; i < t->n; i++)
        code_decref(vm, t->v[i]);
}

static cv tuple_repr(code_vm *vm, cv self)
{
    code_tuple *t = (code_tuple *)cv_obj(self);
    code_sb b;
    code_sb_init(&b, vm);
    code_sb_add(&b, "(", 1);
    for (size_t i = 0; i < t->n; i++) {
        if (i)
            code_sb_add(&b, ", ", 2);
        cv r = code_repr(vm, t->v[i]);
        if (!r) {
            code_sb_free(&b);
            return CV_NULL;
        }
        code_sb_add(&b, code_str_cstr(r), code_str_len(r));
        code_decref(vm, r);
    }
    code_sb_add(&b, t->n == 1 ? ",)" : ")", t->n == 1 ? 2 : 1);
    return code_sb_finish(&b);
}

WEAK const code_type code_type_tuple = {
    .ob = {&code_type_type, CODE_RC_IMMORTAL, 0}, .name = "tuple", .kind = CODE_K_TUPLE,
    .dealloc = tuple_dealloc, .repr = tuple_repr,
};

WEAK cv code_tuple_new(code_vm *vm, size_t n)
{
    code_tuple *t = code_obj_new(vm, &code_type_tuple, sizeof(code_tuple) + n * sizeof(cv));
    if (!t)
        return CV_NULL;
    t->n = n;
    return cv_of(t);
}

WEAK cv code_tuple_pack(code_vm *vm, size_t n, ...)
{
    cv t = code_tuple_new(vm, n);
    if (!t)
        return CV_NULL;
    va_list ap;
    va_start(ap, n);
    for (size_t i = 0; i < n; i++)
        ((code_tuple *)cv_obj(t))->v[i] = code_incref(va_arg(ap, cv));
    va_end(ap);
    return t;
}

WEAK cv code_tuple_from(code_vm *vm, cv it)
{
    if (cv_is(it, &code_type_tuple))
        return code_incref(it);
    return code_raise(vm, &code_exc_TypeError, "'%s' object is not iterable", code_type_name(it));
}

WEAK cv code_list_from(code_vm *vm, cv it)
{
    return code_raise(vm, &code_exc_NotImplementedError, "list() in the numbers' test stubs");
}

/* The math module's members, recorded by name: the "dict" is ignored. */
char stub_dict_keys[128][32];
cv stub_dict_vals[128];
int stub_dict_n;

WEAK int code_dict_set(code_vm *vm, cv d, cv key, cv value)
{
    (void)vm;
    (void)d;
    if (stub_dict_n < 128) {
        snprintf(stub_dict_keys[stub_dict_n], 32, "%s", code_str_cstr(key));
        stub_dict_vals[stub_dict_n++] = value;
    }
    return 0;
}

WEAK cv code_dict_new(code_vm *vm)
{
    (void)vm;
    stub_dict_n = 0;
    return CODE_NONE;
}

WEAK int code_dict_get_cstr(code_vm *vm, cv d, const char *key, cv *out)
{
    (void)vm;
    (void)d;
    *out = CV_NULL;
    for (int i = 0; i < stub_dict_n; i++)
        if (!strcmp(stub_dict_keys[i], key))
            *out = stub_dict_vals[i];
    return 0;
}
