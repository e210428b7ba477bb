/* A code-mode error is a Python exception: its type name, a message, and the
 * source line (and column) it belongs to. Functions that can fail return -1
 * (or NULL) and fill one (redis-style). */
#ifndef CELLA_CODE_ERR_H
#define CELLA_CODE_ERR_H

#include <stddef.h>

typedef struct code_error {
    const char *type;            /* static: "SyntaxError", "NotImplementedError", ... */
    int line, col;               /* 1-based; 0 when unknown */
    char msg[256];
} code_error;

/* Fills e (unless it already holds an error: the first error wins). Returns -1. */
int code_error_set(code_error *e, const char *type, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* "SyntaxError: invalid syntax (line 3)" into buf; returns what snprintf does. */
int code_error_format(const code_error *e, char *buf, size_t cap);

#endif
