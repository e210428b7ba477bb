/* `cella mcp`: the MCP stdio transport, relayed to the daemon's /mcp.
 * An MCP client (an agent's host: Claude Desktop, an IDE, an SDK) starts
 * `cella mcp` and writes JSON-RPC messages to its stdin, one per line; each
 * is POSTed to the daemon and the answer, if any, written to stdout as one
 * line. The tools themselves live in the daemon (api/mcp.c), so stdio and
 * HTTP clients see the same server.
 *
 * Messages are relayed concurrently (up to MCP_RELAY_MAX at once): a
 * command that runs for an hour must not hold up a ping or a second call,
 * and JSON-RPC answers carry their ids, so their order does not matter.
 * stdout carries nothing but whole JSON-RPC messages; diagnostics go to
 * stderr. */
#include "cli/mcp.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/client.h"
#include "cli/httpc.h"
#include "cli/opts.h"
#include "util/alloc.h"

#define MCP_RELAY_MAX 16

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

typedef struct relay {
    const char *url, *token;
    pthread_mutex_t out_mu;       /* one message per line: writers take turns */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned running;
} relay;

typedef struct job {
    relay *r;
    char *line;
    size_t len;
} job;

static void emit(relay *r, json_t *msg)
{
    char *s = json_dumps(msg, JSON_COMPACT);
    if (!s)
        return;
    pthread_mutex_lock(&r->out_mu);
    fputs(s, stdout);
    fputc('\n', stdout);
    fflush(stdout);
    pthread_mutex_unlock(&r->out_mu);
    free(s);
}

static json_t *error_for(json_t *id, int code, const char *msg)
{
    return json_pack("{s:s,s:O,s:{s:i,s:s?}}", "jsonrpc", "2.0", "id", id ? id : json_null(),
                     "error", "code", code, "message", msg);
}

/* Answers every request in the line (a message or a batch) with this
 * error, under its own id; notifications get nothing, as they must. */
static void fail_all(relay *r, const char *line, size_t len, int code, const char *msg)
{
    json_error_t je;
    json_t *m = json_loadb(line, len, 0, &je);
    if (!m) {
        json_t *e = error_for(NULL, -32700, "Parse error: the line is not JSON");
        emit(r, e);
        json_decref(e);
        return;
    }
    if (json_is_array(m)) {
        json_t *out = json_array();
        size_t i;
        json_t *x;
        json_array_foreach(m, i, x) {
            json_t *id = json_object_get(x, "id");
            if (id)
                json_array_append_new(out, error_for(id, code, msg));
        }
        if (json_array_size(out))
            emit(r, out);
        json_decref(out);
    } else {
        json_t *id = json_object_get(m, "id");
        if (id || !json_is_object(m)) {
            json_t *e = error_for(id, code, msg);
            emit(r, e);
            json_decref(e);
        }
    }
    json_decref(m);
}

static bool is_rpc(json_t *m)
{
    const char *v = json_string_value(json_object_get(m, "jsonrpc"));
    return json_is_object(m) && v && !strcmp(v, "2.0");
}

/* The daemon's answer, passed on only when it is JSON-RPC (a proxy's page
 * or another server's error must not reach the client's stdout). */
static void pass_on(relay *r, httpc_response *res, const char *line, size_t len)
{
    json_error_t je;
    json_t *j = json_loads(httpc_body_str(res), 0, &je);
    bool ok = is_rpc(j);
    if (json_is_array(j)) {
        size_t i;
        json_t *x;
        ok = json_array_size(j) > 0;
        json_array_foreach(j, i, x)
            ok = ok && is_rpc(x);
    }
    if (!ok) {
        char msg[160];
        snprintf(msg, sizeof(msg), "the daemon at --url answered HTTP %d without JSON-RPC "
                 "(is it cella, and is the URL its root?)", res->status);
        fail_all(r, line, len, -32603, msg);
    } else if (json_is_object(j) && json_is_null(json_object_get(j, "id"))) {
        /* The daemon refuses some calls before reading them (a wrong
         * token, a body too large): its error has no id then. Each request
         * gets it under its own id, or its client would wait for ever. */
        const char *msg = json_string_value(json_object_get(json_object_get(j, "error"),
                                                            "message"));
        json_t *code = json_object_get(json_object_get(j, "error"), "code");
        fail_all(r, line, len, json_is_integer(code) ? (int)json_integer_value(code) : -32603,
                 msg ? msg : "the daemon refused the request");
    } else {
        emit(r, j);
    }
    json_decref(j);
}

static void *relay_one(void *arg)
{
    job *jb = arg;
    relay *r = jb->r;
    httpc_response res;
    httpc_response_init(&res);
    cella_err e = {0};
    if (httpc_request(r->url, "POST", "/mcp", r->token, "application/json, text/event-stream",
                      jb->line, jb->len, &res, &e) < 0) {
        /* httpc's message names the daemon's URL and why it failed. */
        fprintf(stderr, "cella mcp: %s\n", e.msg);
        fail_all(r, jb->line, jb->len, -32603, e.msg);
    } else if (res.status != 202) {
        /* 202: notifications or responses, accepted; nothing to relay */
        pass_on(r, &res, jb->line, jb->len);
    }
    httpc_response_free(&res);
    free(jb->line);
    cella_free(jb);
    pthread_mutex_lock(&r->mu);
    r->running--;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strchr(" \t\r\n", s[i]))
            return false;
    return true;
}

int cli_mcp_main(int argc, char **argv)
{
    const char *url = getenv("CELLA_URL");
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage, stdout);
            return 0;
        }
        cella_err oerr;
        if (!cli_is_opt(argv[i], "--url")) {
            fprintf(stderr, "cella mcp: unknown argument '%s'\n\n%s", argv[i], usage);
            return 2;
        }
        if (cli_need_value(argc, argv, &i, "--url", &url, &oerr) < 0) {
            fprintf(stderr, "cella mcp: %s\n", oerr.msg);
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
    relay r = {.url = url, .token = getenv("CELLA_TOKEN")};
    pthread_mutex_init(&r.out_mu, NULL);
    pthread_mutex_init(&r.mu, NULL);
    pthread_cond_init(&r.cv, NULL);
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        if (blank(line, (size_t)n))
            continue;
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            n--;
        pthread_mutex_lock(&r.mu);
        while (r.running >= MCP_RELAY_MAX)
            pthread_cond_wait(&r.cv, &r.mu);
        r.running++;
        pthread_mutex_unlock(&r.mu);
        job *jb = cella_calloc(1, sizeof(*jb));
        jb->r = &r;
        jb->line = line;              /* the job owns this line now */
        jb->len = (size_t)n;
        line = NULL;
        cap = 0;
        pthread_t t;
        if (pthread_create(&t, &at, relay_one, jb) != 0)
            relay_one(jb);            /* no thread to be had: relay it here */
    }
    free(line);
    /* stdin closed: the answers still on their way are written first. */
    pthread_mutex_lock(&r.mu);
    while (r.running)
        pthread_cond_wait(&r.cv, &r.mu);
    pthread_mutex_unlock(&r.mu);
    pthread_attr_destroy(&at);
    return ferror(stdin) ? 1 : 0;
}
