/* The file routes: POST /v1/sandboxes/{id}/fs/{op} (JSON), and the raw
 * transfers GET|PUT /v1/sandboxes/{id}/files/{path} and
 * GET|PUT /v1/sandboxes/{id}/archive/{path}, which stream: a 1 GiB file
 * passes through the daemon in windows of about 1 MiB. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/fs.h"
#include "api/jsonin.h"
#include "util/alloc.h"
#include "util/log.h"

/* ---- JSON operations -------------------------------------------------------------- */

static void h_fs(http_ctx *c)
{
    core_error e;
    json_t *j = NULL, *res = NULL;
    sandbox *s = NULL;
    const char *op = c->params[1], *sid = NULL;
    const char *const *fields = api_fs_fields(op);
    char base[96];
    if (!fields) {
        core_fail(&e, S210, "unknown file operation '%.32s': one of ls, stat, mkdir, write, read, "
                  "rm, chmod, mv, grep, sed, glob", op);
        e.http_status = 404;
        goto error;
    }
    if (jin_parse(c->body, c->body_len, &j, &e) < 0 || jin_known(j, fields, &e) < 0 ||
        jin_str(j, "sandbox_id", &sid, &e) < 0)
        goto error;
    if (sid && strcasecmp(sid, c->params[0]) != 0) {
        core_fail(&e, S001, "invalid request: sandbox_id in the body differs from the one in the path");
        goto error;
    }
    if (core_get(c->core, c->tenant, c->params[0], &s, &e) < 0)
        goto error;
    snprintf(base, sizeof(base), "/v1/sandboxes/%s/files", sandbox_id(s));
    if (api_fs_call(c->core, s, op, j, c->client_fd, base, &res, &e) < 0)
        goto error;
    http_reply_json(c, 200, res);
    goto out;
error:
    http_reply_error(c, &e);
out:
    if (s)
        sandbox_unref(s);
    json_decref(j);
}

/* ---- downloads ------------------------------------------------------------------------ */

/* The sandbox path a {*path} names: the URL's path is the absolute path. */
static char *route_path(const char *param)
{
    return cella_asprintf("/%s", param);
}

static ssize_t download_read(void *arg, char *buf, size_t max)
{
    core_error e;
    ssize_t n = core_fs_read(arg, buf, max, &e);
    if (n > 0)
        return n;
    if (n == 0)
        return -1;                /* the end */
    log_info("event=download_aborted error=%s", core_code_lookup(e.code)->name);
    return -2;
}

static void download_free(void *arg)
{
    core_fs_close(arg);
}

bool api_parse_range(const char *h, uint64_t *start, uint64_t *len, bool *suffix)
{
    if (!h || strncmp(h, "bytes=", 6) != 0 || strchr(h, ','))
        return false;
    const char *p = h + 6;
    char *end;
    *suffix = *p == '-';
    errno = 0;
    if (*suffix) {
        if (p[1] < '0' || p[1] > '9')
            return false;
        *len = strtoull(p + 1, &end, 10);
        *start = 0;
        return *end == '\0' && errno == 0;
    }
    if (*p < '0' || *p > '9')
        return false;
    *start = strtoull(p, &end, 10);
    if (*end != '-' || errno)
        return false;
    p = end + 1;
    if (!*p) {
        *len = UINT64_MAX;
        return true;
    }
    if (*p < '0' || *p > '9')
        return false;
    uint64_t last = strtoull(p, &end, 10);
    if (*end || errno || last < *start)
        return false;
    /* A last byte past any file means "to the end". */
    *len = last == UINT64_MAX ? UINT64_MAX : last - *start + 1;
    return true;
}

static void http_date(int64_t t, char *buf, size_t n)
{
    time_t tt = (time_t)t;
    struct tm tm;
    /* The time comes from inside the sandbox: one past struct tm's years
     * is shown as the epoch rather than formatted from garbage. */
    if (!gmtime_r(&tt, &tm)) {
        tt = 0;
        gmtime_r(&tt, &tm);
    }
    strftime(buf, n, "%a, %d %b %Y %H:%M:%S GMT", &tm);
}

static void h_download(http_ctx *c)
{
    core_error e;
    sandbox *s = NULL;
    core_fs_stream *st = NULL;
    json_t *hj = NULL;
    char *path = route_path(c->params[1]);
    char *a_path = cella_asprintf("path=%s", path), *a_off = NULL, *a_len = NULL;
    cbuf header;
    cbuf_init(&header);
    uint64_t start = 0, len = UINT64_MAX;
    bool suffix = false;
    bool ranged = api_parse_range(http_header(c, "Range"), &start, &len, &suffix);
    if (ranged) {
        a_off = suffix ? cella_asprintf("tail=%" PRIu64, len) : cella_asprintf("offset=%" PRIu64, start);
        a_len = suffix || len == UINT64_MAX ? NULL : cella_asprintf("length=%" PRIu64, len);
    }
    char *args[] = {a_path, a_off, a_len, NULL};
    core_fs_req r = {.op = "cat", .args = args};
    if (core_get(c->core, c->tenant, c->params[0], &s, &e) < 0 ||
        core_fs_download(s, &r, c->client_fd, &st, &header, &e) < 0)
        goto error;
    hj = json_loadb((const char *)cbuf_head(&header), cbuf_avail(&header), 0, NULL);
    json_int_t size = json_integer_value(json_object_get(hj, "size"));
    json_int_t off = json_integer_value(json_object_get(hj, "offset"));
    json_int_t n = json_integer_value(json_object_get(hj, "length"));
    json_int_t mtime = json_integer_value(json_object_get(hj, "mtime"));
    /* The header comes from inside the sandbox: checked, without overflow. */
    if (!hj || size < 0 || off < 0 || n < 0 || off > size || n > size - off) {
        core_fail(&e, S216, "download: the sandbox's answer was malformed");
        goto error;
    }
    char crange[80], lastmod[64];
    http_date((int64_t)mtime, lastmod, sizeof(lastmod));
    int status = 200;
    if (ranged && ((!suffix && (uint64_t)start >= (uint64_t)size) || (suffix && len == 0) ||
                   size == 0)) {
        /* Nothing of the file is in that range. */
        snprintf(crange, sizeof(crange), "bytes */%lld", (long long)size);
        core_fs_close(st);
        st = NULL;
        core_fail(&e, S210, "range not satisfiable: the file has %lld bytes", (long long)size);
        e.http_status = 416;
        c->reply_headers[0] = "Content-Range";
        c->reply_headers[1] = crange;
        goto error;
    }
    if (ranged) {
        status = 206;
        snprintf(crange, sizeof(crange), "bytes %lld-%lld/%lld", (long long)off,
                 (long long)(off + n - 1), (long long)size);
    }
    const char *headers[] = {"Accept-Ranges", "bytes", "Last-Modified", lastmod,
                             ranged ? "Content-Range" : NULL, crange, NULL};
    http_reply_stream_ex(c, status, "application/octet-stream", (uint64_t)n, headers,
                         download_read, download_free, st);
    st = NULL;
    goto out;
error:
    http_reply_error(c, &e);
out:
    core_fs_close(st);
    if (s)
        sandbox_unref(s);
    json_decref(hj);
    cbuf_free(&header);
    cella_free(path);
    cella_free(a_path);
    cella_free(a_off);
    cella_free(a_len);
}

static void h_archive_get(http_ctx *c)
{
    core_error e;
    sandbox *s = NULL;
    core_fs_stream *st = NULL;
    char *path = route_path(c->params[1]);
    char *a_path = cella_asprintf("path=%s", path);
    char *args[] = {a_path, NULL};
    core_fs_req r = {.op = "tar-create", .args = args};
    cbuf header;
    cbuf_init(&header);
    if (core_get(c->core, c->tenant, c->params[0], &s, &e) < 0 ||
        core_fs_download(s, &r, c->client_fd, &st, &header, &e) < 0) {
        http_reply_error(c, &e);
    } else {
        const char *headers[] = {"Content-Disposition", "attachment", NULL};
        http_reply_stream_ex(c, 200, "application/x-tar", UINT64_MAX, headers, download_read,
                             download_free, st);
    }
    if (s)
        sandbox_unref(s);
    cbuf_free(&header);
    cella_free(path);
    cella_free(a_path);
}

/* ---- uploads ---------------------------------------------------------------------------- */

typedef struct upload {
    sandbox *s;
    core_fs_stream *st;
} upload;

static int upload_data(void *arg, const uint8_t *p, size_t n)
{
    upload *u = arg;
    return core_fs_upload_feed(u->st, p, n);
}

static void upload_free(upload *u)
{
    core_fs_close(u->st);
    sandbox_unref(u->s);
    cella_free(u);
}

static void upload_end(void *arg, http_ctx *c)
{
    upload *u = arg;
    core_error e;
    cbuf out;
    cbuf_init(&out);
    if (core_fs_upload_end(u->st, &out, &e) < 0) {
        http_reply_error(c, &e);
    } else {
        json_t *j = json_loadb((const char *)cbuf_head(&out), cbuf_avail(&out), 0, NULL);
        if (!json_is_object(j)) {
            json_decref(j);
            core_fail(&e, S216, "upload: the sandbox's answer was malformed");
            http_reply_error(c, &e);
        } else {
            http_reply_json(c, 200, j);
        }
    }
    cbuf_free(&out);
    upload_free(u);
}

static void upload_abort(void *arg)
{
    /* Closing kills the operation: its hidden file goes with it. */
    upload_free(arg);
}

static void start_upload(http_ctx *c, const char *op)
{
    core_error e;
    sandbox *s = NULL;
    char *path = route_path(c->params[1]);
    const char *mode = http_query(c, "mode");
    const char *cl = http_header(c, "Content-Length");
    uint64_t quota = core_workspace_quota(c->core);
    char *args[] = {cella_asprintf("path=%s", path),
                    cella_asprintf("parents=%d", http_query_flag(c, "parents")),
                    quota ? cella_asprintf("quota=%" PRIu64, quota) : cella_strdup("quota=0"),
                    /* The declared length: fewer bytes arriving replace nothing. */
                    cl && !strcmp(op, "write") ? cella_asprintf("size=%s", cl) : NULL,
                    NULL, NULL};
    size_t na = cl && !strcmp(op, "write") ? 4 : 3;
    if (mode && !strcmp(op, "write"))
        args[na] = cella_asprintf("mode=%s", mode);
    core_fs_req r = {.op = op, .args = args};
    upload *u = cella_calloc(1, sizeof(*u));
    if (core_get(c->core, c->tenant, c->params[0], &s, &e) < 0 ||
        core_fs_upload_begin(s, &r, c->client_fd, &u->st, &e) < 0) {
        http_reply_error(c, &e);
        if (s)
            sandbox_unref(s);
        cella_free(u);
    } else {
        u->s = s;
        http_body_sink sink = {.data = upload_data, .end = upload_end, .abort = upload_abort,
                               .arg = u};
        http_accept_body(c, &sink);
    }
    for (size_t i = 0; i < 5; i++)
        cella_free(args[i]);
    cella_free(path);
}

static void h_upload(http_ctx *c)
{
    start_upload(c, "write");
}

static void h_archive_put(http_ctx *c)
{
    start_upload(c, "tar-extract");
}

const http_route api_fs_routes[] = {
    {"POST", "/v1/sandboxes/{id}/fs/{op}", NULL, 0, h_fs, NULL},
    {"GET", "/v1/sandboxes/{id}/files/{*path}", NULL, 0, h_download, NULL},
    {"PUT", "/v1/sandboxes/{id}/files/{*path}", NULL, ROUTE_STREAM_BODY, h_upload, NULL},
    {"GET", "/v1/sandboxes/{id}/archive/{*path}", NULL, 0, h_archive_get, NULL},
    {"PUT", "/v1/sandboxes/{id}/archive/{*path}", NULL, ROUTE_STREAM_BODY, h_archive_put, NULL},
    {NULL, NULL, NULL, 0, NULL, NULL},
};
