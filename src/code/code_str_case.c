/* Code mode's str methods, part two: case mappings and character classes
 * (by the Unicode tables generated from CPython 3.11, code_unicode_tab.c, so
 * full mappings such as 'ß'.upper() == 'SS' and the final sigma agree with
 * it), padding, tabs, translate and encode. */
#include "code/code_strutil.h"

#include <string.h>

#define S(v) code_str_p(v)

static int noargs(code_vm *vm, const char *name, size_t nargs, cv kw)
{
    return code_str_nargs(vm, "str", name, nargs - 1, kw, 0, 0);
}

/* ---- case mappings ---- */

/* CPython's handling of capital sigma in lower(): final (ς) when a cased
 * letter comes before it and none after, skipping case-ignorable ones. */
static uint32_t sigma(const char *s, size_t n, size_t at, size_t after)
{
    size_t j = at;
    bool before = false;
    while (j > 0) {
        uint32_t c = code_utf8_prev(s, &j);
        if (code_uprop(c, CODE_UP_CASE_IGNORABLE))
            continue;
        before = code_uprop(c, CODE_UP_CASED);
        break;
    }
    if (!before)
        return 0x3C3;
    j = after;
    while (j < n) {
        uint32_t c = code_utf8_next(s, &j);
        if (code_uprop(c, CODE_UP_CASE_IGNORABLE))
            continue;
        return code_uprop(c, CODE_UP_CASED) ? 0x3C3 : 0x3C2;
    }
    return 0x3C2;
}

enum { MODE_LOWER, MODE_UPPER, MODE_FOLD, MODE_SWAP, MODE_TITLE, MODE_CAP };

static size_t lower_at(const char *s, size_t n, size_t at, size_t after, uint32_t c, char *out)
{
    if (c == 0x3A3)
        return code_utf8_put(sigma(s, n, at, after), out);
    return code_ucase(c, CODE_UC_LOWER, out);
}

static cv case_map(code_vm *vm, cv self, int mode)
{
    code_str *x = S(self);
    const char *s = x->s;
    size_t n = x->len;
    if (x->ascii) {
        code_str *o = code_str_alloc(vm, n);
        if (!o)
            return CV_NULL;
        bool prev_cased = false;
        for (size_t i = 0; i < n; i++) {
            char c = s[i];
            bool up = c >= 'A' && c <= 'Z', lo = c >= 'a' && c <= 'z';
            bool to_up;
            switch (mode) {
            case MODE_UPPER: to_up = true; break;
            case MODE_SWAP: to_up = lo; break;
            case MODE_TITLE: to_up = !prev_cased; break;
            case MODE_CAP: to_up = i == 0; break;
            default: to_up = false; break;
            }
            if (to_up && lo)
                c = (char)(c - 32);
            else if (!to_up && up)
                c = (char)(c + 32);
            o->s[i] = c;
            prev_cased = up || lo;
        }
        o->ascii = true;
        o->nchars = n;
        return cv_of(o);
    }
    code_sb b;
    code_sb_init(&b, vm);
    bool prev_cased = false;
    size_t i = 0;
    char buf[16];
    while (i < n) {
        size_t at = i;
        uint32_t c = code_utf8_next(s, &i);
        size_t len;
        switch (mode) {
        case MODE_UPPER: len = code_ucase(c, CODE_UC_UPPER, buf); break;
        case MODE_FOLD: len = code_ucase(c, CODE_UC_FOLD, buf); break;
        case MODE_SWAP:
            if (code_uprop(c, CODE_UP_UPPER))
                len = lower_at(s, n, at, i, c, buf);
            else if (code_uprop(c, CODE_UP_LOWER))
                len = code_ucase(c, CODE_UC_UPPER, buf);
            else
                len = code_utf8_put(c, buf);
            break;
        case MODE_TITLE:
            len = prev_cased ? lower_at(s, n, at, i, c, buf) : code_ucase(c, CODE_UC_TITLE, buf);
            prev_cased = code_uprop(c, CODE_UP_CASED);
            break;
        case MODE_CAP:
            len = at == 0 ? code_ucase(c, CODE_UC_TITLE, buf) : lower_at(s, n, at, i, c, buf);
            break;
        default: len = lower_at(s, n, at, i, c, buf); break;
        }
        if (code_sb_add(&b, buf, len)) {
            code_sb_free(&b);
            return CV_NULL;
        }
    }
    return code_sb_finish(&b);
}

#define CASE_METHOD(fname, pyname, mode)                                                  \
    cv fname(code_vm *vm, cv *args, size_t nargs, cv kw)                                 \
    {                                                                                    \
        if (noargs(vm, pyname, nargs, kw))                                               \
            return CV_NULL;                                                              \
        return case_map(vm, args[0], mode);                                              \
    }
CASE_METHOD(code_str_m_lower, "lower", MODE_LOWER)
CASE_METHOD(code_str_m_upper, "upper", MODE_UPPER)
CASE_METHOD(code_str_m_casefold, "casefold", MODE_FOLD)
CASE_METHOD(code_str_m_swapcase, "swapcase", MODE_SWAP)
CASE_METHOD(code_str_m_title, "title", MODE_TITLE)
CASE_METHOD(code_str_m_capitalize, "capitalize", MODE_CAP)

/* ---- character classes ---- */

static bool ascii_class(unsigned char c, enum code_uprop p)
{
    bool lo = c >= 'a' && c <= 'z', up = c >= 'A' && c <= 'Z', dg = c >= '0' && c <= '9';
    switch (p) {
    case CODE_UP_ALPHA: return lo || up;
    case CODE_UP_ALNUM: return lo || up || dg;
    case CODE_UP_DECIMAL:
    case CODE_UP_DIGIT:
    case CODE_UP_NUMERIC: return dg;
    case CODE_UP_SPACE: return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
    case CODE_UP_PRINTABLE: return c >= 0x20 && c < 0x7f;
    default: return code_uprop(c, p);
    }
}

/* Every character has p (and there is one, unless empty_ok). */
static cv all_chars(code_vm *vm, const char *name, cv *args, size_t nargs, cv kw,
                    enum code_uprop p, bool empty_ok)
{
    if (noargs(vm, name, nargs, kw))
        return CV_NULL;
    code_str *x = S(args[0]);
    if (!x->len)
        return code_bool(empty_ok);
    size_t i = 0;
    while (i < x->len) {
        uint32_t c = code_utf8_next(x->s, &i);
        if (!(c < 0x80 ? ascii_class((unsigned char)c, p) : code_uprop(c, p)))
            return CODE_FALSE;
    }
    return CODE_TRUE;
}

#define CLASS_METHOD(fname, pyname, prop, empty_ok)                                       \
    cv fname(code_vm *vm, cv *args, size_t nargs, cv kw)                                 \
    {                                                                                    \
        return all_chars(vm, pyname, args, nargs, kw, prop, empty_ok);                   \
    }
CLASS_METHOD(code_str_m_isdigit, "isdigit", CODE_UP_DIGIT, false)
CLASS_METHOD(code_str_m_isalpha, "isalpha", CODE_UP_ALPHA, false)
CLASS_METHOD(code_str_m_isalnum, "isalnum", CODE_UP_ALNUM, false)
CLASS_METHOD(code_str_m_isspace, "isspace", CODE_UP_SPACE, false)
CLASS_METHOD(code_str_m_isnumeric, "isnumeric", CODE_UP_NUMERIC, false)
CLASS_METHOD(code_str_m_isdecimal, "isdecimal", CODE_UP_DECIMAL, false)
CLASS_METHOD(code_str_m_isprintable, "isprintable", CODE_UP_PRINTABLE, true)

cv code_str_m_isascii(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    if (noargs(vm, "isascii", nargs, kw))
        return CV_NULL;
    return code_bool(S(args[0])->ascii);
}

/* upper: isupper() (no lowercase or titlecase, some uppercase), else
 * islower(). */
static cv cased_check(code_vm *vm, const char *name, cv *args, size_t nargs, cv kw, bool upper)
{
    if (noargs(vm, name, nargs, kw))
        return CV_NULL;
    code_str *x = S(args[0]);
    bool cased = false;
    size_t i = 0;
    enum code_uprop want = upper ? CODE_UP_UPPER : CODE_UP_LOWER;
    enum code_uprop other = upper ? CODE_UP_LOWER : CODE_UP_UPPER;
    while (i < x->len) {
        uint32_t c = code_utf8_next(x->s, &i);
        if (code_uprop(c, other) || code_uprop(c, CODE_UP_TITLE))
            return CODE_FALSE;
        if (code_uprop(c, want))
            cased = true;
    }
    return code_bool(cased);
}

cv code_str_m_isupper(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    return cased_check(vm, "isupper", args, nargs, kw, true);
}

cv code_str_m_islower(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    return cased_check(vm, "islower", args, nargs, kw, false);
}

cv code_str_m_istitle(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    if (noargs(vm, "istitle", nargs, kw))
        return CV_NULL;
    code_str *x = S(args[0]);
    bool cased = false, prev = false;
    size_t i = 0;
    while (i < x->len) {
        uint32_t c = code_utf8_next(x->s, &i);
        if (code_uprop(c, CODE_UP_UPPER) || code_uprop(c, CODE_UP_TITLE)) {
            if (prev)
                return CODE_FALSE;
            prev = cased = true;
        } else if (code_uprop(c, CODE_UP_LOWER)) {
            if (!prev)
                return CODE_FALSE;
            prev = cased = true;
        } else
            prev = false;
    }
    return code_bool(cased);
}

cv code_str_m_isidentifier(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    if (noargs(vm, "isidentifier", nargs, kw))
        return CV_NULL;
    code_str *x = S(args[0]);
    if (!x->len)
        return CODE_FALSE;
    size_t i = 0;
    if (!code_uprop(code_utf8_next(x->s, &i), CODE_UP_XID_START))
        return CODE_FALSE;
    while (i < x->len)
        if (!code_uprop(code_utf8_next(x->s, &i), CODE_UP_XID_CONTINUE))
            return CODE_FALSE;
    return CODE_TRUE;
}

/* ---- padding ---- */

int code_sb_fill(code_sb *b, const char *fill, size_t flen, size_t n)
{
    char chunk[64];
    if (flen == 1) {
        memset(chunk, fill[0], sizeof(chunk));
        while (n) {
            size_t k = n < sizeof(chunk) ? n : sizeof(chunk);
            if (code_sb_add(b, chunk, k))
                return -1;
            n -= k;
        }
        return 0;
    }
    while (n--)
        if (code_sb_add(b, fill, flen))
            return -1;
    return 0;
}

static int width_arg(code_vm *vm, cv v, ssize_t *out)
{
    return code_as_index(vm, v, out);
}

/* how: 0 ljust, 1 rjust, 2 center. */
static cv pad(code_vm *vm, const char *name, cv *args, size_t nargs, cv kw, int how)
{
    if (code_str_nargs(vm, "str", name, nargs - 1, kw, 1, 2))
        return CV_NULL;
    ssize_t width;
    if (width_arg(vm, args[1], &width))
        return CV_NULL;
    const char *fill = " ";
    size_t flen = 1;
    if (nargs > 2) {
        cv f = args[2];
        if (!cv_is(f, &code_type_str))
            return code_raise(vm, &code_exc_TypeError,
                              "The fill character must be a unicode character, not %s",
                              code_type_name(f));
        if (S(f)->nchars != 1)
            return code_raise(vm, &code_exc_TypeError,
                              "The fill character must be exactly one character long");
        fill = S(f)->s;
        flen = S(f)->len;
    }
    code_str *x = S(args[0]);
    if (width <= (ssize_t)x->nchars)
        return code_incref(args[0]);
    size_t marg = (size_t)width - x->nchars, left;
    if (how == 0)
        left = 0;
    else if (how == 1)
        left = marg;
    else
        left = marg / 2 + (marg & (size_t)width & 1);
    code_sb b;
    code_sb_init(&b, vm);
    if (code_sb_fill(&b, fill, flen, left) || code_sb_add(&b, x->s, x->len) ||
        code_sb_fill(&b, fill, flen, marg - left)) {
        code_sb_free(&b);
        return CV_NULL;
    }
    return code_sb_finish(&b);
}

cv code_str_m_ljust(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    return pad(vm, "ljust", args, nargs, kw, 0);
}

cv code_str_m_rjust(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    return pad(vm, "rjust", args, nargs, kw, 1);
}

cv code_str_m_center(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    return pad(vm, "center", args, nargs, kw, 2);
}

cv code_str_m_zfill(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    if (code_str_nargs(vm, "str", "zfill", nargs - 1, kw, 1, 1))
        return CV_NULL;
    ssize_t width;
    if (width_arg(vm, args[1], &width))
        return CV_NULL;
    code_str *x = S(args[0]);
    if (width <= (ssize_t)x->nchars)
        return code_incref(args[0]);
    size_t fill = (size_t)width - x->nchars, sign = x->len && (x->s[0] == '+' || x->s[0] == '-');
    code_sb b;
    code_sb_init(&b, vm);
    if (code_sb_add(&b, x->s, sign) || code_sb_fill(&b, "0", 1, fill) ||
        code_sb_add(&b, x->s + sign, x->len - sign)) {
        code_sb_free(&b);
        return CV_NULL;
    }
    return code_sb_finish(&b);
}

cv code_str_m_expandtabs(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    cv ts = CV_NULL;
    if (code_args(vm, "expandtabs", args + 1, nargs - 1, kw, "|tabsize", &ts))
        return CV_NULL;
    ssize_t tab = 8;
    if (ts && code_as_index(vm, ts, &tab))
        return CV_NULL;
    code_str *x = S(args[0]);
    if (!memchr(x->s, '\t', x->len))
        return code_incref(args[0]);
    code_sb b;
    code_sb_init(&b, vm);
    size_t col = 0, i = 0;
    while (i < x->len) {
        size_t at = i;
        uint32_t c = code_utf8_next(x->s, &i);
        int rc;
        if (c == '\t') {
            size_t k = tab > 0 ? (size_t)tab - col % (size_t)tab : 0;
            rc = code_sb_fill(&b, " ", 1, k);
            col += k;
        } else {
            rc = code_sb_add(&b, x->s + at, i - at);
            col = c == '\n' || c == '\r' ? 0 : col + 1;
        }
        if (rc) {
            code_sb_free(&b);
            return CV_NULL;
        }
    }
    return code_sb_finish(&b);
}

/* ---- encode, maketrans, translate ---- */

cv code_str_m_encode(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    cv enc = CV_NULL, err = CV_NULL;
    if (code_args(vm, "encode", args + 1, nargs - 1, kw, "|encoding,errors", &enc, &err))
        return CV_NULL;
    const char *e = "utf-8", *r = "strict";
    if (enc && code_arg_cstr(vm, enc, "encode() argument 'encoding'", &e))
        return CV_NULL;
    if (err && code_arg_cstr(vm, err, "encode() argument 'errors'", &r))
        return CV_NULL;
    return code_codec_encode(vm, args[0], e, r);
}

/* str.maketrans is looked up on the type: its arguments come without self. */
cv code_str_m_maketrans(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    if (code_str_nargs(vm, "str", "maketrans", nargs, kw, 1, 3))
        return CV_NULL;
    cv d = code_dict_new(vm);
    if (!d)
        return CV_NULL;
    if (nargs == 1) {
        cv x = args[0];
        if (!cv_is(x, &code_type_dict)) {
            code_raise(vm, &code_exc_TypeError,
                       "if you give only one argument to maketrans it must be a dict");
            goto fail;
        }
        size_t pos = 0;
        cv k, v;
        while (code_dict_next(x, &pos, &k, &v)) {
            cv key;
            if (cv_is(k, &code_type_str)) {
                if (S(k)->nchars != 1) {
                    code_raise(vm, &code_exc_ValueError,
                               "string keys in translate table must be of length 1");
                    goto fail;
                }
                size_t i = 0;
                key = cv_from_small(code_utf8_next(S(k)->s, &i));
            } else if (cv_kind(k) == CODE_K_INT || cv_kind(k) == CODE_K_BOOL)
                key = k;
            else {
                code_raise(vm, &code_exc_TypeError,
                           "keys in translate table must be strings or integers");
                goto fail;
            }
            if (code_dict_set(vm, d, key, v))
                goto fail;
        }
        return d;
    }
    if (!cv_is(args[0], &code_type_str)) {
        code_raise(vm, &code_exc_TypeError,
                   "first maketrans argument must be a string if there is a second argument");
        goto fail;
    }
    for (size_t k = 1; k < nargs; k++)
        if (!cv_is(args[k], &code_type_str)) {
            code_raise(vm, &code_exc_TypeError, "maketrans() argument %zu must be str, not %s",
                       k + 1, code_type_name(args[k]));
            goto fail;
        }
    code_str *x = S(args[0]), *y = S(args[1]);
    if (x->nchars != y->nchars) {
        code_raise(vm, &code_exc_ValueError,
                   "the first two maketrans arguments must have equal length");
        goto fail;
    }
    for (size_t i = 0, j = 0; i < x->len;) {
        uint32_t a = code_utf8_next(x->s, &i), b = code_utf8_next(y->s, &j);
        if (code_dict_set(vm, d, cv_from_small(a), cv_from_small(b)))
            goto fail;
    }
    if (nargs == 3) {
        code_str *z = S(args[2]);
        for (size_t i = 0; i < z->len;)
            if (code_dict_set(vm, d, cv_from_small(code_utf8_next(z->s, &i)), CODE_NONE))
                goto fail;
    }
    return d;
fail:
    code_decref(vm, d);
    return CV_NULL;
}

cv code_str_m_translate(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    if (code_str_nargs(vm, "str", "translate", nargs - 1, kw, 1, 1))
        return CV_NULL;
    code_str *x = S(args[0]);
    cv table = args[1];
    code_sb b;
    code_sb_init(&b, vm);
    size_t i = 0;
    while (i < x->len) {
        size_t at = i;
        uint32_t c = code_utf8_next(x->s, &i);
        cv r = code_getitem(vm, table, cv_from_small(c));
        if (!r) {
            if (!code_exc_matches(vm, &code_exc_LookupError))
                goto fail;
            code_exc_clear(vm);
            if (code_sb_add(&b, x->s + at, i - at))
                goto fail;
            continue;
        }
        int rc = 0;
        if (r == CODE_NONE)
            ;
        else if (cv_is(r, &code_type_str))
            rc = code_sb_add(&b, S(r)->s, S(r)->len);
        else if (cv_kind(r) == CODE_K_INT || cv_kind(r) == CODE_K_BOOL) {
            int64_t v;
            if (!code_int_to_i64(r, &v) || v < 0 || v > 0x10FFFF)
                rc = code_raise_i(vm, &code_exc_ValueError,
                                  "character mapping must be in range(0x110000)");
            else if (v >= 0xD800 && v <= 0xDFFF)
                rc = code_raise_i(vm, &code_exc_ValueError,
                                  "character mapping to a surrogate is not supported");
            else {
                char u[4];
                rc = code_sb_add(&b, u, code_utf8_put((uint32_t)v, u));
            }
        } else
            rc = code_raise_i(vm, &code_exc_TypeError,
                              "character mapping must return integer, None or str");
        code_decref(vm, r);
        if (rc)
            goto fail;
    }
    return code_sb_finish(&b);
fail:
    code_sb_free(&b);
    return CV_NULL;
}
