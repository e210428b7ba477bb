/* Values to and from the tagged JSON that crosses the host boundary (the
 * rules are in code_run.h). Its own small codec: the interpreter's library
 * depends on nothing of the daemon's. Decoding untrusted text is bounded:
 * nesting is guarded (RecursionError), sizes count against the run's heap. */
#ifndef CELLA_CODE_JSON_H
#define CELLA_CODE_JSON_H

#include <stddef.h>

#include "code/code_val.h"

/* A new value, or CV_NULL with ValueError ("invalid JSON at byte 12: ...")
 * or MemoryError/RecursionError set. */
cv code_json_decode(code_vm *vm, const char *s, size_t n);
/* A malloc'd NUL-terminated text (the host frees it with free()), or NULL
 * with the exception set (MemoryError, RecursionError). Values JSON cannot
 * carry are written as {"$repr": "..."}. */
char *code_json_encode(code_vm *vm, cv v, size_t *len);

#endif
