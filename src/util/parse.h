/* Parsers for the values people type on command lines and in configs. All are
 * strict: the whole string must be consumed, and out-of-range values fail. */
#ifndef CELLA_UTIL_PARSE_H
#define CELLA_UTIL_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

/* Decimal unsigned integer in [min, max]. */
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out, cella_err *err);
/* Duration: a decimal number with a unit (ms, s, m, h) or none (seconds),
 * e.g. "500ms", "5s", "1.5s", "2m". Result in milliseconds, at most max_ms. */
int parse_duration_ms(const char *s, uint64_t max_ms, uint64_t *out, cella_err *err);
/* A CPU count such as "1", "0.5", "2.25" -> thousandths of a CPU (milli-CPUs). */
int parse_cpus_milli(const char *s, uint32_t max_milli, uint32_t *out, cella_err *err);
/* A byte count: digits with an optional binary suffix K, M or G (also KiB,
 * MiB, GiB), e.g. "1048576", "64K", "1M". At most max. */
int parse_size(const char *s, uint64_t max, uint64_t *out, cella_err *err);
/* "NAME=VALUE" with NAME matching [A-Za-z_][A-Za-z0-9_]*. */
bool env_name_valid(const char *s, size_t len);
bool env_assignment_valid(const char *kv);

#endif
