/* The machinery of grep, sed and glob (fs_walk.h says what it offers):
 * time budgets, text checks, PCRE2 compiled under limits, include/exclude
 * filters, and the walk of a tree, run as the sandbox user inside the
 * sandbox. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/fs_walk.h"
#include "util/alloc.h"
#include "util/glob.h"
#include "util/text.h"

#define RX_MAX_PATTERN (64u << 10)
#define RX_MATCH_LIMIT 1000000        /* backtracking steps per line */
#define RX_DEPTH_LIMIT 10000
#define RX_HEAP_KIB (16u * 1024)

/* ---- time and text ------------------------------------------------------- */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t fs_deadline_at(uint64_t ms)
{
    if (ms == 0)
        return 0;
    if (ms > UINT64_MAX / 2000000u)
        ms = UINT64_MAX / 2000000u;
    return now_ns() + ms * 1000000u;
}

bool fs_past(uint64_t end) { return end && now_ns() >= end; }

bool fs_text_valid(const uint8_t *p, size_t n)
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

char *fs_tidy_abs(const char *path)
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

void rx_free(rx *r)
{
    pcre2_match_data_free(r->md);
    pcre2_match_context_free(r->mctx);
    pcre2_jit_stack_free(r->stack);
    pcre2_code_free(r->code);
    memset(r, 0, sizeof(*r));
}

int rx_compile(rx *r, const char *pattern, bool literal, bool icase)
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

const char *rx_error(int rc, const char *file, uint64_t line, char *buf, size_t n)
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

int walk_filters_load(const fs_args *a, walk_filters *f)
{
    if (fs_arg_count(a, "include") > SEARCH_MAX_FILTERS ||
        fs_arg_count(a, "exclude") > SEARCH_MAX_FILTERS)
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

/* The include/exclude verdict for grep's and sed's walks: 0 to search a
 * regular file (or enter a directory), WALK_SKIP otherwise. An excluded
 * directory is not entered; an included one includes all below it. */
static int filter_entry(walk *wk, const walk_filters *f, const struct stat *st)
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

bool walk_wants_file(walk *wk, const walk_filters *f, const char *name, const struct stat *st,
                     bool follow, int *rc)
{
    if (follow) {
        *rc = S_ISREG(st->st_mode) ? 0
                                   : fs_fail(BUILTIN_WRONG_TYPE, "not a regular file: %s", name);
        return *rc == 0;
    }
    *rc = filter_entry(wk, f, st);
    return *rc == 0 && !S_ISDIR(st->st_mode);
}

/* ---- the walk ------------------------------------------------------------ */

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

/* Visits the entries of the directory fd (consumed) by name, so results
 * come in the same order every time, then descends into subdirectories
 * (never through a symlink: O_NOFOLLOW, and lstat says what is a directory). */
static int walk_dir(walk *wk, int fd, int depth)
{
    if (depth > FS_MAX_DEPTH) {
        close(fd);
        return fs_fail(BUILTIN_IO, "%s: the tree below %.*s is deeper than %d levels; narrow "
                       "the path", wk->op, (int)wk->root_len, wk->path, FS_MAX_DEPTH);
    }
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return 0;
    }
    size_t n;
    char **names = fs_list_dir(d, &n);
    int rc = 0;
    size_t base = wk->len;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (fs_past(wk->deadline)) {
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
    fs_free_names(names, n);
    closedir(d);
    return rc;
}

int walk_root(walk *wk, const char *path, bool recursive, bool dir_only)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return fs_fail_errno(errno, wk->op, path);
    if (dir_only && !S_ISDIR(st.st_mode))
        return fs_fail(BUILTIN_WRONG_TYPE, "not a directory: %s", path);
    wk->path = fs_tidy_abs(path);
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
