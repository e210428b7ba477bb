/* UTF-8 checks and base64 for the host boundary (the JSON codec, the dump
 * loader, the CLI): plain functions of bytes, no values, so the dump parser
 * and its tests need nothing of the runtime. */
#include <stdint.h>

#include "code/code_json_int.h"

size_t code_json_utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned cp, min;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2, cp = c & 0x1f, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        len = 3, cp = c & 0x0f, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        len = 4, cp = c & 0x07, min = 0x10000;
    else
        return 0;
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

bool code_json_utf8_valid(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = code_json_utf8_seq(u + i, n - i);
        if (!k)
            return false;
        i += k;
    }
    return true;
}

static int b64_val(unsigned char c)
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

int code_json_b64_decode(const char *s, size_t n, unsigned char *out, size_t *outn)
{
    if (n % 4)
        return -1;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 4) {
        int v[4];
        int pad = 0;
        for (int k = 0; k < 4; k++) {
            unsigned char c = (unsigned char)s[i + k];
            /* '=' only at the end: one or two of them */
            if (c == '=' && i + 4 == n && k >= 2 && (k == 3 || s[i + 3] == '=')) {
                v[k] = 0;
                pad++;
                continue;
            }
            if (pad || (v[k] = b64_val(c)) < 0)
                return -1;
        }
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 |
                     (uint32_t)v[3];
        out[o++] = (unsigned char)(w >> 16);
        if (pad < 2)
            out[o++] = (unsigned char)(w >> 8);
        if (pad < 1)
            out[o++] = (unsigned char)w;
    }
    *outn = o;
    return 0;
}

void code_json_b64_encode(const unsigned char *s, size_t n, char *out)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0, i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t w = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
        out[o++] = abc[w >> 18];
        out[o++] = abc[w >> 12 & 63];
        out[o++] = abc[w >> 6 & 63];
        out[o++] = abc[w & 63];
    }
    if (i < n) {
        uint32_t w = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0);
        out[o++] = abc[w >> 18];
        out[o++] = abc[w >> 12 & 63];
        out[o++] = i + 1 < n ? abc[w >> 6 & 63] : '=';
        out[o++] = '=';
    }
}
