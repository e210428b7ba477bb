/* Argument parsing for builtin functions, from a signature-like spec (see
 * code_val.h), with CPython's TypeError messages. */
#include "code/code_vm.h"

#include <stdarg.h>
#include <string.h>

#define ARGS_MAX 16

typedef struct param {
    const char *name;
    size_t len;
    bool posonly, kwonly, optional;
} param;

/* Splits the spec; returns the count or -1 if it is malformed (a bug). */
static int parse_spec(const char *spec, param *p)
{
    int n = 0;
    bool kwonly = false, optional = false;
    const char *s = spec;
    while (*s) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len == 1 && s[0] == '/') {
            for (int i = 0; i < n; i++)
                p[i].posonly = true;
        } else if (len == 1 && s[0] == '*') {
            kwonly = true;
        } else {
            if (s[0] == '|') {
                optional = true;
                s++;
                len--;
            }
            if (n == ARGS_MAX || len == 0)
                return -1;
            p[n++] = (param){s, len, false, kwonly, optional};
        }
        s += len + (e ? 1 : 0);
        if (!e)
            break;
    }
    return n;
}

int code_args(code_vm *vm, const char *fname, cv *args, size_t nargs, cv kwnames,
              const char *spec, ...)
{
    param p[ARGS_MAX];
    int np = parse_spec(spec, p);
    if (np < 0)
        return code_raise_i(vm, &code_exc_RuntimeError, "bad argument spec for %s()", fname);
    cv got[ARGS_MAX] = {0};
    size_t maxpos = 0, required = 0;
    for (int i = 0; i < np; i++) {
        if (!p[i].kwonly)
            maxpos++;
        if (!p[i].optional)
            required++;
    }
    if (nargs > maxpos) {
        if (maxpos == 0)
            return code_raise_i(vm, &code_exc_TypeError, "%s() takes no positional arguments",
                                fname);
        if (required == maxpos)
            return code_raise_i(vm, &code_exc_TypeError,
                                "%s() takes exactly %zu argument%s (%zu given)", fname, maxpos,
                                maxpos == 1 ? "" : "s", nargs);
        return code_raise_i(vm, &code_exc_TypeError, "%s() takes at most %zu argument%s (%zu given)",
                            fname, maxpos, maxpos == 1 ? "" : "s", nargs);
    }
    for (size_t i = 0; i < nargs; i++)
        got[i] = args[i];
    size_t nkw = kwnames ? ((code_tuple *)cv_obj(kwnames))->n : 0;
    for (size_t k = 0; k < nkw; k++) {
        cv kn = ((code_tuple *)cv_obj(kwnames))->v[k];
        const char *name = code_str_cstr(kn);
        size_t len = code_str_len(kn);
        int found = -1;
        for (int i = 0; i < np; i++)
            if (p[i].len == len && !memcmp(p[i].name, name, len)) {
                found = i;
                break;
            }
        if (found < 0 || p[found].posonly) {
            if (found >= 0)
                return code_raise_i(vm, &code_exc_TypeError,
                                    "%s() got some positional-only arguments passed as keyword "
                                    "arguments: '%s'", fname, name);
            return code_raise_i(vm, &code_exc_TypeError,
                                "%s() got an unexpected keyword argument '%s'", fname, name);
        }
        if (got[found])
            return code_raise_i(vm, &code_exc_TypeError,
                                "argument for %s() given by name ('%s') and position (%d)", fname,
                                name, found + 1);
        got[found] = args[nargs + k];
    }
    for (int i = 0; i < np; i++)
        if (!got[i] && !p[i].optional) {
            if (p[i].kwonly)
                return code_raise_i(vm, &code_exc_TypeError,
                                    "%s() missing required keyword-only argument: '%.*s'", fname,
                                    (int)p[i].len, p[i].name);
            return code_raise_i(vm, &code_exc_TypeError,
                                "%s() missing required argument '%.*s' (pos %d)", fname,
                                (int)p[i].len, p[i].name, i + 1);
        }
    va_list ap;
    va_start(ap, spec);
    for (int i = 0; i < np; i++) {
        cv *out = va_arg(ap, cv *);
        if (got[i])
            *out = got[i];
    }
    va_end(ap);
    return 0;
}

int code_args_nokw(code_vm *vm, const char *fname, size_t nargs, cv kwnames, size_t min,
                   size_t max)
{
    if (kwnames && ((code_tuple *)cv_obj(kwnames))->n)
        return code_raise_i(vm, &code_exc_TypeError, "%s() takes no keyword arguments", fname);
    if (nargs >= min && nargs <= max)
        return 0;
    if (min == max) {
        if (min == 0)
            return code_raise_i(vm, &code_exc_TypeError, "%s() takes no arguments (%zu given)",
                                fname, nargs);
        if (min == 1)
            return code_raise_i(vm, &code_exc_TypeError,
                                "%s() takes exactly one argument (%zu given)", fname, nargs);
        return code_raise_i(vm, &code_exc_TypeError, "%s expected %zu arguments, got %zu", fname,
                            min, nargs);
    }
    if (nargs < min)
        return code_raise_i(vm, &code_exc_TypeError, "%s expected at least %zu argument%s, got %zu",
                            fname, min, min == 1 ? "" : "s", nargs);
    return code_raise_i(vm, &code_exc_TypeError, "%s expected at most %zu argument%s, got %zu",
                        fname, max, max == 1 ? "" : "s", nargs);
}
