/* Code mode's str methods: searching, stripping, replacing, partitioning,
 * and the method table (splitting and joining are code_str_split.c, case
 * and layout code_str_case.c). Each follows CPython 3.11's str method of
 * the same name, messages included. Indices cross the Python side as code points and the C side as byte
 * offsets; valid UTF-8 is self-synchronising, so a byte search only ever
 * matches at character boundaries. */
#include "code/code_strutil.h"

#include <string.h>

#define S(v) code_str_p(v)

ssize_t code_find_bytes(const char *h, size_t hn, const char *n, size_t nn)
{
    if (nn == 0)
        return 0;
    if (nn > hn)
        return -1;
    const char *p = nn == 1 ? memchr(h, n[0], hn) : memmem(h, hn, n, nn);
    return p ? p - h : -1;
}

ssize_t code_rfind_bytes(const char *h, size_t hn, const char *n, size_t nn)
{
    if (nn > hn)
        return -1;
    if (nn == 0)
        return (ssize_t)hn;
    if (nn == 1) {
        const char *p = memrchr(h, n[0], hn);
        return p ? p - h : -1;
    }
    for (size_t i = hn - nn + 1; i-- > 0;)
        if (h[i] == n[0] && memcmp(h + i, n, nn) == 0)
            return (ssize_t)i;
    return -1;
}

/* A substring of parent: its character count is known without a scan when
 * the parent is ASCII. */
cv code_str_sub(code_vm *vm, cv parent, const char *s, size_t n)
{
    if (S(parent)->ascii)
        return code_str_new_n(vm, s, n, n);
    return code_str_new(vm, s, n);
}

static int index_arg(code_vm *vm, cv v, ssize_t *out)
{
    if (v == CODE_NONE)
        return 1;
    int k = cv_kind(v);
    if (k != CODE_K_INT && k != CODE_K_BOOL)
        return code_raise_i(vm, &code_exc_TypeError,
                            "slice indices must be integers or None or have an __index__ method");
    return code_as_index(vm, v, out);
}

/* CPython's ADJUST_INDICES: *lo may end past len (nothing found then). */
int code_str_range_args(code_vm *vm, cv start, cv end, size_t len, size_t *lo, size_t *hi)
{
    ssize_t a = 0, b = (ssize_t)len;
    int rc;
    if (start && (rc = index_arg(vm, start, &a)) < 0)
        return -1;
    if (end && (rc = index_arg(vm, end, &b)) < 0)
        return -1;
    if (b > (ssize_t)len)
        b = (ssize_t)len;
    else if (b < 0) {
        b += (ssize_t)len;
        if (b < 0)
            b = 0;
    }
    if (a < 0) {
        a += (ssize_t)len;
        if (a < 0)
            a = 0;
    }
    *lo = (size_t)a;
    *hi = (size_t)b;
    return 0;
}

static int nargs_check(code_vm *vm, const char *name, size_t nargs, cv kwnames, size_t min,
                       size_t max)
{
    return code_str_nargs(vm, "str", name, nargs - 1, kwnames, min, max);
}

/* ---- find, index, count ---- */

/* The sub-range [*a, *b) of self in bytes for start/end arguments; 0 when
 * the range starts past the end or past its own end (nothing can match, not
 * even ""). */
static int byte_range(code_vm *vm, cv self, cv *args, size_t nargs, size_t first, size_t *a,
                      size_t *b)
{
    size_t lo, hi;
    if (code_str_range_args(vm, nargs > first ? args[first] : CV_NULL,
                            nargs > first + 1 ? args[first + 1] : CV_NULL, S(self)->nchars, &lo,
                            &hi))
        return -1;
    if (lo > S(self)->nchars || hi < lo)
        return 0;
    *a = code_str_offset(S(self), lo);
    *b = code_str_offset(S(self), hi);
    return 1;
}

static int sub_arg(code_vm *vm, cv v)
{
    if (!cv_is(v, &code_type_str))
        return code_raise_i(vm, &code_exc_TypeError, "must be str, not %s", code_type_name(v));
    return 0;
}

/* -2 on error, -1 not found, else the code point index. */
static ssize_t find_common(code_vm *vm, const char *name, cv *args, size_t nargs, cv kwnames,
                           bool rev)
{
    if (nargs_check(vm, name, nargs, kwnames, 1, 3) || sub_arg(vm, args[1]))
        return -2;
    size_t a, b;
    int r = byte_range(vm, args[0], args, nargs, 2, &a, &b);
    if (r < 0)
        return -2;
    if (r == 0)
        return -1;
    const char *h = code_str_cstr(args[0]);
    ssize_t at = (rev ? code_rfind_bytes : code_find_bytes)(h + a, b - a, code_str_cstr(args[1]),
                                                            code_str_len(args[1]));
    if (at < 0)
        return -1;
    return (ssize_t)code_str_charindex(S(args[0]), a + (size_t)at);
}

static cv m_find(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    ssize_t i = find_common(vm, "find", args, nargs, kw, false);
    return i == -2 ? CV_NULL : code_int_from_i64(vm, i);
}

static cv m_rfind(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    ssize_t i = find_common(vm, "rfind", args, nargs, kw, true);
    return i == -2 ? CV_NULL : code_int_from_i64(vm, i);
}

static cv m_index(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    ssize_t i = find_common(vm, "index", args, nargs, kw, false);
    if (i == -1)
        return code_raise(vm, &code_exc_ValueError, "substring not found");
    return i == -2 ? CV_NULL : code_int_from_i64(vm, i);
}

static cv m_rindex(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    ssize_t i = find_common(vm, "rindex", args, nargs, kw, true);
    if (i == -1)
        return code_raise(vm, &code_exc_ValueError, "substring not found");
    return i == -2 ? CV_NULL : code_int_from_i64(vm, i);
}

static cv m_count(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    if (nargs_check(vm, "count", nargs, kw, 1, 3) || sub_arg(vm, args[1]))
        return CV_NULL;
    size_t a, b;
    int r = byte_range(vm, args[0], args, nargs, 2, &a, &b);
    if (r <= 0)
        return r < 0 ? CV_NULL : cv_from_small(0);
    size_t nn = code_str_len(args[1]);
    if (nn == 0) {
        size_t chars = S(args[0])->ascii ? b - a : code_utf8_count(code_str_cstr(args[0]) + a, b - a);
        return code_int_from_u64(vm, chars + 1);
    }
    const char *h = code_str_cstr(args[0]) + a, *n = code_str_cstr(args[1]);
    size_t hn = b - a, c = 0;
    ssize_t at;
    while ((at = code_find_bytes(h, hn, n, nn)) >= 0) {
        c++;
        h += (size_t)at + nn;
        hn -= (size_t)at + nn;
    }
    return code_int_from_u64(vm, c);
}

/* ---- startswith, endswith ---- */

static cv starts_ends(code_vm *vm, const char *name, cv *args, size_t nargs, cv kw, bool end)
{
    if (nargs_check(vm, name, nargs, kw, 1, 3))
        return CV_NULL;
    cv pre = args[1];
    bool tuple = cv_is(pre, &code_type_tuple);
    if (!tuple && !cv_is(pre, &code_type_str))
        return code_raise(vm, &code_exc_TypeError,
                          "%s first arg must be str or a tuple of str, not %s", name,
                          code_type_name(pre));
    size_t a, b;
    int r = byte_range(vm, args[0], args, nargs, 2, &a, &b);
    if (r < 0)
        return CV_NULL;
    size_t n = tuple ? ((code_tuple *)cv_obj(pre))->n : 1;
    for (size_t i = 0; i < n; i++) {
        cv p = tuple ? ((code_tuple *)cv_obj(pre))->v[i] : pre;
        if (!cv_is(p, &code_type_str))
            return code_raise(vm, &code_exc_TypeError, "tuple for %s must only contain str, not %s",
                              name, code_type_name(p));
        if (r == 0)
            continue;
        size_t pn = code_str_len(p);
        if (pn > b - a)
            continue;
        const char *h = code_str_cstr(args[0]) + (end ? b - pn : a);
        if (memcmp(h, code_str_cstr(p), pn) == 0)
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

/* ---- strip ---- */

static bool in_chars(uint32_t cp, const char *chars, size_t n)
{
    size_t i = 0;
    while (i < n)
        if (code_utf8_next(chars, &i) == cp)
            return true;
    return false;
}

/* which: 1 left, 2 right, 3 both. */
static cv strip_common(code_vm *vm, const char *name, cv *args, size_t nargs, cv kw, int which)
{
    if (nargs_check(vm, name, nargs, kw, 0, 1))
        return CV_NULL;
    cv chars = nargs > 1 ? args[1] : CODE_NONE;
    if (chars != CODE_NONE && !cv_is(chars, &code_type_str))
        return code_raise(vm, &code_exc_TypeError, "%s arg must be None or str", name);
    const char *s = code_str_cstr(args[0]), *cs = NULL;
    size_t n = code_str_len(args[0]), csn = 0, a = 0, b = n, nx;
    if (chars != CODE_NONE) {
        cs = code_str_cstr(chars);
        csn = code_str_len(chars);
    }
    if (which & 1)
        while (a < b) {
            size_t j = a;
            uint32_t cp = code_utf8_next(s, &j);
            bool hit = cs ? in_chars(cp, cs, csn) : code_str_space_at(s, a, &nx);
            if (!hit)
                break;
            a = j;
        }
    if (which & 2)
        while (b > a) {
            size_t j = b;
            uint32_t cp = code_utf8_prev(s, &j);
            bool hit = cs ? in_chars(cp, cs, csn) : code_str_space_at(s, j, &nx);
            if (!hit)
                break;
            b = j;
        }
    if (a == 0 && b == n)
        return code_incref(args[0]);
    return code_str_sub(vm, args[0], s + a, b - a);
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

static cv m_removeprefix(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    if (nargs_check(vm, "removeprefix", nargs, kw, 1, 1))
        return CV_NULL;
    if (!cv_is(args[1], &code_type_str))
        return code_raise(vm, &code_exc_TypeError, "removeprefix() argument must be str, not %s",
                          code_type_name(args[1]));
    size_t n = code_str_len(args[0]), pn = code_str_len(args[1]);
    if (pn && pn <= n && memcmp(code_str_cstr(args[0]), code_str_cstr(args[1]), pn) == 0)
        return code_str_sub(vm, args[0], code_str_cstr(args[0]) + pn, n - pn);
    return code_incref(args[0]);
}

static cv m_removesuffix(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    if (nargs_check(vm, "removesuffix", nargs, kw, 1, 1))
        return CV_NULL;
    if (!cv_is(args[1], &code_type_str))
        return code_raise(vm, &code_exc_TypeError, "removesuffix() argument must be str, not %s",
                          code_type_name(args[1]));
    size_t n = code_str_len(args[0]), pn = code_str_len(args[1]);
    if (pn && pn <= n && memcmp(code_str_cstr(args[0]) + n - pn, code_str_cstr(args[1]), pn) == 0)
        return code_str_sub(vm, args[0], code_str_cstr(args[0]), n - pn);
    return code_incref(args[0]);
}

/* ---- replace, partition ---- */

/* s with up to count occurrences of old replaced by new (count < 0: all),
 * into b; for str and bytes. An empty old inserts new before every
 * character (every byte for bytes) and at the end. */
int code_replace_impl(code_sb *b, const char *s, size_t n, const char *old, size_t on,
                      const char *new, size_t nn, int64_t count, bool bytes)
{
    if (count < 0)
        count = INT64_MAX;
    if (on == 0) {
        size_t i = 0;
        while (count > 0) {
            if (code_sb_add(b, new, nn))
                return -1;
            count--;
            if (i >= n)
                break;
            size_t l = bytes ? 1 : code_utf8_seqlen((unsigned char)s[i]);
            if (code_sb_add(b, s + i, l))
                return -1;
            i += l;
        }
        return i < n ? code_sb_add(b, s + i, n - i) : 0;
    }
    size_t i = 0;
    ssize_t at;
    while (count > 0 && (at = code_find_bytes(s + i, n - i, old, on)) >= 0) {
        if (code_sb_add(b, s + i, (size_t)at) || code_sb_add(b, new, nn))
            return -1;
        i += (size_t)at + on;
        count--;
    }
    return code_sb_add(b, s + i, n - i);
}

static cv m_replace(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    if (nargs_check(vm, "replace", nargs, kw, 2, 3))
        return CV_NULL;
    for (int k = 1; k <= 2; k++)
        if (!cv_is(args[k], &code_type_str))
            return code_raise(vm, &code_exc_TypeError, "replace() argument %d must be str, not %s",
                              k, code_type_name(args[k]));
    int64_t count = -1;
    if (nargs > 3) {
        ssize_t c;
        if (code_as_index(vm, args[3], &c))
            return CV_NULL;
        count = c;
    }
    const char *s = code_str_cstr(args[0]);
    size_t n = code_str_len(args[0]);
    if (count == 0 || (code_str_len(args[1]) && !memmem(s, n, code_str_cstr(args[1]), code_str_len(args[1]))))
        return code_incref(args[0]);
    code_sb b;
    code_sb_init(&b, vm);
    if (code_replace_impl(&b, s, n, code_str_cstr(args[1]), code_str_len(args[1]),
                          code_str_cstr(args[2]), code_str_len(args[2]), count, false)) {
        code_sb_free(&b);
        return CV_NULL;
    }
    return code_sb_finish(&b);
}

static cv partition_common(code_vm *vm, const char *name, cv *args, size_t nargs, cv kw, bool rev)
{
    if (nargs_check(vm, name, nargs, kw, 1, 1) || sub_arg(vm, args[1]))
        return CV_NULL;
    cv self = args[0], sep = args[1];
    size_t n = code_str_len(self), sn = code_str_len(sep);
    if (sn == 0)
        return code_raise(vm, &code_exc_ValueError, "empty separator");
    const char *s = code_str_cstr(self);
    ssize_t at = (rev ? code_rfind_bytes : code_find_bytes)(s, n, code_str_cstr(sep), sn);
    cv a, b, c;
    if (at < 0) {
        cv e = code_str_new(vm, "", 0);
        if (!e)
            return CV_NULL;
        cv t = rev ? code_tuple_pack(vm, 3, e, e, self) : code_tuple_pack(vm, 3, self, e, e);
        code_decref(vm, e);
        return t;
    }
    a = code_str_sub(vm, self, s, (size_t)at);
    c = code_str_sub(vm, self, s + at + sn, n - (size_t)at - sn);
    b = sep;
    cv t = a && c ? code_tuple_pack(vm, 3, a, b, c) : CV_NULL;
    code_decref(vm, a);
    code_decref(vm, c);
    return t;
}

static cv m_partition(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    return partition_common(vm, "partition", args, nargs, kw, false);
}

static cv m_rpartition(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    return partition_common(vm, "rpartition", args, nargs, kw, true);
}

const code_method code_str_methods[] = {
    {"capitalize", code_str_m_capitalize},
    {"casefold", code_str_m_casefold},
    {"center", code_str_m_center},
    {"count", m_count},
    {"encode", code_str_m_encode},
    {"endswith", m_endswith},
    {"expandtabs", code_str_m_expandtabs},
    {"find", m_find},
    {"format", code_str_method_format},
    {"format_map", code_str_method_format_map},
    {"index", m_index},
    {"isalnum", code_str_m_isalnum},
    {"isalpha", code_str_m_isalpha},
    {"isascii", code_str_m_isascii},
    {"isdecimal", code_str_m_isdecimal},
    {"isdigit", code_str_m_isdigit},
    {"isidentifier", code_str_m_isidentifier},
    {"islower", code_str_m_islower},
    {"isnumeric", code_str_m_isnumeric},
    {"isprintable", code_str_m_isprintable},
    {"isspace", code_str_m_isspace},
    {"istitle", code_str_m_istitle},
    {"isupper", code_str_m_isupper},
    {"join", code_str_m_join},
    {"ljust", code_str_m_ljust},
    {"lower", code_str_m_lower},
    {"lstrip", m_lstrip},
    {"maketrans", code_str_m_maketrans},
    {"partition", m_partition},
    {"removeprefix", m_removeprefix},
    {"removesuffix", m_removesuffix},
    {"replace", m_replace},
    {"rfind", m_rfind},
    {"rindex", m_rindex},
    {"rjust", code_str_m_rjust},
    {"rpartition", m_rpartition},
    {"rsplit", code_str_m_rsplit},
    {"rstrip", m_rstrip},
    {"split", code_str_m_split},
    {"splitlines", code_str_m_splitlines},
    {"startswith", m_startswith},
    {"strip", m_strip},
    {"swapcase", code_str_m_swapcase},
    {"title", code_str_m_title},
    {"translate", code_str_m_translate},
    {"upper", code_str_m_upper},
    {"zfill", code_str_m_zfill},
    {NULL, NULL},
};
