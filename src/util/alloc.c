#include "util/alloc.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *default_alloc(void *ptr, size_t nsize)
{
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    return realloc(ptr, nsize);
}

static cella_alloc_fn alloc_fn = default_alloc;

void cella_set_allocator(cella_alloc_fn fn)
{
    alloc_fn = fn ? fn : default_alloc;
}

static void oom(size_t n)
{
    /* No allocation, no stdio: the heap may be what failed. */
    static const char msg[] = "cella: out of memory\n";
    ssize_t r = write(2, msg, sizeof(msg) - 1);
    (void)r;
    (void)n;
    abort();
}

void *cella_realloc(void *p, size_t n)
{
    if (n == 0)
        n = 1;
    void *r = alloc_fn(p, n);
    if (!r)
        oom(n);
    return r;
}

void *cella_malloc(size_t n)
{
    return cella_realloc(NULL, n);
}

void *cella_calloc(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        oom(SIZE_MAX);
    void *p = cella_malloc(count * size);
    memset(p, 0, count * size);
    return p;
}

char *cella_strdup(const char *s)
{
    return cella_strndup(s, strlen(s));
}

char *cella_strndup(const char *s, size_t n)
{
    size_t len = n ? strnlen(s, n) : 0;
    char *d = cella_malloc(len + 1);
    if (len)
        memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

char *cella_asprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        oom(0);
    char *s = cella_malloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

void cella_free(void *p)
{
    if (p)
        alloc_fn(p, 0);
}

void cella_strv_free(char **v)
{
    if (!v)
        return;
    for (char **p = v; *p; p++)
        cella_free(*p);
    cella_free(v);
}

size_t cella_strv_len(char *const *v)
{
    size_t n = 0;
    while (v && v[n])
        n++;
    return n;
}
