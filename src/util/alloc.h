/* Allocation: out of memory is the one condition cella aborts on. Every
 * allocation goes through one hook (Lua-style) so tests can count or fail them. */
#ifndef CELLA_UTIL_ALLOC_H
#define CELLA_UTIL_ALLOC_H

#include <stddef.h>

/* realloc-shaped hook: (ptr, nsize) with nsize == 0 meaning free. */
typedef void *(*cella_alloc_fn)(void *ptr, size_t nsize);
void cella_set_allocator(cella_alloc_fn fn);   /* NULL restores the default */

void *cella_malloc(size_t n);
void *cella_calloc(size_t count, size_t size);
void *cella_realloc(void *p, size_t n);
char *cella_strdup(const char *s);
char *cella_strndup(const char *s, size_t n);
char *cella_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cella_free(void *p);
/* Frees a NULL-terminated vector of strings and the vector itself. */
void cella_strv_free(char **v);
size_t cella_strv_len(char *const *v);

#endif
