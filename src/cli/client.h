/* `cella run | create | exec | ls | stop | catalog`: the command-line client
 * of `cella serve`, over its HTTP API (base URL from --url, else $CELLA_URL,
 * else http://127.0.0.1:7878; bearer token from $CELLA_TOKEN). */
#ifndef CELLA_CLI_CLIENT_H
#define CELLA_CLI_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include "util/err.h"

#define CLIENT_DEFAULT_URL "http://127.0.0.1:7878"
#define CLIENT_MAX_STDIN (16u << 20)
#define CLIENT_MAX_TIMEOUT_MS (7ull * 24 * 3600 * 1000)

/* True for the subcommands cli_client_main handles. */
bool cli_client_is_command(const char *cmd);
/* cmd is the subcommand; argv holds what follows it. Returns the process
 * exit status: 0, the command's own (run, exec), 124 timed out, 128+N
 * killed by signal N, 125 when cella itself failed. */
int cli_client_main(const char *cmd, int argc, char **argv);

/* The options of one subcommand, parsed without side effects. */
typedef struct client_opts {
    const char *cmd;
    const char *url;              /* --url, or NULL */
    bool json;
    bool help;
    const char *image;            /* run: --image (default "shell"); create: IMAGE */
    const char *id;               /* exec: the sandbox */
    const char *name;             /* create --name */
    const char *workdir;          /* run, exec: -w */
    bool has_timeout;
    uint64_t timeout_ms;
    bool has_cpus;
    uint32_t cpu_milli;
    bool has_memory;
    uint64_t memory_mb;
    bool has_idle;
    uint64_t idle_timeout_secs;   /* create --idle-timeout, rounded up to whole seconds */
    char **env;                   /* "K=V", NULL-terminated, or NULL */
    char **ids;                   /* stop: the sandboxes (borrowed strings), NULL-terminated */
    char **argv;                  /* run, exec: the command (borrowed from the caller's argv) */
} client_opts;

int client_args_parse(const char *cmd, int argc, char **argv, client_opts *o, cella_err *err);
void client_opts_free(client_opts *o);
/* The --help text of a subcommand (NULL for an unknown one). */
const char *client_usage(const char *cmd);

/* Shared with the file transfer commands (cli/transfer.c). */
struct httpc_response;
/* "cella: <message>" on stderr (stdout flushed first). */
void client_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A request that produced no answer: why, in the user's words. */
void client_report_transport(const struct httpc_response *res, const cella_err *err);
/* A non-2xx answer: the daemon's message and its fix note, one line each. */
void client_report_error_answer(struct httpc_response *res);
/* Percent-encodes one path segment (cella_free the result). */
char *client_path_segment(const char *s);

#endif
