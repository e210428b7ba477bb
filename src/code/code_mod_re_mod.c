/* The re module's functions (re.compile, re.search, ... re.purge) and its
 * members: each compiles its pattern through the run's cache
 * (code_re_get_pattern) and hands over to the Pattern's implementation. */
#include "code/code_re.h"

static cv mod_compile(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    cv pattern, flags = CV_NULL;
    if (code_args(vm, "compile", args, nargs, kwnames, "pattern,|flags", &pattern, &flags) < 0)
        return CV_NULL;
    return code_re_get_pattern(vm, pattern, flags);
}

static cv mod_search_kind(code_vm *vm, cv *args, size_t nargs, cv kwnames, int kind)
{
    cv pattern, string, flags = CV_NULL;
    if (code_args(vm, code_re_search_names[kind], args, nargs, kwnames, "pattern,string,|flags",
                  &pattern, &string, &flags) < 0)
        return CV_NULL;
    cv p = code_re_get_pattern(vm, pattern, flags);
    if (!p)
        return CV_NULL;
    cv r = code_re_search(vm, (re_pattern *)cv_obj(p), string, CV_NULL, CV_NULL, kind);
    code_decref(vm, p);
    return r;
}

static cv mod_search(code_vm *vm, cv *a, size_t n, cv kw) { return mod_search_kind(vm, a, n, kw, 0); }
static cv mod_match(code_vm *vm, cv *a, size_t n, cv kw) { return mod_search_kind(vm, a, n, kw, 1); }
static cv mod_fullmatch(code_vm *vm, cv *a, size_t n, cv kw) { return mod_search_kind(vm, a, n, kw, 2); }

static cv mod_find(code_vm *vm, cv *args, size_t nargs, cv kwnames, bool iter)
{
    cv pattern, string, flags = CV_NULL;
    if (code_args(vm, iter ? "finditer" : "findall", args, nargs, kwnames,
                  "pattern,string,|flags", &pattern, &string, &flags) < 0)
        return CV_NULL;
    cv p = code_re_get_pattern(vm, pattern, flags);
    if (!p)
        return CV_NULL;
    re_pattern *rp = (re_pattern *)cv_obj(p);
    cv r = iter ? code_re_finditer(vm, rp, string, CV_NULL, CV_NULL)
                : code_re_findall(vm, rp, string, CV_NULL, CV_NULL);
    code_decref(vm, p);
    return r;
}

static cv mod_findall(code_vm *vm, cv *a, size_t n, cv kw) { return mod_find(vm, a, n, kw, false); }
static cv mod_finditer(code_vm *vm, cv *a, size_t n, cv kw) { return mod_find(vm, a, n, kw, true); }

static cv mod_sub_kind(code_vm *vm, cv *args, size_t nargs, cv kwnames, bool subn)
{
    cv pattern, repl, string, count = CV_NULL, flags = CV_NULL;
    if (code_args(vm, subn ? "subn" : "sub", args, nargs, kwnames,
                  "pattern,repl,string,|count,flags", &pattern, &repl, &string, &count,
                  &flags) < 0)
        return CV_NULL;
    cv p = code_re_get_pattern(vm, pattern, flags);
    if (!p)
        return CV_NULL;
    cv r = code_re_sub(vm, (re_pattern *)cv_obj(p), repl, string, count, subn);
    code_decref(vm, p);
    return r;
}

static cv mod_sub(code_vm *vm, cv *a, size_t n, cv kw) { return mod_sub_kind(vm, a, n, kw, false); }
static cv mod_subn(code_vm *vm, cv *a, size_t n, cv kw) { return mod_sub_kind(vm, a, n, kw, true); }

static cv mod_split(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    cv pattern, string, maxsplit = CV_NULL, flags = CV_NULL;
    if (code_args(vm, "split", args, nargs, kwnames, "pattern,string,|maxsplit,flags", &pattern,
                  &string, &maxsplit, &flags) < 0)
        return CV_NULL;
    cv p = code_re_get_pattern(vm, pattern, flags);
    if (!p)
        return CV_NULL;
    cv r = code_re_split(vm, (re_pattern *)cv_obj(p), string, maxsplit);
    code_decref(vm, p);
    return r;
}

static cv mod_purge(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "purge", nargs, kwnames, 0, 0) < 0 || !code_re_cache(vm, true))
        return CV_NULL;
    return CODE_NONE;
}

static CODE_CFUNC(f_compile, "compile", mod_compile);
static CODE_CFUNC(f_search, "search", mod_search);
static CODE_CFUNC(f_match, "match", mod_match);
static CODE_CFUNC(f_fullmatch, "fullmatch", mod_fullmatch);
static CODE_CFUNC(f_findall, "findall", mod_findall);
static CODE_CFUNC(f_finditer, "finditer", mod_finditer);
static CODE_CFUNC(f_sub, "sub", mod_sub);
static CODE_CFUNC(f_subn, "subn", mod_subn);
static CODE_CFUNC(f_split, "split", mod_split);
static CODE_CFUNC(f_escape, "escape", code_re_escape);
static CODE_CFUNC(f_purge, "purge", mod_purge);

int code_mod_re_init(code_vm *vm, cv dict)
{
    static const code_cfunc_obj *const funcs[] = {
        &f_compile, &f_search, &f_match, &f_fullmatch, &f_findall, &f_finditer, &f_sub,
        &f_subn, &f_split, &f_escape, &f_purge,
    };
    for (size_t i = 0; i < sizeof funcs / sizeof funcs[0]; i++)
        if (code_lib_set(vm, dict, funcs[i]->name, cv_of(funcs[i])) < 0)
            return -1;
    static const struct { const char *name; int v; } consts[] = {
        { "I", RE_I }, { "IGNORECASE", RE_I }, { "L", RE_L }, { "LOCALE", RE_L },
        { "M", RE_M }, { "MULTILINE", RE_M }, { "S", RE_S }, { "DOTALL", RE_S },
        { "U", RE_U }, { "UNICODE", RE_U }, { "X", RE_X }, { "VERBOSE", RE_X },
        { "A", RE_A }, { "ASCII", RE_A }, { "DEBUG", RE_DEBUG }, { "NOFLAG", 0 },
    };
    for (size_t i = 0; i < sizeof consts / sizeof consts[0]; i++)
        if (code_lib_set(vm, dict, consts[i].name, cv_from_small(consts[i].v)) < 0)
            return -1;
    if (code_lib_set(vm, dict, "error", cv_of(&code_exc_re_error)) < 0 ||
        code_lib_set(vm, dict, "Pattern", cv_of(&code_type_re_pattern)) < 0 ||
        code_lib_set(vm, dict, "Match", cv_of(&code_type_re_match)) < 0)
        return -1;
    return 0;
}
