/* MCP, the Model Context Protocol, over its streamable HTTP transport at
 * POST /mcp: JSON-RPC 2.0 messages in, JSON answers out. The server is
 * stateless (no Mcp-Session-Id): each request carries its bearer token and
 * so its tenant, as on every route, and the sandboxes a client makes are
 * the tenant's own, listed and stoppable through any dialect. There is no
 * server-initiated stream, so GET /mcp is 405, as the transport allows.
 * `cella mcp` (cli/mcp.c) relays the stdio transport to this route.
 *
 * The tools wrap the native API's core calls. A tool that fails answers a
 * result with isError and the S-code, message, fix and fix note as text,
 * for the model to read and correct; JSON-RPC errors are kept for what the
 * protocol itself gets wrong (an unknown method or tool, bad params). */
#include "api/mcp.h"

#include <stdio.h>
#include <string.h>

#include "api/code.h"
#include "api/fs.h"
#include "api/jsonin.h"
#include "api/native.h"
#include "util/alloc.h"
#include "util/text.h"

/* Newest first; an unknown version gets the newest (the client then
 * decides whether it can go on, as the protocol says). */
static const char *const versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
                                       NULL};

/* Messages in one batch. */
#define MCP_MAX_BATCH 16

enum {
    RPC_INTERNAL = -32603,
    RPC_PARSE = -32700,
    RPC_INVALID_REQUEST = -32600,
    RPC_NO_METHOD = -32601,
    RPC_INVALID_PARAMS = -32602,
    RPC_UNAUTHORIZED = -32001,    /* the server's range: the transport refused the call */
};

typedef int (*tool_fn)(http_ctx *c, json_t *args, json_t **out, core_error *e);

/* ---- tools ---------------------------------------------------------------------- */

/* The sandbox named by args' sandbox_id; the id is removed from args, so
 * what is left is the operation's own payload. */
static int tool_sandbox(http_ctx *c, json_t *args, sandbox **s, core_error *e)
{
    const char *id = NULL;
    int got = jin_str(args, "sandbox_id", &id, e);
    if (got < 0)
        return -1;
    if (!got)
        return jin_missing(e, "sandbox_id");
    int rc = core_get(c->core, c->tenant, id, s, e);
    json_object_del(args, "sandbox_id");
    return rc;
}

static void set_default(json_t *args, const char *key, json_t *v)
{
    if (!json_object_get(args, key) || json_is_null(json_object_get(args, key)))
        json_object_set_new(args, key, v);
    else
        json_decref(v);
}

/* One file operation of the file API (files.md), args as its payload. */
static int tool_fs(http_ctx *c, const char *op, json_t *args, json_t **out, core_error *e)
{
    sandbox *s;
    if (tool_sandbox(c, args, &s, e) < 0)
        return -1;
    if (jin_known(args, api_fs_fields(op), e) < 0) {
        sandbox_unref(s);
        return -1;
    }
    char base[96];
    snprintf(base, sizeof(base), "/v1/sandboxes/%s/files", sandbox_id(s));
    int rc = api_fs_call(c->core, s, op, args, c->client_fd, base, out, e);
    sandbox_unref(s);
    return rc;
}

static int t_list_files(http_ctx *c, json_t *args, json_t **out, core_error *e)
{
    set_default(args, "path", json_string("/workspace"));
    return tool_fs(c, "ls", args, out, e);
}

static int t_read_file(http_ctx *c, json_t *args, json_t **out, core_error *e)
{
    json_t *r = NULL;
    if (tool_fs(c, "read", args, &r, e) < 0)
        return -1;
    json_t *body = json_object_get(r, "body");
    if (json_is_string(body)) {
        /* The text itself: what a model wants to read. */
        *out = json_incref(body);
    } else {
        json_t *url = json_object_get(json_object_get(r, "content"), "url");
        *out = json_sprintf("(%" JSON_INTEGER_FORMAT " bytes that are not UTF-8 text or "
                            "are 1 MiB or more: not shown; fetch them with GET %s)",
                            json_integer_value(json_object_get(r, "size")),
                            json_is_string(url) ? json_string_value(url) : "the files route");
    }
    json_decref(r);
    return 0;
}

static int t_write_file(http_ctx *c, json_t *args, json_t **out, core_error *e)
{
    set_default(args, "parents", json_true());
    return tool_fs(c, "write", args, out, e);
}

static int t_grep(http_ctx *c, json_t *args, json_t **out, core_error *e)
{
    set_default(args, "path", json_string("/workspace"));
    set_default(args, "max_matches", json_integer(1000));
    return tool_fs(c, "grep", args, out, e);
}

static int t_glob(http_ctx *c, json_t *args, json_t **out, core_error *e)
{
    set_default(args, "path", json_string("/workspace"));
    return tool_fs(c, "glob", args, out, e);
}

static int t_create(http_ctx *c, json_t *args, json_t **out, core_error *e)
{
    set_default(args, "image", json_string("python"));
    core_create_req r;
    char **env = NULL;
    sandbox *s;
    int rc = -1;
    if (api_create_decode(args, &r, &env, e) == 0 &&
        core_create(c->core, c->tenant, &r, &s, e) == 0) {
        sandbox_info info;
        sandbox_get_info(s, &info);
        *out = json_pack("{s:s,s:s,s:I,s:f,s:I}", "sandbox_id", info.id, "image", info.image,
                         "memory_mb", (json_int_t)info.memory_mb, "cpus",
                         info.cpus_milli / 1000.0, "idle_timeout_secs",
                         (json_int_t)info.idle_timeout_secs);
        sandbox_unref(s);
        rc = 0;
    }
    cella_strv_free(env);
    return rc;
}

/* The tools take stdin as text; the payloads as base64. Copies src's
 * stdin into dst's. */
static int stdin_field(json_t *src, json_t *dst, core_error *e)
{
    const char *in = NULL;
    int got = jin_str(src, "stdin", &in, e);
    if (got <= 0)
        return got;
    cbuf b;
    cbuf_init(&b);
    base64_encode(&b, (const uint8_t *)in, json_string_length(json_object_get(src, "stdin")));
    json_object_set_new(dst, "stdin", json_stringn((const char *)cbuf_head(&b), cbuf_avail(&b)));
    cbuf_free(&b);
    return 0;
}

/* `command` is a shell line (pipes, &&, redirections: what a model writes),
 * run by /bin/sh -c; `argv` runs a program directly. */
static int exec_payload(json_t *args, core_error *e)
{
    static const char *const own[] = {"command", "argv", "stdin", "timeout_ms", "workdir",
                                      "env", "sandbox_id", NULL};
    if (jin_known(args, own, e) < 0)
        return -1;
    const char *cmd = NULL;
    int got = jin_str(args, "command", &cmd, e);
    if (got < 0)
        return -1;
    json_t *argv = json_object_get(args, "argv");
    bool has_argv = argv && !json_is_null(argv);
    if (got == has_argv)
        return core_fail(e, S001, "invalid request: give exactly one of 'command' (a shell "
                         "line) and 'argv' (a program and its arguments)");
    if (got) {
        json_object_set_new(args, "argv", json_pack("[s,s,s]", "/bin/sh", "-c", cmd));
        json_object_del(args, "command");
    }
    return stdin_field(args, args, e);
}

static int t_exec(http_ctx *c, json_t *args, json_t **out, core_error *e)
{
    if (exec_payload(args, e) < 0)
        return -1;
    sandbox *s;
    if (tool_sandbox(c, args, &s, e) < 0)
        return -1;
    api_exec_in x;
    core_exec_result res;
    int rc = -1;
    if (api_exec_decode(args, &x, e) == 0) {
        if (core_exec_run(s, &x.r, c->client_fd, &res, e) == 0) {
            *out = api_exec_result_json(&res);
            core_exec_result_free(&res);
            rc = 0;
        }
    }
    api_exec_in_free(&x);
    sandbox_unref(s);
    return rc;
}

/* language -> the image and the interpreter of a one-shot run. */
static int run_language(const char *lang, const char **image, const char **interp)
{
    static const struct {
        const char *names[4], *image, *interp;
    } langs[] = {
        {{"python", "python3", "py", NULL}, "python", "python"},
        {{"node", "javascript", "js", NULL}, "node", "node"},
        {{"bash", NULL}, "shell", "/bin/bash"},
        {{"sh", "shell", NULL}, "shell", "shell"},
    };
    for (size_t i = 0; i < sizeof(langs) / sizeof(langs[0]); i++)
        for (int k = 0; k < 4 && langs[i].names[k]; k++)
            if (!strcmp(lang, langs[i].names[k])) {
                *image = langs[i].image;
                *interp = langs[i].interp;
                return 0;
            }
    return -1;
}

static int t_run_code(http_ctx *c, json_t *args, json_t **out, core_error *e)
{
    static const char *const fields[] = {"code", "language", "timeout_ms", "stdin", NULL};
    const char *lang = "python", *image, *interp;
    if (jin_known(args, fields, e) < 0 || jin_str(args, "language", &lang, e) < 0)
        return -1;
    if (run_language(lang, &image, &interp) < 0)
        return core_fail(e, S001, "invalid request: language '%.40s' is not one of python, "
                         "node, bash, sh", lang);
    /* The run's own decoder checks code, timeout_ms and stdin. */
    json_t *p = json_pack("{s:s,s:s}", "image", image, "lang", interp);
    const char *keys[] = {"code", "timeout_ms"};
    for (int i = 0; i < 2; i++)
        if (json_object_get(args, keys[i]))
            json_object_set(p, keys[i], json_object_get(args, keys[i]));
    if (stdin_field(args, p, e) < 0) {
        json_decref(p);
        return -1;
    }
    api_run_in x;
    core_exec_result res;
    char sid[40];
    int rc = -1;
    if (api_run_decode(p, &x, e) == 0 &&
        core_run(c->core, c->tenant, &x.r, c->client_fd, &res, sid, e) == 0) {
        *out = api_exec_result_json(&res);
        core_exec_result_free(&res);
        rc = 0;
    }
    api_run_in_free(&x);
    json_decref(p);
    return rc;
}

static int t_stop(http_ctx *c, json_t *args, json_t **out, core_error *e)
{
    static const char *const fields[] = {"sandbox_id", NULL};
    const char *id = NULL;
    int got;
    if (jin_known(args, fields, e) < 0 || (got = jin_str(args, "sandbox_id", &id, e)) < 0)
        return -1;
    if (!got)
        return jin_missing(e, "sandbox_id");
    if (core_stop(c->core, c->tenant, id, false, e) < 0)
        return -1;
    *out = json_pack("{s:s,s:b}", "sandbox_id", id, "stopped", 1);
    return 0;
}

#define SID "\"sandbox_id\":{\"type\":\"string\",\"description\":\"the id create_sandbox returned\"}"
#define PATH(def) "\"path\":{\"type\":\"string\",\"description\":\"an absolute path in the " \
                  "sandbox; relative paths are under /workspace\"" def "}"

static const struct {
    const char *name;
    const char *title;
    const char *description;
    const char *schema;           /* JSON Schema of the arguments */
    tool_fn fn;
} tools[] = {
    {"run_code", "Run code",
     "Run a program in a fresh sandbox that is discarded afterwards, and return its stdout, "
     "stderr and exit_code (124 when it timed out). No network; /workspace is empty.",
     "{\"type\":\"object\",\"properties\":{"
     "\"code\":{\"type\":\"string\",\"description\":\"the program's source\"},"
     "\"language\":{\"type\":\"string\",\"enum\":[\"python\",\"node\",\"bash\",\"sh\"],"
     "\"default\":\"python\"},"
     "\"timeout_ms\":{\"type\":\"integer\",\"minimum\":1,\"default\":300000},"
     "\"stdin\":{\"type\":\"string\",\"description\":\"text fed to the program's stdin\"}},"
     "\"required\":[\"code\"],\"additionalProperties\":false}",
     t_run_code},
    {"create_sandbox", "Create a sandbox",
     "Create a persistent sandbox (isolated Linux environment, no network, files in "
     "/workspace kept between calls) and return its sandbox_id for the other tools. Stop it "
     "with stop_sandbox when done; an idle one is reaped after idle_timeout_secs.",
     "{\"type\":\"object\",\"properties\":{"
     "\"image\":{\"type\":\"string\",\"default\":\"python\",\"description\":\"python, node, "
     "shell or an operator's custom image\"},"
     "\"memory_mb\":{\"type\":\"integer\",\"minimum\":16},"
     "\"cpus\":{\"type\":\"number\",\"exclusiveMinimum\":0},"
     "\"idle_timeout_secs\":{\"type\":\"integer\",\"minimum\":1},"
     "\"name\":{\"type\":\"string\"},"
     "\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}}},"
     "\"additionalProperties\":false}",
     t_create},
    {"exec", "Run a command",
     "Run a shell command in a sandbox (as an unprivileged user, in /workspace) and return "
     "stdout, stderr, exit_code and timed_out. Output is capped at 1 MiB per stream.",
     "{\"type\":\"object\",\"properties\":{" SID ","
     "\"command\":{\"type\":\"string\",\"description\":\"a shell command line, run by "
     "/bin/sh -c\"},"
     "\"argv\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"or a "
     "program and its arguments, run directly\"},"
     "\"timeout_ms\":{\"type\":\"integer\",\"minimum\":1,\"default\":300000},"
     "\"workdir\":{\"type\":\"string\",\"default\":\"/workspace\"},"
     "\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}},"
     "\"stdin\":{\"type\":\"string\"}},"
     "\"required\":[\"sandbox_id\"],\"additionalProperties\":false}",
     t_exec},
    {"read_file", "Read a file",
     "Return the text of a file in a sandbox (UTF-8 files under 1 MiB; others are described).",
     "{\"type\":\"object\",\"properties\":{" SID "," PATH("") "},"
     "\"required\":[\"sandbox_id\",\"path\"],\"additionalProperties\":false}",
     t_read_file},
    {"write_file", "Write a file",
     "Write text to a file in a sandbox, atomically, creating missing parent directories.",
     "{\"type\":\"object\",\"properties\":{" SID "," PATH("") ","
     "\"content\":{\"type\":\"string\"},"
     "\"mode\":{\"type\":\"string\",\"default\":\"0644\",\"description\":\"octal permissions\"},"
     "\"parents\":{\"type\":\"boolean\",\"default\":true}},"
     "\"required\":[\"sandbox_id\",\"path\",\"content\"],\"additionalProperties\":false}",
     t_write_file},
    {"list_files", "List a directory",
     "List a directory in a sandbox: each entry's name, is_dir, size, mode, mtime, is_symlink.",
     "{\"type\":\"object\",\"properties\":{" SID "," PATH(",\"default\":\"/workspace\"") "},"
     "\"required\":[\"sandbox_id\"],\"additionalProperties\":false}",
     t_list_files},
    {"grep", "Search file contents",
     "Search files under a path in a sandbox for a regular expression (PCRE2); returns "
     "matches as {path, line, content}. Binary files are skipped.",
     "{\"type\":\"object\",\"properties\":{" SID ","
     "\"pattern\":{\"type\":\"string\"}," PATH(",\"default\":\"/workspace\"") ","
     "\"ignore_case\":{\"type\":\"boolean\",\"default\":false},"
     "\"include_glob\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
     "\"exclude_glob\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
     "\"max_matches\":{\"type\":\"integer\",\"minimum\":1,\"default\":1000}},"
     "\"required\":[\"sandbox_id\",\"pattern\"],\"additionalProperties\":false}",
     t_grep},
    {"glob", "Find files",
     "Find paths under a directory in a sandbox matching a gitignore-style pattern "
     "(\"**/*.py\"), sorted.",
     "{\"type\":\"object\",\"properties\":{" SID ","
     "\"pattern\":{\"type\":\"string\"}," PATH(",\"default\":\"/workspace\"") ","
     "\"include_hidden\":{\"type\":\"boolean\",\"default\":false}},"
     "\"required\":[\"sandbox_id\",\"pattern\"],\"additionalProperties\":false}",
     t_glob},
    {"code_run", "Run restricted Python",
     "Run restricted Python in cella's code-mode interpreter (no files, no network, no "
     "processes; imports: json, math, re, datetime, asyncio). The last expression is the "
     "result. A call to a name listed in functions pauses the run: the answer is "
     "{status: \"call\", run_id, calls: [{call_id, function, args, kwargs}]}; answer them "
     "with code_resume. Otherwise {status: \"complete\", result, stdout} or {status: "
     "\"error\", error: {type, message, line}}.",
     "{\"type\":\"object\",\"properties\":{"
     "\"code\":{\"type\":\"string\"},"
     "\"inputs\":{\"type\":\"object\",\"description\":\"globals bound before the run\"},"
     "\"functions\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
     "\"description\":\"names whose calls pause the run for you to answer\"},"
     "\"limits\":{\"type\":\"object\",\"description\":\"max_time_ms, max_memory_bytes, "
     "max_allocations, max_recursion_depth, max_host_calls, max_nesting\"},"
     "\"top_level_await\":{\"type\":\"boolean\",\"default\":false}},"
     "\"required\":[\"code\"],\"additionalProperties\":false}",
     api_code_run_json},
    {"code_resume", "Answer a paused Python run",
     "Answer the calls of a run code_run paused, each with a value or an error, and run on; "
     "answers as code_run.",
     "{\"type\":\"object\",\"properties\":{"
     "\"run_id\":{\"type\":\"string\"},"
     "\"results\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
     "\"call_id\":{\"type\":\"integer\"},\"value\":{},"
     "\"error\":{\"type\":\"object\",\"properties\":{\"type\":{\"type\":\"string\"},"
     "\"message\":{\"type\":\"string\"}},\"required\":[\"type\"]}},"
     "\"required\":[\"call_id\"]}}},"
     "\"required\":[\"run_id\",\"results\"],\"additionalProperties\":false}",
     api_code_resume_json},
    {"stop_sandbox", "Stop a sandbox",
     "Stop a sandbox: its processes are killed and its files removed.",
     "{\"type\":\"object\",\"properties\":{" SID "},"
     "\"required\":[\"sandbox_id\"],\"additionalProperties\":false}",
     t_stop},
};

#define N_TOOLS (sizeof(tools) / sizeof(tools[0]))

/* ---- JSON-RPC ---------------------------------------------------------------------- */

/* Text for a JSON string: a message that quotes the caller (a method or
 * tool name cut at a byte count) may not be valid UTF-8, and jansson would
 * refuse it, losing the whole answer. */
static json_t *text_json(const char *s)
{
    cbuf b;
    cbuf_init(&b);
    utf8_lossy(&b, (const uint8_t *)s, strlen(s));
    json_t *t = json_stringn((const char *)cbuf_head(&b), cbuf_avail(&b));
    cbuf_free(&b);
    return t ? t : json_string("(unprintable)");
}

static json_t *rpc_error(json_t *id, int code, const char *msg)
{
    return json_pack("{s:s,s:O,s:{s:i,s:o}}", "jsonrpc", "2.0", "id", id ? id : json_null(),
                     "error", "code", code, "message", text_json(msg));
}

static json_t *rpc_result(json_t *id, json_t *result)
{
    return json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result", result);
}

static json_t *text_content(json_t *text_or_json, bool is_error)
{
    json_t *t;
    if (json_is_string(text_or_json)) {
        t = json_incref(text_or_json);
    } else {
        char *s = json_dumps(text_or_json, JSON_COMPACT | JSON_ENSURE_ASCII);
        t = json_string(s ? s : "null");
        free(s);
    }
    return json_pack("{s:[{s:s,s:o}],s:b}", "content", "type", "text", "text", t, "isError",
                     is_error);
}

/* A failed tool call as the model should read it: what went wrong, and
 * what to send instead. */
static json_t *tool_error(const core_error *e)
{
    json_t *obj = http_error_object(e);
    cbuf b;
    cbuf_init(&b);
    char *line = cella_asprintf("%s %s: %s", core_code_lookup(e->code)->name,
                                json_string_value(json_object_get(obj, "type")), e->message);
    cbuf_append(&b, line, strlen(line));
    cella_free(line);
    json_t *fix = json_object_get(obj, "fix");
    if (fix && !json_is_null(fix)) {
        char *f = json_dumps(fix, JSON_COMPACT);
        line = cella_asprintf("\nfix: resend with %s", f ? f : "");
        cbuf_append(&b, line, strlen(line));
        cella_free(line);
        free(f);
    }
    const char *note = json_string_value(json_object_get(obj, "fix_note"));
    if (note) {
        line = cella_asprintf("\nwhat to do: %s", note);
        cbuf_append(&b, line, strlen(line));
        cella_free(line);
    }
    json_decref(obj);
    cbuf_append(&b, "", 1);
    json_t *text = text_json((const char *)cbuf_head(&b));
    cbuf_free(&b);
    json_t *r = text_content(text, true);
    json_decref(text);
    return r;
}

static json_t *m_initialize(json_t *params)
{
    const char *want = json_string_value(json_object_get(params, "protocolVersion"));
    const char *v = versions[0];
    for (size_t i = 0; want && versions[i]; i++)
        if (!strcmp(want, versions[i]))
            v = versions[i];
    return json_pack(
        "{s:s,s:{s:{s:b}},s:{s:s,s:s,s:s},s:s}", "protocolVersion", v, "capabilities", "tools",
        "listChanged", 0, "serverInfo", "name", "cella", "title", "cella sandboxes", "version",
        CELLA_VERSION, "instructions",
        "cella runs code in isolated Linux sandboxes (no network). Use run_code for a one-off "
        "program. For work across several steps, create_sandbox once, then exec, write_file, "
        "read_file, list_files, grep and glob with its sandbox_id, and stop_sandbox at the end.");
}

static json_t *m_tools_list(void)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < N_TOOLS; i++) {
        json_error_t je;
        json_t *schema = json_loads(tools[i].schema, 0, &je);
        if (!schema)                  /* a typo in the table above: tests catch it */
            schema = json_pack("{s:s}", "type", "object");
        json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:o}", "name", tools[i].name,
                                             "title", tools[i].title, "description",
                                             tools[i].description, "inputSchema", schema));
    }
    return json_pack("{s:o}", "tools", arr);
}

/* tools/call: a JSON-RPC error for a call that names no tool; else the
 * tool's result, an error of the tool's own being a result with isError. */
static json_t *m_tools_call(http_ctx *c, json_t *id, json_t *params)
{
    const char *name = json_string_value(json_object_get(params, "name"));
    json_t *args = json_object_get(params, "arguments");
    if (!name)
        return rpc_error(id, RPC_INVALID_PARAMS, "tools/call needs params.name");
    if (args && !json_is_null(args) && !json_is_object(args))
        return rpc_error(id, RPC_INVALID_PARAMS, "params.arguments must be an object");
    for (size_t i = 0; i < N_TOOLS; i++) {
        if (strcmp(name, tools[i].name) != 0)
            continue;
        /* A copy: the tools edit their arguments into payloads. */
        json_t *a = args && json_is_object(args) ? json_deep_copy(args) : json_object();
        json_t *out = NULL;
        core_error e;
        json_t *r = tools[i].fn(c, a, &out, &e) == 0 ? text_content(out, false) : tool_error(&e);
        json_decref(out);
        json_decref(a);
        return rpc_result(id, r);
    }
    char msg[160];
    snprintf(msg, sizeof(msg), "Unknown tool: %.64s", name);
    return rpc_error(id, RPC_INVALID_PARAMS, msg);
}

/* One message: the answer to a request, or NULL for a notification or a
 * response (nothing to answer). */
static json_t *handle(http_ctx *c, json_t *m)
{
    if (!json_is_object(m))
        return rpc_error(NULL, RPC_INVALID_REQUEST, "a JSON-RPC message is an object");
    json_t *id = json_object_get(m, "id");
    const char *method = json_string_value(json_object_get(m, "method"));
    const char *ver = json_string_value(json_object_get(m, "jsonrpc"));
    if (!method) {
        /* A response to a request of ours (we send none), or garbage. */
        if (id && (json_object_get(m, "result") || json_object_get(m, "error")))
            return NULL;
        return rpc_error(id, RPC_INVALID_REQUEST, "a JSON-RPC request needs a method");
    }
    if (!ver || strcmp(ver, "2.0") != 0)
        return rpc_error(id, RPC_INVALID_REQUEST, "jsonrpc must be \"2.0\"");
    if (id && !json_is_string(id) && !json_is_integer(id))
        return rpc_error(NULL, RPC_INVALID_REQUEST, "id must be a string or an integer");
    bool notification = !id;
    json_t *params = json_object_get(m, "params");
    if (params && !json_is_object(params) && !json_is_array(params))
        return notification ? NULL
                            : rpc_error(id, RPC_INVALID_PARAMS, "params must be an object");
    if (notification)
        return NULL;              /* notifications/initialized, cancelled, ...: nothing to do */
    if (!strcmp(method, "initialize"))
        return rpc_result(id, m_initialize(params));
    if (!strcmp(method, "ping"))
        return rpc_result(id, json_object());
    if (!strcmp(method, "tools/list"))
        return rpc_result(id, m_tools_list());
    if (!strcmp(method, "tools/call"))
        return m_tools_call(c, id, params);
    char msg[160];
    snprintf(msg, sizeof(msg), "Method not found: %.64s", method);
    return rpc_error(id, RPC_NO_METHOD, msg);
}

/* handle(), but a request (a message with an id) always gets an answer:
 * a client waits for one, and a lost answer would hang it. */
static json_t *answer_one(http_ctx *c, json_t *m)
{
    json_t *r = handle(c, m);
    json_t *id = json_is_object(m) ? json_object_get(m, "id") : NULL;
    if (!r && id && (json_is_string(id) || json_is_integer(id)) &&
        json_object_get(m, "method"))
        r = rpc_error(id, RPC_INTERNAL, "internal error: the answer could not be made");
    return r;
}

static void h_mcp(http_ctx *c)
{
    json_error_t je;
    /* The body as JSON-RPC's parse error would have it (jin_parse's
     * refusals are S001 in other dialects; here they are -32700). */
    json_t *j = json_loadb((const char *)c->body, c->body_len, JSON_REJECT_DUPLICATES, &je);
    if (!j) {
        char msg[256];
        snprintf(msg, sizeof(msg), "Parse error: %s", je.text);
        http_reply_json(c, 400, rpc_error(NULL, RPC_PARSE, msg));
        return;
    }
    json_t *answer = NULL;
    if (json_is_array(j)) {
        /* A batch (protocol versions up to 2025-03-26; later ones dropped
         * them). Each answer can be far larger than its request, and all
         * are held until the reply: so few are taken. */
        if (!json_array_size(j)) {
            answer = rpc_error(NULL, RPC_INVALID_REQUEST, "an empty batch");
        } else if (json_array_size(j) > MCP_MAX_BATCH) {
            char msg[96];
            snprintf(msg, sizeof(msg), "a batch holds at most %d messages", MCP_MAX_BATCH);
            answer = rpc_error(NULL, RPC_INVALID_REQUEST, msg);
        } else {
            answer = json_array();
            size_t i;
            json_t *m;
            json_array_foreach(j, i, m) {
                json_t *r = answer_one(c, m);
                if (r)
                    json_array_append_new(answer, r);
            }
            if (!json_array_size(answer)) {
                json_decref(answer);
                answer = NULL;
            }
        }
    } else {
        answer = answer_one(c, j);
    }
    json_decref(j);
    if (!answer) {
        /* Only notifications or responses: accepted, nothing to say. */
        http_reply_text(c, 202, "text/plain", cella_strdup(""), 0);
        return;
    }
    http_reply_json(c, 200, answer);
}

/* Failures the server answers itself (no or a wrong token, a body past the
 * limit, GET on /mcp) as JSON-RPC errors, so MCP clients can read them. */
static json_t *mcp_error(const core_error *e, int *status)
{
    *status = core_http_status(e);
    char *msg = cella_asprintf("%s: %s", core_code_lookup(e->code)->name, e->message);
    json_t *r = rpc_error(NULL, *status == 401 || *status == 403 ? RPC_UNAUTHORIZED
                                                               : RPC_INVALID_REQUEST, msg);
    cella_free(msg);
    return r;
}

const http_route api_mcp_routes[] = {
    {"POST", "/mcp", NULL, 0, h_mcp, mcp_error},
    {NULL, NULL, NULL, 0, NULL, NULL},
};
