/* Code mode's str methods: split, rsplit, splitlines and join (the
 * splitting engine is shared with bytes). */
#include "code/code_strutil.h"

#include <string.h>

#define S(v) code_str_p(v)

static int list_add(code_vm *vm, cv list, cv v)
{
    if (!v)
        return -1;
    int rc = code_list_append(vm, list, v);
    code_decref(vm, v);
    return rc;
}

static int nargs_check(code_vm *vm, const char *name, size_t nargs, cv kwnames, size_t min,
                       size_t max)
{
    return code_str_nargs(vm, "str", name, nargs - 1, kwnames, min, max);
}

/* ---- split, rsplit, splitlines ---- */

static bool is_space_before(const char *s, size_t i, size_t *prev)
{
    size_t j = i;
    uint32_t cp = code_utf8_prev(s, &j);
    *prev = j;
    if (cp < 0x80)
        return cp == ' ' || (cp >= '\t' && cp <= '\r') || (cp >= 0x1c && cp <= 0x1f);
    return code_uprop(cp, CODE_UP_SPACE);
}

/* Whitespace at s[i] (*next past the character either way): bytes know
 * only ASCII's, as CPython's bytes.split. */
static bool ws_at(const char *s, size_t i, size_t *next, bool bytes)
{
    if (bytes) {
        unsigned char c = (unsigned char)s[i];
        *next = i + 1;
        return c == ' ' || (c >= '\t' && c <= '\r');
    }
    return code_str_space_at(s, i, next);
}

static bool ws_before(const char *s, size_t i, size_t *prev, bool bytes)
{
    if (bytes) {
        unsigned char c = (unsigned char)s[i - 1];
        *prev = i - 1;
        return c == ' ' || (c >= '\t' && c <= '\r');
    }
    return is_space_before(s, i, prev);
}

static int split_args(code_vm *vm, const char *name, cv *args, size_t nargs, cv kw, cv *sep,
                      int64_t *maxsplit)
{
    cv sp = CODE_NONE, ms = CV_NULL;
    if (code_args(vm, name, args + 1, nargs - 1, kw, "|sep,maxsplit", &sp, &ms))
        return -1;
    if (sp != CODE_NONE && !cv_is(sp, &code_type_str))
        return code_raise_i(vm, &code_exc_TypeError, "must be str or None, not %s",
                            code_type_name(sp));
    if (sp != CODE_NONE && code_str_len(sp) == 0)
        return code_raise_i(vm, &code_exc_ValueError, "empty separator");
    *sep = sp;
    *maxsplit = -1;
    if (ms) {
        ssize_t m;
        if (code_as_index(vm, ms, &m))
            return -1;
        *maxsplit = m;
    }
    if (*maxsplit < 0)
        *maxsplit = INT64_MAX;
    return 0;
}

/* str.split and bytes.split share this: whitespace is ASCII-only for bytes. */
cv code_split_impl(code_vm *vm, cv self, const char *s, size_t n, cv sep, const char *sp,
                   size_t spn, int64_t maxsplit, bool rev, bool bytes)
{
    cv list = code_list_new(vm, 0);
    if (!list)
        return CV_NULL;
#define PIECE(p, len)                                                                    \
    do {                                                                                 \
        cv v_ = bytes ? code_bytes_new(vm, (p), (len)) : code_str_sub(vm, self, (p), (len));       \
        if (list_add(vm, list, v_))                                                      \
            goto fail;                                                                   \
    } while (0)
    if (sep == CODE_NONE) {
        if (!rev) {
            size_t i = 0, nx;
            while (i < n) {
                while (i < n && ws_at(s, i, &nx, bytes))
                    i = nx;
                if (i >= n)
                    break;
                if (maxsplit-- <= 0) {
                    PIECE(s + i, n - i);
                    break;
                }
                size_t j = i;
                while (j < n && !ws_at(s, j, &nx, bytes))
                    j = nx;
                PIECE(s + i, j - i);
                i = j;
            }
        } else {
            size_t i = n, pv;
            while (i > 0) {
                while (i > 0 && ws_before(s, i, &pv, bytes))
                    i = pv;
                if (i == 0)
                    break;
                if (maxsplit-- <= 0) {
                    PIECE(s, i);
                    break;
                }
                size_t j = i;
                while (j > 0 && !ws_before(s, j, &pv, bytes))
                    j = pv;
                PIECE(s + j, i - j);
                i = j;
            }
        }
    } else if (!rev) {
        size_t i = 0;
        ssize_t at;
        while (maxsplit > 0 && (at = code_find_bytes(s + i, n - i, sp, spn)) >= 0) {
            PIECE(s + i, (size_t)at);
            i += (size_t)at + spn;
            maxsplit--;
        }
        PIECE(s + i, n - i);
    } else {
        size_t e = n;
        ssize_t at;
        while (maxsplit > 0 && (at = code_rfind_bytes(s, e, sp, spn)) >= 0) {
            PIECE(s + at + spn, e - (size_t)at - spn);
            e = (size_t)at;
            maxsplit--;
        }
        PIECE(s, e);
    }
#undef PIECE
    if (rev) {
        code_list *l = (code_list *)cv_obj(list);
        for (size_t i = 0, j = l->n ? l->n - 1 : 0; i < j; i++, j--) {
            cv t = l->v[i];
            l->v[i] = l->v[j];
            l->v[j] = t;
        }
    }
    return list;
fail:
    code_decref(vm, list);
    return CV_NULL;
}

static cv split_common(code_vm *vm, const char *name, cv *args, size_t nargs, cv kw, bool rev)
{
    cv sep = CODE_NONE;
    int64_t maxsplit = -1;
    if (split_args(vm, name, args, nargs, kw, &sep, &maxsplit))
        return CV_NULL;
    const char *sp = sep == CODE_NONE ? NULL : code_str_cstr(sep);
    size_t spn = sep == CODE_NONE ? 0 : code_str_len(sep);
    return code_split_impl(vm, args[0], code_str_cstr(args[0]), code_str_len(args[0]), sep, sp,
                           spn, maxsplit, rev, false);
}

cv code_str_m_split(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    return split_common(vm, "split", args, nargs, kw, false);
}

cv code_str_m_rsplit(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    return split_common(vm, "rsplit", args, nargs, kw, true);
}

/* The length of the line break at s[i] (0: none). */
static size_t line_break(const char *s, size_t n, size_t i)
{
    unsigned char c = (unsigned char)s[i];
    if (c == '\r')
        return i + 1 < n && s[i + 1] == '\n' ? 2 : 1;
    if (c == '\n' || c == '\v' || c == '\f' || (c >= 0x1c && c <= 0x1e))
        return 1;
    if (c == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] == 0x85)
        return 2;
    if (c == 0xE2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
        ((unsigned char)s[i + 2] == 0xA8 || (unsigned char)s[i + 2] == 0xA9))
        return 3;
    return 0;
}

cv code_str_m_splitlines(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    cv keep = CV_NULL;
    if (code_args(vm, "splitlines", args + 1, nargs - 1, kw, "|keepends", &keep))
        return CV_NULL;
    int keepends = 0;
    if (keep && (keepends = code_truth(vm, keep)) < 0)
        return CV_NULL;
    const char *s = code_str_cstr(args[0]);
    size_t n = code_str_len(args[0]);
    cv list = code_list_new(vm, 0);
    if (!list)
        return CV_NULL;
    size_t start = 0, i = 0;
    while (i < n) {
        size_t br = line_break(s, n, i);
        if (!br) {
            i++;
            continue;
        }
        if (list_add(vm, list, code_str_sub(vm, args[0], s + start, i - start + (keepends ? br : 0))))
            goto fail;
        i += br;
        start = i;
    }
    if (start < n && list_add(vm, list, code_str_sub(vm, args[0], s + start, n - start)))
        goto fail;
    return list;
fail:
    code_decref(vm, list);
    return CV_NULL;
}

/* ---- join ---- */

/* The items of an iterable as an array: lists and tuples lend theirs, other
 * iterables are copied into *tmp (a new list the caller drops). */
int code_str_seq_items(code_vm *vm, cv seq, cv *tmp, cv **items, size_t *n, const char *errmsg)
{
    *tmp = CV_NULL;
    if (cv_is(seq, &code_type_list)) {
        *items = ((code_list *)cv_obj(seq))->v;
        *n = ((code_list *)cv_obj(seq))->n;
        return 0;
    }
    if (cv_is(seq, &code_type_tuple)) {
        *items = ((code_tuple *)cv_obj(seq))->v;
        *n = ((code_tuple *)cv_obj(seq))->n;
        return 0;
    }
    if (!cv_type(seq)->iter)
        return code_raise_i(vm, &code_exc_TypeError, "%s", errmsg);
    *tmp = code_list_from(vm, seq);
    if (!*tmp)
        return -1;
    *items = ((code_list *)cv_obj(*tmp))->v;
    *n = ((code_list *)cv_obj(*tmp))->n;
    return 0;
}

cv code_str_m_join(code_vm *vm, cv *args, size_t nargs, cv kw)
{
    if (nargs_check(vm, "join", nargs, kw, 1, 1))
        return CV_NULL;
    cv tmp, *items;
    size_t n;
    if (code_str_seq_items(vm, args[1], &tmp, &items, &n, "can only join an iterable"))
        return CV_NULL;
    code_str *sep = S(args[0]);
    size_t total = 0, chars = 0;
    bool ascii = sep->ascii;
    cv r = CV_NULL;
    for (size_t i = 0; i < n; i++) {
        if (!cv_is(items[i], &code_type_str)) {
            code_raise(vm, &code_exc_TypeError, "sequence item %zu: expected str instance, %s found",
                       i, code_type_name(items[i]));
            goto out;
        }
        code_str *it = S(items[i]);
        total += it->len + (i ? sep->len : 0);
        chars += it->nchars + (i ? sep->nchars : 0);
        ascii = ascii && it->ascii;
    }
    if (n == 1 && !tmp) {
        r = code_incref(items[0]);
        goto out;
    }
    code_str *o = code_str_alloc(vm, total);
    if (!o)
        goto out;
    char *p = o->s;
    for (size_t i = 0; i < n; i++) {
        if (i && sep->len) {
            memcpy(p, sep->s, sep->len);
            p += sep->len;
        }
        memcpy(p, S(items[i])->s, S(items[i])->len);
        p += S(items[i])->len;
    }
    o->nchars = chars;
    o->ascii = ascii;
    r = cv_of(o);
out:
    code_decref(vm, tmp);
    return r;
}
