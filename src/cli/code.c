/* `cella code run` and `cella code resume`: code mode's interpreter in this
 * process, its host calls answered over stdin and stdout as JSON lines, so
 * a script (or a person) can play the host. A run can be dumped at its
 * first host call and resumed by another process: the same bytes the daemon
 * keeps for a paused run. */
#include "cli/code.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/opts.h"
#include "util/parse.h"

static const char code_usage[] =
    "Usage: cella code run FILE.py|- [OPTIONS]\n"
    "       cella code resume DUMP [--jsonl] [--dump-to PATH]\n"
    "\n"
    "Run restricted Python (code mode) locally, without a daemon. When the\n"
    "program calls a host function, the call is printed on stdout as one JSON\n"
    "line and the answer is read from stdin as one JSON line:\n"
    "  out: {\"call_id\": 1, \"function\": \"f\", \"args\": [...], \"kwargs\": {...}}\n"
    "  in:  {\"call_id\": 1, \"value\": ...}\n"
    "   or  {\"call_id\": 1, \"error\": {\"type\": \"ValueError\", \"message\": \"...\"}}\n"
    "Values are JSON, with tuples, sets, bytes, big ints and non-finite floats\n"
    "tagged ({\"$tuple\": [...]}, {\"$int\": \"...\"}, ...; see docs/code.md).\n"
    "Several calls may be pending at once (asyncio.gather); answer them in any\n"
    "order, one line each. An answer the run refuses is reported on stderr and\n"
    "the next line is read.\n"
    "\n"
    "Output: print() output goes to stdout as it is (a call line always starts\n"
    "on a fresh line); the value of the last expression is printed at the end as\n"
    "'=> JSON'; a Python error goes to stderr as 'ValueError: msg (line 3)'.\n"
    "With --jsonl every stdout line is one JSON object: {\"output\": \"text\"}, the\n"
    "calls, and last {\"status\": \"complete\", \"result\": ..., \"duration_us\": N}\n"
    "or {\"status\": \"error\", \"error\": {\"type\", \"message\", \"line\"}, ...}.\n"
    "\n"
    "Options of run:\n"
    "  --input NAME=JSON     bind the global NAME to a value (repeatable)\n"
    "  --function NAME       declare a host function (repeatable); with none\n"
    "                        declared, any name neither bound nor builtin is one\n"
    "  --limit KEY=N         time_ms, memory (bytes; K, M, G suffixes), allocations,\n"
    "                        depth, calls or nesting (repeatable; defaults: 10 s,\n"
    "                        256M, none, 1000, 10000, 200)\n"
    "  --top-level-await     allow 'await' at module level\n"
    "Options of both:\n"
    "  --jsonl               every stdout line a JSON object (see above)\n"
    "  --dump-to PATH        when stdin ends with host calls pending (at the next\n"
    "                        call, without waiting, when stdin is a terminal),\n"
    "                        write the paused run to PATH and exit 3; 'cella code\n"
    "                        resume PATH' goes on from there, in another process,\n"
    "                        printing the pending calls again and reading their\n"
    "                        answers from stdin\n"
    "  -h, --help            show this help\n"
    "\n"
    "Exit status: 0 complete, 1 Python error, 2 usage or I/O error (a dump that\n"
    "does not load included), 3 paused (--dump-to).\n"
    "\n"
    "Examples:\n"
    "  echo 'sum(x * x for x in range(10))' | cella code run -\n"
    "  cella code run job.py --input n=3 --function fetch --jsonl\n"
    "  echo '{\"call_id\": 1, \"value\": 42}' | cella code run job.py --function fetch\n"
    "  cella code run job.py --dump-to run.dump </dev/null\n"
    "  echo '{\"call_id\": 1, \"value\": 1}' | cella code resume run.dump\n";

#define MAX_FILE ((size_t)256 << 20)

typedef struct code_cli {
    bool jsonl, at_line_start;
    const char *dump_to;
    uint64_t duration_us;
} code_cli;

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("cella code: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry 'cella code --help'.\n", stderr);
    return CLI_CODE_USAGE;
}

/* A whole file (or stdin for "-"), NUL-terminated. */
static char *read_file(const char *path, size_t *len)
{
    int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
    if (fd < 0)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf)
            abort();
        if (n + 1 >= cap) {
            if (cap >= MAX_FILE) {
                errno = EFBIG;
                break;
            }
            cap *= 2;
            buf = realloc(buf, cap);
            continue;
        }
        ssize_t k = read(fd, buf + n, cap - n - 1);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (k == 0) {
                if (fd)
                    close(fd);
                buf[n] = 0;
                *len = n;
                return buf;
            }
            break;
        }
        n += (size_t)k;
    }
    int e = errno;
    if (fd)
        close(fd);
    free(buf);
    errno = e;
    return NULL;
}

static void fresh_line(code_cli *c)
{
    if (!c->jsonl && !c->at_line_start)
        fputc('\n', stdout);
    c->at_line_start = true;
}

static void emit_output(code_cli *c, const char *out, size_t n)
{
    if (!n)
        return;
    if (c->jsonl) {
        fputs("{\"output\": ", stdout);
        cli_code_json_str(stdout, out, n);
        fputs("}\n", stdout);
    } else {
        fwrite(out, 1, n, stdout);
        c->at_line_start = out[n - 1] == '\n';
    }
}

static void emit_call(code_cli *c, const code_hostcall *call)
{
    fresh_line(c);
    printf("{\"call_id\": %llu, \"function\": ", (unsigned long long)call->id);
    cli_code_json_str(stdout, call->function, strlen(call->function));
    printf(", \"args\": %s, \"kwargs\": %s}\n", call->args_json ? call->args_json : "[]",
           call->kwargs_json ? call->kwargs_json : "{}");
}

static int emit_error(code_cli *c, const code_error *e)
{
    if (c->jsonl) {
        fputs("{\"status\": \"error\", \"error\": {\"type\": ", stdout);
        cli_code_json_str(stdout, e->type, strlen(e->type));
        fputs(", \"message\": ", stdout);
        cli_code_json_str(stdout, e->msg, strlen(e->msg));
        if (e->line > 0)
            printf(", \"line\": %d}", e->line);
        else
            fputs(", \"line\": null}", stdout);
        printf(", \"duration_us\": %llu}\n", (unsigned long long)c->duration_us);
        return CLI_CODE_PYERR;
    }
    fresh_line(c);
    fflush(stdout);
    char buf[400];
    code_error_format(e, buf, sizeof(buf));
    fprintf(stderr, "%s\n", buf);
    return CLI_CODE_PYERR;
}

static int write_dump(const char *path, const char *buf, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    for (size_t off = 0; off < len;) {
        ssize_t k = write(fd, buf + off, len - off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        off += (size_t)k;
    }
    return close(fd);
}

static int pause_to_dump(code_cli *c, code_run *r)
{
    char *buf;
    size_t len;
    code_error err = {0};
    if (code_run_dump(r, &buf, &len, &err) < 0) {
        char m[400];
        code_error_format(&err, m, sizeof(m));
        fprintf(stderr, "cella code: cannot dump the run: %s\n", m);
        return CLI_CODE_USAGE;
    }
    int rc = write_dump(c->dump_to, buf, len);
    free(buf);
    if (rc < 0) {
        fprintf(stderr, "cella code: --dump-to %s: %s\n", c->dump_to, strerror(errno));
        return CLI_CODE_USAGE;
    }
    fflush(stdout);
    fprintf(stderr, "cella code: paused; the run is in %s (cella code resume %s)\n", c->dump_to,
            c->dump_to);
    return CLI_CODE_PAUSED;
}

#define STDIN_ENDED (-1)

/* The next answer from stdin, resumed into st; 0, STDIN_ENDED, or an exit
 * status. */
static int answer(code_run *r, code_step *st, char **line, size_t *cap)
{
    for (;;) {
        fflush(stdout);
        ssize_t n = getline(line, cap, stdin);
        if (n < 0)
            return STDIN_ENDED;
        if (strspn(*line, " \t\r\n") == (size_t)n)
            continue;
        cli_code_answer a;
        char why[200];
        if (cli_code_parse_answer(*line, (size_t)n, &a, why, sizeof(why)) < 0) {
            fprintf(stderr, "cella code: answer ignored: %s\n", why);
            continue;
        }
        code_step_clear(st);
        code_run_resume(r, &a.res, 1, st);
        cli_code_answer_free(&a);
        if (st->kind == CODE_STEP_ERROR && !code_run_done(r)) {
            /* refused (not pending, bad value): the run is as it was */
            char m[400];
            code_error_format(&st->error, m, sizeof(m));
            fprintf(stderr, "cella code: answer refused: %s\n", m);
            continue;
        }
        return 0;
    }
}

/* Steps until the run ends or is dumped. With --dump-to, the answers stdin
 * already holds are used first, and the run is dumped when stdin ends with
 * calls pending (so a script that gives a resumed run more answers than its
 * pending calls loses none); on a terminal, at once at the next new call,
 * without waiting. loaded: st is the step a load returned, whose calls are
 * always read from stdin. */
static int drive(code_cli *c, code_run *r, code_step *st, bool loaded)
{
    char *line = NULL;
    size_t cap = 0;
    int rc;
    for (;;) {
        c->duration_us += st->duration_us;
        emit_output(c, st->out, st->out_len);
        if (st->kind == CODE_STEP_COMPLETE) {
            const char *res = st->result_json ? st->result_json : "null";
            if (c->jsonl)
                printf("{\"status\": \"complete\", \"result\": %s, \"duration_us\": %llu}\n", res,
                       (unsigned long long)c->duration_us);
            else {
                fresh_line(c);
                printf("=> %s\n", res);
            }
            rc = CLI_CODE_OK;
            break;
        }
        if (st->kind == CODE_STEP_ERROR) {
            rc = emit_error(c, &st->error);
            break;
        }
        for (size_t i = 0; i < st->ncalls; i++)
            emit_call(c, &st->calls[i]);
        if (c->dump_to && !loaded && st->ncalls && isatty(STDIN_FILENO)) {
            rc = pause_to_dump(c, r);
            break;
        }
        loaded = false;
        rc = answer(r, st, &line, &cap);
        if (rc == STDIN_ENDED && c->dump_to) {
            rc = pause_to_dump(c, r);
            break;
        }
        if (rc == STDIN_ENDED) {
            fprintf(stderr, "cella code: stdin ended with host calls pending\n");
            rc = CLI_CODE_USAGE;
            break;
        }
        if (rc)
            break;
    }
    free(line);
    fflush(stdout);
    return rc;
}

static int parse_limit(const char *kv, code_limits *l)
{
    static const char *const keys[] = {"time_ms", "memory", "allocations", "depth", "calls",
                                       "nesting"};
    const char *eq = strchr(kv, '=');
    size_t k = 0, klen = eq ? (size_t)(eq - kv) : 0;
    while (k < 6 && (strlen(keys[k]) != klen || strncmp(kv, keys[k], klen)))
        k++;
    if (!eq || k == 6)
        return usage_error("--limit %s: expected time_ms, memory, allocations, depth, calls or "
                           "nesting =N",
                           kv);
    cella_err err = {0};
    uint64_t v;
    int rc = k == 1 ? parse_size(eq + 1, SIZE_MAX, &v, &err)
             : k == 0 || k == 2 ? parse_u64(eq + 1, 1, UINT64_MAX / 1000, &v, &err)
                                : parse_u64(eq + 1, 1, UINT32_MAX, &v, &err);
    if (rc < 0 || v == 0)
        return usage_error("--limit %s: not a positive number in range", kv);
    switch (k) {
    case 0: l->max_time_us = v * 1000; break;
    case 1: l->max_bytes = (size_t)v; break;
    case 2: l->max_allocs = (size_t)v; break;
    case 3: l->max_depth = (uint32_t)v; break;
    case 4: l->max_calls = (uint32_t)v; break;
    default: l->max_nesting = (uint32_t)v; break;
    }
    return 0;
}

typedef struct run_args {
    const char *file;
    code_run_opts o;
    code_input *inputs;
    const char **functions;
} run_args;

/* Options of run (all = true) or resume; 0, 1 for --help, or an exit status. */
static int parse_args(int argc, char **argv, bool all, code_cli *c, run_args *a)
{
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i], *val;
        cella_err err = {0};
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help"))
            return 1;
        if (cli_is_opt(arg, "--jsonl")) {
            c->jsonl = true;
        } else if (cli_is_opt(arg, "--dump-to")) {
            if (cli_need_value(argc, argv, &i, "--dump-to", &c->dump_to, &err) < 0)
                return usage_error("%s", err.msg);
        } else if (all && cli_is_opt(arg, "--top-level-await")) {
            a->o.top_level_await = true;
        } else if (all && cli_is_opt(arg, "--input")) {
            if (cli_need_value(argc, argv, &i, "--input", &val, &err) < 0)
                return usage_error("%s", err.msg);
            const char *eq = strchr(val, '=');
            if (!eq || eq == val)
                return usage_error("--input %s: expected NAME=JSON", val);
            a->inputs = realloc(a->inputs, (a->o.ninputs + 1) * sizeof(*a->inputs));
            if (!a->inputs)
                abort();
            char *name = strndup(val, (size_t)(eq - val));
            if (!name)
                abort();
            a->inputs[a->o.ninputs++] = (code_input){.name = name, .json = eq + 1};
        } else if (all && cli_is_opt(arg, "--function")) {
            if (cli_need_value(argc, argv, &i, "--function", &val, &err) < 0)
                return usage_error("%s", err.msg);
            a->functions = realloc(a->functions, (a->o.nfunctions + 1) * sizeof(char *));
            if (!a->functions)
                abort();
            a->functions[a->o.nfunctions++] = val;
        } else if (all && cli_is_opt(arg, "--limit")) {
            if (cli_need_value(argc, argv, &i, "--limit", &val, &err) < 0)
                return usage_error("%s", err.msg);
            int rc = parse_limit(val, &a->o.limits);
            if (rc)
                return rc;
        } else if (arg[0] == '-' && arg[1]) {
            return usage_error("unknown option '%s'", arg);
        } else if (a->file) {
            return usage_error("one file only ('%s' is one too many)", arg);
        } else {
            a->file = arg;
        }
    }
    if (!a->file)
        return usage_error("%s", all ? "which file? (- for stdin)" : "which dump?");
    a->o.inputs = a->inputs;
    a->o.functions = a->functions;
    a->o.filename = a->file;
    return 0;
}

static void run_args_free(run_args *a)
{
    for (size_t i = 0; i < a->o.ninputs; i++)
        free((char *)a->inputs[i].name);
    free(a->inputs);
    free(a->functions);
}

static int cmd_run(code_cli *c, run_args *a)
{
    size_t len;
    char *src = read_file(a->file, &len);
    if (!src) {
        fprintf(stderr, "cella code: %s: %s\n", a->file, strerror(errno));
        return CLI_CODE_USAGE;
    }
    code_run *r;
    code_error err = {0};
    int rc = code_run_new(src, len, &a->o, &r, &err);
    free(src);
    if (rc < 0)
        return emit_error(c, &err);
    code_step st;
    memset(&st, 0, sizeof(st));
    code_run_start(r, &st);
    rc = drive(c, r, &st, false);
    code_step_clear(&st);
    code_run_free(r);
    return rc;
}

static int cmd_resume(code_cli *c, run_args *a)
{
    size_t len;
    char *buf = read_file(a->file, &len);
    if (!buf) {
        fprintf(stderr, "cella code: %s: %s\n", a->file, strerror(errno));
        return CLI_CODE_USAGE;
    }
    code_run *r;
    code_step st;
    code_error err = {0};
    int rc = code_run_load(buf, len, &a->o, &r, &st, &err);
    free(buf);
    if (rc < 0) {
        char m[400];
        code_error_format(&err, m, sizeof(m));
        fprintf(stderr, "cella code: %s: %s\n", a->file, m);
        return CLI_CODE_USAGE;
    }
    rc = drive(c, r, &st, true);
    code_step_clear(&st);
    code_run_free(r);
    return rc;
}

int cli_code_main(int argc, char **argv)
{
    if (argc < 1) {
        fputs(code_usage, stderr);
        return CLI_CODE_USAGE;
    }
    const char *sub = argv[0];
    if (!strcmp(sub, "-h") || !strcmp(sub, "--help") || !strcmp(sub, "help")) {
        fputs(code_usage, stdout);
        return CLI_CODE_OK;
    }
    bool run = !strcmp(sub, "run");
    if (!run && strcmp(sub, "resume"))
        return usage_error("unknown subcommand '%s' (run or resume)", sub);
    code_cli c = {.at_line_start = true};
    run_args a;
    memset(&a, 0, sizeof(a));
    int rc = parse_args(argc - 1, argv + 1, run, &c, &a);
    if (rc == 1) {
        fputs(code_usage, stdout);
        rc = CLI_CODE_OK;
    } else if (rc == 0) {
        rc = run ? cmd_run(&c, &a) : cmd_resume(&c, &a);
    }
    run_args_free(&a);
    return rc;
}
