/* `cella mcp`: the MCP stdio transport, relayed to the daemon's /mcp.
 * An MCP client (an agent's host: Claude Desktop, an IDE, an SDK) starts
 * `cella mcp` and writes JSON-RPC messages to its stdin, one per line; each
 * is POSTed to the daemon and the answer, if any, written to stdout as one
 * line. The tools themselves live in the daemon (api/mcp.c), so stdio and
 * HTTP clients see the same server. Messages go one at a time: the stdio
 * transport does not need more, and answers stay in order. */
#include "cli/mcp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/client.h"
#include "cli/httpc.h"
#include "util/alloc.h"

static const char usage[] =
    "Usage: cella mcp [--url URL]\n"
    "\n"
    "An MCP (Model Context Protocol) server on stdin and stdout, for agents:\n"
    "JSON-RPC messages, one per line, relayed to the cella daemon's /mcp route.\n"
    "Tools: run_code, create_sandbox, exec, read_file, write_file, list_files,\n"
    "grep, glob, stop_sandbox. The daemon must be running (cella serve).\n"
    "\n"
    "Options:\n"
    "  --url URL   the daemon (default: $CELLA_URL, else " CLIENT_DEFAULT_URL ")\n"
    "  -h, --help  this help\n"
    "\n"
    "A bearer token for the daemon, when it wants one, comes from $CELLA_TOKEN.\n"
    "Example client configuration (Claude Desktop and most MCP hosts):\n"
    "  {\"mcpServers\": {\"cella\": {\"command\": \"cella\", \"args\": [\"mcp\"],\n"
    "                             \"env\": {\"CELLA_URL\": \"http://127.0.0.1:7878\"}}}}\n";

/* A JSON-RPC error for the request in line (no answer for a notification),
 * written as one line. */
static void reply_error(const char *line, size_t len, int code, const char *msg)
{
    json_error_t je;
    json_t *m = json_loadb(line, len, 0, &je);
    json_t *id = json_is_object(m) ? json_object_get(m, "id") : NULL;
    if (json_is_object(m) && !id) {
        json_decref(m);               /* a notification: nothing may answer it */
        return;
    }
    json_t *r = json_pack("{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null(),
                          "error", "code", code, "message", msg);
    char *s = json_dumps(r, JSON_COMPACT);
    if (s) {
        fputs(s, stdout);
        fputc('\n', stdout);
        fflush(stdout);
        free(s);
    }
    json_decref(r);
    json_decref(m);
}

/* The daemon's answer as one line: re-encoded compactly, so nothing in it
 * (a pretty-printed body, a stray newline) can split the message. */
static void reply_body(httpc_response *res, const char *line, size_t len)
{
    const char *body = httpc_body_str(res);
    json_error_t je;
    json_t *j = json_loads(body, 0, &je);
    if (!j) {
        char msg[256];
        snprintf(msg, sizeof(msg), "the cella daemon answered HTTP %d without JSON-RPC",
                 res->status);
        reply_error(line, len, -32603, msg);
        return;
    }
    /* The daemon refuses some calls before reading them (a wrong token, a
     * body too large): its error then has no id. The request's own id is
     * put back, or the client would wait for an answer that never comes. */
    if (json_is_object(j) && json_is_null(json_object_get(j, "id"))) {
        json_t *m = json_loadb(line, len, 0, &je);
        json_t *id = json_is_object(m) ? json_object_get(m, "id") : NULL;
        if (json_is_object(m) && !id) {
            json_decref(m);           /* a notification: nothing may answer it */
            json_decref(j);
            return;
        }
        if (id)
            json_object_set(j, "id", id);
        json_decref(m);
    }
    char *s = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    if (s) {
        fputs(s, stdout);
        fputc('\n', stdout);
        fflush(stdout);
        free(s);
    }
}

int cli_mcp_main(int argc, char **argv)
{
    const char *url = getenv("CELLA_URL");
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage, stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--url") && i + 1 < argc) {
            url = argv[++i];
        } else if (!strncmp(argv[i], "--url=", 6)) {
            url = argv[i] + 6;
        } else {
            fprintf(stderr, "cella mcp: unknown argument '%s'\n\n%s", argv[i], usage);
            return 2;
        }
    }
    if (!url || !*url)
        url = CLIENT_DEFAULT_URL;
    httpc_url u;
    cella_err err = {0};
    if (httpc_url_parse(url, &u, &err) < 0) {
        fprintf(stderr, "cella mcp: --url %s\n", err.msg);
        return 2;
    }
    const char *token = getenv("CELLA_TOKEN");
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    /* stdout carries only protocol messages; diagnostics go to stderr. */
    while ((n = getline(&line, &cap, stdin)) > 0) {
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        if (!n)
            continue;
        httpc_response res;
        httpc_response_init(&res);
        cella_err e = {0};
        if (httpc_request(url, "POST", "/mcp", token, "application/json, text/event-stream",
                          line, (size_t)n, &res, &e) < 0) {
            char *msg = cella_asprintf("cannot reach the cella daemon at %.200s: %s", url,
                                       e.msg);
            fprintf(stderr, "cella mcp: %s\n", msg);
            reply_error(line, (size_t)n, -32603, msg);
            cella_free(msg);
        } else if (res.status == 202) {
            /* a notification or a response: accepted, nothing to relay */
        } else {
            reply_body(&res, line, (size_t)n);
        }
        httpc_response_free(&res);
    }
    free(line);
    return ferror(stdin) ? 1 : 0;
}
