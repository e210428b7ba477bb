/* Typed one-shot runs on the native POST /v1/run (docs/api.md, "Typed
 * runs"): the Flyte-style fields (inputs, outputs, auto_io, command,
 * arguments, retries, cache) on top of iii's run payload. They are the
 * native route's only: iii's sandbox::run decodes its payload as before. */
#ifndef CELLA_API_RUN_TYPED_H
#define CELLA_API_RUN_TYPED_H

#include <jansson.h>
#include <stdbool.h>

#include "api/native.h"
#include "core/typed.h"
#include "http/server.h"

/* A body with any of the typed fields (not null) asks for a typed run. */
bool api_run_is_typed(json_t *j);
/* Decodes, runs and answers it. j stays the caller's. */
void api_run_typed(http_ctx *c, json_t *j);

typedef struct api_typed_in {
    api_run_in base;
    core_typed_req r;
    typed_value *inputs;
    cbuf *values;                 /* the inputs' canonical texts and bytes */
    typed_decl *outputs;
    char **argv;
} api_typed_in;

/* Every field checked (S001 naming the field); strings point into j.
 * Free with api_typed_in_free, also after a failure. */
int api_typed_decode(json_t *j, api_typed_in *x, core_error *e);
void api_typed_in_free(api_typed_in *x);
/* The answer: the exec's result, sandbox_id, outputs, outputs_error,
 * attempts, cached. */
json_t *api_typed_result_json(const core_typed_result *r);
/* One output's value as JSON (NULL if its text is not one, which the
 * parsers rule out). */
json_t *api_typed_value_json(typed_type t, const uint8_t *p, size_t n);

#endif
