/* The re module over PCRE2: compiling (Python's syntax translated where it
 * differs), the Pattern and Match types, search/match/fullmatch.
 *
 * Patterns come from untrusted code, so every match runs under PCRE2's
 * match, depth and heap limits; hitting one raises RuntimeError "regular
 * expression too costly" (CPython has no such limit: it would run for ever).
 * PCRE2 allocates from the run's heap, so its memory counts against the run.
 * Indices are in code points for str subjects, as in CPython.
 *
 * Known differences: re.error messages are sre's for the common mistakes
 * (unbalanced brackets, nothing to repeat, bad escapes), PCRE2's otherwise,
 * and positions may differ; flags are plain ints (repr 2, not
 * re.IGNORECASE); inline flags are not reflected in Pattern.flags. */
#include <stdlib.h>
#include <string.h>

#include "code/code_re.h"

/* Backtracking steps, nested backtracking depth and KiB of heap for frames
 * per match call: generous for real patterns, a few hundred ms at most for
 * pathological ones. */
#define RE_MATCH_LIMIT 5000000u
#define RE_DEPTH_LIMIT 100000u
#define RE_HEAP_LIMIT_KIB 65536u

/* ---- PCRE2 on the run's heap ------------------------------------------------ */

/* A 16-byte header keeps the size code_heap_free needs and the alignment. */
static void *re_malloc(PCRE2_SIZE n, void *ud)
{
    code_vm *vm = ud;
    size_t *p = code_heap_alloc(vm, n + 16);
    if (!p)
        return NULL;
    p[0] = n + 16;
    return (char *)p + 16;
}

static void re_free(void *ptr, void *ud)
{
    if (!ptr)
        return;
    size_t *p = (size_t *)((char *)ptr - 16);
    code_heap_free(ud, p, p[0]);
}

int code_re_ctx_open(code_vm *vm, re_pattern *p, re_ctx *x)
{
    memset(x, 0, sizeof *x);
    x->vm = vm;
    if (!(x->g = pcre2_general_context_create(re_malloc, re_free, vm)) ||
        !(x->m = pcre2_match_context_create(x->g)) ||
        (p && !(x->md = pcre2_match_data_create_from_pattern(p->code, x->g)))) {
        code_re_ctx_close(x);
        if (!vm->exc)
            code_raise_nomem(vm);
        return -1;
    }
    pcre2_set_match_limit(x->m, RE_MATCH_LIMIT);
    pcre2_set_depth_limit(x->m, RE_DEPTH_LIMIT);
    pcre2_set_heap_limit(x->m, RE_HEAP_LIMIT_KIB);
    return 0;
}

void code_re_ctx_close(re_ctx *x)
{
    pcre2_match_data_free(x->md);
    pcre2_match_context_free(x->m);
    pcre2_general_context_free(x->g);
    x->md = NULL;
    x->m = NULL;
    x->g = NULL;
}

int code_re_exec(re_ctx *x, re_pattern *p, re_subject *sub, size_t bstart, size_t bend, uint32_t opts)
{
    int rc = pcre2_match(p->code, (PCRE2_SPTR)sub->s, bend, bstart,
                         opts | (p->is_bytes ? 0 : PCRE2_NO_UTF_CHECK), x->md, x->m);
    if (rc >= 0)
        return 1;
    if (rc == PCRE2_ERROR_NOMATCH)
        return 0;
    if (x->vm->exc)              /* our allocator raised MemoryError */
        return -1;
    if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
        rc == PCRE2_ERROR_HEAPLIMIT)
        return code_raise_i(x->vm, &code_exc_RuntimeError, "regular expression too costly");
    if (rc == PCRE2_ERROR_NOMEMORY) {
        code_raise_nomem(x->vm);
        return -1;
    }
    PCRE2_UCHAR msg[160];
    pcre2_get_error_message(rc, msg, sizeof msg);
    return code_raise_i(x->vm, &code_exc_RuntimeError, "regular expression failed: %s",
                        (const char *)msg);
}

/* ---- subjects and offsets ---------------------------------------------------------- */

int code_re_subject_of(code_vm *vm, re_pattern *p, cv string, re_subject *sub)
{
    if (cv_is(string, &code_type_str)) {
        if (p->is_bytes)
            return code_raise_i(vm, &code_exc_TypeError,
                                "cannot use a bytes pattern on a string-like object");
        const code_str *s = (const code_str *)cv_obj(string);
        *sub = (re_subject){ s->s, s->len, s->ascii, 0, 0 };
        return 0;
    }
    if (cv_is(string, &code_type_bytes)) {
        if (!p->is_bytes)
            return code_raise_i(vm, &code_exc_TypeError,
                                "cannot use a string pattern on a bytes-like object");
        const code_bytes *b = (const code_bytes *)cv_obj(string);
        *sub = (re_subject){ (const char *)b->s, b->len, true, 0, 0 };
        return 0;
    }
    return code_raise_i(vm, &code_exc_TypeError, "expected string or bytes-like object, got '%s'",
                        code_type_name(string));
}

static bool cont_byte(const re_subject *sub, size_t b)
{
    return b < sub->len && ((unsigned char)sub->s[b] & 0xC0) == 0x80;
}

size_t code_re_char_of(re_subject *sub, size_t b)
{
    if (sub->ascii)
        return b;
    while (sub->b < b) {
        sub->b++;
        while (cont_byte(sub, sub->b))
            sub->b++;
        sub->c++;
    }
    while (sub->b > b) {
        sub->b--;
        while (sub->b > 0 && cont_byte(sub, sub->b))
            sub->b--;
        sub->c--;
    }
    return sub->c;
}

size_t code_re_byte_of(re_subject *sub, size_t c)
{
    if (sub->ascii)
        return c < sub->len ? c : sub->len;
    while (sub->c < c && sub->b < sub->len) {
        sub->b++;
        while (cont_byte(sub, sub->b))
            sub->b++;
        sub->c++;
    }
    while (sub->c > c) {
        sub->b--;
        while (sub->b > 0 && cont_byte(sub, sub->b))
            sub->b--;
        sub->c--;
    }
    return sub->b;
}

int code_re_bounds(code_vm *vm, re_subject *sub, cv pos, cv endpos, size_t *bstart, size_t *bend,
              ssize_t *cpos, ssize_t *cend)
{
    ssize_t n = (ssize_t)code_re_char_of(sub, sub->len), p = 0, e = n;
    if (pos && code_as_index(vm, pos, &p) < 0)
        return -1;
    if (endpos && code_as_index(vm, endpos, &e) < 0)
        return -1;
    p = p < 0 ? 0 : p > n ? n : p;
    e = e < 0 ? 0 : e > n ? n : e;
    *cpos = p;
    *cend = e;
    *bstart = code_re_byte_of(sub, (size_t)p);
    *bend = code_re_byte_of(sub, (size_t)e);
    return 0;
}

cv code_re_slice(code_vm *vm, bool is_bytes, const char *s, size_t b0, size_t b1)
{
    return is_bytes ? code_bytes_new(vm, s + b0, b1 - b0) : code_str_new(vm, s + b0, b1 - b0);
}

/* ---- Pattern ------------------------------------------------------------------------- */

static void pattern_dealloc(code_vm *vm, code_obj *o)
{
    re_pattern *p = (re_pattern *)o;
    pcre2_code_free(p->code);    /* frees through the run's heap (its memctl) */
    code_decref(vm, p->pattern);
    code_decref(vm, p->groupindex);
}

static const struct { int flag; const char *name; } flag_names[] = {
    { RE_I, "re.IGNORECASE" }, { RE_L, "re.LOCALE" }, { RE_M, "re.MULTILINE" },
    { RE_S, "re.DOTALL" }, { RE_X, "re.VERBOSE" }, { RE_DEBUG, "re.DEBUG" }, { RE_A, "re.ASCII" },
};

static cv pattern_repr(code_vm *vm, cv self)
{
    re_pattern *p = (re_pattern *)cv_obj(self);
    code_sb b;
    code_sb_init(&b, vm);
    code_sb_addc(&b, "re.compile(");
    code_sb_repr(&b, p->pattern);
    bool first = true;
    for (size_t i = 0; i < sizeof flag_names / sizeof flag_names[0]; i++) {
        if (!(p->flags & flag_names[i].flag))
            continue;
        code_sb_addc(&b, first ? ", " : "|");
        code_sb_addc(&b, flag_names[i].name);
        first = false;
    }
    code_sb_addc(&b, ")");
    return code_sb_finish(&b);
}

static cv pattern_getattr(code_vm *vm, cv self, const char *name)
{
    re_pattern *p = (re_pattern *)cv_obj(self);
    if (!strcmp(name, "pattern"))
        return code_incref(p->pattern);
    if (!strcmp(name, "flags"))
        return code_int_from_i64(vm, p->flags);
    if (!strcmp(name, "groups"))
        return code_int_from_i64(vm, p->ngroups);
    if (!strcmp(name, "groupindex"))
        return code_incref(p->groupindex);
    return CV_NULL;
}

/* Python's syntax where PCRE2's differs: \Z is \z, \uXXXX and \UXXXXXXXX are
 * \x{...}, {,n} is {0,n}, '[' in a class is a literal (PCRE2 would read
 * [:alpha:]), inline flags a, u and L (which PCRE2 lacks) are taken out (a
 * sets *ascii). Classes are tracked so that nothing inside
 * them is rewritten. */
static int translate(code_vm *vm, const char *s, size_t n, bool is_bytes, code_sb *out,
                     bool *ascii)
{
    bool in_class = false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!in_class && c == '(' && i + 2 < n && s[i + 1] == '?' && strchr("aiLmsux-", s[i + 2]) &&
            s[i + 2]) {
            size_t j = i + 2;
            while (j < n && s[j] && strchr("aiLmsux-", s[j]))
                j++;
            if (j < n && (s[j] == ')' || s[j] == ':')) {
                code_sb b2;
                code_sb_init(&b2, vm);
                for (size_t k = i + 2; k < j; k++) {
                    if (s[k] == 'a')
                        *ascii = true;
                    if (s[k] != 'a' && s[k] != 'u' && s[k] != 'L')
                        code_sb_add(&b2, s + k, 1);
                }
                if (b2.len > 0 || s[j] == ':') {
                    code_sb_addc(out, "(?");
                    code_sb_add(out, b2.p, b2.len);
                    code_sb_add(out, s + j, 1);
                }
                code_sb_free(&b2);
                i = j;
                continue;
            }
        }
        if (c == '\\' && i + 1 < n) {
            char e = s[i + 1];
            if (e == 'Z' && !in_class) {
                code_sb_addc(out, "\\z");
                i++;
                continue;
            }
            if ((e == 'u' || e == 'U') && !is_bytes) {
                size_t k = e == 'u' ? 4 : 8, j = 0;
                while (j < k && i + 2 + j < n && strchr("0123456789abcdefABCDEF", s[i + 2 + j]) &&
                       s[i + 2 + j])
                    j++;
                if (j < k)
                    return code_raise_i(vm, &code_exc_re_error,
                                        "incomplete escape \\%c%.*s at position %zu", e, (int)j,
                                        s + i + 2, i);
                code_sb_printf(out, "\\x{%.*s}", (int)k, s + i + 2);
                i += 1 + k;
                continue;
            }
            code_sb_add(out, s + i, 2);
            i++;
            continue;
        }
        if (in_class) {
            if (c == ']')
                in_class = false;
            if (c == '[')        /* literal in Python's classes: no POSIX [:alpha:] */
                code_sb_addc(out, "\\[");
            else
                code_sb_add(out, &c, 1);
            continue;
        }
        if (c == '[') {
            in_class = true;
            code_sb_add(out, &c, 1);
            /* a ']' first in the class (after an optional '^') is literal */
            if (i + 1 < n && s[i + 1] == '^') {
                code_sb_add(out, "^", 1);
                i++;
            }
            if (i + 1 < n && s[i + 1] == ']') {
                code_sb_addc(out, "\\]");
                i++;
            }
            continue;
        }
        if (c == '{' && i + 1 < n && s[i + 1] == ',') {
            size_t j = i + 2;
            while (j < n && s[j] >= '0' && s[j] <= '9')
                j++;
            if (j > i + 2 && j < n && s[j] == '}') {
                code_sb_addc(out, "{0");
                continue;
            }
        }
        code_sb_add(out, &c, 1);
    }
    return out->failed ? -1 : 0;
}

/* Position (in characters) of a byte offset of the pattern. */
static size_t char_pos(const char *s, size_t off, bool is_bytes)
{
    size_t pos = 0;
    for (size_t k = 0; k < off; k++)
        if (is_bytes || ((unsigned char)s[k] & 0xC0) != 0x80)
            pos++;
    return pos;
}

/* Where sre would report an unbalanced bracket: the first '(' left open,
 * the first ')' closing nothing, the last '[' left open; -1 if none. */
static ssize_t bracket_pos(const char *s, size_t n, char which)
{
    ssize_t open_paren[256], unclosed_class = -1;
    size_t depth = 0;
    bool in_class = false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\\') {
            i++;
            continue;
        }
        if (in_class) {
            if (c == ']' && (ssize_t)i > unclosed_class + 1 &&
                !((ssize_t)i == unclosed_class + 2 && s[i - 1] == '^'))
                in_class = false;
            continue;
        }
        if (c == '[') {
            in_class = true;
            unclosed_class = (ssize_t)i;
        } else if (c == '(') {
            if (depth < 256)
                open_paren[depth] = (ssize_t)i;
            depth++;
        } else if (c == ')') {
            if (depth == 0 && which == ')')
                return (ssize_t)i;
            if (depth > 0)
                depth--;
        }
    }
    if (which == '[')
        return in_class ? unclosed_class : -1;
    return which == '(' && depth > 0 ? open_paren[0] : -1;
}

/* re.error with sre's words for the common mistakes, PCRE2's otherwise.
 * pos is PCRE2's offset in characters (of the translated pattern: near
 * enough to the original). */
static cv compile_error(code_vm *vm, int err, const char *src, size_t n, bool is_bytes,
                        size_t erroff, size_t pos)
{
    ssize_t b;
    switch (err) {
    case PCRE2_ERROR_MISSING_CLOSING_PARENTHESIS:
        b = bracket_pos(src, n, '(');
        return code_raise(vm, &code_exc_re_error,
                          "missing ), unterminated subpattern at position %zu",
                          b < 0 ? pos : char_pos(src, (size_t)b, is_bytes));
    case PCRE2_ERROR_UNMATCHED_CLOSING_PARENTHESIS:
        b = bracket_pos(src, n, ')');
        return code_raise(vm, &code_exc_re_error, "unbalanced parenthesis at position %zu",
                          b < 0 ? pos : char_pos(src, (size_t)b, is_bytes));
    case PCRE2_ERROR_MISSING_SQUARE_BRACKET:
        b = bracket_pos(src, n, '[');
        return code_raise(vm, &code_exc_re_error, "unterminated character set at position %zu",
                          b < 0 ? pos : char_pos(src, (size_t)b, is_bytes));
    case PCRE2_ERROR_QUANTIFIER_INVALID: {
        /* PCRE2 points at the quantifier; one after another is sre's
         * "multiple repeat" */
        bool multiple = erroff >= 1 && erroff <= n && strchr("*+?}", src[erroff - 1]) &&
                        src[erroff - 1];
        return code_raise(vm, &code_exc_re_error, "%s at position %zu",
                          multiple ? "multiple repeat" : "nothing to repeat", pos);
    }
    case PCRE2_ERROR_END_BACKSLASH:
        return code_raise(vm, &code_exc_re_error, "bad escape (end of pattern) at position %zu",
                          pos ? pos - 1 : 0);
    case PCRE2_ERROR_UNKNOWN_ESCAPE:
        /* PCRE2 points at the letter after the backslash */
        if (erroff >= 1 && erroff < n && src[erroff - 1] == '\\')
            return code_raise(vm, &code_exc_re_error, "bad escape \\%c at position %zu",
                              src[erroff], pos - 1);
        break;
    case PCRE2_ERROR_QUANTIFIER_OUT_OF_ORDER:
        /* sre points just after the '{' */
        for (b = (ssize_t)(erroff < n ? erroff : n) - 1; b > 0 && src[b] != '{'; b--)
            ;
        return code_raise(vm, &code_exc_re_error,
                          "min repeat greater than max repeat at position %zu",
                          b >= 0 && src[b] == '{' ? char_pos(src, (size_t)b + 1, is_bytes) : pos);
    case 115: /* PCRE2_ERROR_NONEXISTENT_SUBPATTERN: PCRE2 points at the name or number */
        if (erroff >= 4 && erroff < n && memcmp(src + erroff - 4, "(?P=", 4) == 0) {
            size_t e = erroff;
            while (e < n && src[e] != ')')
                e++;
            return code_raise(vm, &code_exc_re_error, "unknown group name '%.*s' at position %zu",
                              (int)(e - erroff), src + erroff, pos);
        }
        if (erroff < n && src[erroff] >= '0' && src[erroff] <= '9')
            return code_raise(vm, &code_exc_re_error, "invalid group reference %d at position %zu",
                              atoi(src + erroff), pos);
        break;
    case PCRE2_ERROR_LOOKBEHIND_NOT_FIXED_LENGTH:
        return code_raise(vm, &code_exc_re_error, "look-behind requires fixed-width pattern");
    default:
        break;
    }
    PCRE2_UCHAR msg[160];
    pcre2_get_error_message(err, msg, sizeof msg);
    return code_raise(vm, &code_exc_re_error, "%s at position %zu", (const char *)msg, pos);
}

static int build_groupindex(code_vm *vm, re_pattern *p)
{
    uint32_t count = 0, esize = 0;
    PCRE2_SPTR table = NULL;
    pcre2_pattern_info(p->code, PCRE2_INFO_NAMECOUNT, &count);
    pcre2_pattern_info(p->code, PCRE2_INFO_NAMEENTRYSIZE, &esize);
    pcre2_pattern_info(p->code, PCRE2_INFO_NAMETABLE, &table);
    if (!(p->groupindex = code_dict_new(vm)))
        return -1;
    /* the table is sorted by name; the dict is in group order, as CPython's */
    for (uint32_t g = 1; g <= p->ngroups; g++)
        for (uint32_t i = 0; i < count; i++) {
            const unsigned char *e = table + (size_t)i * esize;
            if ((uint32_t)((e[0] << 8) | e[1]) != g)
                continue;
            if (code_lib_set_steal(vm, p->groupindex, (const char *)e + 2,
                                   cv_from_small(g)) < 0)
                return -1;
        }
    return 0;
}

static cv re_compile_new(code_vm *vm, cv pattern, int64_t flags)
{
    bool is_bytes = cv_is(pattern, &code_type_bytes);
    if (!is_bytes && !cv_is(pattern, &code_type_str))
        return code_raise(vm, &code_exc_TypeError, "first argument must be string or compiled pattern");
    if (!is_bytes && (flags & RE_L))
        return code_raise(vm, &code_exc_ValueError, "cannot use LOCALE flag with a str pattern");
    if (is_bytes && (flags & RE_U))
        return code_raise(vm, &code_exc_ValueError, "cannot use UNICODE flag with a bytes pattern");
    if ((flags & RE_A) && (flags & RE_U))
        return code_raise(vm, &code_exc_ValueError, "ASCII and UNICODE flags are incompatible");
    if (flags & RE_DEBUG)
        return code_raise(vm, &code_exc_NotImplementedError,
                          "re.DEBUG is not supported in code mode");
    const char *src = is_bytes ? (const char *)((code_bytes *)cv_obj(pattern))->s
                               : code_str_cstr(pattern);
    size_t n = is_bytes ? ((code_bytes *)cv_obj(pattern))->len : code_str_len(pattern);
    code_sb t;
    code_sb_init(&t, vm);
    bool inline_ascii = false;
    if (translate(vm, src, n, is_bytes, &t, &inline_ascii) < 0) {
        code_sb_free(&t);
        return vm->exc ? CV_NULL : code_raise_nomem(vm);
    }
    uint32_t opts = PCRE2_ALT_CIRCUMFLEX | PCRE2_NEVER_BACKSLASH_C;
    if (!is_bytes)
        opts |= PCRE2_UTF | PCRE2_NO_UTF_CHECK | ((flags & RE_A) || inline_ascii ? 0 : PCRE2_UCP);
    if (flags & RE_I)
        opts |= PCRE2_CASELESS;
    if (flags & RE_M)
        opts |= PCRE2_MULTILINE;
    if (flags & RE_S)
        opts |= PCRE2_DOTALL;
    if (flags & RE_X)
        opts |= PCRE2_EXTENDED;
    re_ctx x;
    if (code_re_ctx_open(vm, NULL, &x) < 0) {
        code_sb_free(&t);
        return CV_NULL;
    }
    pcre2_compile_context *cc = pcre2_compile_context_create(x.g);
    if (!cc) {
        code_sb_free(&t);
        code_re_ctx_close(&x);
        return vm->exc ? CV_NULL : code_raise_nomem(vm);
    }
    pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
    int err = 0;
    PCRE2_SIZE erroff = 0;
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)(t.p ? t.p : ""), t.len, opts, &err, &erroff, cc);
    pcre2_compile_context_free(cc);
    code_re_ctx_close(&x);
    if (!code) {
        /* the offset is in the translated pattern: near enough to the original */
        size_t pos = 0;
        for (size_t k = 0; k < erroff && k < t.len; k++)
            if (is_bytes || ((unsigned char)t.p[k] & 0xC0) != 0x80)
                pos++;
        code_sb_free(&t);
        if (vm->exc)
            return CV_NULL;
        if (err == PCRE2_ERROR_HEAP_FAILED)
            return code_raise_nomem(vm);
        return compile_error(vm, err, src, n, is_bytes, erroff, pos);
    }
    code_sb_free(&t);
    re_pattern *p = code_obj_new(vm, &code_type_re_pattern, sizeof *p);
    if (!p) {
        pcre2_code_free(code);
        return CV_NULL;
    }
    p->code = code;
    p->pattern = code_incref(pattern);
    p->is_bytes = is_bytes;
    p->flags = is_bytes || (flags & RE_A) ? flags : flags | RE_U;
    pcre2_pattern_info(code, PCRE2_INFO_CAPTURECOUNT, &p->ngroups);
    if (build_groupindex(vm, p) < 0) {
        code_decref(vm, cv_of(p));
        return CV_NULL;
    }
    return cv_of(p);
}

/* The run's cache of compiled patterns, (pattern, flags) -> Pattern, as
 * CPython's (cleared when it passes 512 entries, or by re.purge): programs
 * call re.match(p, s) in loops. Borrowed, or CV_NULL on error. */
cv code_re_cache(code_vm *vm, bool clear)
{
    cv lib = code_lib_cache(vm), c = CV_NULL;
    if (!lib || code_dict_get(vm, lib, CODE_NONE, &c) < 0)
        return CV_NULL;
    if (c && !clear && ((code_dict *)cv_obj(c))->used < 512)
        return c;
    cv fresh = code_dict_new(vm);
    if (!fresh || code_dict_set(vm, lib, CODE_NONE, fresh) < 0) {
        code_decref(vm, fresh);
        return CV_NULL;
    }
    code_decref(vm, fresh);      /* the library's dict holds it */
    return fresh;
}

cv code_re_get_pattern(code_vm *vm, cv pattern, cv flags)
{
    int64_t f = 0;
    if (flags && code_as_i64(vm, flags, &f) < 0)
        return CV_NULL;
    if (cv_is(pattern, &code_type_re_pattern)) {
        if (f)
            return code_raise(vm, &code_exc_ValueError,
                              "cannot process flags argument with a compiled pattern");
        return code_incref(pattern);
    }
    if (!cv_is(pattern, &code_type_str) && !cv_is(pattern, &code_type_bytes))
        return re_compile_new(vm, pattern, f);   /* its TypeError */
    cv cache = code_re_cache(vm, false), key = CV_NULL, p = CV_NULL;
    if (!cache || !(key = code_tuple_pack(vm, 3, cv_type(pattern) == &code_type_str ? CODE_TRUE
                                                                                  : CODE_FALSE,
                                          pattern, flags ? flags : cv_from_small(0))))
        return CV_NULL;
    if (code_dict_get(vm, cache, key, &p) < 0) {
        code_decref(vm, key);
        return CV_NULL;
    }
    if (p) {
        code_decref(vm, key);
        return code_incref(p);
    }
    p = re_compile_new(vm, pattern, f);
    if (p && code_dict_set(vm, cache, key, p) < 0) {
        code_decref(vm, p);
        p = CV_NULL;
    }
    code_decref(vm, key);
    return p;
}

static const uint32_t search_opts[3] = { 0, PCRE2_ANCHORED, PCRE2_ANCHORED | PCRE2_ENDANCHORED };
const char *const code_re_search_names[3] = { "search", "match", "fullmatch" };

/* search, match and fullmatch, on a Pattern. */
cv code_re_search(code_vm *vm, re_pattern *p, cv string, cv pos, cv endpos, int kind)
{
    re_subject sub;
    size_t b0, b1;
    ssize_t c0, c1;
    if (code_re_subject_of(vm, p, string, &sub) < 0 ||
        code_re_bounds(vm, &sub, pos, endpos, &b0, &b1, &c0, &c1) < 0)
        return CV_NULL;
    if (c1 < c0)
        return CODE_NONE;
    re_ctx x;
    if (code_re_ctx_open(vm, p, &x) < 0)
        return CV_NULL;
    int rc = code_re_exec(&x, p, &sub, b0, b1, search_opts[kind]);
    cv r = rc < 0 ? CV_NULL : rc == 0 ? CODE_NONE : code_re_match_new(&x, p, string, &sub, c0, c1);
    code_re_ctx_close(&x);
    return r;
}

static cv pat_search_kind(code_vm *vm, cv *args, size_t nargs, cv kwnames, int kind)
{
    cv self, string, pos = CV_NULL, endpos = CV_NULL;
    if (code_args(vm, code_re_search_names[kind], args, nargs, kwnames, "self,string,|pos,endpos", &self,
                  &string, &pos, &endpos) < 0)
        return CV_NULL;
    return code_re_search(vm, (re_pattern *)cv_obj(self), string, pos, endpos, kind);
}

static cv pat_search(code_vm *vm, cv *a, size_t n, cv kw) { return pat_search_kind(vm, a, n, kw, 0); }
static cv pat_match(code_vm *vm, cv *a, size_t n, cv kw) { return pat_search_kind(vm, a, n, kw, 1); }
static cv pat_fullmatch(code_vm *vm, cv *a, size_t n, cv kw) { return pat_search_kind(vm, a, n, kw, 2); }

static cv pat_findall(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    cv self, string, pos = CV_NULL, endpos = CV_NULL;
    if (code_args(vm, "findall", args, nargs, kwnames, "self,string,|pos,endpos", &self, &string,
                  &pos, &endpos) < 0)
        return CV_NULL;
    return code_re_findall(vm, (re_pattern *)cv_obj(self), string, pos, endpos);
}

static cv pat_finditer(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    cv self, string, pos = CV_NULL, endpos = CV_NULL;
    if (code_args(vm, "finditer", args, nargs, kwnames, "self,string,|pos,endpos", &self,
                  &string, &pos, &endpos) < 0)
        return CV_NULL;
    return code_re_finditer(vm, (re_pattern *)cv_obj(self), string, pos, endpos);
}

static cv pat_sub_kind(code_vm *vm, cv *args, size_t nargs, cv kwnames, bool subn)
{
    cv self, repl, string, count = CV_NULL;
    if (code_args(vm, subn ? "subn" : "sub", args, nargs, kwnames, "self,repl,string,|count",
                  &self, &repl, &string, &count) < 0)
        return CV_NULL;
    return code_re_sub(vm, (re_pattern *)cv_obj(self), repl, string, count, subn);
}

static cv pat_sub(code_vm *vm, cv *a, size_t n, cv kw) { return pat_sub_kind(vm, a, n, kw, false); }
static cv pat_subn(code_vm *vm, cv *a, size_t n, cv kw) { return pat_sub_kind(vm, a, n, kw, true); }

static cv pat_split(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    cv self, string, maxsplit = CV_NULL;
    if (code_args(vm, "split", args, nargs, kwnames, "self,string,|maxsplit", &self, &string,
                  &maxsplit) < 0)
        return CV_NULL;
    return code_re_split(vm, (re_pattern *)cv_obj(self), string, maxsplit);
}

static const code_method pattern_methods[] = {
    { "search", pat_search }, { "match", pat_match }, { "fullmatch", pat_fullmatch },
    { "findall", pat_findall }, { "finditer", pat_finditer }, { "sub", pat_sub },
    { "subn", pat_subn }, { "split", pat_split }, { NULL, NULL },
};

static int pattern_hash(code_vm *vm, cv self, uint64_t *h)
{
    re_pattern *p = (re_pattern *)cv_obj(self);
    if (code_hash(vm, p->pattern, h) < 0)
        return -1;
    *h ^= (uint64_t)p->flags * 0x9E3779B97F4A7C15u;
    return 0;
}

static cv pattern_compare(code_vm *vm, cv a, cv b, int op)
{
    if ((op != CODE_CMP_EQ && op != CODE_CMP_NE) || !cv_is(b, &code_type_re_pattern) ||
        !cv_is(a, &code_type_re_pattern))
        return CODE_NOTIMPL;
    re_pattern *x = (re_pattern *)cv_obj(a), *y = (re_pattern *)cv_obj(b);
    int eq = x->flags == y->flags && x->is_bytes == y->is_bytes ? code_eq(vm, x->pattern, y->pattern)
                                                                : 0;
    if (eq < 0)
        return CV_NULL;
    return code_bool(op == CODE_CMP_EQ ? eq : !eq);
}

const code_type code_type_re_pattern = {
    .ob = CODE_STATIC_HDR(&code_type_type),
    .name = "re.Pattern",
    .kind = CODE_K_OTHER,
    .dealloc = pattern_dealloc,
    .repr = pattern_repr,
    .hash = pattern_hash,
    .compare = pattern_compare,
    .getattr = pattern_getattr,
    .methods = pattern_methods,
};
