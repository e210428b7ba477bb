#include "cli/client.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cli/box_cmd.h"
#include "cli/httpc.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/cleanup.h"
#include "util/fdio.h"
#include "cli/opts.h"
#include "util/parse.h"
#include "util/text.h"

/* ---- usage --------------------------------------------------------------------- */

#define COMMON_OPTS                                                                        \
    "  --url URL            the daemon (default: $CELLA_URL, else " CLIENT_DEFAULT_URL ")\n" \
    "  -h, --help           show this help\n"

#define TOKEN_NOTE "A bearer token for the daemon, when it wants one, comes from $CELLA_TOKEN.\n"

static const char run_usage[] =
    "Usage: cella run [OPTIONS] [--] COMMAND [ARG...]\n"
    "\n"
    "Run one command in a fresh sandbox of the cella daemon ('cella serve') and exit\n"
    "with the command's exit status. cella creates the sandbox, prints the command's\n"
    "stdout and stderr as they come, and stops the sandbox afterwards, also when the\n"
    "command fails or you press Ctrl-C. When stdin is not a terminal, cella reads it\n"
    "to the end (at most 16 MiB) and hands it to the command; use </dev/null when\n"
    "there is nothing to give.\n"
    "\n"
    "Options:\n"
    "  --image NAME         image to start (default: shell; see 'cella catalog')\n"
    "  --timeout DUR        kill the command after DUR, e.g. 500ms, 30s, 2m\n"
    "                       (default: the daemon's)\n"
    "  -e, --env K=V        set an environment variable for the command (repeatable)\n"
    "  -w, --workdir DIR    working directory inside the sandbox (an absolute path)\n"
    "  --cpus N             CPU quota of the sandbox, fractions allowed, e.g. 0.5\n"
    "  --memory-mb N        memory limit of the sandbox in MiB\n"
    "  --json               after the command's output, print the daemon's exit record\n"
    "                       (exit_code, timed_out, duration_ms, ...) as JSON on stdout\n" COMMON_OPTS
    "\n" TOKEN_NOTE
    "\n"
    "Exit status: the command's own; 124 when it timed out; 128+N when signal N\n"
    "killed it; 125 when cella itself failed (bad option, daemon unreachable, an\n"
    "error from the daemon).\n"
    "\n"
    "Examples:\n"
    "  cella run -- python3 -c 'print(6 * 7)'\n"
    "  echo hello | cella run --timeout 10s -- tr a-z A-Z\n";

static const char create_usage[] =
    "Usage: cella create [OPTIONS] IMAGE\n"
    "\n"
    "Create a sandbox that stays up for later 'cella exec' calls, and print its ID.\n"
    "The daemon stops it after it has been idle for a while (--idle-timeout), or\n"
    "when you run 'cella stop ID'.\n"
    "\n"
    "Options:\n"
    "  --cpus N             CPU quota, fractions allowed, e.g. 0.5\n"
    "  --memory-mb N        memory limit in MiB\n"
    "  --name NAME          a name to recognize the sandbox by in 'cella ls'\n"
    "  --idle-timeout DUR   stop the sandbox after DUR without use, e.g. 90s, 10m, 2h\n"
    "  -e, --env K=V        set an environment variable for every command in the\n"
    "                       sandbox (repeatable)\n"
    "  --json               print the daemon's JSON answer instead of the ID\n" COMMON_OPTS
    "\n" TOKEN_NOTE
    "\n"
    "Exit status: 0 when the sandbox was created; 125 when it was not.\n"
    "\n"
    "Example:\n"
    "  id=$(cella create --memory-mb 256 --idle-timeout 10m python)\n"
    "  cella exec \"$id\" -- python3 -c 'print(1)'\n";

static const char exec_usage[] =
    "Usage: cella exec [OPTIONS] ID [--] COMMAND [ARG...]\n"
    "\n"
    "Run a command in an existing sandbox (see 'cella create') and exit with its\n"
    "exit status. The command's stdout and stderr are printed as they come. When\n"
    "stdin is not a terminal, cella reads it to the end (at most 16 MiB) and hands\n"
    "it to the command; use </dev/null when there is nothing to give. Ctrl-C ends\n"
    "the command; the sandbox stays.\n"
    "\n"
    "Options:\n"
    "  --timeout DUR        kill the command after DUR, e.g. 500ms, 30s, 2m\n"
    "                       (default: the daemon's)\n"
    "  -e, --env K=V        set an environment variable for the command (repeatable)\n"
    "  -w, --workdir DIR    working directory inside the sandbox (an absolute path)\n"
    "  --json               after the command's output, print the daemon's exit record\n"
    "                       (exit_code, timed_out, duration_ms, ...) as JSON on stdout\n" COMMON_OPTS
    "\n" TOKEN_NOTE
    "\n"
    "Exit status: the command's own; 124 when it timed out; 128+N when signal N\n"
    "killed it; 125 when cella itself failed (bad option, daemon unreachable, no\n"
    "such sandbox, an error from the daemon).\n"
    "\n"
    "Example:\n"
    "  cella exec -w /workspace -e DEBUG=1 \"$id\" -- make test\n";

static const char ls_usage[] =
    "Usage: cella ls [OPTIONS]\n"
    "\n"
    "List the daemon's sandboxes: ID, image, state, commands running now (EXECS),\n"
    "age and name.\n"
    "\n"
    "Options:\n"
    "  --json               print the daemon's JSON answer instead of the table\n" COMMON_OPTS
    "\n" TOKEN_NOTE
    "\n"
    "Exit status: 0, or 125 when the daemon could not be asked.\n"
    "\n"
    "Example:\n"
    "  cella ls --url http://10.0.0.5:7878\n";

static const char stop_usage[] =
    "Usage: cella stop [OPTIONS] ID...\n"
    "\n"
    "Stop sandboxes and free what they hold; a command running in one is killed.\n"
    "Prints each ID once it is stopped.\n"
    "\n"
    "Options:\n"
    "  --json               print the daemon's JSON answers instead of the IDs\n" COMMON_OPTS
    "\n" TOKEN_NOTE
    "\n"
    "Exit status: 0 when every sandbox was stopped; 125 when one was not (no such\n"
    "sandbox, daemon unreachable).\n"
    "\n"
    "Example:\n"
    "  cella stop \"$id\"\n";

static const char catalog_usage[] =
    "Usage: cella catalog [OPTIONS]\n"
    "\n"
    "List the images the daemon can start sandboxes from: name, kind, whether it\n"
    "is available on this host, whether your token may use it, and its reference.\n"
    "\n"
    "Options:\n"
    "  --json               print the daemon's JSON answer instead of the table\n" COMMON_OPTS
    "\n" TOKEN_NOTE
    "\n"
    "Exit status: 0, or 125 when the daemon could not be asked.\n"
    "\n"
    "Example:\n"
    "  cella catalog\n";

/* ---- options -------------------------------------------------------------------- */

enum {
    O_IMAGE = 1 << 0,
    O_TIMEOUT = 1 << 1,
    O_ENV = 1 << 2,
    O_CPUS = 1 << 3,
    O_MEMORY = 1 << 4,
    O_NAME = 1 << 5,
    O_IDLE = 1 << 6,
    O_WORKDIR = 1 << 7,
};

/* What follows the options. */
enum shape {
    SHAPE_COMMAND,                /* run: COMMAND [ARG...] */
    SHAPE_ID_COMMAND,             /* exec: ID COMMAND [ARG...] */
    SHAPE_ONE,                    /* create: IMAGE */
    SHAPE_IDS,                    /* stop: ID... */
    SHAPE_NONE,                   /* ls, catalog */
};

typedef struct cmd_info {
    const char *name;
    unsigned opts;
    enum shape shape;
    const char *usage;
} cmd_info;

static const cmd_info commands[] = {
    {"run", O_IMAGE | O_TIMEOUT | O_ENV | O_CPUS | O_MEMORY | O_WORKDIR, SHAPE_COMMAND, run_usage},
    {"create", O_IMAGE | O_ENV | O_CPUS | O_MEMORY | O_NAME | O_IDLE, SHAPE_ONE, create_usage},
    {"exec", O_TIMEOUT | O_ENV | O_WORKDIR, SHAPE_ID_COMMAND, exec_usage},
    {"ls", 0, SHAPE_NONE, ls_usage},
    {"stop", 0, SHAPE_IDS, stop_usage},
    {"catalog", 0, SHAPE_NONE, catalog_usage},
};

static const cmd_info *cmd_lookup(const char *cmd)
{
    for (size_t i = 0; cmd && i < sizeof(commands) / sizeof(commands[0]); i++)
        if (!strcmp(commands[i].name, cmd))
            return &commands[i];
    return NULL;
}

bool cli_client_is_command(const char *cmd)
{
    return cmd_lookup(cmd) != NULL;
}

const char *client_usage(const char *cmd)
{
    const cmd_info *ci = cmd_lookup(cmd);
    return ci ? ci->usage : NULL;
}


static void strv_push(char ***v, char *s)
{
    size_t n = cella_strv_len(*v);
    *v = cella_realloc(*v, (n + 2) * sizeof(char *));
    (*v)[n] = s;
    (*v)[n + 1] = NULL;
}

static int not_utf8(const char *s, cella_err *err)
{
    return cella_err_set(err, 0, "'%s' is not valid UTF-8, which the daemon's JSON API cannot "
                                 "carry",
                         s);
}

int client_args_parse(const char *cmd, int argc, char **argv, client_opts *o, cella_err *err)
{
    memset(o, 0, sizeof(*o));
    const cmd_info *ci = cmd_lookup(cmd);
    if (!ci)
        return cella_err_set(err, 0, "unknown command '%s'", cmd ? cmd : "");
    o->cmd = ci->name;
    if (ci->shape == SHAPE_COMMAND)
        o->image = "shell";
    bool opts_done = false;
    int i = 0;
    for (; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        unsigned need = 0;
        if (!opts_done && !strcmp(a, "--")) {
            if (ci->shape == SHAPE_COMMAND || ci->shape == SHAPE_ID_COMMAND) {
                i++;
                break;
            }
            opts_done = true;
            continue;
        }
        if (opts_done || a[0] != '-' || !a[1]) {
            if (ci->shape == SHAPE_COMMAND)
                break;                          /* the command starts here */
            if (ci->shape == SHAPE_ID_COMMAND) {
                if (o->id)
                    break;
                o->id = a;
            } else if (ci->shape == SHAPE_ONE && !o->image) {
                o->image = a;
            } else if (ci->shape == SHAPE_IDS) {
                strv_push(&o->ids, (char *)a);
            } else {
                return cella_err_set(err, 0, "unexpected argument '%s'", a);
            }
            continue;
        }
        /* Options; `need` is the flag that must be in the command's set. */
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            o->help = true;
            return 0;
        } else if (!strcmp(a, "--json")) {
            o->json = true;
        } else if (cli_is_opt(a, "--url")) {
            if (cli_need_value(argc, argv, &i, "--url", &o->url, err) < 0)
                return -1;
        } else if (cli_is_opt(a, "--image")) {
            need = O_IMAGE;
            if (cli_need_value(argc, argv, &i, "--image", &v, err) < 0)
                return -1;
            if ((ci->opts & O_IMAGE) && ci->shape == SHAPE_ONE && o->image)
                return cella_err_set(err, 0, "the image is given twice");
            o->image = v;
        } else if (cli_is_opt(a, "--timeout")) {
            need = O_TIMEOUT;
            if (cli_need_value(argc, argv, &i, "--timeout", &v, err) < 0 ||
                parse_duration_ms(v, CLIENT_MAX_TIMEOUT_MS, &o->timeout_ms, err) < 0)
                return cella_err_prefix(err, "--timeout");
            if (o->timeout_ms == 0)
                return cella_err_set(err, 0, "--timeout: must be more than zero");
            o->has_timeout = true;
        } else if (cli_is_opt(a, "--idle-timeout")) {
            need = O_IDLE;
            uint64_t ms;
            if (cli_need_value(argc, argv, &i, "--idle-timeout", &v, err) < 0 ||
                parse_duration_ms(v, 365ull * 86400 * 1000, &ms, err) < 0)
                return cella_err_prefix(err, "--idle-timeout");
            if (ms == 0)
                return cella_err_set(err, 0, "--idle-timeout: must be more than zero");
            /* The daemon counts whole seconds; never stop earlier than asked. */
            o->idle_timeout_secs = (ms + 999) / 1000;
            o->has_idle = true;
        } else if (cli_is_opt(a, "--cpus")) {
            need = O_CPUS;
            if (cli_need_value(argc, argv, &i, "--cpus", &v, err) < 0 ||
                parse_cpus_milli(v, 256 * 1000, &o->cpu_milli, err) < 0)
                return cella_err_prefix(err, "--cpus");
            o->has_cpus = true;
        } else if (cli_is_opt(a, "--memory-mb")) {
            need = O_MEMORY;
            /* Only the syntax here: the daemon knows its own limits. */
            if (cli_need_value(argc, argv, &i, "--memory-mb", &v, err) < 0 ||
                parse_u64(v, 1, 1 << 20, &o->memory_mb, err) < 0)
                return cella_err_prefix(err, "--memory-mb");
            o->has_memory = true;
        } else if (cli_is_opt(a, "--name")) {
            need = O_NAME;
            if (cli_need_value(argc, argv, &i, "--name", &o->name, err) < 0)
                return -1;
        } else if (!strcmp(a, "-w") || cli_is_opt(a, "--workdir")) {
            need = O_WORKDIR;
            if (cli_need_value(argc, argv, &i, "--workdir", &o->workdir, err) < 0)
                return -1;
            if (o->workdir[0] != '/')
                return cella_err_set(err, 0, "--workdir: '%s' is not an absolute path",
                                     o->workdir);
        } else if (!strcmp(a, "-e") || cli_is_opt(a, "--env") || !strncmp(a, "-e", 2)) {
            need = O_ENV;
            if (!strncmp(a, "-e", 2) && a[2])
                v = a + 2;
            else if (cli_need_value(argc, argv, &i, "--env", &v, err) < 0)
                return -1;
            if (!env_assignment_valid(v))
                return cella_err_set(err, 0,
                                     "--env: '%s' is not NAME=VALUE with NAME of letters, "
                                     "digits and _",
                                     v);
            strv_push(&o->env, cella_strdup(v));
        } else {
            return cella_err_set(err, 0, "unknown option '%s'", a);
        }
        if (need && !(ci->opts & need))
            return cella_err_set(err, 0, "option '%s' does not apply to 'cella %s'", a,
                                 ci->name);
    }
    switch (ci->shape) {
    case SHAPE_ID_COMMAND:
        if (!o->id)
            return cella_err_set(err, 0, "no sandbox ID given");
        /* fall through */
    case SHAPE_COMMAND:
        if (i >= argc)
            return cella_err_set(err, 0, "no command given");
        o->argv = argv + i;
        break;
    case SHAPE_ONE:
        if (!o->image)
            return cella_err_set(err, 0, "no image given (see 'cella catalog')");
        break;
    case SHAPE_IDS:
        if (!o->ids)
            return cella_err_set(err, 0, "no sandbox ID given");
        break;
    case SHAPE_NONE:
        break;
    }
    if (o->id && !o->id[0])
        return cella_err_set(err, 0, "the sandbox ID is empty");
    /* What goes into the JSON request must be UTF-8: say so here rather
     * than let the encoder drop it. */
    const char *single[] = {o->image, o->name, o->workdir, o->id};
    for (size_t k = 0; k < sizeof(single) / sizeof(single[0]); k++)
        if (single[k] && !utf8_valid((const uint8_t *)single[k], strlen(single[k])))
            return not_utf8(single[k], err);
    char **const lists[] = {o->env, o->argv, o->ids};
    for (size_t k = 0; k < sizeof(lists) / sizeof(lists[0]); k++)
        for (size_t m = 0; lists[k] && lists[k][m]; m++)
            if (!utf8_valid((const uint8_t *)lists[k][m], strlen(lists[k][m])))
                return not_utf8(lists[k][m], err);
    for (size_t k = 0; o->ids && o->ids[k]; k++)
        if (!o->ids[k][0])
            return cella_err_set(err, 0, "a sandbox ID is empty");
    return 0;
}

void client_opts_free(client_opts *o)
{
    cella_strv_free(o->env);
    o->env = NULL;
    cella_free(o->ids);           /* the strings are the caller's */
    o->ids = NULL;
}

/* ---- talking to the daemon ------------------------------------------------------ */

typedef struct client {
    const char *url;
    const char *token;
    bool json;
    int cancel_fd;                /* signalfd of SIGINT & co., or -1 */
    int signals;                  /* received so far */
    int last_signal;
    int cancel_at;                /* the request in flight gives up at this many signals */
    const char *cancel_note;      /* said when a signal does not give up the request */
} client;

void client_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fflush(stdout);
    fputs("cella: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* Takes the signals that arrived (the descriptor does not block). */
static void count_signals(client *c)
{
    struct signalfd_siginfo si;
    while (c->cancel_fd >= 0 && read(c->cancel_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        c->signals++;
        c->last_signal = (int)si.ssi_signo;
    }
}

static bool on_cancel(void *arg)
{
    client *c = arg;
    count_signals(c);
    if (c->signals >= c->cancel_at)
        return true;
    if (c->cancel_note)
        client_say("%s", c->cancel_note);
    return false;
}

/* Ctrl-C and friends arrive as reads on a descriptor, so they end a request
 * where the client can still stop the sandbox it created. */
static int cancel_setup(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGQUIT);
    if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
        return -1;
    int fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (fd < 0)
        sigprocmask(SIG_UNBLOCK, &set, NULL);   /* no descriptor: keep the default actions */
    return fd;
}

/* Percent-encodes one path segment: IDs come from the user. */
char *client_path_segment(const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    cbuf b;
    cbuf_init(&b);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '.' || *p == '_' || *p == '~') {
            cbuf_append(&b, p, 1);
        } else {
            char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            cbuf_append(&b, e, 3);
        }
    }
    char *r = cella_strndup(b.data ? (const char *)cbuf_head(&b) : "", cbuf_avail(&b));
    cbuf_free(&b);
    return r;
}

/* A request that produced no answer: why, in the user's words. */
void client_report_transport(const httpc_response *res, const cella_err *err)
{
    if (!res->connected && (err->errnum == ECONNREFUSED || err->errnum == ETIMEDOUT ||
                            err->errnum == ENOENT))
        client_say("%s (is 'cella serve' running?)", err->msg);
    else
        client_say("%s", err->msg);
}

/* {"error": {message, fix_note, ...}} as two lines on stderr. */
static void report_error_object(json_t *e, int status)
{
    const char *msg = json_string_value(json_object_get(e, "message"));
    const char *fix = json_string_value(json_object_get(e, "fix_note"));
    if (msg && msg[0])
        client_say("%s", msg);
    else
        client_say("the daemon answered with an error (HTTP %d) and no message", status);
    if (fix && fix[0])
        client_say("fix: %s", fix);
}

void client_report_error_answer(httpc_response *res)
{
    const char *body = httpc_body_str(res);
    json_t *j = json_loadb(body, cbuf_avail(&res->body), 0, NULL);
    json_t *e = json_object_get(j, "error");
    if (json_is_object(e)) {
        report_error_object(e, res->status);
    } else {
        /* Not the daemon's shape: a proxy, or not cella at all. Show a
         * little of it. */
        size_t n = strcspn(body, "\r\n");
        if (n > 200)
            n = 200;
        client_say("the server at the daemon's URL answered HTTP %d%s%.*s", res->status,
            n ? ": " : "", (int)n, body);
    }
    json_decref(j);
}

/* Does one request with a JSON body (or none) and wants a 2xx JSON answer.
 * Returns 0 with *out set (decref it), or -1 after telling the user why. */
static int call(client *c, const char *method, const char *path, json_t *req,
                httpc_response *res, json_t **out)
{
    *out = NULL;
    char *body = req ? json_dumps(req, JSON_COMPACT) : NULL;
    httpc_opts ho = {.token = c->token, .accept = "application/json", .cancel_fd = c->cancel_fd,
                     .cancel_fn = on_cancel, .cancel_arg = c};
    cella_err err = {0};
    int r = httpc_do(c->url, method, path, &ho, body, body ? strlen(body) : 0, res, &err);
    free(body);                     /* jansson's allocation */
    if (r < 0) {
        if (!(err.errnum == EINTR && c->signals))
            client_report_transport(res, &err);
        return -1;
    }
    if (res->status < 200 || res->status > 299) {
        client_report_error_answer(res);
        return -1;
    }
    json_error_t je;
    *out = json_loadb(httpc_body_str(res), cbuf_avail(&res->body), 0, &je);
    if (!*out) {
        client_say("the daemon's answer to %s %s is not JSON: %s", method, path, je.text);
        return -1;
    }
    return 0;
}

/* The answer's bytes as they came, for --json. */
static void print_raw(httpc_response *res)
{
    size_t n = cbuf_avail(&res->body);
    fwrite(httpc_body_str(res), 1, n, stdout);
    if (n == 0 || res->body.data[res->body.off + n - 1] != '\n')
        fputc('\n', stdout);
}

/* Whatever the daemon sends, a table cell shows no control characters:
 * names are user input and a terminal would act on escape sequences. */
static char *cell(const char *s)
{
    char *r = cella_strdup(s && s[0] ? s : "-");
    for (char *p = r; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    return r;
}

static size_t display_width(const char *s)
{
    size_t w = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p & 0xc0) != 0x80)        /* count UTF-8 characters, not bytes */
            w++;
    return w;
}

/* Prints rows of ncol cells each (cells[0..ncol) is the header), aligned,
 * two spaces apart; frees the cells. */
static void print_table(char **cells, size_t nrows, size_t ncol)
{
    size_t width[8] = {0};
    for (size_t r = 0; r < nrows; r++)
        for (size_t k = 0; k < ncol && k < 8; k++) {
            size_t w = display_width(cells[r * ncol + k]);
            if (w > width[k])
                width[k] = w;
        }
    for (size_t r = 0; r < nrows; r++) {
        for (size_t k = 0; k < ncol; k++) {
            const char *s = cells[r * ncol + k];
            fputs(s, stdout);
            if (k + 1 < ncol)
                printf("%*s", (int)(width[k] - display_width(s) + 2), "");
            cella_free(cells[r * ncol + k]);
        }
        fputc('\n', stdout);
    }
}

static char *human_age(json_int_t secs)
{
    if (secs < 0)
        secs = 0;
    if (secs < 60)
        return cella_asprintf("%llds", (long long)secs);
    if (secs < 3600)
        return cella_asprintf("%lldm", (long long)(secs / 60));
    if (secs < 86400)
        return cella_asprintf("%lldh", (long long)(secs / 3600));
    return cella_asprintf("%lldd", (long long)(secs / 86400));
}

/* ---- ls, catalog, create, stop ----------------------------------------------------- */

/* Fills one row of a listing from one object of the daemon's answer. */
typedef void (*row_fn)(json_t *item, char **row);

/* GET path, then either the raw answer (--json) or an aligned table of the
 * array under key, one row per item. */
static int list_table(client *c, const char *path, const char *key, const char *const *head,
                      size_t ncol, row_fn fill)
{
    httpc_response res;
    json_t *j;
    int status = CLI_EXIT_FAILED;
    if (call(c, "GET", path, NULL, &res, &j) < 0)
        goto out;
    if (c->json) {
        print_raw(&res);
        status = 0;
        goto out;
    }
    json_t *arr = json_object_get(j, key);
    if (!json_is_array(arr)) {
        client_say("the daemon's answer has no list of %s", key);
        goto out;
    }
    size_t n = json_array_size(arr);
    char **cells = cella_calloc((n + 1) * ncol, sizeof(char *));
    for (size_t k = 0; k < ncol; k++)
        cells[k] = cella_strdup(head[k]);
    for (size_t i = 0; i < n; i++)
        fill(json_array_get(arr, i), cells + (i + 1) * ncol);
    print_table(cells, n + 1, ncol);
    cella_free(cells);
    status = 0;
out:
    json_decref(j);
    httpc_response_free(&res);
    return status;
}

static void sandbox_row(json_t *s, char **row)
{
    row[0] = cell(json_string_value(json_object_get(s, "sandbox_id")));
    row[1] = cell(json_string_value(json_object_get(s, "image")));
    row[2] = cell(json_string_value(json_object_get(s, "state")));
    json_t *ex = json_object_get(s, "exec_in_flight");
    row[3] = json_is_integer(ex) ? cella_asprintf("%lld", (long long)json_integer_value(ex))
                                 : cell(NULL);
    json_t *age = json_object_get(s, "age_secs");
    row[4] = json_is_integer(age) ? human_age(json_integer_value(age)) : cell(NULL);
    row[5] = cell(json_string_value(json_object_get(s, "name")));
}

static int cmd_ls(client *c)
{
    static const char *const head[] = {"SANDBOX ID", "IMAGE", "STATE", "EXECS", "AGE", "NAME"};
    return list_table(c, "/v1/sandboxes", "sandboxes", head, 6, sandbox_row);
}

static const char *yes_no(json_t *b)
{
    return json_is_boolean(b) ? (json_is_true(b) ? "yes" : "no") : "-";
}

static void image_row(json_t *im, char **row)
{
    row[0] = cell(json_string_value(json_object_get(im, "name")));
    row[1] = cell(json_string_value(json_object_get(im, "kind")));
    row[2] = cell(yes_no(json_object_get(im, "available")));
    row[3] = cell(yes_no(json_object_get(im, "allowed")));
    row[4] = cell(json_string_value(json_object_get(im, "oci_ref")));
}

static int cmd_catalog(client *c)
{
    static const char *const head[] = {"NAME", "KIND", "AVAILABLE", "ALLOWED", "REF"};
    return list_table(c, "/v1/catalog", "images", head, 5, image_row);
}

static json_t *env_json(char **env)
{
    json_t *a = json_array();
    for (size_t i = 0; env && env[i]; i++)
        json_array_append_new(a, json_string(env[i]));
    return a;
}

static json_t *create_request(const client_opts *o, bool with_env)
{
    json_t *req = json_object();
    json_object_set_new(req, "image", json_string(o->image));
    if (o->has_cpus)
        json_object_set_new(req, "cpus", json_real(o->cpu_milli / 1000.0));
    if (o->has_memory)
        json_object_set_new(req, "memory_mb", json_integer((json_int_t)o->memory_mb));
    if (o->name)
        json_object_set_new(req, "name", json_string(o->name));
    if (o->has_idle)
        json_object_set_new(req, "idle_timeout_secs",
                            json_integer((json_int_t)o->idle_timeout_secs));
    if (with_env && o->env)
        json_object_set_new(req, "env", env_json(o->env));
    return req;
}

/* Creates a sandbox; returns its ID (cella_free it) or NULL after telling
 * the user why. With print, shows the answer the --json way or the ID. */
static char *create_sandbox(client *c, json_t *req, bool print)
{
    httpc_response res;
    json_t *j;
    char *id = NULL;
    if (call(c, "POST", "/v1/sandboxes", req, &res, &j) == 0) {
        const char *s = json_string_value(json_object_get(j, "sandbox_id"));
        if (!s || !s[0]) {
            client_say("the daemon's answer has no sandbox_id");
        } else {
            id = cella_strdup(s);
            if (print && c->json)
                print_raw(&res);
            else if (print)
                printf("%s\n", s);
        }
    }
    json_decref(j);
    httpc_response_free(&res);
    return id;
}

static int cmd_create(client *c, const client_opts *o)
{
    json_t *req = create_request(o, true);
    char *id = create_sandbox(c, req, true);
    json_decref(req);
    int status = id ? 0 : CLI_EXIT_FAILED;
    cella_free(id);
    return status;
}

/* Returns 0, or -1 after telling the user why (quiet: only the reason,
 * for the caller to put in context). */
static int stop_sandbox(client *c, const char *id, bool print)
{
    char *seg = client_path_segment(id);
    char *path = cella_asprintf("/v1/sandboxes/%s", seg);
    httpc_response res;
    json_t *j;
    int r = call(c, "DELETE", path, NULL, &res, &j);
    if (r == 0 && print) {
        if (c->json)
            print_raw(&res);
        else
            printf("%s\n", id);
    }
    json_decref(j);
    httpc_response_free(&res);
    cella_free(path);
    cella_free(seg);
    return r;
}

static int cmd_stop(client *c, const client_opts *o)
{
    int status = 0;
    for (size_t i = 0; o->ids[i]; i++) {
        if (stop_sandbox(c, o->ids[i], true) < 0)
            status = CLI_EXIT_FAILED;
        fflush(stdout);
    }
    return status;
}

/* ---- exec, run ---------------------------------------------------------------------- */

typedef struct exec_ctx {
    client *c;
    json_t *final;                /* the exit event's data */
    char *final_raw;              /* ... as the daemon wrote it, for --json */
    json_t *error;                /* the error event's error object */
    bool out_closed;              /* our stdout or stderr went away (EPIPE) */
} exec_ctx;

static int on_event(void *arg, const char *event, const char *data, size_t len, cella_err *err)
{
    exec_ctx *x = arg;
    bool out = !strcmp(event, "stdout"), errs = !strcmp(event, "stderr");
    bool ex = !strcmp(event, "exit"), fail = !strcmp(event, "error");
    if (!out && !errs && !ex && !fail)
        return 0;                       /* events of later daemons */
    json_error_t je;
    /* Output may hold NUL bytes (\u0000): they are the command's. */
    json_t *j = json_loadb(data, len, JSON_ALLOW_NUL, &je);
    if (!json_is_object(j)) {
        json_decref(j);
        return cella_err_set(err, 0, "the daemon sent a malformed '%s' event", event);
    }
    if (out || errs) {
        json_t *d = json_object_get(j, "data");
        if (!json_is_string(d)) {
            json_decref(j);
            return cella_err_set(err, 0, "the daemon sent a '%s' event without data", event);
        }
        if (fd_write_all(out ? 1 : 2, json_string_value(d), json_string_length(d)) < 0) {
            int e = errno;
            json_decref(j);
            x->out_closed = e == EPIPE;
            return cella_err_set(err, e, "writing the command's %s", event);
        }
        json_decref(j);
        return 0;
    }
    if (ex) {
        x->final = j;
        x->final_raw = cella_strndup(data, len);
    } else {
        x->error = json_incref(json_object_get(j, "error"));
        json_decref(j);
        if (!json_is_object(x->error)) {
            json_decref(x->error);
            x->error = json_pack("{s:s}", "message", "the command failed (the daemon sent "
                                                     "an error event without details)");
        }
    }
    return 1;                           /* the last event: nothing more to read */
}

/* Reads all of stdin when it is not a terminal: the command gets it. */
static int read_stdin(cbuf *in, bool *has, cella_err *err)
{
    *has = false;
    if (fcntl(0, F_GETFD) < 0 || isatty(0))
        return 0;
    for (;;) {
        uint8_t *p = cbuf_reserve(in, 65536);
        ssize_t r = read(0, p, 65536);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return cella_err_set(err, errno, "reading stdin");
        }
        if (r == 0)
            break;
        cbuf_commit(in, (size_t)r);
        if (cbuf_avail(in) > CLIENT_MAX_STDIN)
            return cella_err_set(err, 0, "stdin holds more than %u MiB, the most cella sends "
                                         "to a command (redirect it from a smaller file, or "
                                         "from /dev/null)",
                                 CLIENT_MAX_STDIN >> 20);
    }
    *has = true;
    return 0;
}

static char *fmt_ms(uint64_t ms)
{
    if (ms % 1000)
        return cella_asprintf("%llums", (unsigned long long)ms);
    return cella_asprintf("%llus", (unsigned long long)(ms / 1000));
}

/* The exit record -> notices and our exit status. */
static int conclude(const client *c, const client_opts *o, json_t *f)
{
    bool timed_out = json_is_true(json_object_get(f, "timed_out"));
    json_t *sig = json_object_get(f, "signal"), *code = json_object_get(f, "exit_code");
    if (!c->json) {
        if (json_is_true(json_object_get(f, "stdout_truncated")))
            client_say("stdout was truncated: the daemon keeps only so much of a command's output");
        if (json_is_true(json_object_get(f, "stderr_truncated")))
            client_say("stderr was truncated: the daemon keeps only so much of a command's output");
        if (json_is_true(json_object_get(f, "oom_killed")))
            client_say("out of memory: the kernel killed a process at the sandbox's memory limit%s",
                !strcmp(o->cmd, "run") ? " (--memory-mb)" : "");
        if (timed_out) {
            char *t = o->has_timeout ? fmt_ms(o->timeout_ms) : NULL;
            client_say("timed out%s%s; the command was killed", t ? " after " : "", t ? t : "");
            cella_free(t);
        }
    }
    if (timed_out)
        return CLI_EXIT_TIMEOUT;
    if (json_is_integer(sig) && json_integer_value(sig) > 0 && json_integer_value(sig) < 128)
        return 128 + (int)json_integer_value(sig);
    if (json_is_integer(code) && json_integer_value(code) >= 0 && json_integer_value(code) <= 255)
        return (int)json_integer_value(code);
    client_say("the daemon reported no exit status for the command");
    return CLI_EXIT_FAILED;
}

static json_t *exec_request(const client_opts *o, const cbuf *in, bool has_stdin)
{
    json_t *req = json_object();
    json_t *argv = json_array();
    for (size_t i = 0; o->argv[i]; i++)
        json_array_append_new(argv, json_string(o->argv[i]));
    json_object_set_new(req, "argv", argv);
    if (o->env)
        json_object_set_new(req, "env", env_json(o->env));
    if (has_stdin) {
        cbuf b64;
        cbuf_init(&b64);
        base64_encode(&b64, cbuf_head(in), cbuf_avail(in));
        json_object_set_new(req, "stdin",
                            json_stringn(b64.data ? (const char *)cbuf_head(&b64) : "",
                                         cbuf_avail(&b64)));
        cbuf_free(&b64);
    }
    if (o->has_timeout)
        json_object_set_new(req, "timeout_ms", json_integer((json_int_t)o->timeout_ms));
    if (o->workdir)
        json_object_set_new(req, "workdir", json_string(o->workdir));
    return req;
}

/* Runs the command in sandbox id, its output streamed to ours. Returns our
 * exit status. */
static int run_exec(client *c, const client_opts *o, const char *id, const cbuf *in,
                    bool has_stdin)
{
    json_t *req = exec_request(o, in, has_stdin);
    char *body = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    char *seg = client_path_segment(id);
    char *path = cella_asprintf("/v1/sandboxes/%s/exec", seg);
    cella_free(seg);
    exec_ctx x = {.c = c};
    httpc_opts ho = {.token = c->token, .accept = "text/event-stream", .cancel_fd = c->cancel_fd,
                     .cancel_fn = on_cancel, .cancel_arg = c, .sse_fn = on_event, .sse_arg = &x};
    httpc_response res;
    cella_err err = {0};
    fflush(stdout);
    int r = httpc_do(c->url, "POST", path, &ho, body, body ? strlen(body) : 0, &res, &err);
    free(body);                     /* jansson's allocation */
    cella_free(path);
    int status = CLI_EXIT_FAILED;
    if (r < 0) {
        if (x.out_closed)
            status = 128 + SIGPIPE;       /* as if the command had written there itself */
        else if (err.errnum == EINTR && c->signals)
            status = 128 + c->last_signal;
        else
            client_report_transport(&res, &err);
    } else if (!res.streamed && (res.status < 200 || res.status > 299)) {
        client_report_error_answer(&res);
    } else if (!res.streamed) {
        /* A daemon that ignored Accept answers with one JSON object: the
         * same record plus the whole output. */
        x.final = json_loadb(httpc_body_str(&res), cbuf_avail(&res.body), JSON_ALLOW_NUL, NULL);
        if (!json_is_object(x.final)) {
            client_say("the daemon's answer to the exec is neither an event stream nor JSON");
        } else {
            for (int s = 1; s <= 2; s++) {
                json_t *d = json_object_get(x.final, s == 1 ? "stdout" : "stderr");
                if (json_is_string(d))
                    fd_write_all(s, json_string_value(d), json_string_length(d));
                json_object_del(x.final, s == 1 ? "stdout" : "stderr");
            }
            x.final_raw = json_dumps(x.final, JSON_COMPACT);
            if (c->json && x.final_raw)
                printf("%s\n", x.final_raw);
            free(x.final_raw);          /* jansson's allocation */
            x.final_raw = NULL;
            status = conclude(c, o, x.final);
        }
    } else if (x.error) {
        report_error_object(x.error, res.status);
    } else if (!x.final) {
        client_say("the daemon ended the output stream before the command finished");
    } else {
        if (c->json)
            printf("%s\n", x.final_raw);
        status = conclude(c, o, x.final);
    }
    fflush(stdout);
    json_decref(x.final);
    json_decref(x.error);
    cella_free(x.final_raw);
    httpc_response_free(&res);
    return status;
}

static int cmd_exec(client *c, const client_opts *o)
{
    cbuf in;
    cbuf_init(&in);
    bool has_stdin;
    cella_err err = {0};
    if (read_stdin(&in, &has_stdin, &err) < 0) {
        client_say("%s", err.msg);
        cbuf_free(&in);
        return CLI_EXIT_FAILED;
    }
    /* The command ends with our connection; Ctrl-C just ends that cleanly. */
    _cleanup_close_ int cfd = cancel_setup();
    c->cancel_fd = cfd;
    c->cancel_at = 1;
    int status = run_exec(c, o, o->id, &in, has_stdin);
    cbuf_free(&in);
    return status;
}

static int cmd_run(client *c, const client_opts *o)
{
    cbuf in;
    cbuf_init(&in);
    bool has_stdin;
    cella_err err = {0};
    int status = CLI_EXIT_FAILED;
    char *id = NULL;
    /* stdin first: until the sandbox exists, Ctrl-C may simply end us. */
    if (read_stdin(&in, &has_stdin, &err) < 0) {
        client_say("%s", err.msg);
        cbuf_free(&in);
        return status;
    }
    _cleanup_close_ int cfd = cancel_setup();
    c->cancel_fd = cfd;
    /* Giving up a create halfway would leave a sandbox nobody knows the ID
     * of: the first signal waits for it, to stop it; a second gives up. */
    c->cancel_at = 2;
    c->cancel_note = "interrupted: the sandbox is being created; it will be stopped once it is "
                     "(interrupt again to leave it to the daemon's idle timeout)";
    json_t *req = create_request(o, false);
    id = create_sandbox(c, req, false);
    json_decref(req);
    c->cancel_note = NULL;
    count_signals(c);         /* a signal since the last look */
    if (!id) {
        if (c->signals)
            status = 128 + c->last_signal;
        goto out;
    }
    if (c->signals) {
        status = 128 + c->last_signal;
        goto out;
    }
    c->cancel_at = c->signals + 1;
    status = run_exec(c, o, id, &in, has_stdin);
out:
    if (id) {
        /* One more signal gives up the stop too; the daemon's idle timeout
         * then reaps the sandbox. */
        c->cancel_at = c->signals + 1;
        if (stop_sandbox(c, id, false) < 0)
            client_say("the sandbox %s could not be stopped; stop it with 'cella stop %s'", id, id);
    }
    cella_free(id);
    cbuf_free(&in);
    return status;
}

/* ---- entry ---------------------------------------------------------------------------- */

int cli_client_main(const char *cmd, int argc, char **argv)
{
    client_opts o;
    cella_err err = {0};
    if (client_args_parse(cmd, argc, argv, &o, &err) < 0) {
        fprintf(stderr, "cella %s: %s\nTry 'cella %s --help'.\n", cmd, err.msg, cmd);
        client_opts_free(&o);
        return CLI_EXIT_FAILED;
    }
    if (o.help) {
        fputs(client_usage(cmd), stdout);
        client_opts_free(&o);
        return 0;
    }
    const char *env_url = getenv("CELLA_URL");
    client c = {
        .url = o.url ? o.url : env_url && env_url[0] ? env_url : CLIENT_DEFAULT_URL,
        .token = getenv("CELLA_TOKEN"),
        .json = o.json,
        .cancel_fd = -1,
    };
    /* A bad URL is a usage error, said before anything happens. */
    httpc_url u;
    if (httpc_url_parse(c.url, &u, &err) < 0) {
        fprintf(stderr, "cella %s: %s%s\n", cmd, o.url ? "--url " : "CELLA_URL ", err.msg);
        client_opts_free(&o);
        return CLI_EXIT_FAILED;
    }
    /* A closed stdout shows up as EPIPE where we write, not as a silent death. */
    signal(SIGPIPE, SIG_IGN);
    int status;
    if (!strcmp(o.cmd, "run"))
        status = cmd_run(&c, &o);
    else if (!strcmp(o.cmd, "exec"))
        status = cmd_exec(&c, &o);
    else if (!strcmp(o.cmd, "create"))
        status = cmd_create(&c, &o);
    else if (!strcmp(o.cmd, "stop"))
        status = cmd_stop(&c, &o);
    else if (!strcmp(o.cmd, "ls"))
        status = cmd_ls(&c);
    else
        status = cmd_catalog(&c);
    if (fflush(stdout) != 0 && status == 0) {
        client_say("writing stdout: %s", strerror(errno));
        status = CLI_EXIT_FAILED;
    }
    client_opts_free(&o);
    return status;
}
