/* sed (fs_int.h has the protocol): a regular expression replaced line by
 * line in the files below a path, or in the files named, each rewritten
 * atomically (fs_write_atomic), run as the sandbox user inside the
 * sandbox; the walk, the pattern's limits and the deadline are
 * fs_walk.h's. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/fs_quota.h"
#include "agent/fs_walk.h"
#include "util/alloc.h"

#define SED_MAX_FILE (64u << 20)      /* larger files are not edited (held in memory) */
#define SED_MAX_OUT (256u << 20)      /* nor are those whose result would pass this */

typedef struct sed_ctx {
    walk wk;                      /* first: the visitor gets it back */
    walk_filters f;
    rx re;
    jsonw *w;
    cbuf repl;                    /* the replacement in pcre2_substitute's syntax */
    uint32_t opts;
    uint64_t total, deadline_ms;
    cbuf in, out;
    char *stopped_at;             /* the file the deadline interrupted */
    bool truncated;               /* entries left out of results (all still edited) */
    fsq q;                        /* the workspace quota: a rewrite that grows a file counts */
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
void sed_repl_translate(cbuf *out, const char *r)
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
        /* Lines kept as they are may have taken out past the limit: then
         * the subtraction below would wrap. */
        if (cbuf_avail(&s->out) > SED_MAX_OUT || want > SED_MAX_OUT - cbuf_avail(&s->out)) {
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
static int sed_write(const char *path, unsigned mode, const void *data, size_t n, fsq *q,
                     char *msg, size_t msz)
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
    int rc = fs_write_atomic(path, mode, -1, data, n, q, UINT64_MAX, &written);
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
        if (++line % 64 == 0 && fs_past(s->wk.deadline))
            return WALK_DEADLINE;
        if (fs_text_valid(d + i, body - i)) {
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
    if (sed_write(wpath, st->st_mode & 07777, cbuf_head(&s->out), cbuf_avail(&s->out), &s->q, msg,
                  msz)) {
        *reps = 0;
        return -1;
    }
    return 0;
too_large:
    snprintf(msg, msz, "too large to edit (more than %u MiB): %s", SED_MAX_FILE >> 20, file);
    return -1;
}

/* Lists one file. The listing is capped, as grep's is, and the editing is
 * not: the files are changed either way, and an answer too large for the
 * daemon would report a failure for edits that were made. */
static void sed_result(sed_ctx *s, const char *path, uint64_t reps, const char *err, bool always)
{
    if (!err)
        s->total += reps;
    /* Worst case of the escaping (\u00XX) so the cap is never passed. */
    size_t need = (strlen(path) + (err ? strlen(err) : 0)) * 6 + 96;
    if (!always && (s->truncated || cbuf_avail(s->w->out) + need > SEARCH_OUT_CAP)) {
        s->truncated = true;
        return;
    }
    jw_obj(s->w);
    jw_kstr(s->w, "path", path);
    jw_ku64(s->w, "replacements", err ? 0 : reps);
    jw_kbool(s->w, "success", !err);
    if (err)
        jw_kstr(s->w, "error", err);
    jw_obj_end(s->w);
}

/* The path form: each file the walk finds; only files changed or failed
 * are listed (a walk over a large tree would otherwise answer with one
 * entry per file in it). */
static int sed_visit(walk *wk, int dir, const char *name, const struct stat *st, bool follow)
{
    sed_ctx *s = (sed_ctx *)wk;
    int rc;
    if (!walk_wants_file(wk, &s->f, name, st, follow, &rc))
        return rc;
    struct stat fst;
    char msg[PATH_MAX + 256];
    int fd = fs_open_regular(dir, name, follow, &fst);
    if (fd < 0) {
        if (follow)
            return fs_fail_errno(errno, "sed", name);
        snprintf(msg, sizeof(msg), "open %s: %s", wk->path, strerror(errno));
        sed_result(s, wk->path, 0, msg, false);
        return 0;
    }
    /* A file named by a symlink is edited where the link leads; the walk
     * itself never meets one. */
    char *real = follow ? realpath(name, NULL) : NULL;
    uint64_t reps;
    rc = sed_fd(s, fd, &fst, wk->path, real ? real : wk->path, true, &reps, msg, sizeof(msg));
    free(real);
    close(fd);
    if (rc == WALK_DEADLINE) {
        s->stopped_at = cella_strdup(wk->path);
        return rc;
    }
    if (rc < 0 || reps)
        sed_result(s, wk->path, reps, rc < 0 ? msg : NULL, false);
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
        fs_norm_path(*p + 5);     /* as every path argument is (fs_arg_path) */
        const char *f = *p + 5;
        char *abs = fs_tidy_abs(*f ? f : ".");
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
        } else if ((fd = fs_open_regular(AT_FDCWD, f, true, &st)) < 0) {
            if (errno == EINVAL)
                snprintf(msg, sizeof(msg), "not a regular file: %s", f);
            else
                snprintf(msg, sizeof(msg), "open %s: %s", f, strerror(errno));
        }
        if (fd < 0) {
            sed_result(s, abs, 0, msg, false);
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
        sed_result(s, abs, reps, rc < 0 ? msg : NULL, false);
        cella_free(abs);
    }
}

/* sed {path | file*, pattern, replacement, regex=1, first_only=0,
 *      ignore_case=0, recursive=1, include*, exclude*, deadline_ms=30000,
 *      quota=0}
 *   -> {results: [{path, replacements, success, error?}], total_replacements,
 *       truncated?: true when results were cut at SEARCH_OUT_CAP (every file was
 *       still edited; total_replacements counts them all)}
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
        fs_arg_u64(a, "deadline_ms", SEARCH_DEADLINE_MS, &s.deadline_ms) < 0 ||
        fsq_begin(&s.q, a) != BUILTIN_OK)
        return BUILTIN_USAGE;
    size_t nfiles = fs_arg_count(a, "file");
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
    if (!fs_text_valid((const uint8_t *)repl, strlen(repl)))
        return fs_fail(BUILTIN_USAGE, "replacement is not valid UTF-8");
    int rc = path ? walk_filters_load(a, &s.f) : 0;
    if (rc || (rc = rx_compile(&s.re, pattern, !regex, icase)))
        return rc;
    cbuf_init(&s.repl);
    if (regex)
        sed_repl_translate(&s.repl, repl);
    else
        cbuf_append(&s.repl, repl, strlen(repl));
    /* Lines and the replacement were checked as UTF-8 (NO_UTF_CHECK). */
    s.opts = PCRE2_SUBSTITUTE_OVERFLOW_LENGTH | PCRE2_SUBSTITUTE_UNSET_EMPTY |
             PCRE2_SUBSTITUTE_UNKNOWN_UNSET | PCRE2_NO_UTF_CHECK |
             (first_only ? 0 : PCRE2_SUBSTITUTE_GLOBAL) | (regex ? 0 : PCRE2_SUBSTITUTE_LITERAL);
    s.wk = (walk){.visit = sed_visit, .op = "sed", .deadline = fs_deadline_at(s.deadline_ms)};
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
            sed_result(&s, s.wk.path, 0, msg, true);
            rc = 0;
        }
    } else {
        sed_files(&s, a);
    }
    if (rc <= 0) {
        rc = BUILTIN_OK;
        jw_arr_end(w);
        jw_ku64(w, "total_replacements", s.total);
        if (s.truncated)
            jw_kbool(w, "truncated", true);    /* only then: iii's shape otherwise */
        jw_obj_end(w);
    }
    fsq_end(&s.q);
    cella_free(s.stopped_at);
    cbuf_free(&s.in);
    cbuf_free(&s.out);
    cbuf_free(&s.repl);
    cella_free(s.wk.path);
    rx_free(&s.re);
    return rc;
}
