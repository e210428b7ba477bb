#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static enum log_level level = LOG_WARN;
static bool logfmt;

void log_set_level(enum log_level lvl)
{
    level = lvl;
}

void log_set_logfmt(bool on)
{
    logfmt = on;
}

static const char *const names[] = {"error", "warning", "info", "debug"};

/* logfmt: ts=... level=... then the message as it is when it already reads
 * as key=value pairs (event=...), else as msg="..." with quotes escaped. */
static void emit_logfmt(enum log_level lvl, const char *line)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char when[40];
    size_t n = strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(when + n, sizeof(when) - n, ".%03ldZ", ts.tv_nsec / 1000000);
    if (!strncmp(line, "event=", 6)) {
        fprintf(stderr, "ts=%s level=%s %s\n", when, names[lvl], line);
        return;
    }
    char esc[2048];
    size_t k = 0;
    for (const char *p = line; *p && k < sizeof(esc) - 3; p++) {
        if (*p == '"' || *p == '\\')
            esc[k++] = '\\';
        esc[k++] = *p == '\n' ? ' ' : *p;
    }
    esc[k] = '\0';
    fprintf(stderr, "ts=%s level=%s msg=\"%s\"\n", when, names[lvl], esc);
}

char *log_quote(char *out, size_t n, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    size_t k = 0;
    out[k++] = '"';
    for (const unsigned char *p = (const unsigned char *)s; *p && k + 6 < n; p++) {
        if (*p == '"' || *p == '\\') {
            out[k++] = '\\';
            out[k++] = (char)*p;
        } else if (*p < 0x20 || *p == 0x7f) {
            out[k++] = '\\';
            out[k++] = 'x';
            out[k++] = hex[*p >> 4];
            out[k++] = hex[*p & 15];
        } else {
            out[k++] = (char)*p;
        }
    }
    out[k++] = '"';
    out[k] = '\0';
    return out;
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
    if (logfmt) {
        emit_logfmt(lvl, line);
        return;
    }
    fprintf(stderr, "cella: %s%s%s\n", lvl == LOG_INFO ? "" : names[lvl],
            lvl == LOG_INFO ? "" : ": ", line);
}
