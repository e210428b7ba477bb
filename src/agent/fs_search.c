/* grep, sed and glob (fs_int.h has the protocol): regular expressions
 * (PCRE2) and gitignore-style patterns (util/glob.h) over a walk of the
 * sandbox's tree, run as the sandbox user inside the sandbox.
 *
 * Everything a request controls is bounded: the pattern's cost (no
 * backreferences or subroutine calls, match/depth/heap limits per line, a
 * deadline per call), the memory (files read in chunks, a line is looked at
 * through its first 1 MiB, sed edits files up to 64 MiB), the output (8 MiB
 * of JSON) and the walk (no symlink followed, nothing but regular files
 * opened, 256 levels at most). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/fs_int.h"
#include "util/alloc.h"
#include "util/glob.h"
#include "util/text.h"

#define SEARCH_MAX_DEPTH 256          /* each level holds a descriptor and a frame */
#define SEARCH_MAX_FILTERS 256        /* include/exclude patterns per call */
#define SEARCH_LINE_CAP (1u << 20)    /* a longer line is matched on its first 1 MiB */
#define SEARCH_READ (256u << 10)      /* bytes per read */
#define SEARCH_PROBE 8192             /* a NUL in this many first bytes: binary */
#define SEARCH_OUT_CAP (8u << 20)     /* JSON bytes a result may take */
#define SEARCH_DEADLINE_MS 30000
#define SED_MAX_FILE (64u << 20)      /* larger files are not edited (held in memory) */
#define SED_MAX_OUT (256u << 20)      /* nor are those whose result would pass this */
#define RX_MAX_PATTERN (64u << 10)
#define RX_MATCH_LIMIT 1000000        /* backtracking steps per line */
#define RX_DEPTH_LIMIT 10000
#define RX_HEAP_KIB (16u * 1024)

/* Walk controls, besides 0 (go on) and a BUILTIN_* status (> 0, printed). */
enum { WALK_SKIP = -1, WALK_STOP = -2, WALK_DEADLINE = -3 };

/* ---- time ---------------------------------------------------------------- */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The end of the call's budget in ns, 0 for none (deadline_ms=0). */
static uint64_t deadline_at(uint64_t ms)
{
    if (ms == 0)
        return 0;
    if (ms > UINT64_MAX / 2000000u)
        ms = UINT64_MAX / 2000000u;
    return now_ns() + ms * 1000000u;
}

static bool past(uint64_t end) { return end && now_ns() >= end; }

/* ---- text ---------------------------------------------------------------- */

/* utf8_valid with a fast path for the ASCII most source files are. */
static bool text_valid(const uint8_t *p, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v;
        memcpy(&v, p + i, 8);
        if (v & UINT64_C(0x8080808080808080))
            break;
    }
    while (i < n && p[i] < 0x80)
        i++;
    return i == n || utf8_valid(p + i, n - i);
}

/* The path made absolute (fs_abs) without "." segments, repeated or
 * trailing slashes; ".." stays (resolving it would need the symlinks). */
static char *tidy_abs(const char *path)
{
    char *s = fs_abs(path);
    size_t o = 0;
    for (size_t i = 0; s[i];) {
        if (s[i] == '/') {
            while (s[i] == '/')
                i++;
            if (s[i] == '.' && (s[i + 1] == '/' || !s[i + 1])) {
                i++;
                continue;
            }
            s[o++] = '/';
            continue;
        }
        s[o++] = s[i++];
    }
    if (o > 1 && s[o - 1] == '/')
        o--;
    if (o == 0)
        s[o++] = '/';
    s[o] = '\0';
    return s;
}

/* ---- regular expressions ------------------------------------------------- */

typedef struct rx {
    pcre2_code *code;
    pcre2_match_context *mctx;
    pcre2_match_data *md;
    pcre2_jit_stack *stack;
} rx;

/* Whether the pattern may recurse or call a group as a subroutine ((?R)
 * (?1) (?+1) (?-1) (?&n) (?P>n) \g<n> \g'n'): such calls let a short
 * pattern do unbounded work, so they are refused. Read conservatively:
 * only a backslash escape is honoured, which never hides a live "(";
 * classes, \Q..\E and comments are scanned like the rest, so "[(?1)]" is a
 * false alarm, but nothing PCRE2 would run as a call is missed. */
static bool rx_calls_groups(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\\') {
            if (i + 2 < n && p[i + 1] == 'g' && (p[i + 2] == '<' || p[i + 2] == '\''))
                return true;
            i++;
            continue;
        }
        if (p[i] != '(')
            continue;
        size_t j = i + 1;
        while (j < n && (p[j] == ' ' || (p[j] >= '\t' && p[j] <= '\r')))
            j++;
        if (j + 1 >= n || p[j] != '?')
            continue;
        char c = p[++j];
        char d = j + 1 < n ? p[j + 1] : '\0';
        if (c == 'R' || c == '&' || (c >= '0' && c <= '9') || (c == 'P' && d == '>') ||
            ((c == '+' || c == '-') && d >= '0' && d <= '9'))
            return true;
    }
    return false;
}

static void rx_free(rx *r)
{
    pcre2_match_data_free(r->md);
    pcre2_match_context_free(r->mctx);
    pcre2_jit_stack_free(r->stack);
    pcre2_code_free(r->code);
    memset(r, 0, sizeof(*r));
}

/* Compiles pattern (literal: matched as it is), refusing what could make a
 * match cost explode. Returns a BUILTIN_* status, its message printed. */
static int rx_compile(rx *r, const char *pattern, bool literal, bool icase)
{
    memset(r, 0, sizeof(*r));
    size_t n = strlen(pattern);
    if (n > RX_MAX_PATTERN)
        return fs_fail(BUILTIN_BAD_REGEX, "pattern longer than %u bytes", RX_MAX_PATTERN);
    if (!literal && rx_calls_groups(pattern, n))
        return fs_fail(BUILTIN_BAD_REGEX, "recursion and subroutine calls ((?R), (?1), (?&name), "
                       "\\g<name>) are not supported: they can make a search cost without bound");
    /* UTF: lines are UTF-8 text. MATCH_INVALID_UTF: never undefined
     * behaviour on a stray byte. UCP: \w \d \s and \b are Unicode-aware,
     * as in the RE2/Rust syntax iii documents. NEVER_BACKSLASH_C: \C
     * could split a character. (PCRE2_LITERAL allows none but the first.) */
    uint32_t opts = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | (icase ? PCRE2_CASELESS : 0) |
                    (literal ? PCRE2_LITERAL : PCRE2_UCP | PCRE2_NEVER_BACKSLASH_C);
    int err;
    PCRE2_SIZE off;
    r->code = pcre2_compile((PCRE2_SPTR)pattern, n, opts, &err, &off, NULL);
    if (!r->code) {
        PCRE2_UCHAR msg[256];
        if (pcre2_get_error_message(err, msg, sizeof(msg)) < 0)
            snprintf((char *)msg, sizeof(msg), "error %d", err);
        return fs_fail(BUILTIN_BAD_REGEX, "invalid regex: %s at offset %zu", (char *)msg,
                       (size_t)off);
    }
    /* A backreference makes matching NP-hard: no limit keeps it cheap.
     * (PCRE2 counts a condition on a group, (?(1)..), as one too.) */
    uint32_t backref = 0;
    pcre2_pattern_info(r->code, PCRE2_INFO_BACKREFMAX, &backref);
    if (backref > 0) {
        rx_free(r);
        return fs_fail(BUILTIN_BAD_REGEX, "backreferences (\\1, \\k<name>, (?P=name)) and "
                       "conditions on a group ((?(1)...)) are not supported: the RE2 syntax has "
                       "none, and they can make a search cost without bound");
    }
    r->mctx = pcre2_match_context_create(NULL);
    r->md = pcre2_match_data_create_from_pattern(r->code, NULL);
    if (!r->mctx || !r->md) {
        rx_free(r);
        return fs_fail(BUILTIN_IO, "out of memory compiling the pattern");
    }
    /* What one line may cost; a line that needs more fails the call. */
    pcre2_set_match_limit(r->mctx, RX_MATCH_LIMIT);
    pcre2_set_depth_limit(r->mctx, RX_DEPTH_LIMIT);
    pcre2_set_heap_limit(r->mctx, RX_HEAP_KIB);
    /* JIT when the kernel lets us map code; the interpreter otherwise. */
    if (pcre2_jit_compile(r->code, PCRE2_JIT_COMPLETE) == 0) {
        r->stack = pcre2_jit_stack_create(32 << 10, 1 << 20, NULL);
        if (r->stack)
            pcre2_jit_stack_assign(r->mctx, NULL, r->stack);
    }
    return BUILTIN_OK;
}

/* The name of the limit a match error reports, or NULL for other errors. */
static const char *rx_limit(int rc)
{
    switch (rc) {
    case PCRE2_ERROR_MATCHLIMIT: return "match";
    case PCRE2_ERROR_DEPTHLIMIT: return "depth";
    case PCRE2_ERROR_HEAPLIMIT: return "heap";
    case PCRE2_ERROR_JIT_STACKLIMIT: return "stack";
    case PCRE2_ERROR_NOMEMORY: return "memory";
    default: return NULL;
    }
}

/* The message for a failed match in file:line (into buf). */
static const char *rx_error(int rc, const char *file, uint64_t line, char *buf, size_t n)
{
    const char *lim = rx_limit(rc);
    if (lim) {
        snprintf(buf, n, "pattern too costly: %s limit reached in %s:%llu; simplify the pattern",
                 lim, file, (unsigned long long)line);
    } else {
        PCRE2_UCHAR msg[256];
        if (pcre2_get_error_message(rc, msg, sizeof(msg)) < 0)
            snprintf((char *)msg, sizeof(msg), "error %d", rc);
        snprintf(buf, n, "match failed in %s:%llu: %s", file, (unsigned long long)line,
                 (char *)msg);
    }
    return buf;
}

/* ---- filters ------------------------------------------------------------- */

typedef struct filters {
    const char *inc[SEARCH_MAX_FILTERS], *exc[SEARCH_MAX_FILTERS];
    size_t ninc, nexc;
} filters;

static size_t count_key(const fs_args *a, const char *key)
{
    size_t kl = strlen(key), n = 0;
    for (char *const *p = a->kv; *p; p++)
        if (!strncmp(*p, key, kl) && (*p)[kl] == '=')
            n++;
    return n;
}

static int filters_load(const fs_args *a, filters *f)
{
    if (count_key(a, "include") > SEARCH_MAX_FILTERS ||
        count_key(a, "exclude") > SEARCH_MAX_FILTERS)
        return fs_fail(BUILTIN_USAGE, "at most %d include and %d exclude patterns",
                       SEARCH_MAX_FILTERS, SEARCH_MAX_FILTERS);
    f->ninc = fs_arg_all(a, "include", f->inc, SEARCH_MAX_FILTERS);
    f->nexc = fs_arg_all(a, "exclude", f->exc, SEARCH_MAX_FILTERS);
    for (size_t i = 0; i < f->ninc + f->nexc; i++) {
        const char *p = i < f->ninc ? f->inc[i] : f->exc[i - f->ninc], *why;
        if (glob_check(p, &why) < 0)
            return fs_fail(BUILTIN_USAGE, "invalid %s pattern '%.64s': %s",
                           i < f->ninc ? "include" : "exclude", p, why);
    }
    return BUILTIN_OK;
}

static bool any_match(const char *const *pats, size_t n, const char *rel, bool is_dir)
{
    for (size_t i = 0; i < n; i++)
        if (glob_match(pats[i], rel, is_dir))
            return true;
    return false;
}

/* ---- the walk ------------------------------------------------------------ */

typedef struct walk walk;
struct walk {
    /* Called for each entry: dir and name open it (follow: the root, given
     * by name, whose symlinks are the caller's to follow), st is its lstat
     * (the root's stat). Returns 0, a WALK_* control or a status. */
    int (*visit)(walk *wk, int dir, const char *name, const struct stat *st, bool follow);
    char *path;                   /* the entry's absolute path */
    size_t len, cap;
    size_t rel;                   /* where the part relative to the root starts */
    size_t root_len;
    bool marked;                  /* a directory above matched an include */
    bool mark_next;               /* visit's answer for a directory: mark below */
    uint64_t deadline;
    const char *op;
};

static void walk_push(walk *wk, const char *name)
{
    size_t n = strlen(name);
    if (wk->len + n + 2 > wk->cap) {
        wk->cap = (wk->len + n + 2) * 2;
        wk->path = cella_realloc(wk->path, wk->cap);
    }
    if (wk->len && wk->path[wk->len - 1] != '/')
        wk->path[wk->len++] = '/';
    memcpy(wk->path + wk->len, name, n + 1);
    wk->len += n;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Visits the entries of the directory fd (consumed) by name, so results
 * come in the same order every time, then descends into subdirectories
 * (never through a symlink: O_NOFOLLOW, and lstat says what is a directory). */
static int walk_dir(walk *wk, int fd, int depth)
{
    if (depth > SEARCH_MAX_DEPTH) {
        close(fd);
        return fs_fail(BUILTIN_IO, "%s: the tree below %.*s is deeper than %d levels; narrow "
                       "the path", wk->op, (int)wk->root_len, wk->path, SEARCH_MAX_DEPTH);
    }
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return 0;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *de; (de = readdir(d));) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            names = cella_realloc(names, cap * sizeof(char *));
        }
        names[n++] = cella_strdup(de->d_name);
    }
    if (n)
        qsort(names, n, sizeof(char *), cmp_names);
    int rc = 0;
    size_t base = wk->len;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (past(wk->deadline)) {
            rc = WALK_DEADLINE;
            break;
        }
        struct stat st;
        /* Gone since readdir: nothing to visit. */
        if (fstatat(dirfd(d), names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        walk_push(wk, names[i]);
        wk->mark_next = wk->marked;
        rc = wk->visit(wk, dirfd(d), names[i], &st, false);
        if (rc == 0 && S_ISDIR(st.st_mode)) {
            int c = openat(dirfd(d), names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            /* Unreadable (permissions): skipped, as grep -rs does. */
            if (c >= 0) {
                bool m = wk->marked;
                wk->marked = wk->mark_next;
                rc = walk_dir(wk, c, depth + 1);
                wk->marked = m;
            }
        }
        if (rc == WALK_SKIP)
            rc = 0;
        wk->len = base;
        wk->path[base] = '\0';
    }
    for (size_t i = 0; i < n; i++)
        cella_free(names[i]);
    cella_free(names);
    closedir(d);
    return rc;
}

/* Walks path: a directory's tree (when recursive), or path itself (a file
 * named by the caller is searched whatever include and exclude say: they
 * filter the paths below a directory). */
static int walk_root(walk *wk, const char *path, bool recursive, bool dir_only)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return fs_fail_errno(errno, wk->op, path);
    if (dir_only && !S_ISDIR(st.st_mode))
        return fs_fail(BUILTIN_WRONG_TYPE, "not a directory: %s", path);
    wk->path = tidy_abs(path);
    wk->len = wk->root_len = strlen(wk->path);
    wk->cap = wk->len + 1;
    if (!S_ISDIR(st.st_mode)) {
        const char *b = strrchr(wk->path, '/');
        wk->rel = b ? (size_t)(b - wk->path) + 1 : 0;
        return wk->visit(wk, AT_FDCWD, path, &st, true);
    }
    if (!recursive)
        return fs_fail(BUILTIN_USAGE, "recursive is false but %s is a directory", path);
    wk->rel = wk->len > 1 ? wk->len + 1 : 1;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return fs_fail_errno(errno, wk->op, path);
    return walk_dir(wk, fd, 0);
}

/* The include/exclude verdict for grep's and sed's walks: 0 to search a
 * regular file (or enter a directory), WALK_SKIP otherwise. An excluded
 * directory is not entered; an included one includes all below it. */
static int filter_entry(walk *wk, const filters *f, const struct stat *st)
{
    const char *rel = wk->path + wk->rel;
    if (S_ISDIR(st->st_mode)) {
        if (any_match(f->exc, f->nexc, rel, true))
            return WALK_SKIP;
        if (any_match(f->inc, f->ninc, rel, true))
            wk->mark_next = true;
        return 0;
    }
    /* Symlinks, FIFOs, devices, sockets: never opened (a FIFO would block,
     * a device would be read, a symlink could lead out of the tree). */
    if (!S_ISREG(st->st_mode))
        return WALK_SKIP;
    if (any_match(f->exc, f->nexc, rel, false))
        return WALK_SKIP;
    if (f->ninc && !wk->marked && !any_match(f->inc, f->ninc, rel, false))
        return WALK_SKIP;
    return 0;
}

/* Opens a regular file for reading: O_NONBLOCK so that a FIFO swapped in
 * since the lstat cannot block the open, fstat to confirm what was opened.
 * -1 with errno (EINVAL: not a regular file). */
static int open_regular(int dir, const char *name, bool follow, struct stat *st)
{
    int fd = openat(dir, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
                                   (follow ? 0 : O_NOFOLLOW));
    if (fd < 0)
        return -1;
    if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    return fd;
}

/* ---- grep ---------------------------------------------------------------- */

typedef struct grep_ctx {
    walk wk;                      /* first: the visitor gets it back */
    filters f;
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
    if (line % 64 == 0 && past(g->wk.deadline))
        return WALK_DEADLINE;
    if (cut)
        n = utf8_complete_prefix(p, n);
    if (!text_valid(p, n))
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
    if (!follow) {
        int rc = filter_entry(wk, &g->f, st);
        if (rc || S_ISDIR(st->st_mode))
            return rc;
    } else if (!S_ISREG(st->st_mode)) {
        return fs_fail(BUILTIN_WRONG_TYPE, "not a regular file: %s", name);
    }
    struct stat fst;
    int fd = open_regular(dir, name, follow, &fst);
    if (fd < 0)
        return follow ? fs_fail_errno(errno, "grep", name) : 0;
    int rc = grep_fd(g, fd);
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
    int rc = filters_load(a, &g.f);
    if (rc || (rc = rx_compile(&g.re, pattern, false, icase)))
        return rc;
    g.wk = (walk){.visit = grep_visit, .op = "grep", .deadline = deadline_at(g.deadline_ms)};
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

/* ---- sed ----------------------------------------------------------------- */

typedef struct sed_ctx {
    walk wk;                      /* first: the visitor gets it back */
    filters f;
    rx re;
    jsonw *w;
    cbuf repl;                    /* the replacement in pcre2_substitute's syntax */
    uint32_t opts;
    uint64_t total, deadline_ms;
    cbuf in, out;
    char *stopped_at;             /* the file the deadline interrupted */
} sed_ctx;

static bool name_char(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

/* A group reference, written for pcre2_substitute. A number past PCRE2's
 * 65535 groups, or a name no PCRE2 group can have, inserts nothing, as a
 * group the pattern lacks does (UNKNOWN_UNSET with UNSET_EMPTY). */
static void repl_ref(cbuf *out, const char *name, size_t n)
{
    size_t digits = 0;
    while (digits < n && name[digits] >= '0' && name[digits] <= '9')
        digits++;
    if (n && digits == n) {
        unsigned long v = 0;
        for (size_t i = 0; i < n && v <= 65535; i++)
            v = v * 10 + (unsigned long)(name[i] - '0');
        if (v <= 65535) {
            char b[16];
            cbuf_append(out, b, (size_t)snprintf(b, sizeof(b), "${%lu}", v));
        }
        return;
    }
    bool valid = n && n <= 32 && !(name[0] >= '0' && name[0] <= '9');
    for (size_t i = 0; valid && i < n; i++)
        valid = name_char(name[i]);
    if (valid) {
        cbuf_append(out, "${", 2);
        cbuf_append(out, name, n);
        cbuf_append(out, "}", 1);
    }
}

/* The replacement in iii's syntax (Rust regex's) rewritten for
 * pcre2_substitute: "$$" is a "$"; "$name" takes the longest run of
 * [0-9A-Za-z_], "${name}" anything up to "}"; a name of digits is a group
 * number ("$1a" is the group named "1a", as in Rust: use "${1}a"); a "$"
 * that starts neither is itself; a backslash is an ordinary character. */
static void repl_translate(cbuf *out, const char *r)
{
    for (size_t i = 0; r[i];) {
        if (r[i] != '$') {
            size_t k = strcspn(r + i, "$");
            cbuf_append(out, r + i, k);
            i += k;
            continue;
        }
        const char *name = NULL;
        size_t n = 0, adv = 1;
        if (r[i + 1] == '$') {
            adv = 2;
        } else if (r[i + 1] == '{') {
            const char *close = strchr(r + i + 2, '}');
            if (close) {
                name = r + i + 2;
                n = (size_t)(close - name);
                adv = n + 3;
            }
        } else {
            while (name_char(r[i + 1 + n]))
                n++;
            if (n) {
                name = r + i + 1;
                adv = n + 1;
            }
        }
        if (name)
            repl_ref(out, name, n);
        else
            cbuf_append(out, "$$", 2);
        i += adv;
    }
}

/* One line (its terminator apart) into s->out, replaced. -1 with msg. */
static int sed_line(sed_ctx *s, const uint8_t *p, size_t n, uint64_t *reps, const char *file,
                    uint64_t line, char *msg, size_t msz)
{
    PCRE2_SIZE want = n + cbuf_avail(&s->repl) + 16;
    for (int tries = 0;; tries++) {
        if (want > SED_MAX_OUT - cbuf_avail(&s->out)) {
            snprintf(msg, msz, "not changed: the result would pass %u MiB", SED_MAX_OUT >> 20);
            return -1;
        }
        uint8_t *dst = cbuf_reserve(&s->out, want);
        PCRE2_SIZE got = want;
        int rc = pcre2_substitute(s->re.code, p, n, 0, s->opts, s->re.md, s->re.mctx,
                                  cbuf_head(&s->repl), cbuf_avail(&s->repl), dst, &got);
        if (rc >= 0) {
            cbuf_commit(&s->out, got);
            *reps += (uint64_t)rc;
            return 0;
        }
        /* Too small a buffer: got is the size needed (OVERFLOW_LENGTH). */
        if (rc == PCRE2_ERROR_NOMEMORY && tries == 0 && got != PCRE2_UNSET) {
            want = got + 1;
            continue;
        }
        rx_error(rc, file, line, msg, msz);
        return -1;
    }
}

/* Atomically replaces path (fs_write_atomic) with data. Its message, which
 * it prints, is captured instead for the file's result: a pipe stands in
 * for stderr (a message is far smaller than a pipe holds). */
static int sed_write(const char *path, unsigned mode, const void *data, size_t n, char *msg,
                     size_t msz)
{
    int p[2], saved = -1;
    if (pipe2(p, O_CLOEXEC) == 0) {
        fflush(stderr);
        saved = fcntl(2, F_DUPFD_CLOEXEC, 3);
        if (saved < 0 || dup2(p[1], 2) < 0) {
            if (saved >= 0)
                close(saved);
            saved = -1;
        }
        close(p[1]);
    } else {
        p[0] = -1;
    }
    uint64_t written;
    int rc = fs_write_atomic(path, mode, -1, data, n, UINT64_MAX, UINT64_MAX, &written);
    snprintf(msg, msz, "write %s failed", path);
    if (saved >= 0) {
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
        ssize_t k = read(p[0], msg, msz - 1);
        if (k > 0) {
            msg[k] = '\0';
            msg[strcspn(msg, "\n")] = '\0';
        }
    }
    if (p[0] >= 0)
        close(p[0]);
    return rc;
}

/* Edits one open regular file, line by line (so "^", "$" and first_only
 * work per line), every line ending kept as it was; lines that are not
 * UTF-8 stay as they are. Writes only when something was replaced.
 * Returns 0 (*reps replacements), 1 for a binary file skipped silently
 * (the path form), -1 with msg, or WALK_DEADLINE (nothing written). */
static int sed_fd(sed_ctx *s, int fd, const struct stat *st, const char *file, const char *wpath,
                  bool quiet_binary, uint64_t *reps, char *msg, size_t msz)
{
    *reps = 0;
    if ((uint64_t)st->st_size > SED_MAX_FILE)
        goto too_large;
    cbuf_reset(&s->in);
    for (;;) {
        uint8_t *dst = cbuf_reserve(&s->in, SEARCH_READ);
        ssize_t r = read(fd, dst, SEARCH_READ);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            snprintf(msg, msz, "read %s: %s", file, strerror(errno));
            return -1;
        }
        if (r == 0)
            break;
        cbuf_commit(&s->in, (size_t)r);
        if (cbuf_avail(&s->in) > SED_MAX_FILE)
            goto too_large;
    }
    const uint8_t *d = cbuf_head(&s->in);
    size_t n = cbuf_avail(&s->in);
    /* Binary in the path form is skipped like grep skips it; named in the
     * files form, it is reported, so the caller knows it was not edited. */
    if (memchr(d, 0, n < SEARCH_PROBE ? n : SEARCH_PROBE)) {
        snprintf(msg, msz, "binary file (a NUL byte in its first 8 KiB), not edited: %s", file);
        return quiet_binary ? 1 : -1;
    }
    cbuf_reset(&s->out);
    uint64_t line = 0;
    for (size_t i = 0; i < n;) {
        const uint8_t *nl = memchr(d + i, '\n', n - i);
        size_t end = nl ? (size_t)(nl - d) : n, body = end;
        if (nl && body > i && d[body - 1] == '\r')
            body--;
        if (++line % 64 == 0 && past(s->wk.deadline))
            return WALK_DEADLINE;
        if (text_valid(d + i, body - i)) {
            if (sed_line(s, d + i, body - i, reps, file, line, msg, msz) < 0)
                return -1;
        } else {
            cbuf_append(&s->out, d + i, body - i);
        }
        size_t next = nl ? end + 1 : n;
        cbuf_append(&s->out, d + body, next - body);
        i = next;
    }
    if (*reps == 0)
        return 0;
    if (sed_write(wpath, st->st_mode & 07777, cbuf_head(&s->out), cbuf_avail(&s->out), msg, msz)) {
        *reps = 0;
        return -1;
    }
    return 0;
too_large:
    snprintf(msg, msz, "too large to edit (more than %u MiB): %s", SED_MAX_FILE >> 20, file);
    return -1;
}

static void sed_result(sed_ctx *s, const char *path, uint64_t reps, const char *err)
{
    jw_obj(s->w);
    jw_kstr(s->w, "path", path);
    jw_ku64(s->w, "replacements", err ? 0 : reps);
    jw_kbool(s->w, "success", !err);
    if (err)
        jw_kstr(s->w, "error", err);
    jw_obj_end(s->w);
    if (!err)
        s->total += reps;
}

/* The path form: each file the walk finds; only files changed or failed
 * are listed (a walk over a large tree would otherwise answer with one
 * entry per file in it). */
static int sed_visit(walk *wk, int dir, const char *name, const struct stat *st, bool follow)
{
    sed_ctx *s = (sed_ctx *)wk;
    if (!follow) {
        int rc = filter_entry(wk, &s->f, st);
        if (rc || S_ISDIR(st->st_mode))
            return rc;
    } else if (!S_ISREG(st->st_mode)) {
        return fs_fail(BUILTIN_WRONG_TYPE, "not a regular file: %s", name);
    }
    struct stat fst;
    char msg[PATH_MAX + 256];
    int fd = open_regular(dir, name, follow, &fst);
    if (fd < 0) {
        if (follow)
            return fs_fail_errno(errno, "sed", name);
        snprintf(msg, sizeof(msg), "open %s: %s", wk->path, strerror(errno));
        sed_result(s, wk->path, 0, msg);
        return 0;
    }
    /* A file named by a symlink is edited where the link leads; the walk
     * itself never meets one. */
    char *real = follow ? realpath(name, NULL) : NULL;
    uint64_t reps;
    int rc = sed_fd(s, fd, &fst, wk->path, real ? real : wk->path, true, &reps, msg, sizeof(msg));
    free(real);
    close(fd);
    if (rc == WALK_DEADLINE) {
        s->stopped_at = cella_strdup(wk->path);
        return rc;
    }
    if (rc < 0 || reps)
        sed_result(s, wk->path, reps, rc < 0 ? msg : NULL);
    return 0;
}

/* The files form: every file is listed. Past the deadline, those not
 * edited yet are listed as failed. */
static void sed_files(sed_ctx *s, const fs_args *a)
{
    bool late = false;
    char msg[PATH_MAX + 256];
    for (char *const *p = a->kv; *p; p++) {
        if (strncmp(*p, "file=", 5))
            continue;
        const char *f = *p + 5;
        char *abs = tidy_abs(*f ? f : ".");
        struct stat st;
        int fd = -1;
        if (late) {
            snprintf(msg, sizeof(msg), "not changed: the deadline of %llu ms passed before it",
                     (unsigned long long)s->deadline_ms);
        } else if (!*f || stat(f, &st) < 0) {
            int e = *f ? errno : ENOENT;
            if (e == ENOENT)
                snprintf(msg, sizeof(msg), "file not found: %s", f);
            else
                snprintf(msg, sizeof(msg), "%s: %s", f, strerror(e));
        } else if (S_ISDIR(st.st_mode)) {
            snprintf(msg, sizeof(msg), "is a directory: %s", f);
        } else if ((fd = open_regular(AT_FDCWD, f, true, &st)) < 0) {
            if (errno == EINVAL)
                snprintf(msg, sizeof(msg), "not a regular file: %s", f);
            else
                snprintf(msg, sizeof(msg), "open %s: %s", f, strerror(errno));
        }
        if (fd < 0) {
            sed_result(s, abs, 0, msg);
            cella_free(abs);
            continue;
        }
        char *real = realpath(f, NULL);
        uint64_t reps;
        int rc = sed_fd(s, fd, &st, abs, real ? real : f, false, &reps, msg, sizeof(msg));
        free(real);
        close(fd);
        if (rc == WALK_DEADLINE) {
            late = true;
            snprintf(msg, sizeof(msg), "not changed: the deadline of %llu ms passed while it "
                     "was edited", (unsigned long long)s->deadline_ms);
        }
        sed_result(s, abs, reps, rc < 0 ? msg : NULL);
        cella_free(abs);
    }
}

/* sed {path | file*, pattern, replacement, regex=1, first_only=0,
 *      ignore_case=0, recursive=1, include*, exclude*, deadline_ms=30000}
 *   -> {results: [{path, replacements, success, error?}], total_replacements}
 * include and exclude apply to the path form only (iii ignores them with
 * files); recursive=0 on a directory is refused, as grep refuses it. */
int fs_op_sed(const fs_args *a, jsonw *w)
{
    sed_ctx s = {0};
    const char *path = fs_arg(a, "path"), *pattern = fs_arg(a, "pattern");
    const char *repl = fs_arg(a, "replacement");
    bool regex, first_only, icase, rec;
    if (fs_arg_bool(a, "regex", true, &regex) < 0 ||
        fs_arg_bool(a, "first_only", false, &first_only) < 0 ||
        fs_arg_bool(a, "ignore_case", false, &icase) < 0 ||
        fs_arg_bool(a, "recursive", true, &rec) < 0 ||
        fs_arg_u64(a, "deadline_ms", SEARCH_DEADLINE_MS, &s.deadline_ms) < 0)
        return BUILTIN_USAGE;
    size_t nfiles = count_key(a, "file");
    if (path && nfiles)
        return fs_fail(BUILTIN_USAGE, "pass either files or path, not both");
    if (!path && !nfiles)
        return fs_fail(BUILTIN_USAGE, "pass either files or path; neither was given");
    if (path && fs_arg_path(a, "path", &path) < 0)
        return BUILTIN_USAGE;
    if (!pattern)
        return fs_fail(BUILTIN_USAGE, "pattern is required");
    if (!repl)
        return fs_fail(BUILTIN_USAGE, "replacement is required");
    if (!regex && !*pattern)
        return fs_fail(BUILTIN_USAGE, "empty pattern");
    if (!text_valid((const uint8_t *)repl, strlen(repl)))
        return fs_fail(BUILTIN_USAGE, "replacement is not valid UTF-8");
    int rc = path ? filters_load(a, &s.f) : 0;
    if (rc || (rc = rx_compile(&s.re, pattern, !regex, icase)))
        return rc;
    cbuf_init(&s.repl);
    if (regex)
        repl_translate(&s.repl, repl);
    else
        cbuf_append(&s.repl, repl, strlen(repl));
    /* Lines and the replacement were checked as UTF-8 (NO_UTF_CHECK). */
    s.opts = PCRE2_SUBSTITUTE_OVERFLOW_LENGTH | PCRE2_SUBSTITUTE_UNSET_EMPTY |
             PCRE2_SUBSTITUTE_UNKNOWN_UNSET | PCRE2_NO_UTF_CHECK |
             (first_only ? 0 : PCRE2_SUBSTITUTE_GLOBAL) | (regex ? 0 : PCRE2_SUBSTITUTE_LITERAL);
    s.wk = (walk){.visit = sed_visit, .op = "sed", .deadline = deadline_at(s.deadline_ms)};
    s.w = w;
    cbuf_init(&s.in);
    cbuf_init(&s.out);
    jw_obj(w);
    jw_key(w, "results");
    jw_arr(w);
    if (path) {
        rc = walk_root(&s.wk, path, rec, false);
        if (rc == WALK_DEADLINE) {
            /* Reported, not failed: the files listed were changed. */
            char msg[2 * PATH_MAX + 256];
            if (s.stopped_at)
                snprintf(msg, sizeof(msg), "the deadline of %llu ms passed: stopped at %s; it and "
                         "the files after it were not changed",
                         (unsigned long long)s.deadline_ms, s.stopped_at);
            else
                snprintf(msg, sizeof(msg), "the deadline of %llu ms passed: stopped before the "
                         "walk was complete; files not listed were not changed",
                         (unsigned long long)s.deadline_ms);
            sed_result(&s, s.wk.path, 0, msg);
            rc = 0;
        }
    } else {
        sed_files(&s, a);
    }
    if (rc <= 0) {
        rc = BUILTIN_OK;
        jw_arr_end(w);
        jw_ku64(w, "total_replacements", s.total);
        jw_obj_end(w);
    }
    cella_free(s.stopped_at);
    cbuf_free(&s.in);
    cbuf_free(&s.out);
    cbuf_free(&s.repl);
    cella_free(s.wk.path);
    rx_free(&s.re);
    return rc;
}

/* ---- glob ---------------------------------------------------------------- */

typedef struct glob_ctx {
    walk wk;                      /* first: the visitor gets it back */
    const char *pattern;
    bool hidden, truncated;
    uint64_t max;
    char **paths;
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
        /* The JSON a path may take escaped (\u00XX), so the cap holds. */
        size_t cost = wk->len * 6 + 3;
        if (g->n >= g->max || g->bytes + cost > SEARCH_OUT_CAP) {
            g->truncated = true;
            return WALK_STOP;
        }
        if (g->n == g->cap) {
            g->cap = g->cap ? g->cap * 2 : 64;
            g->paths = cella_realloc(g->paths, g->cap * sizeof(char *));
        }
        g->paths[g->n++] = cella_strdup(wk->path);
        g->bytes += cost;
    }
    /* A directory nothing below could match is not walked. */
    if (is_dir && !glob_may_match_under(g->pattern, rel))
        return WALK_SKIP;
    return 0;
}

/* glob {path, pattern, include_hidden=0, max_results=10000, deadline_ms=30000}
 *   -> {paths: [absolute, sorted bytewise], truncated}
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
        fs_arg_u64(a, "deadline_ms", SEARCH_DEADLINE_MS, &dl) < 0)
        return BUILTIN_USAGE;
    g.pattern = fs_arg(a, "pattern");
    if (!g.pattern)
        return fs_fail(BUILTIN_USAGE, "pattern is required");
    if (glob_check(g.pattern, &why) < 0)
        return fs_fail(BUILTIN_USAGE, "invalid pattern '%.64s': %s", g.pattern, why);
    g.wk = (walk){.visit = glob_visit, .op = "glob", .deadline = deadline_at(dl)};
    int rc = walk_root(&g.wk, path, true, true);
    if (rc == WALK_DEADLINE) {
        g.truncated = true;
        rc = 0;
    }
    if (rc <= 0) {
        rc = BUILTIN_OK;
        if (g.n)
            qsort(g.paths, g.n, sizeof(char *), cmp_names);
        jw_obj(w);
        jw_key(w, "paths");
        jw_arr(w);
        for (size_t i = 0; i < g.n; i++)
            jw_str(w, g.paths[i]);
        jw_arr_end(w);
        jw_kbool(w, "truncated", g.truncated);
        jw_obj_end(w);
    }
    for (size_t i = 0; i < g.n; i++)
        cella_free(g.paths[i]);
    cella_free(g.paths);
    cella_free(g.wk.path);
    return rc;
}
