#include "cli/transfer.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/box_cmd.h"
#include "cli/client.h"
#include "cli/httpc.h"
#include "cli/opts.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/fdio.h"

/* ---- usage --------------------------------------------------------------------- */

#define COMMON_OPTS                                                                        \
    "  --url URL            the daemon (default: $CELLA_URL, else " CLIENT_DEFAULT_URL ")\n" \
    "  -h, --help           show this help\n"

#define TOKEN_NOTE "A bearer token for the daemon, when it wants one, comes from $CELLA_TOKEN.\n"

static const char upload_usage[] =
    "Usage: cella upload [OPTIONS] ID LOCAL REMOTE\n"
    "\n"
    "Copy the local file LOCAL into sandbox ID as REMOTE ('-': read stdin). A\n"
    "relative REMOTE is under /workspace; a REMOTE ending in '/' is a directory the\n"
    "file goes into under its own name. The bytes stream through, whatever the\n"
    "size; the sandbox's file is replaced only once all of them arrived.\n"
    "\n"
    "Options:\n"
    "  -p, --parents        create REMOTE's missing parent directories\n"
    "  --mode MODE          the file's permissions in octal, e.g. 0755 (default:\n"
    "                       LOCAL's, as cp does; 0644 for stdin)\n"
    "  --tar                LOCAL is a tar archive ('-': one on stdin): extract it\n"
    "                       into the directory REMOTE\n" COMMON_OPTS
    "\n" TOKEN_NOTE
    "A progress bar goes to stderr when it is a terminal and LOCAL's size is known.\n"
    "\n"
    "Exit status: 0 when the file was written; 2 for a usage error; 125 when it was\n"
    "not (no such sandbox, missing parent directory, daemon unreachable, ...).\n"
    "\n"
    "Examples:\n"
    "  cella upload \"$id\" data.csv input/            # -> /workspace/input/data.csv\n"
    "  cella upload --parents --mode 0755 \"$id\" build.sh /workspace/bin/build.sh\n"
    "  tar -C src -cf - . | cella upload --tar --parents \"$id\" - src\n";

static const char download_usage[] =
    "Usage: cella download [OPTIONS] ID REMOTE LOCAL\n"
    "\n"
    "Copy the file REMOTE out of sandbox ID into LOCAL ('-': write stdout). A\n"
    "relative REMOTE is under /workspace; when LOCAL is a directory, the file goes\n"
    "into it under its own name. The bytes stream through, whatever the size; LOCAL\n"
    "is written under a temporary name beside it and renamed once complete, so a\n"
    "failed download leaves nothing behind.\n"
    "\n"
    "Options:\n"
    "  --tar                REMOTE is a directory: fetch it as a tar archive into\n"
    "                       the file LOCAL ('-': stdout)\n" COMMON_OPTS
    "\n" TOKEN_NOTE
    "A progress bar goes to stderr when it is a terminal and the size is known.\n"
    "\n"
    "Exit status: 0 when LOCAL was written; 2 for a usage error; 125 when it was not\n"
    "(no such file or sandbox, the transfer broke off, daemon unreachable, ...).\n"
    "\n"
    "Examples:\n"
    "  cella download \"$id\" out/report.pdf .         # from /workspace/out/report.pdf\n"
    "  cella download \"$id\" /workspace/log.txt - | tail\n"
    "  cella download --tar \"$id\" /workspace/out - | tar -xf - -C ./out\n";

static const char fs_usage[] =
    "Usage: cella fs [OPTIONS] ID OP [--json BODY]\n"
    "\n"
    "Run one file operation in sandbox ID and print the daemon's JSON answer. OP is\n"
    "one of ls, stat, mkdir, write, read, rm, chmod, mv, grep, sed, glob; BODY is\n"
    "its request as a JSON object, with iii's field names (see docs/api.md): e.g.\n"
    "{\"path\": \"/workspace\"} for ls, {\"src\": ..., \"dst\": ...} for mv.\n"
    "\n"
    "Options:\n"
    "  --json BODY          the request ('-': read it from stdin; default: {})\n" COMMON_OPTS
    "\n" TOKEN_NOTE
    "\n"
    "Exit status: 0 when the operation succeeded; 2 for a usage error (unknown OP,\n"
    "BODY not a JSON object); 125 when it failed.\n"
    "\n"
    "Examples:\n"
    "  cella fs \"$id\" ls --json '{\"path\": \"/workspace\"}'\n"
    "  cella fs \"$id\" grep --json '{\"path\": \"/workspace\", \"pattern\": \"TODO\", "
    "\"recursive\": true}'\n"
    "  cella fs \"$id\" mkdir --json '{\"path\": \"/workspace/a/b\", \"parents\": true}'\n";

static const struct {
    const char *name;
    const char *usage;
} commands[] = {
    {"upload", upload_usage},
    {"download", download_usage},
    {"fs", fs_usage},
};

static const char *const fs_ops[] = {"ls",  "stat", "mkdir", "write", "read", "rm",
                                     "chmod", "mv", "grep",  "sed",   "glob", NULL};

bool cli_transfer_is_command(const char *cmd)
{
    return transfer_usage(cmd) != NULL;
}

const char *transfer_usage(const char *cmd)
{
    for (size_t i = 0; cmd && i < sizeof(commands) / sizeof(commands[0]); i++)
        if (!strcmp(commands[i].name, cmd))
            return commands[i].usage;
    return NULL;
}

/* ---- pure helpers ------------------------------------------------------------------ */

/* REMOTE without leading "./" (and "." alone as empty): "./a" is "a". */
static const char *strip_dot(const char *r)
{
    for (;;) {
        if (r[0] == '.' && r[1] == '/') {
            r += 2;
            while (*r == '/')
                r++;
        } else if (r[0] == '.' && r[1] == '\0') {
            return r + 1;
        } else {
            return r;
        }
    }
}

bool transfer_remote_is_dir(const char *remote)
{
    const char *r = strip_dot(remote);
    size_t n = strlen(r);
    return n == 0 || r[n - 1] == '/';
}

char *transfer_remote_path(const char *remote, const char *name)
{
    const char *r = strip_dot(remote);
    bool dir = transfer_remote_is_dir(remote);
    cbuf b;
    cbuf_init(&b);
    if (r[0] != '/')
        cbuf_append(&b, "/workspace/", 11);
    cbuf_append(&b, r, strlen(r));
    /* One '/' at the end at most, then the name or none. */
    while (cbuf_avail(&b) > 1 && b.data[b.len - 1] == '/' && b.data[b.len - 2] == '/')
        b.len--;
    if (dir && name && name[0])
        cbuf_append(&b, name, strlen(name));
    else if (dir && cbuf_avail(&b) > 1)
        b.len--;
    char *out = cella_strndup((const char *)cbuf_head(&b), cbuf_avail(&b));
    cbuf_free(&b);
    return out;
}

const char *transfer_basename(const char *path, size_t *n)
{
    size_t end = strlen(path);
    while (end > 0 && path[end - 1] == '/')
        end--;
    size_t start = end;
    while (start > 0 && path[start - 1] != '/')
        start--;
    *n = end - start;
    return path + start;
}

char *transfer_url_path(const char *id, const char *route, const char *abs, const char *query)
{
    static const char hex[] = "0123456789ABCDEF";
    char *seg = client_path_segment(id);
    cbuf b;
    cbuf_init(&b);
    cbuf_append(&b, "/v1/sandboxes/", 14);
    cbuf_append(&b, seg, strlen(seg));
    cbuf_append(&b, "/", 1);
    cbuf_append(&b, route, strlen(route));
    cbuf_append(&b, "/", 1);
    cella_free(seg);
    /* The route takes the absolute path without its leading '/'. */
    while (*abs == '/')
        abs++;
    for (const unsigned char *p = (const unsigned char *)abs; *p; p++) {
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
            strchr("/._~-", *p)) {
            cbuf_append(&b, p, 1);
        } else {
            char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            cbuf_append(&b, e, 3);
        }
    }
    if (query && query[0]) {
        cbuf_append(&b, "?", 1);
        cbuf_append(&b, query, strlen(query));
    }
    char *out = cella_strndup((const char *)cbuf_head(&b), cbuf_avail(&b));
    cbuf_free(&b);
    return out;
}

int transfer_parse_mode(const char *s, unsigned *out, cella_err *err)
{
    size_t n = strlen(s);
    unsigned v = 0;
    if (n == 0 || n > 5)
        return cella_err_set(err, 0, "'%s' is not an octal mode such as 0644 or 755", s);
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '7')
            return cella_err_set(err, 0, "'%s' is not an octal mode such as 0644 or 755", s);
        v = v * 8 + (unsigned)(s[i] - '0');
    }
    if (v > 07777)
        return cella_err_set(err, 0, "'%s' is more than 07777", s);
    *out = v;
    return 0;
}

int transfer_fs_body_check(const char *text, size_t len, cella_err *err)
{
    json_error_t je;
    /* NUL bytes are fine inside strings: write's content may hold them. */
    json_t *j = json_loadb(text, len, JSON_ALLOW_NUL | JSON_DECODE_ANY, &je);
    if (!j)
        return cella_err_set(err, 0, "--json: not valid JSON: %s (line %d, column %d)", je.text,
                             je.line, je.column);
    bool obj = json_is_object(j);
    json_decref(j);
    if (!obj)
        return cella_err_set(err, 0, "--json: the request must be a JSON object, e.g. "
                                     "'{\"path\": \"/workspace\"}'");
    return 0;
}

void transfer_human_bytes(char *buf, size_t n, uint64_t v)
{
    static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    if (v < 1024) {
        snprintf(buf, n, "%llu B", (unsigned long long)v);
        return;
    }
    double d = (double)v / 1024;
    size_t u = 0;
    while (d >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
        d /= 1024;
        u++;
    }
    snprintf(buf, n, "%.1f %s", d, unit[u]);
}

void transfer_progress_format(char *buf, size_t n, uint64_t done, uint64_t total,
                              uint64_t elapsed_ms)
{
    enum { WIDTH = 24 };
    if (done > total)
        total = done;
    /* An empty file is all done. */
    unsigned pct = total ? (unsigned)((double)done * 100 / (double)total) : 100;
    size_t fill = total ? (size_t)((double)done * WIDTH / (double)total) : WIDTH;
    char bar[WIDTH + 1];
    memset(bar, '#', fill);
    memset(bar + fill, '.', WIDTH - fill);
    bar[WIDTH] = '\0';
    char d[32], t[32], r[32] = "-";
    transfer_human_bytes(d, sizeof(d), done);
    transfer_human_bytes(t, sizeof(t), total);
    if (elapsed_ms > 0) {
        transfer_human_bytes(r, sizeof(r) - 2, (uint64_t)((double)done * 1000 / (double)elapsed_ms));
        strcat(r, "/s");
    }
    snprintf(buf, n, "[%s] %3u%%  %s / %s  %s", bar, pct, d, t, r);
}

/* ---- options ---------------------------------------------------------------------- */

enum { T_TAR = 1, T_PARENTS = 2, T_MODE = 4, T_BODY = 8 };

static unsigned cmd_opts(const char *cmd)
{
    if (!strcmp(cmd, "upload"))
        return T_TAR | T_PARENTS | T_MODE;
    if (!strcmp(cmd, "download"))
        return T_TAR;
    return T_BODY;
}

int transfer_args_parse(const char *cmd, int argc, char **argv, transfer_opts *o,
                        cella_err *err)
{
    memset(o, 0, sizeof(*o));
    if (!cli_transfer_is_command(cmd))
        return cella_err_set(err, 0, "unknown command '%s'", cmd ? cmd : "");
    o->cmd = cmd;
    bool fs = !strcmp(cmd, "fs");
    unsigned allowed = cmd_opts(cmd);
    const char *pos[3] = {NULL, NULL, NULL};
    size_t npos = 0, want = fs ? 2 : 3;
    bool opts_done = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        unsigned need = 0;
        if (!opts_done && !strcmp(a, "--")) {
            opts_done = true;
            continue;
        }
        /* "-" alone is stdin or stdout, a word like any other. */
        if (opts_done || a[0] != '-' || !a[1]) {
            if (npos == want)
                return cella_err_set(err, 0, "unexpected argument '%s'", a);
            pos[npos++] = a;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            o->help = true;
            return 0;
        } else if (cli_is_opt(a, "--url")) {
            if (cli_need_value(argc, argv, &i, "--url", &o->url, err) < 0)
                return -1;
        } else if (!strcmp(a, "--tar")) {
            need = T_TAR;
            o->tar = true;
        } else if (!strcmp(a, "--parents") || !strcmp(a, "-p")) {
            need = T_PARENTS;
            o->parents = true;
        } else if (cli_is_opt(a, "--mode")) {
            need = T_MODE;
            if (cli_need_value(argc, argv, &i, "--mode", &v, err) < 0 ||
                transfer_parse_mode(v, &o->mode, err) < 0)
                return cella_err_prefix(err, "--mode");
            o->has_mode = true;
        } else if (cli_is_opt(a, "--json")) {
            need = T_BODY;
            if (cli_need_value(argc, argv, &i, "--json", &o->body, err) < 0)
                return -1;
        } else {
            return cella_err_set(err, 0, "unknown option '%s'", a);
        }
        if (need && !(allowed & need))
            return cella_err_set(err, 0, "option '%s' does not apply to 'cella %s'", a, cmd);
    }
    static const char *const names_up[] = {"sandbox ID", "LOCAL file", "REMOTE path"};
    static const char *const names_down[] = {"sandbox ID", "REMOTE path", "LOCAL file"};
    static const char *const names_fs[] = {"sandbox ID", "operation (ls, stat, ...)"};
    const char *const *names = fs ? names_fs : !strcmp(cmd, "upload") ? names_up : names_down;
    if (npos < want)
        return cella_err_set(err, 0, "no %s given", names[npos]);
    for (size_t k = 0; k < want; k++)
        if (!pos[k][0])
            return cella_err_set(err, 0, "the %s is empty", names[k]);
    o->id = pos[0];
    if (fs) {
        o->op = pos[1];
        bool known = false;
        for (size_t k = 0; fs_ops[k]; k++)
            known = known || !strcmp(fs_ops[k], o->op);
        if (!known)
            return cella_err_set(err, 0, "unknown operation '%s': one of ls, stat, mkdir, write, "
                                         "read, rm, chmod, mv, grep, sed, glob",
                                 o->op);
        if (o->body && strcmp(o->body, "-") != 0 &&
            transfer_fs_body_check(o->body, strlen(o->body), err) < 0)
            return -1;
        return 0;
    }
    bool up = !strcmp(cmd, "upload");
    o->local = up ? pos[1] : pos[2];
    o->remote = up ? pos[2] : pos[1];
    if (o->tar && o->has_mode)
        return cella_err_set(err, 0, "--mode does not apply to --tar: the archive holds the "
                                     "modes");
    if (up && !o->tar && !strcmp(o->local, "-") && transfer_remote_is_dir(o->remote))
        return cella_err_set(err, 0, "'%s' is a directory and stdin has no name to give the "
                                     "file: name it, e.g. %sdata.bin",
                             o->remote, o->remote);
    return 0;
}

/* ---- progress -------------------------------------------------------------------------- */

/* Drawn on stderr, at most ten times a second, only when stderr is a
 * terminal and the size is known: a log file gets no carriage returns. */
typedef struct progress {
    bool on;
    bool drawn;
    bool drawn_full;              /* the last line drawn said 100% */
    uint64_t total;
    uint64_t done;
    int64_t start_ms;
    int64_t last_ms;
} progress;

static int64_t mono_ms(void)
{
    return clock_now_ns() / 1000000;
}

static void progress_start(progress *p, uint64_t total)
{
    memset(p, 0, sizeof(*p));
    p->on = isatty(2) == 1;
    p->total = total;
    p->start_ms = p->last_ms = mono_ms();
}

static void progress_draw(progress *p)
{
    char line[160];
    /* A small file can be through within the millisecond: a rate still. */
    int64_t ms = p->last_ms - p->start_ms;
    transfer_progress_format(line, sizeof(line), p->done, p->total,
                             (uint64_t)(ms > 0 ? ms : 1));
    fprintf(stderr, "\r%s\033[K", line);
    fflush(stderr);
    p->drawn = true;
    p->drawn_full = p->done >= p->total;
}

static void progress_add(progress *p, uint64_t n)
{
    p->done += n;
    if (!p->on)
        return;
    int64_t now = mono_ms();
    if (now - p->last_ms < 100 && p->done < p->total)
        return;
    p->last_ms = now;
    progress_draw(p);
}

/* Ends the line (ok: with the final figures), so what follows starts on
 * its own. */
static void progress_end(progress *p, bool ok)
{
    if (!p->on)
        return;
    if (ok && !p->drawn_full) {
        p->last_ms = mono_ms();
        progress_draw(p);
    }
    if (p->drawn)
        fputc('\n', stderr);
    p->on = false;
}

/* ---- talking to the daemon ------------------------------------------------------------- */

typedef struct ctx {
    const char *url;
    const char *token;
} ctx;

/* The error object of an error answer (borrowed from *j; decref *j). */
static json_t *error_object(httpc_response *res, json_t **j)
{
    *j = json_loadb(httpc_body_str(res), cbuf_avail(&res->body), 0, NULL);
    json_t *e = json_object_get(*j, "error");
    return json_is_object(e) ? e : NULL;
}

static bool ok_status(const httpc_response *res)
{
    return res->status >= 200 && res->status <= 299;
}

/* An error answer to a transfer: the daemon's message, and its fix in the
 * command line's words where the daemon's speaks of request fields. */
static void report_transfer_error(httpc_response *res, const transfer_opts *o)
{
    json_t *j;
    json_t *e = error_object(res, &j);
    const char *msg = json_string_value(json_object_get(e, "message"));
    const char *code = json_string_value(json_object_get(e, "code"));
    bool up = !strcmp(o->cmd, "upload");
    bool is_dir = code && !strcmp(code, "S212") && msg && strstr(msg, "is a directory");
    char fix[256] = "";
    if (!msg || !code) {
        /* not the daemon's shape: said as it is */
    } else if (up && !o->parents &&
               (json_is_true(json_object_get(json_object_get(e, "fix"), "parents")) ||
                (o->tar && !strcmp(code, "S211")))) {
        snprintf(fix, sizeof(fix), "the directory does not exist: pass --parents to create it");
    } else if (up && !o->tar && is_dir) {
        snprintf(fix, sizeof(fix), "to copy into that directory, end REMOTE with '/'");
    } else if (!up && !o->tar && is_dir) {
        snprintf(fix, sizeof(fix), "fetch a directory as a tar: cella download --tar %.64s %.80s "
                                   "FILE.tar",
                 o->id, o->remote);
    }
    if (fix[0]) {
        client_say("%s", msg);
        client_say("fix: %s", fix);
    } else {
        client_report_error_answer(res);
    }
    json_decref(j);
}

/* ---- upload ---------------------------------------------------------------------------- */

typedef struct upload_src {
    int fd;
    const char *name;             /* for messages */
    progress pr;
} upload_src;

static ssize_t upload_read(void *arg, uint8_t *buf, size_t max, cella_err *err)
{
    upload_src *u = arg;
    for (;;) {
        ssize_t r = read(u->fd, buf, max);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return cella_err_set(err, errno, "reading %s", u->name);
        progress_add(&u->pr, (uint64_t)r);
        return r;
    }
}

static int cmd_upload(const ctx *c, const transfer_opts *o)
{
    int status = CLI_EXIT_FAILED;
    bool from_stdin = !strcmp(o->local, "-");
    int fd = from_stdin ? 0 : -1;     /* ours to close unless it is stdin */
    char *remote = NULL, *path = NULL, *name = NULL;
    json_t *ans = NULL;
    httpc_response res;
    httpc_response_init(&res);
    if (!from_stdin && (fd = open(o->local, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0) {
        client_say("cannot read %s: %s", o->local, strerror(errno));
        goto out;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        client_say("cannot read %s: %s", from_stdin ? "stdin" : o->local, strerror(errno));
        goto out;
    }
    if (S_ISDIR(st.st_mode)) {
        client_say("%s is a directory: send a tar of it with --tar, e.g.\n"
                   "  tar -C %s -cf - . | cella upload --tar %s - %s",
                   o->local, o->local, o->id, o->remote);
        goto out;
    }
    /* A regular file's size is known: Content-Length, and the daemon then
     * keeps nothing unless that many bytes arrive. A pipe goes chunked. */
    int64_t length = -1;
    if (S_ISREG(st.st_mode)) {
        off_t at = from_stdin ? lseek(fd, 0, SEEK_CUR) : 0;
        length = (int64_t)st.st_size - (at > 0 ? (int64_t)at : 0);
        if (length < 0)
            length = 0;
    }
    if (!o->tar && !from_stdin) {
        size_t n;
        const char *b = transfer_basename(o->local, &n);
        name = cella_strndup(b, n);
    }
    remote = transfer_remote_path(o->remote, name);
    char query[64] = "";
    unsigned mode = o->has_mode ? o->mode : (unsigned)(st.st_mode & 0777);
    bool send_mode = !o->tar && (o->has_mode || (!from_stdin && S_ISREG(st.st_mode)));
    snprintf(query, sizeof(query), "%s%s", o->parents ? "parents=1" : "",
             send_mode && o->parents ? "&" : "");
    if (send_mode)
        snprintf(query + strlen(query), sizeof(query) - strlen(query), "mode=%04o", mode);
    path = transfer_url_path(o->id, o->tar ? "archive" : "files", remote, query);

    upload_src u = {.fd = fd, .name = from_stdin ? "stdin" : o->local};
    progress_start(&u.pr, length < 0 ? 0 : (uint64_t)length);
    u.pr.on = u.pr.on && length > 0;
    httpc_stream s = {.read = upload_read, .read_arg = &u, .length = length,
                      .content_type = o->tar ? "application/x-tar" : "application/octet-stream"};
    httpc_opts ho = {.token = c->token, .accept = "application/json", .cancel_fd = -1};
    cella_err err = {0};
    int r = httpc_do_stream(c->url, "PUT", path, &ho, &s, &res, &err);
    progress_end(&u.pr, r == 0 && ok_status(&res));
    if (r < 0) {
        client_report_transport(&res, &err);
        goto out;
    }
    if (!ok_status(&res)) {
        report_transfer_error(&res, o);
        goto out;
    }
    if (res.cut_short) {
        client_say("the daemon answered before the upload was complete; %s was not written",
                   remote);
        goto out;
    }
    ans = json_loadb(httpc_body_str(&res), cbuf_avail(&res.body), 0, NULL);
    json_t *bw = json_object_get(ans, o->tar ? "bytes" : "bytes_written");
    if (!json_is_object(ans) || (!o->tar && !json_is_integer(bw))) {
        client_say("the daemon's answer to the upload is not what cella expects");
        goto out;
    }
    if (!o->tar && (uint64_t)json_integer_value(bw) != u.pr.done) {
        client_say("the daemon wrote %lld bytes of the %llu sent", (long long)json_integer_value(bw),
                   (unsigned long long)u.pr.done);
        goto out;
    }
    status = 0;
out:
    if (fd >= 0 && !from_stdin)
        close(fd);
    json_decref(ans);
    httpc_response_free(&res);
    cella_free(remote);
    cella_free(path);
    cella_free(name);
    return status;
}

/* ---- download ----------------------------------------------------------------------------- */

/* The temporary file a signal must not leave behind. Written before the
 * handlers are armed; the handler only unlinks it (async-signal-safe). */
static char cleanup_path[PATH_MAX];
static volatile sig_atomic_t cleanup_armed;

static void on_fatal_signal(int sig)
{
    if (cleanup_armed)
        unlink(cleanup_path);
    /* The handler was reset (SA_RESETHAND): the signal, unblocked on
     * return, ends us the way it would have. */
    raise(sig);
}

static void cleanup_arm(const char *path)
{
    snprintf(cleanup_path, sizeof(cleanup_path), "%s", path);
    cleanup_armed = 1;
    struct sigaction sa = {.sa_handler = on_fatal_signal, .sa_flags = SA_RESETHAND};
    sigemptyset(&sa.sa_mask);
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaction(sigs[i], &sa, NULL);
}

static void cleanup_disarm(void)
{
    cleanup_armed = 0;
}

typedef struct download_dst {
    int fd;
    const char *name;             /* for messages */
    httpc_response *res;
    bool started;
    bool show;                    /* a progress bar is wanted, if the size is known */
    bool out_closed;              /* stdout's reader went away (EPIPE) */
    progress pr;
} download_dst;

static int download_write(void *arg, const uint8_t *p, size_t n, cella_err *err)
{
    download_dst *d = arg;
    if (!d->started) {
        d->started = true;
        progress_start(&d->pr, d->res->content_length);
        d->pr.on = d->pr.on && d->show && d->res->has_length;
    }
    if (fd_write_all(d->fd, p, n) < 0) {
        d->out_closed = errno == EPIPE;
        return cella_err_set(err, errno, "writing %s", d->name);
    }
    progress_add(&d->pr, n);
    return 0;
}

/* Where a download goes: LOCAL, or LOCAL/NAME when LOCAL is a directory,
 * through a symbolic link to the file it names, as cp writes. Sets *direct
 * when the target exists and is not a regular file (a FIFO, /dev/null):
 * written in place, never replaced. Returns the path (cella_free it) or
 * NULL after saying why. */
static char *download_target(const transfer_opts *o, const char *remote, bool *direct,
                             mode_t *mode)
{
    char *target = cella_strdup(o->local);
    struct stat st;
    *direct = false;
    mode_t um = umask(0);
    umask(um);
    *mode = 0666 & ~um;
    bool exists = stat(target, &st) == 0;
    if (!exists && target[strlen(target) - 1] == '/') {
        client_say("cannot write %s: %s", target, strerror(ENOENT));
        goto error;
    }
    if (exists && S_ISDIR(st.st_mode)) {
        if (o->tar) {
            client_say("%s is a directory: name the tar file to write, or '-' for stdout",
                       target);
            goto error;
        }
        size_t n;
        const char *b = transfer_basename(remote, &n);
        if (n == 0) {
            client_say("'%s' has no file name to give the copy in %s", remote, target);
            goto error;
        }
        char *joined = cella_asprintf("%s%s%.*s", target,
                                      target[strlen(target) - 1] == '/' ? "" : "/", (int)n, b);
        cella_free(target);
        target = joined;
    }
    if (stat(target, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            client_say("%s is a directory", target);
            goto error;
        }
        if (!S_ISREG(st.st_mode)) {
            *direct = true;
            return target;
        }
        *mode = st.st_mode & 07777;       /* an existing file keeps its mode */
        char *real = realpath(target, NULL);
        if (real) {
            cella_free(target);
            target = cella_strdup(real);
            free(real);
        }
    }
    return target;
error:
    cella_free(target);
    return NULL;
}

static int cmd_download(const ctx *c, const transfer_opts *o)
{
    int status = CLI_EXIT_FAILED;
    bool to_stdout = !strcmp(o->local, "-");
    int fd = to_stdout ? 1 : -1;      /* ours to close unless it is stdout */
    bool direct = false;
    mode_t mode = 0644;
    char *remote = transfer_remote_path(o->remote, NULL);
    char *target = NULL, *tmp = NULL, *path = NULL;
    httpc_response res;
    httpc_response_init(&res);
    if (!to_stdout) {
        if (!(target = download_target(o, remote, &direct, &mode)))
            goto out;
        if (direct) {
            fd = open(target, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
        } else {
            /* A hidden sibling: same filesystem, so the rename is atomic. */
            size_t n;
            const char *b = transfer_basename(target, &n);
            tmp = cella_asprintf("%.*s.%.*s.cella-XXXXXX", (int)(b - target), target, (int)n, b);
            /* No signal between the file's creation and the handler that
             * removes it. */
            sigset_t all, old;
            sigfillset(&all);
            sigprocmask(SIG_BLOCK, &all, &old);
            fd = mkostemp(tmp, O_CLOEXEC);
            int e = errno;
            if (fd >= 0)
                cleanup_arm(tmp);
            sigprocmask(SIG_SETMASK, &old, NULL);
            errno = e;
            if (fd < 0) {
                cella_free(tmp);
                tmp = NULL;
            }
        }
        if (fd < 0) {
            client_say("cannot write %s: %s", target, strerror(errno));
            goto out;
        }
    }
    path = transfer_url_path(o->id, o->tar ? "archive" : "files", remote, NULL);
    download_dst d = {.fd = fd, .name = to_stdout ? "stdout" : target, .res = &res,
                      /* Not over the data itself on the same terminal. */
                      .show = !(to_stdout && isatty(1) == 1)};
    httpc_stream s = {.write = download_write, .write_arg = &d};
    httpc_opts ho = {.token = c->token, .cancel_fd = -1};
    cella_err err = {0};
    int r = httpc_do_stream(c->url, "GET", path, &ho, &s, &res, &err);
    bool complete = r == 0 && ok_status(&res) &&
                    (!res.has_length || d.pr.done == res.content_length);
    progress_end(&d.pr, complete);
    if (r < 0) {
        if (d.out_closed && to_stdout)
            status = 128 + SIGPIPE;   /* `| head`: quiet, as if SIGPIPE had ended us */
        else if (res.sunk && res.has_length && d.pr.done < res.content_length)
            client_say("the download broke off after %llu of %llu bytes: %s",
                       (unsigned long long)d.pr.done, (unsigned long long)res.content_length,
                       err.msg);
        else
            client_report_transport(&res, &err);
        goto out;
    }
    if (!ok_status(&res)) {
        report_transfer_error(&res, o);
        goto out;
    }
    if (!complete) {
        client_say("the download ended after %llu of %llu bytes", (unsigned long long)d.pr.done,
                   (unsigned long long)res.content_length);
        goto out;
    }
    if (tmp) {
        if (fchmod(fd, mode) < 0 || close(fd) < 0) {
            fd = -1;
            client_say("writing %s: %s", target, strerror(errno));
            goto out;
        }
        fd = -1;
        if (rename(tmp, target) < 0) {
            client_say("cannot put the download in place as %s: %s", target, strerror(errno));
            goto out;
        }
        cleanup_disarm();
        cella_free(tmp);
        tmp = NULL;
    } else if (!to_stdout && close(fd) < 0) {
        fd = -1;
        client_say("writing %s: %s", target, strerror(errno));
        goto out;
    } else if (!to_stdout) {
        fd = -1;
    }
    status = 0;
out:
    if (fd >= 0 && !to_stdout)
        close(fd);
    if (tmp) {
        unlink(tmp);
        cleanup_disarm();
    }
    httpc_response_free(&res);
    cella_free(remote);
    cella_free(target);
    cella_free(tmp);
    cella_free(path);
    return status;
}

/* ---- fs ------------------------------------------------------------------------------------ */

static int read_all_stdin(cbuf *b, cella_err *err)
{
    for (;;) {
        uint8_t *p = cbuf_reserve(b, 65536);
        ssize_t r = read(0, p, 65536);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return cella_err_set(err, errno, "reading stdin");
        if (r == 0)
            return 0;
        cbuf_commit(b, (size_t)r);
        if (cbuf_avail(b) > CLIENT_MAX_STDIN)
            return cella_err_set(err, 0, "--json -: stdin holds more than %u MiB",
                                 CLIENT_MAX_STDIN >> 20);
    }
}

static int cmd_fs(const ctx *c, const transfer_opts *o)
{
    int status = CLI_EXIT_FAILED;
    cbuf in;
    cbuf_init(&in);
    const char *body = o->body ? o->body : "{}";
    size_t body_len = strlen(body);
    char *path = NULL;
    json_t *ans = NULL;
    httpc_response res;
    httpc_response_init(&res);
    cella_err err = {0};
    if (!strcmp(body, "-")) {
        if (read_all_stdin(&in, &err) < 0) {
            client_say("%s", err.msg);
            goto out;
        }
        body = (const char *)cbuf_head(&in);
        body_len = cbuf_avail(&in);
        if (transfer_fs_body_check(body, body_len, &err) < 0) {
            fprintf(stderr, "cella fs: %s\nTry 'cella fs --help'.\n", err.msg);
            status = CLI_EXIT_USAGE;
            goto out;
        }
    }
    char *seg = client_path_segment(o->id);
    path = cella_asprintf("/v1/sandboxes/%s/fs/%s", seg, o->op);
    cella_free(seg);
    httpc_opts ho = {.token = c->token, .accept = "application/json", .cancel_fd = -1};
    if (httpc_do(c->url, "POST", path, &ho, body, body_len, &res, &err) < 0) {
        client_report_transport(&res, &err);
        goto out;
    }
    if (!ok_status(&res)) {
        client_report_error_answer(&res);
        goto out;
    }
    json_error_t je;
    ans = json_loadb(httpc_body_str(&res), cbuf_avail(&res.body), JSON_ALLOW_NUL, &je);
    if (!ans) {
        client_say("the daemon's answer is not JSON: %s", je.text);
        goto out;
    }
    char *pretty = json_dumps(ans, JSON_INDENT(2) | JSON_ENCODE_ANY);
    if (!pretty) {
        client_say("cannot print the daemon's answer");
        goto out;
    }
    fputs(pretty, stdout);
    fputc('\n', stdout);
    free(pretty);                 /* jansson's allocation */
    status = 0;
out:
    json_decref(ans);
    httpc_response_free(&res);
    cella_free(path);
    cbuf_free(&in);
    return status;
}

/* ---- entry ----------------------------------------------------------------------------------- */

int cli_transfer_main(const char *cmd, int argc, char **argv)
{
    transfer_opts o;
    cella_err err = {0};
    if (transfer_args_parse(cmd, argc, argv, &o, &err) < 0) {
        fprintf(stderr, "cella %s: %s\nTry 'cella %s --help'.\n", cmd, err.msg, cmd);
        return CLI_EXIT_USAGE;
    }
    if (o.help) {
        fputs(transfer_usage(cmd), stdout);
        return 0;
    }
    const char *env_url = getenv("CELLA_URL");
    ctx c = {.url = o.url ? o.url : env_url && env_url[0] ? env_url : CLIENT_DEFAULT_URL,
             .token = getenv("CELLA_TOKEN")};
    httpc_url u;
    if (httpc_url_parse(c.url, &u, &err) < 0) {
        fprintf(stderr, "cella %s: %s%s\n", cmd, o.url ? "--url " : "CELLA_URL ", err.msg);
        return CLI_EXIT_USAGE;
    }
    /* A closed stdout shows up as EPIPE where we write, not as a silent death. */
    signal(SIGPIPE, SIG_IGN);
    int status;
    if (!strcmp(cmd, "upload"))
        status = cmd_upload(&c, &o);
    else if (!strcmp(cmd, "download"))
        status = cmd_download(&c, &o);
    else
        status = cmd_fs(&c, &o);
    if (fflush(stdout) != 0 && status == 0) {
        client_say("writing stdout: %s", strerror(errno));
        status = CLI_EXIT_FAILED;
    }
    return status;
}
