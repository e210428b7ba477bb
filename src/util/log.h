/* Diagnostics on stderr, one line each, prefixed "cella: ". */
#ifndef CELLA_UTIL_LOG_H
#define CELLA_UTIL_LOG_H

enum log_level { LOG_ERROR = 0, LOG_WARN = 1, LOG_INFO = 2, LOG_DEBUG = 3 };

#include <stdbool.h>
#include <stddef.h>

void log_set_level(enum log_level lvl);
/* The daemon's format: one logfmt line per event (ts=... level=... k=v). */
void log_set_logfmt(bool on);
/* s as a logfmt value: double-quoted, with quotes, backslashes and control
 * characters escaped, so a client's bytes can never start a line or a key
 * of their own. Truncated to fit out (n >= 3). Returns out. */
char *log_quote(char *out, size_t n, const char *s);
void log_msg(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
