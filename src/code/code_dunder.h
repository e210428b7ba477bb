/* Dunder methods made from type slots (code_dunder.c): 'abc'.__len__(),
 * (2).__add__(3), d.__eq__(e), for every type that has the slot, without
 * each type listing them in its method table. */
#ifndef CELLA_CODE_DUNDER_H
#define CELLA_CODE_DUNDER_H

#include "code/code_val.h"

/* The generic dunder method name of type t (args[0] is self), or NULL when
 * name is not one or t lacks what it needs (so hasattr answers as CPython's
 * for the builtin types). Asked after the type's own methods. */
const code_method *code_dunder_method(const code_type *t, const char *name);

/* True when name is "__hash__" and t is unhashable: CPython's list, dict,
 * set... have __hash__ = None, so x.__hash__ is None rather than missing. */
bool code_dunder_hash_none(const code_type *t, const char *name);

#endif
