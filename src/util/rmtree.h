#ifndef CELLA_UTIL_RMTREE_H
#define CELLA_UTIL_RMTREE_H

#include "util/err.h"

/* Removes name (a file or a whole tree) relative to dirfd without ever
 * following a symlink: the tree may hold links planted by sandboxed code. */
int rmtree_at(int dirfd, const char *name, cella_err *err);

#endif
