/* Code mode's routes (POST /v1/code/run, POST /v1/code/resume), on the
 * worker pool of core/code_pool.h. */
#ifndef CELLA_API_CODE_H
#define CELLA_API_CODE_H

#include "http/server.h"

extern const http_route api_code_routes[];

/* The routes' work on a parsed body (MCP's code_run and code_resume tools
 * share it): 0 and the answer's JSON in *out, or -1 and e. */
int api_code_run_json(http_ctx *c, json_t *body, json_t **out, core_error *e);
int api_code_resume_json(http_ctx *c, json_t *body, json_t **out, core_error *e);

#endif
