/* Code mode's library: the builtins, import and the json, re and datetime
 * modules. Private declarations shared by code_builtins*.c, code_import.c and
 * code_mod_*.c. */
#ifndef CELLA_CODE_LIB_H
#define CELLA_CODE_LIB_H

#include "code/code_val.h"
#include "code/code_vm.h"

/* Header of a static, immortal object (types, builtin functions). */
#define CODE_STATIC_HDR(t) { (t), CODE_RC_IMMORTAL, 0 }
/* A static builtin function object. */
#define CODE_CFUNC(var, pyname, fn)                                                 \
    code_cfunc_obj var = { CODE_STATIC_HDR(&code_type_cfunc), (pyname), (fn), CV_NULL }

/* ---- helpers (code_builtins.c) ------------------------------------------- */

/* NotImplementedError "'name' is not supported in code mode". */
cv code_lib_refuse(code_vm *vm, const char *name);
/* d[name] = v for a module's dict (v borrowed). */
int code_lib_set(code_vm *vm, cv dict, const char *name, cv v);
/* The same, stealing v (which may be CV_NULL: then -1, the error set). */
int code_lib_set_steal(code_vm *vm, cv dict, const char *name, cv v);
/* True when v is a type object (a static type or a heap exception type). */
bool code_lib_is_type(cv v);
static inline const code_type *code_lib_as_type(cv v) { return (const code_type *)cv_obj(v); }
/* isinstance(v, t) for one type. */
bool code_lib_isinstance(cv v, const code_type *t);
/* Byte offset of code point i in s (i <= nchars), and back. */
size_t code_lib_u8_offset(cv s, size_t i);
size_t code_lib_u8_index(cv s, size_t off);
/* Decodes one UTF-8 code point at p (valid UTF-8); returns its length. */
size_t code_lib_u8_dec(const unsigned char *p, uint32_t *cp);
/* Encodes cp; returns the length (1..4). */
size_t code_lib_u8_enc(uint32_t cp, char *out);
/* Keyword arguments of a builtin that takes *args too: names is a
 * NULL-terminated list, out[i] receives the value given for names[i]
 * (borrowed; left alone when absent). An unknown name is CPython's TypeError
 * "'x' is an invalid keyword argument for fname()". */
int code_lib_kw(code_vm *vm, const char *fname, cv *args, size_t nargs, cv kwnames,
                const char *const *names, cv *out);
/* The library's per-run dict (vm->builtins_cache), made on first use
 * (borrowed): int keys are id()'s map from addresses, None holds the re
 * module's cache of compiled patterns. */
cv code_lib_cache(code_vm *vm);
/* StopIteration with no arguments. */
cv code_lib_stop(code_vm *vm);

/* ---- builtin iterator types (code_builtins_iter.c) ---------------------------- */

extern const code_type code_type_enumerate, code_type_zip, code_type_map,
    code_type_filter, code_type_reversed;
/* iter(fn, sentinel): calls fn until it returns sentinel. */
cv code_lib_calliter_new(code_vm *vm, cv fn, cv sentinel);

/* ---- builtins that compute (code_builtins_num.c) ----------------------------- */

cv code_bi_sum(code_vm *vm, cv *args, size_t nargs, cv kwnames);
cv code_bi_min(code_vm *vm, cv *args, size_t nargs, cv kwnames);
cv code_bi_max(code_vm *vm, cv *args, size_t nargs, cv kwnames);
cv code_bi_sorted(code_vm *vm, cv *args, size_t nargs, cv kwnames);
cv code_bi_all(code_vm *vm, cv *args, size_t nargs, cv kwnames);
cv code_bi_any(code_vm *vm, cv *args, size_t nargs, cv kwnames);
cv code_bi_abs(code_vm *vm, cv *args, size_t nargs, cv kwnames);
cv code_bi_round(code_vm *vm, cv *args, size_t nargs, cv kwnames);
cv code_bi_divmod(code_vm *vm, cv *args, size_t nargs, cv kwnames);
cv code_bi_pow(code_vm *vm, cv *args, size_t nargs, cv kwnames);

/* ---- modules ------------------------------------------------------------------ */

/* A module object of that name over dict (stolen); code_type_module is
 * defined in code_import.c. */
cv code_module_new(code_vm *vm, const char *name, cv dict);

/* json.loads of a str's text, or of bytes (checked as UTF-8) (code_mod_json_dec.c). */
cv code_json_loads_text(code_vm *vm, const char *s, size_t n);
cv code_json_loads_bytes(code_vm *vm, const char *s, size_t n);
/* json.JSONDecodeError(msg, doc, pos): the type's new (code_exc.c uses it). */
cv code_json_exc_new(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kwnames);

#endif
