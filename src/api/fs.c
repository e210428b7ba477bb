#include "api/fs.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/jsonin.h"
#include "util/alloc.h"
#include "util/log.h"

/* ---- the JSON operations ------------------------------------------------------ */

enum fs_kind {
    FK_STR,                       /* a string, passed as is */
    FK_BOOL,
    FK_U64,
    FK_ID32,                      /* a uid or gid */
    FK_STRV,                      /* an array of strings: the arg repeated */
    FK_CONTENT,                   /* write's body: content | content_b64, to stdin */
};

typedef struct fs_field {
    const char *json;             /* iii's field name */
    const char *arg;              /* the agent's argument (fs_int.h) */
    enum fs_kind kind;
    bool required;
} fs_field;

#define END {NULL, NULL, 0, false}
static const fs_field f_path[] = {{"path", "path", FK_STR, true}, END};
/* follow is cella's: stat(2) rather than iii's lstat, for clients (Flue's
 * stat) that must describe what a symlink leads to. */
static const fs_field f_stat[] = {{"path", "path", FK_STR, true},
                                  {"follow", "follow", FK_BOOL, false}, END};
static const fs_field f_mkdir[] = {{"path", "path", FK_STR, true}, {"mode", "mode", FK_STR, false},
                                   {"parents", "parents", FK_BOOL, false}, END};
static const fs_field f_write[] = {{"path", "path", FK_STR, true}, {"mode", "mode", FK_STR, false},
                                   {"parents", "parents", FK_BOOL, false},
                                   {"content", NULL, FK_CONTENT, false}, END};
static const fs_field f_rm[] = {{"path", "path", FK_STR, true},
                                {"recursive", "recursive", FK_BOOL, false}, END};
static const fs_field f_chmod[] = {{"path", "path", FK_STR, true}, {"mode", "mode", FK_STR, true},
                                   {"uid", "uid", FK_ID32, false}, {"gid", "gid", FK_ID32, false},
                                   {"recursive", "recursive", FK_BOOL, false}, END};
static const fs_field f_mv[] = {{"src", "src", FK_STR, true}, {"dst", "dst", FK_STR, true},
                                {"overwrite", "overwrite", FK_BOOL, false}, END};
static const fs_field f_grep[] = {
    {"path", "path", FK_STR, true}, {"pattern", "pattern", FK_STR, true},
    {"recursive", "recursive", FK_BOOL, false}, {"ignore_case", "ignore_case", FK_BOOL, false},
    {"include_glob", "include", FK_STRV, false}, {"exclude_glob", "exclude", FK_STRV, false},
    {"max_matches", "max_matches", FK_U64, false},
    {"max_line_bytes", "max_line_bytes", FK_U64, false}, END};
static const fs_field f_sed[] = {
    {"files", "file", FK_STRV, false}, {"path", "path", FK_STR, false},
    {"pattern", "pattern", FK_STR, true}, {"replacement", "replacement", FK_STR, true},
    {"regex", "regex", FK_BOOL, false}, {"first_only", "first_only", FK_BOOL, false},
    {"ignore_case", "ignore_case", FK_BOOL, false}, {"recursive", "recursive", FK_BOOL, false},
    {"include_glob", "include", FK_STRV, false}, {"exclude_glob", "exclude", FK_STRV, false}, END};
static const fs_field f_glob[] = {
    {"path", "path", FK_STR, true}, {"pattern", "pattern", FK_STR, true},
    {"include_hidden", "include_hidden", FK_BOOL, false},
    {"max_results", "max_results", FK_U64, false}, END};
#undef END

static const struct {
    const char *name;
    const fs_field *fields;
    const char *const *names;     /* the JSON names, for jin_known */
} ops[] = {
    {"ls", f_path, (const char *const[]){"sandbox_id", "path", NULL}},
    {"stat", f_stat, (const char *const[]){"sandbox_id", "path", "follow", NULL}},
    {"mkdir", f_mkdir, (const char *const[]){"sandbox_id", "path", "mode", "parents", NULL}},
    {"write", f_write, (const char *const[]){"sandbox_id", "path", "mode", "parents", "content",
                                             "content_b64", NULL}},
    {"read", f_path, (const char *const[]){"sandbox_id", "path", NULL}},
    {"rm", f_rm, (const char *const[]){"sandbox_id", "path", "recursive", NULL}},
    {"chmod", f_chmod, (const char *const[]){"sandbox_id", "path", "mode", "uid", "gid",
                                             "recursive", NULL}},
    {"mv", f_mv, (const char *const[]){"sandbox_id", "src", "dst", "overwrite", NULL}},
    {"grep", f_grep, (const char *const[]){"sandbox_id", "path", "pattern", "recursive",
                                           "ignore_case", "include_glob", "exclude_glob",
                                           "max_matches", "max_line_bytes", NULL}},
    {"sed", f_sed, (const char *const[]){"sandbox_id", "files", "path", "pattern", "replacement",
                                         "regex", "first_only", "ignore_case", "recursive",
                                         "include_glob", "exclude_glob", NULL}},
    {"glob", f_glob, (const char *const[]){"sandbox_id", "path", "pattern", "include_hidden",
                                           "max_results", NULL}},
};

static int find_op(const char *op)
{
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        if (!strcmp(ops[i].name, op))
            return (int)i;
    return -1;
}

const char *const *api_fs_fields(const char *op)
{
    int i = find_op(op);
    return i < 0 ? NULL : ops[i].names;
}

typedef struct argv_b {
    char **v;
    size_t n, cap;
} argv_b;

static void add_arg(argv_b *a, char *kv)
{
    if (a->n + 2 > a->cap) {
        a->cap = a->cap ? a->cap * 2 : 16;
        a->v = cella_realloc(a->v, a->cap * sizeof(char *));
    }
    a->v[a->n++] = kv;
    a->v[a->n] = NULL;
}

/* write's body: exactly one of content (text) and content_b64 (bytes). */
static int take_content(json_t *body, cbuf *stdin_buf, core_error *e)
{
    json_t *c = json_object_get(body, "content");
    if (c && json_is_object(c))
        return core_fail(e, S219, "content as a stream channel is not supported here: send "
                         "content (text) or content_b64, or PUT the bytes to the file's URL");
    const char *text = NULL;
    bool b64 = false;
    if (jin_str(body, "content", &text, e) < 0 || jin_base64(body, "content_b64", stdin_buf, &b64,
                                                             e) < 0)
        return -1;
    if (!!text == b64)
        return core_fail(e, S001, "invalid request: send exactly one of content and content_b64");
    if (text)
        cbuf_append(stdin_buf, text, json_string_length(json_object_get(body, "content")));
    return 0;
}

/* The fields of body as the agent's key=value words (appended to a). */
static int build_args(const fs_field *f, json_t *body, argv_b *a, cbuf *stdin_buf, core_error *e)
{
    for (; f->json; f++) {
        json_t *v = json_object_get(body, f->json);
        if (f->kind == FK_CONTENT) {
            if (take_content(body, stdin_buf, e) < 0)
                return -1;
            continue;
        }
        if (!v || json_is_null(v)) {
            if (f->required)
                return jin_missing(e, f->json);
            continue;
        }
        switch (f->kind) {
        case FK_STR: {
            const char *s;
            if (jin_str(body, f->json, &s, e) < 0)
                return -1;
            add_arg(a, cella_asprintf("%s=%s", f->arg, s));
            break;
        }
        case FK_BOOL: {
            bool b;
            if (jin_bool(body, f->json, &b, e) < 0)
                return -1;
            add_arg(a, cella_asprintf("%s=%d", f->arg, b));
            break;
        }
        case FK_U64:
        case FK_ID32: {
            uint64_t n;
            uint64_t max = f->kind == FK_ID32 ? UINT32_MAX - 1 : UINT64_MAX;
            if (jin_u64(body, f->json, 0, max, &n, e) < 0)
                return -1;
            add_arg(a, cella_asprintf("%s=%" PRIu64, f->arg, n));
            break;
        }
        case FK_STRV: {
            char **sv = NULL;
            if (jin_strv(body, f->json, &sv, e) < 0)
                return -1;
            for (size_t i = 0; sv && sv[i]; i++)
                add_arg(a, cella_asprintf("%s=%s", f->arg, sv[i]));
            cella_strv_free(sv);
            break;
        }
        case FK_CONTENT:
            break;
        }
    }
    return 0;
}

char *api_fs_url(const char *base, const char *path)
{
    static const char hex[] = "0123456789ABCDEF";
    cbuf b;
    cbuf_init(&b);
    cbuf_append(&b, base, strlen(base));
    size_t segments = 0;
    /* Relative paths are under the workdir. */
    for (int pass = path[0] == '/'; pass < 2; pass++) {
        const char *p = pass ? path : "workspace";
        while (*p) {
            size_t n = strcspn(p, "/");
            const char *seg = p;
            p += n + (p[n] == '/');
            /* Empty and "." segments name nothing: dropped, as the agent
             * drops a trailing "/" and "/.". */
            if (n == 0 || (n == 1 && seg[0] == '.'))
                continue;
            /* ".." stays (the sandbox resolves it, through its symlinks,
             * which lexical resolution here would not), but never as a
             * segment of its own: a client removing the dot segments of
             * the URL (RFC 3986, 5.2.4) would fetch another route, another
             * sandbox's even, and the WHATWG URL standard (fetch, browsers,
             * Node) reads "%2E%2E" as ".." too. So it is joined to the
             * segment before it, "a/.." as "a%2F%2E%2E", which the route
             * decodes back. There is always one: "workspace" for a relative
             * path; at the root, "/.." is "/" itself and is dropped. */
            if (n == 2 && seg[0] == '.' && seg[1] == '.') {
                if (segments)
                    cbuf_append(&b, "%2F%2E%2E", 9);
                continue;
            }
            cbuf_append(&b, "/", 1);
            segments++;
            for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)seg[i];
                if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    strchr("._~-", c)) {
                    cbuf_append(&b, &c, 1);
                } else {
                    char esc[3] = {'%', hex[c >> 4], hex[c & 15]};
                    cbuf_append(&b, esc, 3);
                }
            }
        }
    }
    if (!segments)
        cbuf_append(&b, "/", 1);  /* the root itself */
    cbuf_append(&b, "", 1);
    char *s = cella_strdup((const char *)cbuf_head(&b));
    cbuf_free(&b);
    return s;
}

int api_fs_args(const char *op, json_t *body, char ***argv, cbuf *stdin_buf, core_error *e)
{
    *argv = NULL;
    int i = find_op(op);
    if (i < 0)
        return core_fail(e, S210, "unknown file operation '%.32s': one of ls, stat, mkdir, write, "
                         "read, rm, chmod, mv, grep, sed, glob", op);
    argv_b a = {0};
    add_arg(&a, NULL);            /* never NULL afterwards, even with no argument */
    a.n = 0;
    if (build_args(ops[i].fields, body, &a, stdin_buf, e) < 0) {
        for (size_t k = 0; k < a.n; k++)
            cella_free(a.v[k]);
        cella_free(a.v);
        return -1;
    }
    *argv = a.v;
    return 0;
}

static void free_args(char **v)
{
    for (size_t k = 0; v && v[k]; k++)
        cella_free(v[k]);
    cella_free(v);
}

int api_fs_call(core *c, sandbox *s, const char *op, json_t *body, int client_fd,
                const char *files_base, json_t **result, core_error *e)
{
    char **argv = NULL;
    cbuf in, out;
    cbuf_init(&in);
    cbuf_init(&out);
    int rc = -1;
    if (api_fs_args(op, body, &argv, &in, e) < 0)
        goto out;
    /* Every operation that can grow the workspace: write, mv (a tree moved
     * in from /tmp is copied) and sed (a rewritten file may grow). */
    if ((!strcmp(op, "write") || !strcmp(op, "mv") || !strcmp(op, "sed")) &&
        core_workspace_quota(c)) {
        size_t n = cella_strv_len(argv);
        argv = cella_realloc(argv, (n + 2) * sizeof(char *));
        argv[n] = cella_asprintf("quota=%" PRIu64, core_workspace_quota(c));
        argv[n + 1] = NULL;
    }
    core_fs_req r = {.op = op, .args = argv, .has_stdin = !strcmp(op, "write"),
                     .stdin_data = cbuf_head(&in), .stdin_len = cbuf_avail(&in)};
    if (core_fs(s, &r, client_fd, &out, e) < 0)
        goto out;
    /* The agent's words, from inside the sandbox: parsed as untrusted.
     * NUL is allowed: a file's text (read's body, a grep line) may hold
     * one, and it is valid UTF-8 that JSON carries as \u0000. */
    json_error_t jerr;
    json_t *j = json_loadb((const char *)cbuf_head(&out), cbuf_avail(&out),
                           JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
    if (!j || !json_is_object(j)) {
        json_decref(j);
        core_fail(e, S216, "%s: the sandbox's answer was malformed", op);
        goto out;
    }
    if (!strcmp(op, "read")) {
        const char *path = json_string_value(json_object_get(body, "path"));
        char *url = api_fs_url(files_base, path ? path : "");
        json_object_set_new(j, "content", json_pack("{s:s,s:s}", "url", url, "direction", "read"));
        cella_free(url);
    }
    *result = j;
    rc = 0;
out:
    free_args(argv);
    cbuf_free(&in);
    cbuf_free(&out);
    return rc;
}
