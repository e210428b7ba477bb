/* Code mode's codecs: UTF-8, ASCII and Latin-1, by CPython's names and
 * aliases, with the error handlers strict, ignore, replace,
 * backslashreplace (and xmlcharrefreplace for encoding). Messages and the
 * extent of each error (the maximal invalid subsequence of UTF-8) are
 * CPython's. Other codecs (utf-16, cp1252...) are a LookupError. */
#include "code/code_strutil.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

enum { ENC_UTF8, ENC_ASCII, ENC_LATIN1 };
enum { ERR_STRICT, ERR_IGNORE, ERR_REPLACE, ERR_BACKSLASH, ERR_XMLREF, ERR_UNKNOWN };

/* CPython's normalisation: lower case, spaces and hyphens as underscores. */
static int find_encoding(code_vm *vm, const char *name)
{
    char n[32];
    size_t i = 0;
    for (; name[i] && i < sizeof(n) - 1; i++) {
        char c = (char)tolower((unsigned char)name[i]);
        n[i] = c == '-' || c == ' ' ? '_' : c;
    }
    n[i] = '\0';
    static const struct { const char *name; int enc; } names[] = {
        {"utf_8", ENC_UTF8}, {"utf8", ENC_UTF8}, {"u8", ENC_UTF8}, {"utf", ENC_UTF8},
        {"cp65001", ENC_UTF8}, {"ascii", ENC_ASCII}, {"us_ascii", ENC_ASCII},
        {"646", ENC_ASCII}, {"us", ENC_ASCII}, {"latin_1", ENC_LATIN1}, {"latin1", ENC_LATIN1},
        {"latin", ENC_LATIN1}, {"l1", ENC_LATIN1}, {"iso_8859_1", ENC_LATIN1},
        {"iso8859_1", ENC_LATIN1}, {"8859", ENC_LATIN1}, {"cp819", ENC_LATIN1},
        {"iso_ir_100", ENC_LATIN1},
    };
    if (!name[i])
        for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
            if (strcmp(n, names[k].name) == 0)
                return names[k].enc;
    return code_raise_i(vm, &code_exc_LookupError, "unknown encoding: %s", name);
}

static const char *enc_name(int enc)
{
    return enc == ENC_UTF8 ? "utf-8" : enc == ENC_ASCII ? "ascii" : "latin-1";
}

static int find_errors(const char *e)
{
    if (!strcmp(e, "strict"))
        return ERR_STRICT;
    if (!strcmp(e, "ignore"))
        return ERR_IGNORE;
    if (!strcmp(e, "replace"))
        return ERR_REPLACE;
    if (!strcmp(e, "backslashreplace"))
        return ERR_BACKSLASH;
    if (!strcmp(e, "xmlcharrefreplace"))
        return ERR_XMLREF;
    return ERR_UNKNOWN;
}

/* The length of the invalid sequence at s[i] (1..3) and why; 0 if valid (then
 * *len is the sequence's length). */
static const char *utf8_check(const unsigned char *s, size_t n, size_t i, size_t *len)
{
    unsigned char c = s[i];
    if (c < 0x80) {
        *len = 1;
        return NULL;
    }
    size_t need;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
        need = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else {
        *len = 1;
        return "invalid start byte";
    }
    for (size_t k = 1; k < need; k++) {
        if (i + k >= n) {
            *len = k;
            return "unexpected end of data";
        }
        unsigned char b = s[i + k];
        if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) {
            *len = k;
            return "invalid continuation byte";
        }
    }
    *len = need;
    return NULL;
}

/* Raises UnicodeDecodeError or UnicodeEncodeError as CPython makes them:
 * args (encoding, object, start, end, reason), the same as attributes, str()
 * built from them (code_exc.c). obj is stolen (CV_NULL: memory ran out). */
static cv raise_unicode(code_vm *vm, const code_type *t, int enc, cv obj, size_t start,
                        size_t end, const char *reason)
{
    if (!obj)
        return CV_NULL;
    cv v[5] = { code_str_from_cstr(vm, enc_name(enc)), obj, code_int_from_u64(vm, start),
                code_int_from_u64(vm, end), code_str_from_cstr(vm, reason) };
    static const char *const names[5] = { "encoding", "object", "start", "end", "reason" };
    cv args = CV_NULL, e = CV_NULL;
    for (int k = 0; k < 5; k++)
        if (!v[k])
            goto out;
    if (!(args = code_tuple_new(vm, 5)))
        goto out;
    for (int k = 0; k < 5; k++)
        ((code_tuple *)cv_obj(args))->v[k] = code_incref(v[k]);
    if (!(e = code_exc_new(vm, t, args)))
        goto out;
    for (int k = 0; k < 5; k++)
        if (code_exc_set_attr(vm, e, names[k], v[k]) < 0)
            goto out;
    code_raise_obj(vm, e);
    e = CV_NULL;
out:
    code_decref(vm, e);
    for (int k = 0; k < 5; k++)
        code_decref(vm, v[k]);
    return CV_NULL;
}

cv code_codec_decode(code_vm *vm, const unsigned char *s, size_t n, const char *encoding,
                   const char *errors)
{
    int enc = find_encoding(vm, encoding);
    if (enc < 0)
        return CV_NULL;
    if (enc == ENC_UTF8 && code_utf8_valid((const char *)s, n))
        return code_str_new(vm, (const char *)s, n);
    int err = find_errors(errors);
    code_sb b;
    code_sb_init(&b, vm);
    size_t i = 0;
    while (i < n) {
        size_t len = 1;
        const char *why = NULL;
        char u[4];
        if (enc == ENC_UTF8)
            why = utf8_check(s, n, i, &len);
        else if (enc == ENC_ASCII && s[i] >= 0x80)
            why = "ordinal not in range(128)";
        if (!why) {
            int rc = enc == ENC_LATIN1 ? code_sb_add(&b, u, code_utf8_put(s[i], u))
                                       : code_sb_add(&b, (const char *)s + i, len);
            if (rc)
                goto fail;
            i += len;
            continue;
        }
        switch (err) {
        case ERR_IGNORE:
            break;
        case ERR_REPLACE:
            if (code_sb_add(&b, "\xef\xbf\xbd", 3))
                goto fail;
            break;
        case ERR_BACKSLASH:
            for (size_t k = 0; k < len; k++)
                if (code_sb_printf(&b, "\\x%02x", s[i + k]))
                    goto fail;
            break;
        case ERR_STRICT:
        case ERR_XMLREF: /* an encoding-only handler: CPython raises the error */
            raise_unicode(vm, &code_exc_UnicodeDecodeError, enc, code_bytes_new(vm, s, n), i,
                          i + len, why);
            goto fail;
        default:
            code_raise(vm, &code_exc_LookupError, "unknown error handler name '%s'", errors);
            goto fail;
        }
        i += len;
    }
    return code_sb_finish(&b);
fail:
    code_sb_free(&b);
    return CV_NULL;
}

static int put_escaped_char(char *out, size_t cap, uint32_t c)
{
    if (c < 0x100)
        return snprintf(out, cap, "\\x%02x", c);
    if (c < 0x10000)
        return snprintf(out, cap, "\\u%04x", c);
    return snprintf(out, cap, "\\U%08x", c);
}

cv code_codec_encode(code_vm *vm, cv str, const char *encoding, const char *errors)
{
    int enc = find_encoding(vm, encoding);
    if (enc < 0)
        return CV_NULL;
    code_str *x = code_str_p(str);
    if (enc == ENC_UTF8 || x->ascii)
        return code_bytes_new(vm, x->s, x->len);
    int err = find_errors(errors);
    uint32_t limit = enc == ENC_ASCII ? 0x80 : 0x100;
    code_sb b;
    code_sb_init(&b, vm);
    size_t i = 0, ci = 0;
    while (i < x->len) {
        size_t at = i;
        uint32_t c = code_utf8_next(x->s, &i);
        if (c < limit) {
            char ch = (char)c;
            if (code_sb_add(&b, &ch, 1))
                goto fail;
            ci++;
            continue;
        }
        char e[16];
        switch (err) {
        case ERR_IGNORE:
            break;
        case ERR_REPLACE:
            if (code_sb_add(&b, "?", 1))
                goto fail;
            break;
        case ERR_BACKSLASH:
            if (code_sb_add(&b, e, (size_t)put_escaped_char(e, sizeof(e), c)))
                goto fail;
            break;
        case ERR_XMLREF:
            if (code_sb_printf(&b, "&#%u;", c))
                goto fail;
            break;
        case ERR_STRICT: {
            /* The error spans the run of unencodable characters. */
            size_t end = ci + 1, j = i;
            while (j < x->len) {
                size_t k = j;
                if (code_utf8_next(x->s, &k) < limit)
                    break;
                j = k;
                end++;
            }
            raise_unicode(vm, &code_exc_UnicodeEncodeError, enc, code_incref(str), ci, end,
                          enc == ENC_ASCII ? "ordinal not in range(128)"
                                           : "ordinal not in range(256)");
            goto fail;
        }
        default:
            code_raise(vm, &code_exc_LookupError, "unknown error handler name '%s'", errors);
            goto fail;
        }
        (void)at;
        ci++;
    }
    /* The buffer holds bytes, not UTF-8: copy it out as bytes. */
    cv r = code_bytes_new(vm, b.p, b.len);
    code_sb_free(&b);
    return r;
fail:
    code_sb_free(&b);
    return CV_NULL;
}
