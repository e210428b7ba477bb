/* Scope-bound cleanup (bubblewrap-style). A variable marked _cleanup_free_ or
 * _cleanup_close_ is released when it goes out of scope unless ownership was
 * handed off with steal_fd(). */
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

#define _cleanup_free_ __attribute__((cleanup(cella_cleanup_free)))
#define _cleanup_close_ __attribute__((cleanup(cella_cleanup_close)))

static inline int steal_fd(int *fd)
{
    int r = *fd;
    *fd = -1;
    return r;
}

#endif
