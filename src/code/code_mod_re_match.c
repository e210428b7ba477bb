/* re's Match objects: groups, spans, the group dictionary, m[g]. Offsets are
 * converted to code points once, when the match is made. */
#include <string.h>

#include "code/code_re.h"

/* Python's lastindex: the group that closed last. Among the set groups the
 * one ending last; on a tie, a group nested in another closed before it, a
 * group after another (an empty one) closed after it. */
static ssize_t last_index(const PCRE2_SIZE *ov, uint32_t ngroups)
{
    ssize_t best = -1;
    for (uint32_t g = 1; g <= ngroups; g++) {
        PCRE2_SIZE s = ov[2 * g], e = ov[2 * g + 1];
        if (s == PCRE2_UNSET)
            continue;
        if (best < 0 || e > ov[2 * best + 1] || (e == ov[2 * best + 1] && s >= ov[2 * best + 1]))
            best = g;
    }
    return best;
}

cv code_re_match_new(re_ctx *x, re_pattern *p, cv string, re_subject *sub, ssize_t pos,
                ssize_t endpos)
{
    code_vm *vm = x->vm;
    const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(x->md);
    uint32_t ng = p->ngroups;
    re_match *m = code_obj_new(vm, &code_type_re_match, sizeof *m + 4 * (ng + 1) * sizeof(ssize_t));
    if (!m)
        return CV_NULL;
    m->string = code_incref(string);
    m->re = code_incref(cv_of(p));
    m->pos = pos;
    m->endpos = endpos;
    m->ngroups = ng;
    m->lastindex = last_index(ov, ng);
    for (uint32_t g = 0; g <= ng; g++) {
        ssize_t *sp = m->span + 4 * g;
        if (ov[2 * g] == PCRE2_UNSET) {
            sp[0] = sp[1] = sp[2] = sp[3] = -1;
            continue;
        }
        sp[2] = (ssize_t)ov[2 * g];
        sp[3] = (ssize_t)ov[2 * g + 1];
        sp[0] = (ssize_t)code_re_char_of(sub, ov[2 * g]);
        sp[1] = (ssize_t)code_re_char_of(sub, ov[2 * g + 1]);
    }
    /* leave the cursor at the match's end, where the next search starts */
    code_re_char_of(sub, ov[1]);
    return cv_of(m);
}

static void match_dealloc(code_vm *vm, code_obj *o)
{
    re_match *m = (re_match *)o;
    code_decref(vm, m->string);
    code_decref(vm, m->re);
}

static const char *subject_bytes(cv string)
{
    return cv_is(string, &code_type_str) ? code_str_cstr(string)
                                         : (const char *)((code_bytes *)cv_obj(string))->s;
}

cv code_re_match_group(code_vm *vm, re_match *m, uint32_t g, cv dflt)
{
    const ssize_t *sp = m->span + 4 * g;
    if (sp[0] < 0)
        return code_incref(dflt ? dflt : CODE_NONE);
    return code_re_slice(vm, !cv_is(m->string, &code_type_str), subject_bytes(m->string),
                    (size_t)sp[2], (size_t)sp[3]);
}

int code_re_group_index(code_vm *vm, re_match *m, cv g, uint32_t *out)
{
    int k = cv_kind(g);
    if (k == CODE_K_INT || k == CODE_K_BOOL) {
        int64_t i;
        if (code_int_to_i64(g, &i) == 1 && i >= 0 && i <= (int64_t)m->ngroups) {
            *out = (uint32_t)i;
            return 0;
        }
    } else if (k == CODE_K_STR) {
        cv v;
        re_pattern *p = (re_pattern *)cv_obj(m->re);
        if (code_dict_get(vm, p->groupindex, g, &v) < 0)
            return -1;
        if (v) {
            *out = (uint32_t)cv_small(v);
            return 0;
        }
    }
    return code_raise_i(vm, &code_exc_IndexError, "no such group");
}

static cv match_repr(code_vm *vm, cv self)
{
    re_match *m = (re_match *)cv_obj(self);
    cv g0 = code_re_match_group(vm, m, 0, CV_NULL);
    cv r = g0 ? code_repr(vm, g0) : CV_NULL;
    code_decref(vm, g0);
    if (!r)
        return CV_NULL;
    /* CPython formats the match with %.50R: the repr cut at 50 characters */
    size_t cut = code_lib_u8_offset(r, 50);
    cv out = code_str_fmt(vm, "<re.Match object; span=(%zd, %zd), match=%.*s>", m->span[0],
                          m->span[1], (int)cut, code_str_cstr(r));
    code_decref(vm, r);
    return out;
}

static cv match_getattr(code_vm *vm, cv self, const char *name)
{
    re_match *m = (re_match *)cv_obj(self);
    if (!strcmp(name, "string"))
        return code_incref(m->string);
    if (!strcmp(name, "re"))
        return code_incref(m->re);
    if (!strcmp(name, "pos"))
        return code_int_from_i64(vm, m->pos);
    if (!strcmp(name, "endpos"))
        return code_int_from_i64(vm, m->endpos);
    if (!strcmp(name, "lastindex"))
        return m->lastindex < 0 ? CODE_NONE : code_int_from_i64(vm, m->lastindex);
    if (!strcmp(name, "lastgroup")) {
        if (m->lastindex < 0)
            return CODE_NONE;
        re_pattern *p = (re_pattern *)cv_obj(m->re);
        size_t pos = 0;
        cv k, v;
        while (code_dict_next(p->groupindex, &pos, &k, &v))
            if (cv_small(v) == m->lastindex)
                return code_incref(k);
        return CODE_NONE;
    }
    return CV_NULL;
}

static cv match_group(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    if (code_args_nokw(vm, "group", nargs, kwnames, 1, SIZE_MAX) < 0)
        return CV_NULL;
    re_match *m = (re_match *)cv_obj(args[0]);
    if (nargs <= 2) {
        uint32_t g = 0;
        if (nargs == 2 && code_re_group_index(vm, m, args[1], &g) < 0)
            return CV_NULL;
        return code_re_match_group(vm, m, g, CV_NULL);
    }
    cv t = code_tuple_new(vm, nargs - 1);
    if (!t)
        return CV_NULL;
    for (size_t i = 1; i < nargs; i++) {
        uint32_t g;
        cv v = code_re_group_index(vm, m, args[i], &g) < 0 ? CV_NULL : code_re_match_group(vm, m, g, CV_NULL);
        if (!v) {
            code_decref(vm, t);
            return CV_NULL;
        }
        ((code_tuple *)cv_obj(t))->v[i - 1] = v;
    }
    return t;
}

static cv match_getitem(code_vm *vm, cv self, cv key)
{
    re_match *m = (re_match *)cv_obj(self);
    uint32_t g;
    if (code_re_group_index(vm, m, key, &g) < 0)
        return CV_NULL;
    return code_re_match_group(vm, m, g, CV_NULL);
}

static cv match_groups(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    cv self, dflt = CODE_NONE;
    if (code_args(vm, "groups", args, nargs, kwnames, "self,|default", &self, &dflt) < 0)
        return CV_NULL;
    re_match *m = (re_match *)cv_obj(self);
    cv t = code_tuple_new(vm, m->ngroups);
    if (!t)
        return CV_NULL;
    for (uint32_t g = 1; g <= m->ngroups; g++) {
        cv v = code_re_match_group(vm, m, g, dflt);
        if (!v) {
            code_decref(vm, t);
            return CV_NULL;
        }
        ((code_tuple *)cv_obj(t))->v[g - 1] = v;
    }
    return t;
}

static cv match_groupdict(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    cv self, dflt = CODE_NONE;
    if (code_args(vm, "groupdict", args, nargs, kwnames, "self,|default", &self, &dflt) < 0)
        return CV_NULL;
    re_match *m = (re_match *)cv_obj(self);
    re_pattern *p = (re_pattern *)cv_obj(m->re);
    cv d = code_dict_new(vm);
    size_t pos = 0;
    cv k, v;
    while (d && code_dict_next(p->groupindex, &pos, &k, &v)) {
        cv s = code_re_match_group(vm, m, (uint32_t)cv_small(v), dflt);
        if (!s || code_dict_set(vm, d, k, s) < 0) {
            code_decref(vm, s);
            code_decref(vm, d);
            return CV_NULL;
        }
        code_decref(vm, s);
    }
    return d;
}

/* start, end and span: which is 0, 1 or 2. */
static cv match_pos(code_vm *vm, cv *args, size_t nargs, cv kwnames, int which)
{
    static const char *const names[3] = { "start", "end", "span" };
    cv self, gv = cv_from_small(0);
    if (code_args(vm, names[which], args, nargs, kwnames, "self,|group", &self, &gv) < 0)
        return CV_NULL;
    re_match *m = (re_match *)cv_obj(self);
    uint32_t g;
    if (code_re_group_index(vm, m, gv, &g) < 0)
        return CV_NULL;
    ssize_t s = m->span[4 * g], e = m->span[4 * g + 1];
    if (which == 0)
        return code_int_from_i64(vm, s);
    if (which == 1)
        return code_int_from_i64(vm, e);
    return code_tuple_pack(vm, 2, cv_from_small(s), cv_from_small(e));
}

static cv match_start(code_vm *vm, cv *a, size_t n, cv kw) { return match_pos(vm, a, n, kw, 0); }
static cv match_end(code_vm *vm, cv *a, size_t n, cv kw) { return match_pos(vm, a, n, kw, 1); }
static cv match_span(code_vm *vm, cv *a, size_t n, cv kw) { return match_pos(vm, a, n, kw, 2); }

static cv match_expand(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    cv self, templ;
    if (code_args(vm, "expand", args, nargs, kwnames, "self,template", &self, &templ) < 0)
        return CV_NULL;
    return code_re_expand(vm, (re_match *)cv_obj(self), templ);
}

static const code_method match_methods[] = {
    { "group", match_group }, { "groups", match_groups }, { "groupdict", match_groupdict },
    { "start", match_start }, { "end", match_end }, { "span", match_span },
    { "expand", match_expand }, { NULL, NULL },
};

const code_type code_type_re_match = {
    .ob = CODE_STATIC_HDR(&code_type_type),
    .name = "re.Match",
    .kind = CODE_K_OTHER,
    .dealloc = match_dealloc,
    .repr = match_repr,
    .getitem = match_getitem,
    .getattr = match_getattr,
    .methods = match_methods,
};
