/* Code mode's str helpers shared by str and bytes: UTF-8 (validity, counts,
 * code point offsets), the fixed-key SipHash, the quoting and escaping of
 * repr() and ascii(), and the argument checks of the methods. */
#include "code/code_strutil.h"

#include <stdio.h>
#include <string.h>

/* ---- UTF-8 ---- */

size_t code_utf8_put(uint32_t c, char *o)
{
    if (c < 0x80) {
        o[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        o[0] = (char)(0xC0 | (c >> 6));
        o[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        o[0] = (char)(0xE0 | (c >> 12));
        o[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        o[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (c >> 18));
    o[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((c >> 6) & 0x3F));
    o[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

bool code_ascii_only(const char *s, size_t n)
{
    size_t i = 0;
    /* Eight bytes at a time: strings are mostly ASCII. */
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        if (w & 0x8080808080808080ull)
            return false;
    }
    for (; i < n; i++)
        if ((unsigned char)s[i] & 0x80)
            return false;
    return true;
}

/* Continuation bytes (10xxxxxx) among eight: bit 7 set and bit 6 clear. */
static inline unsigned cont8(const char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return (unsigned)__builtin_popcountll(w & ~(w << 1) & 0x8080808080808080ull);
}

size_t code_utf8_count(const char *s, size_t n)
{
    size_t c = 0, i = 0;
    for (; i + 8 <= n; i += 8)
        c += 8 - cont8(s + i);
    for (; i < n; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

/* Strict UTF-8 as CPython's decoder accepts it: no overlong forms, no
 * surrogates, nothing past U+10FFFF. */
bool code_utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        unsigned char c = p[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len;
        uint32_t min, cp;
        if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
            min = 0x80;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            min = 0x800;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            min = 0x10000;
            cp = c & 0x07;
        } else
            return false;
        if (n - i < len)
            return false;
        for (size_t k = 1; k < len; k++) {
            if ((p[i + k] & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (p[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += len;
    }
    return true;
}

size_t code_str_offset(const code_str *s, size_t ci)
{
    if (s->ascii)
        return ci;
    if (ci >= s->nchars)
        return s->len;
    /* Walk from the nearer end; forwards eight bytes at a time while whole
     * words of characters can be skipped. */
    if (ci <= s->nchars / 2) {
        size_t i = 0, left = ci;
        while (left >= 8 && i + 8 <= s->len) {
            left -= 8 - cont8(s->s + i);
            i += 8;
        }
        /* i may be inside a character already counted: skip its tail. */
        for (;;) {
            while (i < s->len && ((unsigned char)s->s[i] & 0xC0) == 0x80)
                i++;
            if (!left)
                return i;
            i++;
            left--;
        }
    }
    size_t i = s->len, back = s->nchars - ci;
    while (back--) {
        i--;
        while (((unsigned char)s->s[i] & 0xC0) == 0x80)
            i--;
    }
    return i;
}

size_t code_str_charindex(const code_str *s, size_t off)
{
    return s->ascii ? off : code_utf8_count(s->s, off);
}

/* ---- hashing: SipHash-1-3, fixed key (runs are deterministic) ---- */

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                         \
    do {                                                                                 \
        v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);                         \
        v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                                           \
        v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                                           \
        v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);                         \
    } while (0)

uint64_t code_siphash13(const void *src, size_t n)
{
    const uint64_t k0 = 0x0706050403020100ull, k1 = 0x0f0e0d0c0b0a0908ull;
    uint64_t v0 = k0 ^ 0x736f6d6570736575ull, v1 = k1 ^ 0x646f72616e646f6dull;
    uint64_t v2 = k0 ^ 0x6c7967656e657261ull, v3 = k1 ^ 0x7465646279746573ull;
    const unsigned char *p = src;
    uint64_t b = (uint64_t)n << 56;
    for (; n >= 8; n -= 8, p += 8) {
        uint64_t m;
        memcpy(&m, p, 8);
        v3 ^= m;
        SIPROUND;
        v0 ^= m;
    }
    uint64_t t = 0;
    for (size_t i = 0; i < n; i++)
        t |= (uint64_t)p[i] << (8 * i);
    b |= t;
    v3 ^= b;
    SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

/* ---- repr ---- */

static int sb_escape(code_sb *b, uint32_t c)
{
    if (c < 0x100)
        return code_sb_printf(b, "\\x%02x", c);
    if (c < 0x10000)
        return code_sb_printf(b, "\\u%04x", c);
    return code_sb_printf(b, "\\U%08x", c);
}

int code_sb_str_repr(code_sb *b, const char *s, size_t n, bool ascii_only)
{
    bool sq = memchr(s, '\'', n) != NULL, dq = memchr(s, '"', n) != NULL;
    char q = sq && !dq ? '"' : '\'';
    if (code_sb_add(b, &q, 1))
        return -1;
    size_t i = 0, run = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        /* Runs of plain characters are copied at once. */
        if (c >= 0x20 && c < 0x7f && c != '\\' && c != (unsigned char)q) {
            i++;
            continue;
        }
        if (i > run && code_sb_add(b, s + run, i - run))
            return -1;
        size_t start = i;
        uint32_t cp = code_utf8_next(s, &i);
        int rc;
        if (cp == '\\' || cp == (uint32_t)q) {
            char e[2] = {'\\', (char)cp};
            rc = code_sb_add(b, e, 2);
        } else if (cp == '\t')
            rc = code_sb_add(b, "\\t", 2);
        else if (cp == '\n')
            rc = code_sb_add(b, "\\n", 2);
        else if (cp == '\r')
            rc = code_sb_add(b, "\\r", 2);
        else if (cp < 0x80 || ascii_only || !code_uprop(cp, CODE_UP_PRINTABLE))
            rc = sb_escape(b, cp);
        else
            rc = code_sb_add(b, s + start, i - start);
        if (rc)
            return -1;
        run = i;
    }
    if (i > run && code_sb_add(b, s + run, i - run))
        return -1;
    return code_sb_add(b, &q, 1);
}

cv code_ascii_of(code_vm *vm, cv v)
{
    cv r = code_repr(vm, v);
    if (!r || code_str_p(r)->ascii)
        return r;
    code_sb b;
    code_sb_init(&b, vm);
    const char *s = code_str_cstr(r);
    size_t n = code_str_len(r), i = 0;
    int rc = 0;
    while (i < n && !rc) {
        size_t start = i;
        uint32_t c = code_utf8_next(s, &i);
        rc = c < 0x80 ? code_sb_add(&b, s + start, 1) : sb_escape(&b, c);
    }
    code_decref(vm, r);
    if (rc) {
        code_sb_free(&b);
        return CV_NULL;
    }
    return code_sb_finish(&b);
}

/* ---- argument counts ---- */

/* CPython's methods of str and bytes check their positional arguments in
 * four ways, each with its own message: METH_NOARGS, METH_O, the old
 * PyArg_ParseTuple (the find family) and Argument Clinic (the rest). */
int code_str_nargs(code_vm *vm, const char *tname, const char *name, size_t n, cv kw,
                   size_t min, size_t max)
{
    if (kw && ((code_tuple *)cv_obj(kw))->n)
        return code_raise_i(vm, &code_exc_TypeError, "%s.%s() takes no keyword arguments", tname,
                            name);
    if (n >= min && n <= max)
        return 0;
    if (max == 0)
        return code_raise_i(vm, &code_exc_TypeError, "%s.%s() takes no arguments (%zu given)",
                            tname, name, n);
    if (min == 1 && max == 1)
        return code_raise_i(vm, &code_exc_TypeError,
                            "%s.%s() takes exactly one argument (%zu given)", tname, name, n);
    static const char *const old[] = {"find", "rfind", "index", "rindex", "count",
                                      "startswith", "endswith", NULL};
    bool tuple = false;
    for (size_t i = 0; old[i]; i++)
        tuple = tuple || strcmp(old[i], name) == 0;
    size_t lim = n < min ? min : max;
    const char *pl = lim == 1 ? "" : "s";
    if (tuple)
        return code_raise_i(vm, &code_exc_TypeError, "%s() takes at %s %zu argument%s (%zu given)",
                            name, n < min ? "least" : "most", lim, pl, n);
    return code_raise_i(vm, &code_exc_TypeError, "%s expected at %s %zu argument%s, got %zu", name,
                        n < min ? "least" : "most", lim, pl, n);
}

/* ---- arguments ---- */

int code_arg_cstr(code_vm *vm, cv v, const char *what, const char **out)
{
    if (!cv_is(v, &code_type_str))
        return code_raise_i(vm, &code_exc_TypeError, "%s must be str, not %s", what,
                            code_type_name(v));
    *out = code_str_cstr(v);
    return 0;
}
