/* The Flujo dialect: POST /execute as Flujo's RemoteSandbox calls it
 * (spec/flujo-remote-sandbox-contract.md, BEHAVIOUR-NOTES §1). A one-shot
 * run: `code` becomes /workspace/main.py (main.js, main.sh for the
 * extensions), `files` are written beside it, the program runs with
 * `arguments` and `environment`, and every file it leaves under
 * /workspace/artifacts comes back base64-encoded.
 *
 * Every answer, failures included, has Flujo's response shape: `error` a
 * string or null and `exit_code` always an integer, because the client
 * reads them as such whatever the HTTP status (docs/api.md, "Flujo").
 *
 * The request decoding (flujo_req.c) is pure, so the unit tests and the
 * fuzzer reach it without a daemon; the route is flujo.c's. */
#ifndef CELLA_API_FLUJO_H
#define CELLA_API_FLUJO_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/errors.h"
#include "http/server.h"

extern const http_route api_flujo_routes[];

/* timeout_s absent, null or 0 (the reference provider's `timeout_s or
 * default`): the client's own default. */
#define FLUJO_DEFAULT_TIMEOUT_MS 60000u
/* The answer must reach the client within timeout_s, whose HTTP timeout is
 * usually that same number: the program's clock counts from the request's
 * arrival and stops this much early (1/20 of the timeout, at most 500 ms),
 * leaving time to collect artifacts and send the answer. */
#define FLUJO_REPLY_RESERVE_MS 500u
/* Artifacts are held in the daemon while the answer is built (base64 in a
 * JSON string): their content is bounded, and so is their count. */
#define FLUJO_ARTIFACTS_MAX_BYTES (64u << 20)
#define FLUJO_ARTIFACTS_MAX_ENTRIES 10000u
/* Code up to this size rides inside the exec request (one round trip);
 * larger code is uploaded with the files. */
#define FLUJO_INLINE_CODE_MAX (1u << 20)
/* A cleaned file path, NUL included. */
#define FLUJO_PATH_MAX 4096

/* A language the dialect runs: python (Flujo's), and node and bash/shell
 * as cella's extensions. */
typedef struct flujo_lang {
    const char *image;            /* the catalog preset */
    const char *interpreter;      /* absolute: the request's PATH cannot hide it */
    const char *entry;            /* the code's file name in /workspace */
} flujo_lang;

typedef struct flujo_file {
    char *path;                   /* cleaned, relative to /workspace */
    const char *content;          /* UTF-8 text, owned by the request's JSON */
    size_t len;
} flujo_file;

typedef struct flujo_req {
    json_t *json;                 /* owns every string below but the paths */
    const char *code;
    size_t code_len;
    const char *language;         /* as sent */
    const flujo_lang *lang;
    flujo_file *files;
    size_t n_files;
    char **env;                   /* "K=V", sorted by name; NULL when none */
    char **args;                  /* NULL when none */
    bool has_timeout;
    uint64_t timeout_ms;          /* as asked (rounded up), not yet clamped */
} flujo_req;

/* The language by name, case-insensitively as the reference provider
 * lowercases it; NULL when not supported. */
const flujo_lang *flujo_lang_find(const char *name);

/* A `files` key as a path relative to /workspace: "." and empty components
 * dropped ("./a//b" is "a/b"). Refused (-1): an empty path, an absolute
 * one, any ".." component (also "a/../b": a path that names its way out,
 * even when it comes back, is refused as the reference's notes say), one
 * that names the workspace itself ("."), and one of FLUJO_PATH_MAX bytes
 * or more once cleaned. out holds n bytes. */
int flujo_path_clean(const char *in, char *out, size_t n);

/* A body with a session_id that is not null is the gateway's persistent
 * session call, not Flujo's: the route checks this first. */
bool flujo_is_session(json_t *j);
/* Its answer while the gateway dialect is not built: S219, status 501. */
int flujo_session_refused(core_error *e);
/* Decodes a parsed body (an object), taking j whatever happens. Failures
 * are S001 with Flujo's messages ("Unsupported language: X", "Invalid file
 * path: X", or the field and type at fault). Unknown fields are ignored.
 * On success free r with flujo_req_free. */
int flujo_req_decode(json_t *j, flujo_req *r, core_error *e);
/* The whole of it from the bytes: jin_parse, the session refusal, decode. */
int flujo_req_parse(const uint8_t *body, size_t n, flujo_req *r, core_error *e);
void flujo_req_free(flujo_req *r);

#endif
