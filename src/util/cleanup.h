/* Scope-bound cleanup (bubblewrap-style). A variable marked _cleanup_free_ or
 * _cleanup_close_ is released when it goes out of scope unless ownership was
 * handed off with steal_pointer()/steal_fd(). */
#ifndef CELLA_UTIL_CLEANUP_H
#define CELLA_UTIL_CLEANUP_H

#include <errno.h>
#include <unistd.h>

#include "util/alloc.h"

static inline void cella_cleanup_free(void *pp)
{
    cella_free(*(void **)pp);
}

static inline void cella_cleanup_close(int *fd)
{
    if (*fd >= 0) {
        int saved = errno;
        close(*fd);
        errno = saved;
    }
}

static inline void cella_cleanup_strv(char ***v)
{
    cella_strv_free(*v);
}

#define _cleanup_free_ __attribute__((cleanup(cella_cleanup_free)))
#define _cleanup_close_ __attribute__((cleanup(cella_cleanup_close)))
#define _cleanup_strv_ __attribute__((cleanup(cella_cleanup_strv)))

static inline void *cella_steal_pointer(void *pp)
{
    void **p = pp;
    void *r = *p;
    *p = NULL;
    return r;
}
#define steal_pointer(pp) cella_steal_pointer(pp)

static inline int steal_fd(int *fd)
{
    int r = *fd;
    *fd = -1;
    return r;
}

#endif
