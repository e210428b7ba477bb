/* The native dialect: cella's own routes (DESIGN §3), with iii-sandbox's
 * field names and semantics. */
#ifndef CELLA_API_NATIVE_H
#define CELLA_API_NATIVE_H

#include "http/server.h"

extern const http_route api_native_routes[];

/* The decoders of iii's payloads, shared by the dialects that speak them
 * (native routes, iii's /v1/trigger). Each checks every field (unknown
 * ones are S001) and fills a core request whose strings point into j. */

/* sandbox::create: {image, cpus, memory_mb, name, network,
 * idle_timeout_secs, env}. *env is the request's, to free with
 * cella_strv_free (also after a failure). */
int api_create_decode(json_t *j, core_create_req *r, char ***env, core_error *e);

/* sandbox::exec: {sandbox_id?, cmd, args, argv, stdin, env, timeout_ms, workdir}. */
typedef struct api_exec_in {
    core_exec_req r;
    const char *sandbox_id;       /* NULL when absent */
    char **argv, **env;
    cbuf in;
} api_exec_in;
int api_exec_decode(json_t *j, api_exec_in *x, core_error *e);
void api_exec_in_free(api_exec_in *x);

/* sandbox::run: {image, lang, code, files, env, stdin, timeout_ms, keep_sandbox}. */
typedef struct api_run_in {
    core_run_req r;
    core_run_file *files;
    char **env;
    cbuf in;
} api_run_in;
int api_run_decode(json_t *j, api_run_in *x, core_error *e);
/* The same for the native route's typed runs (api/run_typed.c), which
 * checks the field names itself. */
enum {
    API_RUN_MORE_FIELDS = 1,      /* unknown fields are the caller's to refuse */
    API_RUN_NO_CODE = 2,          /* command mode: code and lang must be absent */
    API_RUN_LANG_PYTHON = 4,      /* lang defaults to python */
};
int api_run_decode_ex(json_t *j, api_run_in *x, unsigned flags, core_error *e);
void api_run_in_free(api_run_in *x);
/* An exec's result as the native routes answer it (with its output). */
json_t *api_exec_result_json(const core_exec_result *r);

/* Output bytes as a JSON string (invalid UTF-8 repaired). */
json_t *api_text_json(const cbuf *b);
/* The daemon's HTTP server, for /metrics (set once it is started). */
void api_native_set_server(http_server *s);

#endif
