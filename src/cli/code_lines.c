/* The JSON lines of `cella code`: strings written for stdout, answers read
 * from stdin. An answer's value is cut out of the line as raw text rather
 * than parsed here: the interpreter's own codec reads it when the run is
 * resumed, so ints past 64 bits, -0.0 and the tags arrive intact (jansson
 * would round or refuse them). Only the small error object goes through
 * jansson. */
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli/code.h"
#include "code/code_json_int.h"

void cli_code_json_str(FILE *f, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    fputc('"', f);
    for (size_t i = 0; i < n;) {
        unsigned char c = u[i];
        if (c >= 0x80) {
            size_t k = code_json_utf8_seq(u + i, n - i);
            if (k)
                fwrite(u + i, 1, k, f);
            else
                fputs("\xef\xbf\xbd", f);
            i += k ? k : 1;
            continue;
        }
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c == '\r')
            fputs("\\r", f);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
        i++;
    }
    fputc('"', f);
}

static const char *ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
        p++;
    return p;
}

/* p at a '"': just past the closing quote, or NULL. */
static const char *skip_string(const char *p, const char *end)
{
    for (p++; p < end; p++) {
        if (*p == '\\')
            p++;
        else if (*p == '"')
            return p + 1;
    }
    return NULL;
}

/* The end of the JSON value at p (its shape only: the codec checks it). */
static const char *skip_value(const char *p, const char *end)
{
    if (p >= end)
        return NULL;
    if (*p == '"')
        return skip_string(p, end);
    if (*p == '{' || *p == '[') {
        size_t depth = 0;
        while (p < end) {
            char c = *p;
            if (c == '"') {
                if (!(p = skip_string(p, end)))
                    return NULL;
                continue;
            }
            if (c == '{' || c == '[')
                depth++;
            else if ((c == '}' || c == ']') && --depth == 0)
                return p + 1;
            p++;
        }
        return NULL;
    }
    const char *s = p;
    while (p < end && !strchr(",}] \t\r\n", *p))
        p++;
    return p > s ? p : NULL;
}

static char *dupn(const char *s, size_t n)
{
    char *c = malloc(n + 1);
    if (!c)
        abort();
    memcpy(c, s, n);
    c[n] = 0;
    return c;
}

static int fail(char *why, size_t len, const char *msg)
{
    snprintf(why, len, "%s", msg);
    return -1;
}

static int take_error(cli_code_answer *a, const char *s, size_t n, char *why, size_t len)
{
    json_error_t je;
    json_t *o = json_loadb(s, n, 0, &je);
    json_t *t = o ? json_object_get(o, "type") : NULL;
    json_t *m = o ? json_object_get(o, "message") : NULL;
    int rc = 0;
    if (!json_is_object(o) || !json_is_string(t) || !json_string_length(t) ||
        (m && !json_is_string(m)))
        rc = fail(why, len, "\"error\" must be {\"type\": \"...\", \"message\": \"...\"}");
    else {
        a->type = dupn(json_string_value(t), strlen(json_string_value(t)));
        const char *msg = m ? json_string_value(m) : "";
        a->message = dupn(msg, strlen(msg));
    }
    json_decref(o);
    return rc;
}

static bool key_is(const char *k, const char *kend, const char *want)
{
    size_t n = strlen(want);
    return (size_t)(kend - k) == n + 2 && !memcmp(k + 1, want, n);
}

int cli_code_parse_answer(const char *line, size_t n, cli_code_answer *a, char *why,
                          size_t whylen)
{
    memset(a, 0, sizeof(*a));
    const char *p = ws(line, line + n), *end = line + n;
    bool have_id = false;
    if (p >= end || *p != '{')
        return fail(why, whylen, "an answer is a JSON object on one line");
    p = ws(p + 1, end);
    for (;;) {
        if (p >= end || *p != '"')
            goto bad;
        const char *k = p, *kend = skip_string(p, end);
        if (!kend)
            goto bad;
        p = ws(kend, end);
        if (p >= end || *p != ':')
            goto bad;
        const char *v = ws(p + 1, end), *vend = skip_value(v, end);
        if (!vend)
            goto bad;
        if (key_is(k, kend, "call_id")) {
            char *e;
            unsigned long long id = strtoull(v, &e, 10);
            if (e != vend || *v < '1' || *v > '9') {
                cli_code_answer_free(a);
                return fail(why, whylen, "\"call_id\" must be a positive integer");
            }
            a->res.call_id = id;
            have_id = true;
        } else if (key_is(k, kend, "value") && !a->value && !a->type) {
            a->value = dupn(v, (size_t)(vend - v));
        } else if (key_is(k, kend, "error") && !a->value && !a->type) {
            if (take_error(a, v, (size_t)(vend - v), why, whylen) < 0) {
                cli_code_answer_free(a);
                return -1;
            }
        } else {
            cli_code_answer_free(a);
            return fail(why, whylen,
                        "an answer has \"call_id\" and one of \"value\" or \"error\", "
                        "nothing else");
        }
        p = ws(vend, end);
        if (p < end && *p == ',') {
            p = ws(p + 1, end);
            continue;
        }
        if (p < end && *p == '}')
            break;
        goto bad;
    }
    if (ws(p + 1, end) != end)
        goto bad;
    if (!have_id || (!a->value && !a->type)) {
        cli_code_answer_free(a);
        return fail(why, whylen, "an answer needs \"call_id\" and \"value\" or \"error\"");
    }
    a->res.value_json = a->value;
    a->res.exc_type = a->type;
    a->res.exc_message = a->message;
    return 0;
bad:
    cli_code_answer_free(a);
    return fail(why, whylen, "an answer is a JSON object on one line");
}

void cli_code_answer_free(cli_code_answer *a)
{
    free(a->value);
    free(a->type);
    free(a->message);
    memset(a, 0, sizeof(*a));
}
