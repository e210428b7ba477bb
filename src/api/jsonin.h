/* Strict decoding of request bodies, shared by the dialects: every field
 * read is checked for its type, unknown fields are refused, and each
 * failure is an S001 whose message names the field. JSON null counts as
 * absent, as serde's Option does. */
#ifndef CELLA_API_JSONIN_H
#define CELLA_API_JSONIN_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/errors.h"
#include "util/buf.h"

/* Parses a body that must be one JSON object (an empty body is {}). */
int jin_parse(const uint8_t *body, size_t n, json_t **out, core_error *e);
/* Fails on any key not in allowed (NULL-terminated). */
int jin_known(json_t *o, const char *const *allowed, core_error *e);
/* Each returns 0 when absent (leaving *out), 1 when read, -1 on a type error. */
int jin_str(json_t *o, const char *key, const char **out, core_error *e);
int jin_bool(json_t *o, const char *key, bool *out, core_error *e);
int jin_u64(json_t *o, const char *key, uint64_t min, uint64_t max, uint64_t *out, core_error *e);
/* A number of CPUs (1, 0.5) as thousandths. */
int jin_cpus(json_t *o, const char *key, uint32_t *out_milli, core_error *e);
/* An array of strings as a NULL-terminated vector (free with cella_strv_free). */
int jin_strv(json_t *o, const char *key, char ***out, core_error *e);
/* iii's env: ["K=V", ...] or {"K": "V"} (applied in key order); names must
 * be [A-Za-z_][A-Za-z0-9_]*. Result: "K=V" vector. */
int jin_env(json_t *o, const char *key, char ***out, core_error *e);
/* jin_env without the names check, for create, where core checks the
 * names in iii's order (after the image and its caps). */
int jin_env_shape(json_t *o, const char *key, char ***out, core_error *e);
/* A base64 string decoded into out. */
int jin_base64(json_t *o, const char *key, cbuf *out, bool *present, core_error *e);
/* A required field missing. */
int jin_missing(core_error *e, const char *key);

#endif
