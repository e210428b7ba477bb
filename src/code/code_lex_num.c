/* The tokenizer: numeric literals. Integers are kept as their digits (no
 * prefix, no underscores) and base, for the bignum layer; floats become
 * doubles; complex literals are refused. */
#include "code/code_lex_int.h"

#include <stdlib.h>
#include <string.h>

static int digit_value(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'Z')
        return c - 'A' + 10;
    return 99;
}

/* Digits of a base with single underscores between them (and, after a base
 * prefix, before the first), appended to buf. Returns the count, -1 on error. */
static int read_digits(code_lexer *lx, int base, bool lead_us, char *buf, size_t *bn,
                       const char *kind)
{
    int count = 0;
    for (;;) {
        const char *q = lx->p;
        if (q < lx->end && *q == '_' && (count > 0 || lead_us)) {
            if (q + 1 < lx->end && digit_value((unsigned char)q[1]) < (base < 10 ? 10 : base)) {
                lx->p++;
                continue;
            }
            return code_error_set(lx->err, "SyntaxError", lx->line, col_of(lx, q),
                                  "invalid %s literal", kind);
        }
        if (q >= lx->end)
            break;
        int v = digit_value((unsigned char)*q);
        if (base < 10 && v < 10 && v >= base)
            return code_error_set(lx->err, "SyntaxError", lx->line, col_of(lx, q),
                                  "invalid digit '%c' in %s literal", *q, kind);
        if (v >= base)
            break;
        buf[(*bn)++] = *q;
        lx->p++;
        count++;
        lead_us = false;
        if (q + 1 < lx->end && q[1] == '_' && !(q + 2 < lx->end &&
                                                digit_value((unsigned char)q[2]) < base))
            return code_error_set(lx->err, "SyntaxError", lx->line, col_of(lx, q + 1),
                                  "invalid %s literal", kind);
    }
    return count;
}

/* CPython allows a number to run into these keywords ("1if x else 2"). */
static int end_of_number(code_lexer *lx, const char *kind)
{
    if (lx->p >= lx->end || !is_id_char((unsigned char)*lx->p))
        return 0;
    static const char *const kws[] = {"and", "else", "for", "if", "in", "is", "not", "or"};
    for (size_t i = 0; i < sizeof(kws) / sizeof(kws[0]); i++) {
        size_t l = strlen(kws[i]);
        if ((size_t)(lx->end - lx->p) >= l && memcmp(lx->p, kws[i], l) == 0 &&
            (lx->p + l >= lx->end || !is_id_char((unsigned char)lx->p[l])))
            return 0;
    }
    return code_error_set(lx->err, "SyntaxError", lx->line, col_of(lx, lx->p),
                          "invalid %s literal", kind);
}

static int imaginary(code_lexer *lx)
{
    if (lx->p < lx->end && (*lx->p == 'j' || *lx->p == 'J'))
        return code_error_set(lx->err, "NotImplementedError", lx->line, col_of(lx, lx->p),
                              "complex numbers (the 'j' suffix) are not supported");
    return 0;
}

int code_lex_number(code_lexer *lx, code_tok *t)
{
    const char *start = lx->p;
    size_t cap = 0;
    for (const char *q = start; q < lx->end && (is_id_char((unsigned char)*q) || *q == '.' ||
                                               *q == '+' || *q == '-'); q++)
        cap++;
    char *buf = code_arena_alloc(lx->arena, cap + 2);
    if (!buf)
        return code_error_set(lx->err, "MemoryError", lx->line, 0,
                              "memory limit exceeded while parsing");
    size_t bn = 0;
    if (start[0] == '0' && start + 1 < lx->end && strchr("xXoObB", start[1]) && start[1]) {
        char k = (char)(start[1] | 0x20);
        int base = k == 'x' ? 16 : k == 'o' ? 8 : 2;
        const char *kind = k == 'x' ? "hexadecimal" : k == 'o' ? "octal" : "binary";
        lx->p += 2;
        int nd = read_digits(lx, base, true, buf, &bn, kind);
        if (nd < 0)
            return -1;
        if (nd == 0)
            return code_error_set(lx->err, "SyntaxError", lx->line, col_of(lx, start),
                                  "invalid %s literal", kind);
        if (imaginary(lx) || end_of_number(lx, kind))
            return -1;
        t->kind = CODE_T_INT;
        t->base = (uint8_t)base;
        t->s = buf;
        t->len = bn;
        return 0;
    }
    int nint = 0;
    if (*lx->p != '.') {
        nint = read_digits(lx, 10, false, buf, &bn, "decimal");
        if (nint < 0)
            return -1;
    }
    size_t int_len = bn;
    bool is_float = false;
    if (lx->p < lx->end && *lx->p == '.') {
        is_float = true;
        buf[bn++] = '.';
        lx->p++;
        if (lx->p < lx->end && *lx->p >= '0' && *lx->p <= '9' &&
            read_digits(lx, 10, false, buf, &bn, "decimal") < 0)
            return -1;
    }
    if (lx->p < lx->end && (*lx->p == 'e' || *lx->p == 'E')) {
        const char *e = lx->p;
        const char *d = e + 1;
        if (d < lx->end && (*d == '+' || *d == '-'))
            d++;
        if (d < lx->end && *d >= '0' && *d <= '9') {
            is_float = true;
            buf[bn++] = 'e';
            if (*(e + 1) == '+' || *(e + 1) == '-')
                buf[bn++] = *(e + 1);
            lx->p = d;
            if (read_digits(lx, 10, false, buf, &bn, "decimal") < 0)
                return -1;
        } else {
            return code_error_set(lx->err, "SyntaxError", lx->line, col_of(lx, e),
                                  "invalid decimal literal");
        }
    }
    if (imaginary(lx) || end_of_number(lx, "decimal"))
        return -1;
    buf[bn] = '\0';
    t->s = buf;
    t->len = bn;
    if (is_float) {
        t->kind = CODE_T_FLOAT;
        t->f = strtod(buf, NULL);   /* the C locale: code mode never calls setlocale */
        return 0;
    }
    for (size_t i = 0; i < int_len; i++)
        if (buf[0] == '0' && buf[i] != '0')
            return code_error_set(lx->err, "SyntaxError", t->line, t->col,
                                  "leading zeros in decimal integer literals are not "
                                  "permitted; use an 0o prefix for octal integers");
    t->kind = CODE_T_INT;
    t->base = 10;
    return 0;
}
