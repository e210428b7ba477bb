#include "util/jsonw.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util/text.h"

void jw_init(jsonw *w, cbuf *out)
{
    memset(w, 0, sizeof(*w));
    w->out = out;
    w->first[0] = true;
}

static void put(jsonw *w, const char *s, size_t n)
{
    cbuf_append(w->out, s, n);
}

/* The separator before a value (or a key). */
static void sep(jsonw *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (!w->first[w->depth])
        put(w, ",", 1);
    w->first[w->depth] = false;
}

static void open_(jsonw *w, char c)
{
    sep(w);
    put(w, &c, 1);
    /* Deeper than anything the agent writes: stay at the last level
     * rather than overrun (the document stays well-formed). */
    if (w->depth < JSONW_MAX_DEPTH - 1)
        w->depth++;
    w->first[w->depth] = true;
}

static void close_(jsonw *w, char c)
{
    put(w, &c, 1);
    if (w->depth > 0)
        w->depth--;
}

void jw_obj(jsonw *w) { open_(w, '{'); }
void jw_obj_end(jsonw *w) { close_(w, '}'); }
void jw_arr(jsonw *w) { open_(w, '['); }
void jw_arr_end(jsonw *w) { close_(w, ']'); }

static void escaped(jsonw *w, const char *s, size_t n)
{
    cbuf tmp;
    cbuf_init(&tmp);
    const uint8_t *p = (const uint8_t *)s;
    if (!utf8_valid(p, n)) {
        utf8_lossy(&tmp, p, n);
        p = cbuf_head(&tmp);
        n = cbuf_avail(&tmp);
    }
    put(w, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f)
            continue;
        put(w, (const char *)p + run, i - run);
        run = i + 1;
        char esc[8];
        switch (c) {
        case '"': put(w, "\\\"", 2); break;
        case '\\': put(w, "\\\\", 2); break;
        case '\n': put(w, "\\n", 2); break;
        case '\t': put(w, "\\t", 2); break;
        case '\r': put(w, "\\r", 2); break;
        default:
            snprintf(esc, sizeof(esc), "\\u%04x", c);
            put(w, esc, 6);
        }
    }
    put(w, (const char *)p + run, n - run);
    put(w, "\"", 1);
    cbuf_free(&tmp);
}

void jw_key(jsonw *w, const char *key)
{
    sep(w);
    escaped(w, key, strlen(key));
    put(w, ":", 1);
    w->after_key = true;
}

void jw_strn(jsonw *w, const char *s, size_t n)
{
    sep(w);
    escaped(w, s, n);
}

void jw_str(jsonw *w, const char *s)
{
    jw_strn(w, s, strlen(s));
}

void jw_u64(jsonw *w, uint64_t v)
{
    char b[24];
    int n = snprintf(b, sizeof(b), "%" PRIu64, v);
    sep(w);
    put(w, b, (size_t)n);
}

void jw_i64(jsonw *w, int64_t v)
{
    char b[24];
    int n = snprintf(b, sizeof(b), "%" PRId64, v);
    sep(w);
    put(w, b, (size_t)n);
}

void jw_bool(jsonw *w, bool v)
{
    sep(w);
    put(w, v ? "true" : "false", v ? 4 : 5);
}

void jw_null(jsonw *w)
{
    sep(w);
    put(w, "null", 4);
}

void jw_kstr(jsonw *w, const char *key, const char *s) { jw_key(w, key); jw_str(w, s); }
void jw_ku64(jsonw *w, const char *key, uint64_t v) { jw_key(w, key); jw_u64(w, v); }
void jw_ki64(jsonw *w, const char *key, int64_t v) { jw_key(w, key); jw_i64(w, v); }
void jw_kbool(jsonw *w, const char *key, bool v) { jw_key(w, key); jw_bool(w, v); }

void jw_kmode(jsonw *w, const char *key, unsigned mode)
{
    char b[16];
    snprintf(b, sizeof(b), "%04o", mode & 07777);
    jw_kstr(w, key, b);
}
