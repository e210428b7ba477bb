/* Stand-ins for the parts of int, bool and str the container tests need,
 * for as long as code_int.c and code_str.c are not in the library: weak, so
 * the real ones win as soon as they are linked. Small ints only; str
 * compared and hashed by bytes (FNV-1a), repr with single quotes and no
 * escapes. */
#ifndef TEST_CODE_CONT_STUBS_H
#define TEST_CODE_CONT_STUBS_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "code/code_val.h"
#include "code/code_vm.h"

#define WEAK __attribute__((weak))

WEAK cv code_int_from_i64(code_vm *vm, int64_t i)
{
    (void)vm;
    return cv_from_small(i);
}

WEAK int code_int_to_i64(cv v, int64_t *out)
{
    if (cv_is_small(v)) {
        *out = cv_small(v);
        return 1;
    }
    if (v == CODE_TRUE || v == CODE_FALSE) {
        *out = v == CODE_TRUE;
        return 1;
    }
    return 0;
}

WEAK int code_int_sign(cv v)
{
    int64_t i = 0;
    code_int_to_i64(v, &i);
    return i < 0 ? -1 : i > 0;
}

static cv stub_int_repr(code_vm *vm, cv self)
{
    int64_t i = 0;
    code_int_to_i64(self, &i);
    if (cv_is(self, &code_type_bool))
        return code_str_from_cstr(vm, i ? "True" : "False");
    return code_str_fmt(vm, "%lld", (long long)i);
}

static int stub_int_hash(code_vm *vm, cv self, uint64_t *h)
{
    (void)vm;
    int64_t i = 0;
    code_int_to_i64(self, &i);
    *h = (uint64_t)(i == -1 ? -2 : i);
    return 0;
}

static cv stub_int_compare(code_vm *vm, cv a, cv b, int op)
{
    (void)vm;
    int64_t x, y;
    if (!code_int_to_i64(a, &x) || !code_int_to_i64(b, &y))
        return CODE_NOTIMPL;
    switch (op) {
    case CODE_CMP_LT: return code_bool(x < y);
    case CODE_CMP_LE: return code_bool(x <= y);
    case CODE_CMP_EQ: return code_bool(x == y);
    case CODE_CMP_NE: return code_bool(x != y);
    case CODE_CMP_GT: return code_bool(x > y);
    default: return code_bool(x >= y);
    }
}

WEAK const code_type code_type_int = {
    .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},
    .name = "int",
    .kind = CODE_K_INT,
    .repr = stub_int_repr,
    .hash = stub_int_hash,
    .compare = stub_int_compare,
};

WEAK const code_type code_type_bool = {
    .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},
    .name = "bool",
    .base = &code_type_int,
    .kind = CODE_K_BOOL,
    .repr = stub_int_repr,
    .hash = stub_int_hash,
    .compare = stub_int_compare,
};

static cv stub_str_repr(code_vm *vm, cv self)
{
    return code_str_fmt(vm, "'%s'", code_str_cstr(self));
}

static int stub_str_hash(code_vm *vm, cv self, uint64_t *h)
{
    (void)vm;
    uint64_t x = 1469598103934665603ULL;
    for (size_t i = 0; i < code_str_len(self); i++)
        x = (x ^ (unsigned char)code_str_cstr(self)[i]) * 1099511628211ULL;
    *h = x == UINT64_MAX ? 7 : x;
    return 0;
}

static cv stub_str_compare(code_vm *vm, cv a, cv b, int op)
{
    (void)vm;
    if (!cv_is(a, &code_type_str) || !cv_is(b, &code_type_str))
        return CODE_NOTIMPL;
    int c = strcmp(code_str_cstr(a), code_str_cstr(b));
    switch (op) {
    case CODE_CMP_LT: return code_bool(c < 0);
    case CODE_CMP_LE: return code_bool(c <= 0);
    case CODE_CMP_EQ: return code_bool(c == 0);
    case CODE_CMP_NE: return code_bool(c != 0);
    case CODE_CMP_GT: return code_bool(c > 0);
    default: return code_bool(c >= 0);
    }
}

/* One-character strings, for list("abc"). */
typedef struct stub_str_iter {
    code_iterobj it;
    cv s;
    size_t i;
} stub_str_iter;

static cv stub_str_iter_next(code_vm *vm, cv self)
{
    stub_str_iter *it = (stub_str_iter *)cv_obj(self);
    if (it->i >= code_str_len(it->s))
        return CV_NULL;
    return code_str_new(vm, code_str_cstr(it->s) + it->i++, 1);
}

static void stub_str_iter_dealloc(code_vm *vm, code_obj *o)
{
    code_decref(vm, ((stub_str_iter *)o)->s);
}

static cv stub_iter_self(code_vm *vm, cv self)
{
    (void)vm;
    return code_incref(self);
}

static const code_type stub_str_iter_type = {
    .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},
    .name = "str_ascii_iterator",
    .kind = CODE_K_ITER,
    .dealloc = stub_str_iter_dealloc,
    .iter = stub_iter_self,
    .next = stub_str_iter_next,
};

static cv stub_str_iter_new(code_vm *vm, cv self)
{
    stub_str_iter *it = code_obj_new(vm, &stub_str_iter_type, sizeof(*it));
    if (!it)
        return CV_NULL;
    it->s = code_incref(self);
    return cv_of(it);
}

WEAK const code_type code_type_str = {
    .ob = {.type = &code_type_type, .rc = CODE_RC_IMMORTAL},
    .name = "str",
    .kind = CODE_K_STR,
    .repr = stub_str_repr,
    .hash = stub_str_hash,
    .compare = stub_str_compare,
    .iter = stub_str_iter_new,
};

WEAK cv code_str_new(code_vm *vm, const char *s, size_t n)
{
    code_str *o = code_obj_new(vm, &code_type_str, sizeof(code_str) + n + 1);
    if (!o)
        return CV_NULL;
    memcpy(o->s, s, n);
    o->s[n] = 0;
    o->len = o->nchars = n;
    o->ascii = true;
    return cv_of(o);
}

WEAK cv code_str_from_cstr(code_vm *vm, const char *s)
{
    return code_str_new(vm, s, strlen(s));
}

WEAK cv code_str_fmt(code_vm *vm, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return code_str_new(vm, buf, n < 0 ? 0 : (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

WEAK bool code_str_eq_cstr(cv s, const char *c)
{
    return cv_is(s, &code_type_str) && strcmp(code_str_cstr(s), c) == 0;
}

#endif
