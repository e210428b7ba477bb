/* json.loads: a recursive-descent decoder over the str's UTF-8 with CPython's
 * JSONDecodeError messages and positions (in code points, as CPython counts
 * them). Nesting goes through code_guard_enter, so a deep document is a
 * RecursionError, as in CPython, never a crashed stack.
 *
 * Differences from CPython: strings are UTF-8, so an escaped lone surrogate
 * ("\ud800") decodes to U+FFFD; bytes are decoded as UTF-8 only (CPython also
 * detects UTF-16 and UTF-32). */
#include <stdlib.h>
#include <string.h>

#include "code/code_lib.h"
#include "code/code_strutil.h"

typedef struct json_dec {
    code_vm *vm;
    const char *s;
    size_t n, i;
} json_dec;

static cv dec_value(json_dec *d);

/* A JSONDecodeError as CPython's __init__ makes it: args ("msg: line L column
 * C (char P)",), and msg, doc, pos, lineno, colno as attributes. */
static cv json_exc_build(code_vm *vm, const code_type *t, cv msg, cv doc, int64_t pos,
                         int64_t lineno, int64_t colno)
{
    cv full = code_str_fmt(vm, "%s: line %lld column %lld (char %lld)", code_str_cstr(msg),
                           (long long)lineno, (long long)colno, (long long)pos);
    if (!full)
        return CV_NULL;
    cv args = code_tuple_new(vm, 1);
    if (!args) {
        code_decref(vm, full);
        return CV_NULL;
    }
    ((code_tuple *)cv_obj(args))->v[0] = full;
    cv e = code_exc_new(vm, t, args);
    if (!e)
        return CV_NULL;
    cv ints[3] = { code_int_from_i64(vm, pos), code_int_from_i64(vm, lineno),
                   code_int_from_i64(vm, colno) };
    int rc = ints[0] && ints[1] && ints[2] ? 0 : -1;
    if (!rc)
        rc = code_exc_set_attr(vm, e, "msg", msg) < 0 || code_exc_set_attr(vm, e, "doc", doc) < 0 ||
             code_exc_set_attr(vm, e, "pos", ints[0]) < 0 ||
             code_exc_set_attr(vm, e, "lineno", ints[1]) < 0 ||
             code_exc_set_attr(vm, e, "colno", ints[2]) < 0 ? -1 : 0;
    for (int k = 0; k < 3; k++)
        code_decref(vm, ints[k]);
    if (rc < 0) {
        code_decref(vm, e);
        return CV_NULL;
    }
    return e;
}

/* json.JSONDecodeError(msg, doc, pos) called by the program: lineno and
 * colno counted in doc before pos, as CPython's doc.count('\n', 0, pos) and
 * doc.rfind('\n', 0, pos) do (pos clamped as a slice end). */
cv code_json_exc_new(code_vm *vm, const code_type *t, cv *args, size_t nargs, cv kwnames)
{
    cv msg, doc, pos;
    int64_t p;
    if (code_args(vm, "JSONDecodeError", args, nargs, kwnames, "msg,doc,pos", &msg, &doc,
                  &pos) < 0)
        return CV_NULL;
    if (!cv_is(doc, &code_type_str))
        return code_raise(vm, &code_exc_TypeError, "JSONDecodeError's doc must be a str, not %s",
                          code_type_name(doc));
    if (code_as_i64(vm, pos, &p) < 0)
        return CV_NULL;
    cv smsg = code_str_of(vm, msg);
    if (!smsg)
        return CV_NULL;
    int64_t nch = (int64_t)((code_str *)cv_obj(doc))->nchars, end = p < 0 ? p + nch : p;
    end = end < 0 ? 0 : end > nch ? nch : end;
    int64_t lines = 0, last = -1, k = 0;
    for (const unsigned char *c = (const unsigned char *)code_str_cstr(doc); k < end; c++) {
        if ((*c & 0xC0) == 0x80)
            continue;
        if (*c == '\n') {
            lines++;
            last = k;
        }
        k++;
    }
    cv e = json_exc_build(vm, t, smsg, doc, p, lines + 1, p - last);
    code_decref(vm, smsg);
    return e;
}

/* Raises JSONDecodeError msg at byte offset off. */
static cv dec_error(json_dec *d, const char *msg, size_t off)
{
    size_t pos = 0, line = 1, line_start = 0;   /* in code points */
    for (size_t k = 0; k < off && k < d->n; k++) {
        unsigned char c = (unsigned char)d->s[k];
        if ((c & 0xC0) == 0x80)
            continue;
        pos++;
        if (c == '\n') {
            line++;
            line_start = pos;
        }
    }
    /* The document (the str given, or the bytes decoded) is copied only now. */
    cv m = code_str_from_cstr(d->vm, msg), doc = m ? code_str_new(d->vm, d->s, d->n) : CV_NULL;
    cv e = doc ? json_exc_build(d->vm, &code_exc_JSONDecodeError, m, doc, (int64_t)pos,
                                (int64_t)line, (int64_t)(pos - line_start + 1))
               : CV_NULL;
    code_decref(d->vm, m);
    code_decref(d->vm, doc);
    return e ? code_raise_obj(d->vm, e) : CV_NULL;
}

static void skip_ws(json_dec *d)
{
    while (d->i < d->n) {
        char c = d->s[d->i];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        d->i++;
    }
}

static bool lit(json_dec *d, const char *w)
{
    size_t k = strlen(w);
    if (d->n - d->i < k || memcmp(d->s + d->i, w, k) != 0)
        return false;
    d->i += k;
    return true;
}

static int hex4(const char *p, uint32_t *out)
{
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) {
        char c = p[k];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (uint32_t)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

/* A string; d->i is on its opening quote. */
static cv dec_string(json_dec *d)
{
    size_t q = d->i++, start = d->i;
    /* the common case: no escape, one copy */
    while (d->i < d->n) {
        unsigned char c = (unsigned char)d->s[d->i];
        if (c == '"') {
            d->i++;
            return code_str_new(d->vm, d->s + start, d->i - 1 - start);
        }
        if (c == '\\' || c < 0x20)
            break;
        d->i++;
    }
    code_sb b;
    code_sb_init(&b, d->vm);
    code_sb_add(&b, d->s + start, d->i - start);
    for (;;) {
        if (d->i >= d->n) {
            code_sb_free(&b);
            return dec_error(d, "Unterminated string starting at", q);
        }
        unsigned char c = (unsigned char)d->s[d->i];
        if (c == '"') {
            d->i++;
            return code_sb_finish(&b);
        }
        if (c < 0x20) {
            code_sb_free(&b);
            return dec_error(d, "Invalid control character at", d->i);
        }
        if (c != '\\') {
            size_t run = d->i;
            while (d->i < d->n && d->s[d->i] != '"' && d->s[d->i] != '\\' &&
                   (unsigned char)d->s[d->i] >= 0x20)
                d->i++;
            code_sb_add(&b, d->s + run, d->i - run);
            continue;
        }
        if (d->i + 1 >= d->n) {
            code_sb_free(&b);
            return dec_error(d, "Unterminated string starting at", q);
        }
        char e = d->s[d->i + 1];
        const char *out = NULL;
        switch (e) {
        case '"': out = "\""; break;
        case '\\': out = "\\"; break;
        case '/': out = "/"; break;
        case 'b': out = "\b"; break;
        case 'f': out = "\f"; break;
        case 'n': out = "\n"; break;
        case 'r': out = "\r"; break;
        case 't': out = "\t"; break;
        case 'u': break;
        default:
            code_sb_free(&b);
            return dec_error(d, "Invalid \\escape", d->i);
        }
        if (out) {
            code_sb_add(&b, out, 1);
            d->i += 2;
            continue;
        }
        size_t u = d->i + 1;     /* the 'u' */
        uint32_t cp;
        /* CPython wants a character after the four digits (the quote at least) */
        if (u + 5 >= d->n || hex4(d->s + u + 1, &cp) < 0) {
            code_sb_free(&b);
            return dec_error(d, "Invalid \\uXXXX escape", u);
        }
        d->i = u + 5;
        if (cp >= 0xD800 && cp <= 0xDBFF && d->i + 6 < d->n && d->s[d->i] == '\\' &&
            d->s[d->i + 1] == 'u') {
            uint32_t lo;
            if (hex4(d->s + d->i + 2, &lo) < 0) {
                code_sb_free(&b);
                return dec_error(d, "Invalid \\uXXXX escape", d->i + 1);
            }
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                d->i += 6;
            }
        }
        if (cp >= 0xD800 && cp <= 0xDFFF)
            cp = 0xFFFD;         /* no lone surrogates in UTF-8 strings */
        char buf[4];
        code_sb_add(&b, buf, code_lib_u8_enc(cp, buf));
    }
}

static bool is_digit(json_dec *d, size_t k)
{
    return k < d->n && d->s[k] >= '0' && d->s[k] <= '9';
}

/* A number at d->i, or CV_NULL with no error when there is none. */
static cv dec_number(json_dec *d)
{
    size_t k = d->i;
    bool neg = false;
    if (k < d->n && d->s[k] == '-') {
        neg = true;
        k++;
    }
    if (!is_digit(d, k))
        return CV_NULL;
    size_t int_start = k;
    if (d->s[k] == '0')
        k++;
    else
        while (is_digit(d, k))
            k++;
    size_t int_end = k;
    bool is_float = false;
    if (k + 1 < d->n && d->s[k] == '.' && is_digit(d, k + 1)) {
        is_float = true;
        k += 2;
        while (is_digit(d, k))
            k++;
    }
    if (k < d->n && (d->s[k] == 'e' || d->s[k] == 'E')) {
        size_t e = k + 1;
        if (e < d->n && (d->s[e] == '+' || d->s[e] == '-'))
            e++;
        if (is_digit(d, e)) {
            is_float = true;
            k = e;
            while (is_digit(d, k))
                k++;
        }
    }
    size_t start = d->i;
    d->i = k;
    if (!is_float)
        return code_int_from_digits(d->vm, d->s + int_start, int_end - int_start, 10, neg);
    char small[64], *buf = small;
    size_t len = k - start;
    if (len >= sizeof small && !(buf = code_heap_alloc(d->vm, len + 1)))
        return CV_NULL;
    memcpy(buf, d->s + start, len);
    buf[len] = 0;
    double v = strtod(buf, NULL);
    if (buf != small)
        code_heap_free(d->vm, buf, len + 1);
    return code_float_new(d->vm, v);
}

static cv dec_array(json_dec *d)
{
    code_vm *vm = d->vm;
    if (code_guard_enter(vm, "while decoding a JSON array from a unicode string") < 0)
        return CV_NULL;
    cv l = code_list_new(vm, 0);
    d->i++;
    skip_ws(d);
    if (l && d->i < d->n && d->s[d->i] == ']') {
        d->i++;
        code_guard_leave(vm);
        return l;
    }
    while (l) {
        cv v = dec_value(d);
        if (!v || code_list_append(vm, l, v) < 0) {
            code_decref(vm, v);
            goto fail;
        }
        code_decref(vm, v);
        skip_ws(d);
        if (d->i < d->n && d->s[d->i] == ']') {
            d->i++;
            break;
        }
        if (d->i >= d->n || d->s[d->i] != ',') {
            dec_error(d, "Expecting ',' delimiter", d->i);
            goto fail;
        }
        d->i++;
        skip_ws(d);
    }
    code_guard_leave(vm);
    return l;
fail:
    code_decref(vm, l);
    code_guard_leave(vm);
    return CV_NULL;
}

static cv dec_object(json_dec *d)
{
    code_vm *vm = d->vm;
    if (code_guard_enter(vm, "while decoding a JSON object from a unicode string") < 0)
        return CV_NULL;
    cv o = code_dict_new(vm);
    d->i++;
    skip_ws(d);
    if (o && d->i < d->n && d->s[d->i] == '}') {
        d->i++;
        code_guard_leave(vm);
        return o;
    }
    while (o) {
        if (d->i >= d->n || d->s[d->i] != '"') {
            dec_error(d, "Expecting property name enclosed in double quotes", d->i);
            goto fail;
        }
        cv k = dec_string(d);
        if (!k)
            goto fail;
        skip_ws(d);
        if (d->i >= d->n || d->s[d->i] != ':') {
            code_decref(vm, k);
            dec_error(d, "Expecting ':' delimiter", d->i);
            goto fail;
        }
        d->i++;
        skip_ws(d);
        cv v = dec_value(d);
        int rc = v ? code_dict_set(vm, o, k, v) : -1;
        code_decref(vm, k);
        code_decref(vm, v);
        if (rc < 0)
            goto fail;
        skip_ws(d);
        if (d->i < d->n && d->s[d->i] == '}') {
            d->i++;
            break;
        }
        if (d->i >= d->n || d->s[d->i] != ',') {
            dec_error(d, "Expecting ',' delimiter", d->i);
            goto fail;
        }
        d->i++;
        skip_ws(d);
    }
    code_guard_leave(vm);
    return o;
fail:
    code_decref(vm, o);
    code_guard_leave(vm);
    return CV_NULL;
}

/* A value at d->i (whitespace before it already skipped). */
static cv dec_value(json_dec *d)
{
    if (d->i < d->n) {
        switch (d->s[d->i]) {
        case '"': return dec_string(d);
        case '[': return dec_array(d);
        case '{': return dec_object(d);
        case 'n': if (lit(d, "null")) return CODE_NONE; break;
        case 't': if (lit(d, "true")) return CODE_TRUE; break;
        case 'f': if (lit(d, "false")) return CODE_FALSE; break;
        case 'N': if (lit(d, "NaN")) return code_float_new(d->vm, __builtin_nan("")); break;
        case 'I': if (lit(d, "Infinity")) return code_float_new(d->vm, __builtin_inf()); break;
        case '-':
            if (lit(d, "-Infinity"))
                return code_float_new(d->vm, -__builtin_inf());
            break;
        default: break;
        }
        cv v = dec_number(d);
        if (v || d->vm->exc)
            return v;
    }
    return dec_error(d, "Expecting value", d->i);
}

cv code_json_loads_text(code_vm *vm, const char *s, size_t n)
{
    json_dec d = { vm, s, n, 0 };
    if (n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0)
        return dec_error(&d, "Unexpected UTF-8 BOM (decode using utf-8-sig)", 0);
    skip_ws(&d);
    cv v = dec_value(&d);
    if (!v)
        return CV_NULL;
    skip_ws(&d);
    if (d.i < n) {
        code_decref(vm, v);
        return dec_error(&d, "Extra data", d.i);
    }
    return v;
}

cv code_json_loads_bytes(code_vm *vm, const char *s, size_t n)
{
    if (!code_utf8_valid(s, n)) {
        /* The codec raises CPython's UnicodeDecodeError, with its attributes. */
        cv r = code_codec_decode(vm, (const unsigned char *)s, n, "utf-8", "strict");
        if (r) {
            code_decref(vm, r);
            return code_raise(vm, &code_exc_UnicodeDecodeError, "invalid utf-8");
        }
        return CV_NULL;
    }
    return code_json_loads_text(vm, s, n);
}
