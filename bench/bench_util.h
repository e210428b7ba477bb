/* What the benchmarks in bench/ share: timing, spawning a command and
 * waiting for it, the bubblewrap command line matching cella's host image,
 * percentiles, and replacing a marked block of docs/performance.md. */
#ifndef CELLA_BENCH_UTIL_H
#define CELLA_BENCH_UTIL_H

#include <stddef.h>

#define MAX_ARGS 160

double now_ms(void);
int cmp_double(const void *a, const void *b);
int cmp_long(const void *a, const void *b);
/* Runs argv once with stdio on /dev/null; returns wall ms, or -1 on failure. */
double run_once(char *const argv[], long *rss_kb);
void push(char **argv, int *n, const char *s);
/* bubblewrap with what cella's `host` image gives (see bench_util.c). */
void bwrap_argv(char **argv, const char *bwrap, const char *ws, char *const cmd[]);
/* A "Key:   N kB" field of a /proc file (status, smaps_rollup) in KiB;
 * -1 when the file or the field cannot be read. */
long proc_field_kb(const char *path, const char *key);
/* The p-th quantile (0..1) of n sorted values. */
double pct(double *sorted, int n, double p);
/* Writes the block's first line (date, kernel, CPUs, runs) and a blank
 * line into buf; returns the length written. */
size_t bench_header(char *buf, size_t n, int runs);
/* Replaces the text between the two marker lines in path with block
 * (appends the markers and block when they are missing). */
int write_block(const char *path, const char *begin_mark, const char *end_mark, const char *block);

#endif
