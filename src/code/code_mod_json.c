/* The json module: dumps with CPython's exact output, the module's members.
 * loads is in code_mod_json_dec.c. Encoding recurses on the C stack, each
 * level through code_guard_enter, and keeps the chain of containers being
 * encoded (on the C stack too) for the circular-reference check. */
#include <math.h>
#include <string.h>

#include "code/code_lib.h"

typedef struct json_enc {
    code_vm *vm;
    code_sb sb;
    cv indent;                   /* str, or CV_NULL: one line */
    cv item_sep, key_sep;        /* str */
    cv dflt;                     /* callable, or CV_NULL */
    bool sort_keys, ensure_ascii, allow_nan, skipkeys, check_circular;
    unsigned level;
} json_enc;

/* A container (or an object handed to default) being encoded. */
typedef struct json_mark {
    cv v;
    const struct json_mark *up;
} json_mark;

static int enc_value(json_enc *e, cv v, const json_mark *up);

static void add_str(json_enc *e, cv s)
{
    code_sb_add(&e->sb, code_str_cstr(s), code_str_len(s));
}

static void enc_string(json_enc *e, const char *s, size_t n)
{
    code_sb *b = &e->sb;
    code_sb_add(b, "\"", 1);
    size_t run = 0;              /* bytes copied as they are, pending */
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = NULL;
        switch (c) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        default: break;
        }
        bool plain = !esc && c >= 0x20 && (c < 0x7f || !e->ensure_ascii);
        if (plain) {
            run++;
            i++;
            continue;
        }
        code_sb_add(b, s + i - run, run);
        run = 0;
        if (esc) {
            code_sb_addc(b, esc);
            i++;
            continue;
        }
        uint32_t cp;
        i += code_lib_u8_dec((const unsigned char *)s + i, &cp);
        if (cp >= 0x10000) {
            cp -= 0x10000;
            code_sb_printf(b, "\\u%04x\\u%04x", 0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF));
        } else {
            code_sb_printf(b, "\\u%04x", cp);
        }
    }
    code_sb_add(b, s + n - run, run);
    code_sb_add(b, "\"", 1);
}

static int enc_float(json_enc *e, double d)
{
    if (!isfinite(d)) {
        if (!e->allow_nan)
            return code_raise_i(e->vm, &code_exc_ValueError,
                                "Out of range float values are not JSON compliant");
        code_sb_addc(&e->sb, isnan(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity");
        return 0;
    }
    cv r = code_float_repr(e->vm, d);
    if (!r)
        return -1;
    add_str(e, r);
    code_decref(e->vm, r);
    return 0;
}

static int enc_int(json_enc *e, cv v)
{
    cv r = code_int_repr(e->vm, v);
    if (!r)
        return -1;
    add_str(e, r);
    code_decref(e->vm, r);
    return 0;
}

static void newline(json_enc *e)
{
    code_sb_add(&e->sb, "\n", 1);
    for (unsigned i = 0; i < e->level; i++)
        add_str(e, e->indent);
}

/* Opens a container: the circular check and the depth guard. */
static int enter(json_enc *e, cv v, const json_mark *up)
{
    if (e->check_circular)
        for (const json_mark *m = up; m; m = m->up)
            if (m->v == v)
                return code_raise_i(e->vm, &code_exc_ValueError, "Circular reference detected");
    return code_guard_enter(e->vm, "while encoding a JSON object");
}

static int enc_list(json_enc *e, cv v, const json_mark *up)
{
    bool is_list = cv_is(v, &code_type_list);
    if ((is_list ? ((code_list *)cv_obj(v))->n : ((code_tuple *)cv_obj(v))->n) == 0) {
        code_sb_add(&e->sb, "[]", 2);
        return 0;
    }
    if (enter(e, v, up) < 0)
        return -1;
    json_mark me = { v, up };
    code_sb_add(&e->sb, "[", 1);
    e->level++;
    int rc = 0;
    for (size_t i = 0; rc == 0; i++) {
        /* re-read each time: a default() call may have changed the list */
        size_t n = is_list ? ((code_list *)cv_obj(v))->n : ((code_tuple *)cv_obj(v))->n;
        if (i >= n)
            break;
        cv item = is_list ? ((code_list *)cv_obj(v))->v[i] : ((code_tuple *)cv_obj(v))->v[i];
        if (i > 0)
            add_str(e, e->item_sep);
        if (e->indent)
            newline(e);
        rc = enc_value(e, item, &me);
    }
    e->level--;
    if (rc == 0) {
        if (e->indent)
            newline(e);
        code_sb_add(&e->sb, "]", 1);
    }
    code_guard_leave(e->vm);
    return rc;
}

/* A dict key as its JSON string: str as is; int, float, bool and None
 * converted as CPython does; 1 when it is to be skipped. */
static int enc_key(json_enc *e, cv k)
{
    code_vm *vm = e->vm;
    int kind = cv_kind(k);
    if (kind == CODE_K_STR) {
        enc_string(e, code_str_cstr(k), code_str_len(k));
        return 0;
    }
    if (kind == CODE_K_BOOL || kind == CODE_K_NONE) {
        code_sb_addc(&e->sb, k == CODE_TRUE ? "\"true\"" : k == CODE_FALSE ? "\"false\""
                                                                            : "\"null\"");
        return 0;
    }
    if (kind == CODE_K_INT || kind == CODE_K_FLOAT) {
        code_sb_add(&e->sb, "\"", 1);
        int rc = kind == CODE_K_INT ? enc_int(e, k) : enc_float(e, ((code_float *)cv_obj(k))->v);
        code_sb_add(&e->sb, "\"", 1);
        return rc;
    }
    if (e->skipkeys)
        return 1;
    return code_raise_i(vm, &code_exc_TypeError,
                        "keys must be str, int, float, bool or None, not %s", code_type_name(k));
}

static int enc_dict(json_enc *e, cv v, const json_mark *up)
{
    code_vm *vm = e->vm;
    if (((code_dict *)cv_obj(v))->used == 0) {
        code_sb_add(&e->sb, "{}", 2);
        return 0;
    }
    if (enter(e, v, up) < 0)
        return -1;
    json_mark me = { v, up };
    /* The items are taken first (as CPython does), so the dict may change
     * under a default() call without harm. */
    cv items = code_list_new(vm, 0);
    int rc = items ? 0 : -1;
    size_t pos = 0;
    cv k, val;
    while (rc == 0 && code_dict_next(v, &pos, &k, &val)) {
        cv pair = code_tuple_pack(vm, 2, k, val);
        rc = pair ? code_list_append(vm, items, pair) : -1;
        code_decref(vm, pair);
    }
    if (rc == 0 && e->sort_keys)
        rc = code_list_sort(vm, items, CV_NULL, false);
    code_sb_add(&e->sb, "{", 1);
    e->level++;
    bool first = true;
    for (size_t i = 0; rc == 0 && i < ((code_list *)cv_obj(items))->n; i++) {
        cv pair = ((code_list *)cv_obj(items))->v[i];
        cv key = ((code_tuple *)cv_obj(pair))->v[0];
        size_t mark = e->sb.len;
        if (!first)
            add_str(e, e->item_sep);
        if (e->indent)
            newline(e);
        int kr = enc_key(e, key);
        if (kr < 0) {
            rc = -1;
            break;
        }
        if (kr == 1) {           /* skipped: take back the separator */
            e->sb.len = mark;
            continue;
        }
        first = false;
        add_str(e, e->key_sep);
        rc = enc_value(e, ((code_tuple *)cv_obj(pair))->v[1], &me);
    }
    e->level--;
    if (rc == 0) {
        if (e->indent && !first)
            newline(e);
        code_sb_add(&e->sb, "}", 1);
    }
    code_decref(vm, items);
    code_guard_leave(vm);
    return rc;
}

static int enc_value(json_enc *e, cv v, const json_mark *up)
{
    code_vm *vm = e->vm;
    if (e->sb.failed)
        return -1;
    switch (cv_kind(v)) {
    case CODE_K_NONE: code_sb_add(&e->sb, "null", 4); return 0;
    case CODE_K_BOOL: code_sb_addc(&e->sb, v == CODE_TRUE ? "true" : "false"); return 0;
    case CODE_K_INT: return enc_int(e, v);
    case CODE_K_FLOAT: return enc_float(e, ((code_float *)cv_obj(v))->v);
    case CODE_K_STR: enc_string(e, code_str_cstr(v), code_str_len(v)); return 0;
    case CODE_K_LIST:
    case CODE_K_TUPLE: return enc_list(e, v, up);
    case CODE_K_DICT: return enc_dict(e, v, up);
    default: break;
    }
    if (!e->dflt)
        return code_raise_i(vm, &code_exc_TypeError, "Object of type %s is not JSON serializable",
                            code_type_name(v));
    if (enter(e, v, up) < 0)
        return -1;
    json_mark me = { v, up };
    cv r = code_call(vm, e->dflt, &v, 1, CV_NULL);
    int rc = r ? enc_value(e, r, &me) : -1;
    code_decref(vm, r);
    code_guard_leave(vm);
    return rc;
}

/* ---- the module's functions ------------------------------------------------------ */

static int opt_truth(code_vm *vm, cv v, bool dflt, bool *out)
{
    if (!v) {
        *out = dflt;
        return 0;
    }
    int t = code_truth(vm, v);
    *out = t > 0;
    return t < 0 ? -1 : 0;
}

static cv json_dumps(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    cv obj, skipkeys = CV_NULL, ensure_ascii = CV_NULL, check_circular = CV_NULL,
            allow_nan = CV_NULL, cls = CODE_NONE, indent = CODE_NONE, separators = CODE_NONE,
            dflt = CODE_NONE, sort_keys = CV_NULL;
    if (code_args(vm, "dumps", args, nargs, kwnames,
                  "obj,*,|skipkeys,ensure_ascii,check_circular,allow_nan,cls,indent,"
                  "separators,default,sort_keys",
                  &obj, &skipkeys, &ensure_ascii, &check_circular, &allow_nan, &cls, &indent,
                  &separators, &dflt, &sort_keys) < 0)
        return CV_NULL;
    if (cls != CODE_NONE)
        return code_raise(vm, &code_exc_NotImplementedError,
                          "json.dumps(cls=...) is not supported in code mode");
    bool sk, ea, cc, an, sort;
    if (opt_truth(vm, skipkeys, false, &sk) < 0 || opt_truth(vm, ensure_ascii, true, &ea) < 0 ||
        opt_truth(vm, check_circular, true, &cc) < 0 || opt_truth(vm, allow_nan, true, &an) < 0 ||
        opt_truth(vm, sort_keys, false, &sort) < 0)
        return CV_NULL;
    cv ind = CV_NULL, isep, ksep;
    if (indent != CODE_NONE) {
        if (cv_is(indent, &code_type_str)) {
            ind = code_incref(indent);
        } else {
            int64_t n;
            if (code_as_i64(vm, indent, &n) < 0)
                return CV_NULL;
            if (n > 1 << 20)
                return code_raise_nomem(vm);
            code_sb b;
            code_sb_init(&b, vm);
            for (int64_t i = 0; i < n; i++)
                code_sb_add(&b, " ", 1);
            if (!(ind = code_sb_finish(&b)))
                return CV_NULL;
        }
    }
    if (separators != CODE_NONE) {
        cv t = code_tuple_from(vm, separators);
        if (!t) {
            code_decref(vm, ind);
            return CV_NULL;
        }
        code_tuple *tu = (code_tuple *)cv_obj(t);
        if (tu->n != 2 || !cv_is(tu->v[0], &code_type_str) || !cv_is(tu->v[1], &code_type_str)) {
            code_decref(vm, t);
            code_decref(vm, ind);
            return code_raise(vm, &code_exc_TypeError,
                              "separators must be a pair of strings (item, key)");
        }
        isep = code_incref(tu->v[0]);
        ksep = code_incref(tu->v[1]);
        code_decref(vm, t);
    } else {
        isep = code_str_from_cstr(vm, ind ? "," : ", ");
        ksep = code_str_from_cstr(vm, ": ");
    }
    cv r = CV_NULL;
    if (isep && ksep) {
        json_enc e = {
            .vm = vm, .indent = ind, .item_sep = isep, .key_sep = ksep,
            .dflt = dflt == CODE_NONE ? CV_NULL : dflt, .sort_keys = sort, .ensure_ascii = ea,
            .allow_nan = an, .skipkeys = sk, .check_circular = cc,
        };
        code_sb_init(&e.sb, vm);
        if (enc_value(&e, obj, NULL) < 0 || e.sb.failed) {
            code_sb_free(&e.sb);
            if (!vm->exc)
                code_raise_nomem(vm);
        } else {
            r = code_sb_finish(&e.sb);
        }
    }
    code_decref(vm, ind);
    code_decref(vm, isep);
    code_decref(vm, ksep);
    return r;
}

static cv json_loads(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    cv s, cls = CODE_NONE, object_hook = CODE_NONE, parse_float = CODE_NONE,
          parse_int = CODE_NONE, parse_constant = CODE_NONE, pairs_hook = CODE_NONE,
          strict = CODE_TRUE;
    if (code_args(vm, "loads", args, nargs, kwnames,
                  "s,*,|cls,object_hook,parse_float,parse_int,parse_constant,"
                  "object_pairs_hook,strict",
                  &s, &cls, &object_hook, &parse_float, &parse_int, &parse_constant,
                  &pairs_hook, &strict) < 0)
        return CV_NULL;
    if (cls != CODE_NONE || object_hook != CODE_NONE || parse_float != CODE_NONE ||
        parse_int != CODE_NONE || parse_constant != CODE_NONE || pairs_hook != CODE_NONE)
        return code_raise(vm, &code_exc_NotImplementedError,
                          "json.loads hooks are not supported in code mode");
    if (cv_is(s, &code_type_str))
        return code_json_loads_text(vm, code_str_cstr(s), code_str_len(s));
    if (cv_is(s, &code_type_bytes)) {
        const code_bytes *b = (const code_bytes *)cv_obj(s);
        const char *p = (const char *)b->s;
        size_t n = b->len;
        if (n >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) {   /* decoded as utf-8-sig */
            p += 3;
            n -= 3;
        }
        return code_json_loads_bytes(vm, p, n);
    }
    return code_raise(vm, &code_exc_TypeError,
                      "the JSON object must be str, bytes or bytearray, not %s",
                      code_type_name(s));
}

static cv json_file(code_vm *vm, cv *args, size_t nargs, cv kwnames)
{
    return code_raise(vm, &code_exc_NotImplementedError,
                      "json.dump and json.load (files) are not supported in code mode: "
                      "use json.dumps and json.loads");
}

static CODE_CFUNC(f_dumps, "dumps", json_dumps);
static CODE_CFUNC(f_loads, "loads", json_loads);
static CODE_CFUNC(f_dump, "dump", json_file);
static CODE_CFUNC(f_load, "load", json_file);

int code_mod_json_init(code_vm *vm, cv dict)
{
    if (code_lib_set(vm, dict, "dumps", cv_of(&f_dumps)) < 0 ||
        code_lib_set(vm, dict, "loads", cv_of(&f_loads)) < 0 ||
        code_lib_set(vm, dict, "dump", cv_of(&f_dump)) < 0 ||
        code_lib_set(vm, dict, "load", cv_of(&f_load)) < 0 ||
        code_lib_set(vm, dict, "JSONDecodeError", cv_of(&code_exc_JSONDecodeError)) < 0)
        return -1;
    return 0;
}
