#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>

static enum log_level level = LOG_WARN;

void log_set_level(enum log_level lvl)
{
    level = lvl;
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
    if (lvl > level)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    static const char *const names[] = {"error", "warning", "info", "debug"};
    fprintf(stderr, "cella: %s%s%s\n", lvl == LOG_INFO ? "" : names[lvl],
            lvl == LOG_INFO ? "" : ": ", line);
}
