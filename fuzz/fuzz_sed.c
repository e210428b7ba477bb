/* libFuzzer target: what the agent's grep and sed parse themselves (the
 * patterns are PCRE2's to parse, inside the sandbox):
 *  - rx_compile (agent/fs_walk.c): its refusal of recursion, subroutine
 *    calls and backreferences, and the limits it sets; a pattern it
 *    accepts is run over the subject, and must end within the limits
 *    (libFuzzer's -timeout catches a blow-up);
 *  - sed_repl_translate (agent/fs_sed.c), iii's replacement syntax
 *    rewritten for pcre2_substitute: whatever the replacement, PCRE2
 *    accepts the translation (no replacement syntax error reaches a user
 *    as a failed file), and a replacement without "$" is itself.
 * Input: flags byte (1 literal, 2 ignore case, 4 first only), then
 * pattern NUL replacement NUL subject. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/fs_int.h"
#include "agent/fs_walk.h"
#include "util/alloc.h"
#include "util/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

/* What sed_line passes (agent/fs_sed.c). */
static uint32_t sed_opts(bool literal, bool first_only)
{
    return PCRE2_SUBSTITUTE_OVERFLOW_LENGTH | PCRE2_SUBSTITUTE_UNSET_EMPTY |
           PCRE2_SUBSTITUTE_UNKNOWN_UNSET | PCRE2_NO_UTF_CHECK |
           (first_only ? 0 : PCRE2_SUBSTITUTE_GLOBAL) | (literal ? PCRE2_SUBSTITUTE_LITERAL : 0);
}

static bool replacement_error(int rc)
{
    return rc == PCRE2_ERROR_BADREPLACEMENT || rc == PCRE2_ERROR_BADREPESCAPE ||
           rc == PCRE2_ERROR_REPMISSINGBRACE || rc == PCRE2_ERROR_BADSUBSTITUTION ||
           rc == PCRE2_ERROR_BADSUBSPATTERN || rc == PCRE2_ERROR_NOSUBSTRING;
}

static int substitute(rx *r, const char *subj, size_t sn, const cbuf *repl, uint32_t opts)
{
    static uint8_t out[1 << 16];
    PCRE2_SIZE got = sizeof(out);
    return pcre2_substitute(r->code, (PCRE2_SPTR)subj, sn, 0, opts, r->md, r->mctx,
                            repl->data ? cbuf_head(repl) : (const uint8_t *)"", cbuf_avail(repl),
                            out, &got);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    /* The agent's messages (fs_fail) go to its stderr: not wanted here.
     * Sanitizer reports write to fd 2 themselves, libFuzzer keeps its own. */
    static bool quiet;
    if (!quiet) {
        FILE *null = fopen("/dev/null", "w");
        if (null)
            stderr = null;
        quiet = true;
    }
    if (n < 1 || n > 8192)
        return 0;
    bool literal = d[0] & 1, icase = d[0] & 2, first_only = d[0] & 4;
    /* Three NULs after the data: each of the three strings exists. */
    char *buf = cella_calloc(n + 3, 1);
    memcpy(buf, d + 1, n - 1);
    const char *pat = buf;
    const char *repl = pat + strlen(pat) + 1;
    const char *subj = repl + strlen(repl) + 1;
    size_t sn = strlen(subj);

    /* The replacement as sed takes it: valid UTF-8 only. */
    bool repl_ok = utf8_valid((const uint8_t *)repl, strlen(repl));
    cbuf tr;
    cbuf_init(&tr);
    if (repl_ok) {
        sed_repl_translate(&tr, repl);
        if (!strchr(repl, '$') && (cbuf_avail(&tr) != strlen(repl) ||
                                   (cbuf_avail(&tr) && memcmp(cbuf_head(&tr), repl, cbuf_avail(&tr)))))
            abort();
    }

    rx r;
    if (rx_compile(&r, pat, literal, icase) == BUILTIN_OK) {
        /* Subjects are valid UTF-8 lines in sed (NO_UTF_CHECK). */
        if (utf8_valid((const uint8_t *)subj, sn)) {
            pcre2_match(r.code, (PCRE2_SPTR)subj, sn, 0, PCRE2_NO_UTF_CHECK, r.md, r.mctx);
            if (repl_ok) {
                int rc = literal ? 0 : substitute(&r, subj, sn, &tr, sed_opts(false, first_only));
                if (replacement_error(rc))
                    abort();
            }
        }
        rx_free(&r);
    }
    /* The translation against a pattern with groups, named and numbered. */
    if (repl_ok && rx_compile(&r, "(?<word>\\w+)(\\s*)(?<n_1>\\d)?", false, false) == BUILTIN_OK) {
        const char *line = sn && utf8_valid((const uint8_t *)subj, sn) ? subj : "abc 12 de";
        int rc = substitute(&r, line, strlen(line), &tr, sed_opts(false, first_only));
        if (replacement_error(rc))
            abort();
        rx_free(&r);
    }
    cbuf_free(&tr);
    cella_free(buf);
    return 0;
}
