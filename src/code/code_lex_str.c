/* String literal bodies: escape decoding for str and bytes, and the splitting
 * of f-string bodies into literal text and replacement fields (Python 3.11's
 * rules: an expression cannot hold a backslash, a '#', or the f-string's own
 * quote, which already ended the literal). */
#include "code/code_lex.h"

#include <string.h>

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | cp >> 12);
        o[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | cp >> 18);
    o[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    o[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

int code_str_decode(const char *body, size_t n, uint8_t sflags, bool braces, int line,
                    code_arena *a, code_error *err, const char **out, size_t *outn)
{
    bool bytes = sflags & CODE_STR_BYTES, raw = sflags & CODE_STR_RAW;
    char *o = code_arena_alloc(a, n + 1);
    if (!o)
        return code_error_set(err, "MemoryError", line, 0, "memory limit exceeded while parsing");
    size_t on = 0;
    const char *p = body, *e = body + n;
    while (p < e) {
        char c = *p;
        if (c == '\r') {
            o[on++] = '\n';
            p += p + 1 < e && p[1] == '\n' ? 2 : 1;
            line++;
            continue;
        }
        if (c == '\n')
            line++;
        if (bytes && (unsigned char)c >= 0x80)
            return code_error_set(err, "SyntaxError", line, 0,
                                  "bytes can only contain ASCII literal characters");
        if (braces && (c == '{' || c == '}') && p + 1 < e && p[1] == c) {
            o[on++] = c;
            p += 2;
            continue;
        }
        if (c != '\\' || raw) {
            o[on++] = c;
            p++;
            continue;
        }
        if (p + 1 >= e) {            /* cannot happen: the lexer pairs backslashes */
            o[on++] = c;
            p++;
            continue;
        }
        char x = p[1];
        p += 2;
        unsigned cp;
        int need;
        switch (x) {
        case '\n':
            line++;
            continue;
        case '\r':
            if (p < e && *p == '\n')
                p++;
            line++;
            continue;
        case '\\': case '\'': case '"':
            o[on++] = x;
            continue;
        case 'a': o[on++] = '\a'; continue;
        case 'b': o[on++] = '\b'; continue;
        case 'f': o[on++] = '\f'; continue;
        case 'n': o[on++] = '\n'; continue;
        case 'r': o[on++] = '\r'; continue;
        case 't': o[on++] = '\t'; continue;
        case 'v': o[on++] = '\v'; continue;
        case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7':
            cp = (unsigned)(x - '0');
            for (int i = 0; i < 2 && p < e && *p >= '0' && *p <= '7'; i++)
                cp = cp * 8 + (unsigned)(*p++ - '0');
            if (bytes)
                o[on++] = (char)(cp & 0xFF);
            else
                on += put_utf8(o + on, cp);
            continue;
        case 'x':
            need = 2;
            goto hex;
        case 'u':
            need = 4;
            if (bytes)
                break;
            goto hex;
        case 'U':
            need = 8;
            if (bytes)
                break;
        hex:
            cp = 0;
            for (int i = 0; i < need; i++) {
                int v = p + i < e ? hexval(p[i]) : -1;
                if (v < 0)
                    return code_error_set(err, "SyntaxError", line, 0,
                                          bytes ? "(value error) invalid \\x escape"
                                          : "(unicode error) 'unicodeescape' codec can't "
                                            "decode bytes: truncated \\%c%s escape", x,
                                          x == 'x' ? "XX" : x == 'u' ? "XXXX" : "XXXXXXXX");
                cp = cp * 16 + (unsigned)v;
            }
            p += need;
            if (bytes) {
                o[on++] = (char)cp;
                continue;
            }
            if (cp > 0x10FFFF)
                return code_error_set(err, "SyntaxError", line, 0,
                                      "(unicode error) 'unicodeescape' codec can't decode "
                                      "bytes: illegal Unicode character");
            if (cp >= 0xD800 && cp <= 0xDFFF)
                return code_error_set(err, "NotImplementedError", line, 0,
                                      "lone surrogates (\\u%04X) are not supported in strings",
                                      cp);
            on += put_utf8(o + on, cp);
            continue;
        case 'N':
            if (bytes)
                break;
            return code_error_set(err, "NotImplementedError", line, 0,
                                  "\\N{...} escapes (Unicode character names) are not "
                                  "supported; use \\u or \\U");
        default:
            break;
        }
        /* Not an escape: kept as written (CPython warns). */
        o[on++] = '\\';
        p--;
    }
    o[on] = '\0';
    *out = o;
    *outn = on;
    return 0;
}

/* ---- f-strings ---- */

void code_fstr_begin(code_fstr_iter *it, const char *body, size_t n, int line, int col,
                     int spec_depth, bool raw)
{
    it->raw = raw;
    it->p = body;
    it->end = body + n;
    it->line = line;
    it->col = col;
    it->spec_depth = spec_depth;
}

static void adv(code_fstr_iter *it)
{
    char c = *it->p++;
    if (c == '\n' || (c == '\r' && !(it->p < it->end && *it->p == '\n'))) {
        it->line++;
        it->col = 1;
    } else {
        it->col++;
    }
}

static int ferr(code_fstr_iter *it, code_error *err, const char *msg)
{
    return code_error_set(err, "SyntaxError", it->line, it->col, "f-string: %s", msg);
}

static int field(code_fstr_iter *it, code_fstr_part *part, code_error *err)
{
    adv(it);                     /* '{' */
    part->is_expr = true;
    part->s = it->p;
    part->line = it->line;
    part->col = it->col;
    int depth = 0;
    const char *stop = NULL;
    for (;;) {
        if (it->p >= it->end)
            return ferr(it, err, "expecting '}'");
        char c = *it->p, c1 = it->p + 1 < it->end ? it->p[1] : 0;
        if (c == '(' || c == '[' || c == '{') {
            depth++;
        } else if (c == ')' || c == ']' || c == '}') {
            if (depth == 0) {
                if (c != '}')
                    return code_error_set(err, "SyntaxError", it->line, it->col,
                                          "f-string: unmatched '%c'", c);
                break;
            }
            depth--;
        } else if (c == '\'' || c == '"') {
            bool triple = it->end - it->p >= 3 && c1 == c && it->p[2] == c;
            int k = triple ? 3 : 1;
            for (int i = 0; i < k; i++)
                adv(it);
            for (;;) {
                if (it->p >= it->end)
                    return ferr(it, err, "unterminated string");
                if (*it->p == c &&
                    (!triple || (it->end - it->p >= 3 && it->p[1] == c && it->p[2] == c)))
                    break;
                if (*it->p == '\\')
                    return code_error_set(err, "SyntaxError", it->line, it->col,
                                          "f-string expression part cannot include a backslash");
                adv(it);
            }
            for (int i = 0; i < k; i++)
                adv(it);
            continue;
        } else if (c == '\\') {
            return code_error_set(err, "SyntaxError", it->line, it->col,
                                  "f-string expression part cannot include a backslash");
        } else if (c == '#') {
            return code_error_set(err, "SyntaxError", it->line, it->col,
                                  "f-string expression part cannot include '#'");
        } else if (depth == 0 && c == '!' && c1 != '=') {
            break;
        } else if (depth == 0 && c == ':') {
            break;
        } else if (depth == 0 && c == '=' && c1 != '=' && it->p > part->s &&
                   !strchr("=!<>", it->p[-1])) {
            stop = it->p;
            adv(it);
            while (it->p < it->end && (*it->p == ' ' || *it->p == '\t' || *it->p == '\n'))
                adv(it);
            part->debug = true;
            part->debug_len = (size_t)(it->p - part->s);
            break;
        }
        adv(it);
    }
    if (!stop)
        stop = it->p;
    part->len = (size_t)(stop - part->s);
    bool blank = true;
    for (size_t i = 0; i < part->len; i++)
        if (!strchr(" \t\r\n\f", part->s[i]))
            blank = false;
    if (blank)
        return ferr(it, err, "empty expression not allowed");
    if (it->p < it->end && *it->p == '!') {
        adv(it);
        char cv = it->p < it->end ? *it->p : 0;
        if (!cv || !strchr("sra", cv) || it->p + 1 >= it->end ||
            (it->p[1] != ':' && it->p[1] != '}'))
            return ferr(it, err, "invalid conversion character: expected 's', 'r', or 'a'");
        part->conv = cv;
        adv(it);
    }
    if (it->p < it->end && *it->p == ':') {
        adv(it);
        part->has_spec = true;
        part->spec = it->p;
        part->spec_line = it->line;
        part->spec_col = it->col;
        int braces = 0;
        for (;;) {
            if (it->p >= it->end)
                return ferr(it, err, "expecting '}'");
            if (*it->p == '{')
                braces++;
            else if (*it->p == '}' && braces-- == 0)
                break;
            adv(it);
        }
        part->spec_len = (size_t)(it->p - part->spec);
    }
    if (it->p >= it->end || *it->p != '}')
        return ferr(it, err, "expecting '}'");
    adv(it);
    return 1;
}

int code_fstr_next(code_fstr_iter *it, code_fstr_part *part, code_error *err)
{
    memset(part, 0, sizeof(*part));
    if (it->p >= it->end)
        return 0;
    if (*it->p == '{' && !(it->p + 1 < it->end && it->p[1] == '{')) {
        if (it->spec_depth >= 2)
            return ferr(it, err, "expressions nested too deeply");
        return field(it, part, err);
    }
    part->s = it->p;
    part->line = it->line;
    part->col = it->col;
    while (it->p < it->end) {
        char c = *it->p, c1 = it->p + 1 < it->end ? it->p[1] : 0;
        if ((c == '{' || c == '}') && c1 == c) {
            adv(it);
            adv(it);
            continue;
        }
        if (c == '{')
            break;
        if (c == '}')
            return ferr(it, err, "single '}' is not allowed");
        if (c == '\\' && c1) {
            /* an escape's second character is never a brace that counts,
             * and \N{...} holds braces of its own */
            adv(it);
            if (c1 == 'N' && !it->raw && it->p + 1 < it->end && it->p[1] == '{') {
                while (it->p < it->end && *it->p != '}')
                    adv(it);
                if (it->p < it->end)
                    adv(it);
                continue;
            }
            if (it->p < it->end && *it->p != '{' && *it->p != '}')
                adv(it);
            continue;
        }
        adv(it);
    }
    part->len = (size_t)(it->p - part->s);
    return 1;
}
