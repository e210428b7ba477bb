#include "code/code_err.h"

#include <stdarg.h>
#include <stdio.h>

int code_error_set(code_error *e, const char *type, int line, int col, const char *fmt, ...)
{
    if (!e || e->type)
        return -1;
    e->type = type;
    e->line = line;
    e->col = col;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    va_end(ap);
    return -1;
}

int code_error_format(const code_error *e, char *buf, size_t cap)
{
    if (!e->type)
        return snprintf(buf, cap, "no error");
    /* An exception without a message shows as its type alone, as CPython's
     * traceback does ("MemoryError"). */
    const char *sep = e->msg[0] ? ": " : "";
    if (e->line > 0)
        return snprintf(buf, cap, "%s%s%s (line %d)", e->type, sep, e->msg, e->line);
    return snprintf(buf, cap, "%s%s%s", e->type, sep, e->msg);
}
