/* The Code Sandbox gateway dialect (spec/code-sandbox-gateway.md,
 * BEHAVIOUR-NOTES §3): persistent sessions keyed by (tenant_id,
 * session_id), each served by one sandbox that is created on first use
 * and reused until idle cleanup or deletion; /execute (with a session_id),
 * /bash, /read, /read_binary, /write, /grep, /glob and /sessions..., each
 * also under /v1/sandbox/. Paths are relative to /workspace. Every error
 * carries `error` as a string (docs/api.md, "Gateway"). */
#ifndef CELLA_API_GATEWAY_H
#define CELLA_API_GATEWAY_H

#include <jansson.h>

#include "http/server.h"

extern const http_route api_gateway_routes[];

/* POST /execute with a session_id (the Flujo dialect's route hands the
 * session case over): runs code in the session's sandbox and replies, in
 * the gateway's shape, errors included. body is the request's parsed JSON
 * object, borrowed: the caller frees it after the call. */
void api_gateway_execute(http_ctx *c, json_t *body);

#endif
