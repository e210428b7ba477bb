/* Code mode's str.format and str.format_map, as CPython 3.11's
 * Objects/stringlib/unicode_format.h: the same scanning of literal text and
 * fields, automatic and manual numbering, {0.attr} and {0[key]}, !r !s !a,
 * nested fields in specs (two levels), and the same messages. */
#include "code/code_format.h"

#include <string.h>

typedef struct fmt_ctx {
    code_vm *vm;
    cv *args;                    /* positional */
    size_t nargs;
    cv kwnames;                  /* format(): names, values at kwvals */
    cv *kwvals;
    cv mapping;                  /* format_map(): any mapping (no positional args) */
    int auto_state;              /* 0 unset, 1 automatic, 2 manual */
    size_t auto_next;
} fmt_ctx;

static int render(fmt_ctx *c, code_sb *out, const char *s, size_t n, int depth);

static int verr(code_vm *vm, const char *msg)
{
    return code_raise_i(vm, &code_exc_ValueError, "%s", msg);
}

/* The digits of s as an index, -1 when not all digits (or empty). */
static int get_integer(code_vm *vm, const char *s, size_t n, ssize_t *out)
{
    *out = -1;
    if (!n)
        return 0;
    ssize_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        if (v > (SSIZE_MAX - 9) / 10)
            return verr(vm, "Too many decimal digits in format string");
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

static cv key_error(code_vm *vm, const char *s, size_t n)
{
    cv k = code_str_new(vm, s, n);
    if (!k)
        return CV_NULL;
    cv t = code_tuple_pack(vm, 1, k);
    code_decref(vm, k);
    if (!t)
        return CV_NULL;
    cv e = code_exc_new(vm, &code_exc_KeyError, t);
    return e ? code_raise_obj(vm, e) : CV_NULL;
}

/* The first part of a field name: an argument by position or keyword. */
static cv get_first(fmt_ctx *c, const char *s, size_t n)
{
    code_vm *vm = c->vm;
    ssize_t idx;
    if (get_integer(vm, s, n, &idx))
        return CV_NULL;
    bool empty = n == 0, numeric = empty || idx != -1;
    if (numeric) {
        if (c->mapping)
            return code_raise(vm, &code_exc_ValueError, "Format string contains positional fields");
        if (c->auto_state == 0)
            c->auto_state = empty ? 1 : 2;
        if (c->auto_state == 2 && empty)
            return code_raise(vm, &code_exc_ValueError,
                              "cannot switch from manual field specification to automatic field numbering");
        if (c->auto_state == 1 && !empty)
            return code_raise(vm, &code_exc_ValueError,
                              "cannot switch from automatic field numbering to manual field specification");
        if (empty)
            idx = (ssize_t)c->auto_next++;
        if ((size_t)idx >= c->nargs)
            return code_raise(vm, &code_exc_IndexError,
                              "Replacement index %zd out of range for positional args tuple", idx);
        return code_incref(c->args[idx]);
    }
    if (c->mapping) {
        cv k = code_str_new(vm, s, n);
        if (!k)
            return CV_NULL;
        cv v = code_getitem(vm, c->mapping, k);
        code_decref(vm, k);
        return v;
    }
    if (c->kwnames) {
        code_tuple *kn = (code_tuple *)cv_obj(c->kwnames);
        for (size_t i = 0; i < kn->n; i++)
            if (code_str_len(kn->v[i]) == n && memcmp(code_str_cstr(kn->v[i]), s, n) == 0)
                return code_incref(c->kwvals[i]);
    }
    return key_error(vm, s, n);
}

/* The object a field name designates: first part, then .attr and [key]. */
static cv get_field(fmt_ctx *c, const char *s, size_t n)
{
    code_vm *vm = c->vm;
    size_t i = 0;
    while (i < n && s[i] != '.' && s[i] != '[')
        i++;
    cv obj = get_first(c, s, i);
    while (obj && i < n) {
        char k = s[i++];
        size_t a = i;
        cv next;
        if (k == '.') {
            while (i < n && s[i] != '.' && s[i] != '[')
                i++;
            if (i == a)
                goto empty;
            char name[256];
            if (i - a >= sizeof(name)) {
                code_decref(vm, obj);
                return code_raise(vm, &code_exc_AttributeError, "attribute name too long");
            }
            memcpy(name, s + a, i - a);
            name[i - a] = '\0';
            next = code_getattr(vm, obj, name);
        } else if (k == '[') {
            while (i < n && s[i] != ']')
                i++;
            if (i >= n) {
                code_decref(vm, obj);
                return code_raise(vm, &code_exc_ValueError, "Missing ']' in format string");
            }
            size_t e = i++;
            if (e == a)
                goto empty;
            ssize_t idx;
            if (get_integer(vm, s + a, e - a, &idx)) {
                code_decref(vm, obj);
                return CV_NULL;
            }
            cv key = idx >= 0 ? code_int_from_i64(vm, idx) : code_str_new(vm, s + a, e - a);
            next = key ? code_getitem(vm, obj, key) : CV_NULL;
            code_decref(vm, key);
        } else {
            code_decref(vm, obj);
            return code_raise(vm, &code_exc_ValueError,
                              "Only '.' or '[' may follow ']' in format field specifier");
        }
        code_decref(vm, obj);
        obj = next;
    }
    return obj;
empty:
    code_decref(vm, obj);
    return code_raise(vm, &code_exc_ValueError, "Empty attribute in format string");
}

/* One replacement field, s[0..n) being what follows its '{' up to the end
 * of the format string; *used is set to the bytes it takes (with '}'). */
static int field(fmt_ctx *c, code_sb *out, const char *s, size_t n, size_t *used, int depth)
{
    code_vm *vm = c->vm;
    size_t i = 0;
    char ch = 0;
    while (i < n) {
        ch = s[i++];
        if (ch == '{')
            return verr(vm, "unexpected '{' in field name");
        if (ch == '[') {
            while (i < n && s[i] != ']')
                i++;
            continue;
        }
        if (ch == '}' || ch == ':' || ch == '!')
            break;
    }
    size_t name_end = i - (i > 0 && (ch == '}' || ch == ':' || ch == '!') ? 1 : 0);
    if (i == n && ch != '}' && ch != ':' && ch != '!')
        return verr(vm, "expected '}' before end of string");
    uint32_t conv = 0;
    const char *spec = "";
    size_t spec_n = 0;
    bool expand = false;
    if (ch == '!' || ch == ':') {
        bool done = false;
        if (ch == '!') {
            if (i >= n)
                return verr(vm, "end of string while looking for conversion specifier");
            conv = code_utf8_next(s, &i);
            if (i < n) {
                char d = s[i++];
                if (d == '}')
                    done = true;
                else if (d != ':')
                    return verr(vm, "expected ':' after conversion specifier");
            }
        }
        if (!done) {
            size_t a = i;
            int count = 1;
            for (;;) {
                if (i >= n)
                    return verr(vm, "unmatched '{' in format spec");
                char d = s[i++];
                if (d == '{') {
                    expand = true;
                    count++;
                } else if (d == '}' && --count == 0)
                    break;
            }
            spec = s + a;
            spec_n = i - 1 - a;
        }
    }
    *used = i;
    cv obj = get_field(c, s, name_end);
    if (!obj)
        return -1;
    if (conv) {
        cv t;
        switch (conv) {
        case 'r': t = code_repr(vm, obj); break;
        case 's': t = code_str_of(vm, obj); break;
        case 'a': t = code_ascii_of(vm, obj); break;
        default:
            code_decref(vm, obj);
            if (conv > ' ' && conv < 0x7f)
                return code_raise_i(vm, &code_exc_ValueError, "Unknown conversion specifier %c",
                                    (char)conv);
            return code_raise_i(vm, &code_exc_ValueError, "Unknown conversion specifier \\x%x",
                                conv);
        }
        code_decref(vm, obj);
        if (!t)
            return -1;
        obj = t;
    }
    cv specv;
    if (expand) {
        code_sb sb;
        code_sb_init(&sb, vm);
        if (render(c, &sb, spec, spec_n, depth - 1)) {
            code_sb_free(&sb);
            code_decref(vm, obj);
            return -1;
        }
        specv = code_sb_finish(&sb);
    } else
        specv = code_str_new(vm, spec, spec_n);
    cv r = specv ? code_format(vm, obj, specv) : CV_NULL;
    code_decref(vm, specv);
    code_decref(vm, obj);
    if (!r)
        return -1;
    int rc = code_sb_add(out, code_str_cstr(r), code_str_len(r));
    code_decref(vm, r);
    return rc;
}

static int render(fmt_ctx *c, code_sb *out, const char *s, size_t n, int depth)
{
    code_vm *vm = c->vm;
    if (depth <= 0)
        return verr(vm, "Max string recursion exceeded");
    size_t i = 0;
    while (i < n) {
        size_t start = i;
        char ch = 0;
        bool markup = false;
        while (i < n) {
            ch = s[i++];
            if (ch == '{' || ch == '}') {
                markup = true;
                break;
            }
        }
        bool at_end = i >= n;
        size_t len = i - start;
        if (markup && ch == '}' && (at_end || s[i] != '}'))
            return verr(vm, "Single '}' encountered in format string");
        if (markup && at_end && ch == '{')
            return verr(vm, "Single '{' encountered in format string");
        if (markup && !at_end) {
            if (s[i] == ch) {
                i++;
                markup = false;
            } else
                len--;
        }
        if (len && code_sb_add(out, s + start, len))
            return -1;
        if (!markup)
            continue;
        size_t used = 0;
        if (field(c, out, s + i, n - i, &used, depth))
            return -1;
        i += used;
    }
    return 0;
}

cv code_str_vformat(code_vm *vm, cv fmt, cv *args, size_t nargs, cv kwargs)
{
    fmt_ctx c = {.vm = vm, .args = args, .nargs = nargs, .mapping = kwargs};
    code_sb b;
    code_sb_init(&b, vm);
    if (code_guard_enter(vm, "format")) {
        code_sb_free(&b);
        return CV_NULL;
    }
    int rc = render(&c, &b, code_str_cstr(fmt), code_str_len(fmt), 2);
    code_guard_leave(vm);
    if (rc) {
        code_sb_free(&b);
        return CV_NULL;
    }
    return code_sb_finish(&b);
}

cv code_str_method_format(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    fmt_ctx c = {.vm = vm, .args = args + 1, .nargs = nargs - 1};
    if (kwnames) {
        c.kwnames = kwnames;
        c.kwvals = args + nargs;
    }
    code_sb b;
    code_sb_init(&b, vm);
    if (code_guard_enter(vm, "format")) {
        code_sb_free(&b);
        return CV_NULL;
    }
    int rc = render(&c, &b, code_str_cstr(args[0]), code_str_len(args[0]), 2);
    code_guard_leave(vm);
    if (rc) {
        code_sb_free(&b);
        return CV_NULL;
    }
    return code_sb_finish(&b);
}

cv code_str_method_format_map(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_str_nargs(vm, "str", "format_map", nargs - 1, kwnames, 1, 1))
        return CV_NULL;
    return code_str_vformat(vm, args[0], NULL, 0, args[1]);
}
