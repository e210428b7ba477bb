/* Code mode's format-spec mini-language: format(value, spec) for int, bool,
 * float and str, and the rest with an empty spec, as CPython 3.11's
 * Python/formatter_unicode.c (its checks, their order and its messages).
 * str.format is code_strformat.c; printf-style % is code_printf.c. */
#include "code/code_format.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_align(uint32_t c)
{
    return c == '<' || c == '>' || c == '^' || c == '=';
}

static int too_many_digits(code_vm *vm)
{
    return code_raise_i(vm, &code_exc_ValueError, "Too many decimal digits in format string");
}

/* Digits at s[*i] as a non-negative ssize_t; *i advances. 0 if none. */
static int parse_num(code_vm *vm, const char *s, size_t n, size_t *i, ssize_t *out, bool *any)
{
    ssize_t v = 0;
    *any = false;
    while (*i < n && s[*i] >= '0' && s[*i] <= '9') {
        if (v > (SSIZE_MAX - 9) / 10)
            return too_many_digits(vm);
        v = v * 10 + (s[*i] - '0');
        (*i)++;
        *any = true;
    }
    *out = v;
    return 0;
}

int code_fspec_parse(code_vm *vm, const char *s, size_t n, char default_align,
                     uint32_t default_type, const char *tname, code_fspec *f)
{
    memset(f, 0, sizeof(*f));
    f->fill = " ";
    f->flen = 1;
    f->align = default_align;
    f->width = -1;
    f->prec = -1;
    f->type = default_type;
    size_t i = 0;
    bool fill_given = false, align_given = false;
    if (n) {
        size_t j = 0;
        uint32_t c0 = code_utf8_next(s, &j);
        if (j < n && is_align((unsigned char)s[j])) {
            f->fill = s;
            f->flen = j;
            f->align = s[j];
            fill_given = align_given = true;
            i = j + 1;
        } else if (is_align(c0)) {
            f->align = (char)c0;
            align_given = true;
            i = 1;
        }
    }
    if (i < n && (s[i] == '+' || s[i] == '-' || s[i] == ' '))
        f->sign = s[i++];
    if (i < n && s[i] == 'z') {
        f->z = true;
        i++;
    }
    if (i < n && s[i] == '#') {
        f->alt = true;
        i++;
    }
    if (!fill_given && i < n && s[i] == '0') {
        f->fill = "0";
        f->flen = 1;
        if (!align_given && default_align == '>')
            f->align = '=';
        i++;
    }
    bool any;
    if (parse_num(vm, s, n, &i, &f->width, &any))
        return -1;
    if (!any)
        f->width = -1;
    if (i < n && s[i] == ',') {
        f->group = ',';
        i++;
    }
    if (i < n && s[i] == '_') {
        if (f->group)
            return code_raise_i(vm, &code_exc_ValueError, "Cannot specify both ',' and '_'.");
        f->group = '_';
        i++;
    }
    if (i < n && s[i] == ',' && f->group == '_')
        return code_raise_i(vm, &code_exc_ValueError, "Cannot specify both ',' and '_'.");
    if (i < n && s[i] == ',' && f->group == ',')
        return code_raise_i(vm, &code_exc_ValueError, "Cannot specify both ',' and '_'.");
    if (i < n && s[i] == '.') {
        i++;
        if (parse_num(vm, s, n, &i, &f->prec, &any))
            return -1;
        if (!any)
            return code_raise_i(vm, &code_exc_ValueError, "Format specifier missing precision");
    }
    if (i < n) {
        size_t j = i;
        f->type = code_utf8_next(s, &j);
        if (j != n)
            return code_raise_i(vm, &code_exc_ValueError,
                                "Invalid format specifier '%.*s' for object of type '%s'", (int)n,
                                s, tname);
    }
    if (f->group) {
        switch (f->type) {
        case 'd': case 'e': case 'f': case 'g': case 'E': case 'G': case '%': case 'F': case 0:
            break;
        case 'b': case 'o': case 'x': case 'X':
            if (f->group == '_')
                break;
            /* fall through */
        default:
            if (f->type > ' ' && f->type < 0x7f)
                return code_raise_i(vm, &code_exc_ValueError, "Cannot specify '%c' with '%c'.",
                                    f->group, (char)f->type);
            return code_raise_i(vm, &code_exc_ValueError, "Cannot specify '%c' with '\\x%x'.",
                                f->group, f->type);
        }
    }
    return 0;
}

int code_fspec_unknown(code_vm *vm, uint32_t type, const char *tname)
{
    if (type > ' ' && type < 0x7f)
        return code_raise_i(vm, &code_exc_ValueError,
                            "Unknown format code '%c' for object of type '%s'", (char)type, tname);
    return code_raise_i(vm, &code_exc_ValueError,
                        "Unknown format code '\\x%x' for object of type '%s'", type, tname);
}

/* Pads body (nchars code points) to the width by the alignment. */
static int pad_out(code_sb *b, const code_fspec *f, const char *body, size_t blen, size_t nchars)
{
    size_t w = f->width > 0 ? (size_t)f->width : 0, pad = w > nchars ? w - nchars : 0, left;
    switch (f->align) {
    case '>': left = pad; break;
    case '^': left = pad / 2; break;
    default: left = 0; break;
    }
    if (code_sb_fill(b, f->fill, f->flen, left) || code_sb_add(b, body, blen) ||
        code_sb_fill(b, f->fill, f->flen, pad - left))
        return -1;
    return 0;
}

/* Digits grouped by sep every `every` from the right, zero-padded to at
 * least min_width characters when min_width > 0 (CPython never lets the
 * padding start with a separator: it adds a zero instead). */
static int put_grouped(code_sb *b, const char *d, size_t nd, char sep, size_t every,
                       size_t min_width)
{
    size_t total = nd;
    if (sep) {
        while (total + (total ? (total - 1) / every : 0) < min_width)
            total++;
    } else if (total < min_width)
        total = min_width;
    for (size_t k = 0; k < total; k++) {
        size_t left = total - k;        /* digits left including this one */
        char c = k < total - nd ? '0' : d[k - (total - nd)];
        if (code_sb_add(b, &c, 1))
            return -1;
        if (sep && left > 1 && (left - 1) % every == 0 && code_sb_add(b, &sep, 1))
            return -1;
    }
    return 0;
}

int code_fmt_number(code_sb *out, const code_fspec *f, bool neg, const char *prefix,
                    const char *digits, size_t nd, const char *rest, size_t nrest, size_t every)
{
    char sign[2] = {0, 0};
    if (neg)
        sign[0] = '-';
    else if (f->sign == '+' || f->sign == ' ')
        sign[0] = f->sign;
    size_t slen = sign[0] ? 1 : 0, plen = strlen(prefix);
    size_t restchars = code_utf8_count(rest, nrest);
    if (f->align == '=' && f->flen == 1 && f->fill[0] == '0' && f->width > 0) {
        size_t w = (size_t)f->width, fixed = slen + plen + restchars;
        size_t minw = w > fixed ? w - fixed : 0;
        if (code_sb_add(out, sign, slen) || code_sb_add(out, prefix, plen) ||
            put_grouped(out, digits, nd, f->group, every, minw) || code_sb_add(out, rest, nrest))
            return -1;
        return 0;
    }
    code_sb body;
    code_sb_init(&body, out->vm);
    if (put_grouped(&body, digits, nd, f->group, every, 0) || code_sb_add(&body, rest, nrest)) {
        code_sb_free(&body);
        return -1;
    }
    size_t nchars = slen + plen + nd + (f->group && nd ? (nd - 1) / every : 0) + restchars;
    int rc;
    if (f->align == '=') {
        size_t w = f->width > 0 ? (size_t)f->width : 0, pad = w > nchars ? w - nchars : 0;
        rc = code_sb_add(out, sign, slen) || code_sb_add(out, prefix, plen) ||
             code_sb_fill(out, f->fill, f->flen, pad) || code_sb_add(out, body.p, body.len);
    } else {
        code_sb all;
        code_sb_init(&all, out->vm);
        rc = code_sb_add(&all, sign, slen) || code_sb_add(&all, prefix, plen) ||
             code_sb_add(&all, body.p, body.len) || pad_out(out, f, all.p, all.len, nchars);
        code_sb_free(&all);
    }
    code_sb_free(&body);
    return rc ? -1 : 0;
}

/* ---- str ---- */

int code_fmt_str(code_sb *out, const code_fspec *f, const char *s, size_t n, size_t nchars)
{
    code_vm *vm = out->vm;
    if (f->type && f->type != 's')
        return code_fspec_unknown(vm, f->type, "str");
    if (f->sign)
        return code_raise_i(vm, &code_exc_ValueError, "%s not allowed in string format specifier",
                            f->sign == ' ' ? "Space" : "Sign");
    if (f->z)
        return code_raise_i(vm, &code_exc_ValueError,
                            "Negative zero coercion (z) not allowed in string format specifier");
    if (f->alt)
        return code_raise_i(vm, &code_exc_ValueError,
                            "Alternate form (#) not allowed in string format specifier");
    if (f->align == '=')
        return code_raise_i(vm, &code_exc_ValueError,
                            "'=' alignment not allowed in string format specifier");
    if (f->prec >= 0 && (size_t)f->prec < nchars) {
        size_t i = 0;
        for (ssize_t k = 0; k < f->prec; k++)
            i += code_utf8_seqlen((unsigned char)s[i]);
        n = i;
        nchars = (size_t)f->prec;
    }
    return pad_out(out, f, s, n, nchars);
}

/* ---- int ---- */

int code_sb_int_digits(code_sb *b, cv v, int base)
{
    if (cv_is_small(v) || cv_kind(v) == CODE_K_BOOL) {
        int64_t i = cv_is_small(v) ? cv_small(v) : v == CODE_TRUE;
        uint64_t u = i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i;
        char buf[72];
        size_t k = sizeof(buf);
        do {
            buf[--k] = "0123456789abcdef"[u % (unsigned)base];
            u /= (unsigned)base;
        } while (u);
        return code_sb_add(b, buf + k, sizeof(buf) - k);
    }
    if (base == 10) {
        cv r = code_int_repr(b->vm, v);
        if (!r)
            return -1;
        const char *s = code_str_cstr(r);
        size_t n = code_str_len(r);
        int rc = s[0] == '-' ? code_sb_add(b, s + 1, n - 1) : code_sb_add(b, s, n);
        code_decref(b->vm, r);
        return rc;
    }
    /* Power-of-two bases straight from the limbs. */
    code_bigint *bi = (code_bigint *)cv_obj(v);
    unsigned bits = base == 2 ? 1 : base == 8 ? 3 : 4;
    size_t total = (size_t)bi->n * 32;
    size_t ndig = (total + bits - 1) / bits;
    bool started = false;
    for (size_t d = ndig; d-- > 0;) {
        unsigned val = 0;
        for (unsigned k = 0; k < bits; k++) {
            size_t bit = d * bits + k;
            if (bit < total && (bi->limb[bit / 32] >> (bit % 32) & 1))
                val |= 1u << k;
        }
        if (!val && !started)
            continue;
        started = true;
        char c = "0123456789abcdef"[val];
        if (code_sb_add(b, &c, 1))
            return -1;
    }
    return started ? 0 : code_sb_add(b, "0", 1);
}

static int fmt_float_value(code_sb *out, const code_fspec *f, double d, bool from_int);

int code_fmt_int(code_sb *out, const code_fspec *f0, cv v, const char *tname)
{
    code_vm *vm = out->vm;
    code_fspec f = *f0;
    uint32_t t = f.type ? f.type : 'd';
    switch (t) {
    case 'b': case 'c': case 'd': case 'o': case 'x': case 'X': case 'n':
        break;
    case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': case '%': {
        double d;
        if (code_int_to_double(vm, v, &d))
            return -1;
        return fmt_float_value(out, &f, d, true);
    }
    default:
        return code_fspec_unknown(vm, t, tname);
    }
    if (f.prec >= 0)
        return code_raise_i(vm, &code_exc_ValueError,
                            "Precision not allowed in integer format specifier");
    if (f.z)
        return code_raise_i(vm, &code_exc_ValueError,
                            "Negative zero coercion (z) not allowed in integer format specifier");
    int sgn = cv_kind(v) == CODE_K_BOOL ? (v == CODE_TRUE) : code_int_sign(v);
    if (t == 'c') {
        if (f.sign)
            return code_raise_i(vm, &code_exc_ValueError,
                                "Sign not allowed with integer format specifier 'c'");
        if (f.alt)
            return code_raise_i(vm, &code_exc_ValueError,
                                "Alternate form (#) not allowed with integer format specifier 'c'");
        int64_t c;
        if (cv_kind(v) == CODE_K_BOOL)
            c = v == CODE_TRUE;
        else if (!code_int_to_i64(v, &c))
            c = -1;
        if (c < 0 || c > 0x10FFFF)
            return code_raise_i(vm, &code_exc_OverflowError, "%%c arg not in range(0x110000)");
        if (c >= 0xD800 && c <= 0xDFFF)
            return code_raise_i(vm, &code_exc_ValueError, "%%c arg is a surrogate (not supported)");
        char u[4];
        size_t n = code_utf8_put((uint32_t)c, u);
        if (f.align == '=')
            f.align = '>';
        return pad_out(out, &f, u, n, 1);
    }
    int base = t == 'b' ? 2 : t == 'o' ? 8 : t == 'x' || t == 'X' ? 16 : 10;
    const char *prefix = "";
    if (f.alt)
        prefix = t == 'b' ? "0b" : t == 'o' ? "0o" : t == 'x' ? "0x" : t == 'X' ? "0X" : "";
    code_sb dig;
    code_sb_init(&dig, vm);
    if (code_sb_int_digits(&dig, v, base)) {
        code_sb_free(&dig);
        return -1;
    }
    if (t == 'X')
        for (size_t i = 0; i < dig.len; i++)
            if (dig.p[i] >= 'a' && dig.p[i] <= 'f')
                dig.p[i] = (char)(dig.p[i] - 32);
    int rc = code_fmt_number(out, &f, sgn < 0, prefix, dig.p, dig.len, "", 0, base == 10 ? 3 : 4);
    code_sb_free(&dig);
    return rc;
}

/* ---- float ---- */

/* The repr-like digits of d >= 0 (no type given, no precision). */
static int float_repr_abs(code_vm *vm, double d, char *buf, size_t cap)
{
    cv r = code_float_repr(vm, d);
    if (!r)
        return -1;
    snprintf(buf, cap, "%s", code_str_cstr(r));
    code_decref(vm, r);
    return 0;
}

/* CPython's Py_DTSF_ADD_DOT_0: a ".0" when the digits are all there is. */
static void add_dot0(char *buf, size_t cap)
{
    if (strpbrk(buf, ".eEnN"))
        return;
    size_t n = strlen(buf);
    if (n + 3 <= cap)
        memcpy(buf + n, ".0", 3);
}

/* The alternate form's point: "1e+16" becomes "1.e+16". */
static void alt_point(char *buf, size_t cap)
{
    size_t n = strlen(buf), m = strcspn(buf, "eE");
    if (memchr(buf, '.', m) || n + 2 > cap)
        return;
    memmove(buf + m + 1, buf + m, n - m + 1);
    buf[m] = '.';
}

static int fmt_float_value(code_sb *out, const code_fspec *f0, double d, bool from_int)
{
    code_vm *vm = out->vm;
    code_fspec f = *f0;
    uint32_t t = f.type;
    (void)from_int;
    switch (t) {
    case 0: case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': case 'n': case '%':
        break;
    default:
        return code_fspec_unknown(vm, t, "float");
    }
    bool neg = signbit(d) && !isnan(d);
    double a = fabs(d);
    bool pct = false, dot0 = false, repr = false;
    if (t == 'n')
        t = 'g';
    if (t == '%') {
        t = 'f';
        a *= 100;
        pct = true;
    }
    ssize_t prec = f.prec;
    if (t == 0) {
        dot0 = true;
        if (prec < 0)
            repr = true;
        else
            t = 'g';
    }
    if (prec < 0)
        prec = 6;
    if (prec > 100000)
        return code_raise_i(vm, &code_exc_ValueError, "precision too big");
    size_t cap = (size_t)prec + 330;
    char *buf = code_heap_alloc(vm, cap);
    if (!buf)
        return -1;
    bool upper = t == 'E' || t == 'F' || t == 'G';
    if (isnan(a) || isinf(a)) {
        snprintf(buf, cap, "%s", isnan(a) ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf"));
    } else if (repr) {
        if (float_repr_abs(vm, a, buf, cap)) {
            code_heap_free(vm, buf, cap);
            return -1;
        }
        if (f.alt)
            alt_point(buf, cap);
    } else if (dot0) {
        /* No type, a precision: 'g' that switches to an exponent one digit
         * earlier and keeps a ".0" (CPython's Py_DTSF_ADD_DOT_0); '#' keeps
         * the trailing zeros and the point. */
        int p = prec ? (int)prec : 1;
        snprintf(buf, cap, "%.*e", p - 1, a);
        int exp = atoi(strchr(buf, 'e') + 1);
        if (exp < -4 || exp >= p - 1) {
            char *e = strchr(buf, 'e'), *m = e;
            if (!f.alt && memchr(buf, '.', (size_t)(e - buf))) {
                while (m[-1] == '0')
                    m--;
                if (m[-1] == '.')
                    m--;
            }
            memmove(m, e, strlen(e) + 1);
        } else {
            snprintf(buf, cap, f.alt ? "%#.*f" : "%.*f", p - 1 - exp, a);
            if (!f.alt && strchr(buf, '.')) {
                size_t k = strlen(buf);
                while (buf[k - 1] == '0')
                    buf[--k] = '\0';
                if (buf[k - 1] == '.')
                    buf[--k] = '\0';
            }
            if (!f.alt)
                add_dot0(buf, cap);
        }
        if (f.alt)
            alt_point(buf, cap);
    } else {
        char fmt[8] = "%";
        size_t k = 1;
        if (f.alt)
            fmt[k++] = '#';
        memcpy(fmt + k, ".*", 2);
        k += 2;
        fmt[k++] = (char)t;
        fmt[k] = '\0';
        /* The format is one of twelve made above from fixed pieces. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
        snprintf(buf, cap, fmt, (int)prec, a);
#pragma GCC diagnostic pop
        if (dot0 && !f.alt)
            add_dot0(buf, cap);
    }
    if (f.z && neg) {
        /* Negative zero after rounding loses its sign. */
        bool zero = true;
        for (const char *p = buf; *p && *p != 'e' && *p != 'E'; p++)
            if (*p >= '1' && *p <= '9')
                zero = false;
        if (zero)
            neg = false;
    }
    size_t nd = strspn(buf, "0123456789");
    if (isnan(a) || isinf(a))
        nd = 0;
    size_t blen = strlen(buf);
    if (pct && blen + 2 <= cap) {
        buf[blen++] = '%';
        buf[blen] = '\0';
    }
    /* Grouping applies to the integer digits only. */
    int rc;
    if (nd)
        rc = code_fmt_number(out, &f, neg, "", buf, nd, buf + nd, blen - nd, 3);
    else {
        code_fspec g = f;
        if (isnan(a) || isinf(a))
            g.group = 0;
        rc = code_fmt_number(out, &g, neg, "", "", 0, buf, blen, 3);
    }
    code_heap_free(vm, buf, cap);
    return rc;
}

int code_fmt_float(code_sb *out, const code_fspec *f, double d)
{
    return fmt_float_value(out, f, d, false);
}

/* ---- format(value, spec) ---- */

cv code_format(code_vm *vm, cv value, cv spec)
{
    const char *s = code_str_cstr(spec);
    size_t n = code_str_len(spec);
    int kind = cv_kind(value);
    /* An empty spec is str(value) for every type (f"{x}"'s common case). */
    if (n == 0)
        return code_str_of(vm, value);
    code_fspec f;
    code_sb b;
    code_sb_init(&b, vm);
    int rc;
    switch (kind) {
    case CODE_K_STR:
        rc = code_fspec_parse(vm, s, n, '<', 's', "str", &f) ||
             code_fmt_str(&b, &f, code_str_cstr(value), code_str_len(value),
                          code_str_p(value)->nchars);
        break;
    case CODE_K_INT:
    case CODE_K_BOOL:
        rc = code_fspec_parse(vm, s, n, '>', 'd', code_type_name(value), &f) ||
             code_fmt_int(&b, &f, value, code_type_name(value));
        break;
    case CODE_K_FLOAT:
        rc = code_fspec_parse(vm, s, n, '>', 0, "float", &f) ||
             code_fmt_float(&b, &f, ((code_float *)cv_obj(value))->v);
        break;
    default: {
        /* A type with its own __format__ (datetime's strftime) gets the
         * spec as it is. */
        const code_method *m = cv_type(value)->methods;
        for (; m && m->name; m++)
            if (strcmp(m->name, "__format__") == 0) {
                code_sb_free(&b);
                cv args[2] = {value, spec};
                return m->fn(vm, args, 2, CV_NULL);
            }
        code_sb_free(&b);
        return code_raise(vm, &code_exc_TypeError, "unsupported format string passed to %s.__format__",
                          code_type_name(value));
    }
    }
    if (rc) {
        code_sb_free(&b);
        return CV_NULL;
    }
    return code_sb_finish(&b);
}
