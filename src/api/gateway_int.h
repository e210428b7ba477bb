/* The gateway dialect's internals, shared by its files: gateway.c (the
 * routes, errors, request fields, /execute and /bash with their
 * artifacts), gateway_files.c (/read, /read_binary, /write, /grep, /glob),
 * gateway_sessions.c (sessions: open, list, delete, copy) and
 * gateway_turn.c (one /execute or /bash at a time in a session). */
#ifndef CELLA_API_GATEWAY_INT_H
#define CELLA_API_GATEWAY_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/gateway.h"
#include "core/core.h"

/* A workspace path, cleaned and made absolute ("/workspace/" + 4095). */
#define GW_PATH_MAX 4112
/* session_id: [A-Za-z0-9._:@+=-], this long at most (it goes in URLs and
 * in the sandbox's name). */
#define GW_SESSION_ID_MAX 128
/* /bash's command and /execute's shell code ride in one argv string,
 * which Linux caps (MAX_ARG_STRLEN, 32 pages). */
#define GW_ARG_MAX (128u << 10)
/* What /read puts in content, and what /read_binary returns, at most. */
#define GW_READ_MAX (1u << 20)
#define GW_READ_BINARY_MAX (16u << 20)
/* /read's limit, in lines, at most. */
#define GW_READ_LIMIT_MAX 100000
/* The artifacts of one call at most, and the time their listing may take. */
#define GW_ARTIFACTS_MAX 1000
#define GW_ARTIFACTS_DEADLINE_MS 5000
/* How long past its own deadline a staging extract may take before it is
 * killed: the extract checks the deadline between entries and rolls its
 * batch back, which a kill would not let it do. */
#define GW_STAGE_KILL_GRACE_MS 500

/* ---- errors (gateway.c) ----------------------------------------------------- */

/* The dialect's error body: {error: message, code, type, retryable, fix,
 * fix_note, docs_url}, with the code's HTTP status. */
json_t *gw_error_json(const core_error *e, int *status);

/* ---- request fields (gateway.c) ------------------------------------------------ */

/* A request's common part, decoded: the tenant it acts for (its body's
 * tenant_id, which a non-admin token may only set to its own tenant; the
 * token's when absent) and its session. Unknown fields are ignored. */
typedef struct gw_who {
    const char *tenant;
    const char *session_id;
} gw_who;
int gw_who_decode(http_ctx *c, json_t *j, gw_who *w, core_error *e);
/* The same checks for a tenant and session named in a URL. */
int gw_who_check(http_ctx *c, const char *tenant, const char *session_id, core_error *e);

/* A path field relative to /workspace: absolute paths, ".." components
 * and NUL bytes are refused; "." and empty components are dropped. abs
 * (GW_PATH_MAX) gets "/workspace[/<clean>]", rel (when not NULL, same
 * size) the clean part ("" for the workspace itself, which is refused
 * unless allow_root). def: the value when absent (NULL: required). */
int gw_path(json_t *j, const char *key, const char *def, bool allow_root, char *abs, char *rel,
            core_error *e);
/* The same for a string at hand (name is the field, for messages). */
int gw_path_str(const char *name, const char *in, size_t len, bool allow_root, char *abs,
                char *rel, core_error *e);
/* An absolute path the agent reported, as the dialect shows it: relative
 * to /workspace when below it, else as it is. */
const char *gw_rel(const char *abs);
/* The MIME type of a file name by its extension (application/octet-stream
 * when unknown). */
const char *gw_mime_type(const char *path);
/* The raw file route that serves an absolute sandbox path's bytes. Free it. */
char *gw_file_url(sandbox *s, const char *abs);

/* ---- sessions (gateway_sessions.c) --------------------------------------------- */

/* The sandbox of the session (tenant, session_id), created on first use
 * with the dialect's defaults, or again when its sandbox was reaped or
 * stopped. At most gateway_max_sessions at once (S400, 429, beyond). *out
 * holds a reference. */
int gw_session_open(http_ctx *c, const char *tenant, const char *session_id, sandbox **out,
                    core_error *e);
/* The session's live sandbox (a reference), or NULL: none is made. */
sandbox *gw_session_peek(http_ctx *c, const char *tenant, const char *session_id);

/* Files written into a session's /workspace, all or none: checked, then
 * packed in one archive that the agent extracts atomically. */
typedef struct gw_file_in {
    char rel[GW_PATH_MAX];
    cbuf data;
} gw_file_in;
typedef struct gw_files {
    gw_file_in *v;
    size_t n;
} gw_files;
/* `files` as [{path, content | content_b64}] or {path: content} (text);
 * a path given twice is refused. Absent or null: none. */
int gw_files_decode(json_t *j, const char *key, gw_files *f, core_error *e);
void gw_files_free(gw_files *f);
/* Writes them (parents created) in one atomic extract. timeout_ms (0: no
 * deadline of the caller's) bounds it: past it nothing is written and the
 * call fails with S200. */
int gw_files_write(http_ctx *c, sandbox *s, const gw_files *f, uint64_t timeout_ms,
                   core_error *e);

/* ---- one call at a time (gateway_turn.c) ------------------------------------------ */

/* Waits until no other /execute or /bash of the session runs, and takes
 * the turn. -1 when deadline_ns (monotonic) passes first, or the client
 * hangs up. */
int gw_turn_take(http_ctx *c, const char *tenant, const char *session_id, int64_t deadline_ns);
void gw_turn_give(const char *tenant, const char *session_id);

/* ---- handlers ------------------------------------------------------------------ */

/* gateway_files.c */
void gw_h_read(http_ctx *c);
void gw_h_read_binary(http_ctx *c);
void gw_h_write(http_ctx *c);
void gw_h_grep(http_ctx *c);
void gw_h_glob(http_ctx *c);
/* gateway_sessions.c */
void gw_h_sessions(http_ctx *c);
void gw_h_session_delete(http_ctx *c);
void gw_h_session_copy(http_ctx *c);

#endif
