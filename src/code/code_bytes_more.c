/* Code mode's bytes methods, part two: the ones with a str twin that LLM
 * code reaches for less (partition, removeprefix, splitlines, padding, ASCII
 * case mappings and classes), as CPython 3.11's. */
#include "code/code_strutil.h"

#include <string.h>

#define B(v) code_bytes_p(v)
#define BS(v) ((const char *)code_bytes_p(v)->s)

static int nargs(code_vm *vm, const char *name, size_t n, cv kw, size_t min, size_t max)
{
    return code_str_nargs(vm, "bytes", name, n - 1, kw, min, max);
}

static int need_bytes(code_vm *vm, cv v)
{
    if (!cv_is(v, &code_type_bytes))
        return code_raise_i(vm, &code_exc_TypeError, "a bytes-like object is required, not '%s'",
                            code_type_name(v));
    return 0;
}

static cv part(code_vm *vm, const char *name, cv *args, size_t n, cv kw, bool rev)
{
    if (nargs(vm, name, n, kw, 1, 1) || need_bytes(vm, args[1]))
        return CV_NULL;
    cv self = args[0], sep = args[1];
    if (!B(sep)->len)
        return code_raise(vm, &code_exc_ValueError, "empty separator");
    const char *s = BS(self);
    size_t len = B(self)->len, sn = B(sep)->len;
    ssize_t at = (rev ? code_rfind_bytes : code_find_bytes)(s, len, BS(sep), sn);
    cv a, c;
    if (at < 0) {
        cv e = code_bytes_new(vm, "", 0);
        if (!e)
            return CV_NULL;
        cv t = rev ? code_tuple_pack(vm, 3, e, e, self) : code_tuple_pack(vm, 3, self, e, e);
        code_decref(vm, e);
        return t;
    }
    a = code_bytes_new(vm, s, (size_t)at);
    c = code_bytes_new(vm, s + at + sn, len - (size_t)at - sn);
    cv t = a && c ? code_tuple_pack(vm, 3, a, sep, c) : CV_NULL;
    code_decref(vm, a);
    code_decref(vm, c);
    return t;
}

cv code_bytes_m_partition(code_vm *vm, cv *args, size_t n, cv kw)
{
    return part(vm, "partition", args, n, kw, false);
}

cv code_bytes_m_rpartition(code_vm *vm, cv *args, size_t n, cv kw)
{
    return part(vm, "rpartition", args, n, kw, true);
}

static cv affix(code_vm *vm, const char *name, cv *args, size_t n, cv kw, bool suffix)
{
    if (nargs(vm, name, n, kw, 1, 1) || need_bytes(vm, args[1]))
        return CV_NULL;
    size_t len = B(args[0])->len, pn = B(args[1])->len;
    const char *s = BS(args[0]);
    if (pn && pn <= len && memcmp(suffix ? s + len - pn : s, BS(args[1]), pn) == 0)
        return code_bytes_new(vm, suffix ? s : s + pn, len - pn);
    return code_incref(args[0]);
}

cv code_bytes_m_removeprefix(code_vm *vm, cv *args, size_t n, cv kw)
{
    return affix(vm, "removeprefix", args, n, kw, false);
}

cv code_bytes_m_removesuffix(code_vm *vm, cv *args, size_t n, cv kw)
{
    return affix(vm, "removesuffix", args, n, kw, true);
}

/* bytes know only \n, \r and \r\n as line breaks. */
cv code_bytes_m_splitlines(code_vm *vm, cv *args, size_t n, cv kw)
{
    cv keep = CV_NULL;
    if (code_args(vm, "splitlines", args + 1, n - 1, kw, "|keepends", &keep))
        return CV_NULL;
    int keepends = 0;
    if (keep && (keepends = code_truth(vm, keep)) < 0)
        return CV_NULL;
    const char *s = BS(args[0]);
    size_t len = B(args[0])->len, start = 0, i = 0;
    cv list = code_list_new(vm, 0);
    while (list && i < len) {
        size_t br = s[i] == '\n' ? 1 : s[i] == '\r' ? (i + 1 < len && s[i + 1] == '\n' ? 2 : 1) : 0;
        if (!br) {
            i++;
            continue;
        }
        cv v = code_bytes_new(vm, s + start, i - start + (keepends ? br : 0));
        if (!v || code_list_append(vm, list, v)) {
            code_decref(vm, v);
            code_decref(vm, list);
            return CV_NULL;
        }
        code_decref(vm, v);
        i += br;
        start = i;
    }
    if (list && start < len) {
        cv v = code_bytes_new(vm, s + start, len - start);
        if (!v || code_list_append(vm, list, v)) {
            code_decref(vm, list);
            list = CV_NULL;
        }
        code_decref(vm, v);
    }
    return list;
}

/* how: 0 ljust, 1 rjust, 2 center, 3 zfill. */
static cv pad(code_vm *vm, const char *name, cv *args, size_t n, cv kw, int how)
{
    if (nargs(vm, name, n, kw, 1, how == 3 ? 1 : 2))
        return CV_NULL;
    ssize_t width;
    if (code_as_index(vm, args[1], &width))
        return CV_NULL;
    char fill = how == 3 ? '0' : ' ';
    if (n > 2) {
        if (!cv_is(args[2], &code_type_bytes) || B(args[2])->len != 1)
            return code_raise(vm, &code_exc_TypeError,
                              "%s() argument 2 must be a byte string of length 1, not %s", name,
                              code_type_name(args[2]));
        fill = BS(args[2])[0];
    }
    size_t len = B(args[0])->len;
    if (width <= (ssize_t)len)
        return code_incref(args[0]);
    size_t marg = (size_t)width - len, left = how == 0 ? 0 : how == 2 ? marg / 2 + (marg & (size_t)width & 1) : marg;
    code_sb b;
    code_sb_init(&b, vm);
    const char *s = BS(args[0]);
    size_t sign = how == 3 && len && (s[0] == '+' || s[0] == '-');
    code_sb_add(&b, s, sign);
    code_sb_fill(&b, &fill, 1, left);
    code_sb_add(&b, s + sign, len - sign);
    code_sb_fill(&b, &fill, 1, marg - left);
    cv r = b.failed ? CV_NULL : code_bytes_new(vm, b.p, b.len);
    code_sb_free(&b);
    return r;
}

cv code_bytes_m_ljust(code_vm *vm, cv *args, size_t n, cv kw)
{
    return pad(vm, "ljust", args, n, kw, 0);
}

cv code_bytes_m_rjust(code_vm *vm, cv *args, size_t n, cv kw)
{
    return pad(vm, "rjust", args, n, kw, 1);
}

cv code_bytes_m_center(code_vm *vm, cv *args, size_t n, cv kw)
{
    return pad(vm, "center", args, n, kw, 2);
}

cv code_bytes_m_zfill(code_vm *vm, cv *args, size_t n, cv kw)
{
    return pad(vm, "zfill", args, n, kw, 3);
}

static bool up(unsigned char c) { return c >= 'A' && c <= 'Z'; }
static bool lo(unsigned char c) { return c >= 'a' && c <= 'z'; }

enum { C_TITLE, C_CAP, C_SWAP };

static cv casemap(code_vm *vm, const char *name, cv *args, size_t n, cv kw, int mode)
{
    if (nargs(vm, name, n, kw, 0, 0))
        return CV_NULL;
    cv r = code_bytes_new(vm, B(args[0])->s, B(args[0])->len);
    if (!r)
        return CV_NULL;
    unsigned char *s = B(r)->s;
    bool prev = false;
    for (size_t i = 0; i < B(r)->len; i++) {
        unsigned char c = s[i];
        bool to_up = mode == C_TITLE ? !prev : mode == C_CAP ? i == 0 : lo(c);
        bool cased = up(c) || lo(c);
        if (to_up && lo(c))
            s[i] = (unsigned char)(c - 32);
        else if (!to_up && up(c))
            s[i] = (unsigned char)(c + 32);
        prev = cased;
    }
    return r;
}

cv code_bytes_m_title(code_vm *vm, cv *args, size_t n, cv kw)
{
    return casemap(vm, "title", args, n, kw, C_TITLE);
}

cv code_bytes_m_capitalize(code_vm *vm, cv *args, size_t n, cv kw)
{
    return casemap(vm, "capitalize", args, n, kw, C_CAP);
}

cv code_bytes_m_swapcase(code_vm *vm, cv *args, size_t n, cv kw)
{
    return casemap(vm, "swapcase", args, n, kw, C_SWAP);
}

enum { K_UPPER, K_LOWER, K_TITLE, K_ASCII };

static cv classify(code_vm *vm, const char *name, cv *args, size_t n, cv kw, int k)
{
    if (nargs(vm, name, n, kw, 0, 0))
        return CV_NULL;
    const unsigned char *s = B(args[0])->s;
    size_t len = B(args[0])->len;
    if (k == K_ASCII) {
        for (size_t i = 0; i < len; i++)
            if (s[i] >= 0x80)
                return CODE_FALSE;
        return CODE_TRUE;
    }
    bool cased = false, prev = false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = s[i];
        if (k == K_TITLE) {
            if (up(c)) {
                if (prev)
                    return CODE_FALSE;
                prev = cased = true;
            } else if (lo(c)) {
                if (!prev)
                    return CODE_FALSE;
                prev = cased = true;
            } else
                prev = false;
            continue;
        }
        if (k == K_UPPER ? lo(c) : up(c))
            return CODE_FALSE;
        if (k == K_UPPER ? up(c) : lo(c))
            cased = true;
    }
    return code_bool(cased);
}

cv code_bytes_m_isupper(code_vm *vm, cv *args, size_t n, cv kw)
{
    return classify(vm, "isupper", args, n, kw, K_UPPER);
}

cv code_bytes_m_islower(code_vm *vm, cv *args, size_t n, cv kw)
{
    return classify(vm, "islower", args, n, kw, K_LOWER);
}

cv code_bytes_m_istitle(code_vm *vm, cv *args, size_t n, cv kw)
{
    return classify(vm, "istitle", args, n, kw, K_TITLE);
}

cv code_bytes_m_isascii(code_vm *vm, cv *args, size_t n, cv kw)
{
    return classify(vm, "isascii", args, n, kw, K_ASCII);
}
