/* Gitignore-style path patterns.
 *
 * Grammar (a pattern is at most GLOB_MAX_PATTERN bytes):
 *   pattern  := ["/"] segment { "/" segment } ["/"]
 *   segment  := "**" | { item }
 *   item     := "*" | "?" | class | "\" unit | unit
 *   class    := "[" ["!" | "^"] member { member } "]"     (a "]" first is a member)
 *   member   := "[:" name ":]" | cunit ["-" cunit]        (name: alnum alpha blank cntrl
 *                                                          digit graph lower print punct
 *                                                          space upper xdigit, ASCII)
 *   cunit    := "\" unit | unit
 *   unit     := one UTF-8 character (a byte that starts none stands for itself)
 * Meaning:
 *   - "*" matches any run of characters, "?" exactly one; neither crosses a
 *     "/" (each segment is matched against one path segment).
 *   - A class matches one character in (or, negated, not in) its members;
 *     ranges compare code points. A "[" that starts no well-formed class
 *     is an ordinary character.
 *   - "\" makes the next character ordinary; a trailing "\" is itself.
 *   - "/" always separates segments: it cannot be escaped nor sit in a
 *     class (no path segment could hold it); runs of "/" count as one.
 *   - A trailing "/" restricts the pattern to directories.
 *   - Without a "/" (but a trailing one) the pattern matches the last
 *     segment of the path, at any depth. With one, it matches the whole
 *     path from the root; a leading "/" only anchors and is dropped.
 *   - A segment "**" matches zero or more whole segments ("**" elsewhere in
 *     a segment is "*"), except as the last segment, where it matches one
 *     or more: "a" then "**" matches everything inside a, not a itself.
 *
 * Cost: a segment is matched with the two-pointer wildcard algorithm
 * (backtracking only to the last "*", O(|segment| x |name|)); "**" is an
 * NFA over the pattern's segment starts run in a bit set, so every (pattern
 * segment, path segment) pair is compared at most once per step. Nothing
 * recurses and nothing allocates. */
#include "util/glob.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct gpat {
    const uint8_t *p;             /* without the leading and trailing slashes */
    size_t n;
    bool dir_only;                /* it ended in "/" */
    bool anchored;                /* it holds a "/": matched from the root */
} gpat;

#define SET_WORDS ((GLOB_MAX_PATTERN + 1 + 63) / 64)

/* ---- characters ---------------------------------------------------------- */

/* Length of the character at s[0..n) (n > 0) and its code point: a
 * well-formed UTF-8 sequence, else one byte standing for itself, numbered
 * above U+10FFFF so that no range of real characters holds it. */
static size_t unit(const uint8_t *s, size_t n, uint32_t *cp)
{
    uint8_t c = s[0];
    size_t len;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
        len = 2, v = c & 0x1F, min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3, v = c & 0x0F, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4, v = c & 0x07, min = 0x10000;
    } else {
        goto raw;
    }
    if (len > n)
        goto raw;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            goto raw;
        v = v << 6 | (s[i] & 0x3F);
    }
    /* Overlongs, surrogates and values past U+10FFFF are not characters. */
    if (v < min || (v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF)
        goto raw;
    *cp = v;
    return len;
raw:
    *cp = 0x110000u + c;
    return 1;
}

static bool posix_class(const uint8_t *name, size_t n, uint32_t c, bool *known)
{
    static const char *const names[] = {"alnum", "alpha", "blank", "cntrl", "digit", "graph",
                                        "lower", "print", "punct", "space", "upper", "xdigit"};
    *known = false;
    int k = -1;
    for (int i = 0; i < 12; i++)
        if (strlen(names[i]) == n && !memcmp(names[i], name, n))
            k = i;
    if (k < 0)
        return false;
    *known = true;
    /* ASCII only, and no locale: the same answer in every sandbox. */
    bool lower = c >= 'a' && c <= 'z', upper = c >= 'A' && c <= 'Z';
    bool digit = c >= '0' && c <= '9', alpha = lower || upper;
    bool graph = c > 0x20 && c < 0x7F;
    switch (k) {
    case 0: return alpha || digit;
    case 1: return alpha;
    case 2: return c == ' ' || c == '\t';
    case 3: return c < 0x20 || c == 0x7F;
    case 4: return digit;
    case 5: return graph;
    case 6: return lower;
    case 7: return graph || c == ' ';
    case 8: return graph && !alpha && !digit;
    case 9: return c == ' ' || (c >= '\t' && c <= '\r');
    case 10: return upper;
    default: return digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }
}

/* One class member's character at p[*j] ("\" escapes), advancing *j. */
static uint32_t class_unit(const uint8_t *p, size_t n, size_t *j)
{
    uint32_t c;
    if (p[*j] == '\\' && *j + 1 < n)
        (*j)++;
    *j += unit(p + *j, n - *j, &c);
    return c;
}

/* The class at p[0] == '[': its length in *len and whether it holds c;
 * *len = 0 when it is not a well-formed class (no closing "]"). */
static bool class_match(const uint8_t *p, size_t n, uint32_t c, size_t *len)
{
    size_t j = 1;
    bool neg = false, hit = false;
    if (j < n && (p[j] == '!' || p[j] == '^')) {
        neg = true;
        j++;
    }
    for (bool first = true; j < n; first = false) {
        if (p[j] == ']' && !first) {
            *len = j + 1;
            return hit != neg;
        }
        if (p[j] == '[' && j + 1 < n && p[j + 1] == ':') {
            size_t k = j + 2;
            while (k + 1 < n && !(p[k] == ':' && p[k + 1] == ']'))
                k++;
            bool known;
            if (k + 1 < n) {
                bool in = posix_class(p + j + 2, k - j - 2, c, &known);
                if (known) {
                    hit |= in;
                    j = k + 2;
                    continue;
                }
            }
        }
        uint32_t lo = class_unit(p, n, &j);
        if (j + 1 < n && p[j] == '-' && p[j + 1] != ']') {
            j++;
            uint32_t hi = class_unit(p, n, &j);
            hit |= c >= lo && c <= hi;
        } else {
            hit |= c == lo;
        }
    }
    *len = 0;
    return false;
}

/* Whether the item at p[0..n) (not "*") matches the character s[0..sl)
 * (code point c); *tl gets the item's length. */
static bool item_match(const uint8_t *p, size_t n, const uint8_t *s, size_t sl, uint32_t c,
                       size_t *tl)
{
    if (p[0] == '?') {
        *tl = 1;
        return true;
    }
    if (p[0] == '[') {
        bool in = class_match(p, n, c, tl);
        if (*tl)
            return in;
    }
    size_t off = p[0] == '\\' && n > 1 ? 1 : 0;
    uint32_t pc;
    size_t pl = unit(p + off, n - off, &pc);
    *tl = off + pl;
    return pl == sl && !memcmp(p + off, s, sl);
}

/* One pattern segment against one name: the two-pointer wildcard match.
 * On a mismatch only the last "*" is retried one character further, so
 * the loop runs at most (|p| + 1) x (|s| + 1) times. */
static bool seg_match(const uint8_t *p, size_t pn, const uint8_t *s, size_t sn)
{
    size_t pi = 0, si = 0, star_p = SIZE_MAX, star_s = 0;
    while (si < sn) {
        if (pi < pn && p[pi] == '*') {
            while (pi < pn && p[pi] == '*')
                pi++;
            star_p = pi;
            star_s = si;
            continue;
        }
        uint32_t c;
        size_t sl = unit(s + si, sn - si, &c), tl;
        if (pi < pn && item_match(p + pi, pn - pi, s + si, sl, c, &tl)) {
            pi += tl;
            si += sl;
            continue;
        }
        if (star_p == SIZE_MAX)
            return false;
        star_s += unit(s + star_s, sn - star_s, &c);
        si = star_s;
        pi = star_p;
    }
    while (pi < pn && p[pi] == '*')
        pi++;
    return pi == pn;
}

/* ---- patterns ------------------------------------------------------------ */

static bool prepare(const char *pattern, gpat *g)
{
    size_t n = strnlen(pattern, GLOB_MAX_PATTERN + 1);
    if (n == 0 || n > GLOB_MAX_PATTERN)
        return false;
    const uint8_t *p = (const uint8_t *)pattern;
    g->dir_only = p[n - 1] == '/';
    while (n && p[n - 1] == '/')
        n--;
    g->anchored = n && p[0] == '/';
    while (n && p[0] == '/')
        p++, n--;
    if (!n)
        return false;
    g->anchored |= memchr(p, '/', n) != NULL;
    g->p = p;
    g->n = n;
    return true;
}

int glob_check(const char *pattern, const char **why)
{
    size_t n = strnlen(pattern, GLOB_MAX_PATTERN + 1);
    gpat g;
    if (n == 0)
        *why = "empty pattern";
    else if (n > GLOB_MAX_PATTERN)
        *why = "pattern longer than 4096 bytes";
    else if (!prepare(pattern, &g))
        *why = "a pattern of slashes only matches nothing";
    else
        return 0;
    return -1;
}

static size_t seg_end(const gpat *g, size_t s)
{
    const uint8_t *e = memchr(g->p + s, '/', g->n - s);
    return e ? (size_t)(e - g->p) : g->n;
}

static size_t seg_next(const gpat *g, size_t s)
{
    size_t e = seg_end(g, s);
    while (e < g->n && g->p[e] == '/')
        e++;
    return e;
}

static bool is_globstar(const gpat *g, size_t s, size_t e)
{
    return e - s == 2 && g->p[s] == '*' && g->p[s + 1] == '*';
}

static void set_add(uint64_t *set, size_t i) { set[i / 64] |= UINT64_C(1) << (i % 64); }
static bool set_has(const uint64_t *set, size_t i) { return set[i / 64] >> (i % 64) & 1; }

/* Adds what "**" reaches without consuming a segment: the next segment,
 * unless the "**" is the last one (which must consume at least one).
 * One ascending pass suffices: a state only ever adds a later one. */
static void closure(const gpat *g, uint64_t *set)
{
    for (size_t w = 0; w < SET_WORDS; w++) {
        for (uint64_t done = 0, bits; (bits = set[w] & ~done); ) {
            unsigned bit = (unsigned)__builtin_ctzll(bits);
            done |= UINT64_C(1) << bit;
            size_t s = w * 64 + bit;
            if (s >= g->n)
                continue;
            size_t nx = seg_next(g, s);
            if (is_globstar(g, s, seg_end(g, s)) && nx < g->n)
                set_add(set, nx);
        }
    }
}

/* The states (segment starts; g->n: all consumed) after one path segment. */
static void step(const gpat *g, const uint64_t *cur, uint64_t *next, const uint8_t *name,
                 size_t len)
{
    memset(next, 0, SET_WORDS * sizeof(uint64_t));
    for (size_t w = 0; w < SET_WORDS; w++) {
        for (uint64_t bits = cur[w]; bits; bits &= bits - 1) {
            size_t s = w * 64 + (size_t)__builtin_ctzll(bits);
            if (s >= g->n)
                continue;
            size_t e = seg_end(g, s);
            if (is_globstar(g, s, e)) {
                set_add(next, s);
                set_add(next, seg_next(g, s));
            } else if (seg_match(g->p + s, e - s, name, len)) {
                set_add(next, seg_next(g, s));
            }
        }
    }
    closure(g, next);
}

/* Runs the segments of path through the NFA; the final set goes to out. */
static void run(const gpat *g, const char *path, uint64_t *out)
{
    uint64_t a[SET_WORDS], b[SET_WORDS];
    uint64_t *cur = a, *nx = b;
    memset(a, 0, sizeof(a));
    set_add(cur, 0);
    closure(g, cur);
    for (const char *s = path; *s;) {
        if (*s == '/') {
            s++;
            continue;
        }
        size_t len = strcspn(s, "/");
        step(g, cur, nx, (const uint8_t *)s, len);
        uint64_t *t = cur;
        cur = nx;
        nx = t;
        s += len;
    }
    memcpy(out, cur, sizeof(a));
}

bool glob_match(const char *pattern, const char *path, bool is_dir)
{
    gpat g;
    if (!prepare(pattern, &g) || (g.dir_only && !is_dir))
        return false;
    if (!g.anchored) {
        size_t n = strlen(path);
        while (n && path[n - 1] == '/')
            n--;
        size_t b = n;
        while (b && path[b - 1] != '/')
            b--;
        return n > b && seg_match(g.p, g.n, (const uint8_t *)path + b, n - b);
    }
    uint64_t set[SET_WORDS];
    run(&g, path, set);
    return set_has(set, g.n);
}

bool glob_may_match_under(const char *pattern, const char *dir)
{
    gpat g;
    if (!prepare(pattern, &g))
        return false;
    if (!g.anchored)
        return true;
    uint64_t set[SET_WORDS];
    run(&g, dir, set);
    /* A state before the end still has segments to give to deeper names. */
    for (size_t w = 0; w < SET_WORDS; w++) {
        uint64_t bits = set[w];
        if (w == g.n / 64)
            bits &= (UINT64_C(1) << (g.n % 64)) - 1;
        else if (w > g.n / 64)
            bits = 0;
        if (bits)
            return true;
    }
    return false;
}
