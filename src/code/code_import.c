/* import: the few modules code mode has, each built on first import in a run
 * (its init function fills a fresh dict) and cached in vm->modules, so a
 * second import is the same object, as in CPython. Nothing is shared between
 * runs: module dicts are ordinary heap values a program may mutate. */
#include <string.h>

#include "code/code_lib.h"

static void module_dealloc(code_vm *vm, code_obj *o)
{
    code_decref(vm, ((code_module_obj *)o)->dict);
}

static cv module_repr(code_vm *vm, cv self)
{
    return code_str_fmt(vm, "<module '%s' (built-in)>", ((code_module_obj *)cv_obj(self))->name);
}

static cv module_getattr(code_vm *vm, cv self, const char *name)
{
    const code_module_obj *m = (const code_module_obj *)cv_obj(self);
    if (strcmp(name, "__name__") == 0)
        return code_str_from_cstr(vm, m->name);
    if (strcmp(name, "__dict__") == 0)
        return code_incref(m->dict);
    cv v;
    if (code_dict_get_cstr(vm, m->dict, name, &v) < 0)
        return CV_NULL;
    if (v)
        return code_incref(v);
    /* CPython's message for a missing module attribute */
    return code_raise(vm, &code_exc_AttributeError, "module '%s' has no attribute '%s'",
                      m->name, name);
}

const code_type code_type_module = {
    .ob = CODE_STATIC_HDR(&code_type_type),
    .name = "module",
    .kind = CODE_K_MODULE,
    .dealloc = module_dealloc,
    .repr = module_repr,
    .getattr = module_getattr,
};

cv code_module_new(code_vm *vm, const char *name, cv dict)
{
    code_module_obj *m = code_obj_new(vm, &code_type_module, sizeof *m);
    if (!m) {
        code_decref(vm, dict);
        return CV_NULL;
    }
    m->name = name;              /* a static string of the table below */
    m->dict = dict;
    return cv_of(m);
}

typedef struct module_entry {
    const char *name;
    int (*init)(code_vm *vm, cv dict);
} module_entry;

static const module_entry modules[] = {
    { "asyncio", code_mod_asyncio_init },
    { "datetime", code_mod_datetime_init },
    { "json", code_mod_json_init },
    { "math", code_mod_math_init },
    { "re", code_mod_re_init },
};

cv code_import(code_vm *vm, const char *dotted_name)
{
    /* No module here has submodules: a dotted name fails on its first part
     * when that is unknown, else on the whole name, as CPython words it
     * ("No module named 'json.x'; 'json' is not a package"). */
    const char *dot = strchr(dotted_name, '.');
    size_t n = dot ? (size_t)(dot - dotted_name) : strlen(dotted_name);
    const module_entry *e = NULL;
    for (size_t i = 0; i < sizeof modules / sizeof modules[0]; i++)
        if (strlen(modules[i].name) == n && memcmp(modules[i].name, dotted_name, n) == 0)
            e = &modules[i];
    if (!e)
        return code_raise(vm, &code_exc_ModuleNotFoundError, "No module named '%.*s'", (int)n,
                          dotted_name);
    if (dot)
        return code_raise(vm, &code_exc_ModuleNotFoundError,
                          "No module named '%s'; '%s' is not a package", dotted_name, e->name);
    if (!vm->modules && !(vm->modules = code_dict_new(vm)))
        return CV_NULL;
    cv m;
    if (code_dict_get_cstr(vm, vm->modules, e->name, &m) < 0)
        return CV_NULL;
    if (m)
        return code_incref(m);
    cv dict = code_dict_new(vm);
    if (!dict)
        return CV_NULL;
    if (code_lib_set_steal(vm, dict, "__name__", code_str_from_cstr(vm, e->name)) < 0 ||
        e->init(vm, dict) < 0) {
        code_decref(vm, dict);
        return CV_NULL;
    }
    m = code_module_new(vm, e->name, dict);
    if (!m || code_lib_set(vm, vm->modules, e->name, m) < 0) {
        code_decref(vm, m);
        return CV_NULL;
    }
    return m;
}
