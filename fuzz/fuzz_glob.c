/* libFuzzer target: the gitignore-style matcher of src/util/glob.c, which
 * sees request fields (grep's and sed's include/exclude, glob's pattern)
 * against the names a sandbox's tree holds. Input: pattern NUL path (no
 * NUL: the input is both). Invariants checked beyond "no crash" (and, by
 * libFuzzer's timeout, "no blow-up"):
 *  - a pattern glob_check refuses matches nothing;
 *  - what matches as a file matches as a directory (only a trailing "/"
 *    tells them apart, and it restricts to directories);
 *  - every directory above a match is one glob_may_match_under keeps;
 *  - the path written as an anchored pattern with its special characters
 *    escaped matches the path itself. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/glob.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

static char pat[GLOB_MAX_PATTERN + 2], path[GLOB_MAX_PATTERN + 2];
static char lit[2 * GLOB_MAX_PATTERN + 4], dir[GLOB_MAX_PATTERN + 2];

static void check_parents(const char *p, const char *s)
{
    size_t n = strlen(s);
    while (n && s[n - 1] == '/')
        n--;              /* "a/" is the entry a: a trailing "/" is no parent */
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '/' || i == 0)
            continue;
        memcpy(dir, s, i);
        dir[i] = '\0';
        if (!glob_may_match_under(p, dir))
            abort();
    }
}

/* "/" then the path's segments with * ? [ \ escaped: a literal pattern. */
static bool literal_of(const char *s)
{
    size_t o = 0;
    lit[o++] = '/';
    for (const char *c = s; *c; c++) {
        if (*c == '*' || *c == '?' || *c == '[' || *c == '\\')
            lit[o++] = '\\';
        lit[o++] = *c;
    }
    lit[o] = '\0';
    return o <= GLOB_MAX_PATTERN;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    if (n > GLOB_MAX_PATTERN)
        return 0;
    const uint8_t *nul = memchr(d, 0, n);
    size_t pn = nul ? (size_t)(nul - d) : n;
    memcpy(pat, d, pn);
    pat[pn] = '\0';
    if (nul) {
        size_t sn = n - pn - 1;
        memcpy(path, nul + 1, sn);
        path[sn] = '\0';      /* a NUL inside ends the path early: fine */
    } else {
        memcpy(path, pat, pn + 1);
    }

    const char *why;
    bool ok = glob_check(pat, &why) == 0;
    bool as_file = glob_match(pat, path, false), as_dir = glob_match(pat, path, true);
    if (!ok && (as_file || as_dir || glob_may_match_under(pat, path)))
        abort();
    if (as_file && !as_dir)
        abort();
    if (as_dir)
        check_parents(pat, path);

    /* A path of real segments (no empty ones, none trailing) must match its
     * own literal pattern, and only as that path. */
    if (path[0] && path[0] != '/' && !strstr(path, "//") && path[strlen(path) - 1] != '/' &&
        literal_of(path)) {
        if (!glob_match(lit, path, false))
            abort();
        check_parents(lit, path);
        size_t l = strlen(path);
        path[l] = 'x';
        path[l + 1] = '\0';
        if (glob_match(lit, path, true))
            abort();
    }
    return 0;
}
