/* `cella upload | download | fs`: files in and out of a sandbox of
 * `cella serve`, over its file routes (PUT/GET /v1/sandboxes/{id}/files/...,
 * /archive/... and POST /v1/sandboxes/{id}/fs/{op}). Transfers stream: a
 * file of any size passes through in pieces, never whole in memory. */
#ifndef CELLA_CLI_TRANSFER_H
#define CELLA_CLI_TRANSFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

#define CLI_EXIT_USAGE 2

/* True for the subcommands cli_transfer_main handles. */
bool cli_transfer_is_command(const char *cmd);
/* cmd is the subcommand; argv holds what follows it. Returns the process
 * exit status: 0, 2 for a usage error, 125 when the transfer failed. */
int cli_transfer_main(const char *cmd, int argc, char **argv);

/* The options of one subcommand, parsed without side effects. */
typedef struct transfer_opts {
    const char *cmd;
    const char *url;              /* --url, or NULL */
    bool help;
    bool tar;                     /* upload, download: --tar */
    bool parents;                 /* upload: --parents */
    bool has_mode;                /* upload: --mode */
    unsigned mode;
    const char *id;
    const char *local;            /* upload, download: LOCAL ("-": stdin / stdout) */
    const char *remote;           /* upload, download: REMOTE as given */
    const char *op;               /* fs: OP */
    const char *body;             /* fs: --json (NULL: "{}"; "-": read stdin) */
} transfer_opts;

int transfer_args_parse(const char *cmd, int argc, char **argv, transfer_opts *o,
                        cella_err *err);
/* The --help text of a subcommand (NULL for an unknown one). */
const char *transfer_usage(const char *cmd);

/* ---- pure helpers, exposed for the unit tests ---------------------------------------- */

/* REMOTE as an absolute sandbox path: a relative one is under /workspace.
 * When REMOTE names a directory (it ends in '/', or is "." or empty), name
 * is appended when not NULL (a file copied into it keeps its name), and
 * the trailing '/' is dropped otherwise. cella_free the result. */
char *transfer_remote_path(const char *remote, const char *name);
/* True when REMOTE names a directory the way transfer_remote_path sees it. */
bool transfer_remote_is_dir(const char *remote);
/* The last component of a path ("" when it has none, e.g. "/"); points into
 * path up to its length *n (trailing slashes excluded). */
const char *transfer_basename(const char *path, size_t *n);
/* "/v1/sandboxes/{id}/{route}/{abs without its leading '/'}[?query]", each
 * byte of abs outside [A-Za-z0-9/._~-] percent-encoded. cella_free it. */
char *transfer_url_path(const char *id, const char *route, const char *abs, const char *query);
/* An octal file mode, "644" or "0755" (at most 07777). */
int transfer_parse_mode(const char *s, unsigned *out, cella_err *err);
/* A body for POST .../fs/{op}: valid JSON, an object. */
int transfer_fs_body_check(const char *text, size_t len, cella_err *err);
/* One progress line: "[####......]  40%  25.6 MiB / 64.0 MiB  12.8 MiB/s". */
void transfer_progress_format(char *buf, size_t n, uint64_t done, uint64_t total,
                              uint64_t elapsed_ms);
/* "512 B", "1.5 KiB", "64.0 MiB", ... */
void transfer_human_bytes(char *buf, size_t n, uint64_t v);

#endif
