/* Code mode's bytes methods: decode, hex, fromhex, searching, splitting,
 * joining, stripping, replacing, ASCII case and classes, as CPython 3.11's. */
#include "code/code_strutil.h"

#include <string.h>

#define B(v) code_bytes_p(v)
#define BS(v) ((const char *)code_bytes_p(v)->s)

static int nargs_check(code_vm *vm, const char *name, size_t nargs, cv kw, size_t min, size_t max)
{
    return code_str_nargs(vm, "bytes", name, nargs - 1, kw, min, max);
}

static int need_bytes(code_vm *vm, cv v)
{
    if (!cv_is(v, &code_type_bytes))
        return code_raise_i(vm, &code_exc_TypeError, "a bytes-like object is required, not '%s'",
                            code_type_name(v));
    return 0;
}

static cv m_decode(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    cv enc = CV_NULL, err = CV_NULL;
    if (code_args(vm, "decode", args + 1, nargs - 1, kw, "|encoding,errors", &enc, &err))
        return CV_NULL;
    const char *e = "utf-8", *r = "strict";
    if (enc && code_arg_cstr(vm, enc, "decode() argument 'encoding'", &e))
        return CV_NULL;
    if (err && code_arg_cstr(vm, err, "decode() argument 'errors'", &r))
        return CV_NULL;
    return code_codec_decode(vm, B(args[0])->s, B(args[0])->len, e, r);
}

static cv m_hex(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    cv sep = CV_NULL, per = CV_NULL;
    if (code_args(vm, "hex", args + 1, nargs - 1, kw, "|sep,bytes_per_sep", &sep, &per))
        return CV_NULL;
    char sc = 0;
    if (sep) {
        const char *s;
        size_t n;
        if (cv_is(sep, &code_type_str)) {
            s = code_str_cstr(sep);
            n = code_str_p(sep)->nchars;
        } else if (cv_is(sep, &code_type_bytes)) {
            s = BS(sep);
            n = B(sep)->len;
        } else
            return code_raise(vm, &code_exc_TypeError, "object of type '%s' has no len()",
                              code_type_name(sep));
        if (n != 1)
            return code_raise(vm, &code_exc_ValueError, "sep must be length 1.");
        if ((unsigned char)s[0] >= 0x80)
            return code_raise(vm, &code_exc_ValueError, "sep must be ASCII.");
        sc = s[0];
    }
    ssize_t every = 1;
    if (per && code_as_index(vm, per, &every))
        return CV_NULL;
    code_bytes *b = B(args[0]);
    code_sb sb;
    code_sb_init(&sb, vm);
    size_t k = every < 0 ? (size_t)-every : (size_t)every;
    for (size_t i = 0; i < b->len; i++) {
        if (sc && k && i) {
            /* Groups count from the right, or from the left when negative. */
            bool at = every > 0 ? (b->len - i) % k == 0 : i % k == 0;
            if (at)
                code_sb_add(&sb, &sc, 1);
        }
        code_sb_printf(&sb, "%02x", b->s[i]);
    }
    if (sb.failed) {
        code_sb_free(&sb);
        return CV_NULL;
    }
    return code_sb_finish(&sb);
}

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

/* bytes.fromhex(s): looked up on the type, so s is args[0]. */
static cv m_fromhex(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    if (code_str_nargs(vm, "bytes", "fromhex", nargs, kw, 1, 1))
        return CV_NULL;
    if (!cv_is(args[0], &code_type_str))
        return code_raise(vm, &code_exc_TypeError, "fromhex() argument must be str, not %s",
                          code_type_name(args[0]));
    const char *s = code_str_cstr(args[0]);
    size_t n = code_str_len(args[0]), i = 0;
    code_sb sb;
    code_sb_init(&sb, vm);
    while (i < n) {
        if (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
            i++;
            continue;
        }
        int hi = hexval(s[i]), lo = i + 1 < n ? hexval(s[i + 1]) : -1;
        if (hi < 0 || lo < 0) {
            size_t bad = hi < 0 ? i : i + 1;
            code_sb_free(&sb);
            return code_raise(vm, &code_exc_ValueError,
                              "non-hexadecimal number found in fromhex() arg at position %zu",
                              code_str_charindex(code_str_p(args[0]), bad));
        }
        char c = (char)(hi * 16 + lo);
        code_sb_add(&sb, &c, 1);
        i += 2;
    }
    cv r = sb.failed ? CV_NULL : code_bytes_new(vm, sb.p ? sb.p : "", sb.len);
    code_sb_free(&sb);
    return r;
}

/* The needle of find/count/index: bytes or one byte as an int. */
static int needle(code_vm *vm, cv v, char *one, const char **p, size_t *n)
{
    int k = cv_kind(v);
    if (k == CODE_K_INT || k == CODE_K_BOOL) {
        int64_t i;
        if (k == CODE_K_BOOL)
            i = v == CODE_TRUE;
        else if (!code_int_to_i64(v, &i) || i < 0 || i > 255)
            return code_raise_i(vm, &code_exc_ValueError, "byte must be in range(0, 256)");
        *one = (char)i;
        *p = one;
        *n = 1;
        return 0;
    }
    if (!cv_is(v, &code_type_bytes))
        return code_raise_i(vm, &code_exc_TypeError,
                            "argument should be integer or bytes-like object, not '%s'",
                            code_type_name(v));
    *p = BS(v);
    *n = B(v)->len;
    return 0;
}

/* -2 error, -1 not found. count: the number of matches instead. */
static ssize_t search(code_vm *vm, const char *name, cv *args, size_t nargs, cv kw, int mode)
{
    if (nargs_check(vm, name, nargs, kw, 1, 3))
        return -2;
    char one;
    const char *nd;
    size_t nn, lo, hi;
    if (needle(vm, args[1], &one, &nd, &nn) ||
        code_str_range_args(vm, nargs > 2 ? args[2] : CV_NULL, nargs > 3 ? args[3] : CV_NULL,
                            B(args[0])->len, &lo, &hi))
        return -2;
    const char *h = BS(args[0]);
    if (lo > B(args[0])->len || (hi < lo && !(mode == 2)))
        return mode == 2 ? 0 : -1;
    if (hi < lo)
        return 0;
    if (mode == 2) {
        if (nn == 0)
            return (ssize_t)(hi - lo + 1);
        ssize_t c = 0, at;
        size_t i = lo;
        while ((at = code_find_bytes(h + i, hi - i, nd, nn)) >= 0) {
            c++;
            i += (size_t)at + nn;
        }
        return c;
    }
    ssize_t at = (mode ? code_rfind_bytes : code_find_bytes)(h + lo, hi - lo, nd, nn);
    return at < 0 ? -1 : (ssize_t)lo + at;
}

static cv m_find(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    ssize_t r = search(vm, "find", args, nargs, kw, 0);
    return r == -2 ? CV_NULL : code_int_from_i64(vm, r);
}

static cv m_rfind(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    ssize_t r = search(vm, "rfind", args, nargs, kw, 1);
    return r == -2 ? CV_NULL : code_int_from_i64(vm, r);
}

static cv m_index(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    ssize_t r = search(vm, "index", args, nargs, kw, 0);
    if (r == -1)
        return code_raise(vm, &code_exc_ValueError, "subsection not found");
    return r == -2 ? CV_NULL : code_int_from_i64(vm, r);
}

static cv m_rindex(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    ssize_t r = search(vm, "rindex", args, nargs, kw, 1);
    if (r == -1)
        return code_raise(vm, &code_exc_ValueError, "subsection not found");
    return r == -2 ? CV_NULL : code_int_from_i64(vm, r);
}

static cv m_count(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    ssize_t r = search(vm, "count", args, nargs, kw, 2);
    return r == -2 ? CV_NULL : code_int_from_i64(vm, r);
}

static cv starts_ends(code_vm *vm, const char *name, cv *args, size_t nargs, cv kw, bool end)
{
    if (nargs_check(vm, name, nargs, kw, 1, 3))
        return CV_NULL;
    cv pre = args[1];
    bool tuple = cv_is(pre, &code_type_tuple);
    if (!tuple && !cv_is(pre, &code_type_bytes))
        return code_raise(vm, &code_exc_TypeError,
                          "%s first arg must be bytes or a tuple of bytes, not %s", name,
                          code_type_name(pre));
    size_t lo, hi;
    if (code_str_range_args(vm, nargs > 2 ? args[2] : CV_NULL, nargs > 3 ? args[3] : CV_NULL,
                            B(args[0])->len, &lo, &hi))
        return CV_NULL;
    size_t n = tuple ? ((code_tuple *)cv_obj(pre))->n : 1;
    for (size_t i = 0; i < n; i++) {
        cv p = tuple ? ((code_tuple *)cv_obj(pre))->v[i] : pre;
        if (!cv_is(p, &code_type_bytes))
            return code_raise(vm, &code_exc_TypeError,
                              "a bytes-like object is required, not '%s'", code_type_name(p));
        if (lo > B(args[0])->len || hi < lo)
            continue;
        size_t pn = B(p)->len;
        if (pn > hi - lo)
            continue;
        if (memcmp(BS(args[0]) + (end ? hi - pn : lo), BS(p), pn) == 0)
            return CODE_TRUE;
    }
    return CODE_FALSE;
}

static cv m_startswith(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    return starts_ends(vm, "startswith", args, nargs, kw, false);
}

static cv m_endswith(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    return starts_ends(vm, "endswith", args, nargs, kw, true);
}

static cv split_common(code_vm *vm, const char *name, cv *args, size_t nargs, cv kw, bool rev)
{
    cv sep = CODE_NONE, ms = CV_NULL;
    if (code_args(vm, name, args + 1, nargs - 1, kw, "|sep,maxsplit", &sep, &ms))
        return CV_NULL;
    if (sep != CODE_NONE && need_bytes(vm, sep))
        return CV_NULL;
    if (sep != CODE_NONE && B(sep)->len == 0)
        return code_raise(vm, &code_exc_ValueError, "empty separator");
    ssize_t m = -1;
    if (ms && code_as_index(vm, ms, &m))
        return CV_NULL;
    return code_split_impl(vm, args[0], BS(args[0]), B(args[0])->len, sep,
                           sep == CODE_NONE ? NULL : BS(sep), sep == CODE_NONE ? 0 : B(sep)->len,
                           m < 0 ? INT64_MAX : m, rev, true);
}

static cv m_split(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    return split_common(vm, "split", args, nargs, kw, false);
}

static cv m_rsplit(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    return split_common(vm, "rsplit", args, nargs, kw, true);
}

static cv m_join(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    if (nargs_check(vm, "join", nargs, kw, 1, 1))
        return CV_NULL;
    cv tmp, *items;
    size_t n;
    if (code_str_seq_items(vm, args[1], &tmp, &items, &n, "can only join an iterable"))
        return CV_NULL;
    code_bytes *sep = B(args[0]);
    size_t total = 0;
    cv r = CV_NULL;
    for (size_t i = 0; i < n; i++) {
        if (!cv_is(items[i], &code_type_bytes)) {
            code_raise(vm, &code_exc_TypeError,
                       "sequence item %zu: expected a bytes-like object, %s found", i,
                       code_type_name(items[i]));
            goto out;
        }
        total += B(items[i])->len + (i ? sep->len : 0);
    }
    code_sb sb;
    code_sb_init(&sb, vm);
    for (size_t i = 0; i < n; i++) {
        if (i)
            code_sb_add(&sb, (const char *)sep->s, sep->len);
        code_sb_add(&sb, BS(items[i]), B(items[i])->len);
    }
    if (!sb.failed)
        r = code_bytes_new(vm, sb.p ? sb.p : "", sb.len);
    code_sb_free(&sb);
    (void)total;
out:
    code_decref(vm, tmp);
    return r;
}

static cv strip_common(code_vm *vm, const char *name, cv *args, size_t nargs, cv kw, int which)
{
    if (nargs_check(vm, name, nargs, kw, 0, 1))
        return CV_NULL;
    cv chars = nargs > 1 ? args[1] : CODE_NONE;
    if (chars != CODE_NONE && need_bytes(vm, chars))
        return CV_NULL;
    bool set[256] = {false};
    if (chars == CODE_NONE) {
        const char *ws = " \t\n\r\v\f";
        for (; *ws; ws++)
            set[(unsigned char)*ws] = true;
    } else
        for (size_t i = 0; i < B(chars)->len; i++)
            set[B(chars)->s[i]] = true;
    const unsigned char *s = B(args[0])->s;
    size_t a = 0, b = B(args[0])->len;
    if (which & 1)
        while (a < b && set[s[a]])
            a++;
    if (which & 2)
        while (b > a && set[s[b - 1]])
            b--;
    if (a == 0 && b == B(args[0])->len)
        return code_incref(args[0]);
    return code_bytes_new(vm, s + a, b - a);
}

static cv m_strip(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    return strip_common(vm, "strip", args, nargs, kw, 3);
}

static cv m_lstrip(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    return strip_common(vm, "lstrip", args, nargs, kw, 1);
}

static cv m_rstrip(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    return strip_common(vm, "rstrip", args, nargs, kw, 2);
}

static cv m_replace(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    if (nargs_check(vm, "replace", nargs, kw, 2, 3) || need_bytes(vm, args[1]) ||
        need_bytes(vm, args[2]))
        return CV_NULL;
    ssize_t count = -1;
    if (nargs > 3 && code_as_index(vm, args[3], &count))
        return CV_NULL;
    code_sb sb;
    code_sb_init(&sb, vm);
    cv r = CV_NULL;
    if (!code_replace_impl(&sb, BS(args[0]), B(args[0])->len, BS(args[1]), B(args[1])->len,
                           BS(args[2]), B(args[2])->len, count, true))
        r = code_bytes_new(vm, sb.p ? sb.p : "", sb.len);
    code_sb_free(&sb);
    return r;
}

static cv case_common(code_vm *vm, const char *name, cv *args, size_t nargs, cv kw, bool up)
{
    if (nargs_check(vm, name, nargs, kw, 0, 0))
        return CV_NULL;
    cv r = code_bytes_new(vm, B(args[0])->s, B(args[0])->len);
    if (!r)
        return CV_NULL;
    unsigned char *s = B(r)->s;
    for (size_t i = 0; i < B(r)->len; i++) {
        if (up && s[i] >= 'a' && s[i] <= 'z')
            s[i] = (unsigned char)(s[i] - 32);
        else if (!up && s[i] >= 'A' && s[i] <= 'Z')
            s[i] = (unsigned char)(s[i] + 32);
    }
    return r;
}

static cv m_upper(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    return case_common(vm, "upper", args, nargs, kw, true);
}

static cv m_lower(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    return case_common(vm, "lower", args, nargs, kw, false);
}

enum { CL_DIGIT, CL_ALPHA, CL_ALNUM, CL_SPACE };

static cv class_common(code_vm *vm, const char *name, cv *args, size_t nargs, cv kw, int cl)
{
    if (nargs_check(vm, name, nargs, kw, 0, 0))
        return CV_NULL;
    code_bytes *b = B(args[0]);
    if (!b->len)
        return CODE_FALSE;
    for (size_t i = 0; i < b->len; i++) {
        unsigned char c = b->s[i];
        bool d = c >= '0' && c <= '9', a = (c | 32) >= 'a' && (c | 32) <= 'z';
        bool ok = cl == CL_DIGIT ? d : cl == CL_ALPHA ? a : cl == CL_ALNUM ? a || d
                  : c == ' ' || (c >= '\t' && c <= '\r');
        if (!ok)
            return CODE_FALSE;
    }
    return CODE_TRUE;
}

static cv m_isdigit(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    return class_common(vm, "isdigit", args, nargs, kw, CL_DIGIT);
}

static cv m_isalpha(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    return class_common(vm, "isalpha", args, nargs, kw, CL_ALPHA);
}

static cv m_isalnum(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    return class_common(vm, "isalnum", args, nargs, kw, CL_ALNUM);
}

static cv m_isspace(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    return class_common(vm, "isspace", args, nargs, kw, CL_SPACE);
}

const code_method code_bytes_methods[] = {
    {"capitalize", code_bytes_m_capitalize},
    {"center", code_bytes_m_center},
    {"count", m_count},
    {"decode", m_decode},
    {"endswith", m_endswith},
    {"find", m_find},
    {"fromhex", m_fromhex},
    {"hex", m_hex},
    {"index", m_index},
    {"isalnum", m_isalnum},
    {"isalpha", m_isalpha},
    {"isascii", code_bytes_m_isascii},
    {"isdigit", m_isdigit},
    {"islower", code_bytes_m_islower},
    {"isspace", m_isspace},
    {"istitle", code_bytes_m_istitle},
    {"isupper", code_bytes_m_isupper},
    {"join", m_join},
    {"ljust", code_bytes_m_ljust},
    {"lower", m_lower},
    {"lstrip", m_lstrip},
    {"partition", code_bytes_m_partition},
    {"removeprefix", code_bytes_m_removeprefix},
    {"removesuffix", code_bytes_m_removesuffix},
    {"replace", m_replace},
    {"rfind", m_rfind},
    {"rindex", m_rindex},
    {"rjust", code_bytes_m_rjust},
    {"rpartition", code_bytes_m_rpartition},
    {"rsplit", m_rsplit},
    {"rstrip", m_rstrip},
    {"split", m_split},
    {"splitlines", code_bytes_m_splitlines},
    {"startswith", m_startswith},
    {"strip", m_strip},
    {"swapcase", code_bytes_m_swapcase},
    {"title", code_bytes_m_title},
    {"upper", m_upper},
    {"zfill", code_bytes_m_zfill},
    {NULL, NULL},
};
