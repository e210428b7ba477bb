/* Tagged JSON to values (the rules are in code_run.h): a strict RFC 8259
 * parser of its own, since the interpreter's library links nothing of the
 * daemon's. The text comes from the host, and through it from whoever
 * called the API, so it is treated as hostile: nesting is bounded by
 * code_guard_enter, every value is made on the run's heap (so a huge
 * document is a MemoryError, not an abort), strings must be well-formed
 * UTF-8 and carry no lone surrogate, and the first fault is reported as a
 * ValueError naming its byte offset. */
#include "code/code_json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "code/code_json_int.h"
#include "code/code_vm.h"

typedef struct jdec {
    code_vm *vm;
    const unsigned char *s;
    size_t n, pos;
} jdec;

static cv jerr(jdec *d, size_t at, const char *what)
{
    return code_raise(d->vm, &code_exc_ValueError, "invalid JSON at byte %zu: %s", at, what);
}

/* ---- the parser ---- */

static cv dec_value(jdec *d);

static void skip_ws(jdec *d)
{
    while (d->pos < d->n) {
        unsigned char c = d->s[d->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        d->pos++;
    }
}

static int hex4(jdec *d, size_t at, unsigned *out)
{
    if (d->n - at < 4)
        return -1;
    unsigned v = 0;
    for (size_t i = 0; i < 4; i++) {
        unsigned char c = d->s[at + i];
        int h = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (h < 0)
            return -1;
        v = v << 4 | (unsigned)h;
    }
    *out = v;
    return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | cp >> 12);
        o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | cp >> 18);
    o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* One escape after the backslash at d->pos: appended to b. */
static int dec_escape(jdec *d, code_sb *b)
{
    size_t at = d->pos;
    if (at + 1 >= d->n) {
        jerr(d, at, "unterminated string");
        return -1;
    }
    unsigned char c = d->s[at + 1];
    const char *simple = NULL;
    switch (c) {
    case '"': simple = "\""; break;
    case '\\': simple = "\\"; break;
    case '/': simple = "/"; break;
    case 'b': simple = "\b"; break;
    case 'f': simple = "\f"; break;
    case 'n': simple = "\n"; break;
    case 'r': simple = "\r"; break;
    case 't': simple = "\t"; break;
    case 'u': break;
    default:
        jerr(d, at, "invalid escape");
        return -1;
    }
    if (simple) {
        d->pos += 2;
        return code_sb_add(b, simple, 1);
    }
    unsigned cp;
    if (hex4(d, at + 2, &cp) < 0) {
        jerr(d, at, "invalid \\u escape");
        return -1;
    }
    d->pos = at + 6;
    if (cp >= 0xdc00 && cp <= 0xdfff) {
        jerr(d, at, "lone surrogate in \\u escape");
        return -1;
    }
    if (cp >= 0xd800 && cp <= 0xdbff) {
        unsigned lo;
        if (d->pos + 1 >= d->n || d->s[d->pos] != '\\' || d->s[d->pos + 1] != 'u' ||
            hex4(d, d->pos + 2, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff) {
            jerr(d, at, "lone surrogate in \\u escape");
            return -1;
        }
        d->pos += 6;
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
    }
    char u[4];
    return code_sb_add(b, u, put_utf8(u, cp));
}

/* The string at d->pos (its opening quote). A string without escapes is
 * made straight from the input; the others go through a builder. */
static cv dec_string(jdec *d)
{
    size_t start = ++d->pos;
    code_sb b;
    bool building = false;
    size_t run = start;          /* the first byte not yet copied */
    for (;;) {
        if (d->pos >= d->n) {
            if (building)
                code_sb_free(&b);
            return jerr(d, start - 1, "unterminated string");
        }
        unsigned char c = d->s[d->pos];
        if (c == '"')
            break;
        if (c < 0x20) {
            if (building)
                code_sb_free(&b);
            return jerr(d, d->pos, c ? "control character in string" : "NUL byte in string");
        }
        if (c == '\\') {
            if (!building) {
                code_sb_init(&b, d->vm);
                building = true;
            }
            if (code_sb_add(&b, (const char *)d->s + run, d->pos - run) < 0 ||
                dec_escape(d, &b) < 0) {
                code_sb_free(&b);
                return CV_NULL;
            }
            run = d->pos;
            continue;
        }
        if (c < 0x80) {
            d->pos++;
            continue;
        }
        size_t k = code_json_utf8_seq(d->s + d->pos, d->n - d->pos);
        if (!k) {
            if (building)
                code_sb_free(&b);
            return jerr(d, d->pos, "invalid UTF-8");
        }
        d->pos += k;
    }
    size_t end = d->pos++;
    if (!building)
        return code_str_new(d->vm, (const char *)d->s + start, end - start);
    if (code_sb_add(&b, (const char *)d->s + run, end - run) < 0) {
        code_sb_free(&b);
        return CV_NULL;
    }
    return code_sb_finish(&b);
}

static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

static cv dec_number(jdec *d)
{
    size_t start = d->pos;
    bool neg = d->s[d->pos] == '-';
    if (neg)
        d->pos++;
    size_t digits = d->pos;
    if (d->pos >= d->n || !is_digit(d->s[d->pos]))
        return jerr(d, start, "invalid number");
    if (d->s[d->pos] == '0') {
        d->pos++;
        if (d->pos < d->n && is_digit(d->s[d->pos]))
            return jerr(d, start, "leading zero in number");
    } else {
        while (d->pos < d->n && is_digit(d->s[d->pos]))
            d->pos++;
    }
    size_t ndigits = d->pos - digits;
    bool is_float = false;
    if (d->pos < d->n && d->s[d->pos] == '.') {
        d->pos++;
        if (d->pos >= d->n || !is_digit(d->s[d->pos]))
            return jerr(d, start, "invalid number");
        while (d->pos < d->n && is_digit(d->s[d->pos]))
            d->pos++;
        is_float = true;
    }
    if (d->pos < d->n && (d->s[d->pos] == 'e' || d->s[d->pos] == 'E')) {
        d->pos++;
        if (d->pos < d->n && (d->s[d->pos] == '+' || d->s[d->pos] == '-'))
            d->pos++;
        if (d->pos >= d->n || !is_digit(d->s[d->pos]))
            return jerr(d, start, "invalid number");
        while (d->pos < d->n && is_digit(d->s[d->pos]))
            d->pos++;
        is_float = true;
    }
    if (!is_float) {
        if (ndigits <= 18) {
            int64_t v = 0;
            for (size_t i = 0; i < ndigits; i++)
                v = v * 10 + (d->s[digits + i] - '0');
            return code_int_from_i64(d->vm, neg ? -v : v);
        }
        return code_int_from_digits(d->vm, (const char *)d->s + digits, ndigits, 10, neg);
    }
    /* strtod needs a NUL-terminated copy; the grammar above has already
     * excluded everything but digits, sign, '.' and the exponent, so the
     * locale cannot change what it reads (the C locale is never changed). */
    size_t len = d->pos - start;
    char small[64];
    char *buf = small;
    if (len >= sizeof(small) && !(buf = code_heap_alloc(d->vm, len + 1)))
        return CV_NULL;
    memcpy(buf, d->s + start, len);
    buf[len] = 0;
    double v = strtod(buf, NULL);   /* out of range: +-inf or 0, as Python's json */
    if (buf != small)
        code_heap_free(d->vm, buf, len + 1);
    return code_float_new(d->vm, v);
}

static cv dec_array(jdec *d)
{
    if (code_guard_enter(d->vm, "while decoding a JSON array") < 0)
        return CV_NULL;
    d->pos++;
    cv list = code_list_new(d->vm, 0);
    if (!list)
        goto fail;
    skip_ws(d);
    if (d->pos < d->n && d->s[d->pos] == ']') {
        d->pos++;
        goto done;
    }
    for (;;) {
        cv v = dec_value(d);
        if (!v)
            goto fail;
        int rc = code_list_append(d->vm, list, v);
        code_decref(d->vm, v);
        if (rc < 0)
            goto fail;
        skip_ws(d);
        if (d->pos >= d->n) {
            jerr(d, d->pos, "unterminated array");
            goto fail;
        }
        if (d->s[d->pos] == ']') {
            d->pos++;
            break;
        }
        if (d->s[d->pos] != ',') {
            jerr(d, d->pos, "expected ',' or ']'");
            goto fail;
        }
        d->pos++;
    }
done:
    code_guard_leave(d->vm);
    return list;
fail:
    code_decref(d->vm, list);
    code_guard_leave(d->vm);
    return CV_NULL;
}

/* ---- tags: an object of one member whose key begins with '$' ---- */

static bool tag_array(jdec *d, size_t at, cv v)
{
    if (cv_is(v, &code_type_list))
        return true;
    jerr(d, at, "the tag's value must be an array");
    return false;
}

static cv tag_seq(jdec *d, size_t at, cv v, int kind)
{
    if (!tag_array(d, at, v))
        return CV_NULL;
    code_list *l = (code_list *)cv_obj(v);
    if (kind == CODE_K_TUPLE) {
        cv t = code_tuple_new(d->vm, l->n);
        if (!t)
            return CV_NULL;
        code_tuple *tp = (code_tuple *)cv_obj(t);
        for (size_t i = 0; i < l->n; i++)
            tp->v[i] = code_incref(l->v[i]);
        return t;
    }
    cv s = code_set_new(d->vm, kind == CODE_K_FROZENSET);
    if (!s)
        return CV_NULL;
    for (size_t i = 0; i < l->n; i++)
        if (code_set_add(d->vm, s, l->v[i]) < 0) {
            code_decref(d->vm, s);
            return CV_NULL;
        }
    return s;
}

static cv tag_dict(jdec *d, size_t at, cv v)
{
    if (!tag_array(d, at, v))
        return CV_NULL;
    code_list *l = (code_list *)cv_obj(v);
    cv dict = code_dict_new(d->vm);
    if (!dict)
        return CV_NULL;
    for (size_t i = 0; i < l->n; i++) {
        cv pair = l->v[i];
        if (!cv_is(pair, &code_type_list) || ((code_list *)cv_obj(pair))->n != 2) {
            code_decref(d->vm, dict);
            return jerr(d, at, "$dict needs an array of [key, value] pairs");
        }
        code_list *p = (code_list *)cv_obj(pair);
        if (code_dict_set(d->vm, dict, p->v[0], p->v[1]) < 0) {
            code_decref(d->vm, dict);
            return CV_NULL;
        }
    }
    return dict;
}

static cv tag_bytes(jdec *d, size_t at, cv v)
{
    if (!cv_is(v, &code_type_str))
        return jerr(d, at, "$bytes needs a base64 string");
    size_t n = code_str_len(v);
    size_t cap = n / 4 * 3 + 1;
    unsigned char *buf = code_heap_alloc(d->vm, cap);
    if (!buf)
        return CV_NULL;
    size_t outn;
    cv r;
    if (code_json_b64_decode(code_str_cstr(v), n, buf, &outn) < 0)
        r = jerr(d, at, "$bytes needs a base64 string");
    else
        r = code_bytes_new(d->vm, buf, outn);
    code_heap_free(d->vm, buf, cap);
    return r;
}

static cv tag_int(jdec *d, size_t at, cv v)
{
    if (!cv_is(v, &code_type_str))
        return jerr(d, at, "$int needs a string of decimal digits");
    const char *s = code_str_cstr(v);
    size_t n = code_str_len(v);
    bool neg = n && s[0] == '-';
    size_t i = neg;
    if (i == n || (s[i] == '0' && n - i > 1))
        return jerr(d, at, "$int needs a string of decimal digits");
    for (size_t k = i; k < n; k++)
        if (!is_digit((unsigned char)s[k]))
            return jerr(d, at, "$int needs a string of decimal digits");
    return code_int_from_digits(d->vm, s + i, n - i, 10, neg);
}

static cv tag_float(jdec *d, size_t at, cv v)
{
    if (cv_is(v, &code_type_str)) {
        if (code_str_eq_cstr(v, "nan"))
            return code_float_new(d->vm, NAN);
        if (code_str_eq_cstr(v, "inf"))
            return code_float_new(d->vm, INFINITY);
        if (code_str_eq_cstr(v, "-inf"))
            return code_float_new(d->vm, -INFINITY);
    }
    return jerr(d, at, "$float needs \"nan\", \"inf\" or \"-inf\"");
}

static cv dec_tag(jdec *d, size_t at, cv key, cv v)
{
    const char *k = code_str_cstr(key);
    if (!strcmp(k, "$tuple"))
        return tag_seq(d, at, v, CODE_K_TUPLE);
    if (!strcmp(k, "$set"))
        return tag_seq(d, at, v, CODE_K_SET);
    if (!strcmp(k, "$frozenset"))
        return tag_seq(d, at, v, CODE_K_FROZENSET);
    if (!strcmp(k, "$dict"))
        return tag_dict(d, at, v);
    if (!strcmp(k, "$bytes"))
        return tag_bytes(d, at, v);
    if (!strcmp(k, "$int"))
        return tag_int(d, at, v);
    if (!strcmp(k, "$float"))
        return tag_float(d, at, v);
    if (!strcmp(k, "$repr"))
        return jerr(d, at, "a $repr value cannot be passed in (it is output only)");
    /* the key, cut at a character boundary so the message stays UTF-8 */
    size_t n = code_str_len(key), cut = 0;
    while (cut < n && cut < 40) {
        size_t step = code_json_utf8_seq((const unsigned char *)k + cut, n - cut);
        cut += step ? step : 1;
    }
    return code_raise(d->vm, &code_exc_ValueError,
                      "invalid JSON at byte %zu: unknown tag \"%.*s%s\" (an object whose one "
                      "key begins with '$' is a tag; write such a dict as {\"$dict\": [[k, v]]})",
                      at, (int)cut, k, cut < n ? "..." : "");
}

static cv dec_object(jdec *d)
{
    if (code_guard_enter(d->vm, "while decoding a JSON object") < 0)
        return CV_NULL;
    d->pos++;
    cv dict = code_dict_new(d->vm), key = CV_NULL, v = CV_NULL;
    if (!dict)
        goto fail;
    skip_ws(d);
    if (d->pos < d->n && d->s[d->pos] == '}') {
        d->pos++;
        goto done;
    }
    for (bool first = true;; first = false) {
        skip_ws(d);
        if (d->pos >= d->n || d->s[d->pos] != '"') {
            jerr(d, d->pos, d->pos >= d->n ? "unterminated object" : "expected a string key");
            goto fail;
        }
        size_t key_at = d->pos;
        if (!(key = dec_string(d)))
            goto fail;
        skip_ws(d);
        if (d->pos >= d->n || d->s[d->pos] != ':') {
            jerr(d, d->pos, "expected ':'");
            goto fail;
        }
        d->pos++;
        if (!(v = dec_value(d)))
            goto fail;
        skip_ws(d);
        if (d->pos >= d->n) {
            jerr(d, d->pos, "unterminated object");
            goto fail;
        }
        unsigned char c = d->s[d->pos];
        if (first && c == '}' && code_str_len(key) && code_str_cstr(key)[0] == '$') {
            d->pos++;
            cv r = dec_tag(d, key_at, key, v);
            code_decref(d->vm, key);
            code_decref(d->vm, v);
            code_decref(d->vm, dict);
            code_guard_leave(d->vm);
            return r;
        }
        if (code_dict_set(d->vm, dict, key, v) < 0)
            goto fail;
        code_decref(d->vm, key);
        code_decref(d->vm, v);
        key = v = CV_NULL;
        d->pos++;
        if (c == '}')
            break;
        if (c != ',') {
            jerr(d, d->pos - 1, "expected ',' or '}'");
            goto fail;
        }
    }
done:
    code_guard_leave(d->vm);
    return dict;
fail:
    code_decref(d->vm, key);
    code_decref(d->vm, v);
    code_decref(d->vm, dict);
    code_guard_leave(d->vm);
    return CV_NULL;
}

static bool literal(jdec *d, const char *word)
{
    size_t n = strlen(word);
    if (d->n - d->pos < n || memcmp(d->s + d->pos, word, n) != 0)
        return false;
    d->pos += n;
    return true;
}

static cv dec_value(jdec *d)
{
    skip_ws(d);
    if (d->pos >= d->n)
        return jerr(d, d->pos, "unexpected end of input");
    unsigned char c = d->s[d->pos];
    switch (c) {
    case '{':
        return dec_object(d);
    case '[':
        return dec_array(d);
    case '"':
        return dec_string(d);
    case 't':
        if (literal(d, "true"))
            return CODE_TRUE;
        break;
    case 'f':
        if (literal(d, "false"))
            return CODE_FALSE;
        break;
    case 'n':
        if (literal(d, "null"))
            return CODE_NONE;
        break;
    default:
        if (c == '-' || is_digit(c))
            return dec_number(d);
        break;
    }
    return jerr(d, d->pos, c ? "unexpected character" : "NUL byte");
}

cv code_json_decode(code_vm *vm, const char *s, size_t n)
{
    jdec d = {.vm = vm, .s = (const unsigned char *)s, .n = n};
    cv v = dec_value(&d);
    if (!v)
        return CV_NULL;
    skip_ws(&d);
    if (d.pos < d.n) {
        code_decref(vm, v);
        return jerr(&d, d.pos, "extra data after the value");
    }
    return v;
}
