/* re's scanning functions: findall, finditer, sub/subn (with Python's
 * replacement templates), split, Match.expand and escape.
 *
 * Successive matches follow CPython 3.7+: after an empty match the next one
 * may not be empty at the same place (PCRE2_NOTEMPTY_ATSTART), but may be a
 * non-empty one starting there; after a non-empty match an empty one may
 * follow at once. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "code/code_re.h"

/* The next match from *b; 1, 0 at the end, -1 on error. */
static int next_match(re_ctx *x, re_pattern *p, re_subject *sub, size_t bend, size_t *b,
                      bool *last_empty)
{
    if (*b > bend)
        return 0;
    int rc = code_re_exec(x, p, sub, *b, bend, *last_empty ? PCRE2_NOTEMPTY_ATSTART : 0);
    if (rc <= 0)
        return rc;
    const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(x->md);
    *last_empty = ov[0] == ov[1];
    *b = ov[1] > *b ? ov[1] : *b;
    return 1;
}

/* Group g of the current match as findall and split give it: dflt (borrowed)
 * when the group did not take part. */
static cv cur_group(code_vm *vm, re_ctx *x, re_pattern *p, re_subject *sub, uint32_t g, cv dflt)
{
    const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(x->md);
    if (ov[2 * g] == PCRE2_UNSET)
        return code_incref(dflt);
    return code_re_slice(vm, p->is_bytes, sub->s, ov[2 * g], ov[2 * g + 1]);
}

static cv empty_of(code_vm *vm, bool is_bytes)
{
    return is_bytes ? code_bytes_new(vm, "", 0) : code_str_new(vm, "", 0);
}

cv code_re_findall(code_vm *vm, re_pattern *p, cv string, cv pos, cv endpos)
{
    re_subject sub;
    size_t b, bend;
    ssize_t c0, c1;
    if (code_re_subject_of(vm, p, string, &sub) < 0 ||
        code_re_bounds(vm, &sub, pos, endpos, &b, &bend, &c0, &c1) < 0)
        return CV_NULL;
    cv out = code_list_new(vm, 0);
    cv empty = empty_of(vm, p->is_bytes);
    re_ctx x;
    if (!out || !empty || code_re_ctx_open(vm, p, &x) < 0) {
        code_decref(vm, out);
        code_decref(vm, empty);
        return CV_NULL;
    }
    bool last_empty = false;
    int rc;
    (void)rc;
    while (c1 >= c0 && (rc = next_match(&x, p, &sub, bend, &b, &last_empty)) > 0) {
        cv item;
        if (p->ngroups <= 1) {
            item = cur_group(vm, &x, p, &sub, p->ngroups, empty);
        } else {
            item = code_tuple_new(vm, p->ngroups);
            for (uint32_t g = 1; item && g <= p->ngroups; g++) {
                cv v = cur_group(vm, &x, p, &sub, g, empty);
                if (!v) {
                    code_decref(vm, item);
                    item = CV_NULL;
                    break;
                }
                ((code_tuple *)cv_obj(item))->v[g - 1] = v;
            }
        }
        rc = item ? code_list_append(vm, out, item) : -1;
        code_decref(vm, item);
        if (rc < 0)
            break;
    }
    code_re_ctx_close(&x);
    code_decref(vm, empty);
    if (vm->exc) {
        code_decref(vm, out);
        return CV_NULL;
    }
    return out;
}

/* ---- finditer ----------------------------------------------------------------------- */

typedef struct re_iter {
    code_obj ob;
    cv pattern, string;
    re_subject sub;
    size_t b, bend;
    ssize_t cpos, cend;
    bool last_empty, done;
} re_iter;

static void iter_dealloc(code_vm *vm, code_obj *o)
{
    re_iter *it = (re_iter *)o;
    code_decref(vm, it->pattern);
    code_decref(vm, it->string);
}

static cv iter_next(code_vm *vm, cv self)
{
    re_iter *it = (re_iter *)cv_obj(self);
    if (it->done)
        return CV_NULL;
    re_pattern *p = (re_pattern *)cv_obj(it->pattern);
    re_ctx x;
    if (code_re_ctx_open(vm, p, &x) < 0)
        return CV_NULL;
    int rc = next_match(&x, p, &it->sub, it->bend, &it->b, &it->last_empty);
    cv r = rc > 0 ? code_re_match_new(&x, p, it->string, &it->sub, it->cpos, it->cend) : CV_NULL;
    if (rc <= 0)
        it->done = true;
    code_re_ctx_close(&x);
    return r;
}

static const code_type code_type_re_iter = {
    .ob = CODE_STATIC_HDR(&code_type_type),
    .name = "callable_iterator",
    .kind = CODE_K_ITER,
    .dealloc = iter_dealloc,
    .iter = code_iter_self,
    .next = iter_next,
};

cv code_re_finditer(code_vm *vm, re_pattern *p, cv string, cv pos, cv endpos)
{
    re_subject sub;
    size_t b, bend;
    ssize_t c0, c1;
    if (code_re_subject_of(vm, p, string, &sub) < 0 ||
        code_re_bounds(vm, &sub, pos, endpos, &b, &bend, &c0, &c1) < 0)
        return CV_NULL;
    re_iter *it = code_obj_new(vm, &code_type_re_iter, sizeof *it);
    if (!it)
        return CV_NULL;
    it->pattern = code_incref(cv_of(p));
    it->string = code_incref(string);
    it->sub = sub;
    it->b = b;
    it->bend = bend;
    it->cpos = c0;
    it->cend = c1;
    it->done = c1 < c0;
    return cv_of(it);
}

/* ---- replacement templates ---------------------------------------------------------- */

/* A parsed template: literal text in lit, and pieces that are either a run
 * of it or a group. */
typedef struct tpl_piece {
    int32_t group;               /* -1: literal lit[off..off+len) */
    size_t off, len;
} tpl_piece;

typedef struct tpl {
    code_sb lit;
    tpl_piece *pieces;
    size_t n, cap;
} tpl;

static int tpl_push(code_vm *vm, tpl *t, int32_t group, size_t off, size_t len)
{
    if (group < 0 && t->n > 0 && t->pieces[t->n - 1].group < 0) {
        t->pieces[t->n - 1].len += len;   /* literal runs are contiguous in lit */
        return 0;
    }
    if (t->n == t->cap) {
        size_t nc = t->cap ? 2 * t->cap : 8;
        tpl_piece *np = code_heap_realloc(vm, t->pieces, t->cap * sizeof *np, nc * sizeof *np);
        if (!np)
            return -1;
        t->pieces = np;
        t->cap = nc;
    }
    t->pieces[t->n++] = (tpl_piece){ group, off, len };
    return 0;
}

static void tpl_free(code_vm *vm, tpl *t)
{
    code_sb_free(&t->lit);
    code_heap_free(vm, t->pieces, t->cap * sizeof *t->pieces);
}

static int tpl_lit(code_vm *vm, tpl *t, const char *s, size_t n)
{
    size_t off = t->lit.len;
    if (code_sb_add(&t->lit, s, n) < 0)
        return -1;
    return tpl_push(vm, t, -1, off, n);
}

/* A code point as str text, or a byte for bytes templates. */
static int tpl_char(code_vm *vm, tpl *t, uint32_t c, bool is_bytes)
{
    char buf[4];
    if (is_bytes) {
        buf[0] = (char)c;
        return tpl_lit(vm, t, buf, 1);
    }
    return tpl_lit(vm, t, buf, code_lib_u8_enc(c, buf));
}

static int tpl_error(code_vm *vm, const char *s, size_t at, bool is_bytes, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int tpl_error(code_vm *vm, const char *s, size_t at, bool is_bytes, const char *fmt, ...)
{
    size_t pos = 0;              /* in characters */
    for (size_t k = 0; k < at; k++)
        if (is_bytes || ((unsigned char)s[k] & 0xC0) != 0x80)
            pos++;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return code_raise_i(vm, &code_exc_re_error, "%s at position %zu", msg, pos);
}

static bool is_dig(char c) { return c >= '0' && c <= '9'; }
static bool is_oct(char c) { return c >= '0' && c <= '7'; }

static int tpl_group(code_vm *vm, tpl *t, re_pattern *p, int64_t g, const char *s, size_t at,
                     bool is_bytes)
{
    if (g > (int64_t)p->ngroups) {
        return tpl_error(vm, s, at, is_bytes, "invalid group reference %lld", (long long)g);
    }
    return tpl_push(vm, t, (int32_t)g, 0, 0);
}

/* \g<name> or \g<number>; i is on the 'g'. */
static int tpl_named(code_vm *vm, tpl *t, re_pattern *p, const char *s, size_t n, size_t *i,
                     bool is_bytes)
{
    size_t k = *i + 1;
    if (k >= n || s[k] != '<')
        return tpl_error(vm, s, k, is_bytes, "missing <");
    size_t name = k + 1, e = name;
    while (e < n && s[e] != '>')
        e++;
    if (e == name || (e >= n && e == name))
        return tpl_error(vm, s, name, is_bytes, "missing group name");
    if (e >= n)
        return tpl_error(vm, s, name, is_bytes, "missing >, unterminated name");
    *i = e;
    size_t len = e - name;
    bool digits = true, ident = !is_dig(s[name]);
    for (size_t j = name; j < e; j++) {
        unsigned char c = (unsigned char)s[j];
        digits = digits && is_dig((char)c);
        ident = ident && (c == '_' || c >= 0x80 || (c >= 'a' && c <= 'z') ||
                          (c >= 'A' && c <= 'Z') || is_dig((char)c));
    }
    if (ident) {
        cv key = code_str_new(vm, s + name, len), v = CV_NULL;
        if (!key || code_dict_get(vm, p->groupindex, key, &v) < 0) {
            code_decref(vm, key);
            return -1;
        }
        code_decref(vm, key);
        if (!v)
            return code_raise_i(vm, &code_exc_IndexError, "unknown group name '%.*s'", (int)len,
                                s + name);
        return tpl_push(vm, t, (int32_t)cv_small(v), 0, 0);
    }
    if (!digits || len > 9)
        return tpl_error(vm, s, name, is_bytes, "bad character in group name '%.*s'", (int)len,
                         s + name);
    int64_t g = 0;
    for (size_t j = name; j < e; j++)
        g = g * 10 + (s[j] - '0');
    return tpl_group(vm, t, p, g, s, name, is_bytes);
}

static int tpl_parse(code_vm *vm, re_pattern *p, const char *s, size_t n, bool is_bytes, tpl *t)
{
    memset(t, 0, sizeof *t);
    code_sb_init(&t->lit, vm);
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\')
            continue;
        if (i > run && tpl_lit(vm, t, s + run, i - run) < 0)
            return -1;
        if (i + 1 >= n)
            return tpl_error(vm, s, i, is_bytes, "bad escape (end of pattern)");
        char c = s[i + 1];
        size_t bs = i;
        i++;
        int rc = 0;
        if (c == 'g') {
            rc = tpl_named(vm, t, p, s, n, &i, is_bytes);
        } else if (c == '0') {
            uint32_t v = 0;
            for (int k = 0; k < 2 && i + 1 < n && is_oct(s[i + 1]); k++)
                v = v * 8 + (uint32_t)(s[++i] - '0');
            rc = tpl_char(vm, t, v & 0xff, is_bytes);
        } else if (is_dig(c)) {
            if (i + 1 < n && is_dig(s[i + 1])) {
                if (is_oct(c) && is_oct(s[i + 1]) && i + 2 < n && is_oct(s[i + 2])) {
                    uint32_t v = (uint32_t)((c - '0') * 64 + (s[i + 1] - '0') * 8 + (s[i + 2] - '0'));
                    if (v > 0377)
                        return tpl_error(vm, s, bs, is_bytes,
                                         "octal escape value %.4s outside of range 0-0o377",
                                         s + bs);
                    i += 2;
                    rc = tpl_char(vm, t, v, is_bytes);
                } else {
                    rc = tpl_group(vm, t, p, (c - '0') * 10 + (s[i + 1] - '0'), s, bs + 1, is_bytes);
                    i++;
                }
            } else {
                rc = tpl_group(vm, t, p, c - '0', s, bs + 1, is_bytes);
            }
        } else {
            char e = 0;
            switch (c) {
            case 'a': e = '\a'; break;
            case 'b': e = '\b'; break;
            case 'f': e = '\f'; break;
            case 'n': e = '\n'; break;
            case 'r': e = '\r'; break;
            case 't': e = '\t'; break;
            case 'v': e = '\v'; break;
            case '\\': e = '\\'; break;
            default: break;
            }
            if (e)
                rc = tpl_lit(vm, t, &e, 1);
            else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
                return tpl_error(vm, s, bs, is_bytes, "bad escape %.2s", s + bs);
            else
                rc = tpl_lit(vm, t, s + bs, 2);
        }
        if (rc < 0)
            return -1;
        run = i + 1;
    }
    if (n > run && tpl_lit(vm, t, s + run, n - run) < 0)
        return -1;
    return t->lit.failed ? -1 : 0;
}

/* Appends the template's expansion for the match whose ovector is ov. */
static void tpl_expand(const tpl *t, const char *subj, const PCRE2_SIZE *ov, code_sb *out)
{
    for (size_t i = 0; i < t->n; i++) {
        const tpl_piece *pc = &t->pieces[i];
        if (pc->group < 0) {
            code_sb_add(out, t->lit.p + pc->off, pc->len);
        } else if (ov[2 * pc->group] != PCRE2_UNSET) {
            code_sb_add(out, subj + ov[2 * pc->group],
                        ov[2 * pc->group + 1] - ov[2 * pc->group]);
        }
    }
}

static cv sb_result(code_vm *vm, code_sb *b, bool is_bytes)
{
    if (b->failed) {
        code_sb_free(b);
        return vm->exc ? CV_NULL : code_raise_nomem(vm);
    }
    if (!is_bytes)
        return code_sb_finish(b);
    cv r = code_bytes_new(vm, b->p ? b->p : "", b->len);
    code_sb_free(b);
    return r;
}

static int tpl_of(code_vm *vm, re_pattern *p, cv templ, tpl *t)
{
    bool ok = p->is_bytes ? cv_is(templ, &code_type_bytes) : cv_is(templ, &code_type_str);
    if (!ok)
        return code_raise_i(vm, &code_exc_TypeError, p->is_bytes
                                ? "expected a bytes-like object, %s found"
                                : "expected str instance, %s found", code_type_name(templ));
    const char *s = p->is_bytes ? (const char *)((code_bytes *)cv_obj(templ))->s
                                : code_str_cstr(templ);
    size_t n = p->is_bytes ? ((code_bytes *)cv_obj(templ))->len : code_str_len(templ);
    if (tpl_parse(vm, p, s, n, p->is_bytes, t) < 0) {
        tpl_free(vm, t);
        return -1;
    }
    return 0;
}

cv code_re_expand(code_vm *vm, re_match *m, cv templ)
{
    re_pattern *p = (re_pattern *)cv_obj(m->re);
    tpl t;
    if (tpl_of(vm, p, templ, &t) < 0)
        return CV_NULL;
    /* an ovector in bytes, from the match's spans */
    size_t nov = 2 * ((size_t)m->ngroups + 1);
    PCRE2_SIZE *ov = code_heap_alloc(vm, nov * sizeof *ov);
    if (!ov) {
        tpl_free(vm, &t);
        return CV_NULL;
    }
    for (uint32_t g = 0; g <= m->ngroups; g++) {
        ov[2 * g] = m->span[4 * g] < 0 ? PCRE2_UNSET : (PCRE2_SIZE)m->span[4 * g + 2];
        ov[2 * g + 1] = m->span[4 * g] < 0 ? PCRE2_UNSET : (PCRE2_SIZE)m->span[4 * g + 3];
    }
    code_sb b;
    code_sb_init(&b, vm);
    const char *subj = cv_is(m->string, &code_type_str)
                           ? code_str_cstr(m->string)
                           : (const char *)((code_bytes *)cv_obj(m->string))->s;
    tpl_expand(&t, subj, ov, &b);
    code_heap_free(vm, ov, nov * sizeof *ov);
    tpl_free(vm, &t);
    return sb_result(vm, &b, p->is_bytes);
}

cv code_re_sub(code_vm *vm, re_pattern *p, cv repl, cv string, cv count, bool subn)
{
    re_subject sub;
    int64_t maxn = 0;
    if (count && code_as_i64(vm, count, &maxn) < 0)
        return CV_NULL;
    if (code_re_subject_of(vm, p, string, &sub) < 0)
        return CV_NULL;
    bool is_fn = !cv_is(repl, &code_type_str) && !cv_is(repl, &code_type_bytes) &&
                 cv_type(repl)->call;
    tpl t = { 0 };
    if (!is_fn && tpl_of(vm, p, repl, &t) < 0)
        return CV_NULL;
    re_ctx x;
    if (code_re_ctx_open(vm, p, &x) < 0) {
        if (!is_fn)
            tpl_free(vm, &t);
        return CV_NULL;
    }
    code_sb b;
    code_sb_init(&b, vm);
    size_t pos = 0, last = 0;
    bool last_empty = false;
    int64_t n = 0;
    int rc = 0;
    /* the Match objects' endpos; the cursor then walks forward only */
    ssize_t cend = is_fn ? (ssize_t)code_re_char_of(&sub, sub.len) : 0;
    while (maxn >= 0 && (maxn == 0 || n < maxn) &&
           (rc = next_match(&x, p, &sub, sub.len, &pos, &last_empty)) > 0) {
        const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(x.md);
        code_sb_add(&b, sub.s + last, ov[0] - last);
        last = ov[1];
        n++;
        if (!is_fn) {
            tpl_expand(&t, sub.s, ov, &b);
            continue;
        }
        cv m = code_re_match_new(&x, p, string, &sub, 0, cend);
        cv r = m ? code_call(vm, repl, &m, 1, CV_NULL) : CV_NULL;
        code_decref(vm, m);
        if (!r) {
            rc = -1;
            break;
        }
        if (r != CODE_NONE) {
            bool ok = p->is_bytes ? cv_is(r, &code_type_bytes) : cv_is(r, &code_type_str);
            if (!ok) {
                code_raise(vm, &code_exc_TypeError, p->is_bytes
                               ? "sequence item 0: expected a bytes-like object, %s found"
                               : "sequence item 0: expected str instance, %s found",
                           code_type_name(r));
                code_decref(vm, r);
                rc = -1;
                break;
            }
            if (p->is_bytes)
                code_sb_add(&b, (const char *)((code_bytes *)cv_obj(r))->s,
                            ((code_bytes *)cv_obj(r))->len);
            else
                code_sb_add(&b, code_str_cstr(r), code_str_len(r));
        }
        code_decref(vm, r);
    }
    code_re_ctx_close(&x);
    if (!is_fn)
        tpl_free(vm, &t);
    if (rc < 0) {
        code_sb_free(&b);
        return CV_NULL;
    }
    code_sb_add(&b, sub.s + last, sub.len - last);
    cv s = sb_result(vm, &b, p->is_bytes);
    if (!s || !subn)
        return s;
    cv nv = code_int_from_i64(vm, n);
    cv r = nv ? code_tuple_pack(vm, 2, s, nv) : CV_NULL;
    code_decref(vm, s);
    code_decref(vm, nv);
    return r;
}

cv code_re_split(code_vm *vm, re_pattern *p, cv string, cv maxsplit)
{
    re_subject sub;
    int64_t maxn = 0;
    if (maxsplit && code_as_i64(vm, maxsplit, &maxn) < 0)
        return CV_NULL;
    if (code_re_subject_of(vm, p, string, &sub) < 0)
        return CV_NULL;
    cv out = code_list_new(vm, 0);
    re_ctx x;
    if (!out || code_re_ctx_open(vm, p, &x) < 0) {
        code_decref(vm, out);
        return CV_NULL;
    }
    size_t pos = 0, last = 0;
    bool last_empty = false;
    int64_t n = 0;
    int rc = 0;
    while (maxn >= 0 && (maxn == 0 || n < maxn) &&
           (rc = next_match(&x, p, &sub, sub.len, &pos, &last_empty)) > 0) {
        const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(x.md);
        cv piece = code_re_slice(vm, p->is_bytes, sub.s, last, ov[0]);
        rc = piece ? code_list_append(vm, out, piece) : -1;
        code_decref(vm, piece);
        for (uint32_t g = 1; rc == 0 && g <= p->ngroups; g++) {
            cv v = cur_group(vm, &x, p, &sub, g, CODE_NONE);
            rc = v ? code_list_append(vm, out, v) : -1;
            code_decref(vm, v);
        }
        if (rc < 0)
            break;
        last = ov[1];
        n++;
    }
    code_re_ctx_close(&x);
    cv rest = rc < 0 ? CV_NULL : code_re_slice(vm, p->is_bytes, sub.s, last, sub.len);
    if (!rest || code_list_append(vm, out, rest) < 0) {
        code_decref(vm, rest);
        code_decref(vm, out);
        return CV_NULL;
    }
    code_decref(vm, rest);
    return out;
}

cv code_re_escape(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    cv pattern;
    if (code_args(vm, "escape", args, nargs, kwnames, "pattern", &pattern) < 0)
        return CV_NULL;
    bool is_bytes = cv_is(pattern, &code_type_bytes);
    if (!is_bytes && !cv_is(pattern, &code_type_str))
        return code_raise(vm, &code_exc_TypeError,
                          "decoding to str: need a bytes-like object, %s found",
                          code_type_name(pattern));
    const char *s = is_bytes ? (const char *)((code_bytes *)cv_obj(pattern))->s
                             : code_str_cstr(pattern);
    size_t n = is_bytes ? ((code_bytes *)cv_obj(pattern))->len : code_str_len(pattern);
    static const char special[] = "()[]{}?*+-|^$\\.&~# \t\n\r\v\f";
    code_sb b;
    code_sb_init(&b, vm);
    for (size_t i = 0; i < n; i++) {
        if (s[i] && memchr(special, s[i], sizeof special - 1))
            code_sb_add(&b, "\\", 1);
        code_sb_add(&b, s + i, 1);
    }
    return sb_result(vm, &b, is_bytes);
}
