#include "util/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Appends s to msg (used bytes so far), truncating at the buffer's end. */
static size_t append(char *msg, size_t used, const char *s)
{
    size_t l = strlen(s);
    if (l > CELLA_ERR_MAX - 1 - used)
        l = CELLA_ERR_MAX - 1 - used;
    memcpy(msg + used, s, l);
    msg[used + l] = '\0';
    return used + l;
}

int cella_err_set(cella_err *err, int errnum, const char *fmt, ...)
{
    if (!err)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    size_t used = n < 0 ? 0 : (size_t)n < sizeof(err->msg) ? (size_t)n : sizeof(err->msg) - 1;
    err->msg[used] = '\0';
    if (errnum) {
        used = append(err->msg, used, ": ");
        append(err->msg, used, strerror(errnum));
    }
    err->errnum = errnum;
    return -1;
}

int cella_err_prefix(cella_err *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    char old[CELLA_ERR_MAX];
    memcpy(old, err->msg, sizeof(old));
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    size_t used = n < 0 ? 0 : (size_t)n < sizeof(err->msg) ? (size_t)n : sizeof(err->msg) - 1;
    used = append(err->msg, used, ": ");
    append(err->msg, used, old);
    return -1;
}
