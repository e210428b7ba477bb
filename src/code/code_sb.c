/* A growing text buffer on the run's heap: repr, join and format build their
 * results in one. A failed growth raises MemoryError once and makes every
 * later call a no-op, so callers check only at the end (code_sb_finish). */
#include "code/code_vm.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void code_sb_init(code_sb *b, code_vm *vm)
{
    b->vm = vm;
    b->p = NULL;
    b->len = b->cap = 0;
    b->failed = false;
}

static int grow(code_sb *b, size_t need)
{
    if (b->failed)
        return -1;
    if (need <= b->cap - b->len)
        return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap - b->len < need + 1) {
        if (cap > SIZE_MAX / 2) {
            b->failed = true;
            code_raise_nomem(b->vm);
            return -1;
        }
        cap *= 2;
    }
    char *p = code_heap_realloc(b->vm, b->p, b->cap, cap);
    if (!p) {
        b->failed = true;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

int code_sb_add(code_sb *b, const char *s, size_t n)
{
    if (grow(b, n + 1))
        return -1;
    if (n)
        memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
    return 0;
}

int code_sb_addc(code_sb *b, const char *s) { return code_sb_add(b, s, strlen(s)); }

int code_sb_printf(code_sb *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char tmp[256];
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    if ((size_t)n < sizeof(tmp))
        return code_sb_add(b, tmp, (size_t)n);
    if (grow(b, (size_t)n + 1))
        return -1;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

static int add_value(code_sb *b, cv s)
{
    if (!s) {
        b->failed = true;
        return -1;
    }
    int r = code_sb_add(b, code_str_cstr(s), code_str_len(s));
    code_decref(b->vm, s);
    return r;
}

int code_sb_repr(code_sb *b, cv v)
{
    if (b->failed)
        return -1;
    return add_value(b, code_repr(b->vm, v));
}

int code_sb_str(code_sb *b, cv v)
{
    if (b->failed)
        return -1;
    return add_value(b, code_str_of(b->vm, v));
}

cv code_sb_finish(code_sb *b)
{
    if (b->failed) {
        code_sb_free(b);
        if (!b->vm->exc)
            code_raise_nomem(b->vm);
        return CV_NULL;
    }
    cv s = code_str_new(b->vm, b->p ? b->p : "", b->len);
    code_sb_free(b);
    return s;
}

void code_sb_free(code_sb *b)
{
    code_heap_free(b->vm, b->p, b->cap);
    b->p = NULL;
    b->len = b->cap = 0;
}
