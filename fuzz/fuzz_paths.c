/* libFuzzer target: path normalisation, on both sides of the boundary.
 * The input is one path (cut at its first NUL), given to each of:
 *  - the gateway's gw_path_str (api/gateway.c): an accepted path is
 *    "/workspace" or "/workspace/<rel>", rel has no empty, "." or ".."
 *    component, and cleaning rel again gives rel;
 *  - Flujo's flujo_path_clean (api/flujo_req.c): the same of its output;
 *  - api_fs_url (api/fs.c), the URL of a sandbox path: only unreserved
 *    bytes, "/" and %XX escapes after the base, no dot segment as RFC 3986
 *    or the WHATWG URL standard (fetch, browsers) reads them, so that no
 *    client removing them reaches another route, and decoded it is the
 *    path's non-empty, non-"." components (under "workspace" when
 *    relative; a ".." at the root dropped);
 *  - the agent's fs_norm_path (agent/fs.c): never longer, a prefix of its
 *    input, non-empty when the input was, no trailing "/" or "/." unless it
 *    is "/", and normalising again changes nothing; fs_parent_of gives a
 *    prefix of the path, or "."; fs_tidy_abs an absolute path with no
 *    empty or "." component and no trailing "/";
 *  - the tar extractor's tar_clean_name (agent/fs_tar_extract.c): an
 *    accepted name is relative, has no empty, "." or ".." component, as
 *    many components as depth says, and cleans to itself. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent/fs_int.h"
#include "agent/fs_walk.h"
#include "api/flujo.h"
#include "api/fs.h"
#include "api/gateway_int.h"
#include "util/alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

/* Each component of s (split at "/") is neither empty, "." nor "..". */
static bool clean_components(const char *s)
{
    if (!*s)
        return true;
    for (const char *p = s;;) {
        size_t l = strcspn(p, "/");
        if (l == 0 || (l == 1 && p[0] == '.') || (l == 2 && p[0] == '.' && p[1] == '.'))
            return false;
        if (!p[l])
            return true;
        p += l + 1;
    }
}

static size_t count_components(const char *s)
{
    size_t k = *s ? 1 : 0;
    for (; *s; s++)
        k += *s == '/';
    return k;
}

static void check_gateway(const char *in, size_t len)
{
    static char abs[GW_PATH_MAX], rel[GW_PATH_MAX], abs2[GW_PATH_MAX], rel2[GW_PATH_MAX];
    core_error e;
    for (int root = 0; root < 2; root++) {
        if (gw_path_str("path", in, len, root, abs, rel, &e) < 0)
            continue;
        if (in[0] == '/' || strlen(in) != len || !clean_components(rel) || (!root && !rel[0]))
            abort();
        if (rel[0] ? strncmp(abs, "/workspace/", 11) != 0 || strcmp(abs + 11, rel) != 0
                   : strcmp(abs, "/workspace") != 0)
            abort();
        if (rel[0] && (gw_path_str("path", rel, strlen(rel), root, abs2, rel2, &e) < 0 ||
                       strcmp(rel, rel2) != 0 || strcmp(abs, abs2) != 0))
            abort();
        if (strcmp(gw_rel(abs), rel[0] ? rel : ".") != 0)
            abort();
    }
}

static void check_flujo(const char *in)
{
    static char out[FLUJO_PATH_MAX], again[FLUJO_PATH_MAX];
    if (flujo_path_clean(in, out, sizeof(out)) < 0)
        return;
    if (!out[0] || out[0] == '/' || !clean_components(out) ||
        flujo_path_clean(out, again, sizeof(again)) < 0 || strcmp(out, again) != 0)
        abort();
}

static int unhex(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A dot segment to a client that removes them: RFC 3986's "." and "..",
 * and the WHATWG URL standard's (fetch, browsers, Node's URL), which also
 * takes "%2e" for "." and ".%2e", "%2e." and "%2e%2e" for "..". */
static bool dot_segment(const char *p, size_t l)
{
    return (l == 1 && p[0] == '.') || (l == 3 && !strncasecmp(p, "%2e", 3)) ||
           (l == 2 && !strncmp(p, "..", 2)) || (l == 4 && !strncasecmp(p, ".%2e", 4)) ||
           (l == 4 && !strncasecmp(p, "%2e.", 4)) || (l == 6 && !strncasecmp(p, "%2e%2e", 6));
}

static void check_url(const char *in)
{
    static const char base[] = "/v1/sandboxes/x/files";
    char *url = api_fs_url(base, in);
    if (strncmp(url, base, sizeof(base) - 1) != 0)
        abort();
    const char *u = url + sizeof(base) - 1;
    if (u[0] != '/')
        abort();
    /* What the route gets back, decoded: the path's components but empty
     * and "." ones, under "workspace" when relative; ".." kept (the sandbox
     * resolves it, through its symlinks) but at the root, whose parent is
     * itself. */
    cbuf want, got;
    cbuf_init(&want);
    cbuf_init(&got);
    if (in[0] != '/')
        cbuf_append(&want, "/workspace", 10);
    for (const char *p = in; *p;) {
        size_t l = strcspn(p, "/");
        bool up = l == 2 && p[0] == '.' && p[1] == '.';
        if (l && !(l == 1 && p[0] == '.') && !(up && !cbuf_avail(&want))) {
            cbuf_append(&want, "/", 1);
            cbuf_append(&want, p, l);
        }
        p += l + (p[l] == '/');
    }
    if (!cbuf_avail(&want))
        cbuf_append(&want, "/", 1);
    /* The URL: unreserved bytes, "/" and escapes; no dot segment, so no
     * client turns it into another route (another sandbox's even). */
    for (const char *p = u; *p;) {
        if (*p == '/') {
            size_t l = strcspn(p + 1, "/");
            if (dot_segment(p + 1, l) || (l == 0 && strcmp(u, "/") != 0))
                abort();
            cbuf_append(&got, "/", 1);
            p++;
            continue;
        }
        char c = *p;
        if (c == '%') {
            int hi = unhex(p[1]), lo = hi >= 0 ? unhex(p[2]) : -1;
            if (hi < 0 || lo < 0)
                abort();
            char b = (char)(hi << 4 | lo);
            cbuf_append(&got, &b, 1);
            p += 3;
        } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   strchr("._~-", c)) {
            cbuf_append(&got, &c, 1);
            p++;
        } else {
            abort();
        }
    }
    if (cbuf_avail(&got) != cbuf_avail(&want) ||
        memcmp(cbuf_head(&got), cbuf_head(&want), cbuf_avail(&want)) != 0)
        abort();
    cbuf_free(&want);
    cbuf_free(&got);
    cella_free(url);
}

static void check_agent(const char *in)
{
    size_t len = strlen(in);
    char *p = cella_strdup(in);
    fs_norm_path(p);
    size_t l = strlen(p);
    if (l > len || strncmp(p, in, l) != 0 || (len && !l))
        abort();
    if (l > 1 && (p[l - 1] == '/' || (p[l - 1] == '.' && p[l - 2] == '/')))
        abort();
    char *again = cella_strdup(p);
    fs_norm_path(again);
    if (strcmp(again, p) != 0)
        abort();
    cella_free(again);

    static char parent[PATH_MAX];
    fs_parent_of(in, parent, sizeof(parent));
    if (strcmp(parent, ".") != 0 && (strlen(parent) > len || strncmp(parent, in, strlen(parent))))
        abort();
    cella_free(p);

    if (len < PATH_MAX) {
        char *t = fs_tidy_abs(in);
        size_t tl = strlen(t);
        if (t[0] != '/' || (tl > 1 && t[tl - 1] == '/') || strstr(t, "//") || strstr(t, "/./") ||
            (tl >= 2 && !strcmp(t + tl - 2, "/.")))
            abort();
        cella_free(t);
    }
}

static void check_tar_name(const char *in)
{
    static char out[PATH_MAX], again[PATH_MAX];
    bool slash = false, slash2 = false;
    unsigned depth = 0, depth2 = 0;
    if (tar_clean_name(in, out, sizeof(out), &slash, &depth) != NULL)
        return;
    if (out[0] == '/' || !clean_components(out) || count_components(out) != depth ||
        slash != (in[strlen(in) - 1] == '/'))
        abort();
    if (out[0] && (tar_clean_name(out, again, sizeof(again), &slash2, &depth2) != NULL ||
                   strcmp(out, again) != 0 || depth2 != depth || slash2))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    if (n > 3 * PATH_MAX)
        return 0;
    char *s = cella_malloc(n + 1);
    memcpy(s, d, n);
    s[n] = '\0';
    check_gateway(s, n);          /* n, not strlen: a NUL inside is refused */
    check_flujo(s);
    check_url(s);
    check_agent(s);
    check_tar_name(s);
    cella_free(s);
    return 0;
}
