/* The tokenizer: lines, indentation, names, operators and the token loop.
 * Numbers are in code_lex_num.c, string bodies in code_lex_str.c. */
#include "code/code_lex_int.h"

#include <stdlib.h>
#include <string.h>

static const char *const tok_names[] = {
#define CODE_TOK_NAME(n, s) s,
    CODE_TOKENS(CODE_TOK_NAME)
#undef CODE_TOK_NAME
};

static const unsigned char tok_lens[] = {
#define CODE_TOK_LEN(n, s) sizeof(s) - 1,
    CODE_TOKENS(CODE_TOK_LEN)
#undef CODE_TOK_LEN
};

const char *code_tok_name(code_tok_kind k)
{
    return k < CODE_T__COUNT ? tok_names[k] : "?";
}

static int syntax(code_lexer *lx, const char *at, const char *msg)
{
    return code_error_set(lx->err, "SyntaxError", lx->line, col_of(lx, at), "%s", msg);
}

/* Well-formed UTF-8 (no overlongs, no surrogates), no NUL bytes. */
static int check_source(const char *s, size_t n, code_error *err)
{
    const unsigned char *p = (const unsigned char *)s, *e = p + n;
    int line = 1;
    while (p < e) {
        unsigned c = *p;
        if (c == 0)
            return code_error_set(err, "SyntaxError", line, 0,
                                  "source code cannot contain null bytes");
        if (c == '\n')
            line++;
        if (c < 0x80) {
            p++;
            continue;
        }
        int k = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC2 ? 1 : 0;
        if (k == 0 || c > 0xF4 || e - p <= k)
            goto bad;
        unsigned cp = c & (0x3F >> k);
        for (int i = 1; i <= k; i++) {
            if ((p[i] & 0xC0) != 0x80)
                goto bad;
            cp = cp << 6 | (p[i] & 0x3F);
        }
        if ((k == 2 && cp < 0x800) || (k == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            goto bad;
        p += k + 1;
    }
    return 0;
bad:
    return code_error_set(err, "SyntaxError", line, 0,
                          "(unicode error) source is not valid UTF-8");
}

static int init_common(code_lexer *lx, const char *src, size_t n, code_arena *a,
                       code_error *err, int max_nesting)
{
    memset(lx, 0, sizeof(*lx));
    lx->src = lx->p = lx->line_start = src;
    lx->end = src + n;
    lx->line = 1;
    lx->arena = a;
    lx->err = err;
    /* the bracket stack is allocated whole: past 65536 open brackets the
     * parser's C-stack guard has long stopped anything real */
    lx->max_paren = max_nesting <= 0 ? 200 : max_nesting < 65536 ? max_nesting : 65536;
    lx->parens = code_arena_alloc(a, (size_t)lx->max_paren);
    lx->paren_lines = code_arena_alloc(a, sizeof(int) * (size_t)lx->max_paren);
    if (!lx->parens || !lx->paren_lines)
        return code_error_set(err, "MemoryError", 0, 0, "memory limit exceeded while parsing");
    return 0;
}

int code_lex_init(code_lexer *lx, const char *src, size_t n, code_arena *a, code_error *err,
                  int max_nesting)
{
    if (check_source(src, n, err))
        return -1;
    if (init_common(lx, src, n, a, err, max_nesting))
        return -1;
    if (n >= 3 && memcmp(src, "\xEF\xBB\xBF", 3) == 0)
        lx->p = lx->line_start = src + 3;
    lx->at_bol = true;
    return 0;
}

int code_lex_init_sub(code_lexer *lx, const char *src, size_t n, int line, int col,
                      code_arena *a, code_error *err, int max_nesting)
{
    if (init_common(lx, src, n, a, err, max_nesting))
        return -1;
    lx->line = line;
    lx->line_start = src - (col - 1);
    lx->sub = true;
    return 0;
}

static bool is_newline(char c)
{
    return c == '\n' || c == '\r';
}

/* Past one line end ("\n", "\r\n" or "\r") at lx->p. */
static void eat_newline(code_lexer *lx)
{
    if (lx->p[0] == '\r' && lx->p + 1 < lx->end && lx->p[1] == '\n')
        lx->p++;
    lx->p++;
    lx->line++;
    lx->line_start = lx->p;
}

/* Non-ASCII code points that are surely no identifier character (there is
 * no full Unicode table here; letters of every script pass): 1 for those
 * CPython calls non-printable (controls, spaces, format characters such as the
 * bidirectional overrides of "Trojan Source", private use, unassigned planes,
 * noncharacters), 2 for punctuation and symbols LLM-written code is known to
 * slip in (typographic quotes and dashes, currency, arrows, maths). */
static int bad_ident_cp(unsigned cp)
{
    if (cp < 0xA0 || cp == 0xA0 || cp == 0xAD || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200F) ||
        (cp >= 0x2028 && cp <= 0x202F) || (cp >= 0x205F && cp <= 0x206F) || cp == 0x3000 ||
        cp == 0xFEFF || (cp >= 0xE000 && cp <= 0xF8FF) || (cp >= 0xFFF0 && cp <= 0xFFFF) ||
        (cp >= 0x40000 && cp <= 0xE00FF) || (cp >= 0xE01F0 && cp <= 0xEFFFF) || cp >= 0xF0000 ||
        (cp & 0xFFFE) == 0xFFFE || (cp >= 0xFDD0 && cp <= 0xFDEF) || cp == 0xFEFD || cp == 0xFEFE)
        return 1;
    if ((cp >= 0xA1 && cp <= 0xBF && cp != 0xAA && cp != 0xB5 && cp != 0xB7 && cp != 0xBA) ||
        cp == 0xD7 || cp == 0xF7 || (cp >= 0x2010 && cp <= 0x2027) ||
        (cp >= 0x2030 && cp <= 0x205E && cp != 0x203F && cp != 0x2040 && cp != 0x2054) ||
        (cp >= 0x20A0 && cp <= 0x20CF) || (cp >= 0x2190 && cp <= 0x2BFF) ||
        (cp >= 0x2E80 && cp <= 0x2FFF) || (cp >= 0x3001 && cp <= 0x3003) ||
        (cp >= 0xFF01 && cp <= 0xFF0F))
        return 2;
    return 0;
}

/* The non-ASCII character at p (the source is valid UTF-8), checked. */
static int check_ident_char(code_lexer *lx, const char *p, bool start, size_t *len)
{
    const unsigned char *u = (const unsigned char *)p;
    int k = u[0] >= 0xF0 ? 3 : u[0] >= 0xE0 ? 2 : 1;
    unsigned cp = u[0] & (0x3F >> k);
    for (int i = 1; i <= k; i++)
        cp = cp << 6 | (u[i] & 0x3F);
    *len = (size_t)k + 1;
    int bad = bad_ident_cp(cp);
    if (start && (cp == 0xB7 || cp == 0x387))
        bad = 2;                 /* middle dots continue a name, never start one */
    if (bad == 1)
        return code_error_set(lx->err, "SyntaxError", lx->line, col_of(lx, p),
                              "invalid non-printable character U+%04X", cp);
    if (bad == 2)
        return code_error_set(lx->err, "SyntaxError", lx->line, col_of(lx, p),
                              "invalid character '%.*s' (U+%04X)", k + 1, p, cp);
    return 0;
}

/* At the start of a logical line: skips blank and comment-only lines, measures
 * the indentation and queues INDENT or DEDENTs (CPython's rules). */
static int indentation(code_lexer *lx)
{
    int col, alt;
    for (;;) {
        col = alt = 0;
        while (lx->p < lx->end) {
            char c = *lx->p;
            if (c == ' ') {
                col++;
                alt++;
            } else if (c == '\t') {
                col = (col / 8 + 1) * 8;
                alt++;
            } else if (c == '\f') {
                col = alt = 0;
            } else {
                break;
            }
            lx->p++;
        }
        if (lx->p >= lx->end)
            return 0;            /* the end of input dedents everything */
        if (*lx->p == '#') {
            while (lx->p < lx->end && !is_newline(*lx->p))
                lx->p++;
            if (lx->p >= lx->end)
                return 0;
        }
        if (is_newline(*lx->p)) {
            eat_newline(lx);
            continue;
        }
        break;
    }
    int top = lx->indents[lx->nindent], alttop = lx->altindents[lx->nindent];
    if (col == top) {
        if (alt != alttop)
            goto taberror;
    } else if (col > top) {
        if (lx->nindent + 1 >= CODE_MAX_INDENT)
            return lx->soft = true,
                   code_error_set(lx->err, "IndentationError", lx->line, 1,
                                  "too many levels of indentation");
        if (alt <= alttop)
            goto taberror;
        lx->nindent++;
        lx->indents[lx->nindent] = col;
        lx->altindents[lx->nindent] = alt;
        lx->pending = -1;
    } else {
        while (lx->nindent > 0 && col < lx->indents[lx->nindent]) {
            lx->pending++;
            lx->nindent--;
        }
        if (col != lx->indents[lx->nindent])
            return lx->soft = true,
                   code_error_set(lx->err, "IndentationError", lx->line, 1,
                                  "unindent does not match any outer indentation level");
        if (alt != lx->altindents[lx->nindent])
            goto taberror;
    }
    return 0;
taberror:
    lx->soft = true;
    return code_error_set(lx->err, "TabError", lx->line, 1,
                          "inconsistent use of tabs and spaces in indentation");
}

/* ---- strings ---- */

/* p at the opening quote; flags from the prefix. */
static int lex_string(code_lexer *lx, code_tok *t, uint8_t flags)
{
    char q = *lx->p;
    bool triple = lx->end - lx->p >= 3 && lx->p[1] == q && lx->p[2] == q;
    lx->p += triple ? 3 : 1;
    const char *body = lx->p;
    int body_line = lx->line, body_col = col_of(lx, body);
    for (;;) {
        if (lx->p >= lx->end)
            return code_error_set(lx->err, "SyntaxError", t->line, t->col,
                                  "unterminated %sstring literal (detected at line %d)",
                                  triple ? "triple-quoted " : "", lx->line);
        char c = *lx->p;
        if (c == '\\') {
            lx->p++;
            if (lx->p < lx->end) {
                if (is_newline(*lx->p))
                    eat_newline(lx);
                else
                    lx->p++;
            }
            continue;
        }
        if (is_newline(c)) {
            if (!triple)
                return code_error_set(lx->err, "SyntaxError", t->line, t->col,
                                      "unterminated string literal (detected at line %d)",
                                      lx->line);
            eat_newline(lx);
            continue;
        }
        if (c == q && (!triple || (lx->end - lx->p >= 3 && lx->p[1] == q && lx->p[2] == q)))
            break;
        lx->p++;
    }
    size_t n = (size_t)(lx->p - body);
    lx->p += triple ? 3 : 1;
    t->kind = CODE_T_STRING;
    t->sflags = flags;
    if (flags & CODE_STR_F) {
        t->s = body;
        t->len = n;
        t->body_line = body_line;
        t->body_col = body_col;
        return 0;
    }
    lx->decode = true;
    if (code_str_decode(body, n, flags, false, body_line, lx->arena, lx->err, &t->s, &t->len))
        return -1;
    lx->decode = false;
    return 0;
}

/* A name made only of string prefix letters, followed by a quote. */
static int string_prefix(const char *s, size_t n)
{
    if (n > 2)
        return -1;
    int flags = 0;
    for (size_t i = 0; i < n; i++) {
        char c = (char)(s[i] | 0x20);
        int f = c == 'r' ? CODE_STR_RAW : c == 'b' ? CODE_STR_BYTES : c == 'f' ? CODE_STR_F
              : c == 'u' ? 8 : -1;
        if (f < 0 || (flags & f))
            return -1;
        flags |= f;
    }
    if ((flags & 8) && n > 1)
        return -1;               /* u combines with nothing */
    if ((flags & CODE_STR_BYTES) && (flags & CODE_STR_F))
        return -1;
    return flags & 7;
}

static code_tok_kind keyword(const char *s, size_t n)
{
    if (n < 2 || n > 8)
        return CODE_T_NAME;      /* "as" .. "continue", "nonlocal" */
    for (int k = CODE_T_FALSE; k <= CODE_T_YIELD; k++) {
        const char *kw = tok_names[k];
        if (tok_lens[k] == n && kw[0] == s[0] && memcmp(kw, s, n) == 0)
            return (code_tok_kind)k;
    }
    return CODE_T_NAME;
}

/* ---- operators ---- */

static int open_bracket(code_lexer *lx, char c)
{
    if (lx->nparen >= lx->max_paren)
        return syntax(lx, lx->p, "too many nested parentheses");
    lx->parens[lx->nparen] = c;
    lx->paren_lines[lx->nparen] = lx->line;
    lx->nparen++;
    return 0;
}

static int close_bracket(code_lexer *lx, char c)
{
    char open = c == ')' ? '(' : c == ']' ? '[' : '{';
    if (lx->nparen == 0)
        return code_error_set(lx->err, "SyntaxError", lx->line, col_of(lx, lx->p),
                              "unmatched '%c'", c);
    char o = lx->parens[lx->nparen - 1];
    if (o != open) {
        int ol = lx->paren_lines[lx->nparen - 1];
        if (ol != lx->line)
            return code_error_set(lx->err, "SyntaxError", lx->line, col_of(lx, lx->p),
                                  "closing parenthesis '%c' does not match opening "
                                  "parenthesis '%c' on line %d", c, o, ol);
        return code_error_set(lx->err, "SyntaxError", lx->line, col_of(lx, lx->p),
                              "closing parenthesis '%c' does not match opening "
                              "parenthesis '%c'", c, o);
    }
    lx->nparen--;
    return 0;
}

static int lex_operator(code_lexer *lx, code_tok *t)
{
    const char *p = lx->p;
    char c = p[0];
    char c1 = p + 1 < lx->end ? p[1] : 0, c2 = p + 2 < lx->end ? p[2] : 0;
    code_tok_kind k;
    int n = 1;
#define TWO(ch, k2, k1) (c1 == (ch) ? (n = 2, (k2)) : (k1))
    switch (c) {
    case '(': case '[': case '{':
        if (open_bracket(lx, c))
            return -1;
        k = c == '(' ? CODE_T_LPAR : c == '[' ? CODE_T_LSQB : CODE_T_LBRACE;
        break;
    case ')': case ']': case '}':
        if (close_bracket(lx, c))
            return -1;
        k = c == ')' ? CODE_T_RPAR : c == ']' ? CODE_T_RSQB : CODE_T_RBRACE;
        break;
    case ':': k = TWO('=', CODE_T_WALRUS, CODE_T_COLON); break;
    case ',': k = CODE_T_COMMA; break;
    case ';': k = CODE_T_SEMI; break;
    case '.':
        if (c1 == '.' && c2 == '.') {
            k = CODE_T_ELLIPSIS;
            n = 3;
        } else {
            k = CODE_T_DOT;
        }
        break;
    case '+': k = TWO('=', CODE_T_PLUSEQ, CODE_T_PLUS); break;
    case '-':
        k = c1 == '>' ? (n = 2, CODE_T_ARROW) : TWO('=', CODE_T_MINUSEQ, CODE_T_MINUS);
        break;
    case '*':
        if (c1 == '*') {
            k = c2 == '=' ? (n = 3, CODE_T_DSTAREQ) : (n = 2, CODE_T_DSTAR);
        } else {
            k = TWO('=', CODE_T_STAREQ, CODE_T_STAR);
        }
        break;
    case '/':
        if (c1 == '/') {
            k = c2 == '=' ? (n = 3, CODE_T_DSLASHEQ) : (n = 2, CODE_T_DSLASH);
        } else {
            k = TWO('=', CODE_T_SLASHEQ, CODE_T_SLASH);
        }
        break;
    case '%': k = TWO('=', CODE_T_PERCENTEQ, CODE_T_PERCENT); break;
    case '@': k = TWO('=', CODE_T_ATEQ, CODE_T_AT); break;
    case '&': k = TWO('=', CODE_T_AMPEQ, CODE_T_AMP); break;
    case '|': k = TWO('=', CODE_T_PIPEEQ, CODE_T_PIPE); break;
    case '^': k = TWO('=', CODE_T_CARETEQ, CODE_T_CARET); break;
    case '~': k = CODE_T_TILDE; break;
    case '=': k = TWO('=', CODE_T_EQ, CODE_T_ASSIGN); break;
    case '!':
        k = c1 == '=' ? (n = 2, CODE_T_NE) : CODE_T_BADCHAR;
        break;
    case '$': case '?': case '`':
        k = CODE_T_BADCHAR;     /* the parser's "invalid syntax", as in CPython */
        break;
    case '<':
        if (c1 == '<') {
            k = c2 == '=' ? (n = 3, CODE_T_LSHIFTEQ) : (n = 2, CODE_T_LSHIFT);
        } else {
            k = TWO('=', CODE_T_LE, CODE_T_LT);
        }
        break;
    case '>':
        if (c1 == '>') {
            k = c2 == '=' ? (n = 3, CODE_T_RSHIFTEQ) : (n = 2, CODE_T_RSHIFT);
        } else {
            k = TWO('=', CODE_T_GE, CODE_T_GT);
        }
        break;
    default:
        if ((unsigned char)c < 0x20 || (unsigned char)c == 0x7F)
            return code_error_set(lx->err, "SyntaxError", lx->line, col_of(lx, p),
                                  "invalid non-printable character U+%04X", (unsigned char)c);
        return code_error_set(lx->err, "SyntaxError", lx->line, col_of(lx, p),
                              "invalid character '%c' (U+%04X)", c, (unsigned char)c);
    }
#undef TWO
    t->kind = k;
    lx->p += n;
    return 0;
}

/* ---- the token loop ---- */

static int lex_next(code_lexer *lx, code_tok *t)
{
    memset(t, 0, sizeof(*t));
    for (;;) {
        if (lx->pending > 0 || lx->pending < 0) {
            t->kind = lx->pending > 0 ? CODE_T_DEDENT : CODE_T_INDENT;
            lx->pending += lx->pending > 0 ? -1 : 1;
            t->line = lx->line;
            t->col = col_of(lx, lx->p);
            if (lx->p >= lx->end && lx->p > lx->src && is_newline(lx->p[-1]) && lx->line > 1) {
                t->line = lx->line - 1;    /* DEDENTs at the end: as above */
                t->col = 0;
            }
            return 0;
        }
        if (lx->at_bol) {
            lx->at_bol = false;
            if (indentation(lx))
                return -1;
            continue;
        }
        while (lx->p < lx->end && (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\f'))
            lx->p++;
        t->line = lx->line;
        t->col = col_of(lx, lx->p);
        if (lx->p >= lx->end) {
            /* CPython's end of input is on the last line, not after its newline */
            if (lx->p > lx->src && is_newline(lx->p[-1]) && lx->line > 1 && !lx->sub) {
                t->line = lx->line - 1;
                t->col = 0;
            }
            if (lx->nparen > 0) {
                lx->unclosed_line = lx->paren_lines[lx->nparen - 1];
                return code_error_set(lx->err, "SyntaxError", lx->unclosed_line, 0,
                                      "'%c' was never closed", lx->parens[lx->nparen - 1]);
            }
            if (lx->line_has_tokens && !lx->sub) {
                lx->line_has_tokens = false;
                t->kind = CODE_T_NEWLINE;
                return 0;
            }
            if (lx->nindent > 0) {
                lx->pending = lx->nindent;
                lx->nindent = 0;
                continue;
            }
            lx->done = true;
            t->kind = CODE_T_END;
            return 0;
        }
        char c = *lx->p;
        if (c == '#') {
            if (lx->sub)
                return syntax(lx, lx->p, "f-string expression part cannot include '#'");
            while (lx->p < lx->end && !is_newline(*lx->p))
                lx->p++;
            continue;
        }
        if (is_newline(c)) {
            eat_newline(lx);
            if (lx->nparen > 0 || lx->sub)
                continue;
            lx->at_bol = true;
            if (lx->line_has_tokens) {
                lx->line_has_tokens = false;
                t->kind = CODE_T_NEWLINE;
                return 0;
            }
            continue;
        }
        if (c == '\\') {
            if (lx->sub)
                return syntax(lx, lx->p, "f-string expression part cannot include a backslash");
            const char *b = lx->p++;
            lx->soft = true;
            if (lx->p >= lx->end)
                return syntax(lx, b, "unexpected EOF while parsing");
            if (!is_newline(*lx->p))
                return syntax(lx, b, "unexpected character after line continuation character");
            eat_newline(lx);
            if (lx->p >= lx->end)    /* as CPython: a continuation needs a next line */
                return syntax(lx, b, "unexpected EOF while parsing");
            lx->soft = false;
            continue;
        }
        lx->line_has_tokens = true;
        if (is_id_start((unsigned char)c)) {
            const char *s = lx->p;
            while (lx->p < lx->end && is_id_char((unsigned char)*lx->p)) {
                size_t cl = 1;
                if ((unsigned char)*lx->p >= 0x80 && check_ident_char(lx, lx->p, lx->p == s, &cl))
                    return -1;
                lx->p += cl;
            }
            size_t n = (size_t)(lx->p - s);
            if (lx->p < lx->end && (*lx->p == '\'' || *lx->p == '"')) {
                int flags = string_prefix(s, n);
                if (flags >= 0)
                    return lex_string(lx, t, (uint8_t)flags);
            }
            t->kind = keyword(s, n);
            if (t->kind == CODE_T_NAME) {
                t->s = code_arena_strndup(lx->arena, s, n);
                if (!t->s)
                    return code_error_set(lx->err, "MemoryError", lx->line, 0,
                                          "memory limit exceeded while parsing");
                t->len = n;
            }
            return 0;
        }
        if ((c >= '0' && c <= '9') ||
            (c == '.' && lx->p + 1 < lx->end && lx->p[1] >= '0' && lx->p[1] <= '9'))
            return code_lex_number(lx, t);
        if (c == '\'' || c == '"')
            return lex_string(lx, t, 0);
        return lex_operator(lx, t);
    }
}

int code_lex_next(code_lexer *lx, code_tok *t)
{
    if (lx->failed)
        return -1;
    if (lex_next(lx, t)) {
        lx->failed = true;
        return -1;
    }
    return 0;
}
