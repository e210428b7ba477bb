/* Values to tagged JSON (the rules are in code_run.h). The text is for the
 * host, so it is malloc'd (the host frees it), but its size is bounded by
 * the run's memory limit: a list holding one big string a thousand times is
 * small on the heap and huge as text, and must not become a way around the
 * limit. Nesting is guarded as every recursive path over values is. */
#include "code/code_json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code/code_json_int.h"
#include "code/code_vm.h"

typedef struct jenc {
    code_vm *vm;
    char *p;
    size_t len, cap, max;
} jenc;

#define JSON_SAFE_INT ((int64_t)1 << 53)

/* Room for n more bytes; MemoryError past the run's limit. */
static char *room(jenc *e, size_t n)
{
    if (n > e->max - e->len) {
        code_raise(e->vm, &code_exc_MemoryError,
                   "the value's JSON is larger than the run's memory limit (%zu bytes)", e->max);
        return NULL;
    }
    if (e->len + n > e->cap) {
        size_t cap = e->cap ? e->cap : 64;
        while (cap < e->len + n)
            cap = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
        char *p = realloc(e->p, cap);
        if (!p)
            abort();             /* real out-of-memory, as the default hook */
        e->p = p;
        e->cap = cap;
    }
    char *r = e->p + e->len;
    e->len += n;
    return r;
}

static int put(jenc *e, const char *s, size_t n)
{
    char *o = room(e, n);
    if (!o)
        return -1;
    memcpy(o, s, n);
    return 0;
}

static int puts_(jenc *e, const char *s) { return put(e, s, strlen(s)); }

static int put_str(jenc *e, const char *s, size_t n)
{
    if (put(e, "\"", 1) < 0)
        return -1;
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        if (put(e, s + run, i - run) < 0)
            return -1;
        char esc[8];
        switch (c) {
        case '"': strcpy(esc, "\\\""); break;
        case '\\': strcpy(esc, "\\\\"); break;
        case '\n': strcpy(esc, "\\n"); break;
        case '\r': strcpy(esc, "\\r"); break;
        case '\t': strcpy(esc, "\\t"); break;
        case '\b': strcpy(esc, "\\b"); break;
        case '\f': strcpy(esc, "\\f"); break;
        default: snprintf(esc, sizeof(esc), "\\u%04x", c); break;
        }
        if (puts_(e, esc) < 0)
            return -1;
        run = i + 1;
    }
    if (put(e, s + run, n - run) < 0)
        return -1;
    return put(e, "\"", 1);
}

/* {"$tag": <str>} around a str value (stolen). */
static int put_tagged_str(jenc *e, const char *tag, cv s)
{
    if (!s)
        return -1;
    int rc = -(puts_(e, "{\"") < 0 || puts_(e, tag) < 0 || puts_(e, "\":") < 0 ||
               put_str(e, code_str_cstr(s), code_str_len(s)) < 0 || puts_(e, "}") < 0);
    code_decref(e->vm, s);
    return rc;
}

static int enc_value(jenc *e, cv v);

static int enc_items(jenc *e, const cv *items, size_t n)
{
    if (put(e, "[", 1) < 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if ((i && put(e, ",", 1) < 0) || enc_value(e, items[i]) < 0)
            return -1;
    return put(e, "]", 1);
}

/* Sets through the generic iterator: their layout is the containers'
 * business. */
static int enc_set(jenc *e, cv v, const char *tag)
{
    if (puts_(e, tag) < 0 || put(e, "[", 1) < 0)
        return -1;
    cv it = code_iter(e->vm, v);
    if (!it)
        return -1;
    int rc = 0;
    bool first = true;
    for (cv x; (x = code_next(e->vm, it));) {
        rc = (!first && put(e, ",", 1) < 0) || enc_value(e, x) < 0 ? -1 : 0;
        code_decref(e->vm, x);
        first = false;
        if (rc < 0)
            break;
    }
    code_decref(e->vm, it);
    if (rc < 0 || e->vm->exc)
        return -1;
    return puts_(e, "]}");
}

static int enc_dict(jenc *e, cv v)
{
    const code_dict *d = (const code_dict *)cv_obj(v);
    bool plain = true;
    size_t pos = 0;
    cv k, x;
    while (plain && code_dict_next(v, &pos, &k, &x))
        plain = cv_is(k, &code_type_str);
    /* {"$x": ...} alone would read back as a tag */
    pos = 0;
    if (plain && d->used == 1 && code_dict_next(v, &pos, &k, &x) && code_str_len(k) &&
        code_str_cstr(k)[0] == '$')
        plain = false;
    if (puts_(e, plain ? "{" : "{\"$dict\":[") < 0)
        return -1;
    pos = 0;
    for (bool first = true; code_dict_next(v, &pos, &k, &x); first = false) {
        if (!first && put(e, ",", 1) < 0)
            return -1;
        if (plain) {
            if (put_str(e, code_str_cstr(k), code_str_len(k)) < 0 || put(e, ":", 1) < 0 ||
                enc_value(e, x) < 0)
                return -1;
        } else if (put(e, "[", 1) < 0 || enc_value(e, k) < 0 || put(e, ",", 1) < 0 ||
                   enc_value(e, x) < 0 || put(e, "]", 1) < 0) {
            return -1;
        }
    }
    return puts_(e, plain ? "}" : "]}");
}

static int enc_float(jenc *e, double f)
{
    if (isnan(f))
        return puts_(e, "{\"$float\":\"nan\"}");
    if (isinf(f))
        return puts_(e, f > 0 ? "{\"$float\":\"inf\"}" : "{\"$float\":\"-inf\"}");
    cv r = code_float_repr(e->vm, f);
    if (!r)
        return -1;
    int rc = put(e, code_str_cstr(r), code_str_len(r));
    code_decref(e->vm, r);
    return rc;
}

static int enc_container(jenc *e, cv v)
{
    switch (cv_kind(v)) {
    case CODE_K_LIST: {
        const code_list *l = (const code_list *)cv_obj(v);
        return enc_items(e, l->v, l->n);
    }
    case CODE_K_TUPLE: {
        const code_tuple *t = (const code_tuple *)cv_obj(v);
        return -(puts_(e, "{\"$tuple\":") < 0 || enc_items(e, t->v, t->n) < 0 ||
                 put(e, "}", 1) < 0);
    }
    case CODE_K_SET:
        return enc_set(e, v, "{\"$set\":");
    case CODE_K_FROZENSET:
        return enc_set(e, v, "{\"$frozenset\":");
    default:
        return enc_dict(e, v);
    }
}

static int enc_value(jenc *e, cv v)
{
    if (cv_is_small(v)) {
        int64_t i = cv_small(v);
        if (i < -JSON_SAFE_INT || i > JSON_SAFE_INT)
            return put_tagged_str(e, "$int", code_int_repr(e->vm, v));
        char b[24];
        return put(e, b, (size_t)snprintf(b, sizeof(b), "%" PRId64, i));
    }
    switch (cv_kind(v)) {
    case CODE_K_NONE:
        return puts_(e, "null");
    case CODE_K_BOOL:
        return puts_(e, v == CODE_TRUE ? "true" : "false");
    case CODE_K_INT:
        /* a bigint is past the small range, so past 2^53 too */
        return put_tagged_str(e, "$int", code_int_repr(e->vm, v));
    case CODE_K_FLOAT:
        return enc_float(e, ((const code_float *)cv_obj(v))->v);
    case CODE_K_STR:
        return put_str(e, code_str_cstr(v), code_str_len(v));
    case CODE_K_BYTES: {
        const code_bytes *b = (const code_bytes *)cv_obj(v);
        if (puts_(e, "{\"$bytes\":\"") < 0)
            return -1;
        char *o = room(e, code_json_b64_len(b->len));
        if (!o)
            return -1;
        code_json_b64_encode(b->s, b->len, o);
        return puts_(e, "\"}");
    }
    case CODE_K_LIST:
    case CODE_K_TUPLE:
    case CODE_K_SET:
    case CODE_K_FROZENSET:
    case CODE_K_DICT: {
        if (code_guard_enter(e->vm, "while encoding a JSON object") < 0)
            return -1;
        int rc = enc_container(e, v);
        code_guard_leave(e->vm);
        return rc;
    }
    default:
        return put_tagged_str(e, "$repr", code_repr(e->vm, v));
    }
}

char *code_json_encode(code_vm *vm, cv v, size_t *len)
{
    jenc e = {.vm = vm, .max = vm->limits.max_bytes ? vm->limits.max_bytes : SIZE_MAX - 1};
    if (enc_value(&e, v) < 0 || put(&e, "", 1) < 0) {
        free(e.p);
        return NULL;
    }
    if (len)
        *len = e.len - 1;
    return e.p;
}
