/* Code mode's str and bytes: what their files share (code_str.c,
 * code_str_methods*.c, code_format.c, code_printf.c, code_bytes.c). Private
 * to them; the rest of the interpreter uses code_val.h. */
#ifndef CELLA_CODE_STRUTIL_H
#define CELLA_CODE_STRUTIL_H

#include <limits.h>

#include "code/code_unicode_tab.h"
#include "code/code_val.h"
#include "code/code_vm.h"

static inline code_str *code_str_p(cv s) { return (code_str *)cv_obj(s); }
static inline code_bytes *code_bytes_p(cv b) { return (code_bytes *)cv_obj(b); }

/* ---- UTF-8 (strings are valid UTF-8: decoding needs no checks) ---- */

static inline size_t code_utf8_seqlen(unsigned char c)
{
    return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
}
/* The code point at s[*i], advancing *i past it. */
static inline uint32_t code_utf8_next(const char *s, size_t *i)
{
    const unsigned char *p = (const unsigned char *)s + *i;
    if (p[0] < 0x80) {
        *i += 1;
        return p[0];
    }
    if (p[0] < 0xE0) {
        *i += 2;
        return ((uint32_t)(p[0] & 0x1F) << 6) | (p[1] & 0x3F);
    }
    if (p[0] < 0xF0) {
        *i += 3;
        return ((uint32_t)(p[0] & 0x0F) << 12) | ((uint32_t)(p[1] & 0x3F) << 6) | (p[2] & 0x3F);
    }
    *i += 4;
    return ((uint32_t)(p[0] & 0x07) << 18) | ((uint32_t)(p[1] & 0x3F) << 12) |
           ((uint32_t)(p[2] & 0x3F) << 6) | (p[3] & 0x3F);
}
/* The code point ending just before s[*i], moving *i back to its start. */
static inline uint32_t code_utf8_prev(const char *s, size_t *i)
{
    size_t j = *i - 1;
    while (j > 0 && ((unsigned char)s[j] & 0xC0) == 0x80)
        j--;
    *i = j;
    size_t k = j;
    return code_utf8_next(s, &k);
}
/* Whitespace at s[i] as str.isspace() says; *next is past the character. */
static inline bool code_str_space_at(const char *s, size_t i, size_t *next)
{
    unsigned char c = (unsigned char)s[i];
    if (c < 0x80) {
        *next = i + 1;
        return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
    }
    size_t j = i;
    uint32_t cp = code_utf8_next(s, &j);
    *next = j;
    return code_uprop(cp, CODE_UP_SPACE);
}
/* Writes c (< 0x110000) and returns its length (1..4). */
size_t code_utf8_put(uint32_t c, char *out);
/* Code points in valid UTF-8. */
size_t code_utf8_count(const char *s, size_t n);

/* ---- building strs ---- */

/* A str of n bytes to fill (s[n] is set to NUL); finish with code_str_done,
 * which counts its code points. CV_NULL + MemoryError. */
code_str *code_str_alloc(code_vm *vm, size_t n);
cv code_str_done(code_str *s);
/* When the caller knows the count: no scan. */
cv code_str_new_n(code_vm *vm, const char *s, size_t n, size_t nchars);
/* Whether the buffer holds only ASCII. */
bool code_ascii_only(const char *s, size_t n);
/* The byte offset of code point ci (0 <= ci <= nchars). */
size_t code_str_offset(const code_str *s, size_t ci);
/* The code point index of byte offset off (a character boundary). */
size_t code_str_charindex(const code_str *s, size_t off);
/* The repr of a str (quotes and escapes); ascii_only: escape every non-ASCII
 * character too, as ascii() does. */
int code_sb_str_repr(code_sb *b, const char *s, size_t n, bool ascii_only);
/* SipHash-1-3 with the interpreter's fixed key. */
uint64_t code_siphash13(const void *p, size_t n);
/* Appends n copies of the fill character (UTF-8, flen bytes). */
int code_sb_fill(code_sb *b, const char *fill, size_t flen, size_t n);
/* Byte search (memmem with the empty needle at from). */
ssize_t code_find_bytes(const char *h, size_t hn, const char *n, size_t nn);
ssize_t code_rfind_bytes(const char *h, size_t hn, const char *n, size_t nn);
/* Resolves start/end arguments (None or ints, clamped as CPython's slice
 * rules) against len. */
int code_str_range_args(code_vm *vm, cv start, cv end, size_t len, size_t *lo, size_t *hi);

/* The count of a str or bytes repetition by int n (bool included), with
 * CPython's OverflowErrors. */
int code_repeat_count(code_vm *vm, cv n, size_t len, size_t *count);

/* Shared by str and bytes (code_str_methods.c): split/rsplit over s (sep
 * CODE_NONE: runs of whitespace, ASCII only for bytes); pieces are strs of
 * self, or bytes. */
cv code_split_impl(code_vm *vm, cv self, const char *s, size_t n, cv sep, const char *sp,
                   size_t spn, int64_t maxsplit, bool rev, bool bytes);
int code_replace_impl(code_sb *b, const char *s, size_t n, const char *old, size_t on,
                      const char *new, size_t nn, int64_t count, bool bytes);
/* The items of a list or tuple in place, else of any iterable copied into
 * *tmp (a new list the caller drops); errmsg is the TypeError for values
 * that are not iterable. */
int code_str_seq_items(code_vm *vm, cv seq, cv *tmp, cv **items, size_t *n, const char *errmsg);

/* ---- the pieces of the types ---- */

extern const code_method code_str_methods[];
extern const code_method code_bytes_methods[];
/* A substring of parent (its characters counted without a scan when parent
 * is ASCII). */
cv code_str_sub(code_vm *vm, cv parent, const char *s, size_t n);
/* The str methods of code_str_split.c and code_str_case.c (the table is in
 * code_str_methods.c). */
cv code_str_m_split(code_vm *, cv *, size_t, cv);
cv code_str_m_rsplit(code_vm *, cv *, size_t, cv);
cv code_str_m_splitlines(code_vm *, cv *, size_t, cv);
cv code_str_m_join(code_vm *, cv *, size_t, cv);
/* The str methods of code_str_case.c (the table is in code_str_methods.c). */
cv code_str_m_upper(code_vm *, cv *, size_t, cv);
cv code_str_m_lower(code_vm *, cv *, size_t, cv);
cv code_str_m_casefold(code_vm *, cv *, size_t, cv);
cv code_str_m_title(code_vm *, cv *, size_t, cv);
cv code_str_m_capitalize(code_vm *, cv *, size_t, cv);
cv code_str_m_swapcase(code_vm *, cv *, size_t, cv);
cv code_str_m_isdigit(code_vm *, cv *, size_t, cv);
cv code_str_m_isalpha(code_vm *, cv *, size_t, cv);
cv code_str_m_isalnum(code_vm *, cv *, size_t, cv);
cv code_str_m_isspace(code_vm *, cv *, size_t, cv);
cv code_str_m_isupper(code_vm *, cv *, size_t, cv);
cv code_str_m_islower(code_vm *, cv *, size_t, cv);
cv code_str_m_isnumeric(code_vm *, cv *, size_t, cv);
cv code_str_m_isdecimal(code_vm *, cv *, size_t, cv);
cv code_str_m_isidentifier(code_vm *, cv *, size_t, cv);
cv code_str_m_isprintable(code_vm *, cv *, size_t, cv);
cv code_str_m_istitle(code_vm *, cv *, size_t, cv);
cv code_str_m_isascii(code_vm *, cv *, size_t, cv);
cv code_str_m_center(code_vm *, cv *, size_t, cv);
cv code_str_m_ljust(code_vm *, cv *, size_t, cv);
cv code_str_m_rjust(code_vm *, cv *, size_t, cv);
cv code_str_m_zfill(code_vm *, cv *, size_t, cv);
cv code_str_m_expandtabs(code_vm *, cv *, size_t, cv);
cv code_str_m_encode(code_vm *, cv *, size_t, cv);
cv code_str_m_maketrans(code_vm *, cv *, size_t, cv);
cv code_str_m_translate(code_vm *, cv *, size_t, cv);

/* The bytes methods of code_bytes_more.c (the table is in code_bytes_methods.c). */
cv code_bytes_m_partition(code_vm *, cv *, size_t, cv);
cv code_bytes_m_rpartition(code_vm *, cv *, size_t, cv);
cv code_bytes_m_removeprefix(code_vm *, cv *, size_t, cv);
cv code_bytes_m_removesuffix(code_vm *, cv *, size_t, cv);
cv code_bytes_m_splitlines(code_vm *, cv *, size_t, cv);
cv code_bytes_m_ljust(code_vm *, cv *, size_t, cv);
cv code_bytes_m_rjust(code_vm *, cv *, size_t, cv);
cv code_bytes_m_center(code_vm *, cv *, size_t, cv);
cv code_bytes_m_zfill(code_vm *, cv *, size_t, cv);
cv code_bytes_m_title(code_vm *, cv *, size_t, cv);
cv code_bytes_m_capitalize(code_vm *, cv *, size_t, cv);
cv code_bytes_m_swapcase(code_vm *, cv *, size_t, cv);
cv code_bytes_m_isupper(code_vm *, cv *, size_t, cv);
cv code_bytes_m_islower(code_vm *, cv *, size_t, cv);
cv code_bytes_m_istitle(code_vm *, cv *, size_t, cv);
cv code_bytes_m_isascii(code_vm *, cv *, size_t, cv);
cv code_str_method_format(code_vm *vm, cv *args, size_t nargs, cv kwnames);
cv code_str_method_format_map(code_vm *vm, cv *args, size_t nargs, cv kwnames);
/* fmt % args (printf-style), for str and for bytes. */
cv code_str_printf(code_vm *vm, cv fmt, cv args);
cv code_bytes_printf(code_vm *vm, cv fmt, cv args);
/* str.format's engine: positional args tuple, kwargs a dict or CV_NULL. */
cv code_str_vformat(code_vm *vm, cv fmt, cv *args, size_t nargs, cv kwargs);
/* Formats the digits of int v in base 2, 8, 10 or 16 (lowercase), no sign,
 * no prefix, into b. */
int code_sb_int_digits(code_sb *b, cv v, int base);
/* decode/encode with CPython's codec names ("utf-8", "utf8", "ascii",
 * "latin-1", ...) and errors ("strict", "ignore", "replace"). */
cv code_codec_decode(code_vm *vm, const unsigned char *s, size_t n, const char *encoding,
                   const char *errors);
cv code_codec_encode(code_vm *vm, cv str, const char *encoding, const char *errors);
/* Checks a str or bytes method's positional argument count (n, without
 * self) and that no keywords were given, with CPython's message for that
 * method. */
int code_str_nargs(code_vm *vm, const char *tname, const char *name, size_t n, cv kw,
                   size_t min, size_t max);
/* A str argument's C string, or TypeError "what must be str, not int". */
int code_arg_cstr(code_vm *vm, cv v, const char *what, const char **out);

#endif
