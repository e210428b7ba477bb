#include "util/text.h"

#include <string.h>

#include "util/alloc.h"

/* ---- base64 ----------------------------------------------------------- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void base64_encode(cbuf *out, const uint8_t *p, size_t n)
{
    char *o = (char *)cbuf_reserve(out, (n + 2) / 3 * 4);
    size_t k = 0, i = 0;
    for (; i + 2 < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        o[k++] = b64[v >> 18];
        o[k++] = b64[(v >> 12) & 63];
        o[k++] = b64[(v >> 6) & 63];
        o[k++] = b64[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
        o[k++] = b64[v >> 18];
        o[k++] = b64[(v >> 12) & 63];
        o[k++] = i + 1 < n ? b64[(v >> 6) & 63] : '=';
        o[k++] = '=';
    }
    cbuf_commit(out, k);
}

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* base64 := quad* (quad-with-padding | 2 or 3 symbols)?   -- no whitespace */
int base64_decode(cbuf *out, const char *s, size_t n, cella_err *err)
{
    size_t pad = 0;
    while (n > 0 && s[n - 1] == '=' && pad < 2) {
        n--;
        pad++;
    }
    if (pad && (n + pad) % 4)
        return cella_err_set(err, 0, "invalid base64: bad padding");
    if (n % 4 == 1)
        return cella_err_set(err, 0, "invalid base64: truncated");
    uint8_t *o = cbuf_reserve(out, n / 4 * 3 + 3);
    size_t k = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64_value((unsigned char)s[i]);
        if (v < 0)
            return cella_err_set(err, 0, "invalid base64: unexpected character at offset %zu", i);
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            o[k++] = (uint8_t)(acc >> bits);
        }
    }
    /* Leftover bits must be zero, or the text is not canonical base64 of anything. */
    if (bits && (acc & ((1u << bits) - 1)))
        return cella_err_set(err, 0, "invalid base64: stray bits at the end");
    cbuf_commit(out, k);
    return 0;
}

/* ---- shlex ------------------------------------------------------------ */

bool text_has_space(const char *s)
{
    return strpbrk(s, " \t\n\r\v\f") != NULL;
}

/* words := (space* word)* space*
 * word  := (plain | '\'' [^']* '\'' | '"' dqchar* '"' | '\\' any)+ */
int shlex_split(const char *s, char ***out, cella_err *err)
{
    size_t n = 0, cap = 4;
    char **v = cella_calloc(cap + 1, sizeof(char *));
    cbuf w;
    cbuf_init(&w);
    const char *p = s;
    for (;;) {
        while (*p && strchr(" \t\n\r\v\f", *p))
            p++;
        if (!*p)
            break;
        cbuf_reset(&w);
        while (*p && !strchr(" \t\n\r\v\f", *p)) {
            if (*p == '\'') {
                const char *e = strchr(p + 1, '\'');
                if (!e)
                    goto unbalanced;
                cbuf_append(&w, p + 1, (size_t)(e - p - 1));
                p = e + 1;
            } else if (*p == '"') {
                p++;
                while (*p && *p != '"') {
                    if (*p == '\\' && p[1] && strchr("\"\\$`\n", p[1])) {
                        if (p[1] != '\n')
                            cbuf_append(&w, p + 1, 1);
                        p += 2;
                    } else {
                        cbuf_append(&w, p++, 1);
                    }
                }
                if (*p != '"')
                    goto unbalanced;
                p++;
            } else if (*p == '\\') {
                if (!p[1]) {
                    cella_err_set(err, 0, "no character after the final backslash");
                    goto error;
                }
                if (p[1] != '\n')
                    cbuf_append(&w, p + 1, 1);
                p += 2;
            } else {
                cbuf_append(&w, p++, 1);
            }
        }
        if (n == cap) {
            cap *= 2;
            v = cella_realloc(v, (cap + 1) * sizeof(char *));
        }
        v[n++] = cella_strndup((const char *)cbuf_head(&w), cbuf_avail(&w));
        v[n] = NULL;
    }
    cbuf_free(&w);
    *out = v;
    return 0;
unbalanced:
    cella_err_set(err, 0, "no closing quotation");
error:
    cbuf_free(&w);
    cella_strv_free(v);
    return -1;
}

/* ---- UTF-8 ------------------------------------------------------------ */

/* Length of the well-formed sequence at p (1..4), 0 when malformed, or -k
 * when the k bytes left are a valid but incomplete start. Unicode 3.9's
 * table of well-formed byte sequences. */
static int utf8_seq(const uint8_t *p, size_t n)
{
    uint8_t c = p[0];
    if (c < 0x80)
        return 1;
    int len;
    uint8_t lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0;          /* no overlongs */
        else if (c == 0xED)
            hi = 0x9F;          /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;          /* nothing above U+10FFFF */
    } else {
        return 0;
    }
    for (int i = 1; i < len; i++) {
        if ((size_t)i >= n)
            return -(int)n;
        uint8_t b = p[i];
        if (i == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF))
            return 0;
    }
    return len;
}

void utf8_lossy(cbuf *out, const uint8_t *p, size_t n)
{
    size_t i = 0, run = 0;
    while (i < n) {
        int l = utf8_seq(p + i, n - i);
        if (l > 0) {
            i += (size_t)l;
            continue;
        }
        cbuf_append(out, p + run, i - run);
        cbuf_append(out, "\xEF\xBF\xBD", 3);
        /* A truncated valid start is one replacement for all its bytes;
         * a malformed byte is one replacement for itself. */
        i += l < 0 ? (size_t)-l : 1;
        run = i;
    }
    cbuf_append(out, p + run, n - run);
}

size_t utf8_complete_prefix(const uint8_t *p, size_t n)
{
    /* Only the last three bytes can start an incomplete sequence. */
    for (size_t back = 1; back <= 3 && back <= n; back++) {
        size_t i = n - back;
        if ((p[i] & 0xC0) == 0x80)
            continue;
        int l = utf8_seq(p + i, back);
        return l < 0 ? i : n;
    }
    return n;
}

bool utf8_valid(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n;) {
        int l = utf8_seq(p + i, n - i);
        if (l <= 0)
            return false;
        i += (size_t)l;
    }
    return true;
}
