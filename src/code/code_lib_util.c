/* Code mode's library: helpers shared by the builtins and the modules
 * (module dicts, UTF-8 offsets, keyword arguments, the per-run cache). */
#include <string.h>

#include "code/code_lib.h"

cv code_lib_refuse(code_vm *vm, const char *name)
{
    return code_raise(vm, &code_exc_NotImplementedError, "'%s' is not supported in code mode",
                      name);
}

int code_lib_set(code_vm *vm, cv dict, const char *name, cv v)
{
    cv k = code_str_from_cstr(vm, name);
    if (!k)
        return -1;
    int rc = code_dict_set(vm, dict, k, v);
    code_decref(vm, k);
    return rc;
}

int code_lib_set_steal(code_vm *vm, cv dict, const char *name, cv v)
{
    if (!v)
        return -1;
    int rc = code_lib_set(vm, dict, name, v);
    code_decref(vm, v);
    return rc;
}

bool code_lib_is_type(cv v)
{
    return !cv_is_small(v) && cv_obj(v)->type == &code_type_type;
}

bool code_lib_isinstance(cv v, const code_type *t)
{
    for (const code_type *c = cv_type(v); c; c = c->base)
        if (c == t)
            return true;
    return false;
}

size_t code_lib_u8_dec(const unsigned char *p, uint32_t *cp)
{
    unsigned c = p[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c < 0xE0) {
        *cp = ((c & 0x1Fu) << 6) | (p[1] & 0x3Fu);
        return 2;
    }
    if (c < 0xF0) {
        *cp = ((c & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
        return 3;
    }
    *cp = ((c & 0x07u) << 18) | ((p[1] & 0x3Fu) << 12) | ((p[2] & 0x3Fu) << 6) | (p[3] & 0x3Fu);
    return 4;
}

size_t code_lib_u8_enc(uint32_t cp, char *out)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

size_t code_lib_u8_offset(cv s, size_t i)
{
    const code_str *o = (const code_str *)cv_obj(s);
    if (o->ascii)
        return i;
    size_t off = 0;
    while (i-- > 0 && off < o->len) {
        off++;
        while (off < o->len && ((unsigned char)o->s[off] & 0xC0) == 0x80)
            off++;
    }
    return off;
}

size_t code_lib_u8_index(cv s, size_t off)
{
    const code_str *o = (const code_str *)cv_obj(s);
    if (o->ascii)
        return off;
    size_t n = 0;
    for (size_t k = 0; k < off && k < o->len; k++)
        if (((unsigned char)o->s[k] & 0xC0) != 0x80)
            n++;
    return n;
}

int code_lib_kw(code_vm *vm, const char *fname, cv *args, size_t nargs, cv kwnames,
                const char *const *names, cv *out)
{
    if (!kwnames)
        return 0;
    const code_tuple *kw = (const code_tuple *)cv_obj(kwnames);
    for (size_t i = 0; i < kw->n; i++) {
        const char *k = code_str_cstr(kw->v[i]);
        size_t j = 0;
        while (names[j] && strcmp(names[j], k) != 0)
            j++;
        if (!names[j])
            return code_raise_i(vm, &code_exc_TypeError,
                                "'%s' is an invalid keyword argument for %s()", k, fname);
        out[j] = args[nargs + i];
    }
    return 0;
}

cv code_lib_stop(code_vm *vm)
{
    cv e = code_exc_new(vm, &code_exc_StopIteration, CODE_EMPTY_TUPLE);
    return e ? code_raise_obj(vm, e) : CV_NULL;
}

cv code_lib_cache(code_vm *vm)
{
    if (!vm->builtins_cache && !(vm->builtins_cache = code_dict_new(vm)))
        return CV_NULL;
    return vm->builtins_cache;
}
