/* The gateway's file routes: /read (a window of lines), /read_binary,
 * /write, /grep and /glob, on a session's /workspace. Each runs the
 * agent's file operations (agent/fs_int.h) in the session's sandbox;
 * paths come and go relative to /workspace. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "api/fs.h"
#include "api/gateway_int.h"
#include "api/jsonin.h"
#include "api/native.h"
#include "util/alloc.h"
#include "util/text.h"

/* A route's frame: the body parsed, tenant and session checked; the
 * handler checks its own fields, then opens the session (so a refused
 * request never makes one) and works; one reply. */
typedef int (*gw_fn)(http_ctx *c, json_t *j, const gw_who *w, json_t **out, core_error *e);

static void run(http_ctx *c, gw_fn fn)
{
    core_error e;
    json_t *j = NULL, *out = NULL;
    gw_who w;
    if (jin_parse(c->body, c->body_len, &j, &e) < 0 || gw_who_decode(c, j, &w, &e) < 0 ||
        fn(c, j, &w, &out, &e) < 0)
        http_reply_error(c, &e);
    else
        http_reply_json(c, 200, out);
    json_decref(j);
}

static int open_session(http_ctx *c, const gw_who *w, sandbox **s, core_error *e)
{
    return gw_session_open(c, w->tenant, w->session_id, s, e);
}

/* cat of a whole file: the stream, and its size from the header. */
static int cat(http_ctx *c, sandbox *s, const char *abs, uint64_t length, core_fs_stream **st,
               uint64_t *size, core_error *e)
{
    char *a_path = cella_asprintf("path=%s", abs);
    char *a_len = length == UINT64_MAX ? NULL : cella_asprintf("length=%" PRIu64, length);
    char *args[] = {a_path, a_len, NULL};
    core_fs_req r = {.op = "cat", .args = args};
    cbuf header;
    cbuf_init(&header);
    int rc = core_fs_download(s, &r, c->client_fd, st, &header, e);
    if (rc == 0) {
        /* The header comes from inside the sandbox: checked. */
        json_t *h = json_loadb((const char *)cbuf_head(&header), cbuf_avail(&header), 0, NULL);
        json_int_t n = json_integer_value(json_object_get(h, "size"));
        if (!json_is_integer(json_object_get(h, "size")) || n < 0) {
            core_fs_close(*st);
            *st = NULL;
            rc = core_fail(e, S216, "read: the sandbox's answer was malformed");
        }
        *size = (uint64_t)n;
        json_decref(h);
    }
    cbuf_free(&header);
    cella_free(a_path);
    cella_free(a_len);
    return rc;
}

/* ---- /read ------------------------------------------------------------------------------- */

typedef struct window {
    uint64_t offset, limit;       /* lines: the first kept, how many */
    uint64_t line;                /* the line the next byte belongs to (0-based) */
    bool ended_nl;                /* the last byte seen was a newline */
    bool cut;                     /* content reached GW_READ_MAX */
    bool probed;
    size_t seen;                  /* bytes looked at for a NUL (the binary probe) */
    cbuf content;
} window;

/* Takes the next n bytes of the file: counts lines, keeps those in the
 * window (up to GW_READ_MAX bytes of them). Nothing else is held, so a
 * file of any size costs one read buffer. -1: a NUL early on (binary). */
static int window_take(window *w, const uint8_t *p, size_t n)
{
    if (w->seen < 8192) {
        size_t k = n < 8192 - w->seen ? n : 8192 - w->seen;
        if (memchr(p, 0, k))
            return -1;
        w->seen += k;
    }
    while (n) {
        const uint8_t *nl = memchr(p, '\n', n);
        size_t k = nl ? (size_t)(nl - p) + 1 : n;
        if (w->line >= w->offset && w->line - w->offset < w->limit && !w->cut) {
            size_t room = GW_READ_MAX - cbuf_avail(&w->content);
            if (k > room) {
                cbuf_append(&w->content, p, room);
                w->cut = true;
            } else {
                cbuf_append(&w->content, p, k);
            }
        }
        if (nl)
            w->line++;
        w->ended_nl = nl != NULL;
        p += k;
        n -= k;
    }
    return 0;
}

static int do_read(http_ctx *c, json_t *j, const gw_who *who, json_t **out, core_error *e)
{
    char abs[GW_PATH_MAX], rel[GW_PATH_MAX];
    window w = {.offset = 0, .limit = 2000};
    if (gw_path(j, "path", NULL, false, abs, rel, e) < 0 ||
        jin_u64(j, "offset", 0, INT64_MAX, &w.offset, e) < 0 ||
        jin_u64(j, "limit", 1, GW_READ_LIMIT_MAX, &w.limit, e) < 0)
        return -1;
    core_fs_stream *st;
    uint64_t size;
    sandbox *s;
    if (open_session(c, who, &s, e) < 0)
        return -1;
    if (cat(c, s, abs, UINT64_MAX, &st, &size, e) < 0) {
        sandbox_unref(s);
        return -1;
    }
    cbuf_init(&w.content);
    uint8_t *buf = cella_malloc(256 << 10);
    int rc = 0;
    for (;;) {
        ssize_t n = core_fs_read(st, buf, 256 << 10, e);
        if (n < 0) {
            rc = -1;
            break;
        }
        if (n == 0)
            break;
        if (window_take(&w, buf, (size_t)n) < 0) {
            rc = core_fail(e, S212, "%.200s is a binary file (a NUL byte in its first 8 KiB): "
                           "read it with /read_binary", rel);
            break;
        }
    }
    cella_free(buf);
    core_fs_close(st);
    sandbox_unref(s);
    if (rc == 0) {
        /* A last line without its newline is a line too. */
        uint64_t total = w.line + (size > 0 && !w.ended_nl ? 1 : 0);
        size_t keep = cbuf_avail(&w.content);
        if (w.cut)                /* at a character boundary */
            keep = utf8_complete_prefix(cbuf_head(&w.content), keep);
        cbuf kept;
        cbuf_init(&kept);
        cbuf_append(&kept, cbuf_head(&w.content), keep);
        *out = json_object();
        json_object_set_new(*out, "content", api_text_json(&kept));
        json_object_set_new(*out, "offset", json_integer((json_int_t)w.offset));
        json_object_set_new(*out, "limit", json_integer((json_int_t)w.limit));
        json_object_set_new(*out, "total_lines", json_integer((json_int_t)total));
        json_object_set_new(*out, "truncated",
                            json_boolean(w.cut || (total > w.offset && total - w.offset > w.limit)));
        cbuf_free(&kept);
    }
    cbuf_free(&w.content);
    return rc;
}

void gw_h_read(http_ctx *c)
{
    run(c, do_read);
}

/* ---- /read_binary ------------------------------------------------------------------------- */

static int do_read_binary(http_ctx *c, json_t *j, const gw_who *who, json_t **out,
                          core_error *e)
{
    char abs[GW_PATH_MAX], rel[GW_PATH_MAX];
    sandbox *s;
    if (gw_path(j, "path", NULL, false, abs, rel, e) < 0 || open_session(c, who, &s, e) < 0)
        return -1;
    core_fs_stream *st;
    uint64_t size;
    /* One byte past the cap: a file that grew since its header still
     * shows it is too large, and no more than that is ever read. */
    if (cat(c, s, abs, GW_READ_BINARY_MAX + 1ull, &st, &size, e) < 0) {
        sandbox_unref(s);
        return -1;
    }
    cbuf raw;
    cbuf_init(&raw);
    uint8_t buf[64 << 10];
    int rc = 0;
    if (size > GW_READ_BINARY_MAX) {
        char *url = gw_file_url(s, abs);
        rc = core_fail(e, S400, "resource limit exceeded: %.200s is %" PRIu64 " bytes; "
                       "/read_binary returns up to %u: GET %s for all of it", rel, size,
                       GW_READ_BINARY_MAX, url);
        e->http_status = 413;
        cella_free(url);
    }
    sandbox_unref(s);
    while (rc == 0) {
        ssize_t n = core_fs_read(st, buf, sizeof(buf), e);
        if (n < 0)
            rc = -1;
        if (n <= 0)
            break;
        cbuf_append(&raw, buf, (size_t)n);
    }
    core_fs_close(st);
    if (rc == 0) {
        cbuf b64;
        cbuf_init(&b64);
        base64_encode(&b64, cbuf_head(&raw), cbuf_avail(&raw));
        *out = json_object();
        json_object_set_new(*out, "content_b64",
                            json_stringn(b64.data ? (const char *)cbuf_head(&b64) : "",
                                         cbuf_avail(&b64)));
        json_object_set_new(*out, "size", json_integer((json_int_t)cbuf_avail(&raw)));
        json_object_set_new(*out, "mime_type", json_string(gw_mime_type(rel)));
        cbuf_free(&b64);
    }
    cbuf_free(&raw);
    return rc;
}

void gw_h_read_binary(http_ctx *c)
{
    run(c, do_read_binary);
}

/* ---- /write --------------------------------------------------------------------------------- */

/* {path, content | content_b64}: written atomically, parents created. */
static int do_write(http_ctx *c, json_t *j, const gw_who *who, json_t **out, core_error *e)
{
    sandbox *s = NULL;
    gw_files f = {.v = cella_calloc(1, sizeof(gw_file_in)), .n = 1};
    gw_file_in *fi = &f.v[0];
    char abs[GW_PATH_MAX];
    const char *text = NULL;
    bool b64 = false;
    cbuf_init(&fi->data);
    int rc = -1;
    if (gw_path(j, "path", NULL, false, abs, fi->rel, e) < 0 ||
        jin_str(j, "content", &text, e) < 0 ||
        jin_base64(j, "content_b64", &fi->data, &b64, e) < 0)
        goto out;
    if (!!text == b64) {
        core_fail(e, S001, "invalid request: send exactly one of content (text) and "
                  "content_b64");
        goto out;
    }
    if (text)
        cbuf_append(&fi->data, text, json_string_length(json_object_get(j, "content")));
    if (open_session(c, who, &s, e) < 0 || gw_files_write(c, s, &f, 0, e) < 0)
        goto out;
    *out = json_pack("{s:s,s:I}", "path", fi->rel, "bytes_written",
                     (json_int_t)cbuf_avail(&fi->data));
    rc = 0;
out:
    if (s)
        sandbox_unref(s);
    gw_files_free(&f);
    return rc;
}

void gw_h_write(http_ctx *c)
{
    run(c, do_write);
}

/* ---- /grep and /glob ---------------------------------------------------------------------- */

/* Rewrites the absolute paths the agent reported, in place. */
static void rel_paths(json_t *arr, const char *key)
{
    size_t i;
    json_t *it;
    json_array_foreach(arr, i, it) {
        json_t *p = key ? json_object_get(it, key) : it;
        const char *s = json_string_value(p);
        if (!s || gw_rel(s) == s)
            continue;
        char *r = cella_strdup(gw_rel(s));
        json_string_set(p, r);
        cella_free(r);
    }
}

/* {pattern, path=".", include? (a glob or a list), ignore_case?}: the file
 * API's grep on the workspace. */
static int do_grep(http_ctx *c, json_t *j, const gw_who *who, json_t **out, core_error *e)
{
    sandbox *s;
    char abs[GW_PATH_MAX];
    const char *pattern = NULL;
    bool icase = false;
    int got;
    if (gw_path(j, "path", ".", true, abs, NULL, e) < 0 ||
        (got = jin_str(j, "pattern", &pattern, e)) < 0 || jin_bool(j, "ignore_case", &icase, e) < 0)
        return -1;
    if (!got)
        return jin_missing(e, "pattern");
    json_t *inc = json_object_get(j, "include");
    if (inc && !json_is_null(inc) && !json_is_string(inc)) {
        char **v = NULL;
        if (jin_strv(j, "include", &v, e) < 0)
            return -1;
        cella_strv_free(v);
    }
    if (open_session(c, who, &s, e) < 0)
        return -1;
    json_t *req = json_pack("{s:s,s:s,s:b}", "path", abs, "pattern", pattern, "ignore_case", icase);
    if (json_is_string(inc))
        json_object_set_new(req, "include_glob", json_pack("[O]", inc));
    else if (json_is_array(inc))
        json_object_set(req, "include_glob", inc);
    int rc = api_fs_call(c->core, s, "grep", req, c->client_fd, "", out, e);
    sandbox_unref(s);
    json_decref(req);
    if (rc == 0)
        rel_paths(json_object_get(*out, "matches"), "path");
    return rc;
}

void gw_h_grep(http_ctx *c)
{
    run(c, do_grep);
}

/* {pattern, path=".", include_hidden?}: the file API's glob. */
static int do_glob(http_ctx *c, json_t *j, const gw_who *who, json_t **out, core_error *e)
{
    sandbox *s;
    char abs[GW_PATH_MAX];
    const char *pattern = NULL;
    bool hidden = false;
    int got;
    if (gw_path(j, "path", ".", true, abs, NULL, e) < 0 ||
        (got = jin_str(j, "pattern", &pattern, e)) < 0 ||
        jin_bool(j, "include_hidden", &hidden, e) < 0)
        return -1;
    if (!got)
        return jin_missing(e, "pattern");
    if (open_session(c, who, &s, e) < 0)
        return -1;
    json_t *req = json_pack("{s:s,s:s,s:b}", "path", abs, "pattern", pattern, "include_hidden",
                            hidden);
    int rc = api_fs_call(c->core, s, "glob", req, c->client_fd, "", out, e);
    sandbox_unref(s);
    json_decref(req);
    if (rc == 0)
        rel_paths(json_object_get(*out, "paths"), NULL);
    return rc;
}

void gw_h_glob(http_ctx *c)
{
    run(c, do_glob);
}
