/* grep and glob (fs_int.h has the protocol): a regular expression over
 * the lines of the files below a path, and a gitignore-style pattern
 * (util/glob.h) over the paths themselves, both on fs_walk.h's walk, run
 * as the sandbox user inside the sandbox. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/fs_walk.h"
#include "util/alloc.h"
#include "util/glob.h"
#include "util/text.h"

#define SEARCH_LINE_CAP (1u << 20)    /* a longer line is matched on its first 1 MiB */

/* ---- grep ---------------------------------------------------------------- */

typedef struct grep_ctx {
    walk wk;                      /* first: the visitor gets it back */
    walk_filters f;
    rx re;
    jsonw *w;
    uint64_t max_matches, max_line, count, deadline_ms;
    bool truncated;
    uint8_t *buf;                 /* SEARCH_LINE_CAP + SEARCH_READ */
    cbuf scratch;
} grep_ctx;

/* One line (without its "\n"): matched and, on a hit, written out. cut:
 * the first SEARCH_LINE_CAP bytes of a longer line. */
static int grep_line(grep_ctx *g, const uint8_t *p, size_t n, uint64_t line, bool cut)
{
    if (line % 64 == 0 && fs_past(g->wk.deadline))
        return WALK_DEADLINE;
    if (cut)
        n = utf8_complete_prefix(p, n);
    if (!fs_text_valid(p, n))
        return 0;
    int rc = pcre2_match(g->re.code, p, n, 0, PCRE2_NO_UTF_CHECK, g->re.md, g->re.mctx);
    if (rc == PCRE2_ERROR_NOMATCH)
        return 0;
    if (rc < 0) {
        char msg[PATH_MAX + 256];
        return fs_fail(BUILTIN_BAD_REGEX, "%s", rx_error(rc, g->wk.path, line, msg, sizeof(msg)));
    }
    size_t k = n;
    bool more = cut;
    if (n > g->max_line) {
        /* Cut at a character boundary, at or below the limit. */
        k = (size_t)g->max_line;
        while (k > 0 && (p[k] & 0xC0) == 0x80)
            k--;
        more = true;
    }
    /* Worst case of the escaping (\u00XX) so the cap is never passed. */
    size_t need = (k + 3 + g->wk.len) * 6 + 64;
    if (g->count >= g->max_matches || cbuf_avail(g->w->out) + need > SEARCH_OUT_CAP) {
        g->truncated = true;
        return WALK_STOP;
    }
    g->count++;
    cbuf_reset(&g->scratch);
    cbuf_append(&g->scratch, p, k);
    if (more)
        cbuf_append(&g->scratch, "\xE2\x80\xA6", 3);          /* … */
    jw_obj(g->w);
    jw_kstr(g->w, "path", g->wk.path);
    jw_ku64(g->w, "line", line);
    jw_key(g->w, "content");
    jw_strn(g->w, (const char *)cbuf_head(&g->scratch), cbuf_avail(&g->scratch));
    jw_obj_end(g->w);
    return 0;
}

/* Reads fd in chunks and hands each line to grep_line. Files with a NUL
 * in their first 8 KiB are binary and skipped; a read error skips the
 * rest of the file. */
static int grep_fd(grep_ctx *g, int fd)
{
    uint8_t *buf = g->buf;
    size_t len = 0, start = 0, cap = SEARCH_LINE_CAP + SEARCH_READ;
    bool eof = false, skipping = false, probed = false;
    uint64_t line = 0;
    for (;;) {
        if (!eof) {
            if (start > 0) {
                memmove(buf, buf + start, len - start);
                len -= start;
                start = 0;
            }
            ssize_t r = read(fd, buf + len, cap - len);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0)
                return 0;
            eof = r == 0;
            len += (size_t)r;
            if (!probed && !eof && len < SEARCH_PROBE)
                continue;
            if (!probed && memchr(buf, 0, len < SEARCH_PROBE ? len : SEARCH_PROBE))
                return 0;
            probed = true;
        }
        for (;;) {
            size_t avail = len - start;
            uint8_t *nl = memchr(buf + start, '\n', avail);
            int rc = 0;
            if (skipping) {
                /* The rest of a line cut at SEARCH_LINE_CAP. */
                if (!nl) {
                    start = len;
                    break;
                }
                skipping = false;
                start = (size_t)(nl - buf) + 1;
                continue;
            }
            if (nl) {
                size_t n = (size_t)(nl - (buf + start));
                if (n && buf[start + n - 1] == '\r')
                    n--;
                rc = grep_line(g, buf + start, n, ++line, false);
                start = (size_t)(nl - buf) + 1;
            } else if (avail >= SEARCH_LINE_CAP) {
                rc = grep_line(g, buf + start, SEARCH_LINE_CAP, ++line, true);
                skipping = true;
                start += SEARCH_LINE_CAP;
            } else {
                if (eof && avail)
                    rc = grep_line(g, buf + start, avail, ++line, false);
                if (eof)
                    start = len;
                break;
            }
            if (rc)
                return rc;
        }
        if (eof)
            return 0;
    }
}

static int grep_visit(walk *wk, int dir, const char *name, const struct stat *st, bool follow)
{
    grep_ctx *g = (grep_ctx *)wk;
    int rc;
    if (!walk_wants_file(wk, &g->f, name, st, follow, &rc))
        return rc;
    struct stat fst;
    int fd = fs_open_regular(dir, name, follow, &fst);
    if (fd < 0)
        return follow ? fs_fail_errno(errno, "grep", name) : 0;
    rc = grep_fd(g, fd);
    close(fd);
    return rc;
}

/* grep {path, pattern, recursive=1, ignore_case=0, include*, exclude*,
 *       max_matches=10000, max_line_bytes=4096, deadline_ms=30000}
 *   -> {matches: [{path, line, content}], truncated}
 * Past the deadline the call fails (S217): a pattern or tree too costly
 * must answer quickly and say so, not hand back an arbitrary subset. */
int fs_op_grep(const fs_args *a, jsonw *w)
{
    grep_ctx g = {0};
    const char *path, *pattern = fs_arg(a, "pattern");
    bool rec, icase;
    if (fs_arg_path(a, "path", &path) < 0 || fs_arg_bool(a, "recursive", true, &rec) < 0 ||
        fs_arg_bool(a, "ignore_case", false, &icase) < 0 ||
        fs_arg_u64(a, "max_matches", 10000, &g.max_matches) < 0 ||
        fs_arg_u64(a, "max_line_bytes", 4096, &g.max_line) < 0 ||
        fs_arg_u64(a, "deadline_ms", SEARCH_DEADLINE_MS, &g.deadline_ms) < 0)
        return BUILTIN_USAGE;
    if (!pattern)
        return fs_fail(BUILTIN_USAGE, "pattern is required");
    int rc = walk_filters_load(a, &g.f);
    if (rc || (rc = rx_compile(&g.re, pattern, false, icase)))
        return rc;
    g.wk = (walk){.visit = grep_visit, .op = "grep", .deadline = fs_deadline_at(g.deadline_ms)};
    g.w = w;
    g.buf = cella_malloc(SEARCH_LINE_CAP + SEARCH_READ);
    cbuf_init(&g.scratch);
    jw_obj(w);
    jw_key(w, "matches");
    jw_arr(w);
    rc = walk_root(&g.wk, path, rec, false);
    if (rc == WALK_DEADLINE && g.count >= g.max_matches) {
        g.truncated = true;       /* all asked for was found; only the "more?" timed out */
        rc = 0;
    } else if (rc == WALK_DEADLINE) {
        rc = fs_fail(BUILTIN_BAD_REGEX, "search took longer than %llu ms; narrow the path or the "
                     "pattern", (unsigned long long)g.deadline_ms);
    }
    if (rc == 0 || rc == WALK_STOP || rc == WALK_SKIP) {
        rc = BUILTIN_OK;
        jw_arr_end(w);
        jw_kbool(w, "truncated", g.truncated);
        jw_obj_end(w);
    }
    cbuf_free(&g.scratch);
    cella_free(g.buf);
    cella_free(g.wk.path);
    rx_free(&g.re);
    return rc;
}

/* ---- glob ---------------------------------------------------------------- */

/* One path found, with what stat=1 reports of it (its lstat). */
typedef struct glob_hit {
    char *path;
    uint64_t size, ino;
    int64_t mtime_ns;
    mode_t mode;
} glob_hit;

typedef struct glob_ctx {
    walk wk;                      /* first: the visitor gets it back */
    const char *pattern;
    bool hidden, truncated, stat;
    uint64_t max;
    glob_hit *hits;
    size_t n, cap, bytes;
} glob_ctx;

static int glob_visit(walk *wk, int dir, const char *name, const struct stat *st, bool follow)
{
    glob_ctx *g = (glob_ctx *)wk;
    /* Hidden entries: neither listed nor entered unless asked for. */
    if (name[0] == '.' && !g->hidden)
        return WALK_SKIP;
    const char *rel = wk->path + wk->rel;
    bool is_dir = S_ISDIR(st->st_mode);
    if (glob_match(g->pattern, rel, is_dir)) {
        /* The JSON a path may take escaped (\u00XX), so the cap holds;
         * stat=1 adds an object's keys and four numbers. */
        size_t cost = wk->len * 6 + 3 + (g->stat ? 128 : 0);
        if (g->n >= g->max || g->bytes + cost > SEARCH_OUT_CAP) {
            g->truncated = true;
            return WALK_STOP;
        }
        if (g->n == g->cap) {
            g->cap = g->cap ? g->cap * 2 : 64;
            g->hits = cella_realloc(g->hits, g->cap * sizeof(*g->hits));
        }
        g->hits[g->n++] = (glob_hit){
            .path = cella_strdup(wk->path),
            .size = (uint64_t)st->st_size,
            .ino = (uint64_t)st->st_ino,
            .mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
            .mode = st->st_mode,
        };
        g->bytes += cost;
    }
    /* A directory nothing below could match is not walked. */
    if (is_dir && !glob_may_match_under(g->pattern, rel))
        return WALK_SKIP;
    return 0;
}

static int cmp_hits(const void *a, const void *b)
{
    return strcmp(((const glob_hit *)a)->path, ((const glob_hit *)b)->path);
}

static const char *type_of(mode_t m)
{
    return S_ISREG(m) ? "file" : S_ISDIR(m) ? "dir" : S_ISLNK(m) ? "symlink" : "other";
}

/* glob {path, pattern, include_hidden=0, max_results=10000, deadline_ms=30000, stat=0}
 *   -> {paths: [absolute, sorted bytewise], truncated}
 *   stat=1: {entries: [{path, type, size, mtime_ns, ino}], truncated} instead,
 *   each entry's own lstat (type file, dir, symlink or other): one call
 *   tells what a tree holds and what changed in it since the last look
 *   (the gateway's artifacts), where a stat per path would cost a round
 *   trip each.
 * Symlinks are listed (when they match), never followed. Past max_results,
 * the output cap or the deadline, the paths found so far come back with
 * truncated: true (any subset of paths is still a correct answer). */
int fs_op_glob(const fs_args *a, jsonw *w)
{
    glob_ctx g = {0};
    const char *path, *why;
    uint64_t dl;
    if (fs_arg_path(a, "path", &path) < 0 ||
        fs_arg_bool(a, "include_hidden", false, &g.hidden) < 0 ||
        fs_arg_u64(a, "max_results", 10000, &g.max) < 0 ||
        fs_arg_u64(a, "deadline_ms", SEARCH_DEADLINE_MS, &dl) < 0 ||
        fs_arg_bool(a, "stat", false, &g.stat) < 0)
        return BUILTIN_USAGE;
    g.pattern = fs_arg(a, "pattern");
    if (!g.pattern)
        return fs_fail(BUILTIN_USAGE, "pattern is required");
    if (glob_check(g.pattern, &why) < 0)
        return fs_fail(BUILTIN_USAGE, "invalid pattern '%.64s': %s", g.pattern, why);
    g.wk = (walk){.visit = glob_visit, .op = "glob", .deadline = fs_deadline_at(dl)};
    int rc = walk_root(&g.wk, path, true, true);
    if (rc == WALK_DEADLINE) {
        g.truncated = true;
        rc = 0;
    }
    if (rc <= 0) {
        rc = BUILTIN_OK;
        if (g.n)
            qsort(g.hits, g.n, sizeof(*g.hits), cmp_hits);
        jw_obj(w);
        jw_key(w, g.stat ? "entries" : "paths");
        jw_arr(w);
        for (size_t i = 0; i < g.n; i++) {
            const glob_hit *h = &g.hits[i];
            if (!g.stat) {
                jw_str(w, h->path);
                continue;
            }
            jw_obj(w);
            jw_kstr(w, "path", h->path);
            jw_kstr(w, "type", type_of(h->mode));
            jw_ku64(w, "size", h->size);
            jw_ki64(w, "mtime_ns", h->mtime_ns);
            jw_ku64(w, "ino", h->ino);
            jw_obj_end(w);
        }
        jw_arr_end(w);
        jw_kbool(w, "truncated", g.truncated);
        jw_obj_end(w);
    }
    for (size_t i = 0; i < g.n; i++)
        cella_free(g.hits[i].path);
    cella_free(g.hits);
    cella_free(g.wk.path);
    return rc;
}
