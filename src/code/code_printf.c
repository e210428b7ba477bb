/* Code mode's printf-style formatting, str % args and bytes % args, as
 * CPython 3.11's PyUnicode_Format and _PyBytes_FormatEx: %(key) lookups in a
 * mapping, flags "-+ #0", * widths and precisions, the conversions s r a d i
 * u o x X e E f F g G c % (and b for bytes), and their messages. Numbers go
 * through the same renderer as format(). */
#include "code/code_format.h"

#include <string.h>

typedef struct pf {
    code_vm *vm;
    cv args;                     /* the right operand */
    cv *items;                   /* positional items (a tuple's, or &args) */
    size_t n, next;
    bool mapping;                /* the operand is a dict (or list: CPython's check) */
    bool bytes;                  /* bytes % args */
} pf;

static cv next_arg(pf *p)
{
    if (p->next >= p->n)
        return code_raise(p->vm, &code_exc_TypeError, "not enough arguments for format string");
    return p->items[p->next++];
}

static bool is_intlike(cv v)
{
    int k = cv_kind(v);
    return k == CODE_K_INT || k == CODE_K_BOOL;
}

/* One conversion's text, before the width padding. */
/* bytes' own conversions: %s and %b take bytes, %c an int below 256 or
 * one byte. */
static int convert_bytes(pf *p, code_sb *out, char type, cv v, const code_fspec *f0)
{
    code_vm *vm = p->vm;
    code_fspec g = *f0;
    g.type = 0;
    g.sign = 0;
    g.alt = false;
    if (type == 'c') {
        char c;
        if (cv_is(v, &code_type_bytes) && code_bytes_p(v)->len == 1)
            c = (char)code_bytes_p(v)->s[0];
        else if (is_intlike(v)) {
            int64_t i;
            if (cv_kind(v) == CODE_K_BOOL)
                i = v == CODE_TRUE;
            else if (!code_int_to_i64(v, &i))
                i = -1;
            if (i < 0 || i > 255)
                return code_raise_i(vm, &code_exc_OverflowError, "%%c arg not in range(256)");
            c = (char)i;
        } else
            return code_raise_i(vm, &code_exc_TypeError,
                                "%%c requires an integer in range(256) or a single byte");
        g.prec = -1;
        return code_fmt_str(out, &g, &c, 1, 1);
    }
    if (!cv_is(v, &code_type_bytes))
        return code_raise_i(vm, &code_exc_TypeError,
                            "%%b requires a bytes-like object, or an object that implements "
                            "__bytes__, not '%s'",
                            code_type_name(v));
    size_t n = code_bytes_p(v)->len;
    return code_fmt_str(out, &g, (const char *)code_bytes_p(v)->s, n, n);
}

static int convert(pf *p, code_sb *out, char type, cv v, const code_fspec *f0, bool zero)
{
    code_vm *vm = p->vm;
    code_fspec f = *f0;
    if (zero && f.align != '<') {
        f.fill = "0";
        f.align = '=';
    }
    if (p->bytes && (type == 's' || type == 'b' || type == 'c'))
        return convert_bytes(p, out, type, v, f0);
    switch (type) {
    case 's':
    case 'r':
    case 'a': {
        cv s = type == 's'                ? code_str_of(vm, v)
               : type == 'r' && !p->bytes ? code_repr(vm, v)
                                          : code_ascii_of(vm, v);
        if (!s)
            return -1;
        /* Only width, precision and '-' count for text. */
        code_fspec g = *f0;
        g.type = 0;
        g.sign = 0;
        g.alt = false;
        int rc = code_fmt_str(out, &g, code_str_cstr(s), code_str_len(s), code_str_p(s)->nchars);
        code_decref(vm, s);
        return rc;
    }
    case 'd':
    case 'i':
    case 'u':
    case 'o':
    case 'x':
    case 'X': {
        cv iv = CV_NULL;
        bool dec = type == 'd' || type == 'i' || type == 'u';
        if (is_intlike(v))
            iv = code_incref(v);
        else if (dec && cv_kind(v) == CODE_K_FLOAT) {
            /* %d truncates floats as int() does. */
            iv = code_call(vm, cv_of(&code_type_int), &v, 1, CV_NULL);
            if (!iv)
                return -1;
        } else if (dec)
            return code_raise_i(vm, &code_exc_TypeError, "%%%c format: a real number is required, not %s",
                                type, code_type_name(v));
        else
            return code_raise_i(vm, &code_exc_TypeError, "%%%c format: an integer is required, not %s",
                                type, code_type_name(v));
        int base = dec ? 10 : type == 'o' ? 8 : 16;
        code_sb dig;
        code_sb_init(&dig, vm);
        int sgn = cv_kind(iv) == CODE_K_BOOL ? iv == CODE_TRUE : code_int_sign(iv);
        int rc = code_sb_int_digits(&dig, iv, base);
        code_decref(vm, iv);
        if (rc) {
            code_sb_free(&dig);
            return -1;
        }
        if (type == 'X')
            for (size_t i = 0; i < dig.len; i++)
                if (dig.p[i] >= 'a' && dig.p[i] <= 'f')
                    dig.p[i] = (char)(dig.p[i] - 32);
        /* A precision is a minimum count of digits. */
        size_t pad0 = f.prec > 0 && (size_t)f.prec > dig.len ? (size_t)f.prec - dig.len : 0;
        code_sb d2;
        code_sb_init(&d2, vm);
        rc = code_sb_fill(&d2, "0", 1, pad0) || code_sb_add(&d2, dig.p, dig.len);
        code_sb_free(&dig);
        const char *prefix = "";
        if (f.alt)
            prefix = type == 'o' ? "0o" : type == 'x' ? "0x" : type == 'X' ? "0X" : "";
        f.group = 0;
        if (!rc)
            rc = code_fmt_number(out, &f, sgn < 0, prefix, d2.p ? d2.p : "", d2.len, "", 0, 3);
        code_sb_free(&d2);
        return rc;
    }
    case 'e':
    case 'E':
    case 'f':
    case 'F':
    case 'g':
    case 'G': {
        double d;
        if (cv_kind(v) == CODE_K_FLOAT)
            d = ((code_float *)cv_obj(v))->v;
        else if (is_intlike(v)) {
            if (code_as_double(vm, v, &d))
                return -1;
        } else
            return code_raise_i(vm, &code_exc_TypeError, "must be real number, not %s",
                                code_type_name(v));
        f.type = (unsigned char)type;
        if (f.prec < 0)
            f.prec = 6;
        f.group = 0;
        return code_fmt_float(out, &f, d);
    }
    case 'c': {
        char u[4];
        size_t n;
        if (cv_is(v, &code_type_str)) {
            if (code_str_p(v)->nchars != 1)
                return code_raise_i(vm, &code_exc_TypeError, "%%c requires int or char");
            n = code_str_len(v);
            memcpy(u, code_str_cstr(v), n);
        } else if (is_intlike(v)) {
            int64_t c;
            if (cv_kind(v) == CODE_K_BOOL)
                c = v == CODE_TRUE;
            else if (!code_int_to_i64(v, &c))
                c = -1;
            if (c < 0 || c > 0x10FFFF)
                return code_raise_i(vm, &code_exc_OverflowError, "%%c arg not in range(0x110000)");
            if (c >= 0xD800 && c <= 0xDFFF)
                return code_raise_i(vm, &code_exc_ValueError, "%%c arg is a surrogate (not supported)");
            n = code_utf8_put((uint32_t)c, u);
        } else
            return code_raise_i(vm, &code_exc_TypeError, "%%c requires int or char");
        code_fspec g = *f0;
        g.prec = -1;
        g.type = 0;
        g.sign = 0;
        g.alt = false;
        return code_fmt_str(out, &g, u, n, 1);
    }
    default:
        return -1;
    }
}

static cv printf_impl(code_vm *vm, cv fmt, cv args, bool bytes)
{
    pf p = {.vm = vm, .args = args, .bytes = bytes};
    if (cv_is(args, &code_type_tuple)) {
        p.items = ((code_tuple *)cv_obj(args))->v;
        p.n = ((code_tuple *)cv_obj(args))->n;
    } else {
        p.items = &p.args;
        p.n = 1;
        p.mapping = cv_is(args, &code_type_dict) || cv_is(args, &code_type_list);
    }
    const char *s = bytes ? (const char *)code_bytes_p(fmt)->s : code_str_cstr(fmt);
    size_t n = bytes ? code_bytes_p(fmt)->len : code_str_len(fmt), i = 0;
    code_sb b;
    code_sb_init(&b, vm);
    bool used_key = false;
    while (i < n) {
        const char *pc = memchr(s + i, '%', n - i);
        size_t lit = pc ? (size_t)(pc - (s + i)) : n - i;
        if (lit && code_sb_add(&b, s + i, lit))
            goto fail;
        i += lit;
        if (i >= n)
            break;
        i++;                             /* the '%' */
        if (i >= n) {
            code_raise(vm, &code_exc_ValueError, "incomplete format");
            goto fail;
        }
        /* "%%" is a literal only right after the '%' ("% %" is an error). */
        if (s[i] == '%') {
            if (code_sb_add(&b, "%", 1))
                goto fail;
            i++;
            continue;
        }
        cv v = CV_NULL, owned = CV_NULL;
        if (s[i] == '(') {
            if (!p.mapping) {
                code_raise(vm, &code_exc_TypeError, "format requires a mapping");
                goto fail;
            }
            size_t depth = 1, k0 = ++i;
            while (i < n && depth) {
                if (s[i] == '(')
                    depth++;
                else if (s[i] == ')')
                    depth--;
                i++;
            }
            if (depth) {
                code_raise(vm, &code_exc_ValueError, "incomplete format key");
                goto fail;
            }
            cv key = bytes ? code_bytes_new(vm, s + k0, i - 1 - k0)
                           : code_str_new(vm, s + k0, i - 1 - k0);
            if (!key)
                goto fail;
            owned = code_getitem(vm, args, key);
            code_decref(vm, key);
            if (!owned)
                goto fail;
            /* As CPython: the value becomes the one argument left, for a
             * '*' as much as for the conversion ("%(a)*d" runs short). */
            p.items = &owned;
            p.n = 1;
            p.next = 0;
            used_key = true;
        }
        code_fspec f;
        memset(&f, 0, sizeof(f));
        f.fill = " ";
        f.flen = 1;
        f.align = '>';
        f.width = f.prec = -1;
        bool zero = false;
        for (; i < n; i++) {
            char c = s[i];
            if (c == '-')
                f.align = '<';
            else if (c == '+')
                f.sign = '+';
            else if (c == ' ') {
                if (f.sign != '+')
                    f.sign = ' ';
            } else if (c == '#')
                f.alt = true;
            else if (c == '0')
                zero = true;
            else
                break;
        }
        for (int part = 0; part < 2; part++) {
            ssize_t *dst = part ? &f.prec : &f.width;
            if (part) {
                if (i >= n || s[i] != '.')
                    break;
                i++;
                *dst = 0;
            }
            if (i < n && s[i] == '*') {
                i++;
                cv w = next_arg(&p);
                if (!w)
                    goto fail_v;
                if (!is_intlike(w)) {
                    code_raise(vm, &code_exc_TypeError, "* wants int");
                    goto fail_v;
                }
                ssize_t x;
                if (code_as_index(vm, w, &x))
                    goto fail_v;
                if (!part && x < 0) {
                    f.align = '<';
                    x = -x;
                }
                *dst = x < 0 ? 0 : x;
                continue;
            }
            ssize_t x = part ? 0 : -1;
            while (i < n && s[i] >= '0' && s[i] <= '9') {
                if (x > (SSIZE_MAX - 9) / 10) {
                    code_raise(vm, &code_exc_ValueError, part ? "precision too big" : "width too big");
                    goto fail_v;
                }
                x = (x < 0 ? 0 : x * 10) + (s[i++] - '0');
            }
            *dst = x;
        }
        while (i < n && (s[i] == 'h' || s[i] == 'l' || s[i] == 'L'))
            i++;
        if (i >= n) {
            code_raise(vm, &code_exc_ValueError, "incomplete format");
            goto fail_v;
        }
        size_t ti = i;
        uint32_t type = bytes ? (unsigned char)s[i++] : code_utf8_next(s, &i);
        /* The argument is taken before the conversion is looked at, as
         * CPython does: a missing one is the error that wins. */
        if (!(v = next_arg(&p)))
            goto fail_v;
        if (type >= 0x80 || type == 0 ||
            !strchr(bytes ? "sbradiuoxXeEfFgGc" : "sradiuoxXeEfFgGc", (int)type)) {
            size_t idx = bytes ? ti : code_str_charindex(code_str_p(fmt), ti);
            code_raise(vm, &code_exc_ValueError,
                       "unsupported format character '%c' (0x%x) at index %zu",
                       type >= 32 && type <= 126 ? (char)type : '?', type, idx);
            goto fail_v;
        }
        if (convert(&p, &b, (char)type, v, &f, zero))
            goto fail_v;
        if (owned)
            p.n = p.next = 0;
        code_decref(vm, owned);
        continue;
    fail_v:
        code_decref(vm, owned);
        goto fail;
    }
    if (p.next < p.n && !p.mapping && !used_key) {
        code_raise(vm, &code_exc_TypeError, "not all arguments converted during %s formatting",
                   bytes ? "bytes" : "string");
        goto fail;
    }
    if (bytes) {
        cv r = code_bytes_new(vm, b.p ? b.p : "", b.len);
        code_sb_free(&b);
        return r;
    }
    return code_sb_finish(&b);
fail:
    code_sb_free(&b);
    return CV_NULL;
}

cv code_str_printf(code_vm *vm, cv fmt, cv args)
{
    return printf_impl(vm, fmt, args, false);
}

cv code_bytes_printf(code_vm *vm, cv fmt, cv args)
{
    return printf_impl(vm, fmt, args, true);
}
