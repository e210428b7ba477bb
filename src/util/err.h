/* Errors travel as a status plus a message (redis-style): a function that can
 * fail returns -1 and fills a cella_err; callers add context and pass it up. */
#ifndef CELLA_UTIL_ERR_H
#define CELLA_UTIL_ERR_H

#define CELLA_ERR_MAX 512

typedef struct cella_err {
    int errnum;                 /* errno behind the failure, or 0 */
    char msg[CELLA_ERR_MAX];
} cella_err;

/* Sets the message; when errnum is non-zero, ": strerror(errnum)" is appended.
 * Always returns -1 so that `return cella_err_set(...)` reads naturally.
 * err may be NULL. */
int cella_err_set(cella_err *err, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prepends "<context>: " to an existing message. Returns -1. */
int cella_err_prefix(cella_err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
