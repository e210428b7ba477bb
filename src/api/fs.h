/* The file API over HTTP: JSON operations (ls, stat, mkdir, write, read,
 * rm, chmod, mv, grep, sed, glob) and raw transfers (a file's bytes with
 * Range, a directory as a tar archive). The JSON decoding is shared by
 * every dialect that speaks iii's fs payloads. */
#ifndef CELLA_API_FS_H
#define CELLA_API_FS_H

#include <jansson.h>

#include "core/core.h"
#include "http/server.h"

/* Runs op (iii's name: "ls", "grep", ...) with iii's request fields in
 * body (sandbox_id excepted: the caller checks it) and returns iii's
 * result object in *result. files_base ("/v1/sandboxes/<id>/files") makes
 * read's `content.url`. */
int api_fs_call(core *c, sandbox *s, const char *op, json_t *body, int client_fd,
                const char *files_base, json_t **result, core_error *e);
/* The agent's arguments for op and body (what api_fs_call sends):
 * "key=value" words in *argv (free each and the vector with cella_free),
 * write's bytes in stdin_buf. */
int api_fs_args(const char *op, json_t *body, char ***argv, cbuf *stdin_buf, core_error *e);
/* The fields op takes (NULL-terminated), or NULL for an unknown op. */
const char *const *api_fs_fields(const char *op);

/* A sandbox path (relative: under /workspace) as a URL path under base:
 * empty and "." segments dropped, each byte outside [A-Za-z0-9._~-]
 * percent-encoded, and a ".." never a segment of its own, so that no
 * client removing dot segments turns it into another route: it is
 * "%2E%2E" joined to the segment before it by "%2F" (a ".." at the root,
 * whose parent is itself, is dropped). Returns a malloc'd string. */
char *api_fs_url(const char *base, const char *path);

/* A Range header of one range: "bytes=A-B" (start A, len B-A+1),
 * "bytes=A-" (len UINT64_MAX: to the end) or "bytes=-N" (suffix, len N).
 * False when absent or anything else (several ranges are answered whole,
 * as RFC 9110 allows). */
bool api_parse_range(const char *h, uint64_t *start, uint64_t *len, bool *suffix);

extern const http_route api_fs_routes[];

#endif
